//! What a scene is made of, as a user names it: the groom's source, the head, the body, the
//! head motion, the props and the frames. Job files (`pipeline::job`) and the command line
//! (`tress simulate`, `tress hairmesh simulate`, the benchmarks) each read their own syntax
//! into a [`SceneSpec`]; [`SceneSpec::build`] (in `build.rs`) turns it into a [`super::Scene`].

use std::path::{Path, PathBuf};

use glam::Vec3;

use crate::collide::{Capsule, Shape, Sphere};
use crate::groom::presets;
use crate::groom::{ReadOptions, Transform};
use crate::motion::sources::MotionSource;

/// Where the groom comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum GroomSource {
    /// A procedural preset (a built-in name or a TOML file of groom parameters), with its
    /// strand count and seed overridden when given.
    Preset {
        name: String,
        strands: Option<usize>,
        seed: Option<u64>,
    },
    /// A groom file in any format tress reads (an `.mss` scene's hair too), with how to read
    /// it (a PLY point cloud's points per strand).
    File(PathBuf, ReadOptions),
}

impl GroomSource {
    /// `spec` as the command line gives it: a groom file, or a procedural preset name or file.
    pub fn parse(spec: &str, strands: Option<usize>) -> crate::Result<GroomSource> {
        if is_procedural(spec) {
            return Ok(GroomSource::Preset {
                name: spec.to_string(),
                strands,
                seed: None,
            });
        }
        if strands.is_some() {
            return Err(crate::Error::Invalid(
                "--strands applies to procedural groom presets, not groom files".into(),
            ));
        }
        Ok(GroomSource::File(PathBuf::from(spec), ReadOptions::default()))
    }
}

/// Whether `spec` names a procedural groom: a built-in preset (no file of that name) or a
/// preset file (`.toml`, e.g. `extends = "wavy"` with other keys).
pub fn is_procedural(spec: &str) -> bool {
    let path = Path::new(spec);
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("toml")) {
        return true;
    }
    !path.exists() && presets::TABLE.iter().any(|(name, _)| *name == spec)
}

/// The head collider.
#[derive(Clone, Debug, PartialEq)]
pub enum HeadSource {
    /// A procedural groom's own cranium.
    Procedural,
    /// An ellipsoid fitted to the roots, or the spheres that came with the groom file (a
    /// TressFX project's, an `.mss` scene's head).
    Fitted,
    /// A mesh (.obj, .glb/.gltf, .abc) or a `.sdf` distance grid.
    Mesh(PathBuf),
}

impl HeadSource {
    /// `procedural`, `sphere` (or `fit`), or a mesh / `.sdf` path.
    pub fn parse(spec: &str) -> HeadSource {
        match spec {
            "procedural" => HeadSource::Procedural,
            "sphere" | "fit" => HeadSource::Fitted,
            file => HeadSource::Mesh(PathBuf::from(file)),
        }
    }

    /// The head a groom has when none is named: its cranium for a procedural groom, an
    /// ellipsoid fitted to the roots otherwise.
    pub fn default_for(groom: &super::SceneGroom) -> HeadSource {
        match groom.procedural {
            Some(_) => HeadSource::Procedural,
            None => HeadSource::Fitted,
        }
    }
}

/// An extra solid moving through the scene at constant velocity (e.g. a rod swept through the
/// hair, 001 Fig. 8).
#[derive(Clone, Debug, PartialEq)]
pub struct Prop {
    pub shape: PropShape,
    /// cm/s.
    pub velocity: Vec3,
}

/// A prop's shape where it is at the first frame (cm).
#[derive(Clone, Debug, PartialEq)]
pub enum PropShape {
    Capsule(Capsule),
    Sphere(Sphere),
}

impl PropShape {
    /// `capsule` or `sphere`.
    pub fn name(&self) -> &'static str {
        match self {
            PropShape::Capsule(_) => "capsule",
            PropShape::Sphere(_) => "sphere",
        }
    }

    pub fn boxed(&self) -> Box<dyn Shape> {
        match self {
            PropShape::Capsule(c) => Box::new(*c),
            PropShape::Sphere(s) => Box::new(*s),
        }
    }
}

/// A scene as named: everything [`SceneSpec::build`] needs besides the groom it is built
/// around.
#[derive(Clone, Debug)]
pub struct SceneSpec {
    pub groom: GroomSource,
    /// Units and axes of the input files (groom, head mesh, file motion, body mesh) to
    /// centimetres, Y up.
    pub transform: Transform,
    pub head: HeadSource,
    /// Body preset (default, head_only), TOML file or animated body mesh; `None`: by the head
    /// ([`super::body_params`]).
    pub body: Option<String>,
    /// Cell size (cm) of a mesh head's distance grid.
    pub sdf_cell: f32,
    pub motion: MotionSource,
    pub fps: f64,
    /// The frames of the shot (props move over them).
    pub first: i64,
    pub last: i64,
    /// The last frame anything is simulated in this scene (a constant motion is defined up to
    /// a second after it; a job's training simulation may run past the shot).
    pub hold_after: i64,
    pub props: Vec<Prop>,
}
