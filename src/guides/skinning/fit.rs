//! Fitting the skinning model on a full simulation (001 §6, Alg. 2).
//!
//! 1. Eligible guides 𝒢 of each normal strand (001 §6.3): the lasso of Eq. 9 with the guides'
//!    motion vectors as the basis (G̃), over the strand's `candidates` closest guides; guides
//!    whose code exceeds ε are eligible (at most `max_eligible`, strongest first).
//! 2. For every particle i, the Gram matrix H_i of the eligible guides' predictions
//!    d_g(f) = B_g(i, f) s̄*_i − s̄_i(f), accumulated over the training frames (001 Eq. 7 with
//!    Σw = 1, see [`super::qp`]); and, for every pair of guides sharing an eligible set, the
//!    normalizers of 001 §7.1: A_ij the training average of ‖p_i − p_j‖², B_ij the 99th
//!    percentile of ‖v_i − v_j‖² over the training frames — not the paper's average: relative
//!    velocities are heavy-tailed (measured on the quickstart: 24 % of pair-frames exceed the
//!    average), so an average makes ordinary training-like motion split guide pairs.
//! 3. Alg. 2: every non-empty subset 𝒢' ⊆ 𝒢, in ascending size: per-particle weights by Eq. 7,
//!    a quadratic along the strand per guide by Eq. 8, and the set is kept unless some guide's
//!    weight stays below ε everywhere. The best-fitting kept set (the static-skinning set) is
//!    stored first.
//!
//! The frames are streamed, twice (more for grooms whose accumulators exceed the memory
//! budget: strands are then fitted in batches, each batch streaming the frames again).

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

use glam::Vec3;
use nalgebra::DMatrix;
use rayon::prelude::*;
use serde::Serialize;
use tress_formats::skin::{MAX_ELIGIBLE, SkinModel};

use super::qp::simplex_least_squares;
use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::guides::layout::{GuideLayout, GuideRotations};
use crate::guides::sparse::lasso_gram;
use crate::guides::training::HeadFrames;

/// Settings of the fit, with 001's values as defaults.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FitOptions {
    /// β of 001 Eq. 9.
    pub beta: f64,
    /// ε of 001 §6.3 and Alg. 2.
    pub epsilon: f32,
    /// Most eligible guides per strand (2^n − 1 subsets are fitted).
    pub max_eligible: usize,
    /// Closest guides the lasso chooses the eligible ones from.
    pub candidates: usize,
    /// Bytes the per-particle accumulators may take before strands are fitted in batches.
    pub memory_budget: usize,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            beta: 0.15,
            epsilon: 0.01,
            max_eligible: 6,
            candidates: 16,
            memory_budget: 1 << 30,
        }
    }
}

/// What a fit did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FitReport {
    pub frames: usize,
    pub strands: usize,
    pub guides: usize,
    /// Eligible guides per normal strand, on average.
    pub eligible_mean: f64,
    /// Guide sets per normal strand, on average.
    pub sets_mean: f64,
    /// Training error of static skinning: RMS distance (cm) of the normal particles from where
    /// their best set puts them, over the training frames.
    pub training_rmse: f64,
    pub seconds: f64,
    /// Passes over the training frames.
    pub passes: usize,
}

/// ⟨a, b⟩ over the first min(len) particles.
fn dot(a: &[Vec3], b: &[Vec3]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x.dot(*y) as f64).sum()
}

/// Pass 1: each normal strand's eligible guides (slots, increasing) by the lasso of Eq. 9.
fn eligible_guides(
    layout: &GuideLayout,
    training: &mut HeadFrames,
    opts: &FitOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Vec<u32>>> {
    let n = layout.strand_count();
    let g = layout.guide_count();
    let pools: Vec<Vec<u32>> = (0..n)
        .into_par_iter()
        .map(|s| {
            if layout.is_guide(s) || layout.counts[s] == 0 {
                Vec::new()
            } else {
                layout.closest_guides(s, opts.candidates.max(1), 4 * opts.candidates.max(1))
            }
        })
        .collect();
    let mut gg = vec![0.0f64; g * g];
    let mut sg: Vec<Vec<f64>> = pools.iter().map(|p| vec![0.0; p.len()]).collect();
    let mut ss = vec![0.0f64; n];
    let frames = training.len();
    for f in 0..frames {
        let (x, _) = training.frame(f)?;
        let strand = |s: usize| &x[layout.offsets[s]..layout.offsets[s + 1]];
        let rows: Vec<Vec<f64>> = (0..g)
            .into_par_iter()
            .map(|a| {
                let xa = strand(layout.guides[a]);
                (a..g).map(|b| dot(xa, strand(layout.guides[b]))).collect()
            })
            .collect();
        for (a, row) in rows.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                gg[a * g + a + j] += v;
            }
        }
        sg.par_iter_mut()
            .zip(&pools)
            .zip(ss.par_iter_mut())
            .enumerate()
            .for_each(|(s, ((acc, pool), ssum))| {
                if pool.is_empty() {
                    return;
                }
                let xs = strand(s);
                *ssum += dot(xs, xs);
                for (v, &k) in acc.iter_mut().zip(pool) {
                    *v += dot(xs, strand(layout.guides[k as usize]));
                }
            });
        if f % 25 == 0 || f + 1 == frames {
            progress(&format!("eligible guides: frame {}/{frames}", f + 1));
        }
    }
    let norm = |a: usize, b: usize| if a <= b { gg[a * g + b] } else { gg[b * g + a] };
    Ok((0..n)
        .into_par_iter()
        .map(|s| {
            let pool = &pools[s];
            if pool.is_empty() {
                return Vec::new();
            }
            let k = pool.len();
            let nk: Vec<f64> = pool
                .iter()
                .map(|&a| norm(a as usize, a as usize).sqrt().max(1e-30))
                .collect();
            let ns = ss[s].sqrt().max(1e-30);
            let gram: Vec<f64> = (0..k * k)
                .map(|i| norm(pool[i / k] as usize, pool[i % k] as usize) / (nk[i / k] * nk[i % k]))
                .collect();
            let c: Vec<f64> = (0..k).map(|j| sg[s][j] / (nk[j] * ns)).collect();
            let alpha = lasso_gram(&gram, &c, opts.beta);
            let mut strong: Vec<(f64, u32)> = alpha
                .iter()
                .zip(pool)
                .filter(|(a, _)| **a > opts.epsilon as f64)
                .map(|(a, g)| (*a, *g))
                .collect();
            strong.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            strong.truncate(opts.max_eligible.clamp(1, MAX_ELIGIBLE));
            let mut chosen: Vec<u32> = strong.into_iter().map(|(_, g)| g).collect();
            if chosen.is_empty() {
                chosen.push(pool[0]);
            }
            chosen.sort_unstable();
            chosen
        })
        .collect())
}

/// Per-particle Gram matrices (upper triangles) of one strand's eligible guides.
struct StrandStats {
    e: usize,
    /// Per particle, e(e+1)/2 entries.
    h: Vec<f64>,
}

impl StrandStats {
    /// Empty statistics of a strand of `points` particles with `e` eligible guides.
    fn new(e: usize, points: usize) -> StrandStats {
        StrandStats {
            e,
            h: vec![0.0; tri(e) * points],
        }
    }
}

fn tri(e: usize) -> usize {
    e * (e + 1) / 2
}

/// The least-squares quadratic w(t) = a t² + b t + c through per-particle weights at
/// t_i = i / (n − 1) (001 Eq. 8): the pseudo-inverse of [t² t 1], per strand length.
struct PolyFit {
    by_len: HashMap<usize, DMatrix<f64>>,
}

impl PolyFit {
    fn new(lengths: impl Iterator<Item = usize>) -> PolyFit {
        let mut by_len = HashMap::new();
        for n in lengths {
            by_len.entry(n).or_insert_with(|| {
                let v = DMatrix::from_fn(n, 3, |i, j| {
                    let t = if n > 1 { i as f64 / (n - 1) as f64 } else { 0.0 };
                    t.powi(2 - j as i32)
                });
                v.pseudo_inverse(1e-12).expect("a Vandermonde matrix has an SVD")
            });
        }
        PolyFit { by_len }
    }

    fn fit(&self, w: &[f64]) -> [f32; 3] {
        let p = &self.by_len[&w.len()];
        let mut out = [0.0f32; 3];
        for (j, o) in out.iter_mut().enumerate() {
            *o = (0..w.len()).map(|i| p[(j, i)] * w[i]).sum::<f64>() as f32;
        }
        out
    }
}

/// w(t) of a coefficient triple at particle `i` of `n`.
pub fn poly_at(c: &[f32; 3], i: usize, n: usize) -> f32 {
    let t = if n > 1 { i as f32 / (n - 1) as f32 } else { 0.0 };
    (c[0] * t + c[1]) * t + c[2]
}

/// The weights skinning uses at particle `i`: the set's polynomials clamped at zero and scaled
/// to sum to one (001 §6.2: "we simply normalize the weights when using them at runtime").
pub fn runtime_weights(coefs: &[[f32; 3]], i: usize, n: usize, out: &mut [f32]) {
    let mut sum = 0.0;
    for (o, c) in out.iter_mut().zip(coefs) {
        *o = poly_at(c, i, n).max(0.0);
        sum += *o;
    }
    if sum > 0.0 {
        out.iter_mut().for_each(|o| *o /= sum);
    } else {
        out.iter_mut().for_each(|o| *o = 1.0 / coefs.len() as f32);
    }
}

/// One kept guide set of a strand: the bit mask over its eligible guides and one quadratic's
/// coefficients per member (Eq. 8).
type KeptSet = (u16, Vec<[f32; 3]>);

/// Alg. 2 for one strand: its kept sets, best-fitting first, and that set's training objective.
fn fit_strand(stats: &StrandStats, n: usize, epsilon: f32, poly: &PolyFit) -> (Vec<KeptSet>, f64) {
    let e = stats.e;
    let mut masks: Vec<u16> = (1..(1u32 << e)).map(|m| m as u16).collect();
    masks.sort_by_key(|m| (m.count_ones(), *m));
    let mut kept: Vec<(u16, Vec<[f32; 3]>, f64)> = Vec::new();
    let mut h = Vec::with_capacity(64);
    let full_h = |i: usize, a: usize, b: usize| {
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        stats.h[i * tri(e) + a * e - a * (a + 1) / 2 + b]
    };
    for mask in masks {
        let members: Vec<usize> = (0..e).filter(|k| mask & (1 << k) != 0).collect();
        let k = members.len();
        // Per-particle weights (Eq. 7), then a quadratic per guide (Eq. 8).
        let mut w = vec![vec![0.0f64; n]; k];
        #[allow(clippy::needless_range_loop)] // i indexes both the statistics and w's columns
        for i in 0..n {
            h.clear();
            for &a in &members {
                for &b in &members {
                    h.push(full_h(i, a, b));
                }
            }
            let (wi, _) = simplex_least_squares(&h, k);
            for (m, x) in wi.into_iter().enumerate() {
                w[m][i] = x;
            }
        }
        let coefs: Vec<[f32; 3]> = w.iter().map(|wm| poly.fit(wm)).collect();
        // An unnecessary guide makes the set excessive (Alg. 2, lines 6–8).
        let needed = coefs.iter().all(|c| (0..n).any(|i| poly_at(c, i, n) >= epsilon));
        if !needed {
            continue;
        }
        // The set's training error with the weights skinning will use.
        let mut rw = vec![0.0f32; k];
        let mut objective = 0.0;
        for i in 0..n {
            runtime_weights(&coefs, i, n, &mut rw);
            for (x, &a) in members.iter().enumerate() {
                for (y, &b) in members.iter().enumerate() {
                    objective += rw[x] as f64 * rw[y] as f64 * full_h(i, a, b);
                }
            }
        }
        kept.push((mask, coefs, objective));
    }
    // Static skinning's set first: the best fit (larger sets win ties).
    let best = (0..kept.len())
        .min_by(|&a, &b| {
            kept[a]
                .2
                .total_cmp(&kept[b].2)
                .then(kept[b].0.count_ones().cmp(&kept[a].0.count_ones()))
        })
        .expect("single-guide sets are always kept");
    let objective = kept[best].2;
    let first = kept.remove(best);
    let mut out = vec![(first.0, first.1)];
    out.extend(kept.into_iter().map(|(m, c, _)| (m, c)));
    (out, objective)
}

/// The `q` quantile of `v` (nearest rank; 0 for none).
fn percentile(v: &mut [f32], q: f64) -> f32 {
    if v.is_empty() {
        return 0.0;
    }
    let k = ((v.len() - 1) as f64 * q).round() as usize;
    *v.select_nth_unstable_by(k, f32::total_cmp).1
}

/// Guide pairs that share an eligible set.
fn shared_pairs(eligible: &[Vec<u32>]) -> Vec<[u32; 2]> {
    let mut set = BTreeSet::new();
    for e in eligible {
        for (x, &a) in e.iter().enumerate() {
            for &b in &e[x + 1..] {
                set.insert([a, b]);
            }
        }
    }
    set.into_iter().collect()
}

/// Batches of the strands with eligible guides whose accumulators fit `budget` bytes.
fn batches(layout: &GuideLayout, eligible: &[Vec<u32>], budget: usize) -> Vec<Vec<usize>> {
    let bytes = |s: usize| tri(eligible[s].len()) * layout.counts[s] as usize * 8;
    let mut batches: Vec<Vec<usize>> = vec![Vec::new()];
    let mut used = 0usize;
    for s in (0..layout.strand_count()).filter(|&s| !eligible[s].is_empty()) {
        if used + bytes(s) > budget && !batches.last().expect("one").is_empty() {
            batches.push(Vec::new());
            used = 0;
        }
        used += bytes(s);
        batches.last_mut().expect("one").push(s);
    }
    batches
}

/// Adds one frame `x` to strand `s`'s statistics: per particle, the products of the
/// differences between where each eligible guide carries it and where it is (001 Alg. 2's H).
fn accumulate(
    st: &mut StrandStats,
    layout: &GuideLayout,
    s: usize,
    eligible: &[u32],
    x: &[Vec3],
    rot: &GuideRotations,
) {
    let e = st.e;
    let me = layout.strand(s);
    let cur = &x[layout.offsets[s]..layout.offsets[s + 1]];
    let mut d = [Vec3::ZERO; MAX_ELIGIBLE];
    for i in 0..me.len() {
        for (k, &g) in eligible.iter().enumerate() {
            d[k] = rot.carry(g as usize, i, me[i]) - cur[i];
        }
        let h = &mut st.h[i * tri(e)..(i + 1) * tri(e)];
        let mut o = 0;
        for a in 0..e {
            for b in a..e {
                h[o] += d[a].dot(d[b]) as f64;
                o += 1;
            }
        }
    }
}

/// A_ij, B_ij (001 §7.1) of one frame of guides `gp`: per pair, the squared differences of the
/// stacked positions, and of the stacked velocities (from the frame before, `previous`).
fn pair_differences(
    pairs: &[[u32; 2]],
    layout: &GuideLayout,
    gp: &[Vec3],
    previous: Option<&[Vec3]>,
    fps: f32,
) -> Vec<(f64, f64)> {
    pairs
        .par_iter()
        .map(|&[a, b]| {
            let (pa, pb) = (layout.guide(a as usize, gp), layout.guide(b as usize, gp));
            let dp: f64 = pa
                .iter()
                .zip(pb)
                .map(|(x, y)| x.distance_squared(*y) as f64)
                .sum();
            let dv = previous.map_or(0.0, |prev| {
                let (qa, qb) = (layout.guide(a as usize, prev), layout.guide(b as usize, prev));
                (0..pa.len().min(pb.len()))
                    .map(|j| (((pa[j] - qa[j]) - (pb[j] - qb[j])) * fps).length_squared() as f64)
                    .sum()
            });
            (dp, dv)
        })
        .collect()
}

/// The model's flat per-strand arrays: eligible guides and fitted sets.
fn flatten(model: &mut SkinModel, eligible: &[Vec<u32>], sets: &[Vec<KeptSet>]) {
    model.eligible_start.push(0);
    model.set_start.push(0);
    for s in 0..eligible.len() {
        model.eligible.extend(&eligible[s]);
        model.eligible_start.push(model.eligible.len() as u32);
        for (mask, coefs) in &sets[s] {
            model.set_mask.push(*mask);
            model.coefs.extend(coefs);
        }
        model.set_start.push(model.set_mask.len() as u32);
    }
}

/// Fits the skinning model of `rest` (the prepared groom, head frame) with guide strands
/// `guides` on the frames of `training` (a full simulation of the same groom).
pub fn fit(
    rest: &Groom,
    guides: &[usize],
    training: &mut HeadFrames,
    opts: &FitOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<(SkinModel, FitReport)> {
    let start = Instant::now();
    if guides.is_empty() {
        return Err(Error::Invalid("a skinning model needs at least one guide".into()));
    }
    let layout = GuideLayout::new(rest, guides)?;
    let n = layout.strand_count();
    let frames = training.len();
    let eligible = eligible_guides(&layout, training, opts, progress)?;
    let mut passes = 1;
    let pairs = shared_pairs(&eligible);
    let mut pair_a = vec![0.0f64; pairs.len()];
    // Every frame's squared velocity discrepancy per pair, for its 99th percentile.
    let mut pair_dv: Vec<Vec<f32>> = vec![Vec::with_capacity(frames); pairs.len()];
    let batches = batches(&layout, &eligible, opts.memory_budget);
    let poly = PolyFit::new((0..n).map(|s| layout.counts[s] as usize).filter(|&c| c > 0));
    let mut sets: Vec<Vec<(u16, Vec<[f32; 3]>)>> = vec![Vec::new(); n];
    let mut objective = 0.0f64;
    let mut fitted_particles = 0usize;
    for (bi, batch) in batches.iter().enumerate() {
        let mut stats: Vec<StrandStats> = batch
            .iter()
            .map(|&s| StrandStats::new(eligible[s].len(), layout.counts[s] as usize))
            .collect();
        let mut previous: Option<Vec<Vec3>> = None;
        for f in 0..frames {
            let (x, _) = training.frame(f)?;
            let gp = layout.extract(&x);
            let rot = layout.rotations(&gp);
            stats.par_iter_mut().zip(batch).for_each(|(st, &s)| {
                accumulate(st, &layout, s, &eligible[s], &x, &rot);
            });
            if bi == 0 {
                let diffs = pair_differences(&pairs, &layout, &gp, previous.as_deref(), training.fps as f32);
                for (k, (dp, dv)) in diffs.into_iter().enumerate() {
                    pair_a[k] += dp;
                    if previous.is_some() {
                        pair_dv[k].push(dv as f32);
                    }
                }
                previous = Some(gp);
            }
            if f % 25 == 0 || f + 1 == frames {
                let of = match batches.len() {
                    1 => String::new(),
                    b => format!(" (batch {}/{b})", bi + 1),
                };
                progress(&format!("skinning statistics{of}: frame {}/{frames}", f + 1));
            }
        }
        passes += 1;
        progress(&format!(
            "fitting guide sets of {} strands (001 Alg. 2)",
            batch.len()
        ));
        let fitted: Vec<(Vec<KeptSet>, f64)> = stats
            .par_iter()
            .zip(batch)
            .map(|(st, &s)| fit_strand(st, layout.counts[s] as usize, opts.epsilon, &poly))
            .collect();
        for ((found, obj), &s) in fitted.into_iter().zip(batch) {
            if !obj.is_finite() {
                return Err(Error::Runtime(format!(
                    "strand {s}: the fit's objective is {obj} (non-finite training positions?)"
                )));
            }
            // wᵀHw of an exact fit can round a hair below zero.
            objective += obj.max(0.0);
            fitted_particles += layout.counts[s] as usize;
            sets[s] = found;
        }
    }
    // Assemble the flat model.
    let mut model = SkinModel {
        counts: layout.counts.clone(),
        guides: guides.iter().map(|&g| g as u32).collect(),
        pairs,
        pair_a: pair_a.iter().map(|a| (a / frames as f64) as f32).collect(),
        pair_b: pair_dv.iter_mut().map(|v| percentile(v, 0.99)).collect(),
        ..Default::default()
    };
    flatten(&mut model, &eligible, &sets);
    let normals = eligible.iter().filter(|e| !e.is_empty()).count().max(1);
    let report = FitReport {
        frames,
        strands: n,
        guides: guides.len(),
        eligible_mean: model.eligible.len() as f64 / normals as f64,
        sets_mean: model.set_mask.len() as f64 / normals as f64,
        training_rmse: (objective / (fitted_particles.max(1) * frames.max(1)) as f64).sqrt(),
        seconds: start.elapsed().as_secs_f64(),
        passes,
    };
    // What the model came from (no timings: the same inputs give the same bytes).
    model.meta = serde_json::json!({
        "tress": env!("CARGO_PKG_VERSION"),
        "training": training.path().file_name().map(|f| f.to_string_lossy().to_string()),
        "frames": frames,
        "options": opts,
        "eligible_mean": report.eligible_mean,
        "sets_mean": report.sets_mean,
        "training_rmse": report.training_rmse,
    })
    .to_string();
    model
        .validate()
        .map_err(|e| Error::Runtime(format!("the fitted model is inconsistent: {e}")))?;
    Ok((model, report))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cache::{CacheInfo, SinkOptions, create_sink};
    use crate::guides::Skinning;
    use crate::motion::Pose;
    use glam::{Quat, Vec3};

    /// Points per strand of the fixture.
    pub const N: usize = 10;

    /// Two guides (strands 0 and 1, 2 cm apart) and three normal strands between them, hanging
    /// along −y; every strand 10 points 1 cm apart.
    pub fn fixture_groom() -> Groom {
        let xs = [-1.0f32, 1.0, -0.5, 0.0, 0.5];
        let points: Vec<Vec3> = xs
            .iter()
            .flat_map(|&x| (0..N).map(move |i| Vec3::new(x, -(i as f32), 0.0)))
            .collect();
        Groom::new(points, vec![N as u32; xs.len()], Default::default()).unwrap()
    }

    /// The blend weight of guide 0 for normal strand `s` at particle `i`: linear along the
    /// strand, different per strand (a quadratic of Eq. 8 holds it exactly).
    pub fn w0(s: usize, i: usize) -> f32 {
        let t = i as f32 / (N - 1) as f32;
        match s {
            2 => 0.8 - 0.3 * t,
            3 => 0.2 + 0.6 * t,
            _ => 0.3,
        }
    }

    /// Frame `f` of a training sequence in the head's frame: each guide swings about its root
    /// on its own (two axes, different phases) and each normal strand is, exactly, the blend
    /// of 001 Eq. 5 of the two guides with weights [`w0`], 1 − [`w0`].
    pub fn blend_frame(groom: &Groom, f: usize) -> Vec<Vec3> {
        let layout = GuideLayout::new(groom, &[0, 1]).unwrap();
        let mut g = Vec::new();
        for k in 0..2 {
            let q = Quat::from_rotation_z(0.5 * (0.3 * f as f32 + k as f32 * 1.7).sin())
                * Quat::from_rotation_x(0.4 * (0.2 * f as f32 + k as f32).cos());
            let pts = groom.strand(k);
            g.extend(pts.iter().map(|p| pts[0] + q * (*p - pts[0])));
        }
        let rot = layout.rotations(&g);
        let mut out = g.clone();
        for s in 2..5 {
            for (i, &rest) in groom.strand(s).iter().enumerate() {
                let w = w0(s, i);
                out.push(w * rot.carry(0, i, rest) + (1.0 - w) * rot.carry(1, i, rest));
            }
        }
        out
    }

    /// The fixture's training cache (40 frames) under `dir`, and the model fitted on it.
    pub fn fitted_fixture(dir: &std::path::Path) -> (Groom, SkinModel, FitReport) {
        let groom = fixture_groom();
        let path = dir.join("training.tcache");
        let info = CacheInfo {
            topology: groom.to_strands(),
            fps: 24.0,
            frames: Vec::new(),
        };
        let mut sink = create_sink(&path, &info, 1.0, &SinkOptions::default()).unwrap();
        // The head stands still away from the origin (a stored pose, so the frames are read
        // back in the head's frame as written, moving roots and all).
        let head = Pose::new(glam::DQuat::from_rotation_y(0.3), glam::DVec3::new(1.0, 2.0, 3.0));
        for f in 0..40 {
            let x: Vec<[f32; 3]> = blend_frame(&groom, f)
                .iter()
                .map(|p| head.apply_f32(*p).to_array())
                .collect();
            sink.write(1.0 + f as f64, &x, Some(head.into())).unwrap();
        }
        sink.finish().unwrap();
        let mut frames = HeadFrames::open(&path, &groom).unwrap();
        {
            let (x, _) = frames.frame(5).unwrap();
            let want = blend_frame(&groom, 5);
            let e = x
                .iter()
                .zip(&want)
                .map(|(a, b)| a.distance(*b))
                .fold(0.0f32, f32::max);
            assert!(e < 1e-4, "read back {e} cm off");
        }
        let (model, report) = fit(&groom, &[0, 1], &mut frames, &FitOptions::default(), &mut |_| {}).unwrap();
        (groom, model, report)
    }

    #[test]
    fn runtime_weights_are_convex_for_any_coefficients() {
        let mut state = 12345u64;
        let mut rnd = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
        };
        for _ in 0..500 {
            let k = 1 + (rnd().abs() * 5.0) as usize;
            let coefs: Vec<[f32; 3]> = (0..k).map(|_| [rnd(), rnd(), rnd()]).collect();
            let mut w = vec![0.0; k];
            for i in 0..25 {
                runtime_weights(&coefs, i, 25, &mut w);
                let sum: f32 = w.iter().sum();
                assert!((sum - 1.0).abs() < 1e-5, "{w:?}");
                assert!(w.iter().all(|&x| x >= 0.0), "{w:?}");
            }
        }
    }

    /// Training frames made exactly by Eq. 5 with known weights: the fit (Eq. 7 per particle,
    /// then Eq. 8) must find them, with no training error; every kept set's runtime weights are
    /// convex.
    #[test]
    fn the_fit_recovers_the_weights_that_made_the_training_frames() {
        let dir = std::env::temp_dir().join(format!("tress-fit-blend-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (groom, model, report) = fitted_fixture(&dir);
        assert!(
            report.training_rmse < 2e-3,
            "training RMSE {} cm",
            report.training_rmse
        );
        let skin = Skinning::new(model, &groom).unwrap();
        let mut w = Vec::new();
        for s in 2..5 {
            let best = skin.sets(s).start;
            skin.set_weights(s, best, &mut w);
            assert_eq!(w.len(), 2, "strand {s}: the best set blends both guides");
            let (g0, g1) = (&w[0], &w[1]);
            assert_eq!((g0.0, g1.0), (0, 1));
            for i in 0..N {
                assert!(
                    (g0.1[i] - w0(s, i)).abs() < 5e-3,
                    "strand {s} particle {i}: {} vs {}",
                    g0.1[i],
                    w0(s, i)
                );
            }
            for set in skin.sets(s) {
                skin.set_weights(s, set, &mut w);
                for i in 0..N {
                    let sum: f32 = w.iter().map(|(_, x)| x[i]).sum();
                    assert!((sum - 1.0).abs() < 1e-5 && w.iter().all(|(_, x)| x[i] >= 0.0));
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
