//! The constrained least squares of 001 Eq. 7, per normal particle: skinning weights w ≥ 0 with
//! Σw = 1 that best reproduce the particle over every training frame,
//!
//!   min_w Σ_f ‖Σ_g w_g B_g(f) s̄* − s̄(f)‖²  s.t.  w ≥ 0, Σ_g w_g = 1.
//!
//! With Σw = 1 the residual is Σ_g w_g d_g(f), d_g(f) = B_g(f) s̄* − s̄(f) (where guide g would put
//! the particle, minus where it is), so the problem is the quadratic program min wᵀHw on the
//! simplex with H_ab = Σ_f ⟨d_a(f), d_b(f)⟩ — accumulated frame by frame, never holding the
//! frames. The paper uses a QL solver [46]; this is the primal active-set method (Nocedal &
//! Wright, Alg. 16.3), each equality-constrained subproblem solved by nalgebra's LU.

use nalgebra::{DMatrix, DVector};

/// Solves min wᵀHw s.t. w ≥ 0, Σw = 1 for a symmetric positive semi-definite `h` (k × k,
/// row-major). Returns the weights and the objective.
pub fn simplex_least_squares(h: &[f64], k: usize) -> (Vec<f64>, f64) {
    assert_eq!(h.len(), k * k, "H must be k × k");
    if k == 1 {
        return (vec![1.0], h[0]);
    }
    let trace: f64 = (0..k).map(|i| h[i * k + i]).sum();
    let hm = DMatrix::from_fn(k, k, |i, j| h[i * k + j]);
    let objective = |w: &[f64]| {
        let v = DVector::from_column_slice(w);
        (v.transpose() * &hm * &v)[(0, 0)]
    };
    // Start at the best single guide (a vertex of the simplex).
    let start = (0..k)
        .min_by(|&a, &b| hm[(a, a)].total_cmp(&hm[(b, b)]).then(a.cmp(&b)))
        .expect("k > 1");
    let mut w = vec![0.0; k];
    w[start] = 1.0;
    let mut free = vec![false; k];
    free[start] = true;
    for _ in 0..16 * k + 16 {
        let f: Vec<usize> = (0..k).filter(|&i| free[i]).collect();
        let target = solve_on(&hm, &f);
        let p: Vec<f64> = f.iter().zip(&target).map(|(&i, t)| t - w[i]).collect();
        if p.iter().all(|x| x.abs() < 1e-14) {
            // At the subproblem's minimum: check the bounds' multipliers,
            // μ_i = 2(Hw)_i − ν with ν = 2(Hw)_j on the free guides.
            let hw = &hm * DVector::from_column_slice(&w);
            let nu = f.iter().map(|&i| 2.0 * hw[i]).sum::<f64>() / f.len() as f64;
            let scale = nu.abs().max(trace / k as f64).max(1e-300);
            let worst = (0..k)
                .filter(|&i| !free[i])
                .map(|i| (2.0 * hw[i] - nu, i))
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            match worst {
                Some((mu, i)) if mu < -1e-12 * scale => free[i] = true,
                _ => break,
            }
            continue;
        }
        // Step toward the subproblem's minimum until a weight reaches zero.
        let mut alpha: f64 = 1.0;
        let mut block = None;
        for (j, &i) in f.iter().enumerate() {
            if p[j] < 0.0 {
                let a = -w[i] / p[j];
                if a < alpha {
                    alpha = a;
                    block = Some(i);
                }
            }
        }
        for (j, &i) in f.iter().enumerate() {
            w[i] += alpha * p[j];
        }
        if let Some(i) = block {
            w[i] = 0.0;
            free[i] = false;
        }
    }
    // Clean round-off: exact zeros stay zero, the rest sums to one.
    for x in w.iter_mut() {
        *x = x.max(0.0);
    }
    let s: f64 = w.iter().sum();
    w.iter_mut().for_each(|x| *x /= s);
    let o = objective(&w);
    (w, o)
}

/// The minimum of wᵀHw over weights on the guides `f` summing to one (others zero):
/// [2H_FF 1; 1ᵀ 0]·[w; −ν] = [0; 1].
fn solve_on(h: &DMatrix<f64>, f: &[usize]) -> Vec<f64> {
    let n = f.len();
    if n == 1 {
        return vec![1.0];
    }
    let mut kkt = DMatrix::zeros(n + 1, n + 1);
    for (a, &i) in f.iter().enumerate() {
        for (b, &j) in f.iter().enumerate() {
            kkt[(a, b)] = 2.0 * h[(i, j)];
        }
        kkt[(a, n)] = 1.0;
        kkt[(n, a)] = 1.0;
    }
    let mut rhs = DVector::zeros(n + 1);
    rhs[n] = 1.0;
    match kkt.clone().lu().solve(&rhs) {
        Some(x) if x.iter().all(|v| v.is_finite()) => x.rows(0, n).iter().copied().collect(),
        // Singular (guides that predict identically): the least-norm solution.
        _ => {
            let x = kkt
                .svd(true, true)
                .solve(&rhs, 1e-14)
                .expect("SVD of a finite matrix solves");
            x.rows(0, n).iter().copied().collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The exact minimum by enumeration: every support, its equality-constrained minimum, kept
    /// if feasible.
    fn brute_force(h: &[f64], k: usize) -> f64 {
        let hm = DMatrix::from_row_slice(k, k, h);
        let mut best = f64::INFINITY;
        for mask in 1u32..(1 << k) {
            let f: Vec<usize> = (0..k).filter(|i| mask & (1 << i) != 0).collect();
            let w = solve_on(&hm, &f);
            if w.iter().all(|&x| x >= -1e-12) {
                let mut full = DVector::zeros(k);
                for (a, &i) in f.iter().enumerate() {
                    full[i] = w[a];
                }
                best = best.min((full.transpose() * &hm * &full)[(0, 0)]);
            }
        }
        best
    }

    /// H from random guide predictions d_g(f) of one particle over a few frames.
    fn random_h(rng: &mut rand_chacha::ChaCha8Rng, k: usize, frames: usize) -> Vec<f64> {
        let d: Vec<Vec<f64>> = (0..k)
            .map(|_| {
                let bias: f64 = rng.random_range(-1.0..1.0);
                (0..3 * frames)
                    .map(|_| bias + rng.random_range(-1.0..1.0))
                    .collect()
            })
            .collect();
        let mut h = vec![0.0; k * k];
        for a in 0..k {
            for b in 0..k {
                h[a * k + b] = d[a].iter().zip(&d[b]).map(|(x, y)| x * y).sum();
            }
        }
        h
    }

    #[test]
    fn matches_brute_force_on_small_problems() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for case in 0..400 {
            let k = 1 + case % 6;
            let frames = if case % 5 == 0 { 1 } else { 4 + case % 7 };
            let h = random_h(&mut rng, k, frames);
            let (w, o) = simplex_least_squares(&h, k);
            assert!(w.iter().all(|&x| x >= 0.0), "case {case}: {w:?}");
            assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12, "case {case}");
            let exact = brute_force(&h, k);
            assert!(
                o <= exact + 1e-9 * (1.0 + exact.abs()),
                "case {case} (k {k}): {o} vs {exact}"
            );
        }
    }

    #[test]
    fn a_guide_that_reproduces_the_particle_takes_all_the_weight() {
        // d_0 = 0 (guide 0 predicts the particle exactly): w = e_0, objective 0.
        let h = vec![0.0, 0.0, 0.0, 0.0, 2.0, 1.0, 0.0, 1.0, 3.0];
        let (w, o) = simplex_least_squares(&h, 3);
        assert_eq!(w, vec![1.0, 0.0, 0.0]);
        assert_eq!(o, 0.0);
        // Two guides with opposite errors: halfway between them is exact.
        let h = vec![1.0, -1.0, -1.0, 1.0];
        let (w, o) = simplex_least_squares(&h, 2);
        assert!((w[0] - 0.5).abs() < 1e-9 && o.abs() < 1e-9, "{w:?} {o}");
    }
}
