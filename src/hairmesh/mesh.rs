//! The hair mesh (Yuksel et al. 2009, simulated by 002): root faces on the scalp, each extruded
//! through the same number of layers into a stack of prisms. Neighbouring extrusions share their
//! side faces and vertices. Vertices are grouped in *columns* (one per root vertex): vertex
//! `c · layers + l` is layer `l` of column `c`; layer 0 lies on the scalp and follows the head.
//!
//! What the solver needs is derived here once: the 8 (quad) or 6 (triangle) overlapping corner
//! tetrahedra of every prism (002 §3.1, Fig. 3), the side and layer faces, the mesh edges of the
//! deformation minimization (002 Eq. 3) and which vertices are on the surface (002 §3.2).
//!
//! On disk a hair mesh is an OBJ of the layered mesh (every layer face and side quad, vertices
//! column by column; any DCC tool shows it) and a small JSON sidecar `NAME.hairmesh` naming its
//! layers and root faces.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use glam::{DVec3, Vec3};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A layered hair mesh at rest (head frame, cm).
#[derive(Clone, Debug, PartialEq)]
pub struct HairMesh {
    /// Vertex layers per column, the root layer included (≥ 2).
    pub layers: usize,
    /// Rest positions, column by column.
    pub rest: Vec<Vec3>,
    /// Root faces: 3 or 4 column indices, counter-clockwise seen from the tips (the face normal
    /// points along the extrusion).
    pub faces: Vec<Vec<u32>>,
}

/// One quad strip between two neighbouring columns, from root to tip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Side {
    pub columns: [u32; 2],
    /// Faces sharing it: 1 on the outside of the mesh, 2 inside.
    pub faces: u32,
}

impl HairMesh {
    /// Checks and orients a mesh: every face has 3 or 4 distinct columns, every column is used,
    /// and faces are turned to face along the extrusion.
    pub fn new(layers: usize, rest: Vec<Vec3>, faces: Vec<Vec<u32>>) -> Result<HairMesh> {
        if layers < 2 {
            return Err(Error::Invalid(format!(
                "a hair mesh needs at least 2 layers (root and tip), not {layers}"
            )));
        }
        if rest.is_empty() || !rest.len().is_multiple_of(layers) {
            return Err(Error::Invalid(format!(
                "{} vertices do not make whole columns of {layers} layers",
                rest.len()
            )));
        }
        if let Some(i) = rest.iter().position(|p| !p.is_finite()) {
            return Err(Error::Invalid(format!("vertex {i} is not finite")));
        }
        let columns = rest.len() / layers;
        let mut used = vec![false; columns];
        for (k, f) in faces.iter().enumerate() {
            if !(3..=4).contains(&f.len()) {
                return Err(Error::Invalid(format!(
                    "root face {k} has {} corners (3 or 4 expected)",
                    f.len()
                )));
            }
            for (i, &c) in f.iter().enumerate() {
                if c as usize >= columns {
                    return Err(Error::Invalid(format!(
                        "root face {k} names column {c} but the mesh has {columns}"
                    )));
                }
                if f[..i].contains(&c) {
                    return Err(Error::Invalid(format!("root face {k} names column {c} twice")));
                }
                used[c as usize] = true;
            }
        }
        if faces.is_empty() {
            return Err(Error::Invalid("a hair mesh needs at least one root face".into()));
        }
        if let Some(c) = used.iter().position(|u| !u) {
            return Err(Error::Invalid(format!("column {c} belongs to no root face")));
        }
        let mut m = HairMesh { layers, rest, faces };
        m.orient();
        Ok(m)
    }

    pub fn columns(&self) -> usize {
        self.rest.len() / self.layers
    }

    pub fn vertex_count(&self) -> usize {
        self.rest.len()
    }

    /// Index of layer `l` of column `c`.
    pub fn vertex(&self, c: u32, l: usize) -> u32 {
        (c as usize * self.layers + l) as u32
    }

    /// Layer of vertex `i`.
    pub fn layer_of(&self, i: usize) -> usize {
        i % self.layers
    }

    /// Turns every face so its normal points along its extrusion (root to first layer).
    fn orient(&mut self) {
        for k in 0..self.faces.len() {
            let f = &self.faces[k];
            let (n, up) = self.face_normal_and_extrusion(f, 0);
            if n.dot(up) < 0.0 {
                self.faces[k].reverse();
            }
        }
    }

    /// Newell normal of face `f` on layer `l`, and its mean extrusion direction there.
    fn face_normal_and_extrusion(&self, f: &[u32], l: usize) -> (DVec3, DVec3) {
        let mut n = DVec3::ZERO;
        let mut up = DVec3::ZERO;
        for i in 0..f.len() {
            let a = self.rest[self.vertex(f[i], l) as usize].as_dvec3();
            let b = self.rest[self.vertex(f[(i + 1) % f.len()], l) as usize].as_dvec3();
            n += a.cross(b);
            up += self.rest[self.vertex(f[i], (l + 1).min(self.layers - 1)) as usize].as_dvec3() - a;
        }
        (n, up)
    }

    /// Column pairs joined by a root-face edge, each with the number of faces sharing it.
    pub fn sides(&self) -> Vec<Side> {
        let mut count: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        for f in &self.faces {
            for i in 0..f.len() {
                let (a, b) = (f[i], f[(i + 1) % f.len()]);
                *count.entry((a.min(b), a.max(b))).or_default() += 1;
            }
        }
        count
            .into_iter()
            .map(|((a, b), n)| Side {
                columns: [a, b],
                faces: n,
            })
            .collect()
    }

    /// The overlapping corner tetrahedra of every prism (002 Fig. 3): one per prism corner, the
    /// corner and its three neighbours in the prism, ordered so a prism that is not inverted
    /// gives positive volumes. Bottom face `a₀…aₙ₋₁`, top face `b₀…bₙ₋₁`: bottom corner `i` is
    /// `(aᵢ, aᵢ₊₁, aᵢ₋₁, bᵢ)`, top corner `i` is `(bᵢ, bᵢ₋₁, bᵢ₊₁, aᵢ)`.
    pub fn corner_tets(&self) -> Vec<[u32; 4]> {
        let mut tets = Vec::new();
        for l in 0..self.layers - 1 {
            for f in &self.faces {
                let n = f.len();
                let a = |i: usize| self.vertex(f[i % n], l);
                let b = |i: usize| self.vertex(f[i % n], l + 1);
                for i in 0..n {
                    tets.push([a(i), a(i + 1), a(i + n - 1), b(i)]);
                }
                for i in 0..n {
                    tets.push([b(i), b(i + n - 1), b(i + 1), a(i)]);
                }
            }
        }
        tets
    }

    /// The mesh's edges: along every column, and every root-face edge on every layer.
    pub fn edges(&self) -> Vec<[u32; 2]> {
        let mut e = Vec::new();
        for c in 0..self.columns() as u32 {
            for l in 0..self.layers - 1 {
                e.push([self.vertex(c, l), self.vertex(c, l + 1)]);
            }
        }
        for s in self.sides() {
            for l in 0..self.layers {
                e.push([self.vertex(s.columns[0], l), self.vertex(s.columns[1], l)]);
            }
        }
        e
    }

    /// Vertices on the mesh's surface (002 §3.2: only these are collision-tested): the tip layer
    /// and every vertex of a column on the mesh's border; never the root layer.
    pub fn external(&self) -> Vec<bool> {
        let mut border = vec![false; self.columns()];
        for s in self.sides() {
            if s.faces == 1 {
                border[s.columns[0] as usize] = true;
                border[s.columns[1] as usize] = true;
            }
        }
        (0..self.rest.len())
            .map(|i| {
                let l = self.layer_of(i);
                l > 0 && (l == self.layers - 1 || border[i / self.layers])
            })
            .collect()
    }

    /// Height of the mesh: the longest column (cm).
    pub fn length(&self) -> f32 {
        (0..self.columns() as u32)
            .map(|c| {
                (0..self.layers - 1)
                    .map(|l| {
                        (self.rest[self.vertex(c, l + 1) as usize] - self.rest[self.vertex(c, l) as usize])
                            .length()
                    })
                    .sum::<f32>()
            })
            .fold(0.0, f32::max)
    }

    /// A mesh of `nu × nv` columns rooted on the back of a sphere (`center`, `radius`), each
    /// leaving the scalp outward and then hanging straight down in `layers − 1` segments of
    /// `length / (layers − 1)` cm (the first one leaves the scalp; upper rows hang further out). For tests and benchmarks.
    pub fn procedural(p: &ProceduralMesh) -> Result<HairMesh> {
        let (nu, nv) = (p.columns_u.max(2), p.columns_v.max(2));
        let layers = p.layers.max(2);
        let seg = p.length / (layers - 1) as f32;
        let mut rest = Vec::with_capacity(nu * nv * layers);
        for i in 0..nu {
            for j in 0..nv {
                let az = (i as f32 / (nu - 1) as f32 - 0.5) * p.spread_deg.to_radians();
                let el = p.top_deg.to_radians() - j as f32 / (nv - 1) as f32 * p.height_deg.to_radians();
                let n = Vec3::new(az.sin() * el.cos(), el.sin(), -az.cos() * el.cos());
                let root = p.center + p.radius * n;
                // Out from the scalp at the root's height (hair from higher roots lies further
                // out, as hair does), then straight down.
                let out = Vec3::new(az.sin(), 0.0, -az.cos());
                let depth = p.row_gap * (nv - 1 - j) as f32 + 0.5 * seg;
                let first =
                    p.center + Vec3::new(0.0, root.y - p.center.y, 0.0) + (p.radius * el.cos() + depth) * out;
                rest.push(root);
                for l in 1..layers {
                    rest.push(first - Vec3::Y * (seg * (l - 1) as f32));
                }
            }
        }
        let col = |i: usize, j: usize| (i * nv + j) as u32;
        let mut faces = Vec::new();
        for i in 0..nu - 1 {
            for j in 0..nv - 1 {
                faces.push(vec![col(i, j), col(i + 1, j), col(i + 1, j + 1), col(i, j + 1)]);
            }
        }
        HairMesh::new(layers, rest, faces)
    }

    /// The sidecar's path for a mesh OBJ: `NAME.obj` → `NAME.hairmesh`.
    pub fn sidecar(obj: &Path) -> PathBuf {
        obj.with_extension("hairmesh")
    }

    /// Writes the OBJ and its sidecar (each complete or not at all).
    pub fn write(&self, obj: &Path) -> Result<()> {
        let mut text = String::new();
        let _ = writeln!(
            text,
            "# tress hair mesh: {} columns x {} layers; topology in {}",
            self.columns(),
            self.layers,
            Self::sidecar(obj)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
        let _ = writeln!(text, "o hairmesh");
        for p in &self.rest {
            let _ = writeln!(text, "v {} {} {}", p.x, p.y, p.z);
        }
        // 1-based OBJ indices.
        let v = |c: u32, l: usize| self.vertex(c, l) + 1;
        for l in 0..self.layers {
            for f in &self.faces {
                let _ = write!(text, "f");
                for &c in f {
                    let _ = write!(text, " {}", v(c, l));
                }
                text.push('\n');
            }
        }
        for s in self.sides() {
            let [a, b] = s.columns;
            for l in 0..self.layers - 1 {
                let _ = writeln!(text, "f {} {} {} {}", v(a, l), v(b, l), v(b, l + 1), v(a, l + 1));
            }
        }
        let side = Sidecar {
            format: SIDECAR_FORMAT.into(),
            version: 1,
            units: "cm".into(),
            layers: self.layers,
            columns: self.columns(),
            faces: self.faces.clone(),
        };
        let json = serde_json::to_string_pretty(&side).map_err(|e| Error::Runtime(e.to_string()))?;
        tress_formats::atomic::write(Self::sidecar(obj), json.as_bytes())?;
        tress_formats::atomic::write(obj, text.as_bytes())?;
        Ok(())
    }

    /// Reads a mesh written by [`HairMesh::write`] (or edited in a DCC tool that keeps vertex
    /// order): positions from the OBJ, layers and root faces from the sidecar.
    pub fn read(obj: &Path) -> Result<HairMesh> {
        let side_path = Self::sidecar(obj);
        let side_text = std::fs::read_to_string(&side_path).map_err(|e| {
            Error::Invalid(format!(
                "{}: a hair mesh needs its sidecar {} ({e})",
                obj.display(),
                side_path.display()
            ))
        })?;
        let side: Sidecar = serde_json::from_str(&side_text).map_err(|e| {
            Error::Invalid(format!(
                "{}:{}:{}: {e}",
                side_path.display(),
                e.line(),
                e.column()
            ))
        })?;
        if side.format != SIDECAR_FORMAT || side.version != 1 {
            return Err(Error::Invalid(format!(
                "{}: not a tress hair mesh sidecar (format {:?} version {}; expected {SIDECAR_FORMAT:?} version 1)",
                side_path.display(),
                side.format,
                side.version
            )));
        }
        if side.units != "cm" {
            return Err(Error::Invalid(format!(
                "{}: units {:?}; tress hair meshes are in cm",
                side_path.display(),
                side.units
            )));
        }
        let expected = side
            .columns
            .checked_mul(side.layers)
            .filter(|&n| n <= 50_000_000)
            .ok_or_else(|| {
                Error::Invalid(format!("{}: columns × layers is too large", side_path.display()))
            })?;
        let rest = read_obj_vertices(obj, expected)?;
        if rest.len() != expected {
            return Err(Error::Invalid(format!(
                "{}: {} vertices, but its sidecar says {} columns × {} layers = {expected}",
                obj.display(),
                rest.len(),
                side.columns,
                side.layers
            )));
        }
        HairMesh::new(side.layers, rest, side.faces)
            .map_err(|e| Error::Invalid(format!("{}: {e}", side_path.display())))
    }
}

const SIDECAR_FORMAT: &str = "tress-hairmesh";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sidecar {
    format: String,
    version: u32,
    units: String,
    layers: usize,
    columns: usize,
    faces: Vec<Vec<u32>>,
}

/// The `v` lines of an OBJ in file order (OBJ readers renumber vertices by face use; the hair
/// mesh's columns are in file order). Stops with an error past `limit` vertices.
fn read_obj_vertices(path: &Path, limit: usize) -> Result<Vec<Vec3>> {
    let text = std::fs::read(path).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
    let text = std::str::from_utf8(&text)
        .map_err(|_| Error::Invalid(format!("{}: not an OBJ file (not text)", path.display())))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut it = line.split_whitespace();
        if it.next() != Some("v") {
            continue;
        }
        let mut p = [0f32; 3];
        for (k, slot) in p.iter_mut().enumerate() {
            *slot = it
                .next()
                .and_then(|s| s.parse::<f32>().ok())
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    Error::Invalid(format!(
                        "{}:{}: vertex coordinate {} is missing or not a finite number",
                        path.display(),
                        n + 1,
                        ["x", "y", "z"][k]
                    ))
                })?;
        }
        out.push(Vec3::from_array(p));
        if out.len() > limit {
            return Err(Error::Invalid(format!(
                "{}:{}: more vertices than the sidecar's {limit}",
                path.display(),
                n + 1
            )));
        }
    }
    Ok(out)
}

/// Parameters of [`HairMesh::procedural`].
#[derive(Clone, Debug)]
pub struct ProceduralMesh {
    pub center: Vec3,
    pub radius: f32,
    pub columns_u: usize,
    pub columns_v: usize,
    pub layers: usize,
    pub length: f32,
    /// Width of the patch around the back of the head (degrees of azimuth).
    pub spread_deg: f32,
    /// Elevation of the top row of roots, and the patch's height (degrees).
    pub top_deg: f32,
    pub height_deg: f32,
    /// How much further out each row hangs than the row below it (cm).
    pub row_gap: f32,
}

impl Default for ProceduralMesh {
    fn default() -> Self {
        ProceduralMesh {
            center: Vec3::new(0.0, 0.0, 0.0),
            radius: 9.0,
            columns_u: 4,
            columns_v: 3,
            layers: 9,
            length: 24.0,
            spread_deg: 60.0,
            top_deg: 10.0,
            height_deg: 30.0,
            row_gap: 1.5,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hairmesh::forces::tet_volume;

    #[test]
    fn corner_tets_of_a_prism_are_positive_and_overlap_at_every_corner() {
        let m = HairMesh::procedural(&ProceduralMesh::default()).unwrap();
        let tets = m.corner_tets();
        assert_eq!(tets.len(), 8 * m.faces.len() * (m.layers - 1));
        for t in &tets {
            let x = t.map(|i| m.rest[i as usize].as_dvec3());
            assert!(tet_volume(&x).0 > 0.0, "{t:?}");
        }
        // Every vertex of every prism is the corner of one of its tets (8 per hexahedron).
        let corners: std::collections::BTreeSet<u32> = tets[..8].iter().map(|t| t[0]).collect();
        assert_eq!(corners.len(), 8);
    }

    #[test]
    fn triangular_prisms_get_six_corner_tets_and_faces_are_oriented() {
        // One triangle given clockwise: orientation flips it so its tets are positive.
        let rest = vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 1.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.0, 1.0, 1.0),
        ];
        let m = HairMesh::new(2, rest, vec![vec![0, 2, 1]]).unwrap();
        let tets = m.corner_tets();
        assert_eq!(tets.len(), 6);
        for t in &tets {
            assert!(tet_volume(&t.map(|i| m.rest[i as usize].as_dvec3())).0 > 0.0);
        }
        assert!(m.external().iter().enumerate().all(|(i, &e)| e == (i % 2 == 1)));
    }

    #[test]
    fn inner_columns_are_not_external() {
        let m = HairMesh::procedural(&ProceduralMesh {
            columns_u: 3,
            columns_v: 3,
            layers: 4,
            ..Default::default()
        })
        .unwrap();
        let ext = m.external();
        // Column 4 is the middle of the 3×3 grid: only its tip is on the surface.
        for l in 0..4 {
            assert_eq!(ext[m.vertex(4, l) as usize], l == 3);
            assert_eq!(ext[m.vertex(0, l) as usize], l > 0);
        }
        // 9 columns × 3 segments + 12 sides × 4 layers.
        assert_eq!(m.edges().len(), 9 * 3 + 12 * 4);
    }

    #[test]
    fn files_round_trip_and_bad_files_are_named() {
        let dir = std::env::temp_dir().join(format!("tress-hairmesh-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let m = HairMesh::procedural(&ProceduralMesh::default()).unwrap();
        let path = dir.join("mesh.obj");
        m.write(&path).unwrap();
        let back = HairMesh::read(&path).unwrap();
        assert_eq!(back, m);
        // The OBJ is an ordinary mesh to other readers: every layer face and side quad.
        let tri = tress_formats::obj::read(&path).unwrap();
        assert_eq!(tri.positions.len(), m.vertex_count());
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replacen("v ", "v nan ", 1)).unwrap();
        let e = HairMesh::read(&path).unwrap_err().to_string();
        assert!(e.contains("mesh.obj:3") && e.contains("coordinate x"), "{e}");
        std::fs::write(HairMesh::sidecar(&path), "{\"format\": \"tress-hairmesh\"").unwrap();
        let e = HairMesh::read(&path).unwrap_err().to_string();
        assert!(e.contains("mesh.hairmesh:1"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
