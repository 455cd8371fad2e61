//! The groom: strands in structure-of-arrays form, as solvers and writers want them.

use glam::Vec3;
use tress_formats::{StrandAttrs, Strands};

use crate::error::{Error, Result};

/// A set of hair strands: all points back to back, a vertex count per strand, and optional
/// attributes (width, colour, root UV, id, guide flag).
///
/// Positions are in centimetres, Y up, once a groom has gone through [`crate::groom::Transform`];
/// readers hand back the file's own units.
#[derive(Clone, Debug, PartialEq)]
pub struct Groom {
    points: Vec<Vec3>,
    counts: Vec<u32>,
    /// Start of each strand in `points`, plus the total (derived from `counts`, kept for O(1)
    /// strand access on hot paths).
    offsets: Vec<usize>,
    pub attrs: StrandAttrs,
}

/// Axis-aligned bounding box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub min: Vec3,
    pub max: Vec3,
}

impl Bounds {
    pub const EMPTY: Bounds = Bounds {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };

    pub fn of(points: &[Vec3]) -> Bounds {
        points.iter().fold(Bounds::EMPTY, |b, &p| Bounds {
            min: b.min.min(p),
            max: b.max.max(p),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.min.x > self.max.x
    }

    pub fn size(&self) -> Vec3 {
        if self.is_empty() {
            Vec3::ZERO
        } else {
            self.max - self.min
        }
    }

    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }
}

impl Groom {
    /// Builds a groom, checking that counts and attributes match the points.
    pub fn new(points: Vec<Vec3>, counts: Vec<u32>, attrs: StrandAttrs) -> Result<Self> {
        let total: u64 = counts.iter().map(|&c| c as u64).sum();
        if total != points.len() as u64 {
            return Err(Error::Invalid(format!(
                "strand vertex counts add up to {total} but there are {} points",
                points.len()
            )));
        }
        let offsets = tress_formats::offsets_of(&counts);
        let groom = Groom {
            points,
            counts,
            offsets,
            attrs,
        };
        groom
            .attrs
            .check(groom.counts.len(), groom.points.len())
            .map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(groom)
    }

    /// A groom whose strands all have `per_strand` points.
    pub fn uniform(points: Vec<Vec3>, per_strand: usize, attrs: StrandAttrs) -> Result<Self> {
        if per_strand == 0 || !points.len().is_multiple_of(per_strand) {
            return Err(Error::Invalid(format!(
                "{} points do not split into strands of {per_strand}",
                points.len()
            )));
        }
        let counts = vec![per_strand as u32; points.len() / per_strand];
        Groom::new(points, counts, attrs)
    }

    pub fn strand_count(&self) -> usize {
        self.counts.len()
    }

    pub fn point_count(&self) -> usize {
        self.points.len()
    }

    pub fn points(&self) -> &[Vec3] {
        &self.points
    }

    /// Mutable positions (topology stays fixed).
    pub fn points_mut(&mut self) -> &mut [Vec3] {
        &mut self.points
    }

    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// Points of strand `i`.
    pub fn strand(&self, i: usize) -> &[Vec3] {
        &self.points[self.offsets[i]..self.offsets[i + 1]]
    }

    pub fn strands(&self) -> impl ExactSizeIterator<Item = &[Vec3]> + '_ {
        self.offsets.windows(2).map(|w| &self.points[w[0]..w[1]])
    }

    /// Root (first point) of every strand; empty strands are skipped.
    pub fn roots(&self) -> Vec<Vec3> {
        strand_roots(&self.points, &self.counts)
    }

    /// Points per strand if every strand has the same count.
    pub fn uniform_count(&self) -> Option<usize> {
        let first = *self.counts.first()?;
        self.counts.iter().all(|&c| c == first).then_some(first as usize)
    }

    pub fn bounds(&self) -> Bounds {
        Bounds::of(&self.points)
    }

    /// A warning when the groom's size suggests it is not in centimetres (tress's unit): a
    /// whole groom under 2 units across is in metres (a head is about 20 cm), one over 250 units
    /// across in millimetres. Names the `--scale` that fixes it.
    pub fn unit_warning(&self) -> Option<String> {
        let b = self.bounds();
        let across = (b.max - b.min).length();
        let mut lengths = self.lengths();
        if lengths.is_empty() || !across.is_finite() {
            return None;
        }
        let mid = lengths.len() / 2;
        let median = *lengths.select_nth_unstable_by(mid, f32::total_cmp).1;
        let (unit, scale) = if across < 2.0 {
            ("metres", 100.0)
        } else if across > 250.0 {
            ("millimetres", 0.1)
        } else {
            return None;
        };
        Some(format!(
            "the groom is {across:.3} units across with strands {median:.3} units long (median): tress works in centimetres, so this looks like {unit}; give --scale {scale} (in a job: [groom] scale = {scale})"
        ))
    }

    /// Polyline length of every strand.
    pub fn lengths(&self) -> Vec<f32> {
        self.strands().map(strand_length).collect()
    }

    /// Converts from a file's strand set (points are reinterpreted, not copied).
    pub fn from_strands(s: Strands) -> Result<Self> {
        let points: Vec<Vec3> = bytemuck::allocation::cast_vec(s.points);
        Groom::new(points, s.counts, s.attrs)
    }

    /// Converts to a file's strand set.
    pub fn to_strands(&self) -> Strands {
        Strands {
            points: bytemuck::cast_slice(&self.points).to_vec(),
            counts: self.counts.clone(),
            attrs: self.attrs.clone(),
        }
    }

    /// Per-vertex width if the groom has any width attribute.
    pub fn vertex_widths(&self) -> Option<Vec<f32>> {
        self.attrs.width.as_ref().map(|w| w.per_vertex(&self.counts))
    }

    /// Keeps the strands for which `keep` is true (attributes follow).
    pub fn filter_strands(&self, keep: impl Fn(usize) -> bool) -> Groom {
        let chosen: Vec<usize> = (0..self.strand_count()).filter(|&i| keep(i)).collect();
        let mut points = Vec::new();
        let mut counts = Vec::with_capacity(chosen.len());
        for &i in &chosen {
            points.extend_from_slice(self.strand(i));
            counts.push(self.counts[i]);
        }
        let attrs = self.attrs.subset(&chosen, &self.offsets);
        Groom::new(points, counts, attrs).expect("a subset of a valid groom is valid")
    }
}

/// The first point of every strand of `counts` points (empty strands have none and are left
/// out, so use it where only the set of roots matters, not which strand each belongs to).
pub fn strand_roots(points: &[Vec3], counts: &[u32]) -> Vec<Vec3> {
    let mut o = 0usize;
    let mut out = Vec::with_capacity(counts.len());
    for &n in counts {
        if n > 0 {
            out.push(points[o]);
        }
        o += n as usize;
    }
    out
}

/// `data` (one item per vertex) cut into one mutable slice per strand of `counts` vertices,
/// for processing strands in parallel.
pub fn split_strands_mut<'a, T>(mut data: &'a mut [T], counts: &[u32]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(counts.len());
    for &c in counts {
        let (head, tail) = std::mem::take(&mut data).split_at_mut(c as usize);
        out.push(head);
        data = tail;
    }
    out
}

/// Polyline length of one strand.
pub fn strand_length(s: &[Vec3]) -> f32 {
    s.windows(2).map(|w| w[0].distance(w[1])).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tress_formats::Attr;

    fn two() -> Groom {
        Groom::new(
            vec![
                Vec3::ZERO,
                Vec3::X,
                Vec3::new(0.0, 1.0, 0.0),
                Vec3::new(0.0, 3.0, 0.0),
                Vec3::new(0.0, 3.0, 4.0),
            ],
            vec![2, 3],
            StrandAttrs {
                id: Some(vec![7, 9]),
                width: Some(Attr::PerVertex(vec![1.0, 2.0, 3.0, 4.0, 5.0])),
                ..Default::default()
            },
        )
        .unwrap()
    }

    #[test]
    fn lengths_and_bounds() {
        let g = two();
        assert_eq!(g.lengths(), vec![1.0, 6.0]);
        let b = g.bounds();
        assert_eq!(b.min, Vec3::ZERO);
        assert_eq!(b.max, Vec3::new(1.0, 3.0, 4.0));
        assert_eq!(g.roots(), vec![Vec3::ZERO, Vec3::Y]);
        assert_eq!(g.uniform_count(), None);
    }

    #[test]
    fn strands_conversion_is_lossless() {
        let g = two();
        assert_eq!(Groom::from_strands(g.to_strands()).unwrap(), g);
    }

    #[test]
    fn filter_keeps_attributes_aligned() {
        let g = two().filter_strands(|i| i == 1);
        assert_eq!(g.strand_count(), 1);
        assert_eq!(g.attrs.id, Some(vec![9]));
        assert_eq!(g.attrs.width, Some(Attr::PerVertex(vec![3.0, 4.0, 5.0])));
    }

    #[test]
    fn mismatched_counts_are_refused() {
        assert!(Groom::new(vec![Vec3::ZERO; 3], vec![2], StrandAttrs::default()).is_err());
        let attrs = StrandAttrs {
            id: Some(vec![1]),
            ..Default::default()
        };
        assert!(Groom::new(vec![Vec3::ZERO; 4], vec![2, 2], attrs).is_err());
    }
}
