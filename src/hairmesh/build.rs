//! A hair mesh fitted around a groom's strands. 002's meshes are modelled by artists (Yuksel et
//! al. 2009: root faces tiling the scalp, extruded layer by layer along the hair); tress can also
//! make one from any groom. The roots are placed on a regular grid over their scalp coordinates
//! (000 App. A), and the strands are resampled to the mesh's layers by normalized arc length.
//! Two topologies ([`Topology`]):
//!
//! Every cell with strands gets a *bundle*: a stack of square cross-sections around the cell's
//! mean strand, perpendicular to it, as wide as the strands spread, one side `n` away from the
//! scalp and the other `b` across the hair. Two topologies ([`Topology`]):
//!
//! * **Connected** (the default, as 002 §3 builds its meshes): bundles lying side by side across
//!   the hair share the two columns between them (each shared column the mean of the two corners
//!   it replaces), so side faces, edges and prism volumes couple neighbouring hair (002 §3: "this
//!   volumetric force, combined with the other forces along the horizontal edges of the hair
//!   mesh, models the interactions between hair strands"). Joined bundles form strips across the
//!   hair, one mesh region each (`BuildReport::regions`): around the back of the head cells
//!   neighbouring in u join, at the sides cells neighbouring in v, each bundle side with its
//!   nearest neighbour. Bundles lying over each other (higher roots' hair over lower roots') or
//!   along the flow stay apart.
//! * **Bundles**: every bundle separate; no coupling between them.
//!
//! Why not columns on the grid's nodes shared by all four cells around them (the scalp-tiling
//! layout of modelled meshes)? Measured on the quickstart groom (2,000 straight strands, 12
//! cells, 9 layers): with each node's column the weighted mean of the strands around it, 3,234
//! of the 8,320 corner tets are inverted at rest and the median tet is flat (volume 0.7 % of its
//! edge cube), because neighbouring rows of strands lie side by side on the scalp and cross each
//! other instead of stacking; the bundles' cross-sections keep every tet positive.

use glam::{Vec2, Vec3};
use petgraph::unionfind::UnionFind;
use serde::{Deserialize, Serialize};

use super::mesh::HairMesh;
use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::groom::resample::resample;
use crate::groom::scalp_uv::{scalp_center, scalp_uv};

/// How neighbouring cells of a built mesh are joined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Topology {
    /// Bundles side by side across the hair share the columns between them.
    #[default]
    Connected,
    /// One separate four-column bundle per cell.
    Bundles,
}

/// How to build a mesh from a groom.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Grid cells across the wider side of the roots' scalp coordinates.
    pub cells: usize,
    /// Vertex layers per column (root included).
    pub layers: usize,
    pub topology: Topology,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            cells: 10,
            layers: 9,
            topology: Topology::Connected,
        }
    }
}

/// What [`build`] made.
#[derive(Clone, Debug)]
pub struct BuildReport {
    pub columns: usize,
    pub faces: usize,
    pub vertices: usize,
    /// Grid cells with roots left without a face (bundles: a single strand, or a degenerate
    /// mean).
    pub dropped_faces: usize,
    /// Separate pieces of the mesh: faces joined through shared columns form one region
    /// (bundles: one per face).
    pub regions: usize,
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
    let grid = Grid { lo, cell, nu, nv };
    let (bundles, dropped) = cell_bundles(&grid, &uv, &resampled, layers, center);
    if bundles.is_empty() {
        return Err(Error::Invalid(format!(
            "no hair mesh bundle could be made with {cells} cells across the scalp; try fewer cells"
        )));
    }
    let mesh = match o.topology {
        Topology::Connected => connected(&bundles, layers)?,
        Topology::Bundles => separate(&bundles, layers)?,
    };
    let report = BuildReport {
        columns: mesh.columns(),
        faces: mesh.faces.len(),
        vertices: mesh.vertex_count(),
        dropped_faces: dropped,
        regions: regions(&mesh),
    };
    Ok((mesh, report))
}

/// The scalp-coordinate grid: lower corner, cell size, nodes across.
struct Grid {
    lo: Vec2,
    cell: f32,
    nu: usize,
    nv: usize,
}

impl Grid {
    /// The cell of a scalp coordinate and its position inside it (0–1 both ways).
    fn locate(&self, p: Vec2) -> ((usize, usize), Vec2) {
        let q = (p - self.lo) / self.cell;
        let i = (q.x.floor() as i64).clamp(0, self.nu as i64 - 2) as usize;
        let j = (q.y.floor() as i64).clamp(0, self.nv as i64 - 2) as usize;
        (
            (i, j),
            (q - Vec2::new(i as f32, j as f32)).clamp(Vec2::ZERO, Vec2::ONE),
        )
    }
}

/// One cell's bundle: its grid cell, mean strand and four corner columns (`+n+b`, `−n+b`,
/// `−n−b`, `+n−b`, with `n` away from the scalp and `b` across the hair).
struct Bundle {
    cell: (usize, usize),
    mean: Vec<Vec3>,
    columns: [Vec<Vec3>; 4],
}

/// The bundle of every grid cell with at least two strands, and how many cells made none.
fn cell_bundles(
    grid: &Grid,
    uv: &[Vec2],
    resampled: &Groom,
    layers: usize,
    center: Vec3,
) -> (Vec<Bundle>, usize) {
    // A square cross-section around the cell's mean strand, perpendicular to it, as wide as the
    // strands spread (twice their RMS distance from the mean, at least `MIN_WIDTH`), carried
    // along the mean by parallel transport from the scalp normal.
    let mut cells_of: std::collections::BTreeMap<(usize, usize), Vec<u32>> =
        std::collections::BTreeMap::new();
    for (i, p) in uv.iter().enumerate() {
        cells_of.entry(grid.locate(*p).0).or_default().push(i as u32);
    }
    let mut out = Vec::new();
    let mut dropped = 0;
    for (&cell, members) in &cells_of {
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
        match bundle_columns(&mean, members, resampled, center) {
            Some(columns) => out.push(Bundle { cell, mean, columns }),
            None => dropped += 1,
        }
    }
    (out, dropped)
}

/// The corners on a bundle's `+b` side (`side` true) or `−b` side, `+n` first.
fn side_corners(side: bool) -> [usize; 2] {
    if side { [0, 1] } else { [3, 2] }
}

/// How far bundle `b` lies from bundle `a` across the hair in `a`'s frame, averaged over the
/// layers: (across `b`, along `n`, along the hair), signed across.
fn offset(a: &Bundle, b: &Bundle) -> (f32, f32, f32) {
    let layers = a.mean.len();
    let (mut across, mut out, mut along) = (0.0, 0.0, 0.0);
    for l in 0..layers {
        let c = &a.columns;
        let bn = (c[0][l] + c[1][l] - c[2][l] - c[3][l]).normalize_or_zero();
        let nn = (c[0][l] + c[3][l] - c[1][l] - c[2][l]).normalize_or_zero();
        let t = (a.mean[(l + 1).min(layers - 1)] - a.mean[l.saturating_sub(1)]).normalize_or_zero();
        let d = b.mean[l] - a.mean[l];
        across += d.dot(bn);
        out += d.dot(nn).abs();
        along += d.dot(t).abs();
    }
    let k = 1.0 / layers as f32;
    (across * k, out * k, along * k)
}

/// The connected mesh: each cell's bundle joined to its neighbours across the hair. Two
/// bundles side by side across the hair (their mean strands further apart across it than out
/// from the scalp or along the hair) share the two columns between them, each shared column the
/// mean of the two corners it replaces; each bundle side joins its nearest such neighbour.
fn connected(bundles: &[Bundle], layers: usize) -> Result<HairMesh> {
    let index: std::collections::BTreeMap<(usize, usize), usize> =
        bundles.iter().enumerate().map(|(i, b)| (b.cell, i)).collect();
    // Candidate joins (distance, a, a's side, b, b's side) between cells at most one apart.
    let mut joins = Vec::new();
    for (ia, a) in bundles.iter().enumerate() {
        for di in -1i64..=1 {
            for dj in -1i64..=1 {
                let cell = (a.cell.0 as i64 + di, a.cell.1 as i64 + dj);
                if (di, dj) == (0, 0) || cell.0 < 0 || cell.1 < 0 {
                    continue;
                }
                let Some(&ib) = index.get(&(cell.0 as usize, cell.1 as usize)) else {
                    continue;
                };
                if ib <= ia {
                    continue;
                }
                let b = &bundles[ib];
                let (ab, ao, at) = offset(a, b);
                let (ba, bo, bt) = offset(b, a);
                if ab.abs() > ao.max(at) && ba.abs() > bo.max(bt) && ab * ba < 0.0 {
                    joins.push((ab.abs() + ba.abs(), ia, ab > 0.0, ib, ba > 0.0));
                }
            }
        }
    }
    joins.sort_by(|x, y| x.0.total_cmp(&y.0).then((x.1, x.3).cmp(&(y.1, y.3))));
    // Sets of joined corners (bundle · 4 + corner).
    let corners = 4 * bundles.len();
    let mut sets = UnionFind::<usize>::new(corners);
    let mut taken = std::collections::BTreeSet::new();
    for &(_, ia, sa, ib, sb) in &joins {
        if taken.contains(&(ia, sa)) || taken.contains(&(ib, sb)) {
            continue;
        }
        taken.insert((ia, sa));
        taken.insert((ib, sb));
        for (ca, cb) in side_corners(sa).into_iter().zip(side_corners(sb)) {
            sets.union(4 * ia + ca, 4 * ib + cb);
        }
    }
    // One column per set of joined corners, at their mean; columns in corner order.
    let mut column = vec![u32::MAX; corners];
    let mut sums: Vec<(Vec<Vec3>, f32)> = Vec::new();
    for i in 0..corners {
        let r = sets.find_mut(i);
        if column[r] == u32::MAX {
            column[r] = sums.len() as u32;
            sums.push((vec![Vec3::ZERO; layers], 0.0));
        }
        let (sum, n) = &mut sums[column[r] as usize];
        for (s, p) in sum.iter_mut().zip(&bundles[i / 4].columns[i % 4]) {
            *s += *p;
        }
        *n += 1.0;
    }
    let rest: Vec<Vec3> = sums
        .iter()
        .flat_map(|(sum, n)| sum.iter().map(move |p| *p / *n))
        .collect();
    let faces = (0..bundles.len())
        .map(|b| (0..4).map(|k| column[sets.find_mut(4 * b + k)]).collect())
        .collect();
    HairMesh::new(layers, rest, faces)
}

/// Faces joined through shared columns, counted as separate regions.
fn regions(mesh: &HairMesh) -> usize {
    let mut sets = UnionFind::<usize>::new(mesh.columns());
    for f in &mesh.faces {
        for &c in &f[1..] {
            sets.union(f[0] as usize, c as usize);
        }
    }
    let roots: std::collections::BTreeSet<usize> =
        mesh.faces.iter().map(|f| sets.find_mut(f[0] as usize)).collect();
    roots.len()
}

/// The separate bundles: one four-column stack of prisms per bundle.
fn separate(bundles: &[Bundle], layers: usize) -> Result<HairMesh> {
    let mut rest = Vec::with_capacity(bundles.len() * 4 * layers);
    let mut faces = Vec::with_capacity(bundles.len());
    for b in bundles {
        let base = (rest.len() / layers) as u32;
        for col in &b.columns {
            rest.extend_from_slice(col);
        }
        faces.push(vec![base, base + 1, base + 2, base + 3]);
    }
    HairMesh::new(layers, rest, faces)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hairmesh::forces::tet_volume;

    fn groom() -> Groom {
        crate::scene::load_groom("straight", &Default::default(), Some(600))
            .unwrap()
            .groom
    }

    #[test]
    fn connected_bundles_share_their_columns_and_keep_every_tet_positive() {
        let g = groom();
        let o = BuildOptions {
            cells: 6,
            ..Default::default()
        };
        let (joined, r) = build(&g, &o).unwrap();
        let (apart, a) = build(
            &g,
            &BuildOptions {
                topology: Topology::Bundles,
                ..o.clone()
            },
        )
        .unwrap();
        // The same bundles, fewer columns: every join replaces two corner pairs by two columns.
        assert_eq!(r.faces, a.faces);
        assert_eq!(a.regions, a.faces);
        assert_eq!(a.columns, 4 * a.faces);
        let shared = joined.sides().iter().filter(|s| s.faces == 2).count();
        assert!(
            shared > a.faces / 3,
            "only {shared} shared sides of {} bundles",
            a.faces
        );
        assert_eq!(r.columns, 4 * r.faces - 2 * shared);
        assert!(
            r.regions < r.faces / 2,
            "{} regions of {} faces",
            r.regions,
            r.faces
        );
        assert!(apart.sides().iter().all(|s| s.faces == 1));
        // No join may fold a prism: every corner tet keeps a positive rest volume.
        for t in joined.corner_tets() {
            let v = tet_volume(&t.map(|i| joined.rest[i as usize].as_dvec3())).0;
            assert!(v > 0.0, "tet {t:?} has rest volume {v}");
        }
    }
}
