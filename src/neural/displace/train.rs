//! Training F_β against D_γ (000 §4.3, Eq. 10), apart from the models: W_θ is trained first and
//! stays fixed; each step draws one batch of consecutive frames of one crop (seeded by (seed,
//! step), so a resumed run draws what the uninterrupted run would have), updates D_γ
//! `critic_steps` times (paper: twice) and F_β once, with Adam at lr 1e-3 (000 §5.2).
//!
//! Losses (the non-saturating form of Eq. 10, whose printed form has s̃ in both terms; the first
//! is the ground truth ŝ):
//! - D_γ: −log σ(D(E(ŝ))) − log σ(−D(E(s̃))), s̃ = s + Δs with Δs held fixed;
//! - F_β: `adversarial`·(−log σ(D(E(s̃)))) + `data`·‖s̃ − ŝ‖₁ (per particle, empty cells masked).
//!
//! The L1 term is tress's addition (000 trains F_β by the adversarial term alone): it keeps the
//! displacement anchored to the simulation the way super-resolution GANs (tempoGAN, 000 ref. 33)
//! do; `data = 0` is the paper's loss.

use std::path::Path;

use burn::module::AutodiffModule;
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{Adam, AdamConfig, GradientsParams, Optimizer};
use burn::prelude::*;
use burn::record::Recorder;
use burn::tensor::activation::log_sigmoid;
use burn::tensor::backend::AutodiffBackend;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::descriptor::descriptor;
use super::model::{Critic, CriticConfig, DisplaceNet, DisplaceNetConfig};
use crate::error::{Error, Result};
use crate::neural::data::{Batch, GridFrames, channels_first};
use crate::neural::file::{NeuralFile, Rec, module_from_bytes, module_to_bytes, seeded_init};
use crate::neural::grid::UNIT_CM;
use crate::neural::interp::InterpConfig;
use crate::neural::interp::carry::Space;
use crate::neural::interp::model::{WeightNet, interpolate, neighbourhood};
use crate::neural::train_loop::{Schedule, Standing, Steps};

/// The `[displace]` section of a training config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DisplaceOptions {
    /// Generator updates (0: no displacement generator).
    pub steps: usize,
    /// F_β's hidden channels (paper 32).
    pub channels: usize,
    /// D_γ's first-layer channels, doubling per layer (paper 32).
    pub critic_channels: usize,
    /// D_γ updates per F_β update (paper 2).
    pub critic_steps: usize,
    pub lr: f64,
    /// F_β's learning rate when it differs from D_γ's (`lr`); 0 holds the generator still.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generator_lr: Option<f64>,
    /// Weight of F_β's adversarial loss.
    pub adversarial: f64,
    /// Weight of F_β's L1 loss toward the ground truth (tress's addition; 0 = the paper's loss).
    pub data: f64,
    pub seed: u64,
    pub validate_every: usize,
    pub checkpoint_every: usize,
    /// Stop after this many minutes (the best generator so far is kept).
    pub max_minutes: Option<f64>,
}

impl Default for DisplaceOptions {
    fn default() -> Self {
        DisplaceOptions {
            steps: 300,
            channels: 32,
            critic_channels: 32,
            critic_steps: 2,
            lr: 1e-3,
            generator_lr: None,
            adversarial: 0.01,
            data: 1.0,
            seed: 1,
            validate_every: 50,
            checkpoint_every: 50,
            max_minutes: None,
        }
    }
}

impl DisplaceOptions {
    pub fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::Invalid(format!("training config: `displace.{m}")));
        if self.channels < 2 || self.channels > 512 {
            return bad("channels` must be 2 to 512");
        }
        if self.critic_channels == 0 || self.critic_channels > 64 {
            return bad("critic_channels` must be 1 to 64");
        }
        if self.critic_steps == 0 || self.critic_steps > 16 {
            return bad("critic_steps` must be 1 to 16");
        }
        if !(self.lr > 0.0 && self.lr < 1.0) {
            return bad("lr` must be in (0, 1)");
        }
        if self.generator_lr.is_some_and(|l| !(0.0..1.0).contains(&l)) {
            return bad("generator_lr` must be in [0, 1)");
        }
        let weight = |w: f64| w.is_finite() && (0.0..=1e6).contains(&w);
        if !weight(self.adversarial) || !weight(self.data) || self.adversarial + self.data == 0.0 {
            return bad("adversarial` and `displace.data` must be within [0, 1e6], not both 0");
        }
        if self.max_minutes.is_some_and(|m| !(m > 0.0 && m.is_finite())) {
            return bad("max_minutes` must be positive");
        }
        Ok(())
    }

    /// Whether the generator and critic fit `grid`: a guide stride of 2 to 8 (the two
    /// transposed convolutions), crops of at least 16 cells, strands of at least 5 particles.
    pub fn check_grid(&self, grid: &crate::neural::grid::GridSpec) -> Result<()> {
        if grid.stride > 8 || grid.n < grid.stride + 16 || grid.points < 5 {
            return Err(Error::Invalid(format!(
                "the displacement generator needs a guide stride of 2 to 8, crops of at least 16 cells (grid.n ≥ stride + 16) and 5+ particles per strand; this grid is n {}, stride {}, {} particles (set `displace.steps = 0` or `[neural] displace_steps = 0` to go without it)",
                grid.n, grid.stride, grid.points
            )));
        }
        Ok(())
    }

    pub fn generator(&self, cfg: &InterpConfig) -> DisplaceNetConfig {
        let levels = cfg.grid.levels();
        DisplaceNetConfig::new(levels, 4 << levels)
            .with_channels(self.channels)
            .with_slope(cfg.net.slope)
    }

    pub fn critic(&self, cfg: &InterpConfig) -> CriticConfig {
        CriticConfig::new(cfg.grid.n - cfg.grid.stride, cfg.grid.points)
            .with_channels(self.critic_channels)
            .with_slope(cfg.net.slope)
    }
}

/// Validation (full grid, ground-truth guides), cm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DisplaceValidation {
    /// The interpolator alone.
    pub interp_rmse_cm: f64,
    /// With the displacement added.
    pub rmse_cm: f64,
    /// Root mean square of the displacement.
    pub displacement_rms_cm: f64,
}

impl std::fmt::Display for DisplaceValidation {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "RMSE {:.3} cm with displacement (interpolator alone {:.3}), displacement {:.3} cm rms",
            self.rmse_cm, self.interp_rmse_cm, self.displacement_rms_cm
        )
    }
}

/// Scores F_β on every frame of `data`.
pub fn validate<B: Backend>(
    interp: &WeightNet<B>,
    fnet: &DisplaceNet<B>,
    data: &GridFrames,
    batch: usize,
    space: Space,
    dev: &B::Device,
) -> DisplaceValidation {
    let n = data.grid.spec.n;
    let cells = data.grid.occupied.iter().filter(|&&o| o).count().max(1) as f64;
    let w = data.grid.spec.points as f64;
    let (mut se, mut se_i, mut dd, mut count) = (0f64, 0f64, 0f64, 0usize);
    let mut first = 0;
    let mut rest_f = None;
    while first < data.len() {
        let b = batch.min(data.len() - first);
        let bt = data.batch::<B>(first, b, (0, 0), n, space, dev);
        let rf = rest_f.get_or_insert_with(|| interp.rest_features(channels_first(bt.rest.clone())));
        let (s, _) = interpolated(interp, rf, &bt, data.grid.spec.stride);
        let ds = displacement(fnet, &rf.coarse, &bt);
        let sq = |x: Tensor<B, 5>, y: Tensor<B, 5>| -> f64 {
            let v: f32 = ((x - y).powi_scalar(2).sum_dim(4) * bt.mask.clone())
                .sum()
                .into_scalar()
                .elem();
            v as f64
        };
        se_i += sq(s.clone(), bt.target.clone());
        se += sq(s + ds.clone(), bt.target.clone());
        dd += sq(ds.clone(), ds.zeros_like());
        count += b;
        first += b;
    }
    let denom = cells * w * count as f64;
    let cm = |x: f64| (x / denom).sqrt() * UNIT_CM as f64;
    DisplaceValidation {
        interp_rmse_cm: cm(se_i),
        rmse_cm: cm(se),
        displacement_rms_cm: cm(dd),
    }
}

/// W_θ's interpolation of a batch and the guides' neighbourhood (the descriptor's guides:
/// the guide particles themselves, whatever L blends).
fn interpolated<B: Backend>(
    interp: &WeightNet<B>,
    rest: &crate::neural::interp::model::RestFeatures<B>,
    bt: &Batch<B>,
    stride: usize,
) -> (Tensor<B, 5>, Tensor<B, 6>) {
    let pr = interp.predict(rest, channels_first(bt.guides.clone()));
    let hood = neighbourhood(bt.guides.clone(), stride);
    (interpolate(pr.omega, bt.hood.at(pr.share.as_ref())), hood)
}

/// Δs `[b, u, v, w, 3]` of a batch.
fn displacement<B: Backend>(fnet: &DisplaceNet<B>, coarse: &Tensor<B, 5>, bt: &Batch<B>) -> Tensor<B, 5> {
    fnet.forward(coarse.clone(), channels_first(bt.guides.clone()))
        .permute([0, 2, 3, 4, 1])
}

fn lift<B: AutodiffBackend, const D: usize>(t: Tensor<B::InnerBackend, D>) -> Tensor<B, D> {
    Tensor::from_inner(t)
}

/// Where a displacement training stands (saved in checkpoints); its history keeps (step, critic
/// loss, generator adversarial loss, generator L1 in cm).
pub type DisplaceProgress = Standing<DisplaceValidation, (usize, f32, f32, f32)>;

/// One line of progress.
pub struct DisplaceStep<'a> {
    pub step: usize,
    pub steps: usize,
    /// D_γ's loss (mean over its updates this step).
    pub critic: f32,
    /// F_β's adversarial term and its L1 (cm).
    pub adversarial: f32,
    pub l1_cm: f32,
    pub seconds_per_step: f64,
    pub validation: Option<&'a DisplaceValidation>,
}

pub struct TrainedDisplace<B: Backend> {
    pub fnet: DisplaceNet<B>,
    pub progress: DisplaceProgress,
    pub seconds: f64,
    pub stopped_early: bool,
}

fn init_gen<B: Backend>(cfg: &InterpConfig, o: &DisplaceOptions, dev: &B::Device) -> DisplaceNet<B> {
    seeded_init(o.seed, 10_000, dev, || o.generator(cfg).init::<B>(dev))
}

fn init_critic<B: Backend>(cfg: &InterpConfig, o: &DisplaceOptions, dev: &B::Device) -> Critic<B> {
    seeded_init(o.seed.wrapping_add(1), 20_000, dev, || {
        o.critic(cfg).init::<B>(dev)
    })
}

/// F_β's weights from a section's bytes.
pub fn gen_from_bytes<B: Backend>(
    cfg: &InterpConfig,
    o: &DisplaceOptions,
    bytes: &[u8],
    dev: &B::Device,
    path: &Path,
) -> Result<DisplaceNet<B>> {
    module_from_bytes(o.generator(cfg).init::<B>(dev), bytes, dev, path)
}

type GenOptimizer<B> = OptimizerAdaptor<Adam, DisplaceNet<B>, B>;
type CriticOptimizer<B> = OptimizerAdaptor<Adam, Critic<B>, B>;

/// The generator's and critic's training state between steps
/// ([`crate::neural::train_loop`]).
struct FTraining<'a, B: AutodiffBackend> {
    cfg: &'a InterpConfig,
    o: &'a DisplaceOptions,
    interp: &'a WeightNet<B::InnerBackend>,
    train: &'a GridFrames,
    val: &'a GridFrames,
    /// What the generator is trained against (W_θ's weights and the batch), in checkpoints.
    against: String,
    /// Taken while a step updates them.
    fnet: Option<DisplaceNet<B>>,
    critic: Option<Critic<B>>,
    opt_g: GenOptimizer<B>,
    opt_d: CriticOptimizer<B>,
    progress: DisplaceProgress,
    best_bytes: Option<Vec<u8>>,
    /// W_θ's rest features of each crop corner (k² of them), computed once each.
    rest_f: Vec<Option<crate::neural::interp::model::RestFeatures<B::InnerBackend>>>,
    dev: &'a B::Device,
    report: &'a mut dyn FnMut(&DisplaceStep) -> bool,
}

impl<B: AutodiffBackend> FTraining<'_, B> {
    fn fnet(&self) -> &DisplaceNet<B> {
        self.fnet.as_ref().expect("the generator is back after each step")
    }
}

impl<B: AutodiffBackend> Steps for FTraining<'_, B> {
    type Validation = DisplaceValidation;
    type History = (usize, f32, f32, f32);

    fn standing(&mut self) -> &mut DisplaceProgress {
        &mut self.progress
    }

    /// One batch of consecutive frames of one crop: D_γ `critic_steps` times with the
    /// generator's current output held fixed, then F_β once (Eq. 10).
    fn step(&mut self, step: usize) -> Result<()> {
        let (cfg, o) = (self.cfg, self.o);
        let batch = cfg.train.batch;
        let k = cfg.grid.stride;
        let size = cfg.grid.n - k;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
            o.seed ^ (step as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
        );
        let first = rng.random_range(0..=self.train.len() - batch);
        let corner = (rng.random_range(0..k), rng.random_range(0..k));
        // W_θ, fixed, on the inner backend.
        let bt = self
            .train
            .batch::<B::InnerBackend>(first, batch, corner, size, cfg.net.space(), self.dev);
        // W_θ's rest features depend only on the crop: once per corner (k² of them).
        let interp = self.interp;
        let rf = self.rest_f[corner.0 * k + corner.1]
            .get_or_insert_with(|| interp.rest_features(channels_first(bt.rest.clone())));
        let (s, hood) = interpolated(interp, rf, &bt, k);
        let coarse = rf.coarse.clone();
        let real = lift::<B, 5>(descriptor(bt.target.clone(), hood.clone()));
        let mask = lift::<B, 5>(bt.mask.clone());
        let target = lift::<B, 5>(bt.target.clone());
        let guides = lift::<B, 5>(channels_first(bt.guides.clone()));
        let (s_a, hood_a, coarse_a) = (
            lift::<B, 5>(s.clone()),
            lift::<B, 6>(hood.clone()),
            lift::<B, 5>(coarse),
        );
        let fnet = self.fnet.take().expect("the generator is back after each step");
        let mut critic = self.critic.take().expect("the critic is back after each step");
        // D_γ: `critic_steps` updates with the generator's current output held fixed.
        let fixed = {
            let ds = fnet
                .valid()
                .forward(rf.coarse.clone(), channels_first(bt.guides.clone()));
            lift::<B, 5>(descriptor(s.clone() + ds.permute([0, 2, 3, 4, 1]), hood.clone()))
        };
        let mut critic_loss = 0f32;
        for _ in 0..o.critic_steps {
            let l = (-log_sigmoid(critic.forward(real.clone()))
                - log_sigmoid(-critic.forward(fixed.clone())))
            .mean();
            critic_loss += l.clone().into_scalar().elem::<f32>() / o.critic_steps as f32;
            let grads = GradientsParams::from_grads(l.backward(), &critic);
            critic = self.opt_d.step(o.lr, critic, grads);
        }
        // F_β: one update.
        let ds = fnet.forward(coarse_a, guides).permute([0, 2, 3, 4, 1]);
        let fake = s_a + ds;
        let adv = (-log_sigmoid(critic.forward(descriptor(fake.clone(), hood_a)))).mean();
        let [b, _, _, w, _] = fake.dims();
        let per_particle = mask.clone().sum() * (b * w) as f64;
        let l1 = ((fake - target).abs().sum_dim(4) * mask).sum() / per_particle;
        let total = adv.clone() * o.adversarial + l1.clone() * o.data;
        let (adv_v, l1_v): (f32, f32) = (adv.into_scalar().elem(), l1.into_scalar().elem());
        if !(critic_loss.is_finite() && adv_v.is_finite() && l1_v.is_finite()) {
            return Err(Error::Runtime(format!(
                "displacement training diverged at step {step} (a loss is not finite); lower `displace.lr`"
            )));
        }
        let grads = GradientsParams::from_grads(total.backward(), &fnet);
        self.fnet = Some(self.opt_g.step(o.generator_lr.unwrap_or(o.lr), fnet, grads));
        self.critic = Some(critic);
        self.progress
            .history
            .push((step, critic_loss, adv_v, l1_v * UNIT_CM));
        Ok(())
    }

    fn validate(&mut self) -> Result<Option<DisplaceValidation>> {
        let batch = self.cfg.train.batch;
        Ok(Some(validate(
            self.interp,
            &self.fnet().valid(),
            self.val,
            batch,
            self.cfg.net.space(),
            self.dev,
        )))
    }

    fn better(&self, v: &DisplaceValidation, best: &DisplaceValidation) -> bool {
        v.rmse_cm < best.rmse_cm
    }

    fn keep_best(&mut self) -> Result<()> {
        self.best_bytes = Some(module_to_bytes(&self.fnet().valid()));
        Ok(())
    }

    fn report(
        &mut self,
        step: usize,
        seconds_per_step: f64,
        validation: Option<&DisplaceValidation>,
    ) -> bool {
        let &(_, critic, adversarial, l1_cm) = self.progress.history.last().expect("a step was taken");
        (self.report)(&DisplaceStep {
            step,
            steps: self.o.steps,
            critic,
            adversarial,
            l1_cm,
            seconds_per_step,
            validation,
        })
    }

    fn checkpoint(&mut self, path: &Path) -> Result<()> {
        let state = |e: burn::record::RecorderError| Error::Runtime(format!("optimizer state: {e}"));
        let mut sections = vec![
            ("generator".to_string(), module_to_bytes(self.fnet())),
            (
                "critic".to_string(),
                module_to_bytes(self.critic.as_ref().expect("the critic is back after each step")),
            ),
            (
                "generator_optimizer".to_string(),
                Rec::default().record(self.opt_g.to_record(), ()).map_err(state)?,
            ),
            (
                "critic_optimizer".to_string(),
                Rec::default().record(self.opt_d.to_record(), ()).map_err(state)?,
            ),
        ];
        if let Some(bb) = &self.best_bytes {
            sections.push(("best".into(), bb.clone()));
        }
        NeuralFile {
            header: serde_json::json!({
                "kind": "displace-checkpoint",
                "displace": self.o,
                "grid": self.cfg.grid,
                "against": self.against,
                "progress": self.progress,
                "build": crate::build_id(),
            }),
            sections,
        }
        .write(path)
    }
}

/// What the generator is trained against: W_θ's weights and the batch (a checkpoint made
/// against another W_θ must not be resumed).
fn against<B: Backend>(cfg: &InterpConfig, interp: &WeightNet<B>) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(module_to_bytes(interp));
    h.update((cfg.train.batch as u64).to_le_bytes());
    format!("{:x}", h.finalize())
}

/// Resumes `f` from the checkpoint at `path`, refusing one made with other options or against
/// another interpolator.
fn resume<B: AutodiffBackend>(f: &mut FTraining<B>, path: &Path) -> Result<()> {
    let file = NeuralFile::read(path)?;
    let bad = |m: &str| Error::Invalid(format!("{}: {m}", path.display()));
    let saved: DisplaceOptions = serde_json::from_value(file.header["displace"].clone())
        .map_err(|e| bad(&format!("no displacement options: {e}")))?;
    let same = |x: &DisplaceOptions| DisplaceOptions {
        steps: 0,
        max_minutes: None,
        ..x.clone()
    };
    if same(&saved) != same(f.o) || file.header["grid"] != serde_json::json!(f.cfg.grid) {
        return Err(bad(
            "the checkpoint was made with other displacement options; remove it or train with those",
        ));
    }
    if file.header["against"] != serde_json::json!(f.against) {
        return Err(bad(
            "the checkpoint was trained against another interpolator (or batch); remove it to start over",
        ));
    }
    f.progress = serde_json::from_value(file.header["progress"].clone())
        .map_err(|e| bad(&format!("no progress: {e}")))?;
    let section = |n: &str| file.section(n).ok_or_else(|| bad(&format!("no {n}")));
    let dev = f.dev;
    f.fnet = Some(module_from_bytes(
        f.fnet.take().expect("a generator"),
        section("generator")?,
        dev,
        path,
    )?);
    f.critic = Some(module_from_bytes(
        f.critic.take().expect("a critic"),
        section("critic")?,
        dev,
        path,
    )?);
    let load = |n: &str| {
        Recorder::<B>::load(&Rec::default(), section(n)?.to_vec(), dev)
            .map_err(|e| bad(&format!("the {n} state does not load: {e}")))
    };
    f.opt_g = f.opt_g.clone().load_record(load("generator_optimizer")?);
    f.opt_d = f.opt_d.clone().load_record(load("critic_optimizer")?);
    f.best_bytes = file.section("best").map(|b| b.to_vec());
    Ok(())
}

/// Trains F_β against D_γ with W_θ (`interp`) fixed. Checkpoints as the interpolator's training
/// (`checkpoint`: path and whether to resume from it).
#[allow(clippy::too_many_arguments)]
pub fn train<B: AutodiffBackend>(
    cfg: &InterpConfig,
    o: &DisplaceOptions,
    interp: &WeightNet<B::InnerBackend>,
    train: &GridFrames,
    val: &GridFrames,
    dev: &B::Device,
    checkpoint: Option<(&Path, bool)>,
    report: &mut dyn FnMut(&DisplaceStep) -> bool,
) -> Result<TrainedDisplace<B::InnerBackend>> {
    o.validate()?;
    o.check_grid(&cfg.grid)?;
    let spec = cfg.grid;
    let against = against(cfg, interp);
    if train.grid.spec != spec || val.grid.spec != spec {
        return Err(Error::Invalid("the data's grid is not the config's".into()));
    }
    let batch = cfg.train.batch;
    if train.len() < batch {
        return Err(Error::Invalid(format!(
            "{} training frames; a step needs {batch} consecutive frames",
            train.len()
        )));
    }
    let k = spec.stride;
    let mut f = FTraining {
        cfg,
        o,
        interp,
        train,
        val,
        against,
        fnet: Some(init_gen::<B>(cfg, o, dev)),
        critic: Some(init_critic::<B>(cfg, o, dev)),
        opt_g: AdamConfig::new().with_epsilon(1e-8).init::<B, DisplaceNet<B>>(),
        opt_d: AdamConfig::new().with_epsilon(1e-8).init::<B, Critic<B>>(),
        progress: DisplaceProgress::default(),
        best_bytes: None,
        rest_f: vec![None; k * k],
        dev,
        report,
    };
    if let Some((path, true)) = checkpoint
        && path.exists()
    {
        resume(&mut f, path)?;
    }
    let schedule = Schedule::new(o.steps, o.validate_every, o.checkpoint_every, o.max_minutes);
    let ended = crate::neural::train_loop::run(&mut f, &schedule, checkpoint.map(|c| c.0))?;
    let fnet = match &f.best_bytes {
        Some(bb) => gen_from_bytes::<B::InnerBackend>(cfg, o, bb, dev, Path::new("best"))?,
        None => f.fnet().valid(),
    };
    Ok(TrainedDisplace {
        fnet,
        progress: f.progress,
        seconds: ended.seconds,
        stopped_early: ended.stopped_early,
    })
}

/// `model` (an interpolator's model file) with the generator added: section `displace`,
/// header `displace` (options and training summary).
pub fn with_generator<B: Backend>(
    model: NeuralFile,
    o: &DisplaceOptions,
    fnet: &DisplaceNet<B>,
    summary: serde_json::Value,
) -> NeuralFile {
    with_generator_of(model, o, module_to_bytes(fnet), summary)
}

/// [`with_generator`] from the generator's bytes.
pub fn with_generator_of(
    mut model: NeuralFile,
    o: &DisplaceOptions,
    generator: Vec<u8>,
    summary: serde_json::Value,
) -> NeuralFile {
    model.sections.retain(|(n, _)| n != "displace");
    model.sections.push(("displace".into(), generator));
    model.header["displace"] = serde_json::json!({
        "options": o,
        "paper": "Lyu et al. 2020 (000) §4.3, F_β trained against D_γ (Eq. 10)",
        "training": summary,
    });
    model
}

/// The generator of a model file, if it has one.
pub fn load_generator<B: Backend>(
    f: &NeuralFile,
    cfg: &InterpConfig,
    dev: &B::Device,
    path: &Path,
) -> Result<Option<DisplaceNet<B>>> {
    let (Some(bytes), Some(o)) = (f.section("displace"), generator_options(f, path)?) else {
        return Ok(None);
    };
    gen_from_bytes(cfg, &o, bytes, dev, path).map(Some)
}

/// The options of a model file's generator, if it has one (without reading its weights).
pub fn generator_options(f: &NeuralFile, path: &Path) -> Result<Option<DisplaceOptions>> {
    if f.section("displace").is_none() {
        return Ok(None);
    }
    let bad = |m: &str| Error::Invalid(format!("{}: {m}", path.display()));
    let o: DisplaceOptions = serde_json::from_value(f.header["displace"]["options"].clone())
        .map_err(|e| bad(&format!("bad displacement options in the header: {e}")))?;
    o.validate().map_err(|e| bad(&e.to_string()))?;
    Ok(Some(o))
}

/// A training of F_β as a task for any device ([`crate::neural::device::DeviceKind::run`]):
/// W_θ is read from its model file onto the device, then [`train`].
pub struct DisplaceTraining<'a> {
    pub model: &'a Path,
    pub o: &'a DisplaceOptions,
    pub train: &'a GridFrames,
    pub val: &'a GridFrames,
    pub checkpoint: Option<(&'a Path, bool)>,
    pub report: &'a mut dyn FnMut(&DisplaceStep) -> bool,
}

/// What a [`DisplaceTraining`] gives back, off its device.
pub struct TrainedGenerator {
    /// The kept generator's weights ([`with_generator_of`]).
    pub generator: Vec<u8>,
    pub progress: DisplaceProgress,
    pub seconds: f64,
    pub stopped_early: bool,
}

impl crate::neural::device::OnDevice for DisplaceTraining<'_> {
    type Output = TrainedGenerator;
    fn run<B: AutodiffBackend>(self, dev: B::Device) -> Result<TrainedGenerator> {
        let (cfg, net, _) = crate::neural::interp::load_model::<B::InnerBackend>(self.model, &dev)?;
        let t = train::<B>(
            &cfg,
            self.o,
            &net,
            self.train,
            self.val,
            &dev,
            self.checkpoint,
            self.report,
        )?;
        Ok(TrainedGenerator {
            generator: module_to_bytes(&t.fnet),
            progress: t.progress,
            seconds: t.seconds,
            stopped_early: t.stopped_early,
        })
    }
}
