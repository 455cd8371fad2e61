//! Collision clean-up of interpolated strands. Blending the positions of guides that lie on a
//! curved head puts the blend inside it (a chord under an arc), so upsampled hair that lies on
//! the scalp sinks in. Each strand is walked from the root: every particle is given back its
//! rest segment length (follow-the-leader, `crate::sim::inextensible::towards`), then pushed out along the surface normal if it is
//! inside a collider; twice.
//!
//! [`push_out_of_props`] is the same push for the props alone (a row's `contact` correction):
//! it leaves the head and body to the method, and a strand no prop touches exactly as the
//! interpolation gave it. It is the per-strand complement of 001 §5's two-way correction
//! (`two_way.rs`), which can only move guides, each carrying a dozen strands: on props as wide
//! as the hair layer, or sweeping along the strands, that costs more error than it removes (the
//! book's "Props the examples do not use").

use glam::Vec3;
use rayon::prelude::*;

use crate::collide::ColliderFrame;
use crate::groom::split_strands_mut;
use crate::sim::inextensible::towards;

/// Pushes the particles of every strand for which `skip` is false out of `colliders` (to
/// `margin` outside), keeping the segment lengths of `rest` (the same strands at rest). Returns
/// how many particles were pushed.
///
/// The second walk only runs on strands the first one pushed (on the others it would give each
/// particle back the length it already has), and each query asks only the colliders that can
/// come within `margin` ([`ColliderFrame::query_near`]): until a strand's first push, every
/// particle lies within the strand's rest length of its root, so the colliders that cannot
/// reach that sphere are culled for the whole strand ([`ColliderFrame::parts_near`]); after a
/// push, every collider is asked again. Both give the answers of querying every collider.
pub fn project_out(
    points: &mut [Vec3],
    rest: &[Vec3],
    counts: &[u32],
    skip: &(dyn Fn(usize) -> bool + Sync),
    colliders: &ColliderFrame,
    margin: f32,
) -> usize {
    with_rest(points, rest, counts)
        .into_par_iter()
        .map(|(s, x, rest)| {
            if skip(s) || x.len() < 2 {
                return 0;
            }
            let lengths = || rest.windows(2).map(|w| w[1].distance(w[0]));
            // Every particle walked from the root before a push is within the rest length of
            // it (with room for rounding).
            let reach_of_root = lengths().sum::<f32>() * 1.001 + 1e-4;
            let mut parts = colliders.parts_near(x[0], reach_of_root, margin);
            let mut moved = 0;
            for walk in 0..2 {
                if walk == 1 && moved == 0 {
                    break;
                }
                for (i, length) in (1..x.len()).zip(lengths()) {
                    x[i] = towards(x[i - 1], x[i], length);
                    if let Some(c) = colliders.query_near(x[i], margin, parts)
                        && c.distance < margin
                    {
                        x[i] += (margin - c.distance) * c.normal;
                        moved += 1;
                        parts = u64::MAX;
                    }
                }
            }
            moved
        })
        .sum()
}

/// Pushes the particles of every strand for which `skip` is false out of the props of
/// `colliders` (to `margin` outside, along the prop's normal, twice), walking the strand below
/// the first particle pushed follow-the-leader so its segments keep the rest lengths of `rest`;
/// particles above it, and strands no prop touches, are left as they are. Returns how many
/// particles were pushed.
pub fn push_out_of_props(
    points: &mut [Vec3],
    rest: &[Vec3],
    counts: &[u32],
    skip: &(dyn Fn(usize) -> bool + Sync),
    colliders: &ColliderFrame,
    margin: f32,
) -> usize {
    if !colliders.has_props() {
        return 0;
    }
    with_rest(points, rest, counts)
        .into_par_iter()
        .map(|(s, x, rest)| {
            if skip(s) || x.is_empty() {
                return 0;
            }
            // Until the first push every particle is where the method put it, within this of
            // the root: the props that cannot come within the margin of that sphere are culled
            // (most strands touch none); after a push, every prop is asked again.
            let radius = x.iter().map(|p| p.distance(x[0])).fold(0.0f32, f32::max) * 1.001 + 1e-4;
            let mut parts = colliders.props_near(x[0], radius, margin);
            if parts == 0 {
                return 0;
            }
            let mut moved = 0;
            for i in 1..x.len() {
                if moved > 0 {
                    x[i] = towards(x[i - 1], x[i], rest[i].distance(rest[i - 1]));
                }
                for _ in 0..2 {
                    match colliders.query_props_near(x[i], margin, parts) {
                        Some(c) if c.distance < margin => {
                            x[i] += (margin - c.distance) * c.normal;
                            moved += 1;
                            parts = u64::MAX;
                        }
                        _ => break,
                    }
                }
            }
            moved
        })
        .sum()
}

/// Symmetric length-relaxation passes of [`spread_out`] at most (forward and backward sweeps,
/// each followed by the push).
pub const SPREAD_PASSES: usize = 40;

/// Over-relaxation of [`spread_out`]'s sweeps: each segment is moved this many times its length
/// error. On the rod job (the book's "Where projection's cost comes from"), 1.8 and 40 passes
/// leave lengths off by at most 5 % where plain Gauss–Seidel (1.0) leaves 24 % after 100.
pub const SPREAD_OMEGA: f32 = 1.8;

/// [`spread_out`] stops relaxing a strand once a pass pushed nothing and left every segment
/// within this of its rest length (relative).
pub const SPREAD_TOLERANCE: f32 = 0.01;

/// How far past the margin a query of [`spread_out`] looks: a particle found at least this far
/// out is not asked again until the relaxation has moved it that far.
const SPREAD_ROOM: f32 = 1.0;

/// The projection that spreads a push's length change along the strand (the row correction
/// `spread`), where [`project_out`] hands it to the tail. Every strand is walked from the root
/// follow-the-leader (its rest segment lengths back, as [`project_out`] does; a strand no solid
/// touches ends there, as it would with [`project_out`]). Every particle inside `margin` of a
/// collider is then pushed out along the normal without a walk, and the pushed strands' segment
/// lengths are relaxed back towards rest: over-relaxed ([`SPREAD_OMEGA`]) Gauss–Seidel sweeps
/// over the segments, alternately from the root and from the tip, each segment's correction
/// shared by its two particles (the root held), each sweep followed by the push again, until a
/// sweep finds every segment within [`SPREAD_TOLERANCE`] of rest and the push after it moves
/// nothing ([`SPREAD_PASSES`] at most). A strand through the head becomes one that goes around
/// it, and the arc's extra length is taken up along the whole strand instead of lifting the
/// tail by it. Returns how many particle pushes there were.
///
/// A particle is asked again only once the sweeps have moved it (the sum of its moves) as far
/// as it was found from every collider past the margin (up to [`SPREAD_ROOM`]), times the
/// smallest slope of the colliders' bounds: 1 where the distances are exact (spheres, capsules,
/// grids), so it cannot have come within the margin unasked; below 1 for the ellipsoid's
/// first-order distance, which can change faster than the point moves.
pub fn spread_out(
    points: &mut [Vec3],
    rest: &[Vec3],
    counts: &[u32],
    skip: &(dyn Fn(usize) -> bool + Sync),
    colliders: &ColliderFrame,
    margin: f32,
) -> usize {
    let slope = colliders
        .bounds()
        .map_or(0.5, |b| b.iter().map(|b| b.slope).fold(1.0f32, f32::min));
    with_rest(points, rest, counts)
        .into_par_iter()
        .map(|(s, x, rest)| {
            if skip(s) || x.len() < 2 {
                return 0;
            }
            let n = x.len();
            let mut reach_of_root = 0.0f32;
            for i in 1..n {
                let length = rest[i].distance(rest[i - 1]);
                x[i] = towards(x[i - 1], x[i], length);
                reach_of_root += length;
            }
            let parts = colliders.parts_near(x[0], reach_of_root * 1.001 + 1e-4, margin + SPREAD_ROOM);
            if parts == 0 {
                return 0;
            }
            // Per particle: how far it may move before it must be asked again, and how far it
            // has moved since it was last asked.
            let mut room = vec![0.0f32; n];
            let mut moved = vec![0.0f32; n];
            let mut pushes = 0;
            let push = |x: &mut [Vec3], room: &mut [f32], moved: &mut [f32], parts: u64| -> usize {
                let mut count = 0;
                for i in 1..x.len() {
                    if moved[i] < room[i] {
                        continue;
                    }
                    moved[i] = 0.0;
                    room[i] = match colliders.query_near(x[i], margin + SPREAD_ROOM, parts) {
                        Some(c) if c.distance < margin => {
                            x[i] += (margin - c.distance) * c.normal;
                            count += 1;
                            0.0
                        }
                        Some(c) => (c.distance - margin).min(SPREAD_ROOM) * slope,
                        None => SPREAD_ROOM * slope,
                    };
                }
                count
            };
            pushes += push(x, &mut room, &mut moved, parts);
            if pushes == 0 {
                return 0;
            }
            let lengths: Vec<f32> = rest.windows(2).map(|w| w[1].distance(w[0])).collect();
            // Pushed and relaxed, particles may leave the sphere the culling assumed.
            let parts = u64::MAX;
            for pass in 0..SPREAD_PASSES {
                let mut worst = 0.0f32;
                let mut relax = |k: usize, x: &mut [Vec3]| {
                    let d = x[k + 1] - x[k];
                    let l = d.length();
                    worst = worst.max((l - lengths[k]).abs() / lengths[k].max(1e-12));
                    if l <= 1e-12 {
                        return;
                    }
                    // The root segment's particle takes the whole correction alone: not
                    // over-relaxed (it would overshoot by as much as it corrects).
                    let w = if k == 0 { 1.0 } else { SPREAD_OMEGA };
                    let c = d * (w * (l - lengths[k]) / l);
                    if k == 0 {
                        x[1] -= c;
                        moved[1] += c.length();
                    } else {
                        x[k] += 0.5 * c;
                        x[k + 1] -= 0.5 * c;
                        let m = 0.5 * c.length();
                        moved[k] += m;
                        moved[k + 1] += m;
                    }
                };
                if pass % 2 == 0 {
                    (0..n - 1).for_each(|k| relax(k, x));
                } else {
                    (0..n - 1).rev().for_each(|k| relax(k, x));
                }
                let pushed = push(x, &mut room, &mut moved, parts);
                pushes += pushed;
                if pushed == 0 && worst < SPREAD_TOLERANCE {
                    break;
                }
            }
            pushes
        })
        .sum()
}

/// Each strand's index, its particles and its rest particles.
fn with_rest<'a>(
    points: &'a mut [Vec3],
    rest: &'a [Vec3],
    counts: &[u32],
) -> Vec<(usize, &'a mut [Vec3], &'a [Vec3])> {
    let mut o = 0usize;
    split_strands_mut(points, counts)
        .into_iter()
        .enumerate()
        .map(|(s, x)| {
            let r = &rest[o..o + x.len()];
            o += x.len();
            (s, x, r)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use glam::Vec3;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::collide::{BodyParams, HeadShape, body};
    use crate::motion::{HeadTrack, Pose};

    /// 400 straight strands of 12 particles on the procedural head and body, scattered: 30 % of
    /// the particles moved up to 2 cm towards the head's centre, the others up to `jitter` cm
    /// along each axis (seeded). The colliders, the rest groom, its counts, the scattered one.
    fn scattered(seed: u64, jitter: f32) -> (crate::collide::Colliders, Vec<Vec3>, Vec<u32>, Vec<Vec3>) {
        let scene =
            crate::scene::load_groom("straight", &crate::groom::Transform::default(), Some(400)).unwrap();
        let scalp = scene.procedural.as_ref().unwrap().scalp;
        let center = scalp.center;
        let colliders = body::colliders(
            HeadShape::Procedural(scalp),
            &BodyParams::default(),
            HeadTrack::still(Pose::IDENTITY),
        );
        let groom = crate::groom::resample::resample(&scene.groom, 12);
        let rest = groom.points().to_vec();
        let counts = groom.counts().to_vec();
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let blended: Vec<Vec3> = rest
            .iter()
            .map(|&p| {
                if rng.random_bool(0.3) {
                    p + (center - p).normalize() * rng.random_range(0.0..2.0)
                } else {
                    p + Vec3::new(
                        rng.random_range(-jitter..jitter),
                        rng.random_range(-jitter..jitter),
                        rng.random_range(-jitter..jitter),
                    )
                }
            })
            .collect();
        (colliders, rest, counts, blended)
    }

    /// The projection as first written: both walks on every strand, every collider asked.
    fn every_collider_twice(
        points: &mut [Vec3],
        rest: &[Vec3],
        counts: &[u32],
        colliders: &ColliderFrame,
        margin: f32,
    ) -> usize {
        let mut moved = 0;
        let mut o = 0;
        for &c in counts {
            let (x, r) = (&mut points[o..o + c as usize], &rest[o..o + c as usize]);
            for _ in 0..2 {
                for i in 1..x.len() {
                    x[i] = towards(x[i - 1], x[i], r[i].distance(r[i - 1]));
                    if let Some(c) = colliders.query(x[i])
                        && c.distance < margin
                    {
                        x[i] += (margin - c.distance) * c.normal;
                        moved += 1;
                    }
                }
            }
            o += c as usize;
        }
        moved
    }

    /// Strands of a groom on the procedural head and body, blended as an interpolator would
    /// (each particle drawn towards the head's centre or scattered by up to 3 cm), pushed out
    /// by both: the same particles pushed and the same positions up to rounding (the skipped
    /// walk gives back lengths the particles already have; the culled colliders are at least
    /// `margin` away).
    #[test]
    fn culling_and_one_walk_give_the_answers_of_every_collider_twice() {
        let (colliders, rest, counts, blended) = scattered(7, 3.0);
        let frame = colliders.at(0.0);
        let margin = 0.05;
        let (mut fast, mut reference) = (blended.clone(), blended);
        let pushed = project_out(&mut fast, &rest, &counts, &|_| false, &frame, margin);
        let expected = every_collider_twice(&mut reference, &rest, &counts, &frame, margin);
        assert!(
            expected > 100 && expected < rest.len(),
            "{expected} pushes: not a mixed case"
        );
        assert_eq!(pushed, expected);
        let worst = fast
            .iter()
            .zip(&reference)
            .map(|(a, b)| a.distance(*b))
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-4, "{worst} cm");
    }

    /// The spread projection as first written: every particle asks every collider after every
    /// sweep.
    fn spread_asking_everything(
        points: &mut [Vec3],
        rest: &[Vec3],
        counts: &[u32],
        frame: &ColliderFrame,
        margin: f32,
    ) -> usize {
        let mut o = 0;
        let mut pushes = 0;
        for &c in counts {
            let (x, r) = (&mut points[o..o + c as usize], &rest[o..o + c as usize]);
            o += c as usize;
            let lengths: Vec<f32> = r.windows(2).map(|w| w[1].distance(w[0])).collect();
            for i in 1..x.len() {
                x[i] = towards(x[i - 1], x[i], lengths[i - 1]);
            }
            let push = |x: &mut [Vec3]| {
                let mut count = 0;
                for p in x[1..].iter_mut() {
                    if let Some(c) = frame.query(*p)
                        && c.distance < margin
                    {
                        *p += (margin - c.distance) * c.normal;
                        count += 1;
                    }
                }
                count
            };
            let first = push(x);
            pushes += first;
            if first == 0 {
                continue;
            }
            for pass in 0..SPREAD_PASSES {
                let mut worst = 0.0f32;
                let order: Vec<usize> = if pass % 2 == 0 {
                    (0..x.len() - 1).collect()
                } else {
                    (0..x.len() - 1).rev().collect()
                };
                for k in order {
                    let d = x[k + 1] - x[k];
                    let l = d.length();
                    worst = worst.max((l - lengths[k]).abs() / lengths[k]);
                    let w = if k == 0 { 1.0 } else { SPREAD_OMEGA };
                    let c = d * (w * (l - lengths[k]) / l);
                    if k == 0 {
                        x[1] -= c;
                    } else {
                        x[k] += 0.5 * c;
                        x[k + 1] -= 0.5 * c;
                    }
                }
                let pushed = push(x);
                pushes += pushed;
                if pushed == 0 && worst < SPREAD_TOLERANCE {
                    break;
                }
            }
        }
        pushes
    }

    /// The spread projection's shortcuts (the strand's colliders culled until its first push, a
    /// particle asked again only once the sweeps could have brought it within the margin) give
    /// the answers of asking every collider for every particle after every sweep, on a groom
    /// scattered in and around the head and body.
    #[test]
    fn the_spread_projection_asks_only_where_the_answer_can_change() {
        let (colliders, rest, counts, blended) = scattered(11, 2.0);
        let frame = colliders.at(0.0);
        let margin = 0.05;
        let (mut fast, mut reference) = (blended.clone(), blended);
        let pushed = spread_out(&mut fast, &rest, &counts, &|_| false, &frame, margin);
        let expected = spread_asking_everything(&mut reference, &rest, &counts, &frame, margin);
        assert!(expected > 100, "{expected} pushes: too few to tell");
        assert_eq!(pushed, expected);
        let worst = fast
            .iter()
            .zip(&reference)
            .map(|(a, b)| a.distance(*b))
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-4, "{worst} cm");
    }

    /// Analytic case: three vertical strands (14 particles, 1 cm apart) hang beside a head
    /// sphere and a prop ball (radius 2). The first passes through the ball, the second is a
    /// guide through it (skipped), the third hangs clear of it but partly inside the head. After
    /// the push: no particle of the first within the margin of the ball, its particles above the
    /// first push bit-identical, its segments below it of rest length; the guide and the third
    /// strand bit-identical (the head is not a prop).
    #[test]
    fn the_push_out_of_props_clears_the_prop_and_leaves_everything_else() {
        use crate::collide::{Colliders, Sphere};
        let mut colliders = Colliders::on_head(
            vec![(
                "head",
                Box::new(Sphere {
                    center: Vec3::new(20.0, 0.0, 0.0),
                    radius: 3.0,
                }),
            )],
            HeadTrack::still(Pose::IDENTITY),
        );
        colliders.add_prop(
            "ball",
            Box::new(Sphere {
                center: Vec3::ZERO,
                radius: 2.0,
            }),
            HeadTrack::still(Pose::new(glam::DQuat::IDENTITY, glam::DVec3::new(0.3, -4.5, 0.0))),
        );
        let strand = |x: f32| (0..14).map(move |i| Vec3::new(x, -(i as f32), 0.0));
        let rest: Vec<Vec3> = strand(0.0).chain(strand(0.5)).chain(strand(20.5)).collect();
        // The interpolated strands are a little stretched (1.05 cm segments).
        let blended: Vec<Vec3> = rest.iter().map(|p| Vec3::new(p.x, p.y * 1.05, p.z)).collect();
        let counts = [14u32, 14, 14];
        let frame = colliders.at(0.0);
        let margin = 0.03;
        let mut x = blended.clone();
        let pushed = push_out_of_props(&mut x, &rest, &counts, &|s| s == 1, &frame, margin);
        assert!(pushed >= 3, "{pushed} pushes");
        let ball = Vec3::new(0.3, -4.5, 0.0);
        let first = (1..14)
            .find(|&i| blended[i].distance(ball) < 2.0 + margin)
            .expect("the first strand passes through the ball");
        let mut rest_length_segments = 0;
        for i in 0..14 {
            assert!(
                x[i].distance(ball) >= 2.0 + margin - 1e-4,
                "particle {i} at {:?}",
                x[i]
            );
            // The strand lies left of the ball's centre (x = 0 < 0.3): pushed left, never
            // through the ball to its right.
            assert!(x[i].x <= 0.0, "particle {i} at {:?}", x[i]);
            if i < first {
                assert_eq!(x[i], blended[i], "particle {i} above the first push moved");
            } else if x[i].distance(ball) > 2.0 + margin + 1e-3 {
                // Walked follow-the-leader and not pushed after: the rest length.
                assert!((x[i].distance(x[i - 1]) - 1.0).abs() < 1e-5, "segment {i}");
                rest_length_segments += 1;
            }
        }
        assert!(rest_length_segments >= 2, "{rest_length_segments}");
        assert_eq!(
            &x[14..],
            &blended[14..],
            "the guide and the strand in the head moved"
        );
        assert!(
            frame.query(blended[30]).unwrap().distance < 0.0,
            "the head case is not inside"
        );
    }

    /// The spread projection on a strand cutting into a sphere, against the walk's: every
    /// particle ends outside the margin, on the strand's side, the root stays, segments stay
    /// within 5 % of their rest length, and the tip moves less than half as far as the walk
    /// moves it (which hands the whole arc's extra length to the tail). A strand no solid touches is exactly the walk's answer (lengths restored), and a
    /// skipped strand (a guide) is left alone.
    #[test]
    fn the_spread_projection_clears_the_solid_and_keeps_the_tail() {
        use crate::collide::{Colliders, Sphere};
        // The strand cuts 0.8 cm into the sphere, a chord under its arc.
        let (center, radius) = (Vec3::new(0.0, -8.0, 2.2), 3.0);
        let colliders = Colliders::on_head(
            vec![("head", Box::new(Sphere { center, radius }))],
            HeadTrack::still(Pose::IDENTITY),
        );
        let strand = |x: f32| (0..20).map(move |i| Vec3::new(x, -(i as f32), 0.0));
        let rest: Vec<Vec3> = strand(0.0).chain(strand(10.0)).chain(strand(0.2)).collect();
        let blended: Vec<Vec3> = rest.iter().map(|p| Vec3::new(p.x, p.y * 1.05, p.z)).collect();
        let counts = [20u32, 20, 20];
        let frame = colliders.at(0.0);
        let margin = 0.03;
        let guide = |s: usize| s == 2;
        let mut walked = blended.clone();
        project_out(&mut walked, &rest, &counts, &guide, &frame, margin);
        let mut x = blended.clone();
        let pushes = spread_out(&mut x, &rest, &counts, &guide, &frame, margin);
        assert!(pushes > 0);
        assert_eq!(x[0], blended[0], "the root moved");
        for (i, p) in x[..20].iter().enumerate() {
            assert!(
                p.distance(center) >= radius + margin - 1e-4,
                "particle {i} at {p:?} is inside"
            );
            // The strand lies on the sphere's −z side: pushed that way, never through.
            assert!(p.z <= 1e-6, "particle {i} at {p:?}");
        }
        for i in 1..20 {
            let l = x[i].distance(x[i - 1]);
            assert!((l - 1.0).abs() < 0.05, "segment {i}: {l}");
        }
        // Both first give the strand its rest lengths back (the straight rest strand); from
        // there the walk lifts the tail by the arc's extra length, the spread by a fraction.
        let (tip, tip_walked) = (x[19].distance(rest[19]), walked[19].distance(rest[19]));
        assert!(
            tip < 0.5 * tip_walked,
            "the tip moved {tip} cm, the walk's {tip_walked} cm"
        );
        assert_eq!(
            &x[20..40],
            &walked[20..40],
            "the untouched strand is not the walk's"
        );
        assert_eq!(&x[40..], &blended[40..], "the guide moved");
    }

    /// The push out of the props as first written: every particle asks every prop.
    fn every_prop(points: &mut [Vec3], rest: &[Vec3], counts: &[u32], frame: &ColliderFrame, margin: f32) {
        let mut o = 0;
        for &c in counts {
            let (x, r) = (&mut points[o..o + c as usize], &rest[o..o + c as usize]);
            let mut moved = 0;
            for i in 1..x.len() {
                if moved > 0 {
                    x[i] = towards(x[i - 1], x[i], r[i].distance(r[i - 1]));
                }
                for _ in 0..2 {
                    match frame.query_props(x[i]) {
                        Some(c) if c.distance < margin => {
                            x[i] += (margin - c.distance) * c.normal;
                            moved += 1;
                        }
                        _ => break,
                    }
                }
            }
            o += c as usize;
        }
    }

    /// A groom on the procedural head and body with two balls in its hair, blended as an
    /// interpolator would (scattered by up to 3 cm): culling the props a strand cannot reach
    /// gives the strands of asking every prop for every particle, up to rounding (a bound in
    /// world space and a distance in object space may fall on either side of the margin), with
    /// a mixed case (some strands pushed, most not).
    #[test]
    fn culling_the_props_gives_the_answers_of_asking_every_prop() {
        use crate::collide::Sphere;
        let scene =
            crate::scene::load_groom("straight", &crate::groom::Transform::default(), Some(400)).unwrap();
        let scalp = scene.procedural.as_ref().unwrap().scalp;
        let mut colliders = body::colliders(
            HeadShape::Procedural(scalp),
            &BodyParams::default(),
            HeadTrack::still(Pose::IDENTITY),
        );
        for (name, at) in [("a", [0.0, -14.0, -9.0]), ("b", [6.0, -24.0, -8.0])] {
            colliders.add_prop(
                name,
                Box::new(Sphere {
                    center: Vec3::ZERO,
                    radius: 2.5,
                }),
                HeadTrack::still(Pose::new(glam::DQuat::IDENTITY, glam::DVec3::from_array(at))),
            );
        }
        let groom = crate::groom::resample::resample(&scene.groom, 12);
        let rest = groom.points().to_vec();
        let counts = groom.counts().to_vec();
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let blended: Vec<Vec3> = rest
            .iter()
            .map(|&p| {
                p + Vec3::new(
                    rng.random_range(-3.0..3.0),
                    rng.random_range(-3.0..3.0),
                    rng.random_range(-3.0..3.0),
                )
            })
            .collect();
        let frame = colliders.at(0.0);
        let (mut fast, mut reference) = (blended.clone(), blended.clone());
        let pushed = push_out_of_props(&mut fast, &rest, &counts, &|_| false, &frame, 0.03);
        every_prop(&mut reference, &rest, &counts, &frame, 0.03);
        let changed = (0..counts.len())
            .filter(|&s| {
                let o = s * 12;
                reference[o..o + 12] != blended[o..o + 12]
            })
            .count();
        assert!(
            pushed > 0 && changed > 0 && changed < counts.len() / 2,
            "{pushed} pushes, {changed} strands"
        );
        let worst = fast
            .iter()
            .zip(&reference)
            .map(|(a, b)| a.distance(*b))
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-4, "{worst} cm");
    }
}
