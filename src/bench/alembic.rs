//! `tress bench abc`: Alembic write and read throughput.
//!
//! Reads every curves sample of an input archive (e.g. one written by the official library with
//! `shared/tools/make_curves_abc.py`), then writes the same curves and frames back with
//! [`AbcWriter`]; without input it synthesizes a groom of the requested size. MB/s are of the
//! archive's size on disk (write) and of the position data delivered (read).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::groom::{GroomParams, Style, generate};
use tress_formats::alembic::cache::{AbcReader, AbcWriter, CurvesSpec};
use tress_formats::alembic::schema::curves::CurvesReader;
use tress_formats::{Attr, StrandAttrs, Strands};

#[derive(Debug, Serialize)]
pub struct AbcSpeed {
    pub strands: usize,
    pub points: usize,
    pub frames: usize,
    pub file_bytes: u64,
    pub write_s: f64,
    pub write_mb_per_s: f64,
    pub read_s: f64,
    /// Position bytes read per second (all samples of P).
    pub read_mb_per_s: f64,
    pub input_read_s: Option<f64>,
    pub input_read_mb_per_s: Option<f64>,
}

/// Every position sample of an archive's first curves, and how long reading them took.
struct ReadBack {
    frames: Vec<Vec<[f32; 3]>>,
    counts: Vec<u32>,
    seconds: f64,
    bytes: usize,
}

fn read_all(path: &Path) -> Result<ReadBack> {
    let r = AbcReader::open(path)?;
    let curves = r.curves_objects()?;
    let o = curves
        .first()
        .ok_or_else(|| Error::Invalid(format!("{}: no curves", path.display())))?;
    let c = CurvesReader::open(&r.archive, o).map_err(Error::from)?;
    let counts = c.counts(&r.archive, 0)?;
    let t = Instant::now();
    let mut frames = Vec::with_capacity(c.num_samples());
    let mut bytes = 0usize;
    for i in 0..c.num_samples() {
        let mut p = Vec::new();
        c.positions_into(&r.archive, i, &mut p)?;
        bytes += p.len() * 12;
        frames.push(p);
    }
    Ok(ReadBack {
        frames,
        counts,
        seconds: t.elapsed().as_secs_f64(),
        bytes,
    })
}

/// Runs the benchmark; `out` is a scratch folder.
pub fn run(
    input: Option<&Path>,
    strands: usize,
    points: usize,
    frames: usize,
    keep: Option<&Path>,
    runs: usize,
) -> Result<AbcSpeed> {
    let (positions, counts, input_time) = match input {
        Some(p) => {
            let r = read_all(p)?;
            (r.frames, r.counts, Some((r.seconds, r.bytes)))
        }
        None => {
            let g = generate(&GroomParams {
                strands,
                points,
                ..GroomParams::for_style(Style::Wavy)
            })?;
            let f = (0..frames)
                .map(|k| {
                    g.points()
                        .iter()
                        .map(|p| (*p + glam::Vec3::X * 0.1 * k as f32).to_array())
                        .collect()
                })
                .collect();
            (f, g.counts().to_vec(), None)
        }
    };
    // The same content the official library's benchmark writes: positions, counts, one width.
    let strands = Strands::new(positions[0].clone(), counts.clone(), StrandAttrs::default())?;
    let path: PathBuf = match keep {
        Some(p) => p.to_path_buf(),
        None => std::env::temp_dir().join(format!("tress-bench-{}.abc", std::process::id())),
    };
    // Best of `runs` writes and reads (each write replaces the file).
    let mut write_s = f64::INFINITY;
    let mut read_s = f64::INFINITY;
    let mut read_bytes = 0;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let mut w = AbcWriter::new(&path, 24.0, 1.0)?;
        let mut spec = CurvesSpec::from_strands("groom", "hair", &strands);
        spec.velocities = false;
        spec.width = Some(Attr::Constant(0.01));
        w.add_curves(&spec)?;
        for f in &positions {
            w.write_frame(&[f])?;
        }
        w.finish()?;
        write_s = write_s.min(t.elapsed().as_secs_f64());
        let r = read_all(&path)?;
        read_s = read_s.min(r.seconds);
        read_bytes = r.bytes;
    }
    let file_bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    if keep.is_none() {
        let _ = std::fs::remove_file(&path);
    }
    Ok(AbcSpeed {
        strands: counts.len(),
        points: positions[0].len(),
        frames: positions.len(),
        file_bytes,
        write_s,
        write_mb_per_s: file_bytes as f64 / 1e6 / write_s,
        read_s,
        read_mb_per_s: read_bytes as f64 / 1e6 / read_s,
        input_read_s: input_time.map(|(t, _)| t),
        input_read_mb_per_s: input_time.map(|(t, b)| b as f64 / 1e6 / t),
    })
}
