//! Shared helpers of the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// What a test that needs data or a reference tool says when it is missing. Such tests are
/// `#[ignore]`d (plain `cargo test` lists them as ignored); `.ci/run` and the README's command
/// run them with `--include-ignored`, where a missing input is a failure, never a silent pass.
fn missing(test: &str, what: &str) -> ! {
    panic!("{test} needs {what}; it is an ignored test, run where that is available (.ci/run sets it up)")
}

/// The shared data folder from `TRESS_DATA` (a failure when unset).
pub fn data_dir(test: &str) -> Option<PathBuf> {
    match std::env::var_os("TRESS_DATA") {
        Some(d) if Path::new(&d).is_dir() => Some(PathBuf::from(d)),
        _ => missing(test, "TRESS_DATA set to the shared data folder"),
    }
}

/// The shared tools folder (`../shared/tools`, beside the data).
pub fn tools_dir(test: &str) -> PathBuf {
    let t = data_dir(test).expect("data").join("../tools");
    if !t.is_dir() {
        missing(test, "the shared tools folder beside TRESS_DATA");
    }
    t
}

/// The reference Python (official Alembic library, usd-core, plyfile) from
/// `TRESS_REFCHECK_PYTHON` (a failure when unset).
pub fn ref_python(test: &str) -> PathBuf {
    match std::env::var_os("TRESS_REFCHECK_PYTHON") {
        Some(p) if Path::new(&p).exists() => PathBuf::from(p),
        _ => missing(
            test,
            "TRESS_REFCHECK_PYTHON (a python with alembic3d and usd-core)",
        ),
    }
}

/// An executable named by an environment variable (a failure when unset).
pub fn tool_from_env(test: &str, var: &str, what: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(p) if Path::new(&p).exists() => PathBuf::from(p),
        _ => missing(test, &format!("{var} ({what})")),
    }
}

/// A fresh, empty temporary folder for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tress-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// Runs the `tress` binary.
pub fn tress(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tress"))
        .args(args)
        .output()
        .expect("run tress")
}

/// Runs the `tress` binary and fails the test (with its standard error) unless it succeeds.
pub fn tress_ok(args: &[&str]) -> Output {
    let o = tress(args);
    assert!(o.status.success(), "tress {args:?}: {}", stderr(&o));
    o
}

/// `tress train drape --config CONFIG -o MODEL --json`: the training summary it prints.
pub fn train_drape(config: &Path, model: &Path) -> serde_json::Value {
    let o = tress_ok(&[
        "train",
        "drape",
        "--config",
        config.to_str().unwrap(),
        "-o",
        model.to_str().unwrap(),
        "--json",
    ]);
    serde_json::from_slice(&o.stdout).expect("training summary")
}

/// A groom file, as tress reads it.
pub fn read_groom(path: &Path) -> tress::groom::Groom {
    tress::groom::read_groom(path, &Default::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .groom
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Deterministic pseudo-random numbers for corrupting files (SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Damaged copies of a good file: truncations, flipped bytes, overwritten words, garbage.
pub fn corruptions(good: &[u8], seed: u64) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let n = good.len();
    for len in [
        0,
        1,
        4,
        16,
        127,
        n / 3,
        n / 2,
        n.saturating_sub(13),
        n.saturating_sub(1),
    ] {
        if len < n {
            out.push((format!("truncated to {len}"), good[..len].to_vec()));
        }
    }
    let mut rng = Rng(seed);
    for i in 0..40 {
        let mut bad = good.to_vec();
        for _ in 0..1 + i % 3 {
            let at = rng.below(n.clamp(1, 512));
            bad[at] ^= 1 << rng.below(8);
        }
        out.push((format!("header flip {i}"), bad));
    }
    for i in 0..20 {
        let mut bad = good.to_vec();
        let at = rng.below(n.saturating_sub(4).max(1));
        let word = [0xffu32, 0x7fff_ffff, 0xffff_ffff, 0x8000_0000][i % 4];
        bad[at..at + 4].copy_from_slice(&word.to_le_bytes());
        out.push((format!("word {word:#x} at {at}"), bad));
    }
    let garbage: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
    out.push(("garbage".into(), garbage));
    out
}

/// The string `key` of each object in the JSON array `list` (a report's stage names, a file's
/// primvar names…); a missing array or key fails the test.
pub fn strings<'a>(list: &'a serde_json::Value, key: &str) -> Vec<&'a str> {
    let items = list.as_array().unwrap_or_else(|| panic!("not an array: {list}"));
    items
        .iter()
        .map(|o| {
            o[key]
                .as_str()
                .unwrap_or_else(|| panic!("no string {key} in {o}"))
        })
        .collect()
}

/// A neural interpolator config small enough to train in a test: an 8² grid of 8-particle
/// strands, guides every 2 cells, 8 guide channels, the data term alone, batches of 3 frames.
pub fn tiny_interp_config(
    steps: usize,
    blend: tress::neural::interp::carry::Blend,
) -> tress::neural::interp::InterpConfig {
    use tress::neural::interp::train::{NetOptions, TrainOptions};
    tress::neural::interp::InterpConfig {
        grid: tress::neural::grid::GridSpec {
            n: 8,
            stride: 2,
            points: 8,
        },
        net: NetOptions {
            guide_channels: 8,
            slope: 0.2,
            blend,
            offset_share: 1.0,
            learn_share: false,
        },
        train: TrainOptions {
            steps,
            batch: 3,
            lr: 3e-3,
            seed: 7,
            snap_ramp: 0.0,
            validate_every: 5,
            checkpoint_every: 4,
            validation: 0.0,
            max_minutes: None,
        },
        loss: tress::neural::interp::loss::LossWeights::data_only(),
        displace: None,
    }
}
