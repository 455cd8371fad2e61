//! Guide strands: choosing the few strands that are simulated (000 §4.1 lattice, 001 §6.3
//! sparse coding), and the interpolators of 001 that carry them back to the whole groom:
//! inverse-distance weights (001 Eq. 11) and the nearest guide as baselines, strand skinning
//! fitted on a training simulation (001 §6), static or adaptive (001 §4), and the two-way
//! collision correction of the guides (001 §5). Every method is an [`Interpolator`]; the method
//! list, the one factory and the frame loop are in `crate::upsample`.

pub mod adaptive;
pub mod fixed;
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

pub use adaptive::{AdaptiveOptions, AdaptiveSkinning};
pub use fixed::FixedWeights;
pub use interpolator::{GuideFrame, InterpTimes, Interpolator};
pub use layout::GuideLayout;
pub use select::{root_uvs, select_uv_lattice};
pub use skinning::{Skinning, StaticSkinning};
pub use two_way::{TwoWay, TwoWayOptions};
