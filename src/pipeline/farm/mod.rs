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
//! whole job locally. The template is a tree ([`doc::Node`]) written as YAML or, for `.json`,
//! as JSON.

use std::path::{Path, PathBuf};

use super::engine::graph::upstream;
use super::engine::{Kind, Stage};
use super::job::Job;
use super::stages::{self, eval, preview, simulate};
use crate::error::{Error, Result};

pub mod doc;

pub(crate) use doc::q;
use doc::{Node, map, s, w};

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
pub fn openjd_template(job: &Job, o: &TemplateOptions) -> Result<Node> {
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
    let title = if o.production {
        format!("tress {} (production)", job.name)
    } else {
        format!("tress {}", job.name)
    };
    let mut params = vec![path_param(
        "JobFile",
        "FILE",
        "IN",
        "The job file (TOML), as the worker sees it.",
        &o.job_file_default,
    )];
    if let Some(out) = &o.output_default {
        params.push(path_param(
            "Output",
            "DIRECTORY",
            "OUT",
            "The job output folder.",
            out,
        ));
    }
    let mut doc = header(&title, params, o, &vars, "job file");
    let items: Vec<Option<String>> = match job.items() {
        Ok(items) if job.batch.is_some() => items
            .iter()
            .map(|j| j.table.get("item").and_then(|v| v.as_str()).map(str::to_string))
            .collect(),
        _ => vec![None],
    };
    let stages = template_stages(job, o.production);
    let mut steps = Vec::new();
    let mut reports = Vec::new();
    for item in &items {
        let step_name = |s: &str| match item {
            Some(i) => format!("{i}-{s}"),
            None => s.to_string(),
        };
        for &stage in &stages {
            let name = step_name(stage.name());
            let deps: Vec<String> = upstream(stages::ALL, job, stage)
                .into_iter()
                .filter(|s| stages.iter().any(|t| t.name() == *s))
                .map(step_name)
                .collect();
            let mut args = run_args(o);
            if let Some(i) = item {
                args.push("--item".into());
                args.push(i.clone());
            }
            args.push("--only".into());
            args.push(stage.name().into());
            args.push("--openjd-progress".into());
            let mut step = map([("name", s(&name))]);
            if !deps.is_empty() {
                step.push("dependencies", depends_on(&deps));
            }
            step.push("hostRequirements", host(o));
            if stage.kind() == Kind::Chunked {
                step.push(
                    "parameterSpace",
                    map([(
                        "taskParameterDefinitions",
                        Node::Seq(vec![map([
                            ("name", w("Chunk")),
                            ("type", w("INT")),
                            ("range", s(format!("0-{}", chunks - 1))),
                        ])]),
                    )]),
                );
                args.push("--chunk".into());
                args.push(format!("{{{{Task.Param.Chunk}}}}/{chunks}"));
            }
            step.push("script", script(&args));
            steps.push(step);
            if stage.kind() == Kind::Summary {
                reports.push(name);
            }
        }
    }
    if job.batch.is_some() && !reports.is_empty() {
        let mut args = run_args(o);
        args.push("--summary".into());
        steps.push(map([
            ("name", s("batch-summary")),
            ("dependencies", depends_on(&reports)),
            ("hostRequirements", host(o)),
            ("script", script(&args)),
        ]));
    }
    doc.push("steps", Node::Seq(steps));
    Ok(doc)
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
) -> Result<Node> {
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
    let params = vec![
        path_param(
            "Config",
            "FILE",
            "IN",
            "The dataset config (TOML), as the worker sees it.",
            &o.job_file_default,
        ),
        path_param(
            "Output",
            "DIRECTORY",
            "OUT",
            "The dataset folder.",
            output_default,
        ),
    ];
    let mut doc = header(
        &format!("tress dataset {}", d.spec.name),
        params,
        o,
        &vars,
        "dataset config",
    );
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
    let item_names = Node::Seq(items.iter().map(|i| s(&i.name)).collect());
    doc.push(
        "steps",
        Node::Seq(vec![
            map([
                ("name", s("items")),
                (
                    "parameterSpace",
                    map([(
                        "taskParameterDefinitions",
                        Node::Seq(vec![map([
                            ("name", w("Item")),
                            ("type", w("STRING")),
                            ("range", item_names),
                        ])]),
                    )]),
                ),
                ("hostRequirements", host(o)),
                ("script", script(&build(&["--item", "{{Task.Param.Item}}"]))),
            ]),
            map([
                ("name", s("manifest")),
                ("dependencies", depends_on(&["items".to_string()])),
                ("hostRequirements", host(o)),
                ("script", script(&build(&[]))),
            ]),
        ]),
    );
    Ok(doc)
}

/// A PATH job parameter with a default relative to the template's folder.
fn path_param(name: &str, object: &str, flow: &str, description: &str, default: &Path) -> Node {
    map([
        ("name", w(name)),
        ("type", w("PATH")),
        ("objectType", w(object)),
        ("dataFlow", w(flow)),
        ("description", s(description)),
        ("default", s(default.display().to_string())),
    ])
}

/// The template's head: version, name, `params` then the `Tress` parameter, one STRING
/// parameter per `${VAR}` of the `what` (its default the value here, if set), and the job
/// environment passing them to every step.
fn header(title: &str, mut params: Vec<Node>, o: &TemplateOptions, vars: &[String], what: &str) -> Node {
    params.push(map([
        ("name", w("Tress")),
        ("type", w("STRING")),
        (
            "description",
            s("The tress executable: a name on the worker PATH or a path."),
        ),
        ("default", s(&o.tress)),
    ]));
    for v in vars {
        let mut p = map([
            ("name", w(v)),
            ("type", w("STRING")),
            (
                "description",
                s(format!("${{{v}}} of the {what}, as the worker sees it.")),
            ),
        ]);
        if let Ok(value) = std::env::var(v) {
            p.push("default", s(value));
        }
        params.push(p);
    }
    let mut doc = map([
        ("specificationVersion", s("jobtemplate-2023-09")),
        ("name", s(title)),
        ("parameterDefinitions", Node::Seq(params)),
    ]);
    if !vars.is_empty() {
        doc.push(
            "jobEnvironments",
            Node::Seq(vec![map([
                ("name", w("JobVariables")),
                (
                    "variables",
                    map(vars.iter().map(|v| (v.clone(), s(format!("{{{{Param.{v}}}}}"))))),
                ),
            ])]),
        );
    }
    doc
}

fn depends_on(steps: &[String]) -> Node {
    Node::Seq(steps.iter().map(|d| map([("dependsOn", s(d))])).collect())
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

fn host(o: &TemplateOptions) -> Node {
    let amount = |name: &str, min: u32| map([("name", w(name)), ("min", Node::Int(min as i64))]);
    map([(
        "amounts",
        Node::Seq(vec![
            amount("amount.worker.vcpu", o.cpus.max(1)),
            amount("amount.worker.memory", o.memory_gib.max(1) * 1024),
        ]),
    )])
}

fn script(args: &[String]) -> Node {
    map([(
        "actions",
        map([(
            "onRun",
            map([
                ("command", s("{{Param.Tress}}")),
                ("args", Node::Seq(args.iter().map(s).collect())),
            ]),
        )]),
    )])
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
