//! The hair-mesh solver of 002 §3: Baraff–Witkin stretch, shear and bend forces on the faces
//! and the tetrahedral volume force (Eq. 1–2) on the corner tets of every prism, one implicit
//! Euler step per substep solved with the Modified Conjugate Gradient method (Baraff & Witkin
//! 1998), the root layer driven by the head, then collision handling on the surface vertices
//! (§3.2): penetrating surface vertices are moved out of the colliders and the mesh's
//! deformation is minimized around them (Eq. 3–4, `AᵀA` the edge-graph Laplacian, MCG with the
//! moved vertices and the roots held, the moved positions `x′` as initial guess).
//!
//! The linearized step (Baraff & Witkin Eq. 16), with `K = −∂f/∂x` and `D = −∂f/∂v`:
//! `(M + h D + h² K) Δv = h (f₀ − h K v₀)`, `v₁ = v₀ + Δv`, `x₁ = x₀ + h v₁`.
//! Every condition `C` with stiffness `k` and damping `k_d` adds `f = −(k C + k_d Ċ) ∇C` and the
//! symmetric, positive semi-definite `(h k_d + h² k) ∇C ∇Cᵀ` (the indefinite second-derivative
//! terms are left out so the matrix stays positive definite for conjugate gradients, except the
//! stretch term of stretched triangles, which is positive there). Parameters the paper does not
//! give (time step, stiffness, damping, mass, iterations) are [`HairMeshParams`]; stiffness is
//! scaled per element by its rest size so the same parameters suit coarse and fine meshes.
//!
//! Element forces are assembled in a fixed order on one thread: results are bit-identical run to
//! run.

mod elements;
mod mcg;
mod params;
mod step;
mod system;

use glam::{DVec3, Mat3A, Vec3};
use nalgebra_sparse::CsrMatrix;
use serde::Serialize;

use super::forces::{angle_diff, dihedral, tet_volume};
use super::mesh::HairMesh;
use crate::collide::Colliders;
use crate::error::Result;
use crate::motion::Pose;
use elements::{Quad4, Tri};

pub use params::{HairMeshParams, Settle};

/// Figures of one frame.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct MeshFrameStats {
    pub cg_iterations: usize,
    pub corrected: usize,
    pub minimization_iterations: usize,
    /// Deepest vertex inside a collider after the frame (cm).
    pub deepest_penetration: f32,
    /// Vertices inside a collider after the frame that are not surface vertices.
    pub internal_penetrations: usize,
    /// Smallest tet volume over its rest volume after the frame.
    pub min_volume_ratio: f64,
}

/// Where the solver's time went (seconds, accumulated).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SolverTiming {
    pub forces: f64,
    pub solve: f64,
    pub collisions: f64,
}

/// A hair mesh being simulated.
pub struct HairMeshSim {
    pub mesh: HairMesh,
    pub params: HairMeshParams,
    pub colliders: Option<Colliders>,
    /// Current positions and velocities (world).
    pub x: Vec<DVec3>,
    pub v: Vec<DVec3>,
    pub time: f64,
    mass: Vec<f64>,
    external: Vec<bool>,
    tris: Vec<Tri>,
    hinges: Vec<Quad4>,
    tets: Vec<Quad4>,
    /// The upper triangle (diagonal included) of the symmetric system matrix as n × n blocks
    /// of 3 × 3 in single precision (block compressed rows, columns sorted, the diagonal block
    /// first in its row), its pattern fixed at set-up; element slots index its values. The
    /// solve's tolerance is far above their rounding; forces and right-hand side are double.
    a: CsrMatrix<Mat3A>,
    diag_slot: Vec<u32>,
    /// Per vertex: the slot of its block coupling to the next vertex up its column.
    up_slot: Vec<u32>,
    /// The matrix's block columns again as u32, for the solver's products.
    block_col: Vec<u32>,
    /// The lower triangle's off-column blocks, row by row, for the forward sweep.
    lower: system::LowerPattern,
    laplacian: CsrMatrix<f64>,
    /// 1 / the number of edges at each vertex (at least one): the Jacobi preconditioner of the
    /// deformation solve.
    inv_degree: Vec<f64>,
    /// The last three solves' velocity changes, newest first, and how many of them there are:
    /// the next solve's initial guess extrapolates them.
    prev_dv: [Vec<DVec3>; 3],
    solves: usize,
    /// Seconds spent assembling forces, solving, and handling collisions.
    pub timing: SolverTiming,
    /// Contact normals and collider velocities of the vertices corrected in the last step.
    contacts: Vec<Option<(DVec3, DVec3)>>,
    /// Direct solves per bundle, for meshes of small separate bundles (else conjugate
    /// gradients).
    bundles: Option<super::bundles::BundleSolver>,
}

fn to_d(p: Vec3) -> DVec3 {
    p.as_dvec3()
}

impl HairMeshSim {
    /// A simulation of `mesh` (rest pose in the head's frame) starting at `start` with the head
    /// at its pose then, at rest. Without colliders the root layer stays where it is.
    pub fn new(
        mesh: HairMesh,
        params: HairMeshParams,
        colliders: Option<Colliders>,
        start: f64,
    ) -> Result<HairMeshSim> {
        let n = mesh.vertex_count();
        let pose = colliders.as_ref().map_or(Pose::IDENTITY, |c| c.head.at(start));
        let x: Vec<DVec3> = mesh.rest.iter().map(|p| pose.apply(to_d(*p))).collect();
        let rest: Vec<DVec3> = mesh.rest.iter().map(|p| to_d(*p)).collect();
        let (mass, mut tets) = elements::tets_and_mass(&mesh, &rest, &params)?;
        let mut tris = elements::faces(&mesh, &rest, &params);
        let mut hinges = elements::hinges(&mesh, &rest, &params);
        // Elements in the order of their vertices (column by column), so the assembly walks
        // the matrix nearly in order instead of jumping across it.
        tris.sort_by_key(|t| t.v.iter().min().copied());
        hinges.sort_by_key(|q| q.v.iter().min().copied());
        tets.sort_by_key(|q| q.v.iter().min().copied());
        let (a, diag_slot, up_slot) = system::pattern(&mesh, &mut tris, &mut hinges, &mut tets)?;
        let lower = system::LowerPattern::new(&a, &up_slot);
        let (laplacian, degree) = system::laplacian(&mesh);
        let bundles = super::bundles::BundleSolver::new(&mesh, &a);
        Ok(HairMeshSim {
            bundles,
            external: mesh.external(),
            x,
            v: vec![DVec3::ZERO; n],
            time: start,
            mass,
            tris,
            hinges,
            tets,
            diag_slot,
            up_slot,
            block_col: a.col_indices().iter().map(|&j| j as u32).collect(),
            lower,
            a,
            laplacian,
            inv_degree: degree.iter().map(|d| 1.0 / d.max(1.0)).collect(),
            contacts: vec![None; n],
            prev_dv: std::array::from_fn(|_| vec![DVec3::ZERO; n]),
            solves: 0,
            timing: SolverTiming::default(),
            colliders,
            params,
            mesh,
        })
    }

    /// A simulation of a mesh built around a groom, after it has settled: first `settle.frames`
    /// frames at the head's pose at `start` with the loose moduli of `params.settle`, then the
    /// settled shape (in the head's frame, root layer unchanged) as the rest shape of the
    /// simulation with `params` (Derouet-Jourdan et al. 2013, cited by 002 §2: the simulation's
    /// rest state is the shape the hair hangs in, so the simulation keeps it). Returns the
    /// simulation and the mean distance the settling moved the vertices (cm). `dt` is the
    /// frame's duration.
    pub fn settled(
        mesh: HairMesh,
        params: HairMeshParams,
        colliders: Option<Colliders>,
        start: f64,
        dt: f64,
    ) -> Result<(HairMeshSim, f64)> {
        let s = &params.settle;
        if s.frames == 0 {
            return Ok((HairMeshSim::new(mesh, params, colliders, start)?, 0.0));
        }
        let loose = HairMeshParams {
            stretch_across: s.stretch_across,
            shear: s.shear,
            bend: s.bend,
            volume: s.volume,
            ..params.clone()
        };
        let mut sim = HairMeshSim::new(mesh, loose, colliders, start)?;
        sim.preroll(s.frames, dt)?;
        let moved = sim.rest_error();
        let inv = sim.head_pose(sim.time).inverse();
        let mut mesh = sim.mesh;
        let layers = mesh.layers;
        for (i, (r, x)) in mesh.rest.iter_mut().zip(&sim.x).enumerate() {
            if i % layers != 0 {
                *r = inv.apply(*x).as_vec3();
            }
        }
        Ok((HairMeshSim::new(mesh, params, sim.colliders, start)?, moved))
    }

    /// Number of corner tets simulated.
    pub fn tet_count(&self) -> usize {
        self.tets.len()
    }

    fn head_pose(&self, t: f64) -> Pose {
        self.colliders.as_ref().map_or(Pose::IDENTITY, |c| c.head.at(t))
    }

    /// Advances one frame of `dt` seconds.
    pub fn step_frame(&mut self, dt: f64) -> Result<MeshFrameStats> {
        let k = self.params.substeps.max(1);
        let h = dt / k as f64;
        let mut stats = MeshFrameStats::default();
        let t0 = self.time;
        for s in 0..k {
            let t1 = t0 + dt * (s + 1) as f64 / k as f64;
            self.substep(h, t1, &mut stats)?;
        }
        self.time = t0 + dt;
        let (deepest, internal) = self.penetrations();
        stats.deepest_penetration = deepest;
        stats.internal_penetrations = internal;
        stats.min_volume_ratio = self.min_volume_ratio();
        Ok(stats)
    }

    /// Simulates `frames` frames of `dt` with the head held where it is now (the clock stands
    /// still), so the mesh settles under gravity before the first output frame.
    pub fn preroll(&mut self, frames: u32, dt: f64) -> Result<()> {
        let k = self.params.substeps.max(1);
        let mut stats = MeshFrameStats::default();
        for _ in 0..frames {
            for _ in 0..k {
                self.substep(dt / k as f64, self.time, &mut stats)?;
            }
        }
        Ok(())
    }

    /// Deepest vertex inside a collider (cm) and the number of non-surface vertices inside.
    pub fn penetrations(&self) -> (f32, usize) {
        let Some(c) = &self.colliders else { return (0.0, 0) };
        let frame = c.at(self.time);
        let mut deepest = 0.0f32;
        let mut internal = 0;
        for (i, x) in self.x.iter().enumerate() {
            if self.mesh.layer_of(i) == 0 {
                continue;
            }
            if let Some(q) = frame.query(x.as_vec3())
                && q.distance < 0.0
            {
                deepest = deepest.max(-q.distance);
                if !self.external[i] {
                    internal += 1;
                }
            }
        }
        (deepest, internal)
    }

    /// Smallest tet volume over its rest volume.
    pub fn min_volume_ratio(&self) -> f64 {
        self.tets
            .iter()
            .map(|t| tet_volume(&t.v.map(|i| self.x[i as usize])).0 / t.rest)
            .fold(f64::INFINITY, f64::min)
    }

    /// Mean distance of the vertices to their rest positions in the head's frame (cm).
    pub fn rest_error(&self) -> f64 {
        let inv = self.head_pose(self.time).inverse();
        self.x
            .iter()
            .zip(&self.mesh.rest)
            .map(|(x, r)| (inv.apply(*x) - to_d(*r)).length())
            .sum::<f64>()
            / self.x.len() as f64
    }

    /// Total potential energy: every condition's `k/2 C²` and gravity.
    pub fn energy(&self) -> f64 {
        let x = &self.x;
        let mut e = 0.0;
        for t in &self.tris {
            let xs = t.v.map(|i| x[i as usize]);
            for dir in 0..2 {
                if let Some((c, ..)) = t.rest.stretch(&xs, dir) {
                    e += 0.5 * t.k[dir] * c * c;
                }
            }
            e += 0.5 * t.k[2] * t.rest.shear(&xs).0.powi(2);
        }
        for q in &self.hinges {
            if let Some((theta, _)) = dihedral(&q.v.map(|i| x[i as usize])) {
                e += 0.5 * q.k * angle_diff(theta, q.rest).powi(2);
            }
        }
        for q in &self.tets {
            e += 0.5 * q.k * (tet_volume(&q.v.map(|i| x[i as usize])).0 - q.rest).powi(2);
        }
        e + x
            .iter()
            .zip(&self.mass)
            .map(|(p, m)| m * self.params.gravity * p.y)
            .sum::<f64>()
    }

    /// Positions in single precision (world).
    pub fn positions(&self) -> Vec<Vec3> {
        self.x.iter().map(|p| p.as_vec3()).collect()
    }
}

#[cfg(test)]
mod tests;
