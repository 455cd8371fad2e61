//! The neural interpolator (000 §4.2): W_θ ([`model`]), what L blends ([`carry`]), its loss
//! ([`loss`]), training ([`train`]) and the upsampling-seam implementation ([`apply`]).

pub mod apply;
pub mod carry;
pub mod loss;
pub mod model;
pub mod train;

pub use apply::{FramePhases, NeuralInterpolator};
pub use train::{InterpConfig, load_model};
