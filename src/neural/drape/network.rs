//! The trained drape network at work: the decoder's texture of a groom's latent code and a
//! condition (body shape and head rotation, 003 §3.4), read back as strand positions; the
//! physics loss of one drape; and the model file (`tress train drape`'s output) with the
//! drape it gives.

use std::path::Path;

use burn::prelude::*;
use glam::Vec3;

use super::config::{DrapeOutput, DrapeTrainConfig};
use super::energy::{DrapeMaterial, Fixed, Terms, energy_here, read_positions};
use super::model::{DeformDecoder, GroomEncoder, UNIT_CM, condition, texture_strands};
use super::{DrapeSubject, HeadRotation};
use crate::collide::Colliders;
use crate::error::{Error, Result};
use crate::motion::Pose;
use crate::neural::file::{NeuralFile, module_from_bytes, module_to_bytes};

/// The decoder's displacement textures (in [`UNIT_CM`]) for rows of `[latent, condition]`
/// ([`condition`]: the body's shape and the head's rotation).
pub fn decode<B: Backend>(
    decoder: &DeformDecoder<B>,
    latents: &[Tensor<B, 2>],
    conditions: &[[f32; 6]],
) -> Tensor<B, 4> {
    let dev = latents[0].device();
    let c: Vec<f32> = conditions.iter().flatten().copied().collect();
    let c = Tensor::<B, 2>::from_data(TensorData::new(c, [conditions.len(), 6]), &dev);
    decoder.forward(Tensor::cat(vec![Tensor::cat(latents.to_vec(), 0), c], 1))
}

/// The positions `[S, N, 3]` (world) of one groom's drape from one row `[1, 3N, T, T]` of the
/// decoder's texture: the occupied texels' strands, read as `output` says.
pub fn row_positions<B: Backend>(
    output: DrapeOutput,
    row: Tensor<B, 4>,
    cells: &[usize],
    fixed: &Fixed<B>,
) -> Tensor<B, 3> {
    strand_positions(
        output,
        texture_strands(row, cells, fixed.points).squeeze_dim::<3>(0),
        fixed,
    )
}

/// The positions `[S, N, 3]` (world) of the decoder's outputs `t` `[S, N, 3]` for the strands,
/// read as `output` says.
fn strand_positions<B: Backend>(output: DrapeOutput, t: Tensor<B, 3>, fixed: &Fixed<B>) -> Tensor<B, 3> {
    match output {
        DrapeOutput::Displacements => fixed.positions(t * UNIT_CM as f64),
        DrapeOutput::Directions => fixed.positions_along(t),
    }
}

/// World positions (`strands × points`) of one row `[1, 3N, T, T]` of the decoder's texture with
/// each strand's output scaled by its own factor (`scales`, one per strand of `cells`; all equal
/// is [`scaled_positions`]), read back to the CPU.
pub fn strand_scaled_positions<B: Backend>(
    output: DrapeOutput,
    row: &Tensor<B, 4>,
    cells: &[usize],
    fixed: &Fixed<B>,
    scales: &[f32],
) -> Vec<Vec3> {
    let t = texture_strands(row.clone(), cells, fixed.points).squeeze_dim::<3>(0);
    let s = Tensor::<B, 3>::from_data(
        TensorData::new(scales.to_vec(), [scales.len(), 1, 1]),
        &row.device(),
    );
    read_positions(&strand_positions(output, t * s, fixed))
}

/// World positions (`strands × points`) of one row `[1, 3N, T, T]` of the decoder's texture
/// scaled by `scale` (1: the network's drape, 0: the posed input), read back to the CPU.
pub fn scaled_positions<B: Backend>(
    output: DrapeOutput,
    row: &Tensor<B, 4>,
    cells: &[usize],
    fixed: &Fixed<B>,
    scale: f32,
) -> Vec<Vec3> {
    read_positions(&row_positions(output, row.clone() * scale, cells, fixed))
}

/// The decoder's drape of one groom (`latent` `[1, latent]`, its occupied texels `cells`) for a
/// [`condition`] (body shape and head rotation), as positions `[S, N, 3]` (world) and the
/// energy there.
#[allow(clippy::too_many_arguments)]
pub fn physics_loss<B: Backend>(
    decoder: &DeformDecoder<B>,
    latent: Tensor<B, 2>,
    condition: [f32; 6],
    cells: &[usize],
    fixed: &Fixed<B>,
    colliders: Option<(&Colliders, &[Pose])>,
    material: &DrapeMaterial,
) -> (Vec<Vec3>, Terms<B>) {
    let texture = decode(decoder, &[latent], &[condition]);
    let x = row_positions(DrapeOutput::Displacements, texture, cells, fixed);
    energy_here(x, fixed, colliders, material)
}

/// A trained drape network.
pub struct TrainedDrape<B: Backend> {
    pub encoder: GroomEncoder<B>,
    pub decoder: DeformDecoder<B>,
    /// Latent code of every training groom (config order, held-out ones left out).
    pub latents: Vec<(String, Vec<f32>)>,
    pub summary: serde_json::Value,
}

/// The frozen encoder's code of one groom `[1, latent]`.
pub fn latent_of<B: Backend>(
    encoder: &GroomEncoder<B>,
    subject: &DrapeSubject,
    dev: &B::Device,
) -> Tensor<B, 2> {
    let (v, shape) = subject.groom.rest_texture();
    encoder.forward(Tensor::from_data(TensorData::new(v, shape), dev))
}

/// What the model file's decoder takes (older files' decoders took no body shape).
const DECODER_INPUT: &str = "latent, body shape (3), head rotation vector (3)";

/// A trained drape network read from its model file.
pub struct DrapeModel<B: Backend> {
    pub config: DrapeTrainConfig,
    pub encoder: GroomEncoder<B>,
    pub decoder: DeformDecoder<B>,
    pub header: serde_json::Value,
}

impl<B: Backend> DrapeModel<B> {
    /// The model file (`.tnn`, kind `drape`) of a training.
    pub fn file(cfg: &DrapeTrainConfig, trained: &TrainedDrape<B>) -> NeuralFile {
        NeuralFile {
            header: serde_json::json!({
                "kind": "drape",
                "paper": "Stuyck et al. 2025 (003), groom encoder + deformation decoder",
                "decoder_input": DECODER_INPUT,
                "config": cfg,
                "latents": trained.latents.iter().map(|(n, v)| serde_json::json!({"name": n, "code": v})).collect::<Vec<_>>(),
                "training": trained.summary,
                "build": crate::build_id(),
            }),
            sections: vec![
                ("encoder".into(), module_to_bytes(&trained.encoder)),
                ("decoder".into(), module_to_bytes(&trained.decoder)),
            ],
        }
    }

    /// Whether the network was trained for a subject's pose (rotation and body shape).
    pub fn trained_for(&self, subject: &DrapeSubject, rotation: &HeadRotation) -> bool {
        self.config.trained_for(rotation, &subject.shape_in(rotation))
    }

    /// The decoder's texture `[1, 3N, T, T]` of the groom of `subject`, whose code is `latent`,
    /// for `rotation` (and the body shape it gives the subject): one decoder pass.
    pub fn texture(
        &self,
        latent: &Tensor<B, 2>,
        subject: &DrapeSubject,
        rotation: &HeadRotation,
    ) -> Tensor<B, 4> {
        decode(
            &self.decoder,
            std::slice::from_ref(latent),
            &[condition(&subject.shape_in(rotation), rotation)],
        )
    }

    /// World positions (`strands × points`) of the decoder's `texture` scaled by `scale` on the
    /// posed groom `fixed`: 1 is the network's drape, 0 the posed input.
    pub fn positions(
        &self,
        texture: &Tensor<B, 4>,
        subject: &DrapeSubject,
        fixed: &Fixed<B>,
        scale: f32,
    ) -> Vec<Vec3> {
        scaled_positions(
            self.config.net.output,
            texture,
            &subject.groom.cells,
            fixed,
            scale,
        )
    }

    /// As [`Self::positions`] with each strand's output scaled by its own factor.
    pub fn strand_positions(
        &self,
        texture: &Tensor<B, 4>,
        subject: &DrapeSubject,
        fixed: &Fixed<B>,
        scales: &[f32],
    ) -> Vec<Vec3> {
        strand_scaled_positions(
            self.config.net.output,
            texture,
            &subject.groom.cells,
            fixed,
            scales,
        )
    }

    pub fn read(path: &Path, dev: &B::Device) -> Result<DrapeModel<B>> {
        let f = NeuralFile::read(path)?;
        let bad = |m: &str| Error::Invalid(format!("{}: {m}", path.display()));
        if f.header["kind"] != "drape" {
            return Err(bad(&format!("not a drape model (kind {})", f.header["kind"])));
        }
        if f.header["decoder_input"] != DECODER_INPUT {
            return Err(bad(
                "made by an older tress, whose decoder takes no body shape: train it again with `tress train drape`",
            ));
        }
        let config: DrapeTrainConfig = serde_json::from_value(f.header["config"].clone())
            .map_err(|e| bad(&format!("bad config in the header: {e}")))?;
        config.validate().map_err(|e| bad(&e))?;
        let net = config.net();
        let section = |n: &str| f.section(n).ok_or_else(|| bad(&format!("no {n} weights")));
        let encoder = module_from_bytes(net.init_encoder::<B>(dev), section("encoder")?, dev, path)?;
        let decoder = module_from_bytes(net.init_deform::<B>(dev), section("decoder")?, dev, path)?;
        Ok(DrapeModel {
            config,
            encoder,
            decoder,
            header: f.header,
        })
    }
}
