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

mod detect;

use glam::Vec3;
use serde::Serialize;

use detect::{Pair, closest_parameters};

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
    /// First particle of each segment and its strand, for the strands `segments_of` (strand
    /// offsets): rebuilt only when those change, not on every detection of a step.
    segments: Vec<(u32, u32)>,
    segments_of: Vec<usize>,
    boxes: Vec<(Vec3, Vec3)>,
    entries: Vec<(u64, u32)>,
    /// Positions predicted for the end of the step (`touches`).
    ahead: Vec<Vec3>,
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
            respond(
                params,
                &mut pairs,
                inv_mass,
                (x, v),
                h,
                moved,
                after_sweep,
                &mut stats,
            );
            stats.unresolved = pairs
                .iter()
                .filter(|p| p.geometry(x).2 < RESOLVED * p.keep)
                .count() as u64;
        }
        self.fail_safe(
            thickness,
            offsets,
            inv_mass,
            rest,
            start,
            (x, v),
            moved,
            &mut stats,
        );
        stats
    }

    /// Fail-safe (after Bridson et al. 2002's, simplified): a pair whose segments still pass
    /// through each other between the start of the step and where the response left them
    /// (strands pushed through others by further pairs or by their own length constraint) has
    /// both strands put back where the step started, at rest. Repeated until no pair crosses:
    /// the start of the step was free of crossings, so this ends.
    #[allow(clippy::too_many_arguments)]
    fn fail_safe(
        &mut self,
        thickness: f32,
        offsets: &[usize],
        inv_mass: &[f32],
        rest: &[Vec3],
        start: &[Vec3],
        (x, v): (&mut [Vec3], &mut [Vec3]),
        moved: &mut [bool],
        stats: &mut StrandContactStats,
    ) {
        let strands = moved.len();
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
}

/// Response: Gauss–Seidel sweeps over the pairs in their fixed order, each pair's accumulated
/// push, normal velocity change and friction clamped as totals and applied at once (converges
/// in a few sweeps where Jacobi averaging needs many); `after_sweep` runs after every sweep
/// with the strands it moved, which `moved` gathers.
#[allow(clippy::too_many_arguments)]
fn respond(
    params: &ContactParams,
    pairs: &mut [Pair],
    inv_mass: &[f32],
    (x, v): (&mut [Vec3], &mut [Vec3]),
    h: f32,
    moved: &mut [bool],
    after_sweep: &mut AfterSweep,
    stats: &mut StrandContactStats,
) {
    let thickness = params.thickness;
    let strands = moved.len();
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
}

#[cfg(test)]
mod tests;
