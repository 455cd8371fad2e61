//! The hair mesh behind the upsampling seam: a frame of mesh vertices (the "guides", column by
//! column, head frame) places the groom's strands embedded in the mesh's prisms
//! ([`RenderStrands::embed`]), so a job scores, corrects, previews and writes the hair-mesh
//! simulation like every other method.

use std::time::Instant;

use glam::Vec3;

use super::mesh::HairMesh;
use super::strands::RenderStrands;
use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::guides::{GuideFrame, GuideLayout, InterpTimes, Interpolator};

pub struct HairMeshInterpolator {
    mesh: HairMesh,
    strands: RenderStrands,
    layout: GuideLayout,
    points: Vec<Vec3>,
    times: InterpTimes,
}

impl HairMeshInterpolator {
    /// The strands of `groom` (rest pose, head frame) embedded in `mesh` (built around it).
    pub fn new(mesh: HairMesh, groom: &Groom) -> Result<HairMeshInterpolator> {
        let strands = RenderStrands::embed(&mesh, groom);
        Ok(HairMeshInterpolator {
            layout: GuideLayout::new(groom, &[])?,
            strands,
            mesh,
            points: Vec::new(),
            times: InterpTimes::default(),
        })
    }
}

impl Interpolator for HairMeshInterpolator {
    fn layout(&self) -> &GuideLayout {
        &self.layout
    }

    fn interpolate(&mut self, frame: &GuideFrame, out: &mut [Vec3]) -> Result<()> {
        if frame.guides.len() != self.mesh.vertex_count() {
            return Err(Error::Invalid(format!(
                "frame {}: {} mesh points where the hair mesh has {} vertices",
                frame.frame,
                frame.guides.len(),
                self.mesh.vertex_count()
            )));
        }
        let t = Instant::now();
        self.strands.positions(&self.mesh, frame.guides, &mut self.points);
        if self.points.len() != out.len() {
            return Err(Error::Invalid(format!(
                "the hair mesh places {} strand points where the groom has {}",
                self.points.len(),
                out.len()
            )));
        }
        out.copy_from_slice(&self.points);
        self.times.interpolation += t.elapsed();
        Ok(())
    }

    fn times(&self) -> InterpTimes {
        self.times
    }

    /// Strands follow mesh vertices, not guide strands.
    fn weights(&self, _s: usize, out: &mut Vec<(u32, Vec<f32>)>) {
        out.clear();
    }
}
