//! A frame sink that upsamples: it receives frames of simulated guide strands (with the head
//! pose) and hands the whole groom to the sinks behind it — the reduced simulation path of
//! `tress simulate --mode reduced`.

use std::path::PathBuf;

use glam::{DQuat, DVec3, Vec3};
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
    skip: Vec<bool>,
    rest_lengths: Vec<f32>,
}

impl UpsampleSink {
    pub fn new(
        model: IdwModel,
        inner: Vec<Box<dyn FrameSink>>,
        colliders: Option<(Colliders, f64, f32)>,
    ) -> UpsampleSink {
        let mut skip = vec![false; model.counts.len()];
        model.guides.iter().for_each(|&g| skip[g] = true);
        let rest_lengths = (0..model.counts.len())
            .flat_map(|s| {
                let p = &model.rest[model.offsets[s]..model.offsets[s + 1]];
                (0..p.len()).map(move |i| if i == 0 { 0.0 } else { p[i].distance(p[i - 1]) })
            })
            .collect();
        UpsampleSink {
            model,
            inner,
            colliders,
            skip,
            rest_lengths,
        }
    }
}

impl FrameSink for UpsampleSink {
    fn write(&mut self, frame: f64, positions: &[[f32; 3]], pose: Option<HeadPose>) -> Result<()> {
        let h = pose.unwrap_or(HeadPose::IDENTITY);
        let pose_ = Pose::new(DQuat::from_array(h.rotation), DVec3::from_array(h.translation));
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
            project_out(
                &mut world,
                &self.model.counts,
                &self.rest_lengths,
                &self.skip,
                &at,
                *margin,
            );
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
