//! `eval`: every method row against the ground truth, frame by frame; per method an oracle row (the same upsampler fed the ground truth's own guide strands, so interpolation
//! error shows apart from guide-dynamics error); and a no-dynamics baseline (the rest groom
//! carried by the head). Written to `metrics.json`.

use glam::Vec3;
use serde::{Deserialize, Serialize};
use tress_formats::tcache::TcacheReader;

use super::scoring::{scoring_inputs, scoring_upstream};
use super::{guides, prepare, simulate, upsample};
use crate::error::{Error, Result};
use crate::metrics::{Evaluator, FrameMetrics, Summary};
use crate::motion::Pose;
use crate::pipeline::engine::{Artefact, Chunk, Ctx, Info, Inputs, Stage};
use crate::pipeline::job::{Job, MethodRow};
use crate::pipeline::rows;

pub const NAME: &str = "eval";
/// Every row's metrics.
pub const METRICS: Artefact = Artefact::new(NAME, "metrics.json");

pub struct Eval;

#[derive(Serialize)]
struct Key {
    oracle: bool,
}

impl Stage for Eval {
    fn info(&self) -> Info {
        // 2: upsample 2's results.
        Info::new(NAME, "Metrics against the ground truth").version(2)
    }

    fn upstream(&self, job: &Job) -> Vec<&'static str> {
        scoring_upstream(job)
    }

    fn inputs(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Inputs> {
        scoring_inputs(
            cx,
            Key {
                oracle: cx.job.guides.oracle,
            },
        )
    }

    fn run(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Vec<String>> {
        evaluate(cx)
    }
}

/// One row's metrics.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MethodMetrics {
    /// `idw`, `nearest`, `static`, `adaptive`, or `rest` for the baseline.
    pub method: String,
    /// The row as the job lists it (`adaptive`, `static+projection`…); `rest` for the baseline.
    pub key: String,
    /// `two_way`, `projection`, `two_way+projection` or `none`.
    pub correction: String,
    /// Fed the ground truth's own guides.
    pub oracle: bool,
    pub name: String,
    pub summary: Summary,
    pub frames: Vec<FrameMetrics>,
}

impl MethodMetrics {
    /// A job row's metrics once its evaluator has seen every frame.
    fn of(row: &MethodRow, oracle: bool, name: String, e: Evaluator) -> Self {
        MethodMetrics {
            method: row.method.id().into(),
            key: row.key.clone(),
            correction: row.correction(),
            oracle,
            name,
            summary: e.summary(),
            frames: e.frames,
        }
    }
}

/// What `metrics.json` holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MetricsFile {
    pub strands: usize,
    pub vertices: usize,
    pub methods: Vec<MethodMetrics>,
}

/// The oracle rows: each method once, with the job's default correction but no two-way
/// coupling (the ground truth's guides are what they are).
fn oracle_rows(rows: &[MethodRow]) -> Vec<MethodRow> {
    let mut out: Vec<MethodRow> = Vec::new();
    // The hair mesh and the drape have no guides to feed the ground truth's in place of.
    // Nor do the loss ablations (000 Table 1 compares them on simulated guides).
    for r in rows
        .iter()
        .filter(|r| !r.method.without_guides() && r.loss.is_none())
    {
        if out.iter().any(|o| {
            o.method == r.method
                && o.projection == r.projection
                && o.contact == r.contact
                && o.spread == r.spread
                && o.no_displacement == r.no_displacement
        }) {
            continue;
        }
        let mut oracle = MethodRow {
            key: String::new(),
            method: r.method,
            two_way: false,
            projection: r.projection,
            contact: r.contact,
            spread: r.spread,
            no_displacement: r.no_displacement,
            loss: None,
        };
        oracle.key = format!(
            "{}+{}{}",
            r.method.id(),
            oracle.correction(),
            if r.no_displacement { "~no_displacement" } else { "" }
        );
        out.push(oracle);
    }
    out
}

fn evaluate(cx: &Ctx) -> Result<Vec<String>> {
    let job = cx.job;
    let scene = prepare::scene(cx)?;
    let groom = &scene.groom.groom;
    let counts = groom.counts().to_vec();
    let rest = groom.points().to_vec();
    // Root UVs for the non-local interactions (000 §5.7).
    let uvs = crate::guides::root_uvs(groom);
    let colliders = &scene.colliders;
    // The guides actually chosen (sparse coding and the neural grid choose their own count).
    let guide_ids = guides::indices(cx)?;
    let guides = guide_ids.len();
    let mut methods = Vec::new();
    // The rows, from their upsampled parts. Parts and ground truth hold the same frames in order.
    for row in &job.rows {
        let mut gt = TcacheReader::open(cx.path(simulate::GT))?;
        let mut e = Evaluator::new(&counts).with_nonlocal(&uvs);
        let mut i = 0usize;
        upsample::for_each_frame(cx, row, |frame, m, _| {
            if i >= gt.len() || gt.frames[i].frame != frame {
                return Err(Error::Runtime(format!(
                    "the upsampled parts of {} have frame {frame} where the ground truth does not",
                    row.key
                )));
            }
            let g: Vec<Vec3> = gt.frame(i)?.into_iter().map(Vec3::from_array).collect();
            i += 1;
            let m: Vec<Vec3> = m.iter().map(|p| Vec3::from_array(*p)).collect();
            e.push(frame, &g, &m, Some(&colliders.at(frame / job.fps)));
            Ok(())
        })?;
        if i != gt.len() {
            return Err(Error::Runtime(format!(
                "the upsampled parts of {} end before frame {}",
                row.key, gt.frames[i].frame
            )));
        }
        methods.push(MethodMetrics::of(row, false, row.name(guides), e));
    }
    // Oracle rows: the ground truth's guides through the same upsampler.
    if job.guides.oracle {
        let layout = crate::guides::GuideLayout::new(groom, &guide_ids)?;
        for row in oracle_rows(&job.rows) {
            let mut up = rows::upsampler(cx, groom, &guide_ids, &row, Vec::new())?;
            let mut gt = TcacheReader::open(cx.path(simulate::GT))?;
            let mut e = Evaluator::new(&counts).with_nonlocal(&uvs);
            for i in 0..gt.len() {
                let frame = gt.frames[i].frame;
                let g: Vec<Vec3> = gt.frame(i)?.into_iter().map(Vec3::from_array).collect();
                let pose = Pose::from(gt.pose(i)?);
                let guide_points: Vec<[f32; 3]> = layout.extract(&g).iter().map(|p| p.to_array()).collect();
                let m = up.upsample(frame, &guide_points, &pose)?;
                e.push(frame, &g, m, Some(&colliders.at(frame / job.fps)));
            }
            let name = format!("{} — oracle (ground-truth guides)", row.name(guides));
            methods.push(MethodMetrics::of(&row, true, name, e));
        }
    }
    // The rest groom carried by the head.
    let mut gt = TcacheReader::open(cx.path(simulate::GT))?;
    let mut rigid = Evaluator::new(&counts).with_nonlocal(&uvs);
    for i in 0..gt.len() {
        let frame = gt.frames[i].frame;
        let g: Vec<Vec3> = gt.frame(i)?.into_iter().map(Vec3::from_array).collect();
        let pose = Pose::from(gt.pose(i)?);
        let carried: Vec<Vec3> = rest.iter().map(|p| pose.apply_f32(*p)).collect();
        rigid.push(frame, &g, &carried, Some(&colliders.at(frame / job.fps)));
    }
    methods.push(MethodMetrics {
        method: "rest".into(),
        key: "rest".into(),
        correction: "none".into(),
        oracle: false,
        name: "rest groom carried by the head (no dynamics)".into(),
        summary: rigid.summary(),
        frames: rigid.frames,
    });
    let file = MetricsFile {
        strands: counts.len(),
        vertices: rest.len(),
        methods,
    };
    Ok(vec![cx.write_json(METRICS.path, &file)?])
}
