//! Writing the Ogawa container as a stream: data and group blocks are appended as they are
//! finished; [`OgawaWriter::finish`] appends the root group, points the header at it and only
//! then sets the frozen flag, so an interrupted file is recognizably unfinished.

use std::io::{Seek, SeekFrom, Write};

use super::{DATA_BIT, EMPTY_DATA, EMPTY_GROUP, FROZEN, MAGIC, VERSION};
use crate::error::Result;

pub struct OgawaWriter<W: Write + Seek> {
    out: W,
    pos: u64,
}

impl<W: Write + Seek> OgawaWriter<W> {
    /// Writes the unfrozen header.
    pub fn new(mut out: W) -> Result<Self> {
        let mut head = [0u8; 16];
        head[..5].copy_from_slice(MAGIC);
        head[6..8].copy_from_slice(&VERSION);
        out.write_all(&head)?;
        Ok(OgawaWriter { out, pos: 16 })
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Appends a data block made of `parts` back to back; returns its child entry.
    pub fn data(&mut self, parts: &[&[u8]]) -> Result<u64> {
        let size: u64 = parts.iter().map(|p| p.len() as u64).sum();
        if size == 0 {
            return Ok(EMPTY_DATA);
        }
        let at = self.pos;
        self.out.write_all(&size.to_le_bytes())?;
        for p in parts {
            self.out.write_all(p)?;
        }
        self.pos += 8 + size;
        Ok(at | DATA_BIT)
    }

    /// Appends a group block; returns its child entry (the empty group needs no block).
    pub fn group(&mut self, children: &[u64]) -> Result<u64> {
        if children.is_empty() {
            return Ok(EMPTY_GROUP);
        }
        let at = self.pos;
        let mut block = Vec::with_capacity(8 + children.len() * 8);
        block.extend_from_slice(&(children.len() as u64).to_le_bytes());
        for c in children {
            block.extend_from_slice(&c.to_le_bytes());
        }
        self.out.write_all(&block)?;
        self.pos += block.len() as u64;
        Ok(at)
    }

    /// Appends the root group, records it in the header, then freezes the archive.
    pub fn finish(mut self, root_children: &[u64]) -> Result<W> {
        let root = self.group(root_children)?;
        self.out.seek(SeekFrom::Start(8))?;
        self.out.write_all(&root.to_le_bytes())?;
        self.out.flush()?;
        self.out.seek(SeekFrom::Start(5))?;
        self.out.write_all(&[FROZEN])?;
        self.out.flush()?;
        self.out.seek(SeekFrom::End(0))?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Entry;
    use super::super::read::OgawaReader;
    use super::super::source::MemSource;
    use super::*;

    #[test]
    fn write_then_read_a_small_tree() {
        let mut w = OgawaWriter::new(std::io::Cursor::new(Vec::new())).unwrap();
        let d1 = w.data(&[b"abc", b"def"]).unwrap();
        let empty = w.data(&[]).unwrap();
        let g = w.group(&[d1, empty]).unwrap();
        let bytes = w.finish(&[g, EMPTY_GROUP]).unwrap().into_inner();
        assert_eq!(&bytes[..8], b"Ogawa\xff\x00\x01");
        let r = OgawaReader::new(Box::new(MemSource(bytes.into()))).unwrap();
        let root = r.root().unwrap();
        assert_eq!(root.len(), 2);
        let Entry::Group(go) = root[0] else {
            panic!("group expected")
        };
        let kids = r.group(go).unwrap();
        let Entry::Data(d) = kids[0] else {
            panic!("data expected")
        };
        assert_eq!(r.read(r.data(d).unwrap()).unwrap(), b"abcdef");
        assert_eq!(kids[1], Entry::Data(0));
        assert_eq!(r.group(0).unwrap(), vec![]);
    }

    #[test]
    fn unfinished_and_foreign_files_are_refused() {
        let w = OgawaWriter::new(std::io::Cursor::new(Vec::new())).unwrap();
        let bytes = w.out.into_inner();
        let e = OgawaReader::new(Box::new(MemSource(bytes.into())))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("never closed"), "{e}");
        let e = OgawaReader::new(Box::new(MemSource(b"\x89HDF\r\n\x1a\n12345678".to_vec().into())))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("HDF5 Alembic is not supported; re-export as Ogawa"),
            "{e}"
        );
    }
}
