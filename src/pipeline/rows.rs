//! A job's scored rows as upsamplers: each row's method with its model from the job's
//! artefacts (the fitted skinning, the trained networks, the hair mesh, the drape's texture),
//! the job's colliders and its collision projection. Shared by the two_way, upsample and eval
//! stages.

use super::engine::{Ctx, OutputFile, Stage};
use super::job::MethodRow;
use super::keys::external;
use super::stages::{ablate, displace, drape, fit, hairmesh, prepare, train};
use crate::cache::FrameSink;
use crate::error::Result;
use crate::groom::Groom;
use crate::guides::Interpolator;
use crate::upsample::{Method, Model, Options, Upsampler};

/// The model of a row's method.
pub fn model(cx: &Ctx, groom: &Groom, row: &MethodRow) -> Result<Model> {
    let job = cx.job;
    match row.method {
        Method::Hairmesh => Model::hairmesh(&cx.path(hairmesh::MESH)),
        Method::Drape => {
            let (texture, points) = drape::draped_texture(cx)?;
            Ok(Model::Drape { texture, points })
        }
        Method::Neural => {
            let path = match (row.loss, &job.neural.model) {
                (Some(a), _) => cx.out.join(ablate::ablated_model(a)),
                (None, Some(given)) => std::path::PathBuf::from(given),
                (None, None) if displace::trains(job) => cx.path(displace::DISPLACED),
                (None, None) => cx.path(train::MODEL),
            };
            Model::neural(&path, groom, !row.no_displacement, job.neural.device)
        }
        m if m.needs_skinning() => Model::skinning(&cx.path(fit::SKINNING), groom),
        _ => Ok(Model::None),
    }
}

/// The interpolator of a row for the prepared groom with guides `guides`.
pub fn interpolator(
    cx: &Ctx,
    groom: &Groom,
    guides: &[usize],
    row: &MethodRow,
) -> Result<Box<dyn Interpolator>> {
    let options = Options {
        neighbors: cx.job.guides.neighbors,
        adaptive: &cx.job.guides.adaptive,
    };
    crate::upsample::interpolator(row.method, groom, guides, model(cx, groom, row)?, &options)
}

/// An upsampler for a row: its interpolator, the job's colliders, its corrections (projection,
/// prop contact).
pub fn upsampler(
    cx: &Ctx,
    groom: &Groom,
    guides: &[usize],
    row: &MethodRow,
    sinks: Vec<Box<dyn FrameSink>>,
) -> Result<Upsampler> {
    let colliders = prepare::scene(cx)?.colliders.clone();
    let margin = cx.job.simulate.collision_margin;
    let mut up = Upsampler::new(
        interpolator(cx, groom, guides, row)?,
        cx.job.fps,
        Some(colliders),
        row.projection.then_some(margin),
        sinks,
    );
    if row.contact {
        up = up.with_contact(margin);
    }
    if row.spread {
        up = up.with_spread(margin);
    }
    Ok(up)
}

/// The fitted and trained models the rows read, as recorded (a given `[neural] model` by its
/// content).
pub fn model_files(cx: &Ctx) -> Result<Vec<OutputFile>> {
    let j = cx.job;
    let mut up = Vec::new();
    if fit::Fit.applies(j) {
        up.push(cx.input(fit::SKINNING)?.clone());
    }
    if train::Train.applies(j) {
        up.push(cx.input(train::MODEL)?.clone());
    }
    if displace::Displace.applies(j) {
        up.push(cx.input(displace::DISPLACED)?.clone());
    }
    up.extend(external(cx, &[j.neural.model.as_deref()])?);
    if ablate::Ablate.applies(j) {
        for a in &j.neural.ablations {
            up.push(
                cx.record(ablate::NAME)?
                    .output(&ablate::ablated_model(*a))?
                    .clone(),
            );
        }
    }
    Ok(up)
}
