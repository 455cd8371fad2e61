//! Head motion: rigid head tracks from animation files, from track files, or generated (random
//! key poses, range-of-motion libraries of them, the 004 experiment batch).

pub mod experiments;
pub mod fit;
pub mod pose;
pub mod random;
pub mod rom;
pub mod sources;
pub mod track;

pub use pose::Pose;
pub use random::RandomMotion;
pub use rom::{MotionPreset, RomMotion};
pub use track::{HeadTrack, TrackVelocity};
