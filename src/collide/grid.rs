//! A signed distance field sampled on a uniform grid (001 §5.1: SDFs precomputed per solid in
//! object space), with trilinear lookup and the trilinear interpolant's exact gradient.

use glam::{UVec3, Vec3};

use super::{Bound, Shape};

#[derive(Clone, Debug, PartialEq)]
pub struct SdfGrid {
    /// Position of node (0, 0, 0).
    pub origin: Vec3,
    /// Edge length of a cell.
    pub cell: f32,
    /// Nodes along x, y, z (at least 2 each).
    pub dims: UVec3,
    /// Node values, x fastest.
    pub values: Vec<f32>,
}

impl SdfGrid {
    pub fn index(&self, i: u32, j: u32, k: u32) -> usize {
        (i as usize) + self.dims.x as usize * ((j as usize) + self.dims.y as usize * k as usize)
    }

    pub fn node(&self, i: u32, j: u32, k: u32) -> Vec3 {
        self.origin + Vec3::new(i as f32, j as f32, k as f32) * self.cell
    }

    /// Far corner of the grid.
    pub fn max_corner(&self) -> Vec3 {
        self.origin + (self.dims - UVec3::ONE).as_vec3() * self.cell
    }

    /// Trilinear value and gradient; outside the grid, the value at the nearest grid point
    /// plus the distance to the grid (a conservative, positive continuation).
    pub fn sample(&self, p: Vec3) -> (f32, Vec3) {
        let hi = self.max_corner();
        let q = p.clamp(self.origin, hi);
        let outside = p - q;
        let f = (q - self.origin) / self.cell;
        let max_cell = (self.dims - UVec3::splat(2)).as_vec3();
        let c = f.floor().min(max_cell).max(Vec3::ZERO);
        let t = f - c;
        let (i, j, k) = (c.x as u32, c.y as u32, c.z as u32);
        let v = |di: u32, dj: u32, dk: u32| self.values[self.index(i + di, j + dj, k + dk)];
        let (c000, c100, c010, c110) = (v(0, 0, 0), v(1, 0, 0), v(0, 1, 0), v(1, 1, 0));
        let (c001, c101, c011, c111) = (v(0, 0, 1), v(1, 0, 1), v(0, 1, 1), v(1, 1, 1));
        let lerp = |a: f32, b: f32, s: f32| a + (b - a) * s;
        let x00 = lerp(c000, c100, t.x);
        let x10 = lerp(c010, c110, t.x);
        let x01 = lerp(c001, c101, t.x);
        let x11 = lerp(c011, c111, t.x);
        let y0 = lerp(x00, x10, t.y);
        let y1 = lerp(x01, x11, t.y);
        let value = lerp(y0, y1, t.z);
        // Partial derivatives of the trilinear interpolant.
        let dx = lerp(
            lerp(c100 - c000, c110 - c010, t.y),
            lerp(c101 - c001, c111 - c011, t.y),
            t.z,
        );
        let dy = lerp(x10 - x00, x11 - x01, t.z);
        let dz = y1 - y0;
        let grad = Vec3::new(dx, dy, dz) / self.cell;
        let out = outside.length();
        if out > 0.0 {
            return (value.max(0.0) + out, outside / out);
        }
        let g = grad.length();
        (value, if g > 1e-12 { grad / g } else { Vec3::Y })
    }

    /// Fraction of nodes inside (negative).
    pub fn inside_fraction(&self) -> f64 {
        self.values.iter().filter(|v| **v < 0.0).count() as f64 / self.values.len().max(1) as f64
    }
}

impl Shape for SdfGrid {
    fn sdf(&self, p: Vec3) -> (f32, Vec3) {
        self.sample(p)
    }

    /// Outside the grid the value is at least the distance to the grid's box (the continuation
    /// of [`SdfGrid::sample`]), which is at least the distance to the box's centre less its half
    /// diagonal; inside the box the bound is negative and culls nothing.
    fn bound(&self) -> Option<Bound> {
        let (lo, hi) = (self.origin, self.max_corner());
        Some(Bound {
            a: 0.5 * (lo + hi),
            b: 0.5 * (lo + hi),
            radius: 0.5 * lo.distance(hi),
            slope: 1.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduces_linear_fields_exactly() {
        // A plane's distance is linear: trilinear interpolation must be exact.
        let dims = UVec3::new(5, 6, 7);
        let origin = Vec3::new(-1.0, -2.0, -3.0);
        let cell = 0.5;
        let n = Vec3::new(1.0, 2.0, -2.0).normalize();
        let mut values = Vec::new();
        for k in 0..dims.z {
            for j in 0..dims.y {
                for i in 0..dims.x {
                    values.push((origin + Vec3::new(i as f32, j as f32, k as f32) * cell).dot(n) - 0.3);
                }
            }
        }
        let g = SdfGrid {
            origin,
            cell,
            dims,
            values,
        };
        for p in [
            Vec3::new(0.1, 0.2, -0.7),
            Vec3::new(0.9, -1.1, 0.0),
            Vec3::new(-0.99, 0.4, -2.9),
        ] {
            let (d, grad) = g.sample(p);
            assert!((d - (p.dot(n) - 0.3)).abs() < 1e-5, "{p}");
            assert!((grad - n).length() < 1e-4);
        }
        // Outside: positive and growing with distance.
        let (d, grad) = g.sample(Vec3::new(-5.0, 0.0, 0.0));
        assert!(d > 3.9 && grad.x < -0.99);
    }
}
