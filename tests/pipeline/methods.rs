//! Methods in jobs and their commands: `tress upsample` and `simulate --mode reduced` against
//! the stages, the neural interpolator and the drape end to end.

use super::*;

/// `tress upsample` on a job's guide cache and prepared groom writes the same cache as the
/// job's upsample stage (without its collision projection).
#[test]
fn upsample_command_matches_the_upsample_stage() {
    let dir = common::temp_dir("pipeline-upsample");
    let job = write_job(&dir, "u", "");
    let text = std::fs::read_to_string(&job)
        .unwrap()
        .replace("count = 20", "count = 20\nresolve_collisions = false");
    std::fs::write(&job, text).unwrap();
    run(&[
        "run",
        job.to_str().unwrap(),
        "--only",
        "prepare",
        "simulate",
        "guides",
        "guide_sim",
        "upsample",
        "--json",
    ]);
    let out = dir.join("u");
    let up = dir.join("up.tcache");
    upsample_job_guides(&out, &["--method", "idw"], &up);
    let a = tress::pipeline::engine::file_sha256(&up).unwrap();
    let b = tress::pipeline::engine::file_sha256(&out.join("parts/idw.1-8.tcache")).unwrap();
    assert_eq!(a, b);
    // With --json: one JSON document naming the output, no OUTPUT_FILE lines, the same file.
    let up2 = dir.join("up2.tcache");
    let o = common::tress(&[
        "upsample",
        "--method",
        "idw",
        "--guides",
        out.join("guides.tcache").to_str().unwrap(),
        "--groom",
        out.join("groom.tcache").to_str().unwrap(),
        "-o",
        up2.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["outputs"][0], up2.to_str().unwrap(), "{v}");
    assert!(!String::from_utf8_lossy(&o.stdout).contains("OUTPUT_FILE"));
    assert_eq!(tress::pipeline::engine::file_sha256(&up2).unwrap(), a);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tress simulate --mode reduced` simulates guides and writes the whole groom.
#[test]
fn simulate_reduced_mode_writes_the_whole_groom() {
    let dir = common::temp_dir("simulate-reduced");
    let out = dir.join("red.tcache");
    let o = common::tress(&[
        "simulate",
        "--groom",
        "wavy",
        "--strands",
        "300",
        "--mode",
        "reduced",
        "--guides",
        "30",
        "--motion",
        "gentle",
        "--frames",
        "1-6",
        "--preroll",
        "2",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("upsampled to 300 strands"));
    let mut r = tress_formats::tcache::TcacheReader::open(&out).unwrap();
    assert_eq!(r.header.rest.counts.len(), 300);
    assert_eq!(r.len(), 6);
    assert!(r.frame(5).unwrap().iter().flatten().all(|c| c.is_finite()));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A job with the neural method trains it on the training simulation, shares its uv-grid
/// guides with the other methods, scores it, and `tress upsample --method neural` with the
/// job's model writes the same bytes as the job's upsample stage.
#[test]
fn a_job_trains_and_scores_the_neural_interpolator() {
    let dir = common::temp_dir("pipeline-neural");
    std::fs::write(
        dir.join("nn.toml"),
        "[grid]\nn = 18\nstride = 2\npoints = 12\n[net]\nguide_channels = 8\n[train]\nsteps = 6\nbatch = 2\nvalidate_every = 3\ncheckpoint_every = 2\nvalidation = 0.25\n[displace]\nsteps = 3\nchannels = 4\ncritic_channels = 2\nvalidate_every = 2\n",
    )
    .unwrap();
    let job = write_job(
        &dir,
        "n",
        "[training]\nmotion = \"turn\"\nframes = \"1-12\"\n[neural]\nconfig = \"nn.toml\"\n",
    );
    let text = std::fs::read_to_string(&job).unwrap().replace(
        "count = 20",
        "count = 20\nmethods = [\"neural\", \"idw\"]\nresolve_collisions = false",
    );
    std::fs::write(&job, text).unwrap();
    let report = run(&["run", job.to_str().unwrap(), "--json"]);
    let st = statuses(&report);
    assert_eq!(st.get("train").map(String::as_str), Some("ran"), "{st:?}");
    let out = dir.join("n");
    let guides: Value = serde_json::from_slice(&std::fs::read(out.join("guides.json")).unwrap()).unwrap();
    let neural: Value = serde_json::from_slice(&std::fs::read(out.join("neural.json")).unwrap()).unwrap();
    assert_eq!(
        guides["guides"].as_array().unwrap().len() as u64,
        neural["guides"].as_u64().unwrap()
    );
    assert_eq!(neural["steps"], 6);
    let displace: Value = serde_json::from_slice(&std::fs::read(out.join("displace.json")).unwrap()).unwrap();
    assert_eq!(displace["steps"], 3);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("neural interpolation"), "{md}");
    // 000 Table 1's ablation: the same model without its displacement generator, its own row.
    assert!(
        md.contains("neural interpolation w/o fine-scale displacement"),
        "{md}"
    );
    // Rows and inputs name the guides actually used (the grid's), not `guides.count`.
    let n = guides["guides"].as_array().unwrap().len();
    assert!(
        md.contains(&format!("| {n} guides + neural interpolation")),
        "{md}"
    );
    assert!(
        md.contains(&format!("{n} (the neural interpolator's uv-grid guides")),
        "{md}"
    );
    let up = dir.join("up.tcache");
    let model = out.join("displaced.tnn");
    upsample_job_guides(
        &out,
        &["--method", "neural", "--model", model.to_str().unwrap()],
        &up,
    );
    let a = tress::pipeline::engine::file_sha256(&up).unwrap();
    let b = tress::pipeline::engine::file_sha256(&out.join("parts/neural.1-8.tcache")).unwrap();
    assert_eq!(a, b);
    upsample_job_guides(
        &out,
        &[
            "--method",
            "neural",
            "--model",
            model.to_str().unwrap(),
            "--no-displacement",
        ],
        &up,
    );
    let a2 = tress::pipeline::engine::file_sha256(&up).unwrap();
    let b2 =
        tress::pipeline::engine::file_sha256(&out.join("parts/neural_no_displacement.1-8.tcache")).unwrap();
    assert_eq!(a2, b2);
    assert_ne!(a, a2, "the displacement changed nothing");
    // A job given the trained model (`[neural] model`, no [training]) trains nothing and
    // upsamples the same bytes as the job that trained it.
    let with_methods = |path: &Path| {
        let text = std::fs::read_to_string(path).unwrap().replace(
            "count = 20",
            "count = 20\nmethods = [\"neural\", \"idw\"]\nresolve_collisions = false",
        );
        std::fs::write(path, text).unwrap();
    };
    let given = write_job(&dir, "g", &format!("[neural]\nmodel = \"{}\"\n", model.display()));
    with_methods(&given);
    let st = statuses(&run(&["run", given.to_str().unwrap(), "--json"]));
    for s in ["train_sim", "train", "displace"] {
        assert_eq!(st.get(s), None, "{st:?}");
    }
    let g_out = dir.join("g");
    for (part, want) in [("neural", &a), ("neural_no_displacement", &a2)] {
        let got =
            tress::pipeline::engine::file_sha256(&g_out.join(format!("parts/{part}.1-8.tcache"))).unwrap();
        assert_eq!(&got, want, "{part}");
    }
    let md = std::fs::read_to_string(g_out.join("report.md")).unwrap();
    assert!(md.contains("(given, not trained here)"), "{md}");
    // Training keys beside a given model, and a missing model file, are errors naming them.
    for (extra, needle) in [
        (
            format!("[neural]\nmodel = \"{}\"\nsteps = 3\n", model.display()),
            "neural.model",
        ),
        ("[neural]\nmodel = \"missing.tnn\"\n".to_string(), "missing.tnn"),
    ] {
        let bad = write_job(&dir, "bad", &extra);
        with_methods(&bad);
        let o = common::tress(&["run", bad.to_str().unwrap()]);
        assert!(!o.status.success());
        assert!(common::stderr(&o).contains(needle), "{}", common::stderr(&o));
    }
    // Changing only the generator's options retrains the generator, not W_θ.
    let nn = std::fs::read_to_string(dir.join("nn.toml")).unwrap();
    std::fs::write(
        dir.join("nn.toml"),
        nn.replace("[displace]\nsteps = 3", "[displace]\nsteps = 2"),
    )
    .unwrap();
    let st = statuses(&run(&["run", job.to_str().unwrap(), "--json"]));
    assert_eq!(st.get("train").map(String::as_str), Some("cached"), "{st:?}");
    assert_eq!(st.get("displace").map(String::as_str), Some("ran"), "{st:?}");
    // 000 Table 1's loss ablations: each its own W_θ, trained without the terms, its own row;
    // adding them trains only them.
    let with_ablations = std::fs::read_to_string(&job).unwrap().replace(
        "config = \"nn.toml\"",
        "config = \"nn.toml\"\nablations = [\"data_only\", \"no_length\"]",
    );
    std::fs::write(&job, &with_ablations).unwrap();
    let st = statuses(&run(&["run", job.to_str().unwrap(), "--json"]));
    assert_eq!(st.get("train").map(String::as_str), Some("cached"), "{st:?}");
    assert_eq!(st.get("displace").map(String::as_str), Some("cached"), "{st:?}");
    assert_eq!(st.get("ablate").map(String::as_str), Some("ran"), "{st:?}");
    let loss_of = |file: &str| {
        tress::neural::file::NeuralFile::read(&out.join(file))
            .unwrap()
            .header["config"]["loss"]
            .clone()
    };
    let (full, data_only, no_length) = (
        loss_of("model.tnn"),
        loss_of("model.data_only.tnn"),
        loss_of("model.no_length.tnn"),
    );
    assert!(full["length"].as_f64().unwrap() > 0.0 && full["tempo"].as_f64().unwrap() > 0.0);
    assert_eq!(data_only["data"], full["data"]);
    for k in ["length", "snap", "tempo"] {
        assert_eq!(data_only[k].as_f64(), Some(0.0), "{data_only}");
    }
    assert_eq!(no_length["length"].as_f64(), Some(0.0));
    assert_eq!(no_length["tempo"], full["tempo"]);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("neural interpolation, L_data only (w/o displacement)"),
        "{md}"
    );
    assert!(
        md.contains("neural interpolation, w/o L_len (w/o displacement)"),
        "{md}"
    );
    // The row is the ablated model through `tress upsample`.
    let m = out.join("model.no_length.tnn");
    upsample_job_guides(&out, &["--method", "neural", "--model", m.to_str().unwrap()], &up);
    assert_eq!(
        tress::pipeline::engine::file_sha256(&up).unwrap(),
        tress::pipeline::engine::file_sha256(&out.join("parts/neural_no_length.1-8.tcache")).unwrap()
    );
    // An ablation the config already is (no L_snap with a snap weight of 0) is refused.
    std::fs::write(&job, with_ablations.replace("\"no_length\"", "\"no_snap\"")).unwrap();
    std::fs::write(dir.join("nn.toml"), format!("{nn}[loss]\nsnap = 0.0\n")).unwrap();
    let o = common::tress(&["run", job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        common::stderr(&o).contains("neural.ablations: no_snap"),
        "{}",
        common::stderr(&o)
    );
    // A grid too small for the generator is an error naming the way out, before anything runs.
    std::fs::write(dir.join("nn.toml"), nn.replace("n = 18", "n = 8")).unwrap();
    let o = common::tress(&["run", job.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        common::stderr(&o).contains("displace_steps = 0"),
        "{}",
        common::stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// examples/drape.toml end to end (six frames, with a quickly trained network where the
/// example expects drape_small): the drape stage drapes every frame, the row `drape` keeps
/// every root where the simulation pins it on the moving head and the strands' lengths, the
/// report scores it; the stage split in two chunks, one of them on one thread, drapes the same
/// frames bit for bit; a missing model is a clear error.
#[test]
fn the_drape_example_runs_end_to_end() {
    let dir = common::temp_dir("pipeline-drape");
    let examples = dir.join("examples");
    std::fs::create_dir_all(&examples).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let example =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/drape.toml")).unwrap();
    let job = examples.join("drape.toml");
    std::fs::write(&job, &example).unwrap();
    // No model yet: the drape stage says which and how to make one.
    let o = common::tress(&["run", job.to_str().unwrap(), "--only", "prepare", "drape"]);
    assert_eq!(o.status.code(), Some(2));
    let e = common::stderr(&o);
    assert!(
        e.contains("drape.model") && e.contains("drape_small.tnn") && e.contains("train drape"),
        "{e}"
    );
    let cfg = dir.join("tiny.toml");
    std::fs::write(
        &cfg,
        "[net]\ntexture = 8\npoints = 8\n[[groom]]\nname = \"wavy\"\ngroom = \"wavy\"\nstrands = 150\n\
         [autoencoder]\nsteps = 20\n[train]\nsteps = 20\nbatch = 1\nvalidate_every = 0\nvalidation_poses = 1\n",
    )
    .unwrap();
    let model = dir.join("out/drape_small.tnn");
    common::train_drape(&cfg, &model);
    let report = run(&["run", job.to_str().unwrap(), "--frames", "1001-1006", "--json"]);
    let st = statuses(&report);
    assert_eq!(st.get("drape").map(String::as_str), Some("ran"), "{st:?}");
    let out = dir.join("out/drape");
    let drape = out.join("drape/drape.1001-1006.tcache");
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("drape/drape.1001-1006.json")).unwrap()).unwrap();
    assert_eq!(summary["per_frame"].as_array().unwrap().len(), 6, "{summary}");
    assert_eq!(summary["texture"], 8);
    // The row: roots where the simulation pins them, lengths kept, against the ground truth.
    let (row, gt) = (out.join("parts/drape.1001-1006.tcache"), out.join("gt.tcache"));
    for i in [0, 5] {
        let (a, b) = (cache_strands(&row, i), cache_strands(&gt, i));
        assert_eq!(a.len(), 2000);
        let mut worst_root = 0.0f32;
        let mut length_error = 0.0f64;
        for (s, g) in a.iter().zip(&b) {
            let d = (0..3).map(|k| (s[0][k] - g[0][k]).powi(2)).sum::<f32>().sqrt();
            worst_root = worst_root.max(d);
            length_error += (strand_length(s) / strand_length(g) - 1.0).abs() / a.len() as f64;
        }
        assert!(
            worst_root < 1e-3,
            "frame {i}: a root {worst_root} cm off the head"
        );
        assert!(length_error < 0.01, "frame {i}: mean length error {length_error}");
    }
    let metrics: Value = serde_json::from_slice(&std::fs::read(out.join("metrics.json")).unwrap()).unwrap();
    assert!(
        metrics["methods"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["key"] == "drape"),
        "{metrics}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("quasi-static drape") && md.contains("Quasi-static drape (003), solver `network`"),
        "{md}"
    );
    // Two chunks (the second on one thread) drape the same frames.
    let job2 = examples.join("chunked.toml");
    std::fs::write(&job2, example.replace("../out/drape\"", "../out/chunked\"")).unwrap();
    let j2 = job2.to_str().unwrap();
    run(&["run", j2, "--frames", "1001-1006", "--only", "prepare", "--json"]);
    for extra in [&["--chunk", "0/2"][..], &["--chunk", "1/2", "--threads", "1"]] {
        let mut args = vec!["run", j2, "--frames", "1001-1006", "--only", "drape", "--json"];
        args.extend_from_slice(extra);
        run(&args);
    }
    let parts = dir.join("out/chunked/drape");
    let mut chunked = Vec::new();
    for (name, n) in [("drape.1001-1003.tcache", 3), ("drape.1004-1006.tcache", 3)] {
        for i in 0..n {
            chunked.push(cache_strands(&parts.join(name), i));
        }
    }
    for (i, c) in chunked.iter().enumerate() {
        assert!(*c == cache_strands(&drape, i), "frame {i} differs when chunked");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A job's drape by a direct solver takes its Cosserat stiffness from the job's `[material]`
/// (the cantilever test of `neural::drape::calibrate`, recorded in the stage's figures): the
/// draped tips fall as far as the simulated ones, a stiffer material gives a stiffer drape, and
/// `[drape.material]` is taken as written.
#[test]
fn a_direct_drape_takes_its_stiffness_from_the_job_material() {
    let dir = common::temp_dir("pipeline-drape-material");
    let drape = "[drape]\nenabled = true\nsolver = \"lbfgs\"\ntexture = 8\npoints = 8\niterations = 2\n";
    let figures = |out: &str, extra: &str| -> Value {
        let job = write_job(&dir, out, &format!("{drape}{extra}"));
        run(&[
            "run",
            job.to_str().unwrap(),
            "--frames",
            "1-1",
            "--only",
            "prepare",
            "drape",
            "--json",
        ]);
        serde_json::from_slice(&std::fs::read(dir.join(out).join("drape/drape.1-1.json")).unwrap()).unwrap()
    };
    let soft = figures("soft", "");
    let stiff = figures(
        "stiff",
        "[material]\nbend = 1.0e8\ntwist = 5.0e7\naltitude = 3.0e6\n",
    );
    let own = figures("own", "[drape.material]\ncosserat = 42.0\n");
    let k = |v: &Value| v["calibration"]["cosserat"].as_f64().unwrap();
    for v in [&soft, &stiff] {
        let c = &v["calibration"];
        assert!(k(v) > 0.0 && k(v).is_finite(), "{c}");
        assert_eq!(v["material"]["cosserat"].as_f64(), Some(k(v)));
        assert!(
            v["material_from"]
                .as_str()
                .unwrap()
                .starts_with("[material] wavy"),
            "{v}"
        );
        let (sim, drape) = (
            c["sim_drop_cm"].as_f64().unwrap(),
            c["drape_drop_cm"].as_f64().unwrap(),
        );
        assert!(sim > 0.0 && (drape - sim).abs() <= 0.01 * sim, "{c}");
    }
    assert!(k(&stiff) > 1.2 * k(&soft), "{} against {}", k(&stiff), k(&soft));
    assert_eq!(own["material"]["cosserat"].as_f64(), Some(42.0));
    assert!(
        own["calibration"].is_null() && own["material_from"] == "drape.material",
        "{own}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A ball prop in the hanging hair of a small job: the `contact` correction leaves no normal
/// vertex inside it where the same method without it leaves some, and changes only the strands
/// the ball touches (every other strand, guides included, bit-identical to the row without it).
#[test]
fn the_contact_correction_clears_a_prop_and_moves_only_the_strands_it_touches() {
    use tress_formats::tcache::TcacheReader;
    let dir = common::temp_dir("pipeline-contact");
    let job = write_job(
        &dir,
        "c",
        "[[colliders]]\nshape = \"sphere\"\ncenter = [0.0, -14.0, -9.0]\nradius = 3.0\n",
    );
    let text = std::fs::read_to_string(&job).unwrap().replace(
        "count = 20",
        "count = 20\nresolve_collisions = false\noracle = false\nmethods = [\"idw+none\", \"idw+contact\"]",
    );
    std::fs::write(&job, text).unwrap();
    run(&["run", job.to_str().unwrap(), "--json"]);
    let out = dir.join("c");
    let metrics: Value = serde_json::from_slice(&std::fs::read(out.join("metrics.json")).unwrap()).unwrap();
    let inside = |key: &str| -> f64 {
        metrics["methods"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["key"] == key)
            .unwrap_or_else(|| panic!("no row {key}: {metrics}"))["summary"]["penetration_props_fraction"]
            .as_f64()
            .unwrap()
    };
    let (none, contact) = (inside("idw+none"), inside("idw+contact"));
    assert!(
        none > 1e-3,
        "the ball holds {none} of the vertices without contact: not a test"
    );
    // What is left inside can only be guide vertices (simulated, never moved by a correction).
    let read = |name: &str| -> Vec<Vec<[f32; 3]>> {
        let mut r = TcacheReader::open(out.join("parts").join(name)).unwrap();
        (0..r.len()).map(|i| r.frame(i).unwrap()).collect()
    };
    let (a, b) = (read("idw_none.1-8.tcache"), read("idw_contact.1-8.tcache"));
    let header = TcacheReader::open(out.join("parts/idw_none.1-8.tcache"))
        .unwrap()
        .header;
    let counts: Vec<usize> = header.rest.counts.iter().map(|&c| c as usize).collect();
    let (mut moved, mut kept) = (0, 0);
    for (fa, fb) in a.iter().zip(&b) {
        let mut o = 0;
        for &c in &counts {
            if fa[o..o + c] == fb[o..o + c] {
                kept += 1;
            } else {
                moved += 1;
                // Only a strand the ball touches (some particle within its margin) may move.
                let near = fa[o..o + c].iter().any(|p| {
                    let d = ((p[0] - 0.0).powi(2) + (p[1] + 14.0).powi(2) + (p[2] + 9.0).powi(2)).sqrt();
                    d < 3.0 + 0.031
                });
                assert!(near, "a strand the ball does not touch moved");
            }
            o += c;
        }
    }
    assert!(moved > 0 && kept > moved, "{moved} strands moved, {kept} kept");
    assert!(
        contact < none / 10.0,
        "inside the ball: {contact} with contact, {none} without"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `spread` correction in a job, beside `projection` on the same interpolation (wired
/// through the job's rows to the upsampler): both first give every strand its rest lengths
/// back, so some strand frames (those no solid touches) are the same in both rows and others
/// differ; spread leaves no more vertices inside the head, body and ball than the projection,
/// and keeps lengths within 1 % on average.
#[test]
fn the_spread_correction_clears_the_solids_as_the_projection_does() {
    use tress_formats::tcache::TcacheReader;
    let dir = common::temp_dir("pipeline-spread");
    let job = write_job(
        &dir,
        "s",
        "[[colliders]]\nshape = \"sphere\"\ncenter = [0.0, -14.0, -9.0]\nradius = 3.0\n",
    );
    let text = std::fs::read_to_string(&job).unwrap().replace(
        "count = 20",
        "count = 20\noracle = false\nmethods = [\"idw+projection\", \"idw+spread\"]",
    );
    std::fs::write(&job, text).unwrap();
    run(&["run", job.to_str().unwrap(), "--json"]);
    let out = dir.join("s");
    let metrics: Value = serde_json::from_slice(&std::fs::read(out.join("metrics.json")).unwrap()).unwrap();
    let summary = |key: &str| -> Value {
        metrics["methods"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["key"] == key)
            .unwrap_or_else(|| panic!("no row {key}: {metrics}"))["summary"]
            .clone()
    };
    let (walk, spread) = (summary("idw+projection"), summary("idw+spread"));
    let f = |s: &Value, k: &str| s[k].as_f64().unwrap();
    for k in ["penetration_fraction", "penetration_props_fraction"] {
        assert!(
            f(&spread, k) <= f(&walk, k) + 1e-4,
            "{k}: {spread} against {walk}"
        );
    }
    assert!(f(&spread, "length_error_mean") < 0.01, "{spread}");
    let read = |name: &str| -> Vec<Vec<[f32; 3]>> {
        let mut r = TcacheReader::open(out.join("parts").join(name)).unwrap();
        (0..r.len()).map(|i| r.frame(i).unwrap()).collect()
    };
    let (a, b) = (read("idw_projection.1-8.tcache"), read("idw_spread.1-8.tcache"));
    let header = TcacheReader::open(out.join("parts/idw_projection.1-8.tcache"))
        .unwrap()
        .header;
    let counts: Vec<usize> = header.rest.counts.iter().map(|&c| c as usize).collect();
    let (mut same, mut changed) = (0, 0);
    for (fa, fb) in a.iter().zip(&b) {
        let mut o = 0;
        for &c in &counts {
            if fa[o..o + c] == fb[o..o + c] {
                same += 1;
            } else {
                changed += 1;
            }
            o += c;
        }
    }
    assert!(
        same > 0 && changed > 0,
        "{same} strand frames the same, {changed} changed"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
