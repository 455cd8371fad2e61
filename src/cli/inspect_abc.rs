//! `tress inspect FILE.abc`: the object tree, schemas, sample counts and time samplings.

use std::path::Path;

use serde_json::json;

use super::report::{num, thousands};
use crate::error::Result;
use tress_formats::InFile;
use tress_formats::alembic::abc::TimeSamplingKind;
use tress_formats::alembic::cache::AbcReader;

fn sampling_text(kind: &TimeSamplingKind) -> String {
    match kind {
        TimeSamplingKind::Uniform {
            time_per_cycle,
            start,
        } => {
            let fps = 1.0 / time_per_cycle;
            format!(
                "uniform {} fps, first sample at {} s (frame {})",
                num(fps),
                num(*start),
                num(start * fps)
            )
        }
        TimeSamplingKind::Cyclic {
            time_per_cycle,
            times,
        } => {
            format!(
                "cyclic, {} samples per {} s cycle",
                times.len(),
                num(*time_per_cycle)
            )
        }
        TimeSamplingKind::Acyclic { times } => format!("acyclic, {} sample times", times.len()),
    }
}

pub fn run(path: &Path, json_out: bool, verify: bool) -> Result<()> {
    let r = AbcReader::open(path)?;
    let ar = &r.archive;
    let objects = r.summary()?;
    let verified = if verify {
        Some(ar.verify().in_file(path)?)
    } else {
        None
    };
    let (strands, points) = objects
        .iter()
        .filter(|o| o.schema == "Curves")
        .filter_map(|o| o.counts)
        .fold((0usize, 0usize), |(s, p), (a, b)| (s + a, p + b));
    if json_out {
        let doc = json!({
            "file": path.display().to_string(),
            "format": "Alembic (Ogawa)",
            "application": ar.application(),
            // ISO 8601 (the writer's local time: Alembic records no zone); the archive's own
            // ctime-style text beside it.
            "date_written": ar.metadata.get("_ai_DateWritten").map(|d| iso_date(d).unwrap_or_else(|| d.to_string())),
            "date_written_ctime": ar.metadata.get("_ai_DateWritten"),
            "library_version": ar.library_version,
            "fps": r.fps(),
            "time_samplings": ar.time_samplings.iter().enumerate().map(|(i, t)| {
                let (kind, tpc, times) = match &t.kind {
                    TimeSamplingKind::Uniform { time_per_cycle, start } => ("uniform", Some(*time_per_cycle), vec![*start]),
                    TimeSamplingKind::Cyclic { time_per_cycle, times } => ("cyclic", Some(*time_per_cycle), times.clone()),
                    TimeSamplingKind::Acyclic { times } => ("acyclic", None, times.clone()),
                };
                json!({"index": i, "kind": kind, "time_per_cycle": tpc, "fps": t.fps(), "stored_times": times, "max_samples": t.max_samples})
            }).collect::<Vec<_>>(),
            "objects": objects.iter().map(|o| {
                let mut v = json!({"path": o.path, "schema": o.schema, "samples": o.samples, "time_sampling": o.time_sampling});
                if let Some((a, b)) = o.counts {
                    let key = if o.schema == "Curves" { "curves" } else { "faces" };
                    v[key] = json!(a);
                    v["points"] = json!(b);
                }
                v
            }).collect::<Vec<_>>(),
            "strand_count": strands,
            "point_count": points,
        });
        let mut doc = doc;
        if let Some(v) = &verified {
            doc["verified"] = json!({"properties": v.properties, "samples": v.samples, "bytes": v.bytes});
        }
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
        return Ok(());
    }
    println!("{}  (Alembic Ogawa)", path.display());
    if let Some(app) = ar.application() {
        println!("  application        {app}");
    }
    if let Some(d) = ar.metadata.get("_ai_DateWritten") {
        println!("  written            {d}");
    }
    println!("  library version    {}", ar.library_version);
    println!("  time samplings");
    for (i, t) in ar.time_samplings.iter().enumerate() {
        println!(
            "    [{i}] {}, max {} samples",
            sampling_text(&t.kind),
            t.max_samples
        );
    }
    println!("  objects");
    for o in &objects {
        let depth = o.path.matches('/').count();
        let name = o.path.rsplit('/').next().unwrap_or("");
        let mut line = format!(
            "    {:indent$}{name:<w$} {:<9} {:>5} samples (ts {})",
            "",
            o.schema,
            o.samples,
            o.time_sampling,
            indent = 2 * (depth - 1),
            w = 30usize.saturating_sub(2 * (depth - 1))
        );
        if let Some((a, b)) = o.counts {
            let what = if o.schema == "Curves" { "curves" } else { "faces" };
            line.push_str(&format!(
                "  {} {what}, {} points",
                thousands(a as u64),
                thousands(b as u64)
            ));
        }
        println!("{line}");
    }
    if strands > 0 {
        println!(
            "  strands            {} ({} points) at the first sample",
            thousands(strands as u64),
            thousands(points as u64)
        );
    }
    if let Some(v) = verified {
        println!(
            "  verified           {} samples ({} bytes) of {} properties: every digest matches",
            thousands(v.samples as u64),
            thousands(v.bytes),
            thousands(v.properties as u64)
        );
    }
    Ok(())
}

/// Alembic's `_ai_DateWritten` ("Thu Jan  1 00:00:00 1970", C's `ctime`) as ISO 8601
/// ("1970-01-01T00:00:00"); `None` when it is not in that form.
pub fn iso_date(ctime: &str) -> Option<String> {
    let parts: Vec<&str> = ctime.split_whitespace().collect();
    let [_, month, day, time, year] = parts.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = MONTHS.iter().position(|x| x == month)? + 1;
    let d: u32 = day.parse().ok()?;
    let y: i32 = year.parse().ok()?;
    let hms: Vec<u32> = time.split(':').map(|x| x.parse().ok()).collect::<Option<_>>()?;
    let [h, mi, s] = hms.as_slice() else { return None };
    if !(1..=31).contains(&d) || *h > 23 || *mi > 59 || *s > 60 {
        return None;
    }
    Some(format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}"))
}

#[cfg(test)]
mod tests {
    /// The form C's `ctime` and the official Alembic library write, read back as ISO 8601.
    #[test]
    fn alembic_dates_read_as_iso_8601() {
        assert_eq!(
            super::iso_date("Thu Jan  1 00:00:00 1970").as_deref(),
            Some("1970-01-01T00:00:00")
        );
        assert_eq!(
            super::iso_date("Sat Nov 28 17:44:07 2026").as_deref(),
            Some("2026-11-28T17:44:07")
        );
        assert_eq!(super::iso_date("yesterday"), None);
        assert_eq!(super::iso_date("Thu Foo  1 00:00:00 1970"), None);
    }
}
