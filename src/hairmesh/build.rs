//! A hair mesh fitted around a groom's strands. 002's meshes are modelled by artists; tress can
//! also make one from any groom: a regular grid over the roots' scalp coordinates (000 App. A),
//! one column per grid node that has roots nearby (the Gaussian-weighted mean of the nearby
//! strands, each resampled to the mesh's layers by normalized arc length), one quad root face per
//! grid cell whose four nodes have columns. Faces whose prisms would start flat or inverted
//! (crossing hair, partings) are dropped, and the count reported.

use glam::{Vec2, Vec3};

use super::forces::tet_volume;
use super::mesh::HairMesh;
use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::groom::resample::resample;
use crate::groom::scalp_uv::{scalp_center, scalp_uv};

/// How to build a mesh from a groom.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Grid cells across the wider side of the roots' scalp coordinates.
    pub cells: usize,
    /// Vertex layers per column (root included).
    pub layers: usize,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions { cells: 12, layers: 9 }
    }
}

/// What [`build`] made.
#[derive(Clone, Debug)]
pub struct BuildReport {
    pub columns: usize,
    pub faces: usize,
    pub vertices: usize,
    /// Grid cells with roots that were dropped because a prism would start flat or inverted.
    pub dropped_faces: usize,
}

/// Builds a hair mesh around `groom` (rest pose, head frame).
pub fn build(groom: &Groom, o: &BuildOptions) -> Result<(HairMesh, BuildReport)> {
    if groom.strand_count() < 4 {
        return Err(Error::Invalid(
            "a hair mesh needs a groom of at least 4 strands".into(),
        ));
    }
    let layers = o.layers.clamp(2, 64);
    let cells = o.cells.clamp(1, 256);
    let roots = groom.roots();
    let center = scalp_center(&roots);
    let uv: Vec<Vec2> = roots.iter().map(|r| scalp_uv(*r, center)).collect();
    let (lo, hi) = uv.iter().fold(
        (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY)),
        |(a, b), p| (a.min(*p), b.max(*p)),
    );
    let extent = (hi - lo).max(Vec2::splat(1e-6));
    let cell = extent.max_element() / cells as f32;
    let nu = (extent.x / cell).ceil() as usize + 1;
    let nv = (extent.y / cell).ceil() as usize + 1;
    let resampled = resample(groom, layers);

    // Roots binned by grid cell for neighbour queries.
    let bin = |p: Vec2| -> (i64, i64) {
        let q = (p - lo) / cell;
        (q.x.floor() as i64, q.y.floor() as i64)
    };
    let mut bins: std::collections::HashMap<(i64, i64), Vec<u32>> = std::collections::HashMap::new();
    for (i, p) in uv.iter().enumerate() {
        bins.entry(bin(*p)).or_default().push(i as u32);
    }
    let sigma = 0.6 * cell;
    let mut column_of = vec![u32::MAX; nu * nv];
    let mut rest: Vec<Vec3> = Vec::new();
    for i in 0..nu {
        for j in 0..nv {
            let g = lo + Vec2::new(i as f32, j as f32) * cell;
            let mut w_sum = 0.0f32;
            let mut col = vec![Vec3::ZERO; layers];
            let mut near = false;
            for di in -2..=1 {
                for dj in -2..=1 {
                    let Some(list) = bins.get(&(i as i64 + di, j as i64 + dj)) else {
                        continue;
                    };
                    for &s in list {
                        let d = uv[s as usize].distance(g);
                        if d > 1.5 * cell {
                            continue;
                        }
                        near |= d <= cell;
                        let w = (-(d * d) / (2.0 * sigma * sigma)).exp();
                        for (c, p) in col.iter_mut().zip(resampled.strand(s as usize)) {
                            *c += w * *p;
                        }
                        w_sum += w;
                    }
                }
            }
            if near && w_sum > 0.0 {
                column_of[i * nv + j] = (rest.len() / layers) as u32;
                rest.extend(col.iter().map(|c| *c / w_sum));
            }
        }
    }
    let mut faces = Vec::new();
    let mut candidates = 0;
    for i in 0..nu.saturating_sub(1) {
        for j in 0..nv.saturating_sub(1) {
            let f = [
                column_of[i * nv + j],
                column_of[(i + 1) * nv + j],
                column_of[(i + 1) * nv + j + 1],
                column_of[i * nv + j + 1],
            ];
            if f.contains(&u32::MAX) {
                continue;
            }
            candidates += 1;
            faces.push(f.to_vec());
        }
    }
    if faces.is_empty() {
        return Err(Error::Invalid(format!(
            "no hair mesh face could be made with {cells} cells across the scalp; try fewer cells"
        )));
    }
    // Orient faces along their extrusion, then drop those with a flat or inverted corner tet.
    let keep = |faces: Vec<Vec<u32>>| -> Result<Vec<Vec<u32>>> {
        let probe = HairMesh {
            layers,
            rest: rest.clone(),
            faces,
        };
        let oriented = oriented_faces(&probe);
        let volumes: Vec<f64> = oriented.iter().map(|f| min_corner_volume(&probe, f)).collect();
        let mut typical: Vec<f64> = volumes.iter().copied().filter(|v| *v > 0.0).collect();
        typical.sort_by(f64::total_cmp);
        let typical = typical.get(typical.len() / 2).copied().unwrap_or(0.0);
        Ok(oriented
            .into_iter()
            .zip(volumes)
            .filter(|(_, v)| *v > 1e-2 * typical)
            .map(|(f, _)| f)
            .collect())
    };
    let faces = keep(faces)?;
    let dropped = candidates - faces.len();
    if faces.is_empty() {
        return Err(Error::Invalid(
            "every hair mesh prism would start flat or inverted; the groom's strands cross too much".into(),
        ));
    }
    // Keep only the columns still used, renumbered in order.
    let columns = rest.len() / layers;
    let mut used = vec![u32::MAX; columns];
    let mut kept_rest = Vec::new();
    for f in &faces {
        for &c in f {
            if used[c as usize] == u32::MAX {
                used[c as usize] = 0;
            }
        }
    }
    let mut next = 0u32;
    for c in 0..columns {
        if used[c] != u32::MAX {
            used[c] = next;
            next += 1;
            kept_rest.extend_from_slice(&rest[c * layers..(c + 1) * layers]);
        }
    }
    let faces: Vec<Vec<u32>> = faces
        .iter()
        .map(|f| f.iter().map(|&c| used[c as usize]).collect())
        .collect();
    let mesh = HairMesh::new(layers, kept_rest, faces)?;
    let report = BuildReport {
        columns: mesh.columns(),
        faces: mesh.faces.len(),
        vertices: mesh.vertex_count(),
        dropped_faces: dropped,
    };
    Ok((mesh, report))
}

/// Faces turned to point along their extrusion (as [`HairMesh::new`] does).
fn oriented_faces(m: &HairMesh) -> Vec<Vec<u32>> {
    m.faces
        .iter()
        .map(|f| {
            let mut n = Vec3::ZERO;
            let mut up = Vec3::ZERO;
            for i in 0..f.len() {
                let a = m.rest[m.vertex(f[i], 0) as usize];
                let b = m.rest[m.vertex(f[(i + 1) % f.len()], 0) as usize];
                n += a.cross(b);
                up += m.rest[m.vertex(f[i], 1) as usize] - a;
            }
            let mut f = f.clone();
            if n.dot(up) < 0.0 {
                f.reverse();
            }
            f
        })
        .collect()
}

/// Smallest corner-tet volume over the face's prisms.
fn min_corner_volume(m: &HairMesh, f: &[u32]) -> f64 {
    let probe = HairMesh {
        layers: m.layers,
        rest: Vec::new(),
        faces: vec![f.to_vec()],
    };
    probe
        .corner_tets()
        .iter()
        .map(|t| tet_volume(&t.map(|i| m.rest[i as usize].as_dvec3())).0)
        .fold(f64::INFINITY, f64::min)
}
