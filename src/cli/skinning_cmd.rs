//! `tress skinning fit --gt CACHE --groom G [--guides GUIDES | --count N] -o MODEL`: the
//! skinning model of 001 §6 (eligible guide sets, per-particle weights, their quadratics)
//! fitted on a full simulation of the groom.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::json;

use super::report::{num, output_file, thousands};
use crate::cache::open_source;
use crate::error::{Error, Result};
use crate::groom::{ReadOptions, Transform, read_groom};
use crate::guides::select::{match_guide_strands, read_guide_list};
use crate::guides::select_uv_lattice;
use crate::guides::skinning::{FitOptions, fit};
use crate::guides::sparse::select_from_training;
use crate::guides::training::HeadFrames;

#[derive(Debug, Subcommand)]
pub enum SkinningCommand {
    /// Fit a skinning model (.tskin) on a ground-truth simulation of the groom.
    Fit(FitArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SelectionArg {
    /// Evenly over the scalp by root UV.
    Lattice,
    /// Sparse coding of the training motion, from the lattice.
    Sparse,
}

#[derive(Debug, Args)]
pub struct FitArgs {
    /// The training frames: a cache of the whole groom simulated in full (.tcache, .abc, PLY
    /// sequence), e.g. from `tress simulate`.
    #[arg(long, value_name = "CACHE")]
    pub gt: PathBuf,
    /// The groom at rest in the head's frame, the same strands as the cache.
    #[arg(long)]
    pub groom: PathBuf,
    /// The guide strands: a JSON file with a `guides` list of strand indices (a job's
    /// guides.json), or a cache/groom file of guide strands (matched by strand id, else by
    /// root). Without it, --count guides chosen by --selection.
    #[arg(long, value_name = "GUIDES")]
    pub guides: Option<PathBuf>,
    /// Without --guides: about this many guides.
    #[arg(long, default_value_t = 200)]
    pub count: usize,
    /// Without --guides: how the guides are chosen.
    #[arg(long, value_enum, default_value_t = SelectionArg::Lattice)]
    pub selection: SelectionArg,
    /// Sparsity weight β: higher keeps fewer eligible guides per strand (and fewer guides in
    /// sparse selection).
    #[arg(long, default_value_t = 0.15)]
    pub beta: f64,
    /// Weights below ε are dropped: a guide set with such a weight is excessive.
    #[arg(long, default_value_t = 0.01)]
    pub epsilon: f32,
    /// Most eligible guides per strand (2^n − 1 sets are fitted; at most 15).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=15))]
    pub max_eligible: u32,
    #[command(flatten)]
    pub space: super::InputSpace,
    /// The model file (.tskin).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Print what the fit did as JSON on standard output.
    #[arg(long)]
    pub json: bool,
}

pub fn run(c: &SkinningCommand) -> Result<()> {
    match c {
        SkinningCommand::Fit(a) => run_fit(a),
    }
}

/// Guide strand indices from a JSON list or a file of guide strands.
fn read_guides(path: &std::path::Path, groom: &crate::groom::Groom) -> Result<Vec<usize>> {
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
        let list = read_guide_list(path)?;
        if let Some(s) = list.iter().find(|&&s| s >= groom.strand_count()) {
            return Err(Error::Invalid(format!(
                "{}: strand {s} is past the groom's {} strands",
                path.display(),
                groom.strand_count()
            )));
        }
        return Ok(list);
    }
    let info = open_source(path, None, 24.0)?.info().clone();
    Ok(match_guide_strands(path, groom, &info)?
        .into_iter()
        .map(|(s, _)| s)
        .collect())
}

fn run_fit(a: &FitArgs) -> Result<()> {
    let mut groom = read_groom(&a.groom, &ReadOptions::default())?.groom;
    Transform {
        scale: a.space.scale,
        up: a.space.up,
    }
    .apply(&mut groom);
    let mut frames = HeadFrames::open(&a.gt, &groom)?;
    let opts = FitOptions {
        beta: a.beta,
        epsilon: a.epsilon,
        max_eligible: a.max_eligible as usize,
        ..FitOptions::default()
    };
    let guides = match &a.guides {
        Some(p) => read_guides(p, &groom)?,
        None => {
            let lattice = select_uv_lattice(&groom, a.count);
            match a.selection {
                SelectionArg::Lattice => lattice,
                SelectionArg::Sparse => select_from_training(&groom, &mut frames, &lattice, a.beta, 10)?,
            }
        }
    };
    let quiet = a.json;
    let mut progress = |m: &str| {
        if !quiet {
            eprintln!("{m}");
        }
    };
    let (model, report) = fit(&groom, &guides, &mut frames, &opts, &mut progress)?;
    tress_formats::skin::write(&a.output, &model).map_err(|e| crate::error::output_error(&a.output, e))?;
    let bytes = std::fs::metadata(&a.output).map(|m| m.len()).unwrap_or(0);
    let per_strand = bytes as f64 / groom.strand_count().max(1) as f64;
    if a.json {
        let doc = json!({
            "report": report,
            "file_bytes": bytes,
            "bytes_per_strand": per_strand,
            "output": a.output,
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
    } else {
        eprintln!(
            "fitted    {} guides for {} strands on {} frames: {} eligible and {} sets per strand, training RMSE {} cm, {:.1} s",
            report.guides,
            thousands(report.strands as u64),
            report.frames,
            num(report.eligible_mean),
            num(report.sets_mean),
            num(report.training_rmse),
            report.seconds
        );
        eprintln!(
            "model     {} bytes ({} per strand)",
            thousands(bytes),
            num(per_strand)
        );
        output_file(&a.output);
    }
    Ok(())
}
