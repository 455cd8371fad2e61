//! The simplest upsampler, a baseline: every normal strand copies its closest guide (closest by
//! mean rest distance between corresponding particles), carried in the guide's frame
//! (001 Eq. 5 with a single guide of weight 1).

use std::time::{Duration, Instant};

use glam::Vec3;
use rayon::prelude::*;

use super::idw::blend;
use super::interpolator::{GuideFrame, InterpTimes, Interpolator, Method};
use super::layout::GuideLayout;
use crate::error::Result;
use crate::groom::Groom;

pub struct NearestGuide {
    pub layout: GuideLayout,
    /// Per strand: its guide with weight 1 at every particle (empty for guides).
    bindings: Vec<Vec<(u32, Vec<f32>)>>,
    time: Duration,
}

impl NearestGuide {
    pub fn new(groom: &Groom, guides: &[usize]) -> Result<NearestGuide> {
        let layout = GuideLayout::new(groom, guides)?;
        let bindings = (0..layout.strand_count())
            .into_par_iter()
            .map(|s| {
                let me = layout.strand(s);
                if layout.is_guide(s) || me.is_empty() || guides.is_empty() {
                    return Vec::new();
                }
                let best = (0..layout.guide_count())
                    .map(|k| {
                        let g = layout.guide_rest(k);
                        let d: f32 = me
                            .iter()
                            .enumerate()
                            .map(|(i, p)| p.distance(g[i.min(g.len() - 1)]))
                            .sum();
                        (d, k as u32)
                    })
                    .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
                    .expect("guides exist");
                vec![(best.1, vec![1.0; me.len()])]
            })
            .collect();
        Ok(NearestGuide {
            layout,
            bindings,
            time: Duration::ZERO,
        })
    }
}

impl Interpolator for NearestGuide {
    fn method(&self) -> Method {
        Method::Nearest
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groom::{GroomParams, generate};
    use crate::motion::Pose;

    #[test]
    fn every_strand_follows_its_closest_guide_rigidly() {
        let g = generate(&GroomParams {
            strands: 300,
            ..GroomParams::default()
        })
        .unwrap();
        let guides = crate::guides::select_uv_lattice(&g, 30);
        let mut m = NearestGuide::new(&g, &guides).unwrap();
        // Guides translated by the same vector: every strand moves by it.
        let shift = Vec3::new(0.3, -1.0, 0.5);
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
            .map(|(a, b)| a.distance(*b + shift))
            .fold(0.0, f32::max);
        assert!(worst < 1e-5, "{worst}");
        let mut w = Vec::new();
        for s in 0..g.strand_count() {
            m.weights(s, &mut w);
            assert_eq!(w.len(), usize::from(!m.layout.is_guide(s)));
        }
    }
}
