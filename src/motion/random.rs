//! Random key-pose head motion (000 §5.2: "randomly sampling several key poses and SLERPing
//! the in-between frames with a smoothing constraint of the speed").
//!
//! Key poses draw yaw, pitch and roll and an offset uniformly within the preset's bounds. Between
//! keys the head moves along the slerp/lerp path with the quintic ease 6u⁵ − 15u⁴ + 10u³ (zero
//! velocity and acceleration at keys, peak speed 15/8 of the mean), and each segment is made
//! long enough that the peak angular and linear speeds stay under the preset's limits. `speed`
//! plays the whole motion faster (`violent` is `gentle` × 10). A walk adds a constant velocity,
//! a vertical bob and a lateral sway at half the bob's frequency (one sway per two steps).
//!
//! A phase of a range-of-motion library ([`super::rom`]) also returns to the rest orientation
//! and offset at its end (`to_rest`) and fades its walk in and out over `ramp` seconds (the
//! velocity follows the smoothstep 3u² − 2u³), so that phases join with the head at rest.

use glam::{DQuat, DVec3, EulerRot};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::pose::Pose;
use super::track::HeadTrack;
use crate::error::{Error, Result};
use crate::presets::{self, Table};

pub const TABLE: Table = &[
    ("gentle", include_str!("../../presets/motions/gentle.toml")),
    ("walk", include_str!("../../presets/motions/walk.toml")),
    ("turn", include_str!("../../presets/motions/turn.toml")),
    ("violent", include_str!("../../presets/motions/violent.toml")),
    ("rom", include_str!("../../presets/motions/rom.toml")),
];

/// Peak of the quintic ease's derivative: the peak speed is this times the mean.
const EASE_PEAK: f64 = 15.0 / 8.0;
/// Rate at which the eased motion is sampled into track keys.
const KEY_RATE: f64 = 240.0;
/// How much longer than its `duration` the speed limits may make a motion.
const MAX_STRETCH: f64 = 100.0;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomMotion {
    /// Length of the motion before `speed` is applied (s).
    pub duration: f64,
    /// Range of times between key poses (s).
    pub key_interval: [f64; 2],
    pub max_yaw_deg: f64,
    pub max_pitch_deg: f64,
    pub max_roll_deg: f64,
    /// Largest offset from the rest position along x, y, z (cm).
    pub max_translation: [f64; 3],
    /// Speed limits of the smoothing constraint (deg/s and cm/s, before `speed`).
    pub max_angular_speed_deg: f64,
    pub max_linear_speed: f64,
    /// Time compression: 10 plays the motion ten times faster.
    #[serde(default = "one")]
    pub speed: f64,
    /// The random key poses' seed (a range-of-motion phase draws its own from the library's).
    #[serde(default)]
    pub seed: u64,
    /// A range-of-motion phase's name (for reports).
    #[serde(default)]
    pub name: String,
    /// Walking velocity added to the motion (cm/s).
    #[serde(default)]
    pub walk_velocity: [f64; 3],
    /// Vertical bob of a walk (cm) and its frequency (Hz).
    #[serde(default)]
    pub bob_amplitude: f64,
    #[serde(default)]
    pub bob_frequency: f64,
    /// Lateral (x) sway of a walk (cm), at half the bob frequency.
    #[serde(default)]
    pub sway_amplitude: f64,
    /// End with a key at rest (no rotation, no offset besides the walk's way).
    #[serde(default)]
    pub to_rest: bool,
    /// Seconds over which the walk, bob and sway fade in at the start and out at the end (0:
    /// they run from the first instant, as a walk preset does).
    #[serde(default)]
    pub ramp: f64,
}

fn one() -> f64 {
    1.0
}

/// The smoothstep fade of a walk lasting `end` s with ramps of `r` s: its velocity factor and
/// its integral (the distance walked at unit velocity) at time t.
fn walk_fade(t: f64, end: f64, r: f64) -> (f64, f64) {
    let r = r.min(end / 2.0);
    if r <= 0.0 {
        return (1.0, t);
    }
    // Within a ramp: factor 3u² − 2u³, its integral r·(u³ − u⁴/2).
    let head = |x: f64| {
        let u = (x / r).clamp(0.0, 1.0);
        (u * u * (3.0 - 2.0 * u), r * (u * u * u - 0.5 * u * u * u * u))
    };
    if t <= r {
        head(t)
    } else if t >= end - r {
        let (f, w) = head(end - t);
        (f, (end - r) - w)
    } else {
        (1.0, r / 2.0 + (t - r))
    }
}

impl RandomMotion {
    /// A built-in preset (`gentle`, `walk`, `turn`, `violent`) or a TOML file.
    pub fn preset(name_or_path: &str) -> Result<RandomMotion> {
        presets::load("motion", TABLE, name_or_path)
    }

    fn check(&self) -> Result<()> {
        let ok = self.duration > 0.0
            && self.key_interval[0] > 0.0
            && self.key_interval[1] >= self.key_interval[0]
            && self.max_angular_speed_deg > 0.0
            && self.max_linear_speed > 0.0
            && self.speed > 0.0
            && self.ramp >= 0.0
            && self.duration / self.key_interval[0] < 1e5;
        if !ok {
            return Err(Error::Invalid(
                "motion: duration, key interval, speed limits and speed must be positive (ramp ≥ 0)".into(),
            ));
        }
        let numbers = [
            self.duration,
            self.key_interval[1],
            self.max_yaw_deg,
            self.max_pitch_deg,
            self.max_roll_deg,
            self.max_angular_speed_deg,
            self.max_linear_speed,
            self.speed,
            self.bob_amplitude,
            self.bob_frequency,
            self.sway_amplitude,
            self.ramp,
        ];
        if numbers
            .iter()
            .chain(&self.max_translation)
            .chain(&self.walk_velocity)
            .any(|v| !v.is_finite())
        {
            return Err(Error::Invalid(
                "motion: every number must be finite (no inf or nan)".into(),
            ));
        }
        Ok(())
    }

    fn key_pose(&self, rng: &mut ChaCha8Rng) -> Pose {
        let mut u = |m: f64| if m > 0.0 { rng.random_range(-m..=m) } else { 0.0 };
        let yaw = u(self.max_yaw_deg).to_radians();
        let pitch = u(self.max_pitch_deg).to_radians();
        let roll = u(self.max_roll_deg).to_radians();
        let t = DVec3::new(
            u(self.max_translation[0]),
            u(self.max_translation[1]),
            u(self.max_translation[2]),
        );
        Pose::new(DQuat::from_euler(EulerRot::YXZ, yaw, pitch, roll), t)
    }

    /// Generates the head track (starts at rest at t = 0).
    pub fn track(&self) -> Result<HeadTrack> {
        HeadTrack::new(self.keys()?)
    }

    /// The track's keys (time in seconds from 0, pose), sampled at 240 Hz.
    pub fn keys(&self) -> Result<Vec<(f64, Pose)>> {
        self.check()?;
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        // Key poses and their times, in the motion's own (uncompressed) time.
        let mut keys = vec![(0.0, Pose::IDENTITY)];
        let next_key = |keys: &mut Vec<(f64, Pose)>, p1: Pose, rng: &mut ChaCha8Rng| {
            let (t0, p0) = *keys.last().expect("non-empty");
            let mut dt = rng.random_range(self.key_interval[0]..=self.key_interval[1]);
            let angle = p0.inverse().then_after(&p1).angle_deg();
            let dist = (p1.translation - p0.translation).length();
            dt = dt
                .max(EASE_PEAK * angle / self.max_angular_speed_deg)
                .max(EASE_PEAK * dist / self.max_linear_speed);
            keys.push((t0 + dt, p1));
        };
        while keys.last().expect("non-empty").0 < self.duration {
            let p1 = self.key_pose(&mut rng);
            next_key(&mut keys, p1, &mut rng);
        }
        if self.to_rest {
            next_key(&mut keys, Pose::IDENTITY, &mut rng);
        }
        let end = keys.last().expect("non-empty").0;
        // The speed limits stretch the time between far-apart keys: a translation range far
        // beyond what the speed limit covers in the key interval would make a track of years.
        if end > MAX_STRETCH * self.duration {
            return Err(Error::Invalid(format!(
                "motion: its speed limits stretch {} s of motion to {end:.3e} s; raise \
                 max_linear_speed / max_angular_speed_deg or lower the ranges",
                self.duration
            )));
        }
        let samples = (end * KEY_RATE).ceil() as usize;
        let mut out = Vec::with_capacity(samples + 1);
        let mut seg = 0;
        let tau = std::f64::consts::TAU;
        for i in 0..=samples {
            let t = (i as f64 / KEY_RATE).min(end);
            while seg + 2 < keys.len() && t > keys[seg + 1].0 {
                seg += 1;
            }
            let ((t0, p0), (t1, p1)) = (keys[seg], keys[seg + 1]);
            let u = ((t - t0) / (t1 - t0)).clamp(0.0, 1.0);
            let ease = u * u * u * (10.0 - 15.0 * u + 6.0 * u * u);
            let mut pose = p0.lerp(&p1, ease);
            let (fade, walked) = walk_fade(t, end, self.ramp);
            let walk = DVec3::from_array(self.walk_velocity) * walked;
            let bob = self.bob_amplitude * (tau * self.bob_frequency * t).sin();
            let sway = self.sway_amplitude * (0.5 * tau * self.bob_frequency * t).sin();
            pose.translation += walk + fade * DVec3::new(sway, bob, 0.0);
            out.push((t / self.speed, pose));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_load_and_respect_their_bounds() {
        for name in ["gentle", "walk", "turn", "violent"] {
            // (`rom` is a range of motion: its own tests in `rom.rs`.)
            let m = RandomMotion::preset(name).unwrap();
            let track = m.track().unwrap();
            assert!(track.duration() >= m.duration / m.speed - 1e-9, "{name}");
            let (lin, ang) = track.peak_speeds();
            // The smoothing constraint, scaled by `speed` (the walk adds its own velocity).
            let walk = DVec3::from_array(m.walk_velocity).length()
                + std::f64::consts::TAU * m.bob_frequency * m.bob_amplitude;
            assert!(
                ang <= m.max_angular_speed_deg * m.speed * 1.02,
                "{name}: {ang} deg/s"
            );
            assert!(
                lin <= (m.max_linear_speed + walk) * m.speed * 1.05,
                "{name}: {lin} cm/s"
            );
            assert!(
                ang > 0.2 * m.max_angular_speed_deg * m.speed,
                "{name} barely moves: {ang}"
            );
            // Every pose stays within the angular bounds (yaw + pitch + roll at most).
            let bound = m.max_yaw_deg + m.max_pitch_deg + m.max_roll_deg;
            for (t, _) in track.keys().step_by(50) {
                assert!(track.angle_from_start(t) <= bound + 1e-6, "{name} at {t}");
            }
        }
    }

    #[test]
    fn violent_is_gentle_ten_times_faster() {
        let g = RandomMotion::preset("gentle").unwrap().track().unwrap();
        let v = RandomMotion::preset("violent").unwrap().track().unwrap();
        assert!((g.duration() / v.duration() - 10.0).abs() < 1e-6);
        let (p, q) = (g.at(3.0), v.at(0.3));
        assert!((p.translation - q.translation).length() < 1e-9);
    }

    #[test]
    fn seeded_and_smooth() {
        let m = RandomMotion::preset("gentle").unwrap();
        assert_eq!(m.track().unwrap(), m.track().unwrap());
        let other = RandomMotion { seed: 8, ..m.clone() }.track().unwrap();
        assert_ne!(other.at(2.0), m.track().unwrap().at(2.0));
        // Starts at rest: zero velocity at t = 0⁺.
        let v = m.track().unwrap().velocity(1e-4);
        assert!(v.angular.length() < 1e-3 && v.linear.length() < 1e-3);
        assert!(RandomMotion { speed: 0.0, ..m }.track().is_err());
    }

    /// Found by fuzzing: a translation range of 2e37 cm made the speed limits stretch the
    /// motion past any sample count (an overflow, then an endless track in a release build).
    #[test]
    fn ranges_the_speed_limits_cannot_cover_and_infinities_are_refused() {
        let gentle = RandomMotion::preset("gentle").unwrap();
        let far = RandomMotion {
            max_translation: [2.1e37, 1.0, 2.0],
            ..gentle.clone()
        };
        let e = far.track().unwrap_err().to_string();
        assert!(e.contains("stretch") && e.contains("max_linear_speed"), "{e}");
        for bad in [
            RandomMotion {
                max_yaw_deg: f64::INFINITY,
                ..gentle.clone()
            },
            RandomMotion {
                max_translation: [f64::NAN, 0.0, 0.0],
                ..gentle.clone()
            },
            RandomMotion {
                walk_velocity: [0.0, f64::NEG_INFINITY, 0.0],
                ..gentle.clone()
            },
        ] {
            let e = bad.track().unwrap_err().to_string();
            assert!(e.contains("finite"), "{e}");
        }
        // Ranges the limits do cover still make a track.
        assert!(
            RandomMotion {
                max_translation: [30.0, 10.0, 10.0],
                ..gentle
            }
            .track()
            .is_ok()
        );
    }
}
