//! tress: a file-in / file-out hair pipeline for film.
//!
//! Grooms come in from `.hair`, `.data`, PLY, TressFX and Alembic files ([`groom`]); the
//! [`tress_formats`] crate holds the file formats. See the book (`book/`) for the user guide.

pub mod bench;
pub mod cache;
pub mod cli;
pub mod collide;
pub mod error;
pub mod grid;
pub mod groom;
pub mod guides;
pub mod hairmesh;
pub mod metrics;
pub mod motion;
pub mod neural;
pub mod pipeline;
pub mod presets;
pub mod render;
pub mod scene;
pub mod sim;
pub mod units;
pub mod upsample;

pub use error::{Error, Result};

/// The build of tress: its version and a hash of every source file that shapes results
/// (embedded at build time). Stage records are keyed on it.
pub fn build_id() -> String {
    format!("{} build {}", env!("CARGO_PKG_VERSION"), env!("TRESS_BUILD"))
}

/// What `--version` and reports print: version, build hash, commit.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (build ",
    env!("TRESS_BUILD"),
    ", commit ",
    env!("TRESS_COMMIT"),
    ")"
);
pub use tress_formats as formats;
