//! `tress inspect FILE.tcache`: header, codec, frames, and how far a cut-off cache reads.

use std::path::Path;

use serde_json::json;

use super::report::{num, thousands};
use crate::error::Result;
use tress_formats::tcache::{Codec, TcacheReader};

pub fn run(path: &Path, json_out: bool, verify: bool) -> Result<()> {
    let mut r = TcacheReader::open(path)?;
    let h = &r.header;
    let codec = match h.codec {
        Codec::Lossless => "lossless".to_string(),
        Codec::Lossy { bound } => format!("lossy, error ≤ {bound}"),
    };
    let first = r.frames.first().map(|f| f.frame);
    let last = r.frames.last().map(|f| f.frame);
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let raw = r.frames.len() as u64 * h.rest.points.len() as u64 * 12;
    let stopped = r.scan.as_ref().and_then(|s| s.stopped.clone());
    let strands = h.rest.counts.len();
    let points = h.rest.points.len();
    let attrs: Vec<String> = h
        .rest
        .attrs
        .present()
        .iter()
        .map(|(n, s)| format!("{n} ({s})"))
        .collect();
    let (fps, interval) = (h.fps, h.keyframe_interval);
    // --verify decodes every frame (checksums and predictions).
    if verify {
        for i in 0..r.len() {
            r.frame(i)?;
        }
    }
    if json_out {
        let doc = json!({
            "file": path.display().to_string(),
            "format": "tress .tcache",
            "strand_count": strands,
            "point_count": points,
            "codec": codec,
            "fps": fps,
            "keyframe_interval": interval,
            "frame_count": r.len(),
            "first_frame": first,
            "last_frame": last,
            "file_bytes": bytes,
            "ratio": if bytes > 0 { raw as f64 / bytes as f64 } else { 0.0 },
            "complete": r.scan.is_none(),
            "stopped": stopped,
            "attributes": attrs,
            "verified": verify,
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
        return Ok(());
    }
    println!("{}  (tress .tcache)", path.display());
    println!("  strands            {}", thousands(strands as u64));
    println!("  points             {}", thousands(points as u64));
    println!("  codec              {codec}");
    match (first, last) {
        (Some(a), Some(b)) => println!(
            "  frames             {} ({}-{}) at {} fps",
            r.len(),
            num(a),
            num(b),
            num(fps)
        ),
        _ => println!("  frames             none"),
    }
    println!(
        "  size               {} bytes ({}× smaller than float32)",
        thousands(bytes),
        num(raw as f64 / bytes.max(1) as f64)
    );
    let mut used: Vec<(String, usize, u64)> = Vec::new();
    for i in 0..r.len() {
        let (p, n) = r.frame_stats(i)?;
        let name = format!("{p:?}");
        match used.iter_mut().find(|u| u.0 == name) {
            Some(u) => {
                u.1 += 1;
                u.2 += n;
            }
            None => used.push((name, 1, n)),
        }
    }
    let per_frame = (points * 12) as f64;
    println!(
        "  predictors         {}",
        used.iter()
            .map(|(n, k, b)| format!(
                "{n} {k} ({}× on its frames)",
                num(per_frame * *k as f64 / *b as f64)
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "  attributes         {}",
        if attrs.is_empty() {
            "none".into()
        } else {
            attrs.join(", ")
        }
    );
    if let Some(why) = stopped {
        println!(
            "  incomplete         {why}; the {} frames before it read fine",
            r.len()
        );
    }
    if verify {
        println!("  verified           every frame decodes and matches its checksum");
    }
    Ok(())
}
