//! The sections of a job file that name the scene and what is written: groom, head, motion,
//! an `.mss` scene, the training simulation, props, outputs, previews and batches. Each is the
//! TOML's shape (serde, unknown keys refused); `resolve.rs` checks them and resolves paths.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::groom::UpAxis;
use crate::motion::sources::{ConstantSpec, MotionSource};
use crate::render::View;
use crate::scene::{Prop, PropShape};

/// The groom: a procedural preset or a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GroomSpec {
    /// Procedural preset (straight, wavy, curly, or a TOML file of groom parameters).
    pub preset: Option<String>,
    /// A groom file (any format tress reads); `${VAR}` expanded, relative to the job file.
    pub file: Option<String>,
    /// Strands of a procedural groom.
    pub strands: Option<usize>,
    /// Resample every strand to this many points (0 keeps the file's sampling).
    pub points: usize,
    pub scale: f32,
    pub up: UpAxis,
    /// A PLY point cloud without strand layout: consecutive points per strand (as `tress
    /// convert --points-per-strand`); only with a `.ply` file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub points_per_strand: Option<usize>,
    /// Edits applied in order after loading (`tress groom edit`'s `--edit` forms, e.g.
    /// `"length=0.8"`, `"curl=1,0.2@0,0,0.5,1"`).
    pub edits: Vec<String>,
}

impl Default for GroomSpec {
    fn default() -> Self {
        GroomSpec {
            preset: Some("straight".into()),
            file: None,
            strands: None,
            points: 25,
            scale: 1.0,
            up: UpAxis::Y,
            points_per_strand: None,
            edits: Vec::new(),
        }
    }
}

/// The head collider and the body under it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HeadSpec {
    /// procedural, sphere, or a mesh / .sdf file path.
    pub collider: String,
    /// Body preset (default, head_only) or TOML file; default depends on the head.
    pub body: Option<String>,
    /// Cell size (cm) of a mesh head's distance grid.
    pub sdf_cell: f32,
}

impl Default for HeadSpec {
    fn default() -> Self {
        HeadSpec {
            collider: "procedural".into(),
            body: None,
            sdf_cell: 0.2,
        }
    }
}

/// Head motion: one source.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MotionSpec {
    /// Random key-pose preset (gentle, walk, turn, violent), the range of motion `rom`, or a TOML file.
    pub preset: Option<String>,
    /// Overrides the preset's seed.
    pub seed: Option<u64>,
    pub gltf: Option<String>,
    pub node: Option<String>,
    pub animation: Option<String>,
    pub abc: Option<String>,
    pub xform: Option<String>,
    pub mesh: Option<String>,
    pub track: Option<String>,
    /// Constant head velocity (cm/s): a motion of its own, or with `angular_velocity`.
    pub velocity: Option<[f64; 3]>,
    /// Constant head rotation (degrees/s about the world axes, through `pivot`).
    pub angular_velocity: Option<[f64; 3]>,
    /// The point a constant rotation turns about (cm, where the head starts) [default: an
    /// `.mss` scene's head centre, else the origin].
    pub pivot: Option<[f64; 3]>,
    /// Seconds the constant motion lasts from the first frame; then the head holds [default:
    /// the whole shot].
    pub moving: Option<f64>,
}

impl MotionSpec {
    /// Whether the motion is a constant linear / angular velocity.
    pub fn is_constant(&self) -> bool {
        self.velocity.is_some() || self.angular_velocity.is_some()
    }

    /// The motion source this section names.
    pub fn source(&self) -> Result<MotionSource> {
        let given = [
            self.preset.is_some(),
            self.gltf.is_some(),
            self.abc.is_some(),
            self.track.is_some(),
            self.is_constant(),
        ];
        if given.iter().filter(|b| **b).count() > 1 {
            return Err(Error::Invalid(
                "[motion] names more than one source (preset, gltf, abc, track, velocity)".into(),
            ));
        }
        let path = |p: &String| std::path::PathBuf::from(p);
        Ok(if self.is_constant() {
            MotionSource::Constant(ConstantSpec {
                velocity: glam::DVec3::from_array(self.velocity.unwrap_or_default()),
                angular_velocity: glam::DVec3::from_array(self.angular_velocity.unwrap_or_default()),
                pivot: glam::DVec3::from_array(self.pivot.unwrap_or_default()),
                moving: self.moving,
            })
        } else if let Some(p) = &self.preset {
            MotionSource::Preset {
                name: p.clone(),
                seed: self.seed,
            }
        } else if let Some(f) = &self.gltf {
            MotionSource::Gltf {
                file: path(f),
                node: self.node.clone(),
                animation: self.animation.clone(),
            }
        } else if let Some(f) = &self.abc {
            MotionSource::Abc {
                file: path(f),
                xform: self.xform.clone(),
                mesh: self.mesh.clone(),
            }
        } else if let Some(f) = &self.track {
            MotionSource::Track(path(f))
        } else {
            MotionSource::Still
        })
    }
}

/// An `.mss` mass-spring scene of the student project (004) as the job's groom, head, motion,
/// material and solver settings (each still overridable by the job's own sections).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MssSpec {
    /// The scene file, relative to the job file; `${VAR}` expanded.
    pub mss: String,
    /// Centimetres per scene unit (the scene's head is a unit sphere).
    #[serde(default = "default_unit")]
    pub unit: f32,
    /// Steps per frame of the scene's explicit integrator (by default 100 at 24 fps, the same
    /// time step at other frame rates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub substeps: Option<u32>,
}

fn default_unit() -> f32 {
    crate::scene::mss::DEFAULT_UNIT_CM
}

/// A full simulation of the same groom on another motion, to fit or train upsamplers from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingSpec {
    /// A motion preset name, or a file (a preset TOML, glTF, Alembic or track file)
    /// [default: `rom`, the range of motion].
    #[serde(default = "rom")]
    pub motion: String,
    /// Overrides the preset's seed.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Frames of the training simulation, `A-B`, or `all`: the whole motion [default: all].
    #[serde(default = "all")]
    pub frames: String,
    /// glTF node / Alembic xform or mesh of a motion file, as in [motion].
    #[serde(default)]
    pub node: Option<String>,
    #[serde(default)]
    pub xform: Option<String>,
    #[serde(default)]
    pub mesh: Option<String>,
}

fn rom() -> String {
    "rom".into()
}

fn all() -> String {
    "all".into()
}

/// The training simulation: the same groom on another motion, over its own frames.
#[derive(Clone, Debug, PartialEq)]
pub struct Training {
    pub spec: TrainingSpec,
    /// Its motion as a [motion] section.
    pub motion: MotionSpec,
    pub first: i64,
    pub last: i64,
}

/// An extra solid moving through the scene at constant velocity (e.g. a rod swept through the
/// hair, 001 Fig. 8).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColliderSpec {
    /// `capsule` (from, to, radius) or `sphere` (center, radius).
    pub shape: String,
    #[serde(default)]
    pub from: Option<[f32; 3]>,
    #[serde(default)]
    pub to: Option<[f32; 3]>,
    #[serde(default)]
    pub center: Option<[f32; 3]>,
    pub radius: f32,
    /// cm/s, constant.
    #[serde(default)]
    pub velocity: [f32; 3],
}

impl ColliderSpec {
    /// The prop this names (checked when the job is read).
    pub fn prop(&self) -> Prop {
        let v = |a: Option<[f32; 3]>| glam::Vec3::from_array(a.unwrap_or_default());
        let shape = match self.shape.as_str() {
            "capsule" => PropShape::Capsule(crate::collide::Capsule {
                a: v(self.from),
                b: v(self.to),
                radius: self.radius,
            }),
            _ => PropShape::Sphere(crate::collide::Sphere {
                center: v(self.center),
                radius: self.radius,
            }),
        };
        Prop {
            shape,
            velocity: glam::Vec3::from_array(self.velocity),
        }
    }
}

/// What the write stage produces in the output folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputSpec {
    /// `hair.abc`: the upsampled groom, every frame.
    pub abc: bool,
    /// `hair.tcache` (lossless).
    pub tcache: bool,
    /// `ply/hair.####.ply`.
    pub ply: bool,
    /// `hair.usda`: a USD layer (BasisCurves, time-sampled points).
    pub usd: bool,
    /// `hair.usdc`: the same layer in USD's binary (crate) format.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub usdc: bool,
    /// `gt.abc`: the full simulation as Alembic too.
    pub ground_truth_abc: bool,
    /// Units of the Alembic, USD and PLY outputs: "cm" (tress's), "m" or "mm".
    pub units: crate::cache::Units,
    /// Their up axis: "y" (tress's) or "z".
    pub up: crate::groom::UpAxis,
    /// The curves prim of `hair.usda` and `hair.usdc`: "/ROOT/NAME" (an Xform, the stage's default prim, and the
    /// BasisCurves under it), so several grooms of a shot can be layered into one stage.
    pub usd_prim: String,
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            abc: true,
            tcache: false,
            ply: false,
            usd: false,
            usdc: false,
            ground_truth_abc: false,
            units: crate::cache::Units::Cm,
            up: crate::groom::UpAxis::Y,
            usd_prim: crate::cache::DEFAULT_USD_PRIM.into(),
        }
    }
}

/// Preview pictures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PreviewSpec {
    /// Show every n-th frame on the contact sheets.
    pub every: usize,
    pub view: View,
    /// Tile size, WIDTHxHEIGHT.
    pub size: String,
    pub columns: usize,
    /// Frames compared side by side (ground truth | method | error), evenly spaced.
    pub compare_frames: usize,
}

impl Default for PreviewSpec {
    fn default() -> Self {
        PreviewSpec {
            every: 10,
            view: View::ThreeQuarter,
            size: "320x320".into(),
            columns: 4,
            compare_frames: 3,
        }
    }
}

/// A batch: the same job over several grooms × motions, each item in its own subfolder.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BatchSpec {
    /// Groom presets or files.
    pub grooms: Vec<String>,
    /// A folder whose groom files (by `groom_extensions`) are all added.
    pub groom_folder: Option<String>,
    pub groom_extensions: Vec<String>,
    /// Motion presets or TOML files.
    pub motions: Vec<String>,
    /// Random constant-velocity head motions instead of `motions` (the student project's
    /// experiment batch, 004): items `exp01`, `exp02`, ….
    pub experiments: Option<crate::motion::experiments::ExperimentSpec>,
    /// The head-track → hair-trajectory baseline (`"trajectory"`), trained on the first items
    /// and scored on the last `held_out` once every item is done.
    pub trajectory: Option<crate::neural::trajectory::TrajectoryConfig>,
    /// Groom groups: once every item is done, their hair caches (`hair.abc`) as the groom groups
    /// of one Alembic archive of this name in the batch's output folder (e.g.
    /// `"character.abc"`: a character's hair, beard and brows in one shot, as Unreal's groom
    /// importer reads them). Needs one motion and `[outputs] abc`.
    pub groups: Option<String>,
}
