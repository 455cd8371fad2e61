//! Farm templates: an Open Job Description (jobtemplate-2023-09) template that runs a job's
//! stages as steps on any worker: the simulations as one task each, the upsampling split into
//! frame chunks, each step waiting only for the stages it reads ([`super::engine::graph::upstream`]),
//! from the same stage list a run uses ([`super::stages::ALL`]).
//!
//! The template is portable: `tress` comes from the worker's PATH (or the `Tress` parameter),
//! the job file is the `JobFile` PATH parameter (by default the job file's path relative to the
//! template's folder, which OpenJD joins to wherever the template is: Open Job Description
//! refuses absolute defaults, and a template kept beside its job moves with it), and every
//! `${VAR}` the job file uses becomes a job parameter passed to the steps as an environment
//! variable. `openjd run TEMPLATE --step report --run-dependencies -p TRESS_DATA=…` runs the
//! whole job locally.

use std::path::{Path, PathBuf};

use super::engine::graph::upstream;
use super::engine::{Kind, Stage};
use super::job::Job;
use super::stages::{self, eval, preview, simulate};
use crate::error::{Error, Result};

/// YAML string literal (single-quoted; quotes doubled).
pub(crate) fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// What the template runs and where.
#[derive(Clone, Debug)]
pub struct TemplateOptions {
    /// The job file (absolute; read for its `${VAR}`s).
    pub job_file: PathBuf,
    /// The job file relative to the template's folder: the default of `JobFile`.
    pub job_file_default: PathBuf,
    /// The tress executable (default of the `Tress` parameter): `tress` runs the worker's.
    pub tress: String,
    /// Tasks the upsampling is split into (1 ≤ chunks ≤ frames).
    pub chunks: usize,
    /// Production shot: no ground-truth simulation, no scores or previews against it.
    pub production: bool,
    /// A job bundle's `Output` parameter: the job's output folder relative to the template's
    /// folder (its default), passed to every step as `--output`. `None`: the job file's own.
    pub output_default: Option<PathBuf>,
    /// Host requirements of every step; each step runs with `--threads` equal to the vCPUs it
    /// asks for.
    pub cpus: u32,
    pub memory_gib: u32,
}

/// The `${NAME}` variables a job file uses, with those of the job files it `extends`, in order
/// of first use.
pub fn env_vars(job_file: &Path) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let mut next = Some(job_file.to_path_buf());
    let mut depth = 0;
    while let Some(path) = next.take() {
        let text =
            std::fs::read_to_string(&path).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
        let mut rest = text.as_str();
        while let Some(i) = rest.find("${") {
            let after = &rest[i + 2..];
            let Some(j) = after.find('}') else { break };
            let name = &after[..j];
            if !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && !out.iter().any(|n| n == name)
            {
                out.push(name.to_string());
            }
            rest = &after[j + 1..];
        }
        // Follow `extends` when it names a file (not a built-in preset).
        let table: toml::Table = toml::from_str(&text).unwrap_or_default();
        if let Some(parent) = table.get("extends").and_then(|v| v.as_str())
            && !super::job::TABLE.iter().any(|(n, _)| *n == parent)
            && depth < 8
        {
            if let Ok(p) = crate::presets::keys::expand_env(parent, "") {
                next = Some(path.parent().unwrap_or(Path::new(".")).join(p));
            }
            depth += 1;
        }
    }
    Ok(out)
}

/// The stages a template runs for `job`: production shots leave out the ground truth and
/// what scores against it.
pub fn template_stages(job: &Job, production: bool) -> Vec<&'static dyn Stage> {
    stages::ALL
        .iter()
        .copied()
        .filter(|s| s.applies(job))
        .filter(|s| !production || ![simulate::NAME, preview::NAME, eval::NAME].contains(&s.name()))
        .collect()
}

/// The template of `job`.
pub fn openjd_template(job: &Job, o: &TemplateOptions) -> Result<String> {
    let frames = (job.last - job.first + 1).max(1) as usize;
    if o.chunks == 0 || o.chunks > frames {
        return Err(Error::Invalid(format!(
            "--chunks {}: the job has {frames} frames ({}-{}); give 1 to {frames} chunks",
            o.chunks, job.first, job.last
        )));
    }
    if o.production && job.outputs.ground_truth_abc {
        return Err(Error::Invalid(
            "--production leaves out the ground-truth simulation, but the job writes it (outputs.ground_truth_abc = true)".into(),
        ));
    }
    let vars = env_vars(&o.job_file)?;
    let chunks = o.chunks;
    let mut y = String::new();
    y.push_str("specificationVersion: 'jobtemplate-2023-09'\n");
    let title = if o.production {
        format!("tress {} (production)", job.name)
    } else {
        format!("tress {}", job.name)
    };
    y.push_str(&format!("name: {}\n", q(&title)));
    y.push_str("parameterDefinitions:\n");
    y.push_str(&format!(
        "- name: JobFile\n  type: PATH\n  objectType: FILE\n  dataFlow: IN\n  description: 'The job file (TOML), as the worker sees it.'\n  default: {}\n",
        q(&o.job_file_default.display().to_string())
    ));
    if let Some(out) = &o.output_default {
        y.push_str(&format!(
            "- name: Output\n  type: PATH\n  objectType: DIRECTORY\n  dataFlow: OUT\n  description: 'The job output folder.'\n  default: {}\n",
            q(&out.display().to_string())
        ));
    }
    tress_and_variables(&mut y, o, &vars, "job file");
    y.push_str("steps:\n");
    let items: Vec<Option<String>> = match job.items() {
        Ok(items) if job.batch.is_some() => items
            .iter()
            .map(|j| j.table.get("item").and_then(|v| v.as_str()).map(str::to_string))
            .collect(),
        _ => vec![None],
    };
    let stages = template_stages(job, o.production);
    let mut reports = Vec::new();
    for item in &items {
        let step_name = |s: &str| match item {
            Some(i) => format!("{i}-{s}"),
            None => s.to_string(),
        };
        for &stage in &stages {
            let name = step_name(stage.name());
            y.push_str(&format!("- name: {}\n", q(&name)));
            let deps: Vec<String> = upstream(stages::ALL, job, stage)
                .into_iter()
                .filter(|s| stages.iter().any(|t| t.name() == *s))
                .map(step_name)
                .collect();
            if !deps.is_empty() {
                y.push_str("  dependencies:\n");
                for d in deps {
                    y.push_str(&format!("  - dependsOn: {}\n", q(&d)));
                }
            }
            host(&mut y, o);
            let mut args = run_args(o);
            if let Some(i) = item {
                args.push("--item".into());
                args.push(i.clone());
            }
            args.push("--only".into());
            args.push(stage.name().into());
            args.push("--openjd-progress".into());
            if stage.kind() == Kind::Chunked {
                y.push_str(&format!(
                    "  parameterSpace:\n    taskParameterDefinitions:\n    - name: Chunk\n      type: INT\n      range: '0-{}'\n",
                    chunks - 1
                ));
                args.push("--chunk".into());
                args.push(format!("{{{{Task.Param.Chunk}}}}/{chunks}"));
            }
            script(&mut y, &args);
            if stage.kind() == Kind::Summary {
                reports.push(name);
            }
        }
    }
    if job.batch.is_some() && !reports.is_empty() {
        y.push_str("- name: 'batch-summary'\n  dependencies:\n");
        for r in &reports {
            y.push_str(&format!("  - dependsOn: {}\n", q(r)));
        }
        host(&mut y, o);
        let mut args = run_args(o);
        args.push("--summary".into());
        script(&mut y, &args);
    }
    Ok(y)
}

/// The template of a dataset config ([`super::dataset`]): one task per item (`tress dataset
/// build CONFIG -o DIR --item NAME`), then the manifest once every item is done (a build of
/// all items, which finds them built). `Config` (`o.job_file`, default `o.job_file_default`)
/// and `Output` are PATH parameters whose defaults are relative to the template's folder, as
/// `JobFile` is.
pub fn openjd_dataset_template(
    d: &super::dataset::Dataset,
    output_default: &Path,
    o: &TemplateOptions,
) -> Result<String> {
    let mut vars = env_vars(&o.job_file)?;
    if let Some(job) = &d.spec.job
        && !super::job::TABLE.iter().any(|(n, _)| *n == job)
        && let Ok(p) = crate::presets::keys::expand_env(job, "")
    {
        for v in env_vars(&d.dir.join(p))? {
            if !vars.contains(&v) {
                vars.push(v);
            }
        }
    }
    let items = d.items();
    let mut y = String::new();
    y.push_str("specificationVersion: 'jobtemplate-2023-09'\n");
    y.push_str(&format!(
        "name: {}\n",
        q(&format!("tress dataset {}", d.spec.name))
    ));
    y.push_str("parameterDefinitions:\n");
    y.push_str(&format!(
        "- name: Config\n  type: PATH\n  objectType: FILE\n  dataFlow: IN\n  description: 'The dataset config (TOML), as the worker sees it.'\n  default: {}\n",
        q(&o.job_file_default.display().to_string())
    ));
    y.push_str(&format!(
        "- name: Output\n  type: PATH\n  objectType: DIRECTORY\n  dataFlow: OUT\n  description: 'The dataset folder.'\n  default: {}\n",
        q(&output_default.display().to_string())
    ));
    tress_and_variables(&mut y, o, &vars, "dataset config");
    y.push_str("steps:\n- name: 'items'\n");
    y.push_str("  parameterSpace:\n    taskParameterDefinitions:\n    - name: Item\n      type: STRING\n      range:\n");
    for i in &items {
        y.push_str(&format!("      - {}\n", q(&i.name)));
    }
    host(&mut y, o);
    let threads = o.cpus.max(1).to_string();
    let build = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "dataset",
            "build",
            "{{Param.Config}}",
            "-o",
            "{{Param.Output}}",
            "--threads",
            &threads,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    script(&mut y, &build(&["--item", "{{Task.Param.Item}}"]));
    y.push_str("- name: 'manifest'\n  dependencies:\n  - dependsOn: 'items'\n");
    host(&mut y, o);
    script(&mut y, &build(&[]));
    Ok(y)
}

/// The `Tress` parameter, one STRING parameter per `${VAR}` of the `what` (its default the value
/// here, if set), and the job environment passing them to every step.
fn tress_and_variables(y: &mut String, o: &TemplateOptions, vars: &[String], what: &str) {
    y.push_str(&format!(
        "- name: Tress\n  type: STRING\n  description: 'The tress executable: a name on the worker PATH or a path.'\n  default: {}\n",
        q(&o.tress)
    ));
    for v in vars {
        y.push_str(&format!(
            "- name: {v}\n  type: STRING\n  description: {}\n",
            q(&format!("${{{v}}} of the {what}, as the worker sees it."))
        ));
        if let Ok(value) = std::env::var(v) {
            y.push_str(&format!("  default: {}\n", q(&value)));
        }
    }
    if !vars.is_empty() {
        y.push_str("jobEnvironments:\n- name: JobVariables\n  variables:\n");
        for v in vars {
            y.push_str(&format!("    {v}: {}\n", q(&format!("{{{{Param.{v}}}}}"))));
        }
    }
}

/// `tress run JOB --threads N [--output DIR]`: the start of every step of a job's template.
fn run_args(o: &TemplateOptions) -> Vec<String> {
    let mut a = vec![
        "run".to_string(),
        "{{Param.JobFile}}".into(),
        "--threads".into(),
        o.cpus.max(1).to_string(),
    ];
    if o.output_default.is_some() {
        a.push("--output".into());
        a.push("{{Param.Output}}".into());
    }
    a
}

fn host(y: &mut String, o: &TemplateOptions) {
    y.push_str(&format!(
        "  hostRequirements:\n    amounts:\n    - name: amount.worker.vcpu\n      min: {}\n    - name: amount.worker.memory\n      min: {}\n",
        o.cpus.max(1),
        o.memory_gib.max(1) * 1024
    ));
}

fn script(y: &mut String, args: &[String]) {
    y.push_str("  script:\n    actions:\n      onRun:\n        command: '{{Param.Tress}}'\n        args:\n");
    for a in args {
        y.push_str(&format!("        - {}\n", q(a)));
    }
}

/// `to` relative to the folder `from` (both absolute).
pub fn relative(from: &Path, to: &Path) -> PathBuf {
    let (a, b): (Vec<_>, Vec<_>) = (from.components().collect(), to.components().collect());
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative(Path::new("/a/b"), Path::new("/a/b/c.toml")),
            Path::new("c.toml")
        );
        assert_eq!(
            relative(Path::new("/a/b/t"), Path::new("/a/x/c.toml")),
            Path::new("../../x/c.toml")
        );
    }

    #[test]
    fn env_vars_of_a_job_and_its_parents() {
        let dir = std::env::temp_dir().join(format!("tress-farm-vars-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("base.toml"),
            "[groom]\nfile = '${SHOW_ROOT}/${ASSET}/g.hair'\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("job.toml"),
            "extends = 'base.toml'\noutput = '${SHOT_OUT}/x'\n[head]\ncollider = '${SHOW_ROOT}/h.obj'\n",
        )
        .unwrap();
        assert_eq!(
            env_vars(&dir.join("job.toml")).unwrap(),
            ["SHOT_OUT", "SHOW_ROOT", "ASSET"]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
