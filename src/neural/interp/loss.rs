//! The training loss of W_θ (000 §4.2.2, Eq. 4–8):
//! L = w_data·L_data + w_len·L_len + w_snap·L_snap + w_tempo·L_tempo, paper weights 0.01, 1, 0.1, 0.1.
//!
//! - L_data (Eq. 5): ‖ŝ − s‖₁;
//! - L_len (Eq. 6): Σ over consecutive particles (‖s_a − s_b‖ − ‖s̄_a − s̄_b‖)²;
//! - L_snap (Eq. 7): −Σ_p ‖s_p − mean of its 16 neighbourhood guides‖ (rewards weights that snap
//!   to a mode instead of averaging);
//! - L_tempo (Eq. 8): Σ_t ‖(s^{t+1} − s^t) − (ŝ^{t+1} − ŝ^t)‖₁ over consecutive frames of the batch.
//!
//! The paper writes sums; tress takes means over particles (segments, frame pairs) so the weights
//! do not depend on the grid size, crop or batch (a deviation the book names). Empty cells are
//! masked out of every term.

use burn::prelude::*;
use serde::{Deserialize, Serialize};

/// Loss weights (000 Eq. 4).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LossWeights {
    pub data: f64,
    pub length: f64,
    pub snap: f64,
    pub tempo: f64,
}

impl Default for LossWeights {
    fn default() -> Self {
        LossWeights {
            data: 0.01,
            length: 1.0,
            snap: 0.1,
            tempo: 0.1,
        }
    }
}

impl LossWeights {
    /// 000 Table 1's "L_data only" ablation.
    pub fn data_only() -> LossWeights {
        LossWeights {
            data: 0.01,
            length: 0.0,
            snap: 0.0,
            tempo: 0.0,
        }
    }
}

/// A training without some of the loss's terms: 000 Table 1's ablation rows (L_data only, w/o
/// L_len, w/o L_snap) and w/o L_tempo (000 Fig. 13).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossAblation {
    DataOnly,
    NoLength,
    NoSnap,
    NoTempo,
}

impl LossAblation {
    pub const ALL: [LossAblation; 4] = [
        LossAblation::DataOnly,
        LossAblation::NoLength,
        LossAblation::NoSnap,
        LossAblation::NoTempo,
    ];

    /// As jobs and file names write it.
    pub fn id(self) -> &'static str {
        match self {
            LossAblation::DataOnly => "data_only",
            LossAblation::NoLength => "no_length",
            LossAblation::NoSnap => "no_snap",
            LossAblation::NoTempo => "no_tempo",
        }
    }

    /// As reports write it (000 Table 1's row names).
    pub fn describe(self) -> &'static str {
        match self {
            LossAblation::DataOnly => "L_data only",
            LossAblation::NoLength => "w/o L_len",
            LossAblation::NoSnap => "w/o L_snap",
            LossAblation::NoTempo => "w/o L_tempo",
        }
    }

    /// `w` without the ablated terms; `None` when they are already off (the ablation would be
    /// the full model again).
    pub fn apply(self, w: &LossWeights) -> Option<LossWeights> {
        let out = match self {
            LossAblation::DataOnly => LossWeights {
                data: w.data,
                ..LossWeights::data_only()
            },
            LossAblation::NoLength => LossWeights { length: 0.0, ..*w },
            LossAblation::NoSnap => LossWeights { snap: 0.0, ..*w },
            LossAblation::NoTempo => LossWeights { tempo: 0.0, ..*w },
        };
        (out != *w).then_some(out)
    }
}

/// The terms of one batch (unweighted) and their weighted sum.
pub struct LossTerms<B: Backend> {
    pub total: Tensor<B, 1>,
    /// `total` read back.
    pub value: f32,
    pub data: f32,
    pub length: f32,
    pub snap: f32,
    pub tempo: f32,
}

fn norm<B: Backend, const D: usize>(x: Tensor<B, D>) -> Tensor<B, D> {
    (x.powi_scalar(2).sum_dim(D - 1) + 1e-12).sqrt()
}

fn scalar<B: Backend>(t: &Tensor<B, 1>) -> f32 {
    t.clone().into_scalar().elem::<f32>()
}

/// The loss of predictions `s` `[b, u, v, w, 3]` against targets `[b, u, v, w, 3]` (consecutive
/// frames), rest `[1, u, v, w, 3]`, neighbourhood `[b, u, v, w, 16, 3]`, cell mask `[1, u, v, 1, 1]`
/// (1 for non-empty cells), with `snap_scale` multiplying the snap weight (its ramp).
pub fn loss<B: Backend>(
    s: Tensor<B, 5>,
    target: Tensor<B, 5>,
    rest: Tensor<B, 5>,
    hood: Tensor<B, 6>,
    mask: Tensor<B, 5>,
    w: &LossWeights,
    snap_scale: f64,
) -> LossTerms<B> {
    let [b, _, _, n_w, _] = s.dims();
    let cells = mask.clone().sum();
    let per_particle = cells.clone() * (b * n_w) as f64;
    let data = ((s.clone() - target.clone()).abs().sum_dim(4) * mask.clone()).sum() / per_particle.clone();
    let seg = |x: Tensor<B, 5>| {
        let [bb, u, v, ww, c] = x.dims();
        let a = x.clone().slice([0..bb, 0..u, 0..v, 1..ww, 0..c]);
        let z = x.slice([0..bb, 0..u, 0..v, 0..ww - 1, 0..c]);
        norm(a - z)
    };
    let dl = seg(s.clone()) - seg(rest);
    let length = (dl.powi_scalar(2) * mask.clone()).sum() / (cells.clone() * (b * (n_w - 1)) as f64);
    let mean_guide = hood.mean_dim(4).squeeze_dim::<5>(4);
    let snap = -((norm(s.clone() - mean_guide) * mask.clone()).sum() / per_particle);
    let tempo = if b >= 2 {
        let [_, u, v, ww, c] = s.dims();
        let d = |x: Tensor<B, 5>| {
            x.clone().slice([1..b, 0..u, 0..v, 0..ww, 0..c]) - x.slice([0..b - 1, 0..u, 0..v, 0..ww, 0..c])
        };
        ((d(s) - d(target)).abs().sum_dim(4) * mask).sum() / (cells * ((b - 1) * n_w) as f64)
    } else {
        data.clone() * 0.0
    };
    let total = data.clone() * w.data
        + length.clone() * w.length
        + snap.clone() * (w.snap * snap_scale)
        + tempo.clone() * w.tempo;
    LossTerms {
        data: scalar(&data),
        length: scalar(&length),
        snap: scalar(&snap),
        tempo: scalar(&tempo),
        value: scalar(&total),
        total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::Flex;
    type B = Flex;

    #[test]
    fn terms_on_hand_made_cases() {
        let dev = Default::default();
        // Two frames, one cell of two particles 1 apart along x at rest.
        let rest = Tensor::<B, 5>::from_data(
            TensorData::new(vec![0f32, 0., 0., 1., 0., 0.], [1, 1, 1, 2, 3]),
            &dev,
        );
        // Prediction: frame 0 stretched to length 2, frame 1 = rest moved by (0, 1, 0).
        let s = Tensor::<B, 5>::from_data(
            TensorData::new(
                vec![0f32, 0., 0., 2., 0., 0., 0., 1., 0., 1., 1., 0.],
                [2, 1, 1, 2, 3],
            ),
            &dev,
        );
        // Target: the rest shape in both frames.
        let t = Tensor::<B, 5>::cat(vec![rest.clone(), rest.clone()], 0);
        // Every neighbourhood guide at the origin.
        let hood = Tensor::<B, 6>::zeros([2, 1, 1, 2, 16, 3], &dev);
        let mask = Tensor::<B, 5>::ones([1, 1, 1, 1, 1], &dev);
        let l = loss(s, t, rest, hood, mask, &LossWeights::default(), 1.0);
        // L1 per particle: frame 0: 0, 1; frame 1: 1, 1 → mean 0.75.
        assert!((l.data - 0.75).abs() < 1e-5, "{}", l.data);
        // Segment lengths 2 and 1 against 1 → (1² + 0²) / 2.
        assert!((l.length - 0.5).abs() < 1e-5, "{}", l.length);
        // Distances to the origin: 0, 2, 1, √2 → −mean.
        let want = -(0.0 + 2.0 + 1.0 + 2f32.sqrt()) / 4.0;
        assert!((l.snap - want).abs() < 1e-4, "{} {want}", l.snap);
        // Velocities: prediction (0,1,0), (−1,1,0); target 0 → |·|₁ = 1, 2 → mean 1.5.
        assert!((l.tempo - 1.5).abs() < 1e-5, "{}", l.tempo);
        let total: f32 = l.total.into_scalar().elem();
        let want_total = 0.01 * 0.75 + 0.5 + 0.1 * want + 0.1 * 1.5;
        assert!((total - want_total).abs() < 1e-5);
    }
}
