//! `fit`: the skinning model (`skinning.tskin`, 001 §6) fitted on the training simulation,
//! for the static and adaptive rows, and what the fit measured (`skinning.json`).

use serde::Serialize;

use super::{guides, prepare, train_sim};
use crate::error::Result;
use crate::guides::skinning::FitOptions;
use crate::guides::training::HeadFrames;
use crate::pipeline::engine::{Artefact, Chunk, Ctx, Info, Inputs, Stage};
use crate::pipeline::job::Job;

pub const NAME: &str = "fit";
/// The fitted model.
pub const SKINNING: Artefact = Artefact::new(NAME, "skinning.tskin");
/// The fit's figures.
pub const SKINNING_REPORT: Artefact = Artefact::new(NAME, "skinning.json");

pub struct Fit;

#[derive(Serialize)]
struct Key<'a> {
    fit: &'a FitOptions,
}

impl Stage for Fit {
    fn info(&self) -> Info {
        Info::new(
            NAME,
            "The skinning model fitted on the training simulation (jobs with skinning methods)",
        )
        // 2: the model's metadata names the package version, not the build.
        .version(2)
        .needs("a static or adaptive method", |job| {
            job.rows.iter().any(|r| r.method.needs_skinning())
        })
    }

    fn upstream(&self, _: &Job) -> Vec<&'static str> {
        vec![prepare::NAME, guides::NAME, train_sim::NAME]
    }

    fn inputs(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Inputs> {
        Ok(Inputs::new(&Key {
            fit: &cx.job.guides.fit,
        })
        .reads(prepare::outputs(cx)?)
        .reads([
            cx.input(guides::GUIDES)?.clone(),
            cx.input(train_sim::TRAINING)?.clone(),
        ]))
    }

    fn run(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Vec<String>> {
        let job = cx.job;
        let groom = prepare::groom(cx)?;
        let guides = guides::indices(cx)?;
        let mut frames = HeadFrames::open(&cx.path(train_sim::TRAINING), groom)?;
        let quiet = cx.quiet;
        let mut progress = |m: &str| {
            if !quiet {
                eprintln!("           {m}");
            }
        };
        let (model, report) =
            crate::guides::skinning::fit(groom, &guides, &mut frames, &job.guides.fit, &mut progress)?;
        let path = cx.path(SKINNING);
        tress_formats::skin::write(&path, &model).map_err(|e| crate::error::output_error(&path, e))?;
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let per_strand = bytes as f64 / groom.strand_count().max(1) as f64;
        let doc = serde_json::json!({
            "report": report,
            "file_bytes": bytes,
            "bytes_per_strand": per_strand,
        });
        cx.write_json(SKINNING_REPORT.path, &doc)?;
        if !quiet {
            eprintln!(
                "           {} guides, {:.1} eligible and {:.1} sets per strand, training RMSE {:.3} cm, {} bytes ({:.0} per strand), {:.1} s",
                report.guides,
                report.eligible_mean,
                report.sets_mean,
                report.training_rmse,
                bytes,
                per_strand,
                report.seconds
            );
        }
        Ok(vec![SKINNING.path.into(), SKINNING_REPORT.path.into()])
    }
}
