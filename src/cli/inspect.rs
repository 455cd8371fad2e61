//! `tress inspect FILE [--json]`.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;

use super::report::{num, thousands, vec3};
use crate::error::{Error, Result};
use crate::groom::{GroomStats, ReadOptions, read_groom};
use tress_formats::InFile;

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A groom (.hair, .data, .ply, .tfx, .tfxproj, .mss), Alembic (.abc), USD (.usda, .usdc,
    /// .usd, .usdz), cache (.tcache) or mesh (.obj) file.
    pub file: PathBuf,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// For point-cloud PLYs without strand layout: consecutive points per strand.
    #[arg(long, value_name = "N")]
    pub points_per_strand: Option<usize>,
    /// Alembic: read every sample and check it against its stored digest; .tcache: decode
    /// every frame.
    #[arg(long)]
    pub verify: bool,
}

pub fn run(a: &InspectArgs) -> Result<()> {
    let ext = tress_formats::extension(&a.file);
    match ext.as_deref() {
        Some("obj") => inspect_mesh(&a.file, a.json),
        Some("abc") => super::inspect_abc::run(&a.file, a.json, a.verify),
        Some("tcache") => super::inspect_cache::run(&a.file, a.json, a.verify),
        Some("usd" | "usda" | "usdc" | "usdz") => inspect_usd(a),
        _ => inspect_groom(a),
    }
}

/// A USD stage: its metadata, every prim with its type and (for point-based prims) point count
/// and time samples, then the groom its BasisCurves make.
fn inspect_usd(a: &InspectArgs) -> Result<()> {
    let f = tress_formats::usd::read::UsdFile::open(&a.file)?;
    let info = f.info()?;
    let mut prims = Vec::new();
    for p in f.prims()? {
        let mut entry = json!({ "path": p.path, "type": p.type_name });
        if matches!(
            p.type_name.as_str(),
            "BasisCurves" | "Mesh" | "Points" | "NurbsCurves"
        ) {
            let times = f.sample_times(&p.path, "points")?;
            let points = f.world_points(&p.path, None).map(|v| v.len()).unwrap_or(0);
            entry["points"] = json!(points);
            entry["time_samples"] = json!(times.len());
            if let (Some(a), Some(b)) = (times.first(), times.last()) {
                entry["time_codes"] = json!([a, b]);
            }
        }
        prims.push(entry);
    }
    // The groom from the stage already open (not a second read of the file).
    let curves: Vec<String> = prims
        .iter()
        .filter(|p| p["type"] == "BasisCurves")
        .filter_map(|p| p["path"].as_str().map(str::to_string))
        .collect();
    let groom = match curves.is_empty() {
        true => None,
        false => {
            let s = crate::groom::files::usd_strands(&f, &curves, None)?;
            Some(GroomStats::of(&crate::groom::Groom::from_strands(s)?))
        }
    };
    if a.json {
        let doc = json!({
            "file": a.file.display().to_string(),
            "format": "USD",
            "stage": {
                "default_prim": info.default_prim,
                "meters_per_unit": info.meters_per_unit,
                "up_axis": info.up_axis.map(|c| c.to_string()),
                "time_codes_per_second": info.time_codes_per_second,
                "start_time_code": info.start_time_code,
                "end_time_code": info.end_time_code,
            },
            "prims": prims,
            "groom": groom,
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
        return Ok(());
    }
    println!("{}  (USD)", a.file.display());
    let opt = |v: Option<f64>| v.map(num).unwrap_or_else(|| "-".into());
    println!(
        "  metersPerUnit {}, upAxis {}, {} time codes/s, time codes {} to {}",
        opt(info.meters_per_unit),
        info.up_axis.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
        num(info.time_codes_per_second),
        opt(info.start_time_code),
        opt(info.end_time_code)
    );
    for p in &prims {
        let mut line = format!(
            "  {:<40} {}",
            p["path"].as_str().unwrap_or(""),
            p["type"].as_str().unwrap_or("")
        );
        if let Some(n) = p["points"].as_u64() {
            line.push_str(&format!(
                "  {} points, {} time samples",
                thousands(n),
                p["time_samples"].as_u64().unwrap_or(0)
            ));
        }
        println!("{line}");
    }
    if let Some(st) = groom {
        println!(
            "  groom: {} strands, {} points",
            thousands(st.strand_count as u64),
            thousands(st.point_count as u64)
        );
    }
    Ok(())
}

fn inspect_groom(a: &InspectArgs) -> Result<()> {
    let loaded = read_groom(
        &a.file,
        &ReadOptions {
            points_per_strand: a.points_per_strand,
            ..Default::default()
        },
    )?;
    let st = GroomStats::of(&loaded.groom);
    if a.json {
        let details: serde_json::Map<String, serde_json::Value> = loaded
            .details
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let mut doc = serde_json::to_value(&st).expect("stats serialize");
        doc["file"] = json!(a.file.display().to_string());
        doc["format"] = json!(loaded.format.name());
        doc["details"] = json!(details);
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
        return Ok(());
    }
    println!("{}  ({})", a.file.display(), loaded.format.name());
    println!("  strands            {}", thousands(st.strand_count as u64));
    println!("  points             {}", thousands(st.point_count as u64));
    if let Some(p) = &st.points_per_strand {
        println!(
            "  points per strand  {} / {} / {}  (min / mean / max)",
            num(p.min),
            num(p.mean),
            num(p.max)
        );
    }
    if let Some(l) = &st.length {
        println!(
            "  strand length      {} / {} / {}  (min / mean / max)",
            num(l.min),
            num(l.mean),
            num(l.max)
        );
    }
    if let Some([lo, hi]) = st.bounds {
        println!("  bounds             {} .. {}", vec3(lo), vec3(hi));
    }
    let attrs = if st.attributes.is_empty() {
        "none".to_string()
    } else {
        st.attributes.join(", ")
    };
    println!("  attributes         {attrs}");
    for (k, v) in &loaded.details {
        println!("  {k:<18} {v}");
    }
    Ok(())
}

fn inspect_mesh(path: &Path, json_out: bool) -> Result<()> {
    let mesh = tress_formats::obj::read(path)
        .in_file(path)
        .map_err(Error::from)?;
    let bounds = mesh.bounds();
    if json_out {
        let doc = json!({
            "file": path.display().to_string(),
            "format": "OBJ mesh",
            "vertex_count": mesh.positions.len(),
            "triangle_count": mesh.triangles.len(),
            "bounds": bounds.map(|(lo, hi)| [lo, hi]),
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
        return Ok(());
    }
    println!("{}  (OBJ mesh)", path.display());
    println!("  vertices           {}", thousands(mesh.positions.len() as u64));
    println!("  triangles          {}", thousands(mesh.triangles.len() as u64));
    if let Some((lo, hi)) = bounds {
        println!("  bounds             {} .. {}", vec3(lo), vec3(hi));
    }
    Ok(())
}
