//! A fitted skinning model bound to its groom, and the interpolation of 001 Eq. 5 with it:
//! normal particle i of strand s is Σ_{g ∈ 𝒢} w_{g→s}(i) B_g(i) s̄*_i, the weights the set's
//! quadratics (Eq. 6) clamped at zero and normalized (001 §6.2). Static skinning is the baseline
//! that uses each strand's best-fitting set at every frame.

use std::ops::Range;
use std::path::Path;
use std::time::{Duration, Instant};

use glam::{Affine3A, Vec3, Vec3A};
use tress_formats::skin::SkinModel;

use super::fit::{poly_at, runtime_weights};
use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::guides::interpolator::{GuideFrame, InterpTimes, Interpolator};
use crate::guides::layout::{GuideLayout, GuideRotations};

/// A skinning model and the groom it belongs to.
#[derive(Clone, Debug)]
pub struct Skinning {
    pub model: SkinModel,
    pub layout: GuideLayout,
    coef_start: Vec<u32>,
    /// i / (n − 1) for the groom's most common point count n.
    common: Vec<f32>,
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
        // The most common point count's curve parameters, as `poly_at` computes them.
        let mut tally = std::collections::BTreeMap::new();
        for &c in &model.counts {
            *tally.entry(c as usize).or_insert(0usize) += 1;
        }
        let n = tally
            .iter()
            .max_by_key(|(n, k)| (**k, **n))
            .map_or(0, |(n, _)| *n);
        let common = (0..n)
            .map(|i| if n > 1 { i as f32 / (n - 1) as f32 } else { 0.0 })
            .collect();
        Ok(Skinning {
            model,
            layout,
            coef_start,
            common,
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

    /// `poly_at`'s parameter i / (n − 1) for each particle of an `n`-point strand, when `n` is
    /// the groom's most common count.
    fn params(&self, n: usize) -> Option<&[f32]> {
        (self.common.len() == n).then_some(self.common.as_slice())
    }

    /// Strand `s` interpolated with set `set` (001 Eq. 5), head frame: each particle is the
    /// members' carried points weighted by [`runtime_weights`], normalized once at the end
    /// (Σ w_k y_k / Σ w_k: the same weights, one division per particle instead of one per
    /// member).
    pub fn interpolate(&self, s: usize, set: usize, rot: &GuideRotations, out: &mut [Vec3]) {
        const NONE: &[Affine3A] = &[];
        let me = self.layout.strand(s);
        let n = me.len();
        let coefs = self.coefs(set);
        let mut maps = [NONE; tress_formats::skin::MAX_ELIGIBLE];
        let mut k = 0;
        for g in self.members(s, set) {
            maps[k] = rot.maps(g as usize);
            k += 1;
        }
        let maps = &maps[..k.min(coefs.len())];
        // The common case: up to 4 members, each at least as long as the strand.
        if let Some(ts) = self.params(n)
            && maps.iter().all(|m| m.len() >= n)
        {
            match maps.len() {
                1 => return blend::<1>(coefs, maps, ts, me, out),
                2 => return blend::<2>(coefs, maps, ts, me, out),
                3 => return blend::<3>(coefs, maps, ts, me, out),
                4 => return blend::<4>(coefs, maps, ts, me, out),
                _ => {}
            }
        }
        for (i, (o, x)) in out.iter_mut().zip(me).enumerate() {
            let x = Vec3A::from(*x);
            let (mut acc, mut sum) = (Vec3A::ZERO, 0.0f32);
            for (c, m) in coefs.iter().zip(maps) {
                let w = poly_at(c, i, n).max(0.0);
                acc += w * m[i.min(m.len() - 1)].transform_point3a(x);
                sum += w;
            }
            *o = if sum > 0.0 {
                Vec3::from(acc / sum)
            } else {
                // Every weight clamped away: the members alike (as `runtime_weights`).
                let all: Vec3A = maps
                    .iter()
                    .map(|m| m[i.min(m.len() - 1)].transform_point3a(x))
                    .sum();
                Vec3::from(all / maps.len().max(1) as f32)
            };
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

/// [`Skinning::interpolate`] for `K` members whose maps cover the strand: the same
/// operations in the same order, with the member loop unrolled.
#[inline(always)]
fn blend<const K: usize>(
    coefs: &[[f32; 3]],
    maps: &[&[Affine3A]],
    ts: &[f32],
    me: &[Vec3],
    out: &mut [Vec3],
) {
    let n = me.len();
    let out = &mut out[..n];
    let c: [[f32; 3]; K] = std::array::from_fn(|k| coefs[k]);
    let m: [&[Affine3A]; K] = std::array::from_fn(|k| &maps[k][..n]);
    let ts = &ts[..n];
    for i in 0..n {
        let x = Vec3A::from(me[i]);
        let (mut acc, mut sum) = (Vec3A::ZERO, 0.0f32);
        let t = ts[i];
        for k in 0..K {
            let w = ((c[k][0] * t + c[k][1]) * t + c[k][2]).max(0.0);
            acc += w * m[k][i].transform_point3a(x);
            sum += w;
        }
        out[i] = if sum > 0.0 {
            Vec3::from(acc / sum)
        } else {
            let all: Vec3A = (0..K).map(|k| m[k][i].transform_point3a(x)).sum();
            Vec3::from(all / K as f32)
        };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guides::skinning::fit::tests::{blend_frame, fitted_fixture};

    /// The interpolation (normalized once per particle) against 001 Eq. 5 written out: each
    /// member's carried point times its runtime weight, for every set of every strand, with the
    /// fitted coefficients and with scrambled ones (some clamped to zero along the whole
    /// strand, so the uniform fallback runs too).
    #[test]
    fn interpolation_is_eq_5_with_the_runtime_weights() {
        let dir = std::env::temp_dir().join(format!("tress-skin-eq5-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (groom, model, _) = fitted_fixture(&dir);
        let mut scrambled = model.clone();
        for (k, c) in scrambled.coefs.iter_mut().enumerate() {
            let a = k as f32;
            *c = if k % 3 == 2 {
                [0.0, -0.5, -0.1]
            } else {
                [(a * 1.3).sin(), (a * 0.7).cos(), 0.2 * (a * 2.1).sin()]
            };
        }
        let frame = blend_frame(&groom, 7);
        for m in [model, scrambled] {
            let skin = Skinning::new(m, &groom).unwrap();
            let rot = skin.layout.rotations(skin.layout.extract(&frame).as_slice());
            for s in 2..5 {
                let rest = skin.layout.strand(s);
                for set in skin.sets(s) {
                    let mut got = vec![Vec3::ZERO; rest.len()];
                    skin.interpolate(s, set, &rot, &mut got);
                    let members: Vec<u32> = skin.members(s, set).collect();
                    let coefs = skin.coefs(set);
                    let mut w = vec![0.0; coefs.len()];
                    for (i, p) in got.iter().enumerate() {
                        runtime_weights(coefs, i, rest.len(), &mut w);
                        let want: Vec3 = members
                            .iter()
                            .zip(&w)
                            .map(|(&g, &w)| w * rot.carry(g as usize, i, rest[i]))
                            .sum();
                        assert!(
                            p.distance(want) < 1e-5,
                            "strand {s} set {set} particle {i}: {p} vs {want}"
                        );
                    }
                }
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
