//! `train_sim`: a full simulation of the groom on the training motion (`[training]`), to fit
//! or train the upsamplers from. Head and body only: 001 §6.2, "throughout the training, no
//! solid object is involved".

use serde::Serialize;

use super::prepare;
use crate::error::{Error, Result};
use crate::pipeline::engine::{Artefact, Chunk, Ctx, Info, Inputs, Stage};
use crate::pipeline::job::{HeadSpec, Job, Training, TrainingSpec};
use crate::pipeline::keys::motion_files;
use crate::pipeline::simulation::{SimRun, simulate};
use crate::sim::{Material, SimOptions};

pub const NAME: &str = "train_sim";
/// The training simulation's frames.
pub const TRAINING: Artefact = Artefact::new(NAME, "training.tcache");

pub struct TrainSim;

#[derive(Serialize)]
struct Key<'a> {
    training: &'a TrainingSpec,
    frames: [i64; 2],
    head: &'a HeadSpec,
    fps: f64,
    scale: f32,
    up: crate::groom::UpAxis,
    material: &'a Material,
    simulate: &'a SimOptions,
}

/// The job's training simulation.
pub fn training(job: &Job) -> Result<&Training> {
    job.training
        .as_ref()
        .ok_or_else(|| Error::Invalid("the job has no [training] section".into()))
}

impl Stage for TrainSim {
    fn info(&self) -> Info {
        Info::new(
            NAME,
            "A full simulation on the training motion, to fit upsamplers from (jobs with [training])",
        )
        .needs("a [training] section", |job| job.training.is_some())
    }

    fn upstream(&self, _: &Job) -> Vec<&'static str> {
        vec![prepare::NAME]
    }

    fn inputs(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Inputs> {
        let j = cx.job;
        let t = training(j)?;
        Ok(Inputs::new(&Key {
            training: &t.spec,
            frames: [t.first, t.last],
            head: &j.head,
            fps: j.fps,
            scale: j.groom.scale,
            up: j.groom.up,
            material: &j.material,
            simulate: &j.simulate,
        })
        .reads(prepare::outputs(cx)?)
        .reads(motion_files(cx, &t.motion)?))
    }

    fn run(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Vec<String>> {
        let t = training(cx.job)?;
        let scene = prepare::scene(cx)?;
        let spec = cx.job.scene_spec()?;
        let (track, _) = spec.track(&t.motion.source()?, t.first)?;
        simulate(
            cx,
            SimRun {
                groom: &scene.groom.groom,
                colliders: scene.colliders_on(track),
                frames: (t.first, t.last),
                name: TRAINING.path,
                work: Some(NAME),
                forces: None,
            },
        )?;
        Ok(vec![TRAINING.path.into()])
    }
}
