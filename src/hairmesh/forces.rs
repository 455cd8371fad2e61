//! The force kernels of the hair-mesh solver: each returns a condition `C` and its gradients
//! `∂C/∂xᵢ`; the solver turns them into forces `fᵢ = −k C ∂C/∂xᵢ` (energy `k/2 C²`) and into
//! the implicit-Euler system.
//!
//! * **Volume** (002 §3.1, Eq. 1–2): `C = ⅙ e₁·(e₂×e₃) − V₀` on a tetrahedron with
//!   `eᵢ = xᵢ − x₀`. The true gradients are `∇₁ = ⅙ e₂×e₃`, `∇₂ = ⅙ e₃×e₁`, `∇₃ = ⅙ e₁×e₂`,
//!   `∇₀ = −(∇₁+∇₂+∇₃) = −⅙ (e₂−e₁)×(e₃−e₁)`. The paper lists the forces without the ⅙
//!   (`f₁ = k (e₃×e₂) C`, …): its `k` is 6× ours, the directions are the same. Compressed,
//!   flattened (`V = 0`, gradients non-zero) and inverted tets (`V < 0`) all get forces that
//!   raise `V` towards `V₀` (002 Fig. 2).
//! * **Stretch and shear** (Baraff & Witkin 1998, which 002 §3 reuses unchanged): a triangle with
//!   rest-plane coordinates `(u, v)` has `[w_u w_v] = [Δx₁ Δx₂][Δu Δv]⁻¹ = Σ xᵢ (αᵢ, βᵢ)`;
//!   stretch `C = a (‖w_u‖ − 1, ‖w_v‖ − 1)`, shear `C = a w_u·w_v` with `a` the rest area.
//! * **Bend** (Baraff & Witkin): the dihedral angle `θ` of two triangles on a hinge edge,
//!   `C = θ − θ₀` with `θ₀` the rest angle (hair meshes are curved at rest; Baraff & Witkin
//!   assume flat cloth).

use glam::DVec3;

/// Volume of the tetrahedron `x` and its gradients (002 Eq. 1 without `V₀`).
pub fn tet_volume(x: &[DVec3; 4]) -> (f64, [DVec3; 4]) {
    let e1 = x[1] - x[0];
    let e2 = x[2] - x[0];
    let e3 = x[3] - x[0];
    let g1 = e2.cross(e3) / 6.0;
    let g2 = e3.cross(e1) / 6.0;
    let g3 = e1.cross(e2) / 6.0;
    let g0 = -(g1 + g2 + g3);
    (e1.dot(g1), [g0, g1, g2, g3])
}

/// A triangle's rest data for the Baraff–Witkin stretch and shear conditions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriRest {
    /// `∂w_u/∂xᵢ = αᵢ I`.
    pub alpha: [f64; 3],
    /// `∂w_v/∂xᵢ = βᵢ I`.
    pub beta: [f64; 3],
    /// Rest area.
    pub area: f64,
}

impl TriRest {
    /// Rest data of triangle `x` whose `u` axis is `axis` projected into its plane (the
    /// direction along the hair for side faces). `None` for a degenerate triangle.
    pub fn new(x: &[DVec3; 3], axis: DVec3) -> Option<TriRest> {
        let e1 = x[1] - x[0];
        let e2 = x[2] - x[0];
        let n = e1.cross(e2);
        let twice_area = n.length();
        let scale = e1.length_squared().max(e2.length_squared());
        if twice_area.is_nan() || twice_area <= 1e-9 * scale {
            return None;
        }
        let n = n / twice_area;
        let mut u = axis - axis.dot(n) * n;
        if u.length_squared() < 1e-12 * axis.length_squared().max(1e-30) {
            u = e1;
        }
        let u = u.normalize();
        let v = n.cross(u);
        let (du1, dv1) = (e1.dot(u), e1.dot(v));
        let (du2, dv2) = (e2.dot(u), e2.dot(v));
        let d = du1 * dv2 - du2 * dv1;
        let alpha = [(dv1 - dv2) / d, dv2 / d, -dv1 / d];
        let beta = [(du2 - du1) / d, -du2 / d, du1 / d];
        Some(TriRest {
            alpha,
            beta,
            area: 0.5 * twice_area,
        })
    }

    /// `(w_u, w_v)` at positions `x`.
    pub fn w(&self, x: &[DVec3; 3]) -> (DVec3, DVec3) {
        let mut wu = DVec3::ZERO;
        let mut wv = DVec3::ZERO;
        for ((a, b), p) in self.alpha.iter().zip(&self.beta).zip(x) {
            wu += *a * *p;
            wv += *b * *p;
        }
        (wu, wv)
    }

    /// Stretch condition along `u` (`dir = 0`) or `v` (`dir = 1`) and its gradients; `None`
    /// where the direction is undefined (the triangle collapsed in that direction).
    pub fn stretch(&self, x: &[DVec3; 3], dir: usize) -> Option<(f64, [DVec3; 3], DVec3, f64)> {
        let (wu, wv) = self.w(x);
        let (w, c) = if dir == 0 {
            (wu, &self.alpha)
        } else {
            (wv, &self.beta)
        };
        let len = w.length();
        if len.is_nan() || len <= 1e-8 {
            return None;
        }
        let wh = w / len;
        let a = self.area;
        Some((
            a * (len - 1.0),
            [a * c[0] * wh, a * c[1] * wh, a * c[2] * wh],
            wh,
            len,
        ))
    }

    /// Shear condition and its gradients.
    pub fn shear(&self, x: &[DVec3; 3]) -> (f64, [DVec3; 3]) {
        let (wu, wv) = self.w(x);
        let a = self.area;
        let g = |i: usize| a * (self.alpha[i] * wv + self.beta[i] * wu);
        (a * wu.dot(wv), [g(0), g(1), g(2)])
    }
}

/// Dihedral angle of the hinge `x1–x2` with wings `x0` and `x3`, and its gradients; `None` when
/// a wing triangle is degenerate.
///
/// `θ = atan2((n̂_a×n̂_b)·ê, n̂_a·n̂_b)` with `e = x₂−x₁`, `n_a = e×(x₀−x₁)`,
/// `n_b = (x₃−x₁)×e`; zero when the two triangles are coplanar and on opposite sides of the
/// hinge.
pub fn dihedral(x: &[DVec3; 4]) -> Option<(f64, [DVec3; 4])> {
    let e = x[2] - x[1];
    let el = e.length();
    if el.is_nan() || el <= 1e-12 {
        return None;
    }
    let eh = e / el;
    let na = e.cross(x[0] - x[1]);
    let nb = (x[3] - x[1]).cross(e);
    let (la, lb) = (na.length_squared(), nb.length_squared());
    let tiny = 1e-12 * el.powi(4);
    if !(la > tiny && lb > tiny) {
        return None;
    }
    let (nah, nbh) = (na / la.sqrt(), nb / lb.sqrt());
    let theta = nah.cross(nbh).dot(eh).atan2(nah.dot(nbh));
    let (qa, qb) = (na / la, nb / lb);
    let g0 = -el * qa;
    let g3 = -el * qb;
    let g1 = -(x[0] - x[2]).dot(eh) * qa - (x[3] - x[2]).dot(eh) * qb;
    let g2 = (x[0] - x[1]).dot(eh) * qa + (x[3] - x[1]).dot(eh) * qb;
    Some((theta, [g0, g1, g2, g3]))
}

/// `a − b` wrapped into (−π, π].
pub fn angle_diff(a: f64, b: f64) -> f64 {
    let tau = std::f64::consts::TAU;
    let mut d = (a - b) % tau;
    if d > std::f64::consts::PI {
        d -= tau;
    } else if d <= -std::f64::consts::PI {
        d += tau;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        }
    }

    fn random_points<const N: usize>(r: &mut impl FnMut() -> f64) -> [DVec3; N] {
        std::array::from_fn(|_| DVec3::new(r(), r(), r()))
    }

    /// Central finite differences of `f` at `x`, every coordinate.
    fn fd<const N: usize>(x: &[DVec3; N], f: impl Fn(&[DVec3; N]) -> f64) -> [DVec3; N] {
        let h = 1e-6;
        std::array::from_fn(|i| {
            let mut g = DVec3::ZERO;
            for k in 0..3 {
                let mut p = *x;
                p[i][k] += h;
                let up = f(&p);
                p[i][k] -= 2.0 * h;
                g[k] = (up - f(&p)) / (2.0 * h);
            }
            g
        })
    }

    fn close<const N: usize>(a: &[DVec3; N], b: &[DVec3; N], tol: f64) {
        for (p, q) in a.iter().zip(b) {
            assert!((*p - *q).length() < tol, "{a:?}\n{b:?}");
        }
    }

    #[test]
    fn volume_is_the_signed_volume_and_gradients_match_finite_differences() {
        // Unit corner tet: V = 1/6, positive for this orientation.
        let unit = [DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z];
        assert!((tet_volume(&unit).0 - 1.0 / 6.0).abs() < 1e-15);
        let mut r = rng(1);
        for _ in 0..50 {
            let x = random_points::<4>(&mut r);
            let (_, g) = tet_volume(&x);
            close(&g, &fd(&x, |p| tet_volume(p).0), 1e-8);
            // Forces of a volume condition sum to zero and have no torque.
            let sum: DVec3 = g.iter().sum();
            let torque: DVec3 = x.iter().zip(&g).map(|(p, f)| p.cross(*f)).sum();
            assert!(sum.length() < 1e-12 && torque.length() < 1e-12);
        }
    }

    /// 002 Fig. 2: compressed, flattened and inverted tets all get forces that restore the rest
    /// volume; the force is minus the gradient of `k/2 C²` (finite differences of the energy).
    #[test]
    fn volume_force_restores_compressed_flat_and_inverted_tets() {
        let rest = [DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z];
        let v0 = tet_volume(&rest).0;
        let k = 3.0;
        let energy = |x: &[DVec3; 4]| 0.5 * k * (tet_volume(x).0 - v0).powi(2);
        let force = |x: &[DVec3; 4]| {
            let (v, g) = tet_volume(x);
            g.map(|gi| -k * (v - v0) * gi)
        };
        let cases = [
            ("compressed", DVec3::new(0.0, 0.0, 0.4)),
            ("flattened", DVec3::new(0.2, 0.3, 0.0)),
            ("inverted", DVec3::new(0.1, 0.2, -0.5)),
        ];
        for (name, apex) in cases {
            let x = [rest[0], rest[1], rest[2], apex];
            let f = force(&x);
            let minus_grad = fd(&x, energy).map(|g| -g);
            close(&f, &minus_grad, 1e-7);
            // The apex is pushed up (+z, away from the base), and a small step along the
            // forces brings the volume closer to V0.
            assert!(f[3].z > 0.0, "{name}: apex force {:?}", f[3]);
            let step: [DVec3; 4] = std::array::from_fn(|i| x[i] + 1e-3 * f[i]);
            let before = (tet_volume(&x).0 - v0).abs();
            let after = (tet_volume(&step).0 - v0).abs();
            assert!(after < before, "{name}: |V−V0| {before} → {after}");
        }
    }

    #[test]
    fn stretch_and_shear_vanish_at_rest_and_match_finite_differences() {
        let mut r = rng(2);
        for _ in 0..50 {
            let x0 = random_points::<3>(&mut r);
            let axis = DVec3::new(r(), r(), r());
            let tri = TriRest::new(&x0, axis).unwrap();
            // At rest: unit stretch, no shear; the u axis is the axis projected in the plane.
            let (wu, wv) = tri.w(&x0);
            assert!((wu.length() - 1.0).abs() < 1e-9 && (wv.length() - 1.0).abs() < 1e-9);
            assert!(wu.dot(wv).abs() < 1e-9);
            let n = (x0[1] - x0[0]).cross(x0[2] - x0[0]).normalize();
            let proj = (axis - axis.dot(n) * n).normalize();
            assert!((wu - proj).length() < 1e-9);
            let area = 0.5 * (x0[1] - x0[0]).cross(x0[2] - x0[0]).length();
            assert!((tri.area - area).abs() < 1e-12);
            // Deformed: gradients against finite differences.
            let x: [DVec3; 3] = std::array::from_fn(|i| x0[i] + 0.3 * DVec3::new(r(), r(), r()));
            for dir in 0..2 {
                let (_, g, _, _) = tri.stretch(&x, dir).unwrap();
                close(&g, &fd(&x, |p| tri.stretch(p, dir).unwrap().0), 1e-7);
            }
            let (_, g) = tri.shear(&x);
            close(&g, &fd(&x, |p| tri.shear(p).0), 1e-7);
        }
    }

    #[test]
    fn dihedral_angle_is_signed_and_its_gradients_match_finite_differences() {
        // Flat, wings on opposite sides: 0. Folded by 90°: ±π/2.
        let flat = [
            DVec3::new(0.5, 1.0, 0.0),
            DVec3::ZERO,
            DVec3::X,
            DVec3::new(0.5, -1.0, 0.0),
        ];
        assert!(dihedral(&flat).unwrap().0.abs() < 1e-12);
        let fold = [
            DVec3::new(0.5, 1.0, 0.0),
            DVec3::ZERO,
            DVec3::X,
            DVec3::new(0.5, 0.0, 1.0),
        ];
        assert!((dihedral(&fold).unwrap().0.abs() - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        let mut r = rng(3);
        let mut tested = 0;
        while tested < 50 {
            let x = random_points::<4>(&mut r);
            let Some((theta, g)) = dihedral(&x) else { continue };
            if theta.abs() > 3.0 {
                continue; // the ±π seam of atan2
            }
            close(
                &g,
                &fd(&x, |p| dihedral(p).unwrap().0),
                1e-5 * (1.0 + g.iter().map(|v| v.length()).fold(0.0, f64::max)),
            );
            tested += 1;
        }
        // Degenerate wings are reported, not divided by zero.
        let degenerate = [DVec3::X * 0.5, DVec3::ZERO, DVec3::X, DVec3::new(0.5, 0.0, 1.0)];
        assert!(dihedral(&degenerate).is_none());
        assert!((angle_diff(3.0, -3.0) - (6.0 - std::f64::consts::TAU)).abs() < 1e-12);
    }
}
