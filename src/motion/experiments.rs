//! Constant head motion and the student project's batch of random experiments (004): a head
//! moving at a constant linear and angular velocity for a while, then holding still. The
//! project drew random centres and velocities for a unit-sphere head; tress draws, seeded,
//! a direction and speed, a rotation axis and rate, and how long the motion lasts.

use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::pose::Pose;
use super::track::HeadTrack;
use crate::error::{Error, Result};

/// Keys per second of a constant-motion track: between keys the rotation is slerped (exact
/// for a constant rotation) and the translation interpolated linearly (off the pivot's arc by
/// r (ω Δt)² / 8: 0.3 µm at 10 cm and 90°/s).
const KEYS_PER_SECOND: f64 = 96.0;

/// A head moving from its start pose at constant velocities for `duration` seconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConstantMotion {
    /// cm/s.
    pub velocity: DVec3,
    /// Degrees per second about the world axes.
    pub angular_velocity: DVec3,
    /// The point the rotation turns about (cm, at the start).
    pub pivot: DVec3,
    /// Seconds.
    pub duration: f64,
}

impl ConstantMotion {
    /// The pose `tau` seconds after the start (held after the duration).
    pub fn pose(&self, tau: f64) -> Pose {
        let tau = tau.clamp(0.0, self.duration);
        let w = self.angular_velocity * std::f64::consts::PI / 180.0;
        let r = DQuat::from_scaled_axis(w * tau);
        Pose::new(r, self.pivot - r * self.pivot + self.velocity * tau)
    }

    /// The track starting at `start` seconds (still before it).
    pub fn track(&self, start: f64) -> Result<HeadTrack> {
        if !(self.duration >= 0.0 && self.duration.is_finite()) {
            return Err(Error::Invalid(format!(
                "a constant motion lasts a number of seconds, not {}",
                self.duration
            )));
        }
        let n = ((self.duration * KEYS_PER_SECOND).ceil() as usize).clamp(1, 10_000_000);
        if self.duration == 0.0 {
            return HeadTrack::new(vec![(start, Pose::IDENTITY)]);
        }
        let keys = (0..=n)
            .map(|i| {
                let tau = self.duration * i as f64 / n as f64;
                (start + tau, self.pose(tau))
            })
            .collect();
        HeadTrack::new(keys)
    }
}

/// How a batch draws its experiments (`[batch.experiments]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExperimentSpec {
    /// How many experiments (batch items `exp01`, `exp02`, …).
    pub count: usize,
    pub seed: u64,
    /// Range of the linear speed (cm/s), drawn uniformly; the direction uniformly on the sphere.
    pub speed: [f64; 2],
    /// Range of the angular speed (degrees/s); the axis uniformly on the sphere.
    pub angular_speed: [f64; 2],
    /// Range of how long the head moves (s) before it stops.
    pub moving: [f64; 2],
}

impl Default for ExperimentSpec {
    fn default() -> Self {
        ExperimentSpec {
            count: 24,
            seed: 1,
            speed: [0.0, 40.0],
            angular_speed: [0.0, 90.0],
            moving: [0.5, 2.0],
        }
    }
}

fn direction(rng: &mut ChaCha8Rng) -> DVec3 {
    let z: f64 = rng.random_range(-1.0..=1.0);
    let phi: f64 = rng.random_range(0.0..std::f64::consts::TAU);
    let r = (1.0 - z * z).max(0.0).sqrt();
    DVec3::new(r * phi.cos(), z, r * phi.sin())
}

fn within(rng: &mut ChaCha8Rng, [lo, hi]: [f64; 2]) -> f64 {
    if hi > lo { rng.random_range(lo..=hi) } else { lo }
}

impl ExperimentSpec {
    pub fn check(&self) -> std::result::Result<(), String> {
        if !(1..=10_000).contains(&self.count) {
            return Err("count must be within 1..=10000".into());
        }
        for (k, [lo, hi]) in [
            ("speed", self.speed),
            ("angular_speed", self.angular_speed),
            ("moving", self.moving),
        ] {
            if !(lo >= 0.0 && hi >= lo && hi.is_finite()) {
                return Err(format!("{k} is a range [low, high] with 0 ≤ low ≤ high"));
            }
        }
        Ok(())
    }

    /// The experiments, about `pivot` (the head's centre), seeded: the same spec gives the
    /// same experiments.
    pub fn draw(&self, pivot: DVec3) -> Vec<ConstantMotion> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        (0..self.count)
            .map(|_| {
                let v = direction(&mut rng) * within(&mut rng, self.speed);
                let w = direction(&mut rng) * within(&mut rng, self.angular_speed);
                ConstantMotion {
                    velocity: v,
                    angular_velocity: w,
                    pivot,
                    duration: within(&mut rng, self.moving),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_motion_turns_about_its_pivot_and_holds() {
        let m = ConstantMotion {
            velocity: DVec3::new(10.0, 0.0, 0.0),
            angular_velocity: DVec3::new(0.0, 90.0, 0.0),
            pivot: DVec3::new(0.0, 5.0, 1.0),
            duration: 1.0,
        };
        let t = m.track(2.0).unwrap();
        // The pivot only translates; a point 1 cm off it turns a quarter turn in a second.
        let p = t.at(2.5).apply(m.pivot);
        assert!((p - (m.pivot + DVec3::new(5.0, 0.0, 0.0))).length() < 1e-9);
        let q = t.at(3.0).apply(m.pivot + DVec3::X) - t.at(3.0).apply(m.pivot);
        assert!((q - DVec3::new(0.0, 0.0, -1.0)).length() < 1e-9, "{q}");
        // Still before the start, held after the duration.
        assert_eq!(t.at(1.0), Pose::IDENTITY);
        assert_eq!(t.at(9.0), t.at(3.0));
        // Between keys: a point on the arc within a micrometre.
        let mid = t
            .at(2.0 + 0.5 / KEYS_PER_SECOND)
            .apply(m.pivot + DVec3::new(10.0, 0.0, 0.0));
        let exact = m
            .pose(0.5 / KEYS_PER_SECOND)
            .apply(m.pivot + DVec3::new(10.0, 0.0, 0.0));
        assert!(mid.distance(exact) < 1e-4, "{}", mid.distance(exact));
    }

    #[test]
    fn experiments_are_seeded_and_within_their_ranges() {
        let spec = ExperimentSpec::default();
        let a = spec.draw(DVec3::ZERO);
        assert_eq!(a, spec.draw(DVec3::ZERO));
        assert_eq!(a.len(), 24);
        assert_ne!(
            a,
            ExperimentSpec {
                seed: 2,
                ..spec.clone()
            }
            .draw(DVec3::ZERO)
        );
        for e in &a {
            assert!(e.velocity.length() <= 40.0 + 1e-9);
            assert!(e.angular_velocity.length() <= 90.0 + 1e-9);
            assert!((0.5..=2.0).contains(&e.duration));
        }
        // Directions spread over the sphere: the mean direction is short.
        let mean: DVec3 = a.iter().map(|e| e.velocity.normalize_or_zero()).sum::<DVec3>() / 24.0;
        assert!(mean.length() < 0.5);
        assert!(spec.check().is_ok());
        assert!(
            ExperimentSpec {
                speed: [2.0, 1.0],
                ..spec
            }
            .check()
            .is_err()
        );
    }
}
