//! `tress farm export JOB.toml --format openjd -o TEMPLATE.yaml [--chunks N] [--production]`.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::report::outputs;
use crate::error::Result;
use crate::pipeline::{Job, farm};

#[derive(Debug, Subcommand)]
pub enum FarmCommand {
    /// Write a render-farm job template of a job file.
    Export(ExportArgs),
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FarmFormat {
    /// Open Job Description, jobtemplate-2023-09 (runs with `openjd run`, AWS Deadline Cloud).
    Openjd,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The job file (TOML) the template runs, or a dataset config (`kind = "dataset"`: one
    /// task per item, then the manifest).
    pub job: PathBuf,
    /// A dataset config: the dataset folder the template builds [default: the dataset's name,
    /// beside the template].
    #[arg(long)]
    pub dataset_dir: Option<PathBuf>,
    /// Template format (Open Job Description).
    #[arg(long, value_enum, default_value_t = FarmFormat::Openjd)]
    pub format: FarmFormat,
    /// The template file to write (.yaml; Open Job Description's YAML form).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Print what was written as JSON on standard output.
    #[arg(long)]
    pub json: bool,
    /// Tasks the upsampling is split into (at most one per frame).
    #[arg(long, default_value_t = 4)]
    pub chunks: usize,
    /// The tress executable the workers run: a name on their PATH or a path (a template
    /// parameter, `Tress`, so it can also be set at submission).
    #[arg(long, default_value = "tress")]
    pub tress: String,
    /// A production shot: leave out the ground-truth simulation and what compares against it
    /// (previews, metrics).
    #[arg(long)]
    pub production: bool,
    /// CPU cores each step asks of a worker.
    #[arg(long, default_value_t = 4)]
    pub cpus: u32,
    /// Memory (GiB) each step asks of a worker.
    #[arg(long, default_value_t = 8)]
    pub memory_gib: u32,
}

/// Whether `path` is a dataset config (`kind = "dataset"`).
fn is_dataset(path: &std::path::Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
        .is_some_and(|t| t.get("kind").and_then(|k| k.as_str()) == Some("dataset"))
}

pub fn run(cmd: &FarmCommand) -> Result<()> {
    let FarmCommand::Export(a) = cmd;
    if !matches!(
        tress_formats::extension(&a.output).as_deref(),
        Some("yaml" | "yml")
    ) {
        return Err(crate::error::Error::Invalid(format!(
            "{}: templates are written as YAML; name the output .yaml (Open Job Description reads it as it reads JSON)",
            a.output.display()
        )));
    }
    let dataset = is_dataset(&a.job);
    if a.dataset_dir.is_some() && !dataset {
        return Err(crate::error::Error::Invalid(format!(
            "--dataset-dir: {} is a job file, not a dataset config (kind = \"dataset\")",
            a.job.display()
        )));
    }
    // The job file (or dataset config) and its path from the template's folder.
    let job_file = std::path::absolute(&a.job).unwrap_or_else(|_| a.job.clone());
    let out = std::path::absolute(&a.output).unwrap_or_else(|_| a.output.clone());
    let folder = out.parent().unwrap_or(std::path::Path::new("/")).to_path_buf();
    let opts = farm::TemplateOptions {
        job_file_default: farm::relative(&folder, &job_file),
        job_file,
        tress: a.tress.clone(),
        chunks: a.chunks,
        production: a.production,
        cpus: a.cpus,
        memory_gib: a.memory_gib,
    };
    let text = if dataset {
        let d = crate::pipeline::dataset::Dataset::load(&a.job)?;
        let dir = match &a.dataset_dir {
            Some(d) => std::path::absolute(d).unwrap_or_else(|_| d.clone()),
            None => folder.join(&d.spec.name),
        };
        farm::openjd_dataset_template(&d, &farm::relative(&folder, &dir), &opts)?
    } else {
        match a.format {
            FarmFormat::Openjd => farm::openjd_template(&Job::load(&a.job)?, &opts)?,
        }
    };
    tress_formats::atomic::write(&a.output, text.as_bytes())
        .map_err(|e| crate::error::output_error(&a.output, e))?;
    outputs(
        a.json,
        std::slice::from_ref(&a.output),
        serde_json::json!({
            "job": opts.job_file.display().to_string(),
            "kind": if dataset { "dataset" } else { "job" },
            "chunks": a.chunks,
            "production": a.production,
        }),
    );
    Ok(())
}
