//! Hair-mesh simulation (Wu & Yuksel 2016, `../shared/papers/002`): a volumetric, very robust
//! simulation of a coarse layered mesh around the hair, for stylized and long hair where a few
//! bundles carry the motion, with render strands generated inside it.
//!
//! * [`mesh`]: the layered mesh (root faces extruded through layers into prisms), its corner
//!   tets (002 Fig. 3), surface vertices and edges; OBJ + sidecar files.
//! * [`build`]: a mesh fitted around a groom's strands.
//! * [`forces`]: the volume force (002 Eq. 1–2) and Baraff–Witkin stretch, shear and bend.
//! * [`bundles`]: direct banded solves of the step for meshes of small separate bundles.
//! * [`solver`]: implicit Euler with Modified Conjugate Gradients (002 §3), collision handling on
//!   the surface vertices and deformation minimization (002 §3.2, Eq. 3–4).
//! * [`strands`]: render strands embedded in or generated inside the mesh.
//! * [`interp`]: the embedded strands behind the upsampling seam (a job's `hairmesh` row).
//!
//! [`simulate`] is the frame loop: it steps the mesh, places the strands each frame and hands
//! them to the caches.

pub mod build;
pub mod bundles;
pub mod forces;
pub mod interp;
pub mod mesh;
pub mod solver;
pub mod strands;

use std::time::Instant;

use serde::Serialize;

pub use build::{BuildOptions, BuildReport, Topology, build};
pub use interp::HairMeshInterpolator;
pub use mesh::{HairMesh, ProceduralMesh};
pub use solver::{HairMeshParams, HairMeshSim, MeshFrameStats, Settle};
pub use strands::RenderStrands;

use crate::cache::FrameSink;
use crate::error::Result;

/// What a run measured (the `--json` of `tress hairmesh simulate`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct MeshRunReport {
    pub vertices: usize,
    pub tets: usize,
    pub frames: usize,
    pub substeps: u32,
    /// Solver time per frame (strand placement and writing excluded), ms.
    pub ms_per_frame: f64,
    /// Mean conjugate-gradient iterations per substep (0 for meshes of small bundles, solved
    /// directly, [`bundles`]).
    pub cg_iterations: f64,
    /// Deepest mesh vertex inside a collider after any frame (cm).
    pub deepest_penetration: f32,
    /// Most non-surface vertices inside a collider after any frame.
    pub internal_penetrations: usize,
    /// Smallest tet volume over its rest volume, over the run.
    pub min_volume_ratio: f64,
    /// Mean vertex distance to the rest shape in the head frame at the last frame (cm).
    pub rest_error: f64,
}

/// Simulates frames `first..=last` at `fps` after the parameters' preroll, writing the strands
/// of every frame (including the first, at the state the preroll settled to) to `sinks`; without `strands`, the mesh's
/// vertices themselves, one curve per column (world space, with the head's pose). `progress` is told each frame and
/// may stop the run by returning false.
pub fn simulate(
    sim: &mut HairMeshSim,
    strands: Option<&RenderStrands>,
    first: i64,
    last: i64,
    fps: f64,
    mut sinks: Vec<Box<dyn FrameSink>>,
    progress: &mut dyn FnMut(i64, &MeshFrameStats) -> bool,
) -> Result<(MeshRunReport, Vec<std::path::PathBuf>)> {
    let mut report = MeshRunReport {
        vertices: sim.mesh.vertex_count(),
        tets: sim.tet_count(),
        substeps: sim.params.substeps,
        min_volume_ratio: sim.min_volume_ratio(),
        ..Default::default()
    };
    sim.preroll(sim.params.preroll_frames, 1.0 / fps)?;
    let mut points = Vec::new();
    let mut solve = 0.0f64;
    let mut cg = 0usize;
    let dt = 1.0 / fps;
    for frame in first..=last {
        if frame > first {
            let t = Instant::now();
            let stats = sim.step_frame(dt)?;
            solve += t.elapsed().as_secs_f64();
            cg += stats.cg_iterations;
            report.deepest_penetration = report.deepest_penetration.max(stats.deepest_penetration);
            report.internal_penetrations = report.internal_penetrations.max(stats.internal_penetrations);
            report.min_volume_ratio = report.min_volume_ratio.min(stats.min_volume_ratio);
            if !progress(frame, &stats) {
                return Err(crate::Error::Stopped(format!("stopped after frame {frame}")));
            }
        }
        match strands {
            Some(s) => s.positions(&sim.mesh, &sim.positions(), &mut points),
            None => points = sim.positions(),
        }
        let pose = sim.colliders.as_ref().map(|c| c.head.at(sim.time).into());
        let p: &[[f32; 3]] = bytemuck::cast_slice(&points);
        for s in sinks.iter_mut() {
            s.write(frame as f64, p, pose)?;
        }
        report.frames += 1;
    }
    let stepped = (report.frames.saturating_sub(1)).max(1);
    report.ms_per_frame = 1000.0 * solve / stepped as f64;
    report.cg_iterations = cg as f64 / (stepped as f64 * report.substeps.max(1) as f64);
    report.rest_error = sim.rest_error();
    let mut files = Vec::new();
    for s in sinks {
        files.extend(s.finish()?);
    }
    Ok((report, files))
}

/// How a run solved its steps, for reports: direct per bundle, or conjugate gradients.
pub fn solve_words(cg_iterations: f64) -> String {
    if cg_iterations > 0.0 {
        format!("{cg_iterations:.0} conjugate-gradient iterations per step")
    } else {
        "solved directly per bundle".into()
    }
}
