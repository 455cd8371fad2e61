//! `hairmesh`: the hair mesh built around the prepared groom (`hairmesh/mesh.obj` + its
//! sidecar), simulated on the job's head, motion and solids (`hairmesh.tcache`: the mesh's
//! vertices, one curve per column, world space), and what the run measured (`hairmesh.json`),
//! 002.

use serde::Serialize;

use super::prepare;
use crate::cache::{CacheInfo, SinkOptions, create_sink};
use crate::error::Result;
use crate::groom::Groom;
use crate::hairmesh::{BuildOptions, HairMeshSim, build, simulate};
use crate::pipeline::engine::{Artefact, Chunk, Ctx, Info, Inputs, Stage};
use crate::pipeline::job::{HairMeshSpec, Job};
use crate::pipeline::keys::{SceneKey, motion_files};
use crate::pipeline::progress::FrameProgress;
use crate::upsample::Method;

pub const NAME: &str = "hairmesh";
/// The mesh at rest (its sidecar `hairmesh/mesh.hairmesh` beside it).
pub const MESH: Artefact = Artefact::new(NAME, "hairmesh/mesh.obj");
pub const MESH_SIDECAR: Artefact = Artefact::new(NAME, "hairmesh/mesh.hairmesh");
/// The mesh's columns per frame (the row's "guides").
pub const CACHE: Artefact = Artefact::new(NAME, "hairmesh.tcache");
/// What the build and the solver measured.
pub const REPORT: Artefact = Artefact::new(NAME, "hairmesh.json");

pub struct HairMeshStage;

#[derive(Serialize)]
struct Key<'a> {
    scene: SceneKey<'a>,
    hairmesh: &'a HairMeshSpec,
}

impl Stage for HairMeshStage {
    fn info(&self) -> Info {
        Info::new(
            NAME,
            "The hair mesh built around the groom and simulated (jobs with the hairmesh method)",
        )
        .needs("the hairmesh method ([hairmesh] enabled = true)", |job| {
            job.rows.iter().any(|r| r.method == Method::Hairmesh)
        })
    }

    fn upstream(&self, _: &Job) -> Vec<&'static str> {
        vec![prepare::NAME]
    }

    fn inputs(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Inputs> {
        let j = cx.job;
        Ok(Inputs::new(&Key {
            scene: SceneKey::of(j),
            hairmesh: &j.hairmesh,
        })
        .reads(prepare::outputs(cx)?)
        .reads(motion_files(cx, &j.motion)?))
    }

    fn run(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Vec<String>> {
        let job = cx.job;
        let spec = &job.hairmesh;
        let scene = prepare::scene(cx)?;
        let (mesh, built) = build(
            &scene.groom.groom,
            &BuildOptions {
                cells: spec.cells,
                layers: spec.layers,
                topology: spec.topology,
            },
        )?;
        cx.create_dir("hairmesh")?;
        mesh.write(&cx.path(MESH))?;
        let columns = Groom::uniform(mesh.rest.clone(), mesh.layers, Default::default())?;
        let (mut sim, settled) = HairMeshSim::settled(
            mesh,
            spec.solver.clone(),
            Some(scene.colliders.clone()),
            job.first as f64 / job.fps,
            1.0 / job.fps,
        )?;
        if !cx.quiet {
            eprintln!(
                "hair mesh {} columns × {} layers = {} vertices, {} tets",
                sim.mesh.columns(),
                sim.mesh.layers,
                sim.mesh.vertex_count(),
                sim.tet_count()
            );
        }
        let info = CacheInfo {
            topology: columns.to_strands(),
            fps: job.fps,
            frames: Vec::new(),
        };
        let sink = create_sink(&cx.path(CACHE), &info, job.first as f64, &SinkOptions::default())?;
        let mut progress = FrameProgress::new(NAME, (job.last - job.first + 1).max(0) as u64, cx.quiet);
        let (report, _) = simulate(
            &mut sim,
            None,
            job.first,
            job.last,
            job.fps,
            vec![sink],
            &mut |f, _| {
                progress.tick(f);
                true
            },
        )?;
        progress.finish();
        let doc = serde_json::json!({
            "report": report,
            "columns": built.columns,
            "faces": built.faces,
            "dropped_faces": built.dropped_faces,
            "regions": built.regions,
            "settled_cm": settled,
            "topology": spec.topology,
            "solver": spec.solver,
        });
        cx.write_json(REPORT.path, &doc)?;
        Ok(vec![
            MESH.path.into(),
            MESH_SIDECAR.path.into(),
            CACHE.path.into(),
            REPORT.path.into(),
        ])
    }
}
