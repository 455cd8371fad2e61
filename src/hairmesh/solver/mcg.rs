//! Solving the implicit step (Baraff & Witkin §5.3): the Modified Conjugate Gradient method with
//! each vertex's velocity change filtered (free, in a plane, or prescribed), preconditioned by
//! symmetric block Gauss–Seidel over the mesh's columns; or, for meshes of small separate
//! bundles, a direct solve per bundle.

use glam::{DMat3, DVec3, Mat3A, Vec3A};

use super::HairMeshSim;
use super::system::off_column_start;

/// How a vertex's velocity change is constrained in the solve (Baraff & Witkin §5.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Filter {
    Free,
    /// Free in the plane normal to the vector.
    Plane(DVec3),
    Fixed,
}

impl Filter {
    pub(super) fn apply(self, a: DVec3) -> DVec3 {
        match self {
            Filter::Free => a,
            Filter::Plane(n) => a - a.dot(n) * n,
            Filter::Fixed => DVec3::ZERO,
        }
    }
}

impl HairMeshSim {
    /// The Modified Conjugate Gradient method (Baraff & Witkin §5.3): solves `A Δv = b` with
    /// `Δv = z` in the constrained directions, i.e. `Δv = z + y` with
    /// `A′ y = S (b − A z)`, `A′ = S A S + (I − S)` (`S` the filters' projections). Preconditioned
    /// by symmetric block Gauss–Seidel over the mesh's columns, `M = P D⁻¹ Pᵀ` with `A′ = L + D + Lᵀ`,
    /// `D` the columns' block-tridiagonal parts (solved exactly) and `P = D + L`, applied with
    /// Eisenstat's trick: conjugate gradients on `P⁻¹ A′ P⁻ᵀ ŷ = P⁻¹ r₀` with preconditioner `D`,
    /// whose product is `t + P⁻¹ (p − D t)`, `t = P⁻ᵀ p` (since `A′ = P + Pᵀ − D`), one sweep each
    /// way: the cost of one product with `A` per iteration, and about 2.5× fewer iterations than
    /// the column preconditioner alone. `rᵀ M⁻¹ r = r̂ᵀ D r̂` (`r = P r̂`), so the stopping rule is
    /// the preconditioned residual's. Returns the iterations.
    #[allow(clippy::needless_range_loop)] // i indexes several vectors
    pub(super) fn mcg(&self, h: f64, b: &[DVec3], filter: &[Filter], z: &[DVec3], dv: &mut [DVec3]) -> usize {
        let n = b.len();
        let pre = ColumnPreconditioner::new(self, filter);
        let mut acc = Scratch::new(n);
        // Warm start: in the free directions, the last steps' changes extrapolated (quadratic
        // once there are three: smooth motion changes them smoothly; this takes 25 to 16
        // iterations on the bench's walk), the prescribed change in the constrained ones.
        let [p1, p2, p3] = &self.prev_dv;
        for i in 0..n {
            let guess = match self.solves {
                0 => DVec3::ZERO,
                1 => p1[i],
                2 => 2.0 * p1[i] - p2[i],
                _ => 3.0 * (p1[i] - p2[i]) + p3[i],
            };
            dv[i] = z[i] + filter[i].apply(guess);
        }
        // ‖v‖² in M⁻¹: with v̂ = P⁻¹ v, v̂ᵀ D v̂.
        let mut t = vec![DVec3::ZERO; n];
        let mut u = vec![DVec3::ZERO; n];
        let norm = |v: &[DVec3], t: &mut [DVec3], u: &mut [DVec3], acc: &mut Scratch| -> f64 {
            self.forward(&pre, filter, v, t, acc);
            pre.mul_d(t, u)
        };
        // The tolerance is relative to the right-hand side, but never below what one step of
        // gravity asks (near equilibrium the right-hand side vanishes).
        let weight: Vec<DVec3> = (0..n)
            .map(|i| {
                filter[i].apply(DVec3::new(
                    0.0,
                    -h * self.mass[i] * self.params.gravity.max(1.0),
                    0.0,
                ))
            })
            .collect();
        let gravity = norm(&weight, &mut t, &mut u, &mut acc);
        let fb: Vec<DVec3> = b.iter().zip(filter).map(|(v, f)| f.apply(*v)).collect();
        let delta0 = norm(&fb, &mut t, &mut u, &mut acc).max(gravity);
        let tol = self.params.cg_tolerance * self.params.cg_tolerance * delta0;

        // r̂ = P⁻¹ S (b − A Δv₀); the correction ŷ starts at zero.
        let mut q = vec![DVec3::ZERO; n];
        self.mul(dv, &mut q);
        let r0: Vec<DVec3> = (0..n).map(|i| filter[i].apply(b[i] - q[i])).collect();
        let mut r = vec![DVec3::ZERO; n];
        self.forward(&pre, filter, &r0, &mut r, &mut acc);
        let mut s = vec![DVec3::ZERO; n];
        let mut delta = pre.mul_d(&r, &mut s);
        let mut c = s.clone();
        let mut y = vec![DVec3::ZERO; n];
        let mut it = 0;
        while delta > tol && it < self.params.cg_max_iterations {
            // q = P⁻¹ A′ P⁻ᵀ c = t + P⁻¹ (c − D t), t = P⁻ᵀ c.
            self.backward(&pre, filter, &c, &mut t, &mut acc);
            pre.sub_mul_d(&c, &t, &mut u);
            self.forward(&pre, filter, &u, &mut q, &mut acc);
            let mut cq = 0.0;
            for i in 0..n {
                q[i] += t[i];
                cq += c[i].dot(q[i]);
            }
            if cq.is_nan() || cq <= 0.0 {
                break;
            }
            let alpha = delta / cq;
            for i in 0..n {
                y[i] += alpha * c[i];
                r[i] -= alpha * q[i];
            }
            let new_delta = pre.mul_d(&r, &mut s);
            let beta = new_delta / delta;
            delta = new_delta;
            for i in 0..n {
                c[i] = s[i] + beta * c[i];
            }
            it += 1;
        }
        // Δv = Δv₀ + P⁻ᵀ ŷ.
        self.backward(&pre, filter, &y, &mut t, &mut acc);
        for i in 0..n {
            dv[i] += t[i];
        }
        it
    }

    /// The step solved exactly bundle by bundle ([`super::bundles`]): `Δv = z + y` with
    /// `(S A S + I − S) y = S (b − A z)`, the system the modified conjugate gradients solve.
    /// `false` (nothing done) for meshes with large bundles or a matrix that is not positive
    /// definite.
    pub(super) fn solve_bundles(
        &mut self,
        b: &[DVec3],
        filter: &[Filter],
        z: &[DVec3],
        dv: &mut [DVec3],
    ) -> bool {
        let Some(mut solver) = self.bundles.take() else {
            return false;
        };
        let n = b.len();
        let mut q = vec![DVec3::ZERO; n];
        self.mul(z, &mut q);
        let rhs: Vec<DVec3> = (0..n).map(|i| filter[i].apply(b[i] - q[i])).collect();
        let s: Vec<DMat3> = filter.iter().map(|f| projector(*f)).collect();
        let ok = solver.solve(&self.a, &s, &rhs, dv);
        self.bundles = Some(solver);
        if ok {
            for i in 0..n {
                dv[i] = z[i] + filter[i].apply(dv[i]);
            }
        }
        ok
    }

    /// The slots of row `i` coupling other columns: all after the diagonal and, where there is
    /// one, the block of the next vertex up (set-up checks that no other block of the row is in
    /// its column).
    #[inline(always)]
    pub(super) fn off_column(&self, i: usize) -> std::ops::Range<usize> {
        let offsets = self.a.row_offsets();
        off_column_start(offsets, &self.up_slot, i)..offsets[i + 1]
    }

    /// `t = (D + L)⁻¹ v` on the filtered system: column by column from the first, each row
    /// gathering its coupling to the earlier (already solved) columns through the lower
    /// triangle's blocks, then the column solved exactly. The coupling products run in single
    /// precision on four-lane columns (the solve's tolerance, 10⁻³, is far above their
    /// rounding); the column solves and the iteration's vectors stay double.
    pub(super) fn forward(
        &self,
        pre: &ColumnPreconditioner,
        filter: &[Filter],
        v: &[DVec3],
        t: &mut [DVec3],
        scratch: &mut Scratch,
    ) {
        let layers = self.mesh.layers;
        let lower = &self.lower;
        let Scratch { acc, tf } = scratch;
        for c in 0..v.len() / layers {
            let range = c * layers..(c + 1) * layers;
            for i in range.clone() {
                let r = lower.offsets[i]..lower.offsets[i + 1];
                let mut s = Vec3A::ZERO;
                for (m, &j) in pre.lower[r.clone()].iter().zip(&lower.col[r]) {
                    s += m.mul_vec3a(tf[j as usize]);
                }
                acc[i] = v[i] - filter[i].apply(s.as_dvec3());
            }
            pre.solve_column(c, &acc[range.clone()], &mut t[range.clone()]);
            for i in range {
                let ti = filter[i].apply(t[i]);
                t[i] = ti;
                tf[i] = ti.as_vec3a();
            }
        }
    }

    /// `t = (D + U)⁻¹ v` on the filtered system: column by column from the last, each row
    /// gathering its coupling to the later (already solved) columns first (single-precision
    /// products as in [`Self::forward`]).
    pub(super) fn backward(
        &self,
        pre: &ColumnPreconditioner,
        filter: &[Filter],
        v: &[DVec3],
        t: &mut [DVec3],
        scratch: &mut Scratch,
    ) {
        let layers = self.mesh.layers;
        let blocks = self.a.values();
        let Scratch { acc, tf } = scratch;
        let columns = v.len() / layers;
        for c in (0..columns).rev() {
            let range = c * layers..(c + 1) * layers;
            for i in range.clone() {
                let r = self.off_column(i);
                let mut s = Vec3A::ZERO;
                for (m, &j) in blocks[r.clone()].iter().zip(&self.block_col[r]) {
                    s += m.mul_vec3a(tf[j as usize]);
                }
                acc[i] = v[i] - filter[i].apply(s.as_dvec3());
            }
            pre.solve_column(c, &acc[range.clone()], &mut t[range.clone()]);
            for i in range {
                let ti = filter[i].apply(t[i]);
                t[i] = ti;
                tf[i] = ti.as_vec3a();
            }
        }
    }
}

/// The sweeps' scratch: the gathered right-hand side of each column, and the solution so far
/// in single precision for the coupling products.
pub(super) struct Scratch {
    acc: Vec<DVec3>,
    tf: Vec<Vec3A>,
}

impl Scratch {
    pub(super) fn new(n: usize) -> Scratch {
        Scratch {
            acc: vec![DVec3::ZERO; n],
            tf: vec![Vec3A::ZERO; n],
        }
    }
}

/// The projection of a filter: `I`, `I − n nᵀ` or `0`.
pub(super) fn projector(f: Filter) -> DMat3 {
    match f {
        Filter::Free => DMat3::IDENTITY,
        Filter::Plane(nrm) => DMat3::IDENTITY - DMat3::from_cols(nrm * nrm.x, nrm * nrm.y, nrm * nrm.z),
        Filter::Fixed => DMat3::ZERO,
    }
}

/// The MCG's preconditioner: the block-tridiagonal part of the filtered system
/// `S A S + (I − S)` along each column of the mesh (a vertex and its neighbours up and down the
/// same column), factored exactly column by column. The stiff along-the-hair coupling lives
/// there, which a per-vertex (block-Jacobi) preconditioner leaves to the iterations.
pub(super) struct ColumnPreconditioner {
    pub(super) layers: usize,
    /// Per vertex, the column factorization (one cache line run per vertex).
    pub(super) factor: Vec<ColumnFactor>,
    /// Per vertex: its filtered block coupling to the next vertex up (zero at the top).
    pub(super) up: Vec<DMat3>,
    /// Per vertex: its filtered diagonal block.
    pub(super) diag: Vec<DMat3>,
    /// The lower triangle's off-column blocks in the order of [`super::system::LowerPattern`]
    /// (transposes of the upper triangle's), for the forward sweep.
    pub(super) lower: Vec<Mat3A>,
}

/// One vertex's share of its column's block LDU factorization.
#[derive(Clone, Copy, Default)]
pub(super) struct ColumnFactor {
    /// `upᵀ inv_d` of the vertex below (the forward-elimination factor).
    pub(super) low: DMat3,
    /// The inverse of its block after elimination of the vertices below it.
    pub(super) inv_d: DMat3,
    /// `inv_d up`: back substitution `yₗ = inv_d y′ₗ − g yₗ₊₁` has one product on its chain.
    pub(super) g: DMat3,
}

impl ColumnPreconditioner {
    pub(super) fn new(sim: &HairMeshSim, filter: &[Filter]) -> ColumnPreconditioner {
        let n = filter.len();
        let layers = sim.mesh.layers;
        let vals = sim.a.values();
        let mut factor = vec![ColumnFactor::default(); n];
        let mut up = vec![DMat3::ZERO; n];
        let mut diag = vec![DMat3::ZERO; n];
        for i in 0..n {
            let si = projector(filter[i]);
            let mut d = si * vals[sim.diag_slot[i] as usize].as_dmat3() * si + (DMat3::IDENTITY - si);
            diag[i] = d;
            if i % layers > 0 {
                let low = up[i - 1].transpose() * factor[i - 1].inv_d;
                d -= low * up[i - 1];
                factor[i].low = low;
            }
            if i % layers + 1 < layers {
                up[i] = si * vals[sim.up_slot[i] as usize].as_dmat3() * projector(filter[i + 1]);
            }
            let inv = d.inverse();
            let inv_d = if inv.is_finite() {
                inv
            } else {
                DMat3::from_diagonal(
                    DVec3::new(d.x_axis.x, d.y_axis.y, d.z_axis.z)
                        .map(|x| if x > 0.0 { 1.0 / x } else { 0.0 }),
                )
            };
            factor[i].inv_d = inv_d;
            factor[i].g = inv_d * up[i];
        }
        let lower = sim
            .lower
            .slot
            .iter()
            .map(|&k| vals[k as usize].transpose())
            .collect();
        ColumnPreconditioner {
            layers,
            factor,
            up,
            diag,
            lower,
        }
    }

    /// `y = P⁻¹ r`: forward elimination up each column, back substitution down.
    #[cfg(test)]
    pub(super) fn apply(&self, r: &[DVec3], y: &mut [DVec3]) {
        let layers = self.layers;
        for (c, (rc, yc)) in r.chunks(layers).zip(y.chunks_mut(layers)).enumerate() {
            self.solve_column(c, rc, yc);
        }
    }

    /// The exact solve of column `c`'s block-tridiagonal part.
    #[inline]
    pub(super) fn solve_column(&self, c: usize, rc: &[DVec3], yc: &mut [DVec3]) {
        let layers = self.layers;
        let f = &self.factor[c * layers..(c + 1) * layers];
        let (rc, yc) = (&rc[..layers], &mut yc[..layers]);
        let mut y = rc[0];
        yc[0] = y;
        for l in 1..layers {
            y = rc[l] - f[l].low * y;
            yc[l] = y;
        }
        let mut y = f[layers - 1].inv_d * yc[layers - 1];
        yc[layers - 1] = y;
        for l in (0..layers - 1).rev() {
            y = f[l].inv_d * yc[l] - f[l].g * y;
            yc[l] = y;
        }
    }

    /// `y = D v`, `D` the columns' filtered block-tridiagonal parts; returns `v · y`.
    pub(super) fn mul_d(&self, v: &[DVec3], y: &mut [DVec3]) -> f64 {
        let mut dot = 0.0;
        self.each_d_row(v, |i, w| {
            y[i] = w;
            dot += v[i].dot(w);
        });
        dot
    }

    /// `u = c − D t`.
    pub(super) fn sub_mul_d(&self, c: &[DVec3], t: &[DVec3], u: &mut [DVec3]) {
        self.each_d_row(t, |i, w| u[i] = c[i] - w);
    }

    /// `(D v)ᵢ` for every row `i` in order, column by column: the diagonal block, the block up
    /// and the transpose of the block down (as dot products with its columns).
    #[inline(always)]
    fn each_d_row(&self, v: &[DVec3], mut row: impl FnMut(usize, DVec3)) {
        let layers = self.layers;
        for (c, vc) in v.chunks_exact(layers).enumerate() {
            let base = c * layers;
            let (diag, up) = (&self.diag[base..base + layers], &self.up[base..base + layers]);
            for l in 0..layers {
                let mut w = diag[l] * vc[l];
                if l + 1 < layers {
                    w += up[l] * vc[l + 1];
                }
                if l > 0 {
                    let (m, p) = (&up[l - 1], vc[l - 1]);
                    w += DVec3::new(m.x_axis.dot(p), m.y_axis.dot(p), m.z_axis.dot(p));
                }
                row(base + l, w);
            }
        }
    }
}
