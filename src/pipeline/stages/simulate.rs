//! `simulate`: the full simulation of every strand on the shot (the ground truth).

use serde::Serialize;

use super::prepare;
use crate::error::Result;
use crate::pipeline::engine::{Artefact, Chunk, Ctx, Info, Inputs, Stage};
use crate::pipeline::job::Job;
use crate::pipeline::keys::{SceneKey, motion_files};
use crate::pipeline::simulation::{SimRun, simulate};
use crate::sim::{Material, SimOptions};

pub const NAME: &str = "simulate";
/// The ground truth.
pub const GT: Artefact = Artefact::new(NAME, "gt.tcache");

pub struct Simulate;

/// What a simulation of the shot depends on besides its strands (the guide simulation's key
/// too).
#[derive(Serialize)]
pub struct SimKey<'a> {
    scene: SceneKey<'a>,
    material: &'a Material,
    simulate: &'a SimOptions,
}

impl<'a> SimKey<'a> {
    pub fn of(j: &'a Job) -> SimKey<'a> {
        SimKey {
            scene: SceneKey::of(j),
            material: &j.material,
            simulate: &j.simulate,
        }
    }
}

impl Stage for Simulate {
    fn info(&self) -> Info {
        Info::new(NAME, "The full simulation (ground truth)")
    }

    fn upstream(&self, _: &Job) -> Vec<&'static str> {
        vec![prepare::NAME]
    }

    fn inputs(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Inputs> {
        Ok(Inputs::new(&SimKey::of(cx.job))
            .reads(prepare::outputs(cx)?)
            .reads(motion_files(cx, &cx.job.motion)?))
    }

    fn run(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Vec<String>> {
        let scene = prepare::scene(cx)?;
        simulate(
            cx,
            SimRun {
                groom: &scene.groom.groom,
                colliders: scene.colliders.clone(),
                frames: (cx.job.first, cx.job.last),
                name: GT.path,
                work: Some(NAME),
                forces: None,
            },
        )?;
        Ok(vec![GT.path.into()])
    }
}
