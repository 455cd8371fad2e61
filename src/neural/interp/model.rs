//! The weight predictor W_θ (000 §4.2.1, Fig. 4, supplemental §6's table) and the linear
//! interpolator L (000 Eq. 2–3).
//!
//! Tensors are `[batch, channels, u, v, w]` in the network and `[batch, u, v, w, 3]` for
//! positions. With a guide stride k = 2^L the network has L rest levels:
//!
//! - rest pyramid: level ℓ = 1..L is `C(5, 2, 4·2^ℓ)`, IN, LReLU (stride 2 along u and v, 1 along
//!   w); the last level is s̄* (paper, L = 3: 8, 16, 32 channels);
//! - guide branch: n_g1 = LReLU(IN(C(5,1,32)(g)) + IN(C(1,1,32)(g))) (the residual 1×1 path);
//! - n1 = concat(n_g1, s̄*);
//! - decoder, level ℓ = L−1..0: IN(T_C(4, 2, 16·2^ℓ)(prev)) + IN(C(1,1,16·2^ℓ)(rest_ℓ)) with the
//!   rest level ℓ as skip (rest_0 = s̄), LReLU on inner levels, softmax over the n_n = 16
//!   channels at level 0 (paper: 64, 32, 16 channels).
//!
//! ω_pq ≥ 0, Σ_q ω_pq = 1 over each particle's 4×4 guide neighbourhood; L then blends the 16
//! guide particles at the same w (Eq. 3), guide indices clamped at the border ("pad G_p with the
//! nearest valid guide hairs").
//!
//! With a learned share (`[net] learn_share`, tress's option) the last level has a 17th channel,
//! λ_p = σ(y_p + logit λ₀): how much of its rest offset the particle's candidates carry
//! ([`super::carry`]), predicted like its weights.
//!
//! Everything that depends only on the rest groom ([`RestFeatures`]) is computed once per
//! groom and reused for every frame.

use burn::nn::conv::{Conv3d, Conv3dConfig, ConvTranspose3d, ConvTranspose3dConfig};
use burn::nn::{InstanceNorm, InstanceNormConfig, PaddingConfig3d};
use burn::prelude::*;
use burn::tensor::activation::{leaky_relu, sigmoid, softmax};

/// Neighbourhood size n_n (4 × 4 guides).
pub const NEIGHBORS: usize = 16;

#[derive(Config, Debug)]
pub struct WeightNetConfig {
    /// Rest levels L (guide stride 2^L).
    pub levels: usize,
    /// Guide-branch channels (paper: 32).
    #[config(default = 32)]
    pub guide_channels: usize,
    /// LeakyReLU slope (not given in the paper).
    #[config(default = 0.2)]
    pub slope: f64,
    /// A 17th output channel, each particle's share λ_p of its rest offset
    /// (`[net] learn_share`, [`super::carry`]): λ_p = σ(y_p + logit λ₀) with λ₀ this prior
    /// (`[net] offset_share`), in (0, 1). None: 16 weights only (000 as written).
    #[config(default = "None")]
    pub learned_share: Option<f64>,
}

/// A convolution followed by instance normalization.
#[derive(Module, Debug)]
pub struct ConvIn<B: Backend> {
    conv: Conv3d<B>,
    norm: InstanceNorm<B>,
}

impl<B: Backend> ConvIn<B> {
    pub(crate) fn new(ci: usize, co: usize, k: usize, stride: usize, dev: &B::Device) -> Self {
        let p = k / 2;
        ConvIn {
            conv: Conv3dConfig::new([ci, co], [k, k, k])
                .with_stride([stride, stride, 1])
                .with_padding(PaddingConfig3d::Explicit(p, p, p))
                .init(dev),
            norm: InstanceNormConfig::new(co).init(dev),
        }
    }

    pub(crate) fn forward(&self, x: Tensor<B, 5>) -> Tensor<B, 5> {
        self.norm.forward(self.conv.forward(x))
    }
}

/// A transposed convolution doubling u and v (kernel 4, keeps w) followed by instance norm.
#[derive(Module, Debug)]
pub struct UpIn<B: Backend> {
    conv: ConvTranspose3d<B>,
    norm: InstanceNorm<B>,
}

impl<B: Backend> UpIn<B> {
    fn new(ci: usize, co: usize, dev: &B::Device) -> Self {
        UpIn {
            conv: ConvTranspose3dConfig::new([ci, co], [4, 4, 4])
                .with_stride([2, 2, 1])
                .with_padding([1, 1, 1])
                .init(dev),
            norm: InstanceNormConfig::new(co).init(dev),
        }
    }

    fn forward(&self, x: Tensor<B, 5>) -> Tensor<B, 5> {
        let w = x.dims()[4];
        // Kernel 4 at stride 1 along w gives w + 1; TF's "same" keeps the first w.
        let y = self.conv.forward(x);
        let [b, c, u, v, _] = y.dims();
        self.norm.forward(y.slice([0..b, 0..c, 0..u, 0..v, 0..w]))
    }
}

#[derive(Module, Debug)]
pub struct WeightNet<B: Backend> {
    /// Rest pyramid, levels 1..=L.
    rest: Vec<ConvIn<B>>,
    guide_wide: ConvIn<B>,
    guide_skip: ConvIn<B>,
    /// Decoder up-convolutions, from level L−1 down to 0.
    up: Vec<UpIn<B>>,
    /// 1×1 skips from rest level ℓ, same order as `up`.
    skip: Vec<ConvIn<B>>,
    slope: f64,
    /// logit λ₀ of a learned share (its channel is the last decoder level's 17th).
    share_bias: Option<f64>,
}

/// What W_θ predicts for every particle: the weights ω `[b, 16, u, v, w]` (softmax over the 16)
/// and, in a network with a learned share, λ_p `[b, 1, u, v, w]` in (0, 1).
pub struct Prediction<B: Backend> {
    pub omega: Tensor<B, 5>,
    pub share: Option<Tensor<B, 5>>,
}

/// The parts of W_θ that depend only on the rest groom.
#[derive(Clone, Debug)]
pub struct RestFeatures<B: Backend> {
    /// s̄* (coarsest rest level).
    pub coarse: Tensor<B, 5>,
    /// IN(C(1,1,·)(rest_ℓ)) for the decoder, same order as the decoder.
    pub skips: Vec<Tensor<B, 5>>,
}

impl WeightNetConfig {
    fn rest_channels(&self, level: usize) -> usize {
        if level == 0 { 3 } else { 4 << level }
    }

    fn dec_channels(&self, level: usize) -> usize {
        16 << level
    }

    pub fn init<B: Backend>(&self, dev: &B::Device) -> WeightNet<B> {
        assert!((1..=5).contains(&self.levels), "1 to 5 rest levels");
        let l = self.levels;
        let rest = (1..=l)
            .map(|lv| ConvIn::new(self.rest_channels(lv - 1), self.rest_channels(lv), 5, 2, dev))
            .collect();
        let gc = self.guide_channels;
        let mut up = Vec::new();
        let mut skip = Vec::new();
        let mut prev = gc + self.rest_channels(l);
        for lv in (0..l).rev() {
            let extra = usize::from(lv == 0 && self.learned_share.is_some());
            let c = self.dec_channels(lv) + extra;
            up.push(UpIn::new(prev, c, dev));
            skip.push(ConvIn::new(self.rest_channels(lv), c, 1, 1, dev));
            prev = c;
        }
        WeightNet {
            rest,
            guide_wide: ConvIn::new(3, gc, 5, 1, dev),
            guide_skip: ConvIn::new(3, gc, 1, 1, dev),
            up,
            skip,
            slope: self.slope,
            share_bias: self.learned_share.map(|p| {
                assert!(p > 0.0 && p < 1.0, "a learned share's prior is in (0, 1)");
                (p / (1.0 - p)).ln()
            }),
        }
    }
}

impl<B: Backend> WeightNet<B> {
    /// The rest-only features of s̄ `[b, 3, u, v, w]`.
    pub fn rest_features(&self, rest: Tensor<B, 5>) -> RestFeatures<B> {
        let mut levels = vec![rest];
        for c in &self.rest {
            let x = levels.last().expect("non-empty").clone();
            levels.push(leaky_relu(c.forward(x), self.slope));
        }
        let coarse = levels.pop().expect("L ≥ 1");
        // Decoder level ℓ = L−1..0 uses rest level ℓ.
        let skips = self
            .skip
            .iter()
            .zip(levels.into_iter().rev())
            .map(|(s, x)| s.forward(x))
            .collect();
        RestFeatures { coarse, skips }
    }

    /// ω `[b, 16, u, v, w]` from the rest features and the guides g `[b, 3, u/k, v/k, w]`.
    /// Rest features of batch 1 are shared by every guide frame of the batch.
    pub fn weights(&self, rest: &RestFeatures<B>, guides: Tensor<B, 5>) -> Tensor<B, 5> {
        self.predict(rest, guides).omega
    }

    /// ω and, with a learned share, λ_p (see [`Prediction`]), as [`Self::weights`].
    pub fn predict(&self, rest: &RestFeatures<B>, guides: Tensor<B, 5>) -> Prediction<B> {
        let b = guides.dims()[0];
        let expand = |t: &Tensor<B, 5>| {
            if t.dims()[0] == b {
                t.clone()
            } else {
                t.clone().repeat_dim(0, b)
            }
        };
        let g = leaky_relu(
            self.guide_wide.forward(guides.clone()) + self.guide_skip.forward(guides),
            self.slope,
        );
        let mut x = Tensor::cat(vec![g, expand(&rest.coarse)], 1);
        let last = self.up.len() - 1;
        for (i, (up, skip)) in self.up.iter().zip(&rest.skips).enumerate() {
            let y = up.forward(x) + expand(skip);
            if i == last {
                let omega = softmax(y.clone().narrow(1, 0, NEIGHBORS), 1);
                let share = self
                    .share_bias
                    .map(|bias| sigmoid(y.narrow(1, NEIGHBORS, 1).add_scalar(bias)));
                return Prediction { omega, share };
            }
            x = leaky_relu(y, self.slope);
        }
        unreachable!("L ≥ 1 decoder levels")
    }
}

/// Row (or column) of the guide lattice of side `m` that neighbour `d` (0–3) of grid cell row `a`
/// blends at guide stride `stride`: ⌊a/k⌋ − 1 + d, clamped into the lattice (000 Eq. 3's 4 × 4
/// neighbourhood).
#[inline]
pub fn neighbour(a: usize, d: usize, stride: usize, m: usize) -> usize {
    ((a / stride) as i64 - 1 + d as i64).clamp(0, m as i64 - 1) as usize
}

/// The 16 neighbourhood guides of every particle (000 Eq. 3): from guides `[b, m_u, m_v, w, 3]`
/// to `[b, u, v, w, 16, 3]` with u = m_u·k, v = m_v·k, neighbour c = 4·di + dj at guide
/// (⌊a/k⌋ − 1 + di, ⌊b/k⌋ − 1 + dj), clamped into the lattice.
pub fn neighbourhood<B: Backend>(guides: Tensor<B, 5>, stride: usize) -> Tensor<B, 6> {
    let [_, mu, mv, _, _] = guides.dims();
    let dev = guides.device();
    let index = |m: usize, d: usize| -> Tensor<B, 1, Int> {
        let v: Vec<i32> = (0..m * stride)
            .map(|a| neighbour(a, d, stride, m) as i32)
            .collect();
        Tensor::from_data(TensorData::new(v, [m * stride]), &dev)
    };
    let mut out = Vec::with_capacity(NEIGHBORS);
    for di in 0..4 {
        let rows = guides.clone().select(1, index(mu, di));
        for dj in 0..4 {
            out.push(rows.clone().select(2, index(mv, dj)));
        }
    }
    Tensor::stack(out, 4)
}

/// Eq. 3: s_p = Σ_q ω_pq g_q, ω `[b, 16, u, v, w]`, neighbourhood `[b, u, v, w, 16, 3]` →
/// `[b, u, v, w, 3]`.
pub fn interpolate<B: Backend>(weights: Tensor<B, 5>, hood: Tensor<B, 6>) -> Tensor<B, 5> {
    let w: Tensor<B, 6> = weights.permute([0, 2, 3, 4, 1]).unsqueeze_dim(5);
    (w * hood).sum_dim(4).squeeze_dim(4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::Flex;

    type B = Flex;

    #[test]
    fn shapes_and_convex_weights() {
        let dev = Default::default();
        for levels in [1usize, 2, 3] {
            let k = 1 << levels;
            let net = WeightNetConfig::new(levels).init::<B>(&dev);
            let (n, w) = (4 * k, 6);
            let rest = Tensor::<B, 5>::random([1, 3, n, n, w], burn::tensor::Distribution::Default, &dev);
            let g =
                Tensor::<B, 5>::random([2, 3, n / k, n / k, w], burn::tensor::Distribution::Default, &dev);
            let f = net.rest_features(rest);
            let om = net.weights(&f, g);
            assert_eq!(om.dims(), [2, NEIGHBORS, n, n, w]);
            let sums: Vec<f32> = om.clone().sum_dim(1).into_data().to_vec().unwrap();
            assert!(sums.iter().all(|s| (s - 1.0).abs() < 1e-5));
            let mins: Vec<f32> = om.min().into_data().to_vec().unwrap();
            assert!(mins[0] >= 0.0);
        }
    }

    /// A learned share adds one channel: ω still convex over the 16, λ_p in (0, 1), and the
    /// network without it is the same shape as 000's.
    #[test]
    fn a_learned_share_is_a_17th_channel_in_the_open_unit_interval() {
        let dev = Default::default();
        let (levels, w) = (2usize, 5);
        let n = 4 << levels;
        let rest = Tensor::<B, 5>::random([1, 3, n, n, w], burn::tensor::Distribution::Default, &dev);
        let g = Tensor::<B, 5>::random(
            [3, 3, n >> levels, n >> levels, w],
            burn::tensor::Distribution::Default,
            &dev,
        );
        let plain = WeightNetConfig::new(levels).init::<B>(&dev);
        let pr = plain.predict(&plain.rest_features(rest.clone()), g.clone());
        assert!(pr.share.is_none());
        for prior in [0.1, 0.5, 0.9] {
            let net = WeightNetConfig::new(levels)
                .with_learned_share(Some(prior))
                .init::<B>(&dev);
            let pr = net.predict(&net.rest_features(rest.clone()), g.clone());
            assert_eq!(pr.omega.dims(), [3, NEIGHBORS, n, n, w]);
            let sums: Vec<f32> = pr.omega.sum_dim(1).into_data().to_vec().unwrap();
            assert!(sums.iter().all(|s| (s - 1.0).abs() < 1e-5));
            let share = pr.share.expect("a learned share");
            assert_eq!(share.dims(), [3, 1, n, n, w]);
            let v: Vec<f32> = share.into_data().to_vec().unwrap();
            assert!(v.iter().all(|&l| l > 0.0 && l < 1.0));
            // The prior moves the shares' logits: their median follows it.
            let mut sorted = v.clone();
            sorted.sort_by(f32::total_cmp);
            let median = sorted[sorted.len() / 2] as f64;
            assert!((median - prior).abs() < 0.3, "prior {prior}: median {median}");
        }
    }

    #[test]
    fn neighbourhood_by_hand() {
        // 3 × 2 guides, stride 2, one particle: guide (i, j) holds (i, j, 0).
        let dev = Default::default();
        let (mu, mv) = (3usize, 2usize);
        let mut v = Vec::new();
        for i in 0..mu {
            for j in 0..mv {
                v.extend([i as f32, j as f32, 0.0]);
            }
        }
        let g = Tensor::<B, 5>::from_data(TensorData::new(v, [1, mu, mv, 1, 3]), &dev);
        let h = neighbourhood(g, 2);
        assert_eq!(h.dims(), [1, 6, 4, 1, 16, 3]);
        let d: Vec<f32> = h.into_data().to_vec().unwrap();
        let at = |a: usize, b: usize, c: usize| {
            let base = ((a * 4 + b) * 16 + c) * 3;
            (d[base], d[base + 1])
        };
        // Strand (3, 1) is in guide cell (1, 0): neighbours (0..=3) − 1 clamped to the lattice.
        for di in 0..4usize {
            for dj in 0..4usize {
                let want = (
                    (1 + di as i64 - 1).clamp(0, 2) as f32,
                    (dj as i64 - 1).clamp(0, 1) as f32,
                );
                assert_eq!(at(3, 1, 4 * di + dj), want, "di {di} dj {dj}");
            }
        }
        // A guide strand (2, 0) = guide (1, 0) sees itself at (di, dj) = (1, 1).
        assert_eq!(at(2, 0, 5), (1.0, 0.0));
    }

    #[test]
    fn one_hot_weights_copy_a_guide_and_uniform_weights_average() {
        let dev = Default::default();
        let g = Tensor::<B, 5>::random([1, 2, 2, 3, 3], burn::tensor::Distribution::Default, &dev);
        let h = neighbourhood(g.clone(), 2);
        // One-hot on channel 5 (the cell's own guide at di = dj = 1).
        let mut w = vec![0f32; 16 * 4 * 4 * 3];
        for p in 0..(4 * 4 * 3) {
            w[5 * 48 + p] = 1.0;
        }
        let om = Tensor::<B, 5>::from_data(TensorData::new(w, [1, 16, 4, 4, 3]), &dev);
        let s: Vec<f32> = interpolate(om, h.clone()).into_data().to_vec().unwrap();
        let gv: Vec<f32> = g.into_data().to_vec().unwrap();
        for a in 0..4 {
            for b in 0..4 {
                for w in 0..3 {
                    for x in 0..3 {
                        let got = s[(((a * 4 + b) * 3) + w) * 3 + x];
                        let want = gv[((((a / 2) * 2 + b / 2) * 3) + w) * 3 + x];
                        assert_eq!(got, want);
                    }
                }
            }
        }
        // Uniform weights give the neighbourhood mean.
        let om = Tensor::<B, 5>::full([1, 16, 4, 4, 3], 1.0 / 16.0, &dev);
        let s = interpolate(om, h.clone());
        let mean = h.mean_dim(4).squeeze_dim::<5>(4);
        let diff: Vec<f32> = (s - mean).abs().max().into_data().to_vec().unwrap();
        assert!(diff[0] < 1e-6);
    }
}
