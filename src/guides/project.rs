//! Collision clean-up of interpolated strands. Blending the positions of guides that lie on a
//! curved head puts the blend inside it (a chord under an arc), so upsampled hair that lies on
//! the scalp sinks in. Each strand is walked from the root: every particle is given back its
//! rest segment length (follow-the-leader, `crate::sim::inextensible::towards`), then pushed out along the surface normal if it is
//! inside a collider; twice.

use glam::Vec3;
use rayon::prelude::*;

use crate::collide::ColliderFrame;
use crate::groom::split_strands_mut;
use crate::sim::inextensible::towards;

/// Pushes the particles of every strand for which `skip` is false out of `colliders` (to
/// `margin` outside), keeping the segment lengths of `rest` (the same strands at rest). Returns
/// how many particles were pushed.
pub fn project_out(
    points: &mut [Vec3],
    rest: &[Vec3],
    counts: &[u32],
    skip: &(dyn Fn(usize) -> bool + Sync),
    colliders: &ColliderFrame,
    margin: f32,
) -> usize {
    let mut offsets = Vec::with_capacity(counts.len());
    let mut o = 0usize;
    for &c in counts {
        offsets.push(o);
        o += c as usize;
    }
    let slices: Vec<(usize, &mut [Vec3], &[Vec3])> = split_strands_mut(points, counts)
        .into_iter()
        .enumerate()
        .map(|(s, x)| (s, x, &rest[offsets[s]..offsets[s] + counts[s] as usize]))
        .collect();
    slices
        .into_par_iter()
        .map(|(s, x, rest)| {
            if skip(s) || x.len() < 2 {
                return 0;
            }
            let mut moved = 0;
            for _ in 0..2 {
                for i in 1..x.len() {
                    x[i] = towards(x[i - 1], x[i], rest[i].distance(rest[i - 1]));
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
