//! `guide_sim`: the guide strands simulated alone on the shot (what the upsampling rows
//! without two-way correction start from).

use super::simulate::SimKey;
use super::{guides, prepare};
use crate::error::Result;
use crate::pipeline::engine::{Artefact, Chunk, Ctx, Info, Inputs, Stage};
use crate::pipeline::job::Job;
use crate::pipeline::keys::motion_files;
use crate::pipeline::simulation::{SimRun, guide_groom, simulate};

pub const NAME: &str = "guide_sim";
/// The guides' frames (strand k = guide slot k).
pub const GUIDE_CACHE: Artefact = Artefact::new(NAME, "guides.tcache");

pub struct GuideSim;

impl Stage for GuideSim {
    fn info(&self) -> Info {
        Info::new(NAME, "The guides simulated alone")
    }

    fn upstream(&self, _: &Job) -> Vec<&'static str> {
        vec![prepare::NAME, guides::NAME]
    }

    fn inputs(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Inputs> {
        Ok(Inputs::new(&SimKey::of(cx.job))
            .reads(prepare::outputs(cx)?)
            .reads(motion_files(cx, &cx.job.motion)?)
            .reads([cx.input(guides::GUIDES)?.clone()]))
    }

    fn run(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Vec<String>> {
        let scene = prepare::scene(cx)?;
        let groom = guide_groom(&scene.groom.groom, &guides::indices(cx)?);
        simulate(
            cx,
            SimRun {
                groom: &groom,
                colliders: scene.colliders.clone(),
                frames: (cx.job.first, cx.job.last),
                name: GUIDE_CACHE.path,
                work: Some(NAME),
                forces: None,
            },
        )?;
        Ok(vec![GUIDE_CACHE.path.into()])
    }
}
