//! Rigid poses: a rotation and a translation, in double precision (film frame numbers and long
//! shots make f32 times and angles drift).

use glam::{DMat4, DQuat, DVec3, Vec3};
use serde::{Deserialize, Serialize};

/// `x ↦ rotation · x + translation`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pose {
    pub rotation: DQuat,
    pub translation: DVec3,
}

impl Default for Pose {
    fn default() -> Self {
        Pose::IDENTITY
    }
}

impl From<tress_formats::tcache::HeadPose> for Pose {
    fn from(h: tress_formats::tcache::HeadPose) -> Pose {
        Pose::new(DQuat::from_array(h.rotation), DVec3::from_array(h.translation))
    }
}

impl From<Pose> for tress_formats::tcache::HeadPose {
    fn from(p: Pose) -> tress_formats::tcache::HeadPose {
        tress_formats::tcache::HeadPose {
            rotation: p.rotation.to_array(),
            translation: p.translation.to_array(),
        }
    }
}

impl Pose {
    pub const IDENTITY: Pose = Pose {
        rotation: DQuat::IDENTITY,
        translation: DVec3::ZERO,
    };

    pub fn new(rotation: DQuat, translation: DVec3) -> Pose {
        Pose {
            rotation: rotation.normalize(),
            translation,
        }
    }

    pub fn apply(&self, p: DVec3) -> DVec3 {
        self.rotation * p + self.translation
    }

    pub fn apply_f32(&self, p: Vec3) -> Vec3 {
        self.apply(p.as_dvec3()).as_vec3()
    }

    pub fn rotate_f32(&self, v: Vec3) -> Vec3 {
        (self.rotation * v.as_dvec3()).as_vec3()
    }

    pub fn inverse(&self) -> Pose {
        let r = self.rotation.inverse();
        Pose {
            rotation: r,
            translation: -(r * self.translation),
        }
    }

    /// `self ∘ other`: apply `other`, then `self`.
    pub fn then_after(&self, other: &Pose) -> Pose {
        Pose {
            rotation: (self.rotation * other.rotation).normalize(),
            translation: self.rotation * other.translation + self.translation,
        }
    }

    /// Interpolates rotations by slerp (shortest arc) and translations linearly.
    pub fn lerp(&self, other: &Pose, t: f64) -> Pose {
        let mut q1 = other.rotation;
        if self.rotation.dot(q1) < 0.0 {
            q1 = -q1;
        }
        Pose {
            rotation: self.rotation.slerp(q1, t).normalize(),
            translation: self.translation.lerp(other.translation, t),
        }
    }

    pub fn to_mat4(&self) -> DMat4 {
        DMat4::from_rotation_translation(self.rotation, self.translation)
    }

    /// The rigid part of a matrix (scale and shear removed); also returns the scale.
    pub fn from_mat4(m: &DMat4) -> (Pose, DVec3) {
        let (scale, rotation, translation) = m.to_scale_rotation_translation();
        (Pose::new(rotation, translation), scale)
    }

    /// Rotation angle in degrees (0..180).
    pub fn angle_deg(&self) -> f64 {
        let (_, angle) = self.rotation.to_axis_angle();
        let a = angle.to_degrees();
        if a > 180.0 { 360.0 - a } else { a }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compose_and_invert() {
        let a = Pose::new(DQuat::from_rotation_y(0.7), DVec3::new(1.0, 2.0, 3.0));
        let b = Pose::new(DQuat::from_rotation_x(-0.3), DVec3::new(-2.0, 0.5, 0.0));
        let p = DVec3::new(0.3, -0.2, 5.0);
        assert!((a.then_after(&b).apply(p) - a.apply(b.apply(p))).length() < 1e-12);
        assert!((a.inverse().apply(a.apply(p)) - p).length() < 1e-12);
        let (back, scale) = Pose::from_mat4(&a.to_mat4());
        assert!((back.apply(p) - a.apply(p)).length() < 1e-12);
        assert!((scale - DVec3::ONE).length() < 1e-12);
    }

    #[test]
    fn lerp_takes_the_short_way() {
        let a = Pose::new(DQuat::from_rotation_y(0.1), DVec3::ZERO);
        let b = Pose::new(-DQuat::from_rotation_y(0.3), DVec3::X);
        let m = a.lerp(&b, 0.5);
        assert!((m.rotation.angle_between(DQuat::from_rotation_y(0.2))).abs() < 1e-9);
        assert_eq!(m.translation, DVec3::new(0.5, 0.0, 0.0));
    }
}
