//! Checks across a job's sections, made when the job is read rather than after stages have
//! run: one motion source with only its own options, props that make sense, and a training
//! simulation where a method or the guide selection learns from one.

use super::methods::{GuideSpec, NeuralSpec, Selection};
use super::rows::MethodRow;
use super::sections::{ColliderSpec, MotionSpec};
use crate::error::{Error, Result};
use crate::upsample::Method;

/// One motion source, its options only with their file, and a preset that exists: caught when
/// the job is read, not after stages have run.
pub fn check_motion(m: &MotionSpec, section: &str, origin: &str) -> Result<()> {
    let given: Vec<&str> = [
        ("preset", m.preset.is_some()),
        ("gltf", m.gltf.is_some()),
        ("abc", m.abc.is_some()),
        ("track", m.track.is_some()),
        ("velocity", m.is_constant()),
    ]
    .into_iter()
    .filter(|(_, on)| *on)
    .map(|(k, _)| k)
    .collect();
    if given.len() > 1 {
        return Err(Error::Invalid(format!(
            "{origin}: [{section}] sets {}: give one motion source (a preset, a glTF, Alembic or track file, or a constant velocity)",
            given
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(" and ")
        )));
    }
    let file = "it goes with `gltf` or `abc`";
    for (key, on, needs, with) in [
        (
            "node",
            m.node.is_some(),
            m.gltf.is_some() || m.abc.is_some(),
            file,
        ),
        (
            "animation",
            m.animation.is_some(),
            m.gltf.is_some(),
            "it goes with `gltf`",
        ),
        ("xform", m.xform.is_some(), m.abc.is_some(), "it goes with `abc`"),
        ("mesh", m.mesh.is_some(), m.abc.is_some(), "it goes with `abc`"),
        (
            "pivot",
            m.pivot.is_some(),
            m.angular_velocity.is_some(),
            "it goes with `angular_velocity`",
        ),
        (
            "moving",
            m.moving.is_some(),
            m.is_constant(),
            "it goes with `velocity` or `angular_velocity`",
        ),
    ] {
        if on && !needs && section == "motion" {
            return Err(Error::Invalid(format!(
                "{origin}: `{section}.{key}` has nothing to apply to ({with})"
            )));
        }
    }
    let finite = |v: &Option<[f64; 3]>| v.is_none_or(|a| a.iter().all(|x| x.is_finite()));
    if !finite(&m.velocity) || !finite(&m.angular_velocity) || !finite(&m.pivot) {
        return Err(Error::Invalid(format!(
            "{origin}: {section}: velocity, angular_velocity and pivot must be finite"
        )));
    }
    if m.moving.is_some_and(|t| !(t >= 0.0 && t.is_finite())) {
        return Err(Error::Invalid(format!(
            "{origin}: {section}.moving must be a number of seconds, not negative"
        )));
    }
    if let Some(p) = &m.preset {
        crate::motion::MotionPreset::load(p)
            .map_err(|e| Error::Invalid(format!("{origin}: {section}: {e}")))?;
    }
    Ok(())
}

pub fn check_collider(c: &ColliderSpec) -> std::result::Result<(), String> {
    if !(c.radius > 0.0 && c.radius.is_finite()) {
        return Err("radius must be positive".into());
    }
    let finite = |v: &Option<[f32; 3]>| v.is_none_or(|a| a.iter().all(|x| x.is_finite()));
    if !finite(&c.from) || !finite(&c.to) || !finite(&c.center) || !c.velocity.iter().all(|x| x.is_finite()) {
        return Err("coordinates must be finite".into());
    }
    match c.shape.as_str() {
        "capsule" if c.from.is_some() && c.to.is_some() => Ok(()),
        "capsule" => Err("a capsule needs `from` and `to`".into()),
        "sphere" if c.center.is_some() => Ok(()),
        "sphere" => Err("a sphere needs `center`".into()),
        other => Err(format!("shape {other:?}: the shapes are capsule and sphere")),
    }
}

/// Methods fitted or trained on a training simulation, and the sparse selection, need a
/// `[training]` section.
pub fn training_needed(
    rows: &[MethodRow],
    neural: &NeuralSpec,
    guides: &GuideSpec,
    origin: &str,
) -> Result<()> {
    let needs: Vec<&str> = rows
        .iter()
        .filter(|r| r.method.needs_training() && !(r.method == Method::Neural && neural.model.is_some()))
        .map(|r| r.key.as_str())
        .collect();
    if !needs.is_empty() {
        return Err(Error::Invalid(format!(
            "{origin}: guides.methods {needs:?} are fitted or trained on a training simulation: add a [training] section (motion, seed, frames)"
        )));
    }
    if guides.selection == Selection::Sparse {
        return Err(Error::Invalid(format!(
            "{origin}: guides.selection = \"sparse\" codes the training motion: add a [training] section"
        )));
    }
    Ok(())
}
