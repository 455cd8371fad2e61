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
    /// A groom (.hair, .data, .ply, .tfx, .tfxproj, .mss), Alembic (.abc) or mesh (.obj) file.
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
        _ => inspect_groom(a),
    }
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
