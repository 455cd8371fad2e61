//! The non-local interaction statistic of Lyu et al. 2020 (000 §5.7, Fig. 19): how much of the
//! ground truth's interaction between strands rooted far apart a method keeps.
//!
//! 000's definition: "for each hair particle, we count its closest 50 particles in the Euclidean
//! configuration space for interactions. Two strands outside of each other's 32×32 local region
//! in the uv space are regarded as remote" (on its 128 × 128 uv grid: root UVs more than 16/128
//! apart in u or in v). Particles of the particle's own strand are not interactions. Per frame:
//!
//! - `remote_share_gt`, `remote_share`: the share of the ground truth's, and of the prediction's,
//!   interactions that are remote (000: "less than 30 %" in its data);
//! - `remote_kept`: the share of the ground truth's remote interactions (particle pairs) that
//!   are interactions of the prediction too (000: "about half" for its interpolator).
//!
//! The query particles are every `stride`-th non-root particle, at most `max_queries` of them
//! (the same ones in every frame and for every method); the nearest particles come from a
//! uniform cell grid searched ring by ring until no closer particle can remain, ties broken by
//! index: the result does not depend on the thread count.

use glam::{UVec3, Vec2, Vec3};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::grid::{Buckets, Lattice};

/// 000's neighbourhood size.
pub const NEIGHBOURS: usize = 50;
/// 000's remote distance in root UV: half of a 32-texel region on a 128-texel grid.
pub const REMOTE_UV: f32 = 16.0 / 128.0;
/// Query particles per frame.
pub const MAX_QUERIES: usize = 2048;

/// One frame's figures (shares in 0..1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NonLocalFrame {
    pub remote_share_gt: f64,
    pub remote_share: f64,
    /// `None` when the ground truth has no remote interaction among the queries.
    pub remote_kept: Option<f64>,
}

/// The statistic for strands of given vertex counts and root UVs.
pub struct NonLocal {
    strand_of: Vec<u32>,
    uv: Vec<Vec2>,
    queries: Vec<u32>,
    k: usize,
    remote: f32,
}

impl NonLocal {
    /// 000's settings (50 neighbours, 16/128 in UV, up to [`MAX_QUERIES`] query particles).
    pub fn new(counts: &[u32], uv: &[Vec2]) -> NonLocal {
        NonLocal::with(counts, uv, NEIGHBOURS, REMOTE_UV, MAX_QUERIES)
    }

    pub fn with(counts: &[u32], uv: &[Vec2], k: usize, remote: f32, max_queries: usize) -> NonLocal {
        assert_eq!(counts.len(), uv.len(), "one root UV per strand");
        let mut strand_of = Vec::new();
        let mut candidates = Vec::new();
        for (s, &c) in counts.iter().enumerate() {
            for i in 0..c as usize {
                if i > 0 {
                    candidates.push(strand_of.len() as u32);
                }
                strand_of.push(s as u32);
            }
        }
        let stride = candidates.len().div_ceil(max_queries.max(1)).max(1);
        NonLocal {
            strand_of,
            uv: uv.to_vec(),
            queries: candidates.into_iter().step_by(stride).collect(),
            k: k.max(1),
            remote,
        }
    }

    fn is_remote(&self, a: u32, b: u32) -> bool {
        let d = (self.uv[self.strand_of[a as usize] as usize] - self.uv[self.strand_of[b as usize] as usize])
            .abs();
        d.x > self.remote || d.y > self.remote
    }

    /// The figures of one frame (`gt` and `pred`: every particle, in strand order).
    pub fn frame(&self, gt: &[Vec3], pred: &[Vec3]) -> NonLocalFrame {
        assert_eq!(gt.len(), self.strand_of.len(), "positions and strands differ");
        assert_eq!(pred.len(), self.strand_of.len(), "positions and strands differ");
        let a = nearest(gt, &self.strand_of, &self.queries, self.k);
        let b = nearest(pred, &self.strand_of, &self.queries, self.k);
        let (mut remote_gt, mut remote_pred, mut kept, mut total) = (0usize, 0usize, 0usize, 0usize);
        for ((q, na), nb) in self.queries.iter().zip(&a).zip(&b) {
            total += na.len();
            remote_pred += nb.iter().filter(|&&j| self.is_remote(*q, j)).count();
            for &j in na.iter().filter(|&&j| self.is_remote(*q, j)) {
                remote_gt += 1;
                if nb.contains(&j) {
                    kept += 1;
                }
            }
        }
        let t = total.max(1) as f64;
        NonLocalFrame {
            remote_share_gt: remote_gt as f64 / t,
            remote_share: remote_pred as f64 / t,
            remote_kept: (remote_gt > 0).then(|| kept as f64 / remote_gt as f64),
        }
    }
}

/// The `k` particles nearest to each query particle among those of other strands, nearest
/// first (ties by index).
pub fn nearest(points: &[Vec3], strand_of: &[u32], queries: &[u32], k: usize) -> Vec<Vec<u32>> {
    let grid = CellGrid::new(points, k);
    queries
        .par_iter()
        .map(|&q| grid.nearest(points, strand_of, q, k))
        .collect()
}

/// Particles sorted into the cells of a uniform grid over their bounding box.
struct CellGrid {
    lattice: Lattice,
    buckets: Buckets,
}

impl CellGrid {
    fn new(points: &[Vec3], k: usize) -> CellGrid {
        let finite = || points.iter().filter(|p| p.is_finite());
        let lo = finite().fold(Vec3::splat(f32::MAX), |a, p| a.min(*p));
        let hi = finite().fold(Vec3::splat(f32::MIN), |a, p| a.max(*p));
        let (lo, hi) = if lo.x <= hi.x {
            (lo, hi)
        } else {
            (Vec3::ZERO, Vec3::ZERO)
        };
        let size = (hi - lo).max(Vec3::splat(1e-3));
        // About k/4 particles per cell were they spread through the box; at most 2²¹ cells.
        let cells = (4 * points.len() / k.max(1)).clamp(1, 1 << 21) as f32;
        let mut h = (size.x * size.y * size.z / cells).cbrt().max(1e-4);
        let dim = |h: f32| (size / h).ceil().max(Vec3::ONE);
        while dim(h).x * dim(h).y * dim(h).z > (1 << 21) as f32 {
            h *= 1.26;
        }
        let lattice = Lattice {
            origin: lo,
            cell: h,
            dims: dim(h).as_uvec3(),
        };
        CellGrid {
            lattice,
            buckets: Buckets::new(&lattice, points),
        }
    }

    fn nearest(&self, points: &[Vec3], strand_of: &[u32], q: u32, k: usize) -> Vec<u32> {
        let p = points[q as usize];
        let own = strand_of[q as usize];
        let c = self.lattice.cell_of(p).to_array().map(|v| v as usize);
        let dims = self.lattice.dims.to_array().map(|v| v as usize);
        let mut found: Vec<(f32, u32)> = Vec::new();
        let max_ring = *dims.iter().max().expect("three axes");
        for r in 0..=max_ring {
            let lo = |a: usize| c[a].saturating_sub(r);
            let hi = |a: usize| (c[a] + r).min(dims[a] - 1);
            for z in lo(2)..=hi(2) {
                for y in lo(1)..=hi(1) {
                    for x in lo(0)..=hi(0) {
                        let ring = [x.abs_diff(c[0]), y.abs_diff(c[1]), z.abs_diff(c[2])];
                        if ring.into_iter().max() != Some(r) {
                            continue;
                        }
                        let i = self.lattice.index(UVec3::new(x as u32, y as u32, z as u32));
                        for &j in self.buckets.cell(i) {
                            if strand_of[j as usize] != own {
                                found.push((points[j as usize].distance_squared(p), j));
                            }
                        }
                    }
                }
            }
            if found.len() >= k {
                found.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                found.truncate(k);
                // Every particle of a farther ring is at least r·h away.
                let reach = r as f32 * self.lattice.cell;
                if found[k - 1].0 <= reach * reach {
                    break;
                }
            }
        }
        found.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        found.into_iter().map(|(_, j)| j).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grid search returns what sorting every distance returns.
    #[test]
    fn grid_neighbours_equal_brute_force() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32
        };
        // 60 strands of 20 points on a shell, some far outliers.
        let mut points = Vec::new();
        let mut strand_of = Vec::new();
        for st in 0..60u32 {
            let d = Vec3::new(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5).normalize_or(Vec3::Y);
            for i in 0..20 {
                let jitter = Vec3::new(rnd(), rnd(), rnd()) * 0.5;
                points.push(d * (10.0 + i as f32 * 0.7) + jitter);
                strand_of.push(st);
            }
        }
        points[5] = Vec3::new(300.0, -80.0, 12.0);
        let queries: Vec<u32> = (0..points.len() as u32).step_by(7).collect();
        for k in [1, 5, 50] {
            let got = nearest(&points, &strand_of, &queries, k);
            for (q, g) in queries.iter().zip(&got) {
                let mut all: Vec<(f32, u32)> = (0..points.len() as u32)
                    .filter(|&j| strand_of[j as usize] != strand_of[*q as usize])
                    .map(|j| (points[j as usize].distance_squared(points[*q as usize]), j))
                    .collect();
                all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                let want: Vec<u32> = all.iter().take(k).map(|a| a.1).collect();
                assert_eq!(g, &want, "query {q}, k {k}");
            }
        }
    }

    /// Strands 0 and 1 are rooted far apart in UV, strands 2 and 3 side by side. With 0 lying
    /// along 1 and 2 along 3, half the interactions are remote and a copy keeps them all; with
    /// strand 1 carried away, none of them is kept.
    #[test]
    fn remote_interactions_are_counted_and_kept_or_lost() {
        let counts = [6u32; 4];
        let uv = [
            Vec2::new(0.1, 0.1),
            Vec2::new(0.9, 0.9),
            Vec2::new(0.5, 0.5),
            Vec2::new(0.55, 0.5),
        ];
        let strand = |x: f32| (0..6).map(move |i| Vec3::new(x, -(i as f32), 0.0));
        let gt: Vec<Vec3> = strand(0.0)
            .chain(strand(0.1))
            .chain(strand(100.0))
            .chain(strand(100.1))
            .collect();
        let stat = NonLocal::with(&counts, &uv, 2, REMOTE_UV, 1000);
        let same = stat.frame(&gt, &gt);
        assert_eq!(same.remote_share_gt, 0.5);
        assert_eq!(same.remote_share, 0.5);
        assert_eq!(same.remote_kept, Some(1.0));
        let mut away = gt.clone();
        for p in &mut away[6..12] {
            p.x = 300.0;
        }
        let lost = stat.frame(&gt, &away);
        assert_eq!(lost.remote_share_gt, 0.5);
        assert_eq!(lost.remote_kept, Some(0.0));
        // Strands 0 and 1 now meet strands 2 and 3, rooted 0.4 away in u and v: as many remote
        // interactions as before, none of them the ground truth's.
        assert_eq!(lost.remote_share, 0.5);
    }
}
