//! The main job: a job file in; caches, metrics, pictures and a report out.
//!
//! - [`job`]: the job file, read and checked;
//! - [`engine`]: runs stages, keyed on what their outputs depend on, skipping what is current
//!   and resuming after a crash; knows stages only through its trait;
//! - [`stages`]: one file per stage, registered in [`stages::ALL`] (prepare → train_sim →
//!   simulate → guides → [fit, train, displace, ablate] → guide_sim → [two_way, hairmesh,
//!   drape] → upsample → write → preview → eval → report);
//! - what several stages share: [`keys`] (parts of their keys), [`simulation`] (a strand
//!   simulation into a cache), [`rows`] (the scored rows as upsamplers), [`progress`];
//! - [`batch`]: batches of items and what is done across them; [`farm`]: Open Job Description
//!   templates from the same stage list.

pub mod batch;
pub mod bundle;
pub mod dataset;
pub mod engine;
pub mod farm;
pub mod job;
pub mod keys;
pub mod progress;
pub mod rows;
pub mod shot_bench;
pub mod simulation;
pub mod stages;

use std::path::Path;

use crate::error::Result;

pub use engine::{PlannedStage, RunOptions, RunReport};
pub use job::Job;

/// Runs the job's stages.
pub fn run(job: &Job, opts: &RunOptions) -> Result<RunReport> {
    run_with(job, opts, &mut |_| {})
}

/// Runs the job's stages, calling `finished` with the path of every file a stage wrote as soon
/// as the stage is done.
pub fn run_with(job: &Job, opts: &RunOptions, finished: &mut dyn FnMut(&Path)) -> Result<RunReport> {
    engine::run::run_with(stages::ALL, job, opts, finished)
}

/// What a run would do, without doing it (`tress run --dry-run`).
pub fn plan(job: &Job, opts: &RunOptions) -> Result<Vec<PlannedStage>> {
    engine::run::plan(stages::ALL, job, opts)
}
