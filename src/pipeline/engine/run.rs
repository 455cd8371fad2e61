//! Running a job's stages: each is skipped when its record says its inputs have not changed,
//! re-run otherwise; `--only` picks stages (their upstream stages must have run), `--chunk i/n`
//! splits the per-frame stages for farm tasks.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use super::graph::{Stages, select};
use super::lock::{self, StageLock};
use super::{Chunk, Ctx, Kind, Record, Stage};
use crate::error::{Error, Result};
use crate::pipeline::job::Job;

/// How to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Only these stages, by name (all when empty).
    pub only: Vec<String>,
    /// Chunk i of n of the per-frame stages.
    pub chunk: Option<Chunk>,
    /// No progress output (JSON mode).
    pub quiet: bool,
    /// Fail at once when another run holds a stage's lock, instead of waiting for it.
    pub no_wait: bool,
}

/// What happened to one stage.
#[derive(Clone, Debug, Serialize)]
pub struct StageStatus {
    pub stage: &'static str,
    pub chunk: Option<Chunk>,
    /// "ran" or "cached".
    pub status: &'static str,
    /// This run's time (cached: the time it took when it ran).
    pub seconds: f64,
    pub outputs: Vec<String>,
}

/// The stages of a run, in order.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunReport {
    pub job: String,
    pub output: PathBuf,
    pub stages: Vec<StageStatus>,
}

/// The chunkings of `stage` that earlier runs left records of, in order.
fn recorded_chunks(out: &Path, stage: &str) -> Vec<Chunk> {
    let dir = out.join(".tress");
    let mut found: Vec<Chunk> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let rest = name.strip_prefix(&format!("{stage}."))?.strip_suffix(".json")?;
            let (i, n) = rest.split_once("-of-")?;
            Some((i.parse().ok()?, n.parse().ok()?))
        })
        .collect();
    found.sort();
    found
}

/// Loads every current record from an earlier run (stages whose inputs did not change and
/// whose outputs are all there with their recorded sizes and digests); says why a record left
/// behind is not trusted.
fn load_current(stages: Stages, cx: &mut Ctx) {
    for stage in stages.iter().filter(|s| s.kind() != Kind::Summary) {
        let chunks: Vec<Option<Chunk>> = match stage.kind() {
            Kind::Chunked => recorded_chunks(&cx.out, stage.name())
                .into_iter()
                .map(Some)
                .collect(),
            _ => vec![None],
        };
        for chunk in chunks {
            let Some(r) = Record::load(&cx.out, stage.name(), chunk) else {
                continue;
            };
            let Ok(inputs) = stage.inputs(cx, chunk) else {
                continue;
            };
            let hash = inputs.hash(&stage.info());
            match r.verify(&cx.out, &hash) {
                Ok(()) => {
                    cx.records.insert((stage.name(), chunk), r);
                }
                Err(why) => {
                    tracing::info!(stage = stage.name(), ?chunk, %why, "earlier record is not current");
                    // Changed settings are the ordinary reason; a damaged output is news.
                    if !cx.quiet && r.inputs == hash {
                        eprintln!("{:<10} runs again: {why}", stage.name());
                    }
                }
            }
        }
    }
}

/// What a run would do, without doing it (`tress run --dry-run`): each selected stage, and
/// whether an earlier run's result is current ("cached") or it runs ("runs"). A stage after one
/// that runs runs too unless its inputs are unchanged, which only the run can tell ("runs").
#[derive(Clone, Debug, Serialize)]
pub struct PlannedStage {
    pub stage: &'static str,
    pub status: &'static str,
    /// Why it runs: no earlier result, changed inputs, or an upstream stage that runs.
    pub reason: &'static str,
    /// The stage's results version (part of its key).
    pub version: u32,
}

/// Whether a complete earlier chunking of a per-frame stage satisfies an unchunked run.
fn whole_from_chunks(cx: &Ctx, stage: &dyn Stage, opts: &RunOptions) -> bool {
    stage.kind() == Kind::Chunked && opts.chunk.is_none() && cx.chunks(stage.name(), "").is_ok()
}

/// The chunk a stage runs as: `--chunk` (or all frames as one) for per-frame stages.
fn chunk_of(stage: &dyn Stage, opts: &RunOptions) -> Option<Chunk> {
    (stage.kind() == Kind::Chunked).then(|| opts.chunk.unwrap_or((0, 1)))
}

pub fn plan(stages: Stages, job: &Job, opts: &RunOptions) -> Result<Vec<PlannedStage>> {
    let selected = select(stages, job, opts)?;
    let mut cx = Ctx::new(job, true);
    load_current(stages, &mut cx);
    let mut out = Vec::new();
    let mut upstream_runs = false;
    for stage in selected {
        let chunk = chunk_of(stage, opts);
        let summary = stage.kind() == Kind::Summary;
        let cached = !summary
            && (whole_from_chunks(&cx, stage, opts) || cx.records.contains_key(&(stage.name(), chunk)));
        let (status, reason) = match (cached, upstream_runs) {
            _ if summary => ("runs", "the report is written on every run"),
            (true, false) => ("cached", "inputs unchanged since the last run"),
            (true, true) => (
                "runs",
                "an upstream stage runs (cached only if its outputs come out the same)",
            ),
            (false, _) if Record::load(&cx.out, stage.name(), chunk).is_some() => {
                ("runs", "settings, inputs or the build changed since the last run")
            }
            (false, _) => ("runs", "no earlier result"),
        };
        if status == "runs" && !summary {
            upstream_runs = true;
        }
        out.push(PlannedStage {
            stage: stage.name(),
            status,
            reason,
            version: stage.info().version,
        });
    }
    Ok(out)
}

/// Runs the job's stages, calling `finished` with the path of every file a stage wrote as soon
/// as the stage is done (a farm log then names each output as it appears, even if a later
/// stage fails).
pub fn run_with(
    stages: Stages,
    job: &Job,
    opts: &RunOptions,
    finished: &mut dyn FnMut(&Path),
) -> Result<RunReport> {
    let selected = select(stages, job, opts)?;
    std::fs::create_dir_all(&job.output).map_err(|e| Error::Write {
        path: job.output.clone(),
        source: e,
    })?;
    let mut cx = Ctx::new(job, opts.quiet);
    load_current(stages, &mut cx);
    for stage in selected {
        let name = stage.name();
        if whole_from_chunks(&cx, stage, opts) {
            let parts = cx.chunks(name, "")?;
            let seconds = cx
                .records
                .iter()
                .filter(|((s, _), _)| *s == name)
                .map(|(_, r)| r.seconds)
                .sum();
            cached(
                &mut cx,
                name,
                None,
                seconds,
                parts.iter().map(|p| p.path.clone()).collect(),
            );
            continue;
        }
        let chunk = chunk_of(stage, opts);
        let inputs = stage.inputs(&cx, chunk)?;
        let hash = inputs.hash(&stage.info());
        tracing::info!(stage = name, inputs = %hash, upstream = inputs.files.len(), "input hash");
        tracing::debug!(stage = name, settings = %inputs.settings, "settings");
        let summary = stage.kind() == Kind::Summary;
        if !summary
            && let Some(r) = cx.records.get(&(name, chunk))
            && r.is_current(&cx.out, &hash)
        {
            let (seconds, outputs) = (r.seconds, r.outputs.iter().map(|o| o.path.clone()).collect());
            cached(&mut cx, name, chunk, seconds, outputs);
            continue;
        }
        // One run at a time per stage (and chunk); another run may have finished it meanwhile.
        let quiet = cx.quiet;
        let _lock = StageLock::acquire(&cx.out, name, chunk, !opts.no_wait, &mut |holder| {
            if !quiet {
                eprintln!("{name:<10} waiting: another run holds it ({holder})");
            }
        })?;
        if !summary
            && let Some(r) = Record::load(&cx.out, name, chunk)
            && r.verify(&cx.out, &hash).is_ok()
        {
            let (seconds, outputs) = (r.seconds, r.outputs.iter().map(|o| o.path.clone()).collect());
            cached(&mut cx, name, chunk, seconds, outputs);
            cx.records.insert((name, chunk), r);
            continue;
        }
        if !cx.quiet {
            eprintln!(
                "{name:<10} running{}",
                chunk
                    .map(|(i, n)| format!(" (chunk {i}/{n})"))
                    .unwrap_or_default()
            );
        }
        let t = Instant::now();
        let outputs = stage.run(&cx, chunk)?;
        let seconds = t.elapsed().as_secs_f64();
        let r = Record::save(
            name,
            stage.info().version,
            chunk,
            hash,
            &cx.out,
            &outputs,
            seconds,
        )?;
        if !cx.quiet {
            eprintln!("{name:<10} done in {seconds:.1} s");
        }
        for o in &outputs {
            finished(&cx.out.join(o));
        }
        cx.done.push(StageStatus {
            stage: name,
            chunk,
            status: "ran",
            seconds,
            outputs,
        });
        cx.records.insert((name, chunk), r);
    }
    lock::clear_stale(&cx.out);
    Ok(RunReport {
        job: job.name.clone(),
        output: job.output.clone(),
        stages: cx.done,
    })
}

/// Notes a stage whose earlier result is current.
fn cached(cx: &mut Ctx, stage: &'static str, chunk: Option<Chunk>, seconds: f64, outputs: Vec<String>) {
    if !cx.quiet {
        eprintln!("{stage:<10} cached");
    }
    cx.done.push(StageStatus {
        stage,
        chunk,
        status: "cached",
        seconds,
        outputs,
    });
}
