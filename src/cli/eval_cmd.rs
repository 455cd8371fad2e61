//! `tress eval GT PRED [--head sphere|none|MESH] [--json]`: errors of a cache against the
//! ground truth, per frame and overall.

use std::path::PathBuf;

use clap::Args;
use glam::Vec3;
use serde_json::json;

use crate::cache::open_source;
use crate::error::{Error, Result};
use crate::groom::Transform;
use crate::metrics::Evaluator;
use crate::metrics::table::markdown;
use crate::motion::fit::root_pose;
use crate::motion::{HeadTrack, Pose};
use crate::render::preview::{head_colliders, roots};
use crate::scene::head_from_spec;

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Ground-truth cache.
    pub gt: PathBuf,
    /// Predicted cache (same strands, same frames).
    pub pred: PathBuf,
    /// Head for penetration: sphere (fitted to the ground truth's first-frame roots and moved
    /// with them), none, or a mesh / .sdf in the first frame's pose.
    #[arg(long, default_value = "sphere")]
    pub head: String,
    #[command(flatten)]
    pub space: super::InputSpace,
    /// PLY sequences: frames per second (PLY does not store one).
    #[arg(long, default_value_t = 24.0)]
    pub fps: f64,
    /// Also list every frame.
    #[arg(long)]
    pub frames: bool,
    /// Print the result as JSON on standard output (errors too: {"error", "exit_code"}).
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: &EvalArgs) -> Result<()> {
    let mut gt = open_source(&a.gt, None, a.fps)?;
    let mut pred = open_source(&a.pred, None, a.fps)?;
    let (gi, pi) = (gt.info().clone(), pred.info().clone());
    if gi.topology.counts != pi.topology.counts {
        return Err(Error::Invalid(format!(
            "{} and {} hold different strands",
            a.gt.display(),
            a.pred.display()
        )));
    }
    if gi.frames != pi.frames {
        return Err(Error::Invalid(format!(
            "{} and {} hold different frames",
            a.gt.display(),
            a.pred.display()
        )));
    }
    let counts = gi.topology.counts.clone();
    // The head follows the ground truth's roots (a rigid fit per frame to the first frame's).
    let first: Vec<Vec3> = gt.read(0)?.into_iter().map(Vec3::from_array).collect();
    let rest_roots = roots(&first, &counts);
    let shape = head_from_spec(
        &a.head,
        &rest_roots,
        &Transform {
            scale: a.space.scale,
            up: a.space.up,
        },
    )?;
    let mut colliders = shape.map(|s| head_colliders(s, &[Pose::IDENTITY]));
    // Root UVs for the non-local interactions (000 §5.7): 000 App. A's map of the ground
    // truth's first-frame roots around a sphere fitted to them.
    let centre = crate::groom::scalp_center(&rest_roots);
    let uvs: Vec<glam::Vec2> = rest_roots
        .iter()
        .map(|r| crate::groom::scalp_uv(*r, centre))
        .collect();
    let mut e = Evaluator::new(&counts).with_nonlocal(&uvs);
    for i in 0..gi.frames.len() {
        let g: Vec<Vec3> = gt.read(i)?.into_iter().map(Vec3::from_array).collect();
        let p: Vec<Vec3> = pred.read(i)?.into_iter().map(Vec3::from_array).collect();
        let at = colliders.as_mut().map(|c| {
            c.head = HeadTrack::still(root_pose(&rest_roots, &roots(&g, &counts)));
            c.at(0.0)
        });
        e.push(gi.frames[i], &g, &p, at.as_ref());
    }
    let s = e.summary();
    if a.json {
        let doc = json!({"gt": a.gt, "pred": a.pred, "summary": s, "frames": if a.frames { Some(&e.frames) } else { None }});
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
        return Ok(());
    }
    println!("{}", markdown(&[(a.pred.display().to_string(), s, None)]));
    if a.frames {
        println!(
            "| frame | RMSE | max | length error | tangent (°) | penetrating | jitter |\n| --- | --- | --- | --- | --- | --- | --- |"
        );
        for f in &e.frames {
            println!(
                "| {} | {:.4} | {:.4} | {:.3} % | {:.2} | {:.3} % | {:.4} |",
                f.frame,
                f.rmse,
                f.max_error,
                100.0 * f.length_error_mean,
                f.tangent_error_deg,
                100.0 * f.penetration_fraction,
                f.jitter
            );
        }
    }
    Ok(())
}
