//! Ogawa, the container under Alembic: a tree of *groups* (ordered child lists) and *data*
//! blocks (opaque bytes), with no names, types or checksums.
//!
//! File layout: 16-byte header (`Ogawa`, frozen flag `0xff` once closed cleanly, version bytes
//! `00 01`, u64 LE offset of the root group), then blocks packed back to back. A group block is
//! `u64 n, u64 child[n]`; a data block is `u64 size, bytes[size]`. A child entry with its top bit
//! set is data, otherwise a group; `0` is the empty group and `1 << 63` the empty data, neither
//! of which has a block. Writers append children before parents and the root group last.

pub mod read;
pub mod source;
pub mod write;

pub const MAGIC: &[u8; 5] = b"Ogawa";
pub const FROZEN: u8 = 0xff;
pub const VERSION: [u8; 2] = [0, 1];
pub const HEADER_LEN: u64 = 16;
/// Top bit of a child entry: the child is data.
pub const DATA_BIT: u64 = 1 << 63;
pub const EMPTY_GROUP: u64 = 0;
pub const EMPTY_DATA: u64 = DATA_BIT;

/// A child entry of a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Entry {
    /// Offset of a group block; 0 is the empty group.
    Group(u64),
    /// Offset of a data block; 0 is the empty data.
    Data(u64),
}

impl Entry {
    pub fn from_raw(raw: u64) -> Entry {
        if raw & DATA_BIT != 0 {
            Entry::Data(raw & !DATA_BIT)
        } else {
            Entry::Group(raw)
        }
    }

    pub fn raw(self) -> u64 {
        match self {
            Entry::Group(o) => o,
            Entry::Data(o) => o | DATA_BIT,
        }
    }
}
