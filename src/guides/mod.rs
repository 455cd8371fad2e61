//! Guide strands: choosing the few strands that are simulated, and upsampling them back to the
//! whole groom. Every upsampling method is an [`Interpolator`] driven by one frame loop
//! ([`Upsampler`]): inverse-distance weights (001 Eq. 11) and the nearest guide as baselines,
//! strand skinning fitted on a training simulation (001 §6), static or adaptive (001 §4).

pub mod adaptive;
pub mod frames;
pub mod idw;
pub mod interpolator;
pub mod layout;
pub mod nearest;
pub mod project;
pub mod select;
pub mod skinning;
pub mod sparse;
pub mod training;
pub mod two_way;
pub mod upsample;

pub use adaptive::{AdaptiveOptions, AdaptiveSkinning};
pub use idw::IdwModel;
pub use interpolator::{GuideFrame, InterpTimes, Interpolator, Method};
pub use layout::GuideLayout;
pub use nearest::NearestGuide;
pub use select::{root_uvs, select_uv_lattice};
pub use skinning::{Skinning, StaticSkinning};
pub use two_way::{TwoWay, TwoWayOptions};
pub use upsample::Upsampler;
