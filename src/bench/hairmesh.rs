//! `tress bench hairmesh`: hair-mesh solver cost per frame at the sizes 002 §4 reports (215,
//! 361 and 2305 vertices: 4.8, 6 and 36 ms per frame on a 3.2 GHz i7-3930K, one thread), on one
//! thread, with the `walk` motion on a spherical head. The paper gives neither its time step nor
//! its iteration counts; both are printed here. Its claim that the cost is about linear in the
//! vertex count is checked by the ms per 1000 vertices of each size. Two last rows time meshes
//! built from the quickstart groom: the connected mesh jobs build (settled first, then solved by
//! conjugate gradients) and separate four-column bundles on 8 cells (solved directly per
//! bundle).

use glam::Vec3;
use serde::Serialize;

use crate::collide::{Colliders, Sphere};
use crate::error::Result;
use crate::hairmesh::{HairMesh, HairMeshParams, HairMeshSim, ProceduralMesh};
use crate::motion::{HeadTrack, RandomMotion};

#[derive(Debug, Serialize)]
pub struct Case {
    /// Which mesh and parameters.
    pub mesh: String,
    pub vertices: usize,
    pub tets: usize,
    pub paper_ms: f64,
    pub ms_per_frame: f64,
    pub ms_per_1000_vertices: f64,
    pub forces_ms: f64,
    pub solve_ms: f64,
    pub collisions_ms: f64,
    pub cg_iterations_per_step: f64,
    /// With conjugate gradients capped at 30 iterations.
    pub capped_ms_per_frame: f64,
    /// With one implicit step per frame (002's "large time steps"), and its iterations.
    pub one_step_ms_per_frame: f64,
    pub one_step_cg_iterations: f64,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub frames: usize,
    pub fps: f64,
    pub substeps: u32,
    pub cg_tolerance: f64,
    pub motion: String,
    pub cases: Vec<Case>,
}

fn head(track: HeadTrack) -> Colliders {
    let sphere = Sphere {
        center: Vec3::ZERO,
        radius: 9.0,
    };
    Colliders::on_head(vec![("head", Box::new(sphere))], track)
}

fn time(
    mesh: &HairMesh,
    params: &HairMeshParams,
    track: &HeadTrack,
    frames: usize,
    fps: f64,
) -> Result<(f64, HairMeshSim, usize)> {
    let mut sim = HairMeshSim::new(mesh.clone(), params.clone(), Some(head(track.clone())), 0.0)?;
    let mut cg = 0;
    let t = std::time::Instant::now();
    for _ in 0..frames {
        cg += sim.step_frame(1.0 / fps)?.cg_iterations;
    }
    Ok((1000.0 * t.elapsed().as_secs_f64() / frames as f64, sim, cg))
}

/// The default solver's figures on `mesh` (the paper's time where it gives one); the capped and
/// one-step columns left for the caller.
fn case(
    label: &str,
    mesh: &HairMesh,
    params: &HairMeshParams,
    paper_ms: f64,
    track: &HeadTrack,
    frames: usize,
    fps: f64,
) -> Result<Case> {
    let n = mesh.vertex_count();
    let (ms, sim, cg) = time(mesh, params, track, frames, fps)?;
    let per = |s: f64| 1000.0 * s / frames as f64;
    Ok(Case {
        mesh: label.into(),
        vertices: n,
        tets: sim.tet_count(),
        paper_ms,
        ms_per_frame: ms,
        ms_per_1000_vertices: ms / n as f64 * 1000.0,
        forces_ms: per(sim.timing.forces),
        solve_ms: per(sim.timing.solve),
        collisions_ms: per(sim.timing.collisions),
        cg_iterations_per_step: cg as f64 / (frames as f64 * params.substeps as f64),
        capped_ms_per_frame: f64::NAN,
        one_step_ms_per_frame: f64::NAN,
        one_step_cg_iterations: f64::NAN,
    })
}

pub fn run(frames: usize) -> Result<Report> {
    let fps = 24.0;
    let frames = frames.max(1);
    let track = RandomMotion::preset("walk")?.track()?;
    let params = HairMeshParams::default();
    let mut cases = Vec::new();
    // Columns × layers near the paper's vertex counts.
    for (cols, layers, paper) in [(6, 6, 4.8), (6, 10, 6.0), (12, 16, 36.0)] {
        let mesh = HairMesh::procedural(&ProceduralMesh {
            columns_u: cols,
            columns_v: cols,
            layers,
            length: 30.0,
            ..Default::default()
        })?;
        let mut c = case("procedural", &mesh, &params, paper, &track, frames, fps)?;
        let capped = HairMeshParams {
            cg_max_iterations: 30,
            ..params.clone()
        };
        c.capped_ms_per_frame = time(&mesh, &capped, &track, frames, fps)?.0;
        let one = HairMeshParams {
            substeps: 1,
            ..params.clone()
        };
        let (one_ms, _, one_cg) = time(&mesh, &one, &track, frames, fps)?;
        c.one_step_ms_per_frame = one_ms;
        c.one_step_cg_iterations = one_cg as f64 / frames as f64;
        cases.push(c);
    }
    // Meshes built from a groom (the quickstart's 2,000 straight strands), as `tress hairmesh
    // build` and jobs make them: connected (conjugate gradients), and the former separate
    // four-column bundles on 8 cells with the stiff parameters (solved directly per bundle).
    let groom = crate::scene::load_groom("straight", &crate::groom::Transform::default(), Some(2000))?.groom;
    let (mesh, _) = crate::hairmesh::build(&groom, &Default::default())?;
    // Settled at the first pose as jobs do; the settling is not timed.
    let mesh = HairMeshSim::settled(mesh, params.clone(), Some(head(track.clone())), 0.0, 1.0 / fps)?
        .0
        .mesh;
    let bundles = crate::hairmesh::BuildOptions {
        cells: 8,
        topology: crate::hairmesh::Topology::Bundles,
        ..Default::default()
    };
    let (separate, _) = crate::hairmesh::build(&groom, &bundles)?;
    for (label, mesh) in [("built, connected", mesh), ("built, bundles", separate)] {
        cases.push(case(label, &mesh, &params, f64::NAN, &track, frames, fps)?);
    }
    Ok(Report {
        frames,
        fps,
        substeps: params.substeps,
        cg_tolerance: params.cg_tolerance,
        motion: "walk".into(),
        cases,
    })
}
