//! Training the trajectory network apart from the model: a dataset of (features, displacement)
//! frames, per-channel scales, Adam on the mean squared error of scaled displacements with
//! seeded batches; the trained network's file (`.tnn`, kind `trajectory`).

use std::path::Path;
use std::time::Instant;

use burn::backend::Flex;
use burn::module::AutodiffModule;
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{Adam, AdamConfig, GradientsParams, Optimizer};
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::TrajectoryConfig;
use super::model::{TrajectoryNet, TrajectoryNetConfig};
use crate::error::{Error, Result};
use crate::neural::file::{NeuralFile, module_from_bytes, module_to_bytes, seeded_init};
use crate::neural::train_loop::{Schedule, Standing, Steps};

/// Training frames: `inputs` × `n` features and `outputs` × `n` displacements, row by row.
#[derive(Default)]
pub struct Dataset {
    pub inputs: usize,
    pub outputs: usize,
    pub x: Vec<f32>,
    pub y: Vec<f32>,
}

impl Dataset {
    pub fn new(inputs: usize, outputs: usize) -> Dataset {
        Dataset {
            inputs,
            outputs,
            ..Default::default()
        }
    }

    pub fn push(&mut self, x: &[f32], y: &[f32]) {
        assert_eq!((x.len(), y.len()), (self.inputs, self.outputs));
        self.x.extend_from_slice(x);
        self.y.extend_from_slice(y);
    }

    pub fn len(&self) -> usize {
        self.x.len() / self.inputs.max(1)
    }

    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
}

/// What inputs and outputs are divided by: each input channel's and all displacements'
/// root-mean-square over the training frames (1 where a channel is always 0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scales {
    pub input: Vec<f32>,
    pub output: f32,
}

impl Scales {
    pub fn of(d: &Dataset) -> Scales {
        let n = d.len().max(1) as f64;
        let mut sums = vec![0.0f64; d.inputs];
        for row in d.x.chunks_exact(d.inputs) {
            for (s, v) in sums.iter_mut().zip(row) {
                *s += (*v as f64) * (*v as f64);
            }
        }
        let rms = |s: f64, n: f64| {
            let r = (s / n).sqrt();
            if r > 1e-6 { r as f32 } else { 1.0 }
        };
        let input = sums.into_iter().map(|s| rms(s, n)).collect();
        let ys: f64 = d.y.iter().map(|v| (*v as f64) * (*v as f64)).sum();
        Scales {
            input,
            output: rms(ys, d.y.len().max(1) as f64),
        }
    }

    fn inputs(&self, x: &[f32]) -> Vec<f32> {
        x.chunks_exact(self.input.len())
            .flat_map(|r| r.iter().zip(&self.input).map(|(v, s)| v / s))
            .collect()
    }
}

/// A trained network with what it needs to run.
pub struct TrajectoryModel<B: Backend> {
    pub net: TrajectoryNet<B>,
    pub scales: Scales,
    pub config: TrajectoryConfig,
    /// Displacements out (3 per vertex).
    pub outputs: usize,
    /// Mean squared error (scaled) of the first and last steps.
    pub first_loss: f64,
    pub last_loss: f64,
    /// Seconds the training took (not in the file, whose bytes depend on its inputs alone).
    pub seconds: f64,
}

/// The network's training state between steps ([`crate::neural::train_loop`]).
struct NetTraining<'a, B: AutodiffBackend> {
    cfg: &'a TrajectoryConfig,
    data: &'a Dataset,
    /// Scaled inputs and outputs.
    x: Vec<f32>,
    y: Vec<f32>,
    net: Option<TrajectoryNet<B>>,
    optim: OptimizerAdaptor<Adam, TrajectoryNet<B>, B>,
    rng: ChaCha8Rng,
    dev: &'a B::Device,
    first_loss: f64,
    last_loss: f64,
    standing: Standing<(), ()>,
    progress: &'a mut dyn FnMut(usize, f64),
}

impl<B: AutodiffBackend> Steps for NetTraining<'_, B> {
    type Validation = ();
    type History = ();

    fn standing(&mut self) -> &mut Standing<(), ()> {
        &mut self.standing
    }

    /// Adam on the mean squared error of `batch` frames drawn at random.
    fn step(&mut self, step: usize) -> Result<()> {
        let (cfg, data, dev) = (self.cfg, self.data, self.dev);
        let n = data.len();
        let rows: Vec<usize> = (0..cfg.batch.min(n))
            .map(|_| self.rng.random_range(0..n))
            .collect();
        let bx: Vec<f32> = rows
            .iter()
            .flat_map(|&r| self.x[r * data.inputs..(r + 1) * data.inputs].iter().copied())
            .collect();
        let by: Vec<f32> = rows
            .iter()
            .flat_map(|&r| self.y[r * data.outputs..(r + 1) * data.outputs].iter().copied())
            .collect();
        let b = rows.len();
        let bx = Tensor::<B, 2>::from_data(TensorData::new(bx, [b, data.inputs]), dev);
        let by = Tensor::<B, 2>::from_data(TensorData::new(by, [b, data.outputs]), dev);
        let net = self.net.take().expect("the network is back after each step");
        let err = net.forward(bx) - by;
        let loss = (err.clone() * err).mean();
        self.last_loss = loss.clone().into_scalar().elem::<f64>();
        if step == 0 {
            self.first_loss = self.last_loss;
        }
        if !self.last_loss.is_finite() {
            return Err(Error::Runtime(format!(
                "the trajectory network's loss is not finite at step {}: lower learning_rate",
                step + 1
            )));
        }
        let grads = GradientsParams::from_grads(loss.backward(), &net);
        self.net = Some(self.optim.step(cfg.learning_rate, net, grads));
        Ok(())
    }

    fn report(&mut self, step: usize, _: f64, _: Option<&()>) -> bool {
        (self.progress)(step, self.last_loss);
        true
    }
}

/// Trains on `data` (seeded: the same data and config give the same weights).
pub fn train<B: AutodiffBackend>(
    cfg: &TrajectoryConfig,
    data: &Dataset,
    dev: &B::Device,
    progress: &mut dyn FnMut(usize, f64),
) -> Result<TrajectoryModel<B::InnerBackend>> {
    if data.is_empty() {
        return Err(Error::Invalid(
            "the trajectory network has no training frames".into(),
        ));
    }
    let clock = Instant::now();
    let scales = Scales::of(data);
    let net_cfg = TrajectoryNetConfig::new(data.inputs, data.outputs).with_hidden(cfg.hidden);
    let mut t = NetTraining {
        cfg,
        data,
        x: scales.inputs(&data.x),
        y: data.y.iter().map(|v| v / scales.output).collect(),
        net: Some(seeded_init(cfg.seed, 0, dev, || net_cfg.init(dev))),
        optim: AdamConfig::new().init::<B, TrajectoryNet<B>>(),
        rng: ChaCha8Rng::seed_from_u64(cfg.seed),
        dev,
        first_loss: f64::NAN,
        last_loss: f64::NAN,
        standing: Standing::default(),
        progress,
    };
    crate::neural::train_loop::run(&mut t, &Schedule::plain(cfg.steps), None)?;
    Ok(TrajectoryModel {
        net: t.net.take().expect("the network is back after each step").valid(),
        scales,
        config: cfg.clone(),
        outputs: data.outputs,
        first_loss: t.first_loss,
        last_loss: t.last_loss,
        seconds: clock.elapsed().as_secs_f64(),
    })
}

impl<B: Backend> TrajectoryModel<B> {
    /// Displacements (unscaled, `outputs` per row) of feature rows `x` (unscaled).
    pub fn predict(&self, x: &[f32], dev: &B::Device) -> Vec<f32> {
        let inputs = self.scales.input.len();
        let n = x.len() / inputs;
        let t = Tensor::<B, 2>::from_data(TensorData::new(self.scales.inputs(x), [n, inputs]), dev);
        let out: Vec<f32> = self.net.forward(t).into_data().to_vec().expect("f32 tensor");
        out.into_iter().map(|v| v * self.scales.output).collect()
    }
}

impl TrajectoryModel<Flex> {
    /// Writes the model (atomically) with `extra` in its header.
    pub fn write(&self, path: &Path, extra: serde_json::Value) -> Result<()> {
        NeuralFile {
            header: serde_json::json!({
                "kind": "trajectory",
                "config": self.config,
                "inputs": self.scales.input.len(),
                "outputs": self.outputs,
                "scales": self.scales,
                "first_loss": self.first_loss,
                "last_loss": self.last_loss,
                "build": crate::build_id(),
                "training": extra,
            }),
            sections: vec![("weights".into(), module_to_bytes(&self.net))],
        }
        .write(path)
    }

    /// Reads a model written by [`TrajectoryModel::write`].
    pub fn read(path: &Path) -> Result<TrajectoryModel<Flex>> {
        let f = NeuralFile::read(path)?;
        let bad = |m: &str| Error::Invalid(format!("{}: {m}", path.display()));
        if f.header["kind"] != "trajectory" {
            return Err(bad("not a trajectory network"));
        }
        let config: TrajectoryConfig =
            serde_json::from_value(f.header["config"].clone()).map_err(|e| bad(&format!("config: {e}")))?;
        let scales: Scales =
            serde_json::from_value(f.header["scales"].clone()).map_err(|e| bad(&format!("scales: {e}")))?;
        let outputs = f.header["outputs"].as_u64().ok_or_else(|| bad("no outputs"))? as usize;
        if scales.input.len() != config.inputs() || outputs == 0 || outputs > 1 << 26 {
            return Err(bad("the header's sizes do not agree"));
        }
        let dev = Default::default();
        let empty = TrajectoryNetConfig::new(config.inputs(), outputs)
            .with_hidden(config.hidden)
            .init::<Flex>(&dev);
        let weights = f.section("weights").ok_or_else(|| bad("no weights"))?;
        Ok(TrajectoryModel {
            net: module_from_bytes(empty, weights, &dev, path)?,
            scales,
            config,
            outputs,
            first_loss: f.header["first_loss"].as_f64().unwrap_or(f64::NAN),
            last_loss: f.header["last_loss"].as_f64().unwrap_or(f64::NAN),
            seconds: f64::NAN,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::Autodiff;

    #[test]
    fn learns_a_linear_map_and_round_trips_its_file() {
        // y = A x for a fixed A: the network must fit it far below the untrained error.
        let cfg = TrajectoryConfig {
            window: 1,
            hidden: 32,
            steps: 400,
            batch: 16,
            learning_rate: 3e-3,
            ..Default::default()
        };
        let mut d = Dataset::new(cfg.inputs(), 6);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..200 {
            let x: Vec<f32> = (0..cfg.inputs()).map(|_| rng.random_range(-1.0..1.0)).collect();
            let y: Vec<f32> = (0..6)
                .map(|k| (x[k] - 0.5 * x[(k + 2) % cfg.inputs()]) * 3.0)
                .collect();
            d.push(&x, &y);
        }
        let dev = Default::default();
        let m = train::<Autodiff<Flex>>(&cfg, &d, &dev, &mut |_, _| {}).unwrap();
        assert!(
            m.last_loss < 0.05 * m.first_loss,
            "{} → {}",
            m.first_loss,
            m.last_loss
        );
        let again = train::<Autodiff<Flex>>(&cfg, &d, &dev, &mut |_, _| {}).unwrap();
        assert_eq!(again.last_loss, m.last_loss, "seeded training repeats");
        let dir = std::env::temp_dir().join(format!("tress-traj-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.tnn");
        m.write(&path, serde_json::Value::Null).unwrap();
        let back = TrajectoryModel::read(&path).unwrap();
        let path2 = dir.join("t2.tnn");
        again.write(&path2, serde_json::Value::Null).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), std::fs::read(&path2).unwrap());
        let x = &d.x[..cfg.inputs()];
        assert_eq!(m.predict(x, &dev), back.predict(x, &dev));
        std::fs::remove_dir_all(&dir).ok();
    }
}
