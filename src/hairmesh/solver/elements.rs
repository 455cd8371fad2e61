//! The hair mesh's elements (002 §3.1): the corner tets of every prism with their rest volumes
//! (the volume force, Eq. 1–2) and the lumped mass; the side and layer faces as triangles with
//! Baraff–Witkin stretch and shear; the bend hinges between side faces stacked along the
//! hair; and their forces and Jacobians assembled into the implicit step's system (Baraff &
//! Witkin Eq. 16).

use glam::{DVec3, Mat3A, Vec3A, Vec3Swizzles};

use super::{HairMeshParams, HairMeshSim};
use crate::error::{Error, Result};
use crate::hairmesh::forces::{TriRest, angle_diff, dihedral, tet_volume};
use crate::hairmesh::mesh::HairMesh;

/// A triangle of a side or layer face, its vertices in increasing order (the rest
/// coefficients in the same order), so its local block `(a, b)` with `a ≤ b` is a block of the
/// matrix's upper triangle.
pub(super) struct Tri {
    pub(super) v: [u32; 3],
    pub(super) rest: TriRest,
    /// Stiffness: stretch along u, stretch along v, shear.
    pub(super) k: [f64; 3],
    /// Upper-triangle slots of the blocks (0,0) (0,1) (0,2) (1,1) (1,2) (2,2).
    pub(super) slots: [u32; 6],
}

/// A condition on 4 vertices: a dihedral hinge or a corner tet.
pub(super) struct Quad4 {
    /// The vertices in the condition's own order.
    pub(super) v: [u32; 4],
    /// Rest angle or rest volume.
    pub(super) rest: f64,
    pub(super) k: f64,
    /// Positions in `v` of the vertices in increasing order.
    pub(super) order: [u8; 4],
    /// Upper-triangle slots of the blocks `(p, q)`, `p ≤ q`, of the sorted vertices, row by row.
    pub(super) slots: [u32; 10],
}

impl Tri {
    /// The triangle `v` with its rest data, reordered so its vertices increase.
    pub(super) fn new(v: [u32; 3], rest: TriRest, k: [f64; 3]) -> Tri {
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
    pub(super) fn new(v: [u32; 4], rest: f64, k: f64) -> Quad4 {
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
    pub(super) fn sorted(&self) -> [u32; 4] {
        self.order.map(|a| self.v[a as usize])
    }
}

/// The corner tets of every prism with a volume, and the lumped mass (each prism's volume
/// shared by its corners; no vertex lighter than a tenth of the mean).
pub(super) fn tets_and_mass(
    mesh: &HairMesh,
    rest: &[DVec3],
    params: &HairMeshParams,
) -> Result<(Vec<f64>, Vec<Quad4>)> {
    let n = mesh.vertex_count();
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
    Ok((mass, tets))
}

/// The faces: side quads (u along the hair) and layer faces above the root, each quad as its
/// four triangles (both diagonals) at half stiffness, so no diagonal is preferred.
pub(super) fn faces(mesh: &HairMesh, rest: &[DVec3], params: &HairMeshParams) -> Vec<Tri> {
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
            let axis = rest[q[2] as usize] + rest[q[3] as usize] - rest[q[0] as usize] - rest[q[1] as usize];
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
    tris
}

/// The bend hinges between side faces stacked along the hair: on the edge between columns c0,
/// c1 at layer l, the wings below and above, crossed both ways at half stiffness.
pub(super) fn hinges(mesh: &HairMesh, rest: &[DVec3], params: &HairMeshParams) -> Vec<Quad4> {
    let sides = mesh.sides();
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
    hinges
}

impl HairMeshSim {
    /// Assembles `A` (its upper triangle) and `b` of the implicit step.
    pub(super) fn assemble(&mut self, h: f64, b: &mut [DVec3]) {
        let p = &self.params;
        let values = self.a.values_mut();
        values.fill(Mat3A::ZERO);
        let g = DVec3::new(0.0, -p.gravity, 0.0);
        for (i, bi) in b.iter_mut().enumerate() {
            let m = self.mass[i];
            *bi = m * g - p.drag * m * self.v[i];
            values[self.diag_slot[i] as usize] +=
                Mat3A::from_diagonal(glam::Vec3::splat((m * (1.0 + h * p.drag)) as f32));
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
}

/// `a bᵀ` in single precision (four-lane columns).
#[inline(always)]
pub(super) fn outer(a: Vec3A, b: Vec3A) -> Mat3A {
    Mat3A::from_cols(a * b.xxx(), a * b.yyy(), a * b.zzz())
}

/// One condition's share of the implicit step (Baraff & Witkin Eq. 16): with stiffness `k` and
/// damping `k_d = damping · k`, `f = −(k C + (k_d + h k) Ċ) ∇C` (the last term is `−h K v₀`) and
/// `A += (h k_d + h² k) ∇C ∇Cᵀ`. Returns the force's scale `k C + (k_d + h k) Ċ` and the
/// matrix coefficient `h k_d + h² k`, given `C`, `Ċ = ∇C · v`.
#[inline]
pub(super) fn condition(c: f64, cdot: f64, k: f64, h: f64, damping: f64) -> (f64, f64) {
    let kd = damping * k;
    (k * c + (kd + h * k) * cdot, h * kd + h * h * k)
}

/// A rank-one condition on four vertices (a hinge or a tet): forces into `b`, its blocks
/// `s ∇C_p ∇C_qᵀ` into the upper triangle.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn assemble_rank_one(
    q: &Quad4,
    c: f64,
    grad: &[DVec3; 4],
    v: &[DVec3],
    h: f64,
    damping: f64,
    values: &mut [Mat3A],
    b: &mut [DVec3],
) {
    let cdot: f64 = q.v.iter().zip(grad).map(|(&i, g)| g.dot(v[i as usize])).sum();
    let (scale, s) = condition(c, cdot, q.k, h, damping);
    for (&i, g) in q.v.iter().zip(grad) {
        b[i as usize] -= scale * *g;
    }
    let gs = q.order.map(|a| grad[a as usize].as_vec3a());
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
pub(super) fn assemble_tri(
    t: &Tri,
    x: &[DVec3],
    v: &[DVec3],
    h: f64,
    damping: f64,
    values: &mut [Mat3A],
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
    let mut m = [Mat3A::ZERO; 2];
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
        let whf = wh.as_vec3a();
        let ww = outer(whf, whf);
        m[dir] += ww * (s * a * a) as f32;
        if len > 1.0 {
            let s = k * c * a / len;
            f[dir] += (h * s) * (vel - vel.dot(wh) * wh);
            m[dir] += (Mat3A::IDENTITY - ww) * (h * h * s) as f32;
        }
    }
    let (scale, s) = condition(a * wu.dot(wv), a * (wv.dot(vu) + wu.dot(vv)), t.k[2], h, damping);
    f[0] += (scale * a) * wv;
    f[1] += (scale * a) * wu;
    let (wuf, wvf) = (wu.as_vec3a(), wv.as_vec3a());
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
