//! `tress bench formats`: read speed of every groom reader on the real files, from memory (the
//! disk is not measured), against a plain `memcpy` of the same bytes as the baseline.

use std::path::Path;

use serde::Serialize;

use super::{best_of, mb_per_s};
use crate::error::{Error, Result};
use tress_formats::{hair, obj, ply, tfx, usc_data};

#[derive(Debug, Serialize)]
pub struct ReaderSpeed {
    pub file: String,
    pub reader: &'static str,
    pub bytes: usize,
    pub best_ms: f64,
    pub mb_per_s: f64,
    /// Reader speed as a fraction of copying the bytes.
    pub vs_memcpy: f64,
}

type Parse = fn(&[u8]) -> bool;

const CASES: &[(&str, &str, Parse)] = &[
    ("grooms/straight.hair", ".hair", |d| hair::parse(d).is_ok()),
    ("grooms/harolongo.data", ".data", |d| usc_data::parse(d).is_ok()),
    ("grooms/strands1900_points.ply", "PLY (binary)", |d| {
        ply::parse(
            d,
            &ply::ReadOptions {
                points_per_strand: Some(100),
            },
        )
        .is_ok()
    }),
    ("grooms/tressfx_ponytail/side.tfx", "TressFX 3", |d| {
        tfx::parse(d).is_ok()
    }),
    ("grooms/sintel_hair.tfx", "TressFX 4", |d| tfx::parse(d).is_ok()),
    ("heads/usc_head_model.obj", "OBJ", |d| obj::parse(d).is_ok()),
    ("heads/sintel/sintel.obj", "OBJ", |d| obj::parse(d).is_ok()),
];

/// Measures every reader on the files of the shared data folder `data`.
pub fn run(data: &Path, runs: usize) -> Result<Vec<ReaderSpeed>> {
    let mut out = Vec::new();
    for &(rel, reader, parse) in CASES {
        let path = data.join(rel);
        let bytes = std::fs::read(&path).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
        if !parse(&bytes) {
            return Err(Error::Runtime(format!("{}: the reader failed", path.display())));
        }
        let t = best_of(runs, || parse(&bytes));
        let copy = best_of(runs, || bytes.clone());
        out.push(ReaderSpeed {
            file: rel.to_string(),
            reader,
            bytes: bytes.len(),
            best_ms: t.as_secs_f64() * 1e3,
            mb_per_s: mb_per_s(bytes.len(), t),
            vs_memcpy: copy.as_secs_f64() / t.as_secs_f64(),
        });
    }
    // The ASCII PLY path, on the binary file re-encoded as text.
    let path = data.join("grooms/strands1900_points.ply");
    let bytes = std::fs::read(&path).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
    let opts = ply::ReadOptions {
        points_per_strand: Some(100),
    };
    let strands = ply::parse(&bytes, &opts)
        .map_err(|e| Error::Runtime(e.to_string()))?
        .strands;
    let text = ascii_ply(&strands);
    let t = best_of(runs, || ply::parse(&text, &opts).is_ok());
    let copy = best_of(runs, || text.clone());
    out.push(ReaderSpeed {
        file: "strands1900_points.ply as ASCII".into(),
        reader: "PLY (ASCII)",
        bytes: text.len(),
        best_ms: t.as_secs_f64() * 1e3,
        mb_per_s: mb_per_s(text.len(), t),
        vs_memcpy: copy.as_secs_f64() / t.as_secs_f64(),
    });
    Ok(out)
}

fn ascii_ply(s: &tress_formats::Strands) -> Vec<u8> {
    use std::fmt::Write;
    let mut t = format!(
        "ply\nformat ascii 1.0\nelement vertex {}\nproperty float x\nproperty float y\nproperty float z\nelement strand {}\nproperty int vertex_count\nend_header\n",
        s.points.len(),
        s.counts.len()
    );
    for p in &s.points {
        let _ = writeln!(t, "{} {} {}", p[0], p[1], p[2]);
    }
    for c in &s.counts {
        let _ = writeln!(t, "{c}");
    }
    t.into_bytes()
}
