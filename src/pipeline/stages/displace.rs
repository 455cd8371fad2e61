//! `displace`: the neural interpolator's fine-scale displacement generator (000 §4.3), trained
//! against its discriminator with W_θ (`model.tnn`) fixed, on the same frames: `displaced.tnn`
//! (the interpolator with the generator) and `displace.json`.

use serde::Serialize;

use super::{prepare, train, train_sim};
use crate::error::{Error, Result};
use crate::neural::device::DeviceKind;
use crate::neural::displace::DisplaceOptions;
use crate::pipeline::engine::{Artefact, Chunk, Ctx, Info, Inputs, Stage};
use crate::pipeline::job::Job;
use crate::pipeline::keys::device;
use crate::pipeline::progress::FrameProgress;

pub const NAME: &str = "displace";
/// W_θ with its displacement generator.
pub const DISPLACED: Artefact = Artefact::new(NAME, "displaced.tnn");
/// The training's figures.
pub const DISPLACE_REPORT: Artefact = Artefact::new(NAME, "displace.json");

pub struct Displace;

#[derive(Serialize)]
struct Key<'a> {
    displace: Option<&'a DisplaceOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    device: Option<DeviceKind>,
}

/// Whether the job's neural rows carry a displacement generator trained here.
pub fn trains(job: &Job) -> bool {
    train::trains(job) && job.neural_config.as_ref().is_some_and(|c| c.displace.is_some())
}

impl Stage for Displace {
    fn info(&self) -> Info {
        Info::new(
            NAME,
            "The interpolator's fine-scale displacement generator, trained with W_θ fixed (configs with [displace])",
        )
        .needs("the neural method with a [displace] section in its config", trains)
    }

    fn upstream(&self, _: &Job) -> Vec<&'static str> {
        vec![prepare::NAME, train_sim::NAME, train::NAME]
    }

    fn inputs(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Inputs> {
        Ok(Inputs::new(&Key {
            displace: cx.job.neural_config.as_ref().and_then(|c| c.displace.as_ref()),
            device: device(cx.job),
        })
        .reads(prepare::outputs(cx)?)
        .reads([
            cx.input(train_sim::TRAINING)?.clone(),
            cx.input(train::MODEL)?.clone(),
        ]))
    }

    fn run(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Vec<String>> {
        let job = cx.job;
        let cfg = train::config(job)?;
        let o = cfg
            .displace
            .as_ref()
            .ok_or_else(|| Error::Invalid("the neural config has no [displace] section".into()))?;
        let groom = prepare::groom(cx)?;
        let model_path = cx.path(train::MODEL);
        let (train_set, val_set) = train::frames(cx, groom, cfg)?;
        let quiet = cx.quiet;
        let mut progress = FrameProgress::steps(NAME, o.steps as u64, quiet);
        let mut report = |r: &crate::neural::displace::train::DisplaceStep| {
            progress.tick(r.step);
            if !quiet && let Some(v) = r.validation {
                eprintln!("           step {}/{}: validation {v}", r.step, r.steps);
            }
            true
        };
        let ckpt = cx.out.join(format!("{}.ckpt", DISPLACED.path));
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
        let summary = d
            .progress
            .summary(d.seconds, serde_json::json!({ "stopped_early": d.stopped_early }));
        let model = crate::neural::file::NeuralFile::read(&model_path)?;
        crate::neural::displace::train::with_generator_of(model, o, d.generator, summary.clone())
            .write(&cx.path(DISPLACED))?;
        cx.write_json(DISPLACE_REPORT.path, &summary)?;
        let _ = std::fs::remove_file(&ckpt);
        if !quiet {
            eprintln!(
                "           {} steps in {:.0} s; best at step {best_step}: validation {best}",
                d.progress.step, d.seconds
            );
        }
        Ok(vec![DISPLACED.path.into(), DISPLACE_REPORT.path.into()])
    }
}
