//! Full hair simulation, the ground truth every reduced method is scored against: mass-spring
//! strands (Selle et al. 2008: stretch, bending, torsion and altitude springs), roots driven by
//! the head, collisions with friction (001 §7.1), volumetric hair–hair interaction, explicit,
//! symplectic and implicit integrators; optional strand–strand contacts.

pub mod band;
pub mod checkpoint;
pub mod contact;
pub mod counters;
pub mod inextensible;
pub mod material;
pub mod model;
pub mod run;
pub mod solver;
pub mod strand;
pub mod strand_contact;
pub mod volume;

pub use material::Material;
pub use solver::{ExternalForces, FrameStats, SimOptions, Simulation};
pub use strand::Integrator;
