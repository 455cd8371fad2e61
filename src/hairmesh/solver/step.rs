//! One implicit substep of the hair mesh: the roots driven by the head, the system assembled
//! and solved, the mesh moved; then collision handling on the surface vertices (002 §3.2) and
//! the deformation minimized around the moved ones (Eq. 3–4).

use glam::DVec3;

use super::mcg::Filter;
use super::{HairMeshSim, MeshFrameStats, to_d};
use crate::error::{Error, Result};

impl HairMeshSim {
    #[allow(clippy::needless_range_loop)] // i indexes positions, velocities and filters
    pub(super) fn substep(&mut self, h: f64, t1: f64, stats: &mut MeshFrameStats) -> Result<()> {
        let n = self.x.len();
        let pose = self.head_pose(t1);
        let mut filter = vec![Filter::Free; n];
        let mut z = vec![DVec3::ZERO; n];
        for i in 0..n {
            if self.mesh.layer_of(i) == 0 {
                let target = pose.apply(to_d(self.mesh.rest[i]));
                filter[i] = Filter::Fixed;
                z[i] = (target - self.x[i]) / h - self.v[i];
            } else if let Some((nrm, vobj)) = self.contacts[i] {
                filter[i] = Filter::Plane(nrm);
                z[i] = (vobj - self.v[i]).dot(nrm) * nrm;
            }
        }
        let clock = std::time::Instant::now();
        let mut b = vec![DVec3::ZERO; n];
        self.assemble(h, &mut b);
        let assembled = clock.elapsed().as_secs_f64();
        let mut dv = vec![DVec3::ZERO; n];
        if !self.solve_bundles(&b, &filter, &z, &mut dv) {
            stats.cg_iterations += self.mcg(h, &b, &filter, &z, &mut dv);
        }
        self.prev_dv.rotate_right(1);
        self.prev_dv[0].copy_from_slice(&dv);
        self.solves += 1;
        let solved = clock.elapsed().as_secs_f64();
        self.timing.forces += assembled;
        self.timing.solve += solved - assembled;
        for i in 0..n {
            self.v[i] += dv[i];
            self.x[i] += h * self.v[i];
            if self.mesh.layer_of(i) == 0 {
                self.x[i] = pose.apply(to_d(self.mesh.rest[i]));
            }
        }
        if let Some(i) = self.x.iter().position(|p| !p.is_finite()) {
            return Err(Error::Runtime(format!(
                "the hair mesh simulation became unstable at t = {t1:.4} s (vertex {i}); try more substeps or lower stiffness"
            )));
        }
        self.collide(h, t1, stats);
        self.timing.collisions += clock.elapsed().as_secs_f64() - solved;
        Ok(())
    }

    /// Collision handling (002 §3.2): surface vertices inside a collider are moved out and
    /// their velocity made non-penetrating (with friction), then the deformation is minimized
    /// around them.
    #[allow(clippy::needless_range_loop)] // i indexes positions, velocities and flags
    pub(super) fn collide(&mut self, h: f64, t1: f64, stats: &mut MeshFrameStats) {
        let _ = h;
        self.contacts.iter_mut().for_each(|c| *c = None);
        let Some(colliders) = &self.colliders else { return };
        let frame = colliders.at(t1);
        // Positions before correction, copied when the first vertex is corrected.
        let mut before: Option<Vec<DVec3>> = None;
        let skin = self.params.skin;
        let mut fixed = vec![false; self.x.len()];
        for i in 0..self.x.len() {
            if self.mesh.layer_of(i) == 0 {
                fixed[i] = true;
                continue;
            }
            if !self.external[i] {
                continue;
            }
            let Some(c) = frame.query(self.x[i].as_vec3()) else {
                continue;
            };
            let d = c.distance as f64;
            if d >= skin {
                continue;
            }
            let nrm = c.normal.as_dvec3();
            let vobj = c.velocity.as_dvec3();
            before.get_or_insert_with(|| self.x.clone());
            self.x[i] += (skin - d) * nrm;
            let mut rel = self.v[i] - vobj;
            let vn = rel.dot(nrm);
            if vn < 0.0 {
                rel -= vn * nrm;
                let vt = rel.length();
                if vt > 0.0 {
                    rel *= (1.0 - self.params.friction * -vn / vt).max(0.0);
                }
                self.contacts[i] = Some((nrm, vobj));
            }
            self.v[i] = vobj + rel;
            fixed[i] = true;
            stats.corrected += 1;
        }
        if let Some(before) = before
            && self.params.minimize_deformation
        {
            stats.minimization_iterations += self.minimize(&before, &fixed);
        }
    }

    /// Deformation minimization (002 Eq. 3–4): `AᵀA x″ = AᵀA x` on the free vertices with the
    /// corrected vertices and the roots held at `x′`, solved by conjugate gradients from `x′`.
    pub(super) fn minimize(&mut self, before: &[DVec3], fixed: &[bool]) -> usize {
        let n = self.x.len();
        let l = &self.laplacian;
        let mut b = vec![DVec3::ZERO; n];
        Self::mul_scalar(l, before, &mut b);
        let mut r = vec![DVec3::ZERO; n];
        Self::mul_scalar(l, &self.x, &mut r);
        for i in 0..n {
            r[i] = if fixed[i] { DVec3::ZERO } else { b[i] - r[i] };
        }
        let inv_d = &self.inv_degree;
        // Each coordinate is its own system with the same matrix: run them side by side.
        let mut c: Vec<DVec3> = (0..n).map(|i| r[i] * inv_d[i]).collect();
        let dot = |a: &[DVec3], b: &[DVec3]| a.iter().zip(b).fold(DVec3::ZERO, |s, (p, q)| s + *p * *q);
        let mut delta = dot(&r, &c);
        let delta0 = delta;
        let mut q = vec![DVec3::ZERO; n];
        let mut s = vec![DVec3::ZERO; n];
        let tol = 1e-8 * delta0.max_element().max(1e-30);
        let mut it = 0;
        while delta.max_element() > tol && it < 200 {
            Self::mul_scalar(l, &c, &mut q);
            for i in 0..n {
                if fixed[i] {
                    q[i] = DVec3::ZERO;
                }
            }
            let cq = dot(&c, &q);
            let alpha = DVec3::select(cq.cmpgt(DVec3::ZERO), delta / cq, DVec3::ZERO);
            for i in 0..n {
                self.x[i] += alpha * c[i];
                r[i] -= alpha * q[i];
            }
            for i in 0..n {
                s[i] = r[i] * inv_d[i];
            }
            let new_delta = dot(&r, &s);
            let beta = DVec3::select(delta.cmpgt(DVec3::ZERO), new_delta / delta, DVec3::ZERO);
            delta = new_delta;
            for i in 0..n {
                c[i] = if fixed[i] { DVec3::ZERO } else { s[i] + beta * c[i] };
            }
            it += 1;
        }
        it
    }
}
