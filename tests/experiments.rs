//! The student project (004) end to end: its `.mss` scenes simulate (through `tress simulate
//! --scene` and jobs alike), its springs obey Hooke's law, and its experiment batch trains the
//! head-motion → trajectory baseline that is scored on held-out experiments.

mod common;

use std::path::{Path, PathBuf};

use common::{stdout, temp_dir, tress_ok};
use glam::Vec3;
use tress::formats::tcache::TcacheReader;

fn student_scene() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/student.mss")
}

fn frames(path: &Path) -> Vec<Vec<Vec3>> {
    let mut r = TcacheReader::open(path).unwrap();
    (0..r.len())
        .map(|i| r.frame(i).unwrap().into_iter().map(Vec3::from_array).collect())
        .collect()
}

#[test]
fn a_scene_from_the_student_project_simulates() {
    let dir = temp_dir("mss-sim");
    let out = dir.join("s.tcache");
    let o = tress_ok(&[
        "simulate",
        "--scene",
        student_scene().to_str().unwrap(),
        "--frames",
        "1-48",
        "--json",
        "-o",
        out.to_str().unwrap(),
    ]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["strands"], 167);
    assert_eq!(doc["particles"], 1336);
    assert!(
        doc["head"].as_str().unwrap().contains("sphere head of the scene"),
        "{doc}"
    );
    let f = frames(&out);
    assert_eq!(f.len(), 48);
    let rest = &f[0];
    for (k, x) in f.iter().enumerate() {
        // The unit head, 10 cm at the default unit, moves along X at 0.25 units/s from frame 1.
        let centre = Vec3::new(2.5 * k as f32 / 24.0, 0.0, 0.0);
        // Every particle, roots on their zero-length springs too, meets the head (0.1 mm).
        for p in x {
            assert!(p.is_finite());
            assert!(
                p.distance(centre) > 10.0 - 0.01,
                "frame {}: {p} inside the head",
                k + 1
            );
        }
        // Zero-length springs hold each root near its anchor, carried by the head.
        for s in 0..167 {
            let anchor = rest[8 * s] + centre;
            assert!(
                x[8 * s].distance(anchor) < 0.2,
                "frame {}: root {s} left its anchor",
                k + 1
            );
        }
    }
    // The hair moves (gravity pulls the radial hairs down).
    assert!(
        f[47]
            .iter()
            .zip(&f[0])
            .map(|(a, b)| a.distance(*b))
            .fold(0.0, f32::max)
            > 0.5
    );
}

#[test]
fn the_scene_springs_obey_hookes_law() {
    // One hair of two particles (mass 1) 1 unit apart, k = 2000, its root pinned by a
    // zero-length spring 1000× stiffer, 3 units above a still head: the tip falls from rest and
    // oscillates about the stretch m g / k with period 2π √(m / k) (in scene units; g = 981 cm/s²
    // at 10 cm per unit gives a stretch of 981 / 2000 cm whatever the unit).
    let dir = temp_dir("mss-hooke");
    let scene = dir.join("pendulum.mss");
    std::fs::write(
        &scene,
        "v 0 3 0 0 0 0 1\nv 0 2 0 0 0 0 1\ns 0 1 2000\nz 0 0 3 0 2000000\nc 0 0 0\nh 0 0 0\n",
    )
    .unwrap();
    let out = dir.join("p.tcache");
    let fps = 240.0;
    tress_ok(&[
        "simulate",
        "--scene",
        scene.to_str().unwrap(),
        "--fps",
        "240",
        "--frames",
        "1-240",
        "--substeps",
        "4",
        "-o",
        out.to_str().unwrap(),
    ]);
    let d: Vec<f64> = frames(&out).iter().map(|x| x[0].distance(x[1]) as f64).collect();
    let stretch = 981.0 / 2000.0;
    let period = std::f64::consts::TAU / 2000f64.sqrt();
    // The first frame is the start: rest length 10 cm.
    assert!((d[0] - 10.0).abs() < 1e-3, "{}", d[0]);
    let (lo, hi) = d
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    assert!((lo - 10.0).abs() < 0.02 * stretch, "shortest {lo}");
    assert!((hi - 10.0 - 2.0 * stretch).abs() < 0.02 * stretch, "longest {hi}");
    // Period from the upward crossings of the mean stretch (interpolated between frames).
    let mid = 10.0 + stretch;
    let ups: Vec<f64> = d
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0] < mid && w[1] >= mid)
        .map(|(i, w)| (i as f64 + (mid - w[0]) / (w[1] - w[0])) / fps)
        .collect();
    assert!(ups.len() >= 5, "{ups:?}");
    let measured = (ups[ups.len() - 1] - ups[0]) / (ups.len() - 1) as f64;
    assert!(
        (measured - period).abs() < 0.005 * period,
        "period {measured} vs {period}"
    );
}

#[test]
fn a_scene_job_simulates_what_the_command_does() {
    let dir = temp_dir("mss-job");
    let job = dir.join("scene.toml");
    std::fs::write(
        &job,
        format!(
            "name = 'scene'\noutput = 'out'\nframes = '1-12'\n[scene]\nmss = '{}'\n[guides]\ncount = 20\n",
            student_scene().display()
        ),
    )
    .unwrap();
    tress_ok(&["run", job.to_str().unwrap(), "--only", "prepare", "simulate"]);
    let cli = dir.join("cli.tcache");
    tress_ok(&[
        "simulate",
        "--scene",
        student_scene().to_str().unwrap(),
        "--frames",
        "1-12",
        "-o",
        cli.to_str().unwrap(),
    ]);
    let (a, b) = (frames(&dir.join("out/gt.tcache")), frames(&cli));
    assert_eq!(a.len(), 12);
    assert_eq!(a, b, "the job and the command simulate the scene alike");
    // A job that names a groom beside the scene is refused.
    std::fs::write(
        &job,
        format!(
            "name = 'scene'\n[groom]\npreset = 'wavy'\n[scene]\nmss = '{}'\n",
            student_scene().display()
        ),
    )
    .unwrap();
    let o = common::tress(&["run", job.to_str().unwrap(), "--dry-run"]);
    assert!(!o.status.success());
    assert!(
        common::stderr(&o).contains("leave out groom.preset"),
        "{}",
        common::stderr(&o)
    );
    let load = |extra: &str| {
        std::fs::write(
            &job,
            format!(
                "name = 'scene'\n{extra}\n[scene]\nmss = '{}'\n",
                student_scene().display()
            ),
        )
        .unwrap();
        tress::pipeline::job::Job::load(&job)
    };
    // So is a batch over other grooms: the scene is the groom.
    let e = load("[batch]\ngrooms = ['wavy']").unwrap_err().to_string();
    assert!(e.contains("leave out batch.grooms"), "{e}");
    // The job's `moving` applies to the scene's own velocity (0.25 units/s at 10 cm a unit).
    let j = load("[motion]\nmoving = 0.5").unwrap();
    assert_eq!(j.motion.moving, Some(0.5));
    assert_eq!(j.motion.velocity, Some([2.5, 0.0, 0.0]));
    // The scene's step is kept at other frame rates: 100 steps at 24 fps, 50 at 48.
    assert_eq!(load("").unwrap().simulate.substeps, 100);
    assert_eq!(load("fps = 48.0").unwrap().simulate.substeps, 50);
    assert_eq!(
        load("fps = 48.0\n[simulate]\nsubsteps = 7")
            .unwrap()
            .simulate
            .substeps,
        7
    );
}

#[test]
fn the_experiment_batch_trains_the_trajectory_baseline() {
    // examples/experiments.toml as it is, in a temporary folder.
    let dir = temp_dir("mss-batch");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/experiments.toml");
    let text = std::fs::read_to_string(&example)
        .unwrap()
        .replace("output = \"../out/experiments\"", "output = \"out\"")
        .replace(
            "mss = \"student.mss\"",
            &format!("mss = '{}'", student_scene().display()),
        );
    let job = dir.join("experiments.toml");
    std::fs::write(&job, text).unwrap();
    tress_ok(&["run", job.to_str().unwrap()]);
    let out = dir.join("out");
    let items: Vec<_> = (1..=24).map(|i| out.join(format!("exp{i:02}"))).collect();
    assert!(
        items.iter().all(|p| p.join("gt.tcache").is_file()),
        "24 experiments, each its cache"
    );
    let batch = std::fs::read_to_string(out.join("batch.md")).unwrap();
    assert!(batch.contains("Trajectory baseline"), "{batch}");
    for i in 21..=24 {
        assert!(
            batch.contains(&format!("exp{i}: trajectory+projection")),
            "{batch}"
        );
        assert!(out.join(format!("trajectory/exp{i}.tcache")).is_file());
    }
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("trajectory/metrics.json")).unwrap()).unwrap();
    assert_eq!(m["train_items"].as_array().unwrap().len(), 20);
    let (traj, rest) = (
        m["mean_rmse"].as_f64().unwrap(),
        m["mean_rmse_rest"].as_f64().unwrap(),
    );
    // A network that learned anything of the dynamics beats the groom carried rigidly.
    assert!(traj < rest, "trajectory {traj} cm vs rest {rest} cm");
    for h in m["held_out"].as_array().unwrap() {
        assert_eq!(h["trajectory"]["penetration_fraction"], 0.0);
        assert!(h["methods"].as_array().unwrap().len() >= 3, "{h}");
    }
    // The summary again: nothing changed, nothing retrained.
    let model = out.join("trajectory/model.tnn");
    let before = std::fs::read(&model).unwrap();
    let stamp = std::fs::metadata(&model).unwrap().modified().unwrap();
    tress_ok(&["run", job.to_str().unwrap(), "--summary"]);
    assert_eq!(std::fs::metadata(&model).unwrap().modified().unwrap(), stamp);
    assert_eq!(std::fs::read(&model).unwrap(), before);
    // A lost prediction is made again (same training, same bytes), not taken from the key.
    let lost = out.join("trajectory/exp22.tcache");
    std::fs::remove_file(&lost).unwrap();
    tress_ok(&["run", job.to_str().unwrap(), "--summary"]);
    assert!(lost.is_file());
    assert_eq!(std::fs::read(&model).unwrap(), before);
}

/// The student scene with the project's own contact (`--contact reflect`): stable at its
/// default of 40 symplectic steps per frame and at 10 implicit ones, both near a 140-step
/// reference, and every particle outside the head.
#[test]
fn the_student_scene_runs_with_the_projects_contact() {
    let dir = temp_dir("mss-reflect");
    let run = |name: &str, extra: &[&str]| {
        let out = dir.join(name);
        let (scene, out_s) = (student_scene(), out.to_str().unwrap().to_string());
        let mut args = vec![
            "simulate",
            "--scene",
            scene.to_str().unwrap(),
            "--contact",
            "reflect",
            "--frames",
            "1-48",
            "--json",
            "-o",
            &out_s,
        ];
        args.extend_from_slice(extra);
        let doc: serde_json::Value = serde_json::from_str(&stdout(&tress_ok(&args))).unwrap();
        (frames(&out), doc)
    };
    let (reference, _) = run("ref.tcache", &["--substeps", "140"]);
    let (default, doc) = run("default.tcache", &[]);
    let (implicit, _) = run(
        "implicit.tcache",
        &["--integrator", "implicit", "--substeps", "10"],
    );
    assert!(doc["max_speed"].as_f64().unwrap() < 200.0, "{doc}");
    for (name, f) in [("40 symplectic", &default), ("10 implicit", &implicit)] {
        let mut sq = 0.0f64;
        let mut n = 0usize;
        for (k, (a, b)) in f.iter().zip(&reference).enumerate() {
            let centre = Vec3::new(2.5 * k as f32 / 24.0, 0.0, 0.0);
            for (p, q) in a.iter().zip(b) {
                assert!(
                    p.distance(centre) > 10.0 - 1e-3,
                    "{name}, frame {}: {p} inside",
                    k + 1
                );
                sq += p.distance_squared(*q) as f64;
                n += 1;
            }
        }
        let rmse = (sq / n as f64).sqrt();
        eprintln!("{name} steps per frame against 140: RMSE {rmse:.3} cm");
        assert!(rmse < 0.3, "{name}: RMSE {rmse} cm against the 140-step run");
    }
}
