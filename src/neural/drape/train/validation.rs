//! The drape decoder's validation (003 Table 1's figures): fixed random head rotations with
//! body shapes of the training ranges (never drawn in training: the ranges are continuous and
//! the validation generator is separate), for the training grooms and the held-out ones, scored
//! by energy and 003's metrics beside the rigidly posed grooms'.

use burn::prelude::*;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use super::super::config::{DrapeOutput, DrapeTrainConfig};
use super::super::energy::{DrapeMaterial, Fixed, energy_here};
use super::super::model::{DeformDecoder, condition};
use super::super::network::{decode, row_positions};
use super::super::{DrapeMetrics, DrapeSubject, HeadRotation};
use crate::collide::BodyShape;
use crate::error::Result;

/// A head rotation from (yaw, pitch, roll) degrees, with the body's `shape`.
pub(super) fn rotation(v: [f64; 3], shape: BodyShape) -> HeadRotation {
    HeadRotation {
        name: String::new(),
        yaw: v[0],
        pitch: v[1],
        roll: v[2],
        shape,
    }
}

/// Validation figures of one group of grooms (means over grooms and rotations).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupScore {
    /// Drape energy per strand of the rigidly posed groom and of the network's drape.
    pub energy_posed: f64,
    pub energy: f64,
    pub posed: DrapeMetrics,
    pub network: DrapeMetrics,
}

/// Validation on the training grooms and the held-out ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DrapeValidation {
    pub train: GroupScore,
    pub held_out: Option<GroupScore>,
}

/// Mean energy and figures of a group's drapes on fixed rotations and body shapes (each
/// rotation's `shape` is the body's shape, not an offset): the decoder's, or the rigidly posed
/// grooms' without one.
fn score<B: Backend>(
    output: DrapeOutput,
    decoder: Option<&DeformDecoder<B>>,
    subjects: &[(&DrapeSubject, Tensor<B, 2>)],
    rotations: &[HeadRotation],
    material: &DrapeMaterial,
) -> Result<(f64, DrapeMetrics)> {
    let mut energy = 0.0;
    let mut figures = Vec::new();
    for (subject, latent) in subjects {
        let dev = latent.device();
        let rotations: Vec<HeadRotation> = rotations.iter().map(|r| subject.in_shape(r, &r.shape)).collect();
        let conditions: Vec<[f32; 6]> = rotations
            .iter()
            .map(|r| condition(&subject.shape_in(r), r))
            .collect();
        let tex = decoder.map(|d| decode(d, &vec![latent.clone(); rotations.len()], &conditions));
        for (k, r) in rotations.iter().enumerate() {
            let pose = subject.pose(r)?;
            let (posed, cp) = (&pose.posed, pose.contact());
            let fixed = Fixed::<B>::new(posed, &dev);
            let x = match &tex {
                Some(t) => row_positions(output, t.clone().narrow(0, k, 1), &subject.groom.cells, &fixed),
                None => fixed.positions(Tensor::zeros([posed.strands, posed.points, 3], &dev)),
            };
            let (x, terms) = energy_here(x, &fixed, cp, material);
            energy += terms.total.into_scalar().elem::<f64>();
            figures.push(DrapeMetrics::of(&x, posed, cp));
        }
    }
    Ok((energy / figures.len().max(1) as f64, DrapeMetrics::mean(&figures)))
}

/// A group of grooms with their latent codes.
pub(super) type Group<'a, B> = Vec<(&'a DrapeSubject, Tensor<B, 2>)>;

/// What the decoder is validated on: fixed rotations (each with a body shape), the training
/// grooms and the held-out ones, and their rigidly posed figures (taken once).
pub(super) struct Validator<'a, B: Backend> {
    pub(super) output: DrapeOutput,
    pub(super) material: &'a DrapeMaterial,
    pub(super) rotations: Vec<HeadRotation>,
    pub(super) train: Group<'a, B>,
    pub(super) held: Group<'a, B>,
    pub(super) posed_train: (f64, DrapeMetrics),
    pub(super) posed_held: (f64, DrapeMetrics),
}

impl<'a, B: Backend> Validator<'a, B> {
    pub(super) fn new(
        cfg: &'a DrapeTrainConfig,
        subjects: &'a [DrapeSubject],
        latents: &[Tensor<B, 2>],
        (training, held): (&[usize], &[usize]),
    ) -> Result<Validator<'a, B>> {
        let t = &cfg.train;
        let mut vrng = rand::rngs::StdRng::seed_from_u64(t.seed ^ 0x005e_ed0f_da7a);
        // Each validation rotation carries the body's shape (drawn like the training ones).
        let rotations: Vec<HeadRotation> = (0..t.validation_poses.max(1))
            .map(|_| {
                let r = cfg.poses.draw(&mut vrng);
                rotation(r, cfg.shape.draw(&mut vrng))
            })
            .collect();
        let group = |ids: &[usize]| -> Group<'a, B> {
            ids.iter().map(|&i| (&subjects[i], latents[i].clone())).collect()
        };
        let (train, held) = (group(training), group(held));
        // The posed grooms' figures do not change during training: taken once.
        let output = cfg.net.output;
        let posed = |g: &Group<B>| score::<B>(output, None, g, &rotations, &cfg.material);
        let (posed_train, posed_held) = (posed(&train)?, posed(&held)?);
        Ok(Validator {
            output,
            material: &cfg.material,
            rotations,
            train,
            held,
            posed_train,
            posed_held,
        })
    }

    fn group_score(
        &self,
        d: &DeformDecoder<B>,
        g: &Group<B>,
        (energy_posed, posed): (f64, DrapeMetrics),
    ) -> Result<GroupScore> {
        let (energy, network) = score(self.output, Some(d), g, &self.rotations, self.material)?;
        Ok(GroupScore {
            energy_posed,
            energy,
            posed,
            network,
        })
    }

    pub(super) fn validate(&self, d: &DeformDecoder<B>) -> Result<DrapeValidation> {
        Ok(DrapeValidation {
            train: self.group_score(d, &self.train, self.posed_train)?,
            held_out: match self.held.is_empty() {
                true => None,
                false => Some(self.group_score(d, &self.held, self.posed_held)?),
            },
        })
    }
}
