//! Guide strands: choosing the few strands that are simulated, and upsampling them back to the
//! whole groom. The first upsampler is inverse-distance weighting (001 Eq. 11) carried in each
//! guide's local frame; skinning and neural interpolators plug in beside it.

pub mod frames;
pub mod idw;
pub mod project;
pub mod select;
pub mod sink;

pub use idw::IdwModel;
pub use select::{root_uvs, select_uv_lattice};
