//! The uv-grid groom of the neural interpolator (000 §4.1, Eq. 1; DESIGN §4 "Groom preparation").
//!
//! The network works on a tensor s ∈ R^{n×n×n_w×3}: strands whose roots lie on a regular n × n
//! grid of root UVs (000 App. A), each with n_w particles spaced evenly by length, in the head's
//! frame. tress's grooms are not laid out on such a grid, so:
//!
//! - **Grid from the groom.** The grid spans the bounding box of the groom's root UVs. Each cell
//!   takes the strand whose root UV is closest to the cell's centre (its *source*), resampled to
//!   n_w particles at even arc-length fractions of its rest shape. A cell whose closest root is
//!   farther than 0.75 cell widths is *empty*: it still holds its source (so the tensors are
//!   plausible hair everywhere) but is masked out of every loss and of the transfer back.
//! - **Guides** are the sources of the cells (k·i, k·j) (000 §4.2.3: one strand in every k along u
//!   and v); they are real strands of the groom, simulated like any other method's guides.
//! - **Frames onto the grid**: a cell takes its source strand's particles at the same arc-length
//!   fractions (exact when the strand already has n_w evenly spaced particles).
//! - **Transfer back**: roots stay where they are in the head's frame (they are attached to the
//!   scalp). A strand that is the source of a non-empty cell adds to its rest shape that cell's
//!   change of shape — its displacement from rest relative to its root's — at its own arc-length
//!   fractions (exact at rest; for strands that already have n_w evenly spaced particles, exact
//!   for every motion that keeps roots in place); every other strand adds a blend of the
//!   changes of shape of the non-empty cells around it: bilinear by root UV, each cell's weight
//!   damped by exp(−(d_c² − d_min²)/σ²), d_c the RMS distance between the cell's rest shape and
//!   the strand's (both from their roots), σ = [`SHAPE_SIGMA_CM`]. Across a parting or a
//!   whorl, where neighbouring cells hang different ways and move differently, the strand
//!   follows the cells shaped like it instead of a mean of both sides.

use glam::{Vec2, Vec3};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::groom::{Groom, scalp_center};
use crate::guides::root_uvs;

/// What defines a grid (stored in a model file): its size, guide stride and particles per strand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GridSpec {
    /// Cells along u and along v (n_u = n_v).
    pub n: usize,
    /// One guide every `stride` cells along u and v (a power of two).
    pub stride: usize,
    /// Particles per grid strand (n_w).
    pub points: usize,
}

impl GridSpec {
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Invalid(m));
        if !self.stride.is_power_of_two() || self.stride < 2 {
            return bad(format!(
                "the guide stride must be a power of two ≥ 2, not {}",
                self.stride
            ));
        }
        if self.n < 2 * self.stride || !self.n.is_multiple_of(self.stride) || self.n > 1024 {
            return bad(format!(
                "the grid size must be a multiple of the guide stride {} between {} and 1024, not {}",
                self.stride,
                2 * self.stride,
                self.n
            ));
        }
        if !(4..=256).contains(&self.points) {
            return bad(format!(
                "grid strands need 4 to 256 particles, not {}",
                self.points
            ));
        }
        Ok(())
    }

    /// Guides along u (and v) on the whole grid.
    pub fn guides_per_side(&self) -> usize {
        self.n / self.stride
    }

    /// Levels of the network's rest pyramid: stride = 2^levels.
    pub fn levels(&self) -> usize {
        self.stride.trailing_zeros() as usize
    }
}

/// Network units: positions relative to the scalp centre over this many cm (fixed for every
/// groom so interpolation stays in absolute positions).
pub const UNIT_CM: f32 = 10.0;

/// How unlike (RMS over the strand, cm) a cell's rest shape may be from a strand's before the
/// cell stops counting in the strand's transfer back. Chosen on the quickstart's training
/// simulation (`turn`): its transfer floor (ground truth onto the 32² grid and straight back)
/// is 0.614 cm RMSE with plain bilinear weights, 0.565 / 0.559 / 0.582 / 0.596 cm at
/// σ = 0.5 / 1 / 2 / 4 cm.
pub const SHAPE_SIGMA_CM: f32 = 1.0;

/// A groom laid on a uv grid.
#[derive(Clone, Debug)]
pub struct UvGrid {
    pub spec: GridSpec,
    /// Lower corner and size of the UV box.
    pub lo: Vec2,
    pub size: Vec2,
    /// The scalp centre (network origin), head frame.
    pub origin: Vec3,
    /// Source strand of each cell, cell (i, j) at i·n + j (i along u).
    pub source: Vec<u32>,
    /// Whether each cell is near a real root.
    pub occupied: Vec<bool>,
    /// Rest strands of the grid, head frame, [n, n, points] particles.
    pub rest: Vec<Vec3>,
    /// Arc-length fraction of each particle of the groom at rest (per groom particle).
    frac: Vec<f32>,
    offsets: Vec<usize>,
    /// How each groom strand comes back from the grid.
    back: Vec<Back>,
    /// Each groom particle at rest less its cells' rest change of shape (so a frame adds only
    /// the cells' current shapes).
    base: Vec<Vec3>,
}

#[derive(Clone, Debug)]
enum Back {
    /// This cell's displacement.
    Cell(u32),
    /// Bilinear blend of these cells' displacements.
    Blend(Vec<(u32, f32)>),
}

/// Arc-length fractions of a polyline's particles (0 at the root, 1 at the tip).
fn fractions(s: &[Vec3]) -> Vec<f32> {
    let mut acc = vec![0.0f32; s.len()];
    for i in 1..s.len() {
        acc[i] = acc[i - 1] + s[i].distance(s[i - 1]);
    }
    let total = acc.last().copied().unwrap_or(0.0);
    if total <= 0.0 {
        let n = (s.len().max(2) - 1) as f32;
        return (0..s.len()).map(|i| i as f32 / n).collect();
    }
    acc.iter().map(|a| a / total).collect()
}

/// The point at arc-length fraction `t` of a grid strand (particles at even fractions).
fn on_grid(s: &[Vec3], t: f32) -> Vec3 {
    let x = t.clamp(0.0, 1.0) * (s.len() - 1) as f32;
    let i = (x as usize).min(s.len() - 2);
    s[i].lerp(s[i + 1], x - i as f32)
}

/// Cell `c`'s shape at arc-length fraction `t`, from its root: grid frames `cells` of `w`
/// particles per cell (the rest grid or any frame).
fn cell_shape(cells: &[Vec3], w: usize, c: usize, t: f32) -> Vec3 {
    let s = &cells[c * w..(c + 1) * w];
    on_grid(s, t) - s[0]
}

/// The point at arc-length fraction `t` of a strand whose particles sit at fractions `f`.
fn at_fraction(s: &[Vec3], f: &[f32], t: f32) -> Vec3 {
    if s.len() == 1 {
        return s[0];
    }
    let i = f.partition_point(|&x| x <= t).clamp(1, s.len() - 1);
    let (a, b) = (f[i - 1], f[i]);
    let u = if b > a {
        ((t - a) / (b - a)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    s[i - 1].lerp(s[i], u)
}

/// The closest live strand (by root UV) to each cell centre of the `n × n` grid over
/// `lo..lo + size`, found by a coarse bucket search; whether it is close enough for the cell to
/// be occupied; and its distance in cells.
fn nearest_strands(
    uvs: &[Vec2],
    live: &[usize],
    lo: Vec2,
    size: Vec2,
    n: usize,
) -> (Vec<u32>, Vec<bool>, Vec<f32>) {
    let cell = size / n as f32;
    let buckets = 64usize;
    let bucket_of = |uv: Vec2| {
        let f = ((uv - lo) / size * buckets as f32).clamp(Vec2::ZERO, Vec2::splat(buckets as f32 - 1e-3));
        (f.x as usize, f.y as usize)
    };
    let mut bucket: Vec<Vec<u32>> = vec![Vec::new(); buckets * buckets];
    for &s in live {
        let (bx, by) = bucket_of(uvs[s]);
        bucket[bx * buckets + by].push(s as u32);
    }
    let mut source = vec![0u32; n * n];
    let mut occupied = vec![false; n * n];
    let mut nearest_dist = vec![f32::INFINITY; n * n];
    for i in 0..n {
        for j in 0..n {
            let c = lo + Vec2::new((i as f32 + 0.5) * cell.x, (j as f32 + 0.5) * cell.y);
            let (bx, by) = bucket_of(c);
            let mut best: Option<(f32, u32)> = None;
            for r in 0..buckets {
                let (x0, x1) = (bx.saturating_sub(r), (bx + r).min(buckets - 1));
                let (y0, y1) = (by.saturating_sub(r), (by + r).min(buckets - 1));
                for x in x0..=x1 {
                    for y in y0..=y1 {
                        if x != x0 && x != x1 && y != y0 && y != y1 {
                            continue;
                        }
                        for &s in &bucket[x * buckets + y] {
                            let d = ((uvs[s as usize] - c) / cell).length();
                            if best.is_none_or(|(bd, bs)| d < bd || (d == bd && s < bs)) {
                                best = Some((d, s));
                            }
                        }
                    }
                }
                // Any strand beyond ring r + 1 is farther than the ring's inner edge.
                if let Some((bd, _)) = best {
                    let ring = r as f32 * (size / buckets as f32) / cell;
                    if bd <= ring.min_element() {
                        break;
                    }
                }
            }
            let (d, s) = best.expect("the groom has live strands");
            source[i * n + j] = s;
            occupied[i * n + j] = d <= 0.75;
            nearest_dist[i * n + j] = d;
        }
    }
    (source, occupied, nearest_dist)
}

/// Where the grid's cells are and what they hold, for the transfer back to the strands.
struct Placement<'a> {
    groom: &'a Groom,
    uvs: &'a [Vec2],
    lo: Vec2,
    cell: Vec2,
    n: usize,
    occupied: &'a [bool],
    rest: &'a [Vec3],
    w: usize,
    frac: &'a [f32],
    offsets: &'a [usize],
    sigma: f32,
}

impl Placement<'_> {
    /// How strand `s` comes back: from the cell it fills (`owner`), else the bilinear blend of
    /// the occupied cells around its root UV weighted by how alike their rest shapes are, else
    /// the closest occupied cell.
    fn back(&self, s: usize, owner: Option<(f32, u32)>) -> Back {
        let Placement {
            groom,
            uvs,
            lo,
            cell,
            n,
            occupied,
            rest,
            w,
            frac,
            offsets,
            sigma,
        } = *self;
        if let Some((_, c)) = owner {
            return Back::Cell(c);
        }
        // Bilinear over the four cell centres around the root UV.
        let f = (uvs[s] - lo) / cell - Vec2::splat(0.5);
        let f = f.clamp(Vec2::ZERO, Vec2::splat((n - 1) as f32));
        let (i0, j0) = ((f.x as usize).min(n - 2), (f.y as usize).min(n - 2));
        let (a, b) = (f.x - i0 as f32, f.y - j0 as f32);
        let mut ws = Vec::with_capacity(4);
        for (di, dj, wt) in [
            (0, 0, (1.0 - a) * (1.0 - b)),
            (1, 0, a * (1.0 - b)),
            (0, 1, (1.0 - a) * b),
            (1, 1, a * b),
        ] {
            let c = (i0 + di) * n + j0 + dj;
            if occupied[c] && wt > 0.0 {
                ws.push((c as u32, wt));
            }
        }
        // Cells whose rest shape is unlike the strand's (across a parting, a whorl)
        // move unlike it: each cell's weight is damped by how far its rest shape
        // (from its root) lies from the strand's, relative to the closest cell's.
        // Whether any non-empty cell is around, before the weighting below (which keeps
        // the closest-shaped cell's weight as it is, so it never empties the set).
        let around: f32 = ws.iter().map(|p| p.1).sum();
        let own = groom.strand(s);
        if ws.len() > 1 && !own.is_empty() {
            let f = &frac[offsets[s]..offsets[s + 1]];
            let d2: Vec<f32> = ws
                .iter()
                .map(|&(c, _)| {
                    own.iter()
                        .zip(f)
                        .map(|(p, &t)| (*p - own[0]).distance_squared(cell_shape(rest, w, c as usize, t)))
                        .sum::<f32>()
                        / own.len() as f32
                })
                .collect();
            let best = d2.iter().copied().fold(f32::INFINITY, f32::min);
            for ((_, wt), d) in ws.iter_mut().zip(&d2) {
                *wt *= (-(d - best) / (sigma * sigma)).exp();
            }
        }
        let total: f32 = ws.iter().map(|p| p.1).sum();
        if around <= 1e-6 || total <= 0.0 {
            // No non-empty cell around: the closest non-empty cell (by UV).
            let c = (0..n * n)
                .filter(|&c| occupied[c])
                .min_by(|&x, &y| {
                    let cx = lo + Vec2::new(((x / n) as f32 + 0.5) * cell.x, ((x % n) as f32 + 0.5) * cell.y);
                    let cy = lo + Vec2::new(((y / n) as f32 + 0.5) * cell.x, ((y % n) as f32 + 0.5) * cell.y);
                    cx.distance_squared(uvs[s])
                        .total_cmp(&cy.distance_squared(uvs[s]))
                })
                .unwrap_or(0);
            return Back::Blend(vec![(c as u32, 1.0)]);
        }
        Back::Blend(ws.into_iter().map(|(c, wt)| (c, wt / total)).collect())
    }
}

impl UvGrid {
    /// Lays `groom` (rest, head frame) on the grid `spec`.
    pub fn new(groom: &Groom, spec: GridSpec) -> Result<UvGrid> {
        Self::with_shape_sigma(groom, spec, SHAPE_SIGMA_CM)
    }

    /// [`UvGrid::new`] with the transfer back's shape scale `sigma` (cm; infinite: plain
    /// bilinear weights).
    pub fn with_shape_sigma(groom: &Groom, spec: GridSpec, sigma: f32) -> Result<UvGrid> {
        spec.validate()?;
        let strands = groom.strand_count();
        if strands == 0 || groom.strands().all(|s| s.len() < 2) {
            return Err(Error::Invalid(
                "the groom has no strand with two particles".into(),
            ));
        }
        let uvs = root_uvs(groom);
        let live: Vec<usize> = (0..strands).filter(|&s| groom.strand(s).len() >= 2).collect();
        let (lo, hi) = live
            .iter()
            .fold((Vec2::INFINITY, Vec2::NEG_INFINITY), |(l, h), &s| {
                (l.min(uvs[s]), h.max(uvs[s]))
            });
        let size = (hi - lo).max(Vec2::splat(1e-6));
        let n = spec.n;
        let cell = size / n as f32;
        let (source, occupied, nearest_dist) = nearest_strands(&uvs, &live, lo, size, n);
        let origin = scalp_center(&groom.roots());
        // Rest strands of the cells at even arc-length fractions.
        let w = spec.points;
        let ts: Vec<f32> = (0..w).map(|k| k as f32 / (w - 1) as f32).collect();
        let mut frac = Vec::with_capacity(groom.point_count());
        for s in groom.strands() {
            frac.extend(fractions(s));
        }
        let offsets = groom.offsets().to_vec();
        let mut rest = Vec::with_capacity(n * n * w);
        for &s in &source {
            let st = groom.strand(s as usize);
            let f = &frac[offsets[s as usize]..offsets[s as usize + 1]];
            rest.extend(ts.iter().map(|&t| at_fraction(st, f, t)));
        }
        // How each strand comes back.
        let mut own: Vec<Option<(f32, u32)>> = vec![None; strands];
        for (c, &s) in source.iter().enumerate() {
            if occupied[c] {
                let d = nearest_dist[c];
                let e = &mut own[s as usize];
                if e.is_none_or(|(bd, bc)| d < bd || (d == bd && (c as u32) < bc)) {
                    *e = Some((d, c as u32));
                }
            }
        }
        let place = Placement {
            groom,
            uvs: &uvs,
            lo,
            cell,
            n,
            occupied: &occupied,
            rest: &rest,
            w,
            frac: &frac,
            offsets: &offsets,
            sigma,
        };
        let back = (0..strands).map(|s| place.back(s, own[s])).collect();
        let mut grid = UvGrid {
            spec,
            lo,
            size,
            origin,
            source,
            occupied,
            rest,
            frac,
            offsets,
            back,
            base: Vec::new(),
        };
        let mut base = vec![Vec3::ZERO; grid.frac.len()];
        for s in 0..strands {
            let r = grid.offsets[s]..grid.offsets[s + 1];
            grid.shapes(s, &grid.rest, &mut base[r.clone()]);
            for p in r {
                base[p] = groom.points()[p] - base[p];
            }
        }
        grid.base = base;
        Ok(grid)
    }

    pub fn cells(&self) -> usize {
        self.spec.n * self.spec.n
    }

    /// The cell of guide (i, j) of a lattice starting at cell (du, dv).
    pub fn guide_cell(&self, i: usize, j: usize, du: usize, dv: usize) -> usize {
        let k = self.spec.stride;
        (du + k * i) * self.spec.n + dv + k * j
    }

    /// The groom strands that are guides on the whole grid (crop offset 0), increasing, unique.
    pub fn guide_strands(&self) -> Vec<usize> {
        let m = self.spec.guides_per_side();
        let mut g: Vec<usize> = (0..m)
            .flat_map(|i| (0..m).map(move |j| (i, j)))
            .map(|(i, j)| self.source[self.guide_cell(i, j, 0, 0)] as usize)
            .collect();
        g.sort_unstable();
        g.dedup();
        g
    }

    /// One frame of the whole groom (head frame, groom order) on the grid, [n, n, points].
    pub fn gather(&self, groom_points: &[Vec3], out: &mut Vec<Vec3>) {
        let w = self.spec.points;
        out.clear();
        for &s in &self.source {
            let r = self.offsets[s as usize]..self.offsets[s as usize + 1];
            let (st, f) = (&groom_points[r.clone()], &self.frac[r]);
            out.extend((0..w).map(|k| at_fraction(st, f, k as f32 / (w - 1) as f32)));
        }
    }

    /// The groom (head frame, groom order) from a frame of the grid.
    pub fn scatter(&self, grid: &[Vec3], out: &mut [Vec3]) {
        for s in 0..self.back.len() {
            let r = self.offsets[s]..self.offsets[s + 1];
            self.scatter_strand(s, grid, &mut out[r]);
        }
    }

    /// Groom strand `s` (`dst`, its particles) from a frame of the grid.
    pub fn scatter_strand(&self, s: usize, grid: &[Vec3], dst: &mut [Vec3]) {
        self.shapes(s, grid, dst);
        for (d, b) in dst.iter_mut().zip(&self.base[self.offsets[s]..]) {
            *d += *b;
        }
    }

    /// The blend of strand `s`'s cells' shapes (relative to their roots) at its particles.
    fn shapes(&self, s: usize, grid: &[Vec3], dst: &mut [Vec3]) {
        let w = self.spec.points;
        let first = self.offsets[s];
        let shape = |c: usize, t: f32| cell_shape(grid, w, c, t);
        for (i, d) in dst.iter_mut().enumerate() {
            let t = self.frac[first + i];
            *d = match &self.back[s] {
                Back::Cell(c) => shape(*c as usize, t),
                Back::Blend(ws) => ws
                    .iter()
                    .fold(Vec3::ZERO, |x, &(c, wt)| x + wt * shape(c as usize, t)),
            };
        }
    }

    /// Strand `s`'s particles `pts` (any frame) at the grid's even arc-length fractions.
    pub fn resample_strand(&self, s: usize, pts: &[Vec3], out: &mut Vec<Vec3>) {
        let w = self.spec.points;
        let f = &self.frac[self.offsets[s]..self.offsets[s + 1]];
        out.extend((0..w).map(|k| at_fraction(pts, f, k as f32 / (w - 1) as f32)));
    }

    /// The cells strand `s` comes back from, with their weights.
    pub fn back_cells(&self, s: usize) -> Vec<(u32, f32)> {
        match &self.back[s] {
            Back::Cell(c) => vec![(*c, 1.0)],
            Back::Blend(ws) => ws.clone(),
        }
    }

    /// Whether strand `s` comes back from a cell it is the source of.
    pub fn is_source(&self, s: usize) -> bool {
        matches!(self.back[s], Back::Cell(_))
    }

    /// Arc-length fraction of groom particle `p` at rest.
    pub fn fraction(&self, p: usize) -> f32 {
        self.frac[p]
    }

    /// Share of non-empty cells.
    pub fn occupancy(&self) -> f64 {
        self.occupied.iter().filter(|&&o| o).count() as f64 / self.cells() as f64
    }

    /// Network units from head-frame cm.
    pub fn to_net(&self, p: Vec3) -> [f32; 3] {
        ((p - self.origin) / UNIT_CM).to_array()
    }

    /// Head-frame cm from network units.
    pub fn from_net(&self, p: [f32; 3]) -> Vec3 {
        Vec3::from_array(p) * UNIT_CM + self.origin
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groom::{GroomParams, Style, generate};

    /// Straight 25-particle strands 1 cm apart from `base`'s roots, each along `dir(strand)`.
    fn straight_from(base: &Groom, dir: impl Fn(usize) -> Vec3) -> Groom {
        let roots = base.roots();
        let pts: Vec<Vec3> = (0..roots.len())
            .flat_map(|s| {
                let (r, d) = (roots[s], dir(s));
                (0..25).map(move |k| r + d * k as f32)
            })
            .collect();
        Groom::uniform(pts, 25, base.attrs.clone()).unwrap()
    }

    /// `groom`'s rest particles, each strand turned about its root by `turn(strand)`.
    fn turned(groom: &Groom, turn: impl Fn(usize) -> glam::Quat) -> Vec<Vec3> {
        let mut out = groom.points().to_vec();
        for (s, r) in groom.offsets().windows(2).enumerate() {
            let (root, q) = (out[r[0]], turn(s));
            for p in &mut out[r[0]..r[1]] {
                *p = root + q * (*p - root);
            }
        }
        out
    }

    fn groom() -> Groom {
        generate(&GroomParams {
            strands: 600,
            ..GroomParams::for_style(Style::Wavy)
        })
        .unwrap()
    }

    #[test]
    fn sources_come_back_exactly_and_rest_is_a_fixed_point() {
        let g = groom();
        let grid = UvGrid::new(
            &g,
            GridSpec {
                n: 16,
                stride: 2,
                points: 25,
            },
        )
        .unwrap();
        let mut cells = Vec::new();
        grid.gather(g.points(), &mut cells);
        assert_eq!(cells.len(), 16 * 16 * 25);
        // Rest gathered equals the grid's rest.
        for (a, b) in cells.iter().zip(&grid.rest) {
            assert!(a.distance(*b) < 1e-5);
        }
        // Rest scattered back is the rest groom.
        let mut back = vec![Vec3::ZERO; g.point_count()];
        grid.scatter(&cells, &mut back);
        for (a, b) in back.iter().zip(g.points()) {
            assert!(a.distance(*b) < 1e-4, "{a} vs {b}");
        }
        // A translation of every grid strand leaves the groom as it is (roots stay on the scalp).
        let moved: Vec<Vec3> = cells.iter().map(|p| *p + Vec3::new(1.0, -2.0, 0.5)).collect();
        grid.scatter(&moved, &mut back);
        for (a, b) in back.iter().zip(g.points()) {
            assert!(a.distance(*b) < 1e-4);
        }
        // Strands with evenly spaced particles come back from a frame that bends them (to f32
        // the resampling's spacing: 0.2 mm on 25 cm strands, against 0.3 rad turns).
        let base = generate(&GroomParams {
            strands: 500,
            ..GroomParams::for_style(Style::Straight)
        })
        .unwrap();
        let o = scalp_center(&base.roots());
        let roots = base.roots();
        let straight = straight_from(&base, |s| (roots[s] - o).normalize());
        let grid = UvGrid::new(
            &straight,
            GridSpec {
                n: 16,
                stride: 2,
                points: 25,
            },
        )
        .unwrap();
        let bent = turned(&straight, |s| glam::Quat::from_rotation_x(0.3 + 0.001 * s as f32));
        grid.gather(&bent, &mut cells);
        let mut back = vec![Vec3::ZERO; straight.point_count()];
        grid.scatter(&cells, &mut back);
        let mut exact = 0;
        for (s, r) in straight.offsets().windows(2).enumerate() {
            if grid.is_source(s) {
                exact += 1;
                for p in r[0]..r[1] {
                    assert!(
                        back[p].distance(bent[p]) < 1e-3,
                        "strand {s} particle {} off by {}",
                        p - r[0],
                        back[p].distance(bent[p])
                    );
                }
            }
        }
        assert!(exact > 100, "{exact}");
        assert!(grid.occupancy() > 0.3, "{}", grid.occupancy());
    }

    /// A parted groom: strands rooted below the middle u fall one way, the others the other
    /// way, and each side swings rigidly about its roots, the sides in opposite directions.
    /// A strand between cells of both sides moves like its own side; the plain bilinear
    /// transfer gives it a blend of the two, the shape-weighted one its side's motion.
    #[test]
    fn the_transfer_back_keeps_each_side_of_a_parting() {
        let base = generate(&GroomParams {
            strands: 800,
            ..GroomParams::for_style(Style::Straight)
        })
        .unwrap();
        let uvs = root_uvs(&base);
        let mut us: Vec<f32> = uvs.iter().map(|u| u.x).collect();
        us.sort_by(f32::total_cmp);
        let mid = us[us.len() / 2];
        let left = |s: usize| uvs[s].x < mid;
        let dir = |s: usize| {
            if left(s) {
                Vec3::new(-1.0, -1.0, 0.0)
            } else {
                Vec3::new(1.0, -1.0, 0.0)
            }
            .normalize()
        };
        let parted = straight_from(&base, dir);
        let swung = turned(&parted, |s| {
            glam::Quat::from_rotation_z(if left(s) { -0.4 } else { 0.4 })
        });
        let spec = GridSpec {
            n: 16,
            stride: 2,
            points: 25,
        };
        let plain = UvGrid::with_shape_sigma(&parted, spec, f32::INFINITY).unwrap();
        // The strands whose bilinear cells lie on both sides, and their worst error.
        let worst = |grid: &UvGrid| {
            let mut cells = Vec::new();
            grid.gather(&swung, &mut cells);
            let mut back = vec![Vec3::ZERO; parted.point_count()];
            grid.scatter(&cells, &mut back);
            let (mut n, mut e) = (0, 0.0f32);
            for (s, r) in parted.offsets().windows(2).enumerate() {
                let sides: Vec<bool> = plain
                    .back_cells(s)
                    .iter()
                    .map(|(c, _)| left(plain.source[*c as usize] as usize))
                    .collect();
                if sides.contains(&true) && sides.contains(&false) {
                    n += 1;
                    for p in r[0]..r[1] {
                        e = e.max(back[p].distance(swung[p]));
                    }
                }
            }
            (n, e)
        };
        let (n, blended) = worst(&plain);
        let (_, shaped) = worst(&UvGrid::new(&parted, spec).unwrap());
        assert!(n > 5, "{n} strands across the parting");
        // 24 cm strands swung 0.4 rad each way: the blend of both sides is centimetres off.
        assert!(blended > 2.0, "plain bilinear transfer off by {blended} cm");
        assert!(shaped < 1e-2, "shape-weighted transfer off by {shaped} cm");
    }
}
