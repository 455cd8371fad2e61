//! Running a strand simulation for a stage: the job's material and solver settings, a cache in
//! the output folder, checkpoints in `.tress/work-<stage>` (a killed run resumes), progress
//! and the figures a log shows. Shared by the simulate, guide_sim, train_sim and two_way
//! stages.

use std::collections::HashSet;
use std::path::PathBuf;

use crate::cache::{CacheInfo, SinkOptions, create_sink};
use crate::collide::Colliders;
use crate::error::Result;
use crate::groom::Groom;
use crate::pipeline::engine::Ctx;
use crate::pipeline::progress::FrameProgress;
use crate::sim::run::{RunPlan, run as run_sim};
use crate::sim::{ExternalForces, Simulation};

/// The guide strands of `full` alone (strand k = guide slot k).
pub fn guide_groom(full: &Groom, guides: &[usize]) -> Groom {
    let set: HashSet<usize> = guides.iter().copied().collect();
    full.filter_strands(|s| set.contains(&s))
}

/// What to simulate and where it goes.
pub struct SimRun<'a> {
    pub groom: &'a Groom,
    pub colliders: Colliders,
    /// Output frames, inclusive.
    pub frames: (i64, i64),
    /// The cache written, relative to the output folder.
    pub name: &'a str,
    /// Checkpoints in `.tress/work-<work>` (none without).
    pub work: Option<&'a str>,
    /// Extra accelerations (two-way correction).
    pub forces: Option<Box<dyn ExternalForces>>,
}

/// Simulates `r.groom` among `r.colliders` over `r.frames` into `r.name` (resuming a killed
/// run from its checkpoints).
pub fn simulate(cx: &Ctx, r: SimRun) -> Result<()> {
    let job = cx.job;
    let (first, last) = r.frames;
    let start = first as f64 / job.fps;
    let mut sim = Simulation::new(
        r.groom,
        job.material.clone(),
        job.simulate.clone(),
        r.colliders,
        start,
    );
    sim.forces = r.forces;
    let topology = r.groom.to_strands();
    let info = CacheInfo {
        topology: topology.clone(),
        fps: job.fps,
        frames: Vec::new(),
    };
    let sink = create_sink(&cx.out.join(r.name), &info, first as f64, &SinkOptions::default())?;
    let work: Option<PathBuf> = r.work.map(|w| cx.out.join(".tress").join(format!("work-{w}")));
    // Resume a run that was killed, unless the job changed since (then start over).
    let resume = work
        .as_ref()
        .is_some_and(|w| crate::sim::checkpoint::matches(&w.join("state.ckpt"), &sim));
    let plan = RunPlan {
        fps: job.fps,
        first,
        last,
        checkpoint_every: work.as_ref().and(job.checkpoint_every),
        work_dir: work.clone(),
        resume,
    };
    let frames = (last - first + 1) as u64;
    let mut progress = FrameProgress::new(r.name.trim_end_matches(".tcache"), frames, cx.quiet);
    let mut on_frame = |f: i64, _: &crate::sim::FrameStats| {
        progress.tick(f);
        true
    };
    let result = run_sim(&mut sim, &plan, vec![sink], &topology, &mut on_frame);
    progress.finish();
    if !cx.quiet {
        eprintln!("           {}", sim.counters.report());
    }
    let (report, _) = result?;
    if let (Some(after), false) = (report.resumed_after, cx.quiet) {
        eprintln!("           resumed from the checkpoint after frame {after}");
    }
    if !cx.quiet {
        eprintln!(
            "           {} frames of {} strands, {:.3} s/frame, up to {} substeps, deepest penetration after a frame {:.3} mm",
            report.frames,
            r.groom.strand_count(),
            report.seconds / report.frames.max(1) as f64,
            report.max_substeps,
            report.max_residual_penetration * 10.0
        );
    }
    Ok(())
}
