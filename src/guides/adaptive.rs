//! Adaptive skinning (001 §4, Alg. 1): every frame, each normal strand picks, among its fitted
//! guide sets, one whose guides still move together and do not straddle a solid.
//!
//! * Motion similarity (Eq. 2): d(i, j) = (‖p_i − p_j‖² / A_ij + σ ‖v_i − v_j‖² / B_ij) / (1 + σ)
//!   over the stacked particles of guides i and j (head frame), A_ij and B_ij the training
//!   normalizers stored with the model (see [`super::skinning::fit`]: B_ij is the pair's 99th
//!   percentile rather than the paper's average), σ = 5. The division by 1 + σ is ours: A and B
//!   are averages, so motion as discrepant as the training's average gives Eq. 2 the value
//!   1 + σ = 6, above δ = 2 — the literal graph falls apart under any motion like the training
//!   one (measured: 84 % of pairs split every frame on a held-out gentle motion). The paper's
//!   runtime scenes are calmer than their training (a still head, solids moved by the user),
//!   where the literal reading works. Normalized, δ = 2 splits pairs twice as discrepant as on
//!   average in training. Second, ours too: relative velocities grow with how fast the head
//!   moves, so B_ij is scaled by the frame's median (`velocity_quantile`) of
//!   ‖v_i − v_j‖² / B_ij over all pairs when that exceeds 1 — a faster head motion than the
//!   training's raises every pair alike and splits none, while a pair moving apart from the
//!   rest (a solid between them) still splits. On calm frames (median ≤ 1) this is the paper's
//!   rule. A higher quantile takes a frame on which that share of the pairs move apart more than
//!   in training for a faster motion rather than splits: 0.9 helps where a prop strikes many
//!   guides at once (the fast ball of `examples/props/f.toml`) but weakens two-way correction,
//!   so the median stays the default (book: Reduced simulation, "Where adaptive skinning loses
//!   on F").
//! * Interpolation check (§4.2): the segments p_i(t)–p_j(t) between corresponding particles
//!   must not pass through a solid (by default a prop, see below). The check is approximate, as in the paper: segments are
//!   sphere-traced through the colliders' distance fields, particles pinned to the head are not
//!   checked, and passing less than `check_tolerance` deep counts as clear (a chord between two
//!   guides lying on a curved head dips under it by its sagitta).
//! * Guide graph: an edge joins i and j when d(i, j) < δ (δ = 2) and the check passes. Only
//!   guides that share an eligible set are ever interpolated together, so only those pairs are
//!   tested; pairs that never share a set do not constrain a group.
//! * Groups (Alg. 1, lines 1–15): around every guide g, its neighbours, closest (by d) first,
//!   each kept if connected to every neighbour kept before it — the paper's removal of the
//!   farther guide of every unconnected pair, done in one ordered pass.
//! * Assignment (Eq. 3): a strand keeps its previous set while the set lies inside some group
//!   (its distance to itself is zero, the minimum); otherwise it takes, among its sets lying
//!   inside a group, the one whose interpolation is closest to the previous set's. Ours, two
//!   things. Every switch is faded in over `blend_seconds`: the strand starts where its old
//!   set put it and the difference decays as a half cosine, so no switch is a jump. And a
//!   strand returns to its best-fitting set once that is valid again — Eq. 3 alone never
//!   returns, so every transient split would leave strands on worse sets for the rest of the
//!   shot (without the fade, only when the jump is below `return_distance`). Measured on
//!   `examples/rod.toml`: Eq. 3 as written, RMSE 0.954 cm against static skinning's 0.727 —
//!   strands at the parting split off their best set in the first frames and never came
//!   back; with both, 0.738, and jitter 0.0318 instead of 0.0360 (ground truth 0.0322).
//! * The interpolation check and the two-way correction answer to props by default: the head
//!   and body are in every training frame, and the fitted sets already respect them.
//! * Interpolation (Eq. 5) with the chosen sets, as static skinning does.

use std::time::Instant;

use glam::Vec3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::interpolator::{GuideFrame, InterpTimes, Interpolator};
use super::layout::{GuideLayout, GuideRotations};
use super::skinning::model::Skinning;
use crate::collide::ColliderFrame;
use crate::error::Result;

/// Settings of the runtime adaptation, with 001's values as defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdaptiveOptions {
    /// σ of Eq. 2: weight of velocity differences.
    pub sigma: f32,
    /// δ: guides are connected while their motion similarity is below it.
    pub delta: f32,
    /// Check interpolation segments against the solids.
    pub check: bool,
    /// Which solids: `props` (default; solids the training never saw — the head and body are in
    /// every training frame, so the fitted sets already respect them) or `all`.
    pub check_solids: crate::guides::two_way::CorrectionSolids,
    /// Depth (cm) a segment may pass inside a solid and still count as clear.
    pub check_tolerance: f32,
    /// A strand returns to its best-fitting set once that set is valid again and its result
    /// lies within this RMS distance (cm) of the current one (0: never, the paper's Eq. 3).
    pub return_distance: f32,
    /// Seconds over which a change of set is faded in (0: at once, the paper's Eq. 3). The
    /// strand starts where its old set put it and the difference decays smoothly (a half
    /// cosine), so no switch moves a strand in one frame however far apart the two sets'
    /// results are — and a strand can go back to its best-fitting set whenever that is valid
    /// again, not only when the jump would be small (`return_distance`).
    pub blend_seconds: f32,
    /// Which quantile of the frame's velocity ratios ‖v_i − v_j‖² / B_ij scales them when it
    /// exceeds 1 (see the module doc): the median by default; 0.9 for shots where a prop
    /// strikes the hair hard and rows without two-way correction.
    pub velocity_quantile: f32,
}

impl AdaptiveOptions {
    /// The settings' ranges, as a job states them.
    pub fn check(&self) -> std::result::Result<(), String> {
        if !(self.velocity_quantile > 0.0 && self.velocity_quantile <= 1.0) {
            return Err(format!(
                "guides.adaptive.velocity_quantile must lie in (0, 1], not {}",
                self.velocity_quantile
            ));
        }
        Ok(())
    }
}

impl Default for AdaptiveOptions {
    fn default() -> Self {
        AdaptiveOptions {
            sigma: 5.0,
            delta: 2.0,
            check: true,
            check_solids: crate::guides::two_way::CorrectionSolids::Props,
            check_tolerance: 0.3,
            return_distance: 0.2,
            blend_seconds: 0.5,
            velocity_quantile: 0.5,
        }
    }
}

/// Counts of what adaptation did, over all frames so far.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct AdaptiveStats {
    pub frames: u64,
    /// Guide pairs tested, and disconnected by motion or by a solid.
    pub pairs: u64,
    pub split_by_motion: u64,
    /// Of those, split by their positions alone.
    pub split_by_position: u64,
    pub split_by_solid: u64,
    /// Strand-frames whose set changed.
    pub switches: u64,
    /// Sum of group sizes (mean: / (frames × guides)).
    pub group_members: u64,
    /// Sum over frames of the velocity scaling (≥ 1).
    pub intensity_sum: f64,
    /// Pair-frames by ‖v_i − v_j‖² / B_ij, in the bins of [`RATIO_BINS`].
    pub ratio_histogram: [u64; 9],
}

/// Upper edges of the velocity-ratio histogram's bins (the last bin is unbounded).
pub const RATIO_BINS: [f32; 8] = [0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0];

/// A strand's switch of set being faded in.
struct Fade {
    offset: Vec<Vec3>,
    start: f64,
}

/// The frame's scaling of the velocity ratios: their `quantile` (the value at index
/// ⌊len · quantile⌋ in increasing order; 0.5 the median, the upper one for an even count),
/// at least 1 (reorders `ratios`).
fn velocity_scale(ratios: &mut [f32], quantile: f32) -> f32 {
    if ratios.is_empty() {
        return 1.0;
    }
    let at = ((ratios.len() as f64 * quantile as f64) as usize).min(ratios.len() - 1);
    ratios.select_nth_unstable_by(at, f32::total_cmp).1.max(1.0)
}

/// The share of a switch's offset left `age` seconds after it, faded over `length` seconds:
/// from 1 at the switch to 0, with no step in velocity at either end.
fn fade_weight(age: f64, length: f32) -> f32 {
    if age >= length as f64 || length <= 0.0 {
        0.0
    } else {
        0.5 * (1.0 + (std::f64::consts::PI * age / length as f64).cos()) as f32
    }
}

/// Lists of guide slots (a group's members, or the groups a guide is in).
type Groups = Vec<Vec<u32>>;

pub struct AdaptiveSkinning {
    pub skin: Skinning,
    pub options: AdaptiveOptions,
    /// Per guide: (other guide, pair index), by other guide.
    neighbours: Vec<Vec<(u32, u32)>>,
    /// Per strand: its current set (index into the model's sets).
    current: Vec<u32>,
    /// Per strand switching sets: the old result's offset from the new set's at the switch
    /// (head frame) and when it switched; faded out over `blend_seconds`.
    fading: Vec<Option<Box<Fade>>>,
    previous: Option<(Vec<Vec3>, f64)>,
    /// The last frame's guide groups, and the groups each guide was in.
    last_groups: Option<(Groups, Groups)>,
    pub stats: AdaptiveStats,
    times: InterpTimes,
}

impl AdaptiveSkinning {
    pub fn new(skin: Skinning, options: AdaptiveOptions) -> AdaptiveSkinning {
        let mut neighbours = vec![Vec::new(); skin.layout.guide_count()];
        for (k, &[a, b]) in skin.model.pairs.iter().enumerate() {
            neighbours[a as usize].push((b, k as u32));
            neighbours[b as usize].push((a, k as u32));
        }
        for n in &mut neighbours {
            n.sort_unstable();
        }
        let current: Vec<u32> = (0..skin.layout.strand_count())
            .map(|s| skin.sets(s).start as u32)
            .collect();
        AdaptiveSkinning {
            fading: (0..current.len()).map(|_| None).collect(),
            skin,
            options,
            neighbours,
            current,
            previous: None,
            last_groups: None,
            stats: AdaptiveStats::default(),
            times: InterpTimes::default(),
        }
    }

    /// The pair index of guides `a` and `b`, if they share an eligible set.
    fn pair(&self, a: u32, b: u32) -> Option<u32> {
        let n = &self.neighbours[a as usize];
        n.binary_search_by_key(&b, |x| x.0).ok().map(|i| n[i].1)
    }

    /// Strand `s`'s current set.
    pub fn current_set(&self, s: usize) -> usize {
        self.current[s] as usize
    }

    /// Whether segments between corresponding particles of two guides (world space) stay out
    /// of the solids (§4.2), sphere-tracing each segment.
    fn segments_clear(&self, a: &[Vec3], b: &[Vec3], colliders: &ColliderFrame, first: usize) -> bool {
        let tol = self.options.check_tolerance;
        let all = self.options.check_solids == crate::guides::two_way::CorrectionSolids::All;
        for j in first..a.len().min(b.len()) {
            let (p, q) = (a[j], b[j]);
            let len = p.distance(q);
            let dir = if len > 0.0 { (q - p) / len } else { Vec3::ZERO };
            let mut t: f32 = 0.0;
            loop {
                let x = p + dir * t.min(len);
                let hit = if all {
                    colliders.query(x)
                } else {
                    colliders.query_props(x)
                };
                let d = hit.map_or(f32::INFINITY, |c| c.distance);
                if d < -tol {
                    return false;
                }
                if t >= len {
                    break;
                }
                // Nothing lies closer than d: stepping d (plus the tolerated depth) cannot skip
                // over more than `tol` of a solid.
                t += (d + tol).max(0.02);
            }
        }
        true
    }

    /// The guide graph's edges (per pair: connected?) for this frame.
    fn edges(&mut self, frame: &GuideFrame) -> (Vec<bool>, Vec<f32>) {
        let layout = &self.skin.layout;
        let model = &self.skin.model;
        let dt = self
            .previous
            .as_ref()
            .map(|(_, t)| (frame.time - t) as f32)
            .filter(|d| *d > 0.0);
        let prev = self.previous.as_ref().map(|(p, _)| p.as_slice());
        let opts = &self.options;
        // World positions for the interpolation check.
        let relevant = |c: &&ColliderFrame| {
            opts.check_solids == crate::guides::two_way::CorrectionSolids::All || c.has_props()
        };
        let world: Option<Vec<Vec3>> = frame
            .colliders
            .filter(|c| opts.check && relevant(c))
            .map(|_| frame.guides.iter().map(|p| frame.pose.apply_f32(*p)).collect());
        let first_free = 2;
        // Squared position and velocity differences of every pair, relative to training.
        let rel: Vec<(f32, f32)> = model
            .pairs
            .par_iter()
            .enumerate()
            .map(|(k, &[a, b])| {
                let (pa, pb) = (
                    layout.guide(a as usize, frame.guides),
                    layout.guide(b as usize, frame.guides),
                );
                let dp: f32 = pa.iter().zip(pb).map(|(x, y)| x.distance_squared(*y)).sum();
                let dv: f32 = match (prev, dt) {
                    (Some(prev), Some(dt)) => {
                        let (qa, qb) = (layout.guide(a as usize, prev), layout.guide(b as usize, prev));
                        (0..pa.len().min(pb.len()))
                            .map(|j| (((pa[j] - qa[j]) - (pb[j] - qb[j])) / dt).length_squared())
                            .sum()
                    }
                    _ => 0.0,
                };
                (dp / model.pair_a[k].max(1e-12), dv / model.pair_b[k].max(1e-6))
            })
            .collect();
        // How much more the guides move against each other than in training, this frame.
        let mut ratios: Vec<f32> = rel.iter().map(|r| r.1).collect();
        let intensity = velocity_scale(&mut ratios, opts.velocity_quantile);
        self.stats.intensity_sum += intensity as f64;
        for r in &rel {
            let bin = RATIO_BINS
                .iter()
                .position(|&b| r.1 < b)
                .unwrap_or(RATIO_BINS.len());
            self.stats.ratio_histogram[bin] += 1;
        }
        let result: Vec<(bool, f32, u8)> = model
            .pairs
            .par_iter()
            .zip(&rel)
            .map(|(&[a, b], &(p, v))| {
                // Eq. 2, normalized (see the module doc).
                let d = (p + opts.sigma * v / intensity) / (1.0 + opts.sigma);
                if d >= opts.delta {
                    // 1: the positions alone split them; 3: their velocities did.
                    let by_position = p / (1.0 + opts.sigma) >= opts.delta;
                    return (false, d, if by_position { 1 } else { 3 });
                }
                if let (Some(w), Some(c)) = (&world, frame.colliders) {
                    let (wa, wb) = (layout.guide(a as usize, w), layout.guide(b as usize, w));
                    if !self.segments_clear(wa, wb, c, first_free) {
                        return (false, d, 2);
                    }
                }
                (true, d, 0)
            })
            .collect();
        self.stats.pairs += result.len() as u64;
        self.stats.split_by_motion += result.iter().filter(|r| r.2 == 1 || r.2 == 3).count() as u64;
        self.stats.split_by_position += result.iter().filter(|r| r.2 == 1).count() as u64;
        self.stats.split_by_solid += result.iter().filter(|r| r.2 == 2).count() as u64;
        result.into_iter().map(|(c, d, _)| (c, d)).unzip()
    }

    /// Alg. 1, lines 1–15: a group around every guide (sorted guide slots, the guide included).
    fn groups(&self, connected: &[bool], d: &[f32]) -> Vec<Vec<u32>> {
        (0..self.neighbours.len())
            .into_par_iter()
            .map(|g| {
                let mut cand: Vec<(f32, u32)> = self.neighbours[g]
                    .iter()
                    .filter(|(_, k)| connected[*k as usize])
                    .map(|&(o, k)| (d[k as usize], o))
                    .collect();
                cand.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                let mut kept: Vec<u32> = Vec::with_capacity(cand.len() + 1);
                for (_, t) in cand {
                    let fits = kept
                        .iter()
                        .all(|&k| self.pair(t, k).is_none_or(|p| connected[p as usize]));
                    if fits {
                        kept.push(t);
                    }
                }
                kept.push(g as u32);
                kept.sort_unstable();
                kept
            })
            .collect()
    }
}

/// Bits of `eligible` present in the sorted `group`.
fn mask_in(eligible: &[u32], group: &[u32]) -> u16 {
    let mut m = 0u16;
    for (k, g) in eligible.iter().enumerate() {
        if group.binary_search(g).is_ok() {
            m |= 1 << k;
        }
    }
    m
}

/// What choosing a strand's guide set for a frame reads (001 Eq. 3).
struct Chooser<'a> {
    skin: &'a Skinning,
    rot: &'a GuideRotations,
    current: &'a [u32],
    groups: &'a [Vec<u32>],
    in_groups: &'a [Vec<u32>],
    /// Per guide: whether any group it is in, was in, or joined changed since the last frame.
    stale: Option<&'a [bool]>,
    fading: &'a [Option<Box<Fade>>],
    blend: f32,
    now: f64,
    return_sq: f32,
}

impl Chooser<'_> {
    /// What strand s shows now with set `set` (its fade included).
    fn shown(&self, s: usize, set: usize, out: &mut [Vec3]) {
        self.skin.interpolate(s, set, self.rot, out);
        if let Some(f) = &self.fading[s] {
            let w = fade_weight(self.now - f.start, self.blend);
            out.iter_mut().zip(&f.offset).for_each(|(o, d)| *o += *d * w);
        }
    }

    /// Strand s's set for this frame: kept while it is valid (unless the strand may go back
    /// to its best-fitting set), else the valid set closest to what it shows; whether it
    /// switched, and the fade a switch starts.
    fn choose(&self, s: usize) -> (u32, bool, Option<Box<Fade>>) {
        let Chooser {
            skin,
            rot,
            current,
            groups,
            in_groups,
            stale,
            blend,
            now,
            return_sq,
            ..
        } = *self;
        let layout = &skin.layout;
        let shown = |s: usize, set: usize, out: &mut [Vec3]| self.shown(s, set, out);
        let cur = current[s];
        if layout.is_guide(s) || layout.counts[s] == 0 {
            return (cur, false, None);
        }
        let eligible = skin.eligible(s);
        if let Some(stale) = stale
            && cur as usize == skin.sets(s).start
            && eligible.iter().all(|g| !stale[*g as usize])
        {
            return (cur, false, None);
        }
        let mut masks: Vec<u16> = Vec::new();
        for g in eligible {
            for &c in &in_groups[*g as usize] {
                let m = mask_in(eligible, &groups[c as usize]);
                if !masks.iter().any(|&x| x & m == m) {
                    masks.retain(|&x| x & m != x);
                    masks.push(m);
                }
            }
        }
        let valid = |set: usize| {
            let m = skin.mask(set);
            masks.iter().any(|&x| x & m == m)
        };
        let n = layout.counts[s] as usize;
        let best = skin.sets(s).start;
        let cur_valid = valid(cur as usize);
        // A valid set is kept unless the strand may go back to its best-fitting set
        // (ours, see the options: when that is seamless, or always with a fade).
        if cur_valid && (cur as usize == best || !valid(best) || (return_sq <= 0.0 && blend <= 0.0)) {
            return (cur, false, None);
        }
        let mut before = vec![Vec3::ZERO; n];
        let mut trial = vec![Vec3::ZERO; n];
        let distance =
            |a: &[Vec3], b: &[Vec3]| -> f32 { a.iter().zip(b).map(|(x, y)| x.distance_squared(*y)).sum() };
        let target = if cur_valid {
            shown(s, cur as usize, &mut before);
            skin.interpolate(s, best, rot, &mut trial);
            if blend <= 0.0 && distance(&trial, &before) > return_sq * n as f32 {
                return (cur, false, None);
            }
            best
        } else {
            shown(s, cur as usize, &mut before);
            // The closest valid set's result ends in `trial`.
            let mut candidate = vec![Vec3::ZERO; n];
            let mut pick: Option<(f32, usize)> = None;
            for set in skin.sets(s).filter(|&k| valid(k)) {
                skin.interpolate(s, set, rot, &mut candidate);
                let e = distance(&candidate, &before);
                if pick.is_none_or(|(b, _)| e < b) {
                    pick = Some((e, set));
                    std::mem::swap(&mut candidate, &mut trial);
                }
            }
            let Some((_, set)) = pick else {
                return (cur, false, None);
            };
            set
        };
        let fade = (blend > 0.0).then(|| {
            Box::new(Fade {
                offset: before.iter().zip(&trial).map(|(a, b)| *a - *b).collect(),
                start: now,
            })
        });
        (target as u32, true, fade)
    }
}

impl Interpolator for AdaptiveSkinning {
    fn layout(&self) -> &GuideLayout {
        &self.skin.layout
    }

    fn stateful(&self) -> bool {
        true
    }

    fn interpolate(&mut self, frame: &GuideFrame, out: &mut [Vec3]) -> Result<()> {
        self.skin.layout.check_frame(frame.guides)?;
        let t = Instant::now();
        let (connected, d) = self.edges(frame);
        let groups = self.groups(&connected, &d);
        let mut in_groups: Vec<Vec<u32>> = vec![Vec::new(); groups.len()];
        for (c, members) in groups.iter().enumerate() {
            for &m in members {
                in_groups[m as usize].push(c as u32);
            }
        }
        let skin = &self.skin;
        let layout = &skin.layout;
        let rot = layout.rotations(frame.guides);
        // Eq. 3: keep the set while it is valid, else the valid set closest to it.
        let current = &self.current;
        let return_sq = self.options.return_distance * self.options.return_distance;
        // Groups unchanged since the last frame: a strand on its best set whose guides' groups
        // are all unchanged keeps it without a look (the same answer, sooner).
        // Per guide: whether any group it is in, was in, or joined changed.
        let stale: Option<Vec<bool>> = self.last_groups.as_ref().map(|(last, last_in)| {
            let changed: Vec<bool> = groups.iter().zip(last).map(|(a, b)| a != b).collect();
            in_groups
                .iter()
                .zip(last_in)
                .map(|(now, before)| now != before || now.iter().any(|c| changed[*c as usize]))
                .collect()
        });
        let chooser = Chooser {
            skin,
            rot: &rot,
            current,
            groups: &groups,
            in_groups: &in_groups,
            stale: stale.as_deref(),
            fading: &self.fading,
            blend: self.options.blend_seconds,
            now: frame.time,
            return_sq,
        };
        let chosen: Vec<(u32, bool, Option<Box<Fade>>)> = (0..layout.strand_count())
            .into_par_iter()
            .map(|s| chooser.choose(s))
            .collect();
        let (blend, now) = (chooser.blend, chooser.now);
        self.stats.switches += chosen.iter().filter(|c| c.1).count() as u64;
        self.stats.group_members += groups.iter().map(|g| g.len() as u64).sum::<u64>();
        self.stats.frames += 1;
        let mut current = Vec::with_capacity(chosen.len());
        for (s, (set, switched, fade)) in chosen.into_iter().enumerate() {
            current.push(set);
            if switched {
                self.fading[s] = fade;
            } else if self.fading[s]
                .as_ref()
                .is_some_and(|f| fade_weight(now - f.start, blend) == 0.0)
            {
                self.fading[s] = None;
            }
        }
        self.current = current;
        self.last_groups = Some((groups, in_groups));
        let grouped = t.elapsed();
        // Eq. 5 with the chosen sets.
        let t = Instant::now();
        let current = &self.current;
        let fading = &self.fading;
        layout.fill(frame.guides, out, |s, dst| {
            skin.interpolate(s, current[s] as usize, &rot, dst);
            if let Some(f) = &fading[s] {
                let w = fade_weight(now - f.start, blend);
                dst.iter_mut().zip(&f.offset).for_each(|(o, d)| *o += *d * w);
            }
        });
        self.times.grouping += grouped;
        self.times.interpolation += t.elapsed();
        self.previous = Some((frame.guides.to_vec(), frame.time));
        Ok(())
    }

    fn weights(&self, s: usize, out: &mut Vec<(u32, Vec<f32>)>) {
        self.skin.set_weights(s, self.current[s] as usize, out);
    }

    fn candidates(&self, s: usize, out: &mut Vec<u32>) {
        out.clear();
        out.extend(self.skin.eligible(s));
        out.sort_unstable();
    }

    fn times(&self) -> InterpTimes {
        self.times
    }

    fn diagnostics(&self) -> serde_json::Value {
        let st = &self.stats;
        let f = st.frames.max(1) as f64;
        serde_json::json!({
            "frames": st.frames,
            "pairs": st.pairs as f64 / f,
            "split_by_motion": st.split_by_motion as f64 / f,
            "split_by_position": st.split_by_position as f64 / f,
            "split_by_solid": st.split_by_solid as f64 / f,
            "switches_per_frame": st.switches as f64 / f,
            "mean_group": st.group_members as f64 / (f * self.skin.layout.guide_count().max(1) as f64),
            "mean_velocity_scaling": st.intensity_sum / f,
            "velocity_ratio_bins": RATIO_BINS,
            "velocity_ratio_share": st.ratio_histogram.iter().map(|&c| c as f64 / (st.pairs.max(1) as f64)).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guides::StaticSkinning;
    use crate::guides::skinning::fit::tests::{N, blend_frame, fitted_fixture};
    use crate::motion::Pose;
    use glam::Quat;

    /// Runs adaptive and static skinning of the fitted fixture over `frames` (guides only, head
    /// frame) and returns the largest distance between their results and adaptive's set switches.
    fn compare(frames: &[Vec<Vec3>]) -> (f32, u64) {
        let (a, b, switches) = run_both(frames, AdaptiveOptions::default());
        let worst = a
            .iter()
            .flatten()
            .zip(b.iter().flatten())
            .map(|(x, y)| x.distance(*y))
            .fold(0.0f32, f32::max);
        (worst, switches)
    }

    /// Every frame's results of adaptive (with `options`) and static skinning of the fitted
    /// fixture over `frames`, and adaptive's set switches.
    fn run_both(frames: &[Vec<Vec3>], options: AdaptiveOptions) -> (Vec<Vec<Vec3>>, Vec<Vec<Vec3>>, u64) {
        let dir =
            std::env::temp_dir().join(format!("tress-adaptive-{}-{}", std::process::id(), frames.len()));
        std::fs::create_dir_all(&dir).unwrap();
        let (groom, model, _) = fitted_fixture(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        let mut adaptive = AdaptiveSkinning::new(Skinning::new(model.clone(), &groom).unwrap(), options);
        let mut stat = StaticSkinning::new(Skinning::new(model, &groom).unwrap());
        let (mut ra, mut rb) = (Vec::new(), Vec::new());
        for (f, g) in frames.iter().enumerate() {
            let frame = GuideFrame {
                frame: f as f64,
                time: f as f64 / 24.0,
                guides: g,
                pose: &Pose::IDENTITY,
                colliders: None,
            };
            let mut a = vec![Vec3::ZERO; groom.points().len()];
            let mut b = a.clone();
            adaptive.interpolate(&frame, &mut a).unwrap();
            stat.interpolate(&frame, &mut b).unwrap();
            ra.push(a);
            rb.push(b);
        }
        (ra, rb, adaptive.stats.switches)
    }

    /// The fixture's guides swung against each other (`a` radians) about their roots.
    fn swung(a: f32) -> Vec<Vec3> {
        let groom = crate::guides::skinning::fit::tests::fixture_groom();
        let mut g = Vec::new();
        for (k, sign) in [(0usize, -1.0f32), (1, 1.0)] {
            let pts = groom.strand(k);
            let q = Quat::from_rotation_z(sign * a);
            g.extend(pts.iter().map(|p| pts[0] + q * (*p - pts[0])));
        }
        g
    }

    /// The guides' points of the fixture groom moved by `q` about the point `c`.
    fn rigid(q: Quat, c: Vec3) -> Vec<Vec3> {
        let groom = crate::guides::skinning::fit::tests::fixture_groom();
        (0..2)
            .flat_map(|k| groom.strand(k).to_vec())
            .map(|p| c + q * (p - c))
            .collect()
    }

    /// The velocity scaling is the quantile asked for, never below 1: a frame where a fifth of
    /// the pairs move apart 10× their training ratio and the rest at half of it is a calm frame
    /// by the median (scale 1, the fifth split) and a fast one by the 90th percentile (scale 10).
    #[test]
    fn velocity_scale_is_the_asked_quantile_at_least_one() {
        let frame = |n: usize| -> Vec<f32> { (0..n).map(|i| if i % 5 == 0 { 10.0 } else { 0.5 }).collect() };
        assert_eq!(velocity_scale(&mut frame(100), 0.5), 1.0);
        assert_eq!(velocity_scale(&mut frame(100), 0.9), 10.0);
        assert_eq!(velocity_scale(&mut frame(100), 1.0), 10.0);
        // The median of 1..=4 is the upper middle value (index len / 2), as before the option.
        assert_eq!(velocity_scale(&mut [4.0, 1.0, 3.0, 2.0], 0.5), 3.0);
        assert_eq!(velocity_scale(&mut [], 0.9), 1.0);
    }

    /// 001 §4: when all guides move alike the guide graph stays whole and adaptive skinning
    /// is static skinning, exactly.
    #[test]
    fn adaptive_equals_static_when_all_guides_move_alike() {
        let frames: Vec<Vec<Vec3>> = (0..48)
            .map(|f| {
                let a = 0.6 * (f as f32 * 0.2).sin();
                rigid(
                    Quat::from_rotation_z(a) * Quat::from_rotation_x(0.5 * a),
                    Vec3::new(0.0, 8.0, 3.0),
                )
            })
            .collect();
        let (worst, switches) = compare(&frames);
        assert_eq!(switches, 0);
        assert_eq!(worst, 0.0, "adaptive differs from static by {worst} cm");
    }

    /// And when they swing against each other fast, the graph splits, strands change sets and
    /// the results differ (the check above can fail).
    #[test]
    fn guides_moving_apart_split_the_graph() {
        let groom = crate::guides::skinning::fit::tests::fixture_groom();
        let frames: Vec<Vec<Vec3>> = (0..24).map(|f| swung(1.2 * (f as f32 * 0.6).sin())).collect();
        let (worst, switches) = compare(&frames);
        assert!(switches > 0 && worst > 0.1, "switches {switches}, worst {worst}");
        // The training frames themselves stay whole: they are what the model was fitted on.
        let training: Vec<Vec<Vec3>> = (0..40)
            .map(|f| blend_frame(&groom, f)[..2 * N].to_vec())
            .collect();
        let (_, switches) = compare(&training);
        assert_eq!(switches, 0, "the training motion splits the graph");
    }

    /// Set switches are faded in: a strand never jumps, and once the guides move alike again
    /// for longer than the fade, every strand is back on its best set (static skinning,
    /// exactly). Eq. 3 as written (no fade, no return) leaves strands on the sets the split
    /// gave them.
    #[test]
    fn switches_fade_in_and_strands_return_to_their_best_set() {
        // One second of the guides swinging apart, then 1.5 s of the training motion (which
        // keeps the graph whole, see above; at rest every set gives the rest shape, so the
        // guides must move for the sets to differ).
        let groom = crate::guides::skinning::fit::tests::fixture_groom();
        let frames: Vec<Vec<Vec3>> = (0..60)
            .map(|f| {
                if f < 24 {
                    swung(1.2 * (f as f32 * 0.6).sin())
                } else {
                    blend_frame(&groom, f - 24)[..2 * N].to_vec()
                }
            })
            .collect();
        let last = frames.len() - 1;
        let paper = AdaptiveOptions {
            blend_seconds: 0.0,
            return_distance: 0.0,
            ..Default::default()
        };
        let faded = AdaptiveOptions::default();
        assert!(faded.blend_seconds >= 0.25);
        let off_at_end = |a: &[Vec<Vec3>], b: &[Vec<Vec3>]| {
            a[last]
                .iter()
                .zip(&b[last])
                .map(|(x, y)| x.distance(*y))
                .fold(0.0f32, f32::max)
        };
        let (a0, b0, s0) = run_both(&frames, paper);
        let (a2, b2, s2) = run_both(&frames, faded.clone());
        assert!(s0 > 0 && s2 > 0, "switches {s0} {s2}");
        assert!(
            off_at_end(&a0, &b0) > 0.05,
            "Eq. 3 alone returned to the best sets: {} cm off",
            off_at_end(&a0, &b0)
        );
        assert!(
            off_at_end(&a2, &b2) == 0.0,
            "after the fade, adaptive is {} cm off static skinning",
            off_at_end(&a2, &b2)
        );
        // At a switch, a strand is where its old set (and fade) would have put it this frame.
        let pop = |options: AdaptiveOptions| {
            let dir = std::env::temp_dir().join(format!("tress-adaptive-pop-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let (groom, model, _) = fitted_fixture(&dir);
            let _ = std::fs::remove_dir_all(&dir);
            let blend = options.blend_seconds;
            let mut adaptive = AdaptiveSkinning::new(Skinning::new(model, &groom).unwrap(), options);
            let mut out = vec![Vec3::ZERO; groom.points().len()];
            let mut worst = 0.0f32;
            for (f, g) in frames.iter().enumerate() {
                let time = f as f64 / 24.0;
                let old_sets = adaptive.current.clone();
                let old_fades: Vec<Option<(Vec<Vec3>, f64)>> = adaptive
                    .fading
                    .iter()
                    .map(|x| x.as_ref().map(|x| (x.offset.clone(), x.start)))
                    .collect();
                let frame = GuideFrame {
                    frame: f as f64,
                    time,
                    guides: g,
                    pose: &Pose::IDENTITY,
                    colliders: None,
                };
                adaptive.interpolate(&frame, &mut out).unwrap();
                let rot = adaptive.skin.layout.rotations(g);
                for s in 2..5 {
                    if adaptive.current[s] == old_sets[s] {
                        continue;
                    }
                    let mut was = vec![Vec3::ZERO; N];
                    adaptive.skin.interpolate(s, old_sets[s] as usize, &rot, &mut was);
                    if let Some((offset, start)) = &old_fades[s] {
                        let w = fade_weight(time - start, blend);
                        was.iter_mut().zip(offset).for_each(|(p, o)| *p += *o * w);
                    }
                    let now = &out[s * N..(s + 1) * N];
                    worst = was
                        .iter()
                        .zip(now)
                        .map(|(a, b)| a.distance(*b))
                        .fold(worst, f32::max);
                }
            }
            worst
        };
        let instant = pop(AdaptiveOptions {
            blend_seconds: 0.0,
            ..Default::default()
        });
        assert!(instant > 0.1, "instant switches jump {instant} cm");
        let faded = pop(faded);
        assert!(faded < 1e-5, "faded switches jump {faded} cm");
    }
}
