//! tress's error type and the exit codes scripts rely on.
//!
//! Exit codes (documented in the book, `cli.md`): 0 success, 1 runtime failure (I/O on
//! output, numerical blow-up), 2 bad input or usage (unreadable or corrupt input files, wrong
//! arguments, invalid job files).

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or understood.
    #[error(transparent)]
    Format(#[from] tress_formats::Error),
    /// The request makes no sense for the data (bad arguments, mismatched inputs).
    #[error("{0}")]
    Invalid(String),
    /// Writing an output failed.
    #[error("{}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    /// Something failed while running (not the input's fault).
    #[error("{0}")]
    Runtime(String),
    /// A long run was asked to stop; it can be resumed.
    #[error("{0}")]
    Stopped(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Process exit codes.
pub mod exit {
    pub const OK: i32 = 0;
    pub const RUNTIME: i32 = 1;
    pub const BAD_INPUT: i32 = 2;
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Format(e) if e.is_bad_input() => exit::BAD_INPUT,
            Error::Format(_) => exit::RUNTIME,
            Error::Invalid(_) => exit::BAD_INPUT,
            Error::Write { .. } | Error::Runtime(_) | Error::Stopped(_) => exit::RUNTIME,
        }
    }

    /// The same error with `what` before its message, its kind (and exit code) kept; file
    /// errors already name their file and stay as they are.
    pub fn context(self, what: &str) -> Error {
        match self {
            Error::Invalid(m) => Error::Invalid(format!("{what}: {m}")),
            Error::Runtime(m) => Error::Runtime(format!("{what}: {m}")),
            Error::Stopped(m) => Error::Stopped(format!("{what}: {m}")),
            other => other,
        }
    }
}

/// Errors while writing an output are runtime failures (exit 1), not bad input.
pub fn output_error(path: &Path, e: tress_formats::Error) -> Error {
    match e.kind {
        tress_formats::ErrorKind::Io(source) => Error::Write {
            path: path.to_path_buf(),
            source,
        },
        _ => Error::Runtime(e.to_string()),
    }
}
