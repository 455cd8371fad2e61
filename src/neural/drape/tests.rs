use burn::backend::{Autodiff, Flex};
use glam::Vec3;

use super::energy::{DrapeMaterial, Posed};
use super::solve::{AdamOptions, LbfgsOptions, adam, lbfgs};
use super::*;
use crate::collide::{Colliders, Sphere};
use crate::motion::{HeadTrack, Pose};

type B = Autodiff<Flex>;

fn solve(posed: &Posed, c: Option<&Colliders>, m: &DrapeMaterial, iterations: usize) -> Vec<Vec3> {
    let poses = c.map(|c| c.poses_at(0.0));
    let cp = c.zip(poses.as_deref());
    let opts = AdamOptions {
        iterations,
        tolerance: 0.0,
        ..Default::default()
    };
    adam::<B>(posed, cp, m, &opts, &Default::default()).0
}

fn solve_lbfgs(posed: &Posed, c: Option<&Colliders>, m: &DrapeMaterial) -> Vec<Vec3> {
    let poses = c.map(|c| c.poses_at(0.0));
    let cp = c.zip(poses.as_deref());
    let (x, r) = lbfgs::<B>(posed, cp, m, &LbfgsOptions::default(), &Default::default());
    assert!(r.converged, "{r:?}");
    x
}

/// A strand of 12 vertices held horizontally at its root, soft enough to hang visibly. Its
/// edges stretch by at most weight × 11 / stretch = 0.1 %, so the inextensible analytic
/// angles hold within that; a stiffer stretch (1e5) puts the single-precision gradient's
/// noise (stretch × the positions' rounding, ~0.1) above the tip's bending forces, and L-BFGS
/// stalled 5 % off the tip's angle on one machine's SIMD while landing within 1 % on others.
fn horizontal_strand() -> (Posed, DrapeMaterial) {
    let rest: Vec<Vec3> = (0..12).map(|k| Vec3::new(0.0, 0.0, k as f32)).collect();
    let m = DrapeMaterial {
        cosserat: 20.0,
        stretch: 1.0e4,
        self_collision: 0.0,
        ..Default::default()
    };
    (Posed::new(&rest, 12, &Pose::IDENTITY, m.smoothing as f32), m)
}

/// The strand `x` hangs at the analytic angles within `relative` (+ 2 mrad): each edge's angle
/// below the horizontal balances the Cosserat anchor against the weight beyond it. With
/// inextensible edges `k sin φᵢ = w nᵢ cos φᵢ`, i.e. `tan φᵢ = w nᵢ / k` (nᵢ vertices beyond
/// edge i; each edge's energy ½k‖e/l − d‖² = 2k sin²(φ/2) has derivative k sin φ).
fn assert_hangs_analytically(x: &[Vec3], m: &DrapeMaterial, relative: f64) {
    let n = x.len();
    for i in 0..n - 1 {
        let e = x[i + 1] - x[i];
        let phi = (-e.y).atan2(e.z);
        let want = ((n - 1 - i) as f64 * m.weight / m.cosserat).atan();
        assert!(
            (phi as f64 - want).abs() < relative * want + 2e-3,
            "edge {i}: {phi:.4} rad, analytic {want:.4}"
        );
        assert!(e.x.abs() < 1e-4, "the strand stays in its plane");
    }
}

#[test]
fn a_horizontal_strand_hangs_at_the_analytic_angles() {
    let (posed, m) = horizontal_strand();
    assert_hangs_analytically(&solve_lbfgs(&posed, None, &m), &m, 0.01);
}

/// XPBD (each term a compliant constraint with the same energy) reaches the same angles.
#[test]
fn xpbd_hangs_the_strand_at_the_same_angles() {
    let (posed, m) = horizontal_strand();
    let (x, _) = super::xpbd::xpbd(&posed, None, &m, &Default::default());
    assert_hangs_analytically(&x, &m, 0.02);
}

fn ball() -> Colliders {
    Colliders::on_head(
        vec![(
            "ball",
            Box::new(Sphere {
                center: Vec3::new(0.0, 0.0, 0.0),
                radius: 8.0,
            }),
        )],
        HeadTrack::still(Pose::IDENTITY),
    )
}

/// A fan of strands rooted on the top half of a ball, pointing sideways and slightly into it.
fn fan(mirror: bool) -> Vec<Vec3> {
    let mut rest = Vec::new();
    for s in 0..6 {
        let a = 0.3 + 0.25 * s as f32;
        let root = Vec3::new(8.0 * a.cos(), 8.0 * a.sin(), 0.7 * s as f32 - 1.5);
        let out = Vec3::new(a.cos(), 0.2, 0.1 * s as f32).normalize();
        for k in 0..10 {
            let mut p = root + out * (0.9 * k as f32);
            if mirror {
                p.x = -p.x;
            }
            rest.push(p);
        }
    }
    rest
}

/// 003's test of symmetry: a groom mirrored left/right drapes mirrored (on a symmetric body).
#[test]
fn a_mirrored_groom_drapes_mirrored() {
    let m = DrapeMaterial {
        cosserat: 20.0,
        smoothing: 0.5,
        ..Default::default()
    };
    let c = ball();
    let left = Posed::new(&fan(false), 10, &Pose::IDENTITY, m.smoothing as f32);
    let right = Posed::new(&fan(true), 10, &Pose::IDENTITY, m.smoothing as f32);
    let a = solve(&left, Some(&c), &m, 300);
    let b = solve(&right, Some(&c), &m, 300);
    let moved = a
        .iter()
        .zip(&left.x)
        .map(|(p, q)| p.distance(*q))
        .fold(0.0f32, f32::max);
    assert!(moved > 0.5, "the fan drapes ({moved} cm)");
    for (p, q) in a.iter().zip(&b) {
        let mirrored = Vec3::new(-q.x, q.y, q.z);
        assert!(p.distance(mirrored) < 1e-3, "{p} vs mirrored {mirrored}");
    }
}

/// Strands started inside the body are pushed out by the body term (Eq. 10) without
/// stretching, and Adam (the baseline with the paper's slow convergence) gets most of the way.
#[test]
fn the_drape_leaves_the_body_and_sags() {
    let m = DrapeMaterial::default();
    let c = ball();
    // Roots on the ball, strands first sloping into it.
    let mut rest = Vec::new();
    for s in 0..4 {
        let a = 0.5 + 0.3 * s as f32;
        let root = Vec3::new(8.0 * a.cos(), 8.0 * a.sin(), 0.0);
        let dir = Vec3::new(-0.3, -1.0, 0.2 * s as f32).normalize();
        for k in 0..12 {
            rest.push(root + dir * (0.8 * k as f32));
        }
    }
    let posed = Posed::new(&rest, 12, &Pose::IDENTITY, m.smoothing as f32);
    let poses = c.poses_at(0.0);
    let before = DrapeMetrics::of(&posed.x, &posed, Some((&c, &poses)));
    assert!(before.intersection_fraction > 0.2, "{before:?}");
    let x = solve_lbfgs(&posed, Some(&c), &m);
    let after = DrapeMetrics::of(&x, &posed, Some((&c, &poses)));
    assert_eq!(after.intersection_fraction, 0.0, "{after:?}");
    assert!(after.length_error_mean < 0.01, "{after:?}");
    let opts = AdamOptions {
        iterations: 1500,
        ..Default::default()
    };
    let (_, report) = adam::<B>(&posed, Some((&c, &poses)), &m, &opts, &Default::default());
    let f = super::energy::Fixed::<Flex>::new(&posed, &Default::default());
    let lin = super::energy::Linearization::at(&posed.x, 12, Some((&c, &poses)), &m);
    let start = super::energy::energy(
        f.positions(burn::prelude::Tensor::zeros([4, 12, 3], &Default::default())),
        &f,
        &lin,
        &m,
    )
    .values();
    assert!(
        report.energy.total < 1e-3 * start.total,
        "Adam: {:?} from {start:?}",
        report.energy
    );
}

#[test]
fn pose_presets_load_and_bad_poses_name_their_key() {
    let set = PoseSet::load("turns").unwrap();
    assert!(set.pose.len() >= 6);
    assert_eq!(PoseSet::load("rest").unwrap().pose.len(), 1);
    let dir = std::env::temp_dir().join(format!("tress-poses-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[[pose]]\nyaw = 200.0\n").unwrap();
    let e = PoseSet::load(bad.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("yaw") && e.contains("bad.toml"), "{e}");
    std::fs::write(&bad, "[[pose]]\nyawn = 2.0\n").unwrap();
    let e = PoseSet::load(bad.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("yawn"), "{e}");
    assert_eq!(PoseSet::load("bodies").unwrap().pose[1].shape.shoulder_width, 8.0);
    std::fs::write(&bad, "[[pose]]\nshape = { shoulder_widht = 2.0 }\n").unwrap();
    let e = PoseSet::load(bad.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("shoulder_widht"), "{e}");
    std::fs::write(
        &bad,
        "[[pose]]\nname = \"giant\"\nshape = { neck_radius = 80.0 }\n",
    )
    .unwrap();
    let e = PoseSet::load(bad.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("shape.neck_radius") && e.contains("giant"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A yaw turns the face (+Z) toward the head's left (+X); pitch nods it down.
#[test]
fn head_rotations_follow_their_names() {
    let face = glam::DVec3::Z;
    let left = HeadRotation {
        yaw: 90.0,
        ..Default::default()
    };
    assert!((left.rotation() * face - glam::DVec3::X).length() < 1e-9);
    let down = HeadRotation {
        pitch: 90.0,
        ..Default::default()
    };
    assert!((down.rotation() * face + glam::DVec3::Y).length() < 1e-9);
    let tilt = HeadRotation {
        roll: 90.0,
        ..Default::default()
    };
    // The top of the head goes to the left (+X).
    assert!((tilt.rotation() * glam::DVec3::Y - glam::DVec3::X).length() < 1e-9);
    // About the pivot: the pivot stays.
    let pivot = Vec3::new(0.0, -5.0, -1.0);
    let p = left.pose(pivot).apply_f32(pivot);
    assert!(p.distance(pivot) < 1e-5);
}

/// A groom mirrored left ↔ right, draped with the mirrored head rotation (yaw and roll negated),
/// drapes into the mirror image of the original's drape: the energy, the procedural head and
/// body, and the solver have no handedness.
#[test]
fn a_mirrored_groom_in_the_mirrored_pose_drapes_mirrored_on_the_procedural_body() {
    use crate::collide::{BodyParams, HeadShape, body};
    let scene = crate::scene::load_groom("wavy", &crate::groom::Transform::default(), Some(80)).unwrap();
    let scalp = scene.procedural.as_ref().unwrap().scalp;
    let m = DrapeMaterial::default();
    let body = BodyParams::default();
    let head = HeadShape::Procedural(scalp);
    let pivot = pose::neck_pivot(&head, &body);
    let c = body::colliders(head, &body, HeadTrack::still(Pose::IDENTITY));
    // Strands resampled to 10 vertices, and their mirror images.
    let rest: Vec<Vec3> = crate::groom::resample::resample(&scene.groom, 10)
        .points()
        .to_vec();
    let mirror = |v: &[Vec3]| -> Vec<Vec3> { v.iter().map(|p| Vec3::new(-p.x, p.y, p.z)).collect() };
    let rot = HeadRotation {
        name: "turn".into(),
        yaw: 25.0,
        pitch: 10.0,
        roll: 8.0,
        ..Default::default()
    };
    let mirrored_rot = HeadRotation {
        yaw: -25.0,
        roll: -8.0,
        ..rot.clone()
    };
    let drape = |rest: &[Vec3], r: &HeadRotation| {
        let head = r.pose(pivot);
        let posed = Posed::new(rest, 10, &head, m.smoothing as f32);
        let poses = c.poses_with_head(head);
        let (x, report) = lbfgs::<B>(
            &posed,
            Some((&c, poses.as_slice())),
            &m,
            &LbfgsOptions::default(),
            &Default::default(),
        );
        assert!(report.converged, "{report:?}");
        (posed.x, x)
    };
    let (posed, x) = drape(&rest, &rot);
    let (posed_m, xm) = drape(&mirror(&rest), &mirrored_rot);
    // The posed grooms are mirror images (the rotations are).
    for (a, b) in mirror(&posed).iter().zip(&posed_m) {
        assert!(a.distance(*b) < 1e-4, "{a} vs {b}");
    }
    let moved = x
        .iter()
        .zip(&posed)
        .map(|(a, b)| a.distance(*b))
        .fold(0.0f32, f32::max);
    assert!(moved > 1.0, "the drape moves the groom ({moved} cm)");
    let off = mirror(&x)
        .iter()
        .zip(&xm)
        .map(|(a, b)| a.distance(*b))
        .fold(0.0f32, f32::max);
    assert!(
        off < 0.01 * moved,
        "mirrored drape {off} cm off the original's mirror image (vertices moved up to {moved} cm)"
    );
}

/// The body's shape reaches the energy: with the shoulders raised 4 cm (a pose's shape
/// offsets) the rigidly posed wavy groom enters them, and the drape rests on them, higher than
/// on the default body (a raised support holds hanging hair higher), and outside them. A head
/// without shoulders cannot take shoulder offsets.
#[test]
fn raised_shoulders_hold_the_draped_hair_higher() {
    use crate::collide::BodyShape;
    let entry = super::config::GroomEntry {
        name: "wavy".into(),
        groom: "wavy".into(),
        strands: Some(200),
        ..Default::default()
    };
    let m = DrapeMaterial::default();
    let ds = crate::neural::drape::scene::drape_scene(&entry, &Default::default(), 0.2, 12, 10, &m).unwrap();
    let subject = &ds.subject;
    let upright = HeadRotation::default();
    let raised = HeadRotation {
        name: "raised".into(),
        shape: BodyShape {
            shoulder_height: 4.0,
            ..Default::default()
        },
        ..Default::default()
    };
    let drape = |r: &HeadRotation| {
        let pose = subject.pose(r).unwrap();
        let (x, report) = lbfgs::<B>(
            &pose.posed,
            pose.contact(),
            &m,
            &LbfgsOptions::default(),
            &Default::default(),
        );
        assert!(report.converged, "{report:?}");
        (
            DrapeMetrics::of(&pose.posed.x, &pose.posed, pose.contact()),
            DrapeMetrics::of(&x, &pose.posed, pose.contact()),
            pose.shape,
        )
    };
    let (posed0, draped0, shape0) = drape(&upright);
    let (posed1, draped1, shape1) = drape(&raised);
    assert!(
        shape0.is_zero() && shape1.shoulder_height == 4.0,
        "{shape0:?} {shape1:?}"
    );
    assert!(
        posed1.intersection_fraction > posed0.intersection_fraction + 0.002,
        "the posed groom enters the raised shoulders: {posed0:?} {posed1:?}"
    );
    assert!(draped1.intersection_fraction < 1e-3, "{draped1:?}");
    assert!(
        draped1.gravity_potential > draped0.gravity_potential + 0.3,
        "raised shoulders hold the hair higher: {} vs {}",
        draped1.gravity_potential,
        draped0.gravity_potential
    );
    // The same subject on a head-only body: no shoulders to raise.
    let head_only = super::config::GroomEntry {
        body: Some("head_only".into()),
        ..entry
    };
    let ds =
        crate::neural::drape::scene::drape_scene(&head_only, &Default::default(), 0.2, 12, 10, &m).unwrap();
    let e = ds.subject.pose(&raised).err().expect("no shoulders").to_string();
    assert!(e.contains("raised") && e.contains("shape"), "{e}");
}
