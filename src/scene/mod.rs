//! Assembling a simulation from what a user names: a groom (file or procedural preset), a head
//! (procedural cranium, an ellipsoid fitted to the roots, a mesh or `.sdf`, or a TressFX
//! project's spheres), a body, and head motion. Shared by `tress simulate` and job files:
//! [`spec`] is what is named, [`build`] the scene made from it, this file the building blocks.
//!
//! Conventions: everything is brought to centimetres, Y up, by the groom's `--scale` / `--up`
//! (applied to the groom, head mesh, TressFX shapes and file-driven motion alike). The groom
//! and head are given where the head is at the first simulated frame; the motion moves them
//! relative to that pose.

pub mod build;
pub mod mss;
pub mod spec;

pub use build::{Scene, SceneFiles, prepare_groom};
pub use spec::{GroomSource, HeadSource, Prop, PropShape, SceneSpec, is_procedural};

use std::path::Path;

use glam::Vec3;

use crate::collide::head_fit::fit_head;
use crate::collide::head_mesh::head_grid;
use crate::collide::mesh_sdf::SdfParams;
use crate::collide::{BodyParams, Capsule, Colliders, HeadShape, Sphere};
use crate::error::{Error, Result};
use crate::groom::{Groom, GroomParams, ReadOptions, Transform, generate, read_groom};
use crate::motion::HeadTrack;

/// A groom ready to simulate, with what came with it.
#[derive(Clone)]
pub struct SceneGroom {
    pub groom: Groom,
    /// The parameters of a procedural groom (its cranium is the natural head).
    pub procedural: Option<GroomParams>,
    /// Collision shapes that came with the groom file (a TressFX project's spheres and
    /// capsules, an `.mss` scene's sphere head), in tress space.
    pub file_shapes: Option<(Vec<Sphere>, Vec<Capsule>)>,
    /// Where it came from, for reports.
    pub source: String,
}

/// The parameters of procedural preset `preset` (a built-in name or a TOML file), with the
/// strand count and seed overridden when given.
pub fn procedural_params(preset: &str, strands: Option<usize>, seed: Option<u64>) -> Result<GroomParams> {
    let mut params = crate::groom::presets::load(preset)?;
    if let Some(n) = strands {
        params.strands = n;
    }
    if let Some(s) = seed {
        params.seed = s;
    }
    Ok(params)
}

/// A procedural groom from a preset.
pub fn procedural_groom(preset: &str, strands: Option<usize>, seed: Option<u64>) -> Result<SceneGroom> {
    procedural_scene(preset, procedural_params(preset, strands, seed)?)
}

/// The procedural groom of `params` (from the preset named `preset`).
pub fn procedural_scene(preset: &str, params: GroomParams) -> Result<SceneGroom> {
    let groom = generate(&params)?;
    let source = format!(
        "procedural {preset} groom, {} strands, seed {}",
        params.strands, params.seed
    );
    Ok(SceneGroom {
        groom,
        procedural: Some(params),
        file_shapes: None,
        source,
    })
}

/// The collision shapes that come with a groom file, in tress space: a TressFX project's
/// spheres and capsules, an `.mss` scene's sphere head; `None` for other files.
pub fn file_shapes(path: &Path, transform: &Transform) -> Result<Option<(Vec<Sphere>, Vec<Capsule>)>> {
    let ext = tress_formats::extension(path).unwrap_or_default();
    if ext == "mss" {
        let scene = tress_formats::mss::read(path)?;
        return Ok(Some((vec![mss::head_sphere(&scene, transform)], Vec::new())));
    }
    if ext != "tfxproj" {
        return Ok(None);
    }
    let project = tress_formats::tfxproj::read(path)?;
    let p = |v: [f32; 3]| transform.apply_point(Vec3::from_array(v));
    let spheres = project
        .spheres
        .iter()
        .map(|(c, r)| Sphere {
            center: p(*c),
            radius: r * transform.scale,
        })
        .collect();
    let capsules = project
        .capsules
        .iter()
        .map(|(a, b, r)| Capsule {
            a: p(*a),
            b: p(*b),
            radius: r * transform.scale,
        })
        .collect();
    Ok(Some((spheres, capsules)))
}

/// A groom file in tress units and axes, read with `read`.
pub fn file_groom(path: &Path, read: &ReadOptions, transform: &Transform) -> Result<SceneGroom> {
    let mut groom = read_groom(path, read)?.groom;
    transform.apply(&mut groom);
    if let Some(w) = groom.unit_warning() {
        tracing::warn!("{}: {w}", path.display());
    }
    Ok(SceneGroom {
        groom,
        procedural: None,
        file_shapes: file_shapes(path, transform)?,
        source: path.display().to_string(),
    })
}

/// Reads `spec` — a groom file, or a built-in procedural preset name (straight, wavy, curly) —
/// in tress units and axes. `strands` overrides a preset's strand count.
pub fn load_groom(spec: &str, transform: &Transform, strands: Option<usize>) -> Result<SceneGroom> {
    match GroomSource::parse(spec, strands)? {
        GroomSource::Preset { name, strands, seed } => procedural_groom(&name, strands, seed),
        GroomSource::File(path, read) => file_groom(&path, &read, transform),
    }
}

/// The head `spec`: a procedural groom's cranium, an ellipsoid fitted to the roots (the spheres
/// that came with the groom file when it has some: a TressFX project's, an `.mss` scene's
/// head), or a mesh file (.obj, .glb/.gltf, .abc) or `.sdf` grid. Returns the shape and a
/// description.
pub fn head_shape(
    spec: &HeadSource,
    groom: &SceneGroom,
    transform: &Transform,
    cell: f32,
) -> Result<(HeadShape, String)> {
    match spec {
        HeadSource::Procedural => match &groom.procedural {
            Some(p) => Ok((HeadShape::Procedural(p.scalp), "procedural cranium".into())),
            None => Err(Error::Invalid(
                "--head procedural needs a procedural groom; give a head mesh, or --head sphere to fit one to the roots".into(),
            )),
        },
        HeadSource::Fitted => {
            if let Some((spheres, capsules)) = &groom.file_shapes
                && !spheres.is_empty()
            {
                let what = if groom.source.to_ascii_lowercase().ends_with(".mss") {
                    let s = &spheres[0];
                    format!(
                        "sphere head of the scene: centre ({:.2}, {:.2}, {:.2}), radius {:.2} cm",
                        s.center.x, s.center.y, s.center.z, s.radius
                    )
                } else {
                    format!("{} spheres and {} capsules of the TressFX project", spheres.len(), capsules.len())
                };
                return Ok((HeadShape::Spheres { spheres: spheres.clone(), capsules: capsules.clone() }, what));
            }
            let s = fit_head(&groom.groom.roots())?;
            let what = format!(
                "ellipsoid fitted to the roots: centre ({:.2}, {:.2}, {:.2}), radii ({:.2}, {:.2}, {:.2}) cm",
                s.center.x, s.center.y, s.center.z, s.radii.x, s.radii.y, s.radii.z
            );
            Ok((HeadShape::Procedural(s), what))
        }
        HeadSource::Mesh(file) => {
            let params = SdfParams { cell, ..Default::default() };
            let grid = head_grid(file, transform, &params)?;
            let what = format!("{} ({} × {} × {} grid, {} cm cells)", file.display(), grid.dims.x, grid.dims.y, grid.dims.z, grid.cell);
            Ok((HeadShape::Grid(grid), what))
        }
    }
}

/// The head a preview draws or an evaluation measures against: `none`, `sphere` (an ellipsoid
/// fitted to `roots`), or a mesh / `.sdf` file brought into tress space by `transform` (the
/// same shapes as [`head_shape`] gives a simulation, without a groom at hand).
pub fn head_from_spec(spec: &str, roots: &[Vec3], transform: &Transform) -> Result<Option<HeadShape>> {
    if spec == "none" {
        return Ok(None);
    }
    Ok(match HeadSource::parse(spec) {
        HeadSource::Fitted => Some(HeadShape::Procedural(fit_head(roots)?)),
        HeadSource::Procedural => {
            return Err(Error::Invalid(
                "the procedural cranium comes with a procedural groom: give a head mesh, sphere or none"
                    .into(),
            ));
        }
        HeadSource::Mesh(file) => Some(HeadShape::Grid(head_grid(
            &file,
            transform,
            &SdfParams::default(),
        )?)),
    })
}

/// The body to put under a head: the named preset, or by default the full body for the
/// procedural cranium and the head alone otherwise (tress does not know where an arbitrary
/// head's shoulders are).
pub fn body_params(name: Option<&str>, head: &HeadShape) -> Result<BodyParams> {
    // An animated body mesh is the body: no neck or shoulder capsules beside it.
    if name.is_some_and(crate::collide::deforming::is_body_mesh) {
        return BodyParams::preset("head_only");
    }
    let default = match head {
        HeadShape::Procedural(_) => "default",
        _ => "head_only",
    };
    BodyParams::preset(name.unwrap_or(default))
}

/// Places a motion on the timeline: preset motions (which start at rest at t = 0) start at the
/// first frame; file tracks keep their own times, seen relative to their pose at the first
/// frame. Both are brought to tress units and axes.
pub fn place_track(track: HeadTrack, from_file: bool, transform: &Transform, start: f64) -> HeadTrack {
    if from_file {
        let origin = track.at(start);
        track.relative_to(&origin).transformed(transform)
    } else {
        track.shifted(start)
    }
}

/// Adds the animated body mesh a body setting names, if it names one
/// ([`crate::collide::deforming::is_body_mesh`]), as a solid of its own in world space: one
/// distance grid per mesh frame, of `cell` cm or 0.5 cm if coarser, blended in time. Returns
/// a description with the frames and the grid cost per frame. With `cache` (a folder), the
/// frames' grids are kept there and reused while their meshes are the same.
pub fn add_body_mesh(
    c: &mut Colliders,
    spec: Option<&str>,
    transform: &Transform,
    fps: f64,
    cell: f32,
    cache: Option<&Path>,
) -> Result<Option<String>> {
    use crate::collide::deforming::{DeformingSdf, is_body_mesh, read_body_frames};
    let Some(spec) = spec.filter(|s| is_body_mesh(s)) else {
        return Ok(None);
    };
    let frames = read_body_frames(spec, transform, fps)?;
    let params = SdfParams {
        cell: cell.max(0.5),
        ..Default::default()
    };
    let body = DeformingSdf::new(&frames, &params, cache)?;
    let what = format!(
        "{spec}: {} frames from {:.3} s to {:.3} s, {} cm grids, {:.2} s per frame to build or read",
        body.times.len(),
        body.times[0],
        body.times[body.times.len() - 1],
        params.cell,
        body.build_seconds_per_frame
    );
    c.add_prop(
        "body mesh",
        Box::new(body),
        HeadTrack::still(crate::motion::Pose::IDENTITY),
    );
    Ok(Some(what))
}
