//! Job bundles in AWS Deadline Cloud's layout: a folder with `template.yaml` (the Open Job
//! Description template of [`super::farm`]), `parameter_values.yaml` (the values known at
//! export), and under `job/` the job file with every job file it extends and every file they
//! name by a relative path (grooms, meshes, models, materials; `#` sequences too), kept at the
//! same places relative to each other so the copies resolve as the originals did. The bundle
//! runs from anywhere: `openjd run DIR/template.yaml --step report --run-dependencies -p
//! TRESS_DATA=…`, with `tress` on the worker's PATH.
//!
//! The job's output folder is the `Output` parameter: `output/` in the bundle by default (Open
//! Job Description refuses defaults outside the template's folder), the job's own `output` in
//! `parameter_values.yaml`, which a Deadline submission uses.
//!
//! Files named through `${VAR}` stay where the variable points (a job parameter) and absolute
//! paths stay as they are: a bundle carries what travels with the job, not the show's data.

use std::path::{Path, PathBuf};

use toml::Value;

use super::farm::q;
use crate::error::{Error, Result};

/// The job files and the files they name by relative paths, as they will be laid out in the
/// bundle: each source file and its path under the bundle's `job/` folder.
#[derive(Debug, Default)]
pub struct Contents {
    pub files: Vec<(PathBuf, PathBuf)>,
    /// The main file's path under `job/`.
    pub main: PathBuf,
}

/// Top-level keys that name further job files (`extends`) or a dataset's job (`job`): followed.
const CHAINED: &[&str] = &["extends", "job"];
/// Keys whose strings are not input files.
const NOT_INPUTS: &[&str] = &["output", "name", "frames", "kind"];

/// What a bundle of the job (or dataset config) `main` carries: `main`, the files it extends
/// (or its dataset's job), and the existing files they name by relative paths.
pub fn contents(main: &Path) -> Result<Contents> {
    let main = std::path::absolute(main).map_err(|e| Error::Invalid(format!("{}: {e}", main.display())))?;
    let mut sources: Vec<PathBuf> = Vec::new();
    let mut queue = vec![main.clone()];
    while let Some(file) = queue.pop() {
        if sources.contains(&file) {
            continue;
        }
        if sources.len() > 64 {
            return Err(Error::Invalid(format!(
                "{}: more than 64 job files extend each other",
                main.display()
            )));
        }
        let text =
            std::fs::read_to_string(&file).map_err(|e| Error::Invalid(format!("{}: {e}", file.display())))?;
        let table: toml::Table = toml::from_str(&text)
            .map_err(|e| Error::Invalid(format!("{}: {}", file.display(), e.message())))?;
        let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
        sources.push(file.clone());
        let mut found = Vec::new();
        strings(&Value::Table(table.clone()), "", &mut found);
        for (key, s) in found {
            if s.contains("${") || Path::new(&s).is_absolute() || s.is_empty() {
                continue;
            }
            let top = key.split('.').next().unwrap_or("");
            if NOT_INPUTS.contains(&top) {
                continue;
            }
            let p = dir.join(&s);
            if CHAINED.contains(&key.as_str()) {
                if p.is_file() {
                    queue.push(normal(&p));
                }
                continue;
            }
            if p.is_file() {
                sources.push(normal(&p));
            } else if s.contains('#') {
                sources.extend(sequence(&p)?);
            }
        }
    }
    sources.sort();
    sources.dedup();
    let root = common_root(&sources);
    let files = sources
        .iter()
        .map(|f| (f.clone(), f.strip_prefix(&root).unwrap_or(f).to_path_buf()))
        .collect();
    Ok(Contents {
        main: main.strip_prefix(&root).unwrap_or(&main).to_path_buf(),
        files,
    })
}

/// Every string in `v` with its dotted key.
fn strings(v: &Value, key: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::String(s) => out.push((key.to_string(), s.clone())),
        Value::Array(a) => a.iter().for_each(|x| strings(x, key, out)),
        Value::Table(t) => {
            for (k, x) in t {
                let sub = if key.is_empty() {
                    k.clone()
                } else {
                    format!("{key}.{k}")
                };
                strings(x, &sub, out);
            }
        }
        _ => {}
    }
}

/// `a/./b/../c` → `a/c` (the files need not exist).
pub fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// The files of a `#` sequence (`body.####.obj`: `body.0001.obj`, …): the same name with the
/// `#` run replaced by digits.
fn sequence(pattern: &Path) -> Result<Vec<PathBuf>> {
    let pattern = normal(pattern);
    let (Some(dir), Some(name)) = (pattern.parent(), pattern.file_name().and_then(|n| n.to_str())) else {
        return Ok(Vec::new());
    };
    let Some(start) = name.find('#') else {
        return Ok(Vec::new());
    };
    let run = name[start..].chars().take_while(|c| *c == '#').count();
    let (prefix, suffix) = (&name[..start], &name[start + run..]);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let n = e.file_name();
        let Some(n) = n.to_str() else { continue };
        if let Some(mid) = n.strip_prefix(prefix).and_then(|r| r.strip_suffix(suffix))
            && mid.len() >= run
            && mid.bytes().all(|b| b.is_ascii_digit() || b == b'-')
        {
            out.push(dir.join(n));
        }
    }
    Ok(out)
}

/// The deepest folder that holds every file.
fn common_root(files: &[PathBuf]) -> PathBuf {
    let mut root: Option<PathBuf> = None;
    for f in files {
        let dir = f.parent().unwrap_or(Path::new("/"));
        root = Some(match root {
            None => dir.to_path_buf(),
            Some(r) => r
                .components()
                .zip(dir.components())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect(),
        });
    }
    root.unwrap_or_default()
}

/// `parameter_values.yaml`: the values known at export (Deadline Cloud's layout).
pub fn parameter_values(values: &[(String, String)]) -> String {
    let mut y = String::from("parameterValues:\n");
    for (name, value) in values {
        y.push_str(&format!("- name: {name}\n  value: {}\n", q(value)));
    }
    y
}

/// Writes the bundle folder `dir` whole or not at all: into a sibling folder first, renamed
/// into place (an older bundle there is replaced; any other existing folder is refused).
/// Returns the files written, `dir`-relative paths joined to `dir`.
pub fn write(dir: &Path, template: &str, values: &str, contents: &Contents) -> Result<Vec<PathBuf>> {
    if dir.exists() && !(dir.is_dir() && dir.join("template.yaml").is_file()) {
        return Err(Error::Invalid(format!(
            "{}: exists and is not a job bundle (no template.yaml); give a new folder",
            dir.display()
        )));
    }
    let name = dir
        .file_name()
        .ok_or_else(|| Error::Invalid(format!("{}: not a folder name", dir.display())))?
        .to_string_lossy()
        .into_owned();
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| Error::Write {
        path: parent.to_path_buf(),
        source: e,
    })?;
    let tmp = parent.join(format!(".{name}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let werr = |p: &Path, e: std::io::Error| Error::Write {
        path: p.to_path_buf(),
        source: e,
    };
    let result = (|| -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(tmp.join("job")).map_err(|e| werr(&tmp, e))?;
        std::fs::write(tmp.join("template.yaml"), template).map_err(|e| werr(&tmp, e))?;
        std::fs::write(tmp.join("parameter_values.yaml"), values).map_err(|e| werr(&tmp, e))?;
        let mut written = vec![dir.join("template.yaml"), dir.join("parameter_values.yaml")];
        for (src, rel) in &contents.files {
            let to = tmp.join("job").join(rel);
            if let Some(p) = to.parent() {
                std::fs::create_dir_all(p).map_err(|e| werr(p, e))?;
            }
            std::fs::copy(src, &to).map_err(|e| Error::Invalid(format!("{}: {e}", src.display())))?;
            written.push(dir.join("job").join(rel));
        }
        Ok(written)
    })();
    let written = match result {
        Ok(w) => w,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    if dir.exists() {
        let old = parent.join(format!(".{name}.old-{}", std::process::id()));
        std::fs::rename(dir, &old).map_err(|e| werr(dir, e))?;
        let _ = std::fs::remove_dir_all(&old);
    }
    std::fs::rename(&tmp, dir).map_err(|e| werr(dir, e))?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job that extends a parent one folder up and names a groom beside it, a mesh sequence
    /// and a file through a variable: the bundle carries the first three at the same relative
    /// places and leaves the variable's file alone.
    #[test]
    fn a_bundle_carries_the_job_its_parents_and_what_they_name_relatively() {
        let dir = std::env::temp_dir().join(format!("tress-bundle-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("show/shot/body")).unwrap();
        std::fs::write(dir.join("show/base.toml"), "[material]\nfile = 'mat.toml'\n").unwrap();
        std::fs::write(dir.join("show/mat.toml"), "").unwrap();
        std::fs::write(
            dir.join("show/shot/job.toml"),
            "extends = '../base.toml'\noutput = 'out'\n[groom]\nfile = 'g.ply'\n[head]\nbody = 'body/b.####.obj'\nmesh = '${DATA}/h.obj'\n",
        )
        .unwrap();
        std::fs::write(dir.join("show/shot/g.ply"), "x").unwrap();
        for f in ["b.0001.obj", "b.0002.obj", "other.obj"] {
            std::fs::write(dir.join("show/shot/body").join(f), "").unwrap();
        }
        let c = contents(&dir.join("show/shot/job.toml")).unwrap();
        let mut rel: Vec<String> = c.files.iter().map(|(_, r)| r.display().to_string()).collect();
        rel.sort();
        assert_eq!(
            rel,
            [
                "base.toml",
                "mat.toml",
                "shot/body/b.0001.obj",
                "shot/body/b.0002.obj",
                "shot/g.ply",
                "shot/job.toml"
            ]
        );
        assert_eq!(c.main, Path::new("shot/job.toml"));
        let b = dir.join("bundle");
        let written = write(&b, "t", &parameter_values(&[("A".into(), "it's".into())]), &c).unwrap();
        assert_eq!(written.len(), 8);
        assert_eq!(
            std::fs::read_to_string(b.join("parameter_values.yaml")).unwrap(),
            "parameterValues:\n- name: A\n  value: 'it''s'\n"
        );
        assert!(b.join("job/shot/body/b.0002.obj").is_file());
        // Writing again replaces the bundle; a folder that is not a bundle is refused.
        write(&b, "t2", "", &c).unwrap();
        assert_eq!(std::fs::read_to_string(b.join("template.yaml")).unwrap(), "t2");
        let e = write(&dir.join("show"), "t", "", &c).unwrap_err().to_string();
        assert!(e.contains("not a job bundle"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
