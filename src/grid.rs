//! One uniform cell grid for tress's spatial structures: the hair–hair volume of `sim::volume`
//! (mass and momentum splatted trilinearly, after Petrovic et al. 2005), the
//! k-nearest-particle search of `metrics::nonlocal` (000 §5.7), the close pairs of the drape's
//! collision energy (`neural::drape::energy`, 003 Eq. 11–13) and the broad phase of
//! `sim::strand_contact` (swept segment boxes sorted by cell).
//!
//! Cells are cubes. A [`Lattice`] is a bounded box of them from an origin, cell `(x, y, z)` at
//! index `x + X·(y + Y·z)`, a point's cell coordinates `(p − origin) / cell`; [`Buckets`] sorts
//! points into a lattice's cells (a counting sort: each cell's points in index order).
//! [`SparseCells`] covers unbounded space with cells of the same kind named by packed keys, for
//! boxes spread too far apart to allocate every cell between them. Each user keeps its own
//! sizing (how large a cell, how much margin): the volume's cell is a physical length, the
//! search's a few neighbours per cell, the broad phase's a typical box.

use glam::{UVec3, Vec3};

/// A bounded box of `dims` cubic cells of side `cell`, the first cell's corner at `origin`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Lattice {
    pub origin: Vec3,
    pub cell: f32,
    pub dims: UVec3,
}

impl Lattice {
    /// The number of cells.
    pub fn len(&self) -> usize {
        self.dims.x as usize * self.dims.y as usize * self.dims.z as usize
    }

    /// Whether the lattice has no cell.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The index of cell `c` (x fastest, then y, then z).
    pub fn index(&self, c: UVec3) -> usize {
        c.x as usize + self.dims.x as usize * (c.y as usize + self.dims.y as usize * c.z as usize)
    }

    /// `p` in cell units from the origin.
    pub fn coords(&self, p: Vec3) -> Vec3 {
        (p - self.origin) / self.cell
    }

    /// The cell holding `p`, clamped into the lattice (a point outside it, or not finite, goes
    /// to the nearest cell, or to cell 0).
    pub fn cell_of(&self, p: Vec3) -> UVec3 {
        let f = self.coords(p).floor();
        let f = if f.is_finite() { f } else { Vec3::ZERO };
        let d = self.dims;
        UVec3::new(
            (f.x.max(0.0) as u32).min(d.x - 1),
            (f.y.max(0.0) as u32).min(d.y - 1),
            (f.z.max(0.0) as u32).min(d.z - 1),
        )
    }

    /// The lower corner of the cell whose eight corners carry `p`'s trilinear weights, and the
    /// fractions along each axis (`p` clamped into the lattice; needs two cells an axis).
    pub fn locate(&self, p: Vec3) -> (UVec3, Vec3) {
        let f = self.coords(p).clamp(
            Vec3::ZERO,
            (self.dims - UVec3::splat(2)).as_vec3() + Vec3::splat(0.999),
        );
        let c = f.floor();
        (c.as_uvec3(), f - c)
    }
}

/// Points sorted into the cells of a lattice: the points of cell `i` are
/// `ids[start[i]..start[i + 1]]`, in index order.
#[derive(Clone, Debug, Default)]
pub struct Buckets {
    start: Vec<u32>,
    ids: Vec<u32>,
}

impl Buckets {
    /// Sorts `points` into `lattice`'s cells (each point into [`Lattice::cell_of`]).
    pub fn new(lattice: &Lattice, points: &[Vec3]) -> Buckets {
        let cell: Vec<usize> = points
            .iter()
            .map(|p| lattice.index(lattice.cell_of(*p)))
            .collect();
        let mut start = vec![0u32; lattice.len() + 1];
        for &c in &cell {
            start[c + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut fill = start.clone();
        let mut ids = vec![0u32; points.len()];
        for (i, &c) in cell.iter().enumerate() {
            ids[fill[c] as usize] = i as u32;
            fill[c] += 1;
        }
        Buckets { start, ids }
    }

    /// The points in the cell of index `i`.
    pub fn cell(&self, i: usize) -> &[u32] {
        &self.ids[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// Cubic cells of side `1 / inv` over unbounded space from the world origin, named by keys
/// that sort as (x, y, z) do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SparseCells {
    inv: f32,
}

impl SparseCells {
    /// Cells of side `cell`.
    pub fn new(cell: f32) -> SparseCells {
        SparseCells { inv: 1.0 / cell }
    }

    /// The cell holding `p`.
    pub fn cell_of(&self, p: Vec3) -> [i64; 3] {
        let q = (p * self.inv).floor();
        [q.x as i64, q.y as i64, q.z as i64]
    }

    /// Cell coordinates packed into a key (21 bits each, offset so negative cells stay
    /// ordered; cells beyond ±2²⁰ share the outermost key).
    pub fn key(c: [i64; 3]) -> u64 {
        let f = |v: i64| ((v + (1 << 20)).clamp(0, (1 << 21) - 1)) as u64;
        (f(c[0]) << 42) | (f(c[1]) << 21) | f(c[2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_cover_the_cells_once() {
        let l = Lattice {
            origin: Vec3::new(-1.0, 2.0, 0.5),
            cell: 0.25,
            dims: UVec3::new(3, 4, 5),
        };
        let mut seen = vec![false; l.len()];
        for z in 0..5 {
            for y in 0..4 {
                for x in 0..3 {
                    let i = l.index(UVec3::new(x, y, z));
                    assert!(!seen[i]);
                    seen[i] = true;
                    // The centre of a cell is in that cell.
                    let centre = l.origin + (UVec3::new(x, y, z).as_vec3() + 0.5) * l.cell;
                    assert_eq!(l.cell_of(centre), UVec3::new(x, y, z));
                }
            }
        }
        assert!(seen.into_iter().all(|s| s));
        // Outside and not finite: clamped.
        assert_eq!(l.cell_of(Vec3::splat(-100.0)), UVec3::ZERO);
        assert_eq!(l.cell_of(Vec3::splat(100.0)), UVec3::new(2, 3, 4));
        assert_eq!(l.cell_of(Vec3::NAN), UVec3::ZERO);
    }

    #[test]
    fn trilinear_fractions_rebuild_the_point() {
        let l = Lattice {
            origin: Vec3::ZERO,
            cell: 0.5,
            dims: UVec3::splat(6),
        };
        let p = Vec3::new(0.8, 1.3, 2.05);
        let (c, t) = l.locate(p);
        assert!(t.cmpge(Vec3::ZERO).all() && t.cmplt(Vec3::ONE).all());
        assert!(((c.as_vec3() + t) * l.cell - p).length() < 1e-5);
    }

    #[test]
    fn buckets_hold_every_point_in_its_cell() {
        let l = Lattice {
            origin: Vec3::ZERO,
            cell: 1.0,
            dims: UVec3::new(4, 3, 2),
        };
        let points: Vec<Vec3> = (0..50)
            .map(|i| Vec3::new((i * 7 % 40) as f32 * 0.1, (i % 3) as f32 + 0.5, (i % 2) as f32))
            .collect();
        let b = Buckets::new(&l, &points);
        let mut count = 0;
        for i in 0..l.len() {
            let ids = b.cell(i);
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "index order");
            for &j in ids {
                assert_eq!(l.index(l.cell_of(points[j as usize])), i);
            }
            count += ids.len();
        }
        assert_eq!(count, points.len());
    }

    #[test]
    fn sparse_keys_sort_as_their_cells() {
        let s = SparseCells::new(0.5);
        assert_eq!(s.cell_of(Vec3::new(-0.1, 0.4, 1.2)), [-1, 0, 2]);
        let cells = [[-3, 5, 0], [-3, 5, 1], [-2, -7, 9], [0, 0, 0], [4, -1, -1]];
        let keys: Vec<u64> = cells.iter().map(|c| SparseCells::key(*c)).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
    }
}
