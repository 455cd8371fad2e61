//! `cargo install --locked --path .`, as the README documents it, gives a `tress` that runs on
//! its own (outside the repository) and writes its completions and man pages.

use std::path::PathBuf;
use std::process::Command;

#[test]
#[ignore = "builds tress again through cargo install (about 2.5 minutes on 2 cores); run with --include-ignored"]
fn cargo_install_gives_a_tress_that_runs_outside_the_repository() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let root = std::env::temp_dir().join(format!("tress-install-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // The tests' own target folder: dependencies already built are reused.
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo.join("target"));
    let out = Command::new(&cargo)
        .args(["install", "--locked", "--offline", "--path"])
        .arg(&repo)
        .arg("--root")
        .arg(&root)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo install failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = root
        .join("bin")
        .join(format!("tress{}", std::env::consts::EXE_SUFFIX));
    assert!(exe.is_file(), "{} was not installed", exe.display());
    // Run from a folder that is not the repository: presets and everything else are built in.
    let away = root.join("elsewhere");
    std::fs::create_dir_all(&away).unwrap();
    let run = |args: &[&str]| {
        let o = Command::new(&exe).args(args).current_dir(&away).output().unwrap();
        assert!(
            o.status.success(),
            "tress {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    let version = run(&["--version"]);
    assert!(
        version.starts_with(&format!("tress {}", env!("CARGO_PKG_VERSION"))),
        "{version}"
    );
    let groom = run(&[
        "groom",
        "new",
        "--style",
        "wavy",
        "--strands",
        "50",
        "-o",
        "g.ply",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&groom).unwrap();
    assert_eq!(doc["outputs"][0], "g.ply");
    assert!(away.join("g.ply").is_file());
    let script = run(&["completions", "bash"]);
    assert!(
        script.contains("_tress()"),
        "no completion function in the script"
    );
    run(&["man", "-o", "man1"]);
    assert!(away.join("man1/tress-simulate.1").is_file());
    std::fs::remove_dir_all(&root).unwrap();
}
