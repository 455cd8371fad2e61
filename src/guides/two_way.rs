//! Two-way collision correction (001 §5): normal strands that the interpolation puts inside a
//! solid push back on the guides that carry them, so sparse guides learn about collisions they
//! never touch.
//!
//! At the start of each substep the normal strands are interpolated from the guides' state;
//! every normal particle inside a solid gets a penalty acceleration along the solid's normal n
//! (§5.1). Ours: the penalty starts a margin m outside the solid and is damped,
//!
//!   I_s(i) = max(0, k·(m − d) − 2ζ√k·(v − v_solid)·n)·n,
//!
//! d the signed distance, v the particle's velocity since the last substep. Without the margin
//! a thin prop must first be entered to be felt, and with the guides' explicit response that
//! takes a stiffness that makes them rebound (measured on `examples/rod.toml`: k = 5·10⁵ and no
//! margin left 7.7× fewer vertices inside the rod than static skinning at 1.4× the ground
//! truth's jitter; k = 2·10⁴, m = 0.3 cm, ζ = 1: 13× fewer at 1.06×). The effective guide accelerations I*_g are the least-squares fit of Eq. 4,
//!
//!   min Σ_s Σ_i ‖Σ_{g∈𝒢_s} w_{g→s}(i) I*_g(i) − I_s(i)‖²,
//!
//! whose rows are all normal strands (those out of the solids ask for zero). Particle index i
//! only couples guide particles i, so the problem splits by index and, within an index, into the
//! groups of guides linked by colliding strands (§5.2's "smaller subsystems", solved in
//! parallel): each block's normal equations (WᵀW + λI)·X = WᵀT by nalgebra's Cholesky, with a
//! small ridge λ for guides no strand constrains. The accelerations act on the guides through
//! the next substep ([`crate::sim::ExternalForces`]); the guides' own collisions stay as they are.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use glam::Vec3;
use nalgebra::{DMatrix, DVector};
use petgraph::unionfind::UnionFind;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::interpolator::{GuideFrame, Interpolator};
use super::layout::GuideLayout;
use crate::collide::Colliders;
use crate::sim::ExternalForces;

/// Which solids the correction answers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CorrectionSolids {
    /// Props only (solids on their own tracks: rods, combs, hands).
    Props,
    /// Props, head and body.
    All,
}

/// Settings of the correction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TwoWayOptions {
    /// Penalty acceleration per cm of depth of a normal particle inside a solid, or inside its
    /// `margin` (1/s²). A guide must be pushed through its own bending stiffness and the many
    /// normal strands it carries that ask for nothing (Eq. 4's zero rows). Measured on a rod
    /// swept through the hair (`examples/rod.toml`), with the margin: 2·10⁴ leaves 13× fewer
    /// vertices inside it than static skinning; stiffer pushes the guides harder than the
    /// strands need and costs smoothness (5·10⁵ without a margin: 7.7× fewer, jitter 1.4× the
    /// ground truth's).
    pub stiffness: f32,
    /// Damping of the penalty as a share of critical (ζ): a normal particle inside a solid
    /// gets −2ζ√k times its velocity along the solid's normal, relative to the solid, so the
    /// guides it pushes do not overshoot and rebound each step (the penalty never pulls).
    pub damping: f32,
    /// Distance (cm) from a solid at which the penalty starts: normal particles closer than
    /// this are pushed by k·(margin − distance), so the guides answer before strands enter.
    pub margin: f32,
    /// Ridge of the normal equations, relative to their mean diagonal.
    pub ridge: f64,
    /// Props by default: interpolated strands lying on the scalp dip a few millimetres under
    /// it (a blend of guides on a curved surface falls under the arc; the position-based
    /// correction lifts them), and answering those dips with forces pushes the guides off the
    /// head (measured on a held-out gentle motion: RMSE 1.07 cm with the head, 0.92 without).
    pub solids: CorrectionSolids,
}

impl Default for TwoWayOptions {
    fn default() -> Self {
        TwoWayOptions {
            stiffness: 2.0e4,
            damping: 1.0,
            margin: 0.3,
            ridge: 1e-3,
            solids: CorrectionSolids::Props,
        }
    }
}

/// What the correction did, over all frames so far.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct TwoWayStats {
    pub frames: u64,
    /// Normal particles found inside a solid (summed over frames).
    pub colliding: u64,
    /// Blocks of Eq. 4 solved.
    pub blocks: u64,
    /// Seconds interpolating the normal strands for the check, and solving Eq. 4.
    #[serde(rename = "interpolation_seconds")]
    pub interpolation: f64,
    #[serde(rename = "correction_seconds")]
    pub correction: f64,
}

/// The coupling: an interpolator of the guides being simulated (guide slot order = the
/// simulation's strands) and the correction's settings.
pub struct TwoWay {
    interp: Box<dyn Interpolator>,
    options: TwoWayOptions,
    /// Shared with whoever reports on the run.
    pub stats: Arc<Mutex<TwoWayStats>>,
    local: Vec<Vec3>,
    full: Vec<Vec3>,
    /// The normal particles' world positions at the last call, and its time (for velocities).
    last: Option<(Vec<Vec3>, f64)>,
    spare: Vec<Vec3>,
    /// Per guide, the normal strands it may carry (built on first use).
    carriers: Vec<Vec<u32>>,
}

impl TwoWay {
    pub fn new(interp: Box<dyn Interpolator>, options: TwoWayOptions) -> TwoWay {
        TwoWay {
            interp,
            options,
            stats: Arc::new(Mutex::new(TwoWayStats::default())),
            local: Vec::new(),
            full: Vec::new(),
            last: None,
            spare: Vec::new(),
            carriers: Vec::new(),
        }
    }
}

/// A strand's current guides with their weight per particle.
type StrandWeights = Vec<(u32, Vec<f32>)>;

/// One normal particle inside a solid: strand, particle index, penalty acceleration.
struct Hit {
    strand: usize,
    index: usize,
    accel: Vec3,
}

/// A block of Eq. 4: particle index i, its guides (sorted), the hit strands' target
/// accelerations.
type Block = (usize, Vec<u32>, BTreeMap<u32, Vec3>);

/// Eq. 4 for the colliding normal particles `hits`, with every normal strand's current guide
/// weights from `interp`: the effective acceleration of each guide particle (guide points
/// order, `guide_offsets`). `carriers[g]`: the normal strands guide `g` may carry (only
/// those near a hit are weighed).
fn effective_forces(
    interp: &dyn Interpolator,
    carriers: &[Vec<u32>],
    hits: &[Hit],
    ridge: f64,
    blocks: &mut u64,
) -> Vec<Vec3> {
    let layout = interp.layout();
    let mut out = vec![Vec3::ZERO; layout.guide_point_count()];
    if hits.is_empty() {
        return out;
    }
    let weights = weights_near(interp, carriers, hits);
    let mut carried: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (&s, w) in &weights {
        for (g, _) in w {
            carried.entry(*g).or_default().push(s);
        }
    }
    let jobs = eq4_blocks(hits, &weights);
    *blocks += jobs.len() as u64;
    let solved: Vec<(usize, Vec<u32>, Vec<Vec3>)> = jobs
        .into_par_iter()
        .map(|(i, guides, targets)| {
            let forces = solve_block(layout, &weights, &carried, (i, &guides, &targets), ridge);
            (i, guides, forces)
        })
        .collect();
    for (i, guides, forces) in solved {
        for (g, f) in guides.into_iter().zip(forces) {
            let slot = g as usize;
            let n = layout.counts[layout.guides[slot]] as usize;
            let start = layout.guide_start(slot);
            out[start + i.min(n - 1)] += f;
        }
    }
    out
}

/// The rows of Eq. 4 that can matter: strands carried by a guide that carries a hit strand,
/// with their current weights, taken once each: the hit strands' first, then the others'.
fn weights_near(
    interp: &dyn Interpolator,
    carriers: &[Vec<u32>],
    hits: &[Hit],
) -> BTreeMap<u32, StrandWeights> {
    let weigh = |strands: &[u32]| -> Vec<(u32, StrandWeights)> {
        strands
            .par_iter()
            .map(|&s| {
                let mut w = Vec::new();
                interp.weights(s as usize, &mut w);
                (s, w)
            })
            .collect()
    };
    let mut hit_strands: Vec<u32> = hits.iter().map(|h| h.strand as u32).collect();
    hit_strands.sort_unstable();
    hit_strands.dedup();
    let mut weights: BTreeMap<u32, StrandWeights> = weigh(&hit_strands).into_iter().collect();
    let mut hit_guides: Vec<u32> = weights.values().flatten().map(|(g, _)| *g).collect();
    hit_guides.sort_unstable();
    hit_guides.dedup();
    let mut others: Vec<u32> = hit_guides
        .iter()
        .flat_map(|&g| carriers[g as usize].iter().copied())
        .filter(|s| !weights.contains_key(s))
        .collect();
    others.sort_unstable();
    others.dedup();
    weights.extend(weigh(&others));
    weights
}

/// The blocks of Eq. 4: hits grouped by particle index; within an index, guides linked by a
/// hit strand that blends them form a block (in order of their smallest guide).
fn eq4_blocks(hits: &[Hit], weights: &BTreeMap<u32, StrandWeights>) -> Vec<Block> {
    let mut by_index: BTreeMap<usize, Vec<&Hit>> = BTreeMap::new();
    for h in hits {
        by_index.entry(h.index).or_default().push(h);
    }
    let mut jobs: Vec<Block> = Vec::new();
    for (i, hs) in by_index {
        // The guide slots the hits name, joined when a hit strand blends them.
        let mut keys: Vec<u32> = hs
            .iter()
            .flat_map(|h| weights[&(h.strand as u32)].iter().map(|(g, _)| *g))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let at = |g: u32| keys.binary_search(&g).expect("a hit's guide");
        let mut sets = UnionFind::<usize>::new(keys.len());
        for h in &hs {
            let w = &weights[&(h.strand as u32)];
            for pair in w.windows(2) {
                sets.union(at(pair[0].0), at(pair[1].0));
            }
        }
        // Blocks in order of their smallest guide, each guide list sorted.
        let mut block_of: BTreeMap<usize, usize> = BTreeMap::new();
        let mut comps: Vec<Vec<u32>> = Vec::new();
        for (k, &g) in keys.iter().enumerate() {
            let next = comps.len();
            let b = *block_of.entry(sets.find_mut(k)).or_insert(next);
            if b == next {
                comps.push(Vec::new());
            }
            comps[b].push(g);
        }
        let targets: BTreeMap<u32, Vec3> = hs.iter().map(|h| (h.strand as u32, h.accel)).collect();
        for guides in comps {
            jobs.push((i, guides, targets.clone()));
        }
    }
    jobs
}

/// One block of Eq. 4 solved in the least-squares sense with a ridge: over every normal strand
/// carried by a guide of the block at particle i, Σ_g w_{g→s}(i) f_g ≈ the strand's target
/// (its hit's acceleration, 0 for the others). Returns f_g per guide of the block.
fn solve_block(
    layout: &GuideLayout,
    weights: &BTreeMap<u32, StrandWeights>,
    carried: &BTreeMap<u32, Vec<u32>>,
    (i, guides, targets): (usize, &[u32], &BTreeMap<u32, Vec3>),
    ridge: f64,
) -> Vec<Vec3> {
    // Rows: every normal strand carried by a guide of the block at particle i.
    let mut rows: Vec<u32> = guides
        .iter()
        .flat_map(|g| carried.get(g).into_iter().flatten().copied())
        .filter(|&s| (i as u32) < layout.counts[s as usize])
        .collect();
    rows.sort_unstable();
    rows.dedup();
    let m = guides.len();
    let mut wtw = DMatrix::<f64>::zeros(m, m);
    let mut wtt = DMatrix::<f64>::zeros(m, 3);
    let mut row = vec![0.0f64; m];
    for &s in &rows {
        row.iter_mut().for_each(|x| *x = 0.0);
        for (g, w) in &weights[&s] {
            if let Ok(k) = guides.binary_search(g) {
                row[k] = w[i] as f64;
            }
        }
        let t = targets.get(&s).copied().unwrap_or(Vec3::ZERO);
        for a in 0..m {
            if row[a] == 0.0 {
                continue;
            }
            for b in 0..m {
                wtw[(a, b)] += row[a] * row[b];
            }
            for c in 0..3 {
                wtt[(a, c)] += row[a] * t[c] as f64;
            }
        }
    }
    let mean_diag = (0..m).map(|a| wtw[(a, a)]).sum::<f64>() / m as f64;
    for a in 0..m {
        wtw[(a, a)] += ridge * mean_diag.max(1e-12);
    }
    let x = match wtw.clone().cholesky() {
        Some(ch) => ch.solve(&wtt),
        None => wtw
            .svd(true, true)
            .solve(&wtt, 1e-12)
            .unwrap_or_else(|_| DMatrix::zeros(m, 3)),
    };
    (0..m)
        .map(|a| {
            let v = DVector::from_iterator(3, (0..3).map(|c| x[(a, c)]));
            Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32)
        })
        .collect()
}

impl ExternalForces for TwoWay {
    fn accelerations(&mut self, x: &[Vec3], time: f64, colliders: &Colliders) -> Option<Vec<Vec3>> {
        let t = Instant::now();
        let pose = colliders.head.at(time);
        let inv = pose.inverse();
        self.local.clear();
        self.local.extend(x.iter().map(|p| inv.apply_f32(*p)));
        let frame_colliders = colliders.at(time);
        self.full.resize(self.interp.layout().rest.len(), Vec3::ZERO);
        let ok = self.interp.interpolate(
            &GuideFrame {
                frame: 0.0,
                time,
                guides: &self.local,
                pose: &pose,
                colliders: Some(&frame_colliders),
            },
            &mut self.full,
        );
        if ok.is_err() {
            return None;
        }
        let interpolated = t.elapsed();
        let t = Instant::now();
        let layout = self.interp.layout();
        let k = self.options.stiffness;
        let c_damp = 2.0 * self.options.damping * k.sqrt();
        let margin = self.options.margin;
        let all = self.options.solids == CorrectionSolids::All;
        let mut world = std::mem::take(&mut self.spare);
        world.clear();
        world.par_extend(self.full.par_iter().map(|p| pose.apply_f32(*p)));
        let last = self
            .last
            .as_ref()
            .filter(|(w, t0)| w.len() == world.len() && time > *t0)
            .map(|(w, t0)| (w.as_slice(), (time - t0) as f32));
        // §5.1: penalty accelerations of the free normal particles inside a solid.
        let hits: Vec<Hit> = (0..layout.strand_count())
            .into_par_iter()
            .flat_map_iter(|s| {
                let skip = layout.is_guide(s);
                let range = layout.offsets[s]..layout.offsets[s + 1];
                let world = &world;
                let fc = &frame_colliders;
                range
                    .enumerate()
                    .skip(2)
                    .filter(move |_| !skip)
                    .filter_map(move |(i, p)| {
                        let w = world[p];
                        let c = if all { fc.query(w)? } else { fc.query_props(w)? };
                        if c.distance >= margin {
                            return None;
                        }
                        let v_n = last.map_or(0.0, |(before, dt)| {
                            ((w - before[p]) / dt - c.velocity).dot(c.normal)
                        });
                        let push = (k * (margin - c.distance) - c_damp * v_n).max(0.0);
                        Some(Hit {
                            strand: s,
                            index: i,
                            accel: c.normal * push,
                        })
                    })
            })
            .collect();
        // The buffer of the call before is the next call's.
        if let Some((old, _)) = self.last.replace((world, time)) {
            self.spare = old;
        }
        if self.carriers.is_empty() && !hits.is_empty() {
            let mut carriers = vec![Vec::new(); layout.guide_count()];
            let mut c = Vec::new();
            for s in 0..layout.strand_count() {
                self.interp.candidates(s, &mut c);
                for &g in &c {
                    carriers[g as usize].push(s as u32);
                }
            }
            self.carriers = carriers;
        }
        let mut blocks = 0;
        let forces = effective_forces(
            self.interp.as_ref(),
            &self.carriers,
            &hits,
            self.options.ridge,
            &mut blocks,
        );
        tracing::debug!(
            time,
            hits = hits.len(),
            guide_particles_forced = forces.iter().filter(|f| **f != Vec3::ZERO).count(),
            "two-way correction"
        );
        if let Ok(mut st) = self.stats.lock() {
            st.frames += 1;
            st.colliding += hits.len() as u64;
            st.blocks += blocks;
            st.interpolation += interpolated.as_secs_f64();
            st.correction += t.elapsed().as_secs_f64();
        }
        if hits.is_empty() {
            return None;
        }
        // Guide accelerations are in world space already (the penalties were).
        Some(forces)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::{Colliders, Sphere};
    use crate::groom::Groom;
    use crate::guides::FixedWeights;
    use crate::motion::{HeadTrack, Pose};
    use crate::sim::{Material, SimOptions, Simulation};

    /// One guide hanging at x = 0 carries three normal strands 1.5 cm beside it; a sphere hangs
    /// where the normal strands are, clear of the guide. Without correction the normal strands
    /// stay inside the sphere; with it, the guide is pushed away until they come out.
    #[test]
    fn penetrating_normal_strands_push_their_guide_out() {
        let n = 12;
        let strand = |x: f32, z: f32| (0..n).map(move |i| Vec3::new(x, -(i as f32), z));
        let points: Vec<Vec3> = strand(0.0, 0.0)
            .chain(strand(1.5, -0.3))
            .chain(strand(1.5, 0.0))
            .chain(strand(1.5, 0.3))
            .collect();
        let groom = Groom::new(points, vec![n as u32; 4], Default::default()).unwrap();
        let guide = groom.filter_strands(|s| s == 0);
        let colliders = |center: Vec3| {
            let mut c = Colliders {
                parts: Vec::new(),
                head: HeadTrack::still(Pose::IDENTITY),
                torso: HeadTrack::still(Pose::IDENTITY),
                props: Vec::new(),
            };
            let sphere = Sphere { center, radius: 1.2 };
            c.add_prop("sphere", Box::new(sphere), HeadTrack::still(Pose::IDENTITY));
            c
        };
        let deepest = |sim: &Simulation| {
            let mut interp = FixedWeights::nearest(&groom, &[0]).unwrap();
            let mut full = vec![Vec3::ZERO; groom.points().len()];
            let frame = GuideFrame {
                frame: 0.0,
                time: sim.time,
                guides: &sim.x,
                pose: &Pose::IDENTITY,
                colliders: None,
            };
            interp.interpolate(&frame, &mut full).unwrap();
            let c = sim.colliders.at(sim.time);
            full[n..]
                .iter()
                .map(|p| c.query(*p).map_or(0.0, |q| (-q.distance).max(0.0)))
                .fold(0.0f32, f32::max)
        };
        let run = |coupled: Option<TwoWayOptions>, center: Vec3| {
            let options = SimOptions {
                hair_hair: false,
                preroll_frames: 0,
                ..Default::default()
            };
            let mut sim = Simulation::new(&guide, Material::default(), options, colliders(center), 0.0);
            if let Some(o) = coupled {
                let interp = Box::new(FixedWeights::nearest(&groom, &[0]).unwrap());
                sim.forces = Some(Box::new(TwoWay::new(interp, o)));
            }
            let before = deepest(&sim);
            for _ in 0..48 {
                sim.step_frame(1.0 / 24.0, true);
            }
            (before, deepest(&sim), sim.x[n - 1].x)
        };
        let inside = Vec3::new(1.8, -7.0, 0.0);
        let (before, free, _) = run(None, inside);
        assert!(
            before > 0.5 && free > 0.5,
            "the setup puts the normal strands inside: {before} {free}"
        );
        let (_, corrected, tip_x) = run(Some(TwoWayOptions::default()), inside);
        assert!(
            corrected < 0.1 * free,
            "corrected depth {corrected} vs {free} uncorrected"
        );
        assert!(
            tip_x < -0.3,
            "the guide was pushed away from the sphere: tip x {tip_x}"
        );
        // Without the margin nor damping, the penalty alone (001 §5.1) does it too, stiffer
        // (with the straight material's bend of 2e3, 2e5 leaves 0.12 cm, 1e5 0.18 cm).
        let bare = TwoWayOptions {
            margin: 0.0,
            damping: 0.0,
            stiffness: 5.0e5,
            ..TwoWayOptions::default()
        };
        let (_, corrected, _) = run(Some(bare.clone()), inside);
        assert!(
            corrected < 0.1 * free,
            "bare penalty: depth {corrected} vs {free}"
        );
        // A sphere the normal strands pass 0.15–0.18 cm outside of: within the margin, the
        // guide moves away before they touch it; with no margin nothing pushes it.
        let near = Vec3::new(1.5 + 1.2 + 0.15, -7.0, 0.0);
        let (touching, _, _) = run(None, near);
        assert_eq!(touching, 0.0, "the strands start clear of the sphere");
        let (_, _, tip_margin) = run(Some(TwoWayOptions::default()), near);
        let (_, _, tip_bare) = run(Some(bare), near);
        assert!(
            tip_margin < -0.05,
            "the margin pushed the guide away: tip x {tip_margin}"
        );
        assert!(
            tip_bare.abs() < 1e-4,
            "nothing pushes the guide without a margin: tip x {tip_bare}"
        );
    }
}
