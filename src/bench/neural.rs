//! `tress bench neural`: what the neural interpolator costs on this machine, beside IDW on the
//! same guides in the same run. The groom is the procedural straight preset; the guides swing
//! about their roots with phases that vary over the scalp. The network is freshly initialised
//! (its cost does not depend on its weights). Reported apart: the set-up (grid, rest features),
//! the first frame (allocation, warm-up), the steady state per frame, and training steps of the
//! config (first step apart) on frames of the same motion; the same with the fine-scale
//! displacement generator (000 §4.3) added, and its training steps.

use std::time::Instant;

use burn::backend::{Flex, flex::FlexDevice};
use burn::tensor::backend::AutodiffBackend;
use glam::{Quat, Vec3};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::groom::{Groom, Transform};
use crate::guides::{FixedWeights, GuideFrame, Interpolator};
use crate::motion::Pose;
use crate::neural::data::GridFrames;
use crate::neural::device::{DeviceKind, OnDevice};
use crate::neural::grid::UvGrid;
use crate::neural::interp::NeuralInterpolator;
use crate::neural::interp::train::{InterpConfig, init_net, net_from_bytes, net_to_bytes, train};
use crate::scene::load_groom;

#[derive(Debug, Serialize)]
pub struct NeuralBench {
    pub config: String,
    /// Where the networks ran (cpu, cuda).
    pub device: String,
    pub strands: usize,
    pub points: usize,
    /// Grid side, guide stride, particles per grid strand.
    pub grid: usize,
    pub stride: usize,
    pub grid_points: usize,
    pub guides: usize,
    pub threads: usize,
    pub frames: usize,
    /// Building the interpolator: grid, layout, rest features (ms).
    pub setup_ms: f64,
    /// The first frame (ms), apart from the steady state.
    pub first_frame_ms: f64,
    /// Steady state, mean over the timed frames (ms per frame).
    pub neural_ms: f64,
    /// IDW from the same guides, 10 neighbours (ms per frame).
    pub idw_ms: f64,
    pub neural_over_idw: f64,
    /// The same with the fine-scale displacement generator (000 §4.3) added (ms per frame),
    /// and its first frame.
    pub displaced_ms: f64,
    pub displaced_first_frame_ms: f64,
    /// Where the steady frames' time goes, ms per frame: the plain network's frames, and F_β's
    /// share of the displaced ones.
    pub phases: Phases,
    /// Training: the first step, and the mean of the next ones (ms per step, batch of the
    /// config), Flex CPU backend.
    pub train_first_step_ms: f64,
    pub train_step_ms: f64,
    pub train_steps: usize,
    /// The displacement generator's training: ms per step (after the first; one generator and
    /// `critic_steps` discriminator updates), the config's `[displace]` or the defaults.
    pub displace_first_step_ms: f64,
    pub displace_step_ms: f64,
    /// On a GPU: the first frame's largest particle difference from the same network on the
    /// CPU, relative to the largest coordinate.
    pub cpu_max_relative_difference: Option<f64>,
    /// On a GPU: CubeCL's kernel and autotune cache directory, and whether it held files before
    /// the run (warm: kernels compiled by an earlier process are reused).
    pub kernel_cache: Option<String>,
    pub kernel_cache_warm: Option<bool>,
}

/// A neural frame by phase ([`crate::neural::interp::FramePhases`]), ms per frame.
#[derive(Debug, Default, Serialize)]
pub struct Phases {
    /// Guides resampled onto the guide lattice and sent to the device.
    pub guides_ms: f64,
    /// W_θ run and ω read back (on a GPU, the wait for its kernels).
    pub network_ms: f64,
    /// Eq. 3's blend on the CPU.
    pub blend_ms: f64,
    /// The grid transferred back to the strands, lengths restored.
    pub transfer_ms: f64,
    /// F_β run and read back (the displaced frames).
    pub displacement_ms: f64,
}

/// The whole groom at time `t`: every strand turned about its root, phases varying over the
/// scalp.
fn swing(groom: &Groom, t: f32, out: &mut Vec<Vec3>) {
    out.clear();
    for s in groom.strands() {
        let r = s[0];
        let q = Quat::from_rotation_x(0.5 * (0.6 * t + 0.1 * r.x).sin())
            * Quat::from_rotation_z(0.3 * (0.4 * t + 0.1 * r.z).cos());
        out.extend(s.iter().map(|p| r + q * (*p - r)));
    }
}

/// Runs the benchmark on `threads` threads with the training config `config` (its grid side
/// replaced by `grid` when given) on `device`: `frames` timed frames after the first, and
/// `train_steps` training steps after the first.
#[allow(clippy::too_many_arguments)]
pub fn run(
    config: &str,
    grid: Option<usize>,
    strands: usize,
    threads: usize,
    frames: usize,
    train_steps: usize,
    device: DeviceKind,
) -> Result<NeuralBench> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Runtime(format!("thread pool: {e}")))?;
    pool.install(|| {
        let mut cfg = InterpConfig::load(config)?;
        if let Some(n) = grid {
            cfg.grid.n = n;
            cfg.validate()?;
        }
        let groom = load_groom("straight", &Transform::default(), Some(strands))?.groom;
        let caches = (device == DeviceKind::Cuda).then(|| {
            let dir = crate::neural::device::cache_dir().join("cubecl");
            let warm = std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some());
            (dir.display().to_string(), warm)
        });
        let mut r = device.run(Bench {
            cfg: &cfg,
            groom: &groom,
            frames,
            train_steps,
            compare_cpu: device != DeviceKind::Cpu,
        })?;
        r.config = config.to_string();
        r.strands = strands;
        r.points = groom.point_count() / strands.max(1);
        r.threads = threads;
        r.device = device.to_string();
        if let Some((dir, warm)) = caches {
            r.kernel_cache = Some(dir);
            r.kernel_cache_warm = Some(warm);
        }
        Ok(r)
    })
}

/// The device-dependent part of [`run`].
struct Bench<'a> {
    cfg: &'a InterpConfig,
    groom: &'a Groom,
    frames: usize,
    train_steps: usize,
    /// Also run the first frame on the CPU with the same weights and compare.
    compare_cpu: bool,
}

impl OnDevice for Bench<'_> {
    type Output = NeuralBench;
    fn run<AB: AutodiffBackend>(self, dev: AB::Device) -> Result<NeuralBench> {
        type B<AB> = <AB as AutodiffBackend>::InnerBackend;
        let (groom, frames, train_steps) = (self.groom, self.frames, self.train_steps);
        let mut cfg = self.cfg.clone();
        let t = Instant::now();
        let net = init_net::<B<AB>>(&cfg, &dev);
        // The same weights for the CPU comparison.
        let weights = self.compare_cpu.then(|| net_to_bytes(&net));
        let mut neural = NeuralInterpolator::<B<AB>>::new(groom, &cfg, net, dev.clone())?;
        let setup_ms = t.elapsed().as_secs_f64() * 1e3;
        let guides = neural.guide_strands().to_vec();
        let dopts = cfg.displace.clone().unwrap_or_default();
        let fgen =
            crate::neural::file::seeded_init(1, 10_000, &dev, || dopts.generator(&cfg).init::<B<AB>>(&dev));
        let mut displaced =
            NeuralInterpolator::<B<AB>>::new(groom, &cfg, init_net::<B<AB>>(&cfg, &dev), dev.clone())?
                .with_displacement(fgen);
        let mut idw = FixedWeights::idw(groom, &guides, 10)?;
        let pose = Pose::default();
        let mut full = Vec::new();
        let mut out = vec![Vec3::ZERO; groom.point_count()];
        let step =
            |m: &mut dyn Interpolator, f: usize, full: &mut Vec<Vec3>, out: &mut [Vec3]| -> Result<f64> {
                swing(groom, f as f32 * 0.25, full);
                let g = m.layout().extract(full);
                let frame = GuideFrame {
                    frame: f as f64,
                    time: f as f64 / 24.0,
                    guides: &g,
                    pose: &pose,
                    colliders: None,
                };
                let t = Instant::now();
                m.interpolate(&frame, out)?;
                Ok(t.elapsed().as_secs_f64() * 1e3)
            };
        let first_frame_ms = step(&mut neural, 0, &mut full, &mut out)?;
        // The same network on the CPU, the same frame: the largest difference of any particle,
        // relative to the largest coordinate.
        let cpu_max_relative_difference = if let Some(weights) = &weights {
            let cpu_net = net_from_bytes::<Flex>(&cfg, weights, &FlexDevice, std::path::Path::new("bench"))?;
            let mut cpu = NeuralInterpolator::<Flex>::new(groom, &cfg, cpu_net, FlexDevice)?;
            let mut cpu_out = vec![Vec3::ZERO; groom.point_count()];
            step(&mut cpu, 0, &mut full, &mut cpu_out)?;
            let scale = cpu_out
                .iter()
                .map(|p| p.abs().max_element())
                .fold(0.0f32, f32::max);
            let diff = out
                .iter()
                .zip(&cpu_out)
                .map(|(a, b)| (*a - *b).abs().max_element())
                .fold(0.0f32, f32::max);
            Some(diff as f64 / scale.max(1e-30) as f64)
        } else {
            None
        };
        let (mut n_ms, mut i_ms, mut d_ms) = (0.0, 0.0, 0.0);
        step(&mut idw, 0, &mut full, &mut out)?;
        let displaced_first_frame_ms = step(&mut displaced, 0, &mut full, &mut out)?;
        let (p0, d0) = (neural.phases(), displaced.phases());
        for f in 1..=frames.max(1) {
            n_ms += step(&mut neural, f, &mut full, &mut out)?;
            i_ms += step(&mut idw, f, &mut full, &mut out)?;
            d_ms += step(&mut displaced, f, &mut full, &mut out)?;
        }
        let frames = frames.max(1);
        let (neural_ms, idw_ms) = (n_ms / frames as f64, i_ms / frames as f64);
        let displaced_ms = d_ms / frames as f64;
        let (p1, d1) = (neural.phases(), displaced.phases());
        let per =
            |a: std::time::Duration, b: std::time::Duration| (a - b).as_secs_f64() * 1e3 / frames as f64;
        let phases = Phases {
            guides_ms: per(p1.guides, p0.guides),
            network_ms: per(p1.network, p0.network),
            blend_ms: per(p1.blend, p0.blend),
            transfer_ms: per(p1.transfer, p0.transfer),
            displacement_ms: per(d1.displacement, d0.displacement),
        };
        // Training steps on frames of the same motion.
        cfg.train.steps = train_steps.max(1) + 1;
        cfg.train.validate_every = usize::MAX / 2;
        cfg.train.checkpoint_every = usize::MAX / 2;
        let (data, val) = swing_frames(groom, &cfg)?;
        let (train_first_step_ms, train_step_ms, trained_steps) = train_ms::<AB>(&cfg, &data, &val, &dev)?;
        // The displacement generator's training, with a fresh W_θ held fixed (crops of the
        // config's size need a grid of at least 16 + stride cells).
        let (displace_first_step_ms, displace_step_ms) = if cfg.grid.n >= 16 + cfg.grid.stride {
            let mut o = dopts.clone();
            o.steps = train_steps.max(1) + 2;
            o.validate_every = usize::MAX / 2;
            o.checkpoint_every = usize::MAX / 2;
            displace_ms::<AB>(&cfg, &o, &data, &val, &dev)?
        } else {
            (0.0, 0.0)
        };
        Ok(NeuralBench {
            config: String::new(),
            device: String::new(),
            strands: 0,
            points: 0,
            grid: cfg.grid.n,
            stride: cfg.grid.stride,
            grid_points: cfg.grid.points,
            guides: guides.len(),
            threads: 0,
            frames,
            setup_ms,
            first_frame_ms,
            neural_ms,
            idw_ms,
            neural_over_idw: neural_ms / idw_ms.max(1e-9),
            train_first_step_ms,
            train_step_ms,
            train_steps: trained_steps,
            displaced_first_frame_ms,
            displaced_ms,
            phases,
            displace_first_step_ms,
            displace_step_ms,
            cpu_max_relative_difference,
            kernel_cache: None,
            kernel_cache_warm: None,
        })
    }
}

/// Twelve frames of the swing for training, the first three again for validation.
fn swing_frames(groom: &Groom, cfg: &InterpConfig) -> Result<(GridFrames, GridFrames)> {
    let grid = UvGrid::new(groom, cfg.grid)?;
    let mut data = GridFrames::new(grid.clone());
    let mut val = GridFrames::new(grid);
    let mut full = Vec::new();
    for f in 0..12 {
        swing(groom, f as f32 * 0.25, &mut full);
        data.push(&full);
        if f < 3 {
            val.push(&full);
        }
    }
    Ok((data, val))
}

/// W_θ's training steps: the first step's ms, the mean of the others, and how many.
fn train_ms<AB: AutodiffBackend>(
    cfg: &InterpConfig,
    data: &GridFrames,
    val: &GridFrames,
    dev: &AB::Device,
) -> Result<(f64, f64, usize)> {
    let mut times = Vec::new();
    let mut last = Instant::now();
    train::<AB>(cfg, data, std::slice::from_ref(val), dev, None, &mut |_| {
        times.push(last.elapsed().as_secs_f64() * 1e3);
        last = Instant::now();
        true
    })?;
    let first = times.first().copied().unwrap_or(0.0);
    let rest = &times[1.min(times.len())..];
    Ok((
        first,
        rest.iter().sum::<f64>() / rest.len().max(1) as f64,
        rest.len(),
    ))
}

/// The displacement generator's training steps with a fresh W_θ fixed: the first step's ms
/// and the mean of the others (the last, which validates, left out).
fn displace_ms<AB: AutodiffBackend>(
    cfg: &InterpConfig,
    o: &crate::neural::displace::DisplaceOptions,
    data: &GridFrames,
    val: &GridFrames,
    dev: &AB::Device,
) -> Result<(f64, f64)> {
    let mut dt = Vec::new();
    let mut last = Instant::now();
    crate::neural::displace::train::train::<AB>(
        cfg,
        o,
        &init_net::<AB::InnerBackend>(cfg, dev),
        data,
        val,
        dev,
        None,
        &mut |_| {
            dt.push(last.elapsed().as_secs_f64() * 1e3);
            last = Instant::now();
            true
        },
    )?;
    let first = dt.first().copied().unwrap_or(0.0);
    // The last step validates (training always scores its end): left out.
    dt.pop();
    let r = &dt[1.min(dt.len())..];
    Ok((first, r.iter().sum::<f64>() / r.len().max(1) as f64))
}
