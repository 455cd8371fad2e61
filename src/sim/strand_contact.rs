//! Strand–strand contacts: segments of different strands kept a hair thickness apart, beside
//! the volumetric hair–hair grid (which only smooths velocities and pushes down density
//! gradients, so sparse strands pass through each other). Off by default
//! (`[simulate] strand_contacts`, `tress simulate --strand-contacts`).
//!
//! Three layers, each catching what the one before leaves:
//!
//! * **Implicit segment contacts** ([`StrandContacts::touches`], integrated in
//!   `strand::step_strand`): before each step, pairs of segments of different strands within
//!   1.5 × the thickness, or predicted to come within it, get the colliders' one-sided penalty
//!   force (`contact::contact_acceleration`, with its damping and the Coulomb friction of
//!   Bridson et al. 2002 as a lagged tangential damper) at their closest points, spread over each
//!   segment's two particles by the barycentric weights, with its Jacobian in the strand's
//!   implicit system. Each strand meets the other as a surface moving with the pair's
//!   mass-weighted mean velocity and takes its share of the overlap (by inverse mass), so the
//!   strand's own springs decide how it gives way.
//! * **Response over the step** ([`StrandContacts::resolve`]), after every strand has stepped:
//!   * broad phase: every segment's box, swept from the start of the step to its end and grown
//!     by the thickness, goes into the cells of a uniform grid it overlaps; segments sharing a
//!     cell are candidate pairs (each pair reported once, in the lowest cell both boxes share);
//!   * narrow phase: a continuous edge–edge test (Provot 1997, Bridson et al. 2002) finds pairs
//!     that passed through each other during the step, the particles moving linearly: the
//!     signed volume of the four points changes sign when the segments' lines meet; where it
//!     does, with the closest points inside both segments and touching, the pair crossed and
//!     keeps the side it came from. Other pairs are in contact when their closest points are
//!     closer than the thickness at the end of the step. Segments closer than the thickness in
//!     the rest groom (strands converging at their roots) keep their rest distance instead;
//!   * response: Gauss–Seidel sweeps of sequential impulses (Catto 2005): per pair, an
//!     accumulated push (positions back to the separation kept), an accumulated normal
//!     velocity change (inelastic: approaching velocity removed, none added, so a pair that
//!     starts closer than it keeps is separated without being thrown apart) and accumulated
//!     friction within μ times the normal response, each clamped as a total so sweeps over
//!     pairs that share particles converge instead of overshooting; moved strands get their
//!     lengths back (positions only) and meet the colliders between sweeps.
//! * **Fail-safe**: a pair that still passes through between the start of the step and the
//!   response's result has both strands put back where the step started, at rest.
//!
//! Every sum is taken in a fixed order (pairs sorted by cell and segment), so results do not
//! depend on the number of threads.

use glam::Vec3;
use rayon::prelude::*;
use serde::Serialize;

/// Cells a segment's box may overlap before it is left out of the broad phase (a segment that
/// long has already exploded; the speed check reports it).
const MAX_CELLS_PER_SEGMENT: usize = 512;

/// Detection rounds per step (the later ones over the response itself).
const ROUNDS: usize = 3;

/// A pair's accumulated push is at most this multiple of its `limit` (the other constraints —
/// lengths, colliders, other pairs — may undo part of each push, so the total can exceed what
/// the step moved; the bound keeps a pair detected deep from flinging its strands).
const PUSH_LIMIT: f32 = 4.0;

/// Rounds of the fail-safe at most (each puts back at least one more strand).
const FAIL_SAFE_ROUNDS: usize = 8;

/// A pair counts as resolved once its separation is within this share of the thickness: the
/// response iterates until every pair is (or the iterations run out).
const RESOLVED: f32 = 0.99;

/// Settings of strand–strand contacts.
#[derive(Clone, Copy, Debug)]
pub struct ContactParams {
    /// Distance kept between strands' centre lines (cm).
    pub thickness: f32,
    /// Coulomb friction coefficient between strands.
    pub friction: f32,
    /// Gauss–Seidel sweeps of the response at most (it stops once every pair is resolved).
    pub iterations: u32,
}

/// What one pass found.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct StrandContactStats {
    /// Candidate segment pairs from the broad phase.
    pub candidates: u64,
    /// Pairs in contact (closer than the thickness at the end of the step).
    pub contacts: u64,
    /// Largest overlap found (thickness − separation, cm; > thickness: the pair had crossed).
    pub deepest: f32,
    /// Pairs still closer than the thickness after the response (the iterations ran out).
    pub unresolved: u64,
    /// Sweeps the response took.
    pub iterations: u32,
    /// Strands the fail-safe put back to the start of the step (still crossing another).
    pub reverted: u64,
}

/// A pair of segments in contact: particles `p` (first segment: p[0], p[1]; second: p[2],
/// p[3]).
#[derive(Clone, Copy, Debug)]
struct Pair {
    p: [u32; 4],
    /// The strands of the two segments.
    strands: [u32; 2],
    /// Separation kept: the thickness, or the segments' distance in the rest groom when that is
    /// smaller (strands groomed closer than the thickness, as near the roots, stay as groomed
    /// instead of being pushed apart).
    keep: f32,
    /// For a pair that passed through each other during the step: the side the first segment
    /// must return to, as the segments' common perpendicular e_a × e_b at the crossing times the
    /// side's sign (ZERO for pairs that did not cross).
    side: Vec3,
    /// Largest separation change the response may ask of the pair in one step: the thickness
    /// plus how far the pair's closest points moved relative to each other over the step (a
    /// correction never undoes more than the step did).
    limit: f32,
    /// Accumulated response of this step (sequential impulses, Catto 2005): separation pushed
    /// (cm), normal velocity removed (cm/s) and tangential velocity removed by friction. Each
    /// sweep may lower them again (never below zero), so Gauss–Seidel sweeps over pairs that
    /// share particles converge instead of overshooting.
    pushed: f32,
    stopped: f32,
    held: Vec3,
}

/// Segments within this sine of parallel have no reliable common perpendicular.
const PARALLEL_SINE: f32 = 0.05;

impl Pair {
    /// Barycentric weights of the closest points now (w[0] + w[1] = 1, w[2] + w[3] = −1), the
    /// contact normal (from the second segment's closest point to the first's, turned round
    /// while a crossed pair is on the wrong side) and the separation along it (the closest
    /// points' distance, negative while a crossed pair is on the wrong side).
    fn geometry(&self, x: &[Vec3]) -> ([f32; 4], Vec3, f32) {
        let [a0, a1, b0, b1] = self.p.map(|i| x[i as usize]);
        let (s, t) = closest_parameters(a0, a1, b0, b1);
        let w = [1.0 - s, s, -(1.0 - t), -t];
        let d = a0.lerp(a1, s) - b0.lerp(b1, t);
        let dist = d.length();
        if dist <= 1e-6 {
            let n = if self.side != Vec3::ZERO {
                self.side.normalize_or(Vec3::Y)
            } else {
                (a1 - a0).cross(b1 - b0).normalize_or(Vec3::Y)
            };
            return (w, n, 0.0);
        }
        if d.dot(self.side) < 0.0 {
            // Crossed and still on the wrong side: back the way it came.
            return (w, -d / dist, -dist);
        }
        (w, d / dist, dist)
    }
}

/// Whether segments a and b, moving linearly from (a0, a1, b0, b1) to the same points in `x1`
/// over the step, pass through each other: the signed volume of the four points (zero when the
/// segments' lines meet) changes sign at some time τ, found on 4 samples and refined by
/// bisection, and at τ the segments' closest points are within them and close. Returns the
/// side the first segment was on before (the common perpendicular at τ, signed).
fn crossing(x0: [Vec3; 4], x1: [Vec3; 4]) -> Option<Vec3> {
    let at = |tau: f32| -> [Vec3; 4] { std::array::from_fn(|k| x0[k].lerp(x1[k], tau)) };
    let volume = |p: [Vec3; 4]| -> f32 { (p[0] - p[2]).dot((p[1] - p[0]).cross(p[3] - p[2])) };
    const SAMPLES: usize = 4;
    let mut prev = (0.0f32, volume(x0));
    for k in 1..=SAMPLES {
        let tau = k as f32 / SAMPLES as f32;
        let v = volume(at(tau));
        if prev.1 == 0.0 || v == 0.0 || (prev.1 < 0.0) == (v < 0.0) {
            prev = (tau, v);
            continue;
        }
        // A sign change in (prev.0, tau): bisect.
        let (mut lo, mut hi, vlo) = (prev.0, tau, prev.1);
        for _ in 0..16 {
            let mid = 0.5 * (lo + hi);
            let vm = volume(at(mid));
            if (vm < 0.0) == (vlo < 0.0) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let p = at(0.5 * (lo + hi));
        let (ea, eb) = (p[1] - p[0], p[3] - p[2]);
        let (s, t) = closest_parameters(p[0], p[1], p[2], p[3]);
        let gap = p[0].lerp(p[1], s).distance(p[2].lerp(p[3], t));
        let scale = ea.length().max(eb.length());
        let c = ea.cross(eb);
        if gap <= 1e-3 * scale
            && s > 0.0
            && s < 1.0
            && t > 0.0
            && t < 1.0
            && c.length() > PARALLEL_SINE * ea.length() * eb.length()
        {
            // The side before the crossing: the sign of the volume just before it.
            let before = at(lo);
            let side = (before[0] - before[2]).dot(c);
            return Some(if side >= 0.0 { c } else { -c });
        }
        prev = (tau, v);
    }
    None
}

/// A contact of one of a strand's segments with another strand's segment, worked out at the
/// start of a step and integrated implicitly with the strand's springs, like the colliders'
/// resting contacts (`contact.rs`): each strand meets the other as a surface moving with the
/// pair's mass-weighted mean velocity, and takes its share of the overlap (the other strand
/// takes the rest in its own solve), so the strands' own stiffness — inextensibility, bending,
/// held ends — shapes how they give way, within one solve, instead of position corrections
/// alternating with length constraints afterwards.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegmentTouch {
    /// First particle of the segment (index within its strand).
    pub i: u32,
    /// Parameter of the contact point along the segment (weights 1 − s and s).
    pub s: f32,
    /// Normal pointing toward this strand.
    pub normal: Vec3,
    /// This strand's share of the separation: the distance it would have if the other strand
    /// took its own share of the overlap (cm); predicted for the end of the step when `ahead`.
    pub distance: f32,
    pub ahead: bool,
    /// Separation the pair keeps (the contact force's margin).
    pub keep: f32,
    /// Velocity the contact point's normal and tangential relative motion is measured against.
    pub velocity: Vec3,
}

/// What runs after every sweep of the response: positions, velocities, and which strands the
/// sweep moved.
pub type AfterSweep<'a> = dyn FnMut(&mut [Vec3], &mut [Vec3], &[bool]) + 'a;

/// Reusable buffers.
#[derive(Default)]
pub struct StrandContacts {
    /// First particle of each segment and its strand.
    segments: Vec<(u32, u32)>,
    boxes: Vec<(Vec3, Vec3)>,
    entries: Vec<(u64, u32)>,
    /// Positions predicted for the end of the step (`touches`).
    ahead: Vec<Vec3>,
}

/// Cell coordinates packed into a key (21 bits each, offset so negative cells stay ordered).
fn key(c: [i64; 3]) -> u64 {
    let f = |v: i64| ((v + (1 << 20)).clamp(0, (1 << 21) - 1)) as u64;
    (f(c[0]) << 42) | (f(c[1]) << 21) | f(c[2])
}

fn cell_of(p: Vec3, inv: f32) -> [i64; 3] {
    let q = (p * inv).floor();
    [q.x as i64, q.y as i64, q.z as i64]
}

/// Brings a strand's stretched edges back to at most `(1 + max_strain)` times their rest length
/// (`rest(i)`, edge i from particle i to i + 1) by moving both ends in proportion to their
/// inverse masses (kinematic particles, inverse mass 0, stay), a sweep from the root and one
/// back. Positions only: velocities are left as the contact response set them (a velocity
/// following every correction would throw strands apart after the response pushed them). Unlike
/// strain limiting from the root, a strand held at both ends or pushed in its middle is not
/// dragged along its length.
pub fn keep_lengths(x: &mut [Vec3], inv_mass: &[f32], rest: impl Fn(usize) -> f32, max_strain: f32) {
    let n = x.len();
    if n < 2 {
        return;
    }
    let mut edge = |i: usize| {
        let max = rest(i) * (1.0 + max_strain);
        let d = x[i + 1] - x[i];
        let l = d.length();
        let (wa, wb) = (inv_mass[i], inv_mass[i + 1]);
        if l <= max || l <= 0.0 || wa + wb <= 0.0 {
            return;
        }
        let c = (l - max) / (l * (wa + wb)) * d;
        x[i] += wa * c;
        x[i + 1] -= wb * c;
    };
    for i in 0..n - 1 {
        edge(i);
    }
    for i in (0..n - 1).rev() {
        edge(i);
    }
}

/// Closest points of segments p0p1 and q0q1: parameters (s, t) in [0, 1].
pub fn closest_parameters(p0: Vec3, p1: Vec3, q0: Vec3, q1: Vec3) -> (f32, f32) {
    let d1 = p1 - p0;
    let d2 = q1 - q0;
    let r = p0 - q0;
    let a = d1.dot(d1);
    let e = d2.dot(d2);
    let f = d2.dot(r);
    const EPS: f32 = 1e-12;
    if a <= EPS && e <= EPS {
        return (0.0, 0.0);
    }
    if a <= EPS {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(r);
    if e <= EPS {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(d2);
    let denom = a * e - b * b;
    let mut s = if denom > EPS * a * e {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (s, t)
}

impl StrandContacts {
    /// Finds the pairs in contact over a step from `x0` to `x` and applies the response to `x`
    /// and `v` (positions move by h·Δv, so x stays x0 + h·v for the particles that moved).
    /// `offsets` delimit strands; `inv_mass` is 0 for kinematic particles; `rest` is the rest
    /// groom (any rigid placement: only distances are read). Returns the stats and,
    /// per strand, whether the response moved it. `after_sweep` runs after every sweep of the
    /// response with the strands that sweep moved (the simulation limits their strain there,
    /// so contacts and inextensibility are satisfied together).
    #[allow(clippy::too_many_arguments)]
    pub fn resolve(
        &mut self,
        params: &ContactParams,
        offsets: &[usize],
        inv_mass: &[f32],
        rest: &[Vec3],
        x0: &[Vec3],
        x: &mut [Vec3],
        v: &mut [Vec3],
        h: f32,
        moved: &mut Vec<bool>,
        after_sweep: &mut AfterSweep,
    ) -> StrandContactStats {
        let mut stats = StrandContactStats::default();
        let strands = offsets.len().saturating_sub(1);
        moved.clear();
        moved.resize(strands, false);
        let thickness = params.thickness;
        if strands < 2 || thickness <= 0.0 || h <= 0.0 {
            return stats;
        }
        // Rounds: detect over the step (with the crossing test) and respond; then detect again
        // at the responded positions (by distance only: the response's own motion undoes
        // crossings, which the crossing test would take for new ones), which catches pairs the
        // response pushed together.
        let start = x0;
        let mut crossed: Vec<Pair> = Vec::new();
        for round in 0..ROUNDS {
            let (mut pairs, candidates) =
                self.detect(thickness, offsets, inv_mass, rest, start, x, round == 0);
            if round == 0 {
                crossed = pairs.iter().filter(|p| p.side != Vec3::ZERO).copied().collect();
            } else {
                // Pairs that crossed during the step keep the side they came from.
                let known: std::collections::HashSet<[u32; 4]> = crossed.iter().map(|p| p.p).collect();
                pairs.retain(|p| !known.contains(&p.p));
                pairs.extend(crossed.iter().copied());
            }
            let overlaps: Vec<f32> = pairs.iter().map(|p| p.keep - p.geometry(x).2).collect();
            let touching = overlaps.iter().filter(|o| **o > 0.0).count() as u64;
            if round == 0 {
                stats.candidates = candidates;
                stats.contacts = touching;
                stats.deepest = overlaps.iter().copied().fold(0.0f32, f32::max);
            }
            stats.unresolved = overlaps
                .iter()
                .filter(|o| **o > (1.0 - RESOLVED) * thickness)
                .count() as u64;
            if touching == 0 || stats.unresolved == 0 && round > 0 {
                break;
            }
            // Response: Gauss–Seidel sweeps over the pairs in their fixed order, each pair's
            // impulse applied at once (converges in a few sweeps where Jacobi averaging needs many).
            let mut now = vec![false; strands];
            // Sweeps stop once no pair changes by more than this (cm, or cm per step).
            let settled = 1e-3 * thickness;
            for _ in 0..params.iterations.max(1) {
                let mut any = false;
                now.fill(false);
                for p in pairs.iter_mut() {
                    let (w, nrm, g) = p.geometry(x);
                    if g >= p.keep && p.pushed == 0.0 && p.stopped == 0.0 {
                        continue;
                    }
                    let im = p.p.map(|i| inv_mass[i as usize]);
                    let denom: f32 = (0..4).map(|k| w[k] * w[k] * im[k]).sum();
                    if denom <= 0.0 {
                        continue;
                    }
                    // Positions: back to the separation the pair keeps.
                    let pushed = (p.pushed + p.keep - g).clamp(0.0, PUSH_LIMIT * p.limit);
                    let dx = pushed - p.pushed;
                    p.pushed = pushed;
                    // Velocities, inelastic: the pair's approaching normal velocity is removed
                    // and none is added, so a pair that starts the step closer than it keeps is
                    // pushed apart without being thrown apart.
                    let rel: Vec3 = (0..4).map(|k| w[k] * v[p.p[k] as usize]).sum();
                    let vn = rel.dot(nrm);
                    let stopped = (p.stopped - vn).max(0.0);
                    let dvn = stopped - p.stopped;
                    p.stopped = stopped;
                    // Coulomb friction on the tangential relative velocity, within μ times the
                    // normal response (Bridson et al. 2002's budget).
                    let vt = rel - vn * nrm;
                    let budget = params.friction * (p.stopped + p.pushed / h);
                    let held = (p.held - vt).clamp_length_max(budget);
                    let dvt = held - p.held;
                    p.held = held;
                    if dx.abs().max(dvn.abs() * h).max(dvt.length() * h) > settled {
                        any = true;
                    }
                    let dv = dvn * nrm + dvt;
                    let dpos = dx * nrm + h * dvt;
                    for k in 0..4 {
                        if im[k] > 0.0 {
                            let i = p.p[k] as usize;
                            let share = w[k] * im[k] / denom;
                            v[i] += dv * share;
                            x[i] += dpos * share;
                            now[p.strands[k / 2] as usize] = true;
                        }
                    }
                }
                if !any {
                    break;
                }
                stats.iterations += 1;
                for (m, n) in moved.iter_mut().zip(&now) {
                    *m |= *n;
                }
                after_sweep(x, v, &now);
            }
            stats.unresolved = pairs
                .iter()
                .filter(|p| p.geometry(x).2 < RESOLVED * p.keep)
                .count() as u64;
        }
        // Fail-safe (after Bridson et al. 2002's, simplified): a pair whose segments still pass
        // through each other between the start of the step and where the response left them
        // (strands pushed through others by further pairs or by their own length constraint)
        // has both strands put back where the step started, at rest. Repeated until no pair
        // crosses: the start of the step was free of crossings, so this ends.
        let mut reverted = vec![false; strands];
        for _ in 0..FAIL_SAFE_ROUNDS {
            let (pairs, _) = self.detect(thickness, offsets, inv_mass, rest, start, x, true);
            let mut any = false;
            for p in pairs.iter().filter(|p| p.side != Vec3::ZERO) {
                for s in p.strands.map(|s| s as usize) {
                    if reverted[s] {
                        continue;
                    }
                    reverted[s] = true;
                    moved[s] = true;
                    any = true;
                    stats.reverted += 1;
                    for i in offsets[s]..offsets[s + 1] {
                        if inv_mass[i] > 0.0 {
                            x[i] = start[i];
                            v[i] = Vec3::ZERO;
                        }
                    }
                }
            }
            if !any {
                break;
            }
        }
        stats
    }

    /// Segment contacts for the coming step of `h` seconds from `x` with velocities `v`, for
    /// the implicit solve: pairs of segments of different strands within 1.5 × the kept
    /// separation now, or predicted to come within it if they keep their velocities. Written to
    /// `out` as (strand, touch), grouped by strand in pair order (deterministic).
    #[allow(clippy::too_many_arguments)]
    pub fn touches(
        &mut self,
        thickness: f32,
        offsets: &[usize],
        inv_mass: &[f32],
        rest: &[Vec3],
        x: &[Vec3],
        v: &[Vec3],
        h: f32,
        out: &mut Vec<(u32, SegmentTouch)>,
    ) {
        out.clear();
        if offsets.len() < 3 || thickness <= 0.0 || h <= 0.0 {
            return;
        }
        let mut ahead = std::mem::take(&mut self.ahead);
        ahead.clear();
        ahead.extend(x.iter().zip(v).map(|(p, u)| *p + h * *u));
        let (pairs, _) = self.detect(thickness, offsets, inv_mass, rest, x, &ahead, true);
        self.ahead = ahead;
        for p in &pairs {
            let [a0, a1, b0, b1] = p.p.map(|i| i as usize);
            let (s, t) = closest_parameters(x[a0], x[a1], x[b0], x[b1]);
            let d = x[a0].lerp(x[a1], s) - x[b0].lerp(x[b1], t);
            let dist = d.length();
            if dist <= 1e-6 {
                continue;
            }
            let n = d / dist;
            let (va, vb) = (v[a0].lerp(v[a1], s), v[b0].lerp(v[b1], t));
            let reach = 1.5 * p.keep;
            let (distance, is_ahead) = if dist < reach {
                (dist, false)
            } else {
                let predicted = dist + h * (va - vb).dot(n);
                if predicted >= reach {
                    continue;
                }
                (predicted, true)
            };
            // Inverse masses at the contact points.
            let ia = (1.0 - s) * (1.0 - s) * inv_mass[a0] + s * s * inv_mass[a1];
            let ib = (1.0 - t) * (1.0 - t) * inv_mass[b0] + t * t * inv_mass[b1];
            if ia + ib <= 0.0 {
                continue;
            }
            let mean = (ib * va + ia * vb) / (ia + ib);
            let overlap = p.keep - distance;
            for (strand, first, param, normal, share) in [
                (p.strands[0], p.p[0], s, n, ia / (ia + ib)),
                (p.strands[1], p.p[2], t, -n, ib / (ia + ib)),
            ] {
                if share > 0.0 {
                    out.push((
                        strand,
                        SegmentTouch {
                            i: first - offsets[strand as usize] as u32,
                            s: param,
                            normal,
                            distance: p.keep - share * overlap,
                            ahead: is_ahead,
                            keep: p.keep,
                            velocity: mean,
                        },
                    ));
                }
            }
        }
        out.sort_by_key(|(strand, _)| *strand);
    }

    /// Segment pairs of different strands that crossed between `start` and `x` or are within
    /// twice the thickness at `x`, and the broad phase's candidate count. Pairs whose four
    /// particles are all kinematic are left out.
    #[allow(clippy::too_many_arguments)]
    fn detect(
        &mut self,
        thickness: f32,
        offsets: &[usize],
        inv_mass: &[f32],
        rest: &[Vec3],
        x0: &[Vec3],
        x: &[Vec3],
        crossings: bool,
    ) -> (Vec<Pair>, u64) {
        let strands = offsets.len().saturating_sub(1);
        // Segments and their swept boxes.
        self.segments.clear();
        for s in 0..strands {
            for i in offsets[s]..offsets[s + 1].saturating_sub(1) {
                self.segments.push((i as u32, s as u32));
            }
        }
        // Pairs within twice the thickness join the response (acting only while closer than the
        // thickness), so pairs that other pairs' impulses push together are resolved as well.
        let reach = 2.0 * thickness;
        let half = 0.5 * reach;
        let segments = &self.segments;
        self.boxes.clear();
        self.boxes.par_extend(segments.par_iter().map(|&(i, _)| {
            let i = i as usize;
            let lo = x0[i].min(x0[i + 1]).min(x[i]).min(x[i + 1]) - Vec3::splat(half);
            let hi = x0[i].max(x0[i + 1]).max(x[i]).max(x[i + 1]) + Vec3::splat(half);
            (lo, hi)
        }));
        let boxes = &self.boxes;
        if boxes.iter().any(|(lo, hi)| !(lo.is_finite() && hi.is_finite())) {
            return (Vec::new(), 0);
        }
        // Cells as large as a typical box, so a box overlaps a few cells.
        let mean_extent = boxes
            .iter()
            .map(|(lo, hi)| (*hi - *lo).max_element() as f64)
            .sum::<f64>()
            / boxes.len().max(1) as f64;
        let cell = (mean_extent as f32).max(thickness);
        let inv = 1.0 / cell;
        // Broad phase: (cell, segment) entries, sorted.
        let per_segment: Vec<Vec<(u64, u32)>> = boxes
            .par_iter()
            .enumerate()
            .map(|(k, (lo, hi))| {
                let (a, b) = (cell_of(*lo, inv), cell_of(*hi, inv));
                let n = ((b[0] - a[0] + 1) * (b[1] - a[1] + 1) * (b[2] - a[2] + 1)) as usize;
                if n > MAX_CELLS_PER_SEGMENT {
                    return Vec::new();
                }
                let mut out = Vec::with_capacity(n);
                for cz in a[2]..=b[2] {
                    for cy in a[1]..=b[1] {
                        for cx in a[0]..=b[0] {
                            out.push((key([cx, cy, cz]), k as u32));
                        }
                    }
                }
                out
            })
            .collect();
        self.entries.clear();
        for e in per_segment {
            self.entries.extend(e);
        }
        self.entries.par_sort_unstable();
        // Runs of one cell.
        let entries = &self.entries;
        let mut runs = Vec::new();
        let mut start = 0;
        for k in 1..=entries.len() {
            if k == entries.len() || entries[k].0 != entries[start].0 {
                if k - start > 1 {
                    runs.push((start, k));
                }
                start = k;
            }
        }
        let found: Vec<(u64, Vec<Pair>)> = runs
            .par_iter()
            .map(|&(r0, r1)| {
                let mut candidates = 0u64;
                let mut pairs = Vec::new();
                let here = entries[r0].0;
                for a in r0..r1 {
                    let sa = entries[a].1 as usize;
                    let (lo_a, hi_a) = boxes[sa];
                    for &(_, sb) in &entries[a + 1..r1] {
                        let sb = sb as usize;
                        let (ta, tb) = (segments[sa].1, segments[sb].1);
                        if ta == tb {
                            continue;
                        }
                        let (lo_b, hi_b) = boxes[sb];
                        if lo_a.cmpgt(hi_b).any() || lo_b.cmpgt(hi_a).any() {
                            continue;
                        }
                        // Report the pair only in the lowest cell both boxes share.
                        if key(cell_of(lo_a.max(lo_b), inv)) != here {
                            continue;
                        }
                        let (i, j) = (segments[sa].0 as usize, segments[sb].0 as usize);
                        // Pairs of kinematic segments (roots on the scalp) cannot respond.
                        if inv_mass[i] + inv_mass[i + 1] + inv_mass[j] + inv_mass[j + 1] <= 0.0 {
                            continue;
                        }
                        candidates += 1;
                        let quad = |p: &[Vec3]| [p[i], p[i + 1], p[j], p[j + 1]];
                        let mut pair = Pair {
                            p: [i as u32, i as u32 + 1, j as u32, j as u32 + 1],
                            strands: [segments[sa].1, segments[sb].1],
                            keep: thickness,
                            side: Vec3::ZERO,
                            limit: 0.0,
                            pushed: 0.0,
                            stopped: 0.0,
                            held: Vec3::ZERO,
                        };
                        if let Some(side) = crossings.then(|| crossing(quad(x0), quad(x))).flatten() {
                            pair.side = side;
                        } else if pair.geometry(x).2 >= reach {
                            continue;
                        }
                        let (rs, rt) = closest_parameters(rest[i], rest[i + 1], rest[j], rest[j + 1]);
                        let at_rest = rest[i]
                            .lerp(rest[i + 1], rs)
                            .distance(rest[j].lerp(rest[j + 1], rt));
                        pair.keep = thickness.min(at_rest);
                        let (s1, t1) = closest_parameters(x[i], x[i + 1], x[j], x[j + 1]);
                        let moved = (x[i].lerp(x[i + 1], s1) - x[j].lerp(x[j + 1], t1))
                            - (x0[i].lerp(x0[i + 1], s1) - x0[j].lerp(x0[j + 1], t1));
                        pair.limit = pair.keep + moved.length();
                        pairs.push(pair);
                    }
                }
                (candidates, pairs)
            })
            .collect();
        let mut pairs = Vec::new();
        let mut candidates = 0;
        for (c, p) in found {
            candidates += c;
            pairs.extend(p);
        }
        (pairs, candidates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: the smallest distance over a fine grid of parameters.
    fn brute(p0: Vec3, p1: Vec3, q0: Vec3, q1: Vec3) -> f32 {
        let mut best = f32::INFINITY;
        for i in 0..=200 {
            for j in 0..=200 {
                let a = p0.lerp(p1, i as f32 / 200.0);
                let b = q0.lerp(q1, j as f32 / 200.0);
                best = best.min(a.distance(b));
            }
        }
        best
    }

    #[test]
    fn closest_points_of_segments_match_brute_force() {
        let cases = [
            // Crossing at right angles, 1 apart.
            (
                Vec3::new(-1.0, 0.0, 0.0),
                Vec3::new(1.0, 0.0, 0.0),
                Vec3::new(0.0, 1.0, -1.0),
                Vec3::new(0.0, 1.0, 1.0),
            ),
            // Parallel, overlapping.
            (
                Vec3::ZERO,
                Vec3::X,
                Vec3::new(0.5, 0.3, 0.0),
                Vec3::new(1.5, 0.3, 0.0),
            ),
            // End to end.
            (
                Vec3::ZERO,
                Vec3::X,
                Vec3::new(2.0, 0.5, 0.0),
                Vec3::new(3.0, 1.0, 0.0),
            ),
            // Skew, closest inside one and at the end of the other.
            (
                Vec3::new(0.0, 0.0, 0.0),
                Vec3::new(1.0, 1.0, 0.0),
                Vec3::new(1.5, 0.0, 1.0),
                Vec3::new(1.5, 0.0, 3.0),
            ),
            // A point against a segment.
            (
                Vec3::new(0.3, 1.0, 0.0),
                Vec3::new(0.3, 1.0, 0.0),
                Vec3::ZERO,
                Vec3::X,
            ),
        ];
        for (p0, p1, q0, q1) in cases {
            let (s, t) = closest_parameters(p0, p1, q0, q1);
            let d = p0.lerp(p1, s).distance(q0.lerp(q1, t));
            let b = brute(p0, p1, q0, q1);
            assert!(d <= b + 1e-4 && d >= b - 1e-2, "{p0} {p1} {q0} {q1}: {d} vs {b}");
        }
    }

    /// Two strands of two particles crossing at right angles, the upper one falling through
    /// the lower one during the step.
    fn crossing(speed: f32, h: f32) -> (Vec<Vec3>, Vec<Vec3>, Vec<Vec3>) {
        let x0 = vec![
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 0.2, -1.0),
            Vec3::new(0.0, 0.2, 1.0),
        ];
        let v = vec![
            Vec3::ZERO,
            Vec3::ZERO,
            Vec3::new(0.0, -speed, 0.0),
            Vec3::new(0.0, -speed, 0.0),
        ];
        let x = x0.iter().zip(&v).map(|(p, u)| *p + h * *u).collect();
        (x0, x, v)
    }

    #[test]
    fn a_strand_falling_through_another_is_stopped_at_the_thickness() {
        let h = 1.0 / 48.0;
        // 50 cm/s: 1 cm in the step, far more than the 0.2 cm gap.
        let (x0, mut x, mut v) = crossing(50.0, h);
        let params = ContactParams {
            thickness: 0.1,
            friction: 0.0,
            iterations: 4,
        };
        // The lower strand is kinematic.
        let inv_mass = [0.0, 0.0, 1.0, 1.0];
        let mut c = StrandContacts::default();
        let mut moved = Vec::new();
        let st = c.resolve(
            &params,
            &[0, 2, 4],
            &inv_mass,
            &x0,
            &x0,
            &mut x,
            &mut v,
            h,
            &mut moved,
            &mut |_, _, _| {},
        );
        assert_eq!(st.contacts, 1);
        assert!(st.deepest > 0.8, "{st:?}");
        // Upper strand back above the lower one, at the thickness, and no longer approaching.
        assert!(
            (x[2].y - 0.1).abs() < 1e-4 && (x[3].y - 0.1).abs() < 1e-4,
            "{x:?}"
        );
        assert_eq!(x[0], x0[0]);
        // Velocity: inelastic, the fall is stopped (not thrown back up, not still falling).
        assert!(v[2].y.abs() < 1e-3 && v[3].y.abs() < 1e-3, "{v:?}");
        assert_eq!(moved, vec![false, true]);
        // Without the lower strand being kinematic, both move, momentum is kept.
        let (x0, mut x, mut v) = crossing(50.0, h);
        let p_before: Vec3 = v.iter().sum();
        c.resolve(
            &params,
            &[0, 2, 4],
            &[1.0; 4],
            &x0,
            &x0,
            &mut x,
            &mut v,
            h,
            &mut moved,
            &mut |_, _, _| {},
        );
        let p_after: Vec3 = v.iter().sum();
        assert!((p_after - p_before).length() < 1e-3, "{p_before} {p_after}");
        let sep = (x[2] + x[3]) * 0.5 - (x[0] + x[1]) * 0.5;
        assert!((sep.y - 0.1).abs() < 1e-3, "{sep}");
    }

    /// The implicit step's touches: a pair 0.08 cm apart (within 1.5 × 0.1) gives each free
    /// strand its share of the 0.02 cm overlap by inverse mass, normals pointing toward each
    /// strand, measured against the pair's mass-weighted mean velocity; a kinematic strand gets
    /// none and the free one takes all of the overlap against the kinematic one's velocity.
    #[test]
    fn touches_share_the_overlap_by_inverse_mass() {
        let x = vec![
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 0.08, -1.0),
            Vec3::new(0.0, 0.08, 1.0),
        ];
        let v = vec![Vec3::X, Vec3::X, Vec3::ZERO, Vec3::ZERO];
        let rest = vec![x[0], x[1], x[2] + Vec3::Y, x[3] + Vec3::Y];
        let mut c = StrandContacts::default();
        let mut out = Vec::new();
        c.touches(0.1, &[0, 2, 4], &[1.0; 4], &rest, &x, &v, 1.0 / 48.0, &mut out);
        assert_eq!(out.len(), 2, "{out:?}");
        let (a, b) = (out[0], out[1]);
        assert_eq!((a.0, b.0), (0, 1));
        assert!(
            (a.1.distance - 0.09).abs() < 1e-5 && (b.1.distance - 0.09).abs() < 1e-5,
            "{out:?}"
        );
        assert!((a.1.normal + Vec3::Y).length() < 1e-5 && (b.1.normal - Vec3::Y).length() < 1e-5);
        assert!((a.1.s - 0.5).abs() < 1e-5 && (b.1.s - 0.5).abs() < 1e-5 && b.1.i == 0);
        assert!((a.1.velocity - 0.5 * Vec3::X).length() < 1e-5 && !a.1.ahead);
        // The first strand kinematic: only the second is touched, with the whole overlap.
        c.touches(
            0.1,
            &[0, 2, 4],
            &[0.0, 0.0, 1.0, 1.0],
            &rest,
            &x,
            &v,
            1.0 / 48.0,
            &mut out,
        );
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].0, 1);
        assert!((out[0].1.distance - 0.08).abs() < 1e-5 && (out[0].1.velocity - Vec3::X).length() < 1e-5);
        // 0.5 cm apart and not approaching: no touch; approaching at 20 cm/s: a predicted one.
        let far: Vec<Vec3> = x
            .iter()
            .enumerate()
            .map(|(k, p)| if k >= 2 { *p + 0.42 * Vec3::Y } else { *p })
            .collect();
        c.touches(
            0.1,
            &[0, 2, 4],
            &[1.0; 4],
            &rest,
            &far,
            &[Vec3::ZERO; 4],
            1.0 / 48.0,
            &mut out,
        );
        assert!(out.is_empty(), "{out:?}");
        let falling = [Vec3::ZERO, Vec3::ZERO, -20.0 * Vec3::Y, -20.0 * Vec3::Y];
        c.touches(
            0.1,
            &[0, 2, 4],
            &[1.0; 4],
            &rest,
            &far,
            &falling,
            1.0 / 48.0,
            &mut out,
        );
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(
            out[0].1.ahead && (out[0].1.distance - (0.1 - 0.5 * (0.1 - (0.5 - 20.0 / 48.0)))).abs() < 1e-4,
            "{out:?}"
        );
    }

    /// A pair that starts the step closer than the thickness (at rest) is pushed apart to the
    /// thickness but not thrown apart: no separating velocity (the energy injection a
    /// position-derived velocity would cause).
    #[test]
    fn an_overlapping_pair_at_rest_is_separated_without_velocity() {
        let h = 1.0 / 48.0;
        let x0 = vec![
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.0, 0.04, -1.0),
            Vec3::new(0.0, 0.04, 1.0),
        ];
        let mut x = x0.clone();
        let mut v = vec![Vec3::ZERO; 4];
        let params = ContactParams {
            thickness: 0.1,
            friction: 0.3,
            iterations: 8,
        };
        let mut c = StrandContacts::default();
        let mut moved = Vec::new();
        // A rest groom where the strands are apart: the pair keeps the full thickness.
        let rest = vec![x0[0], x0[1], x0[2] + Vec3::Y, x0[3] + Vec3::Y];
        let st = c.resolve(
            &params,
            &[0, 2, 4],
            &[1.0; 4],
            &rest,
            &x0,
            &mut x,
            &mut v,
            h,
            &mut moved,
            &mut |_, _, _| {},
        );
        assert_eq!(st.contacts, 1);
        let sep = (x[2] + x[3]) * 0.5 - (x[0] + x[1]) * 0.5;
        assert!(sep.y >= 0.099 && sep.y < 0.101, "{sep}");
        assert!(v.iter().all(|u| u.length() < 1e-6), "{v:?}");
    }

    #[test]
    fn strands_apart_and_the_same_strand_are_left_alone() {
        let h = 1.0 / 48.0;
        let (x0, mut x, mut v) = crossing(1.0, h); // 0.02 cm in the step: stays 0.18 apart
        let params = ContactParams {
            thickness: 0.1,
            friction: 0.3,
            iterations: 4,
        };
        let mut c = StrandContacts::default();
        let mut moved = Vec::new();
        let before = x.clone();
        let st = c.resolve(
            &params,
            &[0, 2, 4],
            &[1.0; 4],
            &x0,
            &x0,
            &mut x,
            &mut v,
            h,
            &mut moved,
            &mut |_, _, _| {},
        );
        assert_eq!(st.contacts, 0);
        assert_eq!(x, before);
        // The same four particles as one strand: its own segments never collide.
        let (x0, mut x, mut v) = crossing(50.0, h);
        let before = x.clone();
        let st = c.resolve(
            &params,
            &[0, 4],
            &[1.0; 4],
            &x0,
            &x0,
            &mut x,
            &mut v,
            h,
            &mut moved,
            &mut |_, _, _| {},
        );
        assert_eq!(st.candidates, 0);
        assert_eq!(x, before);
    }

    #[test]
    fn friction_holds_a_slow_slide_and_slows_a_fast_one() {
        let h = 1.0 / 48.0;
        let params = ContactParams {
            thickness: 0.1,
            friction: 0.5,
            iterations: 1,
        };
        let inv_mass = [0.0, 0.0, 1.0, 1.0];
        let mut c = StrandContacts::default();
        let mut moved = Vec::new();
        for (slide, stuck) in [(1.0f32, true), (100.0, false)] {
            // Falling 1 cm/step onto the lower strand while sliding along it (x; the lower
            // strand made long enough that the slide stays on it).
            let (mut x0, _, _) = crossing(0.0, h);
            x0[0].x = -5.0;
            x0[1].x = 5.0;
            let mut v = vec![
                Vec3::ZERO,
                Vec3::ZERO,
                Vec3::new(slide, -50.0, 0.0),
                Vec3::new(slide, -50.0, 0.0),
            ];
            let mut x: Vec<Vec3> = x0.iter().zip(&v).map(|(p, u)| *p + h * *u).collect();
            c.resolve(
                &params,
                &[0, 2, 4],
                &inv_mass,
                &x0,
                &x0,
                &mut x,
                &mut v,
                h,
                &mut moved,
                &mut |_, _, _| {},
            );
            if stuck {
                assert!(v[2].x.abs() < 1e-4, "{v:?}");
            } else {
                // Slowed by μ Δv_n, not stopped.
                assert!(v[2].x > 50.0 && v[2].x < 100.0, "{v:?}");
            }
        }
    }
}
