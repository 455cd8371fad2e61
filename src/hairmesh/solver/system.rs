//! The implicit step's system matrix: its block pattern fixed at set-up (every pair of vertices
//! sharing an element, upper triangle) with each element's slots, products with it, and the
//! edge-graph Laplacian of the deformation minimization (002 Eq. 4).

use glam::{DVec3, Mat3A};
use nalgebra_sparse::pattern::SparsityPattern;
use nalgebra_sparse::{CooMatrix, CsrMatrix};

use super::HairMeshSim;
use super::elements::{Quad4, Tri};
use crate::error::{Error, Result};
use crate::hairmesh::mesh::HairMesh;

/// The system matrix's pattern: the upper triangle (j ≥ i) of every pair of vertices sharing an
/// element, block by block, the diagonal each row's first block; with every element's slots
/// set, and the slots of each vertex's diagonal block and of its block with the vertex above.
#[allow(clippy::type_complexity)]
pub(super) fn pattern(
    mesh: &HairMesh,
    tris: &mut [Tri],
    hinges: &mut [Quad4],
    tets: &mut [Quad4],
) -> Result<(CsrMatrix<Mat3A>, Vec<u32>, Vec<u32>)> {
    let n = mesh.vertex_count();
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
    let a = CsrMatrix::try_from_pattern_and_values(pattern, vec![Mat3A::ZERO; nnz])
        .map_err(|e| Error::Runtime(format!("hair mesh matrix: {e}")))?;
    // The slot of block (i, j), i ≤ j.
    let slot = |i: u32, j: u32| -> u32 {
        let nb = &neighbours[i as usize];
        (row_start[i as usize] + nb.binary_search(&j).expect("pattern holds every element pair")) as u32
    };
    for t in tris.iter_mut() {
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
    let diag_slot: Vec<u32> = (0..n as u32).map(|i| slot(i, i)).collect();
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
    Ok((a, diag_slot, up_slot))
}

/// The edge-graph Laplacian AᵀA of the deformation minimization (002 Eq. 4), and each
/// vertex's degree.
pub(super) fn laplacian(mesh: &HairMesh) -> (CsrMatrix<f64>, Vec<f64>) {
    let n = mesh.vertex_count();
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
    (laplacian, degree)
}

impl HairMeshSim {
    /// `y = A x` on 3-vectors, from the upper triangle (each off-diagonal block serves its row
    /// and, transposed, its column), with single-precision blocks and double-precision sums.
    pub(super) fn mul(&self, x: &[DVec3], y: &mut [DVec3]) {
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
    pub(super) fn block(&self, i: usize, j: usize) -> glam::DMat3 {
        let (r, c) = (i.min(j), i.max(j));
        let row = self.a.row(r);
        match row.col_indices().binary_search(&c) {
            Ok(k) => {
                let m = row.values()[k].as_dmat3();
                if i <= j { m } else { m.transpose() }
            }
            Err(_) => glam::DMat3::ZERO,
        }
    }

    /// `y = L x` for the scalar (n × n) Laplacian applied to each coordinate.
    pub(super) fn mul_scalar(l: &CsrMatrix<f64>, x: &[DVec3], y: &mut [DVec3]) {
        for (i, row) in l.row_iter().enumerate() {
            let mut s = DVec3::ZERO;
            for (&j, &a) in row.col_indices().iter().zip(row.values()) {
                s += a * x[j];
            }
            y[i] = s;
        }
    }
}

/// `m x` with a single-precision block and double-precision sums.
#[inline]
pub(super) fn mat_vec(m: &Mat3A, x: DVec3) -> DVec3 {
    m.x_axis.as_dvec3() * x.x + m.y_axis.as_dvec3() * x.y + m.z_axis.as_dvec3() * x.z
}

/// The first slot of row `i` that couples another column: after the diagonal and, where
/// there is one, the block of the next vertex up (the pattern holds no other block of the row
/// in its column).
#[inline(always)]
pub(super) fn off_column_start(row_offsets: &[usize], up_slot: &[u32], i: usize) -> usize {
    match up_slot[i] {
        u32::MAX => row_offsets[i] + 1,
        up => up as usize + 1,
    }
}

/// The lower-triangle blocks of each row that couple another column — the transposes of the
/// upper-triangle blocks `(j, i)`, `j < i`, off `j`'s column — as slots of the matrix's values,
/// row by row, with their columns `j`: the forward sweep gathers through them instead of
/// scattering each solved row into the later ones.
pub(super) struct LowerPattern {
    pub(super) offsets: Vec<usize>,
    pub(super) slot: Vec<u32>,
    pub(super) col: Vec<u32>,
}

impl LowerPattern {
    /// From the matrix's upper triangle and the slots of the in-column blocks (`up_slot`).
    pub(super) fn new(a: &CsrMatrix<Mat3A>, up_slot: &[u32]) -> LowerPattern {
        let n = a.nrows();
        let offsets = a.row_offsets();
        let cols = a.col_indices();
        let mut rows: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for j in 0..n {
            for k in off_column_start(offsets, up_slot, j)..offsets[j + 1] {
                rows[cols[k]].push((k as u32, j as u32));
            }
        }
        let mut lower = LowerPattern {
            offsets: Vec::with_capacity(n + 1),
            slot: Vec::new(),
            col: Vec::new(),
        };
        lower.offsets.push(0);
        for row in rows {
            for (k, j) in row {
                lower.slot.push(k);
                lower.col.push(j);
            }
            lower.offsets.push(lower.slot.len());
        }
        lower
    }
}
