//! `upsample`: the whole groom of a chunk of frames from the guides, every method row
//! (`parts/<row>.A-B.tcache`), and what each cost (`parts/times.A-B.json`). Methods that keep
//! state between frames replay the frames before the chunk first, so any chunking gives the
//! same frames. Also how later stages read the parts back.

use serde::{Deserialize, Serialize};
use tress_formats::tcache::{HeadPose, TcacheReader};

use super::{ablate, displace, drape, fit, guide_sim, guides, hairmesh, prepare, train, two_way};
use crate::cache::{CacheInfo, FrameSink, SinkOptions, create_sink};
use crate::error::{Error, Result};
use crate::pipeline::engine::{Chunk, Ctx, Info, Inputs, OutputFile, Stage};
use crate::pipeline::job::{Job, MethodRow};
use crate::pipeline::keys::{RowsKey, SceneKey, motion_files};
use crate::pipeline::progress::FrameProgress;
use crate::pipeline::rows;
use crate::upsample::{Method, UpsampleTimes};

pub const NAME: &str = "upsample";

/// A row's upsampled frames `a`–`b`.
pub fn part(row: &MethodRow, a: i64, b: i64) -> String {
    format!("parts/{}.{a}-{b}.tcache", row.stem())
}

/// What each row's upsampling of frames `a`–`b` cost.
pub fn times(a: i64, b: i64) -> String {
    format!("parts/times.{a}-{b}.json")
}

pub struct Upsample;

#[derive(Serialize)]
struct Key<'a> {
    rows: RowsKey<'a>,
    scene: SceneKey<'a>,
    range: [i64; 2],
}

impl Stage for Upsample {
    fn info(&self) -> Info {
        // 2: the collision clean-up's second walk only on strands the first one pushed (the
        // others' points move by rounding).
        Info::new(
            NAME,
            "The whole groom from the guides, every method (per chunk of frames)",
        )
        .chunked()
        .version(2)
    }

    fn upstream(&self, _: &Job) -> Vec<&'static str> {
        vec![
            prepare::NAME,
            guides::NAME,
            guide_sim::NAME,
            two_way::NAME,
            hairmesh::NAME,
            drape::NAME,
            fit::NAME,
            train::NAME,
            displace::NAME,
            ablate::NAME,
        ]
    }

    fn inputs(&self, cx: &Ctx, chunk: Option<Chunk>) -> Result<Inputs> {
        let j = cx.job;
        let (a, b) = cx.frames(chunk);
        let mut inputs = Inputs::new(&Key {
            rows: RowsKey::of(j),
            scene: SceneKey::of(j),
            range: [a, b],
        })
        .reads(prepare::outputs(cx)?)
        .reads([
            cx.input(guides::GUIDES)?.clone(),
            cx.input(guide_sim::GUIDE_CACHE)?.clone(),
        ])
        .reads(rows::model_files(cx)?);
        if two_way::TwoWayStage.applies(j) {
            inputs = inputs.reads(cx.record(two_way::NAME)?.outputs.clone());
        }
        if hairmesh::HairMeshStage.applies(j) {
            inputs = inputs.reads(cx.record(hairmesh::NAME)?.outputs.clone());
        }
        if drape::DrapeStage.applies(j) {
            inputs = inputs.reads(drape::chunks(cx)?);
        }
        Ok(inputs.reads(motion_files(cx, &j.motion)?))
    }

    fn run(&self, cx: &Ctx, chunk: Option<Chunk>) -> Result<Vec<String>> {
        let job = cx.job;
        let groom = prepare::groom(cx)?;
        let guides = guides::indices(cx)?;
        let (a, b) = cx.frames(chunk);
        cx.create_dir("parts")?;
        let info = CacheInfo {
            topology: groom.to_strands(),
            fps: job.fps,
            frames: Vec::new(),
        };
        let mut names = Vec::new();
        let mut all_times = Vec::new();
        for row in &job.rows {
            let name = part(row, a, b);
            let sink = create_sink(&cx.out.join(&name), &info, a as f64, &SinkOptions::default())?;
            let mut up = rows::upsampler(cx, groom, &guides, row, vec![sink])?;
            let mut progress = FrameProgress::new(
                &format!("upsample {}", row.key),
                (b - a + 1).max(0) as u64,
                cx.quiet,
            );
            'caches: for cache in guide_caches(cx, row)? {
                let mut r = TcacheReader::open(cx.out.join(cache))?;
                for i in 0..r.len() {
                    let frame = r.frames[i].frame;
                    if frame > b as f64 {
                        break 'caches;
                    }
                    if (a as f64..=b as f64).contains(&frame) {
                        let p = r.frame(i)?;
                        up.write(frame, &p, Some(r.pose(i)?))?;
                        progress.tick(frame);
                    } else if up.stateful() {
                        let p = r.frame(i)?;
                        up.upsample(frame, &p, &r.pose(i)?.into())?;
                    }
                }
            }
            progress.finish();
            let mut rt = RowTimes::new(&row.key, &up.times());
            rt.diagnostics = up.diagnostics();
            all_times.push(rt);
            Box::new(up).finish()?;
            names.push(name);
        }
        names.push(cx.write_json(&times(a, b), &all_times)?);
        Ok(names)
    }
}

/// The guide caches a row's upsampling reads, in frame order.
fn guide_caches(cx: &Ctx, row: &MethodRow) -> Result<Vec<String>> {
    Ok(match row.method {
        Method::Hairmesh => vec![hairmesh::CACHE.path.into()],
        Method::Drape => drape::chunks(cx)?
            .into_iter()
            .map(|f| f.path)
            .filter(|p| p.ends_with(".tcache"))
            .collect(),
        _ if row.two_way => vec![two_way::guide_cache(row)],
        _ => vec![guide_sim::GUIDE_CACHE.path.into()],
    })
}

/// What one row's upsampling of a chunk cost (`parts/times.A-B.json`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RowTimes {
    pub key: String,
    pub frames: u64,
    /// Seconds: guide graph + grouping + assignment, interpolation, position-based correction,
    /// the push out of the props (absent from files written before it existed).
    pub grouping: f64,
    pub interpolation: f64,
    pub projection: f64,
    #[serde(default)]
    pub contact: f64,
    pub transform: f64,
    /// The method's own counts (adaptive: pairs split, set switches).
    #[serde(default)]
    pub diagnostics: serde_json::Value,
}

impl RowTimes {
    fn new(key: &str, t: &UpsampleTimes) -> RowTimes {
        RowTimes {
            key: key.to_string(),
            frames: t.frames,
            grouping: t.interp.grouping.as_secs_f64(),
            interpolation: t.interp.interpolation.as_secs_f64(),
            projection: t.projection.as_secs_f64(),
            contact: t.contact.as_secs_f64(),
            transform: t.transform.as_secs_f64(),
            diagnostics: serde_json::Value::Null,
        }
    }
}

/// Every file of the upsampled parts covering the whole frame range, in frame order.
pub fn parts(cx: &Ctx) -> Result<Vec<OutputFile>> {
    cx.chunks(NAME, "upsampled")
}

/// The upsampled parts of one method row, in frame order.
pub fn parts_of(cx: &Ctx, row: &MethodRow) -> Result<Vec<OutputFile>> {
    let prefix = format!("parts/{}.", row.stem());
    Ok(parts(cx)?
        .into_iter()
        .filter(|p| p.path.starts_with(&prefix) && p.path.ends_with(".tcache"))
        .collect())
}

/// Frames of a row's upsampled parts, in order, with their head poses.
pub fn for_each_frame(
    cx: &Ctx,
    row: &MethodRow,
    mut f: impl FnMut(f64, &[[f32; 3]], HeadPose) -> Result<()>,
) -> Result<()> {
    for part in parts_of(cx, row)? {
        let mut r = TcacheReader::open(cx.out.join(&part.path))?;
        for i in 0..r.len() {
            let p = r.frame(i)?;
            f(r.frames[i].frame, &p, r.pose(i)?)?;
        }
    }
    Ok(())
}

/// Some frames of the upsampled parts, each found by seeking in its part (no decoding of the
/// frames between).
pub fn frames(cx: &Ctx, row: &MethodRow, frames: &[i64]) -> Result<Vec<Vec<[f32; 3]>>> {
    let mut readers = Vec::new();
    for part in parts_of(cx, row)? {
        readers.push(TcacheReader::open(cx.out.join(&part.path))?);
    }
    frames
        .iter()
        .map(|&f| {
            for r in readers.iter_mut() {
                if let Some(i) = r.find(f as f64) {
                    return Ok(r.frame(i)?);
                }
            }
            Err(Error::Runtime(format!("the upsampled parts miss frame {f}")))
        })
        .collect()
}
