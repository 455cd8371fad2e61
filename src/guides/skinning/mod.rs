//! Strand-based skinning (001 §6): fitting per-particle weights of eligible guide sets on a full
//! simulation (Eq. 7, Alg. 2), compressing them to quadratics along the strand (Eq. 8), and
//! interpolating with them (Eq. 5).

pub mod fit;
pub mod model;
pub mod qp;

pub use fit::{FitOptions, FitReport, fit};
pub use model::{Skinning, StaticSkinning};
