//! The drape training config (`presets/training/drape_small.toml`, `tress train drape`): the
//! networks' sizes, the training grooms (presets with their edits, or files), the head
//! rotations and body shapes drawn (003 §3.5), the two stages' options.

use std::path::Path;

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::HeadRotation;
use super::energy::DrapeMaterial;
use super::model::DrapeNetConfig;
use crate::collide::BodyShape;
use crate::error::{Error, Result};
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

    /// A rotation uniform in the ranges.
    pub fn draw(&self, rng: &mut impl Rng) -> [f64; 3] {
        let mut u = |r: [f64; 2]| r[0] + (r[1] - r[0]) * rng.random::<f64>();
        [u(self.yaw), u(self.pitch), u(self.roll)]
    }

    /// The nearest rotation within the ranges.
    pub fn clamp(&self, v: [f64; 3]) -> [f64; 3] {
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

    /// A body shape uniform in the ranges.
    pub fn draw(&self, rng: &mut impl Rng) -> BodyShape {
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
    /// Divide each frame's energy by 1 + its current body and self-collision terms (held
    /// constant in the gradient): a frame whose hair sits deep in the body (cubic penalties of
    /// 10⁴–10⁵) then weighs in the step like the others instead of setting its direction alone
    /// through the gradient clipping. Each frame's minimizer is unchanged.
    pub balance: bool,
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
            balance: false,
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
