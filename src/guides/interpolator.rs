//! The upsampling seam: every method that turns simulated guide strands into the whole groom
//! implements [`Interpolator`] (rest data + one frame of guides → the whole groom, in the head's
//! frame): IDW and skinning here, the networks in `neural`, the hair mesh in `hairmesh`. One
//! factory builds any of them and one frame loop drives them (`crate::upsample`).

use std::time::Duration;

use glam::Vec3;
use serde::Serialize;

use super::layout::GuideLayout;
use crate::collide::ColliderFrame;
use crate::error::Result;
use crate::motion::Pose;

/// One frame of simulated guides.
pub struct GuideFrame<'a> {
    /// Frame number.
    pub frame: f64,
    /// Seconds.
    pub time: f64,
    /// The guides' particles in the head's frame, guides in slot order.
    pub guides: &'a [Vec3],
    /// The head's pose (head frame → world).
    pub pose: &'a Pose,
    /// The solids at this instant (world space), for methods that avoid them.
    pub colliders: Option<&'a ColliderFrame<'a>>,
}

/// Where an interpolator's time went (001 §7.3's parts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct InterpTimes {
    /// Guide graph, grouping and set assignment (001 Alg. 1, lines 1–22).
    #[serde(serialize_with = "crate::units::secs")]
    pub grouping: Duration,
    /// Evaluating the interpolation (001 Eq. 5).
    #[serde(serialize_with = "crate::units::secs")]
    pub interpolation: Duration,
}

/// One way of upsampling guides to the whole groom.
pub trait Interpolator: Send + Sync {
    /// The rest groom and its guides.
    fn layout(&self) -> &GuideLayout;

    /// The whole groom (head frame, every particle of every strand, guides included) from one
    /// frame of guides. Frames come in order; a method may keep state between them.
    fn interpolate(&mut self, frame: &GuideFrame, out: &mut [Vec3]) -> Result<()>;

    /// Whether the result of a frame depends on earlier frames (then a chunk of frames must be
    /// preceded by the frames before it).
    fn stateful(&self) -> bool {
        false
    }

    /// The guides that carry normal strand `s` at the last interpolated frame, with their
    /// weight at each particle (001 Eq. 5's w_{g→s}(i)); empty for guides.
    fn weights(&self, s: usize, out: &mut Vec<(u32, Vec<f32>)>);

    /// Every guide that may ever carry normal strand `s` (a superset of the guides in
    /// [`Interpolator::weights`] at any frame), increasing. By default the current ones.
    fn candidates(&self, s: usize, out: &mut Vec<u32>) {
        let mut w = Vec::new();
        self.weights(s, &mut w);
        out.clear();
        out.extend(w.iter().map(|(g, _)| *g));
        out.sort_unstable();
        out.dedup();
    }

    fn times(&self) -> InterpTimes {
        InterpTimes::default()
    }

    /// What the method did, for reports (counts of its decisions); null when it decides nothing.
    fn diagnostics(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}
