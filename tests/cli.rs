//! Behaviour of the command line: JSON output, exit codes, outputs.

mod common;

use common::{read_groom, stderr, stdout, temp_dir, tress, tress_ok};

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

/// Rough edges of the command line found by a new user (TD-ready issue, item 6): JSON durations
/// as seconds, errors as JSON under --json, reversed frame ranges named, a blow-up before the
/// first frame named as such, --motion as the option's own name.
#[test]
fn json_output_is_scriptable_and_errors_teach() {
    let dir = temp_dir("cli-json");
    let out = dir.join("s.abc");
    let sim = |frames: &str, extra: &[&str]| {
        let mut args = vec![
            "simulate",
            "--groom",
            "straight",
            "--strands",
            "30",
            "--motion",
            "turn",
            "--frames",
            frames,
            "-o",
            out.to_str().unwrap(),
            "--json",
        ];
        args.extend_from_slice(extra);
        tress(&args)
    };
    let o = sim("1-2", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    for k in ["total", "dynamics", "collisions", "io"] {
        assert!(v["counters"][k].is_f64(), "counters.{k} = {}", v["counters"][k]);
    }
    // A reversed range: exit 2, the reason in plain words, as JSON on stdout.
    let o = sim("1048-1001", &[]);
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let e = v["error"].as_str().unwrap();
    assert!(e.contains("reversed") && e.contains("1001-1048"), "{e}");
    assert_eq!(v["exit_code"], 2);
    // A usage error under --json is JSON too.
    let o = tress(&["simulate", "--json", "--frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert!(v["error"].as_str().unwrap().contains("--frobnicate"), "{v}");
    // A simulation that blows up in its preroll is not reported as "frame 0", and leaves no
    // output behind.
    let blown = dir.join("blown.abc");
    let o = tress(&[
        "simulate",
        "--groom",
        "straight",
        "--strands",
        "100",
        "--motion",
        "violent",
        "--frames",
        "1001-1010",
        "--substeps",
        "1",
        "--fixed-substeps",
        "--integrator",
        "explicit",
        "-o",
        blown.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("before frame 1001") && !e.contains("frame 0"), "{e}");
    assert!(!blown.exists());
    assert_eq!(
        std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".partial")
            })
            .count(),
        0
    );
    // --motion is the option's name; --preset still works for older scripts.
    let o = tress(&["motion", "preview", "--preset", "turn", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let help = stdout(&tress(&["simulate", "--help"]));
    assert!(
        help.contains("--motion <PRESET|FILE>") && !help.contains("--preset <PRESET|FILE>"),
        "{help}"
    );
}

/// `tress presets list|show` and `tress run --dry-run` (item 5).
#[test]
fn presets_are_listed_and_a_dry_run_plans_without_running() {
    let o = tress(&["presets", "list", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    for (kind, name) in [
        ("groom", "curly"),
        ("material", "wavy"),
        ("motion", "turn"),
        ("body", "default"),
        ("training", "interp_small"),
        ("job", "default"),
    ] {
        assert!(
            v[kind].as_array().unwrap().iter().any(|n| n == name),
            "{kind}: {v}"
        );
    }
    // The shown text is the embedded file itself.
    let o = tress(&["presets", "show", "turn"]);
    assert!(o.status.success());
    assert_eq!(
        stdout(&o),
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/presets/motions/turn.toml")).unwrap()
    );
    let o = tress(&["presets", "show", "straight"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--kind"), "{}", stderr(&o));

    // A material file that extends a built-in preset, used by simulate.
    let dir = temp_dir("cli-dry");
    let mat = dir.join("soft.toml");
    std::fs::write(&mat, "extends = 'curly'\nbend = 0.5\n").unwrap();
    let o = tress(&[
        "presets",
        "show",
        mat.to_str().unwrap(),
        "--kind",
        "material",
        "--resolved",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t: toml::Table = toml::from_str(&stdout(&o)).unwrap();
    assert_eq!(t["bend"].as_float(), Some(0.5));
    assert!(!t.contains_key("extends"));

    let job = dir.join("job.toml");
    std::fs::write(
        &job,
        "name = 'dry'\noutput = 'out'\nframes = '1-3'\n[groom]\npreset = 'wavy'\nstrands = 50\n[motion]\npreset = 'turn'\n",
    )
    .unwrap();
    let o = tress(&["run", job.to_str().unwrap(), "--dry-run", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["job"]["groom"]["preset"], "wavy");
    // Merged from the default preset.
    assert_eq!(v["job"]["simulate"]["integrator"], "implicit");
    let stages: Vec<&str> = common::strings(&v["stages"], "stage");
    assert_eq!(stages.first(), Some(&"prepare"));
    assert!(stages.contains(&"simulate") && stages.contains(&"report"));
    assert!(
        v["stages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["status"] == "runs")
    );
    // Nothing ran: no output folder.
    assert!(!dir.join("out").exists());
}

/// A groom in metres or millimetres is named as such, with the --scale that fixes it (a groom in
/// metres simulated as centimetres is 1 mm hair).
#[test]
fn grooms_in_other_units_get_a_warning_naming_scale() {
    let dir = temp_dir("cli-units");
    let cm = dir.join("cm.ply");
    tress_ok(&[
        "groom",
        "new",
        "--strands",
        "60",
        "--points",
        "8",
        "-o",
        cm.to_str().unwrap(),
    ]);
    let out = dir.join("o.tcache");
    let simulate = |groom: &std::path::Path| {
        tress(&[
            "simulate",
            "--groom",
            groom.to_str().unwrap(),
            "--head",
            "sphere",
            "--motion",
            "gentle",
            "--frames",
            "1-1",
            "--preroll",
            "0",
            "-o",
            out.to_str().unwrap(),
        ])
    };
    for (scale, want, unit) in [
        ("0.01", "--scale 100", "metres"),
        ("10", "--scale 0.1", "millimetres"),
    ] {
        let other = dir.join(format!("{unit}.ply"));
        tress_ok(&[
            "convert",
            cm.to_str().unwrap(),
            other.to_str().unwrap(),
            "--scale",
            scale,
        ]);
        let e = stderr(&simulate(&other));
        assert!(e.contains(want) && e.contains(unit), "{scale}: {e}");
    }
    // In centimetres: no warning.
    let o = simulate(&cm);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("--scale"), "{}", stderr(&o));
}

/// `tress groom edit` applies its operations in the order given: combing towards +x then
/// mirroring leaves the hair pointing towards −x, mirroring first leaves it towards +x.
#[test]
fn groom_edits_run_in_the_order_given() {
    let dir = temp_dir("cli-edit");
    let g = dir.join("g.ply");
    tress_ok(&[
        "groom",
        "new",
        "--strands",
        "80",
        "--points",
        "10",
        "-o",
        g.to_str().unwrap(),
    ]);
    let edit = |ops: &[&str], out: &std::path::Path| {
        let mut args = vec!["groom", "edit", g.to_str().unwrap()];
        args.extend_from_slice(ops);
        args.extend(["-o", out.to_str().unwrap()]);
        tress(&args)
    };
    let tip_x = |p: &std::path::Path| {
        let g = read_groom(p);
        g.strands().map(|s| s[s.len() - 1].x - s[0].x).sum::<f32>() / g.strand_count() as f32
    };
    let (a, b) = (dir.join("a.ply"), dir.join("b.ply"));
    for (ops, out) in [
        (["--comb", "1,0,0", "--mirror"], &a),
        (["--mirror", "--comb", "1,0,0"], &b),
    ] {
        let o = edit(&ops, out);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert!(tip_x(&a) < -1.0 && tip_x(&b) > 1.0, "{} {}", tip_x(&a), tip_x(&b));
    // --edit takes the job form, in the same order as the other flags.
    let (c, d) = (dir.join("c.ply"), dir.join("d.ply"));
    for (ops, out) in [
        (&["--edit", "comb=1,0,0", "--edit", "mirror"][..], &c),
        (&["--mirror", "--edit", "comb=1,0,0@0,0,1,1"][..], &d),
    ] {
        let o = edit(ops, out);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert!(tip_x(&c) < -1.0 && tip_x(&d) > 1.0, "{} {}", tip_x(&c), tip_x(&d));
    let o = edit(&["--edit", "curl=0.5"], &dir.join("e.ply"));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("curl takes radius,turns_per_cm"),
        "{}",
        stderr(&o)
    );
    // Halving, with a wrong value refused (exit 2, nothing written).
    let h = dir.join("h.ply");
    let o = edit(&["--length", "0.5"], &h);
    assert!(o.status.success(), "{}", stderr(&o));
    let len = |p: &std::path::Path| read_groom(p).lengths().iter().sum::<f32>();
    assert!((len(&h) / len(&g) - 0.5).abs() < 1e-3);
    let bad = dir.join("bad.ply");
    let o = edit(&["--length", "-2"], &bad);
    assert_eq!(o.status.code(), Some(2));
    assert!(!bad.exists());
}

/// `--json` on the commands that write files: one JSON document on standard output naming
/// what was written (no `OUTPUT_FILE:` lines mixed in), with the counts a script checks.
#[test]
fn writing_commands_answer_in_json() {
    let dir = temp_dir("cli-json-writers");
    let json = |args: &[&str]| -> serde_json::Value {
        let o = tress(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stdout(&o)))
    };
    let g = dir.join("g.ply");
    let v = json(&[
        "groom",
        "new",
        "--style",
        "wavy",
        "--strands",
        "60",
        "--points",
        "8",
        "-o",
        g.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["outputs"][0], g.to_str().unwrap());
    assert_eq!(
        (v["strands"].as_u64(), v["points"].as_u64()),
        (Some(60), Some(480))
    );
    let e = dir.join("e.hair");
    let v = json(&[
        "groom",
        "edit",
        g.to_str().unwrap(),
        "--length",
        "0.5",
        "-o",
        e.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["outputs"][0], e.to_str().unwrap());
    assert_eq!(v["strands"], 60);
    let c = dir.join("c.data");
    let v = json(&["convert", e.to_str().unwrap(), c.to_str().unwrap(), "--json"]);
    assert_eq!(
        (v["outputs"][0].as_str(), v["strands"].as_u64()),
        (c.to_str(), Some(60))
    );
    let p = dir.join("p.png");
    let v = json(&[
        "preview",
        g.to_str().unwrap(),
        "-o",
        p.to_str().unwrap(),
        "--size",
        "64x64",
        "--json",
    ]);
    assert_eq!((v["width"].as_u64(), v["height"].as_u64()), (Some(64), Some(64)));
    assert!(p.is_file());
    // A cache converted to metres, Z up.
    let tc = dir.join("s.tcache");
    tress_ok(&[
        "simulate",
        "--groom",
        g.to_str().unwrap(),
        "--motion",
        "turn",
        "--frames",
        "1-3",
        "-o",
        tc.to_str().unwrap(),
    ]);
    let abc = dir.join("s.abc");
    let v = json(&[
        "convert",
        tc.to_str().unwrap(),
        abc.to_str().unwrap(),
        "--units",
        "m",
        "--out-up",
        "z",
        "--json",
    ]);
    assert_eq!(
        (v["frames"].as_u64(), v["units"].as_str(), v["up"].as_str()),
        (Some(3), Some("m"), Some("Z"))
    );
    // A farm template, in YAML and in JSON.
    let job = dir.join("j.toml");
    std::fs::write(
        &job,
        "name = \"j\"\noutput = \"out\"\nframes = \"1-4\"\n[groom]\npreset = \"wavy\"\nstrands = 50\n",
    )
    .unwrap();
    let t = dir.join("t.yaml");
    let v = json(&[
        "farm",
        "export",
        job.to_str().unwrap(),
        "-o",
        t.to_str().unwrap(),
        "--chunks",
        "2",
        "--json",
    ]);
    assert_eq!(
        (v["outputs"][0].as_str(), v["chunks"].as_u64()),
        (t.to_str(), Some(2))
    );
    // The same template as JSON: every step of the YAML one, in order.
    let v = json(&[
        "farm",
        "export",
        job.to_str().unwrap(),
        "-o",
        dir.join("t.json").to_str().unwrap(),
        "--chunks",
        "2",
        "--json",
    ]);
    assert_eq!(v["format"], "json");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("t.json")).unwrap()).unwrap();
    assert_eq!(doc["specificationVersion"], "jobtemplate-2023-09");
    let steps: Vec<String> = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("- name: '{}'", s["name"].as_str().unwrap()))
        .collect();
    let yaml = std::fs::read_to_string(&t).unwrap();
    let yaml_steps: Vec<&str> = yaml
        .lines()
        .skip_while(|l| *l != "steps:")
        .filter(|l| l.starts_with("- name: "))
        .collect();
    assert_eq!(steps, yaml_steps);
}

/// `tress bench shot --json` at a small size, the neural job alone: the keys a farm report
/// reads (`seconds`, `peak_memory_gib`), every production stage timed in order, and the
/// Alembic it reports is the one written (its size, and every frame and strand in it as
/// `tress inspect` reads it back).
#[test]
fn the_shot_benchmark_reports_its_stages_and_writes_its_cache() {
    let dir = temp_dir("cli-bench-shot");
    let o = tress(&[
        "bench",
        "shot",
        "--strands",
        "1500",
        "--frames",
        "3",
        "--shot-job",
        "neural",
        "--output",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (v["strands"].as_u64(), v["frames"].as_u64()),
        (Some(1500), Some(3))
    );
    let stages: Vec<(&str, &str)> = v["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["job"].as_str().unwrap(), s["stage"].as_str().unwrap()))
        .collect();
    let want = ["prepare", "guides", "guide_sim", "upsample", "write"];
    assert_eq!(stages, want.map(|s| ("neural", s)));
    let total: f64 = v["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["seconds"].as_f64().unwrap())
        .sum();
    let seconds = v["seconds"].as_f64().unwrap();
    assert!(
        total > 0.0 && total <= seconds,
        "{total} s of stages, {seconds} s in all"
    );
    if cfg!(target_os = "linux") {
        let peak = v["peak_memory_gib"].as_f64().unwrap();
        assert!(peak > 0.0 && peak < 64.0, "{peak} GiB");
    }
    let abc = dir.join("neural/out/hair.abc");
    assert_eq!(v["abc_bytes"][0][0], "neural/hair.abc");
    assert_eq!(
        v["abc_bytes"][0][1].as_u64(),
        Some(std::fs::metadata(&abc).unwrap().len())
    );
    let i = tress(&["inspect", abc.to_str().unwrap(), "--json"]);
    assert!(i.status.success(), "{}", stderr(&i));
    let i: serde_json::Value = serde_json::from_str(&stdout(&i)).unwrap();
    assert_eq!(i["strand_count"], 1500);
    let curves = i["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["schema"] == "Curves")
        .unwrap();
    assert_eq!(curves["samples"], 3);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The prop jobs of `examples/props` extend `examples/rod.toml` from another folder: each plans
/// its own prop, the rod job's groom, motion and training, and an output beside the other
/// examples' (paths relative to the file that names them), never inside `examples/`.
#[test]
fn the_prop_examples_extend_the_rod_job_from_their_folder() {
    // Absolute, `..` resolved without touching the disk (outputs need not exist).
    let normal = |p: &str| tress::pipeline::bundle::normal(&std::path::absolute(p).unwrap());
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let plan = |job: &std::path::Path| -> serde_json::Value {
        let o = tress(&["run", job.to_str().unwrap(), "--dry-run", "--json"]);
        assert!(o.status.success(), "{}: {}", job.display(), stderr(&o));
        serde_json::from_str(&stdout(&o)).unwrap()
    };
    let rod = plan(&root.join("examples/rod.toml"));
    let root_dir = root.to_str().unwrap();
    assert_eq!(
        normal(rod["output"].as_str().unwrap()),
        normal(&format!("{root_dir}/out/rod"))
    );
    let mut props = 0;
    for e in std::fs::read_dir(root.join("examples/props")).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let v = plan(&path);
        let job = &v["job"];
        for key in ["groom", "motion", "training", "material", "simulate"] {
            assert_eq!(job[key], rod["job"][key], "{name}: [{key}] is the rod job's");
        }
        assert_eq!(
            job["colliders"].as_array().map(Vec::len),
            Some(1),
            "{name}: one prop"
        );
        assert_ne!(job["colliders"], rod["job"]["colliders"], "{name}: its own prop");
        assert_eq!(
            normal(v["output"].as_str().unwrap()),
            normal(&format!("{root_dir}/out/props/{name}")),
            "{name}"
        );
        props += 1;
    }
    assert!(props >= 5, "{props} prop jobs");
}
