//! `tress presets list|show`: the built-in presets of every kind, as the files they are.

use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;

use crate::error::{Error, Result};
use crate::presets::Table;

#[derive(Debug, Subcommand)]
pub enum PresetsCommand {
    /// List the built-in presets of every kind (or one kind).
    List(ListArgs),
    /// Print a preset's TOML: a built-in name or a file, with `extends` resolved on request.
    Show(ShowArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    Groom,
    Material,
    Motion,
    Body,
    Poses,
    Training,
    Job,
}

impl Kind {
    /// The kind's name, as `--kind` spells it.
    fn name(self) -> String {
        self.to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }

    fn table(self) -> Table {
        match self {
            Kind::Groom => crate::groom::presets::TABLE,
            Kind::Material => crate::sim::material::TABLE,
            Kind::Motion => crate::motion::random::TABLE,
            Kind::Body => crate::collide::body::TABLE,
            Kind::Poses => crate::neural::drape::pose::TABLE,
            Kind::Training => crate::neural::TRAINING,
            Kind::Job => crate::pipeline::job::TABLE,
        }
    }

    /// Where the preset is used.
    fn used_by(self) -> &'static str {
        match self {
            Kind::Groom => "--groom NAME, [groom] preset",
            Kind::Material => "--material NAME, [material] preset",
            Kind::Motion => "--motion NAME, [motion] preset",
            Kind::Body => "--body NAME, [head] body",
            Kind::Poses => "drape --poses NAME",
            Kind::Training => "train interp|drape --config NAME, [neural] config",
            Kind::Job => "extends = NAME in a job",
        }
    }
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only this kind.
    #[arg(long, value_enum)]
    pub kind: Option<Kind>,
    /// Print JSON: {kind: [names]}.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A built-in preset name, or a TOML file (then --kind is needed).
    pub name: String,
    /// The kind, where the name is a file or is used by several kinds (e.g. straight).
    #[arg(long, value_enum)]
    pub kind: Option<Kind>,
    /// Apply `extends` and print the merged keys instead of the file as written.
    #[arg(long)]
    pub resolved: bool,
}

pub fn run(cmd: &PresetsCommand) -> Result<()> {
    match cmd {
        PresetsCommand::List(a) => list(a),
        PresetsCommand::Show(a) => show(a),
    }
}

fn kinds(only: Option<Kind>) -> Vec<Kind> {
    only.map(|k| vec![k])
        .unwrap_or_else(|| Kind::value_variants().to_vec())
}

fn list(a: &ListArgs) -> Result<()> {
    if a.json {
        let mut out = serde_json::Map::new();
        for k in kinds(a.kind) {
            out.insert(
                k.name(),
                json!(k.table().iter().map(|(n, _)| *n).collect::<Vec<_>>()),
            );
        }
        println!("{}", serde_json::to_string_pretty(&out).expect("JSON of strings"));
        return Ok(());
    }
    for k in kinds(a.kind) {
        let names: Vec<&str> = k.table().iter().map(|(n, _)| *n).collect();
        println!("{:<9} {:<40} ({})", k.name(), names.join(", "), k.used_by());
    }
    Ok(())
}

fn show(a: &ShowArgs) -> Result<()> {
    let matches: Vec<Kind> = kinds(a.kind)
        .into_iter()
        .filter(|k| k.table().iter().any(|(n, _)| *n == a.name))
        .collect();
    let kind = match (a.kind, matches.as_slice()) {
        (Some(k), _) => k,
        (None, [k]) => *k,
        (None, []) => {
            let all: Vec<&str> = Kind::value_variants()
                .iter()
                .flat_map(|k| k.table().iter().map(|(n, _)| *n))
                .collect();
            let hint = crate::presets::keys::suggest(&a.name, &all)
                .map(|p| format!(" (did you mean `{p}`?)"))
                .unwrap_or_default();
            return Err(Error::Invalid(format!(
                "no built-in preset is named {:?}{hint}; `tress presets list` lists them (for a file, give --kind)",
                a.name
            )));
        }
        (None, several) => {
            return Err(Error::Invalid(format!(
                "{:?} is a preset of several kinds ({}): choose one with --kind",
                a.name,
                several.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
            )));
        }
    };
    if a.resolved {
        let (table, _) = crate::presets::resolve(&kind.name(), kind.table(), &a.name)?;
        print!(
            "{}",
            toml::to_string(&table).map_err(|e| Error::Runtime(e.to_string()))?
        );
        return Ok(());
    }
    match kind.table().iter().find(|(n, _)| *n == a.name) {
        Some((_, text)) => print!("{text}"),
        None => {
            let text =
                std::fs::read_to_string(&a.name).map_err(|e| Error::Invalid(format!("{}: {e}", a.name)))?;
            print!("{text}");
        }
    }
    Ok(())
}
