//! Inverse-distance upsampling (the baseline of 001 §7, Eq. 11): each normal strand follows its
//! k closest guides (k = 10), particle by particle, with weights w_g(i) ∝ 1 / ‖p̄_s(i) − p̄_g(i)‖
//! from the rest shapes. Each guide carries the normal particle in its own local frame
//! (001 Eq. 5 with B_g(i) a rigid transform): the particle's rest offset from the guide
//! particle is turned by the guide's parallel-transported rotation at that particle and added to
//! the guide particle's current position. Everything happens in the head's frame.
//!
//! Particles past the end of a shorter guide follow the guide's last particle (001 §6.1).

use rayon::prelude::*;

use super::fixed::FixedWeights;
use super::layout::GuideLayout;
use crate::error::Result;
use crate::groom::Groom;

/// Rest distances closer than this (cm) are clamped, so a normal particle sitting on a guide
/// particle does not get an infinite weight.
const MIN_DISTANCE: f32 = 1e-4;

impl FixedWeights {
    /// IDW: binds every strand of `groom` (rest shape, head frame) to its `k` closest `guides`
    /// (closest by mean particle distance, among the 4k guides with the closest roots).
    pub fn idw(groom: &Groom, guides: &[usize], k: usize) -> Result<FixedWeights> {
        let layout = GuideLayout::new(groom, guides)?;
        let k = k.clamp(1, guides.len().max(1));
        let bindings = (0..layout.strand_count())
            .into_par_iter()
            .map(|s| {
                let me = layout.strand(s);
                if layout.is_guide(s) || guides.is_empty() || me.is_empty() {
                    return Vec::new();
                }
                let near = layout.closest_guides(s, k, 4 * k);
                // Per-particle weights (001 Eq. 11) from the rest shapes, normalized.
                let mut w: Vec<Vec<f32>> = near
                    .iter()
                    .map(|&slot| {
                        let g = layout.guide_rest(slot as usize);
                        me.iter()
                            .enumerate()
                            .map(|(i, p)| 1.0 / p.distance(g[i.min(g.len() - 1)]).max(MIN_DISTANCE))
                            .collect()
                    })
                    .collect();
                for i in 0..me.len() {
                    let sum: f32 = w.iter().map(|v| v[i]).sum();
                    w.iter_mut().for_each(|v| v[i] /= sum);
                }
                near.into_iter().zip(w).collect()
            })
            .collect();
        Ok(FixedWeights::new(layout, bindings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groom::{GroomParams, generate};
    use glam::Vec3;

    fn groom() -> Groom {
        generate(&GroomParams {
            strands: 400,
            ..GroomParams::default()
        })
        .unwrap()
    }

    fn guide_points(g: &Groom, guides: &[usize], f: impl Fn(Vec3) -> Vec3) -> Vec<Vec3> {
        guides
            .iter()
            .flat_map(|&k| g.strand(k).iter().map(|p| f(*p)).collect::<Vec<_>>())
            .collect()
    }

    #[test]
    fn weights_are_convex_and_rest_reproduces_the_groom() {
        let g = groom();
        let guides = crate::guides::select_uv_lattice(&g, 40);
        let m = FixedWeights::idw(&g, &guides, 10).unwrap();
        for b in m.bindings.iter().filter(|b| !b.is_empty()) {
            assert_eq!(b.len(), 10);
            for i in 0..b[0].1.len() {
                let s: f32 = b.iter().map(|(_, w)| w[i]).sum();
                assert!((s - 1.0).abs() < 1e-5 && b.iter().all(|(_, w)| w[i] >= 0.0));
            }
        }
        // Guides at rest: every strand comes back at its rest shape.
        let out = m.apply(&guide_points(&g, &guides, |p| p));
        let worst = out
            .iter()
            .zip(g.points())
            .map(|(a, b)| a.distance(*b))
            .fold(0.0, f32::max);
        assert!(worst < 1e-4, "{worst}");
    }

    /// A curtain of straight strands bent about one horizontal line: every guide's rotation
    /// below the bend is the same, so every normal particle past the bend must land exactly where
    /// the same rotation about the same line puts it (001 Eq. 5 with rigid B_g).
    #[test]
    fn a_bend_of_the_guides_bends_the_normal_strands_the_same_way() {
        let n = 20;
        let points: Vec<Vec3> = (0..30)
            .flat_map(|s| (0..n).map(move |i| Vec3::new(s as f32 * 0.3, -(i as f32), 0.0)))
            .collect();
        let g = Groom::new(points, vec![n as u32; 30], Default::default()).unwrap();
        let guides: Vec<usize> = (0..30).step_by(3).collect();
        let m = FixedWeights::idw(&g, &guides, 10).unwrap();
        let q = glam::Quat::from_rotation_x(0.8);
        let pivot_y = -10.0;
        let bend = |p: Vec3| {
            if p.y < pivot_y {
                Vec3::new(0.0, pivot_y, 0.0) + q * (p - Vec3::new(0.0, pivot_y, 0.0))
            } else {
                p
            }
        };
        let out = m.apply(&guide_points(&g, &guides, bend));
        let mut worst: f32 = 0.0;
        for s in 0..30 {
            for i in 12..n {
                let k = s * n + i;
                worst = worst.max(out[k].distance(bend(g.points()[k])));
            }
        }
        assert!(worst < 1e-4, "{worst}");
        // Above the bend nothing moves.
        assert!((0..30).all(|s| out[s * n + 3].distance(g.points()[s * n + 3]) < 1e-5));
    }
}
