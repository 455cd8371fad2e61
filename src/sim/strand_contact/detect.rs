//! Detection of strand–strand contacts: the broad phase (swept segment boxes in the cells of a
//! uniform grid) and the narrow phase (continuous edge–edge crossing test, Provot 1997 and
//! Bridson et al. 2002; distances between segments' closest points).

use glam::Vec3;
use rayon::prelude::*;

use super::StrandContacts;
use crate::grid::SparseCells;

/// Cells a segment's box may overlap before it is left out of the broad phase (a segment that
/// long has already exploded; the speed check reports it).
const MAX_CELLS_PER_SEGMENT: usize = 512;

/// A pair of segments in contact: particles `p` (first segment: p[0], p[1]; second: p[2],
/// p[3]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Pair {
    pub(super) p: [u32; 4],
    /// The strands of the two segments.
    pub(super) strands: [u32; 2],
    /// Separation kept: the thickness, or the segments' distance in the rest groom when that is
    /// smaller (strands groomed closer than the thickness, as near the roots, stay as groomed
    /// instead of being pushed apart).
    pub(super) keep: f32,
    /// For a pair that passed through each other during the step: the side the first segment
    /// must return to, as the segments' common perpendicular e_a × e_b at the crossing times the
    /// side's sign (ZERO for pairs that did not cross).
    pub(super) side: Vec3,
    /// Largest separation change the response may ask of the pair in one step: the thickness
    /// plus how far the pair's closest points moved relative to each other over the step (a
    /// correction never undoes more than the step did).
    pub(super) limit: f32,
    /// Accumulated response of this step (sequential impulses, Catto 2005): separation pushed
    /// (cm), normal velocity removed (cm/s) and tangential velocity removed by friction. Each
    /// sweep may lower them again (never below zero), so Gauss–Seidel sweeps over pairs that
    /// share particles converge instead of overshooting.
    pub(super) pushed: f32,
    pub(super) stopped: f32,
    pub(super) held: Vec3,
}

/// Segments within this sine of parallel have no reliable common perpendicular.
const PARALLEL_SINE: f32 = 0.05;

impl Pair {
    /// Barycentric weights of the closest points now (w[0] + w[1] = 1, w[2] + w[3] = −1), the
    /// contact normal (from the second segment's closest point to the first's, turned round
    /// while a crossed pair is on the wrong side) and the separation along it (the closest
    /// points' distance, negative while a crossed pair is on the wrong side).
    pub(super) fn geometry(&self, x: &[Vec3]) -> ([f32; 4], Vec3, f32) {
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
    /// Segment pairs of different strands that crossed between `start` and `x` or are within
    /// twice the thickness at `x`, and the broad phase's candidate count. Pairs whose four
    /// particles are all kinematic are left out.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn detect(
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
        if self.segments_of != offsets {
            self.segments.clear();
            for s in 0..strands {
                for i in offsets[s]..offsets[s + 1].saturating_sub(1) {
                    self.segments.push((i as u32, s as u32));
                }
            }
            self.segments_of = offsets.to_vec();
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
        let grid = SparseCells::new(cell);
        // Broad phase: (cell, segment) entries, sorted.
        let per_segment: Vec<Vec<(u64, u32)>> = boxes
            .par_iter()
            .enumerate()
            .map(|(k, (lo, hi))| {
                let (a, b) = (grid.cell_of(*lo), grid.cell_of(*hi));
                let n = ((b[0] - a[0] + 1) * (b[1] - a[1] + 1) * (b[2] - a[2] + 1)) as usize;
                if n > MAX_CELLS_PER_SEGMENT {
                    return Vec::new();
                }
                let mut out = Vec::with_capacity(n);
                for cz in a[2]..=b[2] {
                    for cy in a[1]..=b[1] {
                        for cx in a[0]..=b[0] {
                            out.push((SparseCells::key([cx, cy, cz]), k as u32));
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
            .map(|&run| {
                let cells = Cells {
                    entries,
                    boxes,
                    segments,
                    grid,
                };
                cells.pairs(run, thickness, inv_mass, rest, (x0, x), crossings)
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

/// The broad phase's result: (cell, segment) entries sorted by cell, the segments' swept boxes,
/// the segments (first particle, strand) and the cells.
struct Cells<'a> {
    entries: &'a [(u64, u32)],
    boxes: &'a [(Vec3, Vec3)],
    segments: &'a [(u32, u32)],
    grid: SparseCells,
}

impl Cells<'_> {
    /// Narrow phase over the entries `r0..r1` of one cell: pairs of segments of different
    /// strands whose boxes overlap, reported in the lowest cell both share, that crossed
    /// between `x0` and `x` (with `crossings`) or are within twice the thickness at `x`; with
    /// the separation each keeps and how far the step moved it. Returns the candidates too.
    fn pairs(
        &self,
        (r0, r1): (usize, usize),
        thickness: f32,
        inv_mass: &[f32],
        rest: &[Vec3],
        (x0, x): (&[Vec3], &[Vec3]),
        crossings: bool,
    ) -> (u64, Vec<Pair>) {
        let (entries, boxes, segments, grid) = (self.entries, self.boxes, self.segments, self.grid);
        let reach = 2.0 * thickness;
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
                if SparseCells::key(grid.cell_of(lo_a.max(lo_b))) != here {
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
    }
}
