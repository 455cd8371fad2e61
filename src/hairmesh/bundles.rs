//! Direct solves of the implicit step for meshes made of small, separate bundles (what
//! [`super::build`] makes from a groom: one square prism stack per scalp cell).
//!
//! Bundles that share no vertex share no element, so the system matrix is block diagonal by
//! bundle. Within a bundle, vertices ordered layer by layer couple only within a few layers (the
//! hinges reach two layers away), so its filtered matrix `S A S + (I − S)` (Baraff & Witkin's
//! constrained system, as in the modified conjugate gradients) is a narrow band: a banded
//! Cholesky factorization costs `n w²/2` for `n` unknowns and half bandwidth `w`, about 60,000
//! multiply–adds for a four-column bundle of nine layers, and solves it exactly, where
//! conjugate gradients needed about 50 iterations. Large bundles (the wide procedural sheets of
//! the benchmark) keep the preconditioned conjugate gradients: their band would be wide.

use glam::{DMat3, DVec3, Mat3A};
use nalgebra_sparse::CsrMatrix;
use petgraph::unionfind::UnionFind;

use super::mesh::HairMesh;

/// Bundles with at most this many columns are solved directly.
pub const MAX_DIRECT_COLUMNS: usize = 9;

/// One bundle's band.
struct Bundle {
    /// Its vertices in band order (layer by layer, columns in increasing order).
    vertices: Vec<u32>,
    /// Half bandwidth in scalars.
    w: usize,
    /// Lower band, row by row: entry (i, i − k) at `i (w + 1) + k`.
    band: Vec<f64>,
}

/// Direct solvers for every bundle of a mesh whose bundles are all small.
pub struct BundleSolver {
    bundles: Vec<Bundle>,
    /// Per vertex: its bundle and its position in the bundle's band order.
    place: Vec<(u32, u32)>,
}

/// A vertex's projection of Baraff & Witkin's filter: `I` (free), `I − n nᵀ` (in a plane), `0`.
pub type Projector = DMat3;

impl BundleSolver {
    /// The solver for `mesh` with the matrix pattern `a` (upper triangle), or `None` when a
    /// bundle has more than [`MAX_DIRECT_COLUMNS`] columns.
    pub fn new(mesh: &HairMesh, a: &CsrMatrix<Mat3A>) -> Option<BundleSolver> {
        let columns = mesh.columns();
        // Bundles: columns joined by faces.
        let mut sets = UnionFind::<usize>::new(columns);
        for f in &mesh.faces {
            for &c in &f[1..] {
                sets.union(f[0] as usize, c as usize);
            }
        }
        let mut members: std::collections::BTreeMap<usize, Vec<u32>> = Default::default();
        for c in 0..columns {
            members.entry(sets.find_mut(c)).or_default().push(c as u32);
        }
        if members.values().any(|m| m.len() > MAX_DIRECT_COLUMNS) {
            return None;
        }
        let layers = mesh.layers;
        let mut place = vec![(0u32, 0u32); mesh.vertex_count()];
        let mut bundles = Vec::new();
        for (b, cols) in members.values().enumerate() {
            let mut vertices = Vec::with_capacity(cols.len() * layers);
            for l in 0..layers {
                for &c in cols {
                    let v = mesh.vertex(c, l);
                    place[v as usize] = (b as u32, vertices.len() as u32);
                    vertices.push(v);
                }
            }
            bundles.push(Bundle {
                vertices,
                w: 0,
                band: Vec::new(),
            });
        }
        // Bandwidths from the pattern; every element stays inside one bundle.
        let offsets = a.row_offsets();
        let cols = a.col_indices();
        for i in 0..mesh.vertex_count() {
            let (bi, li) = place[i];
            for &j in &cols[offsets[i]..offsets[i + 1]] {
                let (bj, lj) = place[j];
                if bi != bj {
                    return None;
                }
                let b = &mut bundles[bi as usize];
                b.w = b.w.max(3 * li.abs_diff(lj) as usize + 2);
            }
        }
        for b in &mut bundles {
            b.band = vec![0.0; 3 * b.vertices.len() * (b.w + 1)];
        }
        Some(BundleSolver { bundles, place })
    }

    /// Solves `(S A S + I − S) y = r` exactly, bundle by bundle (`r` already filtered), with `S`
    /// the vertices' projectors. `false` when a bundle's matrix is not positive definite.
    pub fn solve(&mut self, a: &CsrMatrix<Mat3A>, s: &[Projector], r: &[DVec3], y: &mut [DVec3]) -> bool {
        let offsets = a.row_offsets();
        let cols = a.col_indices();
        let blocks = a.values();
        for b in &mut self.bundles {
            b.band.fill(0.0);
        }
        // The filtered blocks into the bands (lower triangle, by band position).
        for i in 0..r.len() {
            let (bi, li) = self.place[i];
            let b = &mut self.bundles[bi as usize];
            let w1 = b.w + 1;
            for k in offsets[i]..offsets[i + 1] {
                let j = cols[k];
                let lj = self.place[j].1;
                let mut m = s[i] * blocks[k].as_dmat3() * s[j];
                if i == j {
                    m += DMat3::IDENTITY - s[i];
                }
                for (c, col) in m.to_cols_array_2d().iter().enumerate() {
                    for (row, v) in col.iter().enumerate() {
                        let (p, q) = (3 * li as usize + row, 3 * lj as usize + c);
                        if p >= q {
                            b.band[p * w1 + (p - q)] = *v;
                        } else if i != j {
                            b.band[q * w1 + (q - p)] = *v;
                        }
                    }
                }
            }
        }
        for b in &mut self.bundles {
            if !cholesky(&mut b.band, 3 * b.vertices.len(), b.w) {
                return false;
            }
            let mut x: Vec<f64> = b
                .vertices
                .iter()
                .flat_map(|&v| r[v as usize].to_array())
                .collect();
            solve(&b.band, 3 * b.vertices.len(), b.w, &mut x);
            for (k, &v) in b.vertices.iter().enumerate() {
                y[v as usize] = DVec3::new(x[3 * k], x[3 * k + 1], x[3 * k + 2]);
            }
        }
        true
    }
}

/// In-place Cholesky `A = L Lᵀ` of a symmetric band matrix (lower band, entry (i, i − k) at
/// `i (w + 1) + k`); `false` at a non-positive pivot.
fn cholesky(a: &mut [f64], n: usize, w: usize) -> bool {
    let w1 = w + 1;
    for j in 0..n {
        let lo = j.saturating_sub(w);
        let mut d = a[j * w1];
        for k in lo..j {
            let l = a[j * w1 + (j - k)];
            d -= l * l;
        }
        // NaN counts as not positive.
        if d.is_nan() || d <= 0.0 {
            return false;
        }
        let d = d.sqrt();
        a[j * w1] = d;
        for i in j + 1..(j + w1).min(n) {
            let lo = i.saturating_sub(w);
            let mut s = a[i * w1 + (i - j)];
            for k in lo..j {
                s -= a[i * w1 + (i - k)] * a[j * w1 + (j - k)];
            }
            a[i * w1 + (i - j)] = s / d;
        }
    }
    true
}

/// Solves `L Lᵀ x = b` in place with the factor of [`cholesky`].
fn solve(l: &[f64], n: usize, w: usize, x: &mut [f64]) {
    let w1 = w + 1;
    for i in 0..n {
        let mut s = x[i];
        for k in i.saturating_sub(w)..i {
            s -= l[i * w1 + (i - k)] * x[k];
        }
        x[i] = s / l[i * w1];
    }
    for i in (0..n).rev() {
        let mut s = x[i];
        for k in i + 1..(i + w1).min(n) {
            s -= l[k * w1 + (k - i)] * x[k];
        }
        x[i] = s / l[i * w1];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The band factorization solves a random symmetric positive definite band system to the
    /// dense solution (nalgebra's LU).
    #[test]
    fn band_cholesky_matches_a_dense_solve() {
        let (n, w) = (40, 7);
        let mut s = 7u64;
        let mut rnd = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut dense = nalgebra::DMatrix::<f64>::zeros(n, n);
        for i in 0..n {
            for j in i.saturating_sub(w)..i {
                let v = rnd();
                dense[(i, j)] = v;
                dense[(j, i)] = v;
            }
            dense[(i, i)] = 4.0 + rnd();
        }
        let mut band = vec![0.0; n * (w + 1)];
        for i in 0..n {
            for j in i.saturating_sub(w)..=i {
                band[i * (w + 1) + (i - j)] = dense[(i, j)];
            }
        }
        let b: Vec<f64> = (0..n).map(|_| rnd()).collect();
        assert!(cholesky(&mut band, n, w));
        let mut x = b.clone();
        solve(&band, n, w, &mut x);
        let want = dense.clone().lu().solve(&nalgebra::DVector::from_vec(b)).unwrap();
        for i in 0..n {
            assert!((x[i] - want[i]).abs() < 1e-10, "{i}: {} vs {}", x[i], want[i]);
        }
        // Indefinite: refused.
        let mut bad = vec![0.0; 2 * (w + 1)];
        bad[0] = 1.0;
        bad[w + 1] = -1.0;
        assert!(!cholesky(&mut bad, 2, w));
    }
}
