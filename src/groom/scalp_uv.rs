//! Scalp parameterization of Lyu et al. 2020 (000 App. A, after Wang et al. [48]).
//!
//! The scalp is taken as roughly the upper half of a sphere around a centre `o`. A root `p` is
//! projected onto the unit sphere, `(x̂, ŷ, ẑ) = (p − o) / ‖p − o‖`, whose south pole is
//! (0, −1, 0) in the head's local frame (Y up), and
//!
//! ```text
//! u = arccos( x̂ / sqrt(x̂² + (ŷ + 1)²) )
//! v = arccos( ẑ / sqrt(ẑ² + (ŷ + 1)²) )
//! ```
//!
//! The map is the stereographic projection from the south pole ((cot u, cot v) = (x̂, ẑ)/(1 + ŷ)),
//! so the upper hemisphere lands in u, v ∈ [π/4, 3π/4] (the disk cot²u + cot²v ≤ 1 of that
//! square). tress stores (u − π/4)/(π/2) and (v − π/4)/(π/2): roots on the upper hemisphere get
//! root UVs in [0, 1] as DCC tools and Unreal's `groom_root_uv` expect; the rare roots below the
//! centre's equator (napes) fall slightly outside, without any two roots colliding.

use glam::{DMat4, DVec4, Vec2, Vec3};

/// The (u, v) of a scalp point around centre `o` (000 App. A), mapped from [π/4, 3π/4] to [0, 1].
pub fn scalp_uv(p: Vec3, o: Vec3) -> Vec2 {
    let d = (p - o).normalize_or(Vec3::Y);
    let (x, y, z) = (d.x as f64, d.y as f64, d.z as f64);
    let yp = y + 1.0;
    // At the south pole itself both ratios are 0/0; any direction is as good as another there.
    let ratio = |a: f64| {
        let r = (a * a + yp * yp).sqrt();
        if r > 1e-12 { (a / r).clamp(-1.0, 1.0) } else { 0.0 }
    };
    let quarter = std::f64::consts::FRAC_PI_4;
    let u = (ratio(x).acos() - quarter) / (2.0 * quarter);
    let v = (ratio(z).acos() - quarter) / (2.0 * quarter);
    Vec2::new(u as f32, v as f32)
}

/// Estimates the scalp centre from root positions by a least-squares sphere fit
/// (minimizing Σ(‖p‖² − 2 p·c − k)², an algebraic fit that is linear in c and k).
///
/// Roots of a real groom cover a cap of the head, which constrains the sphere well. When the
/// fit is degenerate (fewer than 4 roots, coplanar roots) the centre falls back to the middle
/// of the roots' bounding box in x and z and their lowest y, i.e. the base of the cap.
pub fn scalp_center(roots: &[Vec3]) -> Vec3 {
    let fallback = || {
        let b = super::model::Bounds::of(roots);
        if b.is_empty() {
            Vec3::ZERO
        } else {
            Vec3::new(b.center().x, b.min.y, b.center().z)
        }
    };
    if roots.len() < 4 {
        return fallback();
    }
    // Centre the data for conditioning, accumulate normal equations in f64.
    let mean = roots.iter().fold(glam::DVec3::ZERO, |a, p| a + p.as_dvec3()) / roots.len() as f64;
    let mut ata = DMat4::ZERO;
    let mut atb = DVec4::ZERO;
    for p in roots {
        let q = p.as_dvec3() - mean;
        let row = DVec4::new(2.0 * q.x, 2.0 * q.y, 2.0 * q.z, 1.0);
        let b = q.length_squared();
        ata += DMat4::from_cols(row * row.x, row * row.y, row * row.z, row * row.w);
        atb += row * b;
    }
    let det = ata.determinant();
    let scale = ata.col(0).x.max(ata.col(1).y).max(ata.col(2).z).max(1e-30);
    if !det.is_finite() || det.abs() < 1e-9 * scale.powi(3) * ata.col(3).w {
        return fallback();
    }
    let sol = ata.inverse() * atb;
    let c = glam::DVec3::new(sol.x, sol.y, sol.z) + mean;
    let radius2 = sol.w + (c - mean).length_squared();
    if !c.is_finite() || radius2 <= 0.0 {
        return fallback();
    }
    c.as_vec3()
}

/// Root UVs of a groom: its own when it has them, else 000 App. A around a centre fitted to
/// the roots.
pub fn root_uvs(groom: &super::Groom) -> Vec<Vec2> {
    root_uvs_of(&groom.roots(), groom.attrs.root_uv.as_deref())
}

/// [`root_uvs`] of strands with these roots and, if they have them, their own root UVs.
pub fn root_uvs_of(roots: &[Vec3], given: Option<&[[f32; 2]]>) -> Vec<Vec2> {
    if let Some(uv) = given {
        return uv.iter().map(|u| Vec2::from_array(*u)).collect();
    }
    let c = scalp_center(roots);
    roots.iter().map(|r| scalp_uv(*r, c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f32::consts::PI;

    #[test]
    fn paper_formula_at_known_points() {
        let o = Vec3::ZERO;
        let norm = |a: f32| (a - PI / 4.0) / (PI / 2.0);
        // North pole: x̂ = ẑ = 0, ŷ = 1 → u = v = arccos(0) = π/2.
        let n = scalp_uv(Vec3::Y * 3.0, o);
        assert!((n - Vec2::splat(norm(PI / 2.0))).length() < 1e-6);
        // +X equator point: x̂ = 1, ŷ = 0 → u = arccos(1/√2) = π/4; v = arccos(0) = π/2.
        let e = scalp_uv(Vec3::X, o);
        assert!((e.x - norm(PI / 4.0)).abs() < 1e-6 && (e.y - 0.5).abs() < 1e-6);
        // −Z equator point: v = arccos(−1/√2) = 3π/4.
        let b = scalp_uv(-Vec3::Z, o);
        assert!((b.y - norm(3.0 * PI / 4.0)).abs() < 1e-6);
        // Directly evaluate the formula for an arbitrary point.
        let p = Vec3::new(0.3, 0.5, -0.2);
        let d = p.normalize();
        let u = norm((d.x / (d.x * d.x + (d.y + 1.0).powi(2)).sqrt()).acos());
        let v = norm((d.z / (d.z * d.z + (d.y + 1.0).powi(2)).sqrt()).acos());
        let got = scalp_uv(p + Vec3::ONE, Vec3::ONE);
        assert!((got - Vec2::new(u, v)).length() < 1e-5);
    }

    #[test]
    fn distinct_roots_get_distinct_uvs_on_the_upper_hemisphere() {
        let mut seen = Vec::new();
        // Stereographic: (cot u, cot v) = (x̂, ẑ) / (1 + ŷ), checked on every sample.
        let cot = |a: f32| 1.0 / (a * PI / 2.0 + PI / 4.0).tan();
        for i in 0..20 {
            for j in 0..20 {
                let theta = 0.1 + 1.4 * i as f32 / 19.0;
                let phi = 2.0 * PI * j as f32 / 20.0;
                let p = Vec3::new(theta.sin() * phi.cos(), theta.cos(), theta.sin() * phi.sin());
                let uv = scalp_uv(p, Vec3::ZERO);
                assert!((0.0..=1.0).contains(&uv.x) && (0.0..=1.0).contains(&uv.y));
                assert!((cot(uv.x) - p.x / (1.0 + p.y)).abs() < 1e-4);
                assert!((cot(uv.y) - p.z / (1.0 + p.y)).abs() < 1e-4);
                assert!(seen.iter().all(|q: &Vec2| q.distance(uv) > 1e-4));
                seen.push(uv);
            }
        }
    }

    #[test]
    fn sphere_fit_recovers_the_centre_from_a_cap() {
        let c = Vec3::new(1.0, -2.0, 0.5);
        let mut roots = Vec::new();
        for i in 0..30 {
            for j in 0..30 {
                let theta = 1.2 * i as f32 / 29.0;
                let phi = 2.0 * PI * j as f32 / 30.0;
                roots
                    .push(c + 9.0 * Vec3::new(theta.sin() * phi.cos(), theta.cos(), theta.sin() * phi.sin()));
            }
        }
        assert!(scalp_center(&roots).distance(c) < 1e-3);
    }

    #[test]
    fn degenerate_roots_fall_back() {
        let flat = [
            Vec3::ZERO,
            Vec3::X,
            Vec3::Z,
            Vec3::new(1.0, 0.0, 1.0),
            Vec3::new(0.5, 0.0, 0.5),
        ];
        let c = scalp_center(&flat);
        assert!(c.is_finite());
        assert_eq!(c.y, 0.0);
    }
}
