//! Property and object headers, as AbcCoreOgawa packs them into the header blobs that end
//! every compound and object group.
//!
//! A property header starts with a u32 info word: bits 0–1 kind (0 compound, 1 scalar, 2 array,
//! 3 scalar-like array), 2–3 width of the variable integers that follow (1, 2 or 4 bytes),
//! 4–7 POD, 8 a time-sampling index follows, 9 first/last changed indices follow, 10
//! homogeneous, 11 constant (first = last = 0), 12–19 extent, 20–27 metadata index (0 empty,
//! 255 inline). Then: sample count, [first, last], [time sampling], name length, name, [inline
//! metadata]. Compounds carry only the width, metadata index, name and inline metadata.

use super::metadata::MetaData;
use super::pod::Pod;
use crate::bytes::ByteReader;
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropertyKind {
    Compound,
    Scalar,
    Array,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PropertyHeader {
    pub name: String,
    pub kind: PropertyKind,
    pub pod: Pod,
    pub extent: u8,
    pub time_sampling: u32,
    pub num_samples: u32,
    /// First sample index that differs from sample 0 (0 if none does).
    pub first_changed: u32,
    /// Last sample index that differs from its predecessor (0 if none does).
    pub last_changed: u32,
    /// Arrays only: every sample holds exactly one element.
    pub scalar_like: bool,
    pub homogeneous: bool,
    pub metadata: MetaData,
}

impl PropertyHeader {
    pub fn compound(name: &str, metadata: MetaData) -> Self {
        PropertyHeader {
            name: name.to_string(),
            kind: PropertyKind::Compound,
            pod: Pod::U8,
            extent: 0,
            time_sampling: 0,
            num_samples: 0,
            first_changed: 0,
            last_changed: 0,
            scalar_like: false,
            homogeneous: false,
            metadata,
        }
    }

    pub fn is_constant(&self) -> bool {
        self.first_changed == 0
    }

    /// Number of stored sample slots implied by the header.
    pub fn stored_slots(&self) -> usize {
        match (self.num_samples, self.first_changed, self.last_changed) {
            (0, _, _) => 0,
            (_, 0, 0) => 1,
            (_, f, l) => (l - f + 2) as usize,
        }
    }

    /// The stored slot holding sample `index` (clamped to the last sample).
    pub fn slot(&self, index: usize) -> usize {
        let n = self.num_samples as usize;
        let i = index.min(n.saturating_sub(1));
        let (f, l) = (self.first_changed as usize, self.last_changed as usize);
        if i < f || (f == 0 && l == 0) {
            0
        } else if i >= l {
            l - f + 1
        } else {
            i - f + 1
        }
    }
}

fn width_of(max: u64) -> (u32, usize) {
    if max < 256 {
        (0, 1)
    } else if max < 65536 {
        (1, 2)
    } else {
        (2, 4)
    }
}

fn put_var(out: &mut Vec<u8>, width: usize, v: u64) {
    out.extend_from_slice(&v.to_le_bytes()[..width]);
}

/// Appends one property header. `md_index` is the metadata table index (255 = inline).
pub fn encode_property(h: &PropertyHeader, md_index: u8, out: &mut Vec<u8>) {
    let md = h.metadata.serialize();
    let max = (md.len() as u64)
        .max(h.name.len() as u64)
        .max(h.num_samples as u64)
        .max(h.time_sampling as u64);
    let (hint, width) = width_of(max);
    let mut info: u32 = hint << 2 | (md_index as u32) << 20;
    if h.kind != PropertyKind::Compound {
        info |= match (h.kind, h.scalar_like) {
            (PropertyKind::Scalar, _) => 1,
            (_, false) => 2,
            (_, true) => 3,
        };
        info |= (h.pod as u32) << 4 | (h.extent as u32) << 12;
        if h.time_sampling != 0 {
            info |= 0x100;
        }
        if h.homogeneous {
            info |= 0x400;
        }
        let n = h.num_samples;
        let constant = h.first_changed == 0 && h.last_changed == 0;
        let implied = h.first_changed == 1 && h.last_changed + 1 == n;
        let explicit = !(constant || implied);
        if h.first_changed == 0 && h.last_changed == 0 {
            info |= 0x800;
        } else if explicit {
            info |= 0x200;
        }
        out.extend_from_slice(&info.to_le_bytes());
        put_var(out, width, n as u64);
        if explicit {
            put_var(out, width, h.first_changed as u64);
            put_var(out, width, h.last_changed as u64);
        }
        if h.time_sampling != 0 {
            put_var(out, width, h.time_sampling as u64);
        }
    } else {
        out.extend_from_slice(&info.to_le_bytes());
    }
    put_var(out, width, h.name.len() as u64);
    out.extend_from_slice(h.name.as_bytes());
    if md_index == 255 {
        put_var(out, width, md.len() as u64);
        out.extend_from_slice(md.as_bytes());
    }
}

fn var(r: &mut ByteReader, width: usize) -> Result<u32> {
    Ok(match width {
        1 => r.u8("property header")? as u32,
        2 => r.u16("property header")? as u32,
        _ => r.u32("property header")?,
    })
}

fn text(r: &mut ByteReader, len: u32, what: &str) -> Result<String> {
    let b = r.take(len as usize, what)?;
    String::from_utf8(b.to_vec()).map_err(|_| Error::corrupt(format!("{what} is not UTF-8")))
}

/// Metadata by table index: 0 = empty, 255 = inline.
fn table_md(table: &[MetaData], index: usize) -> Result<MetaData> {
    if index == 0 {
        return Ok(MetaData::new());
    }
    table.get(index - 1).cloned().ok_or_else(|| {
        Error::corrupt(format!(
            "a header uses metadata #{index} but the table has {}",
            table.len()
        ))
    })
}

/// Parses a compound's header blob.
pub fn decode_properties(
    blob: &[u8],
    table: &[MetaData],
    time_samplings: usize,
) -> Result<Vec<PropertyHeader>> {
    let mut r = ByteReader::new(blob);
    let mut out = Vec::new();
    while r.remaining() > 0 {
        let info = r.u32("property header")?;
        let width = match (info >> 2) & 3 {
            0 => 1,
            1 => 2,
            2 => 4,
            _ => return Err(Error::corrupt("a property header has an invalid size hint")),
        };
        let md_index = ((info >> 20) & 0xff) as usize;
        let kind = match info & 3 {
            0 => PropertyKind::Compound,
            1 => PropertyKind::Scalar,
            _ => PropertyKind::Array,
        };
        let mut h = PropertyHeader::compound("", MetaData::new());
        h.kind = kind;
        if kind != PropertyKind::Compound {
            h.pod = Pod::from_u8(((info >> 4) & 0xf) as u8)?;
            h.extent = ((info >> 12) & 0xff) as u8;
            h.scalar_like = info & 3 == 3;
            h.homogeneous = info & 0x400 != 0;
            h.num_samples = var(&mut r, width)?;
            if info & 0x200 != 0 {
                h.first_changed = var(&mut r, width)?;
                h.last_changed = var(&mut r, width)?;
            } else if info & 0x800 != 0 || h.num_samples == 0 {
                (h.first_changed, h.last_changed) = (0, 0);
            } else {
                (h.first_changed, h.last_changed) = (1, h.num_samples - 1);
            }
            if info & 0x100 != 0 {
                h.time_sampling = var(&mut r, width)?;
            }
            let (n, f, l) = (h.num_samples, h.first_changed, h.last_changed);
            if f > l || (n > 0 && l >= n) {
                return Err(Error::corrupt(format!(
                    "a property header says samples {f}..{l} changed out of {n}"
                )));
            }
            if h.time_sampling as usize >= time_samplings {
                return Err(Error::corrupt(format!(
                    "a property uses time sampling {} but the archive has {time_samplings}",
                    h.time_sampling
                )));
            }
            if h.extent == 0 {
                return Err(Error::corrupt("a property header has extent 0"));
            }
        }
        let name_len = var(&mut r, width)?;
        if name_len == 0 {
            return Err(Error::corrupt("a property has an empty name"));
        }
        h.name = text(&mut r, name_len, "property name")?;
        h.metadata = if md_index == 255 {
            let len = var(&mut r, width)?;
            MetaData::parse(&text(&mut r, len, "property metadata")?)
        } else {
            table_md(table, md_index)?
        };
        out.push(h);
    }
    Ok(out)
}

/// One child-object header: name and metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectHeader {
    pub name: String,
    pub metadata: MetaData,
}

/// Appends one object header.
pub fn encode_object(h: &ObjectHeader, md_index: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(&(h.name.len() as u32).to_le_bytes());
    out.extend_from_slice(h.name.as_bytes());
    out.push(md_index);
    if md_index == 255 {
        let md = h.metadata.serialize();
        out.extend_from_slice(&(md.len() as u32).to_le_bytes());
        out.extend_from_slice(md.as_bytes());
    }
}

/// Parses an object's header blob: child headers followed by the 32-byte hash trailer.
pub fn decode_objects(blob: &[u8], table: &[MetaData]) -> Result<Vec<ObjectHeader>> {
    if blob.len() < 32 {
        return Ok(Vec::new());
    }
    let mut r = ByteReader::new(&blob[..blob.len() - 32]);
    let mut out = Vec::new();
    while r.remaining() > 0 {
        let len = r.u32("object header")?;
        if len == 0 {
            return Err(Error::corrupt("an object has an empty name"));
        }
        let name = text(&mut r, len, "object name")?;
        if name.contains('/') {
            return Err(Error::corrupt(format!("object name {name:?} contains '/'")));
        }
        let md_index = r.u8("object header")? as usize;
        let metadata = if md_index == 255 {
            let len = r.u32("object metadata")?;
            MetaData::parse(&text(&mut r, len, "object metadata")?)
        } else {
            table_md(table, md_index)?
        };
        out.push(ObjectHeader { name, metadata });
    }
    Ok(out)
}

/// Parses the indexed-metadata table (entry 1 first; index 0 is the implicit empty metadata).
pub fn decode_table(blob: &[u8]) -> Result<Vec<MetaData>> {
    if blob.len() > 65536 {
        return Err(Error::corrupt("the indexed-metadata table is larger than 64 KiB"));
    }
    let mut r = ByteReader::new(blob);
    let mut out = Vec::new();
    while r.remaining() > 0 {
        let len = r.u8("metadata table")?;
        let s = text(&mut r, len as u32, "metadata table entry")?;
        out.push(MetaData::parse(&s));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_reference_geom_headers() {
        // The first headers of ref_curves.abc /groom/hair/.geom (see the format notes).
        let blob: Vec<u8> = [
            &[0xb1, 0x65, 0x30, 0x00, 0x04, 0x01, 0x09][..],
            b".selfBnds",
            &[0xa2, 0x31, 0x40, 0x00, 0x04, 0x01, 0x01],
            b"P",
            &[0x62, 0x1d, 0x00, 0x00, 0x04, 0x01, 0x09],
            b"nVertices",
        ]
        .concat();
        let mut table = vec![MetaData::new(); 4];
        table[2] = MetaData::parse("interpretation=box");
        table[3] = MetaData::parse("geoScope=vtx;interpretation=point");
        let hs = decode_properties(&blob, &table, 2).unwrap();
        assert_eq!(hs.len(), 3);
        let b = &hs[0];
        assert_eq!(
            (b.kind, b.pod, b.extent, b.num_samples, b.time_sampling),
            (PropertyKind::Scalar, Pod::F64, 6, 4, 1)
        );
        assert_eq!((b.first_changed, b.last_changed), (1, 3));
        assert!(b.homogeneous);
        assert_eq!(b.metadata.get("interpretation"), Some("box"));
        let p = &hs[1];
        assert_eq!(
            (p.kind, p.pod, p.extent, p.homogeneous),
            (PropertyKind::Array, Pod::F32, 3, false)
        );
        assert_eq!(p.metadata.get("geoScope"), Some("vtx"));
        let nv = &hs[2];
        assert_eq!(
            (nv.pod, nv.first_changed, nv.last_changed, nv.slot(3)),
            (Pod::I32, 0, 0, 0)
        );
        // Re-encoding gives the same bytes.
        let mut again = Vec::new();
        encode_property(b, 3, &mut again);
        encode_property(p, 4, &mut again);
        encode_property(nv, 0, &mut again);
        assert_eq!(again, blob);
    }

    #[test]
    fn explicit_first_last_and_wide_fields() {
        // Camera .xform/.vals: 301 samples, first 2, last 300, ts 1 → 2-byte fields.
        let h = PropertyHeader {
            name: ".vals".into(),
            kind: PropertyKind::Scalar,
            pod: Pod::F64,
            extent: 3,
            time_sampling: 1,
            num_samples: 301,
            first_changed: 2,
            last_changed: 300,
            scalar_like: false,
            homogeneous: true,
            metadata: MetaData::new(),
        };
        let mut b = Vec::new();
        encode_property(&h, 0, &mut b);
        assert_eq!(
            &b[..14],
            &[
                0xb5, 0x37, 0, 0, 0x2d, 0x01, 0x02, 0x00, 0x2c, 0x01, 0x01, 0x00, 0x05, 0x00
            ]
        );
        assert_eq!(decode_properties(&b, &[], 2).unwrap()[0], h);
        assert_eq!(h.stored_slots(), 300);
        assert_eq!(
            (h.slot(0), h.slot(1), h.slot(2), h.slot(300), h.slot(5000)),
            (0, 0, 1, 299, 299)
        );
    }

    #[test]
    fn hostile_headers() {
        assert!(decode_properties(&[0xff, 0xff, 0xff, 0xff], &[], 1).is_err());
        assert!(decode_properties(&[0x01, 0x10, 0, 0, 1, 0], &[], 1).is_err());
        assert!(decode_properties(&[0x01, 0x10, 0x30, 0, 1, 1, b'x'], &[], 1).is_err());
        assert!(decode_objects(&[0xff; 40], &[]).is_err());
    }
}
