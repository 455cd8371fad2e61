//! Quasi-static neural drape (003, Stuyck et al. 2025, "Quaffure"): the groom's shape for a
//! given head pose, found by minimizing a physics energy instead of simulating.
//!
//! - [`energy`]: the energy of 003 §3.5 (modified Cosserat, stretch, gravity, body and SPH
//!   self-collision, Eq. 6–13) in burn tensor operations;
//! - [`pose`]: head rotations relative to the torso (`presets/poses/`);
//! - [`solve`]: the direct-minimization baselines with Adam and L-BFGS (003 §4.2);
//! - [`xpbd`]: the XPBD baseline on the same energy (003 §4.2);
//! - [`model`]: the groom autoencoder and the deformation decoder (003 §3.2, §3.4);
//!   [`config`]: their training config; [`train`]: their training by the drape energy
//!   (`tress train drape`); [`network`]: the trained network at work and its model file;
//! - [`calibrate`]: the Cosserat stiffness matched to a simulation material (a cantilever test);
//! - [`draper`]: one drape by any solver (network, Adam, L-BFGS, XPBD), for `tress drape` and
//!   the job's drape stage; [`interp`]: the drape behind the upsampling seam (the row `drape`);
//! - this module: the groom on its scalp texture (003 §3.1: one strand of N vertices per texel of
//!   a T × T root-UV map, empty texels masked; the uv grid of [`crate::neural::grid`]) and the
//!   metrics of 003 Table 1.

pub mod calibrate;
pub mod config;
pub mod draper;
pub mod energy;
pub mod interp;
pub mod model;
pub mod network;
pub mod pose;
pub mod scene;
pub mod solve;
pub mod train;
pub mod xpbd;

use std::borrow::Cow;

use glam::Vec3;
use serde::{Deserialize, Serialize};

use crate::collide::body::torso_parts;
use crate::collide::{BodyParams, BodyShape, Colliders};
use crate::error::{Error, Result};
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
        let local: Vec<Vec3> = drape.iter().map(|p| inv.apply_f32(*p)).collect();
        let mut out = vec![Vec3::ZERO; groom_points];
        self.scatter(&local, &mut out);
        out.iter().map(|p| head.apply_f32(*p)).collect()
    }

    /// The groom's strands (`out`, every point, head frame) from a drape of the texture's
    /// strands in the head's frame (`cells × points`).
    pub fn scatter(&self, drape: &[Vec3], out: &mut [Vec3]) {
        let mut frame = self.grid.rest.clone();
        for (k, &c) in self.cells.iter().enumerate() {
            frame[c * self.points..(c + 1) * self.points]
                .copy_from_slice(&drape[k * self.points..(k + 1) * self.points]);
        }
        self.grid.scatter(&frame, out);
    }
}

impl DrapeGroom {
    /// The autoencoder's input (003 §3.2): `[1, 3N + 1, T, T]`, channel `3k + a` vertex k's axis
    /// a relative to the root (head frame, over [`model::UNIT_CM`]), the last channel 1 on
    /// occupied texels; empty texels are zero.
    pub fn rest_texture(&self) -> (Vec<f32>, [usize; 4]) {
        let (t, n) = (self.grid.spec.n, self.points);
        let plane = t * t;
        let mut out = vec![0.0f32; (3 * n + 1) * plane];
        for (k, &c) in self.cells.iter().enumerate() {
            let strand = &self.rest[k * n..(k + 1) * n];
            for (i, p) in strand.iter().enumerate() {
                let r = (*p - strand[0]) / model::UNIT_CM;
                for a in 0..3 {
                    out[(3 * i + a) * plane + c] = r[a];
                }
            }
            out[3 * n * plane + c] = 1.0;
        }
        (out, [1, 3 * n + 1, t, t])
    }
}

/// One groom on its body, ready to drape in any pose: its texture strands, its colliders (the
/// torso still, the head moved by each pose), the pivot of the head's rotations, the groom at
/// rest with its rest lengths and densities, and the parametric body the colliders were built
/// with, whose shape a pose can change (003 §3.4's shape input).
pub struct DrapeSubject {
    pub name: String,
    pub groom: DrapeGroom,
    pub colliders: Colliders,
    pub pivot: Vec3,
    rest: Posed,
    /// The head's centre the torso's parts are placed from, and the body's parameters.
    body: Option<(Vec3, BodyParams)>,
}

/// A subject in one pose: the head's pose, the rigidly posed groom, the colliders (on the
/// pose's body) and their poses, and the body's shape (the network's shape input).
pub struct SubjectPose<'a> {
    pub head: Pose,
    pub posed: Posed,
    pub colliders: Cow<'a, Colliders>,
    pub poses: Vec<Pose>,
    pub shape: BodyShape,
}

impl SubjectPose<'_> {
    /// The colliders at their poses, as the energy and the metrics take them.
    pub fn contact(&self) -> Option<(&Colliders, &[Pose])> {
        Some((self.colliders.as_ref(), self.poses.as_slice()))
    }
}

impl DrapeSubject {
    pub fn new(
        name: &str,
        groom: DrapeGroom,
        colliders: Colliders,
        pivot: Vec3,
        material: &DrapeMaterial,
    ) -> DrapeSubject {
        let rest = Posed::new(
            &groom.rest,
            groom.points,
            &Pose::IDENTITY,
            material.smoothing as f32,
        );
        DrapeSubject {
            name: name.to_string(),
            groom,
            colliders,
            pivot,
            rest,
            body: None,
        }
    }

    /// The subject with the parametric body its colliders were built with (`center`: the
    /// head's centre the torso's parts are placed from, [`crate::collide::body::head_center`]).
    pub fn on_body(mut self, center: Vec3, body: BodyParams) -> DrapeSubject {
        self.body = Some((center, body));
        self
    }

    /// The shape of the subject's own body (zero without a parametric body).
    pub fn shape(&self) -> BodyShape {
        self.body
            .as_ref()
            .map(|(_, b)| BodyShape::of(b))
            .unwrap_or_default()
    }

    /// `rotation` with the offsets that put this subject's body in `shape` (kept to the parts
    /// the body has).
    pub fn in_shape(&self, rotation: &HeadRotation, shape: &BodyShape) -> HeadRotation {
        let shape = match &self.body {
            Some((_, b)) => shape.on_parts_of(b),
            None => BodyShape::default(),
        };
        HeadRotation {
            shape: shape - self.shape(),
            ..rotation.clone()
        }
    }

    /// The body's shape in a pose (its own shape changed by the pose's offsets).
    pub fn shape_in(&self, rotation: &HeadRotation) -> BodyShape {
        self.shape() + rotation.shape
    }

    /// The head's pose for a rotation, the rigidly posed groom and the colliders there, on the
    /// body the rotation's shape offsets make (an error names offsets the body cannot take).
    pub fn pose(&self, rotation: &HeadRotation) -> Result<SubjectPose<'_>> {
        let head = rotation.pose(self.pivot);
        let colliders = if rotation.shape.is_zero() {
            Cow::Borrowed(&self.colliders)
        } else {
            let bad =
                |m: String| Error::Invalid(format!("{}: pose {}: shape: {m}", self.name, rotation.name));
            let (center, body) = self
                .body
                .as_ref()
                .ok_or_else(|| bad("no parametric body to change".into()))?;
            let changed = BodyShape::offset(body, &rotation.shape).map_err(bad)?;
            Cow::Owned(self.colliders.with_torso(torso_parts(*center, &changed)))
        };
        let poses = colliders.poses_with_head(head);
        Ok(SubjectPose {
            head,
            posed: self.rest.moved(&head),
            colliders,
            poses,
            shape: self.shape_in(rotation),
        })
    }

    /// The groom rigidly moved by the head's pose `head` (head frame → world).
    pub fn posed(&self, head: &Pose) -> Posed {
        self.rest.moved(head)
    }
}

/// The figures of 003 Table 1 for one drape (non-root vertices and every edge).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// The mean of several drapes' figures.
    pub fn mean(ms: &[DrapeMetrics]) -> DrapeMetrics {
        let k = ms.len().max(1) as f64;
        let mut out = DrapeMetrics::default();
        for m in ms {
            out.intersection_fraction += m.intersection_fraction / k;
            out.length_error_mean += m.length_error_mean / k;
            out.orientation_error_deg += m.orientation_error_deg / k;
            out.gravity_potential += m.gravity_potential / k;
        }
        out
    }

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
