//! PLY sequences: one strand PLY per frame, named by a pattern whose `#` run is the zero-padded
//! frame number (`hair.####.ply` → `hair.1001.ply`), optionally zstd-compressed (`.ply.zst`).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A file-name pattern with a run of `#`.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    dir: PathBuf,
    prefix: String,
    width: usize,
    suffix: String,
}

impl Pattern {
    pub fn parse(path: &Path) -> Option<Pattern> {
        let name = path.file_name()?.to_str()?;
        let start = name.find('#')?;
        let width = name[start..].chars().take_while(|&c| c == '#').count();
        let suffix = name[start + width..].to_string();
        if suffix.contains('#') {
            return None;
        }
        Some(Pattern {
            dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            prefix: name[..start].to_string(),
            width,
            suffix,
        })
    }

    pub fn compressed(&self) -> bool {
        self.suffix.ends_with(".zst")
    }

    pub fn path(&self, frame: i64) -> PathBuf {
        let n = if frame < 0 {
            format!("-{:0w$}", -frame, w = self.width.saturating_sub(1))
        } else {
            format!("{frame:0w$}", w = self.width)
        };
        self.dir.join(format!("{}{n}{}", self.prefix, self.suffix))
    }

    /// Frame numbers of the files present, sorted.
    pub fn frames_on_disk(&self) -> Result<Vec<i64>> {
        let dir = if self.dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &self.dir
        };
        let entries =
            std::fs::read_dir(dir).map_err(|e| Error::Invalid(format!("{}: {e}", dir.display())))?;
        let mut out = Vec::new();
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(mid) = name
                .strip_prefix(&self.prefix)
                .and_then(|r| r.strip_suffix(&self.suffix))
                && mid.len() >= self.width
                && let Ok(f) = mid.parse::<i64>()
            {
                out.push(f);
            }
        }
        out.sort_unstable();
        Ok(out)
    }
}

/// Reads one frame file (plain or `.zst`).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    let raw = std::fs::read(path).map_err(|e| Error::from(tress_formats::Error::from(e).in_file(path)))?;
    if path.extension().is_some_and(|e| e == "zst") {
        // The frame's own header bounds the size; a zstd bomb is cut at 4 GiB.
        use std::io::Read;
        let mut out = Vec::new();
        zstd::stream::read::Decoder::new(raw.as_slice())
            .and_then(|d| d.take(4 << 30).read_to_end(&mut out))
            .map_err(|e| Error::Invalid(format!("{}: not a zstd-compressed PLY ({e})", path.display())))?;
        return Ok(out);
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let p = Pattern::parse(Path::new("out/hair.####.ply.zst")).unwrap();
        assert_eq!(p.path(1001), PathBuf::from("out/hair.1001.ply.zst"));
        assert_eq!(p.path(7), PathBuf::from("out/hair.0007.ply.zst"));
        assert!(p.compressed());
        assert!(Pattern::parse(Path::new("hair.ply")).is_none());
        assert!(Pattern::parse(Path::new("a#b#.ply")).is_none());
    }
}
