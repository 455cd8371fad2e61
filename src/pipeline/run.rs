//! Running a job's stages: each is skipped when its record says its inputs have not changed,
//! re-run otherwise; `--only` picks stages (their upstream stages must have run), `--chunk i/n`
//! splits the per-frame stages for farm tasks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};

use super::ctx::Ctx;
use super::job::Job;
use super::stage::{OutputFile, Record, Stage, file_sha256, input_hash};
use super::stages;
use crate::error::{Error, Result};
use crate::guides::Method;

/// How to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Only these stages (all when empty).
    pub only: Vec<Stage>,
    /// Chunk i of n of the chunkable stages.
    pub chunk: Option<(usize, usize)>,
    /// No progress output (JSON mode).
    pub quiet: bool,
}

/// What happened to one stage.
#[derive(Clone, Debug, Serialize)]
pub struct StageStatus {
    pub stage: Stage,
    pub chunk: Option<(usize, usize)>,
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

/// Content hashes of files outside the output folder that a stage reads (groom, head mesh,
/// motion files), as upstream entries.
fn external(paths: &[Option<&str>]) -> Result<Vec<OutputFile>> {
    let mut out = Vec::new();
    for p in paths.iter().flatten() {
        let path = Path::new(p);
        if path.is_file() {
            out.push(OutputFile {
                path: p.to_string(),
                bytes: 0,
                sha256: file_sha256(path)?,
            });
        }
    }
    Ok(out)
}

/// A stage key with the networks' device when it is not the CPU (results on a GPU differ in
/// the last bits; CPU keys stay as they were).
fn on_device(j: &Job, mut key: serde_json::Value) -> serde_json::Value {
    if j.neural.device != crate::neural::device::DeviceKind::Cpu {
        key["device"] = json!(j.neural.device);
    }
    key
}

/// The frames of chunk `i` of `n`.
pub fn chunk_frames(job: &Job, (i, n): (usize, usize)) -> (i64, i64) {
    let len = (job.last - job.first + 1) as usize;
    let a = job.first + (len * i / n) as i64;
    let b = job.first + (len * (i + 1) / n) as i64 - 1;
    (a, b)
}

/// Whether `stage` has work in `job` (training, fitting and two-way correction only where the
/// job asks for them).
pub fn applies(job: &Job, stage: Stage) -> bool {
    match stage {
        Stage::TrainSim => job.training.is_some(),
        Stage::Fit => job.rows.iter().any(|r| r.method.needs_skinning()),
        // A given model (`[neural] model`) is used as it is.
        Stage::Train => job.rows.iter().any(|r| r.method == Method::Neural) && job.neural.model.is_none(),
        Stage::Displace => {
            job.rows.iter().any(|r| r.method == Method::Neural)
                && job.neural.model.is_none()
                && job.neural_config.as_ref().is_some_and(|c| c.displace.is_some())
        }
        Stage::Ablate => job.rows.iter().any(|r| r.loss.is_some()),
        Stage::TwoWay => job.rows.iter().any(|r| r.two_way),
        Stage::Hairmesh => job.rows.iter().any(|r| r.method == Method::Hairmesh),
        Stage::Drape => job.rows.iter().any(|r| r.method == Method::Drape),
        _ => true,
    }
}

/// The stages whose results `stage` reads in `job` (the graph behind [`inputs`]): what a farm
/// step must wait for. Stages that do not apply to the job are left out.
pub fn upstream(job: &Job, stage: Stage) -> Vec<Stage> {
    use Stage::*;
    let models = [Fit, Train, Displace, Ablate];
    let mut up: Vec<Stage> = match stage {
        Prepare => vec![],
        TrainSim | Simulate => vec![Prepare],
        Train => vec![Prepare, TrainSim],
        Displace => vec![Prepare, TrainSim, Train],
        Ablate => vec![Prepare, TrainSim],
        Fit => vec![Prepare, Guides, TrainSim],
        Guides if job.guides.selection == super::job::Selection::Sparse => vec![Prepare, TrainSim],
        Guides => vec![Prepare],
        GuideSim => vec![Prepare, Guides],
        TwoWay => [Prepare, Guides].into_iter().chain(models).collect(),
        Hairmesh | Drape => vec![Prepare],
        Upsample => [Prepare, Guides, GuideSim, TwoWay, Hairmesh, Drape]
            .into_iter()
            .chain(models)
            .collect(),
        Write if job.outputs.ground_truth_abc => vec![Upsample, Simulate],
        Write => vec![Upsample],
        Preview | Eval => [Prepare, Upsample, Simulate, Guides]
            .into_iter()
            .chain(models)
            .collect(),
        Report => Stage::ALL.into_iter().filter(|s| *s != Report).collect(),
    };
    up.retain(|s| applies(job, *s));
    up
}

/// Settings and upstream files of a stage: what its input hash covers.
fn inputs(ctx: &Ctx, stage: Stage, chunk: Option<(usize, usize)>) -> Result<(Value, Vec<OutputFile>)> {
    let j = ctx.job;
    let scene = json!({
        "head": j.head, "motion": j.motion, "frames": [j.first, j.last], "fps": j.fps,
        "scale": j.groom.scale, "up": j.groom.up, "colliders": j.colliders,
    });
    // The files a scene reads besides the groom and head: the motion's and an animated body
    // mesh's (their content, not only their names, keys the stages).
    let body_mesh: Vec<String> = match j.head.body.as_deref() {
        Some(b) if crate::collide::deforming::is_body_mesh(b) => crate::collide::deforming::body_files(b)?
            .into_iter()
            .map(|(_, p)| p.display().to_string())
            .collect(),
        _ => Vec::new(),
    };
    let motion_files = |m: &super::job::MotionSpec| -> Result<Vec<OutputFile>> {
        let mut files = external(&[
            m.gltf.as_deref(),
            m.abc.as_deref(),
            m.track.as_deref(),
            m.preset.as_deref(),
        ])?;
        files.extend(external(
            &body_mesh.iter().map(|p| Some(p.as_str())).collect::<Vec<_>>(),
        )?);
        Ok(files)
    };
    let prepared = |ctx: &Ctx| -> Result<Vec<OutputFile>> { Ok(ctx.record(Stage::Prepare)?.outputs.clone()) };
    let training =
        |ctx: &Ctx| -> Result<OutputFile> { Ok(ctx.input(Stage::TrainSim, "training.tcache")?.clone()) };
    // The fitted and trained models the upsampling rows use.
    let skinning = |ctx: &Ctx| -> Result<Vec<OutputFile>> {
        let mut up = Vec::new();
        if applies(j, Stage::Fit) {
            up.push(ctx.input(Stage::Fit, "skinning.tskin")?.clone());
        }
        if applies(j, Stage::Train) {
            up.push(ctx.input(Stage::Train, "model.tnn")?.clone());
        }
        if applies(j, Stage::Displace) {
            up.push(ctx.input(Stage::Displace, "displaced.tnn")?.clone());
        }
        up.extend(external(&[j.neural.model.as_deref()])?);
        if applies(j, Stage::Ablate) {
            for a in &j.neural.ablations {
                up.push(
                    ctx.input(Stage::Ablate, &super::stages::ablated_model(*a))?
                        .clone(),
                );
            }
        }
        Ok(up)
    };
    let rows = json!({
        "rows": j.rows, "neighbors": j.guides.neighbors, "adaptive": j.guides.adaptive,
    });
    Ok(match stage {
        Stage::Prepare => (
            json!({"groom": j.groom, "head": j.head, "seed": j.seed}),
            external(&[j.groom.file.as_deref(), Some(j.head.collider.as_str())])?,
        ),
        Stage::TrainSim => {
            let (spec, motion, a, b) = j
                .training
                .as_ref()
                .ok_or_else(|| Error::Invalid("the job has no [training] section".into()))?;
            let mut up = prepared(ctx)?;
            up.extend(motion_files(motion)?);
            (
                json!({"training": spec, "frames": [a, b], "head": j.head, "fps": j.fps, "scale": j.groom.scale,
                       "up": j.groom.up, "material": j.material, "simulate": j.simulate}),
                up,
            )
        }
        Stage::Train => {
            let mut up = prepared(ctx)?;
            up.push(training(ctx)?);
            // W_θ does not depend on the displacement generator's options.
            let w = j.neural_config.clone().map(|mut c| {
                c.displace = None;
                c
            });
            (on_device(j, json!({"neural": w})), up)
        }
        Stage::Displace => {
            let mut up = prepared(ctx)?;
            up.push(training(ctx)?);
            up.push(ctx.input(Stage::Train, "model.tnn")?.clone());
            (
                on_device(
                    j,
                    json!({"displace": j.neural_config.as_ref().and_then(|c| c.displace.clone())}),
                ),
                up,
            )
        }
        Stage::Ablate => {
            let mut up = prepared(ctx)?;
            up.push(training(ctx)?);
            // The same config as W_θ's, less the displacement generator, per ablation.
            let w = j.neural_config.clone().map(|mut c| {
                c.displace = None;
                c
            });
            (
                on_device(j, json!({"neural": w, "ablations": j.neural.ablations})),
                up,
            )
        }
        Stage::Fit => {
            let mut up = prepared(ctx)?;
            up.push(ctx.input(Stage::Guides, "guides.json")?.clone());
            up.push(training(ctx)?);
            (json!({"fit": j.guides.fit}), up)
        }
        Stage::TwoWay => {
            let mut up = prepared(ctx)?;
            up.extend(motion_files(&j.motion)?);
            up.push(ctx.input(Stage::Guides, "guides.json")?.clone());
            up.extend(skinning(ctx)?);
            (
                json!({"scene": scene, "material": j.material, "simulate": j.simulate, "rows": rows,
                       "correction": j.guides.correction}),
                up,
            )
        }
        Stage::Hairmesh => {
            let mut up = prepared(ctx)?;
            up.extend(motion_files(&j.motion)?);
            (json!({"scene": scene, "hairmesh": j.hairmesh}), up)
        }
        Stage::Drape => {
            let range = chunk_frames(j, chunk.unwrap_or((0, 1)));
            let mut up = prepared(ctx)?;
            up.extend(motion_files(&j.motion)?);
            up.extend(external(&[j.drape.model.as_deref()])?);
            (
                json!({"scene": scene, "drape": j.drape, "range": [range.0, range.1]}),
                up,
            )
        }
        Stage::Simulate => {
            let mut up = prepared(ctx)?;
            up.extend(motion_files(&j.motion)?);
            (
                json!({"scene": scene, "material": j.material, "simulate": j.simulate}),
                up,
            )
        }
        Stage::Guides => {
            let mut up = prepared(ctx)?;
            let sparse = j.guides.selection == super::job::Selection::Sparse;
            if sparse {
                up.push(training(ctx)?);
            }
            (
                json!({"count": j.guides.count, "selection": j.guides.selection,
                       "neural_grid": j.neural_config.as_ref().map(|c| c.grid),
                       "sparse": sparse.then(|| json!({"iterations": j.guides.sparse_iterations, "beta": j.guides.fit.beta}))}),
                up,
            )
        }
        Stage::GuideSim => {
            let mut up = prepared(ctx)?;
            up.extend(motion_files(&j.motion)?);
            up.push(ctx.input(Stage::Guides, "guides.json")?.clone());
            (
                json!({"scene": scene, "material": j.material, "simulate": j.simulate}),
                up,
            )
        }
        Stage::Upsample => {
            let range = chunk_frames(j, chunk.unwrap_or((0, 1)));
            let mut up = prepared(ctx)?;
            up.push(ctx.input(Stage::Guides, "guides.json")?.clone());
            up.push(ctx.input(Stage::GuideSim, "guides.tcache")?.clone());
            up.extend(skinning(ctx)?);
            if applies(j, Stage::TwoWay) {
                up.extend(ctx.record(Stage::TwoWay)?.outputs.clone());
            }
            if applies(j, Stage::Hairmesh) {
                up.extend(ctx.record(Stage::Hairmesh)?.outputs.clone());
            }
            if applies(j, Stage::Drape) {
                up.extend(ctx.chunks(Stage::Drape)?);
            }
            up.extend(motion_files(&j.motion)?);
            (
                on_device(
                    j,
                    json!({"rows": rows, "scene": scene, "range": [range.0, range.1]}),
                ),
                up,
            )
        }
        Stage::Write => {
            let mut up = ctx.parts_of(&j.rows[0])?;
            if j.outputs.ground_truth_abc {
                up.push(ctx.input(Stage::Simulate, "gt.tcache")?.clone());
            }
            (json!({"outputs": j.outputs, "fps": j.fps}), up)
        }
        Stage::Preview | Stage::Eval => {
            let mut up = prepared(ctx)?;
            up.extend(ctx.parts()?);
            up.push(ctx.input(Stage::Simulate, "gt.tcache")?.clone());
            up.push(ctx.input(Stage::Guides, "guides.json")?.clone());
            up.extend(skinning(ctx)?);
            up.extend(motion_files(&j.motion)?);
            let settings = if stage == Stage::Preview {
                json!({"scene": scene, "preview": j.preview, "rows": rows})
            } else {
                json!({"scene": scene, "rows": rows, "oracle": j.guides.oracle})
            };
            (settings, up)
        }
        Stage::Report => (json!({}), Vec::new()),
    })
}

/// Loads every current record from an earlier run (stages whose inputs did not change).
fn load_current(ctx: &mut Ctx) {
    for stage in Stage::ALL {
        if stage == Stage::Report {
            continue;
        }
        let chunks: Vec<Option<(usize, usize)>> = if stage.chunkable() {
            let dir = ctx.out.join(".tress");
            let mut found: Vec<(usize, usize)> = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    let rest = name
                        .strip_prefix(&format!("{}.", stage.name()))?
                        .strip_suffix(".json")?;
                    let (i, n) = rest.split_once("-of-")?;
                    Some((i.parse().ok()?, n.parse().ok()?))
                })
                .collect();
            found.sort();
            found.into_iter().map(Some).collect()
        } else {
            vec![None]
        };
        for chunk in chunks {
            let Some(r) = Record::load(&ctx.out, stage, chunk) else {
                continue;
            };
            let Ok((settings, up)) = inputs(ctx, stage, chunk) else {
                continue;
            };
            let refs: Vec<&OutputFile> = up.iter().collect();
            if r.is_current(&ctx.out, &input_hash(stage, &settings, &refs)) {
                ctx.records.insert((stage, chunk), r);
            } else {
                tracing::info!(stage = stage.name(), ?chunk, "earlier record is out of date");
            }
        }
    }
}

/// Runs the job.
pub fn run(job: &Job, opts: &RunOptions) -> Result<RunReport> {
    run_with(job, opts, &mut |_| {})
}

/// The stages a run with `opts` executes, in order (checked: `--only` stages have work,
/// `--chunk` only with per-frame stages).
fn select(job: &Job, opts: &RunOptions) -> Result<Vec<Stage>> {
    let selected: Vec<Stage> = if opts.only.is_empty() {
        Stage::ALL.into_iter().filter(|s| applies(job, *s)).collect()
    } else {
        if let Some(s) = opts.only.iter().find(|s| !applies(job, **s)) {
            return Err(Error::Invalid(format!(
                "--only {}: the job has no work for that stage (it needs {})",
                s.name(),
                match s {
                    Stage::TrainSim => "a [training] section",
                    Stage::Fit => "a static or adaptive method",
                    Stage::Train => "the neural method",
                    Stage::Displace => "the neural method with a [displace] section in its config",
                    Stage::Ablate => "the neural method and [neural] ablations",
                    Stage::Hairmesh => "the hairmesh method ([hairmesh] enabled = true)",
                    Stage::Drape => "the drape method ([drape] enabled = true)",
                    _ => "a two-way method",
                }
            )));
        }
        opts.only.clone()
    };
    if let Some((i, n)) = opts.chunk {
        if n == 0 || i >= n {
            return Err(Error::Invalid(format!("--chunk {i}/{n}: need 0 ≤ i < n")));
        }
        if let Some(s) = selected.iter().find(|s| !s.chunkable()) {
            return Err(Error::Invalid(format!(
                "--chunk splits the per-frame stages (drape, upsample); stage {} runs whole: use --only upsample (or drape) with --chunk",
                s.name()
            )));
        }
    }
    Ok(selected)
}

/// What a run would do, without doing it (`tress run --dry-run`): each selected stage, and
/// whether an earlier run's result is current ("cached") or it runs ("runs"). A stage after one
/// that runs runs too unless its inputs are unchanged, which only the run can tell ("runs").
#[derive(Clone, Debug, Serialize)]
pub struct PlannedStage {
    pub stage: Stage,
    pub status: &'static str,
    /// Why it runs: no earlier result, changed inputs, or an upstream stage that runs.
    pub reason: &'static str,
}

pub fn plan(job: &Job, opts: &RunOptions) -> Result<Vec<PlannedStage>> {
    let selected = select(job, opts)?;
    let mut ctx = Ctx {
        job,
        out: job.output.clone(),
        quiet: true,
        records: BTreeMap::new(),
    };
    load_current(&mut ctx);
    let mut out = Vec::new();
    let mut upstream_runs = false;
    for stage in Stage::ALL.into_iter().filter(|s| selected.contains(s)) {
        let chunk = stage.chunkable().then(|| opts.chunk.unwrap_or((0, 1)));
        let cached = if stage == Stage::Report {
            false
        } else if stage.chunkable() && opts.chunk.is_none() && ctx.chunks(stage).is_ok() {
            true
        } else {
            ctx.records.contains_key(&(stage, chunk))
        };
        let (status, reason) = match (cached, upstream_runs, stage) {
            (_, _, Stage::Report) => ("runs", "the report is written on every run"),
            (true, false, _) => ("cached", "inputs unchanged since the last run"),
            (true, true, _) => (
                "runs",
                "an upstream stage runs (cached only if its outputs come out the same)",
            ),
            (false, _, _) if Record::load(&ctx.out, stage, chunk).is_some() => {
                ("runs", "settings, inputs or the build changed since the last run")
            }
            (false, _, _) => ("runs", "no earlier result"),
        };
        if status == "runs" && stage != Stage::Report {
            upstream_runs = true;
        }
        out.push(PlannedStage {
            stage,
            status,
            reason,
        });
    }
    Ok(out)
}

/// Runs the job, calling `finished` with the path of every file a stage wrote as soon as the
/// stage is done (a farm log then names each output as it appears, even if a later stage fails).
pub fn run_with(job: &Job, opts: &RunOptions, finished: &mut dyn FnMut(&Path)) -> Result<RunReport> {
    let selected = select(job, opts)?;
    std::fs::create_dir_all(&job.output).map_err(|e| Error::Write {
        path: job.output.clone(),
        source: e,
    })?;
    let mut ctx = Ctx {
        job,
        out: job.output.clone(),
        quiet: opts.quiet,
        records: BTreeMap::new(),
    };
    load_current(&mut ctx);
    let mut report = RunReport {
        job: job.name.clone(),
        output: job.output.clone(),
        stages: Vec::new(),
    };
    for stage in Stage::ALL.into_iter().filter(|s| selected.contains(s)) {
        let chunk = if stage.chunkable() {
            // A complete earlier chunking satisfies an unchunked run.
            if opts.chunk.is_none() && ctx.chunks(stage).is_ok() {
                let parts = ctx.chunks(stage)?;
                report.stages.push(StageStatus {
                    stage,
                    chunk: None,
                    status: "cached",
                    seconds: ctx
                        .records
                        .iter()
                        .filter(|((s, _), _)| *s == stage)
                        .map(|(_, r)| r.seconds)
                        .sum(),
                    outputs: parts.iter().map(|p| p.path.clone()).collect(),
                });
                if !opts.quiet {
                    eprintln!("{:<10} cached", stage.name());
                }
                continue;
            }
            Some(opts.chunk.unwrap_or((0, 1)))
        } else {
            None
        };
        let (settings, up) = inputs(&ctx, stage, chunk)?;
        let refs: Vec<&OutputFile> = up.iter().collect();
        let hash = input_hash(stage, &settings, &refs);
        tracing::info!(stage = stage.name(), inputs = %hash, upstream = refs.len(), "input hash");
        tracing::debug!(stage = stage.name(), settings = %settings, "settings");
        if stage != Stage::Report
            && let Some(r) = ctx.records.get(&(stage, chunk))
            && r.is_current(&ctx.out, &hash)
        {
            if !opts.quiet {
                eprintln!("{:<10} cached", stage.name());
            }
            report.stages.push(StageStatus {
                stage,
                chunk,
                status: "cached",
                seconds: r.seconds,
                outputs: r.outputs.iter().map(|o| o.path.clone()).collect(),
            });
            continue;
        }
        if !opts.quiet {
            eprintln!(
                "{:<10} running{}",
                stage.name(),
                chunk
                    .map(|(i, n)| format!(" (chunk {i}/{n})"))
                    .unwrap_or_default()
            );
        }
        let t = Instant::now();
        let outputs = match stage {
            Stage::Prepare => stages::prepare(&ctx)?,
            Stage::TrainSim => stages::train_sim(&ctx)?,
            Stage::Simulate => stages::simulate(&ctx, false)?,
            Stage::Guides => stages::guides(&ctx)?,
            Stage::Fit => stages::fit(&ctx)?,
            Stage::Train => stages::train(&ctx)?,
            Stage::Displace => stages::displace(&ctx)?,
            Stage::Ablate => stages::ablate(&ctx)?,
            Stage::GuideSim => stages::simulate(&ctx, true)?,
            Stage::TwoWay => stages::two_way(&ctx)?,
            Stage::Hairmesh => stages::hairmesh(&ctx)?,
            Stage::Drape => super::drape::drape(&ctx, chunk.expect("chunked"))?,
            Stage::Upsample => stages::upsample(&ctx, chunk.expect("chunked"))?,
            Stage::Write => stages::write(&ctx)?,
            Stage::Preview => super::preview::preview(&ctx)?,
            Stage::Eval => super::evaluate::evaluate(&ctx)?,
            Stage::Report => super::report::report(&ctx, &report)?,
        };
        let seconds = t.elapsed().as_secs_f64();
        let r = Record::save(stage, chunk, hash, &ctx.out, &outputs, seconds)?;
        if !opts.quiet {
            eprintln!("{:<10} done in {seconds:.1} s", stage.name());
        }
        for o in &outputs {
            finished(&ctx.out.join(o));
        }
        report.stages.push(StageStatus {
            stage,
            chunk,
            status: "ran",
            seconds,
            outputs: outputs.clone(),
        });
        ctx.records.insert((stage, chunk), r);
    }
    Ok(report)
}
