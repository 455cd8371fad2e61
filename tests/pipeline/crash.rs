//! Farm safety: a job killed (SIGKILL) at random moments and run again, and duplicate runs of a
//! job started at once, end with the outputs of an uninterrupted run, byte for byte; nothing is
//! left stuck. Damaged outputs of a finished job re-run exactly the stages that made them.
//!
//! `TRESS_CRASH_KILLS` sets how many kills (default 50, the quick run; the closing note
//! reports a longer one).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{common, hashes, run, statuses, write_job};

fn spawn(job: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tress"))
        .args(["run", job.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The stage a killed run was in, from its progress lines (`<stage> running` without its
/// `<stage> done`), or "between stages".
fn stage_at_kill(child: &mut Child) -> String {
    use std::io::Read as _;
    let mut text = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut text);
    }
    let mut open: Option<String> = None;
    for line in text.lines() {
        let mut w = line.split_whitespace();
        match (w.next(), w.next()) {
            (Some(stage), Some("running")) => open = Some(stage.to_string()),
            (Some(_), Some("done")) => open = None,
            _ => {}
        }
    }
    open.unwrap_or_else(|| "between stages".into())
}

/// Lock files and hidden temporaries left in the output folder.
fn leftovers(out: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![out.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if p.is_dir() {
                stack.push(p);
            } else if name.ends_with(".lock") || name.ends_with(".partial") {
                found.push(p.display().to_string());
            }
        }
    }
    found
}

#[test]
fn killed_and_duplicate_runs_end_with_the_uninterrupted_outputs() {
    let kills: usize = std::env::var("TRESS_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let dir = common::temp_dir("crash");
    let job = write_job(&dir, "out", "");
    let out = dir.join("out");
    let t = Instant::now();
    run(&["run", job.to_str().unwrap(), "--json"]);
    let uninterrupted = t.elapsed();
    let reference = hashes(&out);
    assert!(reference.len() > 8, "{reference:?}");

    let mut rng = common::Rng(43);
    let (mut killed, mut rounds) = (0, 0);
    let mut hit = std::collections::BTreeMap::new();
    while killed < kills {
        // A round: from an empty folder, runs killed at random moments one after the other
        // (each resuming what the last left), then a run to the end.
        let _ = std::fs::remove_dir_all(&out);
        rounds += 1;
        for _ in 0..5 {
            let mut child = spawn(&job);
            let ms = rng.below(uninterrupted.as_millis().max(1) as usize);
            std::thread::sleep(Duration::from_millis(ms as u64));
            if child.try_wait().unwrap().is_none() {
                child.kill().unwrap();
                killed += 1;
                child.wait().unwrap();
                *hit.entry(stage_at_kill(&mut child)).or_insert(0usize) += 1;
            } else {
                child.wait().unwrap();
            }
        }
        let o = common::tress(&["run", job.to_str().unwrap()]);
        assert!(
            o.status.success(),
            "round {rounds}, after {killed} kills: {}",
            common::stderr(&o)
        );
        let now = hashes(&out);
        assert_eq!(
            now, reference,
            "round {rounds}, after {killed} kills: outputs differ"
        );
        assert_eq!(leftovers(&out), Vec::<String>::new(), "round {rounds}");
    }
    eprintln!(
        "{killed} kills in {rounds} rounds (uninterrupted run {uninterrupted:?}); every round ended with the same outputs; killed while running: {hit:?}"
    );

    // Duplicate runs started at once: all succeed, the outputs are the uninterrupted run's.
    for round in 0..2 {
        let _ = std::fs::remove_dir_all(&out);
        let children: Vec<Child> = (0..5).map(|_| spawn(&job)).collect();
        for (i, c) in children.into_iter().enumerate() {
            let o = c.wait_with_output().unwrap();
            assert!(
                o.status.success(),
                "duplicate run {i} of round {round}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        assert_eq!(hashes(&out), reference, "duplicates, round {round}");
        assert_eq!(leftovers(&out), Vec::<String>::new());
        // And a later run finds everything done.
        let again = run(&["run", job.to_str().unwrap(), "--json"]);
        assert!(
            statuses(&again)
                .iter()
                .all(|(s, v)| v == "cached" || s == "report"),
            "{again}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every output of a finished job, damaged in turn (deleted, truncated, or one byte changed
/// with the size kept), re-runs exactly the stage whose record covers it (and the stages
/// downstream only where the re-made files differ: the upsampling's timings); the outputs come
/// back byte for byte.
#[test]
fn damaged_outputs_rerun_exactly_the_stage_that_made_them() {
    let dir = common::temp_dir("damaged");
    let job = write_job(&dir, "out", "");
    let out = dir.join("out");
    run(&["run", job.to_str().unwrap(), "--json"]);
    let reference = hashes(&out);
    // Which stage made which file, from the records.
    let mut made = Vec::new();
    for e in std::fs::read_dir(out.join(".tress")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.ends_with(".json") || name.starts_with("report") {
            continue;
        }
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
        for o in r["outputs"].as_array().unwrap() {
            made.push((
                o["path"].as_str().unwrap().to_string(),
                r["stage"].as_str().unwrap().to_string(),
            ));
        }
    }
    made.sort();
    assert!(made.len() > 8, "{made:?}");
    for (k, (file, stage)) in made.iter().enumerate() {
        let p = out.join(file);
        let how = match k % 3 {
            0 => {
                std::fs::remove_file(&p).unwrap();
                "deleted"
            }
            1 => {
                let b = std::fs::read(&p).unwrap();
                std::fs::write(&p, &b[..b.len() / 2]).unwrap();
                "truncated"
            }
            _ => {
                let mut b = std::fs::read(&p).unwrap();
                let i = b.len() / 2;
                b[i] ^= 0x01;
                std::fs::write(&p, b).unwrap();
                "changed in place"
            }
        };
        let o = common::tress(&["run", job.to_str().unwrap(), "--json"]);
        assert!(o.status.success(), "{file} {how}: {}", common::stderr(&o));
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let ran: Vec<String> = statuses(&report)
            .into_iter()
            .filter(|(s, v)| v == "ran" && s != "report")
            .map(|(s, _)| s)
            .collect();
        // The upsampling also re-writes its wall-clock timings (`parts/times.*.json`), which
        // the previews and scores read: those two downstream stages then run again too.
        let mut expected = vec![stage.clone()];
        if stage == "upsample" {
            expected.extend(["eval".to_string(), "preview".to_string()]);
        }
        let mut ran = ran;
        ran.sort();
        expected.sort();
        assert_eq!(ran, expected, "{file} {how}: {report}");
        assert_eq!(hashes(&out), reference, "{file} {how}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
