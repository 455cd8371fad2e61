//! Job files: one TOML file describing a whole shot — groom, head, motion, material, what to
//! run and what to write. A job may `extends = "NAME|FILE"` a preset (`presets/jobs/`) and
//! override any of it; unknown keys are errors with the key's path and a suggestion.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::{Table, Value};

use crate::error::{Error, Result};
use crate::groom::UpAxis;
use crate::guides::skinning::FitOptions;
use crate::guides::{AdaptiveOptions, Method, TwoWayOptions};
use crate::presets;
use crate::presets::keys::{expand_env, merge, section};
use crate::render::View;
use crate::sim::{Material, SimOptions};

pub const TABLE: presets::Table = &[("default", include_str!("../../presets/jobs/default.toml"))];

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
    /// Random key-pose preset (gentle, walk, turn, violent) or a TOML file of one.
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
}

/// An `.mss` mass-spring scene of the student project (004) as the job's groom, head, motion,
/// material and solver settings (each still overridable by the job's own sections).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneSpec {
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

/// How guides are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Selection {
    /// A uniform lattice over the root UVs (000 §4.1).
    Lattice,
    /// Sparse coding of the training motion (001 §6.3, Eq. 9–10).
    Sparse,
}

/// Guide selection and upsampling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GuideSpec {
    /// About this many guides.
    pub count: usize,
    pub selection: Selection,
    /// Rounds of dictionary learning of the sparse selection.
    pub sparse_iterations: usize,
    /// The methods scored, each `ID` or `ID+CORRECTION` (ID: idw, nearest, static, adaptive;
    /// CORRECTION: two_way, projection, none). The first is written to hair.abc.
    pub methods: Vec<String>,
    /// One method (older jobs); `methods` supersedes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Guides each normal strand follows (IDW).
    pub neighbors: usize,
    /// Position-based correction: push upsampled strands out of the solids, keeping segment
    /// lengths (the default correction of every method).
    pub resolve_collisions: bool,
    /// Simulate the adaptive method's guides with two-way collision correction (001 §5).
    pub two_way: bool,
    /// Also score every method fed the ground truth's own guides.
    pub oracle: bool,
    /// Skinning fit (001 §6).
    pub fit: FitOptions,
    /// Runtime adaptation (001 §4).
    pub adaptive: AdaptiveOptions,
    /// Two-way correction (001 §5).
    pub correction: TwoWayOptions,
}

impl Default for GuideSpec {
    fn default() -> Self {
        GuideSpec {
            count: 200,
            selection: Selection::Lattice,
            sparse_iterations: 10,
            methods: vec!["idw".into()],
            method: None,
            neighbors: 10,
            resolve_collisions: true,
            two_way: true,
            oracle: true,
            fit: FitOptions::default(),
            adaptive: AdaptiveOptions::default(),
            correction: TwoWayOptions::default(),
        }
    }
}

/// The neural interpolator of a job (`[neural]`), trained on the `[training]` simulation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NeuralSpec {
    /// A training config: built-in name (interp_small, interp_paper) or TOML file.
    pub config: String,
    /// A trained model file (`.tnn`: `tress train interp` / `train displace`, or another job's
    /// `model.tnn` / `displaced.tnn`), relative to the job file: used as it is, nothing is
    /// trained, `config` is not read (the file carries its own) and no `[training]` is needed
    /// for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Override the config's number of training steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
    /// Override the displacement generator's steps (`[displace]` of the config; 0: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub displace_steps: Option<usize>,
    /// 000 Table 1's ablations: W_θ trained again without some loss terms (`data_only`,
    /// `no_length`, `no_snap`, `no_tempo`), each scored as a row of its own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ablations: Vec<crate::neural::interp::loss::LossAblation>,
    /// Where the networks train and run: "cpu" (Flex) or "cuda" (a build with the `cuda`
    /// feature and an NVIDIA GPU).
    #[serde(skip_serializing_if = "is_cpu")]
    pub device: crate::neural::device::DeviceKind,
}

fn is_cpu(d: &crate::neural::device::DeviceKind) -> bool {
    *d == crate::neural::device::DeviceKind::Cpu
}

impl Default for NeuralSpec {
    fn default() -> Self {
        NeuralSpec {
            config: "interp_small".into(),
            model: None,
            steps: None,
            displace_steps: None,
            ablations: Vec::new(),
            device: Default::default(),
        }
    }
}

impl NeuralSpec {
    /// The training config with the job's overrides, or the config a given `model` was trained
    /// with (with its generator's options when it has one).
    pub fn load(&self, dir: Option<&std::path::Path>) -> Result<crate::neural::interp::InterpConfig> {
        if let Some(m) = &self.model {
            if self.steps.is_some() || self.displace_steps.is_some() || !self.ablations.is_empty() {
                return Err(Error::Invalid(
                    "neural.model is a trained model: `steps`, `displace_steps` and `ablations` train one; leave them out".into(),
                ));
            }
            return crate::neural::interp::train::model_config(std::path::Path::new(m))
                .map_err(|e| Error::Invalid(format!("neural.model: {e}")));
        }
        let name = match dir {
            Some(d)
                if self.config.ends_with(".toml") && !std::path::Path::new(&self.config).is_absolute() =>
            {
                d.join(&self.config).display().to_string()
            }
            _ => self.config.clone(),
        };
        let mut c = crate::neural::interp::InterpConfig::load(&name)?;
        if let Some(s) = self.steps {
            c.train.steps = s;
        }
        match self.displace_steps {
            Some(0) => c.displace = None,
            Some(s) => c.displace.get_or_insert_with(Default::default).steps = s,
            None => {}
        }
        if c.displace.as_ref().is_some_and(|d| d.steps == 0) {
            c.displace = None;
        }
        c.validate()?;
        if let Some(d) = &c.displace {
            d.check_grid(&c.grid)?;
        }
        Ok(c)
    }
}

/// The hair-mesh simulation of a job (`[hairmesh]`, 002): a mesh built around the prepared
/// groom, simulated on the job's head and motion, scored as the row `hairmesh`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HairMeshSpec {
    /// Adds the row `hairmesh` (listing it in `guides.methods` does too, in its place).
    pub enabled: bool,
    /// Scalp-UV grid cells across the roots: one bundle per occupied cell.
    pub cells: usize,
    /// Vertex layers per column, root included.
    pub layers: usize,
    /// Solver parameters (002 gives none; tress's defaults).
    pub solver: crate::hairmesh::HairMeshParams,
}

impl Default for HairMeshSpec {
    fn default() -> Self {
        let b = crate::hairmesh::BuildOptions::default();
        HairMeshSpec {
            enabled: false,
            cells: b.cells,
            layers: b.layers,
            solver: Default::default(),
        }
    }
}

/// The quasi-static drape of a job (`[drape]`, 003): the groom draped for every frame's head
/// pose (relative to the torso) by a trained drape network or a direct minimization of the
/// drape energy, with the colliders where the frame has them; scored as the row `drape`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrapeSpec {
    /// Adds the row `drape` (listing it in `guides.methods` does too, in its place).
    pub enabled: bool,
    /// network (a trained model), lbfgs, adam or xpbd.
    pub solver: crate::neural::drape::draper::DrapeSolver,
    /// The drape network (`tress train drape`), relative to the job file; `${VAR}` expanded.
    pub model: Option<String>,
    /// Adam's steps, L-BFGS's outer steps or XPBD's iterations per step (direct solvers).
    pub iterations: Option<u64>,
    /// Adam's first step size (cm).
    pub learning_rate: f64,
    /// Scalp texture size and vertices per draped strand (direct solvers: 32 and 24 by
    /// default; a network's own).
    pub texture: Option<usize>,
    pub points: Option<usize>,
    /// The energy's stiffnesses (`[drape.material]`, direct solvers).
    pub material: Option<crate::neural::drape::DrapeMaterial>,
}

impl Default for DrapeSpec {
    fn default() -> Self {
        DrapeSpec {
            enabled: false,
            solver: crate::neural::drape::draper::DrapeSolver::Network,
            model: None,
            iterations: None,
            learning_rate: 0.05,
            texture: None,
            points: None,
            material: None,
        }
    }
}

impl DrapeSpec {
    /// The drape's settings, keys named `drape.KEY`.
    pub fn draper_spec<'a>(
        &'a self,
        key: &'a dyn Fn(&str) -> String,
    ) -> crate::neural::drape::draper::DraperSpec<'a> {
        crate::neural::drape::draper::DraperSpec {
            solver: self.solver,
            model: self.model.as_deref().map(Path::new),
            material: self.material.clone(),
            texture: self.texture,
            points: self.points,
            iterations: self.iterations,
            learning_rate: self.learning_rate,
            key,
        }
    }
}

/// `drape.KEY`, as a job's errors name the drape's settings.
pub fn drape_key(k: &str) -> String {
    format!("drape.{k}")
}

/// One scored row: a method with the collision correction applied to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MethodRow {
    /// As the job wrote it (unique; names the row's files).
    pub key: String,
    pub method: Method,
    /// Guides simulated with two-way collision correction (001 §5).
    pub two_way: bool,
    /// Position-based correction of the upsampled strands.
    pub projection: bool,
    /// The neural interpolator without its fine-scale displacement (000 Table 1's ablation row,
    /// added when the model has a displacement generator).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_displacement: bool,
    /// The neural interpolator trained without some loss terms (000 Table 1's ablation rows,
    /// `[neural] ablations`): its own W_θ, without a displacement generator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<crate::neural::interp::loss::LossAblation>,
}

impl MethodRow {
    /// `two_way`, `projection`, `two_way+projection` or `none`.
    pub fn correction(&self) -> &'static str {
        match (self.two_way, self.projection) {
            (true, true) => "two_way+projection",
            (true, false) => "two_way",
            (false, true) => "projection",
            (false, false) => "none",
        }
    }

    /// The row's files' stem (`parts/<stem>.A-B.tcache`).
    pub fn stem(&self) -> String {
        self.key.replace(['+', '~'], "_")
    }

    /// What reports call it.
    pub fn name(&self, guides: usize) -> String {
        let correction = match (self.two_way, self.projection) {
            (true, true) => " + two-way correction + collision projection",
            (true, false) => " + two-way correction",
            (false, true) => " + collision projection",
            (false, false) => "",
        };
        let what = match self.method {
            Method::Idw => "IDW",
            Method::Nearest => "nearest guide",
            Method::Static => "static skinning",
            Method::Adaptive => "adaptive skinning",
            Method::Neural if self.loss.is_some() => {
                return format!(
                    "{guides} guides + neural interpolation, {} (w/o displacement){correction}",
                    self.loss.expect("some").describe()
                );
            }
            Method::Neural if self.no_displacement => "neural interpolation w/o fine-scale displacement",
            Method::Neural => "neural interpolation",
            Method::Hairmesh => return format!("hair-mesh simulation{correction}"),
            Method::Drape => return format!("quasi-static drape{correction}"),
        };
        format!("{guides} guides + {what}{correction}")
    }
}

/// A full simulation of the same groom on another motion, to fit or train upsamplers from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingSpec {
    /// A motion preset name, or a file (a preset TOML, glTF, Alembic or track file).
    pub motion: String,
    /// Overrides the preset's seed.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Frames of the training simulation, `A-B`.
    pub frames: String,
    /// glTF node / Alembic xform or mesh of a motion file, as in [motion].
    #[serde(default)]
    pub node: Option<String>,
    #[serde(default)]
    pub xform: Option<String>,
    #[serde(default)]
    pub mesh: Option<String>,
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
    /// `hair.usda`: a USD layer (BasisCurves, time-sampled points), centimetres, Y up.
    pub usd: bool,
    /// `gt.abc`: the full simulation as Alembic too.
    pub ground_truth_abc: bool,
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            abc: true,
            tcache: false,
            ply: false,
            usd: false,
            ground_truth_abc: false,
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
}

/// A whole job, after `extends` and with paths resolved.
#[derive(Clone, Debug)]
pub struct Job {
    pub name: String,
    /// The job file (`None` for a job built in code).
    pub file: Option<PathBuf>,
    /// Output folder.
    pub output: PathBuf,
    pub first: i64,
    pub last: i64,
    pub fps: f64,
    pub seed: u64,
    pub checkpoint_every: Option<u32>,
    pub groom: GroomSpec,
    pub head: HeadSpec,
    pub motion: MotionSpec,
    /// The material preset in use: the job's `material.preset`, else the groom style's.
    pub material_preset: String,
    pub material: Material,
    /// `material.preset` as the job set it (`None`: follow the groom's style).
    material_choice: Option<String>,
    /// The job's per-key material overrides.
    material_overrides: Table,
    /// Folder that relative material files are read from.
    material_dir: PathBuf,
    pub simulate: SimOptions,
    pub guides: GuideSpec,
    /// The neural interpolator's training config (jobs with the neural method).
    pub neural: NeuralSpec,
    pub neural_config: Option<crate::neural::interp::InterpConfig>,
    pub hairmesh: HairMeshSpec,
    pub drape: DrapeSpec,
    /// The scored rows of `guides.methods`, parsed.
    pub rows: Vec<MethodRow>,
    /// The training simulation, with its frame range.
    pub training: Option<(TrainingSpec, MotionSpec, i64, i64)>,
    /// Extra moving solids.
    pub colliders: Vec<ColliderSpec>,
    pub outputs: OutputSpec,
    pub preview: PreviewSpec,
    /// The merged TOML (for the report and content hashes).
    pub table: Table,
    pub batch: Option<BatchSpec>,
    /// The `.mss` scene the job runs (`[scene]`), with its physics in tress's terms.
    pub scene: Option<(SceneSpec, crate::scene::mss::MssPhysics)>,
}

/// Top-level keys of a job file.
const TOP: &[&str] = &[
    "extends",
    "name",
    "output",
    "frames",
    "fps",
    "seed",
    "checkpoint_every",
    "groom",
    "head",
    "motion",
    "material",
    "simulate",
    "guides",
    "training",
    "neural",
    "hairmesh",
    "drape",
    "colliders",
    "outputs",
    "preview",
    "batch",
    "scene",
];

fn parse_table(text: &str, origin: &str) -> Result<Table> {
    toml::from_str(text).map_err(|e| Error::Invalid(format!("{origin}: {}", e.to_string().trim())))
}

/// A job that names its own motion source (or groom) replaces the one it extends rather than
/// adding a second: `[motion] gltf = …` over the default `preset = "gentle"` is a glTF motion.
fn replace_sources(base: &mut Table, over: &Table) {
    for (section, sources, with) in [
        (
            "motion",
            &["preset", "gltf", "abc", "track", "velocity", "angular_velocity"][..],
            &["node", "animation", "xform", "mesh", "pivot", "moving"][..],
        ),
        ("groom", &["preset", "file"][..], &[][..]),
    ] {
        let sets = over
            .get(section)
            .and_then(Value::as_table)
            .is_some_and(|t| sources.iter().any(|k| t.contains_key(*k)));
        if sets && let Some(Value::Table(b)) = base.get_mut(section) {
            for k in sources.iter().chain(with) {
                b.remove(*k);
            }
        }
    }
}

impl Job {
    /// Reads a job file.
    pub fn load(path: &Path) -> Result<Job> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| Error::Invalid(format!("{origin}: {e}")))?;
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let mut job = Job::from_table(parse_table(&text, &origin)?, &origin, &dir)?;
        job.file = Some(path.to_path_buf());
        Ok(job)
    }

    /// Builds a job from TOML (`dir` resolves relative paths).
    pub fn from_table(table: Table, origin: &str, dir: &Path) -> Result<Job> {
        let table_in = table.clone();
        for k in table.keys() {
            if !TOP.contains(&k.as_str()) {
                let hint = crate::presets::keys::suggest(k, TOP)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                return Err(Error::Invalid(format!("{origin}: unknown key `{k}`{hint}")));
            }
        }
        // Everything not given comes from the default preset.
        let mut t = if table.contains_key("extends") {
            crate::presets::extend("job", TABLE, table, origin, dir, &replace_sources)?
        } else {
            let mut with = table;
            with.insert("extends".into(), Value::String("default".into()));
            crate::presets::extend("job", TABLE, with, origin, dir, &replace_sources)?
        };
        t.remove("extends");
        let get = |k: &str| t.get(k).cloned().unwrap_or(Value::Table(Table::new()));
        let str_of = |k: &str| -> Result<String> {
            t.get(k)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| Error::Invalid(format!("{origin}: `{k}` must be a string")))
        };
        let name = str_of("name")?;
        let output = dir.join(expand_env(&str_of("output")?, origin)?);
        let (first, last) = crate::cache::parse_frame_range(&str_of("frames")?)
            .map_err(|e| Error::Invalid(format!("{origin}: frames: {e}")))?;
        if first.fract() != 0.0 || last.fract() != 0.0 {
            return Err(Error::Invalid(format!("{origin}: frames must be whole numbers")));
        }
        let fps: f64 = section(get("fps"), "fps", origin)?;
        if !(fps > 0.0 && fps.is_finite()) {
            return Err(Error::Invalid(format!("{origin}: fps must be positive")));
        }
        let seed: u64 = section(get("seed"), "seed", origin)?;
        let checkpoint_every: Option<u32> = match t.get("checkpoint_every") {
            Some(v) => Some(section(v.clone(), "checkpoint_every", origin)?),
            None => None,
        };
        let mut groom: GroomSpec = section(get("groom"), "groom", origin)?;
        let scene = match t.get("scene") {
            Some(v) => Some(load_scene(v, &table_in, &mut groom, fps, origin, dir)?),
            None => None,
        };
        if let Some(f) = &groom.file {
            groom.file = Some(dir.join(expand_env(f, origin)?).display().to_string());
            groom.preset = None;
        }
        if groom.preset.is_none() && groom.file.is_none() {
            return Err(Error::Invalid(format!(
                "{origin}: [groom] needs `preset` or `file`"
            )));
        }
        if let Some(p) = &groom.preset {
            crate::groom::presets::load(p)
                .map_err(|e| Error::Invalid(format!("{origin}: groom.preset: {e}")))?;
        }
        for (i, e) in groom.edits.iter().enumerate() {
            crate::groom::edit::Edit::parse(e)
                .map_err(|x| Error::Invalid(format!("{origin}: groom.edits[{i}]: {x}")))?;
        }
        let mut head: HeadSpec = section(get("head"), "head", origin)?;
        if scene.is_some() && !table_has(&table_in, "head", "collider") {
            // The scene's own sphere head (see `scene::file_shapes`).
            head.collider = "sphere".into();
        }
        if groom.file.is_some() && head.collider == "procedural" {
            return Err(Error::Invalid(format!(
                "{origin}: head.collider = \"procedural\" is the cranium of procedural grooms; with groom.file give a head mesh, or \"sphere\" to fit one to the roots"
            )));
        }
        if !matches!(head.collider.as_str(), "procedural" | "sphere") {
            head.collider = dir
                .join(expand_env(&head.collider, origin)?)
                .display()
                .to_string();
        }
        // An animated body mesh is a file (or sequence) relative to the job file.
        if let Some(b) = &head.body
            && crate::collide::deforming::is_body_mesh(b)
        {
            head.body = Some(dir.join(expand_env(b, origin)?).display().to_string());
        }
        let mut motion: MotionSpec = section(get("motion"), "motion", origin)?;
        for p in [&mut motion.gltf, &mut motion.abc, &mut motion.track]
            .into_iter()
            .flatten()
        {
            *p = dir.join(expand_env(p, origin)?).display().to_string();
        }
        if let Some(p) = &motion.preset
            && p.ends_with(".toml")
        {
            motion.preset = Some(dir.join(expand_env(p, origin)?).display().to_string());
        }
        if let Some((_, phys)) = &scene {
            let own = table_in.get("motion").and_then(Value::as_table).is_some_and(|m| {
                ["preset", "gltf", "abc", "track", "velocity", "angular_velocity"]
                    .iter()
                    .any(|k| m.contains_key(*k))
            });
            if !own {
                // The scene's velocity; the job's own `moving` and `pivot` still apply.
                motion = MotionSpec {
                    velocity: Some(phys.velocity.to_array()),
                    moving: motion.moving,
                    pivot: motion.pivot,
                    ..MotionSpec::default()
                };
            }
            if motion.angular_velocity.is_some() && motion.pivot.is_none() {
                motion.pivot = Some(phys.centre.as_dvec3().to_array());
            }
        }
        check_motion(&motion, "motion", origin)?;
        // Material: a preset (by default the one made for the groom's style), with any of its
        // keys overridden.
        let mut material_overrides = match get("material") {
            Value::Table(m) => m,
            _ => return Err(Error::Invalid(format!("{origin}: [material] must be a table"))),
        };
        let material_choice = match material_overrides.remove("preset") {
            Some(Value::String(s)) => Some(s),
            Some(_) => {
                return Err(Error::Invalid(format!(
                    "{origin}: material.preset must be a string"
                )));
            }
            None => None,
        };
        let (material_preset, material) = resolve_material(
            &groom,
            material_choice.as_deref(),
            scene.as_ref().map(|(_, p)| &p.material),
            &material_overrides,
            origin,
            dir,
        )?;
        let simulate: SimOptions = match &scene {
            // The scene's solver settings under the job's own.
            Some((spec, phys)) => {
                let mut base = Table::try_from(crate::scene::mss::sim_options(
                    phys,
                    spec.substeps.unwrap_or(crate::scene::mss::DEFAULT_SUBSTEPS),
                ))
                .map_err(|e| Error::Runtime(format!("scene solver settings: {e}")))?;
                if let Some(Value::Table(own)) = table_in.get("simulate") {
                    merge(&mut base, own.clone());
                }
                section(Value::Table(base), "simulate", origin)?
            }
            None => section(get("simulate"), "simulate", origin)?,
        };
        simulate
            .check()
            .map_err(|e| Error::Invalid(format!("{origin}: simulate.{e}")))?;
        let mut guides: GuideSpec = section(get("guides"), "guides", origin)?;
        // An older job's single `method`, unless it lists `methods` itself.
        if let Some(m) = guides.method.take() {
            let own = table_has(&table_in, "guides", "methods");
            if !own {
                guides.methods = vec![m];
            }
        }
        // The solver table on its own, so its keys are named `hairmesh.solver.KEY`.
        let mut hairmesh_table = get("hairmesh");
        let solver = match &mut hairmesh_table {
            Value::Table(t) => t.remove("solver"),
            _ => None,
        };
        let mut hairmesh: HairMeshSpec = section(hairmesh_table, "hairmesh", origin)?;
        if let Some(v) = solver {
            hairmesh.solver = section(v, "hairmesh.solver", origin)?;
        }
        let mut rows = parse_rows(&guides, origin)?;
        if hairmesh.enabled && !rows.iter().any(|r| r.method == Method::Hairmesh) {
            rows.push(MethodRow {
                key: "hairmesh".into(),
                method: Method::Hairmesh,
                two_way: false,
                projection: guides.resolve_collisions,
                no_displacement: false,
                loss: None,
            });
        }
        if rows.iter().any(|r| r.method == Method::Hairmesh) {
            if hairmesh.cells == 0 || !(2..=64).contains(&hairmesh.layers) {
                return Err(Error::Invalid(format!(
                    "{origin}: hairmesh: cells must be at least 1 and layers within 2..=64"
                )));
            }
            hairmesh
                .solver
                .check()
                .map_err(|e| Error::Invalid(format!("{origin}: hairmesh.solver.{e}")))?;
        }
        // The material table on its own, so its keys are named `drape.material.KEY`.
        let mut drape_table = get("drape");
        let drape_material = match &mut drape_table {
            Value::Table(t) => t.remove("material"),
            _ => None,
        };
        let mut drape: DrapeSpec = section(drape_table, "drape", origin)?;
        if let Some(v) = drape_material {
            drape.material = Some(section(v, "drape.material", origin)?);
        }
        if let Some(m) = &drape.model {
            drape.model = Some(dir.join(expand_env(m, origin)?).display().to_string());
        }
        if drape.enabled && !rows.iter().any(|r| r.method == Method::Drape) {
            rows.push(MethodRow {
                key: "drape".into(),
                method: Method::Drape,
                two_way: false,
                projection: guides.resolve_collisions,
                no_displacement: false,
                loss: None,
            });
        }
        if rows.iter().any(|r| r.method == Method::Drape) {
            drape
                .draper_spec(&drape_key)
                .check()
                .map_err(|e| Error::Invalid(format!("{origin}: {e}")))?;
        }
        let mut neural: NeuralSpec = section(get("neural"), "neural", origin)?;
        if let Some(m) = &neural.model {
            neural.model = Some(dir.join(expand_env(m, origin)?).display().to_string());
        }
        neural.device.check().map_err(|_| {
            Error::Invalid(format!(
                "{origin}: neural.device = \"cuda\" needs a tress built with `--features cuda`"
            ))
        })?;
        let neural_config = if rows.iter().any(|r| r.method == Method::Neural) {
            Some(neural.load(Some(dir)).map_err(|e| match neural.model {
                Some(_) => Error::Invalid(format!("{origin}: {e}")),
                None => Error::Invalid(format!("{origin}: neural.config: {e}")),
            })?)
        } else {
            None
        };
        // 000 Table 1's "w/o fine-scale displacement": the same model without its generator.
        if neural_config.as_ref().is_some_and(|c| c.displace.is_some()) {
            let ablations: Vec<MethodRow> = rows
                .iter()
                .filter(|r| r.method == Method::Neural && !r.no_displacement)
                .map(|r| MethodRow {
                    key: format!("{}~no_displacement", r.key),
                    no_displacement: true,
                    ..r.clone()
                })
                .collect();
            rows.extend(ablations);
        }
        // 000 Table 1's loss ablations: one row each after the first neural row.
        if let Some(c) = &neural_config {
            let mut seen = Vec::new();
            for &a in &neural.ablations {
                if seen.contains(&a) {
                    return Err(Error::Invalid(format!(
                        "{origin}: neural.ablations lists {} twice",
                        a.id()
                    )));
                }
                seen.push(a);
                if a.apply(&c.loss).is_none() {
                    return Err(Error::Invalid(format!(
                        "{origin}: neural.ablations: {}: the config ({}) already trains without it",
                        a.id(),
                        neural.config
                    )));
                }
            }
            if let Some(first) = rows
                .iter()
                .find(|r| r.method == Method::Neural && !r.no_displacement)
                .cloned()
            {
                rows.extend(neural.ablations.iter().map(|&a| MethodRow {
                    key: format!("{}~{}", first.key, a.id()),
                    no_displacement: false,
                    loss: Some(a),
                    ..first.clone()
                }));
            }
        } else if !neural.ablations.is_empty() {
            return Err(Error::Invalid(format!(
                "{origin}: neural.ablations needs the neural method in guides.methods"
            )));
        }
        let training = match t.get("training") {
            Some(v) => {
                let spec: TrainingSpec = section(v.clone(), "training", origin)?;
                let (a, b) = crate::cache::parse_frame_range(&spec.frames)
                    .map_err(|e| Error::Invalid(format!("{origin}: training.frames: {e}")))?;
                if a.fract() != 0.0 || b.fract() != 0.0 || b < a {
                    return Err(Error::Invalid(format!(
                        "{origin}: training.frames must be whole numbers, first ≤ last"
                    )));
                }
                let motion = training_motion(&spec, origin, dir)?;
                check_motion(&motion, "training", origin)?;
                Some((spec, motion, a as i64, b as i64))
            }
            None => None,
        };
        if training.is_none() {
            let needs: Vec<&str> = rows
                .iter()
                .filter(|r| {
                    r.method.needs_training() && !(r.method == Method::Neural && neural.model.is_some())
                })
                .map(|r| r.key.as_str())
                .collect();
            if !needs.is_empty() {
                return Err(Error::Invalid(format!(
                    "{origin}: guides.methods {needs:?} are fitted or trained on a training simulation: add a [training] section (motion, seed, frames)"
                )));
            }
            if guides.selection == Selection::Sparse {
                return Err(Error::Invalid(format!(
                    "{origin}: guides.selection = \"sparse\" codes the training motion: add a [training] section"
                )));
            }
        }
        let colliders: Vec<ColliderSpec> = match t.get("colliders") {
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let c: ColliderSpec = section(v.clone(), &format!("colliders[{i}]"), origin)?;
                    check_collider(&c)
                        .map_err(|e| Error::Invalid(format!("{origin}: colliders[{i}]: {e}")))?;
                    Ok(c)
                })
                .collect::<Result<_>>()?,
            Some(_) => {
                return Err(Error::Invalid(format!(
                    "{origin}: `colliders` is a list of tables: write each as [[colliders]]"
                )));
            }
            None => Vec::new(),
        };
        let outputs: OutputSpec = section(get("outputs"), "outputs", origin)?;
        let preview: PreviewSpec = section(get("preview"), "preview", origin)?;
        let batch: Option<BatchSpec> = match t.get("batch") {
            Some(v) => {
                let mut b: BatchSpec = section(v.clone(), "batch", origin)?;
                for g in &mut b.grooms {
                    if !presets_has(g) {
                        *g = dir.join(expand_env(g, origin)?).display().to_string();
                    }
                }
                if let Some(f) = &b.groom_folder {
                    b.groom_folder = Some(dir.join(expand_env(f, origin)?).display().to_string());
                }
                for m in &mut b.motions {
                    if m.ends_with(".toml") {
                        *m = dir.join(expand_env(m, origin)?).display().to_string();
                    }
                }
                if scene.is_some() && (!b.grooms.is_empty() || b.groom_folder.is_some()) {
                    return Err(Error::Invalid(format!(
                        "{origin}: [scene] mss is the batch's groom: leave out batch.grooms and batch.groom_folder"
                    )));
                }
                if let Some(e) = &b.experiments {
                    if !b.motions.is_empty() {
                        return Err(Error::Invalid(format!(
                            "{origin}: batch.experiments are the batch's motions: leave out batch.motions"
                        )));
                    }
                    e.check()
                        .map_err(|x| Error::Invalid(format!("{origin}: batch.experiments.{x}")))?;
                }
                if let Some(tr) = &b.trajectory {
                    tr.check()
                        .map_err(|x| Error::Invalid(format!("{origin}: batch.trajectory.{x}")))?;
                }
                Some(b)
            }
            None => None,
        };
        if scene.is_some() {
            // The merged table shows what the scene set (reports, dry runs, content hashes).
            let mut put = |k: &str, v: std::result::Result<Table, toml::ser::Error>| -> Result<()> {
                let v = v.map_err(|e| Error::Runtime(format!("{k}: {e}")))?;
                t.insert(k.into(), Value::Table(v));
                Ok(())
            };
            put("groom", Table::try_from(&groom))?;
            put("head", Table::try_from(&head))?;
            put("motion", Table::try_from(&motion))?;
            put("material", Table::try_from(&material))?;
            put("simulate", Table::try_from(&simulate))?;
        }
        Ok(Job {
            name,
            file: None,
            output,
            first: first as i64,
            last: last as i64,
            fps,
            seed,
            checkpoint_every,
            groom,
            head,
            motion,
            material_preset,
            material,
            material_choice,
            material_overrides,
            material_dir: dir.to_path_buf(),
            simulate,
            guides,
            neural,
            neural_config,
            hairmesh,
            drape,
            rows,
            training,
            colliders,
            outputs,
            preview,
            table: t,
            batch,
            scene,
        })
    }

    /// The jobs a batch stands for (grooms × motions, each in `output/<groom>-<motion>`), or
    /// this job alone.
    pub fn items(&self) -> Result<Vec<Job>> {
        let Some(b) = &self.batch else {
            return Ok(vec![self.clone()]);
        };
        let mut grooms = b.grooms.clone();
        if let Some(folder) = &b.groom_folder {
            let exts: Vec<String> = if b.groom_extensions.is_empty() {
                ["hair", "data", "ply", "tfx", "tfxproj", "abc"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            } else {
                b.groom_extensions.clone()
            };
            let mut found: Vec<String> = std::fs::read_dir(folder)
                .map_err(|e| Error::Invalid(format!("batch.groom_folder {folder}: {e}")))?
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.is_file()
                        && p.extension()
                            .is_some_and(|x| exts.iter().any(|e| x.eq_ignore_ascii_case(e)))
                })
                .map(|p| p.display().to_string())
                .collect();
            found.sort();
            grooms.extend(found);
        }
        if grooms.is_empty() {
            grooms.push(String::new());
        }
        let stem = |s: &str| {
            Path::new(s)
                .file_stem()
                .map(|x| x.to_string_lossy().to_string())
                .unwrap_or_else(|| s.to_string())
        };
        // Each motion with its item name part ("" for the job's own motion).
        let motions: Vec<(String, Option<MotionSpec>)> = if let Some(e) = &b.experiments {
            let pivot = self
                .scene
                .as_ref()
                .map(|(_, p)| p.centre.as_dvec3())
                .unwrap_or_default();
            let width = e.count.to_string().len().max(2);
            e.draw(pivot)
                .into_iter()
                .enumerate()
                .map(|(i, m)| {
                    let spec = MotionSpec {
                        velocity: Some(m.velocity.to_array()),
                        angular_velocity: Some(m.angular_velocity.to_array()),
                        pivot: Some(m.pivot.to_array()),
                        moving: Some(m.duration),
                        ..MotionSpec::default()
                    };
                    (format!("exp{:0width$}", i + 1), Some(spec))
                })
                .collect()
        } else if b.motions.is_empty() {
            vec![(String::new(), None)]
        } else {
            b.motions
                .iter()
                .map(|m| {
                    let spec = MotionSpec {
                        preset: Some(m.clone()),
                        ..MotionSpec::default()
                    };
                    (stem(m), Some(spec))
                })
                .collect()
        };
        let mut out = Vec::new();
        for g in &grooms {
            for (name, m) in &motions {
                let mut j = self.clone();
                j.batch = None;
                let mut parts = Vec::new();
                if !g.is_empty() {
                    if presets_has(g) {
                        j.groom.preset = Some(g.clone());
                        j.groom.file = None;
                    } else {
                        j.groom.file = Some(g.clone());
                        j.groom.preset = None;
                    }
                    parts.push(stem(g));
                }
                if let Some(m) = m {
                    j.motion = m.clone();
                    if let Ok(t) = Table::try_from(m) {
                        j.table.insert("motion".into(), Value::Table(t));
                    }
                    parts.push(name.clone());
                }
                if self.material_choice.is_none() {
                    let origin = format!("batch item {}", parts.join("-"));
                    (j.material_preset, j.material) = resolve_material(
                        &j.groom,
                        None,
                        self.scene.as_ref().map(|(_, p)| &p.material),
                        &self.material_overrides,
                        &origin,
                        &self.material_dir,
                    )?;
                }
                let item = parts.join("-");
                j.name = format!("{}/{item}", self.name);
                j.output = self.output.join(&item);
                // The item's own settings, for content hashes and reports.
                j.table.remove("batch");
                j.table.insert("item".into(), Value::String(item));
                out.push(j);
            }
        }
        Ok(out)
    }
}

/// Reads `[scene]`: the `.mss` file becomes the groom (in scene units of `unit` cm, its own
/// sampling unless the job sets `groom.points`), and its physics is worked out.
fn load_scene(
    v: &Value,
    own: &Table,
    groom: &mut GroomSpec,
    fps: f64,
    origin: &str,
    dir: &Path,
) -> Result<(SceneSpec, crate::scene::mss::MssPhysics)> {
    let mut spec: SceneSpec = section(v.clone(), "scene", origin)?;
    if table_has(own, "groom", "preset") || table_has(own, "groom", "file") {
        return Err(Error::Invalid(format!(
            "{origin}: [scene] mss is the job's groom: leave out groom.preset and groom.file"
        )));
    }
    let substeps = *spec
        .substeps
        .get_or_insert(crate::scene::mss::default_substeps(fps));
    if !(1..=10_000).contains(&substeps) {
        return Err(Error::Invalid(format!(
            "{origin}: scene.substeps must be within 1..=10000"
        )));
    }
    // The groom file is resolved against the job's folder with the other groom files.
    groom.file = Some(spec.mss.clone());
    spec.mss = dir.join(expand_env(&spec.mss, origin)?).display().to_string();
    let file = tress_formats::mss::read(&spec.mss)
        .map_err(|e| Error::Invalid(format!("{origin}: scene.mss: {e}")))?;
    let phys = crate::scene::mss::physics(&file, spec.unit, UpAxis::Y)
        .map_err(|e| Error::Invalid(format!("{origin}: scene.mss {}: {e}", spec.mss)))?;
    groom.preset = None;
    groom.strands = None;
    groom.scale = spec.unit;
    groom.up = UpAxis::Y;
    if !table_has(own, "groom", "points") {
        groom.points = 0;
    }
    Ok((spec, phys))
}

/// Whether the job's own table (before `extends`) sets `section.key`.
fn table_has(t: &Table, section: &str, key: &str) -> bool {
    t.get(section)
        .and_then(Value::as_table)
        .is_some_and(|s| s.contains_key(key))
}

/// The scored rows of `[guides] methods`.
fn parse_rows(g: &GuideSpec, origin: &str) -> Result<Vec<MethodRow>> {
    if g.methods.is_empty() {
        return Err(Error::Invalid(format!(
            "{origin}: guides.methods is empty: name at least one method"
        )));
    }
    let mut rows: Vec<MethodRow> = Vec::new();
    for entry in &g.methods {
        let (id, correction) = match entry.split_once('+') {
            Some((a, b)) => (a.trim(), Some(b.trim())),
            None => (entry.trim(), None),
        };
        if id == "trajectory" {
            return Err(Error::Invalid(format!(
                "{origin}: guides.methods: `trajectory` is trained across a batch's items, not run in one job: add [batch.trajectory] (with [batch.experiments] or batch.motions)"
            )));
        }
        let method: Method = id
            .parse()
            .map_err(|e| Error::Invalid(format!("{origin}: guides.methods: {e}")))?;
        let (two_way, projection) = match correction {
            None => (g.two_way && method == Method::Adaptive, g.resolve_collisions),
            Some("two_way") => (true, false),
            Some("projection") => (false, true),
            Some("two_way+projection") => (true, true),
            Some("none") => (false, false),
            Some(other) => {
                return Err(Error::Invalid(format!(
                    "{origin}: guides.methods {entry:?}: unknown correction {other:?} (two_way, projection, none)"
                )));
            }
        };
        if two_way && !method.needs_skinning() {
            return Err(Error::Invalid(format!(
                "{origin}: guides.methods {entry:?}: two-way correction works through fitted skinning (static, adaptive)"
            )));
        }
        if rows.iter().any(|r| r.key == *entry) {
            return Err(Error::Invalid(format!(
                "{origin}: guides.methods lists {entry:?} twice"
            )));
        }
        rows.push(MethodRow {
            key: entry.clone(),
            method,
            two_way,
            projection,
            no_displacement: false,
            loss: None,
        });
    }
    Ok(rows)
}

/// The training motion as a [motion] section: a preset name or preset file, else a motion file
/// by its extension.
fn training_motion(spec: &TrainingSpec, origin: &str, dir: &Path) -> Result<MotionSpec> {
    let m = &spec.motion;
    let is_preset = crate::motion::random::TABLE.iter().any(|(n, _)| *n == m.as_str());
    let mut out = MotionSpec {
        seed: spec.seed,
        node: spec.node.clone(),
        xform: spec.xform.clone(),
        mesh: spec.mesh.clone(),
        ..MotionSpec::default()
    };
    if is_preset {
        out.preset = Some(m.clone());
        return Ok(out);
    }
    let path = dir.join(expand_env(m, origin)?).display().to_string();
    let lower = m.to_ascii_lowercase();
    if lower.ends_with(".toml") {
        out.preset = Some(path);
    } else if lower.ends_with(".glb") || lower.ends_with(".gltf") {
        out.gltf = Some(path);
    } else if lower.ends_with(".abc") {
        out.abc = Some(path);
    } else {
        out.track = Some(path);
    }
    Ok(out)
}

/// One motion source, its options only with their file, and a preset that exists: caught when
/// the job is read, not after stages have run.
fn check_motion(m: &MotionSpec, section: &str, origin: &str) -> Result<()> {
    let given: Vec<&str> = [
        ("preset", m.preset.is_some()),
        ("gltf", m.gltf.is_some()),
        ("abc", m.abc.is_some()),
        ("track", m.track.is_some()),
        ("velocity", m.is_constant()),
    ]
    .into_iter()
    .filter(|(_, on)| *on)
    .map(|(k, _)| k)
    .collect();
    if given.len() > 1 {
        return Err(Error::Invalid(format!(
            "{origin}: [{section}] sets {}: give one motion source (a preset, a glTF, Alembic or track file, or a constant velocity)",
            given
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(" and ")
        )));
    }
    let file = "it goes with `gltf` or `abc`";
    for (key, on, needs, with) in [
        (
            "node",
            m.node.is_some(),
            m.gltf.is_some() || m.abc.is_some(),
            file,
        ),
        (
            "animation",
            m.animation.is_some(),
            m.gltf.is_some(),
            "it goes with `gltf`",
        ),
        ("xform", m.xform.is_some(), m.abc.is_some(), "it goes with `abc`"),
        ("mesh", m.mesh.is_some(), m.abc.is_some(), "it goes with `abc`"),
        (
            "pivot",
            m.pivot.is_some(),
            m.angular_velocity.is_some(),
            "it goes with `angular_velocity`",
        ),
        (
            "moving",
            m.moving.is_some(),
            m.is_constant(),
            "it goes with `velocity` or `angular_velocity`",
        ),
    ] {
        if on && !needs && section == "motion" {
            return Err(Error::Invalid(format!(
                "{origin}: `{section}.{key}` has nothing to apply to ({with})"
            )));
        }
    }
    let finite = |v: &Option<[f64; 3]>| v.is_none_or(|a| a.iter().all(|x| x.is_finite()));
    if !finite(&m.velocity) || !finite(&m.angular_velocity) || !finite(&m.pivot) {
        return Err(Error::Invalid(format!(
            "{origin}: {section}: velocity, angular_velocity and pivot must be finite"
        )));
    }
    if m.moving.is_some_and(|t| !(t >= 0.0 && t.is_finite())) {
        return Err(Error::Invalid(format!(
            "{origin}: {section}.moving must be a number of seconds, not negative"
        )));
    }
    if let Some(p) = &m.preset {
        crate::motion::RandomMotion::preset(p)
            .map_err(|e| Error::Invalid(format!("{origin}: {section}: {e}")))?;
    }
    Ok(())
}

fn check_collider(c: &ColliderSpec) -> std::result::Result<(), String> {
    if !(c.radius > 0.0 && c.radius.is_finite()) {
        return Err("radius must be positive".into());
    }
    let finite = |v: &Option<[f32; 3]>| v.is_none_or(|a| a.iter().all(|x| x.is_finite()));
    if !finite(&c.from) || !finite(&c.to) || !finite(&c.center) || !c.velocity.iter().all(|x| x.is_finite()) {
        return Err("coordinates must be finite".into());
    }
    match c.shape.as_str() {
        "capsule" if c.from.is_some() && c.to.is_some() => Ok(()),
        "capsule" => Err("a capsule needs `from` and `to`".into()),
        "sphere" if c.center.is_some() => Ok(()),
        "sphere" => Err("a sphere needs `center`".into()),
        other => Err(format!("shape {other:?}: the shapes are capsule and sphere")),
    }
}

/// The material of a job: preset `choice` (else the one made for the groom's procedural style,
/// `straight` for groom files) with `overrides` merged over it.
fn resolve_material(
    groom: &GroomSpec,
    choice: Option<&str>,
    scene: Option<&Material>,
    overrides: &Table,
    origin: &str,
    dir: &Path,
) -> Result<(String, Material)> {
    if let (Some(m), None) = (scene, choice) {
        // An .mss scene's springs, with the job's own keys over them.
        let mut base = Table::try_from(m).map_err(|e| Error::Runtime(format!("scene material: {e}")))?;
        merge(&mut base, overrides.clone());
        let material: Material = section(Value::Table(base), "material", origin)?;
        material
            .check()
            .map_err(|e| Error::Invalid(format!("{origin}: material: {e}")))?;
        return Ok(("scene".into(), material));
    }
    let name = match choice {
        Some(c) => c.to_string(),
        None => {
            let style = match (&groom.preset, &groom.file) {
                (Some(p), None) => Some(
                    crate::groom::presets::load(p)
                        .map_err(|e| Error::Invalid(format!("{origin}: groom.preset: {e}")))?
                        .style,
                ),
                _ => None,
            };
            Material::preset_for_style(style).to_string()
        }
    };
    let mut base: Table = match crate::sim::material::TABLE.iter().find(|(n, _)| *n == name) {
        Some((_, text)) => parse_table(text, &format!("material preset {name}"))?,
        None => {
            let p = dir.join(expand_env(&name, origin)?);
            let text = std::fs::read_to_string(&p).map_err(|e| {
                Error::Invalid(format!(
                    "{origin}: material.preset {name:?}: {}: {e}",
                    p.display()
                ))
            })?;
            parse_table(&text, &p.display().to_string())?
        }
    };
    merge(&mut base, overrides.clone());
    let material: Material = section(Value::Table(base), "material", origin)?;
    material
        .check()
        .map_err(|e| Error::Invalid(format!("{origin}: material: {e}")))?;
    Ok((name, material))
}

fn presets_has(name: &str) -> bool {
    crate::groom::presets::TABLE.iter().any(|(n, _)| *n == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(text: &str) -> Result<Job> {
        Job::from_table(parse_table(text, "job.toml")?, "job.toml", Path::new("/tmp"))
    }

    #[test]
    fn constant_motion_and_experiments_are_checked() {
        let j = job("name = 'c'\n[motion]\nvelocity = [10.0, 0.0, 0.0]\nangular_velocity = [0.0, 45.0, 0.0]\nmoving = 1.5")
            .unwrap();
        assert!(
            j.motion.preset.is_none(),
            "a constant motion replaces the default preset"
        );
        assert_eq!(j.motion.moving, Some(1.5));
        let e = job("name = 'c'\n[motion]\npivot = [0.0, 1.0, 0.0]")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("motion.pivot") && e.contains("angular_velocity"),
            "{e}"
        );
        let e = job("name = 'c'\n[motion]\nvelocity = [1.0, 0.0, 0.0]\nmoving = -1.0")
            .unwrap_err()
            .to_string();
        assert!(e.contains("motion.moving"), "{e}");
        let e = job("name = 'c'\n[motion]\nvelocity = [1.0, 0.0, 0.0]\npreset = 'walk'")
            .unwrap_err()
            .to_string();
        assert!(e.contains("one motion source"), "{e}");
        let b = job("name = 'b'\n[batch.experiments]\ncount = 3\nseed = 4").unwrap();
        let items = b.items().unwrap();
        let names: Vec<_> = items
            .iter()
            .map(|i| i.output.file_name().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["exp01", "exp02", "exp03"]);
        assert!(
            items
                .iter()
                .all(|i| i.motion.is_constant() && i.motion.moving.is_some())
        );
        assert_ne!(items[0].motion, items[1].motion);
        let e = job("name = 'b'\n[batch]\nmotions = ['walk']\n[batch.experiments]\ncount = 3")
            .unwrap_err()
            .to_string();
        assert!(e.contains("leave out batch.motions"), "{e}");
        let e = job("name = 'b'\n[batch.experiments]\nspeed = [5.0, 1.0]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("batch.experiments.speed"), "{e}");
        let e = job("name = 'b'\n[guides]\nmethods = ['trajectory']")
            .unwrap_err()
            .to_string();
        assert!(e.contains("[batch.trajectory]"), "{e}");
        let e = job("name = 'b'\n[batch.trajectory]\nheld_out = 0")
            .unwrap_err()
            .to_string();
        assert!(e.contains("batch.trajectory.held_out"), "{e}");
        let e = job("name = 's'\n[scene]\nmss = 'no-such.mss'")
            .unwrap_err()
            .to_string();
        assert!(e.contains("scene.mss") && e.contains("no-such.mss"), "{e}");
    }

    #[test]
    fn defaults_extends_and_overrides() {
        let j =
            job("name = 'x'\nframes = '1-10'\n[material]\nbend = 9000.0\n[simulate]\nsubsteps = 3").unwrap();
        assert_eq!((j.first, j.last), (1, 10));
        assert_eq!(j.material.bend, 9000.0);
        // Other material keys come from the straight preset.
        assert_eq!(j.material.stretch, Material::preset("straight").unwrap().stretch);
        assert_eq!(j.simulate.substeps, 3);
        assert_eq!(j.guides.methods, vec!["idw".to_string()]);
        assert_eq!(j.rows[0].method, Method::Idw);
        assert_eq!(j.output, Path::new("/tmp/out/job"));
        assert_eq!(j.groom.strands, Some(2000));
    }

    #[test]
    fn the_material_follows_the_groom_style_unless_the_job_sets_one() {
        let curly = Material::preset("curly").unwrap();
        let straight = Material::preset("straight").unwrap();
        assert_ne!(curly, straight);
        let j = job("name = 'x'\n[groom]\npreset = 'curly'").unwrap();
        assert_eq!((j.material_preset.as_str(), &j.material), ("curly", &curly));
        let j = job("name = 'x'\n[groom]\npreset = 'wavy'").unwrap();
        assert_eq!(j.material, Material::preset("wavy").unwrap());
        // Per-key overrides apply over the style's preset.
        let j = job("name = 'x'\n[groom]\npreset = 'curly'\n[material]\nbend = 7.0").unwrap();
        assert_eq!((j.material.bend, j.material.stretch), (7.0, curly.stretch));
        // A preset the job names wins.
        let j = job("name = 'x'\n[groom]\npreset = 'curly'\n[material]\npreset = 'straight'").unwrap();
        assert_eq!(j.material, straight);
        // Batch items: each groom gets its own style's material, unless the job names one.
        let b = job("name = 'b'\n[batch]\ngrooms = ['straight', 'curly', 'wavy']").unwrap();
        let items = b.items().unwrap();
        assert_eq!(items[0].material, straight);
        assert_eq!(
            (items[1].material_preset.as_str(), &items[1].material),
            ("curly", &curly)
        );
        assert_eq!(items[2].material_preset, "wavy");
        let b =
            job("name = 'b'\n[material]\npreset = 'wavy'\n[batch]\ngrooms = ['straight', 'curly']").unwrap();
        assert!(b.items().unwrap().iter().all(|i| i.material_preset == "wavy"));
        // An unknown groom preset is reported when the job is read.
        let e = job("name = 'x'\n[groom]\npreset = 'curlyy'")
            .unwrap_err()
            .to_string();
        assert!(e.contains("curlyy"), "{e}");
    }

    #[test]
    fn a_batch_expands_to_grooms_times_motions() {
        let j =
            job("name = 'b'\n[batch]\ngrooms = ['straight', 'curly']\nmotions = ['gentle', 'walk', 'turn']")
                .unwrap();
        let items = j.items().unwrap();
        assert_eq!(items.len(), 6);
        assert_eq!(items[4].name, "b/curly-walk");
        assert_eq!(items[4].output, Path::new("/tmp/out/job/curly-walk"));
        assert_eq!(items[4].groom.preset.as_deref(), Some("curly"));
        assert_eq!(items[4].motion.preset.as_deref(), Some("walk"));
        assert!(items.iter().all(|i| i.batch.is_none()));
        assert_eq!(job("name = 'x'").unwrap().items().unwrap().len(), 1);
    }

    #[test]
    fn mistakes_are_named() {
        let e = job("name = 'x'\n[simulate]\nsubsteep = 3")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`simulate.substeep`") && e.contains("`substeps`"),
            "{e}"
        );
        let e = job("nmae = 'x'").unwrap_err().to_string();
        assert!(e.contains("`nmae`") && e.contains("`name`"), "{e}");
        let e = job("[material]\nbendd = 3.0").unwrap_err().to_string();
        assert!(e.contains("`material.bendd`") && e.contains("`bend`"), "{e}");
        let e = job("[guides]\nmethod = 'neurl'").unwrap_err().to_string();
        assert!(e.contains("idw") && e.contains("adaptive"), "{e}");
        let e = job("[guides]\nmethods = ['adaptive']").unwrap_err().to_string();
        assert!(e.contains("[training]"), "{e}");
        let e = job("[guides]\nmethods = ['idw+two_way']")
            .unwrap_err()
            .to_string();
        assert!(e.contains("skinning"), "{e}");
        let e = job("frames = 'soon'").unwrap_err().to_string();
        assert!(e.contains("frames"), "{e}");
        let e = job("[material]\nfriction = -1.0").unwrap_err().to_string();
        assert!(e.contains("material"), "{e}");
        let e = job("extends = 'nope.toml'").unwrap_err().to_string();
        assert!(e.contains("nope.toml"), "{e}");
        let e = job("extends = 'defualt'").unwrap_err().to_string();
        assert!(e.contains("did you mean the preset `default`"), "{e}");
        // Caught when the job is read, before any stage runs.
        let e = job("[groom]\npreset = 'wavey'").unwrap_err().to_string();
        assert!(e.contains("groom.preset") && e.contains("`wavy`"), "{e}");
        let e = job("[motion]\npreset = 'turn'\ngltf = 'a.glb'")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`preset` and `gltf`") && e.contains("one motion source"),
            "{e}"
        );
        let e = job("[motion]\npreset = 'trun'").unwrap_err().to_string();
        assert!(e.contains("motion") && e.contains("`turn`"), "{e}");
        let e = job("[motion]\npreset = 'turn'\nnode = 'Head'")
            .unwrap_err()
            .to_string();
        assert!(e.contains("motion.node"), "{e}");
    }

    /// A value of the wrong kind names the key, the file's line and what was expected in plain
    /// words.
    #[test]
    fn a_wrong_type_names_key_line_and_kind() {
        let dir = std::env::temp_dir().join(format!("tress-job-type-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("job.toml");
        std::fs::write(
            &path,
            "name = 'x'\n\n[groom]\npreset = 'wavy'\nstrands = \"2000\"\n",
        )
        .unwrap();
        let e = Job::load(&path).unwrap_err().to_string();
        assert!(e.contains(&format!("{}:5", path.display())), "{e}");
        assert!(
            e.contains("`groom.strands`") && e.contains("a whole number"),
            "{e}"
        );
        assert!(!e.contains("usize"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
