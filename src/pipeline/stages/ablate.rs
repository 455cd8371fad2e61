//! `ablate`: 000 Table 1's loss ablations (`[neural] ablations`): W_θ trained again on the same
//! frames, seed and steps with some loss terms left out, one model each
//! (`model.<ablation>.tnn`), and their figures (`ablate.json`).

use serde::Serialize;

use super::{prepare, train, train_sim};
use crate::error::{Error, Result};
use crate::neural::device::DeviceKind;
use crate::neural::interp::InterpConfig;
use crate::neural::interp::loss::LossAblation;
use crate::pipeline::engine::{Artefact, Chunk, Ctx, Info, Inputs, Stage};
use crate::pipeline::job::Job;
use crate::pipeline::keys::device;

pub const NAME: &str = "ablate";
/// The ablations' figures.
pub const ABLATE_REPORT: Artefact = Artefact::new(NAME, "ablate.json");

/// The file of W_θ trained without the loss terms of ablation `a`.
pub fn ablated_model(a: LossAblation) -> String {
    format!("model.{}.tnn", a.id())
}

pub struct Ablate;

/// The same config as W_θ's, less the displacement generator, per ablation.
#[derive(Serialize)]
struct Key<'a> {
    neural: Option<InterpConfig>,
    ablations: &'a [LossAblation],
    #[serde(skip_serializing_if = "Option::is_none")]
    device: Option<DeviceKind>,
}

impl Stage for Ablate {
    fn info(&self) -> Info {
        Info::new(
            NAME,
            "The interpolator trained again without some loss terms, one model each ([neural] ablations)",
        )
        .needs("the neural method and [neural] ablations", |job| {
            job.rows.iter().any(|r| r.loss.is_some())
        })
    }

    fn upstream(&self, _: &Job) -> Vec<&'static str> {
        vec![prepare::NAME, train_sim::NAME]
    }

    fn inputs(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Inputs> {
        Ok(Inputs::new(&Key {
            neural: train::w_config(cx.job),
            ablations: &cx.job.neural.ablations,
            device: device(cx.job),
        })
        .reads(prepare::outputs(cx)?)
        .reads([cx.input(train_sim::TRAINING)?.clone()]))
    }

    fn run(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Vec<String>> {
        let job = cx.job;
        let base = train::config(job)?;
        let groom = prepare::groom(cx)?;
        let (train_set, val_set) = train::frames(cx, groom, base)?;
        let quiet = cx.quiet;
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
            let ckpt = cx.out.join(format!("{name}.ckpt"));
            let trained = train::train_w(cx, &cfg, NAME, &ckpt, &train_set, &val_set)?;
            let (best_step, best) = trained.progress.best.unwrap_or_default();
            let summary = trained.progress.summary(
                trained.seconds,
                serde_json::json!({ "ablation": a, "loss": cfg.loss }),
            );
            crate::neural::interp::train::model_file_of(&cfg, trained.weights, summary.clone())
                .write(&cx.out.join(&name))?;
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
        outputs.push(cx.write_json(ABLATE_REPORT.path, &figures)?);
        Ok(outputs)
    }
}
