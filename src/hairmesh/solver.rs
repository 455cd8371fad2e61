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

use glam::{DMat3, DVec3, Mat3, Vec3};
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

/// A triangle of a side or layer face, its vertices in increasing order (the rest
/// coefficients in the same order), so its local block `(a, b)` with `a ≤ b` is a block of the
/// matrix's upper triangle.
struct Tri {
    v: [u32; 3],
    rest: TriRest,
    /// Stiffness: stretch along u, stretch along v, shear.
    k: [f64; 3],
    /// Upper-triangle slots of the blocks (0,0) (0,1) (0,2) (1,1) (1,2) (2,2).
    slots: [u32; 6],
}

/// A condition on 4 vertices: a dihedral hinge or a corner tet.
struct Quad4 {
    /// The vertices in the condition's own order.
    v: [u32; 4],
    /// Rest angle or rest volume.
    rest: f64,
    k: f64,
    /// Positions in `v` of the vertices in increasing order.
    order: [u8; 4],
    /// Upper-triangle slots of the blocks `(p, q)`, `p ≤ q`, of the sorted vertices, row by row.
    slots: [u32; 10],
}

impl Tri {
    /// The triangle `v` with its rest data, reordered so its vertices increase.
    fn new(v: [u32; 3], rest: TriRest, k: [f64; 3]) -> Tri {
        let mut order = [0usize, 1, 2];
        order.sort_by_key(|&a| v[a]);
        Tri {
            v: order.map(|a| v[a]),
            rest: TriRest {
                alpha: order.map(|a| rest.alpha[a]),
                beta: order.map(|a| rest.beta[a]),
                area: rest.area,
            },
            k,
            slots: [0; 6],
        }
    }
}

impl Quad4 {
    fn new(v: [u32; 4], rest: f64, k: f64) -> Quad4 {
        let mut order = [0u8, 1, 2, 3];
        order.sort_by_key(|&a| v[a as usize]);
        Quad4 {
            v,
            rest,
            k,
            order,
            slots: [0; 10],
        }
    }

    /// The vertices in increasing order.
    fn sorted(&self) -> [u32; 4] {
        self.order.map(|a| self.v[a as usize])
    }
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
    /// The upper triangle (diagonal included) of the symmetric system matrix as n × n blocks
    /// of 3 × 3 in single precision (block compressed rows, columns sorted, the diagonal block
    /// first in its row), its pattern fixed at set-up; element slots index its values. The
    /// solve's tolerance is far above their rounding; forces and right-hand side are double.
    a: CsrMatrix<Mat3>,
    diag_slot: Vec<u32>,
    /// Per vertex: the slot of its block coupling to the next vertex up its column.
    up_slot: Vec<u32>,
    /// The matrix's block columns again as u32, for the solver's products.
    block_col: Vec<u32>,
    laplacian: CsrMatrix<f64>,
    edges_degree: Vec<f64>,
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
                        tets.push(Quad4::new(*t, v0, params.volume / v0));
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
                    tris.push(Tri::new(t, r, [k[0] * s, k[1] * s, k[2] * s]));
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
                        tris.push(Tri::new(t, r, layer_k.map(|k| k * s)));
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
                    hinges.push(Quad4::new(q, theta, 0.5 * params.bend * 6.0 * e / heights));
                }
            }
        }

        // Elements in the order of their vertices (column by column), so the assembly walks
        // the matrix nearly in order instead of jumping across it.
        tris.sort_by_key(|t| t.v.iter().min().copied());
        hinges.sort_by_key(|q| q.v.iter().min().copied());
        tets.sort_by_key(|q| q.v.iter().min().copied());

        // The matrix pattern: the upper triangle (j ≥ i) of every pair of vertices sharing an
        // element, block by block; the diagonal is each row's first block.
        let mut neighbours: Vec<Vec<u32>> = (0..n as u32).map(|i| vec![i]).collect();
        let mut link = |vs: &[u32]| {
            for &i in vs {
                for &j in vs {
                    if j > i {
                        neighbours[i as usize].push(j);
                    }
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
        let a = CsrMatrix::try_from_pattern_and_values(pattern, vec![Mat3::ZERO; nnz])
            .map_err(|e| Error::Runtime(format!("hair mesh matrix: {e}")))?;
        // The slot of block (i, j), i ≤ j.
        let slot = |i: u32, j: u32| -> u32 {
            let nb = &neighbours[i as usize];
            (row_start[i as usize] + nb.binary_search(&j).expect("pattern holds every element pair")) as u32
        };
        for t in &mut tris {
            let mut s = 0;
            for a_ in 0..3 {
                for b_ in a_..3 {
                    t.slots[s] = slot(t.v[a_], t.v[b_]);
                    s += 1;
                }
            }
        }
        for q in hinges.iter_mut().chain(tets.iter_mut()) {
            let v = q.sorted();
            let mut s = 0;
            for a_ in 0..4 {
                for b_ in a_..4 {
                    q.slots[s] = slot(v[a_], v[b_]);
                    s += 1;
                }
            }
        }
        let diag_slot = (0..n as u32).map(|i| slot(i, i)).collect();
        let up_slot: Vec<u32> = (0..n as u32)
            .map(|i| {
                if mesh.layer_of(i as usize) + 1 < mesh.layers {
                    slot(i, i + 1)
                } else {
                    u32::MAX
                }
            })
            .collect();
        // Within a column only neighbouring layers share an element (the column solve's
        // tridiagonal part); every later block of a row couples another column.
        // (The sweeps rely on it: see `off_column`.)
        let layers = mesh.layers as u32;
        for (i, nb) in neighbours.iter().enumerate() {
            let i = i as u32;
            let same = nb.iter().filter(|&&j| j / layers == i / layers).count();
            let tri = 1 + usize::from(up_slot[i as usize] != u32::MAX);
            if same != tri {
                return Err(Error::Invalid(format!(
                    "hair mesh vertex {i} shares an element with a vertex of its own column two or more layers away"
                )));
            }
        }

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
            a,
            laplacian,
            edges_degree: degree,
            contacts: vec![None; n],
            prev_dv: std::array::from_fn(|_| vec![DVec3::ZERO; n]),
            solves: 0,
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

    /// Assembles `A` (its upper triangle) and `b` of the implicit step.
    fn assemble(&mut self, h: f64, b: &mut [DVec3]) {
        let p = &self.params;
        let values = self.a.values_mut();
        values.fill(Mat3::ZERO);
        let g = DVec3::new(0.0, -p.gravity, 0.0);
        for (i, bi) in b.iter_mut().enumerate() {
            let m = self.mass[i];
            *bi = m * g - p.drag * m * self.v[i];
            values[self.diag_slot[i] as usize] +=
                Mat3::from_diagonal(Vec3::splat((m * (1.0 + h * p.drag)) as f32));
        }
        let (x, v) = (&self.x, &self.v);
        for t in &self.tris {
            assemble_tri(t, x, v, h, p.damping, values, b);
        }
        for q in &self.hinges {
            let xs = q.v.map(|i| x[i as usize]);
            if let Some((theta, grad)) = dihedral(&xs) {
                assemble_rank_one(q, angle_diff(theta, q.rest), &grad, v, h, p.damping, values, b);
            }
        }
        for q in &self.tets {
            let (vol, grad) = tet_volume(&q.v.map(|i| x[i as usize]));
            assemble_rank_one(q, vol - q.rest, &grad, v, h, p.damping, values, b);
        }
        for bi in b.iter_mut() {
            *bi *= h;
        }
    }

    /// `y = A x` on 3-vectors, from the upper triangle (each off-diagonal block serves its row
    /// and, transposed, its column), with single-precision blocks and double-precision sums.
    fn mul(&self, x: &[DVec3], y: &mut [DVec3]) {
        let offsets = self.a.row_offsets();
        let blocks = self.a.values();
        y.fill(DVec3::ZERO);
        for i in 0..x.len() {
            let (start, end) = (offsets[i], offsets[i + 1]);
            let xi = x[i];
            let d = &blocks[start];
            let mut acc = y[i] + mat_vec(d, xi);
            for (m, &j) in blocks[start + 1..end].iter().zip(&self.block_col[start + 1..end]) {
                let j = j as usize;
                let (c0, c1, c2) = (m.x_axis.as_dvec3(), m.y_axis.as_dvec3(), m.z_axis.as_dvec3());
                let xj = x[j];
                acc += c0 * xj.x + c1 * xj.y + c2 * xj.z;
                y[j] += DVec3::new(c0.dot(xi), c1.dot(xi), c2.dot(xi));
            }
            y[i] = acc;
        }
    }

    /// The block `(i, j)` of the matrix (either triangle), in double precision.
    #[cfg(test)]
    fn block(&self, i: usize, j: usize) -> DMat3 {
        let (r, c) = (i.min(j), i.max(j));
        let row = self.a.row(r);
        match row.col_indices().binary_search(&c) {
            Ok(k) => {
                let m = row.values()[k].as_dmat3();
                if i <= j { m } else { m.transpose() }
            }
            Err(_) => DMat3::ZERO,
        }
    }

    /// The Modified Conjugate Gradient method (Baraff & Witkin §5.3): solves `A Δv = b` with
    /// `Δv = z` in the constrained directions, i.e. `Δv = z + y` with
    /// `A′ y = S (b − A z)`, `A′ = S A S + (I − S)` (`S` the filters' projections). Preconditioned
    /// by symmetric block Gauss–Seidel over the mesh's columns, `M = P D⁻¹ Pᵀ` with `A′ = L + D + Lᵀ`,
    /// `D` the columns' block-tridiagonal parts (solved exactly) and `P = D + L`, applied with
    /// Eisenstat's trick: conjugate gradients on `P⁻¹ A′ P⁻ᵀ ŷ = P⁻¹ r₀` with preconditioner `D`,
    /// whose product is `t + P⁻¹ (p − D t)`, `t = P⁻ᵀ p` (since `A′ = P + Pᵀ − D`), one sweep each
    /// way: the cost of one product with `A` per iteration, and about 2.5× fewer iterations than
    /// the column preconditioner alone. `rᵀ M⁻¹ r = r̂ᵀ D r̂` (`r = P r̂`), so the stopping rule is
    /// the preconditioned residual's. Returns the iterations.
    #[allow(clippy::needless_range_loop)] // i indexes several vectors
    fn mcg(&self, h: f64, b: &[DVec3], filter: &[Filter], z: &[DVec3], dv: &mut [DVec3]) -> usize {
        let n = b.len();
        let pre = ColumnPreconditioner::new(self, filter);
        let mut acc = vec![DVec3::ZERO; n];
        // Warm start: in the free directions, the last steps' changes extrapolated (quadratic
        // once there are three: smooth motion changes them smoothly; this takes 25 to 16
        // iterations on the bench's walk), the prescribed change in the constrained ones.
        let [p1, p2, p3] = &self.prev_dv;
        for i in 0..n {
            let guess = match self.solves {
                0 => DVec3::ZERO,
                1 => p1[i],
                2 => 2.0 * p1[i] - p2[i],
                _ => 3.0 * (p1[i] - p2[i]) + p3[i],
            };
            dv[i] = z[i] + filter[i].apply(guess);
        }
        let dot = |a: &[DVec3], b: &[DVec3]| -> f64 { a.iter().zip(b).map(|(p, q)| p.dot(*q)).sum() };
        // ‖v‖² in M⁻¹: with v̂ = P⁻¹ v, v̂ᵀ D v̂.
        let mut t = vec![DVec3::ZERO; n];
        let mut u = vec![DVec3::ZERO; n];
        let norm = |v: &[DVec3], t: &mut [DVec3], u: &mut [DVec3], acc: &mut [DVec3]| -> f64 {
            self.forward(&pre, filter, v, t, acc);
            pre.mul_d(t, u);
            dot(t, u)
        };
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
        let gravity = norm(&weight, &mut t, &mut u, &mut acc);
        let fb: Vec<DVec3> = b.iter().zip(filter).map(|(v, f)| f.apply(*v)).collect();
        let delta0 = norm(&fb, &mut t, &mut u, &mut acc).max(gravity);
        let tol = self.params.cg_tolerance * self.params.cg_tolerance * delta0;

        // r̂ = P⁻¹ S (b − A Δv₀); the correction ŷ starts at zero.
        let mut q = vec![DVec3::ZERO; n];
        self.mul(dv, &mut q);
        let r0: Vec<DVec3> = (0..n).map(|i| filter[i].apply(b[i] - q[i])).collect();
        let mut r = vec![DVec3::ZERO; n];
        self.forward(&pre, filter, &r0, &mut r, &mut acc);
        let mut s = vec![DVec3::ZERO; n];
        pre.mul_d(&r, &mut s);
        let mut c = s.clone();
        let mut y = vec![DVec3::ZERO; n];
        let mut delta = dot(&r, &s);
        let mut it = 0;
        while delta > tol && it < self.params.cg_max_iterations {
            // q = P⁻¹ A′ P⁻ᵀ c = t + P⁻¹ (c − D t), t = P⁻ᵀ c.
            self.backward(&pre, filter, &c, &mut t, &mut acc);
            pre.mul_d(&t, &mut u);
            for i in 0..n {
                u[i] = c[i] - u[i];
            }
            self.forward(&pre, filter, &u, &mut q, &mut acc);
            for i in 0..n {
                q[i] += t[i];
            }
            let cq = dot(&c, &q);
            if cq.is_nan() || cq <= 0.0 {
                break;
            }
            let alpha = delta / cq;
            for i in 0..n {
                y[i] += alpha * c[i];
                r[i] -= alpha * q[i];
            }
            pre.mul_d(&r, &mut s);
            let new_delta = dot(&r, &s);
            let beta = new_delta / delta;
            delta = new_delta;
            for i in 0..n {
                c[i] = s[i] + beta * c[i];
            }
            it += 1;
        }
        // Δv = Δv₀ + P⁻ᵀ ŷ.
        self.backward(&pre, filter, &y, &mut t, &mut acc);
        for i in 0..n {
            dv[i] += t[i];
        }
        it
    }

    /// The step solved exactly bundle by bundle ([`super::bundles`]): `Δv = z + y` with
    /// `(S A S + I − S) y = S (b − A z)`, the system the modified conjugate gradients solve.
    /// `false` (nothing done) for meshes with large bundles or a matrix that is not positive
    /// definite.
    fn solve_bundles(&mut self, b: &[DVec3], filter: &[Filter], z: &[DVec3], dv: &mut [DVec3]) -> bool {
        let Some(mut solver) = self.bundles.take() else {
            return false;
        };
        let n = b.len();
        let mut q = vec![DVec3::ZERO; n];
        self.mul(z, &mut q);
        let rhs: Vec<DVec3> = (0..n).map(|i| filter[i].apply(b[i] - q[i])).collect();
        let s: Vec<DMat3> = filter.iter().map(|f| projector(*f)).collect();
        let ok = solver.solve(&self.a, &s, &rhs, dv);
        self.bundles = Some(solver);
        if ok {
            for i in 0..n {
                dv[i] = z[i] + filter[i].apply(dv[i]);
            }
        }
        ok
    }

    /// The slots of row `i` coupling other columns: all after the diagonal and, where there is
    /// one, the block of the next vertex up (set-up checks that no other block of the row is in
    /// its column).
    #[inline(always)]
    fn off_column(&self, i: usize) -> std::ops::Range<usize> {
        let start = match self.up_slot[i] {
            u32::MAX => self.a.row_offsets()[i] + 1,
            up => up as usize + 1,
        };
        start..self.a.row_offsets()[i + 1]
    }

    /// `t = (D + L)⁻¹ v` on the filtered system: column by column from the first, each solved
    /// exactly and then pushing its coupling to the later columns (the upper blocks of its rows,
    /// transposed). `acc` is scratch.
    fn forward(
        &self,
        pre: &ColumnPreconditioner,
        filter: &[Filter],
        v: &[DVec3],
        t: &mut [DVec3],
        acc: &mut [DVec3],
    ) {
        let layers = self.mesh.layers;
        let blocks = self.a.values();
        acc.fill(DVec3::ZERO);
        for (c, range) in (0..v.len()).step_by(layers).map(|s| s..s + layers).enumerate() {
            for i in range.clone() {
                acc[i] = v[i] - filter[i].apply(acc[i]);
            }
            pre.solve_column(c, &acc[range.clone()], &mut t[range.clone()]);
            for i in range {
                let ti = filter[i].apply(t[i]);
                t[i] = ti;
                let r = self.off_column(i);
                for (m, &j) in blocks[r.clone()].iter().zip(&self.block_col[r]) {
                    acc[j as usize] += mat_t_vec(m, ti);
                }
            }
        }
    }

    /// `t = (D + U)⁻¹ v` on the filtered system: column by column from the last, each row
    /// gathering its coupling to the later (already solved) columns first.
    fn backward(
        &self,
        pre: &ColumnPreconditioner,
        filter: &[Filter],
        v: &[DVec3],
        t: &mut [DVec3],
        acc: &mut [DVec3],
    ) {
        let layers = self.mesh.layers;
        let blocks = self.a.values();
        let columns = v.len() / layers;
        for c in (0..columns).rev() {
            let range = c * layers..(c + 1) * layers;
            for i in range.clone() {
                let r = self.off_column(i);
                let mut s = DVec3::ZERO;
                for (m, &j) in blocks[r.clone()].iter().zip(&self.block_col[r]) {
                    s += mat_vec(m, t[j as usize]);
                }
                acc[i] = v[i] - filter[i].apply(s);
            }
            pre.solve_column(c, &acc[range.clone()], &mut t[range.clone()]);
            for i in range {
                t[i] = filter[i].apply(t[i]);
            }
        }
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
        let assembled = clock.elapsed().as_secs_f64();
        let mut dv = vec![DVec3::ZERO; n];
        if !self.solve_bundles(&b, &filter, &z, &mut dv) {
            stats.cg_iterations += self.mcg(h, &b, &filter, &z, &mut dv);
        }
        self.prev_dv.rotate_right(1);
        self.prev_dv[0].copy_from_slice(&dv);
        self.solves += 1;
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

/// The projection of a filter: `I`, `I − n nᵀ` or `0`.
fn projector(f: Filter) -> DMat3 {
    match f {
        Filter::Free => DMat3::IDENTITY,
        Filter::Plane(nrm) => DMat3::IDENTITY - DMat3::from_cols(nrm * nrm.x, nrm * nrm.y, nrm * nrm.z),
        Filter::Fixed => DMat3::ZERO,
    }
}

/// `m x` with a single-precision block and double-precision sums.
#[inline]
fn mat_vec(m: &Mat3, x: DVec3) -> DVec3 {
    m.x_axis.as_dvec3() * x.x + m.y_axis.as_dvec3() * x.y + m.z_axis.as_dvec3() * x.z
}

/// `mᵀ x` with a single-precision block and double-precision sums.
#[inline]
fn mat_t_vec(m: &Mat3, x: DVec3) -> DVec3 {
    DVec3::new(
        m.x_axis.as_dvec3().dot(x),
        m.y_axis.as_dvec3().dot(x),
        m.z_axis.as_dvec3().dot(x),
    )
}

/// `a bᵀ` in single precision.
#[inline]
fn outer(a: Vec3, b: Vec3) -> Mat3 {
    Mat3::from_cols(a * b.x, a * b.y, a * b.z)
}

/// One condition's share of the implicit step (Baraff & Witkin Eq. 16): with stiffness `k` and
/// damping `k_d = damping · k`, `f = −(k C + (k_d + h k) Ċ) ∇C` (the last term is `−h K v₀`) and
/// `A += (h k_d + h² k) ∇C ∇Cᵀ`. Returns the force's scale `k C + (k_d + h k) Ċ` and the
/// matrix coefficient `h k_d + h² k`, given `C`, `Ċ = ∇C · v`.
#[inline]
fn condition(c: f64, cdot: f64, k: f64, h: f64, damping: f64) -> (f64, f64) {
    let kd = damping * k;
    (k * c + (kd + h * k) * cdot, h * kd + h * h * k)
}

/// A rank-one condition on four vertices (a hinge or a tet): forces into `b`, its blocks
/// `s ∇C_p ∇C_qᵀ` into the upper triangle.
#[allow(clippy::too_many_arguments)]
#[inline]
fn assemble_rank_one(
    q: &Quad4,
    c: f64,
    grad: &[DVec3; 4],
    v: &[DVec3],
    h: f64,
    damping: f64,
    values: &mut [Mat3],
    b: &mut [DVec3],
) {
    let cdot: f64 = q.v.iter().zip(grad).map(|(&i, g)| g.dot(v[i as usize])).sum();
    let (scale, s) = condition(c, cdot, q.k, h, damping);
    for (&i, g) in q.v.iter().zip(grad) {
        b[i as usize] -= scale * *g;
    }
    let gs = q.order.map(|a| grad[a as usize].as_vec3());
    let s = s as f32;
    let mut k = 0;
    for p_ in 0..4 {
        // Diagonal blocks as (g gᵀ) s, exactly symmetric.
        values[q.slots[k] as usize] += outer(gs[p_], gs[p_]) * s;
        k += 1;
        let sp = s * gs[p_];
        for g in &gs[p_ + 1..] {
            values[q.slots[k] as usize] += outer(sp, *g);
            k += 1;
        }
    }
}

/// A triangle's stretch (along u and v) and shear conditions (Baraff & Witkin §4.2–4.3) at
/// once. With `w_u = Σ αᵢxᵢ`, `w_v = Σ βᵢxᵢ`, the gradients are `a αᵢ ŵ_u`, `a βᵢ ŵ_v` and
/// `a (αᵢ w_v + βᵢ w_u)`, so every block is `αₐα_b M_αα + β_aβ_b M_ββ + α_aβ_b M_αβ + β_aα_b M_αβᵀ`
/// with three 3 × 3 matrices per triangle; a stretched direction adds the positive part of its
/// Hessian, `k C a αₐα_b (I − ŵŵᵀ)/‖w‖`.
#[inline]
fn assemble_tri(
    t: &Tri,
    x: &[DVec3],
    v: &[DVec3],
    h: f64,
    damping: f64,
    values: &mut [Mat3],
    b: &mut [DVec3],
) {
    let r = &t.rest;
    let (al, be, a) = (r.alpha, r.beta, r.area);
    let xs = t.v.map(|i| x[i as usize]);
    let vs = t.v.map(|i| v[i as usize]);
    let wu = al[0] * xs[0] + al[1] * xs[1] + al[2] * xs[2];
    let wv = be[0] * xs[0] + be[1] * xs[1] + be[2] * xs[2];
    let vu = al[0] * vs[0] + al[1] * vs[1] + al[2] * vs[2];
    let vv = be[0] * vs[0] + be[1] * vs[1] + be[2] * vs[2];
    // Forces: bᵢ −= αᵢ f_u + βᵢ f_v.
    let mut f = [DVec3::ZERO; 2];
    let mut m = [Mat3::ZERO; 2];
    for (dir, (w, vel)) in [(wu, vu), (wv, vv)].into_iter().enumerate() {
        let len = w.length();
        if len.is_nan() || len <= 1e-8 {
            continue;
        }
        let k = t.k[dir];
        let wh = w / len;
        let c = a * (len - 1.0);
        let (scale, s) = condition(c, a * wh.dot(vel), k, h, damping);
        f[dir] += (scale * a) * wh;
        let whf = wh.as_vec3();
        let ww = outer(whf, whf);
        m[dir] += ww * (s * a * a) as f32;
        if len > 1.0 {
            let s = k * c * a / len;
            f[dir] += (h * s) * (vel - vel.dot(wh) * wh);
            m[dir] += (Mat3::IDENTITY - ww) * (h * h * s) as f32;
        }
    }
    let (scale, s) = condition(a * wu.dot(wv), a * (wv.dot(vu) + wu.dot(vv)), t.k[2], h, damping);
    f[0] += (scale * a) * wv;
    f[1] += (scale * a) * wu;
    let (wuf, wvf) = (wu.as_vec3(), wv.as_vec3());
    let s = (s * a * a) as f32;
    m[0] += outer(wvf, wvf) * s;
    m[1] += outer(wuf, wuf) * s;
    let mab = outer(wvf * s, wuf);
    for i in 0..3 {
        b[t.v[i] as usize] -= al[i] * f[0] + be[i] * f[1];
    }
    let (alf, bef) = (al.map(|c| c as f32), be.map(|c| c as f32));
    let mab_t = mab.transpose();
    // Diagonal blocks with M_αβ + M_αβᵀ summed first, exactly symmetric.
    let mab_sym = mab + mab_t;
    let mut k = 0;
    for p_ in 0..3 {
        values[t.slots[k] as usize] +=
            m[0] * (alf[p_] * alf[p_]) + m[1] * (bef[p_] * bef[p_]) + mab_sym * (alf[p_] * bef[p_]);
        k += 1;
        for q_ in p_ + 1..3 {
            values[t.slots[k] as usize] += m[0] * (alf[p_] * alf[q_])
                + m[1] * (bef[p_] * bef[q_])
                + mab * (alf[p_] * bef[q_])
                + mab_t * (bef[p_] * alf[q_]);
            k += 1;
        }
    }
}

/// The MCG's preconditioner: the block-tridiagonal part of the filtered system
/// `S A S + (I − S)` along each column of the mesh (a vertex and its neighbours up and down the
/// same column), factored exactly column by column. The stiff along-the-hair coupling lives
/// there, which a per-vertex (block-Jacobi) preconditioner leaves to the iterations.
struct ColumnPreconditioner {
    layers: usize,
    /// Per vertex, the column factorization (one cache line run per vertex).
    factor: Vec<ColumnFactor>,
    /// Per vertex: its filtered block coupling to the next vertex up (zero at the top).
    up: Vec<DMat3>,
    /// Per vertex: its filtered diagonal block.
    diag: Vec<DMat3>,
}

/// One vertex's share of its column's block LDU factorization.
#[derive(Clone, Copy, Default)]
struct ColumnFactor {
    /// `upᵀ inv_d` of the vertex below (the forward-elimination factor).
    low: DMat3,
    /// The inverse of its block after elimination of the vertices below it.
    inv_d: DMat3,
    /// `inv_d up`: back substitution `yₗ = inv_d y′ₗ − g yₗ₊₁` has one product on its chain.
    g: DMat3,
}

impl ColumnPreconditioner {
    fn new(sim: &HairMeshSim, filter: &[Filter]) -> ColumnPreconditioner {
        let n = filter.len();
        let layers = sim.mesh.layers;
        let vals = sim.a.values();
        let mut factor = vec![ColumnFactor::default(); n];
        let mut up = vec![DMat3::ZERO; n];
        let mut diag = vec![DMat3::ZERO; n];
        for i in 0..n {
            let si = projector(filter[i]);
            let mut d = si * vals[sim.diag_slot[i] as usize].as_dmat3() * si + (DMat3::IDENTITY - si);
            diag[i] = d;
            if i % layers > 0 {
                let low = up[i - 1].transpose() * factor[i - 1].inv_d;
                d -= low * up[i - 1];
                factor[i].low = low;
            }
            if i % layers + 1 < layers {
                up[i] = si * vals[sim.up_slot[i] as usize].as_dmat3() * projector(filter[i + 1]);
            }
            let inv = d.inverse();
            let inv_d = if inv.is_finite() {
                inv
            } else {
                DMat3::from_diagonal(
                    DVec3::new(d.x_axis.x, d.y_axis.y, d.z_axis.z)
                        .map(|x| if x > 0.0 { 1.0 / x } else { 0.0 }),
                )
            };
            factor[i].inv_d = inv_d;
            factor[i].g = inv_d * up[i];
        }
        ColumnPreconditioner {
            layers,
            factor,
            up,
            diag,
        }
    }

    /// `y = P⁻¹ r`: forward elimination up each column, back substitution down.
    #[cfg(test)]
    fn apply(&self, r: &[DVec3], y: &mut [DVec3]) {
        let layers = self.layers;
        for (c, (rc, yc)) in r.chunks(layers).zip(y.chunks_mut(layers)).enumerate() {
            self.solve_column(c, rc, yc);
        }
    }

    /// The exact solve of column `c`'s block-tridiagonal part.
    #[inline]
    fn solve_column(&self, c: usize, rc: &[DVec3], yc: &mut [DVec3]) {
        let layers = self.layers;
        let f = &self.factor[c * layers..(c + 1) * layers];
        let (rc, yc) = (&rc[..layers], &mut yc[..layers]);
        let mut y = rc[0];
        yc[0] = y;
        for l in 1..layers {
            y = rc[l] - f[l].low * y;
            yc[l] = y;
        }
        let mut y = f[layers - 1].inv_d * yc[layers - 1];
        yc[layers - 1] = y;
        for l in (0..layers - 1).rev() {
            y = f[l].inv_d * yc[l] - f[l].g * y;
            yc[l] = y;
        }
    }

    /// `y = D v`, `D` the columns' filtered block-tridiagonal parts.
    fn mul_d(&self, v: &[DVec3], y: &mut [DVec3]) {
        let layers = self.layers;
        for i in 0..v.len() {
            let l = i % layers;
            let mut w = self.diag[i] * v[i];
            if l + 1 < layers {
                w += self.up[i] * v[i + 1];
            }
            if l > 0 {
                w += self.up[i - 1].transpose() * v[i - 1];
            }
            y[i] = w;
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
        let filter = test_filters(&sim);
        (sim, b, filter)
    }

    /// The assembled block matrix as a dense 3n × 3n matrix (both triangles).
    fn dense(sim: &HairMeshSim) -> nalgebra::DMatrix<f64> {
        let n = sim.x.len();
        let mut out = nalgebra::DMatrix::zeros(3 * n, 3 * n);
        for i in 0..n {
            for j in 0..n {
                let m = sim.block(i, j);
                for (c, col) in m.to_cols_array_2d().iter().enumerate() {
                    for (r, v) in col.iter().enumerate() {
                        out[(3 * i + r, 3 * j + c)] = *v;
                    }
                }
            }
        }
        out
    }

    /// The matrix and right-hand side equal Baraff & Witkin Eq. 16 written out condition by
    /// condition (every gradient from the force kernels, `(h k_d + h² k) ∇C ∇Cᵀ` as dense
    /// outer products, the stretched triangles' Hessian part), at a deformed state with moving
    /// vertices: checks the triangles' three-matrix form, the sorted upper-triangle scatter
    /// and the velocity terms the finite-difference test (at rest) does not see.
    #[test]
    fn assembly_equals_the_implicit_step_written_out() {
        let mut sim = deformed(0.3);
        let n = sim.x.len();
        for (i, v) in sim.v.iter_mut().enumerate() {
            let i = i as f64;
            *v = DVec3::new((0.9 * i).cos(), (0.4 * i).sin(), (1.3 * i).cos()) * 5.0;
        }
        let h = 1.0 / 48.0;
        let mut b = vec![DVec3::ZERO; n];
        sim.assemble(h, &mut b);
        let p = sim.params.clone();
        let (x, v) = (&sim.x, &sim.v);
        let mut a = nalgebra::DMatrix::<f64>::zeros(3 * n, 3 * n);
        let mut f = vec![DVec3::ZERO; n];
        let add = |vs: &[u32],
                   c: f64,
                   grad: &[DVec3],
                   k: f64,
                   f: &mut Vec<DVec3>,
                   a: &mut nalgebra::DMatrix<f64>| {
            let kd = p.damping * k;
            let cdot: f64 = vs.iter().zip(grad).map(|(&i, g)| g.dot(v[i as usize])).sum();
            for (&i, g) in vs.iter().zip(grad) {
                f[i as usize] -= (k * c + (kd + h * k) * cdot) * *g;
            }
            for (&i, gi) in vs.iter().zip(grad) {
                for (&j, gj) in vs.iter().zip(grad) {
                    for r in 0..3 {
                        for col in 0..3 {
                            a[(3 * i as usize + r, 3 * j as usize + col)] +=
                                (h * kd + h * h * k) * gi[r] * gj[col];
                        }
                    }
                }
            }
        };
        for i in 0..n {
            let m = sim.mass[i];
            f[i] = m * DVec3::new(0.0, -p.gravity, 0.0) - p.drag * m * v[i];
            for r in 0..3 {
                a[(3 * i + r, 3 * i + r)] += m * (1.0 + h * p.drag);
            }
        }
        let mut stretched = 0;
        for t in &sim.tris {
            let xs = t.v.map(|i| x[i as usize]);
            for dir in 0..2 {
                let Some((c, grad, wh, len)) = t.rest.stretch(&xs, dir) else {
                    continue;
                };
                add(&t.v, c, &grad, t.k[dir], &mut f, &mut a);
                if len > 1.0 {
                    stretched += 1;
                    let co = if dir == 0 { t.rest.alpha } else { t.rest.beta };
                    let s = t.k[dir] * c * t.rest.area / len;
                    let vel: DVec3 = (0..3).map(|j| co[j] * v[t.v[j] as usize]).sum();
                    let pv = vel - vel.dot(wh) * wh;
                    for i in 0..3 {
                        f[t.v[i] as usize] -= h * s * co[i] * pv;
                        for j in 0..3 {
                            for r in 0..3 {
                                for col in 0..3 {
                                    let proj = if r == col { 1.0 } else { 0.0 } - wh[r] * wh[col];
                                    a[(3 * t.v[i] as usize + r, 3 * t.v[j] as usize + col)] +=
                                        h * h * s * co[i] * co[j] * proj;
                                }
                            }
                        }
                    }
                }
            }
            let (c, grad) = t.rest.shear(&xs);
            add(&t.v, c, &grad, t.k[2], &mut f, &mut a);
        }
        assert!(stretched > 0, "some triangles are stretched");
        for q in &sim.hinges {
            let Some((theta, grad)) = dihedral(&q.v.map(|i| x[i as usize])) else {
                continue;
            };
            add(&q.v, angle_diff(theta, q.rest), &grad, q.k, &mut f, &mut a);
        }
        for q in &sim.tets {
            let (vol, grad) = tet_volume(&q.v.map(|i| x[i as usize]));
            add(&q.v, vol - q.rest, &grad, q.k, &mut f, &mut a);
        }
        let got = dense(&sim);
        let err = (&got - &a).amax();
        // The blocks are single precision.
        assert!(err < 1e-6 * a.amax(), "matrix error {err} of {}", a.amax());
        let largest = f.iter().map(|g| g.abs().max_element()).fold(0.0, f64::max);
        for (bi, fi) in b.iter().zip(&f) {
            assert!(
                (*bi - h * *fi).abs().max_element() < 1e-9 * h * largest,
                "{bi} vs {}",
                h * *fi
            );
        }
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
        solves_the_filtered_system("MCG", 1e-5, |sim, h, b, filter, z, dv| {
            sim.params.cg_tolerance = 1e-8;
            sim.params.cg_max_iterations = 2000;
            assert!(sim.mcg(h, b, filter, z, dv) < 2000);
        });
    }

    /// A mesh of small bundles is solved directly (banded Cholesky per bundle), to the same
    /// filtered system; a wide sheet is not.
    #[test]
    fn small_bundles_are_solved_directly_to_the_filtered_system() {
        solves_the_filtered_system("bundles", 1e-9, |sim, _, b, filter, z, dv| {
            assert!(
                sim.solve_bundles(b, filter, z, dv),
                "the 3 × 3-column test mesh is direct"
            );
        });
        let wide = HairMesh::procedural(&ProceduralMesh {
            columns_u: 4,
            columns_v: 4,
            ..Default::default()
        })
        .unwrap();
        let sim = HairMeshSim::new(wide, HairMeshParams::default(), None, 0.0).unwrap();
        assert!(
            sim.bundles.is_none(),
            "16 columns in one bundle: conjugate gradients"
        );
    }

    /// `solve` gives Δv = z + y with (S A S + I − S) y = S (b − A z) (a dense LU solve) within
    /// `tol` relative, the constrained components as prescribed.
    fn solves_the_filtered_system(
        name: &str,
        tol: f64,
        solve: impl Fn(&mut HairMeshSim, f64, &[DVec3], &[Filter], &[DVec3], &mut [DVec3]),
    ) {
        let h = 1.0 / 48.0;
        let (mut sim, b, filter) = assembled(h);
        let n = sim.x.len();
        let z: Vec<DVec3> = (0..n)
            .map(|i| match filter[i] {
                Filter::Fixed => DVec3::new(0.1, -0.2, 0.3),
                Filter::Plane(nrm) => 0.05 * nrm,
                Filter::Free => DVec3::ZERO,
            })
            .collect();
        let mut dv = vec![DVec3::ZERO; n];
        solve(&mut sim, h, &b, &filter, &z, &mut dv);
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
        assert!(err < tol * want.amax(), "{name} error {err} of {}", want.amax());
        for i in 0..n {
            let off = dv[i] - z[i];
            assert!(
                (off - filter[i].apply(off)).length() < 1e-12,
                "{name}: vertex {i} left its constraint"
            );
        }
    }
}
