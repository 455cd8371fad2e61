//! A batch job's items: the same job over several grooms × motions (or the student project's
//! random experiments), each in its own subfolder `output/<groom>-<motion>`.

use std::path::Path;

use toml::{Table, Value};

use super::Job;
use super::file::groom_preset;
use super::sections::{BatchSpec, MotionSpec};
use crate::error::{Error, Result};

/// A file's stem, or the name itself.
fn stem(s: &str) -> String {
    Path::new(s)
        .file_stem()
        .map(|x| x.to_string_lossy().to_string())
        .unwrap_or_else(|| s.to_string())
}

/// The batch's grooms: those it lists, then the groom files of its folder (by extension,
/// sorted); one empty name for the job's own groom.
fn grooms(b: &BatchSpec) -> Result<Vec<String>> {
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
    Ok(grooms)
}

/// The batch's motions with their item name part ("" and `None` for the job's own motion).
fn motions(job: &Job, b: &BatchSpec) -> Vec<(String, Option<MotionSpec>)> {
    if let Some(e) = &b.experiments {
        let pivot = job
            .scene
            .as_ref()
            .map(|(_, p)| p.centre.as_dvec3())
            .unwrap_or_default();
        let width = e.count.to_string().len().max(2);
        return e
            .draw(pivot)
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
            .collect();
    }
    if b.motions.is_empty() {
        return vec![(String::new(), None)];
    }
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
}

impl Job {
    /// The jobs a batch stands for (grooms × motions, each in `output/<groom>-<motion>`), or
    /// this job alone.
    pub fn items(&self) -> Result<Vec<Job>> {
        let Some(b) = &self.batch else {
            return Ok(vec![self.clone()]);
        };
        let motions = motions(self, b);
        let mut out = Vec::new();
        for g in &grooms(b)? {
            for (name, m) in &motions {
                out.push(self.item(g, name, m.as_ref())?);
            }
        }
        Ok(out)
    }

    /// The item of groom `g` ("": the job's own) and motion `m` (named `name`; `None`: the
    /// job's own).
    fn item(&self, g: &str, name: &str, m: Option<&MotionSpec>) -> Result<Job> {
        let mut j = self.clone();
        j.batch = None;
        let mut parts = Vec::new();
        if !g.is_empty() {
            if groom_preset(g) {
                j.groom.preset = Some(g.to_string());
                j.groom.file = None;
            } else {
                j.groom.file = Some(g.to_string());
                j.groom.preset = None;
            }
            parts.push(stem(g));
        }
        if let Some(m) = m {
            j.motion = m.clone();
            if let Ok(t) = Table::try_from(m) {
                j.table.insert("motion".into(), Value::Table(t));
            }
            parts.push(name.to_string());
        }
        if self.material_spec.choice.is_none() {
            // Each groom's own style's material.
            let origin = format!("batch item {}", parts.join("-"));
            let scene = self.scene.as_ref().map(|(_, p)| &p.material);
            (j.material_preset, j.material) = self.material_spec.resolve(&j.groom, scene, &origin)?;
        }
        let item = parts.join("-");
        j.name = format!("{}/{item}", self.name);
        j.output = self.output.join(&item);
        // The item's own settings, for content hashes and reports.
        j.table.remove("batch");
        j.table.insert("item".into(), Value::String(item));
        Ok(j)
    }
}
