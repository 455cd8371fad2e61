//! The one factory of interpolators: any [`Method`] from the groom, its guide strands and the
//! method's model — a fitted skinning (`.tskin`, 001 §6), a trained network (`.tnn`, 000), a
//! simulated hair mesh (002), a drape's texture (003) — loaded once here, with the check that
//! the guides are the ones the model was fitted or trained with. `tress upsample`,
//! `tress simulate --mode reduced` and a job's rows all build their interpolators through it.

use std::path::{Path, PathBuf};

use super::Method;
use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::guides::{
    AdaptiveOptions, AdaptiveSkinning, FixedWeights, Interpolator, Skinning, StaticSkinning,
};
use crate::hairmesh::{HairMesh, HairMeshInterpolator};
use crate::neural::device::DeviceKind;
use crate::neural::drape::interp::DrapeInterpolator;
use crate::neural::interp::apply::{Load, Loaded};

/// A method's model, loaded.
pub enum Model {
    /// IDW and the nearest guide learn nothing.
    None,
    /// A fitted skinning model (static and adaptive skinning).
    Skinning { path: PathBuf, skinning: Box<Skinning> },
    /// A trained neural interpolator, with or without its displacement generator.
    Neural { path: PathBuf, loaded: Loaded },
    /// A simulated hair mesh built around the groom.
    HairMesh(Box<HairMesh>),
    /// The drape's scalp texture: its size and the vertices of a draped strand.
    Drape { texture: usize, points: usize },
}

impl Model {
    /// A skinning model fitted to `groom` (`tress skinning fit`, a job's fit stage).
    pub fn skinning(path: &Path, groom: &Groom) -> Result<Model> {
        Ok(Model::Skinning {
            path: path.to_path_buf(),
            skinning: Box::new(Skinning::load(path, groom)?),
        })
    }

    /// A neural interpolator (`tress train interp`, a job's train or displace stage) for
    /// `groom`, run on `device`; `displacement`: with its fine-scale displacement generator
    /// when it has one.
    pub fn neural(path: &Path, groom: &Groom, displacement: bool, device: DeviceKind) -> Result<Model> {
        Ok(Model::Neural {
            path: path.to_path_buf(),
            loaded: device.run(Load {
                path,
                groom,
                displacement,
            })?,
        })
    }

    /// A hair mesh (`mesh.obj` with its sidecar).
    pub fn hairmesh(path: &Path) -> Result<Model> {
        Ok(Model::HairMesh(Box::new(HairMesh::read(path)?)))
    }

    /// The guide strands the model was fitted or trained with; `None` when any guides do.
    pub fn guides(&self) -> Option<&[usize]> {
        match self {
            Model::Skinning { skinning, .. } => Some(&skinning.layout.guides),
            Model::Neural { loaded, .. } => Some(&loaded.guides),
            _ => None,
        }
    }

    /// Refuses guides other than the model's.
    fn check_guides(&self, guides: &[usize]) -> Result<()> {
        let (path, own, how) = match self {
            Model::Skinning { path, skinning } => (path, &skinning.layout.guides, "fitted with"),
            Model::Neural { path, loaded } => (path, &loaded.guides, "trained on (its uv-grid guides)"),
            _ => return Ok(()),
        };
        if own.as_slice() != guides {
            return Err(Error::Invalid(format!(
                "{}: the {} guide strands given are not the {} guides the model was {how} (`tress upsample -v` lists a model's guides; simulate those, or give a cache of the whole groom)",
                path.display(),
                guides.len(),
                own.len()
            )));
        }
        Ok(())
    }
}

/// The settings of the methods that take some.
#[derive(Clone, Copy, Debug)]
pub struct Options<'a> {
    /// Guides each normal strand follows (IDW).
    pub neighbors: usize,
    /// Runtime adaptation (adaptive skinning, 001 §4).
    pub adaptive: &'a AdaptiveOptions,
}

/// The interpolator of `method` for `groom` (rest, head frame) with guide strands `guides`,
/// from `model` (which must be the method's; IDW and the nearest guide take any, and use only
/// its guides).
pub fn interpolator(
    method: Method,
    groom: &Groom,
    guides: &[usize],
    model: Model,
    o: &Options,
) -> Result<Box<dyn Interpolator>> {
    model.check_guides(guides)?;
    Ok(match (method, model) {
        (Method::Idw, _) => Box::new(FixedWeights::idw(groom, guides, o.neighbors)?),
        (Method::Nearest, _) => Box::new(FixedWeights::nearest(groom, guides)?),
        (Method::Static, Model::Skinning { skinning, .. }) => Box::new(StaticSkinning::new(*skinning)),
        (Method::Adaptive, Model::Skinning { skinning, .. }) => {
            Box::new(AdaptiveSkinning::new(*skinning, o.adaptive.clone()))
        }
        (Method::Neural, Model::Neural { loaded, .. }) => loaded.interp,
        (Method::Hairmesh, Model::HairMesh(mesh)) => Box::new(HairMeshInterpolator::new(*mesh, groom)?),
        (Method::Drape, Model::Drape { texture, points }) => {
            Box::new(DrapeInterpolator::new(groom, texture, points)?)
        }
        (m, _) => return Err(Error::Invalid(needs(m))),
    })
}

/// What method `m` needs that it was not given.
fn needs(m: Method) -> String {
    match m {
        Method::Neural => "the neural method needs a trained model (`tress train interp`, or a job's train stage)".into(),
        Method::Hairmesh => "the hairmesh method needs a simulated hair mesh: enable [hairmesh] in a job, or run `tress hairmesh simulate`".into(),
        Method::Drape => "the drape method drapes the groom for each head pose: enable [drape] in a job, or run `tress drape`".into(),
        m => format!("the {m} method needs a fitted skinning model (`tress skinning fit`, or a job's fit stage)"),
    }
}
