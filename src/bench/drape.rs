//! `tress bench drape`: the drape network's throughput (003 §4.3: one groom in 2.86 ms, 1000
//! grooms in 0.3 s on an RTX A6000), beside the Adam baseline on the same groom and pose in the
//! same run, and one groom as the network solver drapes it by default (the pass, then its line
//! search along the output: six energy evaluations). The network is freshly initialised at the
//! config's sizes (its cost does not depend on its weights); the groom is the procedural wavy
//! preset on its cranium. A batch of B grooms is one decoder pass over B `[latent, shape, pose]`
//! rows, then every groom's posed strands plus its displacements, read back to the CPU: what a
//! caller gets. The first pass of each size is reported apart (allocation, warm-up; on the GPU,
//! compiling kernels unless the kernel cache is warm). `--device cuda` runs the network and Adam
//! on burn's CUDA backend.

use std::time::Instant;

use burn::tensor::backend::AutodiffBackend;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::groom::Transform;
use crate::neural::device::{DeviceKind, OnDevice};
use crate::neural::drape::HeadRotation;
use crate::neural::drape::config::{DrapeTrainConfig, GroomEntry};
use crate::neural::drape::draper::{DEFAULT_LINE_SEARCH, search_scale, search_strand_scales};
use crate::neural::drape::energy::Fixed;
use crate::neural::drape::model::condition;
use crate::neural::drape::network::{
    decode, latent_of, row_positions, scaled_positions, strand_scaled_positions,
};
use crate::neural::drape::scene::drape_scene;
use crate::neural::drape::solve::{AdamOptions, adam};
use crate::neural::file::seeded_init;

#[derive(Debug, Serialize)]
pub struct BatchFigures {
    pub grooms: usize,
    /// The first pass (ms), apart.
    pub first_ms: f64,
    /// The best of the timed passes (ms).
    pub ms: f64,
    pub grooms_per_second: f64,
    pub ms_per_groom: f64,
}

#[derive(Debug, Serialize)]
pub struct DrapeBench {
    pub config: String,
    /// `cpu` or `cuda`: where the network and the Adam baseline ran.
    pub device: String,
    pub texture: usize,
    pub points: usize,
    pub strands: usize,
    pub threads: usize,
    pub batches: Vec<BatchFigures>,
    /// The Adam baseline on one groom and pose (s), its iterations, and the network's speed-up
    /// per groom at batch 1.
    pub adam_seconds: f64,
    pub adam_iterations: usize,
    pub speedup_over_adam: f64,
    /// One groom with the network solver's uniform line search along the output (ms), and its
    /// energy evaluations.
    pub searched_ms: f64,
    pub searched_evaluations: usize,
    /// The same with the default search, a scale per strand after the uniform one.
    pub strands_searched_ms: f64,
    pub strands_searched_evaluations: usize,
}

/// The fastest of `runs` (at least one) timed runs of `run`, each giving its milliseconds and
/// energy evaluations.
fn fastest(runs: usize, run: impl FnMut(usize) -> (f64, usize)) -> (f64, usize) {
    (0..runs.max(1))
        .map(run)
        .fold((f64::INFINITY, 0), |a, b| if b.0 < a.0 { b } else { a })
}

/// Runs the benchmark on `threads` threads at the sizes of the training config `config`, with
/// `runs` timed passes per batch size, the network and the Adam baseline on `device`.
pub fn run(
    config: &str,
    threads: usize,
    runs: usize,
    sizes: &[usize],
    device: DeviceKind,
) -> Result<DrapeBench> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Runtime(format!("thread pool: {e}")))?;
    pool.install(|| {
        let cfg = DrapeTrainConfig::load(config)?;
        let mut r = device.run(Bench {
            cfg: &cfg,
            runs,
            sizes,
        })?;
        r.config = config.to_string();
        r.threads = threads;
        r.device = device.to_string();
        Ok(r)
    })
}

/// The device-dependent part of [`run`].
struct Bench<'a> {
    cfg: &'a DrapeTrainConfig,
    runs: usize,
    sizes: &'a [usize],
}

impl OnDevice for Bench<'_> {
    type Output = DrapeBench;

    fn run<AB: AutodiffBackend>(self, dev: AB::Device) -> Result<DrapeBench> {
        let cfg = self.cfg;
        let net = cfg.net();
        let entry = GroomEntry {
            name: "wavy".into(),
            groom: "wavy".into(),
            strands: Some(400),
            ..Default::default()
        };
        let ds = drape_scene(
            &entry,
            &Transform::default(),
            0.2,
            net.texture,
            net.points,
            &cfg.material,
        )?;
        let subject = &ds.subject;
        let encoder = seeded_init(1, 0, &dev, || net.init_encoder::<AB::InnerBackend>(&dev));
        let decoder = seeded_init(2, 1000, &dev, || net.init_deform::<AB::InnerBackend>(&dev));
        let latent = latent_of(&encoder, subject, &dev);
        let rotation = HeadRotation {
            name: "bench".into(),
            yaw: 30.0,
            pitch: 10.0,
            roll: -5.0,
            ..Default::default()
        };
        let pose = subject.pose(&rotation)?;
        let fixed = Fixed::<AB::InnerBackend>::new(&pose.posed, &dev);
        let largest = self.sizes.iter().copied().max().unwrap_or(1);
        let conditions = vec![condition(&pose.shape, &rotation); largest];
        let pass = |b: usize| -> f64 {
            let clock = Instant::now();
            let tex = decode(&decoder, &vec![latent.clone(); b], &conditions[..b]);
            let mut total = 0.0f32;
            for r in 0..b {
                let x = row_positions(
                    cfg.net.output,
                    tex.clone().narrow(0, r, 1),
                    &subject.groom.cells,
                    &fixed,
                );
                let x: Vec<f32> = x.into_data().to_vec().expect("f32 positions");
                total += x[x.len() - 1];
            }
            std::hint::black_box(total);
            1e3 * clock.elapsed().as_secs_f64()
        };
        let mut batches = Vec::new();
        for &b in self.sizes {
            let first_ms = pass(b);
            let ms = (0..self.runs.max(1))
                .map(|_| pass(b))
                .fold(f64::INFINITY, f64::min);
            batches.push(BatchFigures {
                grooms: b,
                first_ms,
                ms,
                grooms_per_second: 1e3 * b as f64 / ms,
                ms_per_groom: ms / b as f64,
            });
        }
        // One groom as the network solver drapes it by default: the pass, then the line search
        // along its output (the best of the timed runs).
        let searched = |_: usize| -> (f64, usize) {
            let clock = Instant::now();
            let tex = decode(&decoder, std::slice::from_ref(&latent), &conditions[..1]);
            let (x, _, _, tried) = search_scale::<AB::InnerBackend>(
                |a| scaled_positions(cfg.net.output, &tex, &subject.groom.cells, &fixed, a),
                &pose.posed,
                pose.contact(),
                &cfg.material,
                DEFAULT_LINE_SEARCH as usize,
                &dev,
            );
            std::hint::black_box(x);
            (1e3 * clock.elapsed().as_secs_f64(), tried)
        };
        let (searched_ms, searched_evaluations) = fastest(self.runs, searched);
        let strands = |_: usize| -> (f64, usize) {
            let clock = Instant::now();
            let tex = decode(&decoder, std::slice::from_ref(&latent), &conditions[..1]);
            let (x, _, _, tried) = search_strand_scales::<AB::InnerBackend>(
                |a| strand_scaled_positions(cfg.net.output, &tex, &subject.groom.cells, &fixed, a),
                &pose.posed,
                pose.contact(),
                &cfg.material,
                DEFAULT_LINE_SEARCH as usize,
                &dev,
            );
            std::hint::black_box(x);
            (1e3 * clock.elapsed().as_secs_f64(), tried)
        };
        let (strands_searched_ms, strands_searched_evaluations) = fastest(self.runs, strands);
        let (_, report) = adam::<AB>(
            &pose.posed,
            pose.contact(),
            &cfg.material,
            &AdamOptions::default(),
            &dev,
        );
        let one = batches
            .iter()
            .find(|b| b.grooms == 1)
            .map(|b| b.ms_per_groom)
            .unwrap_or(f64::NAN);
        Ok(DrapeBench {
            config: String::new(),
            device: String::new(),
            texture: net.texture,
            points: net.points,
            strands: subject.groom.strands(),
            threads: 0,
            batches,
            adam_seconds: report.seconds,
            adam_iterations: report.iterations,
            speedup_over_adam: 1e3 * report.seconds / one,
            searched_ms,
            searched_evaluations,
            strands_searched_ms,
            strands_searched_evaluations,
        })
    }
}
