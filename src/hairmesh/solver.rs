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

use glam::{DMat3, DVec3, Vec3};
use nalgebra_sparse::pattern::SparsityPattern;
use nalgebra_sparse::{CooMatrix, CsrMatrix};
use serde::{Deserialize, Serialize};

use super::forces::{TriRest, angle_diff, dihedral, tet_volume};
use super::mesh::HairMesh;
use crate::collide::Colliders;
use crate::error::{Error, Result};
use crate::motion::Pose;

/// Physical and numerical parameters (cm, g, s); a job's `[hairmesh.solver]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HairMeshParams {
    /// Mass per unit of mesh volume (g/cm³): hair fills a few percent of a bundle.
    pub density: f64,
    /// Stretch modulus along the hair on side faces (g/s²; energy κ/2 · area · strain²).
    pub stretch_along: f64,
    /// Stretch modulus across the hair (side faces across, layer faces both ways).
    pub stretch_across: f64,
    /// Shear modulus of every face (g/s²).
    pub shear: f64,
    /// Bend modulus of side faces stacked along the hair (g·cm²/s²).
    pub bend: f64,
    /// Volume modulus of the corner tets (g/(cm·s²); energy κ/2 · (V − V₀)²/V₀).
    pub volume: f64,
    /// Condition damping: k_d = damping · k (s).
    pub damping: f64,
    /// Air drag (1/s).
    pub drag: f64,
    /// Gravity (cm/s², along −Y).
    pub gravity: f64,
    /// Coulomb friction against colliders.
    pub friction: f64,
    /// Distance kept from collider surfaces (cm).
    pub skin: f64,
    /// Implicit steps per frame.
    pub substeps: u32,
    /// Frames simulated at the first head pose before the first output frame, so the mesh
    /// settles under gravity (as the strand simulation's preroll).
    pub preroll_frames: u32,
    /// Relative residual at which conjugate gradients stop, and their iteration cap.
    pub cg_tolerance: f64,
    pub cg_max_iterations: usize,
    /// Deformation minimization after position correction (002 Eq. 3–4).
    pub minimize_deformation: bool,
}

impl Default for HairMeshParams {
    fn default() -> Self {
        HairMeshParams {
            density: 0.05,
            stretch_along: 2.0e5,
            stretch_across: 2.0e3,
            shear: 1.0e3,
            bend: 2.0e4,
            volume: 2.0e4,
            damping: 0.01,
            drag: 0.5,
            gravity: 981.0,
            friction: 0.3,
            skin: 0.05,
            substeps: 2,
            preroll_frames: 24,
            cg_tolerance: 1e-3,
            cg_max_iterations: 100,
            minimize_deformation: true,
        }
    }
}

impl HairMeshParams {
    /// Checks the values, naming the first bad key.
    pub fn check(&self) -> std::result::Result<(), String> {
        let values = [
            ("density", self.density),
            ("stretch_along", self.stretch_along),
            ("stretch_across", self.stretch_across),
            ("shear", self.shear),
            ("bend", self.bend),
            ("volume", self.volume),
            ("damping", self.damping),
            ("drag", self.drag),
            ("gravity", self.gravity),
            ("friction", self.friction),
            ("skin", self.skin),
            ("cg_tolerance", self.cg_tolerance),
        ];
        crate::presets::non_negative(&values)?;
        if self.density <= 0.0 {
            return Err("density must be positive".into());
        }
        if self.preroll_frames > 100_000 {
            return Err(format!(
                "preroll_frames = {}: at most 100000",
                self.preroll_frames
            ));
        }
        if !(1..=1000).contains(&self.substeps) {
            return Err(format!("substeps = {}: must be within 1..=1000", self.substeps));
        }
        if self.cg_max_iterations == 0 {
            return Err("cg_max_iterations must be at least 1".into());
        }
        Ok(())
    }
}

/// A triangle of a side or layer face.
struct Tri {
    v: [u32; 3],
    rest: TriRest,
    /// Stiffness: stretch along u, stretch along v, shear.
    k: [f64; 3],
    slots: [u32; 9],
}

/// A condition on 4 vertices: a dihedral hinge or a corner tet.
struct Quad4 {
    v: [u32; 4],
    /// Rest angle or rest volume.
    rest: f64,
    k: f64,
    slots: [u32; 16],
}

/// How a vertex's velocity change is constrained in the solve (Baraff & Witkin §5.3).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Filter {
    Free,
    /// Free in the plane normal to the vector.
    Plane(DVec3),
    Fixed,
}

impl Filter {
    fn apply(self, a: DVec3) -> DVec3 {
        match self {
            Filter::Free => a,
            Filter::Plane(n) => a - a.dot(n) * n,
            Filter::Fixed => DVec3::ZERO,
        }
    }
}

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
    /// The system matrix as n × n blocks of 3 × 3 (block compressed rows), its pattern fixed
    /// at set-up; element slots index its values.
    a: CsrMatrix<DMat3>,
    diag_slot: Vec<u32>,
    /// Per vertex: the slot of its block coupling to the next vertex up its column.
    up_slot: Vec<u32>,
    /// The matrix's block columns again as u32 and its blocks in single precision (row-major),
    /// for the solver's products.
    block_col: Vec<u32>,
    blocks: Vec<[f32; 9]>,
    laplacian: CsrMatrix<f64>,
    edges_degree: Vec<f64>,
    /// The last solve's velocity change (the next solve's initial guess).
    prev_dv: Vec<DVec3>,
    /// Seconds spent assembling forces, solving, and handling collisions.
    pub timing: SolverTiming,
    /// Contact normals and collider velocities of the vertices corrected in the last step.
    contacts: Vec<Option<(DVec3, DVec3)>>,
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

        // Corner tets, their rest volumes and the lumped mass (each prism's volume shared by
        // its corners).
        let mut mass = vec![0.0; n];
        let mut tets = Vec::new();
        let mut flat = 0usize;
        let corner_tets = mesh.corner_tets();
        let mut k = 0;
        for _ in 0..mesh.layers - 1 {
            for f in &mesh.faces {
                let count = 2 * f.len();
                let prism = &corner_tets[k..k + count];
                k += count;
                let mut sum = 0.0;
                for t in prism {
                    let (v0, _) = tet_volume(&t.map(|i| rest[i as usize]));
                    sum += v0.max(0.0);
                    let scale = t
                        .iter()
                        .map(|&i| (rest[i as usize] - rest[t[0] as usize]).length())
                        .fold(0.0, f64::max);
                    if v0 > 1e-3 * scale.powi(3) / 6.0 {
                        tets.push(Quad4 {
                            v: *t,
                            rest: v0,
                            k: params.volume / v0,
                            slots: [0; 16],
                        });
                    } else {
                        flat += 1;
                    }
                }
                let volume = sum * if f.len() == 4 { 0.75 } else { 0.5 };
                for t in prism {
                    mass[t[0] as usize] += params.density * volume / count as f64;
                }
            }
        }
        if tets.is_empty() {
            return Err(Error::Invalid(
                "the hair mesh has no prism with a volume (every tet is flat or inverted)".into(),
            ));
        }
        if flat > 0 {
            tracing::warn!("{flat} corner tets are flat or inverted at rest and are left out");
        }
        let mean = mass.iter().sum::<f64>() / n as f64;
        for m in &mut mass {
            *m = m.max(0.1 * mean);
        }

        // Faces: side quads (u along the hair) and layer faces above the root, each quad as its
        // four triangles (both diagonals) at half stiffness, so no diagonal is preferred.
        let mut tris = Vec::new();
        let quad = |q: [u32; 4], axis: DVec3, k: [f64; 3]| {
            let mut tris = Vec::with_capacity(4);
            for t in [
                [q[0], q[1], q[2]],
                [q[0], q[2], q[3]],
                [q[0], q[1], q[3]],
                [q[1], q[2], q[3]],
            ] {
                if let Some(r) = TriRest::new(&t.map(|i| rest[i as usize]), axis) {
                    let s = 0.5 / r.area;
                    tris.push(Tri {
                        v: t,
                        rest: r,
                        k: [k[0] * s, k[1] * s, k[2] * s],
                        slots: [0; 9],
                    });
                }
            }
            tris
        };
        let side_k = [params.stretch_along, params.stretch_across, params.shear];
        let layer_k = [params.stretch_across, params.stretch_across, params.shear];
        let sides = mesh.sides();
        for s in &sides {
            let [c0, c1] = s.columns;
            for l in 0..mesh.layers - 1 {
                let q = [
                    mesh.vertex(c0, l),
                    mesh.vertex(c1, l),
                    mesh.vertex(c1, l + 1),
                    mesh.vertex(c0, l + 1),
                ];
                let axis =
                    rest[q[2] as usize] + rest[q[3] as usize] - rest[q[0] as usize] - rest[q[1] as usize];
                tris.extend(quad(q, axis, side_k));
            }
        }
        for l in 1..mesh.layers {
            for f in &mesh.faces {
                let v: Vec<u32> = f.iter().map(|&c| mesh.vertex(c, l)).collect();
                if v.len() == 4 {
                    tris.extend(quad(
                        [v[0], v[1], v[2], v[3]],
                        rest[v[1] as usize] - rest[v[0] as usize],
                        layer_k,
                    ));
                } else {
                    let t = [v[0], v[1], v[2]];
                    if let Some(r) = TriRest::new(
                        &t.map(|i| rest[i as usize]),
                        rest[v[1] as usize] - rest[v[0] as usize],
                    ) {
                        let s = 1.0 / r.area;
                        tris.push(Tri {
                            v: t,
                            rest: r,
                            k: layer_k.map(|k| k * s),
                            slots: [0; 9],
                        });
                    }
                }
            }
        }

        // Bend hinges between side faces stacked along the hair: on the edge between columns
        // c0, c1 at layer l, the wings below and above, crossed both ways at half stiffness.
        let mut hinges = Vec::new();
        for s in &sides {
            let [c0, c1] = s.columns;
            for l in 1..mesh.layers - 1 {
                let (e1, e2) = (mesh.vertex(c0, l), mesh.vertex(c1, l));
                for (below, above) in [(c0, c1), (c1, c0)] {
                    let q = [mesh.vertex(below, l - 1), e1, e2, mesh.vertex(above, l + 1)];
                    let x = q.map(|i| rest[i as usize]);
                    let Some((theta, _)) = dihedral(&x) else { continue };
                    // Discrete-shell scaling 3‖e‖²/(A_a + A_b) = 6‖e‖/(h_a + h_b) with the wing
                    // heights h kept above ‖e‖/4, so thin wings do not make stiff hinges.
                    let e = (x[2] - x[1]).length();
                    let height = |w: DVec3| (w - x[1]).cross(x[2] - x[1]).length() / e;
                    let heights = (height(x[0]) + height(x[3])).max(0.5 * e);
                    hinges.push(Quad4 {
                        v: q,
                        rest: theta,
                        k: 0.5 * params.bend * 6.0 * e / heights,
                        slots: [0; 16],
                    });
                }
            }
        }

        // Elements in the order of their vertices (column by column), so the assembly walks
        // the matrix nearly in order instead of jumping across it.
        tris.sort_by_key(|t| t.v.iter().min().copied());
        hinges.sort_by_key(|q| q.v.iter().min().copied());
        tets.sort_by_key(|q| q.v.iter().min().copied());

        // The matrix pattern: every pair of vertices sharing an element, block by block.
        let mut neighbours: Vec<Vec<u32>> = (0..n as u32).map(|i| vec![i]).collect();
        let mut link = |vs: &[u32]| {
            for &i in vs {
                for &j in vs {
                    neighbours[i as usize].push(j);
                }
            }
        };
        tris.iter().for_each(|t| link(&t.v));
        hinges.iter().for_each(|h| link(&h.v));
        tets.iter().for_each(|t| link(&t.v));
        for nb in &mut neighbours {
            nb.sort_unstable();
            nb.dedup();
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let mut indices = Vec::new();
        offsets.push(0usize);
        for nb in &neighbours {
            indices.extend(nb.iter().map(|&j| j as usize));
            offsets.push(indices.len());
        }
        let row_start = offsets.clone();
        let nnz = indices.len();
        let pattern = SparsityPattern::try_from_offsets_and_indices(n, n, offsets, indices)
            .map_err(|e| Error::Runtime(format!("hair mesh matrix pattern: {e}")))?;
        let a = CsrMatrix::try_from_pattern_and_values(pattern, vec![DMat3::ZERO; nnz])
            .map_err(|e| Error::Runtime(format!("hair mesh matrix: {e}")))?;
        let slot = |i: u32, j: u32| -> u32 {
            let nb = &neighbours[i as usize];
            (row_start[i as usize] + nb.binary_search(&j).expect("pattern holds every element pair")) as u32
        };
        for t in &mut tris {
            for (a_, &i) in t.v.iter().enumerate() {
                for (b_, &j) in t.v.iter().enumerate() {
                    t.slots[3 * a_ + b_] = slot(i, j);
                }
            }
        }
        for q in hinges.iter_mut().chain(tets.iter_mut()) {
            for (a_, &i) in q.v.iter().enumerate() {
                for (b_, &j) in q.v.iter().enumerate() {
                    q.slots[4 * a_ + b_] = slot(i, j);
                }
            }
        }
        let diag_slot = (0..n as u32).map(|i| slot(i, i)).collect();
        let up_slot = (0..n as u32)
            .map(|i| {
                if mesh.layer_of(i as usize) + 1 < mesh.layers {
                    slot(i, i + 1)
                } else {
                    u32::MAX
                }
            })
            .collect();

        // The edge-graph Laplacian AᵀA of the deformation minimization (002 Eq. 4).
        let mut coo = CooMatrix::new(n, n);
        let mut degree = vec![0.0; n];
        for [i, j] in mesh.edges() {
            let (i, j) = (i as usize, j as usize);
            coo.push(i, j, -1.0);
            coo.push(j, i, -1.0);
            degree[i] += 1.0;
            degree[j] += 1.0;
        }
        for (i, d) in degree.iter().enumerate() {
            coo.push(i, i, *d);
        }
        let laplacian = CsrMatrix::from(&coo);

        Ok(HairMeshSim {
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
            blocks: vec![[0.0; 9]; a.nnz()],
            block_col: a.col_indices().iter().map(|&j| j as u32).collect(),
            a,
            laplacian,
            edges_degree: degree,
            contacts: vec![None; n],
            prev_dv: vec![DVec3::ZERO; n],
            timing: SolverTiming::default(),
            colliders,
            params,
            mesh,
        })
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

    /// Adds one element's blocks to the matrix: `local[a][b]` for `a ≤ b` (the upper half of a
    /// symmetric element matrix), mirrored below the diagonal.
    fn scatter<const N: usize>(blocks: &mut [DMat3], slots: &[u32], local: &[[DMat3; N]; N]) {
        for (a, row) in local.iter().enumerate() {
            blocks[slots[N * a + a] as usize] += row[a];
            for (b, m) in row.iter().enumerate().skip(a + 1) {
                blocks[slots[N * a + b] as usize] += *m;
                blocks[slots[N * b + a] as usize] += m.transpose();
            }
        }
    }

    /// `local[a][b] += s gₐ g_bᵀ` for `a ≤ b`.
    fn rank_one<const N: usize>(local: &mut [[DMat3; N]; N], s: f64, g: &[DVec3; N]) {
        for a in 0..N {
            let ga = s * g[a];
            for b in a..N {
                local[a][b] += DMat3::from_cols(ga * g[b].x, ga * g[b].y, ga * g[b].z);
            }
        }
    }

    /// Assembles `A` and `b` of the implicit step.
    fn assemble(&mut self, h: f64, b: &mut [DVec3]) {
        let p = &self.params;
        let values = self.a.values_mut();
        values.iter_mut().for_each(|v| *v = DMat3::ZERO);
        let g = DVec3::new(0.0, -p.gravity, 0.0);
        for (i, bi) in b.iter_mut().enumerate() {
            let m = self.mass[i];
            *bi = m * g - p.drag * m * self.v[i];
            values[self.diag_slot[i] as usize] += DMat3::from_diagonal(DVec3::splat(m * (1.0 + h * p.drag)));
        }
        let (x, v) = (&self.x, &self.v);
        let cond = Condition {
            damping: p.damping,
            h,
            v,
        };
        for t in &self.tris {
            let xs = t.v.map(|i| x[i as usize]);
            let mut local = [[DMat3::ZERO; 3]; 3];
            for dir in 0..2 {
                let Some((c, grad, wh, len)) = t.rest.stretch(&xs, dir) else {
                    continue;
                };
                cond.add(&t.v, c, &grad, t.k[dir], &mut local, b);
                if len > 1.0 {
                    // Positive part of the stretch Hessian: k C a αᵢαⱼ (I − ŵŵᵀ)/‖w‖.
                    let coeffs = if dir == 0 { &t.rest.alpha } else { &t.rest.beta };
                    let s = t.k[dir] * c * t.rest.area / len;
                    let proj = |u: DVec3| u - u.dot(wh) * wh;
                    let vel: DVec3 = (0..3).map(|j| coeffs[j] * v[t.v[j] as usize]).sum();
                    let pv = proj(vel);
                    let block = DMat3::IDENTITY - DMat3::from_cols(wh * wh.x, wh * wh.y, wh * wh.z);
                    for a_ in 0..3 {
                        b[t.v[a_] as usize] -= h * s * coeffs[a_] * pv;
                        for b_ in a_..3 {
                            local[a_][b_] += (h * h * s * coeffs[a_] * coeffs[b_]) * block;
                        }
                    }
                }
            }
            let (c, grad) = t.rest.shear(&xs);
            cond.add(&t.v, c, &grad, t.k[2], &mut local, b);
            Self::scatter(values, &t.slots, &local);
        }
        for q in &self.hinges {
            let xs = q.v.map(|i| x[i as usize]);
            let Some((theta, grad)) = dihedral(&xs) else {
                continue;
            };
            let mut local = [[DMat3::ZERO; 4]; 4];
            cond.add(&q.v, angle_diff(theta, q.rest), &grad, q.k, &mut local, b);
            Self::scatter(values, &q.slots, &local);
        }
        for q in &self.tets {
            let xs = q.v.map(|i| x[i as usize]);
            let (vol, grad) = tet_volume(&xs);
            let mut local = [[DMat3::ZERO; 4]; 4];
            cond.add(&q.v, vol - q.rest, &grad, q.k, &mut local, b);
            Self::scatter(values, &q.slots, &local);
        }
        for bi in b.iter_mut() {
            *bi *= h;
        }
    }

    /// Copies the assembled matrix into the single-precision blocks the solver multiplies with.
    fn refresh_blocks(&mut self) {
        for (b, m) in self.blocks.iter_mut().zip(self.a.values()) {
            let c = m.to_cols_array();
            *b = [c[0], c[3], c[6], c[1], c[4], c[7], c[2], c[5], c[8]].map(|v| v as f32);
        }
    }

    /// `y = A x` on 3-vectors, with the single-precision blocks (the solve's tolerance is far
    /// above their rounding) and double-precision sums.
    fn mul(&self, x: &[DVec3], y: &mut [DVec3]) {
        let offsets = self.a.row_offsets();
        for (i, yi) in y.iter_mut().enumerate() {
            let range = offsets[i]..offsets[i + 1];
            let (mut s0, mut s1, mut s2) = (0.0, 0.0, 0.0);
            for (b, &j) in self.blocks[range.clone()].iter().zip(&self.block_col[range]) {
                let xj = x[j as usize];
                s0 += b[0] as f64 * xj.x + b[1] as f64 * xj.y + b[2] as f64 * xj.z;
                s1 += b[3] as f64 * xj.x + b[4] as f64 * xj.y + b[5] as f64 * xj.z;
                s2 += b[6] as f64 * xj.x + b[7] as f64 * xj.y + b[8] as f64 * xj.z;
            }
            *yi = DVec3::new(s0, s1, s2);
        }
    }

    /// The Modified Conjugate Gradient method (Baraff & Witkin §5.3): solves `A Δv = b` with
    /// `Δv = z` in the constrained directions. Returns the iterations.
    fn mcg(&self, h: f64, b: &[DVec3], filter: &[Filter], z: &[DVec3], dv: &mut [DVec3]) -> usize {
        let n = b.len();
        let pre = ColumnPreconditioner::new(self, filter);
        // Warm start: the previous step's change in the free directions (smooth motion changes
        // it little), the prescribed change in the constrained ones.
        for i in 0..n {
            dv[i] = z[i] + filter[i].apply(self.prev_dv[i]);
        }
        let fb: Vec<DVec3> = b.iter().zip(filter).map(|(v, f)| f.apply(*v)).collect();
        // The tolerance is relative to the right-hand side, but never below what one step of
        // gravity asks (near equilibrium the right-hand side vanishes).
        let weight: Vec<DVec3> = (0..n)
            .map(|i| {
                filter[i].apply(DVec3::new(
                    0.0,
                    -h * self.mass[i] * self.params.gravity.max(1.0),
                    0.0,
                ))
            })
            .collect();
        let mut scratch = vec![DVec3::ZERO; n];
        pre.apply(&weight, &mut scratch);
        let gravity: f64 = weight.iter().zip(&scratch).map(|(a, b)| a.dot(*b)).sum();
        pre.apply(&fb, &mut scratch);
        let delta0 = fb
            .iter()
            .zip(&scratch)
            .map(|(a, b)| a.dot(*b))
            .sum::<f64>()
            .max(gravity);
        let mut q = vec![DVec3::ZERO; n];
        self.mul(dv, &mut q);
        let mut r: Vec<DVec3> = (0..n).map(|i| filter[i].apply(b[i] - q[i])).collect();
        let mut c = vec![DVec3::ZERO; n];
        pre.apply(&r, &mut c);
        let mut delta: f64 = r.iter().zip(&c).map(|(a, b)| a.dot(*b)).sum();
        let mut s = scratch;
        let tol = self.params.cg_tolerance * self.params.cg_tolerance * delta0;
        let mut it = 0;
        while delta > tol && it < self.params.cg_max_iterations {
            self.mul(&c, &mut q);
            for i in 0..n {
                q[i] = filter[i].apply(q[i]);
            }
            let cq: f64 = c.iter().zip(&q).map(|(a, b)| a.dot(*b)).sum();
            if cq.is_nan() || cq <= 0.0 {
                break;
            }
            let alpha = delta / cq;
            for i in 0..n {
                dv[i] += alpha * c[i];
                r[i] -= alpha * q[i];
            }
            pre.apply(&r, &mut s);
            let new_delta: f64 = r.iter().zip(&s).map(|(a, b)| a.dot(*b)).sum();
            let beta = new_delta / delta;
            delta = new_delta;
            for i in 0..n {
                c[i] = filter[i].apply(s[i] + beta * c[i]);
            }
            it += 1;
        }
        it
    }

    #[allow(clippy::needless_range_loop)] // i indexes positions, velocities and filters
    fn substep(&mut self, h: f64, t1: f64, stats: &mut MeshFrameStats) -> Result<()> {
        let n = self.x.len();
        let pose = self.head_pose(t1);
        let mut filter = vec![Filter::Free; n];
        let mut z = vec![DVec3::ZERO; n];
        for i in 0..n {
            if self.mesh.layer_of(i) == 0 {
                let target = pose.apply(to_d(self.mesh.rest[i]));
                filter[i] = Filter::Fixed;
                z[i] = (target - self.x[i]) / h - self.v[i];
            } else if let Some((nrm, vobj)) = self.contacts[i] {
                filter[i] = Filter::Plane(nrm);
                z[i] = (vobj - self.v[i]).dot(nrm) * nrm;
            }
        }
        let clock = std::time::Instant::now();
        let mut b = vec![DVec3::ZERO; n];
        self.assemble(h, &mut b);
        self.refresh_blocks();
        let assembled = clock.elapsed().as_secs_f64();
        let mut dv = vec![DVec3::ZERO; n];
        stats.cg_iterations += self.mcg(h, &b, &filter, &z, &mut dv);
        self.prev_dv.copy_from_slice(&dv);
        let solved = clock.elapsed().as_secs_f64();
        self.timing.forces += assembled;
        self.timing.solve += solved - assembled;
        for i in 0..n {
            self.v[i] += dv[i];
            self.x[i] += h * self.v[i];
            if self.mesh.layer_of(i) == 0 {
                self.x[i] = pose.apply(to_d(self.mesh.rest[i]));
            }
        }
        if let Some(i) = self.x.iter().position(|p| !p.is_finite()) {
            return Err(Error::Runtime(format!(
                "the hair mesh simulation became unstable at t = {t1:.4} s (vertex {i}); try more substeps or lower stiffness"
            )));
        }
        self.collide(h, t1, stats);
        self.timing.collisions += clock.elapsed().as_secs_f64() - solved;
        Ok(())
    }

    /// Collision handling (002 §3.2): surface vertices inside a collider are moved out and
    /// their velocity made non-penetrating (with friction), then the deformation is minimized
    /// around them.
    #[allow(clippy::needless_range_loop)] // i indexes positions, velocities and flags
    fn collide(&mut self, h: f64, t1: f64, stats: &mut MeshFrameStats) {
        let _ = h;
        self.contacts.iter_mut().for_each(|c| *c = None);
        let Some(colliders) = &self.colliders else { return };
        let frame = colliders.at(t1);
        // Positions before correction, copied when the first vertex is corrected.
        let mut before: Option<Vec<DVec3>> = None;
        let skin = self.params.skin;
        let mut fixed = vec![false; self.x.len()];
        for i in 0..self.x.len() {
            if self.mesh.layer_of(i) == 0 {
                fixed[i] = true;
                continue;
            }
            if !self.external[i] {
                continue;
            }
            let Some(c) = frame.query(self.x[i].as_vec3()) else {
                continue;
            };
            let d = c.distance as f64;
            if d >= skin {
                continue;
            }
            let nrm = c.normal.as_dvec3();
            let vobj = c.velocity.as_dvec3();
            before.get_or_insert_with(|| self.x.clone());
            self.x[i] += (skin - d) * nrm;
            let mut rel = self.v[i] - vobj;
            let vn = rel.dot(nrm);
            if vn < 0.0 {
                rel -= vn * nrm;
                let vt = rel.length();
                if vt > 0.0 {
                    rel *= (1.0 - self.params.friction * -vn / vt).max(0.0);
                }
                self.contacts[i] = Some((nrm, vobj));
            }
            self.v[i] = vobj + rel;
            fixed[i] = true;
            stats.corrected += 1;
        }
        if let Some(before) = before
            && self.params.minimize_deformation
        {
            stats.minimization_iterations += self.minimize(&before, &fixed);
        }
    }

    /// Deformation minimization (002 Eq. 3–4): `AᵀA x″ = AᵀA x` on the free vertices with the
    /// corrected vertices and the roots held at `x′`, solved by conjugate gradients from `x′`.
    fn minimize(&mut self, before: &[DVec3], fixed: &[bool]) -> usize {
        let n = self.x.len();
        let l = &self.laplacian;
        let mut b = vec![DVec3::ZERO; n];
        Self::mul_scalar(l, before, &mut b);
        let mut r = vec![DVec3::ZERO; n];
        Self::mul_scalar(l, &self.x, &mut r);
        for i in 0..n {
            r[i] = if fixed[i] { DVec3::ZERO } else { b[i] - r[i] };
        }
        let inv_d: Vec<f64> = self.edges_degree.iter().map(|d| 1.0 / d.max(1.0)).collect();
        // Each coordinate is its own system with the same matrix: run them side by side.
        let mut c: Vec<DVec3> = (0..n).map(|i| r[i] * inv_d[i]).collect();
        let dot = |a: &[DVec3], b: &[DVec3]| a.iter().zip(b).fold(DVec3::ZERO, |s, (p, q)| s + *p * *q);
        let mut delta = dot(&r, &c);
        let delta0 = delta;
        let mut q = vec![DVec3::ZERO; n];
        let tol = 1e-8 * delta0.max_element().max(1e-30);
        let mut it = 0;
        while delta.max_element() > tol && it < 200 {
            Self::mul_scalar(l, &c, &mut q);
            for i in 0..n {
                if fixed[i] {
                    q[i] = DVec3::ZERO;
                }
            }
            let cq = dot(&c, &q);
            let alpha = DVec3::select(cq.cmpgt(DVec3::ZERO), delta / cq, DVec3::ZERO);
            for i in 0..n {
                self.x[i] += alpha * c[i];
                r[i] -= alpha * q[i];
            }
            let s: Vec<DVec3> = (0..n).map(|i| r[i] * inv_d[i]).collect();
            let new_delta = dot(&r, &s);
            let beta = DVec3::select(delta.cmpgt(DVec3::ZERO), new_delta / delta, DVec3::ZERO);
            delta = new_delta;
            for i in 0..n {
                c[i] = if fixed[i] { DVec3::ZERO } else { s[i] + beta * c[i] };
            }
            it += 1;
        }
        it
    }

    /// `y = L x` for the scalar (n × n) Laplacian applied to each coordinate.
    fn mul_scalar(l: &CsrMatrix<f64>, x: &[DVec3], y: &mut [DVec3]) {
        for (i, row) in l.row_iter().enumerate() {
            let mut s = DVec3::ZERO;
            for (&j, &a) in row.col_indices().iter().zip(row.values()) {
                s += a * x[j];
            }
            y[i] = s;
        }
    }
}

/// One condition's share of the implicit step (Baraff & Witkin Eq. 16): with stiffness `k`
/// and damping `k_d`, `f += −(k C + (k_d + h k) Ċ) ∇C` (the last term is `−h K v₀`) and
/// `A += (h k_d + h² k) ∇C ∇Cᵀ`.
struct Condition<'a> {
    damping: f64,
    h: f64,
    v: &'a [DVec3],
}

impl Condition<'_> {
    #[allow(clippy::too_many_arguments)]
    fn add<const N: usize>(
        &self,
        vs: &[u32; N],
        c: f64,
        grad: &[DVec3; N],
        k: f64,
        local: &mut [[DMat3; N]; N],
        b: &mut [DVec3],
    ) {
        let (h, kd) = (self.h, self.damping * k);
        let cdot: f64 = vs.iter().zip(grad).map(|(&i, g)| g.dot(self.v[i as usize])).sum();
        let scale = k * c + (kd + h * k) * cdot;
        for (&i, g) in vs.iter().zip(grad) {
            b[i as usize] -= scale * *g;
        }
        HairMeshSim::rank_one(local, h * kd + h * h * k, grad);
    }
}

/// The MCG's preconditioner: the block-tridiagonal part of the filtered system
/// `S A S + (I − S)` along each column of the mesh (a vertex and its neighbours up and down the
/// same column), factored exactly column by column. The stiff along-the-hair coupling lives
/// there, which a per-vertex (block-Jacobi) preconditioner leaves to the iterations.
struct ColumnPreconditioner {
    layers: usize,
    /// Per vertex: the inverse of its block after elimination of the vertices below it.
    inv_d: Vec<DMat3>,
    /// Per vertex: its filtered block coupling to the next vertex up (zero at the top).
    up: Vec<DMat3>,
    /// Per vertex: `upᵀ inv_d` of the vertex below (the forward-elimination factor).
    low: Vec<DMat3>,
}

impl ColumnPreconditioner {
    fn new(sim: &HairMeshSim, filter: &[Filter]) -> ColumnPreconditioner {
        let n = filter.len();
        let layers = sim.mesh.layers;
        let vals = sim.a.values();
        let projector = |f: Filter| match f {
            Filter::Free => DMat3::IDENTITY,
            Filter::Plane(nrm) => DMat3::IDENTITY - DMat3::from_cols(nrm * nrm.x, nrm * nrm.y, nrm * nrm.z),
            Filter::Fixed => DMat3::ZERO,
        };
        let mut inv_d = vec![DMat3::ZERO; n];
        let mut up = vec![DMat3::ZERO; n];
        let mut low = vec![DMat3::ZERO; n];
        for i in 0..n {
            let si = projector(filter[i]);
            let mut d = si * vals[sim.diag_slot[i] as usize] * si + (DMat3::IDENTITY - si);
            if i % layers > 0 {
                low[i] = up[i - 1].transpose() * inv_d[i - 1];
                d -= low[i] * up[i - 1];
            }
            if i % layers + 1 < layers {
                up[i] = si * vals[sim.up_slot[i] as usize] * projector(filter[i + 1]);
            }
            let inv = d.inverse();
            inv_d[i] = if inv.is_finite() {
                inv
            } else {
                DMat3::from_diagonal(
                    DVec3::new(d.x_axis.x, d.y_axis.y, d.z_axis.z)
                        .map(|x| if x > 0.0 { 1.0 / x } else { 0.0 }),
                )
            };
        }
        ColumnPreconditioner {
            layers,
            inv_d,
            up,
            low,
        }
    }

    /// `y = P⁻¹ r`: forward elimination up each column, back substitution down.
    fn apply(&self, r: &[DVec3], y: &mut [DVec3]) {
        let layers = self.layers;
        for (c, (rc, yc)) in r.chunks(layers).zip(y.chunks_mut(layers)).enumerate() {
            let base = c * layers;
            yc[0] = rc[0];
            for l in 1..layers {
                yc[l] = rc[l] - self.low[base + l] * yc[l - 1];
            }
            yc[layers - 1] = self.inv_d[base + layers - 1] * yc[layers - 1];
            for l in (0..layers - 1).rev() {
                yc[l] = self.inv_d[base + l] * (yc[l] - self.up[base + l] * yc[l + 1]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hairmesh::mesh::ProceduralMesh;

    fn mesh() -> HairMesh {
        HairMesh::procedural(&ProceduralMesh {
            columns_u: 3,
            columns_v: 3,
            layers: 7,
            length: 18.0,
            ..Default::default()
        })
        .unwrap()
    }

    /// A simulation of the test mesh with every vertex moved by up to `amplitude` cm.
    fn deformed(amplitude: f64) -> HairMeshSim {
        let mut sim = HairMeshSim::new(mesh(), HairMeshParams::default(), None, 0.0).unwrap();
        for (i, x) in sim.x.iter_mut().enumerate() {
            let i = i as f64;
            *x += amplitude * DVec3::new((i * 0.7).sin(), (i * 1.1).cos(), (i * 0.3).sin());
        }
        sim
    }

    #[test]
    fn system_matrix_is_symmetric_positive_definite() {
        // Deformed a little so every term is active.
        let mut sim = deformed(0.3);
        let n = sim.x.len();
        let mut b = vec![DVec3::ZERO; n];
        sim.assemble(1.0 / 48.0, &mut b);
        let dense = dense(&sim);
        let asym = (&dense - dense.transpose()).abs().max();
        assert!(asym < 1e-9 * dense.abs().max(), "asymmetry {asym}");
        let lo = nalgebra::SymmetricEigen::new(dense).eigenvalues.min();
        assert!(lo > 0.0);
    }

    /// The assembled force (at zero velocity, `b = h f`) is minus the gradient of the total
    /// energy, by finite differences: checks every element's scatter into the system.
    #[test]
    fn assembled_forces_are_minus_the_energy_gradient() {
        let mut sim = deformed(0.4);
        let n = sim.x.len();
        let h = 1.0 / 48.0;
        let mut b = vec![DVec3::ZERO; n];
        sim.assemble(h, &mut b);
        let eps = 1e-5;
        let mut worst = 0.0f64;
        let mut largest = 0.0f64;
        for (i, bi) in b.iter().enumerate() {
            for k in 0..3 {
                let x0 = sim.x[i][k];
                sim.x[i][k] = x0 + eps;
                let up = sim.energy();
                sim.x[i][k] = x0 - eps;
                let down = sim.energy();
                sim.x[i][k] = x0;
                let f = -(up - down) / (2.0 * eps);
                worst = worst.max((bi[k] / h - f).abs());
                largest = largest.max(f.abs());
            }
        }
        assert!(worst < 1e-5 * largest, "force error {worst} of {largest}");
    }

    /// A filter per vertex for the solver tests: roots fixed, a few vertices in contact.
    fn test_filters(sim: &HairMeshSim) -> Vec<Filter> {
        (0..sim.x.len())
            .map(|i| {
                if sim.mesh.layer_of(i) == 0 {
                    Filter::Fixed
                } else if i % 5 == 2 {
                    Filter::Plane(DVec3::new(1.0, 2.0, -0.5).normalize())
                } else {
                    Filter::Free
                }
            })
            .collect()
    }

    /// The deformed test mesh with its system assembled for step `h`: the simulation, the
    /// right-hand side and the test filters.
    fn assembled(h: f64) -> (HairMeshSim, Vec<DVec3>, Vec<Filter>) {
        let mut sim = deformed(0.3);
        let mut b = vec![DVec3::ZERO; sim.x.len()];
        sim.assemble(h, &mut b);
        sim.refresh_blocks();
        let filter = test_filters(&sim);
        (sim, b, filter)
    }

    /// The assembled block matrix as a dense 3n × 3n matrix.
    fn dense(sim: &HairMeshSim) -> nalgebra::DMatrix<f64> {
        let n = sim.x.len();
        let mut out = nalgebra::DMatrix::zeros(3 * n, 3 * n);
        for (i, row) in sim.a.row_iter().enumerate() {
            for (&j, m) in row.col_indices().iter().zip(row.values()) {
                for (c, col) in m.to_cols_array_2d().iter().enumerate() {
                    for (r, v) in col.iter().enumerate() {
                        out[(3 * i + r, 3 * j + c)] = *v;
                    }
                }
            }
        }
        out
    }

    fn projector(f: Filter) -> nalgebra::Matrix3<f64> {
        match f {
            Filter::Free => nalgebra::Matrix3::identity(),
            Filter::Plane(n) => {
                let n = nalgebra::Vector3::new(n.x, n.y, n.z);
                nalgebra::Matrix3::identity() - n * n.transpose()
            }
            Filter::Fixed => nalgebra::Matrix3::zeros(),
        }
    }

    /// The filtered system `S A S + (I − S)` as a dense matrix, keeping only the couplings
    /// `keep(i, j)` allows.
    fn dense_filtered(
        sim: &HairMeshSim,
        filter: &[Filter],
        keep: impl Fn(usize, usize) -> bool,
    ) -> nalgebra::DMatrix<f64> {
        let a = dense(sim);
        let n = filter.len();
        let mut out = nalgebra::DMatrix::zeros(3 * n, 3 * n);
        for i in 0..n {
            for j in 0..n {
                if !keep(i, j) {
                    continue;
                }
                let block: nalgebra::Matrix3<f64> = a.fixed_view::<3, 3>(3 * i, 3 * j).into();
                let mut m = projector(filter[i]) * block * projector(filter[j]);
                if i == j {
                    m += nalgebra::Matrix3::identity() - projector(filter[i]);
                }
                out.fixed_view_mut::<3, 3>(3 * i, 3 * j).copy_from(&m);
            }
        }
        out
    }

    fn flat(x: &[DVec3]) -> nalgebra::DVector<f64> {
        nalgebra::DVector::from_iterator(3 * x.len(), x.iter().flat_map(|p| p.to_array()))
    }

    /// The column preconditioner solves the filtered block-tridiagonal part of the matrix
    /// exactly (checked against a dense LU solve), and the single-precision product agrees
    /// with the double-precision matrix.
    #[test]
    fn column_preconditioner_and_block_product_match_dense_algebra() {
        let (sim, _, filter) = assembled(1.0 / 48.0);
        let n = sim.x.len();
        let layers = sim.mesh.layers;
        let tri = dense_filtered(&sim, &filter, |i, j| {
            i / layers == j / layers && (i % layers).abs_diff(j % layers) <= 1
        });
        let r: Vec<DVec3> = (0..n)
            .map(|i| filter[i].apply(DVec3::new((i as f64).sin(), (2.0 * i as f64).cos(), 0.3)))
            .collect();
        let pre = ColumnPreconditioner::new(&sim, &filter);
        let mut y = vec![DVec3::ZERO; n];
        pre.apply(&r, &mut y);
        let want = tri.lu().solve(&flat(&r)).unwrap();
        let err = (flat(&y) - &want).amax();
        assert!(err < 1e-9 * want.amax(), "preconditioner error {err}");

        let x: Vec<DVec3> = (0..n).map(|i| DVec3::new(1.0, (i as f64).cos(), -0.5)).collect();
        let mut q = vec![DVec3::ZERO; n];
        sim.mul(&x, &mut q);
        let want = dense(&sim) * flat(&x);
        let err = (flat(&q) - &want).amax();
        assert!(err < 1e-6 * want.amax(), "product error {err}");
    }

    /// The modified conjugate gradients reach the solution of the filtered system (a dense
    /// solve) to their tolerance, with the constrained components equal to the prescribed ones.
    #[test]
    fn modified_conjugate_gradients_solve_the_filtered_system() {
        let h = 1.0 / 48.0;
        let (mut sim, b, filter) = assembled(h);
        sim.params.cg_tolerance = 1e-8;
        sim.params.cg_max_iterations = 2000;
        let n = sim.x.len();
        let z: Vec<DVec3> = (0..n)
            .map(|i| match filter[i] {
                Filter::Fixed => DVec3::new(0.1, -0.2, 0.3),
                Filter::Plane(nrm) => 0.05 * nrm,
                Filter::Free => DVec3::ZERO,
            })
            .collect();
        let mut dv = vec![DVec3::ZERO; n];
        let its = sim.mcg(h, &b, &filter, &z, &mut dv);
        assert!(its < 2000);
        // Dense: Δv = z + y with (S A S + I − S) y = S (b − A z).
        let a = dense(&sim);
        let s_blocks: Vec<_> = filter.iter().map(|f| projector(*f)).collect();
        let mut rhs = flat(&b) - &a * flat(&z);
        for (i, s) in s_blocks.iter().enumerate() {
            let part: nalgebra::Vector3<f64> = rhs.fixed_rows::<3>(3 * i).into();
            rhs.fixed_rows_mut::<3>(3 * i).copy_from(&(s * part));
        }
        let full = dense_filtered(&sim, &filter, |_, _| true);
        let want = full.lu().solve(&rhs).unwrap() + flat(&z);
        let err = (flat(&dv) - &want).amax();
        assert!(err < 1e-5 * want.amax(), "MCG error {err} of {}", want.amax());
        for i in 0..n {
            let off = dv[i] - z[i];
            assert!(
                (off - filter[i].apply(off)).length() < 1e-12,
                "vertex {i} left its constraint"
            );
        }
    }
}
