//! The fine-scale displacement of the neural interpolator (000 §4.3): a light generator F_β
//! adds Δs = F_β(s̄*, g) (Eq. 9) to W_θ's interpolation, trained against a discriminator D_γ
//! that judges hair through the five-channel descriptor E (§4.3.2, Eq. 10).
//!
//! - [`descriptor`]: E (distances to the four closest guide particles, geodesic distance to
//!   the root);
//! - [`model`]: F_β and D_γ as the supplemental architecture table;
//! - [`train`]: the adversarial training with W_θ fixed, and the generator's place in the model
//!   file.

pub mod descriptor;
pub mod model;
pub mod train;

pub use train::DisplaceOptions;
