//! A job's scene: the prepared groom, the head and body colliders, the head motion.

use std::path::Path;

use tress_formats::tcache::{Codec, TcacheHeader, TcacheWriter};

use super::job::Job;
use crate::collide::head_mesh::{from_file, to_file};
use crate::collide::{Colliders, HeadShape};
use crate::error::{Error, Result};
use crate::groom::{Groom, Transform, read_groom, resample};
use crate::motion::sources::MotionSource;
use crate::motion::{HeadTrack, Pose, RandomMotion};
use crate::scene::{
    SceneGroom, body_params, colliders, file_groom, file_shapes, head_shape, place_track, procedural_groom,
    procedural_params,
};

/// Unit and axis change of the job's input files.
pub fn transform(job: &Job) -> Transform {
    Transform {
        scale: job.groom.scale,
        up: job.groom.up,
    }
}

/// The groom as the job asks for it: generated or read, resampled, with root UVs and ids.
pub fn build_groom(job: &Job) -> Result<SceneGroom> {
    let mut scene = match (&job.groom.preset, &job.groom.file) {
        (_, Some(file)) => file_groom(Path::new(file), &transform(job))?,
        (Some(preset), None) => procedural_groom(preset, job.groom.strands, Some(job.seed))?,
        (None, None) => return Err(Error::Invalid("the job names no groom".into())),
    };
    if job.groom.points >= 2 && scene.groom.uniform_count() != Some(job.groom.points) {
        let attrs = scene.groom.attrs.clone();
        scene.groom = resample(&scene.groom, job.groom.points);
        // Per-strand attributes survive resampling; per-vertex ones do not.
        scene.groom.attrs.root_uv = attrs.root_uv;
        scene.groom.attrs.id = attrs.id;
        scene.groom.attrs.guide = attrs.guide;
    }
    let n = scene.groom.strand_count();
    if scene.groom.attrs.id.is_none() {
        scene.groom.attrs.id = Some((0..n as u32).collect());
    }
    if scene.groom.attrs.root_uv.is_none() {
        scene.groom.attrs.root_uv = Some(
            crate::groom::root_uvs(&scene.groom)
                .iter()
                .map(|u| u.to_array())
                .collect(),
        );
    }
    if !job.groom.edits.is_empty() {
        let edits = job
            .groom
            .edits
            .iter()
            .map(|e| crate::groom::edit::Edit::parse(e))
            .collect::<Result<Vec<_>>>()?;
        scene.groom = crate::groom::edit::apply(&scene.groom, &edits)?;
    }
    Ok(scene)
}

/// Saves a groom (rest pose and attributes) as a one-frame lossless `.tcache`.
pub fn save_groom(path: &Path, groom: &Groom) -> Result<()> {
    let strands = groom.to_strands();
    let header = TcacheHeader {
        fps: 24.0,
        codec: Codec::Lossless,
        keyframe_interval: 1,
        rest: strands.clone(),
    };
    let mut w = TcacheWriter::create(path, header, 3).map_err(|e| crate::error::output_error(path, e))?;
    w.write_frame(0.0, &strands.points, None)?;
    w.finish()?;
    Ok(())
}

/// The groom the prepare stage wrote in the output folder `out`.
pub fn prepared(out: &Path) -> Result<Groom> {
    Ok(read_groom(&out.join("groom.tcache"), &Default::default())?.groom)
}

/// The head shape of the job; mesh heads come from the prepared distance grid `head.sdf`.
pub fn head(job: &Job, out: &Path, groom: &SceneGroom) -> Result<(HeadShape, String)> {
    let spec = job.head.collider.as_str();
    if matches!(spec, "procedural" | "sphere") {
        return head_shape(spec, groom, &transform(job), job.head.sdf_cell);
    }
    let sdf = out.join("head.sdf");
    if sdf.exists() {
        let g = from_file(tress_formats::sdf::read(&sdf)?);
        return Ok((HeadShape::Grid(g), format!("{spec} (distance grid head.sdf)")));
    }
    head_shape(spec, groom, &transform(job), job.head.sdf_cell)
}

/// Writes the head's distance grid for mesh heads (nothing for analytic heads); returns the
/// file name written, if any.
pub fn save_head(job: &Job, out: &Path, groom: &SceneGroom) -> Result<Option<String>> {
    if matches!(job.head.collider.as_str(), "procedural" | "sphere") {
        return Ok(None);
    }
    let (shape, _) = head_shape(&job.head.collider, groom, &transform(job), job.head.sdf_cell)?;
    let HeadShape::Grid(g) = shape else {
        return Ok(None);
    };
    let path = out.join("head.sdf");
    tress_formats::sdf::write(&path, &to_file(&g, 4, [0; 16]))
        .map_err(|e| crate::error::output_error(&path, e))?;
    Ok(Some("head.sdf".into()))
}

/// The head track on the job's timeline.
pub fn track(job: &Job) -> Result<(HeadTrack, String)> {
    track_of(job, &job.motion, job.first)
}

/// The head track of motion `m` starting at frame `first` (the job's units and frame rate).
pub fn track_of(job: &Job, m: &super::job::MotionSpec, first: i64) -> Result<(HeadTrack, String)> {
    let start = first as f64 / job.fps;
    let given = [
        m.preset.is_some(),
        m.gltf.is_some(),
        m.abc.is_some(),
        m.track.is_some(),
    ]
    .iter()
    .filter(|b| **b)
    .count()
        + m.is_constant() as usize;
    if given > 1 {
        return Err(Error::Invalid(
            "[motion] names more than one source (preset, gltf, abc, track, velocity)".into(),
        ));
    }
    if m.is_constant() {
        // To the last frame the job simulates (its shot or its training), then a second more.
        let last = job
            .training
            .as_ref()
            .map_or(job.last, |(_, _, _, b)| job.last.max(*b));
        let whole = (last - first) as f64 / job.fps + 1.0;
        let c = crate::motion::experiments::ConstantMotion {
            velocity: glam::DVec3::from_array(m.velocity.unwrap_or_default()),
            angular_velocity: glam::DVec3::from_array(m.angular_velocity.unwrap_or_default()),
            pivot: glam::DVec3::from_array(m.pivot.unwrap_or_default()),
            // Still after the shot either way: a longer `moving` needs no more keys.
            duration: m.moving.unwrap_or(whole).min(whole).max(0.0),
        };
        let what = format!(
            "constant motion: {:.2} cm/s, {:.1}°/s for {:.2} s",
            c.velocity.length(),
            c.angular_velocity.length(),
            c.duration
        );
        return Ok((c.track(start)?, what));
    }
    if let Some(p) = &m.preset {
        let mut rm = RandomMotion::preset(p)?;
        if let Some(seed) = m.seed {
            rm.seed = seed;
        }
        let t = rm.track()?;
        return Ok((
            place_track(t, false, &transform(job), start),
            format!("motion preset {p} (seed {})", rm.seed),
        ));
    }
    if given == 0 {
        return Ok((HeadTrack::still(Pose::IDENTITY), "still head".into()));
    }
    let source = MotionSource {
        preset: None,
        gltf: m.gltf.clone().map(Into::into),
        node: m.node.clone(),
        animation: m.animation.clone(),
        abc: m.abc.clone().map(Into::into),
        xform: m.xform.clone(),
        mesh: m.mesh.clone(),
        track: m.track.clone().map(Into::into),
    };
    let (t, report) = source.load(job.fps)?;
    Ok((place_track(t, true, &transform(job), start), report.source))
}

/// The job's colliders (head, body) moved by its track, and its props (`[[colliders]]`).
pub fn job_colliders(job: &Job, out: &Path, groom: &SceneGroom) -> Result<Colliders> {
    Ok(job_colliders_on_body(job, out, groom)?.0)
}

/// [`job_colliders`] with the body they stand on: the head's centre the torso's parts are
/// placed from and the body's parameters.
pub fn job_colliders_on_body(
    job: &Job,
    out: &Path,
    groom: &SceneGroom,
) -> Result<(Colliders, glam::Vec3, crate::collide::BodyParams)> {
    let (shape, _) = head(job, out, groom)?;
    let body = body_params(job.head.body.as_deref(), &shape)?;
    let center = crate::collide::body::head_center(&shape);
    let mut c = colliders(shape, &body, track(job)?.0);
    crate::scene::add_body_mesh(
        &mut c,
        job.head.body.as_deref(),
        &transform(job),
        job.fps,
        job.head.sdf_cell,
        Some(&out.join("body")),
    )?;
    add_props(job, &mut c)?;
    Ok((c, center, body))
}

/// The colliders of the training simulation: head and body on the training motion, no props
/// (001 §6.2: "throughout the training, no solid object is involved").
pub fn training_colliders(job: &Job, out: &Path, groom: &SceneGroom) -> Result<Colliders> {
    let (_, motion, first, _) = job
        .training
        .as_ref()
        .ok_or_else(|| Error::Invalid("the job has no [training] section".into()))?;
    let (shape, _) = head(job, out, groom)?;
    let body = body_params(job.head.body.as_deref(), &shape)?;
    Ok(colliders(shape, &body, track_of(job, motion, *first)?.0))
}

/// The job's props: each shape where the job puts it at the first frame, moving at its
/// constant velocity.
fn add_props(job: &Job, c: &mut Colliders) -> Result<()> {
    use crate::collide::{Capsule, Sphere};
    let t0 = job.first as f64 / job.fps;
    let t1 = job.last as f64 / job.fps;
    for (i, spec) in job.colliders.iter().enumerate() {
        let v = glam::DVec3::from_array(spec.velocity.map(f64::from));
        // Constant velocity: keys far before and after the shot, linear in between.
        let key = |t: f64| (t, Pose::new(glam::DQuat::IDENTITY, v * (t - t0)));
        let track = HeadTrack::new(vec![key(t0 - 60.0), key(t0), key(t1 + 60.0)])?;
        let shape: Box<dyn crate::collide::Shape> = match spec.shape.as_str() {
            "capsule" => Box::new(Capsule {
                a: glam::Vec3::from_array(spec.from.unwrap_or_default()),
                b: glam::Vec3::from_array(spec.to.unwrap_or_default()),
                radius: spec.radius,
            }),
            _ => Box::new(Sphere {
                center: glam::Vec3::from_array(spec.center.unwrap_or_default()),
                radius: spec.radius,
            }),
        };
        c.add_prop(&format!("{} {i}", spec.shape), shape, track);
    }
    Ok(())
}

/// A prepared groom as a [`SceneGroom`] (the procedural parameters are rebuilt from the job,
/// for the procedural cranium; nothing is regenerated).
pub fn scene_of(job: &Job, groom: Groom) -> Result<SceneGroom> {
    let procedural = match (&job.groom.preset, &job.groom.file) {
        (Some(p), None) => Some(procedural_params(p, job.groom.strands, Some(job.seed))?),
        _ => None,
    };
    let file_shapes = match &job.groom.file {
        Some(f) => file_shapes(Path::new(f), &transform(job))?,
        None => None,
    };
    Ok(SceneGroom {
        groom,
        procedural,
        file_shapes,
        source: String::new(),
    })
}
