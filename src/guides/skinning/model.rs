//! A fitted skinning model bound to its groom, and the interpolation of 001 Eq. 5 with it:
//! normal particle i of strand s is Σ_{g ∈ 𝒢} w_{g→s}(i) B_g(i) s̄*_i, the weights the set's
//! quadratics (Eq. 6) clamped at zero and normalized (001 §6.2). Static skinning is the baseline
//! that uses each strand's best-fitting set at every frame.

use std::ops::Range;
use std::path::Path;
use std::time::{Duration, Instant};

use glam::Vec3;
use tress_formats::skin::SkinModel;

use super::fit::runtime_weights;
use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::guides::interpolator::{GuideFrame, InterpTimes, Interpolator, Method};
use crate::guides::layout::{GuideLayout, GuideRotations};

/// A skinning model and the groom it belongs to.
#[derive(Clone, Debug)]
pub struct Skinning {
    pub model: SkinModel,
    pub layout: GuideLayout,
    coef_start: Vec<u32>,
}

impl Skinning {
    /// Binds `model` to `groom` (the prepared groom it was fitted on, head frame).
    pub fn new(model: SkinModel, groom: &Groom) -> Result<Skinning> {
        if model.counts != groom.counts() {
            return Err(Error::Invalid(format!(
                "the skinning model was fitted on another groom ({} strands, {} points; this one {} strands, {} points)",
                model.counts.len(),
                model.counts.iter().map(|&c| c as u64).sum::<u64>(),
                groom.strand_count(),
                groom.points().len()
            )));
        }
        let guides: Vec<usize> = model.guides.iter().map(|&g| g as usize).collect();
        let layout = GuideLayout::new(groom, &guides)?;
        for s in 0..layout.strand_count() {
            let sets = model.set_start[s + 1] - model.set_start[s];
            if !layout.is_guide(s) && layout.counts[s] > 0 && sets == 0 {
                return Err(Error::Invalid(format!(
                    "the skinning model has no guide set for strand {s}"
                )));
            }
        }
        let coef_start = model.coef_start();
        Ok(Skinning {
            model,
            layout,
            coef_start,
        })
    }

    /// Reads a `.tskin` file for `groom`.
    pub fn load(path: &Path, groom: &Groom) -> Result<Skinning> {
        let model = tress_formats::skin::read(path)?;
        Skinning::new(model, groom).map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))
    }

    /// Strand `s`'s eligible guide slots.
    pub fn eligible(&self, s: usize) -> &[u32] {
        &self.model.eligible[self.model.eligible_start[s] as usize..self.model.eligible_start[s + 1] as usize]
    }

    /// Strand `s`'s sets (indices into the model's sets); the first is static skinning's.
    pub fn sets(&self, s: usize) -> Range<usize> {
        self.model.set_start[s] as usize..self.model.set_start[s + 1] as usize
    }

    /// Which of the strand's eligible guides set `set` holds (bit k: k-th eligible guide).
    pub fn mask(&self, set: usize) -> u16 {
        self.model.set_mask[set]
    }

    /// The guide slots of set `set` of strand `s`.
    pub fn members(&self, s: usize, set: usize) -> impl Iterator<Item = u32> + '_ {
        let m = self.mask(set);
        self.eligible(s)
            .iter()
            .enumerate()
            .filter(move |(k, _)| m & (1 << k) != 0)
            .map(|(_, g)| *g)
    }

    pub fn coefs(&self, set: usize) -> &[[f32; 3]] {
        &self.model.coefs[self.coef_start[set] as usize..self.coef_start[set + 1] as usize]
    }

    /// Strand `s` interpolated with set `set` (001 Eq. 5), head frame.
    pub fn interpolate(&self, s: usize, set: usize, rot: &GuideRotations, out: &mut [Vec3]) {
        let me = self.layout.strand(s);
        let n = me.len();
        let coefs = self.coefs(set);
        let mut members = [0u32; tress_formats::skin::MAX_ELIGIBLE];
        let mut k = 0;
        for g in self.members(s, set) {
            members[k] = g;
            k += 1;
        }
        let members = &members[..k];
        let mut w = [0.0f32; tress_formats::skin::MAX_ELIGIBLE];
        for (i, o) in out.iter_mut().enumerate() {
            runtime_weights(coefs, i, n, &mut w[..coefs.len()]);
            let mut acc = Vec3::ZERO;
            for (k, &g) in members.iter().enumerate() {
                acc += w[k] * rot.carry(g as usize, i, me[i]);
            }
            *o = acc;
        }
    }

    /// The weights of set `set` of strand `s` per member, along the strand (none for guides
    /// and empty strands).
    pub fn set_weights(&self, s: usize, set: usize, out: &mut Vec<(u32, Vec<f32>)>) {
        out.clear();
        if self.layout.is_guide(s) || self.layout.counts[s] == 0 {
            return;
        }
        let n = self.layout.counts[s] as usize;
        let coefs = self.coefs(set);
        let mut w = vec![0.0f32; coefs.len()];
        out.extend(self.members(s, set).map(|g| (g, Vec::with_capacity(n))));
        for i in 0..n {
            runtime_weights(coefs, i, n, &mut w);
            for (k, x) in w.iter().enumerate() {
                out[k].1.push(*x);
            }
        }
    }

    /// Bytes of the model in memory (its arrays).
    pub fn bytes(&self) -> usize {
        let m = &self.model;
        4 * (m.counts.len() + m.guides.len() + m.eligible_start.len() + m.eligible.len() + m.set_start.len())
            + 2 * m.set_mask.len()
            + 12 * m.coefs.len()
            + 16 * m.pairs.len()
            + 4 * self.coef_start.len()
    }
}

/// Static skinning: every normal strand with its best-fitting set, fixed weights.
pub struct StaticSkinning {
    pub skin: Skinning,
    time: Duration,
}

impl StaticSkinning {
    pub fn new(skin: Skinning) -> StaticSkinning {
        StaticSkinning {
            skin,
            time: Duration::ZERO,
        }
    }
}

impl Interpolator for StaticSkinning {
    fn method(&self) -> Method {
        Method::Static
    }

    fn layout(&self) -> &GuideLayout {
        &self.skin.layout
    }

    fn interpolate(&mut self, frame: &GuideFrame, out: &mut [Vec3]) -> Result<()> {
        let layout = &self.skin.layout;
        layout.check_frame(frame.guides)?;
        let t = Instant::now();
        let rot = layout.rotations(frame.guides);
        let skin = &self.skin;
        layout.fill(frame.guides, out, |s, dst| {
            skin.interpolate(s, skin.sets(s).start, &rot, dst)
        });
        self.time += t.elapsed();
        Ok(())
    }

    fn weights(&self, s: usize, out: &mut Vec<(u32, Vec<f32>)>) {
        self.skin.set_weights(s, self.skin.sets(s).start, out);
    }

    fn times(&self) -> InterpTimes {
        InterpTimes {
            interpolation: self.time,
            ..Default::default()
        }
    }
}
