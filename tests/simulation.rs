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
    for style in [Style::Straight, Style::Curly] {
        let (groom, colliders) = scene(style, 400, HeadTrack::still(Pose::IDENTITY));
        let mut sim = Simulation::new(&groom, material_of(style), SimOptions::default(), colliders, 0.0);
        // Ten seconds to settle: hair slides over the head until friction holds it.
        for _ in 0..240 {
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
