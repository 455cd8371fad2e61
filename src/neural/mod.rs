//! The learned methods. Upsampling (000, Lyu et al. 2020): a network predicts, from the rest
//! groom and the simulated guides, per-particle weights over each particle's 4 × 4 guide
//! neighbourhood. The quasi-static drape (003): the groom's shape for a head pose from a physics
//! energy.
//!
//! - [`grid`]: the uv-grid groom the network works on (000 §4.1) and the transfer back to the
//!   groom's strands;
//! - [`data`]: ground-truth frames on the grid, crops (000 §4.2.3);
//! - [`interp`]: W_θ, the interpolator L (Eq. 2–3), its losses (Eq. 4–8), training and the
//!   upsampling-seam implementation;
//! - [`displace`]: the fine-scale displacement generator F_β and its discriminator (000 §4.3);
//! - [`file`]: the self-describing model and checkpoint files (`.tnn`);
//! - [`builtin`]: trained models shipped with tress (`general`: W_θ trained on many grooms and
//!   motions);
//! - [`device`]: the burn backends (Flex on the CPU; CUDA with the `cuda` feature);
//! - [`drape`]: the quasi-static drape (003): its physics energy, poses and baselines;
//! - [`trajectory`]: the student project's head-motion → hair-trajectory network (004), a
//!   baseline without guides.

pub mod builtin;
pub mod data;
pub mod device;
pub mod displace;
pub mod drape;
pub mod file;
pub mod grid;
pub mod interp;
pub mod train_loop;
pub mod trajectory;

/// The built-in training configs (`presets/training/`): the neural interpolator's and the
/// drape's.
pub const TRAINING: crate::presets::Table = &[
    (
        "interp_small",
        include_str!("../../presets/training/interp_small.toml"),
    ),
    (
        "interp_paper",
        include_str!("../../presets/training/interp_paper.toml"),
    ),
    (
        "drape_small",
        include_str!("../../presets/training/drape_small.toml"),
    ),
];
