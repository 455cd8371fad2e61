//! The procedural head's scalp: an ellipsoidal cranium with a hairline.
//!
//! Centimetres, Y up, face towards +Z (the Maya / Unreal convention tress uses inside).
//! The hair-bearing region is a cap of directions around an axis tilted towards the back of
//! the head, so the hairline sits high on the forehead and low at the nape, as on a real head.

use glam::Vec3;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalpShape {
    /// Centre of the cranium ellipsoid (cm).
    pub center: Vec3,
    /// Semi-axes of the cranium (cm): half width, half height, half depth.
    pub radii: Vec3,
    /// Axis of the hair-bearing cap, tilted towards the back (normalized on use).
    pub cap_axis: Vec3,
    /// Half-angle of the cap around `cap_axis` (degrees).
    pub cap_angle_deg: f32,
}

impl Default for ScalpShape {
    /// An adult head: 15.2 cm wide, 19.6 cm deep cranium; hairline about 45° above the
    /// forehead's horizontal and 17° below it at the back.
    fn default() -> Self {
        ScalpShape {
            center: Vec3::ZERO,
            radii: Vec3::new(7.6, 9.5, 9.8),
            cap_axis: Vec3::new(0.0, 1.0, -0.6),
            cap_angle_deg: 78.0,
        }
    }
}

impl ScalpShape {
    /// Point of the ellipsoid in unit direction `d` (radial map of the unit sphere).
    pub fn surface_point(&self, d: Vec3) -> Vec3 {
        self.center + self.radii * d
    }

    /// Outward unit normal of the ellipsoid at surface point `p`.
    pub fn normal(&self, p: Vec3) -> Vec3 {
        ((p - self.center) / (self.radii * self.radii)).normalize()
    }

    /// Implicit value ‖(p − c) / r‖² (1 on the surface, < 1 inside) of the ellipsoid grown by
    /// `offset` along each axis.
    pub fn implicit(&self, p: Vec3, offset: f32) -> f32 {
        ((p - self.center) / (self.radii + Vec3::splat(offset))).length_squared()
    }

    /// Pushes `p` radially out of the ellipsoid grown by `offset` if it is inside.
    pub fn push_out(&self, p: Vec3, offset: f32) -> Vec3 {
        let f = self.implicit(p, offset);
        if f < 1.0 && f > 1e-12 {
            self.center + (p - self.center) / f.sqrt()
        } else {
            p
        }
    }

    pub fn cap_axis(&self) -> Vec3 {
        self.cap_axis.normalize_or(Vec3::Y)
    }
}
