//! Atomic output files: written under a temporary name in the target folder and renamed into
//! place only when complete, so a crash, a kill or an error never leaves a half-written file
//! where a farm job or a DCC expects a finished one.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{InFile, Result};

/// A file being written; [`AtomicFile::commit`] renames it into place, dropping it deletes it.
pub struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    pub fn create(target: impl AsRef<Path>) -> Result<Self> {
        let target = target.as_ref().to_path_buf();
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "output".into());
        let temp = target.with_file_name(format!(".{name}.{}.partial", std::process::id()));
        let file = File::create(&temp).in_file(&temp)?;
        Ok(AtomicFile {
            target,
            temp,
            writer: Some(BufWriter::with_capacity(1 << 20, file)),
        })
    }

    pub fn target(&self) -> &Path {
        &self.target
    }

    pub fn writer(&mut self) -> &mut BufWriter<File> {
        self.writer.as_mut().expect("writer is present until commit")
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(mut self) -> Result<()> {
        let writer = self.writer.take().expect("commit is called once");
        let file = writer
            .into_inner()
            .map_err(|e| e.into_error())
            .in_file(&self.temp)?;
        file.sync_all().in_file(&self.temp)?;
        drop(file);
        std::fs::rename(&self.temp, &self.target).in_file(&self.target)?;
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writer().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.writer().flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.writer().seek(pos)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Writes `bytes` to `path` atomically.
pub fn write(path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
    let path = path.as_ref();
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes).in_file(path)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_files_leave_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("tress-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("out.bin");
        {
            let mut f = AtomicFile::create(&target).unwrap();
            f.write_all(b"half").unwrap();
        }
        assert!(!target.exists());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        write(&target, b"whole").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"whole");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
