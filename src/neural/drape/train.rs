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
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::prelude::*;
use burn::record::Recorder;
use burn::tensor::backend::AutodiffBackend;
use glam::Vec3;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::energy::{DrapeMaterial, Fixed, Terms, energy_here, read_positions};
use super::model::{
    DeformDecoder, DrapeNetConfig, GroomDecoder, GroomEncoder, UNIT_CM, condition, texture_strands,
};
use super::{DrapeMetrics, DrapeSubject, HeadRotation};
use crate::collide::{BodyShape, Colliders};
use crate::error::{Error, Result};
use crate::motion::Pose;
use crate::neural::file::{NeuralFile, Rec, module_from_bytes, module_to_bytes, seeded_init};
use crate::presets::keys::expand_env;

/// The network's sizes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrapeNetOptions {
    /// Scalp texture size T (a multiple of 8; 003: 64).
    pub texture: usize,
    /// Vertices per strand N (003: 24).
    pub points: usize,
    /// Latent code size (003: 16).
    #[serde(default = "default_latent")]
    pub latent: usize,
    /// What the decoder's texture holds.
    #[serde(default)]
    pub output: DrapeOutput,
}

/// What the deformation decoder predicts per vertex.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DrapeOutput {
    /// 003 §3.4: a displacement added to the posed vertex (in [`UNIT_CM`]).
    #[default]
    Displacements,
    /// tress's variant: a change of each edge's direction; edges keep their rest lengths and
    /// are chained from the root, so strands cannot stretch.
    Directions,
}

fn default_latent() -> usize {
    16
}

/// One groom of the training set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroomEntry {
    /// Its name in reports and in the model file.
    pub name: String,
    /// A procedural preset (straight, wavy, curly) or a groom file; `${TRESS_DATA}` is replaced
    /// by that variable, and a relative path is relative to the config file.
    pub groom: String,
    /// Strands, seed, mean length (cm) and curl radius (cm) of a procedural preset.
    #[serde(default)]
    pub strands: Option<usize>,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub length: Option<f32>,
    #[serde(default)]
    pub curl_radius: Option<f32>,
    /// The head collider (as `--head`): procedural, sphere, or a mesh file.
    #[serde(default)]
    pub head: Option<String>,
    /// The body (as `--body`).
    #[serde(default)]
    pub body: Option<String>,
    /// Left out of training; scored in validation (generalization to an unseen groom).
    #[serde(default)]
    pub held_out: bool,
}

/// Ranges (degrees) the training rotations are drawn from, uniformly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PoseRanges {
    pub yaw: [f64; 2],
    pub pitch: [f64; 2],
    pub roll: [f64; 2],
}

impl Default for PoseRanges {
    fn default() -> Self {
        PoseRanges {
            yaw: [-45.0, 45.0],
            pitch: [-30.0, 30.0],
            roll: [-20.0, 20.0],
        }
    }
}

impl PoseRanges {
    /// Whether a rotation lies within the ranges.
    pub fn contains(&self, r: &super::HeadRotation) -> bool {
        let v = [r.yaw, r.pitch, r.roll];
        self.clamp(v) == v
    }

    fn draw(&self, rng: &mut impl Rng) -> [f64; 3] {
        let mut u = |r: [f64; 2]| r[0] + (r[1] - r[0]) * rng.random::<f64>();
        [u(self.yaw), u(self.pitch), u(self.roll)]
    }

    fn clamp(&self, v: [f64; 3]) -> [f64; 3] {
        [
            v[0].clamp(self.yaw[0], self.yaw[1]),
            v[1].clamp(self.pitch[0], self.pitch[1]),
            v[2].clamp(self.roll[0], self.roll[1]),
        ]
    }
}

/// Ranges (cm, [`BodyShape`]: from the `default` body's) the training bodies' shapes are drawn
/// from, uniformly, one per sample: the shoulders' width and height and the neck's radius. A
/// groom whose body lacks a part (a head mesh's `head_only` body) keeps 0 there. All `[0, 0]`
/// (the default): every groom on its own body.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ShapeRanges {
    pub shoulder_width: [f64; 2],
    pub shoulder_height: [f64; 2],
    pub neck_radius: [f64; 2],
}

impl ShapeRanges {
    fn ranges(&self) -> [[f64; 2]; 3] {
        [self.shoulder_width, self.shoulder_height, self.neck_radius]
    }

    /// Whether a shape lies within the ranges (to 1e-3 cm).
    pub fn contains(&self, s: &BodyShape) -> bool {
        self.ranges()
            .iter()
            .zip(s.to_array())
            .all(|(r, v)| v as f64 >= r[0] - 1e-3 && v as f64 <= r[1] + 1e-3)
    }

    fn draw(&self, rng: &mut impl Rng) -> BodyShape {
        let mut u = |r: [f64; 2]| (r[0] + (r[1] - r[0]) * rng.random::<f64>()) as f32;
        BodyShape::from_array(self.ranges().map(&mut u))
    }

    fn check(&self) -> std::result::Result<(), String> {
        // Every drawn body stays valid on the default body: a neck of at least 1 cm and
        // shoulders wider than the neck.
        for (k, r, (lo, hi)) in [
            ("shoulder_width", self.shoulder_width, (-12.0, 30.0)),
            ("shoulder_height", self.shoulder_height, (-10.0, 10.0)),
            ("neck_radius", self.neck_radius, (-4.0, 5.0)),
        ] {
            if !(r[0].is_finite() && r[1].is_finite() && r[0] <= r[1] && r[0] >= lo && r[1] <= hi) {
                return Err(format!("shape.{k} = {r:?}: [low, high] within [{lo}, {hi}] cm"));
            }
        }
        Ok(())
    }
}

/// The autoencoder stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AeOptions {
    pub steps: usize,
    pub lr: f64,
}

impl Default for AeOptions {
    fn default() -> Self {
        AeOptions { steps: 300, lr: 1e-3 }
    }
}

/// The deformation decoder's stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrapeTrainOptions {
    pub steps: usize,
    /// Samples (groom, rotation) per step; each brings `pose_frames` frames.
    pub batch: usize,
    pub lr: f64,
    pub seed: u64,
    /// Frames of Eq. 14's pose regularization per sample (1 turns it off).
    pub pose_frames: usize,
    /// Spacing of those frames (degrees).
    pub pose_step_deg: f64,
    /// Eq. 14's k_pr.
    pub pose_reg: f64,
    pub validate_every: usize,
    /// Validation rotations per groom.
    pub validation_poses: usize,
    /// Stop early after this many minutes (the best model so far is kept).
    pub max_minutes: Option<f64>,
    /// Decoder steps between checkpoints (0: none); a killed training goes on from its last
    /// one (`tress train drape --resume`).
    pub checkpoint_every: usize,
}

impl Default for DrapeTrainOptions {
    fn default() -> Self {
        DrapeTrainOptions {
            steps: 1500,
            batch: 2,
            lr: 1e-3,
            seed: 1,
            pose_frames: 3,
            pose_step_deg: 2.0,
            pose_reg: 0.1,
            validate_every: 100,
            validation_poses: 6,
            max_minutes: None,
            checkpoint_every: 100,
        }
    }
}

/// A drape training config (`presets/training/drape_*.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrapeTrainConfig {
    pub net: DrapeNetOptions,
    #[serde(rename = "groom")]
    pub grooms: Vec<GroomEntry>,
    #[serde(default)]
    pub poses: PoseRanges,
    #[serde(default)]
    pub shape: ShapeRanges,
    #[serde(default)]
    pub autoencoder: AeOptions,
    #[serde(default)]
    pub train: DrapeTrainOptions,
    #[serde(default)]
    pub material: DrapeMaterial,
}

impl DrapeTrainConfig {
    /// A built-in config by name or a TOML file (checked), its grooms' and heads' `${VAR}`s
    /// expanded and their relative paths taken from the file's folder.
    pub fn load(name_or_path: &str) -> Result<DrapeTrainConfig> {
        let mut c: DrapeTrainConfig =
            crate::presets::load("training", crate::neural::TRAINING, name_or_path)?;
        c.validate()
            .map_err(|e| Error::Invalid(format!("{name_or_path}: {e}")))?;
        let file = Path::new(name_or_path);
        let base = file.is_file().then(|| file.parent()).flatten();
        let resolve = |v: &str, key: String| -> Result<String> {
            let v = expand_env(v, &format!("{name_or_path}: {key}"))?;
            Ok(match base {
                Some(b) if Path::new(&v).is_relative() && b.join(&v).exists() => {
                    b.join(&v).display().to_string()
                }
                _ => v,
            })
        };
        for (i, g) in c.grooms.iter_mut().enumerate() {
            g.groom = resolve(&g.groom, format!("groom {} groom", i + 1))?;
            if let Some(h) = &g.head {
                g.head = Some(resolve(h, format!("groom {} head", i + 1))?);
            }
        }
        Ok(c)
    }

    pub fn validate(&self) -> std::result::Result<(), String> {
        let n = &self.net;
        if !(8..=128).contains(&n.texture) || !n.texture.is_multiple_of(8) {
            return Err(format!(
                "net.texture = {}: a multiple of 8 from 8 to 128",
                n.texture
            ));
        }
        if !(2..=64).contains(&n.points) {
            return Err(format!("net.points = {}: 2 to 64", n.points));
        }
        if !(1..=256).contains(&n.latent) {
            return Err(format!("net.latent = {}: 1 to 256", n.latent));
        }
        if !self.grooms.iter().any(|g| !g.held_out) {
            return Err("no [[groom]] to train on (every one is held_out)".into());
        }
        if self.grooms.len() > 64 {
            return Err("more than 64 [[groom]]".into());
        }
        for (i, g) in self.grooms.iter().enumerate() {
            if g.name.is_empty() || self.grooms[..i].iter().any(|h| h.name == g.name) {
                return Err(format!("groom {}: a name, different from the others", i + 1));
            }
        }
        for (k, r, limit) in [
            ("yaw", self.poses.yaw, 90.0),
            ("pitch", self.poses.pitch, 60.0),
            ("roll", self.poses.roll, 45.0),
        ] {
            if !(r[0].is_finite() && r[1].is_finite() && r[0] <= r[1] && r[0] >= -limit && r[1] <= limit) {
                return Err(format!("poses.{k} = {r:?}: [low, high] within ±{limit}°"));
            }
        }
        self.shape.check()?;
        let t = &self.train;
        if t.batch == 0 || t.batch > 64 {
            return Err("train.batch: 1 to 64".into());
        }
        if t.pose_frames == 0 || t.pose_frames > 8 {
            return Err("train.pose_frames: 1 to 8".into());
        }
        for (k, lr) in [("train.lr", t.lr), ("autoencoder.lr", self.autoencoder.lr)] {
            if !(lr > 0.0 && lr < 1.0) {
                return Err(format!("{k} = {lr}: in (0, 1)"));
            }
        }
        crate::presets::non_negative(&[
            ("train.pose_step_deg", t.pose_step_deg),
            ("train.pose_reg", t.pose_reg),
            ("train.max_minutes", t.max_minutes.unwrap_or(0.0)),
        ])?;
        self.material.check()
    }

    pub fn net(&self) -> DrapeNetConfig {
        DrapeNetConfig::new(self.net.texture, self.net.points).with_latent(self.net.latent)
    }

    /// Whether the network was trained for a pose and body shape.
    pub fn trained_for(&self, rotation: &HeadRotation, shape: &BodyShape) -> bool {
        self.poses.contains(rotation) && self.shape.contains(shape)
    }
}

/// A head rotation from (yaw, pitch, roll) degrees, with the body's `shape`.
fn rotation(v: [f64; 3], shape: BodyShape) -> HeadRotation {
    HeadRotation {
        name: String::new(),
        yaw: v[0],
        pitch: v[1],
        roll: v[2],
        shape,
    }
}

/// The decoder's displacement textures (in [`UNIT_CM`]) for rows of `[latent, condition]`
/// ([`condition`]: the body's shape and the head's rotation).
pub fn decode<B: Backend>(
    decoder: &DeformDecoder<B>,
    latents: &[Tensor<B, 2>],
    conditions: &[[f32; 6]],
) -> Tensor<B, 4> {
    let dev = latents[0].device();
    let c: Vec<f32> = conditions.iter().flatten().copied().collect();
    let c = Tensor::<B, 2>::from_data(TensorData::new(c, [conditions.len(), 6]), &dev);
    decoder.forward(Tensor::cat(vec![Tensor::cat(latents.to_vec(), 0), c], 1))
}

/// The positions `[S, N, 3]` (world) of one groom's drape from one row `[1, 3N, T, T]` of the
/// decoder's texture: the occupied texels' strands, read as `output` says.
pub fn row_positions<B: Backend>(
    output: DrapeOutput,
    row: Tensor<B, 4>,
    cells: &[usize],
    fixed: &Fixed<B>,
) -> Tensor<B, 3> {
    let t = texture_strands(row, cells, fixed.points).squeeze_dim::<3>(0);
    match output {
        DrapeOutput::Displacements => fixed.positions(t * UNIT_CM as f64),
        DrapeOutput::Directions => fixed.positions_along(t),
    }
}

/// The decoder's drape of one groom (`latent` `[1, latent]`, its occupied texels `cells`) for a
/// [`condition`] (body shape and head rotation), as positions `[S, N, 3]` (world) and the
/// energy there.
#[allow(clippy::too_many_arguments)]
pub fn physics_loss<B: Backend>(
    decoder: &DeformDecoder<B>,
    latent: Tensor<B, 2>,
    condition: [f32; 6],
    cells: &[usize],
    fixed: &Fixed<B>,
    colliders: Option<(&Colliders, &[Pose])>,
    material: &DrapeMaterial,
) -> (Vec<Vec3>, Terms<B>) {
    let dev = latent.device();
    let p = Tensor::<B, 2>::from_data(TensorData::new(condition.to_vec(), [1, 6]), &dev);
    let texture = decoder.forward(Tensor::cat(vec![latent, p], 1));
    let x = row_positions(DrapeOutput::Displacements, texture, cells, fixed);
    energy_here(x, fixed, colliders, material)
}

/// Validation figures of one group of grooms (means over grooms and rotations).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupScore {
    /// Drape energy per strand of the rigidly posed groom and of the network's drape.
    pub energy_posed: f64,
    pub energy: f64,
    pub posed: DrapeMetrics,
    pub network: DrapeMetrics,
}

/// Validation on the training grooms and the held-out ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DrapeValidation {
    pub train: GroupScore,
    pub held_out: Option<GroupScore>,
}

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

/// A trained drape network.
pub struct TrainedDrape<B: Backend> {
    pub encoder: GroomEncoder<B>,
    pub decoder: DeformDecoder<B>,
    /// Latent code of every training groom (config order, held-out ones left out).
    pub latents: Vec<(String, Vec<f32>)>,
    pub summary: serde_json::Value,
}

/// The frozen encoder's code of one groom `[1, latent]`.
pub fn latent_of<B: Backend>(
    encoder: &GroomEncoder<B>,
    subject: &DrapeSubject,
    dev: &B::Device,
) -> Tensor<B, 2> {
    let (v, shape) = subject.groom.rest_texture();
    encoder.forward(Tensor::from_data(TensorData::new(v, shape), dev))
}

/// Mean energy and figures of a group's drapes on fixed rotations and body shapes (each
/// rotation's `shape` is the body's shape, not an offset): the decoder's, or the rigidly posed
/// grooms' without one.
fn score<B: Backend>(
    output: DrapeOutput,
    decoder: Option<&DeformDecoder<B>>,
    subjects: &[(&DrapeSubject, Tensor<B, 2>)],
    rotations: &[HeadRotation],
    material: &DrapeMaterial,
) -> Result<(f64, DrapeMetrics)> {
    let mut energy = 0.0;
    let mut figures = Vec::new();
    for (subject, latent) in subjects {
        let dev = latent.device();
        let rotations: Vec<HeadRotation> = rotations.iter().map(|r| subject.in_shape(r, &r.shape)).collect();
        let conditions: Vec<[f32; 6]> = rotations
            .iter()
            .map(|r| condition(&subject.shape_in(r), r))
            .collect();
        let tex = decoder.map(|d| decode(d, &vec![latent.clone(); rotations.len()], &conditions));
        for (k, r) in rotations.iter().enumerate() {
            let pose = subject.pose(r)?;
            let (posed, cp) = (&pose.posed, pose.contact());
            let fixed = Fixed::<B>::new(posed, &dev);
            let x = match &tex {
                Some(t) => row_positions(output, t.clone().narrow(0, k, 1), &subject.groom.cells, &fixed),
                None => fixed.positions(Tensor::zeros([posed.strands, posed.points, 3], &dev)),
            };
            let (x, terms) = energy_here(x, &fixed, cp, material);
            energy += terms.total.into_scalar().elem::<f64>();
            figures.push(DrapeMetrics::of(&x, posed, cp));
        }
    }
    Ok((energy / figures.len().max(1) as f64, DrapeMetrics::mean(&figures)))
}

/// Stage 1: the groom autoencoder on the training grooms' rest textures; returns the frozen
/// encoder and the last masked MSE.
fn train_autoencoder<B: AutodiffBackend>(
    cfg: &DrapeTrainConfig,
    subjects: &[DrapeSubject],
    training: &[usize],
    dev: &B::Device,
    report: &mut dyn FnMut(&DrapeStep) -> bool,
) -> (GroomEncoder<B::InnerBackend>, f64) {
    let (t, net) = (&cfg.train, cfg.net());
    let mut encoder = seeded_init(t.seed, 0, dev, || net.init_encoder::<B>(dev));
    let mut groom_decoder: GroomDecoder<B> =
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
    let mut ae_optim = AdamConfig::new()
        .with_grad_clipping(Some(GradientClippingConfig::Norm(1.0)))
        .init::<B, (GroomEncoder<B>, GroomDecoder<B>)>();
    let mut ae_loss = f64::NAN;
    let ae_steps = cfg.autoencoder.steps;
    for step in 1..=ae_steps {
        let clock = Instant::now();
        let out = groom_decoder.forward(encoder.forward(input.clone()));
        let err = (out - target.clone()) * mask.clone();
        let loss = (err.clone() * err).sum() / (occupied * c as f64).max(1.0);
        ae_loss = loss.clone().into_scalar().elem::<f64>();
        let mut modules = (encoder, groom_decoder);
        let grads = GradientsParams::from_grads(loss.backward(), &modules);
        modules = ae_optim.step(cfg.autoencoder.lr, modules, grads);
        (encoder, groom_decoder) = modules;
        let go_on = report(&DrapeStep {
            stage: "autoencoder",
            step,
            steps: ae_steps,
            loss: ae_loss,
            energy: f64::NAN,
            pose_reg: 0.0,
            seconds_per_step: clock.elapsed().as_secs_f64(),
            validation: None,
        });
        if !go_on {
            break;
        }
    }
    (encoder.valid(), ae_loss)
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

/// A training's checkpoint: the frozen encoder, the decoder and its optimizer's state, the
/// best decoder so far and the progress.
fn save_checkpoint<B: AutodiffBackend>(
    path: &Path,
    cfg: &DrapeTrainConfig,
    encoder: &GroomEncoder<B::InnerBackend>,
    decoder: &DeformDecoder<B>,
    optimizer: Vec<u8>,
    best: Option<&DeformDecoder<B::InnerBackend>>,
    progress: &DrapeProgress,
) -> Result<()> {
    let mut sections = vec![
        ("encoder".to_string(), module_to_bytes(encoder)),
        ("decoder".to_string(), module_to_bytes(decoder)),
        ("optimizer".to_string(), optimizer),
    ];
    if let Some(b) = best {
        sections.push(("best".into(), module_to_bytes(b)));
    }
    NeuralFile {
        header: serde_json::json!({
            "kind": "drape-checkpoint",
            "config": cfg,
            "progress": progress,
            "build": crate::build_id(),
        }),
        sections,
    }
    .write(path)
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
    let training: Vec<usize> = (0..subjects.len()).filter(|&i| !cfg.grooms[i].held_out).collect();
    let held: Vec<usize> = (0..subjects.len()).filter(|&i| cfg.grooms[i].held_out).collect();

    let resumed = match checkpoint {
        Some((path, true)) if path.exists() => {
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
            Some((encoder, decoder, optimizer, best, progress))
        }
        _ => None,
    };
    let (encoder, ae_loss, ae_steps, resumed) = match resumed {
        Some((encoder, decoder, optimizer, best, progress)) => (
            encoder,
            progress.ae_loss,
            cfg.autoencoder.steps,
            Some((decoder, optimizer, best, progress)),
        ),
        None => {
            let (e, l) = train_autoencoder::<B>(cfg, subjects, &training, dev, report);
            (e, l, cfg.autoencoder.steps, None)
        }
    };
    // The per-texel error in cm, for the summary.
    let ae_rmse_cm = ae_loss.max(0.0).sqrt() * UNIT_CM as f64;
    let inner = Default::default();
    let latents_inner: Vec<Tensor<B::InnerBackend, 2>> =
        subjects.iter().map(|s| latent_of(&encoder, s, &inner)).collect();
    let latents: Vec<Tensor<B, 2>> = latents_inner
        .iter()
        .map(|l| Tensor::from_data(l.to_data(), dev))
        .collect();

    // Stage 2: the deformation decoder with the physics loss.
    let mut optim = AdamConfig::new()
        .with_grad_clipping(Some(GradientClippingConfig::Norm(1.0)))
        .init::<B, DeformDecoder<B>>();
    let (mut decoder, mut progress, mut best_decoder) = match resumed {
        Some((decoder, record, best, progress)) => {
            optim = optim.load_record(record);
            (decoder, progress, best)
        }
        None => (
            seeded_init(t.seed + 2, 2000, dev, || net.init_deform::<B>(dev)),
            DrapeProgress {
                ae_loss,
                ..Default::default()
            },
            None,
        ),
    };
    let mut vrng = rand::rngs::StdRng::seed_from_u64(t.seed ^ 0x005e_ed0f_da7a);
    // Each validation rotation carries the body's shape (drawn like the training ones).
    let val_rot: Vec<HeadRotation> = (0..t.validation_poses.max(1))
        .map(|_| {
            let r = cfg.poses.draw(&mut vrng);
            rotation(r, cfg.shape.draw(&mut vrng))
        })
        .collect();
    let group = |ids: &[usize]| -> Vec<(&DrapeSubject, Tensor<B::InnerBackend, 2>)> {
        ids.iter()
            .map(|&i| (&subjects[i], latents_inner[i].clone()))
            .collect()
    };
    let (val_train, val_held) = (group(&training), group(&held));
    // The posed grooms' figures do not change during training: taken once.
    let output = cfg.net.output;
    let posed = |g: &[(&DrapeSubject, Tensor<B::InnerBackend, 2>)]| {
        score::<B::InnerBackend>(output, None, g, &val_rot, &cfg.material)
    };
    let (posed_train, posed_held) = (posed(&val_train)?, posed(&val_held)?);
    let group_score = |d: &DeformDecoder<B::InnerBackend>,
                       g: &[(&DrapeSubject, Tensor<B::InnerBackend, 2>)],
                       (energy_posed, posed): (f64, DrapeMetrics)|
     -> Result<GroupScore> {
        let (energy, network) = score(output, Some(d), g, &val_rot, &cfg.material)?;
        Ok(GroupScore {
            energy_posed,
            energy,
            posed,
            network,
        })
    };
    let run_validation = |d: &DeformDecoder<B::InnerBackend>| -> Result<DrapeValidation> {
        Ok(DrapeValidation {
            train: group_score(d, &val_train, posed_train)?,
            held_out: match val_held.is_empty() {
                true => None,
                false => Some(group_score(d, &val_held, posed_held)?),
            },
        })
    };
    let mut best: Option<(f64, usize, DeformDecoder<B::InnerBackend>, DrapeValidation)> =
        match (progress.best, best_decoder.take()) {
            (Some((e, s, v)), Some(d)) => Some((e, s, d, v)),
            _ => None,
        };
    let first = match progress.first {
        Some(v) => v,
        None => run_validation(&decoder.valid())?,
    };
    progress.first = Some(first);
    let frames = t.pose_frames;
    let mut history = std::mem::take(&mut progress.history);
    let mut stopped_early = false;
    let mut step = progress.step;
    while step < t.steps {
        step += 1;
        let clock = Instant::now();
        let mut rng =
            rand::rngs::StdRng::seed_from_u64(t.seed.wrapping_mul(1_000_003).wrapping_add(step as u64));
        let mut rows = Vec::new();
        let mut rots = Vec::new();
        for _ in 0..t.batch {
            let g = training[rng.random_range(0..training.len())];
            let base = cfg.poses.draw(&mut rng);
            let mut dir = [0.0f64; 3];
            for d in dir.iter_mut() {
                *d = rng.random::<f64>() * 2.0 - 1.0;
            }
            let norm = dir.iter().map(|d| d * d).sum::<f64>().sqrt().max(1e-9);
            // One body per sample: the sweep turns the head on it.
            let shape = cfg.shape.draw(&mut rng);
            for f in 0..frames {
                let o = (f as f64 - (frames - 1) as f64 / 2.0) * t.pose_step_deg / norm;
                let v = cfg
                    .poses
                    .clamp([base[0] + o * dir[0], base[1] + o * dir[1], base[2] + o * dir[2]]);
                rows.push(g);
                rots.push(subjects[g].in_shape(&rotation(v, BodyShape::default()), &shape));
            }
        }
        let lat: Vec<Tensor<B, 2>> = rows.iter().map(|&g| latents[g].clone()).collect();
        let conditions: Vec<[f32; 6]> = rows
            .iter()
            .zip(&rots)
            .map(|(&g, r)| condition(&subjects[g].shape_in(r), r))
            .collect();
        let tex = decode(&decoder, &lat, &conditions);
        let mut energy_sum: Option<Tensor<B, 1>> = None;
        let mut reg_sum: Option<Tensor<B, 1>> = None;
        let mut sample_d: Vec<Tensor<B, 3>> = Vec::new();
        for (r, (&g, rot)) in rows.iter().zip(&rots).enumerate() {
            let subject = &subjects[g];
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
            energy_sum = Some(match energy_sum {
                Some(e) => e + terms.total,
                None => terms.total,
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
        let loss_value = loss.clone().into_scalar().elem::<f64>();
        let grads = GradientsParams::from_grads(loss.backward(), &decoder);
        let progress = step as f64 / t.steps.max(1) as f64;
        let lr = t.lr * (0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()));
        decoder = optim.step(lr, decoder, grads);
        let out_of_time = t
            .max_minutes
            .is_some_and(|m| started.elapsed().as_secs_f64() > 60.0 * m);
        let validation = (step == t.steps
            || out_of_time
            || (t.validate_every > 0 && step.is_multiple_of(t.validate_every)))
        .then(|| -> Result<DrapeValidation> {
            let v = run_validation(&decoder.valid())?;
            if best.as_ref().is_none_or(|b| v.train.energy < b.0) {
                best = Some((v.train.energy, step, decoder.valid(), v));
            }
            history.push(serde_json::json!({"step": step, "loss": loss_value, "validation": v}));
            Ok(v)
        })
        .transpose()?;
        let go_on = report(&DrapeStep {
            stage: "decoder",
            step,
            steps: t.steps,
            loss: loss_value,
            energy: loss_value - reg_value,
            pose_reg: reg_value,
            seconds_per_step: clock.elapsed().as_secs_f64(),
            validation,
        });
        let stopping = out_of_time || !go_on;
        if let Some((path, _)) = checkpoint
            && step < t.steps
            && (stopping || (t.checkpoint_every > 0 && step.is_multiple_of(t.checkpoint_every)))
        {
            let optimizer = Rec::default()
                .record(optim.to_record(), ())
                .map_err(|e| Error::Runtime(format!("optimizer state: {e}")))?;
            let state = DrapeProgress {
                step,
                ae_loss,
                history: history.clone(),
                best: best.as_ref().map(|b| (b.0, b.1, b.3)),
                first: Some(first),
            };
            let best_decoder = best.as_ref().map(|b| &b.2);
            save_checkpoint::<B>(path, cfg, &encoder, &decoder, optimizer, best_decoder, &state)?;
        }
        if stopping {
            stopped_early = step < t.steps;
            if validation.is_none() {
                let v = run_validation(&decoder.valid())?;
                if best.as_ref().is_none_or(|b| v.train.energy < b.0) {
                    best = Some((v.train.energy, step, decoder.valid(), v));
                }
            }
            break;
        }
    }
    let (_, best_step, decoder, validation) = match best {
        Some(b) => b,
        None => (first.train.energy, 0, decoder.valid(), first),
    };
    let summary = serde_json::json!({
        "autoencoder": {"steps": ae_steps, "masked_mse": ae_loss, "rmse_cm": ae_rmse_cm},
        "steps": step,
        "stopped_early": stopped_early,
        "best_step": best_step,
        "seconds": started.elapsed().as_secs_f64(),
        "before": first,
        "validation": validation,
        "history": history,
        "validation_rotations": val_rot,
        "train_grooms": training.iter().map(|&i| subjects[i].name.clone()).collect::<Vec<_>>(),
        "held_out_grooms": held.iter().map(|&i| subjects[i].name.clone()).collect::<Vec<_>>(),
    });
    Ok(TrainedDrape {
        encoder,
        decoder,
        latents: training
            .iter()
            .map(|&i| {
                let v: Vec<f32> = latents_inner[i].to_data().to_vec().expect("f32 latent");
                (subjects[i].name.clone(), v)
            })
            .collect(),
        summary,
    })
}

/// What the model file's decoder takes (older files' decoders took no body shape).
const DECODER_INPUT: &str = "latent, body shape (3), head rotation vector (3)";

/// A trained drape network read from its model file.
pub struct DrapeModel<B: Backend> {
    pub config: DrapeTrainConfig,
    pub encoder: GroomEncoder<B>,
    pub decoder: DeformDecoder<B>,
    pub header: serde_json::Value,
}

impl<B: Backend> DrapeModel<B> {
    /// The model file (`.tnn`, kind `drape`) of a training.
    pub fn file(cfg: &DrapeTrainConfig, trained: &TrainedDrape<B>) -> NeuralFile {
        NeuralFile {
            header: serde_json::json!({
                "kind": "drape",
                "paper": "Stuyck et al. 2025 (003), groom encoder + deformation decoder",
                "decoder_input": DECODER_INPUT,
                "config": cfg,
                "latents": trained.latents.iter().map(|(n, v)| serde_json::json!({"name": n, "code": v})).collect::<Vec<_>>(),
                "training": trained.summary,
                "build": crate::build_id(),
            }),
            sections: vec![
                ("encoder".into(), module_to_bytes(&trained.encoder)),
                ("decoder".into(), module_to_bytes(&trained.decoder)),
            ],
        }
    }

    /// Whether the network was trained for a subject's pose (rotation and body shape).
    pub fn trained_for(&self, subject: &DrapeSubject, rotation: &HeadRotation) -> bool {
        self.config.trained_for(rotation, &subject.shape_in(rotation))
    }

    /// The drape (world positions, `strands × points`) of the groom of `subject`, whose code is
    /// `latent`, posed as `posed` for `rotation` (and the body shape it gives the subject): one
    /// decoder pass.
    pub fn drape(
        &self,
        latent: &Tensor<B, 2>,
        subject: &DrapeSubject,
        rotation: &HeadRotation,
        posed: &super::Posed,
    ) -> Vec<Vec3> {
        let texture = decode(
            &self.decoder,
            std::slice::from_ref(latent),
            &[condition(&subject.shape_in(rotation), rotation)],
        );
        let fixed = Fixed::<B>::new(posed, &latent.device());
        read_positions(&row_positions(
            self.config.net.output,
            texture,
            &subject.groom.cells,
            &fixed,
        ))
    }

    pub fn read(path: &Path, dev: &B::Device) -> Result<DrapeModel<B>> {
        let f = NeuralFile::read(path)?;
        let bad = |m: &str| Error::Invalid(format!("{}: {m}", path.display()));
        if f.header["kind"] != "drape" {
            return Err(bad(&format!("not a drape model (kind {})", f.header["kind"])));
        }
        if f.header["decoder_input"] != DECODER_INPUT {
            return Err(bad(
                "made by an older tress, whose decoder takes no body shape: train it again with `tress train drape`",
            ));
        }
        let config: DrapeTrainConfig = serde_json::from_value(f.header["config"].clone())
            .map_err(|e| bad(&format!("bad config in the header: {e}")))?;
        config.validate().map_err(|e| bad(&e))?;
        let net = config.net();
        let section = |n: &str| f.section(n).ok_or_else(|| bad(&format!("no {n} weights")));
        let encoder = module_from_bytes(net.init_encoder::<B>(dev), section("encoder")?, dev, path)?;
        let decoder = module_from_bytes(net.init_deform::<B>(dev), section("decoder")?, dev, path)?;
        Ok(DrapeModel {
            config,
            encoder,
            decoder,
            header: f.header,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::{BodyParams, HeadShape, body};
    use crate::groom::Transform;
    use crate::motion::HeadTrack;
    use crate::neural::drape::solve::{LbfgsOptions, lbfgs};
    use crate::neural::drape::{DrapeGroom, Posed};
    use burn::backend::{Autodiff, Flex};

    type B = Autodiff<Flex>;

    /// 003's training signal end to end: a decoder fitted to one groom and pose by the physics
    /// loss alone lowers the energy from the posed groom's towards the direct minimum.
    #[test]
    fn the_decoder_learns_a_drape_from_the_energy_alone() {
        let scene = crate::scene::load_groom("wavy", &Transform::default(), Some(150)).unwrap();
        let scalp = scene.procedural.as_ref().unwrap().scalp;
        let groom = DrapeGroom::new(&scene.groom, 8, 8).unwrap();
        let c = body::colliders(
            HeadShape::Procedural(scalp),
            &BodyParams::default(),
            HeadTrack::still(Pose::IDENTITY),
        );
        let poses = c.poses_at(0.0);
        let cp = Some((&c, poses.as_slice()));
        let m = DrapeMaterial::default();
        let posed = Posed::new(&groom.rest, 8, &Pose::IDENTITY, m.smoothing as f32);
        let dev = Default::default();
        let fixed = Fixed::<B>::new(&posed, &dev);
        let cfg = DrapeNetConfig::new(8, 8);
        let mut decoder = seeded_init(7, 0, &dev, || cfg.init_deform::<B>(&dev));
        let latent = Tensor::<B, 2>::zeros([1, 16], &dev);
        let mut optim = AdamConfig::new()
            .with_grad_clipping(Some(GradientClippingConfig::Norm(1.0)))
            .init::<B, DeformDecoder<B>>();
        let (x0, t0) = physics_loss(&decoder, latent.clone(), [0.0; 6], &groom.cells, &fixed, cp, &m);
        let start = t0.values().total;
        // Zero-initialized output: the untrained drape is the posed groom.
        assert!(x0.iter().zip(&posed.x).all(|(a, b)| a.distance(*b) < 1e-5));
        let mut last = start;
        // 400 clipped Adam steps at 1e-3: larger steps spike on the cubic penalties.
        for _ in 0..400 {
            let (_, t) = physics_loss(&decoder, latent.clone(), [0.0; 6], &groom.cells, &fixed, cp, &m);
            last = t.values().total;
            let grads = GradientsParams::from_grads(t.total.backward(), &decoder);
            decoder = optim.step(1e-3, decoder, grads);
        }
        let (_, best) = lbfgs::<B>(&posed, cp, &m, &LbfgsOptions::default(), &dev);
        let drop = start - best.energy.total;
        assert!(
            drop > 1.0,
            "the posed groom is not at the minimum: {start} vs {:?}",
            best.energy
        );
        assert!(
            start - last > 0.3 * drop,
            "decoder energy {last} from {start}; the direct minimum is {}",
            best.energy.total
        );
    }

    /// The direction output: no change gives the posed groom back; any change keeps every
    /// edge at its rest length and the roots where they are.
    #[test]
    fn direction_changes_keep_lengths_and_roots() {
        let scene = crate::scene::load_groom("curly", &Transform::default(), Some(40)).unwrap();
        let groom = DrapeGroom::new(&scene.groom, 8, 7).unwrap();
        let posed = Posed::new(&groom.rest, 7, &Pose::IDENTITY, 0.5);
        let dev = Default::default();
        let fixed = Fixed::<Flex>::new(&posed, &dev);
        let s = posed.strands;
        let same = read_positions(&fixed.positions_along(Tensor::zeros([s, 7, 3], &dev)));
        for (a, b) in same.iter().zip(&posed.x) {
            assert!(a.distance(*b) < 1e-4, "{a} vs {b}");
        }
        let turn = Tensor::<Flex, 3>::random([s, 7, 3], burn::tensor::Distribution::Uniform(-0.8, 0.8), &dev);
        let x = read_positions(&fixed.positions_along(turn));
        let mut moved = 0.0f32;
        for (k, (strand, rest)) in x.chunks(7).zip(posed.x.chunks(7)).enumerate() {
            assert_eq!(strand[0], rest[0]);
            for i in 0..6 {
                let l = strand[i + 1].distance(strand[i]);
                let want = posed.rest_len[k * 6 + i];
                assert!((l - want).abs() < 1e-4 * want.max(1.0), "{l} vs {want}");
            }
            moved = moved.max(strand[6].distance(rest[6]));
        }
        assert!(moved > 0.5, "the changes move the tips ({moved} cm)");
    }

    #[test]
    fn moving_a_posed_groom_equals_posing_it_there() {
        let scene = crate::scene::load_groom("curly", &Transform::default(), Some(60)).unwrap();
        let groom = DrapeGroom::new(&scene.groom, 8, 6).unwrap();
        let head = HeadRotation {
            yaw: 30.0,
            pitch: -10.0,
            roll: 5.0,
            ..Default::default()
        }
        .pose(Vec3::new(0.0, -8.0, 0.0));
        let a = Posed::new(&groom.rest, 6, &head, 0.5);
        let b = Posed::new(&groom.rest, 6, &Pose::IDENTITY, 0.5).moved(&head);
        for (p, q) in a.x.iter().zip(&b.x) {
            assert!(p.distance(*q) < 1e-5);
        }
        for (p, q) in a.dir.iter().zip(&b.dir) {
            assert!(p.distance(*q) < 1e-5);
        }
        let (ra, rb) = (a.rho_rest.iter().sum::<f32>(), b.rho_rest.iter().sum::<f32>());
        assert!((ra - rb).abs() < 1e-3 * ra.abs(), "{ra} vs {rb}");
    }
}
