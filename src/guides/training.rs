//! Training data for fitted upsamplers: a full simulation of the groom, read frame by frame and
//! brought into the head's frame (001 §6.2: the states s̄(f) in the head's local frame of
//! reference). Frames are streamed; nothing holds the whole sequence.

use std::path::{Path, PathBuf};

use glam::Vec3;

use crate::cache::{FrameSource, open_source};
use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::motion::Pose;
use crate::motion::fit::root_pose;

/// A cache of the whole groom, read in the head's frame.
pub struct HeadFrames {
    source: Box<dyn FrameSource>,
    path: PathBuf,
    counts: Vec<u32>,
    rest_roots: Vec<Vec3>,
    pub fps: f64,
}

impl HeadFrames {
    /// Opens `path`, which must hold the strands of `rest` (same strands, same points). Frames
    /// without a stored head pose are brought into the head's frame by the rigid fit of their
    /// roots to the rest roots.
    pub fn open(path: &Path, rest: &Groom) -> Result<HeadFrames> {
        let source = open_source(path, None, 24.0)?;
        let info = source.info();
        if info.topology.counts != rest.counts() {
            return Err(Error::Invalid(format!(
                "{}: its strands ({} strands, {} points) are not the groom's ({} strands, {} points)",
                path.display(),
                info.topology.counts.len(),
                info.topology.points.len(),
                rest.strand_count(),
                rest.points().len()
            )));
        }
        if info.frames.is_empty() {
            return Err(Error::Invalid(format!(
                "{}: the cache has no frames",
                path.display()
            )));
        }
        Ok(HeadFrames {
            fps: info.fps,
            counts: rest.counts().to_vec(),
            rest_roots: rest.roots(),
            source,
            path: path.to_path_buf(),
        })
    }

    pub fn len(&self) -> usize {
        self.source.info().frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Frame `i` in the head's frame, with the head's pose.
    pub fn frame(&mut self, i: usize) -> Result<(Vec<Vec3>, Pose)> {
        let world: Vec<Vec3> = self.source.read(i)?.into_iter().map(Vec3::from_array).collect();
        let pose = match self.source.pose(i)? {
            Some(h) => Pose::from(h),
            None => root_pose(
                &self.rest_roots,
                &crate::groom::strand_roots(&world, &self.counts),
            ),
        };
        let inv = pose.inverse();
        Ok((world.iter().map(|p| inv.apply_f32(*p)).collect(), pose))
    }
}
