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
        remove_stale(&target, &name);
        // Unique per writer: threads of one process writing the same target (two jobs naming one
        // built-in model) each spool their own file; the last rename wins, whole either way.
        static WRITERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = WRITERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let temp = target.with_file_name(format!(".{name}.{}.{}-{n}.partial", host(), std::process::id()));
        // Readable too: a writer may read back what it spooled (the USD writer's velocities).
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)
            .in_file(&temp)?;
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

/// This machine's name, as it appears in temporary file names.
pub fn host() -> String {
    #[cfg(unix)]
    {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; the name is NUL-terminated on success.
        if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0 {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            let name: String = String::from_utf8_lossy(&buf[..end])
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            if !name.is_empty() {
                return name;
            }
        }
    }
    "host".into()
}

/// Whether process `pid` of this machine is still running (unknown counts as running).
pub fn alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return true;
        };
        // SAFETY: signal 0 only checks that the process exists.
        if unsafe { libc::kill(pid, 0) } == 0 {
            return true;
        }
        std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Removes the temporary files of earlier writers of `target` on this machine that were killed
/// (their process is gone), so a killed run leaves no hidden files behind once it is run again.
/// Files of other machines and of running processes are left alone.
fn remove_stale(target: &Path, name: &str) {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let (prefix, host) = (format!(".{name}."), host());
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(rest) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|f| f.strip_suffix(".partial"))
        else {
            continue;
        };
        let Some((h, pid)) = rest.rsplit_once('.') else {
            continue;
        };
        // `PID-N` (N: the writer's number in its process), or `PID` as older builds wrote.
        let pid = pid.split_once('-').map_or(pid, |(p, _)| p);
        if let Ok(pid) = pid.parse::<u32>()
            && h == host
            && pid != std::process::id()
            && !alive(pid)
        {
            let _ = std::fs::remove_file(e.path());
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
        // A killed writer's file (a process that no longer runs) goes when the target is
        // written again; a running writer's file and another machine's stay.
        let stale = dir.join(format!(".out.bin.{}.{}.partial", host(), i32::MAX - 1));
        let stale_n = dir.join(format!(".out.bin.{}.{}-3.partial", host(), i32::MAX - 1));
        let running = dir.join(format!(".out.bin.{}.1-0.partial", host()));
        let elsewhere = dir.join(format!(".out.bin.other-machine.{}.partial", i32::MAX - 1));
        for f in [&stale, &stale_n, &running, &elsewhere] {
            std::fs::write(f, b"x").unwrap();
        }
        write(&target, b"again").unwrap();
        assert!(!stale.exists() && !stale_n.exists());
        assert!(running.exists() && elsewhere.exists());
        std::fs::remove_file(&running).unwrap();
        std::fs::remove_file(&elsewhere).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"again");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Threads of one process writing the same target at once (two jobs of a batch naming one
    /// built-in model) all succeed, and the target is one of their whole payloads.
    #[test]
    fn threads_writing_one_target_each_write_it_whole() {
        let dir = std::env::temp_dir().join(format!("tress-atomic-threads-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("model.bin");
        let payloads: Vec<Vec<u8>> = (0..8u8).map(|i| vec![i; 1 << 20]).collect();
        std::thread::scope(|s| {
            for p in &payloads {
                let target = &target;
                s.spawn(move || write(target, p).unwrap());
            }
        });
        let got = std::fs::read(&target).unwrap();
        assert!(payloads.contains(&got), "a torn or mixed file");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "temporary files left"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
