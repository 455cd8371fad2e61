//! One strand's dynamics over one step: forces of its springs, gravity and drag, and the
//! integration — forward Euler, symplectic Euler (004) or linearized backward Euler
//! (Baraff & Witkin 1998) with the strand's banded system solved directly.

use glam::{DVec3, Mat3, Quat, Vec3};
use serde::{Deserialize, Serialize};

use super::band::BlockBand;
use super::contact::{CONTACT_DAMPING, CONTACT_STIFFNESS, Touch, contact_acceleration};
use super::strand_contact::SegmentTouch;

/// Slip speed (cm/s) below which a resting contact counts as stuck (see the friction damper).
const FRICTION_SLIP: f32 = 1e-4;
use super::model::{
    AltitudeNow, AltitudeSprings, Pin, Spring, StrandModel, TET_ALTITUDES, Tetrahedron, altitude_fade,
    altitude_now, shortest_altitude,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Integrator {
    /// Forward (explicit) Euler: x += h v, then v += h a. Needs very small steps.
    Explicit,
    /// Symplectic Euler: v += h a, then x += h v (the student project's integrator). Needs small steps.
    Symplectic,
    /// Linearized backward Euler: stable with one or a few steps per frame.
    Implicit,
}

/// Per-step inputs shared by all strands.
pub struct StepInput<'a> {
    pub h: f32,
    pub gravity: Vec3,
    pub air_damping: f32,
    /// Targets of head-pinned particles at the end of the step.
    pub targets: &'a [Vec3],
    /// Zero-length root spring stiffness (004) instead of kinematic roots, if set: the
    /// "Head" pins are then free particles pulled to their targets.
    pub root_spring: Option<f32>,
    /// Distance kept from colliders; resting contacts hold particles within it.
    pub margin: f32,
    /// Hair–solid friction coefficient.
    pub friction: f32,
    /// Head rotation: springs whose ends coincide push apart along their rest direction carried
    /// by it (a groom collapsed onto its roots grows back out).
    pub head_rotation: Quat,
    /// Strand–strand friction coefficient (segment contacts).
    pub strand_friction: f32,
}

/// Reusable buffers of one thread.
#[derive(Default)]
pub struct Scratch {
    force: Vec<Vec3>,
    kv: Vec<Vec3>,
    a: BlockBand,
    rhs: Vec<DVec3>,
    free: Vec<usize>,
    slot: Vec<Option<usize>>,
    dv_fixed: Vec<Vec3>,
}

fn outer(a: Vec3, b: Vec3) -> Mat3 {
    Mat3::from_cols(a * b.x, a * b.y, a * b.z)
}

impl Scratch {
    /// Adds a symmetric block `m` between local particles i and j (i ≠ j) of the system matrix
    /// `M − h D − h² K` and the diagonal counterparts: A_ii += m, A_jj += m, A_ij −= m.
    #[inline]
    fn pair(&mut self, i: usize, j: usize, m: Mat3) {
        if let (Some(a), Some(b)) = (self.slot[i], self.slot[j]) {
            // Both free (nearly every spring): straight into the matrix.
            let d = m.as_dmat3();
            self.a.add_diag(a, d);
            self.a.add_diag(b, d);
            self.a.add_off(a, b, -d);
            return;
        }
        self.block(i, i, m);
        self.block(j, j, m);
        self.block(i, j, -m);
    }

    /// Adds block `m` at (i, j) (and its transpose at (j, i)); blocks touching a fixed particle
    /// move to the right-hand side through its prescribed velocity change.
    #[inline]
    fn block(&mut self, i: usize, j: usize, m: Mat3) {
        let sc = self;
        match (sc.slot[i], sc.slot[j]) {
            (Some(a), Some(b)) => {
                if a == b {
                    sc.a.add_diag(a, m.as_dmat3());
                } else {
                    sc.a.add_off(a, b, m.as_dmat3());
                }
            }
            (Some(a), None) => {
                sc.rhs[a] -= (m * sc.dv_fixed[j]).as_dvec3();
            }
            (None, Some(b)) => {
                sc.rhs[b] -= (m.transpose() * sc.dv_fixed[i]).as_dvec3();
            }
            (None, None) => {}
        }
    }
}

/// Advances strand `s` by one step. `x`, `v` are the strand's own particles; `ext` an extra
/// acceleration per particle (hair–hair repulsion). Returns false if the implicit system was
/// not positive definite (the step then falls back to symplectic Euler).
///
/// The forces of the mass-spring strand (Selle et al. 2008: edge, bending and twist springs
/// between particle pairs, altitude springs across each tetrahedron), gravity, drag, contacts
/// and friction are gathered with, for the implicit integrator, their Jacobians; the step then
/// solves Baraff & Witkin 1998 Eq. 16, (M − h ∂f/∂v − h² ∂f/∂x) Δv = h (f₀ + h ∂f/∂x v₀), over
/// the free particles (kinematic ones move to their targets and enter the right-hand side).
#[allow(clippy::too_many_arguments)]
pub fn step_strand(
    model: &StrandModel,
    s: usize,
    x: &mut [Vec3],
    v: &mut [Vec3],
    ext: &[Vec3],
    touches: &[Option<Touch>],
    segments: &[(u32, SegmentTouch)],
    input: &StepInput,
    integrator: Integrator,
    sc: &mut Scratch,
) -> bool {
    let o = model.offsets[s];
    let n = x.len();
    let st = Step {
        o,
        pins: &model.pins[o..o + n],
        mass: &model.mass[o..o + n],
        input,
        implicit: integrator == Integrator::Implicit,
        h: input.h,
        hh: input.h * input.h,
    };
    st.start(x, v, sc);
    st.body_forces(v, x, ext, sc);
    st.solid_contacts(v, touches, sc);
    st.strand_contacts(v, segments, sc);
    st.springs(
        &model.springs[model.spring_offsets[s]..model.spring_offsets[s + 1]],
        model,
        x,
        v,
        sc,
    );
    st.altitudes(
        &model.tets[model.tet_offsets[s]..model.tet_offsets[s + 1]],
        model.altitude_springs,
        x,
        v,
        sc,
    );
    st.integrate(integrator, x, v, sc)
}

/// What every phase of one strand's step reads.
struct Step<'a> {
    /// The strand's first particle in the model.
    o: usize,
    pins: &'a [Pin],
    mass: &'a [f32],
    input: &'a StepInput<'a>,
    implicit: bool,
    h: f32,
    hh: f32,
}

impl Step<'_> {
    /// Sorts the particles into free ones (unknowns of the system) and kinematic ones (moved
    /// to their targets: their velocity change is prescribed), and clears the system.
    fn start(&self, x: &[Vec3], v: &[Vec3], sc: &mut Scratch) {
        let (n, input, h) = (x.len(), self.input, self.h);
        let kinematic = |p: Pin| p == Pin::World || (p == Pin::Head && input.root_spring.is_none());
        sc.force.clear();
        sc.force.resize(n, Vec3::ZERO);
        sc.kv.clear();
        sc.kv.resize(n, Vec3::ZERO);
        sc.slot.clear();
        sc.free.clear();
        sc.dv_fixed.clear();
        sc.dv_fixed.resize(n, Vec3::ZERO);
        for i in 0..n {
            if kinematic(self.pins[i]) {
                sc.slot.push(None);
                let target = match self.pins[i] {
                    Pin::Head => input.targets[self.o + i],
                    _ => x[i],
                };
                sc.dv_fixed[i] = (target - x[i]) / h - v[i];
            } else {
                sc.slot.push(Some(sc.free.len()));
                sc.free.push(i);
            }
        }
        let nf = sc.free.len();
        if self.implicit {
            sc.a.reset(nf);
            sc.rhs.clear();
            sc.rhs.resize(nf, DVec3::ZERO);
        }
    }

    /// Gravity, drag, external acceleration, mass; zero-length root springs (004).
    fn body_forces(&self, v: &[Vec3], x: &[Vec3], ext: &[Vec3], sc: &mut Scratch) {
        let (input, h, hh, implicit) = (self.input, self.h, self.hh, self.implicit);
        for i in 0..x.len() {
            let m = self.mass[i];
            sc.force[i] += m * (input.gravity + ext[i]) - m * input.air_damping * v[i];
            if let (Pin::Head, Some(k)) = (self.pins[i], input.root_spring) {
                let anchor = input.targets[self.o + i];
                sc.force[i] += -k * m * (x[i] - anchor);
                sc.kv[i] += -k * m * v[i];
                if implicit {
                    sc.block(i, i, Mat3::from_diagonal(Vec3::splat(hh * k * m)));
                }
            }
            if implicit {
                sc.block(
                    i,
                    i,
                    Mat3::from_diagonal(Vec3::splat(m + h * m * input.air_damping)),
                );
            }
        }
    }

    /// Resting contacts with the solids: one-sided penalty springs along the collider normal,
    /// and friction.
    fn solid_contacts(&self, v: &[Vec3], touches: &[Option<Touch>], sc: &mut Scratch) {
        let (input, h, hh, implicit) = (self.input, self.h, self.hh, self.implicit);
        for (i, t) in touches.iter().enumerate() {
            let Some(t) = t else { continue };
            if sc.slot[i].is_none() {
                continue;
            }
            let m = self.mass[i];
            let n = t.normal;
            let (a, k) = contact_acceleration(t.distance, input.margin);
            let rel = v[i] - t.velocity;
            let vn = rel.dot(n);
            let vt = rel - vn * n;
            let damping = if k > 0.0 {
                CONTACT_DAMPING * (k / CONTACT_STIFFNESS).sqrt()
            } else {
                0.0
            };
            sc.force[i] += m * (a - damping * vn) * n;
            // The K·v term of the linearization at the current distance (taken against the
            // colliders at the end of the step, so the particle's absolute velocity); a
            // predicted distance already includes the particle's motion.
            if !t.ahead {
                sc.kv[i] += -m * k * v[i].dot(n) * n;
            }
            // Friction (001 §7.1's Coulomb law μ·|f_n|) as a tangential damper whose
            // coefficient is lagged from the current slip speed: sliding contacts feel μ·|f_n|
            // against their motion, nearly stuck ones a damper stiff enough to hold them (creep
            // below FRICTION_SLIP). Inside the implicit solve it cannot overshoot, which
            // friction applied to the solved velocities afterwards does (a two-step limit
            // cycle).
            let mut cf = input.friction * a / vt.length().max(FRICTION_SLIP);
            if !implicit {
                cf = cf.min(0.5 / h);
            }
            sc.force[i] += -m * cf * vt;
            if implicit {
                let nn = outer(n, n);
                sc.block(
                    i,
                    i,
                    (h * m * damping + hh * m * k) * nn + h * m * cf * (Mat3::IDENTITY - nn),
                );
            }
        }
    }

    /// Contacts with other strands' segments: the same one-sided penalty as the colliders', at
    /// a point between two particles (weights 1 − s and s), with the point's effective mass.
    fn strand_contacts(&self, v: &[Vec3], segments: &[(u32, SegmentTouch)], sc: &mut Scratch) {
        let (input, h, hh, implicit) = (self.input, self.h, self.hh, self.implicit);
        let n = v.len();
        for (_, t) in segments {
            let i = t.i as usize;
            if i + 1 >= n {
                continue;
            }
            let idx = [i, i + 1];
            let w = [1.0 - t.s, t.s];
            let inv: f32 = (0..2)
                .filter(|&q| sc.slot[idx[q]].is_some())
                .map(|q| w[q] * w[q] / self.mass[idx[q]])
                .sum();
            if inv <= 0.0 {
                continue;
            }
            let m = 1.0 / inv;
            let nrm = t.normal;
            let (a, k) = contact_acceleration(t.distance, t.keep);
            if a == 0.0 && k == 0.0 {
                continue;
            }
            let vp = w[0] * v[i] + w[1] * v[i + 1];
            let rel = vp - t.velocity;
            let vn = rel.dot(nrm);
            let vt = rel - vn * nrm;
            let damping = CONTACT_DAMPING * (k / CONTACT_STIFFNESS).sqrt();
            let mut cf = input.strand_friction * a / vt.length().max(FRICTION_SLIP);
            if !implicit {
                cf = cf.min(0.5 / h);
            }
            let f = m * (a - damping * vn) * nrm - m * cf * vt;
            for q in 0..2 {
                sc.force[idx[q]] += w[q] * f;
                if implicit && !t.ahead {
                    sc.kv[idx[q]] += -w[q] * m * k * vp.dot(nrm) * nrm;
                }
            }
            if implicit {
                let nn = outer(nrm, nrm);
                let base = (h * m * damping + hh * m * k) * nn + h * m * cf * (Mat3::IDENTITY - nn);
                sc.block(idx[0], idx[0], w[0] * w[0] * base);
                sc.block(idx[1], idx[1], w[1] * w[1] * base);
                sc.block(idx[1], idx[0], w[0] * w[1] * base);
            }
        }
    }

    /// Two-particle springs (Selle et al. 2008's edge, bending and twist springs): force
    /// k (l − l₀) n̂ with damping along n̂, and the Jacobian k (n̂n̂ᵀ + max(0, 1 − l₀/l)(I −
    /// n̂n̂ᵀ)) (its geometric part clamped so the system stays positive definite).
    fn springs(&self, springs: &[Spring], model: &StrandModel, x: &[Vec3], v: &[Vec3], sc: &mut Scratch) {
        let (input, h, hh, o) = (self.input, self.h, self.hh, self.o);
        for sp in springs {
            let (a, b) = (sp.a as usize - o, sp.b as usize - o);
            let d = x[b] - x[a];
            let l = d.length();
            let nrm = if l > 1e-6 * sp.rest {
                d / l
            } else {
                input.head_rotation * (model.rest[sp.b as usize] - model.rest[sp.a as usize]) / sp.rest
            };
            let l = l.max(1e-6 * sp.rest);
            let fs = sp.k * (l - sp.rest) * nrm;
            let fd = sp.c * (v[b] - v[a]).dot(nrm) * nrm;
            sc.force[a] += fs + fd;
            sc.force[b] -= fs + fd;
            if self.implicit {
                let nn = outer(nrm, nrm);
                let geo = (1.0 - sp.rest / l).max(0.0);
                let j = sp.k * (nn + geo * (Mat3::IDENTITY - nn));
                let kvd = j * (v[b] - v[a]);
                sc.kv[a] += kvd;
                sc.kv[b] -= kvd;
                sc.pair(a, b, h * sp.c * nn + hh * j);
            }
        }
    }

    /// Altitude springs (Selle et al. 2008; see `model`): per tetrahedron, the spring on its
    /// shortest current altitude (or, with [`AltitudeSprings::All`], one on each non-flat rest
    /// altitude), pulling the signed altitude back to its rest value; faded out where the
    /// chosen face or edge pair is near-degenerate; the Jacobian is rank one along the
    /// altitude.
    fn altitudes(
        &self,
        tets: &[Tetrahedron],
        model: AltitudeSprings,
        x: &[Vec3],
        v: &[Vec3],
        sc: &mut Scratch,
    ) {
        let o = self.o;
        for t in tets {
            let idx = t.p.map(|i| i as usize - o);
            let p = idx.map(|i| x[i]);
            match model {
                AltitudeSprings::Selle => {
                    if let Some((j, now)) = shortest_altitude(p) {
                        self.altitude_spring(t, idx, t.rest[j], &now, v, sc);
                    }
                }
                AltitudeSprings::All => {
                    for (j, a) in TET_ALTITUDES.iter().enumerate() {
                        if t.used & (1 << j) != 0
                            && let Some(now) = altitude_now(*a, p)
                        {
                            self.altitude_spring(t, idx, t.rest[j], &now, v, sc);
                        }
                    }
                }
            }
        }
    }

    /// One altitude spring: force −k (h − rest) − c ḣ along the altitude, spread over the
    /// corners by the altitude's gradient weights.
    fn altitude_spring(
        &self,
        t: &Tetrahedron,
        idx: [usize; 4],
        rest: f32,
        now: &AltitudeNow,
        v: &[Vec3],
        sc: &mut Scratch,
    ) {
        let (h, hh) = (self.h, self.hh);
        let fade = altitude_fade(now.sine);
        if fade == 0.0 {
            return;
        }
        let (k, c) = (fade * t.k, fade * t.c);
        let (nrm, w) = (now.n, now.w);
        // Rate of change of the altitude.
        let vel: f32 = (0..4).map(|q| w[q] * v[idx[q]].dot(nrm)).sum();
        let f = -k * (now.h - rest) - c * vel;
        for q in 0..4 {
            sc.force[idx[q]] += f * w[q] * nrm;
        }
        if self.implicit {
            let nn = outer(nrm, nrm);
            for q in 0..4 {
                sc.kv[idx[q]] += -k * w[q] * vel * nrm;
                for r in 0..=q {
                    let m = (h * c + hh * k) * w[q] * w[r] * nn;
                    sc.block(idx[q], idx[r], m);
                }
            }
        }
    }

    /// The step itself: forward Euler, symplectic Euler, or Baraff & Witkin's Eq. 16 solved
    /// on the strand's banded system (symplectic Euler when it is not positive definite);
    /// kinematic particles then move to their targets.
    fn integrate(&self, integrator: Integrator, x: &mut [Vec3], v: &mut [Vec3], sc: &mut Scratch) -> bool {
        let (h, mass, input) = (self.h, self.mass, self.input);
        let n = x.len();
        let apply_fixed = |x: &mut [Vec3], v: &mut [Vec3], sc: &Scratch| {
            for i in 0..n {
                if sc.slot[i].is_none() {
                    v[i] += sc.dv_fixed[i];
                    x[i] += h * v[i];
                }
            }
        };
        match integrator {
            Integrator::Explicit => {
                for &i in &sc.free {
                    x[i] += h * v[i];
                    v[i] += h * sc.force[i] / mass[i];
                }
                apply_fixed(x, v, sc);
                true
            }
            Integrator::Symplectic => {
                symplectic(x, v, mass, input, sc);
                apply_fixed(x, v, sc);
                true
            }
            Integrator::Implicit => {
                // rhs = h (f + h K v) − (coupling to fixed particles, already subtracted).
                for (slot, &i) in sc.free.iter().enumerate() {
                    sc.rhs[slot] += (h * (sc.force[i] + h * sc.kv[i])).as_dvec3();
                }
                if !sc.a.factor() {
                    symplectic(x, v, mass, input, sc);
                    apply_fixed(x, v, sc);
                    return false;
                }
                let mut rhs = std::mem::take(&mut sc.rhs);
                sc.a.solve(&mut rhs);
                for (slot, &i) in sc.free.iter().enumerate() {
                    v[i] += rhs[slot].as_vec3();
                }
                sc.rhs = rhs;
                for &i in &sc.free {
                    x[i] += h * v[i];
                }
                apply_fixed(x, v, sc);
                true
            }
        }
    }
}

fn symplectic(x: &mut [Vec3], v: &mut [Vec3], mass: &[f32], input: &StepInput, sc: &Scratch) {
    for &i in &sc.free {
        v[i] += input.h * sc.force[i] / mass[i];
    }
    for &i in &sc.free {
        x[i] += input.h * v[i];
    }
}

/// Energy of a strand: kinetic, two-particle springs and gravity (altitude springs and contacts
/// left out), for tests and monitoring.
pub fn energy(model: &StrandModel, s: usize, x: &[Vec3], v: &[Vec3], gravity: Vec3) -> f64 {
    let o = model.offsets[s];
    let mut e = 0.0f64;
    for (i, (p, u)) in x.iter().zip(v).enumerate() {
        let m = model.mass[o + i] as f64;
        e += 0.5 * m * u.length_squared() as f64 - m * gravity.dot(*p) as f64;
    }
    for sp in &model.springs[model.spring_offsets[s]..model.spring_offsets[s + 1]] {
        let l = x[sp.b as usize - o].distance(x[sp.a as usize - o]) as f64;
        e += 0.5 * sp.k as f64 * (l - sp.rest as f64).powi(2);
    }
    e
}
