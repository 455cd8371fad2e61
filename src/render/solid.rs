//! Colliders drawn by sphere tracing their signed distance fields along each camera ray:
//! works alike for analytic shapes and mesh distance grids.

use glam::Vec3;
use rayon::prelude::*;

use super::camera::Camera;
use super::film::{Hit, SUPERSAMPLE};
use crate::collide::ColliderFrame;

/// Closest distance at which a ray counts as hitting (scene units).
const HIT: f32 = 1e-3;
const MAX_STEPS: usize = 96;
/// Cosine of the angle between neighbours' normals above which the surface counts as smooth.
const CREASE: f32 = 0.99;

/// What a pixel's rays hit: one ray through its centre where the picture is smooth, or
/// [`SUPERSAMPLE`]² rays (row-major) on a silhouette.
#[derive(Clone, Debug)]
pub enum PixelHits {
    One(Option<Hit>),
    Many(Box<[Option<Hit>]>),
}

/// The depths between which the ray at picture position (x, y) passes through the spheres
/// around `bounds` (None: it misses them all), within `near..far`.
fn window(
    camera: &Camera,
    bounds: &[(Vec3, f32)],
    x: f32,
    y: f32,
    near: f32,
    far: f32,
) -> Option<(f32, f32)> {
    let origin = camera.unproject(x, y, 0.0);
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for &(c, r) in bounds {
        // |origin + t·forward − c|² = r² (forward is a unit vector).
        let d = c - origin;
        let t = d.dot(camera.forward);
        let h = r * r - (d.length_squared() - t * t);
        if h >= 0.0 {
            let s = h.sqrt();
            lo = lo.min(t - s);
            hi = hi.max(t + s);
        }
    }
    let (lo, hi) = (lo.max(near), hi.min(far));
    (lo <= hi).then_some((lo, hi))
}

/// Spheres holding every collider's surface (padded by the hit distance), if all have bounds.
fn bounding_spheres(colliders: &ColliderFrame) -> Option<Vec<(Vec3, f32)>> {
    Some(
        colliders
            .bounds()?
            .iter()
            .map(|b| (0.5 * (b.a + b.b), 0.5 * b.a.distance(b.b) + b.radius + 2.0 * HIT))
            .collect(),
    )
}

/// Sphere-traces one ray at picture position (x, y), between depths `near` and `far`, or
/// only where it passes through `bounds`.
fn trace(
    camera: &Camera,
    colliders: &ColliderFrame,
    bounds: Option<&[(Vec3, f32)]>,
    x: f32,
    y: f32,
    near: f32,
    far: f32,
) -> Option<Hit> {
    let (near, far) = match bounds {
        Some(b) => window(camera, b, x, y, near, far)?,
        None => (near, far),
    };
    let mut t = near;
    for _ in 0..MAX_STEPS {
        let p = camera.unproject(x, y, t);
        let c = colliders.query(p)?;
        if c.distance < HIT {
            return Some(Hit {
                depth: t,
                point: p,
                normal: c.normal,
            });
        }
        t += c.distance.max(HIT);
        if t > far {
            return None;
        }
    }
    None
}

/// The colliders seen by every pixel of a `camera` picture: a ray through each pixel's centre
/// (or a blend of its neighbours' where the surface is smooth), then [`SUPERSAMPLE`]² rays in pixels on a silhouette (hit beside miss, or a depth step of
/// more than two pixels) so edges are anti-aliased; `near`/`far` bound the depths searched.
pub fn trace_colliders(camera: &Camera, colliders: &ColliderFrame, near: f32, far: f32) -> Vec<PixelHits> {
    let (w, h) = (camera.width as usize, camera.height as usize);
    let step = 2.0 / camera.scale;
    let bounds = bounding_spheres(colliders);
    let bounds = bounds.as_deref();
    // The ray through the centre of pixel (x, y).
    let centre_ray = |x: usize, y: usize| {
        trace(
            camera,
            colliders,
            bounds,
            x as f32 + 0.5,
            y as f32 + 0.5,
            near,
            far,
        )
    };
    // Rays through every other pixel of every other row first; a pixel between four (or two)
    // of them that all miss misses, one between hits close in depth takes their bilinear
    // blend (the surface is smooth there), and any other pixel is traced.
    let cw = w.div_ceil(2);
    let coarse: Vec<Option<Hit>> = (0..cw * h.div_ceil(2))
        .into_par_iter()
        .map(|k| {
            let (x, y) = (2 * (k % cw), 2 * (k / cw));
            centre_ray(x, y)
        })
        .collect();
    // The lattice ray through (even) pixel x, y.
    let at = |x: usize, y: usize| coarse[(y / 2) * cw + x / 2];
    let centres: Vec<Option<Hit>> = (0..w * h)
        .into_par_iter()
        .map(|k| {
            let (x, y) = (k % w, k / w);
            if x % 2 == 0 && y % 2 == 0 {
                return at(x, y);
            }
            let (x0, y0) = (x & !1, y & !1);
            let xs = if x % 2 == 1 && x0 + 2 < w {
                [x0, x0 + 2]
            } else {
                [x0, x0]
            };
            let ys = if y % 2 == 1 && y0 + 2 < h {
                [y0, y0 + 2]
            } else {
                [y0, y0]
            };
            let (fx, fy) = (
                if xs[0] == xs[1] { 0.0 } else { 0.5 },
                if ys[0] == ys[1] { 0.0 } else { 0.5 },
            );
            let corners = [
                (at(xs[0], ys[0]), (1.0 - fx) * (1.0 - fy)),
                (at(xs[1], ys[0]), fx * (1.0 - fy)),
                (at(xs[0], ys[1]), (1.0 - fx) * fy),
                (at(xs[1], ys[1]), fx * fy),
            ];
            if corners.iter().all(|(c, _)| c.is_none()) {
                return None;
            }
            if corners.iter().all(|(c, _)| c.is_some()) {
                let (lo, hi) = corners
                    .iter()
                    .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, u), (c, _)| {
                        let d = c.expect("all hit").depth;
                        (l.min(d), u.max(d))
                    });
                if hi - lo < step {
                    let (mut depth, mut normal) = (0.0f32, Vec3::ZERO);
                    for (c, wt) in &corners {
                        let c = c.expect("all hit");
                        depth += wt * c.depth;
                        normal += *wt * c.normal;
                    }
                    return Some(Hit {
                        depth,
                        point: camera.unproject(x as f32 + 0.5, y as f32 + 0.5, depth),
                        normal: normal.normalize_or(Vec3::Z),
                    });
                }
            }
            centre_ray(x, y)
        })
        .collect();
    let s = SUPERSAMPLE as usize;
    (0..w * h)
        .into_par_iter()
        .map(|k| {
            let (x, y) = (k % w, k / w);
            let me = centres[k];
            // An edge: a neighbour hit where this pixel missed or the other way round, a crease
            // (neighbours' normals more than ~8° apart), or depth that bends by more than
            // `step` across the pixel (the second difference with two opposite neighbours: one
            // surface in front of another), not merely a steep smooth slope such as a sphere's
            // rim seen edge-on.
            let near_edge = (y.saturating_sub(1)..(y + 2).min(h))
                .flat_map(|j| (x.saturating_sub(1)..(x + 2).min(w)).map(move |i| j * w + i))
                .any(|n| match (me, centres[n]) {
                    (Some(a), Some(b)) => a.normal.dot(b.normal) < CREASE,
                    (None, None) => false,
                    _ => true,
                });
            let bends = || {
                let me = me.expect("a hit").depth;
                [(1, 0), (0, 1), (1, 1), (1, -1)]
                    .iter()
                    .any(|&(dx, dy): &(usize, isize)| {
                        let (ya, yb) = (y as isize - dy, y as isize + dy);
                        if x < dx || x + dx >= w || ya < 0 || yb < 0 || ya >= h as isize || yb >= h as isize {
                            return false;
                        }
                        match (
                            centres[ya as usize * w + x - dx],
                            centres[yb as usize * w + x + dx],
                        ) {
                            (Some(a), Some(b)) => (a.depth + b.depth - 2.0 * me).abs() > step,
                            _ => true,
                        }
                    })
            };
            let edge = near_edge || (me.is_some() && bends());
            if !edge {
                return PixelHits::One(me);
            }
            let many: Vec<Option<Hit>> = (0..s * s)
                .map(|q| {
                    let (sx, sy) = ((q % s) as f32 + 0.5, (q / s) as f32 + 0.5);
                    trace(
                        camera,
                        colliders,
                        bounds,
                        x as f32 + sx / s as f32,
                        y as f32 + sy / s as f32,
                        near,
                        far,
                    )
                })
                .collect();
            PixelHits::Many(many.into_boxed_slice())
        })
        .collect()
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
