//! Inverse-distance upsampling (the baseline of 001 §7, Eq. 11): each normal strand follows its
//! k closest guides (k = 10), particle by particle, with weights w_g(i) ∝ 1 / ‖p̄_s(i) − p̄_g(i)‖
//! from the rest shapes. Each guide carries the normal particle in its own local frame
//! (001 Eq. 5 with B_g(i) a rigid transform): the particle's rest offset from the guide
//! particle is turned by the guide's parallel-transported rotation at that particle and added to
//! the guide particle's current position. Everything happens in the head's frame.
//!
//! Particles past the end of a shorter guide follow the guide's last particle (001 §6.1).

use std::time::{Duration, Instant};

use glam::Vec3;
use rayon::prelude::*;

use super::interpolator::{GuideFrame, InterpTimes, Interpolator, Method};
use super::layout::GuideLayout;
use crate::error::Result;
use crate::groom::{Groom, split_strands_mut};

/// How each normal strand is bound to its guides.
#[derive(Clone, Debug)]
pub struct IdwModel {
    pub layout: GuideLayout,
    /// For each strand: (guide slot, weight per particle) of its k guides; empty for guides.
    pub bindings: Vec<Vec<(u32, Vec<f32>)>>,
    time: Duration,
}

/// Rest distances closer than this (cm) are clamped, so a normal particle sitting on a guide
/// particle does not get an infinite weight.
const MIN_DISTANCE: f32 = 1e-4;

impl IdwModel {
    /// Binds every strand of `groom` (rest shape, head frame) to its `k` closest `guides`
    /// (closest by mean particle distance, among the 4k guides with the closest roots).
    pub fn new(groom: &Groom, guides: &[usize], k: usize) -> Result<IdwModel> {
        let layout = GuideLayout::new(groom, guides)?;
        let strand = |s: usize| layout.strand(s);
        let k = k.clamp(1, guides.len().max(1));
        let bindings = (0..layout.strand_count())
            .into_par_iter()
            .map(|s| {
                if layout.is_guide(s) || guides.is_empty() || strand(s).is_empty() {
                    return Vec::new();
                }
                let me = strand(s);
                // Candidates by root distance, then the k closest by mean particle distance.
                let mut by_root: Vec<(f32, u32)> = guides
                    .iter()
                    .enumerate()
                    .map(|(slot, &g)| (me[0].distance_squared(strand(g)[0]), slot as u32))
                    .collect();
                let pool = (4 * k).min(by_root.len());
                by_root.select_nth_unstable_by(pool - 1, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                let mut near: Vec<(f32, u32)> = by_root[..pool]
                    .iter()
                    .map(|&(_, slot)| {
                        let g = strand(guides[slot as usize]);
                        let d: f32 = me
                            .iter()
                            .enumerate()
                            .map(|(i, p)| p.distance(g[i.min(g.len() - 1)]))
                            .sum();
                        (d / me.len() as f32, slot)
                    })
                    .collect();
                near.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                near.truncate(k);
                // Per-particle weights (001 Eq. 11) from the rest shapes, normalized.
                let mut w: Vec<Vec<f32>> = near
                    .iter()
                    .map(|&(_, slot)| {
                        let g = strand(guides[slot as usize]);
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
                near.iter().map(|&(_, slot)| slot).zip(w).collect()
            })
            .collect();
        Ok(IdwModel {
            layout,
            bindings,
            time: Duration::ZERO,
        })
    }

    /// Whether strand `s` is one of the guides.
    pub fn is_guide(&self, s: usize) -> bool {
        self.layout.is_guide(s)
    }

    /// The whole groom (head frame) from the guides' current shapes (head frame, the guides'
    /// particles in slot order).
    pub fn apply(&self, guide_points: &[Vec3]) -> Vec<Vec3> {
        let mut out = vec![Vec3::ZERO; self.layout.rest.len()];
        blend(&self.layout, &self.bindings, guide_points, &mut out);
        out
    }
}

/// Every strand as the weighted blend of where its guides carry it (001 Eq. 5), guides copied.
pub fn blend(
    layout: &GuideLayout,
    bindings: &[Vec<(u32, Vec<f32>)>],
    guide_points: &[Vec3],
    out: &mut [Vec3],
) {
    let rot = layout.rotations(guide_points);
    split_strands_mut(out, &layout.counts)
        .into_par_iter()
        .enumerate()
        .for_each(|(s, dst)| {
            if let Some(slot) = layout.slot(s) {
                dst.copy_from_slice(layout.guide(slot, guide_points));
                return;
            }
            let me = layout.strand(s);
            for (i, d) in dst.iter_mut().enumerate() {
                let mut acc = Vec3::ZERO;
                for (slot, w) in &bindings[s] {
                    acc += w[i] * layout.carried(&rot, guide_points, *slot as usize, i, me[i]);
                }
                *d = acc;
            }
        });
}

impl Interpolator for IdwModel {
    fn method(&self) -> Method {
        Method::Idw
    }

    fn layout(&self) -> &GuideLayout {
        &self.layout
    }

    fn interpolate(&mut self, frame: &GuideFrame, out: &mut [Vec3]) -> Result<()> {
        self.layout.check_frame(frame.guides)?;
        let t = Instant::now();
        blend(&self.layout, &self.bindings, frame.guides, out);
        self.time += t.elapsed();
        Ok(())
    }

    fn weights(&self, s: usize, out: &mut Vec<(u32, Vec<f32>)>) {
        out.clear();
        out.extend(self.bindings[s].iter().cloned());
    }

    fn times(&self) -> InterpTimes {
        InterpTimes {
            interpolation: self.time,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groom::{GroomParams, generate};

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
        let m = IdwModel::new(&g, &guides, 10).unwrap();
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
        let m = IdwModel::new(&g, &guides, 10).unwrap();
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
