//! Job files: one TOML file describing a whole shot — groom, head, motion, material, what to
//! run and what to write. A job may `extends = "NAME|FILE"` a preset (`presets/jobs/`) and
//! override any of it; unknown keys are errors with the key's path and a suggestion; other
//! mistakes name the file, the line and the key ([`error::JobError`]).
//!
//! - [`file`]: the TOML read, `extends` merged, the [`file::Reader`] sections resolve on;
//! - [`sections`], [`methods`]: the sections' shapes; [`material`]: `[material]`;
//! - [`resolve`]: each section read, checked and its paths resolved; [`rows`]: the scored
//!   rows; [`checks`]: checks across sections; [`batch`]: a batch's items.

pub mod batch;
pub mod checks;
pub mod error;
pub mod file;
pub mod material;
pub mod methods;
pub mod resolve;
pub mod rows;
pub mod sections;

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use crate::error::{Error, Result};
use crate::scene::mss::MssPhysics;
use crate::scene::{GroomSource, HeadSource, SceneSpec};
use crate::sim::{Material, SimOptions};
use file::{Reader, parse_table};
use material::MaterialSpec;

pub use error::JobError;
pub use file::TABLE;
pub use methods::{DrapeSpec, GuideSpec, HairMeshSpec, NeuralSpec, Selection, drape_key};
pub use rows::MethodRow;
pub use sections::{
    BatchSpec, ColliderSpec, GroomSpec, HeadSpec, MotionSpec, MssSpec, OutputSpec, PreviewSpec, Training,
    TrainingSpec,
};

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
    /// `[material]` as the job wrote it (batch items of other grooms resolve it again).
    material_spec: MaterialSpec,
    pub simulate: SimOptions,
    pub guides: GuideSpec,
    /// The neural interpolator's training config (jobs with the neural method).
    pub neural: NeuralSpec,
    pub neural_config: Option<crate::neural::interp::InterpConfig>,
    pub hairmesh: HairMeshSpec,
    pub drape: DrapeSpec,
    /// The scored rows of `guides.methods`, parsed.
    pub rows: Vec<MethodRow>,
    /// The training simulation.
    pub training: Option<Training>,
    /// Extra moving solids.
    pub colliders: Vec<ColliderSpec>,
    pub outputs: OutputSpec,
    pub preview: PreviewSpec,
    /// The merged TOML (for the report and content hashes).
    pub table: Table,
    pub batch: Option<BatchSpec>,
    /// The `.mss` scene the job runs (`[scene]`), with its physics in tress's terms.
    pub scene: Option<(MssSpec, MssPhysics)>,
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
        let r = Reader::new(table, origin, dir)?;
        let name = r.string("name")?;
        let output = PathBuf::from(r.path(&r.string("output")?)?);
        let fps = r.fps()?;
        let seed: u64 = r.read("seed")?;
        let checkpoint_every: Option<u32> = match r.t.get("checkpoint_every") {
            Some(v) => Some(r.section(v.clone(), "checkpoint_every")?),
            None => None,
        };
        let mut groom: GroomSpec = r.read("groom")?;
        let scene = r.mss(&mut groom, fps)?;
        r.groom(&mut groom)?;
        let head = r.head(&groom, scene.is_some())?;
        let motion = r.motion(scene.as_ref().map(|(_, p)| p))?;
        let (first, last) = r.frames(&motion)?;
        // Material: a preset (by default the one made for the groom's style), with any of its
        // keys overridden.
        let material_spec = MaterialSpec::read(r.get("material"), origin, dir.to_path_buf())?;
        let (material_preset, material) =
            material_spec.resolve(&groom, scene.as_ref().map(|(_, p)| &p.material), origin)?;
        let simulate = r.simulate(scene.as_ref())?;
        let m = r.methods()?;
        let training = r.training()?;
        if training.is_none() {
            checks::training_needed(&m.rows, &m.neural, &m.guides, origin)?;
        }
        let colliders = r.colliders()?;
        let outputs: OutputSpec = r.read("outputs")?;
        crate::cache::usd_prim(&outputs.usd_prim)
            .map_err(|e| r.err("outputs.usd_prim", format!("[outputs] usd_prim: {e}")))?;
        let preview: PreviewSpec = r.read("preview")?;
        let batch = r.batch(scene.is_some())?;
        if batch.as_ref().is_some_and(|b| b.groups.is_some()) && !outputs.abc {
            return Err(r.err(
                "batch.groups",
                "batch.groups writes the items' hair.abc as groom groups: set [outputs] abc = true",
            ));
        }
        let mut t = r.t;
        if scene.is_some() {
            // The merged table shows what the scene set (reports, dry runs, content hashes).
            show_scene_settings(&mut t, &groom, &head, &motion, &material, &simulate)?;
        }
        Ok(Job {
            name,
            file: None,
            output,
            first,
            last,
            fps,
            seed,
            checkpoint_every,
            groom,
            head,
            motion,
            material_preset,
            material,
            material_spec,
            simulate,
            guides: m.guides,
            neural: m.neural,
            neural_config: m.neural_config,
            hairmesh: m.hairmesh,
            drape: m.drape,
            rows: m.rows,
            training,
            colliders,
            outputs,
            preview,
            table: t,
            batch,
            scene,
        })
    }

    /// The date its Alembic files record: `SOURCE_DATE_EPOCH`, else the job file's
    /// modification time (so re-running an unchanged job writes the same bytes).
    pub fn date(&self) -> std::time::SystemTime {
        if std::env::var_os("SOURCE_DATE_EPOCH").is_some() {
            return tress_formats::alembic::cache::reproducible_now();
        }
        self.file
            .as_ref()
            .and_then(|f| std::fs::metadata(f).ok())
            .and_then(|m| m.modified().ok())
            .unwrap_or(std::time::UNIX_EPOCH)
    }

    /// The job's scene as named: groom, head, body, motion, props and frames.
    pub fn scene_spec(&self) -> Result<SceneSpec> {
        let groom = match (&self.groom.preset, &self.groom.file) {
            (_, Some(file)) => GroomSource::File(
                file.into(),
                crate::groom::ReadOptions {
                    points_per_strand: self.groom.points_per_strand,
                    frame: None,
                },
            ),
            (Some(preset), None) => GroomSource::Preset {
                name: preset.clone(),
                strands: self.groom.strands,
                seed: Some(self.seed),
            },
            (None, None) => return Err(Error::Invalid("the job names no groom".into())),
        };
        Ok(SceneSpec {
            groom,
            transform: crate::groom::Transform {
                scale: self.groom.scale,
                up: self.groom.up,
            },
            head: HeadSource::parse(&self.head.collider),
            body: self.head.body.clone(),
            sdf_cell: self.head.sdf_cell,
            motion: self.motion.source()?,
            fps: self.fps,
            first: self.first,
            last: self.last,
            // A constant motion lasts to the last frame the job simulates (its shot or its
            // training).
            hold_after: self
                .training
                .as_ref()
                .map_or(self.last, |t| self.last.max(t.last)),
            props: self.colliders.iter().map(ColliderSpec::prop).collect(),
        })
    }
}

/// Puts the scene sections as an `.mss` scene set them into the job's merged table.
fn show_scene_settings(
    t: &mut Table,
    groom: &GroomSpec,
    head: &HeadSpec,
    motion: &MotionSpec,
    material: &Material,
    simulate: &SimOptions,
) -> Result<()> {
    let mut put = |k: &str, v: std::result::Result<Table, toml::ser::Error>| -> Result<()> {
        let v = v.map_err(|e| Error::Runtime(format!("{k}: {e}")))?;
        t.insert(k.into(), Value::Table(v));
        Ok(())
    };
    put("groom", Table::try_from(groom))?;
    put("head", Table::try_from(head))?;
    put("motion", Table::try_from(motion))?;
    put("material", Table::try_from(material))?;
    put("simulate", Table::try_from(simulate))
}

#[cfg(test)]
mod tests;
