//! Symmetric positive definite banded systems: Cholesky factorization and solve in band storage.
//! The implicit step couples each particle with the next three along its strand (torsion and
//! altitude springs), so a strand's 3n × 3n system has a half bandwidth of 11 and costs O(n).

/// Lower band storage: `a[i * (bw + 1) + (i − j)]` holds A[i][j] for i − bw ≤ j ≤ i.
#[derive(Clone, Debug, Default)]
pub struct BandMatrix {
    pub n: usize,
    pub bw: usize,
    pub a: Vec<f64>,
}

impl BandMatrix {
    /// Resizes to n × n with half bandwidth `bw` and zeroes it (keeps the allocation).
    pub fn reset(&mut self, n: usize, bw: usize) {
        self.n = n;
        self.bw = bw;
        self.a.clear();
        self.a.resize(n * (bw + 1), 0.0);
    }

    #[inline]
    fn idx(&self, i: usize, j: usize) -> usize {
        debug_assert!(j <= i && i - j <= self.bw);
        i * (self.bw + 1) + (i - j)
    }

    /// Adds `v` to A[i][j] (and by symmetry A[j][i]); entries outside the band are an error of
    /// the caller.
    #[inline]
    pub fn add(&mut self, i: usize, j: usize, v: f64) {
        let (i, j) = if i >= j { (i, j) } else { (j, i) };
        let k = self.idx(i, j);
        self.a[k] += v;
    }

    pub fn get(&self, i: usize, j: usize) -> f64 {
        let (i, j) = if i >= j { (i, j) } else { (j, i) };
        if i - j > self.bw {
            0.0
        } else {
            self.a[self.idx(i, j)]
        }
    }

    /// In-place Cholesky (A = L Lᵀ). Returns false if the matrix is not positive definite.
    pub fn factor(&mut self) -> bool {
        let (n, bw) = (self.n, self.bw);
        let w = bw + 1;
        for i in 0..n {
            let j0 = i.saturating_sub(bw);
            for j in j0..=i {
                let mut sum = self.a[i * w + (i - j)];
                let k0 = j0.max(j.saturating_sub(bw));
                for k in k0..j {
                    sum -= self.a[i * w + (i - k)] * self.a[j * w + (j - k)];
                }
                if i == j {
                    if sum <= 0.0 || !sum.is_finite() {
                        return false;
                    }
                    self.a[i * w] = sum.sqrt();
                } else {
                    self.a[i * w + (i - j)] = sum / self.a[j * w];
                }
            }
        }
        true
    }

    /// Solves L Lᵀ x = b in place (after [`BandMatrix::factor`]).
    #[allow(clippy::needless_range_loop)]
    pub fn solve(&self, b: &mut [f64]) {
        let (n, bw) = (self.n, self.bw);
        let w = bw + 1;
        for i in 0..n {
            let mut s = b[i];
            for k in i.saturating_sub(bw)..i {
                s -= self.a[i * w + (i - k)] * b[k];
            }
            b[i] = s / self.a[i * w];
        }
        for i in (0..n).rev() {
            let mut s = b[i];
            for k in i + 1..(i + bw + 1).min(n) {
                s -= self.a[k * w + (k - i)] * b[k];
            }
            b[i] = s / self.a[i * w];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_banded_spd_system() {
        // A tridiagonal-plus SPD matrix; compare A x with b.
        let n = 20;
        let bw = 3;
        let mut m = BandMatrix::default();
        m.reset(n, bw);
        for i in 0..n {
            m.add(i, i, 10.0 + i as f64 * 0.1);
            for d in 1..=bw {
                if i + d < n {
                    m.add(i + d, i, -1.0 / d as f64);
                }
            }
        }
        let dense: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| m.get(i, j)).collect()).collect();
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin()).collect();
        let mut x = b.clone();
        assert!(m.factor());
        m.solve(&mut x);
        for i in 0..n {
            let ax: f64 = (0..n).map(|j| dense[i][j] * x[j]).sum();
            assert!((ax - b[i]).abs() < 1e-12, "row {i}");
        }
        // Not positive definite: refused.
        let mut bad = BandMatrix::default();
        bad.reset(2, 1);
        bad.add(0, 0, 1.0);
        bad.add(1, 1, 1.0);
        bad.add(1, 0, 2.0);
        assert!(!bad.factor());
    }
}
