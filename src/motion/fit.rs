//! Rigid fits: the rotation and translation that best map one point set onto another, by Horn's
//! closed-form quaternion method (Horn 1987: the optimal rotation is the eigenvector of the
//! largest eigenvalue of a 4×4 symmetric matrix built from the cross-covariance). Used to turn an
//! animated head mesh into a rigid head track, with the residual telling whether it was rigid.

use glam::{DQuat, DVec3, Vec3};

use super::pose::Pose;
use crate::groom::strand_roots;

/// A fitted pose and how far the points are from it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidFit {
    pub pose: Pose,
    /// Root-mean-square distance between the moved source points and the targets.
    pub rms: f64,
    /// Largest such distance.
    pub max: f64,
}

/// Head poses of `frames` relative to the first, from rigid fits of their roots.
pub fn root_poses(frames: &[Vec<Vec3>], counts: &[u32]) -> Vec<Pose> {
    let Some(first) = frames.first() else {
        return Vec::new();
    };
    let r0 = strand_roots(first, counts);
    frames
        .iter()
        .map(|f| root_pose(&r0, &strand_roots(f, counts)))
        .collect()
}

/// The rigid motion carrying `rest` roots onto `now` (a least-squares fit).
pub fn root_pose(rest: &[Vec3], now: &[Vec3]) -> Pose {
    let d = |v: &[Vec3]| -> Vec<DVec3> { v.iter().map(|p| p.as_dvec3()).collect() };
    fit_rigid(&d(rest), &d(now)).pose
}

/// The eigenvector of the largest eigenvalue of a symmetric 4×4 matrix (nalgebra's symmetric
/// eigen-decomposition).
fn top_eigenvector(a: [[f64; 4]; 4]) -> [f64; 4] {
    let e = nalgebra::SymmetricEigen::new(nalgebra::Matrix4::from_fn(|i, j| a[i][j]));
    let v = e.eigenvectors.column(e.eigenvalues.imax());
    [v[0], v[1], v[2], v[3]]
}

/// The rigid motion taking `from[i]` to `to[i]` (least squares). Needs at least 3 points not
/// on a line for a unique rotation.
pub fn fit_rigid(from: &[DVec3], to: &[DVec3]) -> RigidFit {
    assert_eq!(from.len(), to.len(), "point sets differ in size");
    if from.is_empty() {
        return RigidFit {
            pose: Pose::IDENTITY,
            rms: 0.0,
            max: 0.0,
        };
    }
    let n = from.len() as f64;
    let ca = from.iter().sum::<DVec3>() / n;
    let cb = to.iter().sum::<DVec3>() / n;
    let mut s = [[0.0; 3]; 3];
    for (a, b) in from.iter().zip(to) {
        let (a, b) = (*a - ca, *b - cb);
        let (av, bv) = (a.to_array(), b.to_array());
        for i in 0..3 {
            for j in 0..3 {
                s[i][j] += av[i] * bv[j];
            }
        }
    }
    let [[sxx, sxy, sxz], [syx, syy, syz], [szx, szy, szz]] = s;
    let nm = [
        [sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
        [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
        [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
        [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz],
    ];
    let [w, x, y, z] = top_eigenvector(nm);
    let rotation = DQuat::from_xyzw(x, y, z, w).normalize();
    let pose = Pose::new(rotation, cb - rotation * ca);
    let (mut sum, mut max) = (0.0f64, 0.0f64);
    for (a, b) in from.iter().zip(to) {
        let d = pose.apply(*a).distance(*b);
        sum += d * d;
        max = max.max(d);
    }
    RigidFit {
        pose,
        rms: (sum / n).sqrt(),
        max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_a_known_motion() {
        let pts: Vec<DVec3> = (0..50)
            .map(|i| {
                let f = i as f64;
                DVec3::new((f * 0.37).sin() * 3.0, (f * 0.11).cos() * 5.0, f * 0.1 - 2.0)
            })
            .collect();
        for (axis, angle) in [
            (DVec3::Y, 0.3),
            (DVec3::new(1.0, 2.0, -0.5), 2.9),
            (DVec3::X, 0.0),
            (DVec3::Z, 3.1),
        ] {
            let truth = Pose::new(
                DQuat::from_axis_angle(axis.normalize(), angle),
                DVec3::new(4.0, -1.0, 2.5),
            );
            let moved: Vec<DVec3> = pts.iter().map(|p| truth.apply(*p)).collect();
            let fit = fit_rigid(&pts, &moved);
            assert!(fit.rms < 1e-9, "{axis} {angle}: rms {}", fit.rms);
            assert!(fit.pose.rotation.angle_between(truth.rotation) < 1e-9);
            assert!((fit.pose.translation - truth.translation).length() < 1e-9);
        }
    }

    #[test]
    fn non_rigid_motion_shows_in_the_residual() {
        let pts = vec![DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z];
        let stretched: Vec<DVec3> = pts.iter().map(|p| *p * 1.5).collect();
        assert!(fit_rigid(&pts, &stretched).rms > 0.1);
    }
}
