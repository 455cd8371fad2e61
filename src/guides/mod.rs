//! Guide strands: choosing the few strands that are simulated, and upsampling them back to the
//! whole groom. Every upsampling method is an [`Interpolator`] driven by one frame loop
//! ([`Upsampler`]): inverse-distance weights (001 Eq. 11) and the nearest guide as baselines,
//! strand skinning fitted on a training simulation (001 §6), static or adaptive (001 §4).

pub mod adaptive;
pub mod fixed;
pub mod frames;
pub mod idw;
pub mod interpolator;
pub mod layout;
pub mod length;
pub mod nearest;
pub mod project;
pub mod select;
pub mod skinning;
pub mod sparse;
pub mod training;
pub mod two_way;
pub mod upsample;

pub use adaptive::{AdaptiveOptions, AdaptiveSkinning};
pub use fixed::FixedWeights;
pub use interpolator::{GuideFrame, InterpTimes, Interpolator, Method};
pub use layout::GuideLayout;
pub use select::{root_uvs, select_uv_lattice};
pub use skinning::{Skinning, StaticSkinning};
pub use two_way::{TwoWay, TwoWayOptions};
pub use upsample::Upsampler;

/// The interpolator of `method` for `groom` (rest, head frame) with guide strands `guides`:
/// IDW from `neighbors` guides, the nearest guide, or static / adaptive skinning with the fitted
/// `skinning` model (whose guides must be `guides`).
pub fn interpolator(
    method: Method,
    groom: &crate::groom::Groom,
    guides: &[usize],
    neighbors: usize,
    skinning: Option<Skinning>,
    adaptive: &AdaptiveOptions,
) -> crate::error::Result<Box<dyn Interpolator>> {
    Ok(match (method, skinning) {
        (Method::Idw, _) => Box::new(FixedWeights::idw(groom, guides, neighbors)?),
        (Method::Nearest, _) => Box::new(FixedWeights::nearest(groom, guides)?),
        (Method::Static, Some(s)) => Box::new(StaticSkinning::new(s)),
        (Method::Adaptive, Some(s)) => Box::new(AdaptiveSkinning::new(s, adaptive.clone())),
        (Method::Neural, _) => {
            return Err(crate::error::Error::Invalid(
                "the neural method needs a trained model (`tress train interp`); build it with neural::interp::NeuralInterpolator".into(),
            ));
        }
        (Method::Hairmesh, _) => {
            return Err(crate::error::Error::Invalid(
                "the hairmesh method needs a simulated hair mesh: enable [hairmesh] in a job, or run `tress hairmesh simulate`".into(),
            ));
        }
        (Method::Drape, _) => {
            return Err(crate::error::Error::Invalid(
                "the drape method drapes the groom for each head pose: enable [drape] in a job, or run `tress drape`".into(),
            ));
        }
        (m, None) => {
            return Err(crate::error::Error::Invalid(format!(
                "the {m} method needs a fitted skinning model (`tress skinning fit`, or a job's fit stage)"
            )));
        }
    })
}
