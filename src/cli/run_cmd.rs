//! `tress run JOB.toml [--frames A-B] [--only STAGE…] [--chunk i/n] [--threads T] [--json]`.

use std::path::PathBuf;

use clap::Args;

use super::report::output_file;
use crate::cache::parse_frame_range;
use crate::error::{Error, Result};
use crate::pipeline::{Job, RunOptions, run_with};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The job file (TOML).
    pub job: PathBuf,
    /// Override the job's frame range.
    #[arg(long, value_name = "A-B")]
    pub frames: Option<String>,
    /// Run only these stages (their upstream stages must be done).
    #[arg(long, num_args = 1.., value_parser = stage_names())]
    pub only: Vec<String>,
    /// Run chunk i of n of the per-frame stages (upsample), e.g. 2/4.
    #[arg(long, value_name = "i/n")]
    pub chunk: Option<String>,
    /// A batch job: run only this item (`<groom>-<motion>`, as in the output subfolders).
    #[arg(long)]
    pub item: Option<String>,
    /// Worker threads [default: all cores]. Results are identical for any count.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Write into DIR instead of the job file's `output` (a batch's items go in DIR/<item>).
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Print the report as JSON on standard output (stage progress stays off).
    #[arg(long)]
    pub json: bool,
    /// Progress lines also as Open Job Description messages (`openjd_progress: P`,
    /// `openjd_status: …`) for a farm worker to show; the exported templates pass it.
    #[arg(long)]
    pub openjd_progress: bool,
    /// Run nothing: print the job as merged from its presets and what each stage would do
    /// (cached or runs, and why).
    #[arg(long)]
    pub dry_run: bool,
    /// Fail at once when another run of the job is running a stage this run needs, instead of
    /// waiting for it (runs of one job exclude each other stage by stage).
    #[arg(long)]
    pub no_wait: bool,
    /// A batch job: only write the batch summary (batch.md) from the items' finished results
    /// (the last step of a farm template).
    #[arg(long, conflicts_with_all = ["only", "chunk", "item", "dry_run"])]
    pub summary: bool,
}

/// The stages `--only` takes, with what each does.
fn stage_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        crate::pipeline::stages::ALL
            .iter()
            .map(|s| clap::builder::PossibleValue::new(s.name()).help(s.info().about)),
    )
}

/// The batch item's name (`<groom>-<motion>`), or the job's.
fn item_name(j: &Job) -> &str {
    j.table.get("item").and_then(|v| v.as_str()).unwrap_or(&j.name)
}

fn parse_chunk(s: &str) -> Result<(usize, usize)> {
    let bad = || Error::Invalid(format!("--chunk {s:?}: expected i/n with 0 ≤ i < n, e.g. 2/4"));
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

pub fn run_job(a: &RunArgs) -> Result<()> {
    super::threads(a.threads)?;
    crate::pipeline::progress::report_to_openjd(a.openjd_progress);
    let mut job = Job::load(&a.job)?;
    if let Some(o) = &a.output {
        job.output = std::path::absolute(o).unwrap_or_else(|_| o.clone());
    }
    let batch = job.batch.is_some();
    let mut items = job.items()?;
    if let Some(name) = &a.item {
        let all: Vec<String> = items.iter().map(|j| item_name(j).to_string()).collect();
        items.retain(|j| item_name(j) == name);
        if items.is_empty() {
            return Err(Error::Invalid(format!(
                "{}: no batch item {name:?} (items: {})",
                a.job.display(),
                all.join(", ")
            )));
        }
    }
    if a.summary {
        if !batch {
            return Err(Error::Invalid(format!(
                "{}: --summary is for batch jobs (a [batch] section)",
                a.job.display()
            )));
        }
        let outputs: Vec<PathBuf> = items.iter().map(|j| j.output.clone()).collect();
        return summary(&job, &items, &outputs, a.json, true);
    }
    let chunk = a.chunk.as_deref().map(parse_chunk).transpose()?;
    let mut reports = Vec::new();
    let mut plans = Vec::new();
    for mut item in items {
        if let Some(f) = &a.frames {
            let (first, last) = parse_frame_range(f)?;
            item.first = first as i64;
            item.last = last as i64;
        }
        if a.dry_run {
            plans.extend(dry_run(a, &item, chunk)?);
            continue;
        }
        if batch && !a.json {
            eprintln!("== {}", item.name);
        }
        let json = a.json;
        let report = run_with(
            &item,
            &RunOptions {
                only: a.only.clone(),
                chunk,
                quiet: a.json,
                no_wait: a.no_wait,
            },
            &mut |path| {
                if !json {
                    output_file(path);
                }
            },
        )?;
        reports.push(report);
    }
    if a.dry_run {
        if a.json {
            let doc = if batch {
                serde_json::Value::Array(plans)
            } else {
                plans.pop().expect("one item")
            };
            println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
        }
        return Ok(());
    }
    if batch && a.item.is_none() && a.only.is_empty() {
        let outputs: Vec<PathBuf> = reports.iter().map(|r| r.output.clone()).collect();
        summary(&job, &job.items()?, &outputs, a.json, !a.json)?;
    }
    if a.json {
        let doc = if batch {
            serde_json::to_value(&reports)
        } else {
            serde_json::to_value(&reports[0])
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&doc.expect("json")).expect("json")
        );
    }
    Ok(())
}

/// What a run of `item` would do (`--dry-run`): printed, or returned for `--json`.
fn dry_run(a: &RunArgs, item: &Job, chunk: Option<(usize, usize)>) -> Result<Option<serde_json::Value>> {
    let opts = RunOptions {
        only: a.only.clone(),
        chunk,
        quiet: true,
        no_wait: true,
    };
    let plan = crate::pipeline::plan(item, &opts)?;
    let mut table = item.table.clone();
    table.insert("frames".into(), format!("{}-{}", item.first, item.last).into());
    if a.json {
        return Ok(Some(serde_json::json!({
            "item": item_name(item), "output": item.output, "job": table, "stages": plan,
        })));
    }
    println!("# {} → {}", item_name(item), item.output.display());
    println!("# the job as merged from its presets:");
    print!(
        "{}",
        toml::to_string(&table).map_err(|e| Error::Runtime(e.to_string()))?
    );
    println!("# stages:");
    for p in &plan {
        println!("#   {:<10} {:<7} {}", p.stage, p.status, p.reason);
    }
    println!();
    Ok(None)
}

/// A batch's summary (`batch.md`) and its trajectory baseline, from the items' results in
/// `outputs`; the files named when `list`.
fn summary(job: &Job, items: &[Job], outputs: &[PathBuf], quiet: bool, list: bool) -> Result<()> {
    let trajectory = crate::pipeline::batch::trajectory::run(job, items, quiet)?;
    let path = crate::pipeline::batch::batch_summary(job, outputs, trajectory.as_ref())?;
    let groups = crate::pipeline::batch::groom_groups(job, items)?;
    if list {
        for f in crate::pipeline::batch::trajectory::files(job) {
            output_file(&f);
        }
        output_file(&path);
        if let Some(g) = &groups {
            output_file(g);
        }
    }
    Ok(())
}
