//! The eval stage: the method's result and a no-dynamics baseline (the rest groom carried by
//! the head) against the ground truth, frame by frame (`metrics.json`).

use glam::Vec3;
use serde::{Deserialize, Serialize};
use tress_formats::tcache::TcacheReader;

use super::run::Ctx;
use super::scene::{job_colliders, prepared, scene_of};
use super::stages::for_each_part_frame;
use crate::error::{Error, Result};
use crate::metrics::{Evaluator, FrameMetrics, Summary};
use crate::motion::Pose;

/// One method's metrics.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MethodMetrics {
    pub name: String,
    pub summary: Summary,
    pub frames: Vec<FrameMetrics>,
}

/// What `metrics.json` holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MetricsFile {
    pub strands: usize,
    pub vertices: usize,
    pub methods: Vec<MethodMetrics>,
}

/// Name of the method row in reports.
pub fn method_name(ctx: &Ctx) -> String {
    let g = &ctx.job.guides;
    format!(
        "{} guides + {}{}",
        g.count,
        g.method.to_uppercase(),
        if g.resolve_collisions {
            " + collision projection"
        } else {
            ""
        }
    )
}

pub fn evaluate(ctx: &Ctx) -> Result<Vec<String>> {
    let job = ctx.job;
    let groom = prepared(&ctx.out)?;
    let counts = groom.counts().to_vec();
    let rest = groom.points().to_vec();
    let colliders = job_colliders(job, &ctx.out, &scene_of(job, groom.clone())?)?;
    let mut gt = TcacheReader::open(ctx.out.join("gt.tcache"))?;
    let mut method = Evaluator::new(&counts);
    let mut rigid = Evaluator::new(&counts);
    // The parts and the ground truth hold the same frames in the same order.
    let mut i = 0usize;
    for_each_part_frame(ctx, |frame, m, _| {
        if i >= gt.len() || gt.frames[i].frame != frame {
            return Err(Error::Runtime(format!(
                "the upsampled parts have frame {frame} where the ground truth does not"
            )));
        }
        let g: Vec<Vec3> = gt.frame(i)?.into_iter().map(Vec3::from_array).collect();
        let pose = Pose::from(gt.pose(i)?);
        i += 1;
        let m: Vec<Vec3> = m.iter().map(|p| Vec3::from_array(*p)).collect();
        let at = colliders.at(frame / job.fps);
        method.push(frame, &g, &m, Some(&at));
        let carried: Vec<Vec3> = rest.iter().map(|p| pose.apply_f32(*p)).collect();
        rigid.push(frame, &g, &carried, Some(&at));
        Ok(())
    })?;
    if i != gt.len() {
        return Err(Error::Runtime(format!(
            "the upsampled parts end before frame {}",
            gt.frames[i].frame
        )));
    }
    let file = MetricsFile {
        strands: counts.len(),
        vertices: rest.len(),
        methods: vec![
            MethodMetrics {
                name: method_name(ctx),
                summary: method.summary(),
                frames: method.frames,
            },
            MethodMetrics {
                name: "rest groom carried by the head (no dynamics)".into(),
                summary: rigid.summary(),
                frames: rigid.frames,
            },
        ],
    };
    let path = ctx.out.join("metrics.json");
    let text = serde_json::to_string_pretty(&file).expect("json");
    tress_formats::atomic::write(&path, text.as_bytes())
        .map_err(|e| crate::groom::files::output_error(&path, e))?;
    Ok(vec!["metrics.json".into()])
}
