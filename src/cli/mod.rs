//! The `tress` command line: argument parsing and one file per subcommand.

pub mod bench;
pub mod convert;
pub mod eval_cmd;
pub mod farm_cmd;
pub mod groom_cmd;
pub mod inspect;
pub mod inspect_abc;
pub mod inspect_cache;
pub mod motion_cmd;
pub mod preview;
pub mod report;
pub mod run_cmd;
pub mod sdf_cmd;
pub mod simulate;
pub mod skinning_cmd;
pub mod train_cmd;
pub mod upsample_cmd;

use clap::{Parser, Subcommand};

use crate::error::Result;

/// tress — film hair pipeline: grooms in, simulation and upsampling, strand caches out.
///
/// Exit codes: 0 success, 1 runtime failure, 2 bad input or usage.
#[derive(Debug, Parser)]
#[command(name = "tress", version = crate::VERSION, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// More log output on standard error (-v: what each stage decides, -vv: details).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print what a groom or mesh file holds: counts, lengths, bounds, attributes.
    Inspect(inspect::InspectArgs),
    /// Convert a groom between formats, optionally resampling, scaling and re-orienting it.
    Convert(convert::ConvertArgs),
    /// Signed distance grids of head and body meshes.
    Sdf {
        #[command(subcommand)]
        command: sdf_cmd::SdfCommand,
    },
    /// Head motion: presets, animation files, track files.
    Motion {
        #[command(subcommand)]
        command: motion_cmd::MotionCommand,
    },
    /// Full strand simulation (ground truth) of a groom on a moving head.
    Simulate(Box<simulate::SimulateArgs>),
    /// Run a job file: simulation, guides, upsampling, caches, previews, metrics, report.
    Run(run_cmd::RunArgs),
    /// Upsample a guide cache to the whole groom (IDW, nearest guide, static or adaptive
    /// skinning, neural interpolation).
    Upsample(upsample_cmd::UpsampleArgs),
    /// Errors of a cache against a ground-truth cache (JSON and a markdown table).
    Eval(eval_cmd::EvalArgs),
    /// Render-farm job templates.
    Farm {
        #[command(subcommand)]
        command: farm_cmd::FarmCommand,
    },
    /// Render a cache (contact sheet) or a groom to PNG, with the head.
    Preview(preview::PreviewArgs),
    /// Performance figures (reader speed, …).
    Bench(bench::BenchArgs),
    /// Skinning models for reduced simulation (001 §6): fit on a full simulation.
    Skinning {
        #[command(subcommand)]
        command: skinning_cmd::SkinningCommand,
    },
    /// Train learned upsamplers: the neural interpolator (000).
    Train {
        #[command(subcommand)]
        command: train_cmd::TrainCommand,
    },
    /// Procedural grooms.
    Groom {
        #[command(subcommand)]
        command: groom_cmd::GroomCommand,
    },
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Inspect(a) => inspect::run(&a),
        Command::Convert(a) => convert::run(&a),
        Command::Groom { command } => groom_cmd::run(&command),
        Command::Bench(a) => bench::run(&a),
        Command::Sdf { command } => sdf_cmd::run(&command),
        Command::Motion { command } => motion_cmd::run(&command),
        Command::Simulate(a) => simulate::run(&a),
        Command::Preview(a) => preview::run(&a),
        Command::Run(a) => run_cmd::run_job(&a),
        Command::Upsample(a) => upsample_cmd::run(&a),
        Command::Eval(a) => eval_cmd::run(&a),
        Command::Farm { command } => farm_cmd::run(&command),
        Command::Skinning { command } => skinning_cmd::run(&command),
        Command::Train { command } => train_cmd::run(&command),
    }
}
