//! Render strands carried by a hair mesh (002 §4: "we render the hair model by generating the
//! hair strands from the hair mesh, as described by Yuksel et al. 2009").
//!
//! Every strand point has *prism coordinates*: a root face, a layer `l`, face coordinates
//! `(s, t)` (bilinear on quads, barycentric on triangles) and a height `τ` between layers `l`
//! and `l + 1`. The prism's map `P(s, t, τ) = (1 − τ) F_l(s, t) + τ F_{l+1}(s, t)` evaluated on
//! the current vertex positions places the point. Two ways to get coordinates:
//!
//! * **Embedding** ([`RenderStrands::embed`], a groom given): each strand's root is located in
//!   the nearest root face, each point's layer comes from its normalized arc length, and what
//!   the map misses at rest is kept as a local offset `ξ = J₀⁻¹ (x_rest − P₀)` with `J` the
//!   map's Jacobian; a frame places the point at `P + J ξ`. The groom is reproduced exactly at
//!   rest and every point follows the deformation of its prism (rigid motion exactly).
//! * **Generation** ([`RenderStrands::generate`], a mesh alone, as Yuksel et al.): roots drawn
//!   area-uniformly over the root faces with a seeded generator, one point per layer at the
//!   strand's face coordinates (drifting a little toward the tip for per-strand variation), and
//!   a Catmull-Rom curve through them resampled to the points asked.

use glam::{Mat3, Vec2, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::mesh::HairMesh;
use crate::groom::Groom;

/// Prism coordinates of one strand point.
#[derive(Clone, Copy, Debug)]
struct Embed {
    face: u32,
    layer: u32,
    st: Vec2,
    tau: f32,
    /// Local offset `ξ` (embedding) or zero (generation): in the prism's parametric
    /// coordinates (`J ξ`), or with `rigid` in its orthonormal frame (`F ξ`).
    xi: Vec3,
    rigid: bool,
}

/// The orthonormal frame of a prism's Jacobian: along the column first, then the face's first
/// direction made orthogonal to it.
fn frame(j: Mat3) -> Mat3 {
    let a = j.col(2).normalize_or(Vec3::Y);
    let b = (j.col(0) - j.col(0).dot(a) * a).normalize_or(a.any_orthonormal_vector());
    Mat3::from_cols(b, a.cross(b), a)
}

/// Face coordinates moved onto the face (quad: the unit square; triangle: s, t ≥ 0, s + t ≤ 1).
fn onto_face(mesh: &HairMesh, face: u32, st: Vec2) -> Vec2 {
    let st = st.max(Vec2::ZERO);
    if mesh.faces[face as usize].len() == 4 {
        st.min(Vec2::ONE)
    } else if st.x + st.y > 1.0 {
        st / (st.x + st.y)
    } else {
        st
    }
}

/// Largest parametric offset carried through the prism's Jacobian; points farther out (strands
/// of cells without a bundle, thin prisms) ride in the prism's orthonormal frame instead, so a
/// small deformation of a thin or distant prism cannot throw them far.
const MAX_PARAMETRIC: f32 = 1.5;

enum Kind {
    Embedded(Vec<Embed>),
    /// Per strand, per layer: face coordinates; points per strand.
    Generated {
        face: Vec<u32>,
        st: Vec<Vec2>,
        points: usize,
    },
}

/// Strands placed inside a hair mesh.
pub struct RenderStrands {
    kind: Kind,
    pub counts: Vec<u32>,
}

/// Face map at layer `l`: position and its derivatives in `s` and `t`.
fn face_map(mesh: &HairMesh, x: &[Vec3], face: u32, l: usize, st: Vec2) -> (Vec3, Vec3, Vec3) {
    let f = &mesh.faces[face as usize];
    let p = |k: usize| x[mesh.vertex(f[k], l) as usize];
    let (s, t) = (st.x, st.y);
    if f.len() == 4 {
        let (a, b, c, d) = (p(0), p(1), p(2), p(3));
        let pos = (1.0 - s) * (1.0 - t) * a + s * (1.0 - t) * b + s * t * c + (1.0 - s) * t * d;
        let ds = (1.0 - t) * (b - a) + t * (c - d);
        let dt = (1.0 - s) * (d - a) + s * (c - b);
        (pos, ds, dt)
    } else {
        let (a, b, c) = (p(0), p(1), p(2));
        (a + s * (b - a) + t * (c - a), b - a, c - a)
    }
}

/// Prism map and its Jacobian.
fn prism_map(mesh: &HairMesh, x: &[Vec3], e: &Embed) -> (Vec3, Mat3) {
    let l = e.layer as usize;
    let (p0, s0, t0) = face_map(mesh, x, e.face, l, e.st);
    let (p1, s1, t1) = face_map(mesh, x, e.face, l + 1, e.st);
    let tau = e.tau;
    let pos = p0.lerp(p1, tau);
    (pos, Mat3::from_cols(s0.lerp(s1, tau), t0.lerp(t1, tau), p1 - p0))
}

/// Face coordinates of `p` on face `face`'s root layer by Gauss–Newton, and how far outside
/// the face they fall (0 inside).
fn locate(mesh: &HairMesh, face: u32, p: Vec3) -> (Vec2, f32) {
    let mut st = if mesh.faces[face as usize].len() == 4 {
        Vec2::splat(0.5)
    } else {
        Vec2::splat(1.0 / 3.0)
    };
    for _ in 0..8 {
        let (q, ds, dt) = face_map(mesh, &mesh.rest, face, 0, st);
        let r = p - q;
        // Normal equations of the 3×2 system [ds dt] δ = r.
        let (a, b, c) = (ds.dot(ds), ds.dot(dt), dt.dot(dt));
        let det = a * c - b * b;
        if det.abs() < 1e-20 {
            break;
        }
        let (u, v) = (ds.dot(r), dt.dot(r));
        st += Vec2::new(c * u - b * v, a * v - b * u) / det;
    }
    let outside = if mesh.faces[face as usize].len() == 4 {
        (-st.x).max(st.x - 1.0).max(-st.y).max(st.y - 1.0).max(0.0)
    } else {
        (-st.x).max(-st.y).max(st.x + st.y - 1.0).max(0.0)
    };
    (st, outside)
}

impl RenderStrands {
    /// Embeds the strands of `groom` (rest pose, the mesh's frame) in `mesh`.
    pub fn embed(mesh: &HairMesh, groom: &Groom) -> RenderStrands {
        let centroids: Vec<Vec3> = mesh
            .faces
            .iter()
            .map(|f| {
                f.iter()
                    .map(|&c| mesh.rest[mesh.vertex(c, 0) as usize])
                    .sum::<Vec3>()
                    / f.len() as f32
            })
            .collect();
        let last = (mesh.layers - 1) as f32;
        let per_strand: Vec<Vec<Embed>> = groom
            .strands()
            .collect::<Vec<_>>()
            .par_iter()
            .map(|s| {
                let root = s[0];
                // The nearest few faces; keep the one the root falls in (or least outside).
                let mut near: Vec<(f32, u32)> = centroids
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.distance_squared(root), i as u32))
                    .collect();
                let k = near.len().min(6);
                near.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                near.truncate(k);
                near.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                let (face, st) = near
                    .iter()
                    .map(|&(_, f)| {
                        let (st, out) = locate(mesh, f, root);
                        (out, f, st)
                    })
                    .min_by(|a, b| a.0.total_cmp(&b.0))
                    .map(|(_, f, st)| (f, onto_face(mesh, f, st)))
                    .expect("a mesh has faces");
                let total: f32 = s.windows(2).map(|w| w[0].distance(w[1])).sum();
                let mut acc = 0.0;
                s.iter()
                    .enumerate()
                    .map(|(i, p)| {
                        if i > 0 {
                            acc += s[i - 1].distance(*p);
                        }
                        let q = if total > 0.0 { acc / total * last } else { 0.0 };
                        let layer = (q.floor() as u32).min(mesh.layers as u32 - 2);
                        let mut e = Embed {
                            face,
                            layer,
                            st,
                            tau: q - layer as f32,
                            xi: Vec3::ZERO,
                            rigid: true,
                        };
                        let (pos, j) = prism_map(mesh, &mesh.rest, &e);
                        let d = *p - pos;
                        let xi = j.inverse() * d;
                        if j.determinant().abs() > 1e-12 * j.col(2).length_squared().max(1e-12).powf(1.5)
                            && xi.is_finite()
                            && xi.abs().max_element() <= MAX_PARAMETRIC
                        {
                            e.xi = xi;
                            e.rigid = false;
                        } else {
                            e.xi = frame(j).transpose() * d;
                        }
                        e
                    })
                    .collect()
            })
            .collect();
        RenderStrands {
            counts: groom.counts().to_vec(),
            kind: Kind::Embedded(per_strand.into_iter().flatten().collect()),
        }
    }

    /// Generates `strands` strands of `points` points inside `mesh` with seed `seed`.
    pub fn generate(mesh: &HairMesh, strands: usize, points: usize, seed: u64) -> RenderStrands {
        let points = points.max(2);
        let area = |f: &Vec<u32>| {
            let p = |k: usize| mesh.rest[mesh.vertex(f[k], 0) as usize];
            let a = 0.5 * (p(1) - p(0)).cross(p(2) - p(0)).length();
            if f.len() == 4 {
                a + 0.5 * (p(2) - p(0)).cross(p(3) - p(0)).length()
            } else {
                a
            }
        };
        let mut cum = Vec::with_capacity(mesh.faces.len());
        let mut acc = 0.0f64;
        for f in &mesh.faces {
            acc += area(f) as f64;
            cum.push(acc);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let layers = mesh.layers;
        let mut face = Vec::with_capacity(strands);
        let mut st = Vec::with_capacity(strands * layers);
        for _ in 0..strands {
            let r = rng.random::<f64>() * acc;
            let f = cum.partition_point(|&c| c <= r).min(mesh.faces.len() - 1);
            let tri = mesh.faces[f].len() == 3;
            let (mut s, mut t) = (rng.random::<f32>(), rng.random::<f32>());
            if tri && s + t > 1.0 {
                (s, t) = (1.0 - s, 1.0 - t);
            }
            // Per-strand variation: the strand drifts across its bundle toward the tip.
            let drift = Vec2::new(rng.random::<f32>() - 0.5, rng.random::<f32>() - 0.5) * 0.3;
            face.push(f as u32);
            for l in 0..layers {
                let mut q = Vec2::new(s, t) + drift * (l as f32 / (layers - 1) as f32);
                q = if tri {
                    let q = q.max(Vec2::ZERO);
                    let sum = q.x + q.y;
                    if sum > 1.0 { q / sum } else { q }
                } else {
                    q.clamp(Vec2::ZERO, Vec2::ONE)
                };
                st.push(q);
            }
        }
        RenderStrands {
            counts: vec![points as u32; strands],
            kind: Kind::Generated { face, st, points },
        }
    }

    pub fn point_count(&self) -> usize {
        self.counts.iter().map(|&c| c as usize).sum()
    }

    /// Strand points for mesh vertex positions `x` (the frame of `x`).
    pub fn positions(&self, mesh: &HairMesh, x: &[Vec3], out: &mut Vec<Vec3>) {
        out.clear();
        match &self.kind {
            Kind::Embedded(e) => {
                out.par_extend(e.par_iter().map(|e| {
                    let (p, j) = prism_map(mesh, x, e);
                    if e.rigid {
                        p + frame(j) * e.xi
                    } else {
                        p + j * e.xi
                    }
                }));
            }
            Kind::Generated { face, st, points } => {
                let layers = mesh.layers;
                let per: Vec<Vec<Vec3>> = face
                    .par_iter()
                    .enumerate()
                    .map(|(k, &f)| {
                        let ctrl: Vec<Vec3> = (0..layers)
                            .map(|l| face_map(mesh, x, f, l, st[k * layers + l]).0)
                            .collect();
                        catmull_rom(&ctrl, *points)
                    })
                    .collect();
                out.extend(per.into_iter().flatten());
            }
        }
    }
}

/// `n` points along the uniform Catmull-Rom spline through `ctrl` (end tangents by reflection),
/// evenly spaced in the spline parameter.
fn catmull_rom(ctrl: &[Vec3], n: usize) -> Vec<Vec3> {
    let m = ctrl.len();
    let at = |i: isize| -> Vec3 {
        if i < 0 {
            2.0 * ctrl[0] - ctrl[1]
        } else if i as usize >= m {
            2.0 * ctrl[m - 1] - ctrl[m - 2]
        } else {
            ctrl[i as usize]
        }
    };
    (0..n)
        .map(|k| {
            let u = k as f32 / (n - 1) as f32 * (m - 1) as f32;
            let i = (u.floor() as usize).min(m - 2);
            let t = u - i as f32;
            let (p0, p1, p2, p3) = (
                at(i as isize - 1),
                at(i as isize),
                at(i as isize + 1),
                at(i as isize + 2),
            );
            let (t2, t3) = (t * t, t * t * t);
            0.5 * ((2.0 * p1)
                + (p2 - p0) * t
                + (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3) * t2
                + (3.0 * p1 - p0 + p3 - 3.0 * p2) * t3)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hairmesh::mesh::ProceduralMesh;
    use crate::motion::Pose;

    fn mesh() -> HairMesh {
        HairMesh::procedural(&ProceduralMesh::default()).unwrap()
    }

    /// A groom of strands wandering inside and around the mesh's bundles.
    fn groom_in(mesh: &HairMesh) -> Groom {
        let g = RenderStrands::generate(mesh, 40, 17, 7);
        let mut p = Vec::new();
        g.positions(mesh, &mesh.rest, &mut p);
        // Push points off the generated curves so the embedding has offsets to keep.
        for (i, q) in p.iter_mut().enumerate() {
            *q += 0.3
                * Vec3::new(
                    (i as f32 * 0.7).sin(),
                    (i as f32 * 1.3).cos(),
                    (i as f32 * 0.4).sin(),
                );
        }
        Groom::uniform(p, 17, Default::default()).unwrap()
    }

    #[test]
    fn embedding_reproduces_the_groom_at_rest_and_follows_rigid_motion() {
        let m = mesh();
        let g = groom_in(&m);
        let r = RenderStrands::embed(&m, &g);
        let mut out = Vec::new();
        r.positions(&m, &m.rest, &mut out);
        let scale = m.length();
        let worst = out
            .iter()
            .zip(g.points())
            .map(|(a, b)| a.distance(*b))
            .fold(0.0, f32::max);
        assert!(worst < 1e-5 * scale, "rest error {worst}");
        // A rigid motion of the mesh moves every strand point rigidly.
        let pose = Pose::new(
            glam::DQuat::from_euler(glam::EulerRot::XYZ, 0.4, -0.7, 0.2),
            glam::DVec3::new(3.0, -2.0, 5.0),
        );
        let moved: Vec<Vec3> = m.rest.iter().map(|p| pose.apply_f32(*p)).collect();
        r.positions(&m, &moved, &mut out);
        let worst = out
            .iter()
            .zip(g.points())
            .map(|(a, b)| a.distance(pose.apply_f32(*b)))
            .fold(0.0, f32::max);
        assert!(worst < 1e-4 * scale, "rigid error {worst}");
    }

    #[test]
    fn generated_strands_start_on_root_faces_and_pass_through_their_layers() {
        let m = mesh();
        let r = RenderStrands::generate(&m, 200, 33, 1);
        let mut out = Vec::new();
        r.positions(&m, &m.rest, &mut out);
        assert_eq!(out.len(), 200 * 33);
        let Kind::Generated { face, st, .. } = &r.kind else {
            unreachable!()
        };
        for (k, s) in out.chunks(33).enumerate() {
            // Catmull-Rom interpolates: the root and the tip are the face points of layers 0
            // and L, and every fourth point (33 = 8 × 4 + 1) is a layer point.
            for l in 0..m.layers {
                let want = face_map(&m, &m.rest, face[k], l, st[k * m.layers + l]).0;
                assert!(s[4 * l].distance(want) < 1e-4, "strand {k} layer {l}");
            }
        }
        // Same seed, same strands.
        let again = RenderStrands::generate(&m, 200, 33, 1);
        let mut out2 = Vec::new();
        again.positions(&m, &m.rest, &mut out2);
        assert_eq!(out, out2);
    }
}
