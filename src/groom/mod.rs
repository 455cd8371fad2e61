//! Grooms: strand storage, resampling, the scalp parameterization, procedural generation and
//! file input/output.

pub mod edit;
pub mod files;
pub mod model;
pub mod presets;
pub mod procedural;
pub mod resample;
pub mod scalp;
pub mod scalp_uv;
pub mod stats;
pub mod transform;

pub use files::{GroomFormat, LoadedGroom, ReadOptions, read_groom, write_groom};
pub use model::{Bounds, Groom, split_strands_mut, strand_length, strand_roots};
pub use procedural::{GroomParams, Style, generate};
pub use resample::resample;
pub use scalp::ScalpShape;
pub use scalp_uv::{root_uvs, scalp_center, scalp_uv};
pub use stats::GroomStats;
pub use transform::{Transform, UpAxis};
