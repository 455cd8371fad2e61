//! `tress farm export JOB.toml --format openjd -o TEMPLATE.yaml|.json|BUNDLE [--chunks N] [--production]`.

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
    /// The template file to write (.yaml, or .json for the same template as JSON), or a folder
    /// (a name without .yaml/.json) for a job bundle in Deadline Cloud's layout: template.yaml,
    /// parameter_values.yaml and the job with the files it names, runnable from anywhere.
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
    let ext = tress_formats::extension(&a.output);
    let bundle = !matches!(ext.as_deref(), Some("yaml" | "yml" | "json"));
    let json = ext.as_deref() == Some("json");
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
    let folder = if bundle {
        out.clone()
    } else {
        out.parent().unwrap_or(std::path::Path::new("/")).to_path_buf()
    };
    let contents = if bundle {
        Some(crate::pipeline::bundle::contents(&job_file)?)
    } else {
        None
    };
    let mut opts = farm::TemplateOptions {
        job_file_default: match &contents {
            Some(c) => std::path::Path::new("job").join(&c.main),
            None => farm::relative(&folder, &job_file),
        },
        job_file: job_file.clone(),
        tress: a.tress.clone(),
        chunks: a.chunks,
        production: a.production,
        output_default: None,
        cpus: a.cpus,
        memory_gib: a.memory_gib,
    };
    let mut job_output = None;
    let text = if dataset {
        let d = crate::pipeline::dataset::Dataset::load(&a.job)?;
        let dir = match &a.dataset_dir {
            Some(d) => std::path::absolute(d).unwrap_or_else(|_| d.clone()),
            None => job_file.parent().unwrap_or(&folder).join(&d.spec.name),
        };
        let dir = if bundle || a.dataset_dir.is_some() {
            dir
        } else {
            folder.join(&d.spec.name)
        };
        farm::openjd_dataset_template(&d, &farm::relative(&folder, &dir), &opts)?
    } else {
        let job = Job::load(&a.job)?;
        if bundle {
            // OpenJD refuses defaults outside the template's folder: `openjd run` writes into
            // the bundle's `output/`; parameter_values.yaml (what a Deadline submission uses)
            // names the job's own output folder.
            opts.output_default = Some("output".into());
            job_output = Some(crate::pipeline::bundle::normal(&job.output));
        }
        match a.format {
            FarmFormat::Openjd => farm::openjd_template(&job, &opts)?,
        }
    };
    let text = if json { text.to_json() } else { text.to_yaml() };
    let files = match &contents {
        Some(c) => {
            let mut values = vec![("Tress".to_string(), a.tress.clone())];
            if let Some(o) = &job_output {
                values.push(("Output".into(), o.display().to_string()));
            }
            for v in farm::env_vars(&job_file)? {
                if let Ok(value) = std::env::var(&v) {
                    values.push((v, value));
                }
            }
            let values = crate::pipeline::bundle::parameter_values(&values);
            crate::pipeline::bundle::write(&a.output, &text, &values, c)?
        }
        None => {
            tress_formats::atomic::write(&a.output, text.as_bytes())
                .map_err(|e| crate::error::output_error(&a.output, e))?;
            vec![a.output.clone()]
        }
    };
    outputs(
        a.json,
        &files,
        serde_json::json!({
            "job": opts.job_file.display().to_string(),
            "kind": if dataset { "dataset" } else { "job" },
            "bundle": bundle,
            "format": if json { "json" } else { "yaml" },
            "chunks": a.chunks,
            "production": a.production,
        }),
    );
    Ok(())
}
