//! The engine that runs a job's stages. It knows stages only through the [`Stage`] trait and the
//! list it is given ([`crate::pipeline::stages::ALL`]): each stage says whether it has work in a
//! job, which stages it reads, what its outputs depend on (a typed settings key and the files it
//! reads) and how to run. The engine keys each stage's record on that, skips what is current,
//! splits per-frame stages into chunks, and plans dry runs and farm templates from the same list.
//!
//! - [`record`]: what a finished stage leaves in `.tress/` (input hash, outputs, sizes, digests);
//! - [`lock`]: stage locks, so duplicate runs of a job never run a stage at once;
//! - [`context`]: the state stages share during a run (job, output folder, current records, the
//!   job's scene built once);
//! - [`graph`]: which stages apply, their upstream stages, the selection of `--only` / `--chunk`;
//! - [`run`]: running, dry-run plans.
//!
//! Imports go from stages to the engine, never back.

pub mod context;
pub mod graph;
pub mod lock;
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

    /// The hash a record of the stage `info` is keyed on (its name and results version).
    pub fn hash(&self, info: &Info) -> String {
        let refs: Vec<&OutputFile> = self.files.iter().collect();
        input_hash(info.name, info.version, &self.settings, &refs)
    }
}

/// What a stage is: its name (`--only NAME`, the record `.tress/NAME.json`, the farm step),
/// one line for `tress run --help`, how the engine treats its results, and what a job needs
/// for it to have work (`--only` says so when it has none).
#[derive(Clone, Copy, Debug)]
pub struct Info {
    pub name: &'static str,
    pub about: &'static str,
    /// The version of the stage's results: part of its key instead of the build of tress, so
    /// upgrading tress, or editing code that does not change what a stage computes, reuses
    /// finished stages. Raise it whenever the stage's outputs for the same inputs change (its
    /// own code or anything it calls: solver, formats); `tests/pipeline/golden.rs` fails when
    /// they change while it stays.
    pub version: u32,
    pub kind: Kind,
    pub needs: &'static str,
    /// Whether a job has work for the stage.
    pub applies: fn(&Job) -> bool,
}

impl Info {
    /// A [`Kind::Whole`] stage any job has work for.
    pub const fn new(name: &'static str, about: &'static str) -> Info {
        Info {
            name,
            about,
            version: 1,
            kind: Kind::Whole,
            needs: "nothing",
            applies: |_| true,
        }
    }

    /// Results version `v` (see [`Info::version`]).
    pub const fn version(self, v: u32) -> Info {
        Info { version: v, ..self }
    }

    /// Per-frame work that splits into chunks.
    pub const fn chunked(self) -> Info {
        Info {
            kind: Kind::Chunked,
            ..self
        }
    }

    /// Runs last, after every other stage, on every run.
    pub const fn summary(self) -> Info {
        Info {
            kind: Kind::Summary,
            ..self
        }
    }

    /// Has work only in jobs with `what`: those `applies` says yes to.
    pub const fn needs(self, what: &'static str, applies: fn(&Job) -> bool) -> Info {
        Info {
            needs: what,
            applies,
            ..self
        }
    }
}

/// One stage of a job: a self-contained definition in `pipeline/stages/<name>.rs`, registered
/// once in [`crate::pipeline::stages::ALL`].
pub trait Stage: Sync {
    fn info(&self) -> Info;
    /// The stages whose results it reads in `job` (a [`Kind::Summary`] stage reads every other
    /// one without listing them). Stages without work are left out by the engine.
    fn upstream(&self, job: &Job) -> Vec<&'static str>;
    /// Everything its outputs depend on, for chunk `chunk` of a [`Kind::Chunked`] stage.
    fn inputs(&self, cx: &Ctx, chunk: Option<Chunk>) -> Result<Inputs>;
    /// Does the work; returns the files written, relative to the output folder.
    fn run(&self, cx: &Ctx, chunk: Option<Chunk>) -> Result<Vec<String>>;

    fn name(&self) -> &'static str {
        self.info().name
    }

    fn kind(&self) -> Kind {
        self.info().kind
    }

    /// Whether it has work in `job` (training, fitting and the optional methods only where
    /// the job asks for them).
    fn applies(&self, job: &Job) -> bool {
        (self.info().applies)(job)
    }
}
