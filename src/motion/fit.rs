//! Rigid fits: the rotation and translation that best map one point set onto another, by Horn's
//! closed-form quaternion method (Horn 1987: the optimal rotation is the eigenvector of the
//! largest eigenvalue of a 4×4 symmetric matrix built from the cross-covariance). Used to turn an
//! animated head mesh into a rigid head track, with the residual telling whether it was rigid.

use glam::{DQuat, DVec3};

use super::pose::Pose;

/// A fitted pose and how far the points are from it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidFit {
    pub pose: Pose,
    /// Root-mean-square distance between the moved source points and the targets.
    pub rms: f64,
    /// Largest such distance.
    pub max: f64,
}

/// Eigen-decomposition of a symmetric 4×4 matrix by cyclic Jacobi rotations; returns the
/// eigenvector of the largest eigenvalue.
fn top_eigenvector(mut a: [[f64; 4]; 4]) -> [f64; 4] {
    let mut v = [[0.0; 4]; 4];
    for (i, row) in v.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    for _ in 0..64 {
        let off: f64 = (0..4)
            .flat_map(|i| (0..4).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i][j] * a[i][j])
            .sum();
        if off < 1e-30 {
            break;
        }
        for p in 0..3 {
            for q in p + 1..4 {
                if a[p][q].abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for row in a.iter_mut() {
                    let (akp, akq) = (row[p], row[q]);
                    row[p] = c * akp - s * akq;
                    row[q] = s * akp + c * akq;
                }
                let (rp, rq) = (a[p], a[q]);
                for k in 0..4 {
                    a[p][k] = c * rp[k] - s * rq[k];
                    a[q][k] = s * rp[k] + c * rq[k];
                }
                for row in v.iter_mut() {
                    let (vp, vq) = (row[p], row[q]);
                    row[p] = c * vp - s * vq;
                    row[q] = s * vp + c * vq;
                }
            }
        }
    }
    let best = (0..4)
        .max_by(|&i, &j| a[i][i].total_cmp(&a[j][j]))
        .expect("4 values");
    [v[0][best], v[1][best], v[2][best], v[3][best]]
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
