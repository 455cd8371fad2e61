//! Stage locks: two runs of the same job (a farm retry, a double submission, an artist
//! re-launching) never run the same stage (or chunk) at once. A lock is a file
//! `.tress/<stage>[.i-of-n].lock` created exclusively (`O_EXCL`, atomic on local and NFSv3+ file
//! systems), naming its holder's host and process; the holder touches it every few seconds.
//! A lock is stale when its holder is gone: on the same host, its process no longer exists (as
//! the atomic writer decides for temporaries); on another host, it has not been touched for
//! [`STALE_AFTER`]. A run finding the lock held waits for it (or fails at once with
//! `--no-wait`), then re-reads the stage's record: the stage is usually done by then.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use super::Chunk;
use crate::error::{Error, Result};

/// How often a holder touches its lock.
const HEARTBEAT: Duration = Duration::from_secs(5);
/// How long a lock of another host may go untouched before it counts as stale.
pub const STALE_AFTER: Duration = Duration::from_secs(60);
/// How often a waiting run looks again.
const POLL: Duration = Duration::from_millis(100);

/// A held stage lock; dropping it releases it.
pub struct StageLock {
    path: PathBuf,
    owner: String,
    stop: Arc<AtomicBool>,
    beat: Option<std::thread::JoinHandle<()>>,
}

/// Where the lock of a stage (or chunk) lives.
pub fn lock_path(out: &Path, stage: &str, chunk: Option<Chunk>) -> PathBuf {
    let name = match chunk {
        Some((i, n)) => format!("{stage}.{i}-of-{n}.lock"),
        None => format!("{stage}.lock"),
    };
    out.join(".tress").join(name)
}

/// The holder's line: `host pid`.
fn owner() -> String {
    format!("{} {}", tress_formats::atomic::host(), std::process::id())
}

/// Whether the lock file at `path`, holding `text`, is stale.
fn stale(path: &Path, text: &str) -> bool {
    let mut words = text.split_whitespace();
    let (Some(host), Some(pid)) = (words.next(), words.next().and_then(|p| p.parse::<u32>().ok())) else {
        // Empty or torn: a holder killed between creating and writing it, or a stranger's
        // file. Stale once old enough for any holder to have written its line.
        return age(path).is_some_and(|a| a > Duration::from_secs(2));
    };
    if host == tress_formats::atomic::host() {
        pid != std::process::id() && !tress_formats::atomic::alive(pid)
    } else {
        age(path).is_some_and(|a| a > STALE_AFTER)
    }
}

/// Removes the stale lock at `path` only if it still holds `text`: another run may have taken it
/// over meanwhile.
fn remove_if_unchanged(path: &Path, text: &str) {
    if std::fs::read_to_string(path).is_ok_and(|t| t == text) {
        let _ = std::fs::remove_file(path);
    }
}

fn age(path: &Path) -> Option<Duration> {
    let m = std::fs::metadata(path).ok()?.modified().ok()?;
    SystemTime::now().duration_since(m).ok()
}

/// Removes every stage lock in `out` whose holder is gone (a run killed after it finished a
/// stage, before it let go), so a finished job keeps no lock files.
pub fn clear_stale(out: &Path) {
    for e in std::fs::read_dir(out.join(".tress"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let path = e.path();
        if path.extension().is_some_and(|x| x == "lock")
            && let Ok(text) = std::fs::read_to_string(&path)
            && stale(&path, &text)
        {
            remove_if_unchanged(&path, &text);
        }
    }
}

impl StageLock {
    /// Takes the lock of `stage` (`chunk`) in `out`, waiting while another live run holds it
    /// (telling `waiting` once, with the holder), or failing at once without `wait`.
    pub fn acquire(
        out: &Path,
        stage: &str,
        chunk: Option<Chunk>,
        wait: bool,
        waiting: &mut dyn FnMut(&str),
    ) -> Result<StageLock> {
        let path = lock_path(out, stage, chunk);
        std::fs::create_dir_all(path.parent().expect("has a parent")).map_err(|e| Error::Write {
            path: path.clone(),
            source: e,
        })?;
        let me = owner();
        let mut told = false;
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    f.write_all(format!("{me}\n").as_bytes())
                        .and_then(|_| f.sync_all())
                        .map_err(|e| Error::Write {
                            path: path.clone(),
                            source: e,
                        })?;
                    return Ok(StageLock::hold(path, me));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    if stale(&path, &text) {
                        remove_if_unchanged(&path, &text);
                        continue;
                    }
                    let holder = text.trim();
                    if !wait {
                        return Err(Error::Runtime(format!(
                            "{}: stage {stage} is being run by another run ({holder}); without --no-wait this run would wait for it",
                            path.display()
                        )));
                    }
                    if !told {
                        waiting(holder);
                        told = true;
                    }
                    std::thread::sleep(POLL);
                }
                Err(e) => return Err(Error::Write { path, source: e }),
            }
        }
    }

    fn hold(path: PathBuf, owner: String) -> StageLock {
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (path.clone(), stop.clone());
        // The heartbeat: touch the lock so runs on other hosts see it alive.
        let beat = std::thread::Builder::new()
            .name("tress-lock".into())
            .spawn(move || {
                let mut since = std::time::Instant::now();
                while !s.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    if since.elapsed() >= HEARTBEAT {
                        if let Ok(f) = std::fs::OpenOptions::new().append(true).open(&p) {
                            let _ = f.set_modified(SystemTime::now());
                        }
                        since = std::time::Instant::now();
                    }
                }
            })
            .ok();
        StageLock {
            path,
            owner,
            stop,
            beat,
        }
    }
}

impl Drop for StageLock {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(b) = self.beat.take() {
            let _ = b.join();
        }
        // Only our own lock: a lock taken over as stale by another run stays theirs.
        if std::fs::read_to_string(&self.path).is_ok_and(|t| t.trim() == self.owner) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tress-lock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_held_lock_excludes_and_a_dead_holders_lock_is_taken_over() {
        let d = dir("held");
        let held = StageLock::acquire(&d, "simulate", None, false, &mut |_| {}).unwrap();
        let e = StageLock::acquire(&d, "simulate", None, false, &mut |_| {})
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("simulate.lock") && e.contains(&owner()), "{e}");
        // Another chunk is another lock.
        let other = StageLock::acquire(&d, "upsample", Some((1, 2)), false, &mut |_| {}).unwrap();
        drop(held);
        drop(other);
        assert!(!lock_path(&d, "simulate", None).exists());
        // A lock left by a process of this host that no longer exists is stale.
        let path = lock_path(&d, "simulate", None);
        std::fs::write(
            &path,
            format!("{} {}\n", tress_formats::atomic::host(), i32::MAX - 1),
        )
        .unwrap();
        let taken = StageLock::acquire(&d, "simulate", None, false, &mut |_| {}).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().trim(), owner());
        drop(taken);
        // Another host's lock is live while it is touched, stale after STALE_AFTER.
        std::fs::write(&path, "elsewhere 1\n").unwrap();
        assert!(StageLock::acquire(&d, "simulate", None, false, &mut |_| {}).is_err());
        let f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.set_modified(SystemTime::now() - STALE_AFTER - Duration::from_secs(1))
            .unwrap();
        drop(StageLock::acquire(&d, "simulate", None, false, &mut |_| {}).unwrap());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_waiting_run_gets_the_lock_when_the_holder_lets_go() {
        let d = dir("wait");
        let held = StageLock::acquire(&d, "eval", None, true, &mut |_| {}).unwrap();
        let d2 = d.clone();
        let waiter = std::thread::spawn(move || {
            let mut told = Vec::new();
            let l = StageLock::acquire(&d2, "eval", None, true, &mut |h| told.push(h.to_string()));
            (l.is_ok(), told)
        });
        std::thread::sleep(Duration::from_millis(400));
        drop(held);
        let (ok, told) = waiter.join().unwrap();
        assert!(ok);
        assert_eq!(told, vec![owner()]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
