//! Bodies: the head (the procedural cranium and jaw, or a head mesh's SDF) plus neck and
//! shoulder capsules with a few shape parameters. Presets live in `presets/bodies/`.

use std::sync::Arc;

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

/// A body's shape as a few numbers (003 §3.4 conditions its drape on the body's shape): how far
/// (cm) its shoulders' width and height and its neck's radius are from the `default` body's.
/// Parts a body lacks (no neck, no shoulders) count as zero. Used both as a shape and as a
/// change of shape (a pose's offsets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BodyShape {
    pub shoulder_width: f32,
    pub shoulder_height: f32,
    pub neck_radius: f32,
}

impl BodyShape {
    /// The names of the numbers, in [`BodyShape::to_array`] order.
    pub const NAMES: [&'static str; 3] = ["shoulder_width", "shoulder_height", "neck_radius"];

    pub fn to_array(&self) -> [f32; 3] {
        [self.shoulder_width, self.shoulder_height, self.neck_radius]
    }

    pub fn from_array(v: [f32; 3]) -> BodyShape {
        BodyShape {
            shoulder_width: v[0],
            shoulder_height: v[1],
            neck_radius: v[2],
        }
    }

    pub fn is_zero(&self) -> bool {
        self.to_array() == [0.0; 3]
    }

    /// The shape of `body`.
    pub fn of(body: &BodyParams) -> BodyShape {
        let d = BodyParams::default();
        let shoulders = body.shoulder_radius > 0.0;
        BodyShape {
            shoulder_width: if shoulders {
                body.shoulder_width - d.shoulder_width
            } else {
                0.0
            },
            shoulder_height: if shoulders {
                body.shoulder_height - d.shoulder_height
            } else {
                0.0
            },
            neck_radius: if body.neck_radius > 0.0 {
                body.neck_radius - d.neck_radius
            } else {
                0.0
            },
        }
    }

    /// This shape kept to the parts `body` has (zero for the others).
    pub fn on_parts_of(&self, body: &BodyParams) -> BodyShape {
        let shoulders = body.shoulder_radius > 0.0;
        BodyShape {
            shoulder_width: if shoulders { self.shoulder_width } else { 0.0 },
            shoulder_height: if shoulders { self.shoulder_height } else { 0.0 },
            neck_radius: if body.neck_radius > 0.0 {
                self.neck_radius
            } else {
                0.0
            },
        }
    }

    /// `body` changed by `offsets` (cm added to its shoulders' width and height and its neck's
    /// radius); an error names an offset for a part the body lacks, or a neck thinner than
    /// 1 cm, or shoulders narrower than the neck.
    pub fn offset(body: &BodyParams, offsets: &BodyShape) -> std::result::Result<BodyParams, String> {
        if *offsets != offsets.on_parts_of(body) {
            return Err("the body has no neck or shoulders to change (use a body with them)".into());
        }
        let mut b = body.clone();
        b.shoulder_width += offsets.shoulder_width;
        b.shoulder_height += offsets.shoulder_height;
        b.neck_radius += offsets.neck_radius;
        let values = [b.shoulder_width, b.shoulder_height, b.neck_radius];
        if values.iter().any(|v| !v.is_finite()) {
            return Err("the shape's offsets must be finite".into());
        }
        if body.neck_radius > 0.0 && b.neck_radius < 1.0 {
            return Err(format!("neck_radius {} cm: at least 1 cm", b.neck_radius));
        }
        if body.shoulder_radius > 0.0 && b.shoulder_width < 2.0 * b.neck_radius.max(0.0) {
            return Err(format!(
                "shoulder_width {} cm: wider than the neck ({} cm)",
                b.shoulder_width,
                2.0 * b.neck_radius
            ));
        }
        Ok(b)
    }
}

impl std::ops::Add for BodyShape {
    type Output = BodyShape;
    fn add(self, o: BodyShape) -> BodyShape {
        let (a, b) = (self.to_array(), o.to_array());
        BodyShape::from_array([a[0] + b[0], a[1] + b[1], a[2] + b[2]])
    }
}

impl std::ops::Sub for BodyShape {
    type Output = BodyShape;
    fn sub(self, o: BodyShape) -> BodyShape {
        let (a, b) = (self.to_array(), o.to_array());
        BodyShape::from_array([a[0] - b[0], a[1] - b[1], a[2] - b[2]])
    }
}

/// The head's collision shape.
#[derive(Clone)]
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
                shape: Arc::new(Ellipsoid {
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
                    shape: Arc::new(Ellipsoid {
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
            shape: Arc::new(g),
            offset: Pose::IDENTITY,
            follows: Follow::Head,
        }),
        HeadShape::Spheres { spheres, capsules } => {
            for (i, s) in spheres.into_iter().enumerate() {
                parts.push(Collider {
                    name: format!("sphere{i}"),
                    shape: Arc::new(s),
                    offset: Pose::IDENTITY,
                    follows: Follow::Head,
                });
            }
            for (i, c) in capsules.into_iter().enumerate() {
                parts.push(Collider {
                    name: format!("capsule{i}"),
                    shape: Arc::new(c),
                    offset: Pose::IDENTITY,
                    follows: Follow::Head,
                });
            }
        }
    }
    parts.extend(torso_parts(center, params));
    Colliders {
        parts,
        torso: head_track.translation_only(),
        head: head_track,
        props: Vec::new(),
    }
}

/// The torso's parts of a body (neck and shoulder capsules, following the torso) under a head
/// whose centre is `center` ([`head_center`]).
pub fn torso_parts(center: Vec3, params: &BodyParams) -> Vec<Collider> {
    let mut parts = Vec::new();
    if params.neck_radius > 0.0 {
        parts.push(Collider {
            name: "neck".into(),
            shape: Arc::new(Capsule {
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
            shape: Arc::new(Capsule {
                a: center + Vec3::new(-h, y, params.shoulder_forward),
                b: center + Vec3::new(h, y, params.shoulder_forward),
                radius: params.shoulder_radius,
            }),
            offset: Pose::IDENTITY,
            follows: Follow::Torso,
        });
    }
    parts
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

    /// A shape read back from the body it makes; offsets for missing parts and bodies too thin
    /// are refused; the torso's parts replaced on a copy of the colliders move the shoulders
    /// and nothing else.
    #[test]
    fn body_shapes_change_the_torso_and_read_back() {
        let base = BodyParams::default();
        assert!(BodyShape::of(&base).is_zero());
        let s = BodyShape {
            shoulder_width: 6.0,
            shoulder_height: 3.0,
            neck_radius: -1.0,
        };
        let b = BodyShape::offset(&base, &s).unwrap();
        assert_eq!(
            (b.shoulder_width, b.shoulder_height, b.neck_radius),
            (42.0, -22.0, 4.2)
        );
        assert_eq!(BodyShape::of(&b), s);
        let head_only = BodyParams::preset("head_only").unwrap();
        assert!(BodyShape::of(&head_only).is_zero());
        assert!(BodyShape::offset(&head_only, &s).is_err());
        assert!(s.on_parts_of(&head_only).is_zero());
        let thin = BodyShape {
            neck_radius: -4.5,
            ..Default::default()
        };
        assert!(
            BodyShape::offset(&base, &thin)
                .unwrap_err()
                .contains("neck_radius")
        );
        let c = colliders(
            HeadShape::Procedural(ScalpShape::default()),
            &base,
            HeadTrack::still(Pose::IDENTITY),
        );
        let moved = c.with_torso(torso_parts(Vec3::ZERO, &b));
        assert_eq!(moved.parts.len(), c.parts.len());
        let (p0, p1) = (c.poses_at(0.0), moved.poses_at(0.0));
        // The old shoulders' top is now 3 cm inside the raised ones; the cranium is unchanged.
        let top = Vec3::new(10.0, -25.0 + 6.5, -2.0);
        assert!(c.query(top, 0.0, &p0).unwrap().distance.abs() < 1e-3);
        assert!((moved.query(top, 0.0, &p1).unwrap().distance + 3.0).abs() < 1e-3);
        let crown = Vec3::new(0.0, 12.0, 0.0);
        assert_eq!(c.query(crown, 0.0, &p0), moved.query(crown, 0.0, &p1));
    }
}
