//! A head for grooms that come without one: an axis-aligned ellipsoid fitted to the strand
//! roots, which sit on the scalp. The fit is linear least squares of
//! A x² + B y² + C z² + D x + E y + F z = 1 (the roots cover only the top of the head, so a
//! sphere fit takes over when the ellipsoid comes out degenerate), then shrunk until nearly
//! every root is on or outside it, so the hair starts clear of its collider.

use glam::{DVec3, Vec3};

use crate::error::{Error, Result};
use crate::groom::ScalpShape;

/// Share of roots allowed inside the fitted head (outliers such as stray strands).
const INSIDE_SHARE: f64 = 0.02;

/// Solves the symmetric system `m x = b` (nalgebra's LU with partial pivoting); `None` when a
/// pivot is below 1e-12 (the points do not determine the fit).
fn solve<const N: usize>(m: [[f64; N]; N], b: [f64; N]) -> Option<[f64; N]> {
    let lu = nalgebra::DMatrix::from_fn(N, N, |i, j| m[i][j]).lu();
    if lu.u().diagonal().iter().any(|d| d.abs() < 1e-12) {
        return None;
    }
    let x = lu.solve(&nalgebra::DVector::from_column_slice(&b))?;
    Some(std::array::from_fn(|i| x[i]))
}

/// Least squares over rows `rows(p)` with right-hand side `rhs(p)`.
fn least_squares<const N: usize>(
    points: &[DVec3],
    rows: impl Fn(DVec3) -> [f64; N],
    rhs: impl Fn(DVec3) -> f64,
) -> Option<[f64; N]> {
    let mut m = [[0.0; N]; N];
    let mut b = [0.0; N];
    for p in points {
        let r = rows(*p);
        let y = rhs(*p);
        for i in 0..N {
            for j in 0..N {
                m[i][j] += r[i] * r[j];
            }
            b[i] += r[i] * y;
        }
    }
    solve(m, b)
}

fn fit_ellipsoid(p: &[DVec3]) -> Option<(DVec3, DVec3)> {
    let [a, b, c, d, e, f] = least_squares(p, |q| [q.x * q.x, q.y * q.y, q.z * q.z, q.x, q.y, q.z], |_| 1.0)?;
    if a <= 0.0 || b <= 0.0 || c <= 0.0 {
        return None;
    }
    let center = DVec3::new(-d / (2.0 * a), -e / (2.0 * b), -f / (2.0 * c));
    let g = 1.0 + d * d / (4.0 * a) + e * e / (4.0 * b) + f * f / (4.0 * c);
    let radii = DVec3::new((g / a).sqrt(), (g / b).sqrt(), (g / c).sqrt());
    // Elongations beyond 2:1 mean the cap did not pin the ellipsoid down.
    (radii.is_finite() && radii.max_element() < 2.0 * radii.min_element()).then_some((center, radii))
}

/// Head radii (cm) a fit may come out with; outside, the roots did not outline a head.
const PLAUSIBLE: (f64, f64) = (5.0, 15.0);
/// Radius (cm) of the head put under roots that do not outline one.
const FALLBACK_RADIUS: f64 = 8.5;

/// The centre of the sphere of radius `r` closest to the points (Gauss–Newton on
/// Σ (|p − c| − r)²), started below them (hair grows on top of the head, Y up).
fn fit_fixed_sphere(p: &[DVec3], r: f64) -> DVec3 {
    let mean = p.iter().sum::<DVec3>() / p.len() as f64;
    let mut c = mean - DVec3::Y * r;
    for _ in 0..50 {
        let mut m = [[0.0; 3]; 3];
        let mut b = [0.0; 3];
        for q in p {
            let d = *q - c;
            let len = d.length().max(1e-9);
            let j = (-d / len).to_array();
            let res = len - r;
            for i in 0..3 {
                for k in 0..3 {
                    m[i][k] += j[i] * j[k];
                }
                b[i] -= j[i] * res;
            }
        }
        let Some(step) = solve(m, b) else { break };
        let step = DVec3::from_array(step);
        c += step;
        if step.length() < 1e-6 {
            break;
        }
    }
    c
}

/// Root-mean-square distance (cm) of the points from the sphere (c, r).
fn rms_off_sphere(p: &[DVec3], c: DVec3, r: f64) -> f64 {
    (p.iter().map(|q| ((*q - c).length() - r).powi(2)).sum::<f64>() / p.len() as f64).sqrt()
}

fn fit_sphere(p: &[DVec3]) -> Option<(DVec3, DVec3)> {
    // x² + y² + z² = D x + E y + F z + G.
    let [d, e, f, g] = least_squares(p, |q| [q.x, q.y, q.z, 1.0], |q| q.length_squared())?;
    let center = DVec3::new(d, e, f) / 2.0;
    let r2 = g + center.length_squared();
    (r2 > 0.0).then(|| (center, DVec3::splat(r2.sqrt())))
}

/// The head fitted to `roots` (at least 10, spread over the scalp).
pub fn fit_head(roots: &[Vec3]) -> Result<ScalpShape> {
    if roots.len() < 10 {
        return Err(Error::Invalid(format!(
            "fitting a head needs at least 10 strand roots, the groom has {}",
            roots.len()
        )));
    }
    let p: Vec<DVec3> = roots.iter().map(|r| r.as_dvec3()).collect();
    let fitted = fit_ellipsoid(&p).or_else(|| fit_sphere(&p));
    let (lo, hi) = p
        .iter()
        .fold((DVec3::MAX, DVec3::MIN), |(a, b), q| (a.min(*q), b.max(*q)));
    let extent = (hi - lo).length();
    let plausible = |r: DVec3| r.min_element() >= PLAUSIBLE.0 && r.max_element() <= PLAUSIBLE.1;
    // Roots on part of a scalp (a mohawk, a ponytail's base) do not pin a head down: put a
    // head-sized sphere under them, when one fits them. Not for grooms in other units (the
    // loader warns about those).
    let under = || {
        (3.0..60.0)
            .contains(&extent)
            .then(|| fit_fixed_sphere(&p, FALLBACK_RADIUS))
            .filter(|c| rms_off_sphere(&p, *c, FALLBACK_RADIUS) < 1.5)
    };
    let (center, radii) = match fitted {
        Some(f) if plausible(f.1) => f,
        _ => match (under(), fitted) {
            (Some(s), _) => {
                tracing::warn!(
                    "the strand roots cover too little of a head to fit one (fitted radii {}): using a sphere of radius {FALLBACK_RADIUS} cm under them, centre ({:.1}, {:.1}, {:.1}); give a head mesh for an accurate collider",
                    fitted
                        .map(|f| format!("{:.1}, {:.1}, {:.1} cm", f.1.x, f.1.y, f.1.z))
                        .unwrap_or_else(|| "none".into()),
                    s.x,
                    s.y,
                    s.z
                );
                (s, DVec3::splat(FALLBACK_RADIUS))
            }
            (None, Some(f)) => f,
            (None, None) => {
                return Err(Error::Invalid(
                    "the strand roots do not outline a head (they lie on a plane or a line)".into(),
                ));
            }
        },
    };
    // Shrink so that all but a few roots are on or outside the head.
    let mut scale: Vec<f64> = p.iter().map(|q| ((*q - center) / radii).length()).collect();
    scale.sort_by(f64::total_cmp);
    let k = scale[((scale.len() as f64 * INSIDE_SHARE) as usize).min(scale.len() - 1)].min(1.0);
    Ok(ScalpShape {
        center: center.as_vec3(),
        radii: (radii * k).as_vec3(),
        ..ScalpShape::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groom::{GroomParams, generate};

    #[test]
    fn recovers_the_procedural_cranium_from_its_roots() {
        let p = GroomParams {
            strands: 2000,
            ..GroomParams::default()
        };
        let g = generate(&p).unwrap();
        let head = fit_head(&g.roots()).unwrap();
        let err_c = (head.center - p.scalp.center).length();
        let err_r = (head.radii - p.scalp.radii).abs().max_element();
        assert!(
            err_c < 0.3 && err_r < 0.3,
            "centre off by {err_c}, radii {:?} vs {:?}",
            head.radii,
            p.scalp.radii
        );
        // A mohawk: only the roots of a 3 cm strip along the midline. A head-sized sphere under
        // them, near the real head, not an ellipsoid the size of a room.
        // Roots of real grooms sit a few millimetres off any ellipsoid: jitter them.
        let strip: Vec<Vec3> = g
            .roots()
            .into_iter()
            .filter(|r| r.x.abs() < 1.0 && r.z.abs() < 4.0 && r.y > 0.0)
            .enumerate()
            .map(|(i, r)| {
                let h = |k: u32| {
                    ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(k * 40_503) % 1000) as f32 / 1000.0
                        - 0.5
                };
                r + Vec3::new(h(1), h(2), h(3)) * 0.4
            })
            .collect();
        assert!(strip.len() > 50);
        let head = fit_head(&strip).unwrap();
        assert!(
            head.radii.min_element() >= 5.0 && head.radii.max_element() <= 15.0,
            "{:?}",
            head.radii
        );
        let off = (head.center - p.scalp.center).length();
        assert!(off < 3.0, "centre {:?} is {off} cm from the head's", head.center);
        // A flat-topped strip (curvature of a 30 cm radius, as roots on a partial or flattened
        // scalp give): the unconstrained fit is a head of 30 cm radius; a head-sized one goes
        // under the roots instead.
        let flat_top: Vec<Vec3> = (0..200)
            .map(|i| {
                let (x, z) = ((i % 5) as f32 * 0.5 - 1.0, (i / 5) as f32 * 0.3 - 6.0);
                Vec3::new(x, 10.0 + (900.0 - z * z).sqrt() - 30.0, z)
            })
            .collect();
        let head = fit_head(&flat_top).unwrap();
        assert!(head.radii.max_element() <= 15.0, "{:?}", head.radii);
        assert!(head.center.y < 5.0, "{:?}", head.center);
        // Flat roots are refused.
        let flat: Vec<Vec3> = (0..50)
            .map(|i| Vec3::new(i as f32, (i * 7 % 5) as f32, 0.0))
            .collect();
        assert!(fit_head(&flat).is_err());
    }
}
