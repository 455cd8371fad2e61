//! `write`: the first row's upsampled groom as the job's caches — `hair.abc` (and
//! `hair.tcache`, `hair.usda`, `hair.usdc`, `ply/hair.####.ply` as asked) — and the ground truth as
//! `gt.abc` when asked.

use serde::Serialize;
use tress_formats::tcache::TcacheReader;

use super::{prepare, simulate, upsample};
use crate::cache::{CacheInfo, OutputSpace, SinkOptions, create_sink};
use crate::error::Result;
use crate::pipeline::engine::{Artefact, Chunk, Ctx, Info, Inputs, Stage};
use crate::pipeline::job::{Job, OutputSpec};

pub const NAME: &str = "write";
pub const HAIR_ABC: Artefact = Artefact::new(NAME, "hair.abc");
pub const HAIR_TCACHE: Artefact = Artefact::new(NAME, "hair.tcache");
pub const HAIR_USD: Artefact = Artefact::new(NAME, "hair.usda");
pub const HAIR_USDC: Artefact = Artefact::new(NAME, "hair.usdc");
/// The PLY sequence's pattern.
pub const HAIR_PLY: Artefact = Artefact::new(NAME, "ply/hair.####.ply");
pub const GT_ABC: Artefact = Artefact::new(NAME, "gt.abc");

pub struct Write;

#[derive(Serialize)]
struct Key<'a> {
    outputs: &'a OutputSpec,
    fps: f64,
}

impl Stage for Write {
    fn info(&self) -> Info {
        // 2: USD caches carry a time-sampled extent; 3: upsample 2's results.
        Info::new(NAME, "Alembic / tcache / PLY outputs").version(3)
    }

    fn upstream(&self, job: &Job) -> Vec<&'static str> {
        match job.outputs.ground_truth_abc {
            true => vec![upsample::NAME, simulate::NAME],
            false => vec![upsample::NAME],
        }
    }

    fn inputs(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Inputs> {
        let j = cx.job;
        let mut inputs = Inputs::new(&Key {
            outputs: &j.outputs,
            fps: j.fps,
        })
        .reads(upsample::parts_of(cx, &j.rows[0])?);
        if j.outputs.ground_truth_abc {
            inputs = inputs.reads([cx.input(simulate::GT)?.clone()]);
        }
        Ok(inputs)
    }

    fn run(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Vec<String>> {
        let job = cx.job;
        let groom = prepare::groom(cx)?;
        let info = CacheInfo {
            topology: groom.to_strands(),
            fps: job.fps,
            frames: Vec::new(),
        };
        // The deliverables in the shot's space; `hair.tcache`, which tress reads back, in its own.
        let opts = SinkOptions {
            date: Some(cx.date()),
            space: OutputSpace {
                units: job.outputs.units,
                up: job.outputs.up,
            },
            usd_prim: job.outputs.usd_prim.clone(),
            ..SinkOptions::default()
        };
        let own = SinkOptions {
            space: OutputSpace::default(),
            ..opts.clone()
        };
        let names: Vec<(&str, &SinkOptions)> = [
            (job.outputs.abc, HAIR_ABC, &opts),
            (job.outputs.tcache, HAIR_TCACHE, &own),
            (job.outputs.usd, HAIR_USD, &opts),
            (job.outputs.usdc, HAIR_USDC, &opts),
        ]
        .into_iter()
        .filter(|(on, _, _)| *on)
        .map(|(_, a, o)| (a.path, o))
        .collect();
        let mut sinks = Vec::new();
        for (n, o) in &names {
            sinks.push(create_sink(&cx.out.join(n), &info, job.first as f64, o)?);
        }
        if job.outputs.ply {
            cx.create_dir("ply")?;
            sinks.push(create_sink(&cx.path(HAIR_PLY), &info, job.first as f64, &opts)?);
        }
        upsample::for_each_frame(cx, &job.rows[0], |frame, p, pose| {
            for s in sinks.iter_mut() {
                s.write(frame, p, Some(pose))?;
            }
            Ok(())
        })?;
        let mut written = Vec::new();
        for s in sinks {
            for f in s.finish()? {
                let rel = f
                    .strip_prefix(&cx.out)
                    .map(|p| p.to_string_lossy().to_string())
                    .unwrap_or_else(|_| f.display().to_string());
                written.push(rel);
            }
        }
        if job.outputs.ground_truth_abc {
            let mut r = TcacheReader::open(cx.path(simulate::GT))?;
            let mut s = create_sink(&cx.path(GT_ABC), &info, job.first as f64, &opts)?;
            for i in 0..r.len() {
                let p = r.frame(i)?;
                s.write(r.frames[i].frame, &p, None)?;
            }
            s.finish()?;
            written.push(GT_ABC.path.into());
        }
        Ok(written)
    }
}
