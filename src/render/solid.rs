//! Colliders drawn by sphere tracing their signed distance fields along each camera ray:
//! works alike for analytic shapes and mesh distance grids.

use glam::Vec3;
use rayon::prelude::*;

use super::camera::Camera;
use super::canvas::{Canvas, SUPERSAMPLE};
use super::shade::Lighting;
use crate::collide::ColliderFrame;

/// Closest distance at which a ray counts as hitting (scene units).
const HIT: f32 = 1e-3;
const MAX_STEPS: usize = 96;

/// Draws the colliders into `canvas`; `near`/`far` bound the depth range searched.
pub fn draw_colliders(
    canvas: &mut Canvas,
    camera: &Camera,
    colliders: &ColliderFrame,
    lighting: &Lighting,
    near: f32,
    far: f32,
) {
    let s = SUPERSAMPLE as f32;
    let width = canvas.width;
    // Trace one ray per sample, in parallel over rows; plot afterwards in a fixed order.
    let hits: Vec<Vec<(u32, f32, [f32; 3])>> = (0..canvas.height)
        .into_par_iter()
        .map(|y| {
            let mut row = Vec::new();
            for x in 0..width {
                let (px, py) = ((x as f32 + 0.5) / s, (y as f32 + 0.5) / s);
                let mut t = near;
                for _ in 0..MAX_STEPS {
                    let p = camera.unproject(px, py, t);
                    let Some(c) = colliders.query(p) else { break };
                    if c.distance < HIT {
                        row.push((x, t, lighting.solid(c.normal)));
                        break;
                    }
                    t += c.distance.max(HIT);
                    if t > far {
                        break;
                    }
                }
            }
            row
        })
        .collect();
    for (y, row) in hits.into_iter().enumerate() {
        for (x, depth, color) in row {
            canvas.plot(x as i32, y as i32, depth, color);
        }
    }
}

/// Depth range (near, far) that contains `points` as seen by `camera`, padded by `pad`.
pub fn depth_range(camera: &Camera, points: &[Vec3], pad: f32) -> (f32, f32) {
    let (lo, hi) = points
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), p| {
            let d = (*p - camera.center).dot(camera.forward);
            (l.min(d), h.max(d))
        });
    if lo.is_finite() {
        (lo - pad, hi + pad)
    } else {
        (-pad, pad)
    }
}
