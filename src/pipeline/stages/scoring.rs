//! What the stages that score the method rows against the ground truth (preview, eval) share:
//! the stages they read, the files and the key their outputs depend on.

use serde::Serialize;

use super::{ablate, displace, fit, guides, prepare, simulate, train, upsample};
use crate::error::Result;
use crate::pipeline::engine::{Ctx, Inputs, OutputFile};
use crate::pipeline::job::Job;
use crate::pipeline::keys::{RowsKey, SceneKey, motion_files};
use crate::pipeline::rows;

/// What scoring the rows depends on: the scene, the rows, and the stage's own settings.
#[derive(Serialize)]
struct ScoringKey<'a, S: Serialize> {
    scene: SceneKey<'a>,
    rows: RowsKey<'a>,
    #[serde(flatten)]
    own: S,
}

/// The inputs of a stage that scores the rows (eval, preview) with its own settings `own`.
pub fn scoring_inputs(cx: &Ctx, own: impl Serialize) -> Result<Inputs> {
    let key = ScoringKey {
        scene: SceneKey::of(cx.job),
        rows: RowsKey::of(cx.job),
        own,
    };
    Ok(Inputs::new(&key).reads(scoring_files(cx)?))
}

/// The stages whose results scoring the rows reads (the eval and preview stages).
pub fn scoring_upstream(_: &Job) -> Vec<&'static str> {
    vec![
        prepare::NAME,
        upsample::NAME,
        simulate::NAME,
        guides::NAME,
        fit::NAME,
        train::NAME,
        displace::NAME,
        ablate::NAME,
    ]
}

/// The files scoring the rows reads: the groom, the rows' frames, the ground truth, the guides,
/// the rows' models (the oracle rows run them) and the motion's files.
pub fn scoring_files(cx: &Ctx) -> Result<Vec<OutputFile>> {
    let mut files = prepare::outputs(cx)?;
    files.extend(upsample::parts(cx)?);
    files.push(cx.input(simulate::GT)?.clone());
    files.push(cx.input(guides::GUIDES)?.clone());
    files.extend(rows::model_files(cx)?);
    files.extend(motion_files(cx, &cx.job.motion)?);
    Ok(files)
}
