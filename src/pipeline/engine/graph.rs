//! The stage graph of a job: which stages have work, which stages each reads (what a farm step
//! waits for), and the stages a run with `--only` / `--chunk` executes.

use super::{Chunk, Kind, RunOptions, Stage};
use crate::error::{Error, Result};
use crate::pipeline::job::Job;

/// A registered list of stages, in running order.
pub type Stages = &'static [&'static dyn Stage];

/// The frames of chunk `i` of `n`.
pub fn chunk_frames(job: &Job, (i, n): Chunk) -> (i64, i64) {
    let len = (job.last - job.first + 1) as usize;
    let a = job.first + (len * i / n) as i64;
    let b = job.first + (len * (i + 1) / n) as i64 - 1;
    (a, b)
}

/// The stage named `name`.
pub fn find(stages: Stages, name: &str) -> Option<&'static dyn Stage> {
    stages.iter().copied().find(|s| s.name() == name)
}

/// Whether the stage named `name` has work in `job`.
pub fn applies(stages: Stages, job: &Job, name: &str) -> bool {
    find(stages, name).is_some_and(|s| s.applies(job))
}

/// The stages `stage` reads in `job`, those without work left out: what a farm step must wait
/// for.
pub fn upstream(stages: Stages, job: &Job, stage: &dyn Stage) -> Vec<&'static str> {
    let listed: Vec<&'static str> = match stage.kind() {
        Kind::Summary => stages
            .iter()
            .map(|s| s.name())
            .filter(|n| *n != stage.name())
            .collect(),
        _ => stage.upstream(job),
    };
    listed.into_iter().filter(|n| applies(stages, job, n)).collect()
}

/// The stages a run with `opts` executes, in order (checked: `--only` names stages that have
/// work, `--chunk` goes only with per-frame stages).
pub fn select(stages: Stages, job: &Job, opts: &RunOptions) -> Result<Vec<&'static dyn Stage>> {
    for name in &opts.only {
        if find(stages, name).is_none() {
            let names: Vec<&str> = stages.iter().map(|s| s.name()).collect();
            return Err(Error::Invalid(format!(
                "--only {name}: no such stage (stages: {})",
                names.join(", ")
            )));
        }
    }
    let selected: Vec<&'static dyn Stage> = if opts.only.is_empty() {
        stages.iter().copied().filter(|s| s.applies(job)).collect()
    } else {
        if let Some(s) = stages
            .iter()
            .find(|s| opts.only.iter().any(|o| o == s.name()) && !s.applies(job))
        {
            return Err(Error::Invalid(format!(
                "--only {}: the job has no work for that stage (it needs {})",
                s.name(),
                s.info().needs
            )));
        }
        stages
            .iter()
            .copied()
            .filter(|s| opts.only.iter().any(|o| o == s.name()))
            .collect()
    };
    if let Some((i, n)) = opts.chunk {
        if n == 0 || i >= n {
            return Err(Error::Invalid(format!("--chunk {i}/{n}: need 0 ≤ i < n")));
        }
        if let Some(s) = selected.iter().find(|s| s.kind() != Kind::Chunked) {
            let chunked: Vec<&str> = stages
                .iter()
                .filter(|s| s.kind() == Kind::Chunked)
                .map(|s| s.name())
                .collect();
            return Err(Error::Invalid(format!(
                "--chunk splits the per-frame stages ({}); stage {} runs whole: use --only upsample (or drape) with --chunk",
                chunked.join(", "),
                s.name()
            )));
        }
    }
    Ok(selected)
}
