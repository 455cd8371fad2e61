//! The main job end to end through `tress run`: outputs, cached re-runs with bit-identical
//! files, determinism across thread counts, chunked upsampling, stages re-run on changed
//! settings, `tress eval` against known errors, job-file mistakes, and (with `openjd` on
//! `TRESS_OPENJD`) the exported Open Job Description template giving the same outputs.

#[path = "../common/mod.rs"]
mod common;
mod crash;
mod farm;
mod golden;
mod jobs;
mod methods;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// A small job (150 strands, 8 frames) in `dir`, writing to `dir/<out>`.
fn write_job(dir: &Path, out: &str, extra: &str) -> PathBuf {
    let text = format!(
        r#"name = "tiny"
output = "{out}"
frames = "1-8"
[groom]
preset = "wavy"
strands = 150
points = 12
[simulate]
preroll_frames = 4
[guides]
count = 20
[outputs]
abc = true
tcache = true
[preview]
every = 4
size = "96x96"
compare_frames = 2
{extra}"#
    );
    let path = dir.join(format!("{out}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn run(args: &[&str]) -> Value {
    let o = common::tress(args);
    assert!(o.status.success(), "tress {args:?}: {}", common::stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap_or(Value::Null)
}

/// `tress upsample ARGS` on the guides and groom of the job output `out`, writing `dest`.
fn upsample_job_guides(out: &Path, args: &[&str], dest: &Path) {
    let (guides, groom) = (out.join("guides.tcache"), out.join("groom.tcache"));
    let mut all = vec!["upsample"];
    all.extend_from_slice(args);
    all.extend([
        "--guides",
        guides.to_str().unwrap(),
        "--groom",
        groom.to_str().unwrap(),
        "-o",
        dest.to_str().unwrap(),
    ]);
    let o = common::tress(&all);
    assert!(o.status.success(), "{}", common::stderr(&o));
}

fn statuses(report: &Value) -> BTreeMap<String, String> {
    report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["stage"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// SHA-256 of every file under `dir` except the report (which records this run's statuses),
/// the upsampling timings (`parts/times.*.json`, wall-clock measurements) and the stage records.
fn hashes(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                if !rel.starts_with(".tress") {
                    stack.push(p);
                }
            } else if !rel.starts_with("report.") && !rel.contains("times.") {
                out.insert(rel, tress::pipeline::engine::file_sha256(&p).unwrap());
            }
        }
    }
    out
}

/// The strands (each a list of points) of frame `i` of a cache.
fn cache_strands(path: &Path, i: usize) -> Vec<Vec<[f32; 3]>> {
    let mut r = tress_formats::tcache::TcacheReader::open(path).unwrap();
    let p = r.frame(i).unwrap();
    let mut out = Vec::new();
    let mut at = 0;
    for &c in &r.header.rest.counts {
        out.push(p[at..at + c as usize].to_vec());
        at += c as usize;
    }
    out
}

fn strand_length(s: &[[f32; 3]]) -> f64 {
    s.windows(2)
        .map(|w| {
            let d = [w[1][0] - w[0][0], w[1][1] - w[0][1], w[1][2] - w[0][2]];
            ((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) as f64).sqrt()
        })
        .sum()
}
