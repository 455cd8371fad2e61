//! `tress bench shot`: a production-size shot end to end (here, above the engine it runs; the
//! other benchmarks are in `crate::bench`), through the same engine and stages a
//! job runs: a 150K-strand groom on the procedural head under the walk, 400 guides simulated,
//! upsampled by IDW and by static skinning (fitted on a training simulation of the whole
//! groom, the cost a TD pays once per groom) and written to Alembic; then the shipped general
//! neural model on its own uv-grid guides (no training, no fit) to a second Alembic. No ground
//! truth: a production shot simulates only guides. Each stage's seconds and its peak resident
//! memory (Linux: `VmHWM`, reset before each stage through `/proc/self/clear_refs`), the whole
//! shot's seconds and peak.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::pipeline::{Job, RunOptions, run_with};

/// The size of the shot.
#[derive(Clone, Debug, Serialize)]
pub struct ShotSize {
    pub strands: usize,
    pub points: usize,
    pub guides: usize,
    pub frames: usize,
    /// Frames of the whole-groom training simulation the skinning is fitted on.
    pub training_frames: usize,
    pub threads: usize,
    /// The jobs run, in order: `skinning` (IDW and static skinning, with the training
    /// simulation their fit needs) and `neural` (the general model).
    pub jobs: Vec<ShotJob>,
}

/// One of the shot's two jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ShotJob {
    /// IDW and static skinning from 400 guides, fitted on a whole-groom training simulation.
    Skinning,
    /// The shipped general neural model on its own guides: no training, no fit.
    Neural,
}

#[derive(Clone, Debug, Serialize)]
pub struct StageFigure {
    /// `skinning` (IDW and static skinning from 400 guides) or `neural` (the general model).
    pub job: &'static str,
    pub stage: String,
    pub seconds: f64,
    /// Peak resident memory during the stage (GiB; the process's peak so far where the peak
    /// cannot be reset).
    pub peak_memory_gib: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ShotBench {
    #[serde(flatten)]
    pub size: ShotSize,
    /// The whole shot, every stage of the jobs run.
    pub seconds: f64,
    pub peak_memory_gib: f64,
    /// Whether each stage's peak was measured on its own (the kernel let the peak be reset).
    pub per_stage_peaks: bool,
    pub stages: Vec<StageFigure>,
    /// Bytes of each written Alembic cache.
    pub abc_bytes: Vec<(String, u64)>,
}

/// The production stages of each job, in running order (no ground truth, previews or scores).
const SKINNING_STAGES: &[&str] = &[
    "prepare",
    "guides",
    "train_sim",
    "fit",
    "guide_sim",
    "upsample",
    "write",
];
const NEURAL_STAGES: &[&str] = &["prepare", "guides", "guide_sim", "upsample", "write"];

fn job_text(s: &ShotSize, neural: bool) -> String {
    let mut t = format!(
        "name = \"shot\"\noutput = \"out\"\nframes = \"1-{}\"\n\
         [groom]\npreset = \"straight\"\nstrands = {}\npoints = {}\n\
         [head]\ncollider = \"procedural\"\n[motion]\npreset = \"walk\"\n\
         [outputs]\nabc = true\n",
        s.frames, s.strands, s.points
    );
    if neural {
        t.push_str("[guides]\nmethods = [\"neural\"]\n[neural]\nmodel = \"general\"\n");
    } else {
        t.push_str(&format!(
            "[guides]\ncount = {}\nmethods = [\"static\", \"idw\"]\n[training]\nframes = \"1-{}\"\n",
            s.guides, s.training_frames
        ));
    }
    t
}

/// Peak resident memory since the last reset, in GiB (Linux), or 0.
fn peak_gib() -> f64 {
    crate::bench::sim::peak_rss_mb().map_or(0.0, |mb| mb / 1024.0)
}

/// Runs the shot in `dir` (kept: the caches are there) with `size.threads` threads;
/// `progress` gets a line per stage.
pub fn run(size: &ShotSize, dir: &Path, progress: &mut (dyn FnMut(&str) + Send)) -> Result<ShotBench> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(size.threads.max(1))
        .build()
        .map_err(|e| Error::Runtime(format!("thread pool: {e}")))?;
    pool.install(|| {
        let start = Instant::now();
        let mut stages = Vec::new();
        let mut per_stage_peaks = true;
        let mut overall: f64 = 0.0;
        let mut abc_bytes = Vec::new();
        // A fresh run of each job: results of an earlier bench are not reused.
        for name in ["skinning", "neural"] {
            let old = dir.join(name);
            if old.join("shot.toml").is_file() {
                std::fs::remove_dir_all(&old).map_err(|e| Error::Write {
                    path: old.clone(),
                    source: e,
                })?;
            }
        }
        for job in &size.jobs {
            let (name, neural, list) = match job {
                ShotJob::Skinning => ("skinning", false, SKINNING_STAGES),
                ShotJob::Neural => ("neural", true, NEURAL_STAGES),
            };
            let folder = dir.join(name);
            std::fs::create_dir_all(&folder).map_err(|e| Error::Write {
                path: folder.clone(),
                source: e,
            })?;
            let file = folder.join("shot.toml");
            tress_formats::atomic::write(&file, job_text(size, neural).as_bytes())
                .map_err(|e| crate::error::output_error(&file, e))?;
            let job = Job::load(&file)?;
            for stage in list {
                per_stage_peaks &= crate::bench::sim::reset_peak_rss();
                let report = run_with(
                    &job,
                    &RunOptions {
                        only: vec![stage.to_string()],
                        chunk: None,
                        quiet: true,
                        no_wait: false,
                    },
                    &mut |_| {},
                )?;
                let seconds: f64 = report.stages.iter().map(|s| s.seconds).sum();
                let peak = peak_gib();
                overall = overall.max(peak);
                progress(&format!(
                    "{name:<9} {stage:<10} {seconds:>8.1} s  peak {peak:.2} GiB"
                ));
                stages.push(StageFigure {
                    job: name,
                    stage: stage.to_string(),
                    seconds,
                    peak_memory_gib: peak,
                });
            }
            let abc: PathBuf = job.output.join("hair.abc");
            abc_bytes.push((
                format!("{name}/hair.abc"),
                std::fs::metadata(&abc).map(|m| m.len()).unwrap_or(0),
            ));
        }
        Ok(ShotBench {
            size: size.clone(),
            seconds: start.elapsed().as_secs_f64(),
            peak_memory_gib: overall,
            per_stage_peaks,
            stages,
            abc_bytes,
        })
    })
}
