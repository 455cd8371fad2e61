//! The stages that make caches: prepare, simulate (full and guides only), guides, upsample,
//! write. Each returns the files it wrote, relative to the output folder.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use tress_formats::tcache::TcacheReader;

use super::ctx::Ctx;
use super::job::{MethodRow, Selection};
use super::run::chunk_frames;
use super::scene::{
    build_groom, job_colliders, prepared, save_groom, save_head, scene_of, training_colliders,
};
use crate::cache::{CacheInfo, FrameSink, SinkOptions, create_sink};
use crate::collide::Colliders;
use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::guides::skinning::Skinning;
use crate::guides::training::HeadFrames;
use crate::guides::upsample::UpsampleTimes;
use crate::guides::{Interpolator, TwoWay, Upsampler, select_uv_lattice};
use crate::sim::run::{RunPlan, run as run_sim};
use crate::sim::{ExternalForces, Simulation};

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

/// Guide strands (`guides.json`: strand indices): on the root-UV lattice, or chosen by sparse
/// coding of the training motion (001 §6.3) starting from the lattice.
pub fn guides(ctx: &Ctx) -> Result<Vec<String>> {
    let job = ctx.job;
    let groom = prepared(&ctx.out)?;
    let lattice = select_uv_lattice(&groom, job.guides.count);
    // The neural interpolator needs its uv grid's guides; every method then shares them.
    let grid = match &job.neural_config {
        Some(c) => Some(crate::neural::grid::UvGrid::new(&groom, c.grid)?),
        None => None,
    };
    let chosen = match (&grid, job.guides.selection) {
        (Some(g), _) => g.guide_strands(),
        (None, Selection::Lattice) => lattice,
        (None, Selection::Sparse) => {
            let mut frames = HeadFrames::open(&ctx.out.join("training.tcache"), &groom)?;
            crate::guides::sparse::select_from_training(
                &groom,
                &mut frames,
                &lattice,
                job.guides.fit.beta,
                job.guides.sparse_iterations,
            )?
        }
    };
    if !ctx.quiet {
        eprintln!(
            "           {} guides of {} strands ({})",
            chosen.len(),
            groom.strand_count(),
            match (&grid, job.guides.selection) {
                (Some(_), _) => "the neural interpolator's uv-grid guides",
                (None, Selection::Lattice) => "root-UV lattice",
                (None, Selection::Sparse) => "sparse coding of the training motion",
            }
        );
    }
    let text =
        serde_json::to_string(&serde_json::json!({ "strands": groom.strand_count(), "guides": chosen }))
            .expect("json");
    let path = ctx.out.join("guides.json");
    tress_formats::atomic::write(&path, text.as_bytes()).map_err(|e| crate::error::output_error(&path, e))?;
    Ok(vec!["guides.json".into()])
}

/// The guide strand indices recorded by the guides stage.
pub fn guide_indices(ctx: &Ctx) -> Result<Vec<usize>> {
    crate::guides::select::read_guide_list(&ctx.out.join("guides.json"))
}

/// The full simulation (`gt.tcache`), or the guides alone (`guides.tcache`).
pub fn simulate(ctx: &Ctx, guides_only: bool) -> Result<Vec<String>> {
    let job = ctx.job;
    let full = prepared(&ctx.out)?;
    let groom = if guides_only {
        guide_groom(ctx, &full)?
    } else {
        full.clone()
    };
    let scene = scene_of(job, full)?;
    let colliders = job_colliders(job, &ctx.out, &scene)?;
    let name = if guides_only { "guides.tcache" } else { "gt.tcache" };
    let work = if guides_only { "guide_sim" } else { "simulate" };
    run_simulation(
        ctx,
        &groom,
        colliders,
        (job.first, job.last),
        name,
        Some(work),
        None,
    )?;
    Ok(vec![name.into()])
}

/// The full simulation on the training motion (`training.tcache`).
pub fn train_sim(ctx: &Ctx) -> Result<Vec<String>> {
    let job = ctx.job;
    let (_, _, a, b) = job
        .training
        .as_ref()
        .ok_or_else(|| Error::Invalid("the job has no [training] section".into()))?;
    let groom = prepared(&ctx.out)?;
    let colliders = training_colliders(job, &ctx.out, &scene_of(job, groom.clone())?)?;
    run_simulation(
        ctx,
        &groom,
        colliders,
        (*a, *b),
        "training.tcache",
        Some("train_sim"),
        None,
    )?;
    Ok(vec!["training.tcache".into()])
}

/// The guide strands of the prepared groom, alone (strand k = guide slot k).
fn guide_groom(ctx: &Ctx, full: &Groom) -> Result<Groom> {
    let keep = guide_indices(ctx)?;
    let set: std::collections::HashSet<usize> = keep.into_iter().collect();
    Ok(full.filter_strands(|s| set.contains(&s)))
}

/// Simulates `groom` among `colliders` over `frames` into `name` (resuming a killed run from
/// the checkpoints in `.tress/work-<work>`; no checkpoints without `work`), with extra
/// accelerations from `forces`.
fn run_simulation(
    ctx: &Ctx,
    groom: &Groom,
    colliders: Colliders,
    (first, last): (i64, i64),
    name: &str,
    work: Option<&str>,
    forces: Option<Box<dyn ExternalForces>>,
) -> Result<()> {
    let job = ctx.job;
    let start = first as f64 / job.fps;
    let mut sim = Simulation::new(
        groom,
        job.material.clone(),
        job.simulate.clone(),
        colliders,
        start,
    );
    sim.forces = forces;
    let topology = groom.to_strands();
    let info = CacheInfo {
        topology: topology.clone(),
        fps: job.fps,
        frames: Vec::new(),
    };
    let sink = create_sink(&ctx.out.join(name), &info, first as f64, &SinkOptions::default())?;
    let work: Option<PathBuf> = work.map(|w| ctx.out.join(".tress").join(format!("work-{w}")));
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
    let mut progress =
        super::progress::FrameProgress::new(name.trim_end_matches(".tcache"), frames, ctx.quiet);
    let mut on_frame = |f: i64, _: &crate::sim::FrameStats| {
        progress.tick(f);
        true
    };
    let result = run_sim(&mut sim, &plan, vec![sink], &topology, &mut on_frame);
    progress.finish();
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
    Ok(())
}

/// The skinning model (`skinning.tskin`) fitted on the training simulation (001 §6).
pub fn fit(ctx: &Ctx) -> Result<Vec<String>> {
    let job = ctx.job;
    let groom = prepared(&ctx.out)?;
    let guides = guide_indices(ctx)?;
    let mut frames = HeadFrames::open(&ctx.out.join("training.tcache"), &groom)?;
    let quiet = ctx.quiet;
    let mut progress = |m: &str| {
        if !quiet {
            eprintln!("           {m}");
        }
    };
    let (model, report) =
        crate::guides::skinning::fit(&groom, &guides, &mut frames, &job.guides.fit, &mut progress)?;
    let path = ctx.out.join("skinning.tskin");
    tress_formats::skin::write(&path, &model).map_err(|e| crate::error::output_error(&path, e))?;
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let report_path = ctx.out.join("skinning.json");
    let doc = serde_json::json!({
        "report": report,
        "file_bytes": bytes,
        "bytes_per_strand": bytes as f64 / groom.strand_count().max(1) as f64,
    });
    tress_formats::atomic::write(
        &report_path,
        serde_json::to_string_pretty(&doc).expect("json").as_bytes(),
    )
    .map_err(|e| crate::error::output_error(&report_path, e))?;
    if !quiet {
        eprintln!(
            "           {} guides, {:.1} eligible and {:.1} sets per strand, training RMSE {:.3} cm, {} bytes ({:.0} per strand), {:.1} s",
            report.guides,
            report.eligible_mean,
            report.sets_mean,
            report.training_rmse,
            bytes,
            bytes as f64 / groom.strand_count().max(1) as f64,
            report.seconds
        );
    }
    Ok(vec!["skinning.tskin".into(), "skinning.json".into()])
}

/// The training simulation on the neural grid: its frames, and its held-out end for validation
/// (`train.validation`). The `train` and `displace` stages read the same split.
fn training_frames(
    ctx: &Ctx,
    groom: &Groom,
    cfg: &crate::neural::interp::InterpConfig,
) -> Result<(crate::neural::data::GridFrames, crate::neural::data::GridFrames)> {
    let grid = crate::neural::grid::UvGrid::new(groom, cfg.grid)?;
    let mut frames = HeadFrames::open(&ctx.out.join("training.tcache"), groom)?;
    crate::neural::data::GridFrames::load_split(grid, &mut frames, cfg.train.validation, cfg.train.batch)
}

/// The job's neural training config (train, displace and ablate stages).
fn neural_config(job: &super::job::Job) -> Result<&crate::neural::interp::InterpConfig> {
    job.neural_config
        .as_ref()
        .ok_or_else(|| Error::Invalid("the job has no neural method".into()))
}

/// W_θ trained with `cfg` on the job's device, checkpointed at `ckpt` (resumed when there; the
/// caller removes it once the model is written), with a progress bar `label` and each
/// validation on its own line.
fn train_w(
    ctx: &Ctx,
    cfg: &crate::neural::interp::InterpConfig,
    label: &str,
    ckpt: &std::path::Path,
    train_set: &crate::neural::data::GridFrames,
    val_set: &crate::neural::data::GridFrames,
) -> Result<crate::neural::interp::train::TrainedModel> {
    let quiet = ctx.quiet;
    let mut progress = super::progress::FrameProgress::steps(label, cfg.train.steps as u64, quiet);
    let mut report = |r: &crate::neural::interp::train::StepReport| {
        progress.tick(r.step);
        if !quiet && let Some(v) = r.validation {
            eprintln!(
                "           step {}/{}: validation RMSE {:.3} cm (uniform weights {:.3}), length error {:.2} %",
                r.step,
                r.steps,
                v.rmse_cm,
                v.uniform_rmse_cm,
                100.0 * v.length_error
            );
        }
        true
    };
    let trained = ctx
        .job
        .neural
        .device
        .run(crate::neural::interp::train::Training {
            cfg,
            train: train_set,
            val: val_set,
            checkpoint: Some((ckpt, true)),
            score_untrained: false,
            report: &mut report,
        })?;
    progress.finish();
    Ok(trained)
}

/// The neural interpolator (`model.tnn`, 000) trained on the training simulation; the last
/// frames of the training motion are held out for validation (`train.validation`).
pub fn train(ctx: &Ctx) -> Result<Vec<String>> {
    let job = ctx.job;
    let cfg = neural_config(job)?;
    let groom = prepared(&ctx.out)?;
    let (train_set, val_set) = training_frames(ctx, &groom, cfg)?;
    let quiet = ctx.quiet;
    let ckpt = ctx.out.join("model.tnn.ckpt");
    let trained = train_w(ctx, cfg, "train", &ckpt, &train_set, &val_set)?;
    let (best_step, best) = trained.progress.best.unwrap_or_default();
    let summary = serde_json::json!({
        "frames": train_set.len(),
        "validation_frames": val_set.len(),
        "steps": trained.progress.step,
        "best_step": best_step,
        "validation": best,
        "seconds": trained.seconds,
        "guides": train_set.grid.guide_strands().len(),
        "occupancy": train_set.grid.occupancy(),
    });
    let path = ctx.out.join("model.tnn");
    // W_θ alone: the displacement options belong to `displaced.tnn` (the stage key leaves them
    // out, so a cached model.tnn must not carry stale ones).
    let mut w_cfg = cfg.clone();
    w_cfg.displace = None;
    crate::neural::interp::train::model_file_of(&w_cfg, trained.weights, summary.clone()).write(&path)?;
    let report_path = ctx.out.join("neural.json");
    tress_formats::atomic::write(
        &report_path,
        serde_json::to_string_pretty(&summary).expect("json").as_bytes(),
    )
    .map_err(|e| crate::error::output_error(&report_path, e))?;
    let _ = std::fs::remove_file(&ckpt);
    if !quiet {
        eprintln!(
            "           {} steps in {:.0} s; best at step {best_step}: validation RMSE {:.3} cm, length error {:.2} %",
            trained.progress.step,
            trained.seconds,
            best.rmse_cm,
            100.0 * best.length_error
        );
    }
    Ok(vec!["model.tnn".into(), "neural.json".into()])
}

/// The file of W_θ trained without the loss terms of ablation `a`.
pub fn ablated_model(a: crate::neural::interp::loss::LossAblation) -> String {
    format!("model.{}.tnn", a.id())
}

/// 000 Table 1's loss ablations (`[neural] ablations`): W_θ trained again on the same frames,
/// seed and steps with some loss terms left out, one model each (`model.<ablation>.tnn`), and
/// their figures (`ablate.json`).
pub fn ablate(ctx: &Ctx) -> Result<Vec<String>> {
    let job = ctx.job;
    let base = neural_config(job)?;
    let groom = prepared(&ctx.out)?;
    let (train_set, val_set) = training_frames(ctx, &groom, base)?;
    let quiet = ctx.quiet;
    let mut outputs = Vec::new();
    let mut figures = serde_json::Map::new();
    for &a in &job.neural.ablations {
        let mut cfg = base.clone();
        cfg.displace = None;
        cfg.loss = a
            .apply(&base.loss)
            .ok_or_else(|| Error::Invalid(format!("neural.ablations: {} changes nothing", a.id())))?;
        let name = ablated_model(a);
        if !quiet {
            eprintln!("           {}: {}", a.id(), a.describe());
        }
        let ckpt = ctx.out.join(format!("{name}.ckpt"));
        let trained = train_w(ctx, &cfg, "ablate", &ckpt, &train_set, &val_set)?;
        let (best_step, best) = trained.progress.best.unwrap_or_default();
        let summary = serde_json::json!({
            "ablation": a,
            "loss": cfg.loss,
            "steps": trained.progress.step,
            "best_step": best_step,
            "validation": best,
            "seconds": trained.seconds,
        });
        crate::neural::interp::train::model_file_of(&cfg, trained.weights, summary.clone())
            .write(&ctx.out.join(&name))?;
        let _ = std::fs::remove_file(&ckpt);
        if !quiet {
            eprintln!(
                "           {} steps in {:.0} s; best at step {best_step}: validation RMSE {:.3} cm",
                trained.progress.step, trained.seconds, best.rmse_cm
            );
        }
        figures.insert(a.id().into(), summary);
        outputs.push(name);
    }
    let report_path = ctx.out.join("ablate.json");
    tress_formats::atomic::write(
        &report_path,
        serde_json::to_string_pretty(&figures).expect("json").as_bytes(),
    )
    .map_err(|e| crate::error::output_error(&report_path, e))?;
    outputs.push("ablate.json".into());
    Ok(outputs)
}

/// The neural interpolator's fine-scale displacement generator (000 §4.3), trained against its
/// discriminator with `model.tnn` fixed, on the same frames: `displaced.tnn` (the interpolator
/// with the generator) and `displace.json`.
pub fn displace(ctx: &Ctx) -> Result<Vec<String>> {
    let job = ctx.job;
    let cfg = neural_config(job)?;
    let o = cfg
        .displace
        .as_ref()
        .ok_or_else(|| Error::Invalid("the neural config has no [displace] section".into()))?;
    let groom = prepared(&ctx.out)?;
    let model_path = ctx.out.join("model.tnn");
    let (train_set, val_set) = training_frames(ctx, &groom, cfg)?;
    let quiet = ctx.quiet;
    let mut progress = super::progress::FrameProgress::steps("displace", o.steps as u64, quiet);
    let mut report = |r: &crate::neural::displace::train::DisplaceStep| {
        progress.tick(r.step);
        if !quiet && let Some(v) = r.validation {
            eprintln!("           step {}/{}: validation {v}", r.step, r.steps);
        }
        true
    };
    let ckpt = ctx.out.join("displaced.tnn.ckpt");
    let d = job
        .neural
        .device
        .run(crate::neural::displace::train::DisplaceTraining {
            model: &model_path,
            o,
            train: &train_set,
            val: &val_set,
            checkpoint: Some((&ckpt, true)),
            report: &mut report,
        })?;
    progress.finish();
    let (best_step, best) = d.progress.best.unwrap_or_default();
    let summary = serde_json::json!({
        "steps": d.progress.step,
        "best_step": best_step,
        "validation": best,
        "seconds": d.seconds,
        "stopped_early": d.stopped_early,
    });
    let model = crate::neural::file::NeuralFile::read(&model_path)?;
    crate::neural::displace::train::with_generator_of(model, o, d.generator, summary.clone())
        .write(&ctx.out.join("displaced.tnn"))?;
    let report_path = ctx.out.join("displace.json");
    tress_formats::atomic::write(
        &report_path,
        serde_json::to_string_pretty(&summary).expect("json").as_bytes(),
    )
    .map_err(|e| crate::error::output_error(&report_path, e))?;
    let _ = std::fs::remove_file(&ckpt);
    if !quiet {
        eprintln!(
            "           {} steps in {:.0} s; best at step {best_step}: validation {best}",
            d.progress.step, d.seconds
        );
    }
    Ok(vec!["displaced.tnn".into(), "displace.json".into()])
}

/// The interpolator of a method row for the prepared groom with guides `guides`.
pub fn interpolator(
    ctx: &Ctx,
    groom: &Groom,
    guides: &[usize],
    row: &MethodRow,
) -> Result<Box<dyn Interpolator>> {
    let job = ctx.job;
    if row.method == crate::guides::Method::Hairmesh {
        let mesh = crate::hairmesh::HairMesh::read(&ctx.out.join("hairmesh/mesh.obj"))?;
        return Ok(Box::new(crate::hairmesh::HairMeshInterpolator::new(mesh, groom)?));
    }
    if row.method == crate::guides::Method::Drape {
        let (texture, points) = super::drape::draped_texture(ctx)?;
        return Ok(Box::new(crate::neural::drape::interp::DrapeInterpolator::new(
            groom, texture, points,
        )?));
    }
    if row.method == crate::guides::Method::Neural {
        let displaced = job.neural_config.as_ref().is_some_and(|c| c.displace.is_some());
        let path = match (row.loss, &job.neural.model) {
            (Some(a), _) => ctx.out.join(ablated_model(a)),
            (None, Some(given)) => std::path::PathBuf::from(given),
            (None, None) if displaced => ctx.out.join("displaced.tnn"),
            (None, None) => ctx.out.join("model.tnn"),
        };
        let n = job.neural.device.run(crate::neural::interp::apply::Load {
            path: &path,
            groom,
            displacement: !row.no_displacement,
        })?;
        if n.guides != guides {
            return Err(Error::Invalid(format!(
                "{}: the model's uv-grid guides are not the job's guides.json",
                path.display()
            )));
        }
        return Ok(n.interp);
    }
    let skinning = row
        .method
        .needs_skinning()
        .then(|| Skinning::load(&ctx.out.join("skinning.tskin"), groom))
        .transpose()?;
    crate::guides::interpolator(
        row.method,
        groom,
        guides,
        job.guides.neighbors,
        skinning,
        &job.guides.adaptive,
    )
}

/// The guides of two-way rows simulated with two-way collision correction (001 §5):
/// `guides.<row>.tcache` each.
pub fn two_way(ctx: &Ctx) -> Result<Vec<String>> {
    let job = ctx.job;
    let full = prepared(&ctx.out)?;
    let guides = guide_indices(ctx)?;
    let groom = guide_groom(ctx, &full)?;
    let scene = scene_of(job, full.clone())?;
    let mut out = Vec::new();
    for row in job.rows.iter().filter(|r| r.two_way) {
        let colliders = job_colliders(job, &ctx.out, &scene)?;
        let coupling = TwoWay::new(
            interpolator(ctx, &full, &guides, row)?,
            job.guides.correction.clone(),
        );
        let stats = coupling.stats.clone();
        let name = format!("guides.{}.tcache", row.stem());
        // No checkpoints: the coupling's state (the adaptive sets) is not in them.
        run_simulation(
            ctx,
            &groom,
            colliders,
            (job.first, job.last),
            &name,
            None,
            Some(Box::new(coupling)),
        )?;
        let st = *stats.lock().expect("not poisoned");
        if !ctx.quiet {
            eprintln!(
                "           {}: {:.1} normal particles in a solid per frame, {} blocks of Eq. 4; interpolation {:.2} s, correction {:.2} s",
                row.key,
                st.colliding as f64 / st.frames.max(1) as f64,
                st.blocks,
                st.interpolation,
                st.correction
            );
        }
        let stats_name = format!("guides.{}.json", row.stem());
        let path = ctx.out.join(&stats_name);
        tress_formats::atomic::write(&path, serde_json::to_string_pretty(&st).expect("json").as_bytes())
            .map_err(|e| crate::error::output_error(&path, e))?;
        out.push(name);
        out.push(stats_name);
    }
    Ok(out)
}

/// The hair mesh built around the prepared groom (`hairmesh/mesh.obj` + its sidecar),
/// simulated on the job's head, motion and solids (`hairmesh.tcache`: the mesh's vertices, one
/// curve per column, world space), and what the run measured (`hairmesh.json`).
pub fn hairmesh(ctx: &Ctx) -> Result<Vec<String>> {
    use crate::hairmesh::{BuildOptions, HairMeshSim, build, simulate};
    let job = ctx.job;
    let spec = &job.hairmesh;
    let groom = prepared(&ctx.out)?;
    let (mesh, built) = build(
        &groom,
        &BuildOptions {
            cells: spec.cells,
            layers: spec.layers,
        },
    )?;
    let dir = ctx.out.join("hairmesh");
    std::fs::create_dir_all(&dir).map_err(|e| Error::Write {
        path: dir.clone(),
        source: e,
    })?;
    mesh.write(&dir.join("mesh.obj"))?;
    let columns = Groom::uniform(mesh.rest.clone(), mesh.layers, Default::default())?;
    let colliders = job_colliders(job, &ctx.out, &scene_of(job, groom)?)?;
    let mut sim = HairMeshSim::new(
        mesh,
        spec.solver.clone(),
        Some(colliders),
        job.first as f64 / job.fps,
    )?;
    if !ctx.quiet {
        eprintln!(
            "hair mesh {} columns × {} layers = {} vertices, {} tets",
            sim.mesh.columns(),
            sim.mesh.layers,
            sim.mesh.vertex_count(),
            sim.tet_count()
        );
    }
    let info = CacheInfo {
        topology: columns.to_strands(),
        fps: job.fps,
        frames: Vec::new(),
    };
    let sink = create_sink(
        &ctx.out.join("hairmesh.tcache"),
        &info,
        job.first as f64,
        &SinkOptions::default(),
    )?;
    let mut progress =
        super::progress::FrameProgress::new("hairmesh", (job.last - job.first + 1).max(0) as u64, ctx.quiet);
    let (report, _) = simulate(
        &mut sim,
        None,
        job.first,
        job.last,
        job.fps,
        vec![sink],
        &mut |f, _| {
            progress.tick(f);
            true
        },
    )?;
    progress.finish();
    let doc = serde_json::json!({
        "report": report,
        "columns": built.columns,
        "faces": built.faces,
        "dropped_faces": built.dropped_faces,
        "solver": spec.solver,
    });
    let path = ctx.out.join("hairmesh.json");
    tress_formats::atomic::write(
        &path,
        serde_json::to_string_pretty(&doc).expect("json").as_bytes(),
    )
    .map_err(|e| crate::error::output_error(&path, e))?;
    Ok(vec![
        "hairmesh/mesh.obj".into(),
        "hairmesh/mesh.hairmesh".into(),
        "hairmesh.tcache".into(),
        "hairmesh.json".into(),
    ])
}

/// The guide caches a row's upsampling reads, in frame order.
fn guide_caches(ctx: &Ctx, row: &MethodRow) -> Result<Vec<String>> {
    Ok(match row.method {
        crate::guides::Method::Hairmesh => vec!["hairmesh.tcache".into()],
        crate::guides::Method::Drape => ctx
            .chunks(super::stage::Stage::Drape)?
            .into_iter()
            .map(|f| f.path)
            .filter(|p| p.ends_with(".tcache"))
            .collect(),
        _ if row.two_way => vec![format!("guides.{}.tcache", row.stem())],
        _ => vec!["guides.tcache".into()],
    })
}

/// What one row's upsampling of a chunk cost (`parts/times.A-B.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RowTimes {
    pub key: String,
    pub frames: u64,
    /// Seconds: guide graph + grouping + assignment, interpolation, position-based correction.
    pub grouping: f64,
    pub interpolation: f64,
    pub projection: f64,
    pub transform: f64,
    /// The method's own counts (adaptive: pairs split, set switches).
    #[serde(default)]
    pub diagnostics: serde_json::Value,
}

impl RowTimes {
    fn new(key: &str, t: &UpsampleTimes) -> RowTimes {
        RowTimes {
            key: key.to_string(),
            frames: t.frames,
            grouping: t.interp.grouping.as_secs_f64(),
            interpolation: t.interp.interpolation.as_secs_f64(),
            projection: t.projection.as_secs_f64(),
            transform: t.transform.as_secs_f64(),
            diagnostics: serde_json::Value::Null,
        }
    }
}

/// An upsampler for a row: its interpolator, the job's colliders, its correction.
pub fn upsampler(
    ctx: &Ctx,
    groom: &Groom,
    guides: &[usize],
    row: &MethodRow,
    sinks: Vec<Box<dyn FrameSink>>,
) -> Result<Upsampler> {
    let job = ctx.job;
    let colliders = job_colliders(job, &ctx.out, &scene_of(job, groom.clone())?)?;
    let projection = row.projection.then_some(job.simulate.collision_margin);
    Ok(Upsampler::new(
        interpolator(ctx, groom, guides, row)?,
        job.fps,
        Some(colliders),
        projection,
        sinks,
    ))
}

/// The whole groom of chunk `chunk` from the guides, every method row
/// (`parts/<row>.A-B.tcache`), and what each cost (`parts/times.A-B.json`). Methods that keep
/// state between frames replay the frames before the chunk first, so any chunking gives the
/// same frames.
pub fn upsample(ctx: &Ctx, chunk: (usize, usize)) -> Result<Vec<String>> {
    let job = ctx.job;
    let groom = prepared(&ctx.out)?;
    let guides = guide_indices(ctx)?;
    let (a, b) = chunk_frames(job, chunk);
    std::fs::create_dir_all(ctx.out.join("parts")).map_err(|e| Error::Write {
        path: ctx.out.join("parts"),
        source: e,
    })?;
    let info = CacheInfo {
        topology: groom.to_strands(),
        fps: job.fps,
        frames: Vec::new(),
    };
    let mut names = Vec::new();
    let mut times = Vec::new();
    for row in &job.rows {
        let name = format!("parts/{}.{a}-{b}.tcache", row.stem());
        let part = create_sink(&ctx.out.join(&name), &info, a as f64, &SinkOptions::default())?;
        let mut up = upsampler(ctx, &groom, &guides, row, vec![part])?;
        let mut progress = super::progress::FrameProgress::new(
            &format!("upsample {}", row.key),
            (b - a + 1).max(0) as u64,
            ctx.quiet,
        );
        'caches: for cache in guide_caches(ctx, row)? {
            let mut r = TcacheReader::open(ctx.out.join(cache))?;
            for i in 0..r.len() {
                let frame = r.frames[i].frame;
                if frame > b as f64 {
                    break 'caches;
                }
                if (a as f64..=b as f64).contains(&frame) {
                    let p = r.frame(i)?;
                    up.write(frame, &p, Some(r.pose(i)?))?;
                    progress.tick(frame);
                } else if up.stateful() {
                    let p = r.frame(i)?;
                    up.upsample(frame, &p, &r.pose(i)?.into())?;
                }
            }
        }
        progress.finish();
        let mut rt = RowTimes::new(&row.key, &up.times());
        rt.diagnostics = up.diagnostics();
        times.push(rt);
        Box::new(up).finish()?;
        names.push(name);
    }
    let tname = format!("parts/times.{a}-{b}.json");
    let path = ctx.out.join(&tname);
    tress_formats::atomic::write(
        &path,
        serde_json::to_string_pretty(&times).expect("json").as_bytes(),
    )
    .map_err(|e| crate::error::output_error(&path, e))?;
    names.push(tname);
    Ok(names)
}

/// Frames of a row's upsampled parts, in order, with their head poses.
pub fn for_each_part_frame(
    ctx: &Ctx,
    row: &MethodRow,
    mut f: impl FnMut(f64, &[[f32; 3]], tress_formats::tcache::HeadPose) -> Result<()>,
) -> Result<()> {
    for part in ctx.parts_of(row)? {
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
pub fn part_frames(ctx: &Ctx, row: &MethodRow, frames: &[i64]) -> Result<Vec<Vec<[f32; 3]>>> {
    let mut readers = Vec::new();
    for part in ctx.parts_of(row)? {
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

/// `hair.abc` (and `hair.tcache`, `hair.usda`, `ply/hair.####.ply`, `gt.abc` as asked).
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
    if job.outputs.usd {
        names.push("hair.usda".to_string());
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
    for_each_part_frame(ctx, &job.rows[0], |frame, p, pose| {
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
