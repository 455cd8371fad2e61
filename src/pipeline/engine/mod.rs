//! The engine that runs a job's stages. It knows stages only through the [`Stage`] trait and the
//! list it is given ([`crate::pipeline::stages::ALL`]): each stage says whether it has work in a
//! job, which stages it reads, what its outputs depend on (a typed settings key and the files it
//! reads) and how to run. The engine keys each stage's record on that, skips what is current,
//! splits per-frame stages into chunks, and plans dry runs and farm templates from the same list.
//!
//! - [`record`]: what a finished stage leaves in `.tress/` (input hash, outputs, sizes, digests);
//! - [`context`]: the state stages share during a run (job, output folder, current records, the
//!   job's scene built once);
//! - [`graph`]: which stages apply, their upstream stages, the selection of `--only` / `--chunk`;
//! - [`run`]: running, dry-run plans.
//!
//! Imports go from stages to the engine, never back.

pub mod context;
pub mod graph;
pub mod record;
pub mod run;

use serde::Serialize;

use crate::error::Result;
use crate::pipeline::job::Job;

pub use context::Ctx;
pub use record::{OutputFile, Record, file_sha256, input_hash};
pub use run::{PlannedStage, RunOptions, RunReport, StageStatus};

/// Chunk `i` of `n` of a per-frame stage (`--chunk i/n`).
pub type Chunk = (usize, usize);

/// How the engine treats a stage's results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Run once; cached while its inputs hash the same.
    Whole,
    /// Per-frame work that splits into chunks of frames (`--chunk i/n`), each cached on its own.
    Chunked,
    /// Runs last, after every other stage, on every run (the report).
    Summary,
}

/// A file a stage writes, named once: the stage that makes it and its path in the output folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Artefact {
    /// The stage's name ([`Stage::name`]).
    pub stage: &'static str,
    /// Relative to the output folder.
    pub path: &'static str,
}

impl Artefact {
    pub const fn new(stage: &'static str, path: &'static str) -> Artefact {
        Artefact { stage, path }
    }
}

/// What a stage's outputs depend on: its settings (any serializable key) and the content
/// hashes of the files it reads (upstream outputs and files outside the output folder).
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    pub settings: serde_json::Value,
    pub files: Vec<OutputFile>,
}

impl Inputs {
    /// Inputs with the settings `key` and no files yet.
    pub fn new(key: &impl Serialize) -> Inputs {
        Inputs {
            settings: serde_json::to_value(key).expect("stage keys serialize"),
            files: Vec::new(),
        }
    }

    /// Adds files read.
    pub fn reads(mut self, files: impl IntoIterator<Item = OutputFile>) -> Inputs {
        self.files.extend(files);
        self
    }

    /// The hash a record of `stage` is keyed on.
    pub fn hash(&self, stage: &str) -> String {
        let refs: Vec<&OutputFile> = self.files.iter().collect();
        input_hash(stage, &self.settings, &refs)
    }
}

/// One stage of a job: a self-contained definition in `pipeline/stages/<name>.rs`, registered
/// once in [`crate::pipeline::stages::ALL`].
pub trait Stage: Sync {
    /// Its name: `--only NAME`, the record `.tress/NAME.json`, the farm step.
    fn name(&self) -> &'static str;
    /// One line for `tress run --help`.
    fn about(&self) -> &'static str;
    fn kind(&self) -> Kind {
        Kind::Whole
    }
    /// Whether it has work in `job` (training, fitting and the optional methods only where the
    /// job asks for them).
    fn applies(&self, _job: &Job) -> bool {
        true
    }
    /// What a job needs for the stage to apply (`--only` names it when the stage has no work).
    fn needs(&self) -> &'static str {
        "nothing"
    }
    /// The stages whose results it reads in `job` (a [`Kind::Summary`] stage reads every other
    /// one without listing them). Stages that do not apply are left out by the engine.
    fn upstream(&self, _job: &Job) -> Vec<&'static str> {
        Vec::new()
    }
    /// Everything its outputs depend on, for chunk `chunk` of a [`Kind::Chunked`] stage.
    fn inputs(&self, cx: &Ctx, chunk: Option<Chunk>) -> Result<Inputs>;
    /// Does the work; returns the files written, relative to the output folder.
    fn run(&self, cx: &Ctx, chunk: Option<Chunk>) -> Result<Vec<String>>;
}
