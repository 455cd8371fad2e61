//! `HeadTrack`: the head's rigid transform as a function of time.
//!
//! Keys are poses at increasing times; between keys the rotation is slerped and the translation
//! interpolated linearly; before the first and after the last key the track holds still.
//! Velocities are the exact derivatives of that interpolation.

use glam::{DQuat, DVec3, Vec3};
use serde::Serialize;

use super::pose::Pose;
use crate::error::{Error, Result};

#[derive(Clone, Debug, PartialEq)]
pub struct HeadTrack {
    times: Vec<f64>,
    poses: Vec<Pose>,
}

/// Linear and angular velocity of the track at a time (world frame; rad/s).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TrackVelocity {
    pub linear: DVec3,
    pub angular: DVec3,
}

impl HeadTrack {
    /// A track through `keys` (time in seconds, pose). Times must increase strictly.
    pub fn new(keys: Vec<(f64, Pose)>) -> Result<HeadTrack> {
        if keys.is_empty() {
            return Err(Error::Invalid("a head track needs at least one key".into()));
        }
        if keys
            .iter()
            .any(|(t, p)| !t.is_finite() || !p.translation.is_finite() || !p.rotation.is_finite())
        {
            return Err(Error::Invalid("a head track key is not finite".into()));
        }
        for w in keys.windows(2) {
            if w[1].0 <= w[0].0 {
                return Err(Error::Invalid(format!(
                    "head track times must increase: {} then {}",
                    w[0].0, w[1].0
                )));
            }
        }
        let (times, poses) = keys.into_iter().unzip();
        Ok(HeadTrack { times, poses })
    }

    /// The same keys without their rotations: how the torso moves under a head that turns on
    /// its neck while the body carries it (walks, bobs).
    pub fn translation_only(&self) -> HeadTrack {
        HeadTrack {
            times: self.times.clone(),
            poses: self
                .poses
                .iter()
                .map(|p| Pose::new(DQuat::IDENTITY, p.translation))
                .collect(),
        }
    }

    /// The same motion seen through a change of units and axes (the groom's `--scale` and
    /// `--up`): rotations are conjugated by the axis change, translations scaled and turned.
    pub fn transformed(&self, t: &crate::groom::Transform) -> HeadTrack {
        let a = t.axis_rotation();
        HeadTrack {
            times: self.times.clone(),
            poses: self
                .poses
                .iter()
                .map(|p| Pose::new(a * p.rotation * a.inverse(), a * p.translation * t.scale as f64))
                .collect(),
        }
    }

    /// The same motion `dt` seconds later.
    pub fn shifted(&self, dt: f64) -> HeadTrack {
        HeadTrack {
            times: self.times.iter().map(|t| t + dt).collect(),
            poses: self.poses.clone(),
        }
    }

    /// A head that never moves.
    pub fn still(pose: Pose) -> HeadTrack {
        HeadTrack {
            times: vec![0.0],
            poses: vec![pose],
        }
    }

    /// Poses sampled at `fps` from `first_frame`, one per frame.
    pub fn from_frames(fps: f64, first_frame: f64, poses: Vec<Pose>) -> Result<HeadTrack> {
        let keys = poses
            .into_iter()
            .enumerate()
            .map(|(i, p)| ((first_frame + i as f64) / fps, p))
            .collect();
        HeadTrack::new(keys)
    }

    pub fn keys(&self) -> impl Iterator<Item = (f64, &Pose)> {
        self.times.iter().copied().zip(self.poses.iter())
    }

    pub fn len(&self) -> usize {
        self.times.len()
    }

    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// (first, last) key time.
    pub fn span(&self) -> (f64, f64) {
        (self.times[0], *self.times.last().expect("non-empty"))
    }

    pub fn duration(&self) -> f64 {
        let (a, b) = self.span();
        b - a
    }

    fn segment(&self, t: f64) -> (usize, f64) {
        let n = self.times.len();
        if n == 1 || t <= self.times[0] {
            return (0, 0.0);
        }
        if t >= self.times[n - 1] {
            return (n - 2, 1.0);
        }
        let i = self.times.partition_point(|&x| x <= t) - 1;
        let (t0, t1) = (self.times[i], self.times[i + 1]);
        (i, (t - t0) / (t1 - t0))
    }

    /// The pose at time `t` seconds.
    pub fn at(&self, t: f64) -> Pose {
        if self.times.len() == 1 {
            return self.poses[0];
        }
        let (i, u) = self.segment(t);
        self.poses[i].lerp(&self.poses[i + 1], u)
    }

    /// The pose at frame `frame` of a `fps` timeline.
    pub fn at_frame(&self, frame: f64, fps: f64) -> Pose {
        self.at(frame / fps)
    }

    /// Linear and angular velocity at `t` (zero outside the keys).
    pub fn velocity(&self, t: f64) -> TrackVelocity {
        let still = TrackVelocity {
            linear: DVec3::ZERO,
            angular: DVec3::ZERO,
        };
        let n = self.times.len();
        if n == 1 || t < self.times[0] || t > self.times[n - 1] {
            return still;
        }
        let (i, _) = self.segment(t);
        let dt = self.times[i + 1] - self.times[i];
        let (a, b) = (&self.poses[i], &self.poses[i + 1]);
        let mut qb = b.rotation;
        if a.rotation.dot(qb) < 0.0 {
            qb = -qb;
        }
        // Slerp turns at a constant rate about the world axis of q_b · q_a⁻¹.
        let (axis, angle) = (qb * a.rotation.inverse()).normalize().to_axis_angle();
        let angle = if angle > std::f64::consts::PI {
            angle - std::f64::consts::TAU
        } else {
            angle
        };
        TrackVelocity {
            linear: (b.translation - a.translation) / dt,
            angular: axis * (angle / dt),
        }
    }

    /// Velocity of the material point that is at world position `p` at time `t`.
    pub fn point_velocity(&self, p: Vec3, t: f64) -> Vec3 {
        let v = self.velocity(t);
        let c = self.at(t).translation;
        (v.linear + v.angular.cross(p.as_dvec3() - c)).as_vec3()
    }

    /// The same motion relative to pose `origin` (so the track starts at the identity when
    /// `origin` is its first pose).
    pub fn relative_to(&self, origin: &Pose) -> HeadTrack {
        let inv = origin.inverse();
        HeadTrack {
            times: self.times.clone(),
            poses: self.poses.iter().map(|p| p.then_after(&inv)).collect(),
        }
    }

    /// Peak linear (units/s) and angular (deg/s) speeds over the keys.
    pub fn peak_speeds(&self) -> (f64, f64) {
        let mut lin: f64 = 0.0;
        let mut ang: f64 = 0.0;
        for w in 0..self.times.len().saturating_sub(1) {
            let v = self.velocity(0.5 * (self.times[w] + self.times[w + 1]));
            lin = lin.max(v.linear.length());
            ang = ang.max(v.angular.length().to_degrees());
        }
        (lin, ang)
    }

    /// Rotation angle from the first pose at time `t`, in degrees.
    pub fn angle_from_start(&self, t: f64) -> f64 {
        let q: DQuat = self.at(t).rotation * self.poses[0].rotation.inverse();
        Pose::new(q, DVec3::ZERO).angle_deg()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin() -> HeadTrack {
        HeadTrack::new(vec![
            (0.0, Pose::IDENTITY),
            (
                1.0,
                Pose::new(DQuat::from_rotation_y(1.0), DVec3::new(2.0, 0.0, 0.0)),
            ),
        ])
        .unwrap()
    }

    #[test]
    fn interpolation_and_holding() {
        let t = spin();
        let m = t.at(0.5);
        assert!((m.translation - DVec3::new(1.0, 0.0, 0.0)).length() < 1e-12);
        assert!(m.rotation.angle_between(DQuat::from_rotation_y(0.5)) < 1e-12);
        assert_eq!(t.at(-3.0), Pose::IDENTITY);
        assert_eq!(t.at(7.0), t.at(1.0));
        assert_eq!(t.at_frame(12.0, 24.0), t.at(0.5));
    }

    #[test]
    fn velocities_are_derivatives() {
        let t = spin();
        let v = t.velocity(0.3);
        assert!((v.linear - DVec3::new(2.0, 0.0, 0.0)).length() < 1e-12);
        assert!((v.angular - DVec3::new(0.0, 1.0, 0.0)).length() < 1e-12);
        // A point's velocity matches a finite difference of its motion.
        let local = DVec3::new(0.0, 0.0, 1.0);
        let h = 1e-6;
        let fd = (t.at(0.3 + h).apply(local) - t.at(0.3 - h).apply(local)) / (2.0 * h);
        let p = t.at(0.3).apply(local).as_vec3();
        assert!((t.point_velocity(p, 0.3).as_dvec3() - fd).length() < 1e-5);
        assert_eq!(t.velocity(2.0).linear, DVec3::ZERO);
    }

    #[test]
    fn bad_keys() {
        assert!(HeadTrack::new(vec![]).is_err());
        assert!(HeadTrack::new(vec![(1.0, Pose::IDENTITY), (1.0, Pose::IDENTITY)]).is_err());
        assert!(HeadTrack::new(vec![(f64::NAN, Pose::IDENTITY)]).is_err());
    }
}
