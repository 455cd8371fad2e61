//! Trained models shipped with tress (`presets/models/`, each with its training summary and the
//! command that made it): `[neural] model = "general"` in a job and `tress upsample --method
//! neural --model general` name one instead of a file.
//!
//! A model is embedded in the binary, so a name works from any folder; it is written once into
//! a cache folder (`TRESS_CACHE_DIR`, else the system's temporary folder) under a name that holds
//! its content's hash, and used from there like any model file.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Built-in models: (name, `.tnn` bytes).
pub const MODELS: &[(&str, &[u8])] = &[("general", include_bytes!("../../presets/models/general.tnn"))];

/// The built-in models' names.
pub fn names() -> Vec<&'static str> {
    MODELS.iter().map(|(n, _)| *n).collect()
}

/// The model file a job or command names: `local` (the name as a path, relative to where it was
/// given) when it exists, else the built-in model `name` when there is one, else `local` (whose
/// reading then says it is missing).
pub fn resolve(name: &str, local: &std::path::Path) -> Result<PathBuf> {
    if local.exists() {
        return Ok(local.to_path_buf());
    }
    Ok(path(name)?.unwrap_or_else(|| local.to_path_buf()))
}

/// The file of the built-in model `name`, or `None` when no built-in model has that name.
pub fn path(name: &str) -> Result<Option<PathBuf>> {
    let Some((_, bytes)) = MODELS.iter().find(|(n, _)| *n == name) else {
        return Ok(None);
    };
    let hash: String = Sha256::digest(bytes)
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    let dir = std::env::var_os("TRESS_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("tress-models"));
    let file = dir.join(format!("{name}-{hash}.tnn"));
    if std::fs::metadata(&file).is_ok_and(|m| m.len() == bytes.len() as u64) {
        return Ok(Some(file));
    }
    std::fs::create_dir_all(&dir).map_err(|e| Error::Write {
        path: dir.clone(),
        source: e,
    })?;
    tress_formats::atomic::write(&file, bytes).map_err(|e| crate::error::output_error(&file, e))?;
    Ok(Some(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in model is a neural interpolator that loads, with its training summary.
    #[test]
    fn built_in_models_load() {
        for name in names() {
            let p = path(name).unwrap().unwrap();
            let (cfg, _net, header) = crate::neural::interp::load_model::<burn::backend::Flex>(
                &p,
                &burn::backend::flex::FlexDevice,
            )
            .unwrap();
            assert_eq!(header["kind"], "interp", "{name}");
            assert!(
                header["training"]["validation"]["rmse_cm"]
                    .as_f64()
                    .is_some_and(|r| r > 0.0),
                "{name}: {}",
                header["training"]
            );
            cfg.validate().unwrap();
            // A second call finds the written file.
            assert_eq!(path(name).unwrap().unwrap(), p);
        }
        assert!(path("no-such-model").unwrap().is_none());
    }

    /// The shipped general model is what its documented command trains: its stored grid, network
    /// (what L blends, the share of the rest offset) and training options are those of
    /// `examples/general/train.toml`, so a model file and its config cannot drift apart.
    #[test]
    fn the_general_model_carries_its_documented_training_config() {
        let p = path("general").unwrap().unwrap();
        let (cfg, _, _) =
            crate::neural::interp::load_model::<burn::backend::Flex>(&p, &burn::backend::flex::FlexDevice)
                .unwrap();
        let doc = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/general/train.toml");
        let want = crate::neural::interp::InterpConfig::load(doc.to_str().unwrap()).unwrap();
        assert_eq!(cfg.grid, want.grid);
        assert_eq!(cfg.net, want.net);
        assert_eq!(cfg.train, want.train);
    }
}
