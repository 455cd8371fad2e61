//! Which burn backend runs the networks: Flex on the CPU (multi-threaded, SIMD) by default;
//! with the `cuda` feature, burn's CUDA backend chosen at run time (`--device cuda`, a job's
//! `[neural] device`).
//!
//! Work that runs on either is an [`OnDevice`] task: [`DeviceKind::run`] picks the backend
//! (`Autodiff<Flex>` or `Autodiff<Cuda>`, the inference code taking its inner backend) and
//! hands the task its device. Before the first CUDA kernel, the CubeCL runtime is told to keep
//! its compiled kernels and its autotune results under tress's cache directory
//! ([`cache_dir`]): NVRTC compiling every kernel took 110–177 s in the first step of each new
//! process on an H100, and 0.1 s with both caches kept (issue 12's measurement). A `cubecl.toml`
//! (or `burn.toml` with a `[cubecl]` section) in the working directory or above wins over
//! tress's choice, as CubeCL documents.

use std::path::PathBuf;

use burn::tensor::backend::AutodiffBackend;

use crate::error::{Error, Result};

/// A device choice from the command line or a job.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// burn's Flex backend on the CPU.
    #[default]
    Cpu,
    /// burn's CUDA backend (a build with `--features cuda` and an NVIDIA GPU).
    Cuda,
}

impl std::fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Cuda => "cuda",
        })
    }
}

/// Work that runs on any backend: training on `B`, inference on `B::InnerBackend` (same device).
pub trait OnDevice {
    type Output;
    fn run<B: AutodiffBackend>(self, device: B::Device) -> Result<Self::Output>;
}

impl DeviceKind {
    /// Refuses devices this build cannot use.
    pub fn check(self) -> Result<()> {
        match self {
            DeviceKind::Cpu => Ok(()),
            DeviceKind::Cuda if cfg!(feature = "cuda") => Ok(()),
            DeviceKind::Cuda => Err(Error::Invalid(
                "--device cuda needs a tress built with `--features cuda` (cargo build --release --features cuda)"
                    .into(),
            )),
        }
    }

    /// Runs `task` on this device's backend.
    pub fn run<T: OnDevice>(self, task: T) -> Result<T::Output> {
        self.check()?;
        match self {
            DeviceKind::Cpu => {
                task.run::<burn::backend::Autodiff<burn::backend::Flex>>(burn::backend::flex::FlexDevice)
            }
            DeviceKind::Cuda => cuda::run(task),
        }
    }
}

/// tress's cache directory: `$TRESS_CACHE_DIR`, else `$XDG_CACHE_HOME/tress`, else
/// `~/.cache/tress`, else `.tress-cache` in the working directory.
pub fn cache_dir() -> PathBuf {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    env("TRESS_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("tress")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("tress")))
        .unwrap_or_else(|| PathBuf::from(".tress-cache"))
}

/// The CubeCL config file CubeCL itself would read (the working directory or above), if any.
pub fn cubecl_config_file() -> Option<PathBuf> {
    let mut dir = std::env::current_dir().ok()?;
    loop {
        for name in ["cubecl.toml", "CubeCL.toml", "burn.toml", "Burn.toml"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
        if !dir.pop() {
            return None;
        }
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    use std::sync::OnceLock;

    use super::{OnDevice, cache_dir, cubecl_config_file};
    use crate::error::{Error, Result};

    /// Loads the NVIDIA driver library the CUDA backend opens at run time, so that a machine
    /// without one gets an error instead of the backend's panic.
    fn driver_present() -> bool {
        ["libcuda.so.1", "libcuda.so"].iter().any(|name| {
            let c = std::ffi::CString::new(*name).expect("no NUL");
            // SAFETY: dlopen with a valid C string; the handle is kept open (the backend
            // loads the same library next).
            !unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) }.is_null()
        })
    }

    /// Points CubeCL's kernel and autotune caches at tress's cache directory, once per process,
    /// unless a CubeCL config file is in charge.
    fn persist_caches() -> Result<()> {
        static DONE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
        DONE.get_or_init(|| {
            use burn::cubecl::config::cache::CacheConfig;
            use burn::cubecl::config::{CubeClRuntimeConfig, RuntimeConfig};
            if let Some(file) = cubecl_config_file() {
                tracing::info!("CubeCL settings from {}", file.display());
                return Ok(());
            }
            let dir = cache_dir().join("cubecl");
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let mut cfg = CubeClRuntimeConfig::default().override_from_env();
            cfg.compilation.cache = Some(CacheConfig::File(dir.clone()));
            cfg.autotune.cache = CacheConfig::File(dir.clone());
            CubeClRuntimeConfig::set(cfg);
            tracing::info!("CubeCL kernel and autotune caches in {}", dir.display());
            Ok(())
        })
        .clone()
        .map_err(|e| Error::Runtime(format!("the CUDA kernel cache directory {e}")))
    }

    pub fn run<T: OnDevice>(task: T) -> Result<T::Output> {
        if !driver_present() {
            return Err(Error::Invalid(
                "--device cuda: no NVIDIA driver on this machine (libcuda.so.1 could not be loaded)".into(),
            ));
        }
        // The backend panics on CUDA errors (no device, out of memory), and CubeCL's config on
        // a second setting: errors, not crashes.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            persist_caches()?;
            let device = burn::backend::cuda::CudaDevice::default();
            task.run::<burn::backend::Autodiff<burn::backend::Cuda>>(device)
        }))
        .unwrap_or_else(|p| {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown error".into());
            Err(Error::Runtime(format!("CUDA backend: {msg}")))
        })
    }
}

#[cfg(not(feature = "cuda"))]
mod cuda {
    use super::OnDevice;
    use crate::error::Result;

    pub fn run<T: OnDevice>(_task: T) -> Result<T::Output> {
        super::DeviceKind::Cuda.check()?;
        unreachable!("check refuses cuda without the feature")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::ElementConversion;

    struct Sum(Vec<f32>);
    impl OnDevice for Sum {
        type Output = f32;
        fn run<B: AutodiffBackend>(self, device: B::Device) -> Result<f32> {
            let n = self.0.len();
            let t = burn::tensor::Tensor::<B::InnerBackend, 1>::from_data(
                burn::tensor::TensorData::new(self.0, [n]),
                &device,
            );
            Ok(t.sum().into_scalar().elem::<f32>())
        }
    }

    #[test]
    fn the_cpu_runs_a_task_and_cuda_needs_its_build_and_driver() {
        assert_eq!(DeviceKind::Cpu.run(Sum(vec![1.0, 2.0, 4.5])).unwrap(), 7.5);
        let e = DeviceKind::Cuda.run(Sum(vec![1.0]));
        if cfg!(feature = "cuda") {
            // Without a GPU here: a clear error either way, never a panic.
            if let Err(e) = e {
                assert!(
                    e.to_string().contains("cuda") || e.to_string().contains("CUDA"),
                    "{e}"
                );
            }
        } else {
            assert!(e.unwrap_err().to_string().contains("--features cuda"));
        }
    }

    #[test]
    fn the_cache_directory_follows_the_environment_order() {
        // Only reads: the variables of this process are left as they are.
        let d = cache_dir();
        match std::env::var_os("TRESS_CACHE_DIR").filter(|v| !v.is_empty()) {
            Some(v) => assert_eq!(d, PathBuf::from(v)),
            None => assert!(
                d.ends_with("tress") || d.ends_with(".tress-cache"),
                "{}",
                d.display()
            ),
        }
    }
}
