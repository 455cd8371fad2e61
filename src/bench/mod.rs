//! Benchmarks behind `tress bench NAME`: figures for release notes and issue reports, never
//! timed assertions in tests. Each reports the best of several runs next to a baseline measured
//! in the same run.

pub mod alembic;
pub mod drape;
pub mod formats;
pub mod hairmesh;
pub mod neural;
pub mod render;
pub mod sdf;
pub mod sim;
pub mod tcache;
pub mod upsample;

use std::time::{Duration, Instant};

/// Best wall time of `runs` calls of `f` (after one warm-up call).
pub fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    std::hint::black_box(f());
    (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .min()
        .expect("at least one run")
}

/// Megabytes (10⁶ bytes) per second.
pub fn mb_per_s(bytes: usize, t: Duration) -> f64 {
    bytes as f64 / 1e6 / t.as_secs_f64().max(1e-12)
}
