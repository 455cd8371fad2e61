//! `tress convert IN OUT [--resample N] [--scale S] [--up y|z] [--units cm|m|mm] [--out-up y|z]`.

use std::path::PathBuf;

use clap::Args;

use super::report::outputs;
use crate::cache::{ConvertOptions, SinkOptions, convert_cache, is_cache_path, parse_frame_range};
use crate::error::{Error, Result};
use crate::groom::{ReadOptions, Transform, UpAxis, read_groom, resample, write_groom};

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// Input groom (.hair, .data, .ply, .abc, .usd/.usda/.usdc, …) or cache (.tcache, .abc, USD,
    /// a PLY sequence with #).
    pub input: PathBuf,
    /// Output groom or cache; the extension picks the format (.hair, .data, .ply, .abc, .usda, .usdc,
    /// .tcache, a PLY sequence with #).
    pub output: PathBuf,
    /// Resample every strand to N points, evenly spaced by arc length.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=100_000))]
    pub resample: Option<u32>,
    #[command(flatten)]
    pub space: super::InputSpace,
    /// Caches: the units and up axis to write in (`--units m --out-up z`).
    #[command(flatten)]
    pub out_space: super::OutputSpaceArgs,
    /// For point-cloud PLYs without strand layout: consecutive points per strand.
    #[arg(long, value_name = "N")]
    pub points_per_strand: Option<usize>,
    /// Alembic input: the frame to convert (default: the first sample).
    #[arg(long, value_name = "N")]
    pub frame: Option<f64>,
    /// Caches: the frames to keep, inclusive (e.g. 1001-1100).
    #[arg(long, value_name = "A-B")]
    pub frames: Option<String>,
    /// `.tcache` output: store lossy within this error (scene units, per vertex); lossless
    /// when absent.
    #[arg(long, value_name = "E")]
    pub error: Option<f32>,
    /// `.tcache` output: zstd level (1 fastest … 19 smallest).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(i32).range(1..=22))]
    pub level: i32,
    /// PLY sequence input: frames per second (PLY does not store one).
    #[arg(long, default_value_t = 24.0)]
    pub fps: f64,
    /// Alembic or USD cache input: the curves object or BasisCurves prim (default: the first).
    #[arg(long, value_name = "PATH")]
    pub object: Option<String>,
    /// Print what was written as JSON on standard output (`outputs` and a summary).
    #[arg(long)]
    pub json: bool,
}

fn is_cache_conversion(a: &ConvertArgs) -> bool {
    let ext = |p: &std::path::Path, e: &[&str]| {
        p.extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| e.iter().any(|e| x.eq_ignore_ascii_case(e)))
    };
    let abc = |p: &std::path::Path| ext(p, &["abc"]);
    let usd = |p: &std::path::Path| ext(p, &["usd", "usda", "usdc", "usdz"]);
    let animated = |p: &std::path::Path| abc(p) || usd(p);
    is_cache_path(&a.input) || is_cache_path(&a.output) || (animated(&a.input) && animated(&a.output))
}

fn run_cache(a: &ConvertArgs) -> Result<()> {
    if a.resample.is_some() || a.space.scale != 1.0 || a.space.up != UpAxis::Y {
        return Err(Error::Invalid(
            "--resample, --scale and --up apply to grooms, not caches (a cache's output space is --units and --out-up)".into(),
        ));
    }
    if let Some(e) = a.error
        && !(e > 0.0 && e.is_finite())
    {
        return Err(Error::Invalid(format!(
            "--error must be a positive distance, got {e}"
        )));
    }
    let opts = ConvertOptions {
        frames: a.frames.as_deref().map(parse_frame_range).transpose()?,
        fps: a.fps,
        object: a.object.clone(),
        sink: SinkOptions {
            error_bound: a.error,
            level: a.level,
            space: a.out_space.space(),
            ..Default::default()
        },
    };
    let (files, frames) = convert_cache(&a.input, &a.output, &opts)?;
    eprintln!("{} frames converted", frames);
    outputs(
        a.json,
        &files,
        serde_json::json!({
            "input": a.input.display().to_string(),
            "frames": frames,
            "units": opts.sink.space.units.name(),
            "up": opts.sink.space.up_axis().to_string(),
        }),
    );
    Ok(())
}

pub fn run(a: &ConvertArgs) -> Result<()> {
    if is_cache_conversion(a) {
        return run_cache(a);
    }
    if a.frames.is_some() || a.error.is_some() || !a.out_space.space().is_identity() {
        return Err(Error::Invalid(
            "--frames, --error, --units and --out-up apply to caches (.tcache, .abc → .abc, PLY sequences); a groom's input space is --scale and --up".into(),
        ));
    }
    if !(a.space.scale.is_finite() && a.space.scale > 0.0) {
        return Err(Error::Invalid(format!(
            "--scale must be a positive number, got {}",
            a.space.scale
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
        scale: a.space.scale,
        up: a.space.up,
    }
    .apply(&mut groom);
    if let Some(n) = a.resample {
        groom = resample(&groom, n as usize);
    }
    write_groom(&a.output, &groom)?;
    outputs(
        a.json,
        std::slice::from_ref(&a.output),
        serde_json::json!({
            "input": a.input.display().to_string(),
            "strands": groom.strand_count(),
            "points": groom.points().len(),
        }),
    );
    Ok(())
}
