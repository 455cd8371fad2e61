//! The drape training checked: the decoder's output keeps lengths and roots, the loss lowers
//! the energy, a checkpoint resumes to the uninterrupted result.

use super::*;
use crate::collide::{BodyParams, HeadShape, body};
use crate::groom::Transform;
use crate::motion::HeadTrack;
use crate::motion::Pose;
use crate::neural::drape::energy::read_positions;
use crate::neural::drape::model::DrapeNetConfig;
use crate::neural::drape::network::physics_loss;
use crate::neural::drape::solve::{LbfgsOptions, lbfgs};
use crate::neural::drape::{DrapeGroom, DrapeMaterial, Posed};
use burn::backend::{Autodiff, Flex};
use glam::Vec3;

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
    let cfg = DrapeNetConfig::new(8, 8);
    let mut decoder = seeded_init(7, 0, &dev, || cfg.init_deform::<B>(&dev));
    let latent = Tensor::<B, 2>::zeros([1, 16], &dev);
    let mut optim = AdamConfig::new()
        .with_grad_clipping(Some(GradientClippingConfig::Norm(1.0)))
        .init::<B, DeformDecoder<B>>();
    let (x0, t0) = physics_loss(&decoder, latent.clone(), [0.0; 6], &groom.cells, &fixed, cp, &m);
    let start = t0.values().total;
    // Zero-initialized output: the untrained drape is the posed groom.
    assert!(x0.iter().zip(&posed.x).all(|(a, b)| a.distance(*b) < 1e-5));
    let mut last = start;
    // 400 clipped Adam steps at 1e-3: larger steps spike on the cubic penalties.
    for _ in 0..400 {
        let (_, t) = physics_loss(&decoder, latent.clone(), [0.0; 6], &groom.cells, &fixed, cp, &m);
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

/// The direction output: no change gives the posed groom back; any change keeps every
/// edge at its rest length and the roots where they are.
#[test]
fn direction_changes_keep_lengths_and_roots() {
    let scene = crate::scene::load_groom("curly", &Transform::default(), Some(40)).unwrap();
    let groom = DrapeGroom::new(&scene.groom, 8, 7).unwrap();
    let posed = Posed::new(&groom.rest, 7, &Pose::IDENTITY, 0.5);
    let dev = Default::default();
    let fixed = Fixed::<Flex>::new(&posed, &dev);
    let s = posed.strands;
    let same = read_positions(&fixed.positions_along(Tensor::zeros([s, 7, 3], &dev)));
    for (a, b) in same.iter().zip(&posed.x) {
        assert!(a.distance(*b) < 1e-4, "{a} vs {b}");
    }
    let turn = Tensor::<Flex, 3>::random([s, 7, 3], burn::tensor::Distribution::Uniform(-0.8, 0.8), &dev);
    let x = read_positions(&fixed.positions_along(turn));
    let mut moved = 0.0f32;
    for (k, (strand, rest)) in x.chunks(7).zip(posed.x.chunks(7)).enumerate() {
        assert_eq!(strand[0], rest[0]);
        for i in 0..6 {
            let l = strand[i + 1].distance(strand[i]);
            let want = posed.rest_len[k * 6 + i];
            assert!((l - want).abs() < 1e-4 * want.max(1.0), "{l} vs {want}");
        }
        moved = moved.max(strand[6].distance(rest[6]));
    }
    assert!(moved > 0.5, "the changes move the tips ({moved} cm)");
}

#[test]
fn moving_a_posed_groom_equals_posing_it_there() {
    let scene = crate::scene::load_groom("curly", &Transform::default(), Some(60)).unwrap();
    let groom = DrapeGroom::new(&scene.groom, 8, 6).unwrap();
    let head = HeadRotation {
        yaw: 30.0,
        pitch: -10.0,
        roll: 5.0,
        ..Default::default()
    }
    .pose(Vec3::new(0.0, -8.0, 0.0));
    let a = Posed::new(&groom.rest, 6, &head, 0.5);
    let b = Posed::new(&groom.rest, 6, &Pose::IDENTITY, 0.5).moved(&head);
    for (p, q) in a.x.iter().zip(&b.x) {
        assert!(p.distance(*q) < 1e-5);
    }
    for (p, q) in a.dir.iter().zip(&b.dir) {
        assert!(p.distance(*q) < 1e-5);
    }
    let (ra, rb) = (a.rho_rest.iter().sum::<f32>(), b.rho_rest.iter().sum::<f32>());
    assert!((ra - rb).abs() < 1e-3 * ra.abs(), "{ra} vs {rb}");
}
