//! Hair–hair interaction through a volumetric grid (after Petrovic et al. 2005 and McAdams et al.
//! 2009): particle mass and momentum are splatted onto a uniform grid; each particle is then
//! pulled toward the grid's local mean velocity (friction between neighbouring hairs) and pushed
//! down the density gradient where hair is denser than in the rest groom (repulsion, the grid
//! counterpart of 003 Eq. 11–13).
//!
//! The splat is a sum over particles, so it is done per fixed chunk of strands into separate
//! grids that are then added in chunk order: the result is the same for any number of threads.

use glam::{UVec3, Vec3};
use rayon::prelude::*;

use crate::grid::Lattice;

/// Strand chunks of the splat: fixed, so the floating-point sums do not depend on threads.
const CHUNKS: usize = 8;
/// Largest grid, in cells; coarser cells are used beyond it.
const MAX_CELLS: usize = 4_000_000;

#[derive(Clone, Debug, Default)]
pub struct HairGrid {
    /// The cells (a margin of two cells around the particles).
    pub lattice: Lattice,
    /// Mass per cell (trilinear weights).
    pub density: Vec<f32>,
    /// Mean velocity per cell.
    pub velocity: Vec<Vec3>,
    scratch: Vec<(Vec<f32>, Vec<Vec3>)>,
}

/// What a particle sees of the grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridSample {
    pub density: f32,
    pub velocity: Vec3,
    pub gradient: Vec3,
}

impl HairGrid {
    /// Rebuilds the grid from particles; `strand_offsets` delimit strands (chunking unit).
    pub fn build(&mut self, x: &[Vec3], v: &[Vec3], mass: &[f32], strand_offsets: &[usize], cell: f32) {
        let (lo, hi) = x.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(l, h), p| {
            (l.min(*p), h.max(*p))
        });
        if x.is_empty() || !lo.is_finite() || !hi.is_finite() {
            self.lattice.dims = UVec3::ZERO;
            return;
        }
        let mut cell = cell.max(1e-3);
        let span = hi - lo + Vec3::splat(4.0 * cell);
        while ((span / cell).ceil() + Vec3::ONE).element_product() as usize > MAX_CELLS {
            cell *= 1.5;
        }
        let origin = lo - Vec3::splat(2.0 * cell);
        let dims = ((hi + Vec3::splat(2.0 * cell) - origin) / cell).ceil().as_uvec3() + UVec3::ONE;
        self.lattice = Lattice {
            origin,
            cell,
            dims: dims.max(UVec3::splat(2)),
        };
        let n = self.lattice.len();
        self.scratch.resize_with(CHUNKS, Default::default);
        let strands = strand_offsets.len() - 1;
        let me = self.lattice;
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.par_iter_mut().enumerate().for_each(|(c, (d, m))| {
            d.clear();
            d.resize(n, 0.0);
            m.clear();
            m.resize(n, Vec3::ZERO);
            let s0 = strands * c / CHUNKS;
            let s1 = strands * (c + 1) / CHUNKS;
            for i in strand_offsets[s0]..strand_offsets[s1] {
                let (base, t) = me.locate(x[i]);
                for corner in 0..8u32 {
                    let o = UVec3::new(corner & 1, (corner >> 1) & 1, corner >> 2);
                    let w = (if o.x == 1 { t.x } else { 1.0 - t.x })
                        * (if o.y == 1 { t.y } else { 1.0 - t.y })
                        * (if o.z == 1 { t.z } else { 1.0 - t.z });
                    let k = me.index(base + o);
                    d[k] += w * mass[i];
                    m[k] += w * mass[i] * v[i];
                }
            }
        });
        self.density.clear();
        self.density.resize(n, 0.0);
        self.velocity.clear();
        self.velocity.resize(n, Vec3::ZERO);
        for (d, m) in &scratch {
            for k in 0..n {
                self.density[k] += d[k];
                self.velocity[k] += m[k];
            }
        }
        for (vel, d) in self.velocity.iter_mut().zip(&self.density) {
            if *d > 0.0 {
                *vel /= *d;
            }
        }
        self.scratch = scratch;
    }

    /// Density, mean velocity and density gradient at `p`.
    pub fn sample(&self, p: Vec3) -> GridSample {
        if self.lattice.dims == UVec3::ZERO {
            return GridSample {
                density: 0.0,
                velocity: Vec3::ZERO,
                gradient: Vec3::ZERO,
            };
        }
        let lat = self.lattice;
        let (base, t) = lat.locate(p);
        let (mut density, mut velocity, mut gradient) = (0.0, Vec3::ZERO, Vec3::ZERO);
        for corner in 0..8u32 {
            let o = UVec3::new(corner & 1, (corner >> 1) & 1, corner >> 2);
            let wx = if o.x == 1 { t.x } else { 1.0 - t.x };
            let wy = if o.y == 1 { t.y } else { 1.0 - t.y };
            let wz = if o.z == 1 { t.z } else { 1.0 - t.z };
            let k = lat.index(base + o);
            let d = self.density[k];
            density += wx * wy * wz * d;
            velocity += wx * wy * wz * d * self.velocity[k];
            let sx = if o.x == 1 { 1.0 } else { -1.0 };
            let sy = if o.y == 1 { 1.0 } else { -1.0 };
            let sz = if o.z == 1 { 1.0 } else { -1.0 };
            gradient += d * Vec3::new(sx * wy * wz, sy * wx * wz, sz * wx * wy);
        }
        GridSample {
            density,
            velocity: if density > 0.0 {
                velocity / density
            } else {
                Vec3::ZERO
            },
            gradient: gradient / self.lattice.cell,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conserves_mass_and_momentum() {
        let x: Vec<Vec3> = (0..100)
            .map(|i| Vec3::new((i as f32 * 0.37).sin() * 3.0, i as f32 * 0.05, (i as f32).cos()))
            .collect();
        let v: Vec<Vec3> = (0..100).map(|i| Vec3::new(1.0, i as f32 * 0.01, -2.0)).collect();
        let m: Vec<f32> = (0..100).map(|i| 1.0 + (i % 3) as f32).collect();
        let offsets: Vec<usize> = (0..=10).map(|s| s * 10).collect();
        let mut g = HairGrid::default();
        g.build(&x, &v, &m, &offsets, 0.5);
        let total: f32 = g.density.iter().sum();
        assert!((total - m.iter().sum::<f32>()).abs() < 1e-3);
        let mom: Vec3 = g.velocity.iter().zip(&g.density).map(|(u, d)| *u * *d).sum();
        let want: Vec3 = v.iter().zip(&m).map(|(u, w)| *u * *w).sum();
        assert!((mom - want).length() < 1e-2);
        // A uniform velocity field reads back everywhere inside.
        let s = g.sample(x[50]);
        assert!(s.density > 0.0);
        assert!((s.velocity.x - 1.0).abs() < 1e-4 && (s.velocity.z + 2.0).abs() < 1e-4);
    }

    #[test]
    fn gradient_points_to_the_crowd() {
        let x: Vec<Vec3> = (0..400)
            .map(|i| Vec3::new((i % 20) as f32 * 0.05, (i / 20) as f32 * 0.05, 0.0))
            .collect();
        let v = vec![Vec3::ZERO; 400];
        let m = vec![1.0; 400];
        let mut g = HairGrid::default();
        g.build(&x, &v, &m, &[0, 400], 0.25);
        // Left of the cluster the density grows to the right.
        let s = g.sample(Vec3::new(-0.1, 0.5, 0.0));
        assert!(s.gradient.x > 0.0, "{:?}", s.gradient);
    }
}
