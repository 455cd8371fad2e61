//! Farm runs: the exported Open Job Description template and a farm task's log.

use super::*;

/// The exported template runs on "another worker": the template and the job moved together to
/// another folder, the Open Job Description CLI started from a third, `tress` given as a
/// parameter, and `${TRESS_DATA}` (which the job uses) passed as a job parameter, not inherited.
/// What it leaves is what `tress run` considers finished (every stage cached on a direct run).
/// A production template runs no ground-truth simulation; it is exported as JSON, which
/// `openjd` checks and runs as it does the YAML one.
#[test]
#[ignore = "needs the Open Job Description CLI (TRESS_OPENJD); run with --include-ignored, as .ci/run does"]
fn openjd_runs_the_exported_template_from_another_folder() {
    let openjd = common::tool_from_env(
        "openjd_runs_the_exported_template_from_another_folder",
        "TRESS_OPENJD",
        "the Open Job Description CLI",
    );
    let root = common::temp_dir("pipeline-openjd");
    let here = root.join("exported");
    std::fs::create_dir_all(here.join("data")).unwrap();
    // The groom lives under ${TRESS_DATA}.
    let groom = here.join("data/g.ply");
    run(&[
        "groom",
        "new",
        "--style",
        "wavy",
        "--strands",
        "150",
        "--points",
        "12",
        "-o",
        groom.to_str().unwrap(),
    ]);
    let job = write_job(&here, "farm", "[head]\ncollider = \"sphere\"\n");
    let text = std::fs::read_to_string(&job).unwrap().replace(
        "preset = \"wavy\"\nstrands = 150",
        "file = \"${TRESS_DATA}/g.ply\"",
    );
    assert!(text.contains("TRESS_DATA"));
    std::fs::write(&job, text).unwrap();
    let export = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_tress"))
            .args(["farm", "export", job.to_str().unwrap()])
            .args(args)
            .env("TRESS_DATA", here.join("data"))
            .output()
            .unwrap()
    };
    for (name, args) in [
        ("farm.yaml", &["--chunks", "2"][..]),
        ("prod.json", &["--production", "--chunks", "3"][..]),
    ] {
        let o = export(&[args, &["-o", here.join(name).to_str().unwrap()]].concat());
        assert!(o.status.success(), "{}", common::stderr(&o));
    }
    // More chunks than frames is refused.
    let o = export(&["--chunks", "9", "-o", here.join("bad.yaml").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(common::stderr(&o).contains("8 frames"), "{}", common::stderr(&o));

    let template = std::fs::read_to_string(here.join("farm.yaml")).unwrap();
    assert!(template.contains("name: TRESS_DATA"), "{template}");
    assert!(template.contains("amount.worker.vcpu") && template.contains("amount.worker.memory"));
    // Guides and the guide simulation do not wait for the ground truth; the scores do.
    let step = |name: &str| {
        let start = template.find(&format!("- name: '{name}'")).unwrap();
        let rest = &template[start + 1..];
        rest[..rest.find("\n- name: '").unwrap_or(rest.len())].to_string()
    };
    assert!(!step("guide_sim").contains("'simulate'"), "{}", step("guide_sim"));
    assert!(step("guide_sim").contains("dependsOn: 'guides'"));
    assert!(step("eval").contains("dependsOn: 'simulate'"));

    // The JSON template: the same steps, read by serde_json.
    let prod: Value =
        serde_json::from_str(&std::fs::read_to_string(here.join("prod.json")).unwrap()).unwrap();
    assert_eq!(prod["specificationVersion"], "jobtemplate-2023-09");
    let names: Vec<&str> = prod["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"write") && !names.contains(&"simulate"),
        "{names:?}"
    );
    let upsample = prod["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "upsample")
        .unwrap();
    assert_eq!(
        upsample["parameterSpace"]["taskParameterDefinitions"][0]["range"],
        "0-2"
    );

    // Move everything, so no absolute path of the export is valid any more, and run from a
    // third folder.
    let moved = root.join("worker");
    std::fs::rename(&here, &moved).unwrap();
    let elsewhere = root.join("cwd");
    std::fs::create_dir_all(&elsewhere).unwrap();
    for t in ["farm.yaml", "prod.json"] {
        let o = Command::new(&openjd)
            .arg("check")
            .arg(moved.join(t))
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "openjd check {t}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let openjd_run = |template: &str, step: &str| {
        let o = Command::new(&openjd)
            .current_dir(&elsewhere)
            .env_remove("TRESS_DATA")
            .arg("run")
            .arg(moved.join(template))
            .args(["--step", step, "--run-dependencies"])
            .arg("-p")
            .arg(format!("Tress={}", env!("CARGO_BIN_EXE_tress")))
            .arg("-p")
            .arg(format!("TRESS_DATA={}", moved.join("data").display()))
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "openjd run {template}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    };
    // Production first: guides, guide simulation, upsampling and outputs, no ground truth.
    openjd_run("prod.json", "write");
    let out = moved.join("farm");
    assert!(out.join("hair.abc").exists());
    assert!(!out.join("gt.tcache").exists());
    // Then the full template's report and everything it needs.
    openjd_run("farm.yaml", "report");
    assert!(out.join("gt.tcache").exists() && out.join("report.md").exists());
    // A direct run finds every stage done.
    let o = Command::new(env!("CARGO_BIN_EXE_tress"))
        .args(["run", moved.join("farm.toml").to_str().unwrap(), "--json"])
        .env("TRESS_DATA", moved.join("data"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    for s in v["stages"].as_array().unwrap() {
        if s["stage"] != "report" {
            assert_eq!(s["status"], "cached", "{s}");
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// A job bundle (`farm export JOB -o DIR`, Deadline Cloud's layout) runs from anywhere: the job
/// extends a parent one folder up and names its groom beside it by a relative path; the bundle
/// is moved away from both, the originals are deleted, and `openjd run DIR/template.yaml` runs
/// from a third folder with `tress` found on PATH and no parameter at all. Each step asks for 2
/// vCPUs and runs with `--threads 2`; the outputs land in the bundle's `output/` (OpenJD's
/// defaults stay inside the bundle), and `parameter_values.yaml` names the job's own output.
#[test]
#[ignore = "needs the Open Job Description CLI (TRESS_OPENJD); run with --include-ignored, as .ci/run does"]
fn openjd_runs_a_moved_job_bundle_with_no_parameters() {
    let openjd = common::tool_from_env(
        "openjd_runs_a_moved_job_bundle_with_no_parameters",
        "TRESS_OPENJD",
        "the Open Job Description CLI",
    );
    let root = common::temp_dir("pipeline-bundle");
    let shots = root.join("show/shots");
    std::fs::create_dir_all(&shots).unwrap();
    run(&[
        "groom",
        "new",
        "--style",
        "wavy",
        "--strands",
        "120",
        "--points",
        "10",
        "-o",
        shots.join("g.ply").to_str().unwrap(),
    ]);
    std::fs::write(
        root.join("show/base.toml"),
        "extends = \"default\"\n[head]\ncollider = \"sphere\"\n",
    )
    .unwrap();
    let job = write_job(&shots, "b", "");
    let text = std::fs::read_to_string(&job)
        .unwrap()
        .replace("name = \"tiny\"", "extends = \"../base.toml\"\nname = \"tiny\"")
        .replace("output = \"b\"", "output = \"../../renders/b\"")
        .replace(
            "preset = \"wavy\"\nstrands = 150\npoints = 12",
            "file = \"g.ply\"",
        );
    assert!(text.contains("file = \"g.ply\"") && text.contains("extends"));
    std::fs::write(&job, text).unwrap();
    let bundle = root.join("bundles/b");
    let exported = run(&[
        "farm",
        "export",
        job.to_str().unwrap(),
        "-o",
        bundle.to_str().unwrap(),
        "--production",
        "--chunks",
        "2",
        "--cpus",
        "2",
        "--json",
    ]);
    assert_eq!(exported["bundle"], true);
    let listed: Vec<String> = exported["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    for f in [
        "template.yaml",
        "parameter_values.yaml",
        "job/base.toml",
        "job/shots/b.toml",
        "job/shots/g.ply",
    ] {
        assert!(bundle.join(f).is_file(), "{f} not in the bundle");
        assert!(
            listed.iter().any(|l| l.ends_with(f)),
            "{f} not listed: {listed:?}"
        );
    }
    let template = std::fs::read_to_string(bundle.join("template.yaml")).unwrap();
    assert!(template.contains("default: 'job/shots/b.toml'"), "{template}");
    assert!(template.contains("- '--threads'\n        - '2'"), "{template}");
    assert!(
        template.contains("- name: amount.worker.vcpu\n      min: 2"),
        "{template}"
    );
    let values = std::fs::read_to_string(bundle.join("parameter_values.yaml")).unwrap();
    assert!(
        values.starts_with("parameterValues:\n- name: Tress\n  value: 'tress'"),
        "{values}"
    );
    assert!(
        values.contains(&format!(
            "- name: Output\n  value: '{}'",
            root.join("renders/b").display()
        )),
        "{values}"
    );

    // Move the bundle, delete the originals.
    let moved = root.join("farm");
    std::fs::create_dir_all(&moved).unwrap();
    std::fs::rename(root.join("bundles"), moved.join("bundles")).unwrap();
    std::fs::remove_dir_all(root.join("show")).unwrap();
    let elsewhere = root.join("cwd");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let exe_dir = std::path::Path::new(env!("CARGO_BIN_EXE_tress"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        exe_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new(&openjd)
        .current_dir(&elsewhere)
        .env("PATH", path)
        .env_remove("TRESS_DATA")
        .arg("run")
        .arg(moved.join("bundles/b/template.yaml"))
        .args(["--step", "write", "--run-dependencies"])
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "openjd run: {log}");
    assert!(log.contains("openjd_progress:"), "no progress lines: {log}");
    let out = moved.join("bundles/b/output");
    assert!(
        out.join("hair.abc").is_file(),
        "no hair.abc in {}: {log}",
        out.display()
    );
    assert!(!out.join("gt.tcache").exists());
    let _ = std::fs::remove_dir_all(&root);
}

/// A farm task's log (no terminal; standard output and error in one file, as a farm captures
/// them): progress lines with seconds per frame and the time left during the simulations and
/// the upsampling, and each `OUTPUT_FILE:` as soon as its stage is done — the ground truth's
/// before the next stage starts, not at the end of the run.
#[test]
fn a_farm_log_shows_progress_and_each_output_as_it_is_written() {
    let dir = common::temp_dir("pipeline-log");
    let job = write_job(&dir, "log", "");
    let log_path = dir.join("task.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_tress"))
        .args(["run", job.to_str().unwrap(), "--openjd-progress"])
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&log_path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let find = |what: &str| {
        lines
            .iter()
            .position(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no line with {what:?} in:\n{text}"))
    };
    for label in ["gt frame", "guides frame", "upsample idw frame"] {
        let l = lines[find(label)];
        assert!(l.contains("s/frame") && l.contains("ETA"), "{l}");
    }
    assert!(find("OUTPUT_FILE:") < find("guides     running"), "{text}");
    // The same progress as Open Job Description messages, which a farm worker shows per task:
    // a percentage in 0–100 ending at 100, and a status line.
    let pct: Vec<f64> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("openjd_progress: "))
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(
        !pct.is_empty() && pct.iter().all(|p| (0.0..=100.0).contains(p)),
        "{pct:?}"
    );
    assert!(pct.contains(&100.0), "{pct:?}");
    assert!(lines[find("openjd_status: gt frame")].contains("ETA"), "{text}");
    assert!(
        find(&format!(
            "OUTPUT_FILE: {}",
            dir.join("log").join("gt.tcache").display()
        )) < find("guide_sim  running"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
