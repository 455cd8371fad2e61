//! A groom on its body for the quasi-static drape (`tress drape`, `tress train drape`, the drape
//! benchmark): the groom of a training or drape entry on its scalp texture, its head and body
//! colliders with the torso still, and the pivot its head turns about.

use std::path::Path;

use super::config::GroomEntry;
use super::pose::neck_pivot;
use super::{DrapeGroom, DrapeMaterial, DrapeSubject};
use crate::collide::body;
use crate::error::{Error, Result};
use crate::groom::Transform;
use crate::motion::HeadTrack;
use crate::scene::{
    HeadSource, SceneGroom, body_params, file_groom, head_shape, is_procedural, procedural_params,
    procedural_scene,
};

/// A groom on its body, ready for the quasi-static drape (`tress drape`, `tress train drape`).
pub struct DrapeScene {
    pub subject: DrapeSubject,
    pub scene: SceneGroom,
    /// What the head collider is, for reports.
    pub head: String,
}

/// The groom of `entry` (a procedural preset with its overrides, or a file) on a `texture`²
/// map of strands of `points` vertices, its head and body colliders (the torso still) and the
/// pivot of its head's rotations.
pub fn drape_scene(
    entry: &GroomEntry,
    transform: &Transform,
    sdf_cell: f32,
    texture: usize,
    points: usize,
    material: &DrapeMaterial,
) -> Result<DrapeScene> {
    let scene = if is_procedural(&entry.groom) {
        let mut params = procedural_params(&entry.groom, entry.strands, entry.seed)?;
        if let Some(l) = entry.length {
            params.length = l;
        }
        if let Some(r) = entry.curl_radius {
            params.curl_radius = r;
        }
        procedural_scene(&entry.groom, params)?
    } else {
        if entry.strands.is_some()
            || entry.seed.is_some()
            || entry.length.is_some()
            || entry.curl_radius.is_some()
        {
            return Err(Error::Invalid(format!(
                "{}: strands, seed, length and curl_radius apply to procedural groom presets, not groom files",
                entry.groom
            )));
        }
        file_groom(Path::new(&entry.groom), &Default::default(), transform)?
    };
    let groom = DrapeGroom::new(&scene.groom, texture, points)?;
    if entry.head.as_deref() == Some("none") {
        return Err(Error::Invalid(format!(
            "{}: head none: a drape needs a head to hang from",
            entry.name
        )));
    }
    let spec = match entry.head.as_deref() {
        Some(h) => HeadSource::parse(h),
        None => HeadSource::default_for(&scene),
    };
    let (head, what) = head_shape(&spec, &scene, transform, sdf_cell)?;
    let body = body_params(entry.body.as_deref(), &head)?;
    let pivot = neck_pivot(&head, &body);
    let center = crate::collide::body::head_center(&head);
    let colliders = body::colliders(head, &body, HeadTrack::still(crate::motion::Pose::IDENTITY));
    Ok(DrapeScene {
        subject: DrapeSubject::new(&entry.name, groom, colliders, pivot, material).on_body(center, body),
        scene,
        head: what,
    })
}
