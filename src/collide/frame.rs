//! The colliders frozen at one instant, for the many queries of a simulation step: each
//! collider's world-to-object transform and each body part's velocity are worked out once (in
//! single precision), instead of per query.

use glam::{Affine3A, Mat3A, Vec3, Vec3A};

use super::{Bound, Colliders, Contact, Follow, segment_distance};

struct Part {
    to_local: Affine3A,
    /// Object-space normals to world space.
    rotation: Mat3A,
    follows: Follow,
    /// The shape's [`super::Bound`] in world space, if it has one.
    bound: Option<Bound>,
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
                    bound: c.shape.bound().map(|b| Bound {
                        a: world.transform_point3(b.a),
                        b: world.transform_point3(b.b),
                        ..b
                    }),
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

    /// The colliders (bit i: collider i; those past the 64th always set) that may come within
    /// `reach` of some point within `radius` of `center`: a strand's bounding sphere culls
    /// the colliders none of its particles can touch, for [`ColliderFrame::query_near`].
    pub fn parts_near(&self, center: Vec3, radius: f32, reach: f32) -> u64 {
        let mut mask = if self.parts.len() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.parts.len()) - 1
        };
        for (i, part) in self.parts.iter().enumerate().take(64) {
            if let Some(b) = part.bound
                && b.slope * (segment_distance(center, b.a, b.b) - b.radius - radius) > reach
            {
                mask &= !(1u64 << i);
            }
        }
        mask
    }

    /// The contact with the deepest collider at `p` when it is nearer than `reach`: the same
    /// answer as [`ColliderFrame::query`] whenever that one's distance is below `reach`, and
    /// otherwise None or a contact at `reach` or farther. Only the colliders in `parts` (from
    /// [`ColliderFrame::parts_near`] for a sphere holding `p`, or `u64::MAX`) are asked, and of
    /// those only the ones whose bounds come within `reach`: the simulation's contact tests,
    /// where most hair is far from most colliders.
    pub fn query_near(&self, p: Vec3, reach: f32, parts: u64) -> Option<Contact> {
        self.query_parts(p, |i, _| self.may_reach(i, p, reach, parts))
    }

    /// The props among [`ColliderFrame::parts_near`]'s colliders (those past the 64th always set).
    pub fn props_near(&self, center: Vec3, radius: f32, reach: f32) -> u64 {
        let mut mask = self.parts_near(center, radius, reach);
        for (i, part) in self.parts.iter().enumerate().take(64) {
            if !matches!(part.follows, Follow::Prop(_)) {
                mask &= !(1u64 << i);
            }
        }
        mask
    }

    /// [`ColliderFrame::query_near`] among the props alone: the answer of
    /// [`ColliderFrame::query_props`] whenever its distance is below `reach`.
    pub fn query_props_near(&self, p: Vec3, reach: f32, parts: u64) -> Option<Contact> {
        self.query_parts(p, |i, f| {
            matches!(f, Follow::Prop(_)) && self.may_reach(i, p, reach, parts)
        })
    }

    /// Whether collider `i` is in `parts` and its bound comes within `reach` of `p`.
    fn may_reach(&self, i: usize, p: Vec3, reach: f32, parts: u64) -> bool {
        if i < 64 && parts & (1u64 << i) == 0 {
            return false;
        }
        match self.parts[i].bound {
            Some(b) => b.slope * (segment_distance(p, b.a, b.b) - b.radius) <= reach,
            None => true,
        }
    }

    /// The contact with the deepest prop (a collider on its own track) at `p`.
    pub fn query_props(&self, p: Vec3) -> Option<Contact> {
        self.query_where(p, |f| matches!(f, Follow::Prop(_)))
    }

    /// Every collider's [`Bound`] in world space, or None when one has none: the surfaces all
    /// lie inside these capsules (a renderer's rays skip what is outside them).
    pub fn bounds(&self) -> Option<Vec<Bound>> {
        self.parts.iter().map(|p| p.bound).collect()
    }

    /// Whether any collider is a prop.
    pub fn has_props(&self) -> bool {
        self.parts.iter().any(|p| matches!(p.follows, Follow::Prop(_)))
    }

    /// The contact with the deepest collider whose part `keep` accepts.
    pub fn query_where(&self, p: Vec3, keep: impl Fn(Follow) -> bool) -> Option<Contact> {
        self.query_parts(p, |_, f| keep(f))
    }

    /// The contact with the deepest collider `keep` accepts (by index and part).
    fn query_parts(&self, p: Vec3, keep: impl Fn(usize, Follow) -> bool) -> Option<Contact> {
        let mut best: Option<(f32, Vec3, Vec3, usize)> = None;
        for (i, (c, part)) in self.colliders.parts.iter().zip(&self.parts).enumerate() {
            if !keep(i, part.follows) {
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
