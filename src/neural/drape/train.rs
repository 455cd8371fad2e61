//! The physics loss of the deformation decoder (003 §3.5: the drape energy of
//! [`super::energy`] at `x_posed + decoder output`, no simulation data). The training loop over
//! grooms and sampled poses (with Eq. 14's pose regularization) builds on [`physics_loss`].

use burn::prelude::*;
use glam::Vec3;

use super::energy::{DrapeMaterial, Fixed, Linearization, Terms, energy};
use super::model::{DeformDecoder, UNIT_CM, texture_strands};
use crate::collide::Colliders;
use crate::motion::Pose;

/// The decoder's drape of one groom (`latent` `[1, latent]`, its occupied texels `cells`) for a
/// head rotation vector `pose`, as positions `[S, N, 3]` (world) and the energy there.
#[allow(clippy::too_many_arguments)]
pub fn physics_loss<B: Backend>(
    decoder: &DeformDecoder<B>,
    latent: Tensor<B, 2>,
    pose: [f32; 3],
    cells: &[usize],
    fixed: &Fixed<B>,
    colliders: Option<(&Colliders, &[Pose])>,
    material: &DrapeMaterial,
) -> (Vec<Vec3>, Terms<B>) {
    let dev = latent.device();
    let p = Tensor::<B, 2>::from_data(TensorData::new(pose.to_vec(), [1, 3]), &dev);
    let texture = decoder.forward(Tensor::cat(vec![latent, p], 1));
    let d = texture_strands(texture, cells, fixed.points).squeeze_dim::<3>(0) * UNIT_CM as f64;
    let x = fixed.positions(d);
    let flat: Vec<f32> = x.clone().into_data().to_vec().expect("f32 positions");
    let at: Vec<Vec3> = flat
        .chunks_exact(3)
        .map(|c| Vec3::new(c[0], c[1], c[2]))
        .collect();
    let lin = Linearization::at(&at, fixed.points, colliders, material);
    let terms = energy(x, fixed, &lin, material);
    (at, terms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::{BodyParams, HeadShape, body};
    use crate::groom::Transform;
    use crate::motion::HeadTrack;
    use crate::neural::drape::model::DrapeNetConfig;
    use crate::neural::drape::solve::{LbfgsOptions, lbfgs};
    use crate::neural::drape::{DrapeGroom, Posed};
    use burn::backend::{Autodiff, Flex};
    use burn::grad_clipping::GradientClippingConfig;
    use burn::optim::{AdamConfig, GradientsParams, Optimizer};

    type B = Autodiff<Flex>;

    /// 003's training signal end to end: a decoder fitted to one groom and pose by the physics
    /// loss alone lowers the energy from the posed groom's towards the direct minimum.
    #[test]
    fn the_decoder_learns_a_drape_from_the_energy_alone() {
        let scene = crate::scene::load_groom("wavy", &Transform::default(), Some(150)).unwrap();
        let scalp = scene.procedural.as_ref().unwrap().scalp;
        let groom = DrapeGroom::new(&scene.groom, 8, 8).unwrap();
        let c = body::colliders(
            HeadShape::Procedural(scalp),
            &BodyParams::default(),
            HeadTrack::still(Pose::IDENTITY),
        );
        let poses = c.poses_at(0.0);
        let cp = Some((&c, poses.as_slice()));
        let m = DrapeMaterial::default();
        let posed = Posed::new(&groom.rest, 8, &Pose::IDENTITY, m.smoothing as f32);
        let dev = Default::default();
        let fixed = Fixed::<B>::new(&posed, &dev);
        B::seed(&dev, 7);
        let cfg = DrapeNetConfig::new(8, 8);
        let mut decoder = cfg.init_deform::<B>(&dev);
        let latent = Tensor::<B, 2>::zeros([1, 16], &dev);
        let mut optim = AdamConfig::new()
            .with_grad_clipping(Some(GradientClippingConfig::Norm(1.0)))
            .init::<B, DeformDecoder<B>>();
        let (x0, t0) = physics_loss(&decoder, latent.clone(), [0.0; 3], &groom.cells, &fixed, cp, &m);
        let start = t0.values().total;
        // Zero-initialized output: the untrained drape is the posed groom.
        assert!(x0.iter().zip(&posed.x).all(|(a, b)| a.distance(*b) < 1e-5));
        let mut last = start;
        // 400 clipped Adam steps at 1e-3: larger steps spike on the cubic penalties.
        for _ in 0..400 {
            let (_, t) = physics_loss(&decoder, latent.clone(), [0.0; 3], &groom.cells, &fixed, cp, &m);
            last = t.values().total;
            let grads = GradientsParams::from_grads(t.total.backward(), &decoder);
            decoder = optim.step(1e-3, decoder, grads);
        }
        let (_, best) = lbfgs::<B>(&posed, cp, &m, &LbfgsOptions::default(), &dev);
        let drop = start - best.energy.total;
        assert!(
            drop > 1.0,
            "the posed groom is not at the minimum: {start} vs {:?}",
            best.energy
        );
        assert!(
            start - last > 0.3 * drop,
            "decoder energy {last} from {start}; the direct minimum is {}",
            best.energy.total
        );
    }
}
