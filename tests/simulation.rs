//! Physics of the strand simulator against independent references: the discrete catenary of a
//! hanging chain, energy balance, static equilibrium, curl retention, collisions, strain, and
//! determinism across thread counts and checkpoint/resume.

mod common;

use glam::Vec3;
use tress::collide::Colliders;
use tress::groom::Groom;
use tress::motion::{HeadTrack, Pose};
use tress::sim::model::Pin;
use tress::sim::{Integrator, Material, SimOptions, Simulation};

fn no_colliders() -> Colliders {
    Colliders {
        parts: Vec::new(),
        head: HeadTrack::still(Pose::IDENTITY),
        torso: HeadTrack::still(Pose::IDENTITY),
        props: Vec::new(),
    }
}

/// A chain: stretch springs only, no bending, no hair–hair.
fn chain_material() -> Material {
    Material {
        bend: 0.0,
        twist: 0.0,
        altitude: 0.0,
        air_damping: 2.0,
        ..Material::default()
    }
}

/// The equilibrium of N − 2 equal beads on N − 1 weightless rods of length `l` hung between two
/// points at the same height `span` apart (the discrete catenary). Horizontal tension H is the
/// same in every rod; the vertical tension of rod j is m g ((N − 2)/2 − j) by symmetry; H is
/// found by bisection so the rods span exactly `span`. Returns positions from the left end.
fn discrete_catenary(n: usize, l: f64, span: f64, mg: f64) -> Vec<(f64, f64)> {
    let angles = |h: f64| -> Vec<f64> {
        (0..n - 1)
            .map(|j| ((((n - 2) as f64) / 2.0 - j as f64) * mg / h).atan())
            .collect()
    };
    let width = |h: f64| angles(h).iter().map(|a| l * a.cos()).sum::<f64>();
    let (mut lo, mut hi) = (1e-9f64, 1e12f64);
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if width(mid) < span { lo = mid } else { hi = mid }
    }
    let mut p = vec![(0.0, 0.0)];
    for a in angles(hi) {
        let (x, y) = *p.last().unwrap();
        p.push((x + l * a.cos(), y - l * a.sin()));
    }
    p
}

#[test]
fn hanging_chain_settles_to_the_discrete_catenary() {
    let n = 21;
    let length = 20.0f32;
    let span = 14.0f32;
    let l = length / (n - 1) as f32;
    // Start as a V of the right length between the two pins.
    let half = (n - 1) / 2;
    let drop = ((l * l - (span / (n - 1) as f32).powi(2)).max(0.0)).sqrt();
    let points: Vec<Vec3> = (0..n)
        .map(|i| {
            let k = if i <= half { i } else { n - 1 - i } as f32;
            Vec3::new(-span / 2.0 + span * i as f32 / (n - 1) as f32, -drop * k, 0.0)
        })
        .collect();
    let groom = Groom::new(points, vec![n as u32], Default::default()).unwrap();
    let options = SimOptions {
        clamp_root: false,
        hair_hair: false,
        preroll_frames: 0,
        ..SimOptions::default()
    };
    let mut sim = Simulation::new(&groom, chain_material(), options, no_colliders(), 0.0);
    sim.model.pins[n - 1] = Pin::World;
    for _ in 0..240 {
        sim.step_frame(1.0 / 24.0, false);
    }
    let speed = sim.v.iter().map(|v| v.length()).fold(0.0, f32::max);
    // Compare with the catenary of the chain's current length (the springs stretch it a little).
    let now: f64 = sim.x.windows(2).map(|w| w[0].distance(w[1]) as f64).sum();
    let want = discrete_catenary(n, now / (n - 1) as f64, span as f64, 1.0);
    let mut worst = 0.0f64;
    for (p, (x, y)) in sim.x.iter().zip(&want) {
        let d = ((p.x as f64 + span as f64 / 2.0 - x).powi(2) + (p.y as f64 - y).powi(2)).sqrt();
        worst = worst.max(d);
    }
    let sag = -want[half].1;
    eprintln!(
        "catenary: worst deviation {worst:.4} cm of sag {sag:.3} cm; length {now:.4} (rest {length}); max speed {speed:.2e}"
    );
    assert!(worst < 0.01 * sag, "deviation {worst} cm");
    assert!(speed < 0.1, "still moving at {speed} cm/s");
}

/// Total energy of the simulation: kinetic, springs, gravity.
fn total_energy(sim: &Simulation) -> f64 {
    (0..sim.model.strand_count())
        .map(|s| {
            let (o, e) = (sim.model.offsets[s], sim.model.offsets[s + 1]);
            tress::sim::strand::energy(&sim.model, s, &sim.x[o..e], &sim.v[o..e], sim.material.gravity)
        })
        .sum()
}

/// A strand released horizontally swings down with no air drag: with the head still nothing
/// feeds energy in, so the total (kinetic + springs + gravity) must not grow. Backward Euler
/// dissipates; symplectic Euler keeps it within its bounded oscillation.
#[test]
fn energy_does_not_grow_without_input() {
    let n = 16;
    let points: Vec<Vec3> = (0..n).map(|i| Vec3::new(i as f32 * 1.5, 0.0, 0.0)).collect();
    let groom = Groom::new(points, vec![n as u32], Default::default()).unwrap();
    let material = Material {
        air_damping: 0.0,
        ..Material::default()
    };
    for (integrator, substeps) in [(Integrator::Implicit, 2), (Integrator::Symplectic, 400)] {
        let options = SimOptions {
            integrator,
            substeps,
            adaptive: false,
            hair_hair: false,
            preroll_frames: 0,
            ..SimOptions::default()
        };
        let mut sim = Simulation::new(&groom, material.clone(), options, no_colliders(), 0.0);
        let e0 = total_energy(&sim);
        let mut drop = 0.0f64;
        let mut highest = f64::NEG_INFINITY;
        let mut previous = e0;
        let mut rises = 0.0f64;
        for _ in 0..48 {
            sim.step_frame(1.0 / 24.0, false);
            let e = total_energy(&sim);
            highest = highest.max(e - e0);
            rises = rises.max(e - previous);
            previous = e;
            drop = e0 - e;
        }
        // Scale: the potential energy released by the swing, m g L/2 per unit density.
        let scale = 981.0 * 22.5 * 22.5 / 2.0;
        eprintln!(
            "{integrator:?}: energy lost {:.3e} of {scale:.3e}; highest excess over start {highest:.3e}; largest rise per frame {rises:.3e}",
            drop
        );
        assert!(
            highest <= 1e-3 * scale,
            "{integrator:?}: energy grew by {highest}"
        );
        assert!(
            rises <= 1e-3 * scale,
            "{integrator:?}: energy rose by {rises} in a frame"
        );
        assert!(drop > 0.0);
    }
}

use tress::collide::{BodyParams, HeadShape, body};
use tress::groom::{GroomParams, Style, generate};

/// A groom of `style` on the default body whose head follows the motion preset `motion` (a
/// still head without one), simulated with the default options from time 0.
fn default_sim(style: Style, strands: usize, motion: Option<&str>) -> Simulation {
    let track = match motion {
        Some(m) => tress::motion::RandomMotion::preset(m).unwrap().track().unwrap(),
        None => HeadTrack::still(Pose::IDENTITY),
    };
    let (groom, colliders) = scene(style, strands, track);
    Simulation::new(&groom, material_of(style), SimOptions::default(), colliders, 0.0)
}

/// A procedural groom of `strands` strands with its head and body colliders moved by `track`.
fn scene(style: Style, strands: usize, track: HeadTrack) -> (Groom, Colliders) {
    let params = GroomParams {
        strands,
        ..GroomParams::for_style(style)
    };
    let groom = generate(&params).unwrap();
    let colliders = body::colliders(
        HeadShape::Procedural(params.scalp),
        &BodyParams::preset("default").unwrap(),
        track,
    );
    (groom, colliders)
}

fn material_of(style: Style) -> Material {
    Material::preset(match style {
        Style::Straight => "straight",
        Style::Wavy => "wavy",
        Style::Curly => "curly",
    })
    .unwrap()
}

/// After settling, a groom on a still head stays still: the largest displacement of any
/// particle over 100 frames stays under 0.1 mm.
#[test]
fn settled_groom_on_a_still_head_does_not_drift() {
    for style in [Style::Straight, Style::Wavy, Style::Curly] {
        let mut sim = default_sim(style, 400, None);
        // Ten seconds to settle (twenty for wavy hair, which slides longer): hair slides over
        // the head until friction holds it.
        let settle = if style == Style::Wavy { 480 } else { 240 };
        for _ in 0..settle {
            sim.step_frame(1.0 / 24.0, true);
        }
        let settled = sim.x.clone();
        let mut deepest = 0.0f32;
        for _ in 0..100 {
            let st = sim.step_frame(1.0 / 24.0, false);
            deepest = deepest.max(st.residual_penetration);
        }
        let drift = sim
            .x
            .iter()
            .zip(&settled)
            .map(|(a, b)| a.distance(*b))
            .fold(0.0, f32::max);
        let speed = sim.v.iter().map(|v| v.length()).fold(0.0, f32::max);
        eprintln!(
            "{style:?}: drift {:.4} mm over 100 frames, max speed {speed:.3} cm/s, deepest penetration {:.4} mm",
            drift * 10.0,
            deepest * 10.0
        );
        assert!(drift < 0.01, "{style:?}: drifted {drift} cm");
        assert!(deepest <= 0.05);
    }
}

/// Mean helix radius of the strands, from the discrete curvature κ (Menger) and torsion τ
/// (dihedral angle per segment) of each point: r = κ / (κ² + τ²) for a helix. The first points
/// (where the curl ramps in at the root) are left out.
fn helix_radius(x: &[Vec3], offsets: &[usize]) -> f64 {
    let (mut sum, mut n) = (0.0f64, 0usize);
    for s in 0..offsets.len() - 1 {
        let p = &x[offsets[s]..offsets[s + 1]];
        for i in 4..p.len() - 2 {
            let (a, b, c, d) = (p[i - 1], p[i], p[i + 1], p[i + 2]);
            let k = 2.0 * (b - a).cross(c - b).length()
                / ((b - a).length() * (c - b).length() * (c - a).length());
            let n1 = (b - a).cross(c - b).normalize();
            let n2 = (c - b).cross(d - c).normalize();
            let tau = n1.dot(n2).clamp(-1.0, 1.0).acos() / (c - b).length();
            if k.is_finite() && tau.is_finite() {
                sum += (k / (k * k + tau * tau)) as f64;
                n += 1;
            }
        }
    }
    sum / n as f64
}

/// Curly hair hanging under gravity keeps its curl radius within 10 %.
#[test]
fn curls_keep_their_radius_under_gravity() {
    let mut sim = default_sim(Style::Curly, 200, None);
    let before = helix_radius(&sim.x, &sim.model.offsets);
    for _ in 0..72 {
        sim.step_frame(1.0 / 24.0, true);
    }
    let after = helix_radius(&sim.x, &sim.model.offsets);
    let sag = sim
        .x
        .iter()
        .zip(&sim.model.rest)
        .map(|(a, b)| a.distance(*b))
        .fold(0.0, f32::max);
    eprintln!(
        "curl radius {before:.4} cm at rest, {after:.4} cm hanging (ratio {:.3}); largest displacement {sag:.2} cm",
        after / before
    );
    assert!(
        (after / before - 1.0).abs() < 0.1,
        "curl radius {before} → {after}"
    );
    // Gravity did act: the curls are not simply frozen.
    assert!(sag > 0.2);
}

/// Relative change of every strand's length from rest: (mean, max).
fn length_change(sim: &Simulation) -> (f64, f64) {
    let (mut sum, mut max) = (0.0f64, 0.0f64);
    let n = sim.model.strand_count();
    for s in 0..n {
        let r = sim.model.offsets[s]..sim.model.offsets[s + 1];
        let len = |p: &[Vec3]| p.windows(2).map(|w| w[0].distance(w[1]) as f64).sum::<f64>();
        let c = (len(&sim.x[r.clone()]) / len(&sim.model.rest[r]) - 1.0).abs();
        sum += c;
        max = max.max(c);
    }
    (sum / n as f64, max)
}

/// Under a walking head: no particle ends a frame deeper than 0.5 mm inside a collider, and
/// strands keep their length (mean change under 1 %).
#[test]
fn moving_head_keeps_hair_outside_and_strands_inextensible() {
    let mut sim = default_sim(Style::Straight, 300, Some("walk"));
    for _ in 0..24 {
        sim.step_frame(1.0 / 24.0, true);
    }
    let (mut deepest, mut mean, mut worst, mut substeps) = (0.0f32, 0.0f64, 0.0f64, 0);
    for _ in 0..100 {
        let st = sim.step_frame(1.0 / 24.0, false);
        deepest = deepest.max(st.residual_penetration);
        substeps = substeps.max(st.substeps);
        let (m, w) = length_change(&sim);
        mean = mean.max(m);
        worst = worst.max(w);
    }
    eprintln!(
        "walk: deepest penetration after a frame {:.4} mm; length change mean {:.4} % (worst frame), max {:.3} %; up to {substeps} substeps",
        deepest * 10.0,
        mean * 100.0,
        worst * 100.0
    );
    assert!(deepest <= 0.05, "{deepest} cm inside");
    assert!(mean < 0.01);
}

/// Runs `frames` frames of a small scene under the violent motion in a pool of `threads`.
fn run_in_pool(threads: usize, frames: usize) -> (Vec<Vec3>, Vec<Vec3>) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut sim = default_sim(Style::Wavy, 150, Some("violent"));
        for _ in 0..frames {
            sim.step_frame(1.0 / 24.0, false);
        }
        (sim.x, sim.v)
    })
}

fn bits(v: &[Vec3]) -> Vec<u32> {
    v.iter().flat_map(|p| p.to_array()).map(f32::to_bits).collect()
}

/// Parallel over strands with fixed-order reductions: 1 and 2 threads give the same bits.
#[test]
fn one_and_two_threads_give_identical_bits() {
    let (x1, v1) = run_in_pool(1, 12);
    let (x2, v2) = run_in_pool(2, 12);
    assert!(x1.iter().all(|p| p.is_finite()));
    let (b1, b2) = (bits(&x1), bits(&x2));
    let differ = b1.iter().zip(&b2).filter(|(a, b)| a != b).count();
    assert_eq!(
        differ, 0,
        "{differ} position words differ between 1 and 2 threads"
    );
    assert!(
        bits(&v1) == bits(&v2),
        "velocities differ between 1 and 2 threads"
    );
}

use tress::cache::{CacheInfo, SinkOptions, create_sink};
use tress::sim::run::{RunPlan, run};

fn violent_sim(integrator: Integrator, substeps: u32) -> (Simulation, Groom) {
    let track = tress::motion::RandomMotion::preset("violent")
        .unwrap()
        .track()
        .unwrap();
    let (groom, colliders) = scene(Style::Straight, 100, track);
    let options = SimOptions {
        integrator,
        substeps,
        preroll_frames: 4,
        ..SimOptions::default()
    };
    (
        Simulation::new(
            &groom,
            material_of(Style::Straight),
            options,
            colliders,
            1.0 / 24.0,
        ),
        groom,
    )
}

/// Simulates frames 1–`last` into a lossless `.tcache`; `stop_after` stops the run there (as a
/// killed job) and `resume` continues one.
fn simulate_to(
    out: &std::path::Path,
    work: &std::path::Path,
    last: i64,
    stop_after: Option<i64>,
    resume: bool,
    contacts: bool,
) -> tress::Result<()> {
    let (mut sim, groom) = violent_sim(Integrator::Implicit, 2);
    sim.options.strand_contacts = contacts;
    let info = CacheInfo {
        topology: groom.to_strands(),
        fps: 24.0,
        frames: Vec::new(),
    };
    let sink = create_sink(out, &info, 1.0, &SinkOptions::default())?;
    let plan = RunPlan {
        fps: 24.0,
        first: 1,
        last,
        checkpoint_every: Some(4),
        work_dir: Some(work.to_path_buf()),
        resume,
    };
    run(&mut sim, &plan, vec![sink], &info.topology, &mut |f, _| {
        stop_after != Some(f)
    })
    .map(|_| ())
}

/// A run stopped after frame 11 (its last checkpoint is at frame 9, its log holds frames up to
/// 11) and resumed gives the same file, byte for byte, as an uninterrupted run.
#[test]
fn resuming_from_a_checkpoint_is_bit_identical() {
    let dir = common::temp_dir("sim-resume");
    let (a, b) = (dir.join("straight.tcache"), dir.join("resumed.tcache"));
    // Also with strand–strand contacts: no contact state may carry over between steps.
    for contacts in [true, false] {
        let _ = std::fs::remove_file(&b);
        simulate_to(&a, &dir.join("work-a"), 16, None, false, contacts).unwrap();
        let err = simulate_to(&b, &dir.join("work-b"), 16, Some(11), false, contacts).unwrap_err();
        assert!(err.to_string().contains("stopped after frame 11"), "{err}");
        assert!(!b.exists(), "a stopped run must not leave a finished output");
        simulate_to(&b, &dir.join("work-b"), 16, None, true, contacts).unwrap();
        let (x, y) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        assert!(
            x == y,
            "resumed output differs ({} vs {} bytes, contacts {contacts})",
            x.len(),
            y.len()
        );
    }
    let r = tress_formats::tcache::TcacheReader::open(&b).unwrap();
    assert_eq!(r.len(), 16);
    assert!(
        !dir.join("work-b").exists(),
        "the work folder is removed after a finished run"
    );
    // A checkpoint of other inputs is refused.
    simulate_to(&b, &dir.join("work-c"), 8, Some(6), false, false).unwrap_err();
    let (mut sim, groom) = violent_sim(Integrator::Implicit, 3);
    let info = CacheInfo {
        topology: groom.to_strands(),
        fps: 24.0,
        frames: Vec::new(),
    };
    let plan = RunPlan {
        fps: 24.0,
        first: 1,
        last: 8,
        checkpoint_every: Some(4),
        work_dir: Some(dir.join("work-c")),
        resume: true,
    };
    let err = run(&mut sim, &plan, Vec::new(), &info.topology, &mut |_, _| true).unwrap_err();
    assert!(err.to_string().contains("other inputs"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An explicit integrator at a 24 fps step blows up: the run stops with an error naming the
/// frame, keeps the good frames and a checkpoint of the last good state.
#[test]
fn blow_up_is_reported_with_the_frame_and_good_frames_are_kept() {
    let dir = common::temp_dir("sim-blowup");
    let out = dir.join("bad.tcache");
    let (mut sim, groom) = violent_sim(Integrator::Explicit, 1);
    sim.options.preroll_frames = 0;
    let info = CacheInfo {
        topology: groom.to_strands(),
        fps: 24.0,
        frames: Vec::new(),
    };
    let sink = create_sink(&out, &info, 1.0, &SinkOptions::default()).unwrap();
    let plan = RunPlan {
        fps: 24.0,
        first: 1,
        last: 20,
        checkpoint_every: Some(5),
        work_dir: Some(dir.join("work")),
        resume: false,
    };
    let err = run(&mut sim, &plan, vec![sink], &info.topology, &mut |_, _| true).unwrap_err();
    let msg = err.to_string();
    eprintln!("{msg}");
    assert!(msg.contains("unstable at frame "), "{msg}");
    assert_eq!(err.exit_code(), 1);
    let frame: i64 = msg
        .split("unstable at frame ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let r = tress_formats::tcache::TcacheReader::open(&out).unwrap();
    assert_eq!(
        r.len() as i64,
        frame - 1,
        "the frames before the blow-up are kept"
    );
    assert!(dir.join("work/state.ckpt").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The robustness tests of 002 §4: the head moving ten times faster than natural, and a groom
/// collapsed onto its roots. Both must stay stable and come back to a sensible groom.
#[test]
fn ten_times_speed_and_collapsed_groom_recover() {
    // 10× speed: the gentle motion compressed into one second, then rest.
    let mut sim = default_sim(Style::Straight, 300, Some("violent"));
    for _ in 0..24 {
        sim.step_frame(1.0 / 24.0, true);
    }
    let (mut deepest, mut fastest, mut substeps, mut mean) = (0.0f32, 0.0f32, 0, 0.0f64);
    for _ in 0..120 {
        let st = sim.step_frame(1.0 / 24.0, false);
        deepest = deepest.max(st.residual_penetration);
        fastest = fastest.max(st.max_speed);
        substeps = substeps.max(st.substeps);
        mean = mean.max(length_change(&sim).0);
    }
    let end_speed = sim.v.iter().map(|v| v.length()).fold(0.0, f32::max);
    eprintln!(
        "10x speed: peak particle speed {fastest:.0} cm/s, up to {substeps} substeps, deepest {:.4} mm, mean length change ≤ {:.3} %, speed 4 s after the motion {end_speed:.2} cm/s",
        deepest * 10.0,
        mean * 100.0
    );
    assert!(sim.x.iter().all(|p| p.is_finite()));
    assert!(deepest <= 0.05 && mean < 0.01);
    assert!(
        end_speed < 5.0,
        "still moving at {end_speed} cm/s four seconds after the motion"
    );

    // Collapsed: every particle on its strand's root.
    let mut reference = default_sim(Style::Straight, 300, None);
    let mut sim = default_sim(Style::Straight, 300, None);
    for s in 0..sim.model.strand_count() {
        let (o, e) = (sim.model.offsets[s], sim.model.offsets[s + 1]);
        let root = sim.x[o];
        sim.x[o..e].iter_mut().for_each(|p| *p = root);
    }
    for _ in 0..96 {
        reference.step_frame(1.0 / 24.0, true);
        sim.step_frame(1.0 / 24.0, true);
    }
    let (mean, _) = length_change(&sim);
    let tips: f64 = (0..sim.model.strand_count())
        .map(|s| {
            sim.x[sim.model.offsets[s + 1] - 1].distance(reference.x[sim.model.offsets[s + 1] - 1]) as f64
        })
        .sum::<f64>()
        / sim.model.strand_count() as f64;
    eprintln!(
        "collapsed: after 4 s mean length change {:.3} %, mean tip distance from an uncollapsed run {tips:.2} cm",
        mean * 100.0
    );
    assert!(sim.x.iter().all(|p| p.is_finite()));
    assert!(mean < 0.01, "strands did not grow back: {mean}");
    assert!(
        tips < 2.5,
        "tips {tips} cm from where the uncollapsed groom hangs"
    );
}

/// Particles of a dropped strand (10 segments of 1 cm, each crossing one strand below).
const UPPER: usize = 11;
/// Particles of a lower strand (20 segments of 0.8 cm over a 16 cm span).
const LOWER: usize = 21;

/// What holds the lower sheet.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Lower {
    /// Held flat: a rigid rack.
    Rack,
    /// Hammocks held only at both ends (discrete-catenary rest shape, lowest at y = 0): they
    /// give way and fall with the load.
    Hammocks,
}

/// Two sparse sheets crossing at right angles: 10 lower strands along x, 1 cm apart, 16 cm
/// long, and 10 free strands along z (1 cm apart, 10 cm long) dropped onto them from 0.6 cm
/// above. The strands are stiff (bending 30× straight hair's), so a dropped strand lies across
/// the lower ones instead of threading through their gaps segment by segment. Returns the
/// positions after every frame.
fn sheets(contacts: bool, lower: Lower, frames: usize, dbg: bool) -> Vec<Vec<Vec3>> {
    let n = LOWER;
    let hang = discrete_catenary(n, 1.0, 16.0, 1.0);
    let low = hang.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let shape: Vec<(f32, f32)> = match lower {
        Lower::Rack => (0..n)
            .map(|i| (-8.0 + 16.0 * i as f32 / (n - 1) as f32, 0.0))
            .collect(),
        Lower::Hammocks => hang
            .iter()
            .map(|(x, y)| (*x as f32 - 8.0, (*y - low) as f32))
            .collect(),
    };
    let mut points = Vec::new();
    for k in 0..10 {
        let z = -4.5 + k as f32;
        points.extend(shape.iter().map(|(x, y)| Vec3::new(*x, *y, z)));
    }
    for k in 0..10 {
        let x = -4.5 + k as f32;
        // Above the lower strands where this strand crosses them.
        let y = shape
            .iter()
            .min_by(|a, b| (a.0 - x).abs().total_cmp(&(b.0 - x).abs()))
            .map_or(0.0, |p| p.1);
        points.extend((0..UPPER).map(|i| Vec3::new(x, y + 0.6, -5.0 + i as f32)));
    }
    let mut counts = vec![n as u32; 10];
    counts.extend([UPPER as u32; 10]);
    let groom = Groom::new(points, counts, Default::default()).unwrap();
    let options = SimOptions {
        clamp_root: false,
        hair_hair: false,
        preroll_frames: 0,
        strand_contacts: contacts,
        ..SimOptions::default()
    };
    let material = Material {
        bend: 2.0e5,
        twist: 1.0e5,
        ..Material::preset("straight").unwrap()
    };
    let mut sim = Simulation::new(&groom, material, options, no_colliders(), 0.0);
    for (k, p) in sim.model.pins.iter_mut().enumerate() {
        let held = match lower {
            Lower::Rack => true,
            Lower::Hammocks => k % n == 0 || k % n == n - 1,
        };
        *p = if k < 10 * n && held { Pin::World } else { Pin::Free };
    }
    let mut out = Vec::new();
    for f in 0..frames {
        let st = sim.step_frame(1.0 / 24.0, false);
        if dbg {
            let u = 10 * n + 5 * UPPER;
            eprintln!(
                "frame {}: {st:?}\n  dropped 5: {:?}",
                f + 1,
                sim.x[u..u + UPPER]
                    .iter()
                    .map(|p| format!("({:.2},{:.2},{:.2})", p.x, p.y, p.z))
                    .collect::<Vec<_>>()
            );
        }
        out.push(sim.x.clone());
    }
    out
}

/// Over/under at every crossing of the two sheets, measured on the positions alone: for each
/// lower strand a and dropped strand b whose segment crosses a's plane (z of a's middle), the
/// dropped strand's height there minus the lower strand's height where it passes under it.
/// Negative: b is under a, it passed through.
fn crossing_heights(x: &[Vec3]) -> Vec<f32> {
    let lower = 10 * LOWER;
    // Height of lower strand a at x = px (linear along its polyline; None off its ends).
    let height = |a: usize, px: f32| -> Option<f32> {
        let s = &x[a * LOWER..(a + 1) * LOWER];
        s.windows(2).find_map(|w| {
            let (p, q) = (w[0], w[1]);
            let (lo, hi) = (p.x.min(q.x), p.x.max(q.x));
            (px >= lo && px <= hi && hi > lo).then(|| p.y + (q.y - p.y) * (px - p.x) / (q.x - p.x))
        })
    };
    let mut out = Vec::new();
    for a in 0..10 {
        let za = x[a * LOWER + LOWER / 2].z;
        for b in 0..10 {
            let s = &x[lower + b * UPPER..lower + (b + 1) * UPPER];
            for w in s.windows(2) {
                let (p, q) = (w[0], w[1]);
                if (p.z - za) * (q.z - za) > 0.0 || p.z == q.z {
                    continue;
                }
                let t = (za - p.z) / (q.z - p.z);
                let c = p.lerp(q, t);
                if let Some(y) = height(a, c.x) {
                    out.push(c.y - y);
                }
            }
        }
    }
    out
}

/// Strand–strand contacts (issue 17): a sparse sheet dropped onto another does not pass
/// through it, whether the lower sheet is held flat or hangs as hammocks that give way: at
/// every frame, wherever a dropped strand crosses a lower strand's plane, it is above that
/// strand (a negative height is a strand that passed through); the dropped sheet came down onto
/// the lower one (within two thicknesses of it on average at the end).
/// Without contacts the dropped sheet falls through. Deterministic across thread counts.
#[test]
fn sparse_sheets_fall_onto_each_other_and_do_not_pass_with_contacts() {
    let frames = 24;
    let thickness = SimOptions::default().contact_thickness;
    let dbg = std::env::var("TRESS_DEBUG_SHEETS").is_ok();
    for held in [Lower::Rack, Lower::Hammocks] {
        let with = sheets(true, held, frames, dbg);
        let mut crossings = 0;
        for (f, x) in with.iter().enumerate() {
            let h = crossing_heights(x);
            crossings = h.len();
            let worst = h.iter().copied().fold(f32::INFINITY, f32::min);
            assert!(
                worst > 0.0,
                "{held:?}, frame {}: a dropped strand {worst} cm above a lower one (passed through)",
                f + 1
            );
        }
        // Most of the 100 crossings are still there at the end (strands may slide along).
        assert!(crossings >= 80, "{held:?}: {crossings} crossings at the end");
        let last = with.last().unwrap();
        let h = crossing_heights(last);
        let mean = h.iter().sum::<f32>() / h.len() as f32;
        assert!(
            mean < 2.0 * thickness,
            "{held:?}: dropped strands {mean} cm above on average"
        );
        // Without contacts the dropped sheet falls through the lower one.
        let without = sheets(false, held, frames, dbg);
        let h = crossing_heights(without.last().unwrap());
        assert!(
            h.iter().all(|d| *d < 0.0),
            "{held:?}: without contacts every crossing should be under ({h:?})"
        );
    }
    // One and two threads: the same bits.
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| sheets(true, Lower::Hammocks, 12, false).pop().unwrap())
    };
    assert_eq!(bits(&run(1)), bits(&run(2)));
}

/// A helix and its mirror image have the same distances between every pair of particles, so
/// edge, bending and torsion springs cannot tell them apart: only the signed altitudes of the
/// tetrahedra (Selle et al. 2008) see the handedness. A free curl started as the mirror image
/// of its rest shape (pinned at its root particle, no gravity)
/// turns back into its own handedness with either altitude-spring model, and stays mirrored
/// without them. Returns the share of tetrahedra whose signed volume has its rest sign, and
/// the RMS of the particles' distances to the rest shape after the best rigid fit about the
/// root (the helix may come back rotated about it).
fn mirrored_curl(altitude: f32, springs: tress::sim::model::AltitudeSprings) -> (f64, f64) {
    let (n, r, pitch, per_turn) = (30, 0.6f32, 0.35f32, 7.0f32);
    let rest: Vec<Vec3> = (0..n)
        .map(|i| {
            let a = std::f32::consts::TAU * i as f32 / per_turn;
            Vec3::new(r * a.cos(), -pitch * i as f32, r * a.sin())
        })
        .collect();
    let groom = Groom::new(rest.clone(), vec![n as u32], Default::default()).unwrap();
    let material = Material {
        altitude,
        gravity: Vec3::ZERO,
        air_damping: 1.0,
        ..Material::preset("curly").unwrap()
    };
    let options = SimOptions {
        clamp_root: false,
        hair_hair: false,
        preroll_frames: 0,
        altitude_springs: springs,
        ..SimOptions::default()
    };
    let mut sim = Simulation::new(&groom, material, options, no_colliders(), 0.0);
    sim.model.pins[0] = Pin::World;
    // The mirror image through the plane z = 0 (which holds the pinned root).
    for p in sim.x.iter_mut() {
        p.z = -p.z;
    }
    for _ in 0..96 {
        sim.step_frame(1.0 / 24.0, false);
    }
    let vol = |p: &[Vec3], i: usize| (p[i + 1] - p[i]).dot((p[i + 2] - p[i]).cross(p[i + 3] - p[i]));
    let kept = (0..n - 3)
        .filter(|&i| vol(&sim.x, i).signum() == vol(&rest, i).signum())
        .count() as f64
        / (n - 3) as f64;
    // Best rotation about the root (Kabsch on the offsets from particle 0).
    let a: Vec<glam::DVec3> = rest.iter().map(|p| (*p - rest[0]).as_dvec3()).collect();
    let b: Vec<glam::DVec3> = sim.x.iter().map(|p| (*p - sim.x[0]).as_dvec3()).collect();
    let mut h = nalgebra::Matrix3::<f64>::zeros();
    for (p, q) in a.iter().zip(&b) {
        h += nalgebra::Vector3::new(q.x, q.y, q.z) * nalgebra::Vector3::new(p.x, p.y, p.z).transpose();
    }
    let svd = h.svd(true, true);
    let (u, vt) = (svd.u.unwrap(), svd.v_t.unwrap());
    let d = (u * vt).determinant().signum();
    let rot = u * nalgebra::Matrix3::from_diagonal(&nalgebra::Vector3::new(1.0, 1.0, d)) * vt;
    let rms = (a
        .iter()
        .zip(&b)
        .map(|(p, q)| {
            let p = rot * nalgebra::Vector3::new(p.x, p.y, p.z);
            (p - nalgebra::Vector3::new(q.x, q.y, q.z)).norm_squared()
        })
        .sum::<f64>()
        / n as f64)
        .sqrt();
    (kept, rms)
}

#[test]
fn altitude_springs_turn_a_mirrored_curl_back() {
    use tress::sim::model::AltitudeSprings;
    let none = mirrored_curl(0.0, AltitudeSprings::All);
    let all = mirrored_curl(1.0e5, AltitudeSprings::All);
    let selle = mirrored_curl(2.0e6, AltitudeSprings::Selle);
    eprintln!(
        "mirrored curl after 4 s: tetrahedra with their rest handedness / RMS to the rest shape: \
         no altitude springs {:.2} / {:.3} cm, all seven {:.2} / {:.3} cm, Selle's one {:.2} / {:.3} cm",
        none.0, none.1, all.0, all.1, selle.0, selle.1
    );
    assert!(
        none.0 < 0.2,
        "without altitude springs the mirror image is an equilibrium"
    );
    for (name, (kept, rms)) in [("all", all), ("selle", selle)] {
        assert!(
            kept > 0.9 && rms < 0.1,
            "{name}: {kept} of the tetrahedra, RMS {rms} cm"
        );
    }
}

/// 004's contact (`contact = "reflect"`): a particle that ends a step inside the head sphere is
/// put back on its surface along the normal and leaves with its velocity reflected about the
/// normal and scaled by 0.6, tangential part included (the project's `manageCollisions`).
#[test]
fn reflect_contact_is_the_student_projects() {
    use tress::collide::Sphere;
    use tress::sim::contact::Contact;
    let groom = Groom::new(
        vec![Vec3::new(0.0, 30.0, 0.0), Vec3::new(0.0, 10.5, 0.0)],
        vec![2],
        Default::default(),
    )
    .unwrap();
    let sphere = Sphere {
        center: Vec3::ZERO,
        radius: 10.0,
    };
    let colliders = Colliders::on_head(vec![("head", Box::new(sphere))], HeadTrack::still(Pose::IDENTITY));
    // A free particle in all but name: its edge to the pinned root is too weak to matter and
    // never limited.
    let material = Material {
        stretch: 1e-9,
        bend: 0.0,
        twist: 0.0,
        altitude: 0.0,
        air_damping: 0.0,
        damping: 0.0,
        max_strain: 1e6,
        gravity: Vec3::ZERO,
        ..Material::default()
    };
    let options = SimOptions {
        integrator: Integrator::Symplectic,
        substeps: 1,
        adaptive: false,
        clamp_root: false,
        hair_hair: false,
        preroll_frames: 0,
        contact: Contact::Reflect,
        ..SimOptions::default()
    };
    let mut sim = Simulation::new(&groom, material, options, colliders, 0.0);
    sim.model.pins[0] = Pin::World;
    let v0 = Vec3::new(30.0, -100.0, 10.0);
    sim.v[1] = v0;
    let h = 1.0 / 24.0;
    sim.step_frame(h as f64, false);
    let inside = Vec3::new(0.0, 10.5, 0.0) + h * v0;
    assert!(inside.length() < 10.0, "the step ends inside the sphere");
    let n = inside.normalize();
    let want_x = 10.0 * n;
    let want_v = 0.6 * (v0 - 2.0 * v0.dot(n) * n);
    assert!(sim.x[1].distance(want_x) < 1e-4, "{} vs {want_x}", sim.x[1]);
    assert!(sim.v[1].distance(want_v) < 1e-3, "{} vs {want_v}", sim.v[1]);
}
