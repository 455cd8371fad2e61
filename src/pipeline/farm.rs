//! Farm templates: an Open Job Description (jobtemplate-2023-09) template that runs a job's
//! stages as steps — the simulations as one task each, the upsampling split into frame chunks —
//! with the dependencies between them. `openjd run TEMPLATE --step report --run-dependencies`
//! runs the whole job locally.

use std::path::Path;

use super::job::Job;
use super::stage::Stage;

/// YAML string literal (single-quoted; quotes doubled).
fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// `to` relative to the folder `from` (both absolute): OpenJD joins PATH parameters' defaults
/// to the template's folder.
pub fn relative(from: &Path, to: &Path) -> std::path::PathBuf {
    let (a, b): (Vec<_>, Vec<_>) = (from.components().collect(), to.components().collect());
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = std::path::PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c);
    }
    out
}

/// The template of `job` (`job_file`, relative to the template's folder) running `tress` (the
/// executable to call), with the upsampling split into `chunks` tasks.
pub fn openjd_template(job: &Job, job_file: &Path, tress: &str, chunks: usize) -> String {
    let chunks = chunks.max(1);
    let mut y = String::new();
    y.push_str("specificationVersion: 'jobtemplate-2023-09'\n");
    y.push_str(&format!("name: {}\n", q(&format!("tress {}", job.name))));
    y.push_str("parameterDefinitions:\n");
    y.push_str(&format!(
        "- name: JobFile\n  type: PATH\n  objectType: FILE\n  dataFlow: IN\n  default: {}\n",
        q(&job_file.display().to_string())
    ));
    y.push_str(&format!(
        "- name: Tress\n  type: STRING\n  default: {}\n",
        q(tress)
    ));
    y.push_str("steps:\n");
    let items: Vec<Option<String>> = match job.items() {
        Ok(items) if job.batch.is_some() => items
            .iter()
            .map(|j| j.table.get("item").and_then(|v| v.as_str()).map(str::to_string))
            .collect(),
        _ => vec![None],
    };
    for item in items {
        let mut previous: Option<String> = None;
        for stage in Stage::ALL {
            if !super::run::applies(job, stage) {
                continue;
            }
            let name = match &item {
                Some(i) => format!("{i}-{}", stage.name()),
                None => stage.name().to_string(),
            };
            y.push_str(&format!("- name: {}\n", q(&name)));
            if let Some(p) = &previous {
                y.push_str(&format!("  dependencies:\n  - dependsOn: {}\n", q(p)));
            }
            let mut args = vec!["run".to_string(), "{{Param.JobFile}}".into()];
            if let Some(i) = &item {
                args.push("--item".into());
                args.push(i.clone());
            }
            args.push("--only".into());
            args.push(stage.name().into());
            if stage.chunkable() {
                y.push_str(&format!(
                    "  parameterSpace:\n    taskParameterDefinitions:\n    - name: Chunk\n      type: INT\n      range: '0-{}'\n",
                    chunks - 1
                ));
                args.push("--chunk".into());
                args.push(format!("{{{{Task.Param.Chunk}}}}/{chunks}"));
            }
            y.push_str(
                "  script:\n    actions:\n      onRun:\n        command: '{{Param.Tress}}'\n        args:\n",
            );
            for a in args {
                y.push_str(&format!("        - {}\n", q(&a)));
            }
            previous = Some(name);
        }
    }
    y
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
}
