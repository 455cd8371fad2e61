//! `prepare`: the groom generated or read, resampled, with strand ids, root UVs and the job's
//! edits (`groom.tcache`), and a mesh head's distance grid (`head.sdf`). Every later stage
//! builds the job's scene around this groom, once per run ([`scene`]).

use std::path::Path;

use serde::Serialize;
use tress_formats::tcache::{Codec, TcacheHeader, TcacheWriter};

use crate::collide::HeadShape;
use crate::collide::head_mesh::to_file;
use crate::error::Result;
use crate::groom::edit::Edit;
use crate::groom::{Groom, read_groom};
use crate::pipeline::engine::{Artefact, Ctx, Info, Inputs, OutputFile, Stage};
use crate::pipeline::job::{GroomSpec, HeadSpec, Job};
use crate::pipeline::keys::external;
use crate::scene::{HeadSource, Scene, SceneFiles, prepare_groom};

pub const NAME: &str = "prepare";
/// The prepared groom: rest pose and attributes, one lossless frame.
pub const GROOM: Artefact = Artefact::new(NAME, "groom.tcache");
/// A mesh head's signed distance grid.
pub const HEAD_SDF: Artefact = Artefact::new(NAME, "head.sdf");
/// Where an animated body mesh's distance grids are kept between runs.
const BODY_CACHE: &str = "body";

pub struct Prepare;

#[derive(Serialize)]
struct Key<'a> {
    groom: &'a GroomSpec,
    head: &'a HeadSpec,
    seed: u64,
}

impl Stage for Prepare {
    fn info(&self) -> Info {
        Info::new(NAME, "Groom resampled, root UVs and ids; head distance grid")
    }

    fn upstream(&self, _: &Job) -> Vec<&'static str> {
        vec![]
    }

    fn inputs(&self, cx: &Ctx, _: Option<crate::pipeline::engine::Chunk>) -> Result<Inputs> {
        let j = cx.job;
        Ok(Inputs::new(&Key {
            groom: &j.groom,
            head: &j.head,
            seed: j.seed,
        })
        .reads(external(
            cx,
            &[j.groom.file.as_deref(), Some(j.head.collider.as_str())],
        )?))
    }

    fn run(&self, cx: &Ctx, _: Option<crate::pipeline::engine::Chunk>) -> Result<Vec<String>> {
        let job = cx.job;
        let spec = job.scene_spec()?;
        let edits = job
            .groom
            .edits
            .iter()
            .map(|e| Edit::parse(e))
            .collect::<Result<Vec<_>>>()?;
        let scene = prepare_groom(spec.load_groom()?, job.groom.points, &edits)?;
        if !cx.quiet {
            eprintln!(
                "           {} ({} strands × {} points)",
                scene.source,
                scene.groom.strand_count(),
                job.groom.points
            );
        }
        save_groom(&cx.path(GROOM), &scene.groom)?;
        let mut out = vec![GROOM.path.to_string()];
        // A mesh head's distance grid, made once for every later stage.
        if let HeadSource::Mesh(_) = spec.head
            && let (HeadShape::Grid(g), _) = spec.head_shape(&scene, None)?
        {
            let path = cx.path(HEAD_SDF);
            tress_formats::sdf::write(&path, &to_file(&g, 4, [0; 16]))
                .map_err(|e| crate::error::output_error(&path, e))?;
            out.push(HEAD_SDF.path.into());
        }
        Ok(out)
    }
}

/// The prepared groom's record entries (every later stage reads them).
pub fn outputs(cx: &Ctx) -> Result<Vec<OutputFile>> {
    Ok(cx.record(NAME)?.outputs.clone())
}

/// Saves a groom (rest pose and attributes) as a one-frame lossless `.tcache`.
pub fn save_groom(path: &Path, groom: &Groom) -> Result<()> {
    let strands = groom.to_strands();
    let header = TcacheHeader {
        fps: 24.0,
        codec: Codec::Lossless,
        keyframe_interval: 1,
        rest: strands.clone(),
    };
    let mut w = TcacheWriter::create(path, header, 3).map_err(|e| crate::error::output_error(path, e))?;
    w.write_frame(0.0, &strands.points, None)?;
    w.finish()?;
    Ok(())
}

/// The groom the prepare stage wrote in the output folder `out`.
pub fn prepared(out: &Path) -> Result<Groom> {
    Ok(read_groom(&out.join(GROOM.path), &Default::default())?.groom)
}

/// The job's scene around the prepared groom in `out`: head (a mesh head from its prepared
/// grid), body, motion and colliders.
pub fn build_scene(job: &Job, out: &Path) -> Result<Scene> {
    scene_around(job, out, prepared(out)?)
}

/// The job's scene around `groom`, with the prepared files in `out`.
pub fn scene_around(job: &Job, out: &Path, groom: Groom) -> Result<Scene> {
    let spec = job.scene_spec()?;
    let groom = spec.around(groom)?;
    let head_grid = out.join(HEAD_SDF.path);
    let body_cache = out.join(BODY_CACHE);
    spec.build(
        groom,
        &SceneFiles {
            head_grid: Some(&head_grid),
            body_cache: Some(&body_cache),
        },
    )
}

/// The job's scene, built on first use in a run and shared by every later stage and row.
pub fn scene<'c>(cx: &'c Ctx) -> Result<&'c Scene> {
    if let Some(s) = cx.scene.get() {
        return Ok(s);
    }
    let s = match cx.groom.get() {
        Some(g) => scene_around(cx.job, &cx.out, g.clone())?,
        None => build_scene(cx.job, &cx.out)?,
    };
    Ok(cx.scene.get_or_init(|| s))
}

/// The prepared groom: the scene's when it is built, else read once from the output folder
/// (a stage that needs only the groom does not build the head, body and colliders).
pub fn groom<'c>(cx: &'c Ctx) -> Result<&'c Groom> {
    if let Some(s) = cx.scene.get() {
        return Ok(&s.groom.groom);
    }
    if let Some(g) = cx.groom.get() {
        return Ok(g);
    }
    let g = prepared(&cx.out)?;
    Ok(cx.groom.get_or_init(|| g))
}
