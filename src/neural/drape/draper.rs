//! One drape of a posed groom, whichever way it is found: the direct minimizations of the drape
//! energy (Adam, L-BFGS), XPBD on the same energy (003 §4.2's baselines), or one pass of a
//! trained drape network (003 §3.4). `tress drape` and the job's `drape` stage both drape
//! through a [`Draper`].

use std::path::Path;
use std::time::Instant;

use burn::backend::{Autodiff, Flex};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend;
use glam::Vec3;
use serde::{Deserialize, Serialize};

use super::energy::{Fixed, TermValues, strand_energies};
use super::network::{DrapeModel, latent_of};
use super::solve::{AdamOptions, LbfgsOptions, SolveReport, adam, energy_at, energy_on, lbfgs};
use super::xpbd::{XpbdOptions, xpbd};
use super::{DrapeMaterial, DrapeSubject, HeadRotation, Posed};
use crate::collide::Colliders;
use crate::error::{Error, Result};
use crate::motion::Pose;

/// The direct solvers' texture size and vertices per strand when none are given.
pub const DEFAULT_TEXTURE: usize = 32;
pub const DEFAULT_POINTS: usize = 24;

/// The network's line search: golden sections of the decoder's output's scale on
/// `[0, MAX_SCALE]` (`iterations` of the network solver; 0 keeps the decoder's output as it is,
/// 003's single pass).
pub const DEFAULT_LINE_SEARCH: u64 = 4;
/// The largest scale of the decoder's output the line search tries (the held-out grooms'
/// lowest energy lies at 0.25–1.25, 2026-11-29).
pub const MAX_SCALE: f64 = 1.5;

/// Golden-section search for the minimum of `f` on `[lo, hi]` with `evaluations` evaluations
/// of `f`; returns the best point tried and its value. For a unimodal `f` the minimum lies
/// within `(hi − lo) · 0.618^(evaluations − 1)` of it (`None` for no evaluation).
pub fn golden_section(
    mut f: impl FnMut(f64) -> f64,
    lo: f64,
    hi: f64,
    evaluations: usize,
) -> Option<(f64, f64)> {
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (lo, hi);
    let mut c = b - g * (b - a);
    let mut d = a + g * (b - a);
    if evaluations == 0 {
        return None;
    }
    let mut fc = f(c);
    let mut best = (c, fc);
    if evaluations == 1 {
        return Some(best);
    }
    let mut fd = f(d);
    for k in 2..=evaluations {
        if fd < best.1 {
            best = (d, fd);
        }
        if fc < best.1 {
            best = (c, fc);
        }
        if k == evaluations {
            break;
        }
        if fc <= fd {
            // The minimum lies in [a, d]: d moves to c, a new c inside.
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = f(d);
        }
    }
    Some(best)
}

/// The line search along a decoder's output (the network solver's): `positions(scale)` gives
/// the output scaled by `scale` (0: the posed input, 1: the network's drape); tries 1, 0, then
/// `sections` golden sections of the scale on `[0, MAX_SCALE]`, and returns the lowest energy
/// tried (ties to the earlier: the network's own drape first) with its positions, scale and the
/// energy evaluations made.
pub fn search_scale<B: Backend>(
    mut positions: impl FnMut(f32) -> Vec<Vec3>,
    posed: &Posed,
    colliders: Option<(&Colliders, &[Pose])>,
    material: &DrapeMaterial,
    sections: usize,
    dev: &B::Device,
) -> (Vec<Vec3>, TermValues, f64, usize) {
    let fixed = Fixed::<B>::new(posed, dev);
    let energy = |x: &[Vec3]| energy_on::<B>(&fixed, posed, x, colliders, material, dev).0;
    let x = positions(1.0);
    let mut best = (energy(&x), x, 1.0);
    let mut tried = 1;
    let mut at = |scale: f64| -> f64 {
        let x = positions(scale as f32);
        let e = energy(&x);
        tried += 1;
        let total = e.total;
        if total < best.0.total {
            best = (e, x, scale);
        }
        total
    };
    at(0.0);
    golden_section(&mut at, 0.0, MAX_SCALE, sections);
    let (energy, x, scale) = best;
    (x, energy, scale, tried)
}

/// The line search along a decoder's output with a scale per strand: the uniform search of
/// [`search_scale`] first (1, 0, `sections` golden sections of one scale for every strand),
/// reading at each of its points every strand's own share of the energy ([`strand_energies`]);
/// then each strand's best scale among those points, smoothed over the scalp (a Gaussian of
/// the roots' distance, `σ` of 0, 1, 2 and 4 times the roots' mean spacing), each field
/// evaluated once; the lowest total energy of every configuration tried is kept, so the result
/// is never above the uniform search's.
///
/// Why smoothed: strands whose neighbours take other scales cross them, and the self-collision
/// term of such a mix is several times either scale's (curly hair: 3.1 against 0.5–0.9,
/// 2026-12-07), so each strand's best scale alone is rarely the best configuration; a field
/// that varies over the scalp as the body's contact or the head's turn does keeps neighbours
/// together. `positions(scales)` gives the output with each strand's scale (one per strand).
/// Returns the positions kept, their energy, the strands' scales and the energy evaluations made.
pub fn search_strand_scales<B: Backend>(
    mut positions: impl FnMut(&[f32]) -> Vec<Vec3>,
    posed: &Posed,
    colliders: Option<(&Colliders, &[Pose])>,
    material: &DrapeMaterial,
    sections: usize,
    dev: &B::Device,
) -> (Vec<Vec3>, TermValues, Vec<f32>, usize) {
    let strands = posed.strands;
    let mut tried = 0;
    let mut best: Option<(TermValues, Vec<Vec3>, Vec<f32>)> = None;
    let fixed = Fixed::<B>::new(posed, dev);
    let mut eval = |scales: &[f32], shares: bool| -> (f64, Option<Vec<f64>>) {
        let x = positions(scales);
        // One linearization (collider distances, SPH pairs) for the total and the shares.
        let (e, lin) = energy_on::<B>(&fixed, posed, &x, colliders, material, dev);
        let shares = shares.then(|| strand_energies(posed, &lin, material));
        tried += 1;
        let total = e.total;
        if best.as_ref().is_none_or(|b| total < b.0.total) {
            best = Some((e, x, scales.to_vec()));
        }
        (total, shares)
    };
    // The uniform search, each strand's share kept at its points.
    let mut own = vec![(1.0f32, f64::INFINITY); strands];
    let mut at = |scale: f64| -> f64 {
        let (total, shares) = eval(&vec![scale as f32; strands], true);
        for (o, share) in own.iter_mut().zip(shares.expect("asked for")) {
            if share < o.1 {
                *o = (scale as f32, share);
            }
        }
        total
    };
    at(1.0);
    at(0.0);
    golden_section(&mut at, 0.0, MAX_SCALE, sections);
    // Each strand's best scale, smoothed over the roots.
    let roots: Vec<Vec3> = (0..strands).map(|s| posed.x[s * posed.points]).collect();
    let spacing = roots
        .iter()
        .enumerate()
        .map(|(i, p)| {
            roots
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, q)| p.distance(*q))
                .fold(f32::INFINITY, f32::min)
        })
        .filter(|d| d.is_finite())
        .sum::<f32>()
        / strands.saturating_sub(1).max(1) as f32;
    let raw: Vec<f32> = own.iter().map(|o| o.0).collect();
    for k in [0.0f32, 1.0, 2.0, 4.0] {
        let field = if k == 0.0 || spacing.is_nan() || spacing <= 0.0 {
            raw.clone()
        } else {
            let two_s2 = 2.0 * (k * spacing).powi(2);
            roots
                .iter()
                .map(|p| {
                    let (mut sum, mut weight) = (0.0f32, 0.0f32);
                    for (q, &a) in roots.iter().zip(&raw) {
                        let w = (-p.distance_squared(*q) / two_s2).exp();
                        sum += w * a;
                        weight += w;
                    }
                    sum / weight
                })
                .collect()
        };
        eval(&field, false);
    }
    let (energy, x, scales) = best.expect("at least one evaluation");
    (x, energy, scales, tried)
}

/// How the network solver searches along the decoder's output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LineSearch {
    /// One scale for every strand ([`search_scale`]).
    Uniform,
    /// The uniform search, then a scale per strand smoothed over the scalp
    /// ([`search_strand_scales`]).
    #[default]
    Strands,
}

/// How the energy is minimized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum DrapeSolver {
    /// Adam over the vertex positions.
    Adam,
    /// L-BFGS with a strong-Wolfe line search over the vertex positions.
    #[default]
    Lbfgs,
    /// XPBD: 30 quasi-static steps of constraint projection on the same energy.
    Xpbd,
    /// A trained drape network (a model file): one decoder pass per pose, then a line search
    /// along its output (`iterations` energy evaluations; 0 for the decoder's output as is).
    Network,
}

impl DrapeSolver {
    /// The solver's name as the command line and job files write it.
    pub fn name(self) -> &'static str {
        match self {
            DrapeSolver::Adam => "adam",
            DrapeSolver::Lbfgs => "lbfgs",
            DrapeSolver::Xpbd => "xpbd",
            DrapeSolver::Network => "network",
        }
    }
}

/// What a [`Draper`] is made from; the keys name the settings in errors (`--material` for the
/// command, `drape.material` in a job).
pub struct DraperSpec<'a> {
    pub solver: DrapeSolver,
    pub model: Option<&'a Path>,
    /// The energy's material (direct solvers; a network keeps the one it was trained with).
    pub material: Option<DrapeMaterial>,
    pub texture: Option<usize>,
    pub points: Option<usize>,
    /// Adam's steps, L-BFGS's outer steps or XPBD's iterations per step.
    pub iterations: Option<u64>,
    /// Adam's first step size (cm).
    pub learning_rate: f64,
    /// The network's search along its output.
    pub search: LineSearch,
    /// How a setting is named to the user: `key("material")`.
    pub key: &'a dyn Fn(&str) -> String,
}

/// A solver ready to drape: its texture and strand sizes, its material, and its network.
pub struct Draper {
    pub solver: DrapeSolver,
    pub texture: usize,
    pub points: usize,
    pub material: DrapeMaterial,
    pub network: Option<DrapeModel<Flex>>,
    iterations: Option<u64>,
    learning_rate: f64,
    search: LineSearch,
}

impl DraperSpec<'_> {
    /// Everything that can be checked without reading the model: the solver with or without a
    /// model and a material, the step size, the sizes given.
    pub fn check(&self) -> Result<()> {
        let key = self.key;
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return Err(Error::Invalid(format!(
                "{} must be positive",
                key("learning_rate")
            )));
        }
        if self.iterations == Some(0) && self.solver != DrapeSolver::Network {
            return Err(Error::Invalid(format!(
                "{} 0: the {} solver needs at least one",
                key("iterations"),
                self.solver.name()
            )));
        }
        match (self.solver, self.model) {
            (DrapeSolver::Network, None) => {
                return Err(Error::Invalid(format!(
                    "the network solver needs {} (a .tnn from `tress train drape`)",
                    key("model")
                )));
            }
            (DrapeSolver::Network, Some(_)) if self.material.is_some() => {
                return Err(Error::Invalid(format!(
                    "{}: a network drapes with the material it was trained with",
                    key("material")
                )));
            }
            (DrapeSolver::Network, Some(_)) => {}
            (_, Some(_)) => {
                return Err(Error::Invalid(format!(
                    "{} goes with the network solver",
                    key("model")
                )));
            }
            (_, None) => {
                if let Some(m) = &self.material {
                    m.check()
                        .map_err(|e| Error::Invalid(format!("{}: {e}", key("material"))))?;
                }
            }
        }
        if self.texture.is_some() || self.points.is_some() {
            check_sizes(
                self.texture.unwrap_or(DEFAULT_TEXTURE),
                self.points.unwrap_or(DEFAULT_POINTS),
                key,
            )?;
        }
        Ok(())
    }
}

fn check_sizes(texture: usize, points: usize, key: &dyn Fn(&str) -> String) -> Result<()> {
    if !(4..=256).contains(&texture) || !texture.is_multiple_of(2) {
        return Err(Error::Invalid(format!(
            "{} {texture}: an even size from 4 to 256",
            key("texture")
        )));
    }
    if !(2..=64).contains(&points) {
        return Err(Error::Invalid(format!("{} {points}: 2 to 64", key("points"))));
    }
    Ok(())
}

impl Draper {
    /// Reads the network (checked against the other settings) or takes the direct solvers'
    /// settings (texture 32, 24 vertices by default).
    pub fn new(s: &DraperSpec) -> Result<Draper> {
        s.check()?;
        let key = s.key;
        let (texture, points, material, network) = match s.model {
            Some(path) => {
                if !path.is_file() {
                    return Err(Error::Invalid(format!(
                        "{}: {} is not there: train one with `tress train drape --config drape_small -o {}`",
                        key("model"),
                        path.display(),
                        path.display()
                    )));
                }
                let m = DrapeModel::<Flex>::read(path, &Default::default())?;
                let (texture, points) = (m.config.net.texture, m.config.net.points);
                for (k, given, own) in [("texture", s.texture, texture), ("points", s.points, points)] {
                    if let Some(g) = given.filter(|g| *g != own) {
                        return Err(Error::Invalid(format!(
                            "{} {g}: {} was trained with {own}",
                            key(k),
                            path.display()
                        )));
                    }
                }
                (texture, points, m.config.material.clone(), Some(m))
            }
            None => (
                s.texture.unwrap_or(DEFAULT_TEXTURE),
                s.points.unwrap_or(DEFAULT_POINTS),
                s.material.clone().unwrap_or_default(),
                None,
            ),
        };
        check_sizes(texture, points, key)?;
        Ok(Draper {
            solver: s.solver,
            texture,
            points,
            material,
            network,
            iterations: s.iterations,
            learning_rate: s.learning_rate,
            search: s.search,
        })
    }

    /// Whether a subject's pose (head rotation and body shape) lies within the poses and
    /// shapes the network was trained on (always, for the direct solvers).
    pub fn trained_for(&self, subject: &DrapeSubject, rotation: &HeadRotation) -> bool {
        self.network
            .as_ref()
            .is_none_or(|m| m.trained_for(subject, rotation))
    }

    /// The groom code of a subject (the network's encoder; `None` for the direct solvers).
    pub fn latent(&self, subject: &DrapeSubject) -> Option<Tensor<Flex, 2>> {
        self.network
            .as_ref()
            .map(|m| latent_of(&m.encoder, subject, &Default::default()))
    }

    /// The drape of `posed` (the subject's groom rigidly moved by the head, world space) with
    /// the colliders at `poses`; `rotation` is the head's rotation relative to the torso with
    /// the change of the subject's body shape (the network's input, with the subject's own
    /// shape) and `latent` the subject's [`Draper::latent`].
    pub fn drape(
        &self,
        subject: &DrapeSubject,
        latent: Option<&Tensor<Flex, 2>>,
        rotation: &HeadRotation,
        posed: &Posed,
        colliders: (&Colliders, &[Pose]),
    ) -> (Vec<Vec3>, SolveReport) {
        let dev = Default::default();
        let cp = Some(colliders);
        let material = &self.material;
        match (self.solver, &self.network, latent) {
            (DrapeSolver::Network, Some(m), Some(latent)) => {
                let clock = Instant::now();
                let texture = m.texture(latent, subject, rotation);
                let fixed = Fixed::<Flex>::new(posed, &dev);
                let search = self.iterations.unwrap_or(DEFAULT_LINE_SEARCH) as usize;
                if search == 0 {
                    let x = m.positions(&texture, subject, &fixed, 1.0);
                    let seconds = clock.elapsed().as_secs_f64();
                    let energy = energy_at::<Flex>(posed, &x, cp, material, &dev);
                    let report = SolveReport {
                        iterations: 1,
                        seconds,
                        converged: true,
                        energy,
                        scale: None,
                        scale_range: None,
                    };
                    return (x, report);
                }
                let (x, energy, scales, tried) = match self.search {
                    LineSearch::Uniform => {
                        let (x, energy, scale, tried) = search_scale::<Flex>(
                            |a| m.positions(&texture, subject, &fixed, a),
                            posed,
                            cp,
                            material,
                            search,
                            &dev,
                        );
                        (x, energy, vec![scale as f32], tried)
                    }
                    LineSearch::Strands => search_strand_scales::<Flex>(
                        |a| m.strand_positions(&texture, subject, &fixed, a),
                        posed,
                        cp,
                        material,
                        search,
                        &dev,
                    ),
                };
                let (lo, hi) = scales
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &a| {
                        (lo.min(a as f64), hi.max(a as f64))
                    });
                let report = SolveReport {
                    iterations: tried,
                    seconds: clock.elapsed().as_secs_f64(),
                    converged: true,
                    energy,
                    scale: Some(scales.iter().map(|&a| a as f64).sum::<f64>() / scales.len().max(1) as f64),
                    scale_range: Some((lo, hi)),
                };
                (x, report)
            }
            (DrapeSolver::Network, ..) => panic!("a network drape needs the network and the groom's code"),
            (DrapeSolver::Adam, ..) => {
                let o = AdamOptions {
                    learning_rate: self.learning_rate,
                    iterations: self.iterations.unwrap_or(3000) as usize,
                    ..Default::default()
                };
                adam::<Autodiff<Flex>>(posed, cp, material, &o, &dev)
            }
            (DrapeSolver::Xpbd, ..) => {
                let o = XpbdOptions {
                    iterations: self.iterations.unwrap_or(1000) as usize,
                    ..Default::default()
                };
                xpbd(posed, cp, material, &o)
            }
            (DrapeSolver::Lbfgs, ..) => {
                let o = LbfgsOptions {
                    steps: self.iterations.unwrap_or(100) as usize,
                    ..Default::default()
                };
                lbfgs::<Autodiff<Flex>>(posed, cp, material, &o, &dev)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use burn::backend::Flex;
    use glam::Vec3;

    use super::{golden_section, search_scale, search_strand_scales};
    use crate::motion::Pose;
    use crate::neural::drape::DrapeMaterial;
    use crate::neural::drape::energy::{Linearization, Posed, strand_energies};

    /// Two horizontal strands held at their roots 10 cm apart (no self-collision between them),
    /// each with its own "decoder output": a displacement towards its analytic hanging shape,
    /// the second twice as far, so their best scales differ. Their energies separate, so the
    /// per-strand search must give each strand the uniform search's point at which its own
    /// energy (computed here strand by strand, configuration by configuration) is lowest, and
    /// end below the uniform search's total.
    #[test]
    fn each_strand_takes_its_own_best_scale_and_the_total_falls() {
        let n = 12;
        let rest: Vec<Vec3> = (0..2)
            .flat_map(|s| (0..n).map(move |k| Vec3::new(10.0 * s as f32, 0.0, k as f32)))
            .collect();
        let m = DrapeMaterial {
            cosserat: 20.0,
            stretch: 1.0e4,
            self_collision: 0.0,
            ..Default::default()
        };
        let posed = Posed::new(&rest, n, &Pose::IDENTITY, m.smoothing as f32);
        // Edge k turned down by φₖ = atan(w nₖ / k_cos) (the analytic hang), kept at unit length.
        let mut hang = Vec::new();
        for s in 0..2 {
            let mut p = rest[s * n];
            hang.push(p);
            for k in 0..n - 1 {
                let phi = ((n - 1 - k) as f32 * m.weight as f32 / m.cosserat as f32).atan();
                p += Vec3::new(0.0, -phi.sin(), phi.cos());
                hang.push(p);
            }
        }
        let reach = [1.0f32, 2.0];
        let positions = |scales: &[f32]| -> Vec<Vec3> {
            (0..2 * n)
                .map(|v| rest[v] + (hang[v] - rest[v]) * reach[v / n] * scales[v / n])
                .collect()
        };
        let dev = Default::default();
        let sections = 8;
        let mut points = Vec::new();
        let (_, uniform, _, uniform_tried) = search_scale::<Flex>(
            |a| {
                points.push(a);
                positions(&[a, a])
            },
            &posed,
            None,
            &m,
            sections,
            &dev,
        );
        let (x, energy, scales, tried) =
            search_strand_scales::<Flex>(positions, &posed, None, &m, sections, &dev);
        assert_eq!(tried, uniform_tried + 4, "the uniform search and four fields");
        assert_eq!(x, positions(&scales));
        assert!(
            energy.total < uniform.total - 1e-3,
            "{} vs uniform {}",
            energy.total,
            uniform.total
        );
        for s in 0..2 {
            let share = |a: f32| {
                let lin = Linearization::at(&positions(&[a, a]), n, None, &m);
                strand_energies(&posed, &lin, &m)[s]
            };
            let want = points
                .iter()
                .copied()
                .min_by(|a, b| share(*a).total_cmp(&share(*b)))
                .unwrap();
            assert_eq!(scales[s], want, "strand {s}: {scales:?} among {points:?}");
        }
        assert!(scales[1] < scales[0], "{scales:?}");
    }

    /// Golden sections close in on the minimum of a unimodal function at the rate the method
    /// promises (0.618 per evaluation), with exactly the evaluations asked for, and end at an
    /// interval's end for a monotone one.
    #[test]
    fn golden_section_finds_the_minimum_of_a_unimodal_function() {
        for (target, n) in [(0.37, 12usize), (1.2, 8), (0.05, 10)] {
            let mut calls = 0;
            let (x, fx) = golden_section(
                |x| {
                    calls += 1;
                    (x - target).powi(2) + 3.0
                },
                0.0,
                1.5,
                n,
            )
            .unwrap();
            let bound = 1.5 * 0.618_034f64.powi(n as i32 - 1);
            assert_eq!(calls, n);
            assert!((x - target).abs() <= bound, "{target}: {x} (bound {bound})");
            assert!((fx - ((x - target).powi(2) + 3.0)).abs() < 1e-15);
        }
        // Decreasing over the whole interval: the best point tried nears its right end.
        let (x, _) = golden_section(|x| -x, 0.0, 1.5, 10).unwrap();
        assert!(x > 1.5 - 1.5 * 0.618_034f64.powi(9), "{x}");
        assert!(golden_section(|x| x, 0.0, 1.0, 0).is_none());
        let (x, _) = golden_section(|x| x, 0.0, 1.0, 1).unwrap();
        assert!((x - (1.5 - 5f64.sqrt() / 2.0)).abs() < 1e-15, "{x}");
    }
}
