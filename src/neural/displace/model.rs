//! The fine-scale displacement generator F_β (000 Eq. 9, Fig. 8) and its discriminator D_γ
//! (000 §4.3.2), as the supplemental architecture table (000 supp. §6) gives them.
//!
//! Tensors are `[batch, channels, u, v, w]`; guides g are `[b, 3, u/k, v/k, w]` and s̄* is W_θ's
//! coarsest rest level (same u/k × v/k).
//!
//! F_β, for a guide stride k = 2^L:
//! - n_rf = IN(C(1,1,1)(s̄*)); in1 = concat(g, n_rf);
//! - n_res1 = LReLU(IN(C(5,1,c)(in1)) + IN(C(1,1,c)(g))) (paper c = 32);
//! - n_res2 = IN(T_C(5, k/2, c/2)(n_res1)); output Δs = IN(T_C(5, 2, 3)(n_res2)) at u × v
//!   (paper, k = 8: strides 4 then 2; k = 4: 2 and 2; k = 2: 1 and 2).
//!
//! The last instance norm's scale starts at 0.01 (burn starts it at 1, which would make the
//! untrained displacement as large as a whole strand: a unit is 10 cm); the paper does not say
//! how it starts.
//!
//! D_γ: C(4,2,d), C(4,2,2d), C(4,2,4d), C(4,1,8d), each IN + LReLU, then a fully connected layer
//! to one logit (paper d = 32). Kernels are 4 along u, v and w, strides along u and v only. The
//! fully connected layer reads the last layer's channels averaged over the crop: flattened, it
//! would hold ~20,000 inputs at tress's crop sizes, and Adam's first steps (each weight moves by
//! about the learning rate) threw its logit by tens, saturating both losses from the first step
//! (measured on the quickstart: generator loss 0.0000 at step 1). The paper does not give the
//! layer's input size.

use burn::module::Param;
use burn::nn::conv::{Conv3d, Conv3dConfig, ConvTranspose3d, ConvTranspose3dConfig};
use burn::nn::{InstanceNorm, InstanceNormConfig, Linear, LinearConfig, PaddingConfig3d};
use burn::prelude::*;
use burn::tensor::activation::leaky_relu;

use super::descriptor::CHANNELS;
use crate::neural::interp::model::ConvIn;

/// The generator's shape.
#[derive(Config, Debug)]
pub struct DisplaceNetConfig {
    /// Rest levels L of W_θ (guide stride 2^L).
    pub levels: usize,
    /// Channels of W_θ's s̄*.
    pub rest_channels: usize,
    /// Hidden channels c (paper 32).
    #[config(default = 32)]
    pub channels: usize,
    #[config(default = 0.2)]
    pub slope: f64,
}

/// A transposed convolution (kernel 5) scaling u and v by `stride` (w kept), then IN.
#[derive(Module, Debug)]
pub struct Up5<B: Backend> {
    conv: ConvTranspose3d<B>,
    norm: InstanceNorm<B>,
    stride: usize,
}

impl<B: Backend> Up5<B> {
    fn new(ci: usize, co: usize, stride: usize, dev: &B::Device) -> Self {
        // (n − 1)·s − 2p + 5 ≥ n·s for p = ⌊(5 − s)/2⌋; the surplus is cut (TF's "same").
        let p = (5 - stride) / 2;
        Up5 {
            conv: ConvTranspose3dConfig::new([ci, co], [5, 5, 5])
                .with_stride([stride, stride, 1])
                .with_padding([p, p, 2])
                .init(dev),
            norm: InstanceNormConfig::new(co).init(dev),
            stride,
        }
    }

    fn forward(&self, x: Tensor<B, 5>) -> Tensor<B, 5> {
        let [_, _, u, v, w] = x.dims();
        let y = self.conv.forward(x);
        let [b, c, _, _, _] = y.dims();
        let s = self.stride;
        self.norm.forward(y.slice([0..b, 0..c, 0..u * s, 0..v * s, 0..w]))
    }
}

/// F_β.
#[derive(Module, Debug)]
pub struct DisplaceNet<B: Backend> {
    rest: ConvIn<B>,
    wide: ConvIn<B>,
    skip: ConvIn<B>,
    up1: Up5<B>,
    up2: Up5<B>,
    slope: f64,
}

impl DisplaceNetConfig {
    pub fn init<B: Backend>(&self, dev: &B::Device) -> DisplaceNet<B> {
        assert!((1..=3).contains(&self.levels), "guide strides 2 to 8");
        let k = 1usize << self.levels;
        let c = self.channels.max(2);
        let mut up2 = Up5::new(c / 2, 3, 2, dev);
        if up2.norm.gamma.is_some() {
            up2.norm.gamma = Some(Param::from_tensor(Tensor::full([3], 0.01, dev)));
        }
        DisplaceNet {
            rest: ConvIn::new(self.rest_channels, 1, 1, 1, dev),
            wide: ConvIn::new(4, c, 5, 1, dev),
            skip: ConvIn::new(3, c, 1, 1, dev),
            up1: Up5::new(c, c / 2, (k / 2).max(1), dev),
            up2,
            slope: self.slope,
        }
    }
}

impl<B: Backend> DisplaceNet<B> {
    /// Δs `[b, 3, u, v, w]` from s̄* `[1 or b, ·, u/k, v/k, w]` and guides `[b, 3, u/k, v/k, w]`.
    pub fn forward(&self, coarse: Tensor<B, 5>, guides: Tensor<B, 5>) -> Tensor<B, 5> {
        let b = guides.dims()[0];
        let mut rf = self.rest.forward(coarse);
        if rf.dims()[0] != b {
            rf = rf.repeat_dim(0, b);
        }
        let in1 = Tensor::cat(vec![guides.clone(), rf], 1);
        let r1 = leaky_relu(self.wide.forward(in1) + self.skip.forward(guides), self.slope);
        self.up2.forward(self.up1.forward(r1))
    }
}

/// The discriminator's shape.
#[derive(Config, Debug)]
pub struct CriticConfig {
    /// Crop cells along u and v, and particles per strand, of the inputs it will see.
    pub size: usize,
    pub points: usize,
    /// First layer's channels d (paper 32), doubling at each layer.
    #[config(default = 32)]
    pub channels: usize,
    #[config(default = 0.2)]
    pub slope: f64,
}

/// A 4×4×4 convolution (padding 1) with its stride along u and v, then IN.
#[derive(Module, Debug)]
pub struct Down4<B: Backend> {
    conv: Conv3d<B>,
    norm: InstanceNorm<B>,
}

impl<B: Backend> Down4<B> {
    fn new(ci: usize, co: usize, stride: usize, dev: &B::Device) -> Self {
        Down4 {
            conv: Conv3dConfig::new([ci, co], [4, 4, 4])
                .with_stride([stride, stride, 1])
                .with_padding(PaddingConfig3d::Explicit(1, 1, 1))
                .init(dev),
            norm: InstanceNormConfig::new(co).init(dev),
        }
    }
}

/// D_γ.
#[derive(Module, Debug)]
pub struct Critic<B: Backend> {
    layers: Vec<Down4<B>>,
    fc: Linear<B>,
    slope: f64,
}

const STRIDES: [usize; 4] = [2, 2, 2, 1];

impl CriticConfig {
    pub fn init<B: Backend>(&self, dev: &B::Device) -> Critic<B> {
        assert!(
            self.size >= 16 && self.points >= 5,
            "the critic needs crops of 16+ cells and 5+ particles"
        );
        let d = self.channels.max(1);
        let mut ci = CHANNELS;
        let layers = STRIDES
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let co = d << i;
                let l = Down4::new(ci, co, s, dev);
                ci = co;
                l
            })
            .collect();
        Critic {
            layers,
            fc: LinearConfig::new(ci, 1).init(dev),
            slope: self.slope,
        }
    }
}

impl<B: Backend> Critic<B> {
    /// One logit per sample: `[b, 5, size, size, points]` → `[b]`.
    pub fn forward(&self, e: Tensor<B, 5>) -> Tensor<B, 1> {
        let mut x = e;
        for l in &self.layers {
            x = leaky_relu(l.norm.forward(l.conv.forward(x)), self.slope);
        }
        let [b, c, _, _, _] = x.dims();
        let pooled: Tensor<B, 2> = x.reshape([b as i32, c as i32, -1]).mean_dim(2).reshape([b, c]);
        self.fc.forward(pooled).reshape([b])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::Flex;
    use burn::tensor::Distribution;

    type B = Flex;

    #[test]
    fn generator_upsamples_guides_to_the_grid_for_every_stride() {
        let dev = Default::default();
        for levels in [1usize, 2, 3] {
            let k = 1 << levels;
            let rc = 4 << levels;
            let net = DisplaceNetConfig::new(levels, rc)
                .with_channels(8)
                .init::<B>(&dev);
            let m = 3;
            let coarse = Tensor::<B, 5>::random([1, rc, m, m, 7], Distribution::Default, &dev);
            let g = Tensor::<B, 5>::random([2, 3, m, m, 7], Distribution::Default, &dev);
            let d = net.forward(coarse, g);
            assert_eq!(d.dims(), [2, 3, m * k, m * k, 7]);
            // The untrained displacement is small (the last norm's scale starts at 0.01):
            // instance-normalized channels have unit spread, so ‖Δs‖ per component ≈ 0.01.
            let rms: f32 = d.powi_scalar(2).mean().sqrt().into_scalar();
            assert!(rms > 1e-3 && rms < 0.05, "rms {rms}");
        }
    }

    #[test]
    fn critic_gives_one_logit_per_sample() {
        let dev = Default::default();
        for (size, points) in [(28usize, 25usize), (16, 5), (60, 25)] {
            let c = CriticConfig::new(size, points).with_channels(4);
            let d = c.init::<B>(&dev);
            let e = Tensor::<B, 5>::random([3, CHANNELS, size, size, points], Distribution::Default, &dev);
            assert_eq!(d.forward(e).dims(), [3]);
        }
    }
}
