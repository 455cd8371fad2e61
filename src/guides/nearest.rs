//! The simplest upsampler, a baseline: every normal strand copies its closest guide (closest by
//! mean rest distance between corresponding particles), carried in the guide's frame
//! (001 Eq. 5 with a single guide of weight 1).

use rayon::prelude::*;

use super::fixed::FixedWeights;
use super::layout::GuideLayout;
use crate::error::Result;
use crate::groom::Groom;

impl FixedWeights {
    /// Every normal strand of `groom` bound to its closest guide, with weight 1.
    pub fn nearest(groom: &Groom, guides: &[usize]) -> Result<FixedWeights> {
        let layout = GuideLayout::new(groom, guides)?;
        let all = layout.guide_count();
        let bindings = (0..layout.strand_count())
            .into_par_iter()
            .map(|s| {
                let n = layout.strand(s).len();
                if layout.is_guide(s) || n == 0 {
                    return Vec::new();
                }
                layout
                    .closest_guides(s, 1, all)
                    .into_iter()
                    .map(|g| (g, vec![1.0; n]))
                    .collect()
            })
            .collect();
        Ok(FixedWeights::new(layout, bindings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groom::{GroomParams, generate};
    use crate::guides::{GuideFrame, Interpolator};
    use crate::motion::Pose;
    use glam::Vec3;

    #[test]
    fn every_strand_follows_its_closest_guide_rigidly() {
        let g = generate(&GroomParams {
            strands: 300,
            ..GroomParams::default()
        })
        .unwrap();
        let guides = crate::guides::select_uv_lattice(&g, 30);
        let mut m = FixedWeights::nearest(&g, &guides).unwrap();
        // Guides translated by the same vector: every strand moves by it, but for a normal
        // strand's root, which grows from the head and stays where it is.
        let shift = Vec3::new(0.3, -1.0, 0.5);
        let root = |i: usize| {
            g.offsets()[..g.strand_count()]
                .iter()
                .position(|&o| o == i)
                .is_some_and(|s| !guides.contains(&s))
        };
        let moved: Vec<Vec3> = m.layout.extract(g.points()).iter().map(|p| *p + shift).collect();
        let mut out = vec![Vec3::ZERO; g.points().len()];
        let frame = GuideFrame {
            frame: 1.0,
            time: 0.0,
            guides: &moved,
            pose: &Pose::IDENTITY,
            colliders: None,
        };
        m.interpolate(&frame, &mut out).unwrap();
        let worst = out
            .iter()
            .zip(g.points())
            .enumerate()
            .map(|(i, (a, b))| a.distance(if root(i) { *b } else { *b + shift }))
            .fold(0.0, f32::max);
        assert!(worst < 1e-5, "{worst}");
        let mut w = Vec::new();
        for s in 0..g.strand_count() {
            m.weights(s, &mut w);
            assert_eq!(w.len(), usize::from(!m.layout.is_guide(s)));
        }
    }
}
