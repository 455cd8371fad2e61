//! Reading a job file's TOML: its top-level keys checked, `extends` chains merged over the
//! default job (a job's own motion source or groom replaces the one it extends), and the
//! [`Reader`] the sections are resolved with (the merged table, the job's own table, paths
//! relative to the job file, errors that name the file, line and key).

use std::collections::BTreeMap;
use std::path::Path;

use serde::de::DeserializeOwned;
use toml::{Table, Value};

use super::error::{JobError, key_lines};
use crate::error::{Error, Result};
use crate::presets;
use crate::presets::keys::{expand_env, section};

/// The default job every job extends.
pub const TABLE: presets::Table = &[("default", include_str!("../../../presets/jobs/default.toml"))];

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

pub fn parse_table(text: &str, origin: &str) -> Result<Table> {
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

/// The keys of a job whose values are paths (relative to the file that names them), as
/// `section.key` or a top-level key; a list's strings each. `true`: always a path; `false`: a
/// path or a name (a preset, a built-in model, a procedural head).
const PATH_KEYS: &[(&str, bool)] = &[
    ("output", true),
    ("groom.file", true),
    ("groom.preset", false),
    ("head.collider", false),
    ("head.body", false),
    ("motion.gltf", true),
    ("motion.abc", true),
    ("motion.track", true),
    ("motion.preset", false),
    ("scene.mss", true),
    ("material.preset", false),
    ("training.motion", false),
    ("neural.model", false),
    ("neural.config", false),
    ("drape.model", true),
    ("batch.grooms", false),
    ("batch.groom_folder", true),
    ("batch.motions", false),
];

/// Before a job is merged over the job it extends from another folder: the parent's relative
/// paths made absolute from the parent's folder, so they keep naming what its file meant
/// (preset names — no folder, no extension — and `${VAR}`s stay as they are).
fn rebase_paths(base: &mut Table, base_dir: &Path, dir: &Path) {
    if base_dir == dir {
        return;
    }
    let rebase = |v: &mut Value, always: bool| {
        if let Value::String(s) = v {
            let p = Path::new(s.as_str());
            let file_like = always || p.components().count() > 1 || p.extension().is_some();
            if file_like && !s.contains("${") && p.is_relative() {
                let joined = base_dir.join(p);
                let joined = std::path::absolute(&joined).unwrap_or(joined);
                *s = crate::pipeline::bundle::normal(&joined).display().to_string();
            }
        }
    };
    for &(key, always) in PATH_KEYS {
        let v = match key.split_once('.') {
            None => base.get_mut(key),
            Some((sec, k)) => base
                .get_mut(sec)
                .and_then(Value::as_table_mut)
                .and_then(|t| t.get_mut(k)),
        };
        match v {
            Some(Value::Array(items)) => items.iter_mut().for_each(|v| rebase(v, always)),
            Some(v) => rebase(v, always),
            None => {}
        }
    }
}

/// Whether `name` is a built-in groom preset.
pub fn groom_preset(name: &str) -> bool {
    crate::groom::presets::TABLE.iter().any(|(n, _)| *n == name)
}

/// A job's TOML while its sections are resolved.
pub struct Reader<'a> {
    pub origin: &'a str,
    /// The job file's folder: relative paths start there.
    pub dir: &'a Path,
    /// The job's own table, before `extends`.
    pub own: Table,
    /// The merged table (`extends` and the default job under the job's own keys).
    pub t: Table,
    /// The lines of the keys the job file sets (empty for a job built in code).
    lines: BTreeMap<String, usize>,
}

impl<'a> Reader<'a> {
    /// Checks the top-level keys and merges `extends` (the default job when none).
    pub fn new(table: Table, origin: &'a str, dir: &'a Path) -> Result<Reader<'a>> {
        let own = table.clone();
        for k in table.keys() {
            if !TOP.contains(&k.as_str()) {
                let hint = crate::presets::keys::suggest(k, TOP)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                return Err(Error::Invalid(format!("{origin}: unknown key `{k}`{hint}")));
            }
        }
        // Everything not given comes from the default preset, at the end of every chain.
        let merge = |base: &mut Table, over: &Table, base_dir: &Path, dir: &Path| {
            replace_sources(base, over);
            rebase_paths(base, base_dir, dir);
        };
        let mut t = crate::presets::extend("job", TABLE, table, origin, dir, (Some("default"), &merge))?;
        t.remove("extends");
        let lines = std::fs::read_to_string(origin)
            .map(|text| key_lines(&text))
            .unwrap_or_default();
        Ok(Reader {
            origin,
            dir,
            own,
            t,
            lines,
        })
    }

    /// An error about `key` (a dotted path): `message` names it as the user wrote it.
    pub fn err(&self, key: &str, message: impl Into<String>) -> Error {
        JobError {
            origin: self.origin.to_string(),
            line: self.lines.get(key).copied(),
            key: key.to_string(),
            message: message.into(),
        }
        .into()
    }

    /// The merged value of a top-level key (an empty table when unset).
    pub fn get(&self, k: &str) -> Value {
        self.t.get(k).cloned().unwrap_or(Value::Table(Table::new()))
    }

    /// A top-level string.
    pub fn string(&self, k: &str) -> Result<String> {
        self.t
            .get(k)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| self.err(k, format!("`{k}` must be a string")))
    }

    /// `value` read as the section (or key) at dotted `path`, unknown keys named.
    pub fn section<T: DeserializeOwned>(&self, value: Value, path: &str) -> Result<T> {
        section(value, path, self.origin)
    }

    /// The top-level section `k` of the merged table.
    pub fn read<T: DeserializeOwned>(&self, k: &str) -> Result<T> {
        self.section(self.get(k), k)
    }

    /// A path the job names, `${VAR}` expanded, relative to the job file.
    pub fn path(&self, p: &str) -> Result<String> {
        Ok(self.dir.join(expand_env(p, self.origin)?).display().to_string())
    }

    /// Whether the job's own table (before `extends`) sets `section.key`.
    pub fn own_has(&self, section: &str, key: &str) -> bool {
        self.own
            .get(section)
            .and_then(Value::as_table)
            .is_some_and(|s| s.contains_key(key))
    }
}
