//! Range-of-motion (ROM) libraries: one long head track made of phases that each cover one kind
//! of movement a shot may hold — talking, nods, turns, tilts, leaning and stepping, walking with
//! its bob and sway, running, fast shakes — so that a model trained on it has seen them all
//! (000 §5.2 trains on "random head motions"; a per-shot model only knows its one shot).
//!
//! Each phase is a random key-pose motion ([`super::RandomMotion`], 000 §5.2's slerped key
//! poses with the speed constraint) that starts and ends at the rest orientation with zero
//! velocity, its walk faded in and out, so phases join smoothly; the next phase starts where
//! the last one's walk left the head. A phase draws its key poses from its own seed, taken from
//! the library's seed: another `seed` gives another ROM of the same coverage.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::pose::Pose;
use super::random::{RandomMotion, TABLE};
use super::track::HeadTrack;
use crate::error::{Error, Result};
use crate::presets;

/// A phase as played: its name, start and end (s).
pub type PhaseSpan = (String, f64, f64);

/// A library of phases played one after the other.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RomMotion {
    /// Seed of the phases' key poses.
    pub seed: u64,
    /// The phases, in order (`[[phase]]` tables: a random key-pose motion each, with `name`).
    #[serde(rename = "phase")]
    pub phases: Vec<RandomMotion>,
    /// Play only these phases (by name, in the library's order), each with the key poses it
    /// has in the whole library: `extends = "rom"` with `only = ["walk", "run"]` is a part of
    /// the range of motion (datasets split it into shorter simulations this way).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only: Vec<String>,
}

impl RomMotion {
    /// The phases as played: each with its own seed, ending at rest (those of `only` when it
    /// names some).
    pub fn played_phases(&self) -> Result<Vec<RandomMotion>> {
        for name in &self.only {
            if !self.phases.iter().any(|p| &p.name == name) {
                let names: Vec<&str> = self.phases.iter().map(|p| p.name.as_str()).collect();
                return Err(Error::Invalid(format!(
                    "motion: `only` names no phase {name:?} (phases: {})",
                    names.join(", ")
                )));
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        Ok(self
            .phases
            .iter()
            .map(|p| RandomMotion {
                seed: rng.random(),
                to_rest: true,
                ..p.clone()
            })
            .filter(|p| self.only.is_empty() || self.only.contains(&p.name))
            .collect())
    }

    /// The whole track, and each phase's (name, start, end) in seconds.
    pub fn track_with_phases(&self) -> Result<(HeadTrack, Vec<PhaseSpan>)> {
        if self.phases.is_empty() {
            return Err(Error::Invalid(
                "motion: a range of motion needs at least one [[phase]]".into(),
            ));
        }
        let mut keys: Vec<(f64, Pose)> = Vec::new();
        let mut spans = Vec::new();
        for (i, p) in self.played_phases()?.iter().enumerate() {
            let name = if p.name.is_empty() {
                format!("phase {}", i + 1)
            } else {
                p.name.clone()
            };
            let phase = p.keys().map_err(|e| Error::Invalid(format!("{name}: {e}")))?;
            let (t0, offset) = keys.last().map(|(t, q)| (*t, q.translation)).unwrap_or_default();
            let skip = usize::from(!keys.is_empty());
            for (t, q) in phase.into_iter().skip(skip) {
                keys.push((t0 + t, Pose::new(q.rotation, q.translation + offset)));
            }
            spans.push((name, t0, keys.last().expect("a phase has keys").0));
        }
        Ok((HeadTrack::new(keys)?, spans))
    }

    pub fn track(&self) -> Result<HeadTrack> {
        Ok(self.track_with_phases()?.0)
    }
}

/// A motion preset: random key poses, or a range-of-motion library of such phases.
#[derive(Clone, Debug, PartialEq)]
pub enum MotionPreset {
    Keys(RandomMotion),
    Rom(RomMotion),
}

impl MotionPreset {
    /// A built-in preset (`gentle`, `walk`, `turn`, `violent`, `rom`) or a TOML file; a file
    /// with `[[phase]]` tables is a range of motion.
    pub fn load(name_or_path: &str) -> Result<MotionPreset> {
        let (table, origin) = presets::resolve("motion", TABLE, name_or_path)?;
        if table.contains_key("phase") {
            presets::keys::section(toml::Value::Table(table), "", &origin).map(MotionPreset::Rom)
        } else {
            presets::keys::section(toml::Value::Table(table), "", &origin).map(MotionPreset::Keys)
        }
    }

    pub fn seed(&self) -> u64 {
        match self {
            MotionPreset::Keys(m) => m.seed,
            MotionPreset::Rom(r) => r.seed,
        }
    }

    pub fn set_seed(&mut self, seed: u64) {
        match self {
            MotionPreset::Keys(m) => m.seed = seed,
            MotionPreset::Rom(r) => r.seed = seed,
        }
    }

    pub fn track(&self) -> Result<HeadTrack> {
        Ok(self.track_with_phases()?.0)
    }

    /// The track and a range of motion's phases (none for plain key poses).
    pub fn track_with_phases(&self) -> Result<(HeadTrack, Vec<PhaseSpan>)> {
        match self {
            MotionPreset::Keys(m) => Ok((m.track()?, Vec::new())),
            MotionPreset::Rom(r) => r.track_with_phases(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    fn rom() -> RomMotion {
        match MotionPreset::load("rom").unwrap() {
            MotionPreset::Rom(r) => r,
            other => panic!("rom is not a range of motion: {other:?}"),
        }
    }

    #[test]
    fn phases_join_at_rest_and_the_track_is_smooth() {
        let r = rom();
        let (track, spans) = r.track_with_phases().unwrap();
        assert_eq!(spans.len(), r.phases.len());
        for w in spans.windows(2) {
            assert_eq!(w[0].2, w[1].1, "phases follow each other");
        }
        for (name, _, end) in &spans {
            // At rest orientation, and still (the ease and the walk's fade end at zero speed).
            let p = track.at(*end);
            assert!(p.angle_deg() < 1e-6, "{name} ends turned by {}°", p.angle_deg());
            let v = track.velocity(*end - 1e-4);
            assert!(
                v.linear.length() < 0.05 && v.angular.length() < 1e-3,
                "{name} ends moving: {v:?}"
            );
        }
        // No jump anywhere: positions sampled at 240 Hz move at most the peak speed's step.
        let (lin, _) = track.peak_speeds();
        let (a, b) = track.span();
        let mut last = track.at(a).translation;
        let mut t = a;
        while t < b {
            t += 1.0 / 240.0;
            let p = track.at(t).translation;
            assert!((p - last).length() <= lin / 240.0 * 1.01 + 1e-9, "jump at {t}");
            last = p;
        }
    }

    #[test]
    fn covers_what_shots_do() {
        let r = rom();
        let (track, spans) = r.track_with_phases().unwrap();
        let names: Vec<&str> = spans.iter().map(|s| s.0.as_str()).collect();
        for want in ["talk", "nods", "turns", "tilts", "lean", "walk", "run", "shake"] {
            assert!(
                names.iter().any(|n| n.contains(want)),
                "no {want} phase: {names:?}"
            );
        }
        // Speeds up to the violent preset's angular speed, a walk's pace and more.
        let violent = RandomMotion::preset("violent").unwrap().track().unwrap();
        let (_, ang_v) = violent.peak_speeds();
        let (lin, ang) = track.peak_speeds();
        assert!(ang >= 0.5 * ang_v, "peak {ang} deg/s against violent's {ang_v}");
        assert!(lin >= 140.0, "peak {lin} cm/s: no walk");
        // Each rotation axis is exercised by some phase: the largest yaw, pitch and roll seen.
        let mut most = DVec3::ZERO;
        let (a, b) = track.span();
        let mut t = a;
        while t < b {
            let (y, x, z) = track.at(t).rotation.to_euler(glam::EulerRot::YXZ);
            most = most.max(DVec3::new(y.abs(), x.abs(), z.abs()) * 180.0 / std::f64::consts::PI);
            t += 0.05;
        }
        assert!(most.x > 45.0 && most.y > 20.0 && most.z > 15.0, "{most:?}");
    }

    #[test]
    fn seeded() {
        let r = rom();
        assert_eq!(r.track().unwrap(), r.track().unwrap());
        let other = RomMotion {
            seed: r.seed + 1,
            ..r.clone()
        };
        let (t, u) = (r.track().unwrap(), other.track().unwrap());
        assert_ne!(t.at(3.0), u.at(3.0));
        let mut p = MotionPreset::Rom(r.clone());
        p.set_seed(9);
        assert_eq!(p.seed(), 9);
        // A part of the library plays its phases as the whole library does.
        let part = RomMotion {
            only: vec!["walk".into(), "run".into()],
            ..r.clone()
        };
        let (whole, spans) = r.track_with_phases().unwrap();
        let (piece, pspans) = part.track_with_phases().unwrap();
        assert_eq!(pspans.len(), 2);
        let walk = spans.iter().find(|s| s.0 == "walk").unwrap();
        let origin = whole.at(walk.1).translation;
        for k in 0..50 {
            let dt = k as f64 * 0.1;
            let (a, b) = (whole.at(walk.1 + dt), piece.at(dt));
            assert!(
                (a.translation - origin - b.translation).length() < 1e-9,
                "at {dt}"
            );
            assert!(a.rotation.angle_between(b.rotation) < 1e-9);
        }
        let bad = RomMotion {
            only: vec!["moonwalk".into()],
            ..r
        };
        let e = bad.track().unwrap_err().to_string();
        assert!(e.contains("moonwalk") && e.contains("turns"), "{e}");
    }

    #[test]
    fn a_file_without_phases_is_refused_with_its_name() {
        let dir = std::env::temp_dir().join(format!("tress-rom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("empty_rom.toml");
        std::fs::write(&f, "seed = 1\nphase = []\n").unwrap();
        let e = MotionPreset::load(f.to_str().unwrap())
            .unwrap()
            .track()
            .unwrap_err()
            .to_string();
        assert!(e.contains("[[phase]]"), "{e}");
        std::fs::write(&f, "seed = 1\n[[phase]]\nname = 'x'\nduration = 1.0\n").unwrap();
        let e = MotionPreset::load(f.to_str().unwrap()).unwrap_err().to_string();
        assert!(e.contains("empty_rom.toml") && e.contains("key_interval"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
