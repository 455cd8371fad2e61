//! Progress of the long stages. On a terminal, a bar; otherwise (a farm task's log) a plain line
//! every 10 frames or 10 seconds, whichever comes first, with seconds per frame and the time
//! left, so a killed or slow task shows where it was.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

pub struct FrameProgress {
    label: String,
    total: u64,
    done: u64,
    started: Instant,
    last_line: Instant,
    bar: Option<ProgressBar>,
    lines: bool,
    unit: &'static str,
}

static OPENJD: AtomicBool = AtomicBool::new(false);

/// Also report progress as Open Job Description messages on the log's lines
/// (`openjd_progress: P` with P in 0–100, `openjd_status: …`), which a farm worker shows per
/// task; the farm templates turn it on (`tress run --openjd-progress`).
pub fn report_to_openjd(on: bool) {
    OPENJD.store(on, Ordering::Relaxed);
}

/// Frames between progress lines in a log.
const EVERY_FRAMES: u64 = 10;
const EVERY: Duration = Duration::from_secs(10);

impl FrameProgress {
    /// Progress over `total` frames of `label` (e.g. "simulate"); silent when `quiet`.
    pub fn new(label: &str, total: u64, quiet: bool) -> FrameProgress {
        let tty = std::io::stderr().is_terminal();
        let bar = (!quiet && tty).then(|| {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template(
                    "           {spinner} frame {msg} [{bar:30}] {pos}/{len} {per_sec} ETA {eta}",
                )
                .expect("template")
                .progress_chars("=> "),
            );
            b
        });
        FrameProgress {
            label: label.to_string(),
            total,
            done: 0,
            started: Instant::now(),
            last_line: Instant::now(),
            bar,
            lines: !quiet && !tty,
            unit: "frame",
        }
    }

    /// Progress over `total` training steps.
    pub fn steps(label: &str, total: u64, quiet: bool) -> FrameProgress {
        FrameProgress {
            unit: "step",
            ..FrameProgress::new(label, total, quiet)
        }
    }

    /// One more frame done (frame number `frame`).
    pub fn tick(&mut self, frame: impl std::fmt::Display) {
        self.done += 1;
        if let Some(b) = &self.bar {
            b.set_message(frame.to_string());
            b.inc(1);
        }
        if self.lines
            && (self.done.is_multiple_of(EVERY_FRAMES)
                || self.done == self.total
                || self.last_line.elapsed() >= EVERY)
        {
            self.last_line = Instant::now();
            let per = self.started.elapsed().as_secs_f64() / self.done as f64;
            let left = per * self.total.saturating_sub(self.done) as f64;
            eprintln!(
                "           {} {u} {frame} ({}/{}) {per:.2} s/{u}, ETA {}",
                self.label,
                self.done,
                self.total,
                clock(left),
                u = self.unit
            );
            if OPENJD.load(Ordering::Relaxed) {
                eprintln!(
                    "openjd_progress: {:.1}",
                    100.0 * self.done as f64 / self.total.max(1) as f64
                );
                eprintln!(
                    "openjd_status: {} {u} {frame} ({}/{}), ETA {}",
                    self.label,
                    self.done,
                    self.total,
                    clock(left),
                    u = self.unit
                );
            }
        }
    }

    pub fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// Seconds as `1h02m03s`, `2m03s` or `3s`.
pub fn clock(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec:02}s"),
        (h, m, sec) => format!("{h}h{m:02}m{sec:02}s"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn clock_reads_like_a_clock() {
        assert_eq!(super::clock(3.4), "3s");
        assert_eq!(super::clock(123.0), "2m03s");
        assert_eq!(super::clock(3723.0), "1h02m03s");
    }
}
