//! Presets: TOML files under `presets/`, embedded in the binary so that a name works from any
//! folder; a path to a TOML file works too. Every kind (grooms, materials, motions, bodies,
//! training configs, jobs) reads the same way: `extends = "NAME|FILE"` starts from another
//! preset of the same kind and overrides its keys; unknown keys and wrong values are errors
//! that name the file, the line, the key and what was expected.

pub mod keys;

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use toml::Value;

use crate::error::{Error, Result};

/// Embedded presets of one kind: (name, TOML text).
pub type Table = &'static [(&'static str, &'static str)];

/// How deep `extends` may nest (a cycle shows up as too deep).
const MAX_DEPTH: usize = 8;

/// Reads a TOML file into a value of `T`; errors name the file (and the line and key).
pub fn parse_file<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| Error::Invalid(format!("{origin}: {e}")))?;
    parse(&text, &origin)
}

/// The first of `values` (key, value) that is not a finite number ≥ 0, as a message naming its
/// key (the shared check of a preset's physical parameters).
pub fn non_negative(values: &[(&str, f64)]) -> std::result::Result<(), String> {
    match values.iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
        Some((k, v)) => Err(format!("{k} = {v}: must be a finite number ≥ 0")),
        None => Ok(()),
    }
}

/// Parses TOML text into a value of `T`; `origin` names the source in errors (with the line of
/// a syntax error or of the offending key when `origin` is a readable file).
pub fn parse<T: DeserializeOwned>(text: &str, origin: &str) -> Result<T> {
    let table = parse_table(text, origin)?;
    keys::section(Value::Table(table), "", origin)
}

/// TOML text as a table; syntax errors keep toml's line and column.
pub fn parse_table(text: &str, origin: &str) -> Result<toml::Table> {
    toml::from_str(text).map_err(|e| Error::Invalid(format!("{origin}: {}", e.to_string().trim())))
}

/// A built-in preset by name, or a TOML file by path, with its `extends` chain resolved.
pub fn load<T: DeserializeOwned>(kind: &str, table: Table, name_or_path: &str) -> Result<T> {
    let (merged, origin) = resolve(kind, table, name_or_path)?;
    keys::section(Value::Table(merged), "", &origin)
}

/// The merged table of a preset (its `extends` chain applied, `extends` removed) and the
/// origin that names it in errors.
pub fn resolve(kind: &str, table: Table, name_or_path: &str) -> Result<(toml::Table, String)> {
    let (text, origin, dir) = source(kind, table, name_or_path, Path::new("."), None)?;
    let t = extend(
        kind,
        table,
        parse_table(&text, &origin)?,
        &origin,
        &dir,
        (None, &|_, _, _, _| {}),
    )?;
    Ok((t, origin))
}

/// What runs before each merge of an `extends` chain: `(base, over, base_dir, over_dir)`, the
/// parent's merged table, the child's table, and the folders their relative paths start at.
pub type BeforeMerge<'a> = &'a dyn Fn(&mut toml::Table, &toml::Table, &Path, &Path);

/// Applies the `extends` chain of `t` (read from `origin`, whose relative paths start at
/// `dir`): each parent's merged table with its child's keys over it. A table that names no
/// parent extends `root` where there is one (jobs: the default job), so a job file extended by
/// another gets the defaults it would get when run. `before_merge` runs before each merge (jobs
/// use it to let a child's motion source replace its parent's, and to keep the parent's
/// relative paths pointing where its file meant).
pub fn extend(
    kind: &str,
    table: Table,
    t: toml::Table,
    origin: &str,
    dir: &Path,
    (root, before_merge): (Option<&str>, BeforeMerge),
) -> Result<toml::Table> {
    chain(kind, table, t, origin, dir, 0, (root, before_merge))
}

/// The text, origin and folder of a preset name or file (relative to `dir`).
fn source(
    kind: &str,
    table: Table,
    name: &str,
    dir: &Path,
    from: Option<&str>,
) -> Result<(String, String, PathBuf)> {
    if let Some((_, text)) = table.iter().find(|(n, _)| *n == name) {
        return Ok((
            text.to_string(),
            format!("{kind} preset {name}"),
            dir.to_path_buf(),
        ));
    }
    let path = dir.join(name);
    let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
    let by = from.map(|f| format!("{f}: extends: ")).unwrap_or_default();
    if path.extension().is_some_and(|e| e == "toml") || path.exists() {
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Error::Invalid(format!(
                "{by}{kind} preset file {}: {e}{}",
                path.display(),
                hint(name, &names)
            ))
        })?;
        let d = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        return Ok((text, path.display().to_string(), d));
    }
    Err(Error::Invalid(format!(
        "{by}unknown {kind} preset {name:?}{} (built in: {}; or give a .toml file)",
        hint(name, &names),
        names.join(", ")
    )))
}

fn hint(name: &str, names: &[&str]) -> String {
    let stem = Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    keys::suggest(&stem, names)
        .map(|p| format!(" (did you mean the preset `{p}`?)"))
        .unwrap_or_default()
}

/// Applies `extends` of `t` (read from `origin` in `dir`): the parent's merged table with `t`'s
/// keys over it.
fn chain(
    kind: &str,
    table: Table,
    mut t: toml::Table,
    origin: &str,
    dir: &Path,
    depth: usize,
    (root, before_merge): (Option<&str>, BeforeMerge),
) -> Result<toml::Table> {
    let parent = match t.remove("extends") {
        Some(p) => p,
        // A file of a kind with a root preset (every job starts from the default job) extends
        // the root when it names no parent, whether it is run or extended.
        None => match root {
            Some(r) if origin != format!("{kind} preset {r}") => Value::String(r.to_string()),
            _ => return Ok(t),
        },
    };
    if depth >= MAX_DEPTH {
        return Err(Error::Invalid(format!(
            "{origin}: `extends` nests more than {MAX_DEPTH} deep (a cycle?)"
        )));
    }
    let Value::String(name) = parent else {
        return Err(Error::Invalid(format!(
            "{origin}: `extends` must be a {kind} preset name or a file path (a string)"
        )));
    };
    let name = keys::expand_env(&name, origin)?;
    let (text, porigin, pdir) = source(kind, table, &name, dir, Some(origin))?;
    let mut base = chain(
        kind,
        table,
        parse_table(&text, &porigin)?,
        &porigin,
        &pdir,
        depth + 1,
        (root, before_merge),
    )?;
    before_merge(&mut base, &t, &pdir, dir);
    keys::merge(&mut base, t);
    Ok(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct P {
        a: u32,
        b: f64,
        #[serde(default)]
        name: String,
    }

    const T: Table = &[
        ("base", "a = 1\nb = 2.0\nname = 'base'"),
        ("child", "extends = 'base'\nb = 3.0"),
    ];

    #[test]
    fn extends_chains_names_and_files() {
        assert_eq!(
            load::<P>("thing", T, "child").unwrap(),
            P {
                a: 1,
                b: 3.0,
                name: "base".into()
            }
        );
        let dir = std::env::temp_dir().join(format!("tress-presets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A file extending a built-in preset, and a file extending that file by a relative path.
        std::fs::write(dir.join("one.toml"), "extends = 'child'\nname = 'one'\n").unwrap();
        std::fs::write(dir.join("two.toml"), "extends = 'one.toml'\na = 7\n").unwrap();
        let p: P = load("thing", T, dir.join("two.toml").to_str().unwrap()).unwrap();
        assert_eq!(
            p,
            P {
                a: 7,
                b: 3.0,
                name: "one".into()
            }
        );
        // A cycle is caught.
        std::fs::write(dir.join("loop.toml"), "extends = 'loop.toml'\n").unwrap();
        let e = load::<P>("thing", T, dir.join("loop.toml").to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("more than 8 deep"), "{e}");
        // A misspelt parent gets a suggestion.
        std::fs::write(dir.join("typo.toml"), "extends = 'chlid'\n").unwrap();
        let e = load::<P>("thing", T, dir.join("typo.toml").to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("did you mean the preset `child`"), "{e}");
        // A wrong value names file, line, key and kind in plain words.
        std::fs::write(dir.join("bad.toml"), "extends = 'base'\n\na = \"2000\"\n").unwrap();
        let path = dir.join("bad.toml");
        let e = load::<P>("thing", T, path.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("{}:3", path.display())), "{e}");
        assert!(e.contains("`a`") && e.contains("a whole number"), "{e}");
        // A syntax error keeps its line.
        std::fs::write(&path, "a = 1\nb = [\n").unwrap();
        let e = load::<P>("thing", T, path.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("line"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
