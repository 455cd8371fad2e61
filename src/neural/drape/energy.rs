//! The physics energy of the quasi-static drape (003 §3.5, Eq. 1 without the pose
//! regularization of Eq. 14, which needs several frames):
//!
//! - **modified Cosserat** (Eq. 6): `½ k_cos Σ_edges ‖(x_{i+1} − x_i)/l_i − d3_i‖²`, with `l_i` the
//!   rest length and `d3_i` the unit direction of the edge in the rigidly posed groom (a constant):
//!   each edge is held to its posed direction, which keeps curls and styling;
//! - **stretch** (Eq. 7): `½ k_stretch Σ_edges (‖x_{i+1} − x_i‖ − l_i)²`;
//! - **gravity** (Eq. 9): `Σ_vertices −m gᵀx = m|g| Σ y` (Y up), `m|g|` the material's `weight`;
//! - **body collision** (Eq. 10): `k_bc Σ_vertices max(D − d(x), 0)³`, `d` the signed distance to the
//!   body (tress's colliders);
//! - **self-collision** (Eq. 11–13): `k_sc Σ_vertices max(ρ(x) − ρ_rest, 0)³` with the SPH density
//!   `ρ(x_i) = Σ_{j≠i} W(‖x_i − x_j‖, h)` and Bando et al.'s kernel `W` (Eq. 13, without its 3-D
//!   normalisation, which only rescales ρ and ρ_rest). `ρ_rest` is each vertex's density in the
//!   posed rest groom, so the term is zero there (003 says "computed from the rest groom").
//!
//! The energy is written in burn tensor operations so the same code drives the direct
//! minimization baselines (003 §4.2) and, through autodiff, the network's training. What is not
//! differentiable by tensors is done on the CPU at the current positions and enters the graph
//! exactly to first order: the colliders' distance `d₀` and normal `n` at each vertex `x₀` give
//! `d(x) = d₀ + n·(x − x₀)` (value and gradient exact at `x₀`), and the SPH pairs are every pair
//! of vertices closer than `2h` at `x₀` (a uniform hash grid).
//!
//! 003 gives no stiffness values; [`DrapeMaterial`]'s defaults are tress's, in units where each
//! vertex weighs 1 (cm). The sum is divided by the number of strands so step sizes do not depend
//! on the groom's size (a global scale leaves the minimizer unchanged).

use burn::prelude::*;
use burn::tensor::IndexingUpdateOp;
use glam::Vec3;
use serde::{Deserialize, Serialize};

use crate::collide::Colliders;
use crate::grid::{Buckets, Lattice};
use crate::motion::Pose;

/// Stiffnesses and sizes of the drape energy (the artist's controls, 003 Fig. 11).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrapeMaterial {
    /// k_cos of Eq. 6: how strongly each edge keeps its styled direction.
    pub cosserat: f64,
    /// k_stretch of Eq. 7 (per cm²).
    pub stretch: f64,
    /// m|g| of Eq. 9: each vertex's weight.
    pub weight: f64,
    /// k_bc of Eq. 10.
    pub body: f64,
    /// D of Eq. 10: the distance kept from the body (cm).
    pub body_distance: f64,
    /// k_sc of Eq. 11.
    pub self_collision: f64,
    /// h of Eq. 13, the SPH smoothing length (cm); vertices interact within 2h.
    pub smoothing: f64,
}

impl Default for DrapeMaterial {
    fn default() -> Self {
        DrapeMaterial {
            cosserat: 100.0,
            stretch: 1.0e4,
            weight: 1.0,
            body: 1.0e4,
            body_distance: 0.3,
            self_collision: 0.5,
            smoothing: 0.5,
        }
    }
}

impl DrapeMaterial {
    /// Checks the values, naming the first bad key.
    pub fn check(&self) -> std::result::Result<(), String> {
        let values = [
            ("cosserat", self.cosserat),
            ("stretch", self.stretch),
            ("weight", self.weight),
            ("body", self.body),
            ("body_distance", self.body_distance),
            ("self_collision", self.self_collision),
            ("smoothing", self.smoothing),
        ];
        crate::presets::non_negative(&values)?;
        if self.smoothing < 1e-3 {
            return Err(format!(
                "smoothing = {}: must be at least 0.001 cm",
                self.smoothing
            ));
        }
        Ok(())
    }
}

/// Bando et al.'s kernel (003 Eq. 13) without its normalisation: 4 at 0, 1 at h, 0 from 2h.
pub fn kernel(r: f32, h: f32) -> f32 {
    let q = r / h;
    if q <= 1.0 {
        4.0 - 6.0 * q * q + 3.0 * q * q * q
    } else if q < 2.0 {
        (2.0 - q).powi(3)
    } else {
        0.0
    }
}

/// Every pair `(i, j)`, `i < j`, of points closer than `radius`, in a fixed order (by `i`, then
/// `j`), found with a uniform grid of cells at least `radius` wide (points sorted by cell).
pub fn pairs_within(x: &[Vec3], radius: f32) -> (Vec<i64>, Vec<i64>) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    if x.is_empty() || radius.is_nan() || radius <= 0.0 {
        return (a, b);
    }
    let lo = x.iter().fold(Vec3::INFINITY, |m, p| m.min(*p));
    let hi = x.iter().fold(Vec3::NEG_INFINITY, |m, p| m.max(*p));
    // Cells of at least `radius`, grown so the grid stays under 4 M cells.
    let mut cell = radius;
    let dims = |c: f32| ((hi - lo) / c).floor().as_uvec3() + glam::UVec3::ONE;
    while dims(cell).as_dvec3().element_product() > 4.0e6 {
        cell *= 1.5;
    }
    let grid = Lattice {
        origin: lo,
        cell,
        dims: dims(cell),
    };
    let d = grid.dims;
    let buckets = Buckets::new(&grid, x);
    let r2 = radius * radius;
    let mut near = Vec::new();
    for (i, p) in x.iter().enumerate() {
        let c = grid.cell_of(*p).as_ivec3();
        near.clear();
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let q = c + glam::IVec3::new(dx, dy, dz);
                    if q.min_element() < 0 || q.cmpge(d.as_ivec3()).any() {
                        continue;
                    }
                    for &j in buckets.cell(grid.index(q.as_uvec3())) {
                        if j as usize > i && x[j as usize].distance_squared(*p) < r2 {
                            near.push(j);
                        }
                    }
                }
            }
        }
        near.sort_unstable();
        for &j in &near {
            a.push(i as i64);
            b.push(j as i64);
        }
    }
    (a, b)
}

/// SPH density (003 Eq. 12, unit masses) of every point, over the pairs within 2h.
pub fn density(x: &[Vec3], h: f32) -> Vec<f32> {
    let (a, b) = pairs_within(x, 2.0 * h);
    let mut rho = vec![0.0f32; x.len()];
    for (&i, &j) in a.iter().zip(&b) {
        let w = kernel(x[i as usize].distance(x[j as usize]), h);
        rho[i as usize] += w;
        rho[j as usize] += w;
    }
    rho
}

/// One groom posed for draping: `strands` strands of `points` vertices (root first), world
/// space, and what the energy holds fixed.
#[derive(Clone, Debug)]
pub struct Posed {
    pub strands: usize,
    pub points: usize,
    /// The rigidly posed rest groom (003 §3.3), `strands × points`.
    pub x: Vec<Vec3>,
    /// Rest length and posed unit direction of every edge, `strands × (points − 1)`.
    pub rest_len: Vec<f32>,
    pub dir: Vec<Vec3>,
    /// Rest SPH density of every vertex.
    pub rho_rest: Vec<f32>,
}

impl Posed {
    /// `rest` (head frame, `strands × points`) moved by the head's pose.
    pub fn new(rest: &[Vec3], points: usize, head: &Pose, h: f32) -> Posed {
        let x: Vec<Vec3> = rest.iter().map(|p| head.apply_f32(*p)).collect();
        let strands = x.len() / points;
        let mut rest_len = Vec::with_capacity(strands * (points - 1));
        let mut dir = Vec::with_capacity(strands * (points - 1));
        for s in x.chunks(points) {
            for e in s.windows(2) {
                let d = e[1] - e[0];
                let l = d.length();
                rest_len.push(l.max(1e-6));
                dir.push(if l > 1e-6 { d / l } else { Vec3::Y });
            }
        }
        let rho_rest = density(&x, h);
        Posed {
            strands,
            points,
            x,
            rest_len,
            dir,
            rho_rest,
        }
    }

    /// This groom moved rigidly by `head` (its rest lengths and rest densities kept: a rigid
    /// motion does not change them).
    pub fn moved(&self, head: &Pose) -> Posed {
        let x: Vec<Vec3> = self.x.iter().map(|p| head.apply_f32(*p)).collect();
        let dir = x
            .chunks(self.points)
            .flat_map(|s| {
                s.windows(2).map(|e| {
                    let d = e[1] - e[0];
                    let l = d.length();
                    if l > 1e-6 { d / l } else { Vec3::Y }
                })
            })
            .collect();
        Posed {
            strands: self.strands,
            points: self.points,
            x,
            rest_len: self.rest_len.clone(),
            dir,
            rho_rest: self.rho_rest.clone(),
        }
    }
}

/// The energy's constant tensors for one posed groom.
pub struct Fixed<B: Backend> {
    pub strands: usize,
    pub points: usize,
    posed: Tensor<B, 3>,
    dir: Tensor<B, 3>,
    rest_len: Tensor<B, 2>,
    rho_rest: Tensor<B, 1>,
    /// 0 at the root, 1 elsewhere, `[1, points, 1]`.
    pub free: Tensor<B, 3>,
}

fn vecs(v: &[Vec3]) -> Vec<f32> {
    v.iter().flat_map(|p| p.to_array()).collect()
}

impl<B: Backend> Fixed<B> {
    pub fn new(p: &Posed, dev: &B::Device) -> Fixed<B> {
        let (s, n) = (p.strands, p.points);
        let mut free = vec![1.0f32; n];
        free[0] = 0.0;
        Fixed {
            strands: s,
            points: n,
            posed: Tensor::from_data(TensorData::new(vecs(&p.x), [s, n, 3]), dev),
            dir: Tensor::from_data(TensorData::new(vecs(&p.dir), [s, n - 1, 3]), dev),
            rest_len: Tensor::from_data(TensorData::new(p.rest_len.clone(), [s, n - 1]), dev),
            rho_rest: Tensor::from_data(TensorData::new(p.rho_rest.clone(), [s * n]), dev),
            free: Tensor::from_data(TensorData::new(free, [1, n, 1]), dev),
        }
    }

    /// Positions from displacements `[strands, points, 3]` (roots held).
    pub fn positions(&self, displacement: Tensor<B, 3>) -> Tensor<B, 3> {
        self.posed.clone() + displacement * self.free.clone()
    }

    /// Positions from changes of edge directions `[strands, points, 3]` (vertex k ≥ 1 carries
    /// the edge ending at it; the root's entry is unused): each edge keeps its rest length and
    /// points along its posed direction plus the change, from the held root on.
    pub fn positions_along(&self, turn: Tensor<B, 3>) -> Tensor<B, 3> {
        let (s, n) = (self.strands, self.points);
        let d = self.dir.clone() + turn.slice([0..s, 1..n, 0..3]);
        let norm = (d.clone() * d.clone()).sum_dim(2).sqrt().clamp_min(1e-6);
        let edges = d / norm * self.rest_len.clone().unsqueeze_dim::<3>(2);
        let root = self.posed.clone().slice([0..s, 0..1, 0..3]);
        let rest = edges.cumsum(1) + root.clone();
        Tensor::cat(vec![root, rest], 1)
    }

    /// The deformation `x − x_posed` of positions `x`.
    pub fn deformation(&self, x: Tensor<B, 3>) -> Tensor<B, 3> {
        x - self.posed.clone()
    }
}

/// What the energy takes from the current positions outside the graph: body distances and
/// normals, and the SPH pairs.
pub struct Linearization {
    pub at: Vec<Vec3>,
    pub distance: Vec<f32>,
    pub normal: Vec<Vec3>,
    pub pair_i: Vec<i64>,
    pub pair_j: Vec<i64>,
}

impl Linearization {
    /// At positions `x` (`strands × points`, world) with the colliders (their head at `poses`)
    /// or none; roots are left out of the body term (they sit on the scalp, held).
    pub fn at(
        x: &[Vec3],
        points: usize,
        colliders: Option<(&Colliders, &[Pose])>,
        m: &DrapeMaterial,
    ) -> Linearization {
        let far = 1.0e6f32;
        let (distance, normal) = x
            .iter()
            .enumerate()
            .map(|(v, p)| match colliders {
                Some((c, poses)) if v % points != 0 => match c.query(*p, 0.0, poses) {
                    Some(q) => (q.distance, q.normal),
                    None => (far, Vec3::Y),
                },
                _ => (far, Vec3::Y),
            })
            .unzip();
        let (pair_i, pair_j) = if m.self_collision > 0.0 {
            pairs_within(x, 2.0 * m.smoothing as f32)
        } else {
            (Vec::new(), Vec::new())
        };
        Linearization {
            at: x.to_vec(),
            distance,
            normal,
            pair_i,
            pair_j,
        }
    }
}

/// The energy's terms, each already divided by the number of strands.
pub struct Terms<B: Backend> {
    pub total: Tensor<B, 1>,
    pub cosserat: Tensor<B, 1>,
    pub stretch: Tensor<B, 1>,
    pub gravity: Tensor<B, 1>,
    pub body: Tensor<B, 1>,
    pub self_collision: Tensor<B, 1>,
}

/// Read-back values of [`Terms`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct TermValues {
    pub total: f64,
    pub cosserat: f64,
    pub stretch: f64,
    pub gravity: f64,
    pub body: f64,
    pub self_collision: f64,
}

fn value<B: Backend>(t: &Tensor<B, 1>) -> f64 {
    t.clone().into_scalar().elem::<f64>()
}

impl TermValues {
    /// Each term's mean over several energies.
    pub fn mean<'a>(ts: impl IntoIterator<Item = &'a TermValues>) -> TermValues {
        let v: Vec<&TermValues> = ts.into_iter().collect();
        let k = v.len().max(1) as f64;
        let mut m = TermValues::default();
        for t in v {
            m.total += t.total / k;
            m.cosserat += t.cosserat / k;
            m.stretch += t.stretch / k;
            m.gravity += t.gravity / k;
            m.body += t.body / k;
            m.self_collision += t.self_collision / k;
        }
        m
    }
}

impl<B: Backend> Terms<B> {
    pub fn values(&self) -> TermValues {
        TermValues {
            total: value(&self.total),
            cosserat: value(&self.cosserat),
            stretch: value(&self.stretch),
            gravity: value(&self.gravity),
            body: value(&self.body),
            self_collision: value(&self.self_collision),
        }
    }
}

/// Positions `[strands, points, 3]` read back to the CPU.
pub fn read_positions<B: Backend>(x: &Tensor<B, 3>) -> Vec<Vec3> {
    let v: Vec<f32> = x.clone().into_data().to_vec().expect("f32 positions");
    v.chunks_exact(3).map(|c| Vec3::new(c[0], c[1], c[2])).collect()
}

/// The energy at positions `x`, linearized there (the colliders' distances and the SPH pairs
/// taken at `x`); returns `x` read back too.
pub fn energy_here<B: Backend>(
    x: Tensor<B, 3>,
    f: &Fixed<B>,
    colliders: Option<(&Colliders, &[Pose])>,
    m: &DrapeMaterial,
) -> (Vec<Vec3>, Terms<B>) {
    let (lin, terms) = energy_linearized(x, f, colliders, m);
    (lin.at, terms)
}

/// [`energy_here`] returning the whole linearization it took (its `at` the positions read
/// back), for [`strand_energies`] to share.
pub fn energy_linearized<B: Backend>(
    x: Tensor<B, 3>,
    f: &Fixed<B>,
    colliders: Option<(&Colliders, &[Pose])>,
    m: &DrapeMaterial,
) -> (Linearization, Terms<B>) {
    let lin = Linearization::at(&read_positions(&x), f.points, colliders, m);
    let terms = energy(x, f, &lin, m);
    (lin, terms)
}

/// The drape energy (003 Eq. 1 less Eq. 14) of positions `x` `[strands, points, 3]`.
pub fn energy<B: Backend>(x: Tensor<B, 3>, f: &Fixed<B>, lin: &Linearization, m: &DrapeMaterial) -> Terms<B> {
    let dev = x.device();
    let (s, n) = (f.strands, f.points);
    let per = 1.0 / s as f64;
    let edge = x.clone().slice([0..s, 1..n, 0..3]) - x.clone().slice([0..s, 0..n - 1, 0..3]);
    let len3 = f.rest_len.clone().unsqueeze_dim::<3>(2);
    let cos = (edge.clone() / len3 - f.dir.clone()).powi_scalar(2).sum() * (0.5 * m.cosserat * per);
    let length = (edge.powi_scalar(2).sum_dim(2).squeeze_dim::<2>(2) + 1e-12).sqrt();
    let stretch = (length - f.rest_len.clone()).powi_scalar(2).sum() * (0.5 * m.stretch * per);
    let gravity = x.clone().slice([0..s, 0..n, 1..2]).sum() * (m.weight * per);

    let flat = x.reshape([s * n, 3]);
    let at = Tensor::<B, 2>::from_data(TensorData::new(vecs(&lin.at), [s * n, 3]), &dev);
    let nrm = Tensor::<B, 2>::from_data(TensorData::new(vecs(&lin.normal), [s * n, 3]), &dev);
    let d0 = Tensor::<B, 1>::from_data(TensorData::new(lin.distance.clone(), [s * n]), &dev);
    let d = d0 + ((flat.clone() - at) * nrm).sum_dim(1).squeeze_dim::<1>(1);
    let body = (d.neg() + m.body_distance).clamp_min(0.0).powi_scalar(3).sum() * (m.body * per);

    let self_collision = if lin.pair_i.is_empty() || m.self_collision == 0.0 {
        Tensor::<B, 1>::zeros([1], &dev)
    } else {
        let p = lin.pair_i.len();
        let ii = Tensor::<B, 1, Int>::from_data(TensorData::new(lin.pair_i.clone(), [p]), &dev);
        let jj = Tensor::<B, 1, Int>::from_data(TensorData::new(lin.pair_j.clone(), [p]), &dev);
        let diff = flat.clone().select(0, ii.clone()) - flat.select(0, jj.clone());
        let r = ((diff.clone() * diff).sum_dim(1).squeeze_dim::<1>(1) + 1e-12).sqrt();
        let q = r / m.smoothing;
        let q2 = q.clone() * q.clone();
        // 4 − 6q² + 3q³ = 4 + q²(3q − 6).
        let inner = q2 * (q.clone() * 3.0 - 6.0) + 4.0;
        let t = (q.clone().neg() + 2.0).clamp_min(0.0);
        let outer = t.clone() * t.clone() * t;
        let w = outer.mask_where(q.lower_equal_elem(1.0), inner);
        let rho = Tensor::<B, 1>::zeros([s * n], &dev)
            .select_assign(0, ii, w.clone(), IndexingUpdateOp::Add)
            .select_assign(0, jj, w, IndexingUpdateOp::Add);
        let excess = (rho - f.rho_rest.clone()).clamp_min(0.0);
        (excess.clone() * excess.clone() * excess).sum() * (m.self_collision * per)
    };
    Terms {
        total: cos.clone() + stretch.clone() + gravity.clone() + body.clone() + self_collision.clone(),
        cosserat: cos,
        stretch,
        gravity,
        body,
        self_collision,
    }
}

/// Each strand's share of the drape energy at the positions `lin.at` (`strands × points`,
/// world) of the linearization `lin` taken there, not divided by the number of strands: its
/// edges' Cosserat and stretch terms and its vertices' gravity, body and self-collision terms,
/// where a vertex's self-collision term is its own density excess (whichever strands its
/// neighbours belong to). Computed on the CPU in double precision from the definitions of
/// [`energy`] (at `lin.at` the linearized distance is exact), so the shares' sum over the
/// strands, divided by their number, is [`energy`]'s total there.
pub fn strand_energies(posed: &Posed, lin: &Linearization, m: &DrapeMaterial) -> Vec<f64> {
    let (n, x) = (posed.points, &lin.at);
    let mut rho = vec![0.0f64; x.len()];
    for (&i, &j) in lin.pair_i.iter().zip(&lin.pair_j) {
        let w = kernel(x[i as usize].distance(x[j as usize]), m.smoothing as f32) as f64;
        rho[i as usize] += w;
        rho[j as usize] += w;
    }
    (0..posed.strands)
        .map(|s| {
            let mut e = 0.0f64;
            for k in 0..n {
                let v = s * n + k;
                let p = x[v].as_dvec3();
                e += m.weight * p.y;
                let pen = (m.body_distance - lin.distance[v] as f64).max(0.0);
                e += m.body * pen * pen * pen;
                let excess = (rho[v] - posed.rho_rest[v] as f64).max(0.0);
                e += m.self_collision * excess * excess * excess;
                if k + 1 < n {
                    let edge = x[v + 1].as_dvec3() - p;
                    let k_e = s * (n - 1) + k;
                    let rest = posed.rest_len[k_e] as f64;
                    let cos = edge / rest - posed.dir[k_e].as_dvec3();
                    e += 0.5 * m.cosserat * cos.length_squared();
                    let stretch = edge.length() - rest;
                    e += 0.5 * m.stretch * stretch * stretch;
                }
            }
            e
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::{Autodiff, Flex};

    type B = Autodiff<Flex>;

    #[test]
    fn kernel_matches_eq_13_at_its_knots() {
        let h = 0.7;
        assert_eq!(kernel(0.0, h), 4.0);
        assert!((kernel(h, h) - 1.0).abs() < 1e-6);
        assert!((kernel(h * (1.0 - 1e-4), h) - kernel(h * (1.0 + 1e-4), h)).abs() < 1e-3);
        assert!(kernel(2.0 * h * 0.9999, h) < 1e-9);
        assert_eq!(kernel(2.0 * h, h), 0.0);
        // Monotone decreasing.
        let mut last = f32::INFINITY;
        for k in 0..=40 {
            let w = kernel(k as f32 * 0.05 * h, h);
            assert!(w <= last);
            last = w;
        }
    }

    #[test]
    fn hash_grid_pairs_equal_the_brute_force_pairs() {
        let x: Vec<Vec3> = (0..300)
            .map(|i| {
                let t = i as f32;
                Vec3::new(
                    (t * 0.37).sin() * 3.0,
                    (t * 0.91).cos() * 2.0,
                    (t * 0.13).sin() * 2.5,
                )
            })
            .collect();
        let r = 0.9;
        let (a, b) = pairs_within(&x, r);
        let mut want = Vec::new();
        for i in 0..x.len() {
            for j in i + 1..x.len() {
                if x[i].distance_squared(x[j]) < r * r {
                    want.push((i as i64, j as i64));
                }
            }
        }
        let got: Vec<(i64, i64)> = a.into_iter().zip(b).collect();
        assert_eq!(got, want);
    }

    /// Two strands of 6 points, a little apart, over a sphere they partly enter.
    fn scene() -> (Posed, Colliders, DrapeMaterial) {
        let mut rest = Vec::new();
        for s in 0..2 {
            for k in 0..6 {
                let k = k as f32;
                rest.push(Vec3::new(0.3 * s as f32 + 0.05 * k, 10.0 - 0.9 * k, 0.4 * k));
            }
        }
        let m = DrapeMaterial {
            cosserat: 3.0,
            stretch: 50.0,
            body: 40.0,
            body_distance: 0.5,
            self_collision: 2.0,
            smoothing: 0.5,
            ..Default::default()
        };
        let posed = Posed::new(&rest, 6, &Pose::IDENTITY, m.smoothing as f32);
        let sphere = crate::collide::Sphere {
            center: Vec3::new(1.5, 6.0, 0.5),
            radius: 2.0,
        };
        let c = Colliders::on_head(
            vec![("ball", Box::new(sphere))],
            crate::motion::HeadTrack::still(Pose::IDENTITY),
        );
        (posed, c, m)
    }

    fn perturbed(p: &Posed) -> Vec<Vec3> {
        p.x.iter()
            .enumerate()
            .map(|(i, x)| {
                if i % p.points == 0 {
                    *x
                } else {
                    let t = i as f32;
                    *x + Vec3::new((t * 1.3).sin(), (t * 0.7).cos(), (t * 2.1).sin()) * 0.25
                }
            })
            .collect()
    }

    /// Energy value at `x` with its linearization taken at `x` itself (f64 sums on the CPU side
    /// are not needed: each term is checked on its own scale).
    fn terms_at(x: &[Vec3], p: &Posed, c: &Colliders, m: &DrapeMaterial) -> TermValues {
        let dev = Default::default();
        let f = Fixed::<Flex>::new(p, &dev);
        let poses = c.poses_at(0.0);
        let lin = Linearization::at(x, p.points, Some((c, &poses)), m);
        let t = Tensor::<Flex, 3>::from_data(TensorData::new(vecs(x), [p.strands, p.points, 3]), &dev);
        energy(t, &f, &lin, m).values()
    }

    /// The strands' shares, written on the CPU from the equations, add up to the tensor
    /// energy's total (which divides by the strand count), on a groom deformed into the ball
    /// and into itself so that every term is non-zero.
    #[test]
    fn strand_energies_add_up_to_the_energy() {
        let (p, c, m) = scene();
        let x = perturbed(&p);
        let poses = c.poses_at(0.0);
        let v = terms_at(&x, &p, &c, &m);
        assert!(
            v.body > 0.0 && v.self_collision > 0.0 && v.cosserat > 0.0 && v.stretch > 0.0,
            "{v:?}"
        );
        let shares = strand_energies(&p, &Linearization::at(&x, p.points, Some((&c, &poses)), &m), &m);
        assert_eq!(shares.len(), p.strands);
        let sum = shares.iter().sum::<f64>() / p.strands as f64;
        assert!(
            (sum - v.total).abs() < 1e-4 * v.total.abs().max(1.0),
            "{sum} vs {}",
            v.total
        );
        // A strand moved alone changes its own share most.
        let mut y = x.clone();
        for q in &mut y[p.points + 1..2 * p.points] {
            *q += Vec3::new(0.0, -0.5, 0.0);
        }
        let moved = strand_energies(&p, &Linearization::at(&y, p.points, Some((&c, &poses)), &m), &m);
        assert!((moved[1] - shares[1]).abs() > (moved[0] - shares[0]).abs());
    }

    #[test]
    fn elastic_and_self_terms_vanish_on_the_posed_groom() {
        let (p, c, m) = scene();
        let v = terms_at(&p.x.clone(), &p, &c, &m);
        assert!(v.cosserat.abs() < 1e-9 && v.stretch.abs() < 1e-7, "{v:?}");
        assert!(v.self_collision.abs() < 1e-9, "{v:?}");
        // Gravity is Σ y / strands.
        let want: f64 = p.x.iter().map(|q| q.y as f64).sum::<f64>() / 2.0;
        assert!((v.gravity - want).abs() < 1e-4 * want.abs());
    }

    /// Every term's autodiff gradient equals central differences of its value (which rebuilds
    /// the collider distances and the SPH pairs at each perturbed position).
    #[test]
    fn every_term_is_differentiated_correctly() {
        let (p, c, m) = scene();
        let x = perturbed(&p);
        let dev = Default::default();
        let f = Fixed::<B>::new(&p, &dev);
        let poses = c.poses_at(0.0);
        let lin = Linearization::at(&x, p.points, Some((&c, &poses)), &m);
        assert!(!lin.pair_i.is_empty(), "the scene has SPH pairs");
        assert!(
            lin.distance.iter().any(|&d| d < m.body_distance as f32),
            "and body contacts"
        );
        let pick = |t: &Terms<B>, k: usize| match k {
            0 => t.cosserat.clone(),
            1 => t.stretch.clone(),
            2 => t.gravity.clone(),
            3 => t.body.clone(),
            _ => t.self_collision.clone(),
        };
        let get = |v: &TermValues, k: usize| match k {
            0 => v.cosserat,
            1 => v.stretch,
            2 => v.gravity,
            3 => v.body,
            _ => v.self_collision,
        };
        for k in 0..5 {
            let t = Tensor::<B, 3>::from_data(TensorData::new(vecs(&x), [p.strands, p.points, 3]), &dev)
                .require_grad();
            let terms = energy(t.clone(), &f, &lin, &m);
            let grads = pick(&terms, k).backward();
            let g: Vec<f32> = t.grad(&grads).unwrap().into_data().to_vec().unwrap();
            let scale = g.iter().fold(0.0f32, |a, b| a.max(b.abs()));
            assert!(scale > 0.0, "term {k} has a gradient");
            let eps = 1e-3f32;
            for v in 0..x.len() {
                for a in 0..3 {
                    let mut up = x.clone();
                    up[v][a] += eps;
                    let mut down = x.clone();
                    down[v][a] -= eps;
                    let fd = (get(&terms_at(&up, &p, &c, &m), k) - get(&terms_at(&down, &p, &c, &m), k))
                        / (2.0 * eps as f64);
                    let err = (fd - g[3 * v + a] as f64).abs();
                    assert!(
                        err < 2e-2 * scale as f64 + 1e-4,
                        "term {k}, vertex {v}, axis {a}: autodiff {} vs differences {fd}",
                        g[3 * v + a]
                    );
                }
            }
        }
    }
}
