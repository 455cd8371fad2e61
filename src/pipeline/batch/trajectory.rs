//! The batch's trajectory baseline (`[batch.trajectory]`, 004's planned network): once every
//! item has its ground truth, train the head-motion → hair network on the first items and
//! score it on the last `held_out`, beside each held-out item's own methods.
//!
//! Writes `OUT/trajectory/`: `model.tnn`, one `<item>.tcache` of predicted frames per held-out
//! item, and `metrics.json`. Runs again only when its inputs change (the items' ground truths,
//! the config, the build): `inputs.sha256` keys it.

use std::path::{Path, PathBuf};

use burn::backend::{Autodiff, Flex};
use glam::{Vec2, Vec3};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tress_formats::tcache::{Codec, TcacheHeader, TcacheReader, TcacheWriter};

use crate::error::{Error, Result};
use crate::groom::Groom;
use crate::guides::project::project_out;
use crate::metrics::{Evaluator, Summary};
use crate::motion::Pose;
use crate::neural::trajectory::train::{Dataset, TrajectoryModel, train};
use crate::neural::trajectory::{HeadMotion, TrajectoryConfig, displacements, positions};
use crate::pipeline::engine::file_sha256;
use crate::pipeline::job::Job;
use crate::pipeline::stages::eval::{METRICS, MetricsFile};
use crate::pipeline::stages::prepare::{prepared, scene_around};
use crate::pipeline::stages::simulate::GT;

/// One held-out item's scores.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HeldOut {
    pub item: String,
    /// `trajectory` or `trajectory+projection` (the job's collision projection applied).
    pub key: String,
    pub trajectory: Summary,
    /// The item's own rows (its report's methods and the rest groom), for comparison.
    pub methods: Vec<(String, Summary)>,
}

/// `trajectory/metrics.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrajectoryMetrics {
    pub config: TrajectoryConfig,
    pub train_items: Vec<String>,
    pub train_frames: usize,
    pub first_loss: f64,
    pub last_loss: f64,
    pub train_seconds: f64,
    /// Seconds per predicted frame (all held-out frames, one batch per item).
    pub predict_seconds_per_frame: f64,
    pub held_out: Vec<HeldOut>,
    /// Means over the held-out items.
    pub mean_rmse: f64,
    pub mean_rmse_rest: Option<f64>,
}

fn item_name(j: &Job) -> String {
    j.output
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default()
}

/// Most weights of the network's last layer (hidden × 3 × vertices): 256 MB of f32, the
/// same again twice for Adam's moments.
const MAX_WEIGHTS: usize = 1 << 26;

/// Most values of training targets held in memory (frames × 3 × vertices): 1 GB of f32.
const MAX_TRAINING_VALUES: usize = 1 << 28;

/// An item's ground truth: its frames' poses, positions and frame numbers.
struct Truth {
    frames: Vec<f64>,
    poses: Vec<Pose>,
    points: Vec<Vec<[f32; 3]>>,
}

fn truth(out: &Path) -> Result<Truth> {
    let path = out.join(GT.path);
    let mut r = TcacheReader::open(&path).map_err(|e| {
        Error::Invalid(format!(
            "{}: {e} (the trajectory baseline needs every batch item simulated first)",
            path.display()
        ))
    })?;
    let mut t = Truth {
        frames: Vec::new(),
        poses: Vec::new(),
        points: Vec::new(),
    };
    for i in 0..r.len() {
        t.frames.push(r.frames[i].frame);
        t.poses.push(Pose::from(r.pose(i)?));
        t.points.push(r.frame(i)?);
    }
    Ok(t)
}

/// Trains, predicts and scores; returns the metrics (read back when nothing changed).
pub fn run(job: &Job, items: &[Job], quiet: bool) -> Result<Option<TrajectoryMetrics>> {
    let Some(cfg) = job.batch.as_ref().and_then(|b| b.trajectory.clone()) else {
        return Ok(None);
    };
    if items.len() <= cfg.held_out {
        let origin = job
            .file
            .as_ref()
            .map_or_else(|| job.name.clone(), |f| f.display().to_string());
        return Err(Error::Invalid(format!(
            "{origin}: batch.trajectory.held_out = {} leaves no item to train on ({} items)",
            cfg.held_out,
            items.len()
        )));
    }
    let dir = job.output.join("trajectory");
    std::fs::create_dir_all(&dir).map_err(|e| Error::Write {
        path: dir.clone(),
        source: e,
    })?;
    let key = inputs_key(job, items, &cfg)?;
    let key_path = dir.join("inputs.sha256");
    let metrics_path = dir.join("metrics.json");
    if let Some(m) = cached(&dir, items, &cfg, &key) {
        return Ok(Some(m));
    }
    let (train_items, held) = items.split_at(items.len() - cfg.held_out);
    let on = OneGroom::of(&items[0])?;
    let data = on.dataset(&cfg, train_items)?;
    if !quiet {
        eprintln!(
            "trajectory: training on {} frames of {} items, {} steps",
            data.len(),
            train_items.len(),
            cfg.steps
        );
    }
    let dev = Default::default();
    let every = (cfg.steps / 10).max(1);
    let model = train::<Autodiff<Flex>>(&cfg, &data, &dev, &mut |step, loss| {
        if !quiet && (step % every == 0 || step == cfg.steps) {
            eprintln!("trajectory: step {step}/{} loss {loss:.4}", cfg.steps);
        }
    })?;
    let names: Vec<String> = train_items.iter().map(item_name).collect();
    model.write(
        &dir.join("model.tnn"),
        serde_json::json!({"items": names, "frames": data.len()}),
    )?;
    let projection = job.guides.resolve_collisions;
    let mut held_out = Vec::new();
    let (mut predict_seconds, mut predicted) = (0.0, 0usize);
    for j in held {
        let (h, seconds, frames) = on.held_out(j, &cfg, &model, &dir, projection)?;
        held_out.push(h);
        predict_seconds += seconds;
        predicted += frames;
    }
    let mean_rmse = held_out.iter().map(|h| h.trajectory.rmse).sum::<f64>() / held_out.len().max(1) as f64;
    let metrics = with_item_rows(
        TrajectoryMetrics {
            config: cfg.clone(),
            train_items: names,
            train_frames: data.len(),
            first_loss: model.first_loss,
            last_loss: model.last_loss,
            train_seconds: model.seconds,
            predict_seconds_per_frame: predict_seconds / predicted.max(1) as f64,
            mean_rmse,
            mean_rmse_rest: None,
            held_out,
        },
        held,
    );
    let text = serde_json::to_string_pretty(&metrics).expect("json");
    tress_formats::atomic::write(&metrics_path, text.as_bytes())
        .map_err(|e| crate::error::output_error(&metrics_path, e))?;
    tress_formats::atomic::write(&key_path, key.as_bytes())
        .map_err(|e| crate::error::output_error(&key_path, e))?;
    Ok(Some(metrics))
}

/// The version of the held-out trajectory results: raise it when they change for the same
/// inputs (as a stage's [`crate::pipeline::engine::Info::version`]).
const RESULTS_VERSION: u32 = 1;

/// What the result depends on: its results version, the config, the job's projection and every
/// item's ground truth.
fn inputs_key(job: &Job, items: &[Job], cfg: &TrajectoryConfig) -> Result<String> {
    let mut h = Sha256::new();
    h.update(RESULTS_VERSION.to_le_bytes());
    h.update(serde_json::to_vec(cfg).expect("json"));
    // The held-out predictions get the job's collision projection.
    h.update([job.guides.resolve_collisions as u8]);
    for j in items {
        h.update(item_name(j));
        h.update(j.simulate.collision_margin.to_le_bytes());
        let gt = j.output.join(GT.path);
        if !gt.exists() {
            return Err(Error::Invalid(format!(
                "batch item {}: {} is missing: the trajectory baseline needs every batch item simulated first (run the items, then the summary)",
                item_name(j),
                gt.display()
            )));
        }
        h.update(file_sha256(&gt)?);
    }
    Ok(format!("{:x}", h.finalize()))
}

/// The metrics of an earlier run whose inputs hash to `key` and whose files are all there.
fn cached(dir: &Path, items: &[Job], cfg: &TrajectoryConfig, key: &str) -> Option<TrajectoryMetrics> {
    let outputs_exist = dir.join("model.tnn").exists()
        && held_items(items, cfg)
            .iter()
            .all(|j| dir.join(format!("{}.tcache", item_name(j))).exists());
    if outputs_exist
        && std::fs::read_to_string(dir.join("inputs.sha256")).is_ok_and(|k| k.trim() == key)
        && let Ok(text) = std::fs::read_to_string(dir.join("metrics.json"))
        && let Ok(m) = serde_json::from_str::<TrajectoryMetrics>(&text)
    {
        return Some(with_item_rows(m, held_items(items, cfg)));
    }
    None
}

/// The items' one groom (the first item's): its rest shape and the point head motion is
/// measured at.
struct OneGroom {
    groom: Groom,
    rest: Vec<Vec3>,
    point: glam::DVec3,
}

impl OneGroom {
    fn of(first: &Job) -> Result<OneGroom> {
        let groom = prepared(&first.output)?;
        let rest: Vec<Vec3> = groom.points().to_vec();
        let roots = groom.roots();
        let point = (roots.iter().copied().sum::<Vec3>() / roots.len().max(1) as f32).as_dvec3();
        Ok(OneGroom { groom, rest, point })
    }

    fn motion(&self, t: &Truth, fps: f64) -> HeadMotion {
        HeadMotion {
            poses: t.poses.clone(),
            point: self.point,
            fps,
        }
    }

    /// An item's ground truth, on this groom.
    fn truth_of(&self, j: &Job) -> Result<Truth> {
        let t = truth(&j.output)?;
        if let Some(p) = t.points.first()
            && p.len() != self.rest.len()
        {
            return Err(Error::Invalid(format!(
                "batch item {}: {} vertices where the first item has {}: the trajectory baseline needs one groom",
                item_name(j),
                p.len(),
                self.rest.len()
            )));
        }
        Ok(t)
    }

    /// The training items' frames: head-motion features → displacements from the carried
    /// rest groom. The network's last layer and the training set are bounded before anything
    /// is allocated.
    fn dataset(&self, cfg: &TrajectoryConfig, train_items: &[Job]) -> Result<Dataset> {
        let rest = &self.rest;
        let outputs = 3 * rest.len();
        if cfg.hidden.saturating_mul(outputs) > MAX_WEIGHTS {
            return Err(Error::Invalid(format!(
                "batch.trajectory: {} vertices × hidden {} is a last layer of {} weights, over the limit of {MAX_WEIGHTS}: the baseline predicts every vertex of a small groom (use fewer strands or points, or a smaller hidden)",
                rest.len(),
                cfg.hidden,
                cfg.hidden.saturating_mul(outputs)
            )));
        }
        let mut data = Dataset::new(cfg.inputs(), outputs);
        for j in train_items {
            let t = self.truth_of(j)?;
            if (data.len() + t.points.len()).saturating_mul(outputs) > MAX_TRAINING_VALUES {
                return Err(Error::Invalid(format!(
                    "batch.trajectory: the training items' frames × {} vertices exceed {MAX_TRAINING_VALUES} values (at item {}): train on fewer or shorter items",
                    rest.len(),
                    item_name(j)
                )));
            }
            let m = self.motion(&t, j.fps);
            for i in 0..t.points.len() {
                data.push(
                    &m.features(i, cfg),
                    &displacements(&t.poses[i], rest, &t.points[i]),
                );
            }
        }
        Ok(data)
    }

    /// A held-out item predicted (`<item>.tcache`, with the job's collision projection when
    /// `projection`) and scored; with the prediction's seconds and frames.
    fn held_out(
        &self,
        j: &Job,
        cfg: &TrajectoryConfig,
        model: &TrajectoryModel<Flex>,
        dir: &Path,
        projection: bool,
    ) -> Result<(HeldOut, f64, usize)> {
        let (groom, rest) = (&self.groom, &self.rest);
        let t = self.truth_of(j)?;
        let m = self.motion(&t, j.fps);
        let features: Vec<f32> = (0..t.points.len()).flat_map(|i| m.features(i, cfg)).collect();
        let clock = std::time::Instant::now();
        let d = model.predict(&features, &Default::default());
        let seconds = clock.elapsed().as_secs_f64();
        let colliders = scene_around(j, &j.output, groom.clone())?.colliders;
        let uvs: Vec<Vec2> = crate::guides::root_uvs(groom);
        let counts = groom.counts().to_vec();
        let mut e = Evaluator::new(&counts).with_nonlocal(&uvs);
        let path = dir.join(format!("{}.tcache", item_name(j)));
        let header = TcacheHeader {
            fps: j.fps,
            codec: Codec::Lossless,
            keyframe_interval: 1,
            rest: groom.to_strands(),
        };
        let mut w =
            TcacheWriter::create(&path, header, 3).map_err(|e| crate::error::output_error(&path, e))?;
        for (i, frame_d) in d.chunks_exact(3 * rest.len()).enumerate() {
            let at = colliders.at(t.frames[i] / j.fps);
            let mut p: Vec<Vec3> = positions(&t.poses[i], rest, frame_d)
                .into_iter()
                .map(Vec3::from_array)
                .collect();
            if projection {
                // The job's correction of every method: rest segment lengths, out of the solids.
                project_out(
                    &mut p,
                    rest,
                    &counts,
                    &|_| false,
                    &at,
                    j.simulate.collision_margin,
                );
            }
            let x: Vec<[f32; 3]> = p.iter().map(|v| v.to_array()).collect();
            w.write_frame(t.frames[i], &x, Some(t.poses[i].into()))?;
            let g: Vec<Vec3> = t.points[i].iter().map(|p| Vec3::from_array(*p)).collect();
            e.push(t.frames[i], &g, &p, Some(&at));
        }
        w.finish()?;
        let h = HeldOut {
            item: item_name(j),
            key: if projection {
                "trajectory+projection"
            } else {
                "trajectory"
            }
            .into(),
            trajectory: e.summary(),
            methods: Vec::new(),
        };
        Ok((h, seconds, t.points.len()))
    }
}

fn held_items<'a>(items: &'a [Job], cfg: &TrajectoryConfig) -> &'a [Job] {
    &items[items.len() - cfg.held_out..]
}

/// The held-out items' own rows (their reports' methods, oracles left out, and the rest
/// groom), read afresh: they change when the items' methods do, not the baseline.
fn with_item_rows(mut m: TrajectoryMetrics, held: &[Job]) -> TrajectoryMetrics {
    for (h, j) in m.held_out.iter_mut().zip(held) {
        h.methods = std::fs::read_to_string(j.output.join(METRICS.path))
            .ok()
            .and_then(|s| serde_json::from_str::<MetricsFile>(&s).ok())
            .map(|f| {
                f.methods
                    .into_iter()
                    .filter(|m| !m.oracle)
                    .map(|m| {
                        // The row with its correction, as the trajectory row names its own.
                        let key = if m.key.contains('+') || m.correction == "none" {
                            m.key
                        } else {
                            format!("{}+{}", m.key, m.correction)
                        };
                        (key, m.summary)
                    })
                    .collect()
            })
            .unwrap_or_default();
    }
    let rest: Vec<f64> = m
        .held_out
        .iter()
        .filter_map(|h| h.methods.iter().find(|(k, _)| k == "rest").map(|(_, s)| s.rmse))
        .collect();
    m.mean_rmse_rest = (rest.len() == m.held_out.len() && !rest.is_empty())
        .then(|| rest.iter().sum::<f64>() / rest.len() as f64);
    m
}

/// The batch summary's section on the baseline.
pub fn markdown(m: &TrajectoryMetrics) -> String {
    let mut s = format!(
        "\n## Trajectory baseline (head motion → hair, no guides)\n\n\
         Trained on {} items ({} frames, {} steps, loss {:.4} → {:.4}, {:.1} s); scored on the {} held-out items below, \
         {:.3} ms per predicted frame. Files: [model](trajectory/model.tnn), `trajectory/<item>.tcache`.\n\n",
        m.train_items.len(),
        m.train_frames,
        m.config.steps,
        m.first_loss,
        m.last_loss,
        m.train_seconds,
        m.held_out.len(),
        1e3 * m.predict_seconds_per_frame
    );
    let mut rows = Vec::new();
    for h in &m.held_out {
        rows.push((format!("{}: {}", h.item, h.key), h.trajectory, None));
        for (k, summary) in &h.methods {
            rows.push((format!("{}: {k}", h.item), *summary, None));
        }
    }
    s.push_str(&crate::metrics::table::markdown(&rows));
    s.push_str(&format!(
        "\nMean RMSE over the held-out items: trajectory {:.3} cm{}.\n",
        m.mean_rmse,
        m.mean_rmse_rest
            .map(|r| format!(", rest groom carried by the head {r:.3} cm"))
            .unwrap_or_default()
    ));
    s
}

/// The trajectory section's files, for `output_file` lines.
pub fn files(job: &Job) -> Vec<PathBuf> {
    let dir = job.output.join("trajectory");
    ["model.tnn", "metrics.json"]
        .iter()
        .map(|f| dir.join(f))
        .filter(|p| p.exists())
        .collect()
}
