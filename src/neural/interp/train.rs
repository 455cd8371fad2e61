//! Training W_θ (000 §4.2, §5.2): Adam at lr 1e-3, batches of consecutive frames of one crop
//! (so L_tempo has frame pairs), guides from the ground truth, seeded; validation on held-out
//! frames of the full grid; checkpoints that resume to the same result as an uninterrupted run.
//!
//! Each step's frames and crop come from a generator seeded with (seed, step), so a resumed run
//! draws exactly what the uninterrupted run would have drawn.

use std::path::Path;

use burn::module::AutodiffModule;
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{Adam, AdamConfig, GradientsParams, Optimizer};
use burn::prelude::*;
use burn::record::Recorder;
use burn::tensor::backend::AutodiffBackend;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::carry::{Blend, Space};
use super::loss::{LossWeights, loss};
use super::model::{WeightNet, WeightNetConfig, interpolate};
use crate::error::{Error, Result};
use crate::neural::data::{FrameSet, GridFrames, channels_first};
use crate::neural::file::{NeuralFile, Rec, module_from_bytes, module_to_bytes, seeded_init};
use crate::neural::grid::{GridSpec, UNIT_CM};
use crate::neural::train_loop::{Schedule, Standing, Steps};

/// The network options of a training config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetOptions {
    pub guide_channels: usize,
    pub slope: f64,
    /// What L blends: `positions` (000 Eq. 3), `carried`, `offsets` or `affine`
    /// ([`super::carry`]).
    pub blend: super::carry::Blend,
    /// The share λ of the rest offset that `offsets` and `carried` candidates carry, in [0, 1]
    /// (1: the whole offset; 0: `positions`). With `learn_share`, the prior λ₀ of the learned
    /// shares, in (0, 1).
    pub offset_share: f32,
    /// Each particle's share λ_p predicted by W_θ (a 17th output channel, [`super::model`]),
    /// centred on `offset_share`.
    pub learn_share: bool,
}

impl NetOptions {
    /// What L blends, with its share of the rest offset.
    pub fn space(&self) -> Space {
        Space {
            blend: self.blend,
            share: self.offset_share,
            learned: self.learn_share,
        }
    }
}

impl Default for NetOptions {
    fn default() -> Self {
        NetOptions {
            guide_channels: 32,
            slope: 0.2,
            blend: super::carry::Blend::Positions,
            offset_share: 1.0,
            learn_share: false,
        }
    }
}

/// How to train.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainOptions {
    /// Optimizer steps.
    pub steps: usize,
    /// Consecutive frames per step (000: batch 4).
    pub batch: usize,
    pub lr: f64,
    pub seed: u64,
    /// Share of the steps over which the snap weight ramps from 0 to its value.
    pub snap_ramp: f64,
    pub validate_every: usize,
    pub checkpoint_every: usize,
    /// Share of the training frames held out (at the end) for validation when no validation
    /// cache is given.
    pub validation: f64,
    /// Stop early after this many minutes (the best model so far is kept).
    pub max_minutes: Option<f64>,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            steps: 1500,
            batch: 4,
            lr: 1e-3,
            seed: 1,
            snap_ramp: 0.3,
            validate_every: 100,
            checkpoint_every: 100,
            validation: 0.15,
            max_minutes: None,
        }
    }
}

/// A training config (`presets/training/*.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterpConfig {
    pub grid: GridSpec,
    #[serde(default)]
    pub net: NetOptions,
    #[serde(default)]
    pub train: TrainOptions,
    #[serde(default)]
    pub loss: LossWeights,
    /// The fine-scale displacement generator (000 §4.3), trained after W_θ; none without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub displace: Option<crate::neural::displace::DisplaceOptions>,
}

impl InterpConfig {
    pub fn load(name_or_path: &str) -> Result<InterpConfig> {
        let c: InterpConfig = crate::presets::load("training", crate::neural::TRAINING, name_or_path)?;
        c.validate()?;
        Ok(c)
    }

    pub fn validate(&self) -> Result<()> {
        self.grid.validate()?;
        let t = &self.train;
        let bad = |m: &str| Err(Error::Invalid(format!("training config: {m}")));
        if t.batch == 0 || t.batch > 64 {
            return bad("`train.batch` must be 1 to 64");
        }
        if !(t.lr > 0.0 && t.lr < 1.0) {
            return bad("`train.lr` must be in (0, 1)");
        }
        if !(0.0..0.9).contains(&t.validation) {
            return bad("`train.validation` must be in [0, 0.9)");
        }
        if !(0.0..=1.0).contains(&t.snap_ramp) {
            return bad("`train.snap_ramp` must be in [0, 1]");
        }
        if self.net.guide_channels == 0 || self.net.guide_channels > 512 {
            return bad("`net.guide_channels` must be 1 to 512");
        }
        if !(0.0..=1.0).contains(&self.net.offset_share) {
            return bad("`net.offset_share` must be in [0, 1]");
        }
        if self.net.blend == Blend::Positions && self.net.offset_share != 1.0 {
            return bad(
                "`net.offset_share` applies to `blend = \"offsets\"`, `\"carried\"` or `\"affine\"`; \
                 `positions` carries no offset (it is `offsets` at share 0)",
            );
        }
        if self.net.learn_share {
            if self.net.blend == Blend::Positions {
                return bad(
                    "`net.learn_share` applies to `blend = \"offsets\"`, `\"carried\"` or `\"affine\"`; \
                     `positions` carries no offset",
                );
            }
            if !(self.net.offset_share > 0.0 && self.net.offset_share < 1.0) {
                return bad(
                    "with `net.learn_share`, `net.offset_share` is the learned shares' prior and \
                     must be in (0, 1), e.g. 0.5",
                );
            }
        }
        // The grid's fit to the generator is checked where it is trained (a config extending
        // one with `[displace]` may still turn it off with `steps = 0` or a job override).
        if let Some(d) = &self.displace {
            d.validate()?;
        }
        Ok(())
    }

    pub fn net(&self) -> WeightNetConfig {
        WeightNetConfig::new(self.grid.levels())
            .with_guide_channels(self.net.guide_channels)
            .with_slope(self.net.slope)
            .with_learned_share(self.net.learn_share.then_some(self.net.offset_share as f64))
    }
}

/// A freshly initialised network, seeded.
pub fn init_net<B: Backend>(cfg: &InterpConfig, dev: &B::Device) -> WeightNet<B> {
    seeded_init(cfg.train.seed, 0, dev, || cfg.net().init::<B>(dev))
}

pub fn net_to_bytes<B: Backend>(net: &WeightNet<B>) -> Vec<u8> {
    module_to_bytes(net)
}

pub fn net_from_bytes<B: Backend>(
    cfg: &InterpConfig,
    bytes: &[u8],
    dev: &B::Device,
    path: &Path,
) -> Result<WeightNet<B>> {
    module_from_bytes(cfg.net().init::<B>(dev), bytes, dev, path)
}

/// Validation figures (full grid, guides from the ground truth), cm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    pub rmse_cm: f64,
    /// Uniform weights over the 16 neighbourhood guides (a reference any training must beat).
    pub uniform_rmse_cm: f64,
    /// Mean relative change of segment lengths.
    pub length_error: f64,
}

/// Scores `net` on every frame of `data` on the full grid.
pub fn validate<B: Backend>(
    net: &WeightNet<B>,
    data: &GridFrames,
    batch: usize,
    space: Space,
    dev: &B::Device,
) -> Validation {
    validate_all(net, std::slice::from_ref(data), batch, space, dev)
}

/// Scores `net` on every frame of every set of `sets` (grooms on their own grids): the RMSE and
/// length error over all their particles and frames.
pub fn validate_all<B: Backend>(
    net: &WeightNet<B>,
    sets: &[GridFrames],
    batch: usize,
    space: Space,
    dev: &B::Device,
) -> Validation {
    let (mut se, mut se_u, mut len, mut denom, mut len_denom) = (0f64, 0f64, 0f64, 0f64, 0f64);
    for data in sets {
        let [a, b, c, d] = sums(net, data, batch, space, dev);
        se += a;
        se_u += b;
        len += c;
        let cells = data.grid.occupied.iter().filter(|&&o| o).count().max(1) as f64;
        denom += cells * data.grid.spec.points as f64 * d;
        len_denom += cells * d;
    }
    let denom = denom.max(1e-30);
    Validation {
        rmse_cm: (se / denom).sqrt() * UNIT_CM as f64,
        uniform_rmse_cm: (se_u / denom).sqrt() * UNIT_CM as f64,
        length_error: len / len_denom.max(1e-30),
    }
}

/// One set's squared errors (network, uniform weights), relative length changes (per strand,
/// summed over cells and frames) and frame count.
fn sums<B: Backend>(
    net: &WeightNet<B>,
    data: &GridFrames,
    batch: usize,
    space: Space,
    dev: &B::Device,
) -> [f64; 4] {
    let n = data.grid.spec.n;
    let w = data.grid.spec.points as f64;
    let (mut se, mut se_u, mut len, mut count) = (0f64, 0f64, 0f64, 0usize);
    let mut first = 0;
    let mut rest_f = None;
    while first < data.len() {
        let b = batch.min(data.len() - first);
        let bt = data.batch::<B>(first, b, (0, 0), n, space, dev);
        let rf = rest_f.get_or_insert_with(|| net.rest_features(channels_first(bt.rest.clone())));
        let pr = net.predict(rf, channels_first(bt.guides.clone()));
        let hood = bt.hood.at(pr.share.as_ref());
        let s = interpolate(pr.omega, hood.clone());
        let u = hood.mean_dim(4).squeeze_dim::<5>(4);
        let sq = |x: Tensor<B, 5>| -> f64 {
            let v: f32 = ((x - bt.target.clone()).powi_scalar(2).sum_dim(4) * bt.mask.clone())
                .sum()
                .into_scalar()
                .elem();
            v as f64
        };
        se += sq(s.clone());
        se_u += sq(u);
        // Relative length change of every segment.
        let seg = |x: Tensor<B, 5>| {
            let [bb, uu, vv, ww, c] = x.dims();
            let a = x.clone().slice([0..bb, 0..uu, 0..vv, 1..ww, 0..c]);
            let z = x.slice([0..bb, 0..uu, 0..vv, 0..ww - 1, 0..c]);
            (a - z).powi_scalar(2).sum_dim(4).sqrt()
        };
        let rl = seg(bt.rest.clone()) + 1e-6;
        let rel: f32 = (((seg(s) - rl.clone()).abs() / rl) * bt.mask.clone())
            .sum()
            .into_scalar()
            .elem();
        len += rel as f64 / (w - 1.0);
        count += b;
        first += b;
    }
    [se, se_u, len, count as f64]
}

/// Where a training run stands (saved in checkpoints): steps, best validation, the loss of
/// every step, every validation.
pub type Progress = Standing<Validation, (usize, f32)>;

/// One line of training progress.
pub struct StepReport<'a> {
    pub step: usize,
    pub steps: usize,
    pub total: f32,
    pub data: f32,
    pub length: f32,
    pub snap: f32,
    pub tempo: f32,
    pub seconds_per_step: f64,
    pub validation: Option<&'a Validation>,
}

/// The trained network (best validation) and what training did.
pub struct Trained<B: Backend> {
    pub net: WeightNet<B>,
    pub progress: Progress,
    pub seconds: f64,
    pub stopped_early: bool,
}

type WOptimizer<B> = OptimizerAdaptor<Adam, WeightNet<B>, B>;

/// W_θ's training state between steps ([`crate::neural::train_loop`]).
struct WTraining<'a, B: AutodiffBackend> {
    cfg: &'a InterpConfig,
    train: &'a dyn FrameSet,
    /// Where a step may start: (segment, valid first frames) of every segment.
    starts: Vec<usize>,
    val: &'a [GridFrames],
    dev: &'a B::Device,
    /// Taken while a step updates it.
    net: Option<WeightNet<B>>,
    optim: WOptimizer<B>,
    progress: Progress,
    best_bytes: Option<Vec<u8>>,
    /// The last step's loss terms (total, data, length, snap, tempo).
    terms: [f32; 5],
    report: &'a mut dyn FnMut(&StepReport) -> bool,
}

impl<B: AutodiffBackend> WTraining<'_, B> {
    fn net(&self) -> &WeightNet<B> {
        self.net.as_ref().expect("the network is back after each step")
    }
}

impl<B: AutodiffBackend> Steps for WTraining<'_, B> {
    type Validation = Validation;
    type History = (usize, f32);

    fn standing(&mut self) -> &mut Progress {
        &mut self.progress
    }

    /// Adam on one batch of `train.batch` consecutive frames of one random crop (of one
    /// segment, every valid start equally likely), the snap term ramped in over the first
    /// `snap_ramp` of the steps.
    fn step(&mut self, step: usize) -> Result<()> {
        let (cfg, t) = (self.cfg, &self.cfg.train);
        let k = cfg.grid.stride;
        let size = cfg.grid.n - k;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
            t.seed ^ (step as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let total: usize = self.starts.iter().sum();
        let (mut seg, mut first) = (0, rng.random_range(0..=total - 1));
        while first >= self.starts[seg] {
            first -= self.starts[seg];
            seg += 1;
        }
        let corner = (rng.random_range(0..k), rng.random_range(0..k));
        let (frames, at) = self.train.window(seg, first, t.batch)?;
        let b = frames.batch::<B>(at, t.batch, corner, size, cfg.net.space(), self.dev);
        let net = self.net.take().expect("the network is back after each step");
        let rf = net.rest_features(channels_first(b.rest.clone()));
        let pr = net.predict(&rf, channels_first(b.guides.clone()));
        let hood = b.hood.at(pr.share.as_ref());
        let s = interpolate(pr.omega, hood.clone());
        let ramp = if t.snap_ramp > 0.0 {
            (step as f64 / (t.snap_ramp * t.steps as f64)).min(1.0)
        } else {
            1.0
        };
        let terms = loss(s, b.target, b.rest, hood, b.mask, &cfg.loss, ramp);
        let total = terms.value;
        if !total.is_finite() {
            return Err(Error::Runtime(format!(
                "training diverged at step {step} (loss is not finite); lower `train.lr`"
            )));
        }
        let grads = GradientsParams::from_grads(terms.total.backward(), &net);
        self.net = Some(self.optim.step(t.lr, net, grads));
        self.progress.history.push((step, total));
        self.terms = [total, terms.data, terms.length, terms.snap, terms.tempo];
        Ok(())
    }

    fn validate(&mut self) -> Result<Option<Validation>> {
        let t = &self.cfg.train;
        Ok(Some(validate_all(
            &self.net().valid(),
            self.val,
            t.batch,
            self.cfg.net.space(),
            self.dev,
        )))
    }

    fn better(&self, v: &Validation, best: &Validation) -> bool {
        v.rmse_cm < best.rmse_cm
    }

    fn keep_best(&mut self) -> Result<()> {
        self.best_bytes = Some(net_to_bytes(&self.net().valid()));
        Ok(())
    }

    fn report(&mut self, step: usize, seconds_per_step: f64, validation: Option<&Validation>) -> bool {
        let [total, data, length, snap, tempo] = self.terms;
        (self.report)(&StepReport {
            step,
            steps: self.cfg.train.steps,
            total,
            data,
            length,
            snap,
            tempo,
            seconds_per_step,
            validation,
        })
    }

    fn checkpoint(&mut self, path: &Path) -> Result<()> {
        let optimizer = Rec::default()
            .record(self.optim.to_record(), ())
            .map_err(|e| Error::Runtime(format!("optimizer state: {e}")))?;
        let mut sections = vec![
            ("weights".to_string(), net_to_bytes(self.net())),
            ("optimizer".to_string(), optimizer),
        ];
        if let Some(b) = &self.best_bytes {
            sections.push(("best".into(), b.clone()));
        }
        NeuralFile {
            header: serde_json::json!({
                "kind": "interp-checkpoint",
                "config": self.cfg,
                "progress": self.progress,
                "build": crate::build_id(),
            }),
            sections,
        }
        .write(path)
    }
}

/// A checkpoint's network, optimizer state, progress and best weights, refused when it was
/// made with another training config (the step count, time budget and displacement options do
/// not change W_θ's training).
#[allow(clippy::type_complexity)]
fn resume<B: AutodiffBackend>(
    cfg: &InterpConfig,
    path: &Path,
    optim: WOptimizer<B>,
    dev: &B::Device,
) -> Result<(WeightNet<B>, WOptimizer<B>, Progress, Option<Vec<u8>>)> {
    let f = NeuralFile::read(path)?;
    let bad = |m: &str| Error::Invalid(format!("{}: {m}", path.display()));
    let saved: InterpConfig = serde_json::from_value(f.header["config"].clone())
        .map_err(|e| bad(&format!("no training config: {e}")))?;
    let same = |c: &InterpConfig| {
        let mut c = c.clone();
        c.train.steps = 0;
        c.train.max_minutes = None;
        c.displace = None;
        c
    };
    if same(&saved) != same(cfg) {
        return Err(bad(
            "the checkpoint was made with another training config; remove it or train with that config",
        ));
    }
    let progress = serde_json::from_value(f.header["progress"].clone())
        .map_err(|e| bad(&format!("no progress: {e}")))?;
    let net = net_from_bytes(
        cfg,
        f.section("weights").ok_or_else(|| bad("no weights"))?,
        dev,
        path,
    )?;
    let o = f.section("optimizer").ok_or_else(|| bad("no optimizer state"))?;
    let rec = Recorder::<B>::load(&Rec::default(), o.to_vec(), dev)
        .map_err(|e| bad(&format!("the optimizer state does not load: {e}")))?;
    let best = f.section("best").map(|b| b.to_vec());
    Ok((net, optim.load_record(rec), progress, best))
}

/// Trains W_θ on `train`, validating on `val`. With `checkpoint`, state is saved there every
/// `checkpoint_every` steps, when `report` returns false (an interruption) and at the end;
/// when the file exists and `resume` is set, training goes on from it (the step count and time
/// budget may differ from the interrupted run's).
pub fn train<B: AutodiffBackend>(
    cfg: &InterpConfig,
    train: &dyn FrameSet,
    val: &[GridFrames],
    dev: &B::Device,
    checkpoint: Option<(&Path, bool)>,
    report: &mut dyn FnMut(&StepReport) -> bool,
) -> Result<Trained<B::InnerBackend>> {
    let t = &cfg.train;
    let spec = cfg.grid;
    let segments = train.segments();
    for s in 0..segments.len() {
        if train.window(s, 0, 0)?.0.grid.spec != spec {
            return Err(Error::Invalid("the data's grid is not the config's".into()));
        }
    }
    if val.iter().any(|v| v.grid.spec != spec) {
        return Err(Error::Invalid("the data's grid is not the config's".into()));
    }
    let starts: Vec<usize> = segments
        .iter()
        .map(|&n| (n + 1).saturating_sub(t.batch))
        .collect();
    if starts.iter().all(|&s| s == 0) {
        return Err(Error::Invalid(format!(
            "{} training frames (longest run {}); a step needs {} consecutive frames",
            segments.iter().sum::<usize>(),
            segments.iter().max().copied().unwrap_or(0),
            t.batch
        )));
    }
    let optim = AdamConfig::new().with_epsilon(1e-8).init::<B, WeightNet<B>>();
    let (net, optim, progress, best_bytes) = match checkpoint {
        Some((path, true)) if path.exists() => resume(cfg, path, optim, dev)?,
        _ => (init_net::<B>(cfg, dev), optim, Progress::default(), None),
    };
    let mut w = WTraining {
        cfg,
        train,
        starts,
        val,
        dev,
        net: Some(net),
        optim,
        progress,
        best_bytes,
        terms: [0.0; 5],
        report,
    };
    let schedule = Schedule::new(t.steps, t.validate_every, t.checkpoint_every, t.max_minutes);
    let ended = crate::neural::train_loop::run(&mut w, &schedule, checkpoint.map(|c| c.0))?;
    let inner = match &w.best_bytes {
        Some(b) => net_from_bytes::<B::InnerBackend>(cfg, b, dev, Path::new("best"))?,
        None => w.net().valid(),
    };
    Ok(Trained {
        net: inner,
        progress: w.progress,
        seconds: ended.seconds,
        stopped_early: ended.stopped_early,
    })
}

/// The model file of a trained interpolator.
pub fn model_file<B: Backend>(
    cfg: &InterpConfig,
    net: &WeightNet<B>,
    summary: serde_json::Value,
) -> NeuralFile {
    model_file_of(cfg, net_to_bytes(net), summary)
}

/// The model file of a trained interpolator's weights (as [`net_to_bytes`] gives them).
pub fn model_file_of(cfg: &InterpConfig, weights: Vec<u8>, summary: serde_json::Value) -> NeuralFile {
    NeuralFile {
        header: serde_json::json!({
            "kind": "interp",
            "method": "neural",
            "paper": "Lyu et al. 2020 (000), W_θ + Eq. 2–3",
            "config": cfg,
            "grid": cfg.grid,
            "training": summary,
            "build": crate::build_id(),
        }),
        sections: vec![("weights".into(), weights)],
    }
}

/// A training of W_θ as a task for any device ([`crate::neural::device::DeviceKind::run`]):
/// the untrained network scored first (with `score_untrained`), then [`train`].
pub struct Training<'a> {
    pub cfg: &'a InterpConfig,
    pub train: &'a dyn FrameSet,
    pub val: &'a [GridFrames],
    pub checkpoint: Option<(&'a Path, bool)>,
    pub score_untrained: bool,
    pub report: &'a mut dyn FnMut(&StepReport) -> bool,
}

/// What a [`Training`] gives back, off its device.
pub struct TrainedModel {
    /// The kept network's weights ([`model_file_of`]).
    pub weights: Vec<u8>,
    pub untrained: Option<Validation>,
    pub progress: Progress,
    pub seconds: f64,
    pub stopped_early: bool,
}

impl crate::neural::device::OnDevice for Training<'_> {
    type Output = TrainedModel;
    fn run<B: AutodiffBackend>(self, dev: B::Device) -> Result<TrainedModel> {
        let untrained = self.score_untrained.then(|| {
            validate_all(
                &init_net::<B::InnerBackend>(self.cfg, &dev),
                self.val,
                self.cfg.train.batch,
                self.cfg.net.space(),
                &dev,
            )
        });
        let t = train::<B>(self.cfg, self.train, self.val, &dev, self.checkpoint, self.report)?;
        Ok(TrainedModel {
            weights: net_to_bytes(&t.net),
            untrained,
            progress: t.progress,
            seconds: t.seconds,
            stopped_early: t.stopped_early,
        })
    }
}

/// The W_θ training config in a model file's header (refusing files of another kind).
fn header_config(f: &NeuralFile, path: &Path) -> Result<InterpConfig> {
    let bad = |m: &str| Error::Invalid(format!("{}: {m}", path.display()));
    if f.header["kind"] != "interp" {
        return Err(bad(&format!(
            "not a neural interpolator model (kind {})",
            f.header["kind"]
        )));
    }
    let cfg: InterpConfig = serde_json::from_value(f.header["config"].clone())
        .map_err(|e| bad(&format!("bad config in the header: {e}")))?;
    cfg.validate().map_err(|e| bad(&e.to_string()))?;
    Ok(cfg)
}

/// The training config a model file was trained with, its generator's options in `displace`
/// when the file has one (without reading the weights).
pub fn model_config(path: &Path) -> Result<InterpConfig> {
    let f = NeuralFile::read(path)?;
    let mut cfg = header_config(&f, path)?;
    cfg.displace = crate::neural::displace::train::generator_options(&f, path)?;
    Ok(cfg)
}

/// Reads a model file: its config and network.
pub fn load_model<B: Backend>(
    path: &Path,
    dev: &B::Device,
) -> Result<(InterpConfig, WeightNet<B>, serde_json::Value)> {
    let f = NeuralFile::read(path)?;
    let bad = |m: &str| Error::Invalid(format!("{}: {m}", path.display()));
    let cfg = header_config(&f, path)?;
    let net = net_from_bytes(
        &cfg,
        f.section("weights").ok_or_else(|| bad("no weights"))?,
        dev,
        path,
    )?;
    Ok((cfg, net, f.header))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(net: &str) -> Result<InterpConfig> {
        let text = format!("[grid]\nn = 32\nstride = 4\npoints = 8\n[net]\n{net}\n");
        let c: InterpConfig = toml::from_str(&text).map_err(|e| Error::Invalid(e.to_string()))?;
        c.validate()?;
        Ok(c)
    }

    /// `offset_share` is stored as λ of the offsets' and carried candidates, defaults to the
    /// whole offset (models written before the key load as they were trained), and is refused
    /// out of [0, 1] or with `positions`, which carries no offset.
    #[test]
    fn the_offset_share_is_a_checked_net_key() {
        let c = parse("blend = \"offsets\"\noffset_share = 0.5").unwrap();
        assert_eq!(c.net.space(), Space::fixed(Blend::Offsets, 0.5));
        assert_eq!(c.net().learned_share, None);
        assert_eq!(parse("blend = \"carried\"").unwrap().net.space().share, 1.0);
        assert_eq!(parse("").unwrap().net.space(), Space::full(Blend::Positions));
        for bad in [
            "blend = \"offsets\"\noffset_share = 1.5",
            "blend = \"offsets\"\noffset_share = -0.1",
            "blend = \"offsets\"\noffset_share = nan",
            "offset_share = 0.5",
        ] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.contains("offset_share"), "{bad}: {e}");
        }
    }

    /// `learn_share` makes λ per particle, centred on `offset_share` (the network's 17th
    /// channel's prior); it needs an offset to share and a prior strictly between the ends.
    #[test]
    fn a_learned_share_is_a_checked_net_key() {
        let c = parse("blend = \"offsets\"\noffset_share = 0.25\nlearn_share = true").unwrap();
        let space = c.net.space();
        assert!(space.learned && space.share == 0.25 && space.blend == Blend::Offsets);
        assert_eq!(c.net().learned_share, Some(0.25));
        for (bad, key) in [
            ("learn_share = true", "learn_share"),
            ("blend = \"offsets\"\nlearn_share = true", "offset_share"),
            (
                "blend = \"carried\"\noffset_share = 0.0\nlearn_share = true",
                "offset_share",
            ),
        ] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.contains(key), "{bad}: {e}");
        }
    }
}
