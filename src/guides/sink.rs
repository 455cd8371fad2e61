//! A frame sink that upsamples: it receives frames of simulated guide strands (with the head
//! pose; the guides in the model's order) and hands the whole groom to the sinks behind it.
//! The one upsampling path of `tress simulate --mode reduced`, `tress upsample` and the job's
//! upsample stage.

use std::path::PathBuf;

use glam::Vec3;
use tress_formats::tcache::HeadPose;

use super::IdwModel;
use super::project::project_out;
use crate::cache::FrameSink;
use crate::collide::Colliders;
use crate::error::Result;
use crate::motion::Pose;

pub struct UpsampleSink {
    pub model: IdwModel,
    pub inner: Vec<Box<dyn FrameSink>>,
    /// Colliders to push upsampled strands out of (at `frame / fps`), with the margin.
    pub colliders: Option<(Colliders, f64, f32)>,
}

impl UpsampleSink {
    pub fn new(
        model: IdwModel,
        inner: Vec<Box<dyn FrameSink>>,
        colliders: Option<(Colliders, f64, f32)>,
    ) -> UpsampleSink {
        UpsampleSink {
            model,
            inner,
            colliders,
        }
    }
}

impl FrameSink for UpsampleSink {
    fn write(&mut self, frame: f64, positions: &[[f32; 3]], pose: Option<HeadPose>) -> Result<()> {
        let pose_ = Pose::from(pose.unwrap_or(HeadPose::IDENTITY));
        let inv = pose_.inverse();
        let local: Vec<Vec3> = positions
            .iter()
            .map(|p| inv.apply_f32(Vec3::from_array(*p)))
            .collect();
        let mut world: Vec<Vec3> = self
            .model
            .apply(&local)
            .into_iter()
            .map(|p| pose_.apply_f32(p))
            .collect();
        if let Some((c, fps, margin)) = &self.colliders {
            let at = c.at(frame / fps);
            let m = &self.model;
            project_out(&mut world, &m.rest, &m.counts, &|s| m.is_guide(s), &at, *margin);
        }
        let out: Vec<[f32; 3]> = world.iter().map(|p| p.to_array()).collect();
        for s in self.inner.iter_mut() {
            s.write(frame, &out, pose)?;
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for s in self.inner {
            files.extend(s.finish()?);
        }
        Ok(files)
    }
}
