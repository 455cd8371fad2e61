//! The direct-minimization baselines of the drape (003 §4.2): the energy of [`super::energy`]
//! minimized over the vertex positions themselves, from the rigidly posed groom, roots held.
//!
//! - **Adam**: 003 runs it with "the highest learning rate that produces stable results" and
//!   gives no iteration count; tress's defaults are in [`AdamOptions`], with a cosine decay of the
//!   step to a hundredth (so the last iterations settle instead of circling the minimum) and a
//!   stop once the energy changes less than `tolerance` (relative) over 100 iterations.
//! - **L-BFGS** (003 cites Liu & Nocedal): burn's L-BFGS with a strong-Wolfe line search, each
//!   function evaluation re-taking the colliders' distances and the SPH pairs at its positions,
//!   so the line search sees the true energy.

use std::time::Instant;

use burn::module::{Module, Param};
use burn::optim::{AdamConfig, GradientsParams, LBFGSConfig, LineSearchFn, Optimizer};
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;
use glam::Vec3;
use serde::{Deserialize, Serialize};

use super::energy::{
    DrapeMaterial, Fixed, Linearization, Posed, TermValues, Terms, energy_here, energy_linearized,
};
use crate::collide::Colliders;
use crate::motion::Pose;

/// The free variables: each vertex's displacement from the posed groom (roots masked out).
#[derive(Module, Debug)]
pub struct Displacement<B: Backend> {
    pub d: Param<Tensor<B, 3>>,
}

/// Settings of the Adam baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdamOptions {
    /// First step size (cm).
    pub learning_rate: f64,
    pub iterations: usize,
    /// Stop when the energy changes less than this (relative) over 100 iterations.
    pub tolerance: f64,
}

impl Default for AdamOptions {
    fn default() -> Self {
        AdamOptions {
            learning_rate: 0.05,
            iterations: 3000,
            tolerance: 1e-6,
        }
    }
}

/// How a solve went.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SolveReport {
    pub iterations: usize,
    pub seconds: f64,
    /// Whether it stopped on the tolerance (not the iteration cap).
    pub converged: bool,
    pub energy: TermValues,
    /// The network's line search: the scale of the decoder's output kept (1: the network's
    /// own drape, 0: the posed input), the mean over the strands where each strand has its
    /// own; `None` for the solvers and a single decoder pass.
    pub scale: Option<f64>,
    /// The smallest and largest strand's scale kept (equal for a uniform search).
    pub scale_range: Option<(f64, f64)>,
}

/// The fixed tensors of `posed` and zero displacements.
fn start<B: Backend>(posed: &Posed, dev: &B::Device) -> (Fixed<B>, Displacement<B>) {
    let d = Tensor::<B, 3>::zeros([posed.strands, posed.points, 3], dev);
    (
        Fixed::new(posed, dev),
        Displacement {
            d: Param::from_tensor(d),
        },
    )
}

/// The energy at displacements `d`, linearized at the positions they give (returned too).
fn evaluate<B: Backend>(
    fixed: &Fixed<B>,
    d: Tensor<B, 3>,
    colliders: Option<(&Colliders, &[Pose])>,
    material: &DrapeMaterial,
) -> (Vec<Vec3>, Terms<B>) {
    energy_here(fixed.positions(d), fixed, colliders, material)
}

/// Minimizes the drape energy of `posed` with Adam; returns the positions (world,
/// `strands × points`) and the report.
pub fn adam<B: AutodiffBackend>(
    posed: &Posed,
    colliders: Option<(&Colliders, &[Pose])>,
    material: &DrapeMaterial,
    options: &AdamOptions,
    dev: &B::Device,
) -> (Vec<Vec3>, SolveReport) {
    let clock = Instant::now();
    let (fixed, mut module) = start::<B>(posed, dev);
    let mut optim = AdamConfig::new().init::<B, Displacement<B>>();
    let mut report = SolveReport::default();
    let mut history: Vec<f64> = Vec::new();
    let total = options.iterations.max(1);
    let mut x_now = posed.x.clone();
    for it in 0..total {
        let (at, terms) = evaluate(&fixed, module.d.val(), colliders, material);
        x_now = at;
        report.energy = terms.values();
        let e = report.energy.total;
        report.iterations = it;
        history.push(e);
        if history.len() > 100 {
            let old = history[history.len() - 101];
            if (old - e).abs() <= options.tolerance * e.abs().max(old.abs()).max(1e-12) {
                report.converged = true;
                break;
            }
        }
        let grads = GradientsParams::from_grads(terms.total.backward(), &module);
        let t = it as f64 / total as f64;
        let lr = options.learning_rate * (0.01 + 0.99 * 0.5 * (1.0 + (std::f64::consts::PI * t).cos()));
        module = optim.step(lr, module, grads);
    }
    report.seconds = clock.elapsed().as_secs_f64();
    (x_now, report)
}

/// Settings of the L-BFGS baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LbfgsOptions {
    /// Outer steps, each of up to 20 L-BFGS iterations.
    pub steps: usize,
    /// Update history.
    pub history: usize,
    /// Stop when a step changes the energy less than this (relative).
    pub tolerance: f64,
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        LbfgsOptions {
            steps: 100,
            history: 20,
            tolerance: 1e-7,
        }
    }
}

/// Minimizes the drape energy of `posed` with L-BFGS; returns the positions and the report
/// (`iterations` counts energy evaluations).
pub fn lbfgs<B: AutodiffBackend>(
    posed: &Posed,
    colliders: Option<(&Colliders, &[Pose])>,
    material: &DrapeMaterial,
    options: &LbfgsOptions,
    dev: &B::Device,
) -> (Vec<Vec3>, SolveReport) {
    let clock = Instant::now();
    let (fixed, mut module) = start::<B>(posed, dev);
    let mut optim = LBFGSConfig::new()
        .with_history_size(options.history.max(1))
        .with_line_search_fn(LineSearchFn::StrongWolfe)
        .init::<B>();
    let mut evaluations = 0usize;
    let mut closure = |m: Displacement<B>| {
        let (_, terms) = evaluate(&fixed, m.d.val(), colliders, material);
        let e = terms.total.clone().into_scalar().elem::<f64>();
        evaluations += 1;
        (e, GradientsParams::from_grads(terms.total.backward(), &m))
    };
    let mut last = f64::INFINITY;
    let mut converged = false;
    for _ in 0..options.steps.max(1) {
        let (next, e) = optim.step(1.0, module, &mut closure);
        module = next;
        if (last - e).abs() <= options.tolerance * e.abs().max(1e-12) {
            converged = true;
            break;
        }
        last = e;
    }
    let (at, terms) = evaluate(&fixed, module.d.val(), colliders, material);
    let energy = terms.values();
    (
        at,
        SolveReport {
            iterations: evaluations,
            seconds: clock.elapsed().as_secs_f64(),
            converged,
            energy,
            scale: None,
            scale_range: None,
        },
    )
}

/// The energy's terms at positions `x` (`strands × points`, world) of `posed`.
pub fn energy_at<B: Backend>(
    posed: &Posed,
    x: &[Vec3],
    colliders: Option<(&Colliders, &[Pose])>,
    material: &DrapeMaterial,
    dev: &B::Device,
) -> TermValues {
    energy_on::<B>(&Fixed::new(posed, dev), posed, x, colliders, material, dev).0
}

/// [`energy_at`] with the posed groom's tensors `fixed` made once by the caller, also returning
/// the linearization the energy was taken at (its `at` the positions as the energy read them),
/// for [`super::energy::strand_energies`] to share.
pub fn energy_on<B: Backend>(
    fixed: &Fixed<B>,
    posed: &Posed,
    x: &[Vec3],
    colliders: Option<(&Colliders, &[Pose])>,
    material: &DrapeMaterial,
    dev: &B::Device,
) -> (TermValues, Linearization) {
    let d: Vec<f32> = x
        .iter()
        .zip(&posed.x)
        .flat_map(|(a, b)| (*a - *b).to_array())
        .collect();
    let d = Tensor::<B, 3>::from_data(TensorData::new(d, [posed.strands, posed.points, 3]), dev);
    let (lin, terms) = energy_linearized(fixed.positions(d), fixed, colliders, material);
    (terms.values(), lin)
}
