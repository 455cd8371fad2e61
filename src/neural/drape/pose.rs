//! Poses of the quasi-static drape: head rotations relative to the torso about the top of the
//! neck (003 §3.3 poses the groom with the body; tress's body is a rigid head on a neck and
//! shoulders, so a pose is the head's rotation), read from `presets/poses/` or a TOML file.

use glam::{DQuat, Vec3};
use serde::{Deserialize, Serialize};

use crate::collide::{BodyParams, BodyShape, HeadShape};
use crate::error::{Error, Result};
use crate::motion::Pose;
use crate::presets::{self, Table};

pub const TABLE: Table = &[
    ("rest", include_str!("../../../presets/poses/rest.toml")),
    ("turns", include_str!("../../../presets/poses/turns.toml")),
    ("bodies", include_str!("../../../presets/poses/bodies.toml")),
];

/// One pose: a head rotation (degrees; yaw turns the face to its left (+) about the vertical,
/// pitch nods it down (+), roll tilts it toward its left shoulder (+)) and a change of the
/// body's shape (cm added to its shoulders' width and height and its neck's radius; none by
/// default).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HeadRotation {
    pub name: String,
    pub yaw: f64,
    pub pitch: f64,
    pub roll: f64,
    #[serde(skip_serializing_if = "BodyShape::is_zero")]
    pub shape: BodyShape,
}

impl HeadRotation {
    /// The rotation (head frame: Y up, face +Z, the head's left +X).
    pub fn rotation(&self) -> DQuat {
        DQuat::from_rotation_y(self.yaw.to_radians())
            * DQuat::from_rotation_x(self.pitch.to_radians())
            * DQuat::from_rotation_z(-self.roll.to_radians())
    }

    /// The rotation `q` (head frame, as [`HeadRotation::rotation`] builds it) as yaw, pitch and
    /// roll.
    pub fn from_rotation(name: &str, q: DQuat) -> HeadRotation {
        let (yaw, pitch, z) = q.to_euler(glam::EulerRot::YXZ);
        HeadRotation {
            name: name.to_string(),
            yaw: yaw.to_degrees(),
            pitch: pitch.to_degrees(),
            roll: -z.to_degrees(),
            shape: BodyShape::default(),
        }
    }

    /// The head's pose for this rotation about `pivot`.
    pub fn pose(&self, pivot: Vec3) -> Pose {
        let r = self.rotation();
        let p = pivot.as_dvec3();
        Pose::new(r, p - r * p)
    }
}

/// The largest change of a body's shape a pose may ask for (cm).
pub const SHAPE_LIMIT_CM: f32 = 30.0;

/// A list of poses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseSet {
    pub pose: Vec<HeadRotation>,
}

impl PoseSet {
    /// A preset of `presets/poses/` by name, or a TOML file.
    pub fn load(name_or_path: &str) -> Result<PoseSet> {
        let set: PoseSet = presets::load("poses", TABLE, name_or_path)?;
        if set.pose.is_empty() {
            return Err(Error::Invalid(format!("{name_or_path}: no [[pose]]")));
        }
        if set.pose.len() > 100_000 {
            return Err(Error::Invalid(format!("{name_or_path}: more than 100000 poses")));
        }
        for (i, p) in set.pose.iter().enumerate() {
            for (k, v, limit) in [
                ("yaw", p.yaw, 90.0),
                ("pitch", p.pitch, 60.0),
                ("roll", p.roll, 45.0),
            ] {
                if !(v.is_finite() && v.abs() <= limit) {
                    return Err(Error::Invalid(format!(
                        "{name_or_path}: pose {} ({}): {k} = {v}: must be within ±{limit}°",
                        i + 1,
                        p.name
                    )));
                }
            }
            for (k, v) in BodyShape::NAMES.iter().zip(p.shape.to_array()) {
                if !(v.is_finite() && v.abs() <= SHAPE_LIMIT_CM) {
                    return Err(Error::Invalid(format!(
                        "{name_or_path}: pose {} ({}): shape.{k} = {v}: must be within ±{SHAPE_LIMIT_CM} cm",
                        i + 1,
                        p.name
                    )));
                }
            }
        }
        Ok(set)
    }
}

/// The pivot of the head's rotations: the top of the neck (the body's neck capsule), in the
/// head's rest frame.
pub fn neck_pivot(head: &HeadShape, body: &BodyParams) -> Vec3 {
    crate::collide::body::head_center(head) + Vec3::new(0.0, body.neck_top, body.neck_forward)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Yaw, pitch and roll read back from the rotation they build (within ±90°, ±60°, ±45°,
    /// where the YXZ angles are unique), and the rotation turns the face as documented.
    #[test]
    fn rotations_read_back_as_their_angles() {
        for (yaw, pitch, roll) in [
            (0.0, 0.0, 0.0),
            (30.0, -20.0, 10.0),
            (-85.0, 55.0, -40.0),
            (12.5, 3.0, 44.0),
        ] {
            let r = HeadRotation {
                name: "r".into(),
                yaw,
                pitch,
                roll,
                ..Default::default()
            };
            let back = HeadRotation::from_rotation("r", r.rotation());
            for (a, b) in [(back.yaw, yaw), (back.pitch, pitch), (back.roll, roll)] {
                assert!((a - b).abs() < 1e-9, "{back:?} from {r:?}");
            }
        }
        // Yaw +90°: the face (+Z) turns to the head's left (+X).
        let face = HeadRotation {
            yaw: 90.0,
            ..Default::default()
        }
        .rotation()
            * glam::DVec3::Z;
        assert!((face - glam::DVec3::X).length() < 1e-12, "{face}");
    }
}
