//! Interpolators whose weights never change: every normal strand bound once to a few guides with
//! a weight per particle, blended with 001 Eq. 5 (each guide carries the particle's rest offset
//! in its own frame). IDW ([`super::idw`]) and the nearest guide ([`super::nearest`]) are its
//! two bindings.

use std::time::{Duration, Instant};

use glam::Vec3;

use super::interpolator::{GuideFrame, InterpTimes, Interpolator};
use super::layout::GuideLayout;
use crate::error::Result;

/// Per strand: (guide slot, weight per particle) of the guides that carry it; empty for guides.
pub type Bindings = Vec<Vec<(u32, Vec<f32>)>>;

#[derive(Clone, Debug)]
pub struct FixedWeights {
    pub layout: GuideLayout,
    pub bindings: Bindings,
    time: Duration,
}

impl FixedWeights {
    pub fn new(layout: GuideLayout, bindings: Bindings) -> FixedWeights {
        FixedWeights {
            layout,
            bindings,
            time: Duration::ZERO,
        }
    }

    /// The whole groom (head frame) from the guides' current shapes (head frame, the guides'
    /// particles in slot order).
    pub fn apply(&self, guide_points: &[Vec3]) -> Vec<Vec3> {
        let mut out = vec![Vec3::ZERO; self.layout.rest.len()];
        blend(&self.layout, &self.bindings, guide_points, &mut out);
        out
    }
}

/// Every strand as the weighted blend of where its guides carry it (001 Eq. 5), guides copied.
/// Roots stay where they grow (the head frame's rest root): a guide whose root segment turns
/// (a chain of springs on a root spring, 004) would otherwise swing its neighbours' roots
/// around its own by their rest offset, off the scalp.
pub fn blend(layout: &GuideLayout, bindings: &Bindings, guide_points: &[Vec3], out: &mut [Vec3]) {
    let rot = layout.rotations(guide_points);
    layout.fill(guide_points, out, |s, dst| {
        let me = layout.strand(s);
        for (i, d) in dst.iter_mut().enumerate() {
            if i == 0 {
                *d = me[0];
                continue;
            }
            let mut acc = Vec3::ZERO;
            for (slot, w) in &bindings[s] {
                acc += w[i] * rot.carry(*slot as usize, i, me[i]);
            }
            *d = acc;
        }
    });
}

impl Interpolator for FixedWeights {
    fn layout(&self) -> &GuideLayout {
        &self.layout
    }

    fn interpolate(&mut self, frame: &GuideFrame, out: &mut [Vec3]) -> Result<()> {
        self.layout.check_frame(frame.guides)?;
        let t = Instant::now();
        blend(&self.layout, &self.bindings, frame.guides, out);
        self.time += t.elapsed();
        Ok(())
    }

    fn weights(&self, s: usize, out: &mut Vec<(u32, Vec<f32>)>) {
        out.clear();
        out.extend(self.bindings[s].iter().cloned());
    }

    fn times(&self) -> InterpTimes {
        InterpTimes {
            interpolation: self.time,
            ..Default::default()
        }
    }
}
