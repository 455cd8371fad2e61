//! The shared state of a job run: the job, its output folder, the records of the stages that
//! are done (this run's, or an earlier run's whose inputs have not changed), the stages this
//! run has passed so far (for the report) and the job's scene, built once and shared.

use std::cell::{OnceCell, RefCell};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Artefact, Chunk, OutputFile, Record, StageStatus};
use crate::error::{Error, Result};
use crate::pipeline::job::Job;

/// Shared state of a run.
pub struct Ctx<'a> {
    pub job: &'a Job,
    pub out: PathBuf,
    pub quiet: bool,
    pub(super) records: BTreeMap<(&'static str, Option<Chunk>), Record>,
    /// The stages this run has passed so far, in order.
    pub done: Vec<StageStatus>,
    /// The job's scene (prepared groom, head, colliders), built on first use after the
    /// prepare stage (`stages::prepare::scene`).
    pub scene: OnceCell<crate::scene::Scene>,
    /// The prepared groom alone, for stages that need no head or motion
    /// (`stages::prepare::groom`), read once.
    pub groom: OnceCell<crate::groom::Groom>,
    /// Content hashes of files outside the output folder, hashed once a run (several stages'
    /// keys read the same motion and body files, and each key is computed twice).
    hashes: RefCell<BTreeMap<PathBuf, String>>,
}

impl<'a> Ctx<'a> {
    pub fn new(job: &'a Job, quiet: bool) -> Ctx<'a> {
        Ctx {
            job,
            out: job.output.clone(),
            quiet,
            records: BTreeMap::new(),
            done: Vec::new(),
            scene: OnceCell::new(),
            groom: OnceCell::new(),
            hashes: RefCell::new(BTreeMap::new()),
        }
    }

    /// The record of a finished stage (this run's, or an earlier run's that is current).
    pub fn record(&self, stage: &str) -> Result<&Record> {
        self.records
            .iter()
            .find(|((s, c), _)| *s == stage && c.is_none())
            .map(|(_, r)| r)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "stage {stage} has not run with the current settings: run without --only, or add --only {stage}"
                ))
            })
    }

    /// SHA-256 of the content of `path`, a file outside the output folder that does not change
    /// during the run: hashed on first use.
    pub fn external_sha256(&self, path: &Path) -> Result<String> {
        if let Some(h) = self.hashes.borrow().get(path) {
            return Ok(h.clone());
        }
        let h = super::file_sha256(path)?;
        self.hashes.borrow_mut().insert(path.to_path_buf(), h.clone());
        Ok(h)
    }

    /// The recorded upstream file `a`.
    pub fn input(&self, a: Artefact) -> Result<&OutputFile> {
        self.record(a.stage)?.output(a.path)
    }

    /// The full path of an artefact in the output folder.
    pub fn path(&self, a: Artefact) -> PathBuf {
        self.out.join(a.path)
    }

    /// Every file of a per-frame stage's chunks covering the whole frame range, in frame
    /// order: the smallest chunking whose every chunk has a current record. `what` names the
    /// frames in the error ("upsampled").
    pub fn chunks(&self, of: &str, what: &str) -> Result<Vec<OutputFile>> {
        let mut by_n: BTreeMap<usize, Vec<(usize, &Record)>> = BTreeMap::new();
        for ((stage, chunk), r) in &self.records {
            if let (true, Some((i, n))) = (*stage == of, chunk) {
                by_n.entry(*n).or_default().push((*i, r));
            }
        }
        for (n, mut parts) in by_n {
            if parts.len() == n {
                parts.sort_by_key(|p| p.0);
                return Ok(parts.iter().flat_map(|(_, r)| r.outputs.clone()).collect());
            }
        }
        Err(Error::Invalid(format!(
            "{}: the {what} frames are incomplete: run the {of} stage (every chunk) first",
            self.out.display(),
        )))
    }

    /// The seconds a whole stage took when it ran (this run or the one its record is from).
    pub fn seconds(&self, stage: &str) -> Option<f64> {
        match self.record(stage) {
            Ok(r) => Some(r.seconds),
            // A stage this run did not select (`--only`): its record on disk, current or not.
            Err(_) => Record::load(&self.out, stage, None).map(|r| r.seconds),
        }
    }

    /// The frames of chunk `chunk` of the job (the whole range without one).
    pub fn frames(&self, chunk: Option<Chunk>) -> (i64, i64) {
        super::graph::chunk_frames(self.job, chunk.unwrap_or((0, 1)))
    }

    /// Writes `value` as pretty JSON to `name` in the output folder, atomically; returns
    /// `name`.
    pub fn write_json(&self, name: &str, value: &impl serde::Serialize) -> Result<String> {
        let path = self.out.join(name);
        let text = serde_json::to_string_pretty(value).expect("json");
        tress_formats::atomic::write(&path, text.as_bytes())
            .map_err(|e| crate::error::output_error(&path, e))?;
        Ok(name.to_string())
    }

    /// Creates the folder `name` in the output folder.
    pub fn create_dir(&self, name: &str) -> Result<PathBuf> {
        let dir = self.out.join(name);
        std::fs::create_dir_all(&dir).map_err(|e| Error::Write {
            path: dir.clone(),
            source: e,
        })?;
        Ok(dir)
    }

    /// The date Alembic files record ([`Job::date`]).
    pub fn date(&self) -> std::time::SystemTime {
        self.job.date()
    }
}
