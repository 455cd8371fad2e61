//! `tress convert IN OUT [--resample N] [--scale S] [--up y|z]`.

use std::path::PathBuf;

use clap::Args;

use super::report::output_file;
use crate::error::{Error, Result};
use crate::groom::{ReadOptions, Transform, UpAxis, read_groom, resample, write_groom};

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// Input groom (.hair, .data, .ply).
    pub input: PathBuf,
    /// Output groom; the extension picks the format (.hair, .data, .ply).
    pub output: PathBuf,
    /// Resample every strand to N points, evenly spaced by arc length.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=100_000))]
    pub resample: Option<u32>,
    /// Multiply positions and widths by S (e.g. 100 for metres → centimetres).
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub scale: f32,
    /// Up axis of the input; Z-up input is rotated to tress's Y-up.
    #[arg(long, value_enum, default_value_t = UpAxis::Y)]
    pub up: UpAxis,
    /// For point-cloud PLYs without strand layout: consecutive points per strand.
    #[arg(long, value_name = "N")]
    pub points_per_strand: Option<usize>,
    /// Alembic input: the frame to convert (default: the first sample).
    #[arg(long, value_name = "N")]
    pub frame: Option<f64>,
}

pub fn run(a: &ConvertArgs) -> Result<()> {
    if !(a.scale.is_finite() && a.scale > 0.0) {
        return Err(Error::Invalid(format!(
            "--scale must be a positive number, got {}",
            a.scale
        )));
    }
    let loaded = read_groom(
        &a.input,
        &ReadOptions {
            points_per_strand: a.points_per_strand,
            frame: a.frame,
        },
    )?;
    let mut groom = loaded.groom;
    Transform {
        scale: a.scale,
        up: a.up,
    }
    .apply(&mut groom);
    if let Some(n) = a.resample {
        groom = resample(&groom, n as usize);
    }
    write_groom(&a.output, &groom)?;
    output_file(&a.output);
    Ok(())
}
