//! The one upsampling frame loop: each frame of simulated guides (world space, with the head's
//! pose) is taken into the head's frame, handed to an [`Interpolator`], brought back to world
//! space, optionally pushed out of the props alone and cleaned up by the position-based
//! collision correction (both [`crate::guides::project`]), and passed to the sinks behind it.
//! `tress upsample`, the job's upsample stage, its evaluation of oracle rows and
//! `tress simulate --mode reduced` all run through it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use glam::Vec3;
use serde::Serialize;
use tress_formats::tcache::HeadPose;

use crate::cache::FrameSink;
use crate::collide::Colliders;
use crate::error::Result;
use crate::guides::project::{project_out, push_out_of_props, spread_out};
use crate::guides::{GuideFrame, InterpTimes, Interpolator};
use crate::motion::Pose;

/// Where the loop's time went.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct UpsampleTimes {
    pub frames: u64,
    #[serde(flatten)]
    pub interp: InterpTimes,
    /// Head frame ↔ world.
    #[serde(serialize_with = "crate::units::secs")]
    pub transform: Duration,
    /// Position-based collision correction.
    #[serde(serialize_with = "crate::units::secs")]
    pub projection: Duration,
    /// The push out of the props (the `contact` correction).
    #[serde(serialize_with = "crate::units::secs")]
    pub contact: Duration,
}

pub struct Upsampler {
    interp: Box<dyn Interpolator>,
    /// Frames per second: frame numbers to seconds.
    fps: f64,
    /// The solids (seen by the interpolator, and pushed out of by the projection).
    colliders: Option<Colliders>,
    /// Position-based correction: push strands out of the solids to this margin (cm).
    projection: Option<f32>,
    /// Push strands out of the props alone to this margin (cm).
    contact: Option<f32>,
    /// The projection spreads a push's length change along the strand ([`spread_out`])
    /// instead of walking it down to the tail ([`project_out`]).
    spread: bool,
    sinks: Vec<Box<dyn FrameSink>>,
    times: UpsampleTimes,
    local: Vec<Vec3>,
    out: Vec<Vec3>,
}

impl Upsampler {
    /// Frames at `fps` among `colliders`; `projection`: the margin of the position-based
    /// correction, `None` for none.
    pub fn new(
        interp: Box<dyn Interpolator>,
        fps: f64,
        colliders: Option<Colliders>,
        projection: Option<f32>,
        sinks: Vec<Box<dyn FrameSink>>,
    ) -> Upsampler {
        Upsampler {
            interp,
            fps,
            colliders,
            projection,
            contact: None,
            spread: false,
            sinks,
            times: UpsampleTimes::default(),
            local: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Adds the push out of the props ([`push_out_of_props`]) to `margin` (cm), before the
    /// projection.
    pub fn with_contact(mut self, margin: f32) -> Upsampler {
        self.contact = Some(margin);
        self
    }

    /// Makes the position-based correction the one that spreads a push's length change along
    /// the strand ([`spread_out`]) instead of the walk's, to `margin` (cm), after the push out of
    /// the props.
    pub fn with_spread(mut self, margin: f32) -> Upsampler {
        self.projection = Some(margin);
        self.spread = true;
        self
    }

    pub fn diagnostics(&self) -> serde_json::Value {
        self.interp.diagnostics()
    }

    pub fn interpolator(&self) -> &dyn Interpolator {
        self.interp.as_ref()
    }

    pub fn times(&self) -> UpsampleTimes {
        UpsampleTimes {
            interp: self.interp.times(),
            ..self.times
        }
    }

    /// Whether a chunk of frames must be preceded by the frames before it.
    pub fn stateful(&self) -> bool {
        self.interp.stateful()
    }

    /// The whole groom (world space) from one frame of guides (world space, slot order).
    pub fn upsample(&mut self, frame: f64, guides: &[[f32; 3]], pose: &Pose) -> Result<&[Vec3]> {
        let t = Instant::now();
        let inv = pose.inverse();
        self.local.clear();
        self.local
            .extend(guides.iter().map(|p| inv.apply_f32(Vec3::from_array(*p))));
        self.out.resize(self.interp.layout().rest.len(), Vec3::ZERO);
        self.times.transform += t.elapsed();
        let time = frame / self.fps;
        let colliders = self.colliders.as_ref().map(|c| c.at(time));
        self.interp.interpolate(
            &GuideFrame {
                frame,
                time,
                guides: &self.local,
                pose,
                colliders: colliders.as_ref(),
            },
            &mut self.out,
        )?;
        let t = Instant::now();
        for p in self.out.iter_mut() {
            *p = pose.apply_f32(*p);
        }
        self.times.transform += t.elapsed();
        if let Some(at) = &colliders {
            let layout = self.interp.layout();
            let guide = |s: usize| layout.is_guide(s);
            if let Some(margin) = self.contact {
                let t = Instant::now();
                push_out_of_props(&mut self.out, &layout.rest, &layout.counts, &guide, at, margin);
                self.times.contact += t.elapsed();
            }
            if let Some(margin) = self.projection {
                let t = Instant::now();
                let clean = if self.spread { spread_out } else { project_out };
                clean(&mut self.out, &layout.rest, &layout.counts, &guide, at, margin);
                self.times.projection += t.elapsed();
            }
        }
        self.times.frames += 1;
        Ok(&self.out)
    }
}

impl FrameSink for Upsampler {
    fn write(&mut self, frame: f64, positions: &[[f32; 3]], pose: Option<HeadPose>) -> Result<()> {
        let p = Pose::from(pose.unwrap_or(HeadPose::IDENTITY));
        self.upsample(frame, positions, &p)?;
        let out: Vec<[f32; 3]> = self.out.iter().map(|p| p.to_array()).collect();
        for s in self.sinks.iter_mut() {
            s.write(frame, &out, pose)?;
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for s in self.sinks {
            files.extend(s.finish()?);
        }
        Ok(files)
    }
}
