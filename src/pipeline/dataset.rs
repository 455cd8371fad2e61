//! Datasets for the general model (000 §5, App. B: one network trained on many hairstyles and
//! random head motions): grooms × motions, each item a full simulation (the ground truth a
//! learned method trains on), built by `tress dataset build CONFIG -o DIR`.
//!
//! A dataset config (`kind = "dataset"`) lists `[[groom]]` entries (a procedural preset with
//! seeds and edit lists, or a groom file) and `[[motion]]` entries (a motion preset — the
//! range of motion `rom` by default — with seeds, or a glTF / Alembic / track file). Every
//! groom × motion pair is an item, a job of its own (`DIR/items/<item>/`, extending the
//! config's `job`) that runs only the `prepare` and `simulate` stages, so items get what jobs
//! get: stage records verified by SHA-256, locks against duplicate runs, simulation checkpoints
//! (an interrupted item resumes), atomic outputs (a `kill -9` loses nothing finished). Each
//! finished item leaves `item.json` beside its cache (groom, motion, seeds, frames, strands,
//! cache digest, build); a full build writes `DIR/manifest.json`, the dataset's table of
//! contents that training reads. `tress farm export` of a dataset config runs one task per
//! item and the manifest after them.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use toml::{Table, Value};

use super::engine::{Record, RunOptions};
use super::job::Job;
use super::stages::{prepare, simulate};
use crate::error::{Error, Result};

/// The manifest's format name and version.
pub const FORMAT: &str = "tress-dataset";
pub const VERSION: u32 = 1;

/// A dataset config as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetSpec {
    /// Must be `"dataset"` (tells a dataset config from a job file).
    pub kind: String,
    pub name: String,
    /// The job (file or built-in preset) every item extends: head, material, solver settings.
    #[serde(default)]
    pub job: Option<String>,
    /// Frames of each item, `A-B`, or `"all"`: the whole motion (a motion may set its own).
    #[serde(default = "default_frames")]
    pub frames: String,
    #[serde(default = "default_fps")]
    pub fps: f64,
    /// Strands of procedural grooms (a groom entry may set its own).
    #[serde(default = "default_strands")]
    pub strands: usize,
    /// Points per strand (every groom resampled to it; 0 keeps a file's).
    #[serde(default = "default_points")]
    pub points: usize,
    #[serde(rename = "groom")]
    pub grooms: Vec<GroomEntry>,
    #[serde(rename = "motion", default = "default_motions")]
    pub motions: Vec<MotionEntry>,
}

fn default_frames() -> String {
    "1-200".into()
}
fn default_fps() -> f64 {
    24.0
}
fn default_strands() -> usize {
    2000
}
fn default_points() -> usize {
    25
}
fn default_motions() -> Vec<MotionEntry> {
    vec![MotionEntry {
        preset: Some("rom".into()),
        ..MotionEntry::default()
    }]
}

/// Grooms of a dataset: a preset × its seeds × its edit lists, or one groom file × its edit
/// lists.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GroomEntry {
    pub preset: Option<String>,
    /// A groom file (`${VAR}` expanded, relative to the config).
    pub file: Option<String>,
    /// The item name's groom part [default: the preset's name or the file's stem].
    pub name: Option<String>,
    /// Seeds of a procedural groom [default: 1].
    pub seeds: Vec<u64>,
    /// Edit lists (`tress groom edit` forms); each list is one groom [default: one, unedited].
    pub edits: Vec<Vec<String>>,
    /// Strands of a procedural preset [default: the config's `strands`]; with `file` an error
    /// (a groom file keeps all its strands).
    pub strands: Option<usize>,
    /// Scale and up axis of a groom file, as in a job's `[groom]`.
    pub scale: Option<f32>,
    pub up: Option<String>,
    /// A PLY point cloud's points per strand, as in a job's `[groom]`.
    pub points_per_strand: Option<usize>,
    /// The head collider of this groom's items (`[head] collider` of a job: `sphere` fitted to
    /// the roots, or a mesh / `.sdf` file relative to the config) [default: the config's job's;
    /// a groom file needs one unless that job has a mesh head].
    pub head: Option<String>,
}

/// Motions of a dataset: a preset × its seeds, or a motion file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MotionEntry {
    pub preset: Option<String>,
    pub gltf: Option<String>,
    pub abc: Option<String>,
    pub track: Option<String>,
    pub node: Option<String>,
    pub animation: Option<String>,
    pub xform: Option<String>,
    pub mesh: Option<String>,
    /// The item name's motion part [default: the preset's name or the file's stem].
    pub name: Option<String>,
    /// Seeds of a preset [default: the preset's own].
    pub seeds: Vec<u64>,
    /// This motion's frames, `A-B` or `"all"` [default: the dataset's].
    pub frames: Option<String>,
}

/// One item: a groom and a motion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// `<groom key>--<motion key>`.
    pub name: String,
    /// The groom's part of the name, `<groom>[-s<seed>][-e<k>]`: one groom of the dataset.
    pub groom_key: String,
    /// The motion's part, `<motion>[-s<seed>]`: one motion of the dataset.
    pub motion_key: String,
    pub groom: ItemGroom,
    pub motion: ItemMotion,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemGroom {
    pub preset: Option<String>,
    pub file: Option<String>,
    pub seed: u64,
    pub edits: Vec<String>,
    pub strands: Option<usize>,
    pub scale: Option<f32>,
    pub up: Option<String>,
    /// A PLY point cloud's points per strand, where its groom entry gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points_per_strand: Option<usize>,
    /// The item's head collider, where its groom entry names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemMotion {
    /// The `[motion]` section of the item's job.
    pub section: Table,
    /// Frames as the config gives them (`A-B` or `all`).
    pub frames: String,
}

/// A finished item as the manifest lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemRecord {
    #[serde(flatten)]
    pub item: Item,
    /// The simulated frames.
    pub first: i64,
    pub last: i64,
    pub fps: f64,
    pub strands: u64,
    pub points: u64,
    /// The ground-truth cache, relative to the dataset folder.
    pub cache: String,
    /// The groom at rest (the cache's strands), relative to the dataset folder.
    pub rest: String,
    pub bytes: u64,
    pub sha256: String,
    /// Seconds the simulation took when it ran.
    pub seconds: f64,
    /// The build that simulated it.
    pub tress: String,
}

/// `DIR/manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    pub name: String,
    /// The config as merged (what built it).
    pub config: DatasetSpec,
    pub items: Vec<ItemRecord>,
}

/// A loaded config: the spec, its file and folder.
#[derive(Clone, Debug)]
pub struct Dataset {
    pub spec: DatasetSpec,
    pub file: PathBuf,
    pub dir: PathBuf,
}

fn stem(s: &str) -> String {
    Path::new(s)
        .file_stem()
        .map(|x| x.to_string_lossy().to_string())
        .unwrap_or_else(|| s.to_string())
}

/// Item names keep to letters, digits, `-`, `_` and `.` (they are folder names on every OS).
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

impl Dataset {
    /// Reads a dataset config; errors name the file, the line and the key.
    pub fn load(path: &Path) -> Result<Dataset> {
        let origin = path.display().to_string();
        let spec: DatasetSpec = crate::presets::parse_file(path)?;
        if spec.kind != "dataset" {
            return Err(Error::Invalid(format!(
                "{origin}: kind = {:?}: a dataset config says kind = \"dataset\"",
                spec.kind
            )));
        }
        let bad = |m: String| Error::Invalid(format!("{origin}: {m}"));
        if spec.grooms.is_empty() {
            return Err(bad("add at least one [[groom]]".into()));
        }
        if spec.motions.is_empty() {
            return Err(bad(
                "add at least one [[motion]] (or leave it out for the range of motion `rom`)".into(),
            ));
        }
        if !(spec.fps > 0.0 && spec.fps.is_finite()) {
            return Err(bad(format!("fps = {}: must be positive", spec.fps)));
        }
        for (i, g) in spec.grooms.iter().enumerate() {
            if g.preset.is_some() == g.file.is_some() {
                return Err(bad(format!("groom {}: give one of `preset` or `file`", i + 1)));
            }
            if g.file.is_some() && !g.seeds.is_empty() {
                return Err(bad(format!(
                    "groom {}: `seeds` applies to procedural presets only",
                    i + 1
                )));
            }
        }
        for (i, m) in spec.motions.iter().enumerate() {
            let given = [&m.preset, &m.gltf, &m.abc, &m.track]
                .iter()
                .filter(|x| x.is_some())
                .count();
            if given != 1 {
                return Err(bad(format!(
                    "motion {}: give one of `preset`, `gltf`, `abc` or `track`",
                    i + 1
                )));
            }
            if m.preset.is_none() && !m.seeds.is_empty() {
                return Err(bad(format!(
                    "motion {}: `seeds` applies to motion presets only",
                    i + 1
                )));
            }
        }
        let d = Dataset {
            spec,
            file: path.to_path_buf(),
            dir: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
        };
        // Every item must make a valid job (bad presets, files, frames are caught here).
        let items = d.items();
        let mut names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(bad(format!(
                "two items are named {}: give the entries distinct `name`s",
                w[0]
            )));
        }
        for item in &items {
            d.job(item, Path::new(".")).map_err(|e| match e {
                // The job's hint names its own key; in a dataset the head is the entry's.
                Error::Invalid(m) if item.groom.file.is_some() && m.contains("head.collider") => {
                    Error::Invalid(format!(
                        "{m} (in a dataset: `head = \"sphere\"` or a mesh in this [[groom]] entry)"
                    ))
                }
                e => e,
            })?;
        }
        Ok(d)
    }

    /// Every groom × motion, in config order.
    pub fn items(&self) -> Vec<Item> {
        let mut grooms = Vec::new();
        for g in &self.spec.grooms {
            let base = g
                .name
                .clone()
                .unwrap_or_else(|| stem(g.preset.as_deref().or(g.file.as_deref()).unwrap_or("groom")));
            let seeds: Vec<Option<u64>> = match (&g.preset, g.seeds.is_empty()) {
                (Some(_), true) => vec![Some(1)],
                (Some(_), false) => g.seeds.iter().map(|s| Some(*s)).collect(),
                (None, _) => vec![None],
            };
            let edits: Vec<Vec<String>> = if g.edits.is_empty() {
                vec![Vec::new()]
            } else {
                g.edits.clone()
            };
            for s in &seeds {
                for (k, e) in edits.iter().enumerate() {
                    let mut name = clean(&base);
                    if let Some(s) = s {
                        name.push_str(&format!("-s{s}"));
                    }
                    if edits.len() > 1 {
                        name.push_str(&format!("-e{}", k + 1));
                    }
                    let groom = ItemGroom {
                        preset: g.preset.clone(),
                        file: g.file.clone(),
                        seed: s.unwrap_or(1),
                        edits: e.clone(),
                        strands: g.strands.or(g.preset.as_ref().map(|_| self.spec.strands)),
                        scale: g.scale,
                        up: g.up.clone(),
                        points_per_strand: g.points_per_strand,
                        head: g.head.clone(),
                    };
                    grooms.push((name, groom));
                }
            }
        }
        let mut motions = Vec::new();
        for m in &self.spec.motions {
            let source = m
                .preset
                .as_deref()
                .or(m.gltf.as_deref())
                .or(m.abc.as_deref())
                .or(m.track.as_deref());
            let base = clean(&m.name.clone().unwrap_or_else(|| stem(source.unwrap_or("motion"))));
            let frames = m.frames.clone().unwrap_or_else(|| self.spec.frames.clone());
            let mut section = Table::new();
            let mut put = |k: &str, v: &Option<String>| {
                if let Some(v) = v {
                    section.insert(k.into(), Value::String(v.clone()));
                }
            };
            put("preset", &m.preset);
            put("gltf", &m.gltf);
            put("abc", &m.abc);
            put("track", &m.track);
            put("node", &m.node);
            put("animation", &m.animation);
            put("xform", &m.xform);
            put("mesh", &m.mesh);
            if m.seeds.is_empty() {
                motions.push((base, ItemMotion { section, frames }));
            } else {
                for s in &m.seeds {
                    let mut section = section.clone();
                    section.insert("seed".into(), Value::Integer(*s as i64));
                    motions.push((
                        format!("{base}-s{s}"),
                        ItemMotion {
                            section,
                            frames: frames.clone(),
                        },
                    ));
                }
            }
        }
        let mut out = Vec::new();
        for (gn, g) in &grooms {
            for (mn, m) in &motions {
                out.push(Item {
                    name: format!("{gn}--{mn}"),
                    groom_key: gn.clone(),
                    motion_key: mn.clone(),
                    groom: g.clone(),
                    motion: m.clone(),
                });
            }
        }
        out
    }

    fn origin(&self) -> String {
        self.file.display().to_string()
    }

    /// The item's job: the config's `job` with the item's groom, motion and frames, writing to
    /// `out/items/<item>`, running the ground truth only (its cache, no other output).
    pub fn job(&self, item: &Item, out: &Path) -> Result<Job> {
        let mut t = Table::new();
        if let Some(j) = &self.spec.job {
            t.insert("extends".into(), Value::String(j.clone()));
        }
        t.insert(
            "name".into(),
            Value::String(format!("{}/{}", self.spec.name, item.name)),
        );
        let folder = std::path::absolute(out.join("items").join(&item.name))
            .unwrap_or_else(|_| out.join("items").join(&item.name));
        t.insert("output".into(), Value::String(folder.display().to_string()));
        // `all` is the job's own: its motion's whole length.
        t.insert("frames".into(), Value::String(item.motion.frames.clone()));
        t.insert("fps".into(), Value::Float(self.spec.fps));
        t.insert("seed".into(), Value::Integer(item.groom.seed as i64));
        let mut g = Table::new();
        let g_in = &item.groom;
        if let Some(p) = &g_in.preset {
            g.insert("preset".into(), Value::String(p.clone()));
        }
        if let Some(f) = &g_in.file {
            g.insert("file".into(), Value::String(f.clone()));
        }
        if let Some(s) = g_in.strands {
            g.insert("strands".into(), Value::Integer(s as i64));
        }
        g.insert("points".into(), Value::Integer(self.spec.points as i64));
        if let Some(s) = g_in.scale {
            g.insert("scale".into(), Value::Float(s as f64));
        }
        if let Some(u) = &g_in.up {
            g.insert("up".into(), Value::String(u.clone()));
        }
        if let Some(k) = g_in.points_per_strand {
            g.insert("points_per_strand".into(), Value::Integer(k as i64));
        }
        g.insert(
            "edits".into(),
            Value::Array(g_in.edits.iter().map(|e| Value::String(e.clone())).collect()),
        );
        t.insert("groom".into(), Value::Table(g));
        if let Some(h) = &g_in.head {
            let mut head = Table::new();
            head.insert("collider".into(), Value::String(h.clone()));
            t.insert("head".into(), Value::Table(head));
        }
        t.insert("motion".into(), Value::Table(item.motion.section.clone()));
        // The ground truth only: its cache is the item.
        let mut outputs = Table::new();
        for k in ["abc", "ply", "usd", "ground_truth_abc"] {
            outputs.insert(k.into(), Value::Boolean(false));
        }
        outputs.insert("tcache".into(), Value::Boolean(true));
        t.insert("outputs".into(), Value::Table(outputs));
        let origin = format!("{} (item {})", self.origin(), item.name);
        Job::from_table(t, &origin, &self.dir)
    }
}

/// How to build.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// Only this item (a farm task); no manifest is written.
    pub item: Option<String>,
    pub quiet: bool,
    pub no_wait: bool,
}

/// What a build did.
#[derive(Clone, Debug, Serialize)]
pub struct BuildReport {
    pub dataset: String,
    pub output: PathBuf,
    pub items: usize,
    /// Items simulated by this run, and those found done.
    pub ran: usize,
    pub cached: usize,
    pub seconds: f64,
    /// Written when every item was built.
    pub manifest: Option<PathBuf>,
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value).expect("serializes");
    tress_formats::atomic::write(path, text.as_bytes()).map_err(|e| crate::error::output_error(path, e))
}

/// Seconds as `1 h 02 min`, `3 min 05 s` or `12 s`.
fn duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

/// Builds the dataset's items into `out` (skipping finished ones) and, when all are built,
/// its manifest.
pub fn build(d: &Dataset, out: &Path, o: &BuildOptions) -> Result<BuildReport> {
    let started = Instant::now();
    let all = d.items();
    let todo: Vec<&Item> = match &o.item {
        Some(name) => {
            let Some(i) = all.iter().find(|i| &i.name == name) else {
                let names: Vec<&str> = all.iter().map(|i| i.name.as_str()).collect();
                return Err(Error::Invalid(format!(
                    "{}: no item {name:?} (items: {})",
                    d.origin(),
                    names.join(", ")
                )));
            };
            vec![i]
        }
        None => all.iter().collect(),
    };
    std::fs::create_dir_all(out).map_err(|e| Error::Write {
        path: out.to_path_buf(),
        source: e,
    })?;
    let (mut ran, mut cached) = (0usize, 0usize);
    let mut records = Vec::new();
    // Time left: seconds per simulated frame × strands of the items run so far.
    let (mut work_done, mut secs_done) = (0.0f64, 0.0f64);
    let jobs: Vec<Job> = todo.iter().map(|i| d.job(i, out)).collect::<Result<_>>()?;
    let work = |j: &Job| ((j.last - j.first + 1) as f64) * j.groom.strands.unwrap_or(2000) as f64;
    let mut work_left: f64 = jobs.iter().map(work).sum();
    for (k, (item, job)) in todo.iter().zip(&jobs).enumerate() {
        if !o.quiet {
            let eta = if work_done > 0.0 {
                format!(", about {} left", duration(secs_done / work_done * work_left))
            } else {
                String::new()
            };
            eprintln!(
                "dataset    [{}/{}] {} (frames {}-{}{eta})",
                k + 1,
                todo.len(),
                item.name,
                job.first,
                job.last
            );
        }
        let opts = RunOptions {
            only: vec![prepare::NAME.into(), simulate::NAME.into()],
            quiet: o.quiet,
            no_wait: o.no_wait,
            ..RunOptions::default()
        };
        let t = Instant::now();
        let report = super::run(job, &opts).map_err(|e| e.context(&format!("dataset item {}", item.name)))?;
        let sim_ran = report
            .stages
            .iter()
            .any(|s| s.stage == simulate::NAME && s.status == "ran");
        if sim_ran {
            ran += 1;
            work_done += work(job);
            secs_done += t.elapsed().as_secs_f64();
        } else {
            cached += 1;
        }
        work_left -= work(job);
        let rec = item_record(item, job, out)?;
        write_json(&job.output.join("item.json"), &rec)?;
        records.push(rec);
    }
    let manifest = if o.item.is_none() {
        let m = Manifest {
            format: FORMAT.into(),
            version: VERSION,
            name: d.spec.name.clone(),
            config: d.spec.clone(),
            items: records,
        };
        let path = out.join("manifest.json");
        write_json(&path, &m)?;
        Some(path)
    } else {
        None
    };
    Ok(BuildReport {
        dataset: d.spec.name.clone(),
        output: out.to_path_buf(),
        items: todo.len(),
        ran,
        cached,
        seconds: started.elapsed().as_secs_f64(),
        manifest,
    })
}

/// A finished item's entry, from its simulate record and cache header.
fn item_record(item: &Item, job: &Job, out: &Path) -> Result<ItemRecord> {
    let r = Record::load(&job.output, simulate::NAME, None)
        .ok_or_else(|| Error::Invalid(format!("dataset item {}: no record of its simulation", item.name)))?;
    let f = r.output(simulate::GT.path)?;
    let cache_path = job.output.join(&f.path);
    let cache = tress_formats::tcache::TcacheReader::open(&cache_path)?;
    let root = std::path::absolute(out).unwrap_or(out.to_path_buf());
    let rel = super::farm::relative(&root, &cache_path);
    let rest = super::farm::relative(&root, &job.output.join(prepare::GROOM.path));
    Ok(ItemRecord {
        item: item.clone(),
        first: job.first,
        last: job.last,
        fps: job.fps,
        strands: cache.header.rest.strand_count() as u64,
        points: cache.header.rest.point_count() as u64,
        cache: rel.display().to_string(),
        rest: rest.display().to_string(),
        bytes: f.bytes,
        sha256: f.sha256.clone(),
        seconds: r.seconds,
        tress: r.tress.clone(),
    })
}

/// Reads `DIR/manifest.json`, checking its format.
pub fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        Error::Invalid(format!(
            "{}: {e} (build the dataset first: tress dataset build CONFIG -o {})",
            path.display(),
            dir.display()
        ))
    })?;
    let m: Manifest = serde_json::from_str(&text)
        .map_err(|e| Error::Invalid(format!("{}: line {}: {e}", path.display(), e.line())))?;
    if m.format != FORMAT || m.version != VERSION {
        return Err(Error::Invalid(format!(
            "{}: format {} version {}, expected {FORMAT} version {VERSION}",
            path.display(),
            m.format,
            m.version
        )));
    }
    Ok(m)
}

impl Manifest {
    /// The dataset's grooms and motions (item name parts), each in order of first appearance.
    pub fn parts(&self) -> (Vec<String>, Vec<String>) {
        let (mut g, mut m) = (Vec::new(), Vec::new());
        for i in &self.items {
            if !g.contains(&i.item.groom_key) {
                g.push(i.item.groom_key.clone());
            }
            if !m.contains(&i.item.motion_key) {
                m.push(i.item.motion_key.clone());
            }
        }
        (g, m)
    }
}
