//! `train`: the neural interpolator W_θ (`model.tnn`, 000) trained on the training simulation;
//! the last frames of the training motion are held out for validation (`train.validation`).
//! Also the pieces the displace and ablate stages train with: the job's config, the frames
//! on the uv grid, W_θ's training with progress and checkpoints.

use std::path::Path;

use serde::Serialize;

use super::{prepare, train_sim};
use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::guides::training::HeadFrames;
use crate::neural::data::GridFrames;
use crate::neural::device::DeviceKind;
use crate::neural::interp::InterpConfig;
use crate::neural::interp::train::{StepReport, TrainedModel, Training};
use crate::pipeline::engine::{Artefact, Chunk, Ctx, Info, Inputs, Stage};
use crate::pipeline::job::Job;
use crate::pipeline::keys::device;
use crate::pipeline::progress::FrameProgress;

pub const NAME: &str = "train";
/// W_θ alone.
pub const MODEL: Artefact = Artefact::new(NAME, "model.tnn");
/// The training's figures.
pub const NEURAL_REPORT: Artefact = Artefact::new(NAME, "neural.json");

pub struct Train;

/// W_θ's key: the config less the displacement generator, and the device when not the CPU.
#[derive(Serialize)]
struct Key {
    neural: Option<InterpConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    device: Option<DeviceKind>,
}

/// The job's config for W_θ: without the displacement generator's options (W_θ does not
/// depend on them).
pub fn w_config(job: &Job) -> Option<InterpConfig> {
    job.neural_config.clone().map(|mut c| {
        c.displace = None;
        c
    })
}

/// Whether the job trains W_θ here (a neural row, and no given `[neural] model`).
pub fn trains(job: &Job) -> bool {
    job.rows
        .iter()
        .any(|r| r.method == crate::upsample::Method::Neural)
        && job.neural.model.is_none()
}

impl Stage for Train {
    fn info(&self) -> Info {
        Info::new(
            NAME,
            "The neural interpolator trained on the training simulation (jobs with the neural method)",
        )
        // A given model (`[neural] model`) is used as it is.
        .needs("the neural method", trains)
    }

    fn upstream(&self, _: &Job) -> Vec<&'static str> {
        vec![prepare::NAME, train_sim::NAME]
    }

    fn inputs(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Inputs> {
        Ok(Inputs::new(&Key {
            neural: w_config(cx.job),
            device: device(cx.job),
        })
        .reads(prepare::outputs(cx)?)
        .reads([cx.input(train_sim::TRAINING)?.clone()]))
    }

    fn run(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Vec<String>> {
        let cfg = config(cx.job)?;
        let groom = prepare::groom(cx)?;
        let (train_set, val_set) = frames(cx, groom, cfg)?;
        let ckpt = cx.out.join(format!("{}.ckpt", MODEL.path));
        let trained = train_w(cx, cfg, "train", &ckpt, &train_set, &val_set)?;
        let (best_step, best) = trained.progress.best.unwrap_or_default();
        let summary = trained.progress.summary(
            trained.seconds,
            serde_json::json!({
                "frames": train_set.len(),
                "validation_frames": val_set.len(),
                "guides": train_set.grid.guide_strands().len(),
                "occupancy": train_set.grid.occupancy(),
            }),
        );
        // W_θ alone: the displacement options belong to `displaced.tnn` (the stage key leaves
        // them out, so a cached model.tnn must not carry stale ones).
        let w_cfg = w_config(cx.job).expect("a neural config");
        crate::neural::interp::train::model_file_of(&w_cfg, trained.weights, summary.clone())
            .write(&cx.path(MODEL))?;
        cx.write_json(NEURAL_REPORT.path, &summary)?;
        let _ = std::fs::remove_file(&ckpt);
        if !cx.quiet {
            eprintln!(
                "           {} steps in {:.0} s; best at step {best_step}: validation RMSE {:.3} cm, length error {:.2} %",
                trained.progress.step,
                trained.seconds,
                best.rmse_cm,
                100.0 * best.length_error
            );
        }
        Ok(vec![MODEL.path.into(), NEURAL_REPORT.path.into()])
    }
}

/// The job's neural training config (train, displace and ablate stages).
pub fn config(job: &Job) -> Result<&InterpConfig> {
    job.neural_config
        .as_ref()
        .ok_or_else(|| Error::Invalid("the job has no neural method".into()))
}

/// The training simulation on the neural grid: its frames, and its held-out end for validation
/// (`train.validation`). The train, displace and ablate stages read the same split.
pub fn frames(cx: &Ctx, groom: &Groom, cfg: &InterpConfig) -> Result<(GridFrames, GridFrames)> {
    let grid = crate::neural::grid::UvGrid::new(groom, cfg.grid)?;
    let mut frames = HeadFrames::open(&cx.path(train_sim::TRAINING), groom)?;
    GridFrames::load_split(grid, &mut frames, cfg.train.validation, cfg.train.batch)
}

/// W_θ trained with `cfg` on the job's device, checkpointed at `ckpt` (resumed when there; the
/// caller removes it once the model is written), with a progress bar `label` and each
/// validation on its own line.
pub fn train_w(
    cx: &Ctx,
    cfg: &InterpConfig,
    label: &str,
    ckpt: &Path,
    train_set: &GridFrames,
    val_set: &GridFrames,
) -> Result<TrainedModel> {
    let quiet = cx.quiet;
    let mut progress = FrameProgress::steps(label, cfg.train.steps as u64, quiet);
    let mut report = |r: &StepReport| {
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
    let trained = cx.job.neural.device.run(Training {
        cfg,
        train: train_set,
        val: std::slice::from_ref(val_set),
        checkpoint: Some((ckpt, true)),
        score_untrained: false,
        report: &mut report,
    })?;
    progress.finish();
    Ok(trained)
}
