//! `tress bench sim`: simulation speed — particle-steps per second and seconds per 24 fps frame
//! with collisions and hair–hair interaction on — for 1 and 2 threads, on the real 10K-strand
//! `straight.hair` (when the shared data is there) and the procedural straight groom at the
//! paper anchors' size (000 Table 2: 16K strands × 25 particles).

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::groom::{Transform, UpAxis};
use crate::motion::sources::MotionSource;
use crate::scene::{GroomSource, HeadSource, SceneFiles, SceneGroom, SceneSpec};
use crate::sim::counters::Counters;
use crate::sim::{Material, SimOptions, Simulation};

#[derive(Debug, Serialize)]
pub struct SimBench {
    pub groom: String,
    pub strands: usize,
    pub particles: usize,
    pub threads: usize,
    pub frames: usize,
    pub seconds: f64,
    pub seconds_per_frame: f64,
    pub substeps: u64,
    pub particle_steps_per_s: f64,
    pub counters: Counters,
}

/// The bench's scene for `groom`: its natural head (a procedural groom's cranium, else fitted
/// to the roots) and body, the gentle motion from t = 0.
fn spec(groom: GroomSource, transform: Transform, frames: usize) -> SceneSpec {
    SceneSpec {
        groom,
        transform,
        head: HeadSource::Fitted,
        body: None,
        sdf_cell: 0.2,
        motion: MotionSource::Preset {
            name: "gentle".into(),
            seed: None,
        },
        fps: 24.0,
        first: 0,
        last: frames as i64,
        hold_after: frames as i64,
        props: Vec::new(),
    }
}

/// One case: `frames` frames of the gentle motion after a short pre-roll, timed without it.
fn case(spec: &SceneSpec, scene: &SceneGroom, threads: usize, frames: usize) -> Result<SimBench> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Runtime(format!("thread pool: {e}")))?;
    pool.install(|| {
        let built = spec.build(scene.clone(), &SceneFiles::default())?;
        let options = SimOptions {
            preroll_frames: 0,
            ..SimOptions::default()
        };
        let mut sim = Simulation::new(
            &scene.groom,
            Material::preset("straight")?,
            options,
            built.colliders,
            0.0,
        );
        for _ in 0..6 {
            sim.step_frame(1.0 / 24.0, true);
        }
        sim.counters = Counters::default();
        let t = Instant::now();
        for _ in 0..frames {
            sim.step_frame(1.0 / 24.0, false);
        }
        let seconds = t.elapsed().as_secs_f64();
        Ok(SimBench {
            groom: scene.source.clone(),
            strands: sim.model.strand_count(),
            particles: sim.model.particle_count(),
            threads,
            frames,
            seconds,
            seconds_per_frame: seconds / frames as f64,
            substeps: sim.counters.steps,
            particle_steps_per_s: sim.counters.particle_steps as f64 / seconds,
            counters: sim.counters,
        })
    })
}

/// Runs the cases; `data` holds `grooms/straight.hair` (skipped when absent).
pub fn run(data: Option<&Path>, strands: usize, frames: usize) -> Result<Vec<SimBench>> {
    let mut specs = Vec::new();
    if let Some(d) = data {
        let file = d.join("grooms/straight.hair");
        if file.exists() {
            // Cem Yuksel's model: Z up, about 0.37 cm per unit (a 16 cm wide scalp).
            let t = Transform {
                scale: 0.37,
                up: UpAxis::Z,
            };
            specs.push(spec(GroomSource::File(file, Default::default()), t, frames));
        }
    }
    let preset = GroomSource::Preset {
        name: "straight".into(),
        strands: Some(strands),
        seed: None,
    };
    specs.push(spec(preset, Transform::default(), frames));
    let mut rows = Vec::new();
    for mut spec in specs {
        let scene = spec.load_groom()?;
        spec.head = HeadSource::default_for(&scene);
        for threads in [1, 2] {
            rows.push(case(&spec, &scene, threads, frames)?);
        }
    }
    Ok(rows)
}

/// The peer comparison's scene, after `../shared/tools/peers/blender_hair_sim.py`: a sphere
/// head of radius 10 cm with straight strands 20 cm long along the surface normal from its
/// upper half (roots uniform in area, seeded), swinging ±40° about the front–back axis with a
/// 10 cm sideways move over 48 frames at 24 fps; the hair starts as groomed (no settling), as
/// Blender's hair dynamics do from the cache start frame.
pub struct PeerScene {
    pub groom: crate::groom::Groom,
    pub colliders: crate::collide::Colliders,
}

/// Head radius and strand length of the peer scene (cm).
pub const PEER_RADIUS: f32 = 10.0;
pub const PEER_LENGTH: f32 = 20.0;

/// The peer script's keys (Blender frames, degrees about its Y axis; frames, metres along its
/// X axis) as a smooth track: cubic Hermite between keys with Blender's auto-clamped handles
/// (flat at extremes and ends, else the slope between the neighbouring keys).
pub fn peer_track() -> Result<crate::motion::HeadTrack> {
    use glam::{DQuat, DVec3};
    let rot = [(1.0, 0.0), (13.0, 40.0), (25.0, 0.0), (37.0, -40.0), (49.0, 0.0)];
    let mov = [(1.0, 0.0), (25.0, 10.0), (49.0, 0.0)];
    fn hermite(keys: &[(f64, f64)], f: f64) -> f64 {
        let n = keys.len();
        let k = keys.partition_point(|k| k.0 <= f).clamp(1, n - 1);
        let tangent = |i: usize| -> f64 {
            if i == 0 || i == n - 1 {
                return 0.0;
            }
            let (p, c, q) = (keys[i - 1].1, keys[i].1, keys[i + 1].1);
            if (c - p) * (q - c) <= 0.0 {
                0.0
            } else {
                (q - p) / (keys[i + 1].0 - keys[i - 1].0)
            }
        };
        let (f0, v0) = keys[k - 1];
        let (f1, v1) = keys[k];
        let d = f1 - f0;
        let t = ((f - f0) / d).clamp(0.0, 1.0);
        let (t2, t3) = (t * t, t * t * t);
        (2.0 * t3 - 3.0 * t2 + 1.0) * v0
            + (t3 - 2.0 * t2 + t) * d * tangent(k - 1)
            + (-2.0 * t3 + 3.0 * t2) * v1
            + (t3 - t2) * d * tangent(k)
    }
    // Blender is Z up; tress Y up: Blender (x, y, z) is tress (x, z, −y), so Blender's Y axis
    // is tress's −Z. Frame 1 is time 0.
    let keys = (0..=48 * 4)
        .map(|i| {
            let f = 1.0 + i as f64 / 4.0;
            let angle = hermite(&rot, f).to_radians();
            let pose = crate::motion::Pose {
                rotation: DQuat::from_axis_angle(DVec3::NEG_Z, angle),
                translation: DVec3::new(hermite(&mov, f), 0.0, 0.0),
            };
            ((f - 1.0) / 24.0, pose)
        })
        .collect();
    crate::motion::HeadTrack::new(keys)
}

impl PeerScene {
    pub fn new(strands: usize, points: usize, seed: u64) -> Result<PeerScene> {
        use rand::{Rng, SeedableRng};
        let points = points.max(2);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut xs = Vec::with_capacity(strands * points);
        for _ in 0..strands {
            // Uniform on the upper hemisphere: height uniform in [0, 1] (Archimedes).
            let y: f32 = rng.random_range(0.0..1.0);
            let phi: f32 = rng.random_range(0.0..std::f32::consts::TAU);
            let r = (1.0 - y * y).max(0.0).sqrt();
            let n = glam::Vec3::new(r * phi.cos(), y, r * phi.sin());
            for k in 0..points {
                xs.push(n * (PEER_RADIUS + PEER_LENGTH * k as f32 / (points - 1) as f32));
            }
        }
        let groom = crate::groom::Groom::new(xs, vec![points as u32; strands], Default::default())?;
        let head = crate::collide::Sphere {
            center: glam::Vec3::ZERO,
            radius: PEER_RADIUS,
        };
        let colliders = crate::collide::Colliders::on_head(vec![("head", Box::new(head))], peer_track()?);
        Ok(PeerScene { groom, colliders })
    }
}

/// tress on the peer scene.
#[derive(Debug, Serialize)]
pub struct PeerRun {
    pub strands: usize,
    pub points: usize,
    pub frames: usize,
    /// Median seconds per frame over frames 2..F (the peer script's statistic).
    pub seconds_per_frame_median: f64,
    pub seconds_per_frame_mean: f64,
    pub particle_steps_per_s: f64,
    pub substeps: u64,
    /// Mean and largest relative change of strand length at the last frame.
    pub length_change_mean: f64,
    pub length_change_max: f64,
    /// Deepest particle inside the head after any frame (cm).
    pub deepest_penetration: f32,
    /// Peak resident memory of this process after the run (MB), where /proc tells.
    pub peak_rss_mb: Option<f64>,
    pub counters: Counters,
}

/// Resets the peak resident memory to the current size (Linux ≥ 4.0, `/proc/self/clear_refs`);
/// whether the kernel allowed it.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Peak resident memory of this process (VmHWM, MB) on Linux.
pub fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Simulates the peer scene for `frames` frames (frame 1 is the start, as in the peer script)
/// with tress's defaults (implicit solve, collisions and hair–hair on).
pub fn peer_run(strands: usize, points: usize, frames: usize) -> Result<PeerRun> {
    let scene = PeerScene::new(strands, points, 1)?;
    let options = SimOptions {
        preroll_frames: 0,
        ..SimOptions::default()
    };
    let mut sim = Simulation::new(
        &scene.groom,
        Material::preset("straight")?,
        options,
        scene.colliders,
        0.0,
    );
    let mut times = Vec::new();
    let mut deepest: f32 = 0.0;
    for _ in 1..frames.max(2) {
        let t = Instant::now();
        let st = sim.step_frame(1.0 / 24.0, false);
        times.push(t.elapsed().as_secs_f64());
        deepest = deepest.max(st.residual_penetration);
    }
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let (mut sum, mut max) = (0.0f64, 0.0f64);
    for s in 0..sim.model.strand_count() {
        let r = sim.model.offsets[s]..sim.model.offsets[s + 1];
        let len = |x: &[glam::Vec3]| x.windows(2).map(|w| w[0].distance(w[1]) as f64).sum::<f64>();
        let (now, rest) = (len(&sim.x[r.clone()]), len(&sim.model.rest[r]));
        let change = (now - rest).abs() / rest.max(1e-9);
        sum += change;
        max = max.max(change);
    }
    Ok(PeerRun {
        strands,
        points,
        frames,
        seconds_per_frame_median: median,
        seconds_per_frame_mean: mean,
        particle_steps_per_s: sim.counters.particle_steps as f64 / times.iter().sum::<f64>(),
        substeps: sim.counters.steps,
        length_change_mean: sum / sim.model.strand_count().max(1) as f64,
        length_change_max: max,
        deepest_penetration: deepest,
        peak_rss_mb: peak_rss_mb(),
        counters: sim.counters,
    })
}

/// Blender's hair dynamics on the same scene, from the peer script's JSON.
#[derive(Debug, Serialize)]
pub struct BlenderRun {
    pub version: String,
    pub seconds_per_frame_median: f64,
    pub length_change_mean: f64,
    pub peak_rss_mb: f64,
}

/// Runs the peer script with `python` (which has Blender's `bpy`) at the same size.
pub fn blender_run(
    python: &Path,
    script: &Path,
    strands: usize,
    points: usize,
    frames: usize,
) -> Result<BlenderRun> {
    let dir = std::env::temp_dir().join(format!("tress-bench-blender-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::Runtime(format!("{}: {e}", dir.display())))?;
    let json = dir.join("blender.json");
    let out = std::process::Command::new(python)
        .arg(script)
        .args(["--strands", &strands.to_string(), "--points", &points.to_string()])
        .args(["--frames", &frames.to_string(), "--voxel", "off", "--sample", "0"])
        .arg("--json")
        .arg(&json)
        .output()
        .map_err(|e| Error::Runtime(format!("could not run {}: {e}", python.display())))?;
    if !out.status.success() {
        let tail = String::from_utf8_lossy(&out.stderr);
        let tail: String = tail
            .chars()
            .rev()
            .take(2000)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        return Err(Error::Runtime(format!(
            "the Blender peer script failed ({}): {tail}",
            out.status
        )));
    }
    let text =
        std::fs::read_to_string(&json).map_err(|e| Error::Runtime(format!("{}: {e}", json.display())))?;
    let _ = std::fs::remove_dir_all(&dir);
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| Error::Runtime(format!("peer script JSON: {e}")))?;
    let num = |k: &str| v.get(k).and_then(|x| x.as_f64());
    Ok(BlenderRun {
        version: v
            .get("blender")
            .and_then(|x| x.as_str())
            .unwrap_or("?")
            .to_string(),
        seconds_per_frame_median: num("s_per_frame_median_2_to_F")
            .ok_or_else(|| Error::Runtime("peer script JSON has no s_per_frame_median_2_to_F".into()))?,
        length_change_mean: v
            .pointer("/final_stats_object_space/length_rel_change_mean")
            .and_then(|x| x.as_f64())
            .unwrap_or(f64::NAN),
        peak_rss_mb: num("peak_rss_after_sim_mb").unwrap_or(f64::NAN),
    })
}
