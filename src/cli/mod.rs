//! The `tress` command line: argument parsing and one file per subcommand.

pub mod bench;
pub mod convert;
pub mod dataset_cmd;
pub mod drape_cmd;
pub mod eval_cmd;
pub mod farm_cmd;
pub mod groom_cmd;
pub mod hairmesh_cmd;
pub mod inspect;
pub mod inspect_abc;
pub mod inspect_cache;
pub mod merge_cmd;
pub mod motion_cmd;
pub mod presets_cmd;
pub mod preview;
pub mod report;
pub mod run_cmd;
pub mod sdf_cmd;
pub mod shell;
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

/// How input files map to tress's space (centimetres, Y up): shared by every command that
/// reads grooms, meshes or caches.
#[derive(Clone, Copy, Debug, clap::Args)]
pub struct InputSpace {
    /// Multiply input lengths (groom positions and widths, meshes, caches, file motion) by S to
    /// get centimetres, e.g. 100 for metres.
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub scale: f32,
    /// Up axis of the input files; Z-up input is rotated to tress's Y-up.
    #[arg(long, value_enum, default_value_t = crate::groom::UpAxis::Y)]
    pub up: crate::groom::UpAxis,
}

/// The space a command writes its caches in (Alembic, USD, PLY sequences; `.tcache` stays in
/// tress's centimetres, Y up). `--up` names the input files' up axis; the output's is
/// `--out-up`.
#[derive(Clone, Copy, Debug, clap::Args)]
pub struct OutputSpaceArgs {
    /// Units of the written cache: cm (tress's), m (Houdini, Blender, USD's default) or mm.
    #[arg(long, value_enum, default_value_t = crate::cache::Units::Cm)]
    pub units: crate::cache::Units,
    /// Up axis of the written cache: y (tress's; what Maya, Houdini and Blender assume for every
    /// Alembic file) or z (USD stages say it, and Blender and Unreal scenes are Z up).
    #[arg(long, value_enum, default_value_t = crate::groom::UpAxis::Y)]
    pub out_up: crate::groom::UpAxis,
}

impl OutputSpaceArgs {
    pub fn space(&self) -> crate::cache::OutputSpace {
        crate::cache::OutputSpace {
            units: self.units,
            up: self.out_up,
        }
    }
}

/// The colliders a command hangs hair from: the head and the body under it.
#[derive(Clone, Debug, clap::Args)]
pub struct HeadArgs {
    /// Head collider: procedural (a procedural groom's cranium), sphere (an ellipsoid fitted to
    /// the roots, or a TressFX project's spheres), or a mesh (.obj, .glb, .abc) / .sdf file.
    /// Default: procedural for presets, sphere otherwise.
    #[arg(long, value_name = "MESH|sphere|procedural")]
    pub head: Option<String>,
    /// Body colliders under the head: default (neck and shoulders), head_only, a TOML file, or
    /// an animated body mesh (an .abc polymesh, or an OBJ sequence such as body.####.obj).
    #[arg(long, value_name = "PRESET|FILE")]
    pub body: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print what a groom or mesh file holds: counts, lengths, bounds, attributes.
    Inspect(inspect::InspectArgs),
    /// Convert a groom between formats, optionally resampling, scaling and re-orienting it.
    Convert(convert::ConvertArgs),
    /// Write several grooms' caches (hair, beard, brows) as the groom groups of one Alembic
    /// archive (Unreal's groom_group_id and groom_group_name).
    Merge(merge_cmd::MergeArgs),
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
    /// Training datasets: grooms × motions simulated for the general model.
    Dataset {
        #[command(subcommand)]
        command: dataset_cmd::DatasetCommand,
    },
    /// Render-farm job templates.
    Farm {
        #[command(subcommand)]
        command: farm_cmd::FarmCommand,
    },
    /// Render a cache (contact sheet) or a groom to PNG, with the head.
    Preview(preview::PreviewArgs),
    /// Performance figures (reader speed, …).
    Bench(bench::BenchArgs),
    /// Skinning models for reduced simulation: fitted on a full simulation of the groom.
    Skinning {
        #[command(subcommand)]
        command: skinning_cmd::SkinningCommand,
    },
    /// Train learned upsamplers: the neural interpolator.
    Train {
        #[command(subcommand)]
        command: train_cmd::TrainCommand,
    },
    /// Procedural grooms.
    Groom {
        #[command(subcommand)]
        command: groom_cmd::GroomCommand,
    },
    /// Hair meshes: built around a groom, simulated as volumes with the strands carried inside.
    Hairmesh {
        #[command(subcommand)]
        command: hairmesh_cmd::HairmeshCommand,
    },
    /// Drape a groom for head poses: its resting shape under gravity and the body, one frame per pose.
    Drape(Box<drape_cmd::DrapeArgs>),
    /// Built-in presets (grooms, materials, motions, bodies, training configs, jobs).
    Presets {
        #[command(subcommand)]
        command: presets_cmd::PresetsCommand,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(shell::CompletionsArgs),
    /// Write man pages for tress and every subcommand into a folder.
    Man(shell::ManArgs),
}

/// `--threads T` of a command: the global worker pool (all cores without it).
fn threads(t: Option<usize>) -> Result<()> {
    if let Some(t) = t {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t.max(1))
            .build_global()
            .map_err(|e| crate::error::Error::Runtime(format!("thread pool: {e}")))?;
    }
    Ok(())
}

/// `--frames A-B` of a command that writes whole frames: both ends whole numbers.
fn whole_frames(frames: &str) -> Result<(i64, i64)> {
    let (first, last) = crate::cache::parse_frame_range(frames)?;
    if first.fract() != 0.0 || last.fract() != 0.0 {
        return Err(crate::error::Error::Invalid(format!(
            "--frames {frames}: whole frame numbers, please"
        )));
    }
    Ok((first as i64, last as i64))
}

/// Refuses an output given twice (two writers on one file).
fn distinct_outputs(outputs: &[std::path::PathBuf]) -> Result<()> {
    for (i, o) in outputs.iter().enumerate() {
        if outputs[..i].contains(o) {
            return Err(crate::error::Error::Invalid(format!(
                "{} is given twice as an output",
                o.display()
            )));
        }
    }
    Ok(())
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Inspect(a) => inspect::run(&a),
        Command::Convert(a) => convert::run(&a),
        Command::Merge(a) => merge_cmd::run(&a),
        Command::Groom { command } => groom_cmd::run(&command),
        Command::Bench(a) => bench::run(&a),
        Command::Sdf { command } => sdf_cmd::run(&command),
        Command::Motion { command } => motion_cmd::run(&command),
        Command::Simulate(a) => simulate::run(&a),
        Command::Preview(a) => preview::run(&a),
        Command::Run(a) => run_cmd::run_job(&a),
        Command::Upsample(a) => upsample_cmd::run(&a),
        Command::Eval(a) => eval_cmd::run(&a),
        Command::Dataset { command } => dataset_cmd::run(&command),
        Command::Farm { command } => farm_cmd::run(&command),
        Command::Skinning { command } => skinning_cmd::run(&command),
        Command::Train { command } => train_cmd::run(&command),
        Command::Presets { command } => presets_cmd::run(&command),
        Command::Hairmesh { command } => hairmesh_cmd::run(&command),
        Command::Drape(a) => drape_cmd::run(&a),
        Command::Completions(a) => shell::completions(&a),
        Command::Man(a) => shell::man(&a),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every option, argument and command says what it is for, in words a user reads: no blank
    /// help, no paper references (those belong in the book).
    #[test]
    fn every_option_has_help_without_paper_references() {
        fn walk(cmd: &clap::Command, path: &str, problems: &mut Vec<String>) {
            let here = format!("{path} {}", cmd.get_name()).trim().to_string();
            let paper = regex_free_paper_ref;
            if let Some(a) = cmd.get_about().map(|s| s.to_string())
                && paper(&a)
            {
                problems.push(format!("{here}: paper reference in its description: {a}"));
            }
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                let help = arg
                    .get_help()
                    .or(arg.get_long_help())
                    .map(|s| s.to_string())
                    .unwrap_or_default();
                if help.trim().is_empty() {
                    problems.push(format!("{here} --{id}: no help"));
                } else if paper(&help) {
                    problems.push(format!("{here} --{id}: paper reference: {help}"));
                }
                for v in arg.get_possible_values() {
                    if let Some(h) = v.get_help().map(|h| h.to_string())
                        && paper(&h)
                    {
                        problems.push(format!("{here} --{id} {}: paper reference: {h}", v.get_name()));
                    }
                }
            }
            for sub in cmd.get_subcommands() {
                if sub.get_about().is_none() {
                    problems.push(format!("{here} {}: no description", sub.get_name()));
                }
                walk(sub, &here, problems);
            }
        }
        let mut problems = Vec::new();
        walk(&super::Cli::command(), "", &mut problems);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// The synopsis at the top of the book's command-line chapter lists, for every command, the
    /// options `--help` has, and nothing else.
    #[test]
    fn the_book_synopsis_matches_the_help() {
        let book = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/book/src/cli.md")).unwrap();
        let block = book
            .split("```text\n")
            .nth(1)
            .unwrap()
            .split("```")
            .next()
            .unwrap();
        // Join continuation lines to their command.
        let mut entries: Vec<String> = Vec::new();
        for line in block.lines() {
            if let Some(rest) = line.strip_prefix("tress ") {
                entries.push(rest.to_string());
            } else if let Some(last) = entries.last_mut() {
                last.push(' ');
                last.push_str(line.trim());
            }
        }
        let root = super::Cli::command();
        let mut problems = Vec::new();
        // Options per command path, over every synopsis line of that command.
        let mut book_options: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
            Default::default();
        for e in &entries {
            let mut cmd = &root;
            let mut path = Vec::new();
            for w in e.split_whitespace() {
                match cmd.find_subcommand(w) {
                    Some(c) => {
                        cmd = c;
                        path.push(w);
                    }
                    None => break,
                }
            }
            let opts = book_options.entry(path.join(" ")).or_default();
            for t in e.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
                if t == "-o" {
                    opts.insert("output".into());
                } else if t.starts_with("--") && t.len() > 2 {
                    opts.insert(t.trim_start_matches("--").to_string());
                }
            }
        }
        for (path, in_book) in &book_options {
            let mut cmd = &root;
            for w in path.split_whitespace() {
                cmd = cmd.find_subcommand(w).unwrap();
            }
            let in_help: std::collections::BTreeSet<String> = cmd
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .filter_map(|a| a.get_long().map(str::to_string))
                .filter(|l| !["help", "version", "verbose"].contains(&l.as_str()))
                .collect();
            for o in in_book.difference(&in_help) {
                problems.push(format!(
                    "tress {path}: the book lists --{o}, which --help does not have"
                ));
            }
            for o in in_help.difference(in_book) {
                problems.push(format!("tress {path}: --{o} is missing from the book"));
            }
        }
        let documented: std::collections::BTreeSet<String> = book_options.keys().cloned().collect();
        // Every runnable command is in the synopsis.
        fn leaves(c: &clap::Command, path: &str, out: &mut Vec<String>) {
            let subs: Vec<&clap::Command> = c.get_subcommands().filter(|s| s.get_name() != "help").collect();
            if subs.is_empty() {
                out.push(path.trim().to_string());
            }
            for s in subs {
                leaves(s, &format!("{path} {}", s.get_name()), out);
            }
        }
        let mut all = Vec::new();
        leaves(&root, "", &mut all);
        for c in all {
            if !documented.contains(&c) {
                problems.push(format!("tress {c} is missing from the book's synopsis"));
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// "001 §6", "(000)", "Eq. 4", "Alg. 2": references to the source papers.
    fn regex_free_paper_ref(s: &str) -> bool {
        let b = s.as_bytes();
        let paper_number = (0..b.len().saturating_sub(2)).any(|i| {
            b[i] == b'0'
                && b[i + 1] == b'0'
                && (b'0'..=b'4').contains(&b[i + 2])
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b',' || b[i - 1] == b'.'))
                && b.get(i + 3).is_none_or(|c| !c.is_ascii_alphanumeric())
        });
        paper_number || s.contains('§') || s.contains("Eq.") || s.contains("Alg.")
    }
}
