//! Analytic collider shapes: sphere, capsule (exact distances) and ellipsoid (a first-order
//! distance that is exact on the surface and along the axes, and a lower bound elsewhere).

use glam::Vec3;
use serde::{Deserialize, Serialize};

use super::{Bound, Shape};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sphere {
    pub center: Vec3,
    pub radius: f32,
}

impl Shape for Sphere {
    fn sdf(&self, p: Vec3) -> (f32, Vec3) {
        let d = p - self.center;
        let l = d.length();
        (l - self.radius, if l > 1e-12 { d / l } else { Vec3::Y })
    }

    fn bound(&self) -> Option<Bound> {
        Some(Bound {
            a: self.center,
            b: self.center,
            radius: self.radius,
            slope: 1.0,
        })
    }
}

/// A segment swept by a sphere.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Capsule {
    pub a: Vec3,
    pub b: Vec3,
    pub radius: f32,
}

impl Capsule {
    pub fn closest_on_axis(&self, p: Vec3) -> Vec3 {
        let ab = self.b - self.a;
        let len2 = ab.length_squared();
        let t = if len2 > 0.0 {
            ((p - self.a).dot(ab) / len2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.a + ab * t
    }
}

impl Shape for Capsule {
    fn sdf(&self, p: Vec3) -> (f32, Vec3) {
        let c = self.closest_on_axis(p);
        let d = p - c;
        let l = d.length();
        if l > 1e-12 {
            (l - self.radius, d / l)
        } else {
            (-self.radius, (self.b - self.a).any_orthonormal_vector())
        }
    }

    /// Exact.
    fn bound(&self) -> Option<Bound> {
        Some(Bound {
            a: self.a,
            b: self.b,
            radius: self.radius,
            slope: 1.0,
        })
    }
}

/// An axis-aligned ellipsoid (semi-axes `radii`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ellipsoid {
    pub center: Vec3,
    pub radii: Vec3,
}

impl Shape for Ellipsoid {
    /// `k0 (k0 − 1) / k1` with `k0 = |q/r|`, `k1 = |q/r²|` (the first-order distance of the
    /// implicit function), and the implicit function's normalized gradient as normal.
    fn sdf(&self, p: Vec3) -> (f32, Vec3) {
        let q = p - self.center;
        let r = self.radii;
        let k0 = (q / r).length();
        let g = q / (r * r);
        let k1 = g.length();
        if k1 < 1e-12 {
            return (-r.min_element(), Vec3::Y);
        }
        (k0 * (k0 - 1.0) / k1, g / k1)
    }

    /// With k1 = |q / r²| ≤ k0 / r_min and k0 ≥ |q| / r_max, the first-order distance
    /// k0 (k0 − 1) / k1 is at least (k0 − 1) r_min ≥ (|q| − r_max) r_min / r_max outside; inside
    /// the bound is negative and culls nothing.
    fn bound(&self) -> Option<Bound> {
        let (lo, hi) = (self.radii.min_element(), self.radii.max_element());
        (lo > 0.0).then_some(Bound {
            a: self.center,
            b: self.center,
            radius: hi,
            slope: lo / hi,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sphere_and_capsule_match_closed_form() {
        let s = Sphere {
            center: Vec3::new(1.0, 2.0, 3.0),
            radius: 2.0,
        };
        let (d, n) = s.sdf(Vec3::new(1.0, 2.0, 8.0));
        assert_eq!(d, 3.0);
        assert_eq!(n, Vec3::Z);
        assert_eq!(s.sdf(s.center).0, -2.0);
        let c = Capsule {
            a: Vec3::ZERO,
            b: Vec3::new(0.0, 10.0, 0.0),
            radius: 1.0,
        };
        // Beside the shaft: distance to the axis minus the radius.
        let (d, n) = c.sdf(Vec3::new(3.0, 4.0, 4.0));
        assert!((d - (5.0f32 - 1.0)).abs() < 1e-6);
        assert!((n - Vec3::new(0.6, 0.0, 0.8)).length() < 1e-6);
        // Beyond an end: distance to the end point.
        let (d, _) = c.sdf(Vec3::new(0.0, 13.0, 4.0));
        assert!((d - 4.0).abs() < 1e-6);
        assert!((c.sdf(Vec3::new(0.2, 5.0, 0.0)).0 + 0.8).abs() < 1e-6);
    }

    #[test]
    fn ellipsoid_is_exact_on_axes_and_surface() {
        let e = Ellipsoid {
            center: Vec3::ZERO,
            radii: Vec3::new(2.0, 3.0, 4.0),
        };
        assert!((e.sdf(Vec3::new(5.0, 0.0, 0.0)).0 - 3.0).abs() < 1e-6);
        assert!((e.sdf(Vec3::new(0.0, -1.0, 0.0)).0 + 2.0).abs() < 1e-6);
        // On the surface: zero distance and the true normal.
        let p = Vec3::new(2.0 * 0.6, 0.0, 4.0 * 0.8);
        let (d, n) = e.sdf(p);
        assert!(d.abs() < 1e-5);
        let want = (p / (e.radii * e.radii)).normalize();
        assert!((n - want).length() < 1e-6);
        // A sphere-shaped ellipsoid is a sphere.
        let s = Ellipsoid {
            center: Vec3::ONE,
            radii: Vec3::splat(2.0),
        };
        assert!((s.sdf(Vec3::new(1.0, 5.0, 1.0)).0 - 2.0).abs() < 1e-6);
    }
}
