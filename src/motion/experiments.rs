//! The batch of random head-motion experiments of the student project (004): a unit-sphere head
//! whose centre sits at a random position in a 6 × 6 × 6 box and moves at a constant velocity.
//! For each of 10 random centres: one stationary case plus speeds {0.25, −0.25, 1, −1} along
//! the 8 normalized directions of {0, 1}³ (the zero vector stays zero), 33 cases, 330 in all.
//! Units are the project's (head radius 1); `scale` converts to tress's centimetres.

use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::pose::Pose;
use super::track::HeadTrack;
use crate::error::Result;

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Experiment {
    pub centre: DVec3,
    pub velocity: DVec3,
}

impl Experiment {
    /// The head translating from its centre at its velocity for `duration` seconds (the
    /// translation is relative to the centre: the groom is built around the centre).
    pub fn track(&self, duration: f64, scale: f64) -> Result<HeadTrack> {
        let keys = vec![
            (0.0, Pose::IDENTITY),
            (
                duration,
                Pose::new(Default::default(), self.velocity * duration * scale),
            ),
        ];
        HeadTrack::new(keys)
    }
}

pub const SPEEDS: [f64; 4] = [0.25, -0.25, 1.0, -1.0];

/// The 330 experiments, seeded.
pub fn experiments(seed: u64) -> Vec<Experiment> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(330);
    for _ in 0..10 {
        let centre = DVec3::new(
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
        );
        out.push(Experiment {
            centre,
            velocity: DVec3::ZERO,
        });
        for s in SPEEDS {
            for bits in 0..8u32 {
                let d = DVec3::new(
                    (bits & 1) as f64,
                    ((bits >> 1) & 1) as f64,
                    ((bits >> 2) & 1) as f64,
                );
                out.push(Experiment {
                    centre,
                    velocity: d.normalize_or_zero() * s,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_hundred_thirty_cases() {
        let e = experiments(1);
        assert_eq!(e.len(), 330);
        assert!(e.iter().all(|x| x.centre.abs().max_element() <= 3.0));
        assert!(e.iter().all(|x| {
            [0.0, 0.25, 1.0]
                .iter()
                .any(|s| (x.velocity.length() - s).abs() < 1e-12)
        }));
        // 10 stationary centres + the zero direction at 4 speeds per centre.
        assert_eq!(e.iter().filter(|x| x.velocity == DVec3::ZERO).count(), 50);
        let t = e[5].track(2.0, 10.0).unwrap();
        assert!((t.at(1.0).translation - e[5].velocity * 10.0).length() < 1e-12);
    }
}
