//! Simulating a frame range into caches: pre-roll, the frame loop, instability detection,
//! checkpoints and bit-identical resume.
//!
//! With checkpoints on, frames go to a lossless frame log (`<work>/frames.tcache`, written in
//! place and flushed every frame) and the outputs are made from it at the end; a resumed run
//! keeps the logged frames up to its checkpoint and continues from the checkpoint's state, so its
//! outputs are bit-identical to an uninterrupted run's.

use std::path::{Path, PathBuf};
use std::time::Instant;

use glam::Vec3;
use serde::Serialize;
use tress_formats::Strands;
use tress_formats::tcache::{Codec, HeadPose, TcacheHeader, TcacheReader, TcacheWriter};

use super::checkpoint;
use super::solver::{FrameStats, Simulation};
use crate::cache::FrameSink;
use crate::error::{Error, Result};

/// What to simulate and how to keep it safe.
#[derive(Clone, Debug)]
pub struct RunPlan {
    pub fps: f64,
    /// Inclusive output frame range.
    pub first: i64,
    pub last: i64,
    /// Save a checkpoint every this many frames (frame log + checkpoint in `work_dir`).
    pub checkpoint_every: Option<u32>,
    pub work_dir: Option<PathBuf>,
    /// Continue from the checkpoint in `work_dir`.
    pub resume: bool,
}

/// Summary of a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunReport {
    pub frames: usize,
    pub resumed_after: Option<f64>,
    pub max_substeps: u32,
    pub max_speed: f32,
    pub max_strain: f32,
    /// Deepest penetration left after any frame (cm).
    pub max_residual_penetration: f32,
    /// Strand–strand contacts over the run (segment pairs, summed over substeps; 0 when off).
    pub strand_contacts: u64,
    /// Largest strand–strand overlap found before the response (cm).
    pub deepest_strand_contact: f32,
    pub seconds: f64,
}

impl RunReport {
    /// Takes a frame's figures in.
    fn add(&mut self, stats: &FrameStats) {
        self.max_substeps = self.max_substeps.max(stats.substeps);
        self.max_speed = self.max_speed.max(stats.max_speed);
        self.max_strain = self.max_strain.max(stats.max_strain);
        self.max_residual_penetration = self.max_residual_penetration.max(stats.residual_penetration);
        self.strand_contacts += stats.strand_contacts;
        self.deepest_strand_contact = self.deepest_strand_contact.max(stats.deepest_strand_contact);
    }
}

/// The last good state (positions, velocities, time, frame).
type Good = (Vec<Vec3>, Vec<Vec3>, f64, i64);

/// An unstable frame: the simulation put back to the last good state, the frames so far
/// written, a checkpoint of the good state saved in the work folder; the error says where.
fn unstable(
    sim: &mut Simulation,
    good: Good,
    finite: bool,
    target: Target,
    work: Option<&Path>,
    (first, frame): (i64, i64),
    stats: &FrameStats,
) -> Error {
    // Keep what was good: the frames so far, and a checkpoint of the last good state.
    sim.x = good.0;
    sim.v = good.1;
    sim.time = good.2;
    let saved = work.map(checkpoint_path);
    if let Some(p) = &saved
        && let Err(e) = checkpoint::save(p, sim, good.3 as f64)
    {
        return e;
    }
    let files = match target.finish(None) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let what = if finite {
        format!("a particle reached {:.0} cm/s", stats.max_speed)
    } else {
        "positions became NaN".into()
    };
    Error::Runtime(format!(
        "the simulation became unstable at frame {frame} ({what}); frames {first}-{} are in {}{}; try more --substeps or the implicit integrator",
        frame - 1,
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        saved
            .map(|p| format!(", the last good state is in {}", p.display()))
            .unwrap_or_default()
    ))
}

fn log_path(dir: &Path) -> PathBuf {
    dir.join("frames.tcache")
}

fn checkpoint_path(dir: &Path) -> PathBuf {
    dir.join("state.ckpt")
}

/// Where frames go during the run.
enum Target {
    Sinks(Vec<Box<dyn FrameSink>>),
    Log {
        writer: Box<TcacheWriter>,
        sinks: Vec<Box<dyn FrameSink>>,
    },
}

impl Target {
    /// Frames logged in the work folder `dir`: a new log, or (resuming) the log up to the
    /// checkpoint, with the simulation restored from it (and the frame it was saved after).
    fn log(
        sim: &mut Simulation,
        plan: &RunPlan,
        sinks: Vec<Box<dyn FrameSink>>,
        topology: &Strands,
        dir: &Path,
    ) -> Result<(Target, Option<f64>)> {
        let header = TcacheHeader {
            fps: plan.fps,
            codec: Codec::Lossless,
            keyframe_interval: 16,
            rest: topology.clone(),
        };
        if plan.resume {
            let saved = checkpoint::load(&checkpoint_path(dir), sim)?;
            let writer = reopen_log(dir, header, plan.first, saved)?;
            return Ok((
                Target::Log {
                    writer: Box::new(writer),
                    sinks,
                },
                Some(saved),
            ));
        }
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).map_err(|e| Error::Write {
            path: dir.to_path_buf(),
            source: e,
        })?;
        Ok((
            Target::Log {
                writer: Box::new(TcacheWriter::create_in_place(log_path(dir), header, 3)?),
                sinks,
            },
            None,
        ))
    }

    fn write(&mut self, frame: f64, x: &[Vec3], pose: HeadPose) -> Result<()> {
        let p: &[[f32; 3]] = bytemuck::cast_slice(x);
        match self {
            Target::Sinks(sinks) => {
                for s in sinks.iter_mut() {
                    s.write(frame, p, Some(pose))?;
                }
                Ok(())
            }
            Target::Log { writer, .. } => Ok(writer.write_frame(frame, p, Some(pose))?),
        }
    }

    /// Completes the outputs (from the log when there is one).
    fn finish(self, work_dir: Option<&Path>) -> Result<Vec<PathBuf>> {
        match self {
            Target::Sinks(sinks) => {
                let mut out = Vec::new();
                for s in sinks {
                    out.extend(s.finish()?);
                }
                Ok(out)
            }
            Target::Log { writer, mut sinks } => {
                let path = writer.finish()?;
                let mut r = TcacheReader::open(&path)?;
                for i in 0..r.len() {
                    let p = r.frame(i)?;
                    let pose = r.pose(i)?;
                    let frame = r.frames[i].frame;
                    for s in sinks.iter_mut() {
                        s.write(frame, &p, Some(pose))?;
                    }
                }
                let mut out = Vec::new();
                for s in sinks {
                    out.extend(s.finish()?);
                }
                if let Some(dir) = work_dir {
                    let _ = std::fs::remove_dir_all(dir);
                }
                Ok(out)
            }
        }
    }
}

fn stopped(frame: i64, work: Option<&Path>) -> Error {
    Error::Stopped(match work {
        Some(dir) => format!(
            "stopped after frame {frame}; resume from the last checkpoint in {}",
            dir.display()
        ),
        None => format!(
            "stopped after frame {frame} (no checkpoints were asked for, so the run cannot be resumed)"
        ),
    })
}

/// Reopens the frame log of `dir` for appending after output frame `saved`. The frames up to it
/// are copied into a fresh log: a killed run may have logged frames past its last checkpoint,
/// and the writer's predictors must restart from exactly the kept frames.
fn reopen_log(dir: &Path, header: TcacheHeader, first: i64, saved: f64) -> Result<TcacheWriter> {
    let log = log_path(dir);
    let aside = dir.join("frames.old.tcache");
    // A resume killed while copying left the complete old log aside: that is the one to use.
    if !aside.exists() {
        std::fs::rename(&log, &aside)
            .map_err(|e| Error::Invalid(format!("{}: no frame log to resume from ({e})", log.display())))?;
    }
    let mut old = TcacheReader::open(&aside)?;
    let keep: Vec<usize> = (0..old.len())
        .filter(|&i| old.frames[i].frame <= saved + 1e-9)
        .collect();
    if keep.len() as i64 != saved.round() as i64 - first + 1 {
        return Err(Error::Invalid(format!(
            "{}: the frame log does not hold every frame up to the checkpoint (frame {saved})",
            aside.display()
        )));
    }
    let mut writer = TcacheWriter::create_in_place(&log, header, 3)?;
    for i in keep {
        let (p, pose) = (old.frame(i)?, old.pose(i)?);
        writer.write_frame(old.frames[i].frame, &p, Some(pose))?;
    }
    drop(old);
    std::fs::remove_file(&aside).map_err(|e| Error::Write {
        path: aside.clone(),
        source: e,
    })?;
    Ok(writer)
}

/// Runs `sim` over the plan's frames into `sinks`. `on_frame` sees every finished frame and
/// returns whether to go on: when it says stop, the run ends with [`Error::Stopped`], leaving the
/// work folder (frame log and last checkpoint) for a resume, as a killed run would.
/// Returns the report and the files written.
pub fn run(
    sim: &mut Simulation,
    plan: &RunPlan,
    sinks: Vec<Box<dyn FrameSink>>,
    topology: &Strands,
    on_frame: &mut dyn FnMut(i64, &FrameStats) -> bool,
) -> Result<(RunReport, Vec<PathBuf>)> {
    let started = Instant::now();
    let dt = 1.0 / plan.fps;
    let mut report = RunReport::default();
    let mut next = plan.first;
    let checkpoints = plan.checkpoint_every.filter(|&n| n > 0);
    let work = plan
        .work_dir
        .clone()
        .filter(|_| checkpoints.is_some() || plan.resume);
    let mut target = match &work {
        Some(dir) => {
            let (t, resumed) = Target::log(sim, plan, sinks, topology, dir)?;
            if let Some(saved) = resumed {
                report.resumed_after = Some(saved);
                next = saved.round() as i64 + 1;
            }
            t
        }
        None => Target::Sinks(sinks),
    };

    if next == plan.first {
        for _ in 0..sim.options.preroll_frames {
            sim.step_frame(dt, true);
        }
        if !sim.x.iter().chain(&sim.v).all(|p| p.is_finite()) {
            drop(target);
            return Err(Error::Runtime(format!(
                "the simulation became unstable before frame {} (positions became NaN{}); nothing was written; try more --substeps or the implicit integrator",
                plan.first,
                if sim.options.preroll_frames > 0 {
                    format!(" during the {} preroll frames", sim.options.preroll_frames)
                } else {
                    String::new()
                }
            )));
        }
        let t = Instant::now();
        target.write(plan.first as f64, &sim.x, sim.head_pose().into())?;
        sim.counters.io += t.elapsed();
        report.frames += 1;
        if !on_frame(plan.first, &FrameStats::default()) {
            return Err(stopped(plan.first, work.as_deref()));
        }
        next = plan.first + 1;
    }
    let mut good = (sim.x.clone(), sim.v.clone(), sim.time, next - 1);
    for frame in next..=plan.last {
        let stats = sim.step_frame(dt, false);
        let finite = sim.x.iter().chain(&sim.v).all(|p| p.is_finite());
        if !finite || stats.max_speed > sim.options.max_speed {
            return Err(unstable(
                sim,
                good,
                finite,
                target,
                work.as_deref(),
                (plan.first, frame),
                &stats,
            ));
        }
        tracing::debug!(
            frame,
            substeps = stats.substeps,
            max_speed = stats.max_speed,
            max_strain = stats.max_strain,
            contacts = stats.contacts,
            "frame"
        );
        report.add(&stats);
        let t = Instant::now();
        target.write(frame as f64, &sim.x, sim.head_pose().into())?;
        if let (Some(n), Some(dir)) = (checkpoints, &work)
            && (frame - plan.first) % n as i64 == 0
        {
            checkpoint::save(&checkpoint_path(dir), sim, frame as f64)?;
        }
        sim.counters.io += t.elapsed();
        report.frames += 1;
        // The last good state, its buffers reused.
        good.0.clone_from(&sim.x);
        good.1.clone_from(&sim.v);
        (good.2, good.3) = (sim.time, frame);
        if !on_frame(frame, &stats) {
            return Err(stopped(frame, work.as_deref()));
        }
    }
    let t = Instant::now();
    let files = target.finish(work.as_deref())?;
    sim.counters.io += t.elapsed();
    report.seconds = started.elapsed().as_secs_f64();
    Ok((report, files))
}
