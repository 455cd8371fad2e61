//! The one error type every reader and writer in this crate returns.
//!
//! Messages are written for the person who handed tress the file: they say what is wrong in the
//! file's own terms ("header claims 10000 strands but the file ends after 812 bytes"). The file
//! name is added by [`Error::in_file`], so readers working on byte slices need not know it.

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong while reading or writing a file.
#[derive(Debug, thiserror::Error)]
pub enum ErrorKind {
    /// The operating system refused (missing file, permission, disk full).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The file ends before the data its header or structure promises.
    #[error("{0}")]
    Truncated(String),
    /// The bytes contradict the format (bad magic, impossible counts, values out of range).
    #[error("{0}")]
    Corrupt(String),
    /// A valid file using a feature tress does not read (HDF5 Alembic, big-endian PLY lists…).
    #[error("{0}")]
    Unsupported(String),
    /// The caller asked for something the data cannot give (a frame outside the cache, a
    /// mismatched point count when writing).
    #[error("{0}")]
    Invalid(String),
}

/// An [`ErrorKind`] with the file it came from, when known.
#[derive(Debug)]
pub struct Error {
    pub kind: ErrorKind,
    pub path: Option<PathBuf>,
}

impl Error {
    pub fn truncated(msg: impl Into<String>) -> Self {
        ErrorKind::Truncated(msg.into()).into()
    }
    pub fn corrupt(msg: impl Into<String>) -> Self {
        ErrorKind::Corrupt(msg.into()).into()
    }
    pub fn unsupported(msg: impl Into<String>) -> Self {
        ErrorKind::Unsupported(msg.into()).into()
    }
    pub fn invalid(msg: impl Into<String>) -> Self {
        ErrorKind::Invalid(msg.into()).into()
    }

    /// Attaches the file name (keeps the first one attached, the innermost is the most precise).
    pub fn in_file(mut self, path: impl AsRef<Path>) -> Self {
        if self.path.is_none() {
            self.path = Some(path.as_ref().to_path_buf());
        }
        self
    }

    /// True when the problem lies in the input (exit code 2), false for system failures (exit 1).
    pub fn is_bad_input(&self) -> bool {
        match &self.kind {
            ErrorKind::Io(e) => matches!(
                e.kind(),
                std::io::ErrorKind::NotFound
                    | std::io::ErrorKind::InvalidData
                    | std::io::ErrorKind::UnexpectedEof
                    | std::io::ErrorKind::IsADirectory
            ),
            _ => true,
        }
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Error { kind, path: None }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        ErrorKind::Io(e).into()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{}: {}", p.display(), self.kind),
            None => write!(f, "{}", self.kind),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Adds the file name to the error of a fallible step.
pub trait InFile<T> {
    fn in_file(self, path: impl AsRef<Path>) -> Result<T>;
}

impl<T, E: Into<Error>> InFile<T> for std::result::Result<T, E> {
    fn in_file(self, path: impl AsRef<Path>) -> Result<T> {
        self.map_err(|e| e.into().in_file(path))
    }
}
