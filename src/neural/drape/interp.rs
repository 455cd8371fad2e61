//! The quasi-static drape behind the upsampling seam: a frame of draped texture strands (the
//! "guides", one strand of N vertices per occupied texel of the scalp texture, head frame, as a
//! job's `drape` stage writes them) places the whole groom by the uv grid's transfer (each groom
//! strand follows its texels' change of shape, 003 §3.1), so a job scores, previews and writes
//! the drape like every other method.

use std::time::Instant;

use glam::Vec3;

use super::DrapeGroom;
use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::guides::{GuideFrame, GuideLayout, InterpTimes, Interpolator};

pub struct DrapeInterpolator {
    groom: DrapeGroom,
    layout: GuideLayout,
    times: InterpTimes,
}

impl DrapeInterpolator {
    /// `groom` (rest, head frame) on a `texture`² map of strands of `points` vertices: the
    /// same texture the drape stage drapes.
    pub fn new(groom: &Groom, texture: usize, points: usize) -> Result<DrapeInterpolator> {
        Ok(DrapeInterpolator {
            groom: DrapeGroom::new(groom, texture, points)?,
            layout: GuideLayout::new(groom, &[])?,
            times: InterpTimes::default(),
        })
    }
}

impl Interpolator for DrapeInterpolator {
    fn layout(&self) -> &GuideLayout {
        &self.layout
    }

    fn interpolate(&mut self, frame: &GuideFrame, out: &mut [Vec3]) -> Result<()> {
        let want = self.groom.strands() * self.groom.points;
        if frame.guides.len() != want {
            return Err(Error::Invalid(format!(
                "frame {}: {} draped points where the groom's texture has {} strands of {} vertices",
                frame.frame,
                frame.guides.len(),
                self.groom.strands(),
                self.groom.points
            )));
        }
        let t = Instant::now();
        self.groom.scatter(frame.guides, out);
        self.times.interpolation += t.elapsed();
        Ok(())
    }

    fn times(&self) -> InterpTimes {
        self.times
    }

    /// Strands follow the texture's draped strands, not guide strands.
    fn weights(&self, _s: usize, out: &mut Vec<(u32, Vec<f32>)>) {
        out.clear();
    }
}
