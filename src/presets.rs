//! Presets: TOML files under `presets/`, embedded in the binary so that a name works from any
//! folder; a path to a TOML file works too. Unknown keys are errors that name the key.

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// Embedded presets of one kind: (name, TOML text).
pub type Table = &'static [(&'static str, &'static str)];

/// Parses TOML text; `origin` names the source in errors.
pub fn parse<T: DeserializeOwned>(text: &str, origin: &str) -> Result<T> {
    toml::from_str(text).map_err(|e| Error::Invalid(format!("{origin}: {}", e.message().trim())))
}

/// A built-in preset by name, or a TOML file by path.
pub fn load<T: DeserializeOwned>(kind: &str, table: Table, name_or_path: &str) -> Result<T> {
    if let Some((_, text)) = table.iter().find(|(n, _)| *n == name_or_path) {
        return parse(text, &format!("{kind} preset {name_or_path}"));
    }
    let path = Path::new(name_or_path);
    if path.extension().is_some_and(|e| e == "toml") || path.exists() {
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
        return parse(&text, &path.display().to_string());
    }
    let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
    Err(Error::Invalid(format!(
        "unknown {kind} preset {name_or_path:?} (built in: {}; or give a .toml file)",
        names.join(", ")
    )))
}
