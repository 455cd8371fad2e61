//! Stage records. Each finished stage leaves `.tress/<stage>.json` in the output folder: the
//! content hash of its inputs (the stage's name and results version, its settings, the content
//! of the files it reads) and the files it wrote with their sizes and content hashes. A stage
//! whose inputs hash the same and whose files are all there is skipped ("cached"), whichever
//! build of tress wrote it: a new build re-runs a stage only when that stage's results version
//! ([`super::Info::version`]) changed.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Chunk;
use crate::error::{Error, Result};

/// One file a stage wrote, relative to the output folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputFile {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

/// What a finished stage (or chunk of one) leaves behind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The stage's name ([`super::Stage::name`]).
    pub stage: String,
    /// `i/n` for chunks of a chunkable stage.
    pub chunk: Option<Chunk>,
    /// Hash of everything that determines the outputs.
    pub inputs: String,
    pub outputs: Vec<OutputFile>,
    pub seconds: f64,
    /// The build that wrote it ([`crate::build_id`]), for people: it does not key the record.
    pub tress: String,
    /// The stage's results version when it ran ([`super::Info::version`]; in the key).
    #[serde(default)]
    pub version: u32,
}

/// SHA-256 of a file's content, streamed.
pub fn file_sha256(path: &Path) -> Result<String> {
    let mut f = std::fs::File::open(path).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The version of the keys themselves (what [`input_hash`] hashes and how): raised only when
/// that changes, which re-runs every stage once.
const KEY_FORMAT: &str = "tress stage key 2";

/// Hash of a stage's inputs: its name and results version ([`super::Info::version`]), its
/// settings (any serializable value) and the content hashes of the files it reads. Not the
/// build of tress: a new build reuses results whose stage version did not change.
pub fn input_hash(
    stage: &str,
    version: u32,
    settings: &serde_json::Value,
    upstream: &[&OutputFile],
) -> String {
    let mut h = Sha256::new();
    h.update(KEY_FORMAT.as_bytes());
    h.update(stage.as_bytes());
    h.update(version.to_le_bytes());
    h.update(serde_json::to_vec(settings).expect("settings serialize"));
    for f in upstream {
        h.update(f.path.as_bytes());
        h.update(f.sha256.as_bytes());
    }
    hex(&h.finalize())
}

/// Where records live.
pub fn record_path(out: &Path, stage: &str, chunk: Option<Chunk>) -> PathBuf {
    let name = match chunk {
        Some((i, n)) => format!("{stage}.{i}-of-{n}.json"),
        None => format!("{stage}.json"),
    };
    out.join(".tress").join(name)
}

impl Record {
    /// The record of a stage, if it finished.
    pub fn load(out: &Path, stage: &str, chunk: Option<Chunk>) -> Option<Record> {
        let text = std::fs::read_to_string(record_path(out, stage, chunk)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Whether this record stands for inputs hashing to `inputs` and all its files are there,
    /// with their recorded sizes (a quick check; [`Record::verify`] reads the files).
    pub fn is_current(&self, out: &Path, inputs: &str) -> bool {
        self.inputs == inputs
            && self
                .outputs
                .iter()
                .all(|f| std::fs::metadata(out.join(&f.path)).is_ok_and(|m| m.len() == f.bytes))
    }

    /// Whether this record can be trusted for inputs hashing to `inputs`: same inputs (and
    /// stage version), and every output it covers there with the size and SHA-256 it recorded.
    /// Otherwise why not.
    pub fn verify(&self, out: &Path, inputs: &str) -> std::result::Result<(), String> {
        if self.inputs != inputs {
            return Err("settings, inputs or the stage's results version changed since it ran".into());
        }
        for f in &self.outputs {
            let full = out.join(&f.path);
            match std::fs::metadata(&full) {
                Err(_) => return Err(format!("{} is missing", f.path)),
                Ok(m) if m.len() != f.bytes => {
                    return Err(format!("{} has {} bytes, {} recorded", f.path, m.len(), f.bytes));
                }
                Ok(_) => {}
            }
            match file_sha256(&full) {
                Ok(h) if h == f.sha256 => {}
                Ok(_) => {
                    return Err(format!(
                        "{} changed since it was recorded (SHA-256 differs)",
                        f.path
                    ));
                }
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(())
    }

    /// Records the files `paths` (relative to `out`) as this stage's outputs and saves.
    #[allow(clippy::too_many_arguments)]
    pub fn save(
        stage: &str,
        version: u32,
        chunk: Option<Chunk>,
        inputs: String,
        out: &Path,
        paths: &[String],
        seconds: f64,
    ) -> Result<Record> {
        let mut outputs = Vec::new();
        for p in paths {
            let full = out.join(p);
            let bytes = std::fs::metadata(&full)
                .map_err(|e| Error::Invalid(format!("{}: {e}", full.display())))?
                .len();
            outputs.push(OutputFile {
                path: p.clone(),
                bytes,
                sha256: file_sha256(&full)?,
            });
        }
        let r = Record {
            stage: stage.to_string(),
            chunk,
            inputs,
            outputs,
            seconds,
            tress: crate::build_id(),
            version,
        };
        let path = record_path(out, stage, chunk);
        std::fs::create_dir_all(path.parent().expect("has a parent")).map_err(|e| Error::Write {
            path: path.clone(),
            source: e,
        })?;
        let text = serde_json::to_string_pretty(&r).expect("record serializes");
        tress_formats::atomic::write(&path, text.as_bytes())
            .map_err(|e| crate::error::output_error(&path, e))?;
        Ok(r)
    }

    /// The recorded output with this relative path.
    pub fn output(&self, path: &str) -> Result<&OutputFile> {
        self.outputs
            .iter()
            .find(|f| f.path == path)
            .ok_or_else(|| Error::Runtime(format!("stage {} did not record {path}", self.stage)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_notice_changes() {
        let dir = std::env::temp_dir().join(format!("tress-stage-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.bin"), b"hello").unwrap();
        let settings = serde_json::json!({"substeps": 2});
        let h = input_hash("simulate", 1, &settings, &[]);
        assert_ne!(
            h,
            input_hash("simulate", 1, &serde_json::json!({"substeps": 3}), &[])
        );
        // A new results version of the stage does not reuse the record; another stage neither.
        assert_ne!(h, input_hash("simulate", 2, &settings, &[]));
        assert_ne!(h, input_hash("guide_sim", 1, &settings, &[]));
        let r = Record::save("simulate", 1, None, h.clone(), &dir, &["a.bin".into()], 1.5).unwrap();
        assert_eq!(
            r.outputs[0].sha256,
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        let back = Record::load(&dir, "simulate", None).unwrap();
        assert_eq!(back, r);
        assert!(back.is_current(&dir, &h));
        assert!(!back.is_current(&dir, "other"));
        // Another build of tress with the same stage version reuses it.
        let other_build = Record {
            tress: "0.0.1 build aaaa".into(),
            ..back.clone()
        };
        assert!(other_build.is_current(&dir, &h));
        assert!(other_build.verify(&dir, &h).is_ok());
        std::fs::write(dir.join("a.bin"), b"hello, world").unwrap();
        assert!(!back.is_current(&dir, &h), "a changed output is noticed");
        std::fs::write(dir.join("a.bin"), b"jello").unwrap();
        assert!(back.is_current(&dir, &h), "same size: the quick check passes");
        assert!(back.verify(&dir, &h).unwrap_err().contains("SHA-256"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
