//! Job files: one TOML file describing a whole shot — groom, head, motion, material, what to
//! run and what to write. A job may `extends = "NAME|FILE"` a preset (`presets/jobs/`) and
//! override any of it; unknown keys are errors with the key's path and a suggestion.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::{Table, Value};

use super::keys::{expand_env, merge, section};
use crate::error::{Error, Result};
use crate::groom::UpAxis;
use crate::presets;
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
}

/// Guide selection and upsampling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GuideSpec {
    /// About this many guides, on a uniform root-UV lattice.
    pub count: usize,
    /// Upsampling method (idw).
    pub method: String,
    /// Guides each normal strand follows.
    pub neighbors: usize,
    /// Push upsampled strands out of the head and body, keeping segment lengths.
    pub resolve_collisions: bool,
}

impl Default for GuideSpec {
    fn default() -> Self {
        GuideSpec {
            count: 200,
            method: "idw".into(),
            neighbors: 10,
            resolve_collisions: true,
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
    /// `gt.abc`: the full simulation as Alembic too.
    pub ground_truth_abc: bool,
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            abc: true,
            tcache: false,
            ply: false,
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
    pub outputs: OutputSpec,
    pub preview: PreviewSpec,
    /// The merged TOML (for the report and content hashes).
    pub table: Table,
    pub batch: Option<BatchSpec>,
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
    "outputs",
    "preview",
    "batch",
];

fn parse_table(text: &str, origin: &str) -> Result<Table> {
    toml::from_str(text).map_err(|e| Error::Invalid(format!("{origin}: {}", e.to_string().trim())))
}

/// The preset or file named by `extends`, with its own `extends` resolved (depth ≤ 8).
fn load_chain(table: Table, origin: &str, dir: &Path, depth: usize) -> Result<Table> {
    let Some(parent) = table.get("extends").cloned() else {
        return Ok(table);
    };
    if depth > 8 {
        return Err(Error::Invalid(format!(
            "{origin}: `extends` nests more than 8 deep (a cycle?)"
        )));
    }
    let name = parent.as_str().ok_or_else(|| {
        Error::Invalid(format!(
            "{origin}: `extends` must be a preset name or a file path"
        ))
    })?;
    let (text, parent_origin, parent_dir) = match TABLE.iter().find(|(n, _)| *n == name) {
        Some((_, text)) => (text.to_string(), format!("job preset {name}"), dir.to_path_buf()),
        None => {
            let path = dir.join(expand_env(name, origin)?);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                Error::Invalid(format!("{origin}: extends {name:?}: {}: {e}", path.display()))
            })?;
            let d = path.parent().unwrap_or(Path::new(".")).to_path_buf();
            (text, path.display().to_string(), d)
        }
    };
    let mut base = load_chain(
        parse_table(&text, &parent_origin)?,
        &parent_origin,
        &parent_dir,
        depth + 1,
    )?;
    base.remove("extends");
    let mut over = table;
    over.remove("extends");
    merge(&mut base, over);
    Ok(base)
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
        for k in table.keys() {
            if !TOP.contains(&k.as_str()) {
                let hint = super::keys::suggest(k, TOP)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                return Err(Error::Invalid(format!("{origin}: unknown key `{k}`{hint}")));
            }
        }
        // Everything not given comes from the default preset.
        let mut t = if table.contains_key("extends") {
            load_chain(table, origin, dir, 0)?
        } else {
            let mut with = table;
            with.insert("extends".into(), Value::String("default".into()));
            load_chain(with, origin, dir, 0)?
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
        if let Some(f) = &groom.file {
            groom.file = Some(dir.join(expand_env(f, origin)?).display().to_string());
            groom.preset = None;
        }
        if groom.preset.is_none() && groom.file.is_none() {
            return Err(Error::Invalid(format!(
                "{origin}: [groom] needs `preset` or `file`"
            )));
        }
        let mut head: HeadSpec = section(get("head"), "head", origin)?;
        if !matches!(head.collider.as_str(), "procedural" | "sphere") {
            head.collider = dir
                .join(expand_env(&head.collider, origin)?)
                .display()
                .to_string();
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
            &material_overrides,
            origin,
            dir,
        )?;
        let simulate: SimOptions = section(get("simulate"), "simulate", origin)?;
        let guides: GuideSpec = section(get("guides"), "guides", origin)?;
        if guides.method != "idw" {
            return Err(Error::Invalid(format!(
                "{origin}: guides.method {:?}: the methods available are: idw",
                guides.method
            )));
        }
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
                Some(b)
            }
            None => None,
        };
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
            outputs,
            preview,
            table: t,
            batch,
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
        let motions = if b.motions.is_empty() {
            vec![String::new()]
        } else {
            b.motions.clone()
        };
        let stem = |s: &str| {
            Path::new(s)
                .file_stem()
                .map(|x| x.to_string_lossy().to_string())
                .unwrap_or_else(|| s.to_string())
        };
        let mut out = Vec::new();
        for g in &grooms {
            for m in &motions {
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
                if !m.is_empty() {
                    j.motion = MotionSpec {
                        preset: Some(m.clone()),
                        ..MotionSpec::default()
                    };
                    parts.push(stem(m));
                }
                if self.material_choice.is_none() {
                    let origin = format!("batch item {}", parts.join("-"));
                    (j.material_preset, j.material) = resolve_material(
                        &j.groom,
                        None,
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

/// The material of a job: preset `choice` (else the one made for the groom's procedural style,
/// `straight` for groom files) with `overrides` merged over it.
fn resolve_material(
    groom: &GroomSpec,
    choice: Option<&str>,
    overrides: &Table,
    origin: &str,
    dir: &Path,
) -> Result<(String, Material)> {
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
    fn defaults_extends_and_overrides() {
        let j =
            job("name = 'x'\nframes = '1-10'\n[material]\nbend = 9000.0\n[simulate]\nsubsteps = 3").unwrap();
        assert_eq!((j.first, j.last), (1, 10));
        assert_eq!(j.material.bend, 9000.0);
        // Other material keys come from the straight preset.
        assert_eq!(j.material.stretch, Material::preset("straight").unwrap().stretch);
        assert_eq!(j.simulate.substeps, 3);
        assert_eq!(j.guides.method, "idw");
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
        let e = job("[guides]\nmethod = 'neural'").unwrap_err().to_string();
        assert!(e.contains("idw"), "{e}");
        let e = job("frames = 'soon'").unwrap_err().to_string();
        assert!(e.contains("frames"), "{e}");
        let e = job("[material]\nfriction = -1.0").unwrap_err().to_string();
        assert!(e.contains("material"), "{e}");
        let e = job("extends = 'nope.toml'").unwrap_err().to_string();
        assert!(e.contains("nope.toml"), "{e}");
    }
}
