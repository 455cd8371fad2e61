//! Resolving a job's sections one by one on the [`Reader`]: each is read (unknown keys and
//! wrong values named), checked, and its paths made relative to the job file. An `.mss` scene
//! (`[scene]`) stands in for the groom, head, motion, material and solver settings the job
//! does not set itself.

use toml::{Table, Value};

use super::checks::{check_collider, check_motion};
use super::file::{Reader, groom_preset};
use super::methods::{DrapeSpec, GuideSpec, HairMeshSpec, NeuralSpec, drape_key};
use super::rows::{self, MethodRow};
use super::sections::{
    BatchSpec, ColliderSpec, GroomSpec, HeadSpec, MotionSpec, MssSpec, Training, TrainingSpec,
};
use crate::error::{Error, Result};
use crate::groom::{GroomFormat, UpAxis};
use crate::presets::keys::merge;
use crate::scene::mss::MssPhysics;
use crate::sim::SimOptions;
use crate::upsample::Method;

/// The motion keys that name a source.
const MOTION_SOURCES: [&str; 6] = ["preset", "gltf", "abc", "track", "velocity", "angular_velocity"];

/// What the method sections of a job resolve to.
pub struct MethodSections {
    pub guides: GuideSpec,
    pub hairmesh: HairMeshSpec,
    pub drape: DrapeSpec,
    pub neural: NeuralSpec,
    /// The neural config, where a row uses the network.
    pub neural_config: Option<crate::neural::interp::InterpConfig>,
    pub rows: Vec<MethodRow>,
}

impl Reader<'_> {
    /// The shot's frames, `A-B`, whole numbers.
    /// `frames`: `A-B`, or `all`, the whole of `motion` ([`Self::whole_motion`]).
    pub fn frames(&self, motion: &MotionSpec) -> Result<(i64, i64)> {
        let text = self.string("frames")?;
        let (first, last) = if text == "all" {
            self.whole_motion(motion, "frames")?
        } else {
            crate::cache::parse_frame_range(&text).map_err(|e| self.err("frames", format!("frames: {e}")))?
        };
        if first.fract() != 0.0 || last.fract() != 0.0 {
            return Err(self.err("frames", "frames must be whole numbers"));
        }
        Ok((first as i64, last as i64))
    }

    /// The frames a motion lasts at the job's rate (`frames = "all"` of the shot or of
    /// `[training]`, named by `key` in errors): presets start at frame 1, files keep their own
    /// times.
    fn whole_motion(&self, motion: &MotionSpec, key: &str) -> Result<(f64, f64)> {
        let source = motion.source()?;
        let fps = self.fps()?;
        let (track, _) = source
            .load(fps)
            .map_err(|e| self.err(key, format!("{key} = \"all\": {e}")))?;
        let (t0, t1) = track.span();
        Ok(if source.from_file() {
            ((t0 * fps).round(), (t1 * fps).round())
        } else {
            (1.0, 1.0 + ((t1 - t0) * fps).round())
        })
    }

    /// Frames per second, positive.
    pub fn fps(&self) -> Result<f64> {
        let fps: f64 = self.read("fps")?;
        if !(fps > 0.0 && fps.is_finite()) {
            return Err(self.err("fps", "fps must be positive"));
        }
        Ok(fps)
    }

    /// `[scene]`: the `.mss` file becomes the groom (in scene units of `unit` cm, its own
    /// sampling unless the job sets `groom.points`), and its physics is worked out.
    pub fn mss(&self, groom: &mut GroomSpec, fps: f64) -> Result<Option<(MssSpec, MssPhysics)>> {
        let Some(v) = self.t.get("scene") else {
            return Ok(None);
        };
        let mut spec: MssSpec = self.section(v.clone(), "scene")?;
        if self.own_has("groom", "preset") || self.own_has("groom", "file") {
            return Err(self.err(
                "scene",
                "[scene] mss is the job's groom: leave out groom.preset and groom.file",
            ));
        }
        // 004's contact (`[simulate] contact = "reflect"`) runs at fewer steps by default;
        // any other value is [simulate]'s to refuse.
        let contact: crate::sim::contact::Contact = self
            .t
            .get("simulate")
            .and_then(|s| s.get("contact"))
            .and_then(|c| c.clone().try_into().ok())
            .unwrap_or_default();
        let substeps = *spec
            .substeps
            .get_or_insert(crate::scene::mss::default_substeps(fps, contact));
        if !(1..=10_000).contains(&substeps) {
            return Err(self.err("scene.substeps", "scene.substeps must be within 1..=10000"));
        }
        // The groom file is resolved against the job's folder with the other groom files.
        groom.file = Some(spec.mss.clone());
        spec.mss = self.path(&spec.mss)?;
        let file = tress_formats::mss::read(&spec.mss)
            .map_err(|e| self.err("scene.mss", format!("scene.mss: {e}")))?;
        let phys = crate::scene::mss::physics(&file, spec.unit, UpAxis::Y)
            .map_err(|e| self.err("scene.mss", format!("scene.mss {}: {e}", spec.mss)))?;
        groom.preset = None;
        groom.strands = None;
        groom.scale = spec.unit;
        groom.up = UpAxis::Y;
        if !self.own_has("groom", "points") {
            groom.points = 0;
        }
        Ok(Some((spec, phys)))
    }

    /// `[groom]` checked: a preset that exists or a file (relative to the job), edits that
    /// parse.
    pub fn groom(&self, groom: &mut GroomSpec) -> Result<()> {
        if let Some(f) = &groom.file {
            groom.file = Some(self.path(f)?);
            groom.preset = None;
            if self.own_has("groom", "strands") {
                return Err(self.err(
                    "groom.strands",
                    "groom.strands is the strand count of a procedural preset; a groom file keeps all its strands",
                ));
            }
        }
        if groom.preset.is_none() && groom.file.is_none() {
            return Err(self.err("groom", "[groom] needs `preset` or `file`"));
        }
        if let Some(k) = groom.points_per_strand {
            let ply = groom
                .file
                .as_deref()
                .map(std::path::Path::new)
                .and_then(GroomFormat::from_extension)
                == Some(GroomFormat::Ply);
            if !ply {
                return Err(self.err(
                    "groom.points_per_strand",
                    "groom.points_per_strand cuts a PLY point cloud into strands; it needs groom.file = \"….ply\"",
                ));
            }
            if k < 2 {
                return Err(self.err(
                    "groom.points_per_strand",
                    format!("groom.points_per_strand = {k}: a strand needs at least 2 points"),
                ));
            }
        }
        if let Some(p) = &groom.preset
            && p.ends_with(".toml")
        {
            groom.preset = Some(self.path(p)?);
        }
        if let Some(p) = &groom.preset {
            crate::groom::presets::load(p)
                .map_err(|e| self.err("groom.preset", format!("groom.preset: {e}")))?;
        }
        for (i, e) in groom.edits.iter().enumerate() {
            crate::groom::edit::Edit::parse(e)
                .map_err(|x| self.err("groom.edits", format!("groom.edits[{i}]: {x}")))?;
        }
        Ok(())
    }

    /// `[head]`: a scene's own sphere head unless the job names one; mesh heads and animated
    /// body meshes relative to the job file.
    pub fn head(&self, groom: &GroomSpec, scene: bool) -> Result<HeadSpec> {
        let mut head: HeadSpec = self.read("head")?;
        if scene && !self.own_has("head", "collider") {
            // The scene's own sphere head (see `scene::file_shapes`).
            head.collider = "sphere".into();
        }
        let source = crate::scene::HeadSource::parse(&head.collider);
        if groom.file.is_some() && source == crate::scene::HeadSource::Procedural {
            return Err(self.err(
                "head.collider",
                "head.collider = \"procedural\" is the cranium of procedural grooms; with groom.file give a head mesh, or \"sphere\" to fit one to the roots",
            ));
        }
        if let crate::scene::HeadSource::Mesh(_) = source {
            head.collider = self.path(&head.collider)?;
        }
        // An animated body mesh is a file (or sequence) relative to the job file.
        if let Some(b) = &head.body
            && crate::collide::deforming::is_body_mesh(b)
        {
            head.body = Some(self.path(b)?);
        }
        Ok(head)
    }

    /// `[motion]`: files relative to the job; a scene's constant velocity unless the job names
    /// a source; one source, checked.
    pub fn motion(&self, scene: Option<&MssPhysics>) -> Result<MotionSpec> {
        let mut motion: MotionSpec = self.read("motion")?;
        for p in [&mut motion.gltf, &mut motion.abc, &mut motion.track]
            .into_iter()
            .flatten()
        {
            *p = self.path(p)?;
        }
        if let Some(p) = &motion.preset
            && p.ends_with(".toml")
        {
            motion.preset = Some(self.path(p)?);
        }
        if let Some(phys) = scene {
            let own = MOTION_SOURCES.iter().any(|k| self.own_has("motion", k));
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
        check_motion(&motion, "motion", self.origin)?;
        Ok(motion)
    }

    /// `[simulate]`, over a scene's solver settings when there is one; checked.
    pub fn simulate(&self, scene: Option<&(MssSpec, MssPhysics)>) -> Result<SimOptions> {
        let simulate: SimOptions = match scene {
            // The scene's solver settings under the job's own.
            Some((spec, phys)) => {
                let mut base = Table::try_from(crate::scene::mss::sim_options(
                    phys,
                    spec.substeps.unwrap_or(crate::scene::mss::DEFAULT_SUBSTEPS),
                ))
                .map_err(|e| Error::Runtime(format!("scene solver settings: {e}")))?;
                if let Some(Value::Table(own)) = self.own.get("simulate") {
                    merge(&mut base, own.clone());
                }
                self.section(Value::Table(base), "simulate")?
            }
            None => self.read("simulate")?,
        };
        simulate
            .check()
            .map_err(|e| self.err("simulate", format!("simulate.{e}")))?;
        Ok(simulate)
    }

    /// The method sections (`[guides]`, `[hairmesh]`, `[drape]`, `[neural]`) and the rows they
    /// make, each section checked where a row uses it.
    pub fn methods(&self) -> Result<MethodSections> {
        let mut guides: GuideSpec = self.read("guides")?;
        // An older job's single `method`, unless it lists `methods` itself.
        if let Some(m) = guides.method.take()
            && !self.own_has("guides", "methods")
        {
            guides.methods = vec![m];
        }
        let hairmesh = self.hairmesh()?;
        guides
            .adaptive
            .check()
            .map_err(|e| self.err("guides.adaptive.velocity_quantile", e))?;
        let mut rows = rows::parse_rows(&guides, self.origin)?;
        if hairmesh.enabled {
            rows::add_section_row(&mut rows, Method::Hairmesh, &guides);
        }
        if rows.iter().any(|r| r.method == Method::Hairmesh) {
            hairmesh.check().map_err(|e| self.err("hairmesh", e))?;
        }
        let drape = self.drape()?;
        if drape.enabled {
            rows::add_section_row(&mut rows, Method::Drape, &guides);
        }
        if rows.iter().any(|r| r.method == Method::Drape) {
            drape
                .draper_spec(&drape_key)
                .check()
                .map_err(|e| self.err("drape", e.to_string()))?;
        }
        let neural = self.neural()?;
        let neural_config = if rows.iter().any(|r| r.method == Method::Neural) {
            Some(neural.load(Some(self.dir)).map_err(|e| match neural.model {
                Some(_) => self.err("neural.model", e.to_string()),
                None => self.err("neural.config", format!("neural.config: {e}")),
            })?)
        } else {
            None
        };
        rows::add_ablation_rows(&mut rows, &neural, neural_config.as_ref(), self.origin)?;
        Ok(MethodSections {
            guides,
            hairmesh,
            drape,
            neural,
            neural_config,
            rows,
        })
    }

    /// Top-level section `k` with its subtable `sub` taken out (read on its own, so its keys
    /// are named `k.sub.KEY`).
    fn split(&self, k: &str, sub: &str) -> (Value, Option<Value>) {
        let mut table = self.get(k);
        let inner = match &mut table {
            Value::Table(t) => t.remove(sub),
            _ => None,
        };
        (table, inner)
    }

    /// `[hairmesh]`, its solver table read on its own (keys named `hairmesh.solver.KEY`).
    pub fn hairmesh(&self) -> Result<HairMeshSpec> {
        let (table, solver) = self.split("hairmesh", "solver");
        let mut hairmesh: HairMeshSpec = self.section(table, "hairmesh")?;
        if let Some(v) = solver {
            hairmesh.solver = self.section(v, "hairmesh.solver")?;
        }
        Ok(hairmesh)
    }

    /// `[drape]`, its material table read on its own (keys named `drape.material.KEY`), the
    /// model relative to the job.
    pub fn drape(&self) -> Result<DrapeSpec> {
        let (table, material) = self.split("drape", "material");
        let mut drape: DrapeSpec = self.section(table, "drape")?;
        if let Some(v) = material {
            drape.material = Some(self.section(v, "drape.material")?);
        }
        if let Some(m) = &drape.model {
            drape.model = Some(self.path(m)?);
        }
        Ok(drape)
    }

    /// `[neural]`: a given model relative to the job; a device this build has.
    pub fn neural(&self) -> Result<NeuralSpec> {
        let mut neural: NeuralSpec = self.read("neural")?;
        if let Some(m) = &neural.model {
            // A built-in model's name (`general`), unless a file of that name is beside the job.
            let local = self.path(m)?;
            let file = crate::neural::builtin::resolve(m, std::path::Path::new(&local))?;
            neural.model = Some(file.display().to_string());
        }
        neural.device.check().map_err(|_| {
            self.err(
                "neural.device",
                "neural.device = \"cuda\" needs a tress built with `--features cuda`",
            )
        })?;
        Ok(neural)
    }

    /// `[training]`: its frames and motion (a preset, or a file by its extension), checked.
    pub fn training(&self) -> Result<Option<Training>> {
        let Some(v) = self.t.get("training") else {
            return Ok(None);
        };
        let spec: TrainingSpec = self.section(v.clone(), "training")?;
        let motion = self.training_motion(&spec)?;
        check_motion(&motion, "training", self.origin)?;
        let (a, b) = if spec.frames == "all" {
            self.whole_motion(&motion, "training.frames")?
        } else {
            crate::cache::parse_frame_range(&spec.frames)
                .map_err(|e| self.err("training.frames", format!("training.frames: {e}")))?
        };
        if a.fract() != 0.0 || b.fract() != 0.0 || b < a {
            return Err(self.err(
                "training.frames",
                "training.frames must be whole numbers, first ≤ last (or `all`)",
            ));
        }
        Ok(Some(Training {
            spec,
            motion,
            first: a as i64,
            last: b as i64,
        }))
    }

    /// The training motion as a [motion] section: a preset name or preset file, else a motion
    /// file by its extension.
    fn training_motion(&self, spec: &TrainingSpec) -> Result<MotionSpec> {
        let m = &spec.motion;
        let mut out = MotionSpec {
            seed: spec.seed,
            node: spec.node.clone(),
            xform: spec.xform.clone(),
            mesh: spec.mesh.clone(),
            ..MotionSpec::default()
        };
        if crate::motion::random::TABLE.iter().any(|(n, _)| *n == m.as_str()) {
            out.preset = Some(m.clone());
            return Ok(out);
        }
        let path = self.path(m)?;
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

    /// `[[colliders]]`, each checked.
    pub fn colliders(&self) -> Result<Vec<ColliderSpec>> {
        match self.t.get("colliders") {
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let key = format!("colliders[{i}]");
                    let c: ColliderSpec = self.section(v.clone(), &key)?;
                    check_collider(&c).map_err(|e| self.err(&key, format!("{key}: {e}")))?;
                    Ok(c)
                })
                .collect(),
            Some(_) => Err(self.err(
                "colliders",
                "`colliders` is a list of tables: write each as [[colliders]]",
            )),
            None => Ok(Vec::new()),
        }
    }

    /// `[batch]`: groom files and folders, motion files relative to the job; what goes
    /// together checked.
    pub fn batch(&self, scene: bool) -> Result<Option<BatchSpec>> {
        let Some(v) = self.t.get("batch") else {
            return Ok(None);
        };
        let mut b: BatchSpec = self.section(v.clone(), "batch")?;
        for g in &mut b.grooms {
            if !groom_preset(g) {
                *g = self.path(g)?;
            }
        }
        if let Some(f) = &b.groom_folder {
            b.groom_folder = Some(self.path(f)?);
        }
        for m in &mut b.motions {
            if m.ends_with(".toml") {
                *m = self.path(m)?;
            }
        }
        if scene && (!b.grooms.is_empty() || b.groom_folder.is_some()) {
            return Err(self.err(
                "batch",
                "[scene] mss is the batch's groom: leave out batch.grooms and batch.groom_folder",
            ));
        }
        if let Some(e) = &b.experiments {
            if !b.motions.is_empty() {
                return Err(self.err(
                    "batch.experiments",
                    "batch.experiments are the batch's motions: leave out batch.motions",
                ));
            }
            e.check()
                .map_err(|x| self.err("batch.experiments", format!("batch.experiments.{x}")))?;
        }
        if let Some(tr) = &b.trajectory {
            tr.check()
                .map_err(|x| self.err("batch.trajectory", format!("batch.trajectory.{x}")))?;
        }
        if let Some(g) = &b.groups {
            if !g.ends_with(".abc") || g.contains(['/', '\\']) {
                return Err(self.err(
                    "batch.groups",
                    format!("batch.groups = {g:?}: name the archive written in the batch's output folder, e.g. \"character.abc\""),
                ));
            }
            if b.motions.len() > 1 || b.experiments.is_some() {
                return Err(self.err(
                    "batch.groups",
                    "batch.groups: groom groups share one motion; give at most one of batch.motions (and no experiments)",
                ));
            }
        }
        Ok(Some(b))
    }
}
