//! `tress sdf build MESH -o OUT.sdf`: cache a head or body mesh's signed distance grid.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, Subcommand};
use serde_json::json;

use super::report::{num, output_file, thousands};
use crate::collide::head_mesh::{mesh_digest, read_mesh, to_file, transform_mesh};
use crate::collide::mesh_sdf::{SdfParams, build};
use crate::error::output_error;
use crate::error::{Error, Result};
use crate::groom::Transform;

#[derive(Debug, Subcommand)]
pub enum SdfCommand {
    /// Build a mesh's signed distance grid and save it (versioned, checksummed).
    Build(BuildArgs),
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Mesh file: .obj, .glb / .gltf, or .abc (first polymesh).
    pub mesh: PathBuf,
    /// The distance grid file to write (.sdf).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Cell size in cm (after --scale).
    #[arg(long, default_value_t = 0.2)]
    pub cell: f32,
    /// Exact-distance band around the surface, in cells.
    #[arg(long, default_value_t = 4)]
    pub band: u32,
    #[command(flatten)]
    pub space: super::InputSpace,
    /// Print the result as JSON on standard output (errors too: {"error", "exit_code"}).
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: &SdfCommand) -> Result<()> {
    let SdfCommand::Build(a) = cmd;
    if !(a.space.scale > 0.0 && a.space.scale.is_finite()) {
        return Err(Error::Invalid("--scale must be positive".into()));
    }
    let mut mesh = read_mesh(&a.mesh)?;
    transform_mesh(
        &mut mesh,
        &Transform {
            scale: a.space.scale,
            up: a.space.up,
        },
    );
    let params = SdfParams {
        cell: a.cell,
        band_cells: a.band,
        ..Default::default()
    };
    let t = Instant::now();
    let grid = build(&mesh, &params)?;
    let secs = t.elapsed().as_secs_f64();
    let file = to_file(&grid, a.band, mesh_digest(&mesh));
    tress_formats::sdf::write(&a.output, &file).map_err(|e| output_error(&a.output, e))?;
    let bytes = std::fs::metadata(&a.output).map(|m| m.len()).unwrap_or(0);
    if a.json {
        let doc = json!({
            "mesh": a.mesh.display().to_string(),
            "output": a.output.display().to_string(),
            "triangles": mesh.triangles.len(),
            "dims": grid.dims.to_array(),
            "cell": grid.cell,
            "build_seconds": secs,
            "inside_fraction": grid.inside_fraction(),
            "file_bytes": bytes,
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
    } else {
        let d = grid.dims;
        println!(
            "mesh         {} ({} triangles)",
            a.mesh.display(),
            thousands(mesh.triangles.len() as u64)
        );
        println!(
            "grid         {} × {} × {} nodes of {} cm ({} million)",
            d.x,
            d.y,
            d.z,
            num(grid.cell as f64),
            num(grid.values.len() as f64 / 1e6)
        );
        println!(
            "built in     {} s; {}% of nodes inside",
            num(secs),
            num(100.0 * grid.inside_fraction())
        );
        println!("file         {} bytes", thousands(bytes));
        output_file(&a.output);
    }
    Ok(())
}
