//! Inextensibility after interpolation: blended strands come out longer or shorter than their
//! rest shape (a blend of rotated guides shortens a strand; 000 Eq. 5's length loss only lowers
//! it on average). Follow-the-leader from the root puts every particle back at its rest distance
//! from the one before, along the direction towards where the interpolation put it, so the
//! strand keeps its length and stays as close to the interpolated shape as that allows.

use glam::Vec3;

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
/// `segments[i]` from particle i − 1 towards its own position.
pub fn keep_lengths(points: &mut [Vec3], segments: &[f32]) {
    for i in 1..points.len().min(segments.len()) {
        let d = points[i] - points[i - 1];
        let l = d.length();
        if l > 1e-9 {
            points[i] = points[i - 1] + d * (segments[i] / l);
        }
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
        keep_lengths(&mut p, &seg);
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
        keep_lengths(&mut q, &seg);
        assert_eq!(q, rest);
    }
}
