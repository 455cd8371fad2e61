//! Quasi-static neural drape (003, Stuyck et al. 2025, "Quaffure"): the groom's shape for a
//! given head pose, found by minimizing a physics energy instead of simulating.
//!
//! - [`energy`]: the energy of 003 §3.5 (modified Cosserat, stretch, gravity, body and SPH
//!   self-collision, Eq. 6–13) in burn tensor operations;
//! - [`pose`]: head rotations relative to the torso (`presets/poses/`);
//! - [`solve`]: the direct-minimization baselines with Adam and L-BFGS (003 §4.2);
//! - [`xpbd`]: the XPBD baseline on the same energy (003 §4.2);
//! - [`model`]: the groom autoencoder and the deformation decoder (003 §3.2, §3.4), and
//!   [`train`]: the decoder's physics loss (its training loop and `tress train drape` are to come);
//! - this module: the groom on its scalp texture (003 §3.1: one strand of N vertices per texel of
//!   a T × T root-UV map, empty texels masked; the uv grid of [`crate::neural::grid`]) and the
//!   metrics of 003 Table 1.

pub mod energy;
pub mod model;
pub mod pose;
pub mod solve;
pub mod train;
pub mod xpbd;

use glam::Vec3;
use serde::Serialize;

use crate::collide::Colliders;
use crate::error::Result;
use crate::groom::Groom;
use crate::motion::Pose;
use crate::neural::grid::{GridSpec, UvGrid};

pub use energy::{DrapeMaterial, Posed};
pub use pose::{HeadRotation, PoseSet};

/// A groom encoded on its scalp texture (003 §3.1): the strands of the occupied texels,
/// resampled to `points` vertices.
pub struct DrapeGroom {
    pub grid: UvGrid,
    /// The occupied texels, in texture order.
    pub cells: Vec<usize>,
    /// Their strands at rest (head frame), `cells × points`.
    pub rest: Vec<Vec3>,
    pub points: usize,
}

impl DrapeGroom {
    /// `groom` (rest, head frame) on a `texture × texture` map of strands of `points` vertices.
    pub fn new(groom: &Groom, texture: usize, points: usize) -> Result<DrapeGroom> {
        let grid = UvGrid::new(
            groom,
            GridSpec {
                n: texture,
                stride: 2,
                points,
            },
        )?;
        let cells: Vec<usize> = (0..texture * texture).filter(|&c| grid.occupied[c]).collect();
        let rest = cells
            .iter()
            .flat_map(|&c| grid.rest[c * points..(c + 1) * points].iter().copied())
            .collect();
        Ok(DrapeGroom {
            grid,
            cells,
            rest,
            points,
        })
    }

    pub fn strands(&self) -> usize {
        self.cells.len()
    }

    /// The groom's own strands (world) from a drape of the texture's strands (world) with the
    /// head at `head`: each groom strand follows its texels' change of shape in the head's frame
    /// (the uv grid's transfer), then moves with the head.
    pub fn to_groom(&self, drape: &[Vec3], head: &Pose, groom_points: usize) -> Vec<Vec3> {
        let inv = head.inverse();
        let mut frame = self.grid.rest.clone();
        for (k, &c) in self.cells.iter().enumerate() {
            for i in 0..self.points {
                frame[c * self.points + i] = inv.apply_f32(drape[k * self.points + i]);
            }
        }
        let mut out = vec![Vec3::ZERO; groom_points];
        self.grid.scatter(&frame, &mut out);
        out.iter().map(|p| head.apply_f32(*p)).collect()
    }
}

/// The figures of 003 Table 1 for one drape (non-root vertices and every edge).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct DrapeMetrics {
    /// Share of vertices inside the body (signed distance < 0).
    pub intersection_fraction: f64,
    /// Mean |l − l_rest| / l_rest over edges.
    pub length_error_mean: f64,
    /// Mean angle between each edge and its posed rest direction (degrees).
    pub orientation_error_deg: f64,
    /// Eq. 9's gravity potential per strand: Σ m|g| y over its vertices (cm, m|g| = 1).
    pub gravity_potential: f64,
}

impl DrapeMetrics {
    /// Figures of positions `x` against the posed groom.
    pub fn of(x: &[Vec3], posed: &Posed, colliders: Option<(&Colliders, &[Pose])>) -> DrapeMetrics {
        let n = posed.points;
        let mut inside = 0usize;
        let mut counted = 0usize;
        let (mut len, mut angle, mut edges) = (0.0f64, 0.0f64, 0usize);
        for (s, strand) in x.chunks(n).enumerate() {
            for (k, e) in strand.windows(2).enumerate() {
                let i = s * (n - 1) + k;
                let d = e[1] - e[0];
                let l = d.length();
                len += ((l - posed.rest_len[i]) / posed.rest_len[i]).abs() as f64;
                if l > 0.0 {
                    angle += (d / l).dot(posed.dir[i]).clamp(-1.0, 1.0).acos().to_degrees() as f64;
                }
                edges += 1;
            }
            if let Some((c, poses)) = colliders {
                for p in &strand[1..] {
                    counted += 1;
                    if c.query(*p, 0.0, poses).is_some_and(|q| q.distance < 0.0) {
                        inside += 1;
                    }
                }
            }
        }
        DrapeMetrics {
            intersection_fraction: inside as f64 / counted.max(1) as f64,
            length_error_mean: len / edges.max(1) as f64,
            orientation_error_deg: angle / edges.max(1) as f64,
            gravity_potential: x.iter().map(|p| p.y as f64).sum::<f64>() / posed.strands.max(1) as f64,
        }
    }
}

#[cfg(test)]
mod tests;
