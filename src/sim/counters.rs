//! Where the simulation's time goes, stage by stage (like rapier's counters).

use std::time::Duration;

use serde::Serialize;

#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Counters {
    /// Spring forces and the strands' linear solves (summed over threads).
    #[serde(serialize_with = "crate::units::secs")]
    pub dynamics: Duration,
    /// Collision queries, projection and friction (summed over threads).
    #[serde(serialize_with = "crate::units::secs")]
    pub collisions: Duration,
    /// Hair–hair grid build (wall) and sampling (summed over threads).
    #[serde(serialize_with = "crate::units::secs")]
    pub hair_hair: Duration,
    /// Strain limiting (summed over threads).
    #[serde(serialize_with = "crate::units::secs")]
    pub strain: Duration,
    /// Writing frames (wall).
    #[serde(serialize_with = "crate::units::secs")]
    pub io: Duration,
    /// Strand–strand contacts: broad phase, narrow phase, response (wall).
    #[serde(serialize_with = "crate::units::secs")]
    pub strand_contacts: Duration,
    /// Working out external accelerations (two-way coupling of reduced models, wall).
    #[serde(serialize_with = "crate::units::secs")]
    pub external: Duration,
    /// Whole steps (wall).
    #[serde(serialize_with = "crate::units::secs")]
    pub total: Duration,
    pub steps: u64,
    pub particle_steps: u64,
}

impl Counters {
    /// One line per stage with its share of the thread time.
    pub fn report(&self) -> String {
        let thread_time = (self.dynamics + self.collisions + self.hair_hair + self.strain)
            .as_secs_f64()
            .max(1e-12);
        let pct = |d: Duration| 100.0 * d.as_secs_f64() / thread_time;
        let contacts = if self.strand_contacts.is_zero() {
            String::new()
        } else {
            format!(
                ", strand contacts {:.2} s wall",
                self.strand_contacts.as_secs_f64()
            )
        };
        format!(
            "dynamics {:.1}% | collisions {:.1}% | hair-hair {:.1}% | strain limit {:.1}% of thread time; steps {:.2} s wall{contacts}, I/O {:.2} s; {:.2} M particle-steps/s",
            pct(self.dynamics),
            pct(self.collisions),
            pct(self.hair_hair),
            pct(self.strain),
            self.total.as_secs_f64(),
            self.io.as_secs_f64(),
            self.particle_steps as f64 / self.total.as_secs_f64().max(1e-12) / 1e6
        )
    }
}
