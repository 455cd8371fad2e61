//! `drape` (003): a quasi-static preview of the animation. For each frame of its chunk, the
//! groom's scalp-texture strands are draped for the head's pose relative to the torso with the
//! colliders where that frame has them (head, body, props), by the job's trained drape network
//! or a direct minimization of the drape energy. No dynamics: each frame is the rest shape the
//! hair would settle to if the body held that pose.
//!
//! Outputs per chunk: `drape/drape.A-B.tcache` (the draped texture strands, world space, with
//! the head's pose: the "guides" of the row `drape`, whose interpolator carries them to every
//! strand) and `drape/drape.A-B.json` (per frame: seconds, energy, 003 Table 1's figures for
//! the rigidly posed groom and the drape).

use glam::Vec3;
use serde::Serialize;
use serde_json::json;

use super::prepare;
use crate::cache::{CacheInfo, SinkOptions, create_sink};
use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::neural::drape::calibrate::calibrate;
use crate::neural::drape::draper::{DrapeSolver, Draper};
use crate::neural::drape::{DrapeGroom, DrapeMetrics, DrapeSubject, HeadRotation};
use crate::pipeline::engine::{Chunk, Ctx, Info, Inputs, OutputFile, Stage};
use crate::pipeline::job::{DrapeSpec, Job, drape_key};
use crate::pipeline::keys::{SceneKey, external, motion_files};
use crate::pipeline::progress::FrameProgress;
use crate::upsample::Method;

pub const NAME: &str = "drape";

/// The draped strands of frames `a`–`b`.
pub fn cache(a: i64, b: i64) -> String {
    format!("drape/drape.{a}-{b}.tcache")
}

/// The figures of frames `a`–`b`.
pub fn figures(a: i64, b: i64) -> String {
    format!("drape/drape.{a}-{b}.json")
}

pub struct DrapeStage;

#[derive(Serialize)]
struct Key<'a> {
    scene: SceneKey<'a>,
    drape: &'a DrapeSpec,
    /// The simulation material the direct solvers' stiffness is calibrated to.
    material: &'a crate::sim::Material,
    /// The network's line search as it runs (its default counts: drapes made before it had
    /// one are made again).
    line_search: Option<u64>,
    range: [i64; 2],
}

impl Stage for DrapeStage {
    fn info(&self) -> Info {
        Info::new(
            NAME,
            "The groom's quasi-static drape for each frame's head pose (jobs with the drape method)",
        )
        .chunked()
        .needs("the drape method ([drape] enabled = true)", |job| {
            job.rows.iter().any(|r| r.method == Method::Drape)
        })
    }

    fn upstream(&self, _: &Job) -> Vec<&'static str> {
        vec![prepare::NAME]
    }

    fn inputs(&self, cx: &Ctx, chunk: Option<Chunk>) -> Result<Inputs> {
        let j = cx.job;
        let (a, b) = cx.frames(chunk);
        Ok(Inputs::new(&Key {
            scene: SceneKey::of(j),
            drape: &j.drape,
            material: &j.material,
            line_search: (j.drape.solver == crate::neural::drape::draper::DrapeSolver::Network).then(|| {
                j.drape
                    .iterations
                    .unwrap_or(crate::neural::drape::draper::DEFAULT_LINE_SEARCH)
            }),
            range: [a, b],
        })
        .reads(prepare::outputs(cx)?)
        .reads(motion_files(cx, &j.motion)?)
        .reads(external(cx, &[j.drape.model.as_deref()])?))
    }

    fn run(&self, cx: &Ctx, chunk: Option<Chunk>) -> Result<Vec<String>> {
        drape(cx, chunk.unwrap_or((0, 1)))
    }
}

/// Every chunk's files, in frame order.
pub fn chunks(cx: &Ctx) -> Result<Vec<OutputFile>> {
    cx.chunks(NAME, NAME)
}

/// The texture size and vertices per strand the drape stage draped (from its first chunk's
/// figures, so the row carries what was draped without reading the model again).
pub fn draped_texture(cx: &Ctx) -> Result<(usize, usize)> {
    let chunks = chunks(cx)?;
    let first = chunks
        .iter()
        .find(|f| f.path.ends_with(".json"))
        .ok_or_else(|| Error::Runtime("the drape stage recorded no figures".into()))?;
    let path = cx.out.join(&first.path);
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
fn drape(cx: &Ctx, chunk: Chunk) -> Result<Vec<String>> {
    let job = cx.job;
    let mut draper = Draper::new(&job.drape.draper_spec(&drape_key))?;
    let scene = prepare::scene(cx)?;
    // A network drapes with the material it was trained with and `[drape.material]` is the
    // user's own; otherwise the direct solvers' Cosserat stiffness is the job's `[material]`'s,
    // measured by a cantilever test on the groom's strands.
    let (source, calibration) = match (draper.solver, &job.drape.material) {
        (DrapeSolver::Network, _) => ("the network's training".to_string(), None),
        (_, Some(_)) => ("drape.material".to_string(), None),
        (_, None) => {
            let (m, c) = calibrate(&scene.groom.groom, &job.material, draper.points, &draper.material)?;
            draper.material = m;
            (
                format!("[material] {} (cantilever test)", job.material_preset),
                Some(c),
            )
        }
    };
    let (colliders, center, body) = (scene.colliders.clone(), scene.center(), scene.body.clone());
    let texture = DrapeGroom::new(&scene.groom.groom, draper.texture, draper.points)?;
    // The job's tracks place the head; no pivot is needed.
    // The job's body gives the network its shape input.
    let subject =
        DrapeSubject::new(&job.name, texture, colliders, Vec3::ZERO, &draper.material).on_body(center, body);
    let (a, b) = cx.frames(Some(chunk));
    cx.create_dir(NAME)?;
    let strands = Groom::uniform(subject.groom.rest.clone(), draper.points, Default::default())?;
    let info = CacheInfo {
        topology: strands.to_strands(),
        fps: job.fps,
        frames: Vec::new(),
    };
    let name = cache(a, b);
    let mut sink = create_sink(&cx.out.join(&name), &info, a as f64, &SinkOptions::default())?;
    if !cx.quiet && chunk.0 == 0 {
        eprintln!(
            "           {} texture strands of {} vertices ({}² texture), solver {}",
            subject.groom.strands(),
            draper.points,
            draper.texture,
            draper.solver.name()
        );
        if let Some(c) = &calibration {
            eprintln!(
                "           Cosserat stiffness {:.3} from {source}: tips fall {:.1} cm simulated, {:.1} cm draped ({} strands of {:.1} cm)",
                c.cosserat, c.sim_drop_cm, c.drape_drop_cm, c.strands, c.length_cm
            );
        }
    }
    let latent = draper.latent(&subject);
    let mut progress = FrameProgress::new(NAME, (b - a + 1).max(0) as u64, cx.quiet);
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
            "seconds": report.seconds, "iterations": report.iterations, "scale": report.scale, "scale_range": report.scale_range,
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
        "material_from": source,
        "calibration": calibration,
        "per_frame": frames,
    });
    let jname = cx.write_json(&figures(a, b), &summary)?;
    Ok(vec![name, jname])
}
