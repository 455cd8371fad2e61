//! The upsampling seam: every method that turns simulated guide strands into the whole groom
//! implements [`Interpolator`] (rest data + one frame of guides → the whole groom, in the head's
//! frame), and one frame loop ([`super::upsample::Upsampler`]) drives it for `tress upsample`,
//! the job's upsample stage and `tress simulate --mode reduced`.

use std::time::Duration;

use glam::Vec3;
use serde::{Deserialize, Serialize};

use super::layout::GuideLayout;
use crate::collide::ColliderFrame;
use crate::error::Result;
use crate::motion::Pose;

/// The upsampling methods, by the ids reports and job files use.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Inverse-distance weights of the closest guides, carried in the guides' frames.
    Idw,
    /// Each strand follows its closest guide.
    Nearest,
    /// Skinning fitted on a training simulation, one guide set per strand, fixed weights.
    Static,
    /// Fitted skinning choosing each strand's guide set every frame from how the guides move
    /// and where the solids are.
    Adaptive,
    /// Per-particle weights over the 4 × 4 guide neighbourhood predicted by a trained network;
    /// its guides are the model's uv-grid guides.
    Neural,
    /// The strands embedded in a simulated hair mesh: its "guides" are the mesh's vertices,
    /// column by column, from a job's hair-mesh stage (not a choice of the commands that
    /// upsample simulated guides).
    #[value(skip)]
    Hairmesh,
    /// The quasi-static drape of the whole groom for each frame's head pose: its "guides" are
    /// the draped scalp-texture strands from a job's drape stage (no simulated guides).
    #[value(skip)]
    Drape,
}

impl Method {
    pub const ALL: [Method; 7] = [
        Method::Idw,
        Method::Nearest,
        Method::Static,
        Method::Adaptive,
        Method::Neural,
        Method::Hairmesh,
        Method::Drape,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Method::Idw => "idw",
            Method::Nearest => "nearest",
            Method::Static => "static",
            Method::Adaptive => "adaptive",
            Method::Neural => "neural",
            Method::Hairmesh => "hairmesh",
            Method::Drape => "drape",
        }
    }

    /// Whether the method places the groom from something other than simulated guides (a hair
    /// mesh, a drape): no guides, no oracle row.
    pub fn without_guides(self) -> bool {
        matches!(self, Method::Hairmesh | Method::Drape)
    }

    /// Whether the method learns from a training simulation (skinning fit or network training).
    pub fn needs_training(self) -> bool {
        self.needs_skinning() || self == Method::Neural
    }

    /// Whether the method needs a fitted skinning model.
    pub fn needs_skinning(self) -> bool {
        matches!(self, Method::Static | Method::Adaptive)
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

impl std::str::FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Method, String> {
        Method::ALL.into_iter().find(|m| m.id() == s).ok_or_else(|| {
            let ids: Vec<&str> = Method::ALL.iter().map(|m| m.id()).collect();
            format!(
                "unknown upsampling method {s:?}; the methods are {}",
                ids.join(", ")
            )
        })
    }
}

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
    fn method(&self) -> Method;

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
