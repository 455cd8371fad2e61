//! Colliders: what hair must not enter. Each collider is a shape with a signed distance field
//! in its own object space (negative inside), attached to the head or the torso; queries
//! transform the point into object space at the time asked, and return distance, outward normal
//! and the velocity of the collider's surface there (for friction, 001 §7.1).

pub mod body;
pub mod deforming;
pub mod frame;
pub mod grid;
pub mod head_fit;
pub mod head_mesh;
pub mod mesh_sdf;
pub mod shapes;
pub mod winding;

use std::sync::Arc;

use glam::Vec3;

use crate::motion::{HeadTrack, Pose};

pub use body::{BodyParams, BodyShape, HeadShape};
pub use frame::ColliderFrame;
pub use grid::SdfGrid;
pub use shapes::{Capsule, Ellipsoid, Sphere};

/// A signed distance field in object space.
pub trait Shape: Send + Sync {
    /// Signed distance (negative inside) and outward unit gradient at `p`.
    fn sdf(&self, p: Vec3) -> (f32, Vec3);

    /// Signed distance, outward gradient and the surface's own velocity (object space) at `p`,
    /// time `t` (s): shapes that change over time ([`deforming::DeformingSdf`]) override it;
    /// rigid shapes are [`Shape::sdf`] at any time, still.
    fn sdf_at(&self, p: Vec3, _t: f64) -> (f32, Vec3, Vec3) {
        let (d, n) = self.sdf(p);
        (d, n, Vec3::ZERO)
    }

    /// A cheap lower bound of [`Shape::sdf_at`] for culling far queries, if the shape has one:
    /// for every `p` and time, `sdf_at(p) ≥ slope · (dist(p, ab) − radius)` (object space).
    fn bound(&self) -> Option<Bound> {
        None
    }
}

/// A bounding capsule with a slope: the shape's signed distance at `p` is at least
/// `slope · (dist(p, segment ab) − radius)` (a sphere when `a = b`). Queries that only care
/// about points nearer than some reach skip shapes whose bound already exceeds it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    pub a: Vec3,
    pub b: Vec3,
    pub radius: f32,
    /// In (0, 1]: 1 for exact distances.
    pub slope: f32,
}

/// Distance from `p` to the segment from `a` to `b`.
#[inline]
pub fn segment_distance(p: Vec3, a: Vec3, b: Vec3) -> f32 {
    let ab = b - a;
    let len2 = ab.length_squared();
    let t = if len2 > 0.0 {
        ((p - a).dot(ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    p.distance(a + ab * t)
}

/// What a query returns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    pub distance: f32,
    /// Outward unit normal (world space).
    pub normal: Vec3,
    /// Velocity of the collider's surface at the query point (world space).
    pub velocity: Vec3,
}

/// Which track a collider moves with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Follow {
    Head,
    Torso,
    /// A prop with its own track (`Colliders::props`).
    Prop(usize),
}

/// A shape placed on a body part (shapes are shared: copies of a set of colliders, e.g. one
/// per body shape of the drape's training, share their distance grids).
#[derive(Clone)]
pub struct Collider {
    pub name: String,
    pub shape: Arc<dyn Shape>,
    /// Object space → the followed part's space.
    pub offset: Pose,
    pub follows: Follow,
}

/// The colliders of a scene with the tracks that move them.
#[derive(Clone)]
pub struct Colliders {
    pub parts: Vec<Collider>,
    pub head: HeadTrack,
    pub torso: HeadTrack,
    /// Tracks of props (solids that move on their own).
    pub props: Vec<HeadTrack>,
}

impl Colliders {
    /// Shapes on the head moving with `track`, no torso or props (tests, benchmarks, `--head
    /// none` with no shape at all).
    pub fn on_head(shapes: Vec<(&str, Box<dyn Shape>)>, track: HeadTrack) -> Colliders {
        Colliders {
            parts: shapes
                .into_iter()
                .map(|(name, shape)| Collider {
                    name: name.to_string(),
                    shape: Arc::from(shape),
                    offset: Pose::IDENTITY,
                    follows: Follow::Head,
                })
                .collect(),
            head: track,
            torso: HeadTrack::still(Pose::IDENTITY),
            props: Vec::new(),
        }
    }

    pub fn track(&self, f: Follow) -> &HeadTrack {
        match f {
            Follow::Head => &self.head,
            Follow::Torso => &self.torso,
            Follow::Prop(i) => &self.props[i],
        }
    }

    /// Adds a prop: `shape` placed by `track` (object space → world).
    pub fn add_prop(&mut self, name: &str, shape: Box<dyn Shape>, track: HeadTrack) {
        self.props.push(track);
        self.parts.push(Collider {
            name: name.to_string(),
            shape: Arc::from(shape),
            offset: Pose::IDENTITY,
            follows: Follow::Prop(self.props.len() - 1),
        });
    }

    /// These colliders with the torso's parts replaced by `torso` (parts following the torso):
    /// the same head, props and tracks on another body.
    pub fn with_torso(&self, torso: Vec<Collider>) -> Colliders {
        let mut c = self.clone();
        c.parts.retain(|p| p.follows != Follow::Torso);
        c.parts.extend(torso);
        c
    }

    /// The world pose of every collider at time `t` (evaluate once per step, then query).
    pub fn poses_at(&self, t: f64) -> Vec<Pose> {
        self.parts
            .iter()
            .map(|c| self.track(c.follows).at(t).then_after(&c.offset))
            .collect()
    }

    /// The world pose of every collider with the head at `head` and the torso and props where
    /// they are at time 0 (a still pose, as the quasi-static drape uses).
    pub fn poses_with_head(&self, head: Pose) -> Vec<Pose> {
        self.parts
            .iter()
            .map(|c| match c.follows {
                Follow::Head => head.then_after(&c.offset),
                f => self.track(f).at(0.0).then_after(&c.offset),
            })
            .collect()
    }

    /// The contact with the deepest (smallest distance) collider at world point `p`, time `t`,
    /// with collider poses from [`Colliders::poses_at`].
    pub fn query(&self, p: Vec3, t: f64, poses: &[Pose]) -> Option<Contact> {
        let mut best: Option<(Contact, usize)> = None;
        for (i, (c, pose)) in self.parts.iter().zip(poses).enumerate() {
            let local = pose.inverse().apply_f32(p);
            let (d, n, v) = c.shape.sdf_at(local, t);
            if best.is_none_or(|(b, _)| d < b.distance) {
                best = Some((
                    Contact {
                        distance: d,
                        normal: pose.rotate_f32(n),
                        velocity: pose.rotate_f32(v),
                    },
                    i,
                ));
            }
        }
        best.map(|(mut c, i)| {
            c.velocity += self.track(self.parts[i].follows).point_velocity(p, t);
            c
        })
    }

    /// Signed distance to the union of the colliders at `p` (world), time `t`.
    pub fn distance(&self, p: Vec3, t: f64) -> f32 {
        let poses = self.poses_at(t);
        self.query(p, t, &poses).map_or(f32::INFINITY, |c| c.distance)
    }
}
