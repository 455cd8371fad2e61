//! File formats of the tress hair pipeline.
//!
//! Every reader validates what it reads and returns [`Error`] (never panics): counts are checked
//! against the bytes actually present before anything is allocated, so a corrupt or hostile file
//! costs at most a small multiple of its own size. No simulation code lives here.

pub mod alembic;
pub mod atomic;
pub mod bytes;
pub mod error;
pub mod gltf;
pub mod hair;
pub mod mesh;
pub mod mss;
pub mod obj;
pub mod ply;
pub mod sdf;
pub mod skin;
pub mod strands;
pub mod tcache;
pub mod tfx;
pub mod tfxproj;
pub mod track;
pub mod usc_data;
pub mod usd;
pub mod velocity;

pub use error::{Error, ErrorKind, InFile, Result};
pub use mesh::TriMesh;
pub use strands::{Attr, StrandAttrs, Strands, offsets_of};

/// A path's extension in lower case (`Hair.ABC` → `abc`), if it has one that is text.
pub fn extension(path: &std::path::Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}
