//! Sparse coding over training motion (001 §6.3). Each strand's motion is the long vector
//! u_s = [s̄(1) … s̄(F)] of its head-frame states over the training frames. Guides are the
//! basis in which every strand is a sparse combination:
//!
//!   argmin_{G,α} Σ_s ‖u_s − G α_s‖² + β ‖α_s‖₁            (001 Eq. 9, β = 0.15)
//!
//! solved by alternating a lasso for the codes α (coordinate descent on the Gram matrix) with
//! the block-coordinate dictionary update of Mairal et al. [49]; then every basis vector is
//! replaced by the strand closest to it (Eq. 10) and the codes are solved again with those
//! strands as the basis: a strand's eligible guides are the ones whose code exceeds ε = 0.01.
//!
//! Vectors are scaled to unit length first (as [49]'s library does), so β and ε do not depend on
//! the groom's size or units.

use nalgebra::DMatrix;

use crate::error::Result;
use crate::groom::Groom;
use crate::guides::training::HeadFrames;
use rayon::prelude::*;

/// The lasso min_α ‖y − Xα‖² + β‖α‖₁ given the Gram matrix G = XᵀX (k × k, row-major) and
/// c = Xᵀy, by cyclic coordinate descent: α_j ← S(c_j − Σ_{k≠j} G_jk α_k, β/2) / G_jj.
pub fn lasso_gram(gram: &[f64], c: &[f64], beta: f64) -> Vec<f64> {
    let k = c.len();
    let mut a = vec![0.0; k];
    // G·α, kept up to date.
    let mut ga = vec![0.0; k];
    for _ in 0..2000 {
        let mut change: f64 = 0.0;
        for j in 0..k {
            let gjj = gram[j * k + j];
            if gjj <= 0.0 {
                continue;
            }
            let rho = c[j] - (ga[j] - gjj * a[j]);
            let new = soft(rho, 0.5 * beta) / gjj;
            let d = new - a[j];
            if d != 0.0 {
                for (i, g) in ga.iter_mut().enumerate() {
                    *g += gram[i * k + j] * d;
                }
                a[j] = new;
                change = change.max(d.abs());
            }
        }
        if change < 1e-10 {
            break;
        }
    }
    a
}

fn soft(x: f64, t: f64) -> f64 {
    if x > t {
        x - t
    } else if x < -t {
        x + t
    } else {
        0.0
    }
}

/// Chooses `count` guide strands from the strands' motion vectors `u` (one column per strand,
/// scaled to unit length), starting the dictionary from the strands `initial` (e.g. the root-UV
/// lattice): `iterations` rounds of Eq. 9, then Eq. 10. Returns increasing strand indices.
pub fn select_guides(
    u: &DMatrix<f32>,
    initial: &[usize],
    count: usize,
    beta: f64,
    iterations: usize,
) -> Vec<usize> {
    let strands = u.ncols();
    let count = count.min(strands);
    let mut dict: DMatrix<f32> =
        DMatrix::from_fn(u.nrows(), initial.len().min(count), |r, c| u[(r, initial[c])]);
    for _ in 0..iterations {
        let (codes, residual) = encode(&dict, u, beta);
        update_dictionary(&mut dict, u, &codes);
        reseed(&mut dict, u, &codes, &residual);
    }
    // Eq. 10: the strand closest to each basis vector (each strand used once).
    let dots = gemm_tn(&dict, u);
    let mut taken = vec![false; strands];
    let mut chosen = Vec::with_capacity(dict.ncols());
    for j in 0..dict.ncols() {
        // ‖u_s − g‖² = ‖u_s‖² + ‖g‖² − 2⟨u_s, g⟩; ‖u_s‖ = 1, so the largest dot product wins.
        let best = (0..strands)
            .filter(|&s| !taken[s])
            .max_by(|&a, &b| dots[(j, a)].total_cmp(&dots[(j, b)]).then(b.cmp(&a)));
        if let Some(s) = best {
            taken[s] = true;
            chosen.push(s);
        }
    }
    chosen.sort_unstable();
    chosen
}

/// Every strand's motion vector u_s = [s̄(1) … s̄(F)] (001 §6.3) over at most `max_frames`
/// evenly spaced training frames, one unit column per strand.
pub fn motion_vectors(
    groom: &Groom,
    frames: &mut HeadFrames,
    max_frames: usize,
) -> Result<nalgebra::DMatrix<f32>> {
    let n = frames.len();
    let picked: Vec<usize> = if n <= max_frames {
        (0..n).collect()
    } else {
        (0..max_frames).map(|k| k * (n - 1) / (max_frames - 1)).collect()
    };
    let per = groom.points().len() * 3;
    let mut u = nalgebra::DMatrix::<f32>::zeros(per / groom.strand_count().max(1) * picked.len(), 0);
    // Strands may differ in point count: pad each column to the longest strand.
    let longest = groom.counts().iter().copied().max().unwrap_or(0) as usize;
    let rows = longest * 3 * picked.len();
    u.resize_mut(rows, groom.strand_count(), 0.0);
    for (k, &f) in picked.iter().enumerate() {
        let (x, _) = frames.frame(f)?;
        for s in 0..groom.strand_count() {
            let o = groom.offsets()[s];
            for i in 0..groom.counts()[s] as usize {
                for c in 0..3 {
                    u[(k * longest * 3 + i * 3 + c, s)] = x[o + i][c];
                }
            }
        }
    }
    for mut col in u.column_iter_mut() {
        let norm = col.norm();
        if norm > 0.0 {
            col /= norm;
        }
    }
    Ok(u)
}

/// Sparse-coding guide selection (001 §6.3) over a training simulation: as many guides as
/// `initial` (the root-UV lattice, the dictionary's starting point), chosen from at most 60
/// evenly spaced frames.
pub fn select_from_training(
    groom: &Groom,
    frames: &mut HeadFrames,
    initial: &[usize],
    beta: f64,
    iterations: usize,
) -> Result<Vec<usize>> {
    let u = motion_vectors(groom, frames, 60)?;
    Ok(select_guides(&u, initial, initial.len(), beta, iterations))
}

/// Xᵀ Y, parallel over Y's columns.
pub fn gemm_tn(x: &DMatrix<f32>, y: &DMatrix<f32>) -> DMatrix<f64> {
    let cols: Vec<Vec<f64>> = (0..y.ncols())
        .into_par_iter()
        .map(|c| {
            let yc = y.column(c);
            (0..x.ncols())
                .map(|r| {
                    x.column(r)
                        .iter()
                        .zip(yc.iter())
                        .map(|(a, b)| *a as f64 * *b as f64)
                        .sum()
                })
                .collect()
        })
        .collect();
    DMatrix::from_fn(x.ncols(), y.ncols(), |r, c| cols[c][r])
}

/// The codes of every column of `u` in `dict` (k × strands), and each column's squared residual
/// ‖u_s − Dα_s‖² = ‖u_s‖² − 2cᵀα + αᵀGα.
fn encode(dict: &DMatrix<f32>, u: &DMatrix<f32>, beta: f64) -> (DMatrix<f64>, Vec<f64>) {
    let k = dict.ncols();
    let gram = gemm_tn(dict, dict);
    let g: Vec<f64> = (0..k * k).map(|i| gram[(i / k, i % k)]).collect();
    let c = gemm_tn(dict, u);
    let out: Vec<(Vec<f64>, f64)> = (0..u.ncols())
        .into_par_iter()
        .map(|s| {
            let cs: Vec<f64> = (0..k).map(|j| c[(j, s)]).collect();
            let a = lasso_gram(&g, &cs, beta);
            let uu: f64 = u.column(s).iter().map(|x| (*x as f64).powi(2)).sum();
            let ca: f64 = cs.iter().zip(&a).map(|(x, y)| x * y).sum();
            let aga: f64 = (0..k)
                .map(|i| a[i] * (0..k).map(|j| g[i * k + j] * a[j]).sum::<f64>())
                .sum();
            (a, (uu - 2.0 * ca + aga).max(0.0))
        })
        .collect();
    let codes = DMatrix::from_fn(k, u.ncols(), |j, s| out[s].0[j]);
    (codes, out.into_iter().map(|o| o.1).collect())
}

/// Atoms no strand uses, or that duplicate an earlier atom, restart at the worst-represented
/// strands (largest residual first), so every atom ends up describing some group of strands.
fn reseed(dict: &mut DMatrix<f32>, u: &DMatrix<f32>, codes: &DMatrix<f64>, residual: &[f64]) {
    let mut worst: Vec<usize> = (0..u.ncols()).collect();
    worst.sort_by(|&a, &b| residual[b].total_cmp(&residual[a]).then(a.cmp(&b)));
    let mut next = worst.into_iter();
    for j in 0..dict.ncols() {
        let used = codes.row(j).iter().any(|x| *x != 0.0);
        let duplicate = (0..j).any(|l| dict.column(l).dot(&dict.column(j)) > 0.9999);
        if (!used || duplicate)
            && let Some(s) = next.next()
        {
            dict.set_column(j, &u.column(s));
        }
    }
}

/// Mairal et al.'s dictionary update: with A = ααᵀ and B = Uαᵀ, each atom
/// d_j ← normalize(d_j + (b_j − D a_j) / A_jj); unused atoms stay.
fn update_dictionary(dict: &mut DMatrix<f32>, u: &DMatrix<f32>, codes: &DMatrix<f64>) {
    let k = dict.ncols();
    let a = codes * codes.transpose();
    let b: DMatrix<f64> = {
        let cols: Vec<Vec<f64>> = (0..k)
            .into_par_iter()
            .map(|j| {
                let mut col = vec![0.0f64; u.nrows()];
                for s in 0..u.ncols() {
                    let w = codes[(j, s)];
                    if w != 0.0 {
                        for (x, v) in col.iter_mut().zip(u.column(s).iter()) {
                            *x += w * *v as f64;
                        }
                    }
                }
                col
            })
            .collect();
        DMatrix::from_fn(u.nrows(), k, |r, j| cols[j][r])
    };
    for j in 0..k {
        if a[(j, j)] < 1e-12 {
            continue;
        }
        let mut dj: Vec<f64> = (0..dict.nrows())
            .map(|r| {
                let da: f64 = (0..k).map(|l| dict[(r, l)] as f64 * a[(l, j)]).sum();
                dict[(r, j)] as f64 + (b[(r, j)] - da) / a[(j, j)]
            })
            .collect();
        let n = dj.iter().map(|x| x * x).sum::<f64>().sqrt();
        if n > 1e-12 {
            dj.iter_mut().for_each(|x| *x /= n);
            for (r, x) in dj.iter().enumerate() {
                dict[(r, j)] = *x as f32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lasso_recovers_a_sparse_combination_and_beta_shrinks_it() {
        // Three unit vectors; y = 0.7 x0 + 0.3 x2.
        let x = [[1.0, 0.0, 0.0, 0.0], [0.6, 0.8, 0.0, 0.0], [0.0, 0.0, 0.6, 0.8]];
        let y: Vec<f64> = (0..4).map(|r| 0.7 * x[0][r] + 0.3 * x[2][r]).collect();
        let gram: Vec<f64> = (0..9)
            .map(|i| (0..4).map(|r| x[i / 3][r] * x[i % 3][r]).sum())
            .collect();
        let c: Vec<f64> = (0..3).map(|j| (0..4).map(|r| x[j][r] * y[r]).sum()).collect();
        let a = lasso_gram(&gram, &c, 0.0);
        assert!(
            (a[0] - 0.7).abs() < 1e-6 && a[1].abs() < 1e-6 && (a[2] - 0.3).abs() < 1e-6,
            "{a:?}"
        );
        // With β the optimality conditions hold: |2(c − Gα)_j| ≤ β, = β·sign(α_j) where α_j ≠ 0.
        let beta = 0.15;
        let a = lasso_gram(&gram, &c, beta);
        for j in 0..3 {
            let g: f64 = (0..3).map(|k| gram[j * 3 + k] * a[k]).sum();
            let r = 2.0 * (c[j] - g);
            if a[j] != 0.0 {
                assert!((r - beta * a[j].signum()).abs() < 1e-6, "{j}: {r}");
            } else {
                assert!(r.abs() <= beta + 1e-9, "{j}: {r}");
            }
        }
        assert!(a[0] < 0.7 && a[1] == 0.0, "{a:?}");
    }

    #[test]
    fn selection_picks_one_strand_per_cluster() {
        // 40 strands in 4 tight clusters of motion; asking for 4 guides gives one per cluster,
        // even from a start that repeats a strand (the duplicate atom is reseeded).
        let dims = 30;
        let centre = |c: usize, r: usize| ((r * (c + 3)) as f32 * 0.37).sin() + c as f32 * 0.1;
        let u = DMatrix::from_fn(dims, 40, |r, s| {
            centre(s / 10, r) + 0.01 * ((s * 7 + r) as f32).cos()
        });
        let mut u = u;
        for mut col in u.column_iter_mut() {
            let n = col.norm();
            col /= n;
        }
        let chosen = select_guides(&u, &[0, 0, 20, 30], 4, 0.15, 10);
        assert_eq!(chosen.len(), 4);
        let mut clusters: Vec<usize> = chosen.iter().map(|s| s / 10).collect();
        clusters.sort_unstable();
        assert_eq!(clusters, vec![0, 1, 2, 3], "{chosen:?}");
    }
}
