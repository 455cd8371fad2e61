//! The layers of ARCHITECTURE.md hold in the code: every `crate::NAME` path in a module of
//! `src/` names a module on a lower row of the table there (or the module itself, or a
//! crate-root item such as `crate::Result`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The table's rows, top first: each row's module names.
fn rows(architecture: &str) -> Vec<Vec<String>> {
    let start = architecture.find("## Layers").expect("a Layers section");
    let block = &architecture[start..];
    let open = block.find("```\n").expect("the layer table") + 4;
    let close = open + block[open..].find("```").expect("the table's end");
    block[open..close]
        .lines()
        .map(|line| {
            // A row: "name, name   what they hold" (the names before the first two spaces).
            let names = line.split("  ").next().unwrap_or("");
            names
                .split(',')
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect::<Vec<_>>()
        })
        .filter(|r| !r.is_empty())
        .collect()
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`src/sim/solver.rs` → `sim`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    Some(first.trim_end_matches(".rs").to_string())
}

/// The modules a file's code names through `crate::` (comments left out).
fn named_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + 7..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
            rest = after;
        }
    }
    out
}

#[test]
fn the_table_parses_into_its_rows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rows = rows(&std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap());
    assert_eq!(rows.first().map(|r| r.as_slice()), Some(&["cli".to_string()][..]));
    assert!(
        rows.iter()
            .any(|r| r == &["render".to_string(), "metrics".to_string()])
    );
    assert!(
        rows.iter()
            .any(|r| r == &["units".to_string(), "error".to_string()])
    );
}

#[test]
fn no_module_imports_a_module_above_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rows = rows(&std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap());
    let row_of: BTreeMap<String, usize> = rows
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.iter().map(move |m| (m.clone(), i)))
        .collect();
    let src = root.join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut unknown = Vec::new();
    let mut upward = Vec::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        if module == "lib" || module == "main" {
            continue;
        }
        let Some(&row) = row_of.get(&module) else {
            unknown.push(module);
            continue;
        };
        for used in named_modules(&std::fs::read_to_string(file).unwrap()) {
            // Crate-root items (`crate::Result`, `crate::build_id`, `crate::formats`) and
            // anything not a module of the table (capitalised types, functions) are not layers.
            let Some(&used_row) = row_of.get(&used) else {
                continue;
            };
            if used != module && used_row <= row {
                upward.push(format!(
                    "{}: {module} (row {row}) names crate::{used} (row {used_row})",
                    file.display()
                ));
            }
        }
    }
    unknown.sort();
    unknown.dedup();
    assert!(
        unknown.is_empty(),
        "modules missing from ARCHITECTURE.md's table: {unknown:?}"
    );
    upward.sort();
    upward.dedup();
    assert!(
        upward.is_empty(),
        "imports that go up or sideways:\n{}",
        upward.join("\n")
    );
}
