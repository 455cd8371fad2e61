//! The drape's Cosserat stiffness (003 Eq. 6) matched to a simulation material by a cantilever
//! test, tress's own: 003 gives no stiffness values and its energy holds each edge to its styled
//! direction, which none of the strand model's springs does (they hold neighbouring particles'
//! distances, `sim/model.rs`), so no formula carries one model's stiffness to the other. What
//! both can do is sag: textiles are calibrated the same way (Peirce's cantilever bending length).
//!
//! A sample of the groom's own strands (their curls give the springs their stiffness; a
//! straight strand's bend springs have none at small angles) is laid out with its chord
//! horizontal, root held, and
//! - **simulated** with the job's material until it stops (no hair–hair forces, no colliders),
//! - **draped** for each `k_cos`: with edges of fixed length and no collisions the drape energy
//!   `½ k_cos Σ_i ‖u_i − d_i‖² + w Σ_j y_j` separates per edge. Edge `i` raises the `m_i`
//!   vertices after it by `l_i u_i·ŷ`, so its part is `k_cos (1 − u_i·d_i) + w l_i m_i u_i·ŷ`,
//!   least at `u_i = normalize(k_cos d_i − w l_i m_i ŷ)`: the drape's exact minimizer, in closed
//!   form ([`cantilever`]; a test checks it against the energy function and L-BFGS).
//!
//! `k_cos` (the weight `w` kept) is the one whose drapes' tips fall as far as the simulated
//! ones, on average over the sample (bisection: the drop falls as `k_cos` grows). Matching the
//! whole shape instead (least mean distance per vertex) fails on curls: the simulated strands
//! sag with their curls kept, while a small `k_cos` lets every edge turn down, so the best
//! shape match lies at the search's bound with the tips 5–6 cm too low (measured on the wavy and
//! curly presets); the distance at the fit is reported to show how far apart the shapes stay.

use glam::{Quat, Vec3};
use serde::Serialize;

use super::DrapeMaterial;
use crate::collide::Colliders;
use crate::error::{Error, Result};
use crate::groom::resample::sample_over;
use crate::groom::{Groom, strand_length};
use crate::motion::{HeadTrack, Pose};
use crate::sim::{Material, SimOptions, Simulation};

/// Strands of the groom tested (evenly spaced by index).
pub const SAMPLE: usize = 24;

/// The search range of `k_cos` (log10).
const LOG_K: (f64, f64) = (-3.0, 7.0);

/// What the cantilever test measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Calibration {
    /// The fitted `k_cos` of Eq. 6.
    pub cosserat: f64,
    /// Strands tested and their mean length (cm).
    pub strands: usize,
    pub length_cm: f64,
    /// How far the tips fell (mean, cm): simulated, and draped with the fitted `k_cos`.
    pub sim_drop_cm: f64,
    pub drape_drop_cm: f64,
    /// Mean distance per vertex between the simulated and draped strands (cm): with the
    /// fitted `k_cos`, and with the one the material had before.
    pub distance_cm: f64,
    pub distance_before_cm: f64,
    /// Simulated seconds until the strands stopped (largest speed under 0.01 cm/s).
    pub settled_seconds: f64,
}

/// The drape's exact minimizer (no collisions, edges of fixed length) of one strand, root held:
/// each edge turns from its direction `d_i` to `normalize(k d_i − w l_i m_i ŷ)`.
pub fn cantilever(strand: &[Vec3], cosserat: f64, weight: f64) -> Vec<Vec3> {
    let n = strand.len();
    let mut out = Vec::with_capacity(n);
    let Some(&root) = strand.first() else {
        return out;
    };
    out.push(root);
    let mut at = root.as_dvec3();
    for (i, e) in strand.windows(2).enumerate() {
        let edge = (e[1] - e[0]).as_dvec3();
        let l = edge.length();
        if l <= 1e-9 {
            out.push(at.as_vec3());
            continue;
        }
        let after = (n - 1 - i) as f64;
        let pull = edge / l * cosserat - glam::DVec3::Y * (weight * l * after);
        let u = pull.try_normalize().unwrap_or(edge / l);
        at += u * l;
        out.push(at.as_vec3());
    }
    out
}

/// The test's strands: `count` of `groom`'s (evenly spaced, at least 3 points), each turned so
/// its chord runs along +x with its root at the origin.
fn sample(groom: &Groom, count: usize) -> Vec<Vec<Vec3>> {
    let usable: Vec<&[Vec3]> = groom
        .strands()
        .filter(|s| s.len() >= 3 && s[0].distance(s[s.len() - 1]) > 1e-3)
        .collect();
    let count = count.min(usable.len());
    (0..count)
        .map(|k| {
            let s = usable[k * usable.len() / count];
            let chord = (s[s.len() - 1] - s[0]).normalize();
            let turn = Quat::from_rotation_arc(chord, Vec3::X);
            s.iter().map(|p| turn * (*p - s[0])).collect()
        })
        .collect()
}

/// `strands` simulated with `material` (roots clamped, no hair–hair forces, no colliders) until
/// they stop; returns them and the simulated seconds.
fn settle(strands: &[Vec<Vec3>], material: &Material) -> Result<(Vec<Vec<Vec3>>, f64)> {
    let counts: Vec<u32> = strands.iter().map(|s| s.len() as u32).collect();
    let points: Vec<Vec3> = strands.iter().flatten().copied().collect();
    let groom = Groom::new(points, counts, Default::default())?;
    let colliders = Colliders::on_head(Vec::new(), HeadTrack::still(Pose::IDENTITY));
    let options = SimOptions {
        hair_hair: false,
        strand_contacts: false,
        preroll_frames: 0,
        ..SimOptions::default()
    };
    // Drag settles the strands sooner and leaves where they stop unchanged.
    let material = Material {
        air_damping: material.air_damping.max(8.0),
        ..material.clone()
    };
    let mut sim = Simulation::new(&groom, material, options, colliders, 0.0);
    let dt = 1.0 / 24.0;
    let mut seconds = 0.0;
    let mut still_frames = 0;
    for _ in 0..24 * 60 {
        sim.step_frame(dt, false);
        seconds += dt;
        let speed = sim.v.iter().map(|v| v.length()).fold(0.0f32, f32::max);
        if !speed.is_finite() {
            return Err(Error::Runtime(
                "drape calibration: the cantilever simulation blew up".into(),
            ));
        }
        still_frames = if speed < 0.01 { still_frames + 1 } else { 0 };
        if still_frames >= 12 {
            break;
        }
    }
    let offsets = groom.offsets();
    let out = (0..strands.len())
        .map(|s| sim.x[offsets[s]..offsets[s + 1]].to_vec())
        .collect();
    Ok((out, seconds))
}

/// `strand` at `points` vertices evenly spaced by arc length.
fn resampled(strand: &[Vec3], points: usize) -> Vec<Vec3> {
    let mut out = Vec::with_capacity(points);
    sample_over(strand, points, strand_length(strand), &mut out);
    out
}

/// Fits `base`'s `k_cos` to `material` on `groom`'s strands draped with `points` vertices;
/// returns `base` with that stiffness and what was measured.
pub fn calibrate(
    groom: &Groom,
    material: &Material,
    points: usize,
    base: &DrapeMaterial,
) -> Result<(DrapeMaterial, Calibration)> {
    let strands = sample(groom, SAMPLE);
    if strands.is_empty() {
        return Err(Error::Invalid(
            "drape calibration: the groom has no strand of 3 points or more".into(),
        ));
    }
    let (settled, settled_seconds) = settle(&strands, material)?;
    // Both at the drape's resolution: the styled strands it starts from and the simulated ones.
    let styled: Vec<Vec<Vec3>> = strands.iter().map(|s| resampled(s, points)).collect();
    let target: Vec<Vec<Vec3>> = settled.iter().map(|s| resampled(s, points)).collect();
    let distance = |k: f64| -> f64 {
        let mut sum = 0.0f64;
        for (s, t) in styled.iter().zip(&target) {
            let d = cantilever(s, k, base.weight);
            sum += d.iter().zip(t).map(|(a, b)| a.distance(*b) as f64).sum::<f64>() / points as f64;
        }
        sum / styled.len() as f64
    };
    // The tips' mean drop falls as k_cos grows: bisection on log10 k_cos for the simulated one.
    let drop = |set: &[Vec<Vec3>]| -> f64 {
        set.iter().map(|s| -s[s.len() - 1].y as f64).sum::<f64>() / set.len() as f64
    };
    let drape_drop = |k: f64| -> f64 {
        let draped: Vec<Vec<Vec3>> = styled.iter().map(|s| cantilever(s, k, base.weight)).collect();
        drop(&draped)
    };
    let want = drop(&target);
    let (mut lo, mut hi) = LOG_K;
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if drape_drop(10f64.powf(mid)) > want {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let k = 10f64.powf(0.5 * (lo + hi));
    let draped: Vec<Vec<Vec3>> = styled.iter().map(|s| cantilever(s, k, base.weight)).collect();
    let length = strands.iter().map(|s| strand_length(s) as f64).sum::<f64>() / strands.len() as f64;
    let calibration = Calibration {
        cosserat: k,
        strands: strands.len(),
        length_cm: length,
        sim_drop_cm: drop(&target),
        drape_drop_cm: drop(&draped),
        distance_cm: distance(k),
        distance_before_cm: distance(base.cosserat),
        settled_seconds,
    };
    Ok((
        DrapeMaterial {
            cosserat: k,
            ..base.clone()
        },
        calibration,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neural::drape::Posed;
    use crate::neural::drape::solve::{LbfgsOptions, energy_at, lbfgs};
    use burn::backend::{Autodiff, Flex};

    /// A wavy strand in the x–y plane, root at the origin.
    fn wavy(points: usize, length: f32) -> Vec<Vec3> {
        (0..points)
            .map(|i| {
                let t = i as f32 / (points - 1) as f32;
                Vec3::new(t * length, 0.0, 0.8 * (t * 12.0).sin())
            })
            .collect()
    }

    /// The closed form is the drape energy's minimizer: L-BFGS on the energy function itself
    /// (no colliders, no self-collision; its stretch term lets edges lengthen by a few tenths
    /// of a percent) from the styled strand ends there, and no lower.
    #[test]
    fn the_cantilever_closed_form_minimizes_the_drape_energy() {
        let strand = wavy(16, 12.0);
        for k in [5.0, 40.0, 300.0] {
            let material = DrapeMaterial {
                cosserat: k,
                self_collision: 0.0,
                ..Default::default()
            };
            let posed = Posed::new(&strand, strand.len(), &Pose::IDENTITY, 0.5);
            let options = LbfgsOptions {
                steps: 400,
                tolerance: 1e-12,
                ..Default::default()
            };
            let dev = Default::default();
            let (x, report) = lbfgs::<Autodiff<Flex>>(&posed, None, &material, &options, &dev);
            let want = cantilever(&strand, k, material.weight);
            let closed = energy_at::<Flex>(&posed, &want, None, &material, &dev);
            let worst = x
                .iter()
                .zip(&want)
                .map(|(a, b)| a.distance(*b))
                .fold(0.0, f32::max);
            let tip = -want[want.len() - 1].y;
            eprintln!(
                "k {k}: tip drop {tip:.3} cm, L-BFGS within {worst:.2e} cm; energy {} (closed form {})",
                report.energy.total, closed.total
            );
            assert!(report.energy.total <= closed.total + 1e-3 * closed.total.abs());
            assert!(tip > 0.05, "k {k}: the strand must sag ({tip} cm)");
            assert!(
                worst < 0.01 * tip.max(1.0),
                "k {k}: {worst} cm from the closed form"
            );
        }
    }

    /// Stiffer springs give a stiffer drape, and the fitted drape's tips fall as far as the
    /// simulated ones (the simulation itself checked: the strands sag, and not past their length).
    #[test]
    fn calibration_follows_the_material_and_fits_the_simulated_sag() {
        let strands: Vec<Vec3> = (0..6)
            .flat_map(|s| {
                wavy(20, 14.0 + s as f32)
                    .into_iter()
                    .map(move |p| p + Vec3::Z * s as f32 * 3.0)
            })
            .collect();
        let groom = Groom::new(strands, vec![20; 6], Default::default()).unwrap();
        let base = DrapeMaterial::default();
        let mut previous = 0.0;
        for scale in [0.1f32, 1.0, 10.0] {
            let m = Material::preset("wavy").unwrap();
            let m = Material {
                bend: m.bend * scale,
                twist: m.twist * scale,
                altitude: m.altitude * scale,
                ..m
            };
            let (fitted, c) = calibrate(&groom, &m, 24, &base).unwrap();
            eprintln!("bend ×{scale}: {c:?}");
            assert_eq!(fitted.cosserat, c.cosserat);
            assert!(
                c.cosserat > previous,
                "stiffer material, k_cos {} after {previous}",
                c.cosserat
            );
            previous = c.cosserat;
            assert!(c.sim_drop_cm > 0.0 && c.sim_drop_cm < c.length_cm);
            assert!(c.settled_seconds < 60.0, "the strands did not stop");
            assert!(
                (c.drape_drop_cm - c.sim_drop_cm).abs() <= 0.01 * c.sim_drop_cm,
                "drops {} and {}",
                c.drape_drop_cm,
                c.sim_drop_cm
            );
        }
    }
}
