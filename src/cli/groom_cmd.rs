//! `tress groom new --style straight|wavy|curly …`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::report::outputs;
use crate::error::Result;
use crate::groom::{GroomParams, Style, generate, presets, write_groom};

#[derive(Debug, Subcommand)]
pub enum GroomCommand {
    /// Generate a procedural groom on the default head (cm, Y up, face towards +Z).
    New(NewArgs),
    /// Edit a groom: the operations run in the order given (e.g. `--length 0.5 --mirror`).
    Edit(EditArgs),
}

#[derive(Debug, Args)]
pub struct EditArgs {
    /// The groom to edit (any groom format).
    pub input: PathBuf,
    /// Cut every strand to F times its length (F < 1) or grow it past its tip (F > 1).
    #[arg(long, value_name = "F")]
    pub length: Vec<f32>,
    /// Mirror left and right about the head's mid-plane (x = 0).
    #[arg(long, action = clap::ArgAction::Count)]
    pub mirror: u8,
    /// Comb the strands towards a direction: X,Y,Z or X,Y,Z,STRENGTH (0–1, default 1).
    #[arg(long, value_name = "X,Y,Z[,S]", allow_hyphen_values = true)]
    pub comb: Vec<String>,
    /// Any edit in the form jobs use: length=F, mirror, comb=X,Y,Z[,S], curl=R,F (a helix of
    /// radius R cm, F turns per cm), straighten=S[,W], parting=U[,W[,S]] (a parting at root-UV
    /// u = U), copy=U0,V0,U1,V1,DU,DV (a root-UV region's shapes pasted DU,DV away); append
    /// @U0,V0,U1,V1 to edit only the strands rooted in that root-UV rectangle.
    #[arg(long, value_name = "OP", allow_hyphen_values = true)]
    pub edit: Vec<String>,
    #[command(flatten)]
    pub space: super::InputSpace,
    /// The edited groom (.hair, .ply, .data, .tfx, .abc, .usda, .usdc).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Print what was written as JSON on standard output (`outputs` and a summary).
    #[arg(long)]
    pub json: bool,
}

/// The edits in command-line order (clap keeps each option's values in order, not their
/// interleaving, which the order of the flags in the arguments gives back).
fn edits_in_order(a: &EditArgs, args: &[String]) -> Result<Vec<crate::groom::edit::Edit>> {
    use crate::groom::edit::Edit;
    let (mut l, mut c, mut g) = (a.length.iter(), a.comb.iter(), a.edit.iter());
    let mut out = Vec::new();
    for arg in args {
        let name = arg.split('=').next().unwrap_or("");
        match name {
            "--length" => {
                if let Some(f) = l.next() {
                    out.push(Edit::parse(&format!("length={f}"))?);
                }
            }
            "--mirror" => out.push(Edit::Mirror),
            "--comb" => {
                if let Some(v) = c.next() {
                    out.push(Edit::parse(&format!("comb={v}"))?);
                }
            }
            "--edit" => {
                if let Some(v) = g.next() {
                    out.push(Edit::parse(v)?);
                }
            }
            _ => {}
        }
    }
    // Anything not seen on the command line (a call from code): in the declared order.
    out.extend(l.map(|f| Edit::Length(*f)));
    for v in c {
        out.push(Edit::parse(&format!("comb={v}"))?);
    }
    for v in g {
        out.push(Edit::parse(v)?);
    }
    if out.is_empty() {
        return Err(crate::error::Error::Invalid(
            "groom edit: give at least one of --length, --mirror, --comb, --edit".into(),
        ));
    }
    Ok(out)
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
    /// Print what was written as JSON on standard output (`outputs` and a summary).
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: &GroomCommand) -> Result<()> {
    match cmd {
        GroomCommand::Edit(a) => {
            let args: Vec<String> = std::env::args().collect();
            let edits = edits_in_order(a, &args)?;
            let mirrors = edits
                .iter()
                .filter(|e| **e == crate::groom::edit::Edit::Mirror)
                .count();
            let edit_mirrors = a.edit.iter().filter(|e| e.trim() == "mirror").count();
            if mirrors != a.mirror as usize + edit_mirrors {
                return Err(crate::error::Error::Invalid(
                    "groom edit: give --mirror as its own argument".into(),
                ));
            }
            let t = crate::groom::Transform {
                scale: a.space.scale,
                up: a.space.up,
            };
            let mut g = crate::groom::read_groom(&a.input, &crate::groom::ReadOptions::default())?.groom;
            t.apply(&mut g);
            let edited = crate::groom::edit::apply(&g, &edits)?;
            write_groom(&a.output, &edited)?;
            outputs(
                a.json,
                std::slice::from_ref(&a.output),
                serde_json::json!({
                    "input": a.input.display().to_string(),
                    "strands": edited.strand_count(),
                    "points": edited.points().len(),
                }),
            );
            Ok(())
        }
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
            outputs(
                a.json,
                std::slice::from_ref(&a.output),
                serde_json::json!({
                    "style": format!("{:?}", params.style).to_lowercase(),
                    "seed": params.seed,
                    "strands": groom.strand_count(),
                    "points": groom.points().len(),
                }),
            );
            Ok(())
        }
    }
}
