//! `tress groom new --style straight|wavy|curly …`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::report::output_file;
use crate::error::Result;
use crate::groom::{GroomParams, Style, generate, presets, write_groom};

#[derive(Debug, Subcommand)]
pub enum GroomCommand {
    /// Generate a procedural groom on the default head (cm, Y up, face towards +Z).
    New(NewArgs),
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// Start from a preset: straight, wavy, curly, or a TOML file (options below override it).
    #[arg(long, value_name = "NAME|FILE")]
    pub preset: Option<String>,
    /// The hair style (overrides the preset's).
    #[arg(long, value_enum)]
    pub style: Option<Style>,
    /// Number of strands [default: 5000].
    #[arg(long)]
    pub strands: Option<usize>,
    /// Points per strand [default: 25].
    #[arg(long)]
    pub points: Option<usize>,
    /// Mean strand length in cm (default depends on the style).
    #[arg(long)]
    pub length: Option<f32>,
    /// Wave amplitude / curl radius in cm (default depends on the style).
    #[arg(long)]
    pub curl_radius: Option<f32>,
    /// Waves / curl turns per cm (default depends on the style).
    #[arg(long)]
    pub curl_frequency: Option<f32>,
    /// Random seed [default: 1].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Output file (.hair, .ply, .data).
    #[arg(short, long)]
    pub output: PathBuf,
}

pub fn run(cmd: &GroomCommand) -> Result<()> {
    match cmd {
        GroomCommand::New(a) => {
            let base = match (&a.preset, a.style) {
                (Some(p), _) => presets::load(p)?,
                (None, style) => GroomParams::for_style(style.unwrap_or(Style::Straight)),
            };
            // An explicit style that differs from the preset's starts from that style's defaults.
            let d = match a.style {
                Some(s) if s != base.style => GroomParams {
                    seed: base.seed,
                    ..GroomParams::for_style(s)
                },
                _ => base,
            };
            let params = GroomParams {
                strands: a.strands.unwrap_or(d.strands),
                points: a.points.unwrap_or(d.points),
                length: a.length.unwrap_or(d.length),
                curl_radius: a.curl_radius.unwrap_or(d.curl_radius),
                curl_frequency: a.curl_frequency.unwrap_or(d.curl_frequency),
                seed: a.seed.unwrap_or(d.seed),
                ..d
            };
            let groom = generate(&params)?;
            write_groom(&a.output, &groom)?;
            output_file(&a.output);
            Ok(())
        }
    }
}
