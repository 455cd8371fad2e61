//! Bodies: the head (the procedural cranium and jaw, or a head mesh's SDF) plus neck and
//! shoulder capsules with a few shape parameters. Presets live in `presets/bodies/`.

use glam::Vec3;
use serde::{Deserialize, Serialize};

use super::grid::SdfGrid;
use super::shapes::{Capsule, Ellipsoid, Sphere};
use super::{Collider, Colliders, Follow};
use crate::error::Result;
use crate::groom::ScalpShape;
use crate::motion::{HeadTrack, Pose};
use crate::presets::{self, Table};

pub const TABLE: Table = &[
    ("default", include_str!("../../presets/bodies/default.toml")),
    ("head_only", include_str!("../../presets/bodies/head_only.toml")),
];

/// Shape parameters of a body (cm, relative to the head's centre, Y up, face towards +Z).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BodyParams {
    /// Add a jaw ellipsoid below the procedural cranium.
    pub jaw: bool,
    /// Neck capsule radius (0: no neck), its top and bottom heights and forward offset.
    pub neck_radius: f32,
    pub neck_top: f32,
    pub neck_bottom: f32,
    pub neck_forward: f32,
    /// Shoulder capsule: distance between its end centres, height, radius (0: none), offset.
    pub shoulder_width: f32,
    pub shoulder_height: f32,
    pub shoulder_radius: f32,
    pub shoulder_forward: f32,
}

impl Default for BodyParams {
    /// The values of `presets/bodies/default.toml` (a test keeps them equal).
    fn default() -> Self {
        BodyParams {
            jaw: true,
            neck_radius: 5.2,
            neck_top: -5.0,
            neck_bottom: -21.0,
            neck_forward: -1.0,
            shoulder_width: 36.0,
            shoulder_height: -25.0,
            shoulder_radius: 6.5,
            shoulder_forward: -2.0,
        }
    }
}

impl BodyParams {
    pub fn preset(name_or_path: &str) -> Result<BodyParams> {
        presets::load("body", TABLE, name_or_path)
    }
}

/// The head's collision shape.
pub enum HeadShape {
    /// The procedural cranium (an ellipsoid) of a procedural groom's scalp.
    Procedural(ScalpShape),
    /// A head mesh's signed distance grid, in the head's rest space.
    Grid(SdfGrid),
    /// Spheres and capsules (the collision shapes of a TressFX project).
    Spheres {
        spheres: Vec<Sphere>,
        capsules: Vec<Capsule>,
    },
}

/// The point of the head's rest frame the neck and shoulders are placed from: a procedural
/// cranium's centre, the spheres' mean, or the origin (head meshes are placed at the origin).
pub fn head_center(head: &HeadShape) -> Vec3 {
    match head {
        HeadShape::Procedural(s) => s.center,
        HeadShape::Grid(_) => Vec3::ZERO,
        HeadShape::Spheres { spheres, .. } if !spheres.is_empty() => {
            spheres.iter().map(|s| s.center).sum::<Vec3>() / spheres.len() as f32
        }
        HeadShape::Spheres { .. } => Vec3::ZERO,
    }
}

/// Builds the colliders of a body moved by a head track. The torso follows the head's
/// translation but not its rotation: the head turns on the neck while the body carries it.
pub fn colliders(head: HeadShape, params: &BodyParams, head_track: HeadTrack) -> Colliders {
    let mut parts = Vec::new();
    let center = head_center(&head);
    match head {
        HeadShape::Procedural(s) => {
            parts.push(Collider {
                name: "cranium".into(),
                shape: Box::new(Ellipsoid {
                    center: s.center,
                    radii: s.radii,
                }),
                offset: Pose::IDENTITY,
                follows: Follow::Head,
            });
            if params.jaw {
                // Face and jaw: narrower than the cranium, lower and forward.
                let r = s.radii;
                parts.push(Collider {
                    name: "jaw".into(),
                    shape: Box::new(Ellipsoid {
                        center: s.center + Vec3::new(0.0, -0.45 * r.y, 0.25 * r.z),
                        radii: Vec3::new(0.78 * r.x, 0.72 * r.y, 0.75 * r.z),
                    }),
                    offset: Pose::IDENTITY,
                    follows: Follow::Head,
                });
            }
        }
        HeadShape::Grid(g) => parts.push(Collider {
            name: "head".into(),
            shape: Box::new(g),
            offset: Pose::IDENTITY,
            follows: Follow::Head,
        }),
        HeadShape::Spheres { spheres, capsules } => {
            for (i, s) in spheres.into_iter().enumerate() {
                parts.push(Collider {
                    name: format!("sphere{i}"),
                    shape: Box::new(s),
                    offset: Pose::IDENTITY,
                    follows: Follow::Head,
                });
            }
            for (i, c) in capsules.into_iter().enumerate() {
                parts.push(Collider {
                    name: format!("capsule{i}"),
                    shape: Box::new(c),
                    offset: Pose::IDENTITY,
                    follows: Follow::Head,
                });
            }
        }
    }
    if params.neck_radius > 0.0 {
        parts.push(Collider {
            name: "neck".into(),
            shape: Box::new(Capsule {
                a: center + Vec3::new(0.0, params.neck_top, params.neck_forward),
                b: center + Vec3::new(0.0, params.neck_bottom, params.neck_forward),
                radius: params.neck_radius,
            }),
            offset: Pose::IDENTITY,
            follows: Follow::Torso,
        });
    }
    if params.shoulder_radius > 0.0 {
        let h = 0.5 * params.shoulder_width;
        let y = params.shoulder_height;
        parts.push(Collider {
            name: "shoulders".into(),
            shape: Box::new(Capsule {
                a: center + Vec3::new(-h, y, params.shoulder_forward),
                b: center + Vec3::new(h, y, params.shoulder_forward),
                radius: params.shoulder_radius,
            }),
            offset: Pose::IDENTITY,
            follows: Follow::Torso,
        });
    }
    Colliders {
        parts,
        torso: head_track.translation_only(),
        head: head_track,
        props: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_preset_matches_the_code_defaults() {
        assert_eq!(BodyParams::preset("default").unwrap(), BodyParams::default());
    }

    #[test]
    fn presets_build_the_expected_parts() {
        let c = colliders(
            HeadShape::Procedural(ScalpShape::default()),
            &BodyParams::default(),
            HeadTrack::still(Pose::IDENTITY),
        );
        let names: Vec<&str> = c.parts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["cranium", "jaw", "neck", "shoulders"]);
        let h = BodyParams::preset("head_only").unwrap();
        let c = colliders(
            HeadShape::Procedural(ScalpShape::default()),
            &h,
            HeadTrack::still(Pose::IDENTITY),
        );
        assert_eq!(c.parts.len(), 2);
        assert!(BodyParams::preset("giraffe").is_err());
    }

    #[test]
    fn hair_roots_sit_on_the_cranium_and_the_head_moves() {
        let scalp = ScalpShape::default();
        let track = HeadTrack::new(vec![
            (0.0, Pose::IDENTITY),
            (
                1.0,
                Pose::new(Default::default(), glam::DVec3::new(10.0, 0.0, 0.0)),
            ),
        ])
        .unwrap();
        let c = colliders(HeadShape::Procedural(scalp), &BodyParams::default(), track);
        let top = scalp.surface_point(Vec3::Y);
        assert!(c.distance(top, 0.0).abs() < 1e-4);
        // After the head moved 10 cm along x the old root position is outside, the moved one on it.
        assert!(c.distance(top, 1.0) > 1.0);
        assert!(c.distance(top + Vec3::X * 10.0, 1.0).abs() < 1e-4);
        // The surface velocity is the head's.
        let poses = c.poses_at(0.5);
        let hit = c.query(top + Vec3::X * 5.0, 0.5, &poses).unwrap();
        assert!((hit.velocity - Vec3::new(10.0, 0.0, 0.0)).length() < 1e-4);
        // The shoulders are carried along with the head's translation…
        let shoulder = Vec3::new(15.0, -25.0 + 6.5, -2.0);
        assert!(c.distance(shoulder, 0.0).abs() < 1e-3);
        assert!(c.distance(shoulder + Vec3::X * 10.0, 1.0).abs() < 1e-3);
        // …but do not turn with it.
        let turn = HeadTrack::new(vec![
            (0.0, Pose::IDENTITY),
            (
                1.0,
                Pose::new(glam::DQuat::from_rotation_y(0.5), glam::DVec3::ZERO),
            ),
        ])
        .unwrap();
        let c = colliders(HeadShape::Procedural(scalp), &BodyParams::default(), turn);
        assert!(c.distance(shoulder, 1.0).abs() < 1e-3);
        // The frozen frame answers like the per-query path.
        let frame = c.at(0.5);
        let poses = c.poses_at(0.5);
        for i in 0..200 {
            let p = Vec3::new(
                (i as f32 * 0.37).sin() * 20.0,
                (i as f32 * 0.11).cos() * 25.0 - 5.0,
                (i as f32 * 0.23).sin() * 15.0,
            );
            let (a, b) = (frame.query(p).unwrap(), c.query(p, 0.5, &poses).unwrap());
            assert!(
                (a.distance - b.distance).abs() < 1e-4 && (a.normal - b.normal).length() < 1e-4,
                "{p}"
            );
            assert!(
                (a.velocity - b.velocity).length() < 1e-3 * (1.0 + b.velocity.length()),
                "{p}"
            );
        }
    }
}
