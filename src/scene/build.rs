//! Building a scene from its [`SceneSpec`]: the groom (generated or read, and for jobs
//! prepared: resampled, with ids, root UVs and edits), the head shape, the body, the head
//! track on the shot's timeline, and the colliders moved by it (head and body, an animated body
//! mesh, props). A job builds its scene once and shares it between its stages and rows.

use std::path::Path;

use glam::{DQuat, Vec3};

use super::spec::{GroomSource, HeadSource, SceneSpec};
use super::{
    SceneGroom, add_body_mesh, body_params, file_groom, file_shapes, head_shape, place_track,
    procedural_groom, procedural_params,
};
use crate::collide::head_mesh::from_file;
use crate::collide::{BodyParams, Colliders, HeadShape, body};
use crate::error::Result;
use crate::groom::{Groom, resample};
use crate::motion::experiments::ConstantMotion;
use crate::motion::sources::MotionSource;
use crate::motion::{HeadTrack, Pose};

/// A scene ready to simulate in.
pub struct Scene {
    pub groom: SceneGroom,
    pub head: HeadShape,
    /// What the head is, for reports.
    pub head_what: String,
    pub body: BodyParams,
    /// The head's track on the shot's timeline.
    pub track: HeadTrack,
    /// Where the motion came from, for reports.
    pub motion_what: String,
    /// The head and body moved by the track, the animated body mesh, the props.
    pub colliders: Colliders,
    /// What the animated body mesh is, if there is one.
    pub body_mesh: Option<String>,
}

impl Scene {
    /// The point of the head's rest frame the torso is placed from.
    pub fn center(&self) -> Vec3 {
        body::head_center(&self.head)
    }

    /// The head and body moved by another track, without body mesh or props (a training
    /// simulation: 001 §6.2, "throughout the training, no solid object is involved").
    pub fn colliders_on(&self, track: HeadTrack) -> Colliders {
        body::colliders(self.head.clone(), &self.body, track)
    }
}

/// Files a job made for its scene.
#[derive(Clone, Copy, Debug, Default)]
pub struct SceneFiles<'a> {
    /// A mesh head's distance grid made once (the job's `head.sdf`): read when it exists.
    pub head_grid: Option<&'a Path>,
    /// Where an animated body mesh's distance grids are kept between runs.
    pub body_cache: Option<&'a Path>,
}

impl SceneSpec {
    /// The groom as named: generated or read, in tress units and axes, nothing else done.
    pub fn load_groom(&self) -> Result<SceneGroom> {
        match &self.groom {
            GroomSource::Preset { name, strands, seed } => procedural_groom(name, *strands, *seed),
            GroomSource::File(path, read) => file_groom(path, read, &self.transform),
        }
    }

    /// A groom prepared earlier (read back) with what came with its source: a procedural
    /// preset's parameters (for its cranium), the groom file's collision shapes. Nothing is
    /// regenerated.
    pub fn around(&self, groom: Groom) -> Result<SceneGroom> {
        let (procedural, file_shapes) = match &self.groom {
            GroomSource::Preset { name, strands, seed } => {
                (Some(procedural_params(name, *strands, *seed)?), None)
            }
            GroomSource::File(path, _) => (None, file_shapes(path, &self.transform)?),
        };
        Ok(SceneGroom {
            groom,
            procedural,
            file_shapes,
            source: String::new(),
        })
    }

    /// The head's shape and what it is; a mesh head's prepared distance grid `grid` is read
    /// when it exists.
    pub fn head_shape(&self, groom: &SceneGroom, grid: Option<&Path>) -> Result<(HeadShape, String)> {
        if let (HeadSource::Mesh(mesh), Some(grid)) = (&self.head, grid)
            && grid.exists()
        {
            let g = from_file(tress_formats::sdf::read(grid)?);
            let name = grid.file_name().unwrap_or_default().to_string_lossy();
            return Ok((
                HeadShape::Grid(g),
                format!("{} (distance grid {name})", mesh.display()),
            ));
        }
        head_shape(&self.head, groom, &self.transform, self.sdf_cell)
    }

    /// The head track of motion `m` on the scene's timeline from frame `first`, and where it
    /// came from: presets start at rest at `first`; file tracks keep their own times, seen
    /// relative to their pose at `first`; a constant motion lasts `moving` seconds at most
    /// and is still after it.
    pub fn track(&self, m: &MotionSource, first: i64) -> Result<(HeadTrack, String)> {
        let start = first as f64 / self.fps;
        match m {
            MotionSource::Still => Ok((HeadTrack::still(Pose::IDENTITY), "still head".into())),
            MotionSource::Constant(c) => {
                // To the last frame the scene simulates, then a second more.
                let whole = (self.hold_after - first) as f64 / self.fps + 1.0;
                let c = ConstantMotion {
                    velocity: c.velocity,
                    angular_velocity: c.angular_velocity,
                    pivot: c.pivot,
                    // Still after the shot either way: a longer `moving` needs no more keys.
                    duration: c.moving.unwrap_or(whole).min(whole).max(0.0),
                };
                let what = format!(
                    "constant motion: {:.2} cm/s, {:.1}°/s for {:.2} s",
                    c.velocity.length(),
                    c.angular_velocity.length(),
                    c.duration
                );
                Ok((c.track(start)?, what))
            }
            _ => {
                let (t, report) = m.load(self.fps)?;
                Ok((
                    place_track(t, m.from_file(), &self.transform, start),
                    report.source,
                ))
            }
        }
    }

    /// The scene around `groom`: head, body, the motion's track from the first frame, and the
    /// colliders moved by it (head and body, the animated body mesh, the props).
    pub fn build(&self, groom: SceneGroom, files: &SceneFiles) -> Result<Scene> {
        let (head, head_what) = self.head_shape(&groom, files.head_grid)?;
        let body = body_params(self.body.as_deref(), &head)?;
        let (track, motion_what) = self.track(&self.motion, self.first)?;
        let mut colliders = body::colliders(head.clone(), &body, track.clone());
        let body_mesh = add_body_mesh(
            &mut colliders,
            self.body.as_deref(),
            &self.transform,
            self.fps,
            self.sdf_cell,
            files.body_cache,
        )?;
        self.add_props(&mut colliders)?;
        Ok(Scene {
            groom,
            head,
            head_what,
            body,
            track,
            motion_what,
            colliders,
            body_mesh,
        })
    }

    /// The props: each shape where the spec puts it at the first frame, moving at its
    /// constant velocity.
    fn add_props(&self, c: &mut Colliders) -> Result<()> {
        let t0 = self.first as f64 / self.fps;
        let t1 = self.last as f64 / self.fps;
        for (i, prop) in self.props.iter().enumerate() {
            let v = prop.velocity.as_dvec3();
            // Constant velocity: keys far before and after the shot, linear in between.
            let key = |t: f64| (t, Pose::new(DQuat::IDENTITY, v * (t - t0)));
            let track = HeadTrack::new(vec![key(t0 - 60.0), key(t0), key(t1 + 60.0)])?;
            c.add_prop(&format!("{} {i}", prop.shape.name()), prop.shape.boxed(), track);
        }
        Ok(())
    }
}

/// Prepares a groom for a job: resampled to `points` per strand (when at least 2 and not
/// already), strand ids and root UVs where the source has none, then `edits` in order.
pub fn prepare_groom(
    mut scene: SceneGroom,
    points: usize,
    edits: &[crate::groom::edit::Edit],
) -> Result<SceneGroom> {
    if points >= 2 && scene.groom.uniform_count() != Some(points) {
        let attrs = scene.groom.attrs.clone();
        scene.groom = resample(&scene.groom, points);
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
    if !edits.is_empty() {
        scene.groom = crate::groom::edit::apply(&scene.groom, edits)?;
    }
    Ok(scene)
}
