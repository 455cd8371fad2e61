//! `tress bench tcache`: compression ratio and encode / decode speed of `.tcache` (lossless, and
//! lossy at 0.01 mm and 0.1 mm) next to plain zstd on the raw float32 frames, on a strand cache
//! (any cache tress reads; head poses are used when the cache stores them).

use std::path::Path;
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;
use tress_formats::tcache::{Codec, HeadPose, TcacheHeader, TcacheReader, TcacheWriter};

use crate::cache::open_source;
use crate::error::{Error, Result};

#[derive(Debug, Serialize)]
pub struct CodecSpeed {
    pub codec: String,
    pub bytes: u64,
    /// Raw float32 size / compressed size.
    pub ratio: f64,
    /// Raw megabytes per second.
    pub encode_mb_per_s: f64,
    pub decode_mb_per_s: f64,
    /// Largest vertex error measured after decoding (scene units).
    pub max_error: f64,
}

#[derive(Debug, Serialize)]
pub struct TcacheBench {
    pub input: String,
    pub strands: usize,
    pub points: usize,
    pub frames: usize,
    pub raw_bytes: u64,
    pub codecs: Vec<CodecSpeed>,
}

fn max_error(a: &[[f32; 3]], b: &[[f32; 3]]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(p, q)| ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt() as f64)
        .fold(0.0, f64::max)
}

pub fn run(input: &Path, scratch: &Path) -> Result<TcacheBench> {
    let mut src = open_source(input, None, 24.0)?;
    let info = src.info().clone();
    let mut frames = Vec::with_capacity(info.frames.len());
    let mut poses = Vec::with_capacity(info.frames.len());
    for i in 0..info.frames.len() {
        frames.push(src.read(i)?);
        poses.push(src.pose(i)?);
    }
    if frames.is_empty() {
        return Err(Error::Invalid(format!(
            "{}: the cache has no frames",
            input.display()
        )));
    }
    let raw_bytes = (frames.len() * frames[0].len() * 12) as u64;
    let mb = raw_bytes as f64 / 1e6;
    let mut codecs = Vec::new();

    // Baseline: zstd (level 3) on each frame's raw little-endian floats, frames in parallel.
    let t = Instant::now();
    let packed: Vec<Vec<u8>> = frames
        .par_iter()
        .map(|f| zstd::bulk::compress(bytemuck::cast_slice(f), 3).expect("in-memory compression"))
        .collect();
    let enc = t.elapsed().as_secs_f64();
    let mut dec = 0.0;
    for p in &packed {
        let t = Instant::now();
        let back = zstd::bulk::decompress(p, frames[0].len() * 12).expect("ours");
        dec += t.elapsed().as_secs_f64();
        std::hint::black_box(back);
    }
    let bytes: u64 = packed.iter().map(|p| p.len() as u64).sum();
    codecs.push(CodecSpeed {
        codec: "zstd on raw float32".into(),
        bytes,
        ratio: raw_bytes as f64 / bytes as f64,
        encode_mb_per_s: mb / enc,
        decode_mb_per_s: mb / dec,
        max_error: 0.0,
    });

    let path = scratch.join(format!("tress-bench-{}.tcache", std::process::id()));
    for (name, codec) in [
        ("tcache lossless", Codec::Lossless),
        ("tcache lossy 0.01 mm", Codec::Lossy { bound: 0.001 }),
        ("tcache lossy 0.1 mm", Codec::Lossy { bound: 0.01 }),
    ] {
        let header = TcacheHeader {
            fps: info.fps,
            codec,
            keyframe_interval: 16,
            rest: info.topology.clone(),
        };
        let t = Instant::now();
        let mut w = TcacheWriter::create(&path, header, 3)?;
        for (i, f) in frames.iter().enumerate() {
            let pose: Option<HeadPose> = poses[i];
            w.write_frame(info.frames[i], f, pose)?;
        }
        w.finish()?;
        let enc = t.elapsed().as_secs_f64();
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        // Decode frame by frame as a reader would (each frame dropped after the check, which
        // is not timed).
        let mut worst: f64 = 0.0;
        let t = Instant::now();
        let mut r = TcacheReader::open(&path)?;
        let mut dec = t.elapsed().as_secs_f64();
        for (i, f) in frames.iter().enumerate().take(r.len()) {
            let t = Instant::now();
            let d = r.frame(i)?;
            dec += t.elapsed().as_secs_f64();
            worst = worst.max(max_error(&d, f));
        }
        codecs.push(CodecSpeed {
            codec: name.into(),
            bytes,
            ratio: raw_bytes as f64 / bytes as f64,
            encode_mb_per_s: mb / enc,
            decode_mb_per_s: mb / dec,
            max_error: worst,
        });
    }
    let _ = std::fs::remove_file(&path);
    Ok(TcacheBench {
        input: input.display().to_string(),
        strands: info.topology.counts.len(),
        points: info.topology.points.len(),
        frames: frames.len(),
        raw_bytes,
        codecs,
    })
}
