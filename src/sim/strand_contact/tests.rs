//! Strand–strand contacts checked on hand-made pairs and small grooms.

use super::*;

/// Brute force: the smallest distance over a fine grid of parameters.
fn brute(p0: Vec3, p1: Vec3, q0: Vec3, q1: Vec3) -> f32 {
    let mut best = f32::INFINITY;
    for i in 0..=200 {
        for j in 0..=200 {
            let a = p0.lerp(p1, i as f32 / 200.0);
            let b = q0.lerp(q1, j as f32 / 200.0);
            best = best.min(a.distance(b));
        }
    }
    best
}

#[test]
fn closest_points_of_segments_match_brute_force() {
    let cases = [
        // Crossing at right angles, 1 apart.
        (
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, -1.0),
            Vec3::new(0.0, 1.0, 1.0),
        ),
        // Parallel, overlapping.
        (
            Vec3::ZERO,
            Vec3::X,
            Vec3::new(0.5, 0.3, 0.0),
            Vec3::new(1.5, 0.3, 0.0),
        ),
        // End to end.
        (
            Vec3::ZERO,
            Vec3::X,
            Vec3::new(2.0, 0.5, 0.0),
            Vec3::new(3.0, 1.0, 0.0),
        ),
        // Skew, closest inside one and at the end of the other.
        (
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(1.5, 0.0, 1.0),
            Vec3::new(1.5, 0.0, 3.0),
        ),
        // A point against a segment.
        (
            Vec3::new(0.3, 1.0, 0.0),
            Vec3::new(0.3, 1.0, 0.0),
            Vec3::ZERO,
            Vec3::X,
        ),
    ];
    for (p0, p1, q0, q1) in cases {
        let (s, t) = closest_parameters(p0, p1, q0, q1);
        let d = p0.lerp(p1, s).distance(q0.lerp(q1, t));
        let b = brute(p0, p1, q0, q1);
        assert!(d <= b + 1e-4 && d >= b - 1e-2, "{p0} {p1} {q0} {q1}: {d} vs {b}");
    }
}

/// Two strands of two particles crossing at right angles, the upper one falling through
/// the lower one during the step.
fn crossing(speed: f32, h: f32) -> (Vec<Vec3>, Vec<Vec3>, Vec<Vec3>) {
    let x0 = vec![
        Vec3::new(-1.0, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(0.0, 0.2, -1.0),
        Vec3::new(0.0, 0.2, 1.0),
    ];
    let v = vec![
        Vec3::ZERO,
        Vec3::ZERO,
        Vec3::new(0.0, -speed, 0.0),
        Vec3::new(0.0, -speed, 0.0),
    ];
    let x = x0.iter().zip(&v).map(|(p, u)| *p + h * *u).collect();
    (x0, x, v)
}

#[test]
fn a_strand_falling_through_another_is_stopped_at_the_thickness() {
    let h = 1.0 / 48.0;
    // 50 cm/s: 1 cm in the step, far more than the 0.2 cm gap.
    let (x0, mut x, mut v) = crossing(50.0, h);
    let params = ContactParams {
        thickness: 0.1,
        friction: 0.0,
        iterations: 4,
    };
    // The lower strand is kinematic.
    let inv_mass = [0.0, 0.0, 1.0, 1.0];
    let mut c = StrandContacts::default();
    let mut moved = Vec::new();
    let st = c.resolve(
        &params,
        &[0, 2, 4],
        &inv_mass,
        &x0,
        &x0,
        &mut x,
        &mut v,
        h,
        &mut moved,
        &mut |_, _, _| {},
    );
    assert_eq!(st.contacts, 1);
    assert!(st.deepest > 0.8, "{st:?}");
    // Upper strand back above the lower one, at the thickness, and no longer approaching.
    assert!(
        (x[2].y - 0.1).abs() < 1e-4 && (x[3].y - 0.1).abs() < 1e-4,
        "{x:?}"
    );
    assert_eq!(x[0], x0[0]);
    // Velocity: inelastic, the fall is stopped (not thrown back up, not still falling).
    assert!(v[2].y.abs() < 1e-3 && v[3].y.abs() < 1e-3, "{v:?}");
    assert_eq!(moved, vec![false, true]);
    // Without the lower strand being kinematic, both move, momentum is kept.
    let (x0, mut x, mut v) = crossing(50.0, h);
    let p_before: Vec3 = v.iter().sum();
    c.resolve(
        &params,
        &[0, 2, 4],
        &[1.0; 4],
        &x0,
        &x0,
        &mut x,
        &mut v,
        h,
        &mut moved,
        &mut |_, _, _| {},
    );
    let p_after: Vec3 = v.iter().sum();
    assert!((p_after - p_before).length() < 1e-3, "{p_before} {p_after}");
    let sep = (x[2] + x[3]) * 0.5 - (x[0] + x[1]) * 0.5;
    assert!((sep.y - 0.1).abs() < 1e-3, "{sep}");
}

/// The implicit step's touches: a pair 0.08 cm apart (within 1.5 × 0.1) gives each free
/// strand its share of the 0.02 cm overlap by inverse mass, normals pointing toward each
/// strand, measured against the pair's mass-weighted mean velocity; a kinematic strand gets
/// none and the free one takes all of the overlap against the kinematic one's velocity.
#[test]
fn touches_share_the_overlap_by_inverse_mass() {
    let x = vec![
        Vec3::new(-1.0, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(0.0, 0.08, -1.0),
        Vec3::new(0.0, 0.08, 1.0),
    ];
    let v = vec![Vec3::X, Vec3::X, Vec3::ZERO, Vec3::ZERO];
    let rest = vec![x[0], x[1], x[2] + Vec3::Y, x[3] + Vec3::Y];
    let mut c = StrandContacts::default();
    let mut out = Vec::new();
    c.touches(0.1, &[0, 2, 4], &[1.0; 4], &rest, &x, &v, 1.0 / 48.0, &mut out);
    assert_eq!(out.len(), 2, "{out:?}");
    let (a, b) = (out[0], out[1]);
    assert_eq!((a.0, b.0), (0, 1));
    assert!(
        (a.1.distance - 0.09).abs() < 1e-5 && (b.1.distance - 0.09).abs() < 1e-5,
        "{out:?}"
    );
    assert!((a.1.normal + Vec3::Y).length() < 1e-5 && (b.1.normal - Vec3::Y).length() < 1e-5);
    assert!((a.1.s - 0.5).abs() < 1e-5 && (b.1.s - 0.5).abs() < 1e-5 && b.1.i == 0);
    assert!((a.1.velocity - 0.5 * Vec3::X).length() < 1e-5 && !a.1.ahead);
    // The first strand kinematic: only the second is touched, with the whole overlap.
    c.touches(
        0.1,
        &[0, 2, 4],
        &[0.0, 0.0, 1.0, 1.0],
        &rest,
        &x,
        &v,
        1.0 / 48.0,
        &mut out,
    );
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].0, 1);
    assert!((out[0].1.distance - 0.08).abs() < 1e-5 && (out[0].1.velocity - Vec3::X).length() < 1e-5);
    // 0.5 cm apart and not approaching: no touch; approaching at 20 cm/s: a predicted one.
    let far: Vec<Vec3> = x
        .iter()
        .enumerate()
        .map(|(k, p)| if k >= 2 { *p + 0.42 * Vec3::Y } else { *p })
        .collect();
    c.touches(
        0.1,
        &[0, 2, 4],
        &[1.0; 4],
        &rest,
        &far,
        &[Vec3::ZERO; 4],
        1.0 / 48.0,
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
    let falling = [Vec3::ZERO, Vec3::ZERO, -20.0 * Vec3::Y, -20.0 * Vec3::Y];
    c.touches(
        0.1,
        &[0, 2, 4],
        &[1.0; 4],
        &rest,
        &far,
        &falling,
        1.0 / 48.0,
        &mut out,
    );
    assert_eq!(out.len(), 2, "{out:?}");
    assert!(
        out[0].1.ahead && (out[0].1.distance - (0.1 - 0.5 * (0.1 - (0.5 - 20.0 / 48.0)))).abs() < 1e-4,
        "{out:?}"
    );
}

/// A pair that starts the step closer than the thickness (at rest) is pushed apart to the
/// thickness but not thrown apart: no separating velocity (the energy injection a
/// position-derived velocity would cause).
#[test]
fn an_overlapping_pair_at_rest_is_separated_without_velocity() {
    let h = 1.0 / 48.0;
    let x0 = vec![
        Vec3::new(-1.0, 0.0, 0.0),
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(0.0, 0.04, -1.0),
        Vec3::new(0.0, 0.04, 1.0),
    ];
    let mut x = x0.clone();
    let mut v = vec![Vec3::ZERO; 4];
    let params = ContactParams {
        thickness: 0.1,
        friction: 0.3,
        iterations: 8,
    };
    let mut c = StrandContacts::default();
    let mut moved = Vec::new();
    // A rest groom where the strands are apart: the pair keeps the full thickness.
    let rest = vec![x0[0], x0[1], x0[2] + Vec3::Y, x0[3] + Vec3::Y];
    let st = c.resolve(
        &params,
        &[0, 2, 4],
        &[1.0; 4],
        &rest,
        &x0,
        &mut x,
        &mut v,
        h,
        &mut moved,
        &mut |_, _, _| {},
    );
    assert_eq!(st.contacts, 1);
    let sep = (x[2] + x[3]) * 0.5 - (x[0] + x[1]) * 0.5;
    assert!(sep.y >= 0.099 && sep.y < 0.101, "{sep}");
    assert!(v.iter().all(|u| u.length() < 1e-6), "{v:?}");
}

#[test]
fn strands_apart_and_the_same_strand_are_left_alone() {
    let h = 1.0 / 48.0;
    let (x0, mut x, mut v) = crossing(1.0, h); // 0.02 cm in the step: stays 0.18 apart
    let params = ContactParams {
        thickness: 0.1,
        friction: 0.3,
        iterations: 4,
    };
    let mut c = StrandContacts::default();
    let mut moved = Vec::new();
    let before = x.clone();
    let st = c.resolve(
        &params,
        &[0, 2, 4],
        &[1.0; 4],
        &x0,
        &x0,
        &mut x,
        &mut v,
        h,
        &mut moved,
        &mut |_, _, _| {},
    );
    assert_eq!(st.contacts, 0);
    assert_eq!(x, before);
    // The same four particles as one strand: its own segments never collide.
    let (x0, mut x, mut v) = crossing(50.0, h);
    let before = x.clone();
    let st = c.resolve(
        &params,
        &[0, 4],
        &[1.0; 4],
        &x0,
        &x0,
        &mut x,
        &mut v,
        h,
        &mut moved,
        &mut |_, _, _| {},
    );
    assert_eq!(st.candidates, 0);
    assert_eq!(x, before);
}

#[test]
fn friction_holds_a_slow_slide_and_slows_a_fast_one() {
    let h = 1.0 / 48.0;
    let params = ContactParams {
        thickness: 0.1,
        friction: 0.5,
        iterations: 1,
    };
    let inv_mass = [0.0, 0.0, 1.0, 1.0];
    let mut c = StrandContacts::default();
    let mut moved = Vec::new();
    for (slide, stuck) in [(1.0f32, true), (100.0, false)] {
        // Falling 1 cm/step onto the lower strand while sliding along it (x; the lower
        // strand made long enough that the slide stays on it).
        let (mut x0, _, _) = crossing(0.0, h);
        x0[0].x = -5.0;
        x0[1].x = 5.0;
        let mut v = vec![
            Vec3::ZERO,
            Vec3::ZERO,
            Vec3::new(slide, -50.0, 0.0),
            Vec3::new(slide, -50.0, 0.0),
        ];
        let mut x: Vec<Vec3> = x0.iter().zip(&v).map(|(p, u)| *p + h * *u).collect();
        c.resolve(
            &params,
            &[0, 2, 4],
            &inv_mass,
            &x0,
            &x0,
            &mut x,
            &mut v,
            h,
            &mut moved,
            &mut |_, _, _| {},
        );
        if stuck {
            assert!(v[2].x.abs() < 1e-4, "{v:?}");
        } else {
            // Slowed by μ Δv_n, not stopped.
            assert!(v[2].x > 50.0 && v[2].x < 100.0, "{v:?}");
        }
    }
}
