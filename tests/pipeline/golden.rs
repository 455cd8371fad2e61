//! Golden results: every stage of a small job (ground truth, guides, training simulation,
//! skinning fit, two-way guides, upsampling by IDW, static and adaptive skinning, Alembic, USD,
//! PLY and tcache outputs, previews, metrics) is run, and each output is compared with the digest
//! recorded in `tests/golden/stages.json` for the stage's results version.
//!
//! Stage records are keyed on each stage's results version, not on the build of tress (so an
//! upgrade does not re-run a show's simulations). That is only safe while a stage whose results
//! change also raises its version; this test is what enforces it. When it fails:
//! - results changed on purpose: raise `.version(N)` in `src/pipeline/stages/<stage>.rs` (and of
//!   every stage downstream whose outputs change with it), then re-record with
//!   `TRESS_BLESS=1 cargo test --release --test pipeline golden`;
//! - results changed by accident: that is a regression this test caught.
//!
//! JSON outputs are compared without their timings and build names (`seconds`, `ms_per_frame`,
//! …) and with numbers rounded to 6 significant digits; every other file byte for byte (tress's
//! results are bit-identical for any thread count). The neural stages are not part of it: burn's
//! CPU kernels choose their SIMD width from the processor at run time, so their bits may differ
//! between machines.

use super::*;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/stages.json");

/// Keys whose values are timings, dates or builds: left out of a JSON file's digest.
fn volatile(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "second", "time", "ms_per", "_ms", "build", "tress", "date", "elapsed", "threads",
    ]
    .iter()
    .any(|v| k.contains(v))
}

fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !volatile(k))
                .map(|(k, x)| (k.clone(), canonical(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        Value::Number(n) => match n.as_f64() {
            Some(f) if !n.is_i64() && !n.is_u64() && f != 0.0 => Value::String(format!("{f:.5e}")),
            _ => v.clone(),
        },
        _ => v.clone(),
    }
}

fn digest(path: &Path) -> String {
    use sha2::Digest;
    let bytes = std::fs::read(path).unwrap();
    let bytes = if path.extension().is_some_and(|e| e == "json") {
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        serde_json::to_vec(&canonical(&v)).unwrap()
    } else if path.extension().is_some_and(|e| e == "png" || e == "apng") {
        // The pictures, not their compressed bytes: how a deflate stream comes out depends on
        // which deflate implementation the build links (another crate's features can switch
        // flate2's backend), while every decoded frame stays the same.
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0u8; reader.output_buffer_size().unwrap()];
        let mut frames = Vec::new();
        while let Ok(info) = reader.next_frame(&mut buf) {
            frames.extend_from_slice(&info.width.to_le_bytes());
            frames.extend_from_slice(&info.height.to_le_bytes());
            frames.extend_from_slice(&buf[..info.buffer_size()]);
        }
        assert!(!frames.is_empty(), "{}: no frame", path.display());
        frames
    } else if path.extension().is_some_and(|e| e == "abc") {
        // The archive's metadata says when it was written (as Alembic's own writer does).
        let mut b = bytes;
        let key = b"_ai_DateWritten=";
        let at = b
            .windows(key.len())
            .position(|w| w == key)
            .expect("a date in the archive");
        for x in b[at + key.len()..].iter_mut().take_while(|x| **x != b';') {
            *x = b'-';
        }
        b
    } else {
        bytes
    };
    sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn every_stage_gives_its_recorded_results_for_its_version() {
    let root = common::temp_dir("pipeline-golden");
    let job = write_job(
        &root,
        "golden",
        "[training]\nmotion = \"turn\"\nseed = 5\nframes = \"1-12\"\n",
    );
    let text = std::fs::read_to_string(&job)
        .unwrap()
        .replace(
            "count = 20\n",
            "count = 20\nmethods = [\"adaptive\", \"static\", \"idw\"]\n",
        )
        .replace("tcache = true\n", "tcache = true\nusd = true\nply = true\n");
    std::fs::write(&job, text).unwrap();
    let report = run(&["run", job.to_str().unwrap(), "--threads", "2", "--json"]);
    let versions: serde_json::Map<String, Value> =
        serde_json::from_slice(&common::tress(&["run", job.to_str().unwrap(), "--dry-run", "--json"]).stdout)
            .map(|v: Value| {
                v["stages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| (s["stage"].as_str().unwrap().to_string(), s["version"].clone()))
                    .collect()
            })
            .unwrap();
    let out = root.join("golden");
    let mut now = serde_json::Map::new();
    for s in report["stages"].as_array().unwrap() {
        let stage = s["stage"].as_str().unwrap();
        if stage == "report" {
            continue; // a summary of the others, with timings
        }
        let mut files = serde_json::Map::new();
        for o in s["outputs"].as_array().unwrap() {
            let rel = o.as_str().unwrap();
            if rel.starts_with("parts/times.") {
                continue; // timings alone
            }
            files.insert(rel.to_string(), Value::String(digest(&out.join(rel))));
        }
        let version = versions.get(stage).cloned().unwrap_or(Value::Null);
        assert!(version.is_u64(), "no results version for {stage} in the dry run");
        let entry = now
            .entry(stage.to_string())
            .or_insert_with(|| serde_json::json!({"version": version, "outputs": {}}));
        entry["outputs"].as_object_mut().unwrap().extend(files);
    }
    for want in [
        "simulate",
        "train_sim",
        "fit",
        "two_way",
        "upsample",
        "write",
        "preview",
        "eval",
    ] {
        assert!(now.contains_key(want), "the golden job did not run {want}");
    }
    let now = Value::Object(now);
    if std::env::var_os("TRESS_BLESS").is_some() {
        std::fs::create_dir_all(Path::new(GOLDEN).parent().unwrap()).unwrap();
        std::fs::write(GOLDEN, serde_json::to_string_pretty(&now).unwrap() + "\n").unwrap();
        eprintln!("recorded {GOLDEN}");
        return;
    }
    let golden: Value = serde_json::from_str(
        &std::fs::read_to_string(GOLDEN).expect("tests/golden/stages.json (TRESS_BLESS=1 records it)"),
    )
    .unwrap();
    let mut problems = Vec::new();
    for (stage, e) in now.as_object().unwrap() {
        let Some(g) = golden.get(stage) else {
            problems.push(format!("{stage}: not recorded (a new stage? re-record)"));
            continue;
        };
        if g["version"] != e["version"] {
            problems.push(format!(
                "{stage}: results version {} now, {} recorded: re-record after checking its outputs",
                e["version"], g["version"]
            ));
            continue;
        }
        for (file, d) in e["outputs"].as_object().unwrap() {
            match g["outputs"].get(file) {
                None => problems.push(format!("{stage}: {file} is new (re-record and raise the version)")),
                Some(gd) if gd != d => problems.push(format!(
                    "{stage}: {file} changed while the stage's results version stayed {}: raise it in src/pipeline/stages/{stage}.rs (finished runs would be reused with the old results) and re-record",
                    e["version"]
                )),
                Some(_) => {}
            }
        }
        for file in g["outputs"].as_object().unwrap().keys() {
            if e["outputs"].get(file).is_none() {
                problems.push(format!("{stage}: {file} is no longer written"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{}\n(re-record with TRESS_BLESS=1 cargo test --release --test pipeline golden)",
        problems.join("\n")
    );
    let _ = std::fs::remove_dir_all(&root);
}
