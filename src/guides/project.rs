//! Collision clean-up of interpolated strands. Blending the positions of guides that lie on a
//! curved head puts the blend inside it (a chord under an arc), so upsampled hair that lies on
//! the scalp sinks in. Each strand is walked from the root: a particle inside a collider is
//! given back its rest segment length (follow-the-leader), then pushed out along the surface
//! normal if it is inside a collider; twice.

use glam::Vec3;
use rayon::prelude::*;

use crate::collide::ColliderFrame;

/// Pushes the particles of every strand not in `skip` out of `colliders` (to `margin` outside),
/// keeping segment lengths `rest` (per particle: the length of the segment ending there).
pub fn project_out(
    points: &mut [Vec3],
    counts: &[u32],
    rest_lengths: &[f32],
    skip: &[bool],
    colliders: &ColliderFrame,
    margin: f32,
) -> usize {
    let mut slices: Vec<(usize, &mut [Vec3], &[f32])> = Vec::with_capacity(counts.len());
    let (mut p, mut l) = (points, rest_lengths);
    for (s, &c) in counts.iter().enumerate() {
        let (a, b) = p.split_at_mut(c as usize);
        let (la, lb) = l.split_at(c as usize);
        slices.push((s, a, la));
        p = b;
        l = lb;
    }
    slices
        .into_par_iter()
        .map(|(s, x, len)| {
            if skip[s] || x.len() < 2 {
                return 0;
            }
            let mut moved = 0;
            for _ in 0..2 {
                for i in 1..x.len() {
                    let d = x[i] - x[i - 1];
                    x[i] = x[i - 1] + d.normalize_or(Vec3::NEG_Y) * len[i];
                    if let Some(c) = colliders.query(x[i])
                        && c.distance < margin
                    {
                        x[i] += (margin - c.distance) * c.normal;
                        moved += 1;
                    }
                }
            }
            moved
        })
        .sum()
}
