//! The material of a job: a preset (by default the one made for the groom's procedural style,
//! `straight` for groom files; an `.mss` scene's springs for a scene) with the job's own keys
//! over it. Kept as the job wrote it, so a batch item of another groom gets that groom's
//! material.

use std::path::PathBuf;

use toml::{Table, Value};

use super::sections::GroomSpec;
use crate::error::{Error, Result};
use crate::presets::keys::{expand_env, merge, section};
use crate::sim::Material;

/// `[material]` as the job wrote it.
#[derive(Clone, Debug, PartialEq)]
pub struct MaterialSpec {
    /// `material.preset` (`None`: follow the groom's style).
    pub choice: Option<String>,
    /// The job's per-key overrides.
    pub overrides: Table,
    /// Folder that relative material files are read from.
    pub dir: PathBuf,
}

impl MaterialSpec {
    /// `[material]` of the merged table `value`.
    pub fn read(value: Value, origin: &str, dir: PathBuf) -> Result<MaterialSpec> {
        let mut overrides = match value {
            Value::Table(m) => m,
            _ => return Err(Error::Invalid(format!("{origin}: [material] must be a table"))),
        };
        let choice = match overrides.remove("preset") {
            Some(Value::String(s)) => Some(s),
            Some(_) => {
                return Err(Error::Invalid(format!(
                    "{origin}: material.preset must be a string"
                )));
            }
            None => None,
        };
        Ok(MaterialSpec {
            choice,
            overrides,
            dir,
        })
    }

    /// The preset's name and the material for `groom` (`scene`: an `.mss` scene's springs).
    pub fn resolve(
        &self,
        groom: &GroomSpec,
        scene: Option<&Material>,
        origin: &str,
    ) -> Result<(String, Material)> {
        if let (Some(m), None) = (scene, &self.choice) {
            // An .mss scene's springs, with the job's own keys over them.
            let mut base = Table::try_from(m).map_err(|e| Error::Runtime(format!("scene material: {e}")))?;
            merge(&mut base, self.overrides.clone());
            return Ok(("scene".into(), checked(base, origin)?));
        }
        let name = match &self.choice {
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
        // A built-in preset, or a file relative to the job, with its `extends` chain.
        let table = crate::sim::material::TABLE;
        let source = match table.iter().any(|(n, _)| *n == name) {
            true => name.clone(),
            false => self.dir.join(expand_env(&name, origin)?).display().to_string(),
        };
        let (mut base, _) = crate::presets::resolve("material", table, &source)
            .map_err(|e| Error::Invalid(format!("{origin}: material.preset {name:?}: {e}")))?;
        merge(&mut base, self.overrides.clone());
        Ok((name, checked(base, origin)?))
    }
}

/// The material of a merged table, checked.
fn checked(base: Table, origin: &str) -> Result<Material> {
    let material: Material = section(Value::Table(base), "material", origin)?;
    material
        .check()
        .map_err(|e| Error::Invalid(format!("{origin}: material: {e}")))?;
    Ok(material)
}
