//! Contacts with the colliders, in two layers.
//!
//! * Resting contact: particles within `margin` of a collider at the start of a step get a stiff
//!   one-sided penalty spring along the collider's normal, integrated implicitly with the
//!   strand's springs, so hair lying on a head is held there instead of sinking under gravity
//!   and being thrown back out every step. Its impulse sets the friction budget.
//! * Penetration: after the step, particles still inside a collider are projected out.
//!
//! Both use the friction approximation of 001 §7.1 (after Bridson et al. 2002): the normal
//! velocity change Δv_n sets a budget μ·Δv_n; a contact whose tangential relative speed is below
//! it sticks, otherwise the tangential relative velocity shrinks by it.
//!
//! Strain limiting (`super::inextensible`) runs between the two.
//!
//! [`Contact::Reflect`] is the student project's response instead (004, `manageCollisions`):
//! no resting contact force; after the step a particle inside a collider is put back on its
//! surface and its velocity (relative to the surface: the project's head is a sphere whose own
//! speed it ignores) is reflected about the normal and scaled by `reflect_keep` (the project's
//! 0.6), tangential part included.

use glam::Vec3;

use super::model::StrandModel;
use crate::collide::ColliderFrame;

/// Penalty stiffness of resting contacts, an acceleration per cm inside the margin (1/s²):
/// gravity alone sinks a resting particle 981 / 2e5 ≈ 0.005 cm into its margin.
pub const CONTACT_STIFFNESS: f32 = 2.0e6;
/// Normal damping of resting contacts (1/s), critical for [`CONTACT_STIFFNESS`].
pub const CONTACT_DAMPING: f32 = 2800.0;

/// How particles meet the colliders.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum Contact {
    /// Resting-contact penalty inside the implicit solve, then projection with Coulomb friction
    #[default]
    Penalty,
    /// The student project's: projected onto the surface, velocity reflected and scaled (0.6)
    Reflect,
}

/// What a free particle found inside a collider after a step gets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Response {
    /// [`Contact::Penalty`]'s: out to a quarter of `margin`, with Coulomb friction `mu` on the
    /// normal velocity change over a step of `h` seconds.
    Project { margin: f32, mu: f32, h: f32 },
    /// [`Contact::Reflect`]'s (004): onto the surface, the velocity relative to it reflected
    /// about the normal and scaled by `keep`.
    Reflect { keep: f32 },
}

/// A particle near a collider at the start of a step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Touch {
    /// Signed distance to the collider (cm): now for particles within reach of the contact
    /// force, where the implicit step linearizes it; predicted for the end of the step (were
    /// the particle to keep its velocity) for particles about to come within reach.
    pub distance: f32,
    /// Whether `distance` is the prediction.
    pub ahead: bool,
    /// Outward normal.
    pub normal: Vec3,
    /// Velocity of the collider's surface.
    pub velocity: Vec3,
}

/// Contact acceleration and its derivative with respect to depth, at `distance` from a collider
/// with a `margin`: linear (`CONTACT_STIFFNESS` per cm) deeper than `margin / 2` inside the
/// margin, a quadratic ramp from there to `1.5 margin`, zero beyond. The ramp keeps the force's
/// derivative continuous: with an abrupt switch at the margin, particles resting there chatter
/// in and out of contact from one step to the next.
pub fn contact_acceleration(distance: f32, margin: f32) -> (f32, f32) {
    let delta = 0.5 * margin;
    let depth = margin - distance;
    if depth >= delta {
        (CONTACT_STIFFNESS * depth, CONTACT_STIFFNESS)
    } else if depth > -delta {
        let r = depth + delta;
        (
            CONTACT_STIFFNESS * r * r / (4.0 * delta),
            CONTACT_STIFFNESS * r / (2.0 * delta),
        )
    } else {
        (0.0, 0.0)
    }
}

/// Finds the free particles of strand `s` (local indices) that will be within reach of the
/// contact force at the end of a step of `h` seconds if they keep their velocity `v`. The
/// colliders are taken at the end of the step, so their own motion is accounted for; looking
/// ahead catches hair that a fast head is about to hit, inside the implicit solve, instead of
/// projecting it out from deep inside afterwards.
#[allow(clippy::too_many_arguments)]
pub fn touches(
    model: &StrandModel,
    s: usize,
    x: &[Vec3],
    v: &[Vec3],
    h: f32,
    colliders: &ColliderFrame,
    margin: f32,
    roots_free: bool,
    out: &mut Vec<Option<Touch>>,
) {
    let o = model.offsets[s];
    let reach = 1.5 * margin;
    let fastest = v.iter().map(|u| u.length_squared()).fold(0.0f32, f32::max).sqrt();
    let (center, radius) = bounding_sphere(x);
    let parts = colliders.parts_near(center, radius, reach + h * fastest);
    out.clear();
    out.extend(x.iter().enumerate().map(|(i, p)| {
        if parts == 0 || !model.pins[o + i].collides(roots_free) {
            return None;
        }
        // The prediction below is at least the distance less h|v|: colliders beyond that
        // cannot matter.
        let c = colliders.query_near(*p, reach + h * v[i].length(), parts)?;
        if c.distance < reach {
            return Some(Touch {
                distance: c.distance,
                ahead: false,
                normal: c.normal,
                velocity: c.velocity,
            });
        }
        let predicted = c.distance + h * v[i].dot(c.normal);
        (predicted < reach).then_some(Touch {
            distance: predicted,
            ahead: true,
            normal: c.normal,
            velocity: c.velocity,
        })
    }));
}

/// A sphere holding every point of `x`: the centre of their box and its half diagonal.
fn bounding_sphere(x: &[Vec3]) -> (Vec3, f32) {
    let (lo, hi) = x.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(l, h), p| {
        (l.min(*p), h.max(*p))
    });
    if !(lo.is_finite() && hi.is_finite()) {
        // No points, or non-finite ones: a sphere that culls nothing.
        return (Vec3::ZERO, f32::INFINITY);
    }
    (0.5 * (lo + hi), 0.5 * lo.distance(hi))
}

/// Coulomb friction on relative velocity `rel` against normal `n`, given the normal velocity
/// change `normal_dv` the contact applied: sticks within the budget μ·Δv_n, else slows.
pub fn friction(rel: Vec3, n: Vec3, normal_dv: f32, mu: f32) -> Vec3 {
    let vn = rel.dot(n);
    let vt = rel - vn * n;
    let budget = mu * normal_dv.max(0.0);
    let speed = vt.length();
    let vt = if speed <= budget {
        Vec3::ZERO
    } else {
        vt * (1.0 - budget / speed)
    };
    vt + vn * n
}

/// Contact statistics of a strand.
#[derive(Clone, Copy, Debug, Default)]
pub struct ContactStats {
    pub contacts: u32,
    /// Largest penetration found before projection (positive depth).
    pub deepest: f32,
}

/// Projections per particle and step at most.
const PROJECTION_PASSES: usize = 4;

/// Moves free particles of strand `s` that ended the step inside a collider back out of it
/// with `response` (projected with friction they are resting contacts from the next step on).
pub fn collide(
    model: &StrandModel,
    s: usize,
    x: &mut [Vec3],
    v: &mut [Vec3],
    colliders: &ColliderFrame,
    response: Response,
    roots_free: bool,
) -> ContactStats {
    let o = model.offsets[s];
    let mut st = ContactStats::default();
    let (center, radius) = bounding_sphere(x);
    let parts = colliders.parts_near(center, radius, 0.0);
    if parts == 0 {
        return st;
    }
    for i in 0..x.len() {
        if !model.pins[o + i].collides(roots_free) {
            continue;
        }
        // A particle pushed out of one collider may land in another where they meet (neck and
        // shoulders, cranium and neck): project again, a few times (asking every collider: the
        // particle may have left the strand's sphere).
        for pass in 0..PROJECTION_PASSES {
            let near = if pass == 0 { parts } else { u64::MAX };
            let Some(c) = colliders.query_near(x[i], 0.0, near) else {
                break;
            };
            if c.distance >= 0.0 {
                break;
            }
            if pass == 0 {
                st.contacts += 1;
                st.deepest = st.deepest.max(-c.distance);
            }
            let rel = v[i] - c.velocity;
            let rel = match response {
                Response::Project { margin, mu, h } => {
                    // Out to a fraction of the margin, where the resting contact takes over.
                    let push = 0.25 * margin - c.distance;
                    x[i] += push * c.normal;
                    let vn = rel.dot(c.normal);
                    let normal_dv = (-vn).max(0.0) + push / h;
                    friction(rel, c.normal, normal_dv, mu) - vn.min(0.0) * c.normal
                }
                Response::Reflect { keep } => {
                    x[i] -= c.distance * c.normal;
                    keep * (rel - 2.0 * rel.dot(c.normal) * c.normal)
                }
            };
            v[i] = c.velocity + rel;
        }
    }
    st
}
