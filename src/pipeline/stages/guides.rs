//! `guides`: the guide strands (`guides.json`: strand indices), on the root-UV lattice (000
//! §4.1), chosen by sparse coding of the training motion (001 §6.3, Eq. 9–10) starting from
//! the lattice, or the neural interpolator's uv-grid guides, which every method then shares.

use serde::Serialize;

use super::{prepare, train_sim};
use crate::error::Result;
use crate::guides::select_uv_lattice;
use crate::guides::training::HeadFrames;
use crate::neural::grid::{GridSpec, UvGrid};
use crate::pipeline::engine::{Artefact, Chunk, Ctx, Info, Inputs, Stage};
use crate::pipeline::job::{Job, Selection};

pub const NAME: &str = "guides";
/// The guide strands: `{"strands": N, "guides": [indices]}`.
pub const GUIDES: Artefact = Artefact::new(NAME, "guides.json");

pub struct Guides;

#[derive(Serialize)]
struct Key {
    count: usize,
    selection: Selection,
    neural_grid: Option<GridSpec>,
    sparse: Option<Sparse>,
}

#[derive(Serialize)]
struct Sparse {
    iterations: usize,
    beta: f64,
}

fn sparse(job: &Job) -> bool {
    job.guides.selection == Selection::Sparse
}

impl Stage for Guides {
    fn info(&self) -> Info {
        Info::new(NAME, "Guide strands (root-UV lattice or sparse coding)")
    }

    fn upstream(&self, job: &Job) -> Vec<&'static str> {
        match sparse(job) {
            true => vec![prepare::NAME, train_sim::NAME],
            false => vec![prepare::NAME],
        }
    }

    fn inputs(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Inputs> {
        let j = cx.job;
        let mut inputs = Inputs::new(&Key {
            count: j.guides.count,
            selection: j.guides.selection,
            neural_grid: j.neural_config.as_ref().map(|c| c.grid),
            sparse: sparse(j).then_some(Sparse {
                iterations: j.guides.sparse_iterations,
                beta: j.guides.fit.beta,
            }),
        })
        .reads(prepare::outputs(cx)?);
        if sparse(j) {
            inputs = inputs.reads([cx.input(train_sim::TRAINING)?.clone()]);
        }
        Ok(inputs)
    }

    fn run(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Vec<String>> {
        let job = cx.job;
        let groom = prepare::groom(cx)?;
        let lattice = select_uv_lattice(groom, job.guides.count);
        // The neural interpolator needs its uv grid's guides; every method then shares them.
        let grid = match &job.neural_config {
            Some(c) => Some(UvGrid::new(groom, c.grid)?),
            None => None,
        };
        let chosen = match (&grid, job.guides.selection) {
            (Some(g), _) => g.guide_strands(),
            (None, Selection::Lattice) => lattice,
            (None, Selection::Sparse) => {
                let mut frames = HeadFrames::open(&cx.path(train_sim::TRAINING), groom)?;
                crate::guides::sparse::select_from_training(
                    groom,
                    &mut frames,
                    &lattice,
                    job.guides.fit.beta,
                    job.guides.sparse_iterations,
                )?
            }
        };
        if !cx.quiet {
            eprintln!(
                "           {} guides of {} strands ({})",
                chosen.len(),
                groom.strand_count(),
                match (&grid, job.guides.selection) {
                    (Some(_), _) => "the neural interpolator's uv-grid guides",
                    (None, Selection::Lattice) => "root-UV lattice",
                    (None, Selection::Sparse) => "sparse coding of the training motion",
                }
            );
        }
        let text =
            serde_json::to_string(&serde_json::json!({ "strands": groom.strand_count(), "guides": chosen }))
                .expect("json");
        let path = cx.path(GUIDES);
        tress_formats::atomic::write(&path, text.as_bytes())
            .map_err(|e| crate::error::output_error(&path, e))?;
        Ok(vec![GUIDES.path.into()])
    }
}

/// The guide strand indices the guides stage recorded.
pub fn indices(cx: &Ctx) -> Result<Vec<usize>> {
    crate::guides::select::read_guide_list(&cx.path(GUIDES))
}
