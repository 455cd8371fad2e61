//! The stages that make caches: prepare, simulate (full and guides only), guides, upsample,
//! write. Each returns the files it wrote, relative to the output folder.

use std::io::IsTerminal;
use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressStyle};
use tress_formats::tcache::TcacheReader;

use super::run::{Ctx, chunk_frames};
use super::scene::{build_groom, job_colliders, prepared, save_groom, save_head, scene_of};
use crate::cache::{CacheInfo, FrameSink, SinkOptions, create_sink};
use crate::error::{Error, Result};
use crate::guides::Upsampler;
use crate::guides::{IdwModel, select_uv_lattice};
use crate::sim::Simulation;
use crate::sim::run::{RunPlan, run as run_sim};

/// Groom resampled with root UVs and ids (`groom.tcache`), and a mesh head's grid (`head.sdf`).
pub fn prepare(ctx: &Ctx) -> Result<Vec<String>> {
    let scene = build_groom(ctx.job)?;
    if !ctx.quiet {
        eprintln!(
            "           {} ({} strands × {} points)",
            scene.source,
            scene.groom.strand_count(),
            ctx.job.groom.points
        );
    }
    save_groom(&ctx.out.join("groom.tcache"), &scene.groom)?;
    let mut out = vec!["groom.tcache".to_string()];
    out.extend(save_head(ctx.job, &ctx.out, &scene)?);
    Ok(out)
}

/// Guide strands on the root-UV lattice (`guides.json`: strand indices).
pub fn guides(ctx: &Ctx) -> Result<Vec<String>> {
    let groom = prepared(&ctx.out)?;
    let chosen = select_uv_lattice(&groom, ctx.job.guides.count);
    if !ctx.quiet {
        eprintln!(
            "           {} guides of {} strands",
            chosen.len(),
            groom.strand_count()
        );
    }
    let text =
        serde_json::to_string(&serde_json::json!({ "strands": groom.strand_count(), "guides": chosen }))
            .expect("json");
    let path = ctx.out.join("guides.json");
    tress_formats::atomic::write(&path, text.as_bytes())
        .map_err(|e| crate::groom::files::output_error(&path, e))?;
    Ok(vec!["guides.json".into()])
}

/// The guide strand indices recorded by the guides stage.
pub fn guide_indices(ctx: &Ctx) -> Result<Vec<usize>> {
    let path = ctx.out.join("guides.json");
    let text =
        std::fs::read_to_string(&path).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
    v["guides"]
        .as_array()
        .map(|a| a.iter().filter_map(|x| x.as_u64().map(|u| u as usize)).collect())
        .ok_or_else(|| Error::Invalid(format!("{}: no guide list", path.display())))
}

/// The full simulation (`gt.tcache`), or the guides alone (`guides.tcache`).
pub fn simulate(ctx: &Ctx, guides_only: bool) -> Result<Vec<String>> {
    let job = ctx.job;
    let full = prepared(&ctx.out)?;
    let groom = if guides_only {
        let keep = guide_indices(ctx)?;
        let set: std::collections::HashSet<usize> = keep.into_iter().collect();
        full.filter_strands(|s| set.contains(&s))
    } else {
        full.clone()
    };
    let scene = scene_of(job, full)?;
    let colliders = job_colliders(job, &ctx.out, &scene)?;
    let start = job.first as f64 / job.fps;
    let mut sim = Simulation::new(
        &groom,
        job.material.clone(),
        job.simulate.clone(),
        colliders,
        start,
    );
    let name = if guides_only { "guides.tcache" } else { "gt.tcache" };
    let topology = groom.to_strands();
    let info = CacheInfo {
        topology: topology.clone(),
        fps: job.fps,
        frames: Vec::new(),
    };
    let sink = create_sink(
        &ctx.out.join(name),
        &info,
        job.first as f64,
        &SinkOptions::default(),
    )?;
    let work: PathBuf = ctx.out.join(".tress").join(format!(
        "work-{}",
        if guides_only { "guide_sim" } else { "simulate" }
    ));
    // Resume a run that was killed, unless the job changed since (then start over).
    let resume = crate::sim::checkpoint::matches(&work.join("state.ckpt"), &sim);
    let plan = RunPlan {
        fps: job.fps,
        first: job.first,
        last: job.last,
        checkpoint_every: job.checkpoint_every,
        work_dir: Some(work.clone()),
        resume,
    };
    let frames = (job.last - job.first + 1) as u64;
    let bar = if !ctx.quiet && std::io::stderr().is_terminal() {
        let b = ProgressBar::new(frames);
        b.set_style(
            ProgressStyle::with_template(
                "           {spinner} frame {msg} [{bar:30}] {pos}/{len} {per_sec} ETA {eta}",
            )
            .expect("template")
            .progress_chars("=> "),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let mut on_frame = |f: i64, _: &crate::sim::FrameStats| {
        bar.set_message(f.to_string());
        bar.inc(1);
        true
    };
    let result = run_sim(&mut sim, &plan, vec![sink], &topology, &mut on_frame);
    bar.finish_and_clear();
    if !ctx.quiet {
        eprintln!("           {}", sim.counters.report());
    }
    let (report, _) = result?;
    if let (Some(after), false) = (report.resumed_after, ctx.quiet) {
        eprintln!("           resumed from the checkpoint after frame {after}");
    }
    if !ctx.quiet {
        eprintln!(
            "           {} frames of {} strands, {:.3} s/frame, up to {} substeps, deepest penetration after a frame {:.3} mm",
            report.frames,
            groom.strand_count(),
            report.seconds / report.frames.max(1) as f64,
            report.max_substeps,
            report.max_residual_penetration * 10.0
        );
    }
    Ok(vec![name.into()])
}

/// The whole groom of chunk `chunk` from the guides (`parts/hair.A-B.tcache`).
pub fn upsample(ctx: &Ctx, chunk: (usize, usize)) -> Result<Vec<String>> {
    let job = ctx.job;
    let groom = prepared(&ctx.out)?;
    let guides = guide_indices(ctx)?;
    let colliders = if job.guides.resolve_collisions {
        Some((
            job_colliders(job, &ctx.out, &scene_of(job, groom.clone())?)?,
            job.fps,
        ))
    } else {
        None
    };
    let projection = job
        .guides
        .resolve_collisions
        .then_some(job.simulate.collision_margin);
    let (a, b) = chunk_frames(job, chunk);
    let name = format!("parts/hair.{a}-{b}.tcache");
    let path = ctx.out.join(&name);
    std::fs::create_dir_all(path.parent().expect("parent")).map_err(|e| Error::Write {
        path: path.clone(),
        source: e,
    })?;
    let info = CacheInfo {
        topology: groom.to_strands(),
        fps: job.fps,
        frames: Vec::new(),
    };
    let part = create_sink(&path, &info, a as f64, &SinkOptions::default())?;
    let model = IdwModel::new(&groom, &guides, job.guides.neighbors)?;
    let mut sink: Box<dyn FrameSink> =
        Box::new(Upsampler::new(Box::new(model), colliders, projection, vec![part]));
    // guides.tcache holds the guide strands in groom order, as the model expects them.
    let mut r = TcacheReader::open(ctx.out.join("guides.tcache"))?;
    for i in 0..r.len() {
        let frame = r.frames[i].frame;
        if (a as f64..=b as f64).contains(&frame) {
            let p = r.frame(i)?;
            sink.write(frame, &p, Some(r.pose(i)?))?;
        }
    }
    sink.finish()?;
    Ok(vec![name])
}

/// Frames of the upsampled parts, in order, with their head poses.
pub fn for_each_part_frame(
    ctx: &Ctx,
    mut f: impl FnMut(f64, &[[f32; 3]], tress_formats::tcache::HeadPose) -> Result<()>,
) -> Result<()> {
    for part in ctx.parts()? {
        let mut r = TcacheReader::open(ctx.out.join(&part.path))?;
        for i in 0..r.len() {
            let p = r.frame(i)?;
            f(r.frames[i].frame, &p, r.pose(i)?)?;
        }
    }
    Ok(())
}

/// Some frames of the upsampled parts, each found by seeking in its part (no decoding of the
/// frames between).
pub fn part_frames(ctx: &Ctx, frames: &[i64]) -> Result<Vec<Vec<[f32; 3]>>> {
    let mut readers = Vec::new();
    for part in ctx.parts()? {
        readers.push(TcacheReader::open(ctx.out.join(&part.path))?);
    }
    frames
        .iter()
        .map(|&f| {
            for r in readers.iter_mut() {
                if let Some(i) = r.find(f as f64) {
                    return Ok(r.frame(i)?);
                }
            }
            Err(Error::Runtime(format!("the upsampled parts miss frame {f}")))
        })
        .collect()
}

/// `hair.abc` (and `hair.tcache`, `ply/hair.####.ply`, `gt.abc` as asked).
pub fn write(ctx: &Ctx) -> Result<Vec<String>> {
    let job = ctx.job;
    let groom = prepared(&ctx.out)?;
    let info = CacheInfo {
        topology: groom.to_strands(),
        fps: job.fps,
        frames: Vec::new(),
    };
    let opts = SinkOptions {
        date: Some(ctx.date()),
        ..SinkOptions::default()
    };
    let mut names = Vec::new();
    if job.outputs.abc {
        names.push("hair.abc".to_string());
    }
    if job.outputs.tcache {
        names.push("hair.tcache".to_string());
    }
    let mut sinks = Vec::new();
    for n in &names {
        sinks.push(create_sink(&ctx.out.join(n), &info, job.first as f64, &opts)?);
    }
    if job.outputs.ply {
        std::fs::create_dir_all(ctx.out.join("ply")).map_err(|e| Error::Write {
            path: ctx.out.join("ply"),
            source: e,
        })?;
        sinks.push(create_sink(
            &ctx.out.join("ply/hair.####.ply"),
            &info,
            job.first as f64,
            &opts,
        )?);
    }
    for_each_part_frame(ctx, |frame, p, pose| {
        for s in sinks.iter_mut() {
            s.write(frame, p, Some(pose))?;
        }
        Ok(())
    })?;
    let mut written = Vec::new();
    for s in sinks {
        for f in s.finish()? {
            let rel = f
                .strip_prefix(&ctx.out)
                .map(|p| p.to_string_lossy().to_string())
                .unwrap_or_else(|_| f.display().to_string());
            written.push(rel);
        }
    }
    if job.outputs.ground_truth_abc {
        let mut r = TcacheReader::open(ctx.out.join("gt.tcache"))?;
        let mut s = create_sink(&ctx.out.join("gt.abc"), &info, job.first as f64, &opts)?;
        for i in 0..r.len() {
            let p = r.frame(i)?;
            s.write(r.frames[i].frame, &p, None)?;
        }
        s.finish()?;
        written.push("gt.abc".into());
    }
    Ok(written)
}
