//! The job's `drape` stage (003): a quasi-static preview of the animation. For each frame of its
//! chunk, the groom's scalp-texture strands are draped for the head's pose relative to the
//! torso with the colliders where that frame has them (head, body, props), by the job's trained
//! drape network or a direct minimization of the drape energy. No dynamics: each frame is the
//! rest shape the hair would settle to if the body held that pose.
//!
//! Outputs per chunk: `drape/drape.A-B.tcache` (the draped texture strands, world space, with
//! the head's pose: the "guides" of the row `drape`, whose interpolator carries them to every
//! strand) and `drape/drape.A-B.json` (per frame: seconds, energy, 003 Table 1's figures for
//! the rigidly posed groom and the drape).

use glam::Vec3;
use serde_json::json;

use super::ctx::Ctx;
use super::job::drape_key;
use super::progress::FrameProgress;
use super::run::chunk_frames;
use super::scene::{job_colliders_on_body, prepared, scene_of};
use crate::cache::{CacheInfo, SinkOptions, create_sink};
use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::neural::drape::draper::Draper;
use crate::neural::drape::{DrapeGroom, DrapeMetrics, DrapeSubject, HeadRotation};

/// The texture size and vertices per strand the drape stage draped (from its first chunk's
/// figures, so the row carries what was draped without reading the model again).
pub fn draped_texture(ctx: &Ctx) -> Result<(usize, usize)> {
    let chunks = ctx.chunks(crate::pipeline::Stage::Drape)?;
    let first = chunks
        .iter()
        .find(|f| f.path.ends_with(".json"))
        .ok_or_else(|| Error::Runtime("the drape stage recorded no figures".into()))?;
    let path = ctx.out.join(&first.path);
    let text =
        std::fs::read_to_string(&path).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
    match (v["texture"].as_u64(), v["points"].as_u64()) {
        (Some(t), Some(p)) => Ok((t as usize, p as usize)),
        _ => Err(Error::Invalid(format!(
            "{}: no texture or points",
            path.display()
        ))),
    }
}

/// Drapes the frames of chunk `chunk`; returns the files written.
pub fn drape(ctx: &Ctx, chunk: (usize, usize)) -> Result<Vec<String>> {
    let job = ctx.job;
    let draper = Draper::new(&job.drape.draper_spec(&drape_key))?;
    let groom = prepared(&ctx.out)?;
    let (colliders, center, body) = job_colliders_on_body(job, &ctx.out, &scene_of(job, groom.clone())?)?;
    let texture = DrapeGroom::new(&groom, draper.texture, draper.points)?;
    // The job's tracks place the head; no pivot is needed.
    // The job's body gives the network its shape input.
    let subject =
        DrapeSubject::new(&job.name, texture, colliders, Vec3::ZERO, &draper.material).on_body(center, body);
    let (a, b) = chunk_frames(job, chunk);
    let dir = ctx.out.join("drape");
    std::fs::create_dir_all(&dir).map_err(|e| Error::Write {
        path: dir.clone(),
        source: e,
    })?;
    let strands = Groom::uniform(subject.groom.rest.clone(), draper.points, Default::default())?;
    let info = CacheInfo {
        topology: strands.to_strands(),
        fps: job.fps,
        frames: Vec::new(),
    };
    let name = format!("drape/drape.{a}-{b}.tcache");
    let mut sink = create_sink(&ctx.out.join(&name), &info, a as f64, &SinkOptions::default())?;
    if !ctx.quiet && chunk.0 == 0 {
        eprintln!(
            "           {} texture strands of {} vertices ({}² texture), solver {}",
            subject.groom.strands(),
            draper.points,
            draper.texture,
            serde_json::to_value(draper.solver)
                .expect("json")
                .as_str()
                .unwrap_or_default()
        );
    }
    let latent = draper.latent(&subject);
    let mut progress = FrameProgress::new("drape", (b - a + 1).max(0) as u64, ctx.quiet);
    let mut frames = Vec::new();
    let (mut before, mut after, mut seconds) = (Vec::new(), Vec::new(), 0.0);
    for f in a..=b {
        let t = f as f64 / job.fps;
        let c = &subject.colliders;
        let (head, torso) = (c.head.at(t), c.torso.at(t));
        let rotation =
            HeadRotation::from_rotation(&format!("frame {f}"), torso.rotation.inverse() * head.rotation);
        let poses = c.poses_at(t);
        let posed = subject.posed(&head);
        let (x, report) = draper.drape(&subject, latent.as_ref(), &rotation, &posed, (c, &poses));
        let m0 = DrapeMetrics::of(&posed.x, &posed, Some((c, &poses)));
        let m1 = DrapeMetrics::of(&x, &posed, Some((c, &poses)));
        sink.write(f as f64, bytemuck::cast_slice(&x), Some(head.into()))?;
        frames.push(json!({
            "frame": f, "yaw": rotation.yaw, "pitch": rotation.pitch, "roll": rotation.roll,
            "seconds": report.seconds, "iterations": report.iterations,
            "converged": report.converged, "energy": report.energy,
            "posed": m0, "draped": m1, "trained_pose": draper.trained_for(&subject, &rotation),
        }));
        seconds += report.seconds;
        before.push(m0);
        after.push(m1);
        progress.tick(f);
    }
    progress.finish();
    sink.finish()?;
    let summary = json!({
        "solver": draper.solver,
        "texture": draper.texture,
        "points": draper.points,
        "strands": subject.groom.strands(),
        "frames": [a, b],
        "seconds_per_frame": seconds / (b - a + 1).max(1) as f64,
        "posed": DrapeMetrics::mean(&before),
        "draped": DrapeMetrics::mean(&after),
        "material": draper.material,
        "per_frame": frames,
    });
    let jname = format!("drape/drape.{a}-{b}.json");
    let path = ctx.out.join(&jname);
    tress_formats::atomic::write(
        &path,
        serde_json::to_string_pretty(&summary).expect("json").as_bytes(),
    )
    .map_err(|e| crate::error::output_error(&path, e))?;
    Ok(vec![name, jname])
}
