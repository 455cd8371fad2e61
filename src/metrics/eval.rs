//! Geometric metrics, streamed frame by frame (memory: the two previous frames for jitter).

use glam::{Vec2, Vec3};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::nonlocal::{NonLocal, NonLocalFrame};
use crate::collide::ColliderFrame;

/// Metrics of one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameMetrics {
    pub frame: f64,
    /// Root-mean-square vertex distance (scene units).
    pub rmse: f64,
    /// Largest vertex distance.
    pub max_error: f64,
    /// Mean and largest |L_pred − L_gt| / L_gt over strands.
    pub length_error_mean: f64,
    pub length_error_max: f64,
    /// Mean angle between corresponding segments (degrees).
    pub tangent_error_deg: f64,
    /// Share of non-root vertices inside a collider (0..1) and the deepest (scene units).
    pub penetration_fraction: f64,
    pub penetration_max: f64,
    /// The same for props alone (solids on their own tracks, e.g. a rod swept through the hair).
    #[serde(default)]
    pub penetration_props_fraction: f64,
    #[serde(default)]
    pub penetration_props_max: f64,
    /// Mean ‖x_t − 2x_{t−1} + x_{t−2}‖ of the prediction and of the ground truth (0 for the
    /// first two frames).
    pub jitter: f64,
    pub jitter_gt: f64,
    /// 000 §5.7's non-local interactions (when the evaluator knows the root UVs).
    #[serde(default)]
    pub nonlocal: Option<NonLocalFrame>,
}

/// Metrics over a sequence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub frames: usize,
    /// RMS over every vertex of every frame.
    pub rmse: f64,
    pub max_error: f64,
    pub length_error_mean: f64,
    pub length_error_max: f64,
    pub tangent_error_deg: f64,
    pub penetration_fraction: f64,
    pub penetration_max: f64,
    #[serde(default)]
    pub penetration_props_fraction: f64,
    #[serde(default)]
    pub penetration_props_max: f64,
    /// Mean over the frames that have one.
    pub jitter: f64,
    pub jitter_gt: f64,
    /// 000 §5.7, means over the frames: the share of the ground truth's and of the method's
    /// interactions that join strands rooted far apart, and the share of the ground truth's
    /// remote interactions the method keeps ([`super::nonlocal`]).
    #[serde(default)]
    pub remote_share_gt: Option<f64>,
    #[serde(default)]
    pub remote_share: Option<f64>,
    #[serde(default)]
    pub remote_kept: Option<f64>,
}

/// Accumulates metrics of frames fed in order.
pub struct Evaluator {
    counts: Vec<u32>,
    history: Vec<(Vec<Vec3>, Vec<Vec3>)>,
    nonlocal: Option<NonLocal>,
    pub frames: Vec<FrameMetrics>,
}

/// Sums are taken per fixed chunk, then the chunks added in order: the same result on any
/// number of threads.
const CHUNK: usize = 4096;

fn jitter(a: &[Vec3], b: &[Vec3], c: &[Vec3]) -> f64 {
    let parts: Vec<f64> = a
        .par_chunks(CHUNK)
        .zip(b.par_chunks(CHUNK))
        .zip(c.par_chunks(CHUNK))
        .map(|((x, y), z)| {
            x.iter()
                .zip(y)
                .zip(z)
                .map(|((x, y), z)| (*x - 2.0 * *y + *z).length() as f64)
                .sum::<f64>()
        })
        .collect();
    parts.iter().sum::<f64>() / a.len().max(1) as f64
}

impl Evaluator {
    /// An evaluator for strands of `counts` vertices each.
    pub fn new(counts: &[u32]) -> Evaluator {
        Evaluator {
            counts: counts.to_vec(),
            history: Vec::new(),
            nonlocal: None,
            frames: Vec::new(),
        }
    }

    /// Also measures 000 §5.7's non-local interactions, with the strands' root UVs.
    pub fn with_nonlocal(mut self, root_uvs: &[Vec2]) -> Evaluator {
        self.nonlocal = Some(NonLocal::new(&self.counts, root_uvs));
        self
    }

    /// Measures one frame; `colliders` (at the frame's time) for penetration.
    pub fn push(
        &mut self,
        frame: f64,
        gt: &[Vec3],
        pred: &[Vec3],
        colliders: Option<&ColliderFrame>,
    ) -> FrameMetrics {
        assert_eq!(gt.len(), pred.len(), "ground truth and prediction differ in size");
        let n = gt.len().max(1) as f64;
        let parts: Vec<(f64, f64)> = gt
            .par_chunks(CHUNK)
            .zip(pred.par_chunks(CHUNK))
            .map(|(g, p)| {
                g.iter().zip(p).fold((0.0f64, 0.0f64), |acc, (a, b)| {
                    let d = a.distance(*b) as f64;
                    (acc.0 + d * d, acc.1.max(d))
                })
            })
            .collect();
        let (sq, max) = parts
            .iter()
            .fold((0.0, 0.0f64), |acc, p| (acc.0 + p.0, acc.1.max(p.1)));
        // Per strand: lengths and tangent angles.
        let mut offsets = Vec::with_capacity(self.counts.len());
        let mut o = 0usize;
        for &c in &self.counts {
            offsets.push(o);
            o += c as usize;
        }
        let per_strand: Vec<(f64, f64, usize, usize, f64, usize, f64)> = offsets
            .par_iter()
            .zip(&self.counts)
            .map(|(&o, &c)| {
                let (g, p) = (&gt[o..o + c as usize], &pred[o..o + c as usize]);
                let (mut lg, mut lp, mut angle) = (0.0f64, 0.0f64, 0.0f64);
                for i in 1..g.len() {
                    let (a, b) = (g[i] - g[i - 1], p[i] - p[i - 1]);
                    lg += a.length() as f64;
                    lp += b.length() as f64;
                    let cos = (a.normalize_or_zero().dot(b.normalize_or_zero()) as f64).clamp(-1.0, 1.0);
                    angle += cos.acos().to_degrees();
                }
                let len_err = if lg > 0.0 { (lp - lg).abs() / lg } else { 0.0 };
                // Penetration of the non-root vertices.
                let (mut inside, mut deepest) = (0usize, 0.0f64);
                let (mut in_props, mut props_deepest) = (0usize, 0.0f64);
                if let Some(col) = colliders {
                    let props = col.has_props();
                    for q in &p[1.min(p.len())..] {
                        if let Some(c) = col.query(*q)
                            && c.distance < 0.0
                        {
                            inside += 1;
                            deepest = deepest.max(-c.distance as f64);
                        }
                        if props
                            && let Some(c) = col.query_props(*q)
                            && c.distance < 0.0
                        {
                            in_props += 1;
                            props_deepest = props_deepest.max(-c.distance as f64);
                        }
                    }
                }
                (
                    len_err,
                    angle,
                    g.len().saturating_sub(1),
                    inside,
                    deepest,
                    in_props,
                    props_deepest,
                )
            })
            .collect();
        let strands = per_strand.len().max(1) as f64;
        let segments: usize = per_strand.iter().map(|s| s.2).sum();
        let inside: usize = per_strand.iter().map(|s| s.3).sum();
        let in_props: usize = per_strand.iter().map(|s| s.5).sum();
        let free_vertices = (gt.len() - self.counts.len().min(gt.len())).max(1) as f64;
        let (j, jg) = match self.history.as_slice() {
            [(g2, p2), (g1, p1)] => (jitter(pred, p1, p2), jitter(gt, g1, g2)),
            _ => (0.0, 0.0),
        };
        let m = FrameMetrics {
            frame,
            rmse: (sq / n).sqrt(),
            max_error: max,
            length_error_mean: per_strand.iter().map(|s| s.0).sum::<f64>() / strands,
            length_error_max: per_strand.iter().map(|s| s.0).fold(0.0, f64::max),
            tangent_error_deg: per_strand.iter().map(|s| s.1).sum::<f64>() / segments.max(1) as f64,
            penetration_fraction: inside as f64 / free_vertices,
            penetration_max: per_strand.iter().map(|s| s.4).fold(0.0, f64::max),
            penetration_props_fraction: in_props as f64 / free_vertices,
            penetration_props_max: per_strand.iter().map(|s| s.6).fold(0.0, f64::max),
            jitter: j,
            jitter_gt: jg,
            nonlocal: self.nonlocal.as_ref().map(|n| n.frame(gt, pred)),
        };
        self.history.push((gt.to_vec(), pred.to_vec()));
        if self.history.len() > 2 {
            self.history.remove(0);
        }
        self.frames.push(m);
        m
    }

    /// The sequence's summary.
    pub fn summary(&self) -> Summary {
        let f = &self.frames;
        let n = f.len().max(1) as f64;
        let with_jitter: Vec<&FrameMetrics> = f.iter().skip(2).collect();
        let jn = with_jitter.len().max(1) as f64;
        Summary {
            frames: f.len(),
            rmse: (f.iter().map(|m| m.rmse * m.rmse).sum::<f64>() / n).sqrt(),
            max_error: f.iter().map(|m| m.max_error).fold(0.0, f64::max),
            length_error_mean: f.iter().map(|m| m.length_error_mean).sum::<f64>() / n,
            length_error_max: f.iter().map(|m| m.length_error_max).fold(0.0, f64::max),
            tangent_error_deg: f.iter().map(|m| m.tangent_error_deg).sum::<f64>() / n,
            penetration_fraction: f.iter().map(|m| m.penetration_fraction).sum::<f64>() / n,
            penetration_max: f.iter().map(|m| m.penetration_max).fold(0.0, f64::max),
            penetration_props_fraction: f.iter().map(|m| m.penetration_props_fraction).sum::<f64>() / n,
            penetration_props_max: f.iter().map(|m| m.penetration_props_max).fold(0.0, f64::max),
            jitter: with_jitter.iter().map(|m| m.jitter).sum::<f64>() / jn,
            jitter_gt: with_jitter.iter().map(|m| m.jitter_gt).sum::<f64>() / jn,
            remote_share_gt: mean(f.iter().filter_map(|m| m.nonlocal.map(|n| n.remote_share_gt))),
            remote_share: mean(f.iter().filter_map(|m| m.nonlocal.map(|n| n.remote_share))),
            remote_kept: mean(f.iter().filter_map(|m| m.nonlocal.and_then(|n| n.remote_kept))),
        }
    }
}

/// The mean of some values (`None` for none).
fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| sum / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strands(shift: Vec3, t: f32) -> Vec<Vec3> {
        (0..3)
            .flat_map(|s| {
                (0..5).map(move |i| Vec3::new(s as f32, -(i as f32), 0.0) + shift + Vec3::X * t * t)
            })
            .collect()
    }

    #[test]
    fn identical_is_zero_and_a_shift_is_its_length() {
        let mut e = Evaluator::new(&[5, 5, 5]);
        for f in 0..4 {
            let t = f as f32 * 0.1;
            let m = e.push(f as f64, &strands(Vec3::ZERO, t), &strands(Vec3::ZERO, t), None);
            assert_eq!(
                (m.rmse, m.max_error, m.length_error_max, m.tangent_error_deg),
                (0.0, 0.0, 0.0, 0.0)
            );
        }
        let mut e = Evaluator::new(&[5, 5, 5]);
        for f in 0..4 {
            let t = f as f32 * 0.1;
            let m = e.push(
                f as f64,
                &strands(Vec3::ZERO, t),
                &strands(Vec3::new(0.6, 0.0, 0.8), t),
                None,
            );
            assert!((m.rmse - 1.0).abs() < 1e-6 && (m.max_error - 1.0).abs() < 1e-6);
            assert!(m.length_error_max < 1e-6 && m.tangent_error_deg < 1e-3);
        }
        let s = e.summary();
        assert!((s.rmse - 1.0).abs() < 1e-6);
        // x = t²: second difference 2·0.1² = 0.02 for both.
        assert!(
            (s.jitter - 0.02).abs() < 1e-5 && (s.jitter_gt - 0.02).abs() < 1e-5,
            "{s:?}"
        );
    }

    #[test]
    fn stretched_strands_and_turned_segments_are_measured() {
        let gt = strands(Vec3::ZERO, 0.0);
        // Every strand twice as long, straight down: length error 100 %, same tangents.
        let long: Vec<Vec3> = gt.iter().map(|p| Vec3::new(p.x, 2.0 * p.y, p.z)).collect();
        let mut e = Evaluator::new(&[5, 5, 5]);
        let m = e.push(0.0, &gt, &long, None);
        assert!((m.length_error_mean - 1.0).abs() < 1e-6 && m.tangent_error_deg < 1e-3);
        // Strands turned to horizontal: 90° everywhere.
        let flat: Vec<Vec3> = gt.iter().map(|p| Vec3::new(p.x, 0.0, -p.y)).collect();
        let m = e.push(1.0, &gt, &flat, None);
        assert!((m.tangent_error_deg - 90.0).abs() < 1e-3);
    }
}
