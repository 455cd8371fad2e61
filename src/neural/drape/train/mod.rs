//! Training the neural drape (003 §3.2, §3.4–3.5), in 003's two stages and with no simulation
//! data:
//!
//! 1. **Groom autoencoder**: the encoder and a decoder of the rest textures of every training
//!    groom, masked mean squared error on the root-relative positions; the encoder is then
//!    frozen and each groom's 16-d latent code kept.
//! 2. **Deformation decoder**: each step draws `batch` samples (a training groom and a head
//!    rotation uniform in the config's ranges) and, for Eq. 14, `pose_frames` rotations spaced
//!    `pose_step_deg` apart along a random direction around it (tress has no motion-capture
//!    set; a short continuous sweep stands in for 003's consecutive frames). The loss is the drape
//!    energy (Eq. 1 less Eq. 14, [`super::energy`]) of every frame, averaged, plus Eq. 14's
//!    `pose_reg · Σ_f ‖x̄_def − x_def^f‖²` per strand. Adam with gradient-norm clipping at 1
//!    (the cubic penalties spike) and a cosine decay of the step to a tenth.
//!
//! Validation: fixed random rotations of the same ranges (never drawn in training: the ranges
//! are continuous and the validation generator is separate), for the training grooms and for
//! the grooms marked `held_out`, scored by energy and 003 Table 1's metrics; the model kept is
//! the one with the lowest validation energy on the training grooms.
//!
//! Every draw comes from a generator seeded with (seed, step), and the weights from burn's
//! generator seeded with `seed`, so the same config gives the same model bytes.

use std::path::Path;
use std::time::Instant;

use burn::grad_clipping::GradientClippingConfig;
use burn::module::AutodiffModule;
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{Adam, AdamConfig, GradientsParams, Optimizer};
use burn::prelude::*;
use burn::record::Recorder;
use burn::tensor::backend::AutodiffBackend;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::config::DrapeTrainConfig;
use super::energy::{Fixed, energy_here};
use super::model::{DeformDecoder, GroomDecoder, GroomEncoder, UNIT_CM, condition};
use super::network::{TrainedDrape, decode, latent_of, row_positions};
use super::{DrapeSubject, HeadRotation};
use crate::collide::BodyShape;
use crate::error::{Error, Result};
use crate::neural::file::{NeuralFile, Rec, module_from_bytes, module_to_bytes, seeded_init};
use crate::neural::train_loop::{Schedule, Standing, Steps};
use validation::{Validator, rotation};

pub use validation::{DrapeValidation, GroupScore};

/// What a training step reports.
pub struct DrapeStep {
    pub stage: &'static str,
    pub step: usize,
    pub steps: usize,
    pub loss: f64,
    /// Mean drape energy per strand of the step's frames (decoder stage).
    pub energy: f64,
    pub pose_reg: f64,
    pub seconds_per_step: f64,
    pub validation: Option<DrapeValidation>,
}

type AeModules<B> = (GroomEncoder<B>, GroomDecoder<B>);

/// Stage 1's state between steps: the encoder and decoder of the rest textures.
struct AeTraining<'a, B: AutodiffBackend> {
    cfg: &'a DrapeTrainConfig,
    modules: Option<AeModules<B>>,
    optim: OptimizerAdaptor<Adam, AeModules<B>, B>,
    input: Tensor<B, 4>,
    target: Tensor<B, 4>,
    mask: Tensor<B, 4>,
    /// Occupied texels.
    occupied: f64,
    loss: f64,
    standing: Standing<(), ()>,
    report: &'a mut dyn FnMut(&DrapeStep) -> bool,
}

impl<B: AutodiffBackend> Steps for AeTraining<'_, B> {
    type Validation = ();
    type History = ();

    fn standing(&mut self) -> &mut Standing<(), ()> {
        &mut self.standing
    }

    /// The masked mean squared error of the decoded rest textures.
    fn step(&mut self, _: usize) -> Result<()> {
        let c = 3 * self.cfg.net().points;
        let (encoder, groom_decoder) = self.modules.take().expect("the modules are back after each step");
        let out = groom_decoder.forward(encoder.forward(self.input.clone()));
        let err = (out - self.target.clone()) * self.mask.clone();
        let loss = (err.clone() * err).sum() / (self.occupied * c as f64).max(1.0);
        self.loss = loss.clone().into_scalar().elem::<f64>();
        let modules = (encoder, groom_decoder);
        let grads = GradientsParams::from_grads(loss.backward(), &modules);
        self.modules = Some(self.optim.step(self.cfg.autoencoder.lr, modules, grads));
        Ok(())
    }

    fn report(&mut self, step: usize, seconds_per_step: f64, _: Option<&()>) -> bool {
        (self.report)(&DrapeStep {
            stage: "autoencoder",
            step,
            steps: self.cfg.autoencoder.steps,
            loss: self.loss,
            energy: f64::NAN,
            pose_reg: 0.0,
            seconds_per_step,
            validation: None,
        })
    }
}

/// Stage 1: the groom autoencoder on the training grooms' rest textures; returns the frozen
/// encoder and the last masked MSE.
fn train_autoencoder<B: AutodiffBackend>(
    cfg: &DrapeTrainConfig,
    subjects: &[DrapeSubject],
    training: &[usize],
    dev: &B::Device,
    report: &mut dyn FnMut(&DrapeStep) -> bool,
) -> Result<(GroomEncoder<B::InnerBackend>, f64)> {
    let (t, net) = (&cfg.train, cfg.net());
    let encoder = seeded_init(t.seed, 0, dev, || net.init_encoder::<B>(dev));
    let groom_decoder: GroomDecoder<B> =
        seeded_init(t.seed + 1, 1000, dev, || net.init_groom_decoder::<B>(dev));
    let textures: Vec<Tensor<B, 4>> = training
        .iter()
        .map(|&i| {
            let (v, shape) = subjects[i].groom.rest_texture();
            Tensor::from_data(TensorData::new(v, shape), dev)
        })
        .collect();
    let input = Tensor::cat(textures, 0);
    let c = 3 * net.points;
    let k = input.dims()[0];
    let target = input.clone().slice([0..k, 0..c]);
    let mask = input.clone().slice([0..k, c..c + 1]);
    let occupied: f64 = mask.clone().sum().into_scalar().elem::<f64>();
    let mut ae = AeTraining {
        cfg,
        modules: Some((encoder, groom_decoder)),
        optim: AdamConfig::new()
            .with_grad_clipping(Some(GradientClippingConfig::Norm(1.0)))
            .init::<B, AeModules<B>>(),
        input,
        target,
        mask,
        occupied,
        loss: f64::NAN,
        standing: Standing::default(),
        report,
    };
    crate::neural::train_loop::run(&mut ae, &Schedule::plain(cfg.autoencoder.steps), None)?;
    let (encoder, _) = ae.modules.take().expect("the modules are back after each step");
    Ok((encoder.valid(), ae.loss))
}

/// Where a decoder training stands (saved in checkpoints).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct DrapeProgress {
    step: usize,
    ae_loss: f64,
    history: Vec<serde_json::Value>,
    /// Validation energy, step and figures of the best decoder so far.
    best: Option<(f64, usize, DrapeValidation)>,
    /// The untrained decoder's validation.
    first: Option<DrapeValidation>,
}

/// A checkpoint's frozen encoder, decoder, optimizer state, best decoder and progress.
type Resumed<B> = (
    GroomEncoder<<B as AutodiffBackend>::InnerBackend>,
    DeformDecoder<B>,
    <OptimizerAdaptor<Adam, DeformDecoder<B>, B> as Optimizer<DeformDecoder<B>, B>>::Record,
    Option<DeformDecoder<<B as AutodiffBackend>::InnerBackend>>,
    DrapeProgress,
);

/// Reads a training checkpoint, refusing one of another training config (the time budget
/// may differ).
fn resume<B: AutodiffBackend>(cfg: &DrapeTrainConfig, path: &Path, dev: &B::Device) -> Result<Resumed<B>> {
    let net = cfg.net();
    let f = NeuralFile::read(path)?;
    let bad = |m: &str| Error::Invalid(format!("{}: {m}", path.display()));
    if f.header["kind"] != "drape-checkpoint" {
        return Err(bad("not a drape training checkpoint"));
    }
    let saved: DrapeTrainConfig = serde_json::from_value(f.header["config"].clone())
        .map_err(|e| bad(&format!("no training config: {e}")))?;
    let same = |c: &DrapeTrainConfig| {
        let mut c = c.clone();
        c.train.max_minutes = None;
        c
    };
    if same(&saved) != same(cfg) {
        return Err(bad(
            "the checkpoint was made with another training config; remove it or train with that config",
        ));
    }
    let progress: DrapeProgress = serde_json::from_value(f.header["progress"].clone())
        .map_err(|e| bad(&format!("no progress: {e}")))?;
    let section = |n: &str| f.section(n).ok_or_else(|| bad(&format!("no {n}")));
    let inner = Default::default();
    let encoder = module_from_bytes(
        net.init_encoder::<B::InnerBackend>(&inner),
        section("encoder")?,
        &inner,
        path,
    )?;
    let decoder = module_from_bytes(net.init_deform::<B>(dev), section("decoder")?, dev, path)?;
    let optimizer = Recorder::<B>::load(&Rec::default(), section("optimizer")?.to_vec(), dev)
        .map_err(|e| bad(&format!("the optimizer state does not load: {e}")))?;
    let best = match f.section("best") {
        Some(b) => Some(module_from_bytes(
            net.init_deform::<B::InnerBackend>(&inner),
            b,
            &inner,
            path,
        )?),
        None => None,
    };
    Ok((encoder, decoder, optimizer, best, progress))
}

/// Stage 2's state between steps: the deformation decoder trained by the drape energy.
struct DecoderTraining<'a, B: AutodiffBackend> {
    cfg: &'a DrapeTrainConfig,
    subjects: &'a [DrapeSubject],
    training: &'a [usize],
    /// Every groom's latent code, on the training backend.
    latents: Vec<Tensor<B, 2>>,
    dev: &'a B::Device,
    decoder: Option<DeformDecoder<B>>,
    optim: OptimizerAdaptor<Adam, DeformDecoder<B>, B>,
    validator: Validator<'a, B::InnerBackend>,
    standing: Standing<DrapeValidation, serde_json::Value>,
    best: Option<DeformDecoder<B::InnerBackend>>,
    /// The untrained decoder's validation.
    first: DrapeValidation,
    /// For checkpoints: the frozen encoder and its last loss.
    encoder: &'a GroomEncoder<B::InnerBackend>,
    ae_loss: f64,
    /// The last step's loss and its pose regularization.
    loss: (f64, f64),
    report: &'a mut dyn FnMut(&DrapeStep) -> bool,
}

impl<B: AutodiffBackend> DecoderTraining<'_, B> {
    fn decoder(&self) -> &DeformDecoder<B> {
        self.decoder
            .as_ref()
            .expect("the decoder is back after each step")
    }

    /// The step's samples: for each of `batch` draws (a training groom, a base rotation and a
    /// body shape), `pose_frames` rotations along a random direction around the base.
    fn samples(&self, rng: &mut rand::rngs::StdRng) -> (Vec<usize>, Vec<HeadRotation>) {
        let (cfg, t) = (self.cfg, &self.cfg.train);
        let frames = t.pose_frames;
        let mut rows = Vec::new();
        let mut rots = Vec::new();
        for _ in 0..t.batch {
            let g = self.training[rng.random_range(0..self.training.len())];
            let base = cfg.poses.draw(rng);
            let mut dir = [0.0f64; 3];
            for d in dir.iter_mut() {
                *d = rng.random::<f64>() * 2.0 - 1.0;
            }
            let norm = dir.iter().map(|d| d * d).sum::<f64>().sqrt().max(1e-9);
            // One body per sample: the sweep turns the head on it.
            let shape = cfg.shape.draw(rng);
            for f in 0..frames {
                let o = (f as f64 - (frames - 1) as f64 / 2.0) * t.pose_step_deg / norm;
                let v = cfg
                    .poses
                    .clamp([base[0] + o * dir[0], base[1] + o * dir[1], base[2] + o * dir[2]]);
                rows.push(g);
                rots.push(self.subjects[g].in_shape(&rotation(v, BodyShape::default()), &shape));
            }
        }
        (rows, rots)
    }

    /// The batch's loss: the mean drape energy of its frames, plus Eq. 14's regularization of
    /// each sample's deformations toward their mean (also returned alone).
    fn loss(
        &self,
        decoder: &DeformDecoder<B>,
        rows: &[usize],
        rots: &[HeadRotation],
    ) -> Result<(Tensor<B, 1>, f64)> {
        let (cfg, t, dev) = (self.cfg, &self.cfg.train, self.dev);
        let frames = t.pose_frames;
        let lat: Vec<Tensor<B, 2>> = rows.iter().map(|&g| self.latents[g].clone()).collect();
        let conditions: Vec<[f32; 6]> = rows
            .iter()
            .zip(rots)
            .map(|(&g, r)| condition(&self.subjects[g].shape_in(r), r))
            .collect();
        let tex = decode(decoder, &lat, &conditions);
        let mut energy_sum: Option<Tensor<B, 1>> = None;
        let mut reg_sum: Option<Tensor<B, 1>> = None;
        let mut sample_d: Vec<Tensor<B, 3>> = Vec::new();
        for (r, (&g, rot)) in rows.iter().zip(rots).enumerate() {
            let subject = &self.subjects[g];
            let pose = subject.pose(rot)?;
            let cp = pose.contact();
            let fixed = Fixed::<B>::new(&pose.posed, dev);
            let x = row_positions(
                cfg.net.output,
                tex.clone().narrow(0, r, 1),
                &subject.groom.cells,
                &fixed,
            );
            let (_, terms) = energy_here(x.clone(), &fixed, cp, &cfg.material);
            // Only the two penalties are read back, not every term.
            let energy = match t.balance {
                true => {
                    let read = |t: &Tensor<B, 1>| t.clone().into_scalar().elem::<f64>().max(0.0);
                    terms.total / (1.0 + read(&terms.body) + read(&terms.self_collision))
                }
                false => terms.total,
            };
            energy_sum = Some(match energy_sum {
                Some(e) => e + energy,
                None => energy,
            });
            sample_d.push(fixed.deformation(x));
            if sample_d.len() == frames {
                if frames > 1 && t.pose_reg > 0.0 {
                    let mean = Tensor::stack::<4>(sample_d.clone(), 0)
                        .mean_dim(0)
                        .squeeze_dim::<3>(0);
                    let mut reg = None;
                    for d in sample_d.drain(..) {
                        let e = d - mean.clone();
                        let v = (e.clone() * e).sum();
                        reg = Some(match reg {
                            Some(a) => a + v,
                            None => v,
                        });
                    }
                    let reg = reg.expect("frames > 1") * (t.pose_reg / subject.groom.strands().max(1) as f64);
                    reg_sum = Some(match reg_sum {
                        Some(a) => a + reg,
                        None => reg,
                    });
                }
                sample_d.clear();
            }
        }
        let n_rows = rows.len() as f64;
        let mut loss = energy_sum.expect("batch ≥ 1") / n_rows;
        let mut reg_value = 0.0;
        if let Some(r) = reg_sum {
            let r = r / t.batch as f64;
            reg_value = r.clone().into_scalar().elem::<f64>();
            loss = loss + r;
        }
        Ok((loss, reg_value))
    }
}

impl<B: AutodiffBackend> Steps for DecoderTraining<'_, B> {
    type Validation = DrapeValidation;
    type History = serde_json::Value;

    fn standing(&mut self) -> &mut Standing<DrapeValidation, serde_json::Value> {
        &mut self.standing
    }

    /// Adam with a cosine decay of the step to a tenth over the batch's loss.
    fn step(&mut self, step: usize) -> Result<()> {
        let t = &self.cfg.train;
        // Steps count from 1 in the draws and the schedule.
        let step = step + 1;
        let mut rng =
            rand::rngs::StdRng::seed_from_u64(t.seed.wrapping_mul(1_000_003).wrapping_add(step as u64));
        let (rows, rots) = self.samples(&mut rng);
        let decoder = self.decoder.take().expect("the decoder is back after each step");
        let (loss, reg_value) = self.loss(&decoder, &rows, &rots)?;
        let loss_value = loss.clone().into_scalar().elem::<f64>();
        let grads = GradientsParams::from_grads(loss.backward(), &decoder);
        let progress = step as f64 / t.steps.max(1) as f64;
        let lr = t.lr * (0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()));
        self.decoder = Some(self.optim.step(lr, decoder, grads));
        self.loss = (loss_value, reg_value);
        Ok(())
    }

    fn validate(&mut self) -> Result<Option<DrapeValidation>> {
        Ok(Some(self.validator.validate(&self.decoder().valid())?))
    }

    /// The lowest validation energy on the training grooms.
    fn better(&self, v: &DrapeValidation, best: &DrapeValidation) -> bool {
        v.train.energy < best.train.energy
    }

    fn keep_best(&mut self) -> Result<()> {
        self.best = Some(self.decoder().valid());
        Ok(())
    }

    /// Reports the step; a scheduled validation goes into the history (the one after a stop
    /// only decides the best decoder).
    fn report(&mut self, step: usize, seconds_per_step: f64, validation: Option<&DrapeValidation>) -> bool {
        let (loss, pose_reg) = self.loss;
        if let Some(v) = validation {
            self.standing
                .history
                .push(serde_json::json!({"step": step, "loss": loss, "validation": v}));
        }
        (self.report)(&DrapeStep {
            stage: "decoder",
            step,
            steps: self.cfg.train.steps,
            loss,
            energy: loss - pose_reg,
            pose_reg,
            seconds_per_step,
            validation: validation.copied(),
        })
    }

    fn checkpoint(&mut self, path: &Path) -> Result<()> {
        let optimizer = Rec::default()
            .record(self.optim.to_record(), ())
            .map_err(|e| Error::Runtime(format!("optimizer state: {e}")))?;
        let state = DrapeProgress {
            step: self.standing.step,
            ae_loss: self.ae_loss,
            history: self.standing.history.clone(),
            best: self.standing.best.map(|(s, v)| (v.train.energy, s, v)),
            first: Some(self.first),
        };
        let mut sections = vec![
            ("encoder".to_string(), module_to_bytes(self.encoder)),
            ("decoder".to_string(), module_to_bytes(self.decoder())),
            ("optimizer".to_string(), optimizer),
        ];
        if let Some(b) = &self.best {
            sections.push(("best".into(), module_to_bytes(b)));
        }
        NeuralFile {
            header: serde_json::json!({
                "kind": "drape-checkpoint",
                "config": self.cfg,
                "progress": state,
                "build": crate::build_id(),
            }),
            sections,
        }
        .write(path)
    }
}

/// Every groom's latent code from the frozen encoder, and the same on the training backend.
#[allow(clippy::type_complexity)]
fn latents<B: AutodiffBackend>(
    encoder: &GroomEncoder<B::InnerBackend>,
    subjects: &[DrapeSubject],
    dev: &B::Device,
) -> (Vec<Tensor<B::InnerBackend, 2>>, Vec<Tensor<B, 2>>) {
    let inner = Default::default();
    let latents_inner: Vec<Tensor<B::InnerBackend, 2>> =
        subjects.iter().map(|s| latent_of(encoder, s, &inner)).collect();
    let latents = latents_inner
        .iter()
        .map(|l| Tensor::from_data(l.to_data(), dev))
        .collect();
    (latents_inner, latents)
}

/// What stage 2 resumes from: the decoder, its optimizer's state, the best decoder and the
/// progress of a checkpoint.
type DecoderState<B> = (
    DeformDecoder<B>,
    <OptimizerAdaptor<Adam, DeformDecoder<B>, B> as Optimizer<DeformDecoder<B>, B>>::Record,
    Option<DeformDecoder<<B as AutodiffBackend>::InnerBackend>>,
    DrapeProgress,
);

/// Stage 2's start: a seeded decoder with a fresh optimizer (Adam, gradient norms clipped at
/// 1: the cubic penalties spike), or the checkpoint's decoder, optimizer state, best decoder
/// and progress.
#[allow(clippy::type_complexity)]
fn decoder_start<B: AutodiffBackend>(
    cfg: &DrapeTrainConfig,
    resumed: Option<DecoderState<B>>,
    ae_loss: f64,
    dev: &B::Device,
) -> (
    DeformDecoder<B>,
    OptimizerAdaptor<Adam, DeformDecoder<B>, B>,
    DrapeProgress,
    Option<DeformDecoder<B::InnerBackend>>,
) {
    let optim = AdamConfig::new()
        .with_grad_clipping(Some(GradientClippingConfig::Norm(1.0)))
        .init::<B, DeformDecoder<B>>();
    match resumed {
        Some((decoder, record, best, progress)) => (decoder, optim.load_record(record), progress, best),
        None => (
            seeded_init(cfg.train.seed + 2, 2000, dev, || cfg.net().init_deform::<B>(dev)),
            optim,
            DrapeProgress {
                ae_loss,
                ..Default::default()
            },
            None,
        ),
    }
}

/// One subject per config groom, each on the network's texture and points.
fn check_subjects(cfg: &DrapeTrainConfig, subjects: &[DrapeSubject]) -> Result<()> {
    let net = cfg.net();
    if subjects.len() != cfg.grooms.len() {
        return Err(Error::Invalid("one subject per [[groom]]".into()));
    }
    for s in subjects {
        if s.groom.points != net.points || s.groom.grid.spec.n != net.texture {
            return Err(Error::Invalid(format!(
                "groom {}: on a {}² texture of {} points, the config wants {}² × {}",
                s.name, s.groom.grid.spec.n, s.groom.points, net.texture, net.points
            )));
        }
    }
    Ok(())
}

/// Trains the autoencoder then the deformation decoder on `subjects` (one per config groom, in
/// config order). `report` is called after every step; returning false stops the training.
/// With `checkpoint`, the decoder stage's state is saved there every `checkpoint_every` steps
/// and when stopped; when the file exists and `resume` is set, training goes on from it (the
/// autoencoder is not trained again) and ends as an uninterrupted run would.
pub fn train<B: AutodiffBackend>(
    cfg: &DrapeTrainConfig,
    subjects: &[DrapeSubject],
    dev: &B::Device,
    checkpoint: Option<(&Path, bool)>,
    report: &mut dyn FnMut(&DrapeStep) -> bool,
) -> Result<TrainedDrape<B::InnerBackend>> {
    let started = Instant::now();
    let t = &cfg.train;
    check_subjects(cfg, subjects)?;
    let training: Vec<usize> = (0..subjects.len()).filter(|&i| !cfg.grooms[i].held_out).collect();
    let held: Vec<usize> = (0..subjects.len()).filter(|&i| cfg.grooms[i].held_out).collect();
    let resumed = match checkpoint {
        Some((path, true)) if path.exists() => Some(resume::<B>(cfg, path, dev)?),
        _ => None,
    };
    let (encoder, ae_loss, resumed) = match resumed {
        Some((encoder, decoder, optimizer, best, progress)) => (
            encoder,
            progress.ae_loss,
            Some((decoder, optimizer, best, progress)),
        ),
        None => {
            let (e, l) = train_autoencoder::<B>(cfg, subjects, &training, dev, report)?;
            (e, l, None)
        }
    };
    // The per-texel error in cm, for the summary.
    let ae_rmse_cm = ae_loss.max(0.0).sqrt() * UNIT_CM as f64;
    let (latents_inner, latents) = latents::<B>(&encoder, subjects, dev);

    // Stage 2: the deformation decoder with the physics loss.
    let (decoder, optim, progress, best_decoder) = decoder_start::<B>(cfg, resumed, ae_loss, dev);
    let validator = Validator::new(cfg, subjects, &latents_inner, (&training, &held))?;
    let first = match progress.first {
        Some(v) => v,
        None => validator.validate(&decoder.valid())?,
    };
    // A best decoder only with its weights.
    let best = match (progress.best, &best_decoder) {
        (Some((_, s, v)), Some(_)) => Some((s, v)),
        _ => None,
    };
    let mut d = DecoderTraining {
        cfg,
        subjects,
        training: &training,
        latents,
        dev,
        decoder: Some(decoder),
        optim,
        validator,
        standing: Standing {
            step: progress.step,
            best,
            history: progress.history,
            validations: Vec::new(),
        },
        best: best.and(best_decoder),
        first,
        encoder: &encoder,
        ae_loss,
        loss: (f64::NAN, 0.0),
        report,
    };
    // The time budget counts from the start of the whole training.
    let schedule = Schedule {
        checkpoint_at_end: false,
        validate_when_stopped: true,
        ..Schedule::new(
            t.steps,
            t.validate_every,
            t.checkpoint_every,
            t.max_minutes.map(|m| m - started.elapsed().as_secs_f64() / 60.0),
        )
    };
    let ended = crate::neural::train_loop::run(&mut d, &schedule, checkpoint.map(|c| c.0))?;
    let (best_step, decoder, validation) = match (d.standing.best, d.best.take()) {
        (Some((s, v)), Some(b)) => (s, b, v),
        _ => (0, d.decoder().valid(), first),
    };
    let names = |ids: &[usize]| ids.iter().map(|&i| subjects[i].name.clone()).collect::<Vec<_>>();
    let summary = serde_json::json!({
        "autoencoder": {"steps": cfg.autoencoder.steps, "masked_mse": ae_loss, "rmse_cm": ae_rmse_cm},
        "steps": d.standing.step,
        "stopped_early": ended.stopped_early,
        "best_step": best_step,
        "seconds": started.elapsed().as_secs_f64(),
        "before": first,
        "validation": validation,
        "history": d.standing.history,
        "validation_rotations": d.validator.rotations,
        "train_grooms": names(&training),
        "held_out_grooms": names(&held),
    });
    Ok(TrainedDrape {
        encoder,
        decoder,
        latents: training
            .iter()
            .map(|&i| {
                (
                    subjects[i].name.clone(),
                    latents_inner[i].to_data().to_vec().expect("f32 latent"),
                )
            })
            .collect(),
        summary,
    })
}

mod validation;

#[cfg(test)]
mod tests;
