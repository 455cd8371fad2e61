//! A hair mesh fitted around a groom's strands. 002's meshes are modelled by artists; tress can
//! also make one from any groom: the roots are clustered by a regular grid over their scalp
//! coordinates (000 App. A), and each cluster becomes one bundle, a stack of square prisms
//! around the cluster's mean strand (its strands resampled to the mesh's layers by normalized arc
//! length), each cross-section perpendicular to the mean strand and as wide as the strands
//! spread. Cross-sections perpendicular to the hair keep every prism's volume well away from
//! zero even where hair lies flat on the scalp (a grid shared by neighbouring bundles would give
//! flat prisms there).

use glam::{Vec2, Vec3};

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
        BuildOptions { cells: 8, layers: 9 }
    }
}

/// What [`build`] made.
#[derive(Clone, Debug)]
pub struct BuildReport {
    pub columns: usize,
    pub faces: usize,
    pub vertices: usize,
    /// Grid cells with roots left without a bundle (a single strand, or a degenerate mean).
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

    // One bundle per grid cell with strands: a square cross-section around the cell's mean
    // strand, perpendicular to it, as wide as the strands spread (twice their RMS distance from
    // the mean, at least `MIN_WIDTH`), carried along the mean by parallel transport from the
    // scalp normal. Bundles share no vertices (002 §5: a mesh's bundles are split where its
    // topology says so).
    let mut cells_of: std::collections::BTreeMap<(i64, i64), Vec<u32>> = std::collections::BTreeMap::new();
    for (i, p) in uv.iter().enumerate() {
        let q = (*p - lo) / cell;
        let key = (
            (q.x.floor() as i64).min(nu as i64 - 2).max(0),
            (q.y.floor() as i64).min(nv as i64 - 2).max(0),
        );
        cells_of.entry(key).or_default().push(i as u32);
    }
    let mut rest: Vec<Vec3> = Vec::new();
    let mut faces = Vec::new();
    let mut dropped = 0;
    for members in cells_of.values() {
        if members.len() < 2 {
            dropped += 1;
            continue;
        }
        let inv = 1.0 / members.len() as f32;
        let mean: Vec<Vec3> = (0..layers)
            .map(|l| {
                members
                    .iter()
                    .map(|&s| resampled.strand(s as usize)[l])
                    .sum::<Vec3>()
                    * inv
            })
            .collect();
        let Some(columns) = bundle_columns(&mean, members, &resampled, center) else {
            dropped += 1;
            continue;
        };
        let base = (rest.len() / layers) as u32;
        for col in &columns {
            rest.extend_from_slice(col);
        }
        faces.push(vec![base, base + 1, base + 2, base + 3]);
    }
    if faces.is_empty() {
        return Err(Error::Invalid(format!(
            "no hair mesh bundle could be made with {cells} cells across the scalp; try fewer cells"
        )));
    }
    let mesh = HairMesh::new(layers, rest, faces)?;
    let report = BuildReport {
        columns: mesh.columns(),
        faces: mesh.faces.len(),
        vertices: mesh.vertex_count(),
        dropped_faces: dropped,
    };
    Ok((mesh, report))
}

/// Narrowest bundle (cm).
const MIN_WIDTH: f32 = 0.4;

/// The four corner columns of a bundle around `mean`, or `None` for a degenerate mean strand.
#[allow(clippy::needless_range_loop)] // l indexes the mean strand and every member strand
fn bundle_columns(mean: &[Vec3], members: &[u32], strands: &Groom, center: Vec3) -> Option<[Vec<Vec3>; 4]> {
    let layers = mean.len();
    let tangent = |l: usize| {
        let (a, b) = (mean[l.saturating_sub(1)], mean[(l + 1).min(layers - 1)]);
        (b - a).try_normalize()
    };
    let mut n = (mean[0] - center).try_normalize()?;
    let mut out: [Vec<Vec3>; 4] = std::array::from_fn(|_| Vec::with_capacity(layers));
    let mut prev_t: Option<Vec3> = None;
    for l in 0..layers {
        let t = tangent(l)?;
        // Parallel transport of the normal: rotate it by the turn of the tangent.
        if let Some(pt) = prev_t {
            let axis = pt.cross(t);
            if axis.length() > 1e-6 {
                let q = glam::Quat::from_rotation_arc(pt, t);
                n = q * n;
            }
        }
        prev_t = Some(t);
        n = (n - n.dot(t) * t)
            .try_normalize()
            .or_else(|| t.any_orthonormal_vector().try_normalize())?;
        let b = t.cross(n);
        let spread = (members
            .iter()
            .map(|&s| {
                let d = strands.strand(s as usize)[l] - mean[l];
                (d - d.dot(t) * t).length_squared()
            })
            .sum::<f32>()
            / members.len() as f32)
            .sqrt();
        let half = (2.0 * spread).max(MIN_WIDTH) * 0.5;
        for (k, (a, c)) in [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)]
            .into_iter()
            .enumerate()
        {
            out[k].push(mean[l] + half * (a * n + c * b));
        }
    }
    Some(out)
}
