//! The parts of stage keys that several stages share: the scene (head, motion, frames, units,
//! props), the scored rows with everything an upsampler reads, the networks' device, and the
//! content hashes of files outside the output folder (groom, head mesh, motion and body files).

use std::path::Path;

use serde::Serialize;

use crate::error::Result;
use crate::groom::UpAxis;
use crate::neural::device::DeviceKind;
use crate::pipeline::engine::{Ctx, OutputFile};
use crate::pipeline::job::{ColliderSpec, HeadSpec, Job, MethodRow, MotionSpec};

/// Content hashes of files outside the output folder that a stage reads, as upstream entries
/// (names that are not files, such as presets, are left out: the settings key has them).
pub fn external(cx: &Ctx, paths: &[Option<&str>]) -> Result<Vec<OutputFile>> {
    let mut out = Vec::new();
    for p in paths.iter().flatten() {
        let path = Path::new(p);
        if path.is_file() {
            out.push(OutputFile {
                path: p.to_string(),
                bytes: 0,
                sha256: cx.external_sha256(path)?,
            });
        }
    }
    Ok(out)
}

/// The files a scene reads besides the groom and head: motion `m`'s and an animated body
/// mesh's (their content, not only their names, keys the stages).
pub fn motion_files(cx: &Ctx, m: &MotionSpec) -> Result<Vec<OutputFile>> {
    let job = cx.job;
    let mut files = external(
        cx,
        &[
            m.gltf.as_deref(),
            m.abc.as_deref(),
            m.track.as_deref(),
            m.preset.as_deref(),
        ],
    )?;
    if let Some(b) = job.head.body.as_deref()
        && crate::collide::deforming::is_body_mesh(b)
    {
        let body: Vec<String> = crate::collide::deforming::body_files(b)?
            .into_iter()
            .map(|(_, p)| p.display().to_string())
            .collect();
        files.extend(external(
            cx,
            &body.iter().map(|p| Some(p.as_str())).collect::<Vec<_>>(),
        )?);
    }
    Ok(files)
}

/// The scene a stage simulates or measures in: head, motion, frames, units and props.
#[derive(Serialize)]
pub struct SceneKey<'a> {
    head: &'a HeadSpec,
    motion: &'a MotionSpec,
    frames: [i64; 2],
    fps: f64,
    scale: f32,
    up: UpAxis,
    colliders: &'a [ColliderSpec],
}

impl<'a> SceneKey<'a> {
    pub fn of(j: &'a Job) -> SceneKey<'a> {
        SceneKey {
            head: &j.head,
            motion: &j.motion,
            frames: [j.first, j.last],
            fps: j.fps,
            scale: j.groom.scale,
            up: j.groom.up,
            colliders: &j.colliders,
        }
    }
}

/// The scored rows and everything building their upsamplers reads from the job (the models
/// and guide caches are files, keyed apart): IDW's neighbours, the adaptive options, the
/// collision projection's margin, the networks' device.
#[derive(Serialize)]
pub struct RowsKey<'a> {
    rows: &'a [MethodRow],
    neighbors: usize,
    adaptive: &'a crate::guides::AdaptiveOptions,
    collision_margin: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    device: Option<DeviceKind>,
}

impl<'a> RowsKey<'a> {
    pub fn of(j: &'a Job) -> RowsKey<'a> {
        RowsKey {
            rows: &j.rows,
            neighbors: j.guides.neighbors,
            adaptive: &j.guides.adaptive,
            collision_margin: j.simulate.collision_margin,
            device: device(j),
        }
    }
}

/// The networks' device when it is not the CPU (results on a GPU differ in the last bits).
pub fn device(j: &Job) -> Option<DeviceKind> {
    (j.neural.device != DeviceKind::Cpu).then_some(j.neural.device)
}
