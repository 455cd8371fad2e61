//! The networks of the neural drape (003 §3.2, §3.4), on a T × T scalp texture (T a multiple of
//! 8) of strands of N vertices, channels `3k + a` for vertex k, axis a:
//!
//! - [`GroomEncoder`] (003 §3.2): the rest texture (root-relative positions over
//!   [`UNIT_CM`], and the occupancy mask as one more channel) → a 16-d latent code. Three 2-D
//!   convolutions (kernel 4, stride 2) with LeakyReLU, then a linear layer. 003 gives "2D
//!   convolutional down and up sampling layers" and the latent size; the widths are tress's.
//! - [`GroomDecoder`]: the latent code back to the rest texture, for training the encoder (003
//!   discards it afterwards).
//! - [`DeformDecoder`] (003 §3.4): `[latent, shape, pose]` → the displacement texture added to
//!   the rigidly posed groom (`x = x_posed + x_deformation`). Two linear layers, three
//!   transposed convolutions doubling the texture, a last 3 × 3 convolution initialized to
//!   zero, so an untrained decoder returns the posed groom. 003's input is the body's shape and
//!   full skeleton pose (107 values); tress's ([`condition`]) is its body's shape (3 values,
//!   [`BodyShape`]) and the head's rotation vector (3 values).

use burn::nn::conv::{Conv2d, Conv2dConfig, ConvTranspose2d, ConvTranspose2dConfig};
use burn::nn::{Initializer, Linear, LinearConfig, PaddingConfig2d};
use burn::prelude::*;
use burn::tensor::activation::leaky_relu;

use super::HeadRotation;
use crate::collide::BodyShape;

/// Network units: positions over this many cm.
pub const UNIT_CM: f32 = 10.0;

const SLOPE: f64 = 0.2;

/// The shape inputs are the body's [`BodyShape`] over these many cm (shoulder width, shoulder
/// height, neck radius): about ±1 over the training ranges.
pub const SHAPE_UNITS_CM: [f32; 3] = [10.0, 5.0, 2.0];

/// The deformation decoder's input after the groom's code: the body's shape, then the head's
/// rotation vector (radians).
pub fn condition(shape: &BodyShape, rotation: &HeadRotation) -> [f32; 6] {
    let s = shape.to_array();
    let r = rotation.rotation().to_scaled_axis().as_vec3();
    [
        s[0] / SHAPE_UNITS_CM[0],
        s[1] / SHAPE_UNITS_CM[1],
        s[2] / SHAPE_UNITS_CM[2],
        r.x,
        r.y,
        r.z,
    ]
}

#[derive(Config, Debug)]
pub struct DrapeNetConfig {
    /// Texture size T (a multiple of 8).
    pub texture: usize,
    /// Vertices per strand N.
    pub points: usize,
    /// Latent code size (003: 16).
    #[config(default = 16)]
    pub latent: usize,
    /// Body shape inputs ([`BodyShape`]).
    #[config(default = 3)]
    pub shape: usize,
    /// Pose inputs (head rotation vector).
    #[config(default = 3)]
    pub pose: usize,
}

impl DrapeNetConfig {
    fn cells(&self) -> usize {
        (self.texture / 8) * (self.texture / 8)
    }

    pub fn init_encoder<B: Backend>(&self, dev: &B::Device) -> GroomEncoder<B> {
        let down = |ci, co| {
            Conv2dConfig::new([ci, co], [4, 4])
                .with_stride([2, 2])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .init(dev)
        };
        GroomEncoder {
            convs: vec![down(3 * self.points + 1, 64), down(64, 128), down(128, 128)],
            out: LinearConfig::new(128 * self.cells(), self.latent).init(dev),
        }
    }

    pub fn init_groom_decoder<B: Backend>(&self, dev: &B::Device) -> GroomDecoder<B> {
        GroomDecoder {
            input: LinearConfig::new(self.latent, 128 * self.cells()).init(dev),
            ups: vec![up(128, 128, dev), up(128, 64, dev), up(64, 64, dev)],
            out: Conv2dConfig::new([64, 3 * self.points], [3, 3])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .init(dev),
            side: self.texture / 8,
        }
    }

    pub fn init_deform<B: Backend>(&self, dev: &B::Device) -> DeformDecoder<B> {
        DeformDecoder {
            first: LinearConfig::new(self.latent + self.shape + self.pose, 256).init(dev),
            second: LinearConfig::new(256, 256 * self.cells()).init(dev),
            ups: vec![up(256, 128, dev), up(128, 96, dev), up(96, 96, dev)],
            out: Conv2dConfig::new([96, 3 * self.points], [3, 3])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .with_initializer(Initializer::Zeros)
                .init(dev),
            side: self.texture / 8,
        }
    }
}

fn up<B: Backend>(ci: usize, co: usize, dev: &B::Device) -> ConvTranspose2d<B> {
    ConvTranspose2dConfig::new([ci, co], [4, 4])
        .with_stride([2, 2])
        .with_padding([1, 1])
        .init(dev)
}

/// Rest texture `[B, 3N + 1, T, T]` → latent `[B, latent]`.
#[derive(Module, Debug)]
pub struct GroomEncoder<B: Backend> {
    convs: Vec<Conv2d<B>>,
    out: Linear<B>,
}

impl<B: Backend> GroomEncoder<B> {
    pub fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 2> {
        let mut h = x;
        for c in &self.convs {
            h = leaky_relu(c.forward(h), SLOPE);
        }
        let [b, c, u, v] = h.dims();
        self.out.forward(h.reshape([b, c * u * v]))
    }
}

/// Latent `[B, latent]` → rest texture `[B, 3N, T, T]` (the autoencoder's training half).
#[derive(Module, Debug)]
pub struct GroomDecoder<B: Backend> {
    input: Linear<B>,
    ups: Vec<ConvTranspose2d<B>>,
    out: Conv2d<B>,
    side: usize,
}

impl<B: Backend> GroomDecoder<B> {
    pub fn forward(&self, z: Tensor<B, 2>) -> Tensor<B, 4> {
        let b = z.dims()[0];
        let mut h = leaky_relu(self.input.forward(z), SLOPE).reshape([b, 128, self.side, self.side]);
        for u in &self.ups {
            h = leaky_relu(u.forward(h), SLOPE);
        }
        self.out.forward(h)
    }
}

/// `[latent, shape, pose]` `[B, latent + 6]` → displacement texture `[B, 3N, T, T]` (network units).
#[derive(Module, Debug)]
pub struct DeformDecoder<B: Backend> {
    first: Linear<B>,
    second: Linear<B>,
    ups: Vec<ConvTranspose2d<B>>,
    out: Conv2d<B>,
    side: usize,
}

impl<B: Backend> DeformDecoder<B> {
    pub fn forward(&self, input: Tensor<B, 2>) -> Tensor<B, 4> {
        let b = input.dims()[0];
        let h = leaky_relu(self.first.forward(input), SLOPE);
        let mut h = leaky_relu(self.second.forward(h), SLOPE).reshape([b, 256, self.side, self.side]);
        for u in &self.ups {
            h = leaky_relu(u.forward(h), SLOPE);
        }
        self.out.forward(h)
    }
}

/// The strands of the occupied texels `cells` from a texture `[B, 3N, T, T]`: `[B, S, N, 3]`.
pub fn texture_strands<B: Backend>(t: Tensor<B, 4>, cells: &[usize], points: usize) -> Tensor<B, 4> {
    let [b, _, u, v] = t.dims();
    let dev = t.device();
    let idx: Vec<i64> = cells.iter().map(|&c| c as i64).collect();
    let idx = Tensor::<B, 1, Int>::from_data(TensorData::new(idx, [cells.len()]), &dev);
    t.reshape([b, points, 3, u * v])
        .permute([0, 3, 1, 2])
        .select(1, idx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::Flex;

    #[test]
    fn shapes_round_trip_and_texture_strands_follow_the_channel_layout() {
        let dev = Default::default();
        let cfg = DrapeNetConfig::new(16, 5);
        let enc = cfg.init_encoder::<Flex>(&dev);
        let dec = cfg.init_groom_decoder::<Flex>(&dev);
        let def = cfg.init_deform::<Flex>(&dev);
        let x = Tensor::<Flex, 4>::ones([2, 16, 16, 16], &dev);
        let z = enc.forward(x);
        assert_eq!(z.dims(), [2, 16]);
        assert_eq!(dec.forward(z.clone()).dims(), [2, 15, 16, 16]);
        let d = def.forward(Tensor::cat(vec![z, Tensor::zeros([2, 6], &dev)], 1));
        assert_eq!(d.dims(), [2, 15, 16, 16]);
        // An untrained deformation decoder moves nothing (its last layer starts at zero).
        let m: f32 = d.abs().max().into_scalar();
        assert_eq!(m, 0.0);
        // Channel 3k + a of texel (i, j) is vertex k, axis a of cell i·T + j.
        let vals: Vec<f32> = (0..15 * 16 * 16).map(|i| i as f32).collect();
        let t = Tensor::<Flex, 4>::from_data(TensorData::new(vals, [1, 15, 16, 16]), &dev);
        let s: Vec<f32> = texture_strands(t, &[0, 37], 5).into_data().to_vec().unwrap();
        let at = |cell: usize, k: usize, a: usize| ((3 * k + a) * 256 + cell) as f32;
        assert_eq!(s[0], at(0, 0, 0));
        assert_eq!(s[15 + 3 * 2 + 1], at(37, 2, 1));
    }
}
