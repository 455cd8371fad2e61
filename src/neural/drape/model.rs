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
//! - With `unet` (tress's variant of 003 §3.4's conditioning, for grooms outside the training
//!   set), the decoder also reads the **posed groom's own texture** ([`strand_texture`]: every
//!   texel's strand as the head's pose holds it, root-relative, world axes, so each strand's
//!   slope against gravity is in its input): three convolutions take it down to the code's
//!   T/8 grid, and each up-sampling step and a last full-resolution 3 × 3 convolution read the
//!   level of the same size (a U-Net's skip connections). A texel's output then follows its own
//!   strand's shape, not only the 16-value code of the groom as a whole.

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
    /// The deformation decoder also reads the posed groom's texture (skip connections).
    #[config(default = false)]
    pub unet: bool,
}

impl DrapeNetConfig {
    fn cells(&self) -> usize {
        (self.texture / 8) * (self.texture / 8)
    }

    pub fn init_encoder<B: Backend>(&self, dev: &B::Device) -> GroomEncoder<B> {
        GroomEncoder {
            convs: vec![
                down(3 * self.points + 1, 64, dev),
                down(64, 128, dev),
                down(128, 128, dev),
            ],
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
        let groom = 3 * self.points + 1;
        // The skip levels' widths (full, T/2, T/4, T/8); none without `unet`.
        let skip = match self.unet {
            true => [groom, 64, 128, 128],
            false => [0; 4],
        };
        DeformDecoder {
            first: LinearConfig::new(self.latent + self.shape + self.pose, 256).init(dev),
            second: LinearConfig::new(256, 256 * self.cells()).init(dev),
            ups: vec![
                up(256 + skip[3], 128, dev),
                up(128 + skip[2], 96, dev),
                up(96 + skip[1], 96, dev),
            ],
            skips: self.unet.then(|| Skips {
                down: vec![down(groom, 64, dev), down(64, 128, dev), down(128, 128, dev)],
                mix: conv3(96 + skip[0], 96, dev),
            }),
            out: Conv2dConfig::new([96, 3 * self.points], [3, 3])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .with_initializer(Initializer::Zeros)
                .init(dev),
            side: self.texture / 8,
        }
    }
}

/// A 4 × 4 convolution of stride 2: half the texture's side.
fn down<B: Backend>(ci: usize, co: usize, dev: &B::Device) -> Conv2d<B> {
    Conv2dConfig::new([ci, co], [4, 4])
        .with_stride([2, 2])
        .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
        .init(dev)
}

/// A 3 × 3 convolution keeping the texture's side.
fn conv3<B: Backend>(ci: usize, co: usize, dev: &B::Device) -> Conv2d<B> {
    Conv2dConfig::new([ci, co], [3, 3])
        .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
        .init(dev)
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

/// `[latent, shape, pose]` `[B, latent + 6]` (and, for a U-Net, the posed grooms' textures
/// `[B, 3N + 1, T, T]`) → output texture `[B, 3N, T, T]` (network units).
#[derive(Module, Debug)]
pub struct DeformDecoder<B: Backend> {
    first: Linear<B>,
    second: Linear<B>,
    ups: Vec<ConvTranspose2d<B>>,
    /// A U-Net's layers (none for 003's decoder, whose model files from before the U-Net
    /// load as they were).
    skips: Option<Skips<B>>,
    out: Conv2d<B>,
    side: usize,
}

/// The U-Net's own layers of a [`DeformDecoder`].
#[derive(Module, Debug)]
pub struct Skips<B: Backend> {
    /// The posed texture's way down (T/2, T/4, T/8).
    down: Vec<Conv2d<B>>,
    /// Full resolution: the last up-sampling's features beside the posed texture.
    mix: Conv2d<B>,
}

impl<B: Backend> DeformDecoder<B> {
    /// The texture's side T.
    pub fn texture(&self) -> usize {
        8 * self.side
    }

    /// Whether [`DeformDecoder::forward`] needs the posed grooms' textures.
    pub fn reads_groom(&self) -> bool {
        self.skips.is_some()
    }

    /// The output texture of `input` rows; `groom` is the rows' posed textures
    /// ([`strand_texture`]), read only by a U-Net (which needs them).
    pub fn forward(&self, input: Tensor<B, 2>, groom: Option<Tensor<B, 4>>) -> Tensor<B, 4> {
        let b = input.dims()[0];
        let h = leaky_relu(self.first.forward(input), SLOPE);
        let mut h = leaky_relu(self.second.forward(h), SLOPE).reshape([b, 256, self.side, self.side]);
        // The skip levels, finest first.
        let mut levels = Vec::new();
        if let Some(skips) = &self.skips {
            let mut g = groom.expect("a U-Net decoder reads the posed groom's texture");
            for d in &skips.down {
                levels.push(g.clone());
                g = leaky_relu(d.forward(g), SLOPE);
            }
            h = Tensor::cat(vec![h, g], 1);
        }
        for (k, u) in self.ups.iter().enumerate() {
            h = leaky_relu(u.forward(h), SLOPE);
            // After each up-sampling but the last, the level of its size (T/4, then T/2); the
            // full-resolution one goes to `mix`.
            if !levels.is_empty() && k + 1 < self.ups.len() {
                h = Tensor::cat(vec![h, levels[levels.len() - 1 - k].clone()], 1);
            }
        }
        if let Some(skips) = &self.skips {
            h = leaky_relu(
                skips.mix.forward(Tensor::cat(vec![h, levels[0].clone()], 1)),
                SLOPE,
            );
        }
        self.out.forward(h)
    }
}

/// A groom's strands on its scalp texture (`[3N + 1]` channels of a `T × T` texture; the
/// autoencoder reads the rest groom so, [`super::DrapeGroom::rest_texture`], and a U-Net
/// decoder the posed one): channel `3k + a` is vertex k's axis a relative to the root, in the
/// axes of `x` (the head's frame at rest, world axes posed; over [`UNIT_CM`]), the last channel
/// 1 on occupied texels. `x` is the texture's strands (`cells × points`), `cells` their texels.
pub fn strand_texture(x: &[glam::Vec3], cells: &[usize], points: usize, texture: usize) -> Vec<f32> {
    let plane = texture * texture;
    let mut out = vec![0.0f32; (3 * points + 1) * plane];
    for (k, &c) in cells.iter().enumerate() {
        let strand = &x[k * points..(k + 1) * points];
        for (i, p) in strand.iter().enumerate() {
            let r = (*p - strand[0]) / UNIT_CM;
            for a in 0..3 {
                out[(3 * i + a) * plane + c] = r[a];
            }
        }
        out[3 * points * plane + c] = 1.0;
    }
    out
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
        let input = Tensor::cat(vec![z, Tensor::zeros([2, 6], &dev)], 1);
        let d = def.forward(input.clone(), None);
        assert_eq!(d.dims(), [2, 15, 16, 16]);
        // An untrained deformation decoder moves nothing (its last layer starts at zero).
        let m: f32 = d.abs().max().into_scalar();
        assert_eq!(m, 0.0);
        // The U-Net reads the posed texture at every level and returns the same texture.
        let unet = cfg.clone().with_unet(true).init_deform::<Flex>(&dev);
        assert!(unet.reads_groom() && !def.reads_groom());
        let u = unet.forward(input, Some(Tensor::ones([2, 16, 16, 16], &dev)));
        assert_eq!(u.dims(), [2, 15, 16, 16]);
        let m: f32 = u.abs().max().into_scalar();
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
