//! Reading the Ogawa container: the header, groups and data blocks, every offset and size checked
//! against the file length before anything is read or allocated.

use super::source::ReadAt;
use super::{DATA_BIT, Entry, FROZEN, HEADER_LEN, MAGIC, VERSION};
use crate::error::{Error, Result};

pub struct OgawaReader {
    src: Box<dyn ReadAt>,
    len: u64,
    root: u64,
}

/// A data block: where its bytes start and how many there are (0 for the empty data).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataRef {
    pub offset: u64,
    pub size: u64,
}

impl OgawaReader {
    /// Checks the header and returns a reader positioned at nothing in particular.
    pub fn new(src: Box<dyn ReadAt>) -> Result<Self> {
        let len = src.len();
        let mut head = [0u8; 16];
        if len < HEADER_LEN {
            if len >= 4 {
                src.read_exact_at(&mut head[..4], 0)?;
                check_not_hdf5(&head[..4])?;
            }
            return Err(Error::truncated(format!(
                "an Ogawa archive starts with a 16-byte header but the file has only {len} bytes"
            )));
        }
        src.read_exact_at(&mut head, 0)?;
        check_not_hdf5(&head)?;
        if &head[..5] != MAGIC {
            return Err(Error::corrupt(format!(
                "not an Alembic Ogawa archive (starts with {:?}, expected \"Ogawa\")",
                String::from_utf8_lossy(&head[..5])
            )));
        }
        if head[5] != FROZEN {
            return Err(Error::corrupt(format!(
                "the archive was never closed (frozen byte is 0x{:02x}, expected 0xff): the program writing it stopped before finishing",
                head[5]
            )));
        }
        if head[6..8] != VERSION {
            return Err(Error::unsupported(format!(
                "Ogawa version {} is not supported (only 1)",
                u16::from_be_bytes([head[6], head[7]])
            )));
        }
        let root = u64::from_le_bytes(head[8..16].try_into().expect("8 bytes"));
        if root < HEADER_LEN || root >= len {
            return Err(Error::truncated(format!(
                "the root group is at offset {root} but the file has {len} bytes (truncated or corrupt archive)"
            )));
        }
        Ok(OgawaReader { src, len, root })
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn root(&self) -> Result<Vec<Entry>> {
        self.group(self.root)
    }

    fn u64_at(&self, offset: u64, what: &str) -> Result<u64> {
        if offset.checked_add(8).is_none_or(|end| end > self.len) {
            return Err(Error::truncated(format!(
                "{what} at offset {offset} lies past the end of the file ({} bytes)",
                self.len
            )));
        }
        let mut b = [0u8; 8];
        self.src.read_exact_at(&mut b, offset)?;
        Ok(u64::from_le_bytes(b))
    }

    /// The children of the group block at `offset` (0 = the empty group).
    pub fn group(&self, offset: u64) -> Result<Vec<Entry>> {
        if offset == 0 {
            return Ok(Vec::new());
        }
        if offset < HEADER_LEN {
            return Err(Error::corrupt(format!(
                "a group points into the file header (offset {offset})"
            )));
        }
        let n = self.u64_at(offset, "a group")?;
        let room = (self.len - offset - 8) / 8;
        if n > room {
            return Err(Error::corrupt(format!(
                "the group at offset {offset} claims {n} children but only {room} fit before the end of the file"
            )));
        }
        let mut raw = vec![0u8; n as usize * 8];
        self.src.read_exact_at(&mut raw, offset + 8)?;
        Ok(raw
            .chunks_exact(8)
            .map(|c| Entry::from_raw(u64::from_le_bytes(c.try_into().expect("8 bytes"))))
            .collect())
    }

    /// Locates the data block at `offset` (0 = the empty data).
    pub fn data(&self, offset: u64) -> Result<DataRef> {
        if offset == 0 {
            return Ok(DataRef { offset: 0, size: 0 });
        }
        if offset < HEADER_LEN || offset & DATA_BIT != 0 {
            return Err(Error::corrupt(format!(
                "a data block points outside the file (offset {offset})"
            )));
        }
        let size = self.u64_at(offset, "a data block")?;
        let room = self.len - offset - 8;
        if size > room {
            return Err(Error::corrupt(format!(
                "the data block at offset {offset} claims {size} bytes but only {room} remain in the file"
            )));
        }
        Ok(DataRef {
            offset: offset + 8,
            size,
        })
    }

    /// Reads a data block whole.
    pub fn read(&self, d: DataRef) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; d.size as usize];
        if d.size > 0 {
            self.src.read_exact_at(&mut buf, d.offset)?;
        }
        Ok(buf)
    }

    /// Reads `buf.len()` bytes of a data block starting `skip` bytes in.
    pub fn read_into(&self, d: DataRef, skip: u64, buf: &mut [u8]) -> Result<()> {
        if skip.saturating_add(buf.len() as u64) > d.size {
            return Err(Error::corrupt("a read runs past the end of its data block"));
        }
        if !buf.is_empty() {
            self.src.read_exact_at(buf, d.offset + skip)?;
        }
        Ok(())
    }
}

fn check_not_hdf5(head: &[u8]) -> Result<()> {
    if head.starts_with(b"\x89HDF") {
        return Err(Error::unsupported(
            "HDF5 Alembic is not supported; re-export as Ogawa (the default in every current DCC)",
        ));
    }
    Ok(())
}
