//! The sections of a job file that choose and tune the methods: guides (`[guides]`), the neural
//! interpolator (`[neural]`), the hair mesh (`[hairmesh]`) and the drape (`[drape]`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::guides::skinning::FitOptions;
use crate::guides::{AdaptiveOptions, TwoWayOptions};

/// How guides are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Selection {
    /// A uniform lattice over the root UVs (000 §4.1).
    Lattice,
    /// Sparse coding of the training motion (001 §6.3, Eq. 9–10).
    Sparse,
}

/// Guide selection and upsampling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GuideSpec {
    /// About this many guides.
    pub count: usize,
    pub selection: Selection,
    /// Rounds of dictionary learning of the sparse selection.
    pub sparse_iterations: usize,
    /// The methods scored, each `ID` or `ID+CORRECTION` (ID: idw, nearest, static, adaptive;
    /// CORRECTION: two_way, projection, none). The first is written to hair.abc.
    pub methods: Vec<String>,
    /// One method (older jobs); `methods` supersedes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Guides each normal strand follows (IDW).
    pub neighbors: usize,
    /// Position-based correction: push upsampled strands out of the solids, keeping segment
    /// lengths (the default correction of every method).
    pub resolve_collisions: bool,
    /// Simulate the adaptive method's guides with two-way collision correction (001 §5).
    pub two_way: bool,
    /// Also score every method fed the ground truth's own guides.
    pub oracle: bool,
    /// Skinning fit (001 §6).
    pub fit: FitOptions,
    /// Runtime adaptation (001 §4).
    pub adaptive: AdaptiveOptions,
    /// Two-way correction (001 §5).
    pub correction: TwoWayOptions,
}

impl Default for GuideSpec {
    fn default() -> Self {
        GuideSpec {
            count: 200,
            selection: Selection::Lattice,
            sparse_iterations: 10,
            methods: vec!["idw".into()],
            method: None,
            neighbors: 10,
            resolve_collisions: true,
            two_way: true,
            oracle: true,
            fit: FitOptions::default(),
            adaptive: AdaptiveOptions::default(),
            correction: TwoWayOptions::default(),
        }
    }
}

/// The neural interpolator of a job (`[neural]`), trained on the `[training]` simulation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NeuralSpec {
    /// A training config: built-in name (interp_small, interp_paper) or TOML file.
    pub config: String,
    /// A trained model file (`.tnn`: `tress train interp` / `train displace`, or another job's
    /// `model.tnn` / `displaced.tnn`), relative to the job file: used as it is, nothing is
    /// trained, `config` is not read (the file carries its own) and no `[training]` is needed
    /// for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Override the config's number of training steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
    /// Override the displacement generator's steps (`[displace]` of the config; 0: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub displace_steps: Option<usize>,
    /// 000 Table 1's ablations: W_θ trained again without some loss terms (`data_only`,
    /// `no_length`, `no_snap`, `no_tempo`), each scored as a row of its own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ablations: Vec<crate::neural::interp::loss::LossAblation>,
    /// Where the networks train and run: "cpu" (Flex) or "cuda" (a build with the `cuda`
    /// feature and an NVIDIA GPU).
    #[serde(skip_serializing_if = "is_cpu")]
    pub device: crate::neural::device::DeviceKind,
}

fn is_cpu(d: &crate::neural::device::DeviceKind) -> bool {
    *d == crate::neural::device::DeviceKind::Cpu
}

impl Default for NeuralSpec {
    fn default() -> Self {
        NeuralSpec {
            config: "interp_small".into(),
            model: None,
            steps: None,
            displace_steps: None,
            ablations: Vec::new(),
            device: Default::default(),
        }
    }
}

impl NeuralSpec {
    /// The training config with the job's overrides, or the config a given `model` was trained
    /// with (with its generator's options when it has one).
    pub fn load(&self, dir: Option<&std::path::Path>) -> Result<crate::neural::interp::InterpConfig> {
        if let Some(m) = &self.model {
            if self.steps.is_some() || self.displace_steps.is_some() || !self.ablations.is_empty() {
                return Err(Error::Invalid(
                    "neural.model is a trained model: `steps`, `displace_steps` and `ablations` train one; leave them out".into(),
                ));
            }
            return crate::neural::interp::train::model_config(std::path::Path::new(m))
                .map_err(|e| Error::Invalid(format!("neural.model: {e}")));
        }
        let name = match dir {
            Some(d)
                if self.config.ends_with(".toml") && !std::path::Path::new(&self.config).is_absolute() =>
            {
                d.join(&self.config).display().to_string()
            }
            _ => self.config.clone(),
        };
        let mut c = crate::neural::interp::InterpConfig::load(&name)?;
        if let Some(s) = self.steps {
            c.train.steps = s;
        }
        match self.displace_steps {
            Some(0) => c.displace = None,
            Some(s) => c.displace.get_or_insert_with(Default::default).steps = s,
            None => {}
        }
        if c.displace.as_ref().is_some_and(|d| d.steps == 0) {
            c.displace = None;
        }
        c.validate()?;
        if let Some(d) = &c.displace {
            d.check_grid(&c.grid)?;
        }
        Ok(c)
    }
}

/// The hair-mesh simulation of a job (`[hairmesh]`, 002): a mesh built around the prepared
/// groom, simulated on the job's head and motion, scored as the row `hairmesh`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HairMeshSpec {
    /// Adds the row `hairmesh` (listing it in `guides.methods` does too, in its place).
    pub enabled: bool,
    /// Scalp-UV grid cells across the roots: one root face per occupied cell.
    pub cells: usize,
    /// Vertex layers per column, root included.
    pub layers: usize,
    /// connected (bundles side by side across the hair share columns, 002 §3) or bundles
    /// (separate, one per cell).
    pub topology: crate::hairmesh::Topology,
    /// Solver parameters (002 gives none; tress's defaults).
    pub solver: crate::hairmesh::HairMeshParams,
}

impl Default for HairMeshSpec {
    fn default() -> Self {
        let b = crate::hairmesh::BuildOptions::default();
        HairMeshSpec {
            enabled: false,
            cells: b.cells,
            layers: b.layers,
            topology: b.topology,
            solver: Default::default(),
        }
    }
}

/// The quasi-static drape of a job (`[drape]`, 003): the groom draped for every frame's head
/// pose (relative to the torso) by a trained drape network or a direct minimization of the
/// drape energy, with the colliders where the frame has them; scored as the row `drape`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrapeSpec {
    /// Adds the row `drape` (listing it in `guides.methods` does too, in its place).
    pub enabled: bool,
    /// network (a trained model), lbfgs, adam or xpbd.
    pub solver: crate::neural::drape::draper::DrapeSolver,
    /// The drape network (`tress train drape`), relative to the job file; `${VAR}` expanded.
    pub model: Option<String>,
    /// Adam's steps, L-BFGS's outer steps or XPBD's iterations per step; the network's line
    /// search's energy evaluations (0: the decoder's output as it is).
    pub iterations: Option<u64>,
    /// Adam's first step size (cm).
    pub learning_rate: f64,
    /// The network's search along its output: `strands` (a scale per strand, smoothed over the
    /// scalp, after the uniform search) or `uniform` (one scale for every strand).
    pub search: crate::neural::drape::draper::LineSearch,
    /// Scalp texture size and vertices per draped strand (direct solvers: 32 and 24 by
    /// default; a network's own).
    pub texture: Option<usize>,
    pub points: Option<usize>,
    /// The energy's stiffnesses (`[drape.material]`, direct solvers).
    pub material: Option<crate::neural::drape::DrapeMaterial>,
}

impl Default for DrapeSpec {
    fn default() -> Self {
        DrapeSpec {
            enabled: false,
            solver: crate::neural::drape::draper::DrapeSolver::Network,
            model: None,
            iterations: None,
            learning_rate: 0.05,
            search: Default::default(),
            texture: None,
            points: None,
            material: None,
        }
    }
}

impl DrapeSpec {
    /// The drape's settings, keys named `drape.KEY`.
    pub fn draper_spec<'a>(
        &'a self,
        key: &'a dyn Fn(&str) -> String,
    ) -> crate::neural::drape::draper::DraperSpec<'a> {
        crate::neural::drape::draper::DraperSpec {
            solver: self.solver,
            model: self.model.as_deref().map(Path::new),
            material: self.material.clone(),
            texture: self.texture,
            points: self.points,
            iterations: self.iterations,
            learning_rate: self.learning_rate,
            search: self.search,
            key,
        }
    }
}

/// `drape.KEY`, as a job's errors name the drape's settings.
pub fn drape_key(k: &str) -> String {
    format!("drape.{k}")
}

impl HairMeshSpec {
    /// Checks what a hairmesh row builds and simulates with.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.cells == 0 || !(2..=64).contains(&self.layers) {
            return Err("hairmesh: cells must be at least 1 and layers within 2..=64".into());
        }
        self.solver.check().map_err(|e| format!("hairmesh.solver.{e}"))
    }
}
