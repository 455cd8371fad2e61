//! The upsampling methods, by the ids reports, job files and the command line use.

use serde::{Deserialize, Serialize};

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
