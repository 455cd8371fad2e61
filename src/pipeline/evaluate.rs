//! The eval stage: the method's result and a no-dynamics baseline (the rest groom carried by
//! the head) against the ground truth, frame by frame (`metrics.json`).

use glam::Vec3;
use serde::{Deserialize, Serialize};
use tress_formats::tcache::{HeadPose, TcacheReader};

use super::run::Ctx;
use super::scene::{job_colliders, load_groom, scene_of};
use crate::error::{Error, Result};
use crate::metrics::{Evaluator, FrameMetrics, Summary};

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

fn apply(pose: &HeadPose, p: Vec3) -> Vec3 {
    let w = pose.to_world([p.x as f64, p.y as f64, p.z as f64]);
    Vec3::new(w[0] as f32, w[1] as f32, w[2] as f32)
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
    let groom = load_groom(&ctx.out.join("groom.tcache"))?;
    let counts = groom.counts().to_vec();
    let rest = groom.points().to_vec();
    let colliders = job_colliders(job, &ctx.out, &scene_of(job, groom.clone())?)?;
    let mut gt = TcacheReader::open(ctx.out.join("gt.tcache"))?;
    let mut method = Evaluator::new(&counts);
    let mut rigid = Evaluator::new(&counts);
    let mut parts = ctx.parts()?.into_iter();
    let mut current: Option<TcacheReader> = None;
    let mut k = 0usize;
    for i in 0..gt.len() {
        let frame = gt.frames[i].frame;
        let g: Vec<Vec3> = gt.frame(i)?.into_iter().map(Vec3::from_array).collect();
        let pose = gt.pose(i)?;
        // The method's frame: the next one of the parts, in order.
        let m = loop {
            if let Some(r) = current.as_mut()
                && k < r.len()
            {
                let f = r.frames[k].frame;
                let p = r.frame(k)?;
                k += 1;
                break (f, p);
            }
            let next = parts
                .next()
                .ok_or_else(|| Error::Runtime(format!("the upsampled parts end before frame {frame}")))?;
            current = Some(TcacheReader::open(ctx.out.join(&next.path))?);
            k = 0;
        };
        if m.0 != frame {
            return Err(Error::Runtime(format!(
                "the upsampled parts have frame {} where the ground truth has {frame}",
                m.0
            )));
        }
        let m: Vec<Vec3> = m.1.into_iter().map(Vec3::from_array).collect();
        let at = colliders.at(frame / job.fps);
        method.push(frame, &g, &m, Some(&at));
        let carried: Vec<Vec3> = rest.iter().map(|p| apply(&pose, *p)).collect();
        rigid.push(frame, &g, &carried, Some(&at));
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
