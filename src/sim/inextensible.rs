//! Inextensibility: every way tress puts strands back to (or near) their rest lengths, in one
//! place. They differ on purpose — what may move, whether velocities follow, and whether the
//! root stays — so each says when it is used:
//!
//! - [`follow_the_leader`] (after interpolation, 000's network and the upsampling seam): from
//!   the root, each particle back at its rest distance from the one before, along the
//!   direction to where it was put. Exact lengths; the root stays; positions only.
//! - [`towards`] (the collision projection of upsampled strands, `guides::project`): the same
//!   step for one particle, interleaved with the push out of the solids; a particle on top of
//!   the one before goes straight down.
//! - [`limit_strain`] (the simulation, after each step): edges stretched beyond `1 + max_strain`
//!   shortened from the root, free particles only, their velocities following (so the
//!   correction is not undone by the next step).
//! - [`limit_strain_both_ways`] (between the sweeps of the strand–strand contact response):
//!   edges stretched beyond `1 + max_strain` shortened by moving both ends in proportion to
//!   their inverse masses, a sweep from the root and one back; positions only. A strand held at
//!   both ends or pushed in its middle is not dragged along its length.

use glam::Vec3;

use super::model::{Pin, StrandModel};

/// Rest segment lengths: `out[p]` = |rest[p] − rest[p − 1]| within each strand, 0 at roots.
pub fn rest_segments(rest: &[Vec3], counts: &[u32]) -> Vec<f32> {
    let mut out = Vec::with_capacity(rest.len());
    let mut first = 0;
    for &c in counts {
        let s = &rest[first..first + c as usize];
        for i in 0..s.len() {
            out.push(if i == 0 { 0.0 } else { s[i].distance(s[i - 1]) });
        }
        first += c as usize;
    }
    out
}

/// Follow-the-leader on one strand: the root stays, particle i moves to rest distance
/// `segments[i]` from particle i − 1 towards its own position (a particle on top of the one
/// before stays).
pub fn follow_the_leader(points: &mut [Vec3], segments: &[f32]) {
    for i in 1..points.len().min(segments.len()) {
        let d = points[i] - points[i - 1];
        let l = d.length();
        if l > 1e-9 {
            points[i] = points[i - 1] + d * (segments[i] / l);
        }
    }
}

/// The point at distance `length` from `before` towards `p` (straight down from `before` when
/// `p` is on it): one follow-the-leader step.
pub fn towards(before: Vec3, p: Vec3, length: f32) -> Vec3 {
    before + (p - before).normalize_or(Vec3::NEG_Y) * length
}

/// Limits edge strain of strand `s` to `max_strain` walking from the root; moved particles get
/// the matching velocity change (so the correction is not undone next step). Returns the
/// largest strain seen.
pub fn limit_strain(
    model: &StrandModel,
    s: usize,
    x: &mut [Vec3],
    v: &mut [Vec3],
    max_strain: f32,
    h: f32,
) -> f32 {
    let o = model.offsets[s];
    let mut worst: f32 = 0.0;
    for i in 0..x.len().saturating_sub(1) {
        let rest = model.edge_rest(s, o + i);
        let d = x[i + 1] - x[i];
        let l = d.length();
        if rest <= 0.0 || l <= 0.0 {
            continue;
        }
        worst = worst.max(l / rest - 1.0);
        let max = rest * (1.0 + max_strain);
        if l > max && model.pins[o + i + 1] == Pin::Free {
            let target = x[i] + d * (max / l);
            v[i + 1] += (target - x[i + 1]) / h;
            x[i + 1] = target;
        }
    }
    worst
}

/// Brings a strand's stretched edges back to at most `(1 + max_strain)` times their rest length
/// (`rest(i)`, edge i from particle i to i + 1) by moving both ends in proportion to their
/// inverse masses (kinematic particles, inverse mass 0, stay), a sweep from the root and one
/// back. Positions only: velocities are left as the contact response set them (a velocity
/// following every correction would throw strands apart after the response pushed them).
pub fn limit_strain_both_ways(
    x: &mut [Vec3],
    inv_mass: &[f32],
    rest: impl Fn(usize) -> f32,
    max_strain: f32,
) {
    let n = x.len();
    if n < 2 {
        return;
    }
    let mut edge = |i: usize| {
        let max = rest(i) * (1.0 + max_strain);
        let d = x[i + 1] - x[i];
        let l = d.length();
        let (wa, wb) = (inv_mass[i], inv_mass[i + 1]);
        if l <= max || l <= 0.0 || wa + wb <= 0.0 {
            return;
        }
        let c = (l - max) / (l * (wa + wb)) * d;
        x[i] += wa * c;
        x[i + 1] -= wb * c;
    };
    for i in 0..n - 1 {
        edge(i);
    }
    for i in (0..n - 1).rev() {
        edge(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strands_get_their_rest_lengths_back() {
        let rest = [Vec3::ZERO, Vec3::Y, Vec3::Y * 2.0, Vec3::Y * 3.0];
        let seg = rest_segments(&rest, &[4]);
        assert_eq!(seg, vec![0.0, 1.0, 1.0, 1.0]);
        // Stretched along a bent line: lengths restored, root kept, each segment's direction
        // kept where the previous particle did not move.
        let mut p = [
            Vec3::ZERO,
            Vec3::X * 2.0,
            Vec3::new(2.0, 3.0, 0.0),
            Vec3::new(2.0, 3.5, 0.0),
        ];
        follow_the_leader(&mut p, &seg);
        assert_eq!(p[0], Vec3::ZERO);
        assert!((p[1] - Vec3::X).length() < 1e-6);
        for i in 1..4 {
            assert!((p[i].distance(p[i - 1]) - 1.0).abs() < 1e-6);
        }
        // Particle 2 lies towards where it was put (2, 3, 0) from the moved particle 1.
        let want = Vec3::X + (Vec3::new(2.0, 3.0, 0.0) - Vec3::X).normalize();
        assert!(p[2].distance(want) < 1e-6);
        // A strand already at its rest lengths does not move.
        let mut q = rest;
        follow_the_leader(&mut q, &seg);
        assert_eq!(q, rest);
        // One step of it: at the distance asked, towards the point, straight down from on top.
        assert!(
            (towards(Vec3::ZERO, Vec3::new(3.0, 4.0, 0.0), 2.0) - Vec3::new(1.2, 1.6, 0.0)).length() < 1e-6
        );
        assert_eq!(towards(Vec3::X, Vec3::X, 2.0), Vec3::new(1.0, -2.0, 0.0));
    }

    #[test]
    fn both_ways_limit_moves_free_ends_only_and_keeps_short_edges() {
        // Edge 0–1 stretched to 3 (rest 1, limit 1.5); the root is kinematic. By hand: the
        // sweep from the root moves particle 1 to 1.5 (the root cannot move), then edge 1–2
        // (2.0 long) shares its 0.5 excess equally: 1.75 and 3.25; the sweep back shortens
        // edge 0–1 again, particle 1 alone: 1.5. One sweep each way, so edge 1–2 keeps 1.75.
        let mut x = [Vec3::ZERO, Vec3::X * 3.0, Vec3::X * 3.5];
        limit_strain_both_ways(&mut x, &[0.0, 1.0, 1.0], |_| 1.0, 0.5);
        let want = [0.0, 1.5, 3.25];
        for (p, w) in x.iter().zip(want) {
            assert!((p.x - w).abs() < 1e-6 && p.y == 0.0 && p.z == 0.0, "{x:?}");
        }
        // An edge within its limit is left alone.
        let mut y = [Vec3::ZERO, Vec3::X * 1.2];
        limit_strain_both_ways(&mut y, &[1.0, 1.0], |_| 1.0, 0.5);
        assert_eq!(y, [Vec3::ZERO, Vec3::X * 1.2]);
    }
}
