//! Which burn backend runs the networks: Flex on the CPU (multi-threaded, SIMD) by default;
//! with the `cuda` feature, burn's CUDA backend chosen at run time (`--device cuda`).

use crate::error::{Error, Result};

/// A device choice from the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// burn's Flex backend on the CPU.
    Cpu,
    /// burn's CUDA backend (a build with `--features cuda` and an NVIDIA GPU).
    Cuda,
}

impl DeviceKind {
    /// Refuses devices this build cannot use.
    pub fn check(self) -> Result<()> {
        match self {
            DeviceKind::Cpu => Ok(()),
            DeviceKind::Cuda if cfg!(feature = "cuda") => Ok(()),
            DeviceKind::Cuda => Err(Error::Invalid(
                "--device cuda needs a tress built with `--features cuda`".into(),
            )),
        }
    }
}
