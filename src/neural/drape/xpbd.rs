//! The XPBD baseline of the drape (003 §4.2, Macklin et al. 2016): "the same energy", solved as
//! a quasi-static simulation: every time step starts from zero velocity, gravity predicts the
//! positions, and the constraints are projected for a number of iterations; 003 runs 30 steps.
//!
//! Each term of [`super::energy`] becomes a compliant constraint whose XPBD energy
//! `½ α⁻¹ C²` is exactly that term:
//!
//! - Cosserat (Eq. 6): the vector constraint `C = x_{i+1} − x_i − l d` with `α = l² / k_cos`;
//! - stretch (Eq. 7): `C = ‖x_{i+1} − x_i‖ − l` with `α = 1 / k_stretch`;
//! - body (Eq. 10): `C = max(D − d(x), 0)^{3/2}` with `α = 1 / (2 k_bc)`, `∇C = −3/2 (D − d)^{1/2} n`;
//! - self-collision (Eq. 11): `C = max(ρ − ρ_rest, 0)^{3/2}` per vertex with `α = 1 / (2 k_sc)`,
//!   over the SPH pairs of the step's start, projected as one Jacobi pass per iteration (all
//!   corrections from the same positions, added in a fixed order);
//! - gravity (Eq. 9): an external force; every vertex has unit mass and weighs `weight`.
//!
//! Strand constraints are projected Gauss–Seidel, root to tip, strand by strand; roots have no
//! inverse mass. The result is deterministic.

use std::time::Instant;

use glam::Vec3;
use serde::{Deserialize, Serialize};

use super::energy::{DrapeMaterial, Posed, kernel, pairs_within};
use super::solve::{SolveReport, energy_at};
use crate::collide::Colliders;
use crate::motion::Pose;

/// Settings of the XPBD baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct XpbdOptions {
    /// Quasi-static time steps (003: 30).
    pub steps: usize,
    /// Constraint iterations per step (003: 10 000 on a GPU; 1000 here by default, within 1 %
    /// of L-BFGS's energy on the wavy preset, where 200 left 2 % stretch).
    pub iterations: usize,
    /// Time step (energy units: with unit masses, gravity moves a free vertex by weight·dt²).
    pub dt: f32,
}

impl Default for XpbdOptions {
    fn default() -> Self {
        XpbdOptions {
            steps: 30,
            iterations: 1000,
            dt: 1.0,
        }
    }
}

/// dW/dr of Bando's kernel (003 Eq. 13).
fn kernel_slope(r: f32, h: f32) -> f32 {
    let q = r / h;
    if q <= 1.0 {
        (-12.0 * q + 9.0 * q * q) / h
    } else if q < 2.0 {
        -3.0 * (2.0 - q).powi(2) / h
    } else {
        0.0
    }
}

/// The constraints' compliances α̃ = α / Δt² (003's stiffnesses inverted; Cosserat's per unit
/// rest length squared) and their Lagrange multipliers, reset every step.
struct Constraints {
    a_cos: f32,
    a_str: f32,
    a_body: f32,
    a_self: f32,
    lam_cos: Vec<Vec3>,
    lam_str: Vec<f32>,
    lam_body: Vec<f32>,
    lam_self: Vec<f32>,
}

impl Constraints {
    fn new(posed: &Posed, m: &DrapeMaterial, dt2: f32) -> Constraints {
        let edges = posed.strands * (posed.points - 1);
        Constraints {
            a_cos: 1.0 / (m.cosserat.max(1e-12) as f32 * dt2),
            a_str: 1.0 / (m.stretch.max(1e-12) as f32 * dt2),
            a_body: 1.0 / (2.0 * m.body.max(1e-12) as f32 * dt2),
            a_self: 1.0 / (2.0 * m.self_collision.max(1e-12) as f32 * dt2),
            lam_cos: vec![Vec3::ZERO; edges],
            lam_str: vec![0.0; edges],
            lam_body: vec![0.0; posed.x.len()],
            lam_self: vec![0.0; posed.x.len()],
        }
    }

    fn reset(&mut self) {
        self.lam_cos.iter_mut().for_each(|l| *l = Vec3::ZERO);
        self.lam_str.iter_mut().for_each(|l| *l = 0.0);
        self.lam_body.iter_mut().for_each(|l| *l = 0.0);
        self.lam_self.iter_mut().for_each(|l| *l = 0.0);
    }

    /// Each edge's Cosserat constraint (the edge along its posed rest direction, α = l² / k)
    /// and stretch constraint, root particles fixed.
    fn strands(&mut self, posed: &Posed, x: &mut [Vec3]) {
        let n = posed.points;
        let edges = n - 1;
        let free = |v: usize| !v.is_multiple_of(n);
        for s in 0..posed.strands {
            for k in 0..edges {
                let (i, j, e) = (s * n + k, s * n + k + 1, s * edges + k);
                let (wi, wj) = (if free(i) { 1.0 } else { 0.0 }, 1.0);
                let l = posed.rest_len[e];
                // Cosserat: α = l² / k.
                let alpha = self.a_cos * l * l;
                let c = x[j] - x[i] - l * posed.dir[e];
                let dl = (-c - alpha * self.lam_cos[e]) / (wi + wj + alpha);
                self.lam_cos[e] += dl;
                x[i] -= wi * dl;
                x[j] += wj * dl;
                // Stretch.
                let d = x[j] - x[i];
                let len = d.length();
                if len > 1e-9 {
                    let g = d / len;
                    let dl = (-(len - l) - self.a_str * self.lam_str[e]) / (wi + wj + self.a_str);
                    self.lam_str[e] += dl;
                    x[i] -= wi * dl * g;
                    x[j] += wj * dl * g;
                }
            }
        }
    }

    /// The body term's constraint C = pen^{3/2} per free vertex within `body_distance` of a
    /// collider.
    #[allow(clippy::needless_range_loop)] // v indexes positions and multipliers
    fn body(&mut self, n: usize, x: &mut [Vec3], (c, poses): (&Colliders, &[Pose]), m: &DrapeMaterial) {
        let free = |v: usize| !v.is_multiple_of(n);
        for v in 0..x.len() {
            if !free(v) {
                continue;
            }
            let Some(q) = c.query(x[v], 0.0, poses) else {
                continue;
            };
            let pen = m.body_distance as f32 - q.distance;
            if pen <= 0.0 {
                continue;
            }
            // C = pen^{3/2}, ∇C = −3/2 pen^{1/2} n.
            let cv = pen.powf(1.5);
            let g = -1.5 * pen.sqrt() * q.normal;
            let dl = (-cv - self.a_body * self.lam_body[v]) / (g.length_squared() + self.a_body);
            self.lam_body[v] += dl;
            x[v] += dl * g;
        }
    }

    /// The self-collision term's constraint C = (ρ − ρ₀)^{3/2} per vertex denser than at rest
    /// (003 Eq. 12–13), its densities and their gradients taken at the iteration's positions
    /// (Jacobi) over the step's pairs `(pi, pj)` within `2h`; `pair_grad` holds each pair's
    /// ∂W/∂x_i.
    #[allow(clippy::too_many_arguments)]
    fn density(
        &mut self,
        posed: &Posed,
        x: &mut [Vec3],
        (pi, pj): (&[i64], &[i64]),
        pair_grad: &mut [Vec3],
        h: f32,
    ) {
        let n = posed.points;
        let free = |v: usize| !v.is_multiple_of(n);
        let mut rho = vec![0.0f32; x.len()];
        let mut norm2 = vec![0.0f32; x.len()];
        let mut own = vec![Vec3::ZERO; x.len()];
        for (k, (&i, &j)) in pi.iter().zip(pj).enumerate() {
            let (i, j) = (i as usize, j as usize);
            let d = x[i] - x[j];
            let r = d.length();
            let w = kernel(r, h);
            rho[i] += w;
            rho[j] += w;
            pair_grad[k] = Vec3::ZERO;
            if r > 1e-9 {
                // ∂ρ_i/∂x_i += W' d̂; ∂ρ_i/∂x_j = −W' d̂ (and mirrored for ρ_j).
                let g = kernel_slope(r, h) * d / r;
                pair_grad[k] = g;
                own[i] += g;
                own[j] -= g;
                let gl = g.length_squared();
                norm2[i] += gl * if free(j) { 1.0 } else { 0.0 };
                norm2[j] += gl * if free(i) { 1.0 } else { 0.0 };
            }
        }
        let mut dl = vec![0.0f32; x.len()];
        for v in 0..x.len() {
            let ex = rho[v] - posed.rho_rest[v];
            if ex <= 0.0 {
                continue;
            }
            // C = ex^{3/2}, ∇C = 3/2 ex^{1/2} ∇ρ.
            let s = 1.5 * ex.sqrt();
            let grad2 = s * s * (norm2[v] + if free(v) { own[v].length_squared() } else { 0.0 });
            let d = (-ex.powf(1.5) - self.a_self * self.lam_self[v]) / (grad2 + self.a_self);
            self.lam_self[v] += d;
            dl[v] = d * s;
        }
        let mut dx = vec![Vec3::ZERO; x.len()];
        for (v, g) in own.iter().enumerate() {
            dx[v] += dl[v] * *g;
        }
        for ((&i, &j), g) in pi.iter().zip(pj).zip(pair_grad.iter()) {
            let (i, j) = (i as usize, j as usize);
            // ρ_i moves x_j by −W' d̂; ρ_j moves x_i by +W' d̂.
            dx[j] -= dl[i] * *g;
            dx[i] += dl[j] * *g;
        }
        for (v, d) in dx.iter().enumerate() {
            if free(v) {
                x[v] += *d;
            }
        }
    }
}

/// Drapes `posed` with XPBD; returns the positions and the report (`iterations` counts
/// constraint iterations over all steps; the energy is evaluated at the result).
pub fn xpbd(
    posed: &Posed,
    colliders: Option<(&Colliders, &[Pose])>,
    m: &DrapeMaterial,
    o: &XpbdOptions,
) -> (Vec<Vec3>, SolveReport) {
    let clock = Instant::now();
    let n = posed.points;
    let mut x = posed.x.clone();
    let dt2 = o.dt * o.dt;
    let h = m.smoothing as f32;
    let free = |v: usize| !v.is_multiple_of(n);
    let mut c = Constraints::new(posed, m, dt2);
    let mut iterations = 0;
    for _ in 0..o.steps {
        // Zero velocity, then gravity's prediction.
        for (v, p) in x.iter_mut().enumerate() {
            if free(v) {
                p.y -= m.weight as f32 * dt2;
            }
        }
        c.reset();
        let (pi, pj) = if m.self_collision > 0.0 {
            pairs_within(&x, 2.0 * h)
        } else {
            (Vec::new(), Vec::new())
        };
        // Each pair's ∂W/∂x_i at the iteration's positions (used twice per pass).
        let mut pair_grad = vec![Vec3::ZERO; pi.len()];
        for _ in 0..o.iterations {
            iterations += 1;
            c.strands(posed, &mut x);
            if let Some(cp) = colliders {
                c.body(n, &mut x, cp, m);
            }
            if !pi.is_empty() {
                c.density(posed, &mut x, (&pi, &pj), &mut pair_grad, h);
            }
        }
    }
    let seconds = clock.elapsed().as_secs_f64();
    let report = SolveReport {
        iterations,
        seconds,
        converged: false,
        energy: energy_at::<burn::backend::Flex>(posed, &x, colliders, m, &Default::default()),
        scale: None,
        scale_range: None,
    };
    (x, report)
}
