//! Behaviour of the command line: JSON output, exit codes, outputs.

mod common;

use common::{stderr, stdout, temp_dir, tress};

#[test]
fn groom_new_then_inspect_json() {
    let dir = temp_dir("cli-new");
    let out = dir.join("g.hair");
    let o = tress(&[
        "groom",
        "new",
        "--style",
        "wavy",
        "--strands",
        "300",
        "--points",
        "20",
        "--seed",
        "5",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), format!("OUTPUT_FILE: {}", out.display()));
    let o = tress(&["inspect", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["strand_count"], 300);
    assert_eq!(v["point_count"], 6000);
    assert_eq!(v["points_per_strand"]["mean"], 20.0);
    for key in ["length", "bounds", "attributes", "format", "file"] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    // Default wavy length is 25 cm ± 10 %.
    let mean = v["length"]["mean"].as_f64().unwrap();
    assert!((mean - 25.0).abs() < 1.0, "{mean}");
}

#[test]
fn same_seed_gives_identical_files() {
    let dir = temp_dir("cli-seed");
    let (a, b) = (dir.join("a.ply"), dir.join("b.ply"));
    for p in [&a, &b] {
        let o = tress(&[
            "groom",
            "new",
            "--style",
            "curly",
            "--strands",
            "400",
            "--seed",
            "9",
            "-o",
            p.to_str().unwrap(),
        ]);
        assert!(o.status.success());
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn usage_and_input_errors_exit_2_runtime_errors_exit_1() {
    let dir = temp_dir("cli-exit");
    // Usage errors.
    assert_eq!(tress(&["inspect"]).status.code(), Some(2));
    assert_eq!(
        tress(&["groom", "new", "--style", "bald", "-o", "x.ply"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(tress(&["frobnicate"]).status.code(), Some(2));
    // Missing input.
    let o = tress(&["inspect", dir.join("missing.hair").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing.hair"));
    // Bad values.
    let good = dir.join("g.ply");
    assert!(
        tress(&["groom", "new", "--strands", "50", "-o", good.to_str().unwrap()])
            .status
            .success()
    );
    let o = tress(&[
        "convert",
        good.to_str().unwrap(),
        dir.join("o.xyz").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown groom format"));
    let o = tress(&["groom", "new", "--strands", "0", "-o", good.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    // An output folder that does not exist is a runtime failure.
    let o = tress(&[
        "convert",
        good.to_str().unwrap(),
        dir.join("no/such/dir/o.ply").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

/// `--version` names the build (a hash of the sources that stage records key on) and the commit.
#[test]
fn version_names_the_build() {
    let o = tress(&["--version"]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(
        text.starts_with(&format!("tress {}", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    let build = text
        .split("(build ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .unwrap_or_default();
    assert!(
        build.len() == 32 && build.chars().all(|c| c.is_ascii_hexdigit()),
        "{text}"
    );
    assert!(text.contains(", commit "), "{text}");
}
