//! The shared state of a job run: the job, its output folder, and the records of the stages
//! that are done (this run's, or an earlier run's whose inputs have not changed).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::job::{Job, MethodRow};
use super::stage::{OutputFile, Record, Stage};
use crate::error::{Error, Result};

/// Shared state of a run.
pub struct Ctx<'a> {
    pub job: &'a Job,
    pub out: PathBuf,
    pub quiet: bool,
    pub(super) records: BTreeMap<(Stage, Option<(usize, usize)>), Record>,
}

impl Ctx<'_> {
    /// The record of a finished stage (this run's, or an earlier run's that is current).
    pub fn record(&self, stage: Stage) -> Result<&Record> {
        self.records.get(&(stage, None)).ok_or_else(|| {
            Error::Invalid(format!(
                "stage {0} has not run with the current settings: run without --only, or add --only {0}",
                stage.name()
            ))
        })
    }

    /// The upstream file `path` recorded by `stage`.
    pub fn input(&self, stage: Stage, path: &str) -> Result<&OutputFile> {
        self.record(stage)?.output(path)
    }

    /// The upsampled parts of one method row, in frame order.
    pub fn parts_of(&self, row: &MethodRow) -> Result<Vec<OutputFile>> {
        let prefix = format!("parts/{}.", row.stem());
        Ok(self
            .parts()?
            .into_iter()
            .filter(|p| p.path.starts_with(&prefix) && p.path.ends_with(".tcache"))
            .collect())
    }

    /// Every file of the upsampled parts covering the whole frame range, in frame order.
    pub fn parts(&self) -> Result<Vec<OutputFile>> {
        self.chunks(Stage::Upsample)
    }

    /// Every file of a per-frame stage's chunks covering the whole frame range, in frame
    /// order: the smallest chunking whose every chunk has a current record.
    pub fn chunks(&self, of: Stage) -> Result<Vec<OutputFile>> {
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
            "{}: the {} frames are incomplete: run the {} stage (every chunk) first",
            self.out.display(),
            if of == Stage::Upsample {
                "upsampled"
            } else {
                of.name()
            },
            of.name()
        )))
    }

    /// The date Alembic files record: `SOURCE_DATE_EPOCH`, else the job file's modification
    /// time (so re-running an unchanged job writes the same bytes).
    pub fn date(&self) -> std::time::SystemTime {
        if std::env::var_os("SOURCE_DATE_EPOCH").is_some() {
            return tress_formats::alembic::cache::reproducible_now();
        }
        self.job
            .file
            .as_ref()
            .and_then(|f| std::fs::metadata(f).ok())
            .and_then(|m| m.modified().ok())
            .unwrap_or(std::time::UNIX_EPOCH)
    }
}
