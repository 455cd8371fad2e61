//! tress: a file-in / file-out hair pipeline for film.
//!
//! Grooms come in from `.hair`, `.data`, PLY, TressFX and Alembic files ([`groom`]); the
//! [`tress_formats`] crate holds the file formats. See the book (`book/`) for the user guide.

pub mod bench;
pub mod cache;
pub mod cli;
pub mod collide;
pub mod error;
pub mod groom;
pub mod guides;
pub mod metrics;
pub mod motion;
pub mod pipeline;
pub mod presets;
pub mod render;
pub mod sim;

pub use error::{Error, Result};
pub use tress_formats as formats;
