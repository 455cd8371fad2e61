//! Errors of a predicted strand cache against the ground truth: positions, strand lengths,
//! tangents, penetration of colliders, temporal jitter and the non-local interactions of 000
//! §5.7, per frame and over the sequence; PSNR and SSIM between preview pictures.

pub mod eval;
pub mod image;
pub mod nonlocal;
pub mod table;

pub use eval::{Evaluator, FrameMetrics, Summary};
pub use image::{error_share_off, error_split_map, psnr, ssim};
