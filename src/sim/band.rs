//! Symmetric positive definite block-banded systems: block Cholesky factorization and solve.
//!
//! The implicit step couples each particle with the next three along its strand (torsion and
//! altitude springs), so a strand's system is made of 3 × 3 blocks with a block half bandwidth
//! of 3 and costs O(n). Blocks are kept whole (a particle's three coordinates together) and
//! every loop has a fixed length, so the factorization and the solves compile to straight-line
//! 3 × 3 arithmetic instead of the index juggling of a scalar band.
//!
//! Factorization A = L Lᵀ by block rows (L lower block-banded):
//!
//! * L_ij = (A_ij − Σ_{m<j, i−m≤3} L_im L_jmᵀ) L_jj⁻ᵀ for the three blocks left of the diagonal,
//! * L_ii = chol(A_ii − Σ_{j<i} L_ij L_ijᵀ), a 3 × 3 Cholesky factor, kept as its inverse.

use glam::{DMat3, DVec3};

/// Block half bandwidth: particle i couples with i − 1, i − 2 and i − 3.
pub const BLOCK_BAND: usize = 3;

/// A symmetric block-banded matrix of `n` × `n` blocks, lower half stored.
#[derive(Clone, Debug, Default)]
pub struct BlockBand {
    n: usize,
    /// Diagonal blocks A_ii (whole, symmetric); after [`BlockBand::factor`], L_ii⁻¹.
    diag: Vec<DMat3>,
    /// `off[i][k − 1]` = A_{i, i−k} (k = 1..=3); after factoring, L_{i, i−k}.
    off: Vec<[DMat3; BLOCK_BAND]>,
}

impl BlockBand {
    /// Resizes to `n` × `n` blocks and zeroes it (keeps the allocations).
    pub fn reset(&mut self, n: usize) {
        self.n = n;
        self.diag.clear();
        self.diag.resize(n, DMat3::ZERO);
        self.off.clear();
        self.off.resize(n, [DMat3::ZERO; BLOCK_BAND]);
    }

    /// Number of block rows.
    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Adds the symmetric block `m` to A_ii.
    #[inline]
    pub fn add_diag(&mut self, i: usize, m: DMat3) {
        self.diag[i] += m;
    }

    /// Adds `m` to A_ij and `mᵀ` to A_ji (i ≠ j, |i − j| ≤ 3).
    #[inline]
    pub fn add_off(&mut self, i: usize, j: usize, m: DMat3) {
        if i > j {
            self.off[i][i - j - 1] += m;
        } else {
            self.off[j][j - i - 1] += m.transpose();
        }
    }

    /// Block (i, j) of the matrix (before factoring), zero outside the band.
    pub fn get(&self, i: usize, j: usize) -> DMat3 {
        if i == j {
            self.diag[i]
        } else if i > j && i - j <= BLOCK_BAND {
            self.off[i][i - j - 1]
        } else if j > i && j - i <= BLOCK_BAND {
            self.off[j][j - i - 1].transpose()
        } else {
            DMat3::ZERO
        }
    }

    /// In-place block Cholesky (A = L Lᵀ). Returns false if the matrix is not positive definite.
    pub fn factor(&mut self) -> bool {
        for i in 0..self.n {
            let reach = i.min(BLOCK_BAND);
            // Off-diagonal blocks of row i, farthest first: L_{i,i−k} needs L_{i,i−m} for m > k.
            for k in (1..=reach).rev() {
                let j = i - k;
                let mut s = self.off[i][k - 1];
                for m in k + 1..=reach {
                    // L_{i,i−m} L_{j,i−m}ᵀ, with j − (i − m) = m − k.
                    s -= self.off[i][m - 1] * self.off[j][m - k - 1].transpose();
                }
                // L_ij = S L_jj⁻ᵀ (diag holds L_jj⁻¹).
                self.off[i][k - 1] = s * self.diag[j].transpose();
            }
            let mut d = self.diag[i];
            for k in 1..=reach {
                let l = self.off[i][k - 1];
                d -= l * l.transpose();
            }
            match chol3_inverse(&d) {
                Some(inv) => self.diag[i] = inv,
                None => return false,
            }
        }
        true
    }

    /// Solves L Lᵀ x = b in place (after [`BlockBand::factor`]).
    pub fn solve(&self, b: &mut [DVec3]) {
        let n = self.n;
        debug_assert_eq!(b.len(), n);
        for i in 0..n {
            let mut s = b[i];
            for k in 1..=i.min(BLOCK_BAND) {
                s -= self.off[i][k - 1] * b[i - k];
            }
            b[i] = self.diag[i] * s;
        }
        for i in (0..n).rev() {
            let mut s = b[i];
            for k in 1..=(n - 1 - i).min(BLOCK_BAND) {
                s -= self.off[i + k][k - 1].transpose() * b[i + k];
            }
            b[i] = self.diag[i].transpose() * s;
        }
    }
}

/// The inverse of the lower Cholesky factor of a symmetric 3 × 3 matrix, or None if it is not
/// positive definite.
fn chol3_inverse(a: &DMat3) -> Option<DMat3> {
    // Column-major: a.col(c)[r] = A[r][c]; only the lower triangle is read.
    let a00 = a.x_axis.x;
    let a10 = a.x_axis.y;
    let a20 = a.x_axis.z;
    let a11 = a.y_axis.y;
    let a21 = a.y_axis.z;
    let a22 = a.z_axis.z;
    let pos = |v: f64| v > 0.0 && v.is_finite();
    if !pos(a00) {
        return None;
    }
    let l00 = a00.sqrt();
    let l10 = a10 / l00;
    let l20 = a20 / l00;
    let d1 = a11 - l10 * l10;
    if !pos(d1) {
        return None;
    }
    let l11 = d1.sqrt();
    let l21 = (a21 - l20 * l10) / l11;
    let d2 = a22 - l20 * l20 - l21 * l21;
    if !pos(d2) {
        return None;
    }
    let l22 = d2.sqrt();
    // Inverse of the lower triangular [[l00,0,0],[l10,l11,0],[l20,l21,l22]].
    let i00 = 1.0 / l00;
    let i11 = 1.0 / l11;
    let i22 = 1.0 / l22;
    let i10 = -l10 * i00 * i11;
    let i21 = -l21 * i11 * i22;
    let i20 = -(l20 * i00 + l21 * i10) * i22;
    Some(DMat3::from_cols(
        DVec3::new(i00, i10, i20),
        DVec3::new(0.0, i11, i21),
        DVec3::new(0.0, 0.0, i22),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dense copy of the matrix.
    fn dense(m: &BlockBand) -> Vec<Vec<f64>> {
        let n = 3 * m.len();
        (0..n)
            .map(|r| (0..n).map(|c| m.get(r / 3, c / 3).col(c % 3)[r % 3]).collect())
            .collect()
    }

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    /// A random SPD block-banded matrix: Σ Bᵀ B over random blocks coupling particles at most
    /// three apart, plus a diagonal shift.
    fn random_spd(n: usize, seed: u64) -> BlockBand {
        let mut s = seed;
        let mut m = BlockBand::default();
        m.reset(n);
        for i in 0..n {
            m.add_diag(i, DMat3::from_diagonal(DVec3::splat(0.5 + lcg(&mut s).abs())));
            for k in 1..=BLOCK_BAND.min(i) {
                // A spring-like rank-one coupling between i and i − k: [u; −u][u; −u]ᵀ.
                let u = DVec3::new(lcg(&mut s), lcg(&mut s), lcg(&mut s)) * 3.0;
                let uu = DMat3::from_cols(u * u.x, u * u.y, u * u.z);
                m.add_diag(i, uu);
                m.add_diag(i - k, uu);
                m.add_off(i, i - k, -uu);
            }
        }
        m
    }

    #[test]
    fn solves_a_block_banded_spd_system() {
        for (n, seed) in [(1, 1), (2, 2), (4, 3), (25, 4), (60, 5)] {
            let mut m = random_spd(n, seed);
            let a = dense(&m);
            // Symmetric, as assembled.
            for (r, row) in a.iter().enumerate() {
                for (c, v) in row.iter().enumerate() {
                    assert_eq!(*v, a[c][r]);
                }
            }
            let b: Vec<DVec3> = (0..n)
                .map(|i| DVec3::new((i as f64 * 0.7).sin(), (i as f64).cos(), 1.0 / (1.0 + i as f64)))
                .collect();
            let mut x = b.clone();
            assert!(m.factor());
            m.solve(&mut x);
            for r in 0..3 * n {
                let ax: f64 = (0..3 * n).map(|c| a[r][c] * x[c / 3][c % 3]).sum();
                assert!((ax - b[r / 3][r % 3]).abs() < 1e-10, "n {n}, row {r}: {ax}");
            }
        }
    }

    #[test]
    fn add_off_keeps_the_matrix_symmetric_from_either_side() {
        let mut m = BlockBand::default();
        m.reset(5);
        let b = DMat3::from_cols_array(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        m.add_off(1, 4, b);
        assert_eq!(m.get(1, 4), b);
        assert_eq!(m.get(4, 1), b.transpose());
        m.add_off(4, 1, b);
        assert_eq!(m.get(1, 4), b + b.transpose());
        assert_eq!(m.get(0, 4), DMat3::ZERO);
    }

    #[test]
    fn refuses_a_matrix_that_is_not_positive_definite() {
        // [[1, 2], [2, 1]] in the x coordinates of two blocks: indefinite.
        let mut m = BlockBand::default();
        m.reset(2);
        m.add_diag(0, DMat3::IDENTITY);
        m.add_diag(1, DMat3::IDENTITY);
        m.add_off(1, 0, DMat3::from_diagonal(DVec3::new(2.0, 0.0, 0.0)));
        assert!(!m.factor());
        // A NaN pivot is refused too.
        let mut m = BlockBand::default();
        m.reset(1);
        m.add_diag(0, DMat3::from_diagonal(DVec3::new(1.0, f64::NAN, 1.0)));
        assert!(!m.factor());
    }
}
