//! What every upsampling method shares: the groom at rest in the head's frame, which strands are
//! guides, and how a guide carries a normal particle (001 Eq. 5 with B_g(i) a rigid transform):
//! the particle's rest offset from guide particle j is turned by the guide's parallel-transported
//! rotation R_g(j) and added to the guide particle's current position,
//! B_g(j) s̄ = g(j) + R_g(j)·(s̄ − ḡ(j)). A normal particle past the end of a shorter guide
//! follows the guide's last particle (001 §6.1).

use glam::{Affine3A, Mat3A, Vec3, Vec3A};
use rayon::prelude::*;

use super::frames::transport;
use crate::error::{Error, Result};
use crate::groom::Groom;

/// The rest groom (head frame) and its guides.
#[derive(Clone, Debug)]
pub struct GuideLayout {
    /// Rest shape of the whole groom (head frame).
    pub rest: Vec<Vec3>,
    pub counts: Vec<u32>,
    /// Where each strand starts in `rest` (one entry per strand, plus the end).
    pub offsets: Vec<usize>,
    /// Guide strand indices (into the groom), increasing; a guide's slot is its position here.
    pub guides: Vec<usize>,
    /// Each strand's guide slot, if it is a guide.
    slot: Vec<Option<u32>>,
    /// Where each guide's particles start in a frame of guide points (slot order).
    guide_offsets: Vec<usize>,
}

impl GuideLayout {
    /// The layout of `groom` (rest shape, head frame) with guide strands `guides` (increasing
    /// indices of non-empty strands).
    pub fn new(groom: &Groom, guides: &[usize]) -> Result<GuideLayout> {
        let counts = groom.counts().to_vec();
        if guides.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::Invalid(
                "guide strands must be increasing strand indices".into(),
            ));
        }
        if let Some(&g) = guides.iter().find(|&&g| g >= counts.len() || counts[g] == 0) {
            return Err(Error::Invalid(format!(
                "guide strand {g} is not a non-empty strand of the {}-strand groom",
                counts.len()
            )));
        }
        let mut slot = vec![None; counts.len()];
        for (k, &g) in guides.iter().enumerate() {
            slot[g] = Some(k as u32);
        }
        let mut guide_offsets = vec![0usize];
        for &g in guides {
            guide_offsets.push(guide_offsets.last().expect("non-empty") + counts[g] as usize);
        }
        Ok(GuideLayout {
            rest: groom.points().to_vec(),
            offsets: groom.offsets().to_vec(),
            counts,
            guides: guides.to_vec(),
            slot,
            guide_offsets,
        })
    }

    pub fn strand_count(&self) -> usize {
        self.counts.len()
    }

    pub fn guide_count(&self) -> usize {
        self.guides.len()
    }

    /// Particles in a frame of guide points.
    pub fn guide_point_count(&self) -> usize {
        *self.guide_offsets.last().expect("non-empty")
    }

    /// Rest particles of strand `s`.
    pub fn strand(&self, s: usize) -> &[Vec3] {
        &self.rest[self.offsets[s]..self.offsets[s + 1]]
    }

    /// Whether strand `s` is one of the guides.
    pub fn is_guide(&self, s: usize) -> bool {
        self.slot[s].is_some()
    }

    /// Strand `s`'s guide slot.
    pub fn slot(&self, s: usize) -> Option<usize> {
        self.slot[s].map(|k| k as usize)
    }

    /// Where guide `slot`'s particles start in a frame of guide points.
    pub fn guide_start(&self, slot: usize) -> usize {
        self.guide_offsets[slot]
    }

    /// The particles of guide `slot` in a frame of guide points.
    pub fn guide<'a>(&self, slot: usize, guide_points: &'a [Vec3]) -> &'a [Vec3] {
        &guide_points[self.guide_offsets[slot]..self.guide_offsets[slot + 1]]
    }

    /// The rest particles of guide `slot`.
    pub fn guide_rest(&self, slot: usize) -> &[Vec3] {
        self.strand(self.guides[slot])
    }

    /// A frame of the whole groom, strands in parallel: guides copied from `guide_points` (slot
    /// order), every other non-empty strand written by `normal(s, dst)`.
    pub fn fill(
        &self,
        guide_points: &[Vec3],
        out: &mut [Vec3],
        normal: impl Fn(usize, &mut [Vec3]) + Sync + Send,
    ) {
        crate::groom::split_strands_mut(out, &self.counts)
            .into_par_iter()
            .enumerate()
            .for_each(|(s, dst)| {
                if let Some(slot) = self.slot(s) {
                    dst.copy_from_slice(self.guide(slot, guide_points));
                } else if !dst.is_empty() {
                    normal(s, dst);
                }
            });
    }

    /// The guides' particles (slot order) taken from a frame of the whole groom.
    pub fn extract(&self, full: &[Vec3]) -> Vec<Vec3> {
        let mut out = Vec::with_capacity(self.guide_point_count());
        for &g in &self.guides {
            out.extend_from_slice(&full[self.offsets[g]..self.offsets[g + 1]]);
        }
        out
    }

    /// Checks that a frame of guide points fits the layout.
    pub fn check_frame(&self, guide_points: &[Vec3]) -> Result<()> {
        if guide_points.len() != self.guide_point_count() {
            return Err(Error::Invalid(format!(
                "a frame of {} guide points for {} guides of {} points",
                guide_points.len(),
                self.guide_count(),
                self.guide_point_count()
            )));
        }
        Ok(())
    }

    /// The `k` guide slots closest to strand `s` at rest, closest first: closest by the mean
    /// distance of corresponding particles (a guide shorter than the strand lends its last
    /// particle), among the `pool` guides with the closest roots (all of them when `pool` is
    /// the guide count). Ties go to the lower slot.
    pub fn closest_guides(&self, s: usize, k: usize, pool: usize) -> Vec<u32> {
        let me = self.strand(s);
        if me.is_empty() {
            return Vec::new();
        }
        let mut by_root: Vec<(f32, u32)> = (0..self.guide_count())
            .map(|g| (me[0].distance_squared(self.guide_rest(g)[0]), g as u32))
            .collect();
        let pool = pool.max(k).min(by_root.len());
        if pool == 0 {
            return Vec::new();
        }
        by_root.select_nth_unstable_by(pool - 1, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut near: Vec<(f32, u32)> = by_root[..pool]
            .iter()
            .map(|&(_, g)| {
                let gr = self.guide_rest(g as usize);
                let d: f32 = me
                    .iter()
                    .enumerate()
                    .map(|(i, p)| p.distance(gr[i.min(gr.len() - 1)]))
                    .sum();
                (d, g)
            })
            .collect();
        near.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        near.truncate(k);
        near.into_iter().map(|(_, g)| g).collect()
    }

    /// Every guide's rigid maps B_g(j) for one frame: x ↦ g(j) + R_g(j)(x − ḡ(j)), with R_g(j)
    /// the rotation parallel-transported from the root (rest point → carried point).
    pub fn rotations(&self, guide_points: &[Vec3]) -> GuideRotations {
        let per: Vec<Vec<Affine3A>> = (0..self.guide_count())
            .into_par_iter()
            .map(|k| {
                let mut r = Vec::new();
                let rest = self.guide_rest(k);
                let cur = self.guide(k, guide_points);
                transport(rest, cur, &mut r);
                r.iter()
                    .zip(rest.iter().zip(cur))
                    .map(|(q, (r0, c))| {
                        let m = Mat3A::from_quat(*q);
                        Affine3A {
                            matrix3: m,
                            translation: Vec3A::from(*c) - m * Vec3A::from(*r0),
                        }
                    })
                    .collect()
            })
            .collect();
        let mut start = Vec::with_capacity(per.len() + 1);
        start.push(0);
        for m in &per {
            start.push(start.last().expect("one") + m.len());
        }
        GuideRotations {
            maps: per.into_iter().flatten().collect(),
            start,
        }
    }
}

/// One frame's rigid guide maps B_g(j), per guide slot and particle.
pub struct GuideRotations {
    /// B_g(j) of every guide particle, guide after guide (`start[slot]..start[slot + 1]`).
    maps: Vec<Affine3A>,
    start: Vec<usize>,
}

impl GuideRotations {
    /// Guide `slot`'s maps, one per particle (never empty: guides are non-empty strands).
    #[inline]
    pub fn maps(&self, slot: usize) -> &[Affine3A] {
        &self.maps[self.start[slot]..self.start[slot + 1]]
    }

    /// B_g(j)·x for guide `slot`, its particle `i` (its last when it is shorter).
    #[inline]
    pub fn carry(&self, slot: usize, i: usize, x: Vec3) -> Vec3 {
        let maps = self.maps(slot);
        let m = &maps[i.min(maps.len() - 1)];
        Vec3::from(m.transform_point3a(Vec3A::from(x)))
    }
}
