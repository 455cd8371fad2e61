//! The colliders frozen at one instant, for the many queries of a simulation step: each
//! collider's world-to-object transform and each body part's velocity are worked out once (in
//! single precision), instead of per query.

use glam::{Affine3A, Mat3A, Vec3, Vec3A};

use super::{Colliders, Contact, Follow};

struct Part {
    to_local: Affine3A,
    /// Object-space normals to world space.
    rotation: Mat3A,
    follows: Follow,
}

/// Rigid velocity field of a body part: v(p) = linear + angular × (p − center).
#[derive(Clone, Copy)]
struct Motion {
    linear: Vec3A,
    angular: Vec3A,
    center: Vec3A,
}

/// [`Colliders`] at one time; see [`Colliders::at`].
pub struct ColliderFrame<'a> {
    colliders: &'a Colliders,
    t: f64,
    parts: Vec<Part>,
    head: Motion,
    torso: Motion,
    props: Vec<Motion>,
}

impl Colliders {
    /// The colliders at time `t`, ready for queries.
    pub fn at(&self, t: f64) -> ColliderFrame<'_> {
        let parts = self
            .parts
            .iter()
            .map(|c| {
                let track = self.track(c.follows);
                let pose = track.at(t).then_after(&c.offset);
                let world =
                    Affine3A::from_rotation_translation(pose.rotation.as_quat(), pose.translation.as_vec3());
                Part {
                    to_local: world.inverse(),
                    rotation: world.matrix3,
                    follows: c.follows,
                }
            })
            .collect();
        let motion = |track: &crate::motion::HeadTrack| {
            let v = track.velocity(t);
            Motion {
                linear: v.linear.as_vec3().into(),
                angular: v.angular.as_vec3().into(),
                center: track.at(t).translation.as_vec3().into(),
            }
        };
        ColliderFrame {
            colliders: self,
            t,
            parts,
            head: motion(&self.head),
            torso: motion(&self.torso),
            props: self.props.iter().map(motion).collect(),
        }
    }
}

impl ColliderFrame<'_> {
    /// The contact with the deepest collider at world point `p`.
    pub fn query(&self, p: Vec3) -> Option<Contact> {
        self.query_where(p, |_| true)
    }

    /// The contact with the deepest prop (a collider on its own track) at `p`.
    pub fn query_props(&self, p: Vec3) -> Option<Contact> {
        self.query_where(p, |f| matches!(f, Follow::Prop(_)))
    }

    /// Whether any collider is a prop.
    pub fn has_props(&self) -> bool {
        self.parts.iter().any(|p| matches!(p.follows, Follow::Prop(_)))
    }

    /// The contact with the deepest collider whose part `keep` accepts.
    pub fn query_where(&self, p: Vec3, keep: impl Fn(Follow) -> bool) -> Option<Contact> {
        let mut best: Option<(f32, Vec3, Vec3, usize)> = None;
        for (i, (c, part)) in self.colliders.parts.iter().zip(&self.parts).enumerate() {
            if !keep(part.follows) {
                continue;
            }
            let (d, n, v) = c.shape.sdf_at(part.to_local.transform_point3(p), self.t);
            if best.is_none_or(|(b, _, _, _)| d < b) {
                best = Some((d, n, v, i));
            }
        }
        best.map(|(distance, n, own, i)| {
            let part = &self.parts[i];
            let m = match part.follows {
                Follow::Head => self.head,
                Follow::Torso => self.torso,
                Follow::Prop(i) => self.props[i],
            };
            let velocity =
                m.linear + m.angular.cross(Vec3A::from(p) - m.center) + part.rotation * Vec3A::from(own);
            Contact {
                distance,
                normal: (part.rotation * Vec3A::from(n)).into(),
                velocity: velocity.into(),
            }
        })
    }
}
