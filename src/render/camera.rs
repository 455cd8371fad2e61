//! An orthographic camera looking at the hair from a named side.

use glam::Vec3;
use serde::{Deserialize, Serialize};

/// Where the camera looks from (tress space: Y up, face towards +Z).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum View {
    Front,
    Back,
    Side,
    ThreeQuarter,
}

impl View {
    /// Unit vector from the subject towards the camera.
    pub fn eye(self) -> Vec3 {
        match self {
            View::Front => Vec3::Z,
            View::Back => -Vec3::Z,
            View::Side => Vec3::X,
            View::ThreeQuarter => Vec3::new(0.8, 0.25, 1.0).normalize(),
        }
    }
}

/// Orthographic projection onto a `width` × `height` picture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    pub center: Vec3,
    pub right: Vec3,
    pub up: Vec3,
    /// Unit vector from the camera into the scene.
    pub forward: Vec3,
    /// Pixels per scene unit.
    pub scale: f32,
    pub width: u32,
    pub height: u32,
}

impl Camera {
    /// A camera from `view` centred on `center` that shows a box of half extent `radius`
    /// around it.
    pub fn new(view: View, center: Vec3, radius: f32, width: u32, height: u32) -> Camera {
        Camera::from_eye(view.eye(), center, radius, width, height)
    }

    /// A camera looking from unit direction `eye` (from the subject towards the camera, not
    /// vertical), centred on `center`, showing a box of half extent `radius`.
    pub fn from_eye(eye: Vec3, center: Vec3, radius: f32, width: u32, height: u32) -> Camera {
        let forward = -eye.normalize_or(Vec3::Z);
        let right = forward.cross(Vec3::Y).normalize();
        let up = right.cross(forward);
        let scale = 0.5 * width.min(height) as f32 / radius.max(1e-6);
        Camera {
            center,
            right,
            up,
            forward,
            scale,
            width,
            height,
        }
    }

    /// A camera that frames `points` (with a 5 % border).
    pub fn fit(view: View, points: &[Vec3], width: u32, height: u32) -> Camera {
        Camera::fit_eye(view.eye(), points, width, height)
    }

    /// [`Camera::fit`] from unit direction `eye`.
    pub fn fit_eye(eye: Vec3, points: &[Vec3], width: u32, height: u32) -> Camera {
        let (lo, hi) = points
            .iter()
            .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(l, h), p| {
                (l.min(*p), h.max(*p))
            });
        if !lo.is_finite() {
            return Camera::from_eye(eye, Vec3::ZERO, 1.0, width, height);
        }
        let center = 0.5 * (lo + hi);
        let c = Camera::from_eye(eye, center, 1.0, width, height);
        // Half extents on screen along right and up.
        let (mut rx, mut ry) = (0.0f32, 0.0f32);
        for p in points {
            let d = *p - center;
            rx = rx.max(d.dot(c.right).abs());
            ry = ry.max(d.dot(c.up).abs());
        }
        let (rx, ry) = (rx.max(1e-3) * 1.05, ry.max(1e-3) * 1.05);
        let scale = (0.5 * width as f32 / rx).min(0.5 * height as f32 / ry);
        Camera { scale, ..c }
    }

    /// Picture coordinates (x right, y down, in pixels) and depth (along `forward`).
    pub fn project(&self, p: Vec3) -> (f32, f32, f32) {
        let d = p - self.center;
        (
            0.5 * self.width as f32 + d.dot(self.right) * self.scale,
            0.5 * self.height as f32 - d.dot(self.up) * self.scale,
            d.dot(self.forward),
        )
    }

    /// The scene point under picture position (x, y) at depth `depth`.
    pub fn unproject(&self, x: f32, y: f32, depth: f32) -> Vec3 {
        self.center
            + self.right * ((x - 0.5 * self.width as f32) / self.scale)
            + self.up * ((0.5 * self.height as f32 - y) / self.scale)
            + self.forward * depth
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projects_and_unprojects() {
        let c = Camera::new(View::Front, Vec3::new(1.0, 2.0, 3.0), 10.0, 200, 100);
        // Front view: +x to the right, +y up.
        let (x, y, _) = c.project(Vec3::new(2.0, 2.0, 3.0));
        assert!((x - 105.0).abs() < 1e-4 && (y - 50.0).abs() < 1e-4);
        let (x, y, _) = c.project(Vec3::new(1.0, 12.0, 3.0));
        assert!((x - 100.0).abs() < 1e-4 && y.abs() < 1e-4);
        let p = Vec3::new(-3.0, 7.0, 0.5);
        let (x, y, z) = c.project(p);
        assert!((c.unproject(x, y, z) - p).length() < 1e-4);
        // Side view looks along −x.
        let s = Camera::new(View::Side, Vec3::ZERO, 1.0, 10, 10);
        assert!((s.forward + Vec3::X).length() < 1e-6);
        let f = Camera::fit(
            View::Front,
            &[Vec3::new(-5.0, -1.0, 0.0), Vec3::new(5.0, 1.0, 0.0)],
            100,
            100,
        );
        let (x0, _, _) = f.project(Vec3::new(-5.0, 0.0, 0.0));
        let (x1, _, _) = f.project(Vec3::new(5.0, 0.0, 0.0));
        assert!(x0 > 0.0 && x0 < 5.0 && x1 > 95.0 && x1 < 100.0, "{x0} {x1}");
    }
}
