//! `two_way`: the guides of two-way rows simulated with two-way collision correction (001 §5):
//! `guides.<row>.tcache` and what the coupling did (`guides.<row>.json`) each.

use serde::Serialize;

use super::{ablate, displace, fit, guides, prepare, train};
use crate::error::Result;
use crate::guides::{TwoWay, TwoWayOptions};
use crate::pipeline::engine::{Chunk, Ctx, Info, Inputs, Stage};
use crate::pipeline::job::{Job, MethodRow};
use crate::pipeline::keys::{RowsKey, SceneKey, motion_files};
use crate::pipeline::rows;
use crate::pipeline::simulation::{SimRun, guide_groom, simulate};
use crate::sim::{Material, SimOptions};

pub const NAME: &str = "two_way";

/// The guides of a two-way row, simulated with the correction.
pub fn guide_cache(row: &MethodRow) -> String {
    format!("guides.{}.tcache", row.stem())
}

/// What the correction did for a row.
pub fn stats(row: &MethodRow) -> String {
    format!("guides.{}.json", row.stem())
}

pub struct TwoWayStage;

#[derive(Serialize)]
struct Key<'a> {
    scene: SceneKey<'a>,
    material: &'a Material,
    simulate: &'a SimOptions,
    rows: RowsKey<'a>,
    correction: &'a TwoWayOptions,
}

impl Stage for TwoWayStage {
    fn info(&self) -> Info {
        Info::new(
            NAME,
            "The guides simulated with two-way collision correction (jobs with two-way rows)",
        )
        .needs("a two-way method", |job| job.rows.iter().any(|r| r.two_way))
    }

    fn upstream(&self, _: &Job) -> Vec<&'static str> {
        vec![
            prepare::NAME,
            guides::NAME,
            fit::NAME,
            train::NAME,
            displace::NAME,
            ablate::NAME,
        ]
    }

    fn inputs(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Inputs> {
        let j = cx.job;
        Ok(Inputs::new(&Key {
            scene: SceneKey::of(j),
            material: &j.material,
            simulate: &j.simulate,
            rows: RowsKey::of(j),
            correction: &j.guides.correction,
        })
        .reads(prepare::outputs(cx)?)
        .reads(motion_files(cx, &j.motion)?)
        .reads([cx.input(guides::GUIDES)?.clone()])
        .reads(rows::model_files(cx)?))
    }

    fn run(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Vec<String>> {
        let job = cx.job;
        let scene = prepare::scene(cx)?;
        let full = &scene.groom.groom;
        let guides = guides::indices(cx)?;
        let groom = guide_groom(full, &guides);
        let mut out = Vec::new();
        for row in job.rows.iter().filter(|r| r.two_way) {
            let coupling = TwoWay::new(
                rows::interpolator(cx, full, &guides, row)?,
                job.guides.correction.clone(),
            );
            let st = coupling.stats.clone();
            let name = guide_cache(row);
            // No checkpoints: the coupling's state (the adaptive sets) is not in them.
            simulate(
                cx,
                SimRun {
                    groom: &groom,
                    colliders: scene.colliders.clone(),
                    frames: (job.first, job.last),
                    name: &name,
                    work: None,
                    forces: Some(Box::new(coupling)),
                },
            )?;
            let st = *st.lock().expect("not poisoned");
            if !cx.quiet {
                eprintln!(
                    "           {}: {:.1} normal particles in a solid per frame, {} blocks of Eq. 4; interpolation {:.2} s, correction {:.2} s",
                    row.key,
                    st.colliding as f64 / st.frames.max(1) as f64,
                    st.blocks,
                    st.interpolation,
                    st.correction
                );
            }
            out.push(name);
            out.push(cx.write_json(&stats(row), &st)?);
        }
        Ok(out)
    }
}
