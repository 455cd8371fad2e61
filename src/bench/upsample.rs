//! `tress bench upsample`: the per-frame cost of the reduced model at 001's size (§7.3, T2:
//! 150K strands × 25 points from 400 guides) — guide graph + grouping + set assignment,
//! interpolation (Eq. 5), and the two-way correction (Eq. 4) — next to static skinning and IDW
//! in the same run, on the procedural straight groom.
//!
//! Fitting needs a full simulation of all 150K strands, so the model is built directly: each
//! normal strand's 4 closest guides are its eligible set, its sets are that set (inverse-
//! distance weights) and each member alone — more sets than the fits on the quickstart keep
//! (≈ 3 eligible, ≈ 8 sets per strand there at 6 eligible), so grouping and interpolation
//! cost at least what a fitted model does. The guides swing with phases that differ
//! across the head, so the guide graph splits and strands switch sets every frame. A rod
//! (capsule) lies across the back of the hair, so the correction has penetrations to answer.

use std::time::{Duration, Instant};

use glam::{Quat, Vec3};
use serde::Serialize;
use tress_formats::skin::SkinModel;

use crate::collide::{Capsule, Colliders};
use crate::error::{Error, Result};
use crate::groom::{Groom, Transform};
use crate::guides::two_way::{CorrectionSolids, TwoWay, TwoWayOptions};
use crate::guides::{
    AdaptiveOptions, AdaptiveSkinning, FixedWeights, GuideFrame, GuideLayout, Interpolator, Skinning,
    StaticSkinning, select_uv_lattice,
};
use crate::motion::{HeadTrack, Pose};
use crate::scene::load_groom;
use crate::sim::ExternalForces;

#[derive(Debug, Serialize)]
pub struct UpsampleBench {
    pub strands: usize,
    pub points: usize,
    pub guides: usize,
    pub threads: usize,
    pub frames: usize,
    pub sets_per_strand: f64,
    /// The model as a `.tskin` file.
    pub model_bytes: usize,
    pub model_bytes_per_strand: f64,
    /// Milliseconds per frame (mean over the timed frames).
    pub idw_ms: f64,
    pub static_ms: f64,
    pub adaptive_grouping_ms: f64,
    pub adaptive_interpolation_ms: f64,
    /// The correction's own interpolation of the normal strands (it checks them against the
    /// solids) and its solve of Eq. 4.
    pub correction_interpolation_ms: f64,
    pub correction_solve_ms: f64,
    /// Normal particles inside the rod per frame.
    pub colliding_per_frame: f64,
    /// Set switches per frame (strands whose guide set changed).
    pub switches_per_frame: f64,
}

/// The directly built model described in the module doc.
fn synthetic_model(groom: &Groom, guides: &[usize]) -> Result<SkinModel> {
    let layout = GuideLayout::new(groom, guides)?;
    let n = groom.strand_count();
    let mut m = SkinModel {
        meta: "{\"bench\": \"synthetic: 4 closest guides, inverse-distance weights\"}".into(),
        counts: groom.counts().to_vec(),
        guides: guides.iter().map(|&g| g as u32).collect(),
        eligible_start: vec![0],
        eligible: Vec::new(),
        set_start: vec![0],
        set_mask: Vec::new(),
        coefs: Vec::new(),
        pairs: Vec::new(),
        pair_a: Vec::new(),
        pair_b: Vec::new(),
    };
    let closest: Vec<Vec<u32>> = {
        use rayon::prelude::*;
        (0..n)
            .into_par_iter()
            .map(|s| {
                if layout.is_guide(s) || groom.counts()[s] == 0 {
                    Vec::new()
                } else {
                    layout.closest_guides(s, 4, 16)
                }
            })
            .collect()
    };
    let mut pairs = std::collections::BTreeSet::new();
    for (s, e) in closest.iter().enumerate() {
        let mut e = e.clone();
        e.sort_unstable();
        if !e.is_empty() {
            let root = groom.strand(s)[0];
            let w: Vec<f32> = e
                .iter()
                .map(|&g| 1.0 / (0.1 + groom.strand(guides[g as usize])[0].distance(root)))
                .collect();
            let sum: f32 = w.iter().sum();
            m.set_mask.push(((1u32 << e.len()) - 1) as u16);
            m.coefs.extend(w.iter().map(|x| [0.0, 0.0, x / sum]));
            for k in 0..e.len() {
                m.set_mask.push(1 << k);
                m.coefs.push([0.0, 0.0, 1.0]);
            }
            for (x, &a) in e.iter().enumerate() {
                for &b in &e[x + 1..] {
                    pairs.insert([a, b]);
                }
            }
        }
        m.eligible.extend(&e);
        m.eligible_start.push(m.eligible.len() as u32);
        m.set_start.push(m.set_mask.len() as u32);
    }
    // Training averages as a fit would find them for guides that swing together: squared
    // distances twice the rest ones, velocity differences a quarter of the swing's peak speeds.
    let spread = |g: usize| -> (f32, Vec<Vec3>) {
        let pts = groom.strand(guides[g]);
        let peak = 0.5 * 0.25 * 24.0; // rad/s, see `swing`
        let v2 = pts.iter().map(|p| (peak * p.distance(pts[0])).powi(2)).sum();
        (v2, pts.to_vec())
    };
    for [a, b] in pairs {
        let ((va, pa), (vb, pb)) = (spread(a as usize), spread(b as usize));
        let rest: f32 = pa.iter().zip(&pb).map(|(x, y)| x.distance_squared(*y)).sum();
        m.pairs.push([a, b]);
        m.pair_a.push(2.0 * rest);
        m.pair_b.push(0.25 * 0.5 * (va + vb));
    }
    Ok(m)
}

/// Frame `f`'s guides in the head's frame: each swings about its root around the x axis by up
/// to 0.5 rad at 0.25 rad/frame, the left half of the head against the right half (so guide
/// pairs across the middle split and join again).
fn swing(layout: &GuideLayout, f: usize, out: &mut Vec<Vec3>) {
    out.clear();
    for (slot, &g) in layout.guides.iter().enumerate() {
        let pts = &layout.rest[layout.offsets[g]..layout.offsets[g + 1]];
        let root = pts[0];
        let phase = if root.x < 0.0 { std::f32::consts::PI } else { 0.0 } + slot as f32 * 1e-3;
        let q = Quat::from_rotation_x(0.5 * (0.25 * f as f32 + phase).sin());
        out.extend(pts.iter().map(|p| root + q * (*p - root)));
    }
}

fn ms(d: Duration, frames: usize) -> f64 {
    d.as_secs_f64() * 1e3 / frames.max(1) as f64
}

/// Runs the benchmark on `threads` threads: `frames` timed frames after 2 untimed ones.
pub fn run(strands: usize, guide_count: usize, threads: usize, frames: usize) -> Result<UpsampleBench> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Runtime(format!("thread pool: {e}")))?;
    pool.install(|| {
        let groom = load_groom("straight", &Transform::default(), Some(strands))?.groom;
        let guides = select_uv_lattice(&groom, guide_count);
        let model = synthetic_model(&groom, &guides)?;
        let model_bytes = tress_formats::skin::to_bytes(&model)
            .map_err(|e| Error::Runtime(format!("{e}")))?
            .len();
        let sets_per_strand = model.set_mask.len() as f64 / strands.max(1) as f64;
        let skin = || Skinning::new(model.clone(), &groom);
        let mut idw: Box<dyn Interpolator> = Box::new(FixedWeights::idw(&groom, &guides, 10)?);
        let mut stat: Box<dyn Interpolator> = Box::new(StaticSkinning::new(skin()?));
        let mut adaptive = AdaptiveSkinning::new(skin()?, AdaptiveOptions::default());
        // A rod across the back of the hair, a few cm under the crown, with the head still.
        let top = groom.points().iter().fold(f32::MIN, |m, p| m.max(p.y));
        let back = groom.points().iter().fold(f32::MAX, |m, p| m.min(p.z));
        let mut colliders = Colliders {
            parts: Vec::new(),
            head: HeadTrack::still(Pose::IDENTITY),
            torso: HeadTrack::still(Pose::IDENTITY),
            props: Vec::new(),
        };
        let rod = Capsule {
            a: Vec3::new(-20.0, top - 14.0, back + 2.0),
            b: Vec3::new(20.0, top - 14.0, back + 2.0),
            radius: 1.0,
        };
        colliders.add_prop("rod", Box::new(rod), HeadTrack::still(Pose::IDENTITY));
        let options = TwoWayOptions {
            solids: CorrectionSolids::Props,
            ..TwoWayOptions::default()
        };
        let mut coupling = TwoWay::new(
            Box::new(AdaptiveSkinning::new(skin()?, AdaptiveOptions::default())),
            options,
        );
        let layout = adaptive.layout().clone();
        let mut out = vec![Vec3::ZERO; groom.points().len()];
        let mut g = Vec::new();
        let (mut t_idw, mut t_static) = (Duration::ZERO, Duration::ZERO);
        let warm = 2;
        let mut adaptive_before = Default::default();
        let mut switches_before = 0u64;
        let mut coupling_before = Default::default();
        for f in 0..warm + frames {
            if f == warm {
                adaptive_before = adaptive.times();
                switches_before = adaptive.stats.switches;
                coupling_before = *coupling.stats.lock().expect("not poisoned");
            }
            swing(&layout, f, &mut g);
            let time = f as f64 / 24.0;
            let cf = colliders.at(time);
            let frame = GuideFrame {
                frame: f as f64,
                time,
                guides: &g,
                pose: &Pose::IDENTITY,
                colliders: Some(&cf),
            };
            let t = Instant::now();
            idw.interpolate(&frame, &mut out)?;
            if f >= warm {
                t_idw += t.elapsed();
            }
            let t = Instant::now();
            stat.interpolate(&frame, &mut out)?;
            if f >= warm {
                t_static += t.elapsed();
            }
            adaptive.interpolate(&frame, &mut out)?;
            // The correction sees the guides in world space (the head is still: the same).
            coupling.accelerations(&g, time, &colliders);
        }
        let at = adaptive.times();
        let ct = *coupling.stats.lock().expect("not poisoned");
        Ok(UpsampleBench {
            strands,
            points: groom.points().len(),
            guides: guides.len(),
            threads,
            frames,
            sets_per_strand,
            model_bytes,
            model_bytes_per_strand: model_bytes as f64 / strands.max(1) as f64,
            idw_ms: ms(t_idw, frames),
            static_ms: ms(t_static, frames),
            adaptive_grouping_ms: ms(at.grouping - adaptive_before.grouping, frames),
            adaptive_interpolation_ms: ms(at.interpolation - adaptive_before.interpolation, frames),
            correction_interpolation_ms: (ct.interpolation - coupling_before.interpolation) * 1e3
                / frames.max(1) as f64,
            correction_solve_ms: (ct.correction - coupling_before.correction) * 1e3 / frames.max(1) as f64,
            colliding_per_frame: (ct.colliding - coupling_before.colliding) as f64 / frames.max(1) as f64,
            switches_per_frame: (adaptive.stats.switches - switches_before) as f64 / frames.max(1) as f64,
        })
    })
}
