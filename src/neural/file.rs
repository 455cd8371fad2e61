//! tress's neural model and checkpoint files (`.tnn`): self-describing containers.
//!
//! ```text
//! "TRESSNN\0"  u32 version (1)  u32 n  header JSON (n bytes: kind, config, grid, training, build)
//! u32 sections  { u32 n  name  u64 n  bytes }*   u32 CRC-32 of everything before it
//! ```
//!
//! Sections hold burn records (named MessagePack, full precision: `weights`, and in checkpoints
//! `optimizer` and `best`). Parameter ids are numbered in module order, so the same training
//! gives the same bytes. Every length is checked against the file before anything is allocated.

use std::path::Path;

use burn::module::{Module, ModuleMapper, Param, ParamId};
use burn::prelude::*;
use burn::record::{FullPrecisionSettings, NamedMpkBytesRecorder, Recorder};

use crate::error::{Error, Result};

/// The recorder of every weight section: named MessagePack, full precision.
pub type Rec = NamedMpkBytesRecorder<FullPrecisionSettings>;

/// Numbers parameters in module order (forcing their lazy initialisation in that order), so
/// the same seed gives the same weights and the same file bytes.
struct NumberParams(u64);

impl<B: Backend> ModuleMapper<B> for NumberParams {
    fn map_float<const D: usize>(&mut self, p: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
        let (_, t, m) = p.consume();
        self.0 += 1;
        Param::from_mapped_value(ParamId::from(self.0), t, m)
    }
}

/// Burn's random generator is one per process: seeding it and drawing the initial weights
/// must not interleave with another initialisation (two trainings in one process, e.g. tests
/// run in parallel), or the same seed would give different weights.
static INIT_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A module made by `init` with burn's generator seeded with `seed`, its parameters numbered
/// in module order from `first + 1` (modules optimized together need distinct numbers).
pub fn seeded_init<B: Backend, M: Module<B>>(
    seed: u64,
    first: u64,
    dev: &B::Device,
    init: impl FnOnce() -> M,
) -> M {
    let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    B::seed(dev, seed);
    init().map(&mut NumberParams(first))
}

/// A module's weights as a section's bytes.
pub fn module_to_bytes<B: Backend, M: Module<B>>(m: &M) -> Vec<u8> {
    Rec::default()
        .record(m.clone().into_record(), ())
        .expect("in-memory record")
}

/// `empty` (a module of the right shape) with the weights of a section's bytes.
pub fn module_from_bytes<B: Backend, M: Module<B>>(
    empty: M,
    bytes: &[u8],
    dev: &B::Device,
    path: &Path,
) -> Result<M> {
    let record = Recorder::<B>::load(&Rec::default(), bytes.to_vec(), dev)
        .map_err(|e| Error::Invalid(format!("{}: the weights do not load: {e}", path.display())))?;
    Ok(empty.load_record(record))
}

const MAGIC: &[u8; 8] = b"TRESSNN\0";
const VERSION: u32 = 1;
const MAX_HEADER: usize = 1 << 20;
const MAX_SECTIONS: usize = 16;

/// A parsed container.
pub struct NeuralFile {
    pub header: serde_json::Value,
    pub sections: Vec<(String, Vec<u8>)>,
}

impl NeuralFile {
    pub fn section(&self, name: &str) -> Option<&[u8]> {
        self.sections
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.as_slice())
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        let h = serde_json::to_vec(&self.header).expect("json");
        out.extend_from_slice(&(h.len() as u32).to_le_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(&(self.sections.len() as u32).to_le_bytes());
        for (name, bytes) in &self.sections {
            out.extend_from_slice(&(name.len() as u32).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(bytes);
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Writes atomically (no half-written file on failure).
    pub fn write(&self, path: &Path) -> Result<()> {
        tress_formats::atomic::write(path, &self.to_bytes()).map_err(|e| crate::error::output_error(path, e))
    }

    pub fn parse(data: &[u8], path: &Path) -> Result<NeuralFile> {
        let bad = |m: &str| Error::Invalid(format!("{}: {m}", path.display()));
        if data.len() < 8 || &data[..8] != MAGIC {
            return Err(bad("not a tress neural model (.tnn): wrong magic"));
        }
        if data.len() < 8 + 4 + 4 + 4 + 4 {
            return Err(bad("truncated"));
        }
        let (body, crc) = data.split_at(data.len() - 4);
        if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
            return Err(bad("checksum mismatch (the file is corrupt or truncated)"));
        }
        let mut at = 8usize;
        let mut take = |n: usize| -> Result<&[u8]> {
            if n > body.len() - at {
                return Err(bad("truncated"));
            }
            let s = &body[at..at + n];
            at += n;
            Ok(s)
        };
        let u32_at = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
        let version = u32_at(take(4)?);
        if version != VERSION {
            return Err(bad(&format!(
                "model file version {version}; this tress reads version {VERSION}"
            )));
        }
        let hlen = u32_at(take(4)?) as usize;
        if hlen > MAX_HEADER {
            return Err(bad("header too large"));
        }
        let header: serde_json::Value =
            serde_json::from_slice(take(hlen)?).map_err(|e| bad(&format!("header is not JSON: {e}")))?;
        let count = u32_at(take(4)?) as usize;
        if count > MAX_SECTIONS {
            return Err(bad("too many sections"));
        }
        let mut sections = Vec::with_capacity(count);
        for _ in 0..count {
            let nlen = u32_at(take(4)?) as usize;
            if nlen > 64 {
                return Err(bad("section name too long"));
            }
            let name =
                String::from_utf8(take(nlen)?.to_vec()).map_err(|_| bad("section name is not UTF-8"))?;
            let blen = u64::from_le_bytes(take(8)?.try_into().expect("8 bytes"));
            let blen = usize::try_from(blen).map_err(|_| bad("section too large"))?;
            sections.push((name, take(blen)?.to_vec()));
        }
        if at != body.len() {
            return Err(bad("trailing bytes after the last section"));
        }
        Ok(NeuralFile { header, sections })
    }

    pub fn read(path: &Path) -> Result<NeuralFile> {
        let data = std::fs::read(path).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
        NeuralFile::parse(&data, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_truncation_or_flip_is_an_error() {
        let f = NeuralFile {
            header: serde_json::json!({"kind": "interp", "n": 3}),
            sections: vec![("weights".into(), vec![1, 2, 3, 4, 5]), ("x".into(), vec![])],
        };
        let bytes = f.to_bytes();
        let p = Path::new("m.tnn");
        let g = NeuralFile::parse(&bytes, p).unwrap();
        assert_eq!(g.header, f.header);
        assert_eq!(g.section("weights"), Some(&[1u8, 2, 3, 4, 5][..]));
        for cut in 0..bytes.len() {
            assert!(NeuralFile::parse(&bytes[..cut], p).is_err());
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            assert!(NeuralFile::parse(&b, p).is_err(), "flip at {i}");
        }
    }
}
