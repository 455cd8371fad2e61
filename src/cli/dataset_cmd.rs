//! `tress dataset build CONFIG.toml -o DIR [--item NAME] [--threads T] [--json]`, `tress dataset
//! list CONFIG.toml`: simulated grooms × motions for training the general model.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::error::Result;
use crate::pipeline::dataset::{self, BuildOptions, Dataset};

#[derive(Debug, Subcommand)]
pub enum DatasetCommand {
    /// Simulate every groom × motion of a dataset config into a folder (finished items are
    /// kept; an interrupted one resumes), then write its manifest.
    Build(BuildArgs),
    /// List a dataset config's items and whether each is built in a folder.
    List(ListArgs),
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The dataset config (TOML, `kind = "dataset"`).
    pub config: PathBuf,
    /// The dataset folder.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Build only this item (a farm task); the manifest is written by a build of all items.
    #[arg(long)]
    pub item: Option<String>,
    /// Worker threads [default: all cores]. Results are identical for any count.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Fail at once when another run is simulating an item this one needs, instead of waiting.
    #[arg(long)]
    pub no_wait: bool,
    /// Print what was built as JSON on standard output (progress stays off).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// The dataset config (TOML, `kind = "dataset"`).
    pub config: PathBuf,
    /// A dataset folder: say which items are built there.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Print the list as JSON on standard output.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: &DatasetCommand) -> Result<()> {
    match cmd {
        DatasetCommand::Build(a) => build(a),
        DatasetCommand::List(a) => list(a),
    }
}

fn build(a: &BuildArgs) -> Result<()> {
    super::threads(a.threads)?;
    let d = Dataset::load(&a.config)?;
    let report = dataset::build(
        &d,
        &a.output,
        &BuildOptions {
            item: a.item.clone(),
            quiet: a.json,
            no_wait: a.no_wait,
        },
    )?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    } else {
        eprintln!(
            "dataset    {} items: {} simulated, {} already built, {:.1} s",
            report.items, report.ran, report.cached, report.seconds
        );
        if let Some(m) = &report.manifest {
            println!("{}", m.display());
        }
    }
    Ok(())
}

fn list(a: &ListArgs) -> Result<()> {
    let d = Dataset::load(&a.config)?;
    let items = d.items();
    let mut rows = Vec::new();
    for i in &items {
        let built = a
            .output
            .as_ref()
            .map(|o| o.join("items").join(&i.name).join("item.json").is_file());
        rows.push((i, built));
    }
    if a.json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|(i, b)| {
                let mut v = serde_json::to_value(i).expect("json");
                if let Some(b) = b {
                    v["built"] = serde_json::Value::Bool(*b);
                }
                v
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
        return Ok(());
    }
    for (i, b) in &rows {
        let state = match b {
            Some(true) => "built    ",
            Some(false) => "to build ",
            None => "",
        };
        println!("{state}{}", i.name);
    }
    eprintln!("{} items", items.len());
    Ok(())
}
