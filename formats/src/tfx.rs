//! AMD TressFX `.tfx` binary grooms, versions 3.x and 4.x (GPUOpen-Effects/TressFX).
//!
//! Both start with a float version. 3.x (`TressFXFileObject`, 296-byte header): strand count,
//! vertices per strand, follow hairs per guide, both-ends-immovable flag, reserved words, then
//! at 0x90 byte offsets of the vertex array (float3), per-strand thickness, per-strand UV,
//! per-vertex colour (float4), guide flags and per-vertex UV (0 = absent). 4.x
//! (`TressFXTFXFileHeader`, 160 bytes): strand count, vertices per strand, then offsets of the
//! vertex array (float4, w = inverse mass, 0 = pinned), strand UV, vertex UV, strand thickness and
//! vertex colour. Every strand has the same vertex count; strands are stored root first.
//! Unlike AMD's loaders, tress keeps every strand (no rounding to multiples of 64).

use std::path::Path;

use crate::bytes::ByteReader;
use crate::error::{Error, InFile, Result};
use crate::strands::{Attr, StrandAttrs, Strands};

/// What the header says, for `inspect`.
#[derive(Clone, Debug, PartialEq)]
pub struct TfxInfo {
    pub version: f32,
    pub strands: u32,
    pub vertices_per_strand: u32,
    /// 3.x only: whether tips are pinned as well as roots.
    pub both_ends_immovable: bool,
    pub follow_hairs_per_guide: u32,
}

#[derive(Debug)]
pub struct TfxFile {
    pub info: TfxInfo,
    pub strands: Strands,
    /// 4.x: per-vertex inverse mass (0 = pinned).
    pub inverse_mass: Option<Vec<f32>>,
}

fn u32_at(data: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(data[at..at + 4].try_into().expect("4 bytes"))
}

/// Checks an optional array at `offset` of `count` items of `size` bytes fits the file.
fn array_at<'a>(data: &'a [u8], offset: u32, count: u64, size: u64, what: &str) -> Result<Option<&'a [u8]>> {
    if offset == 0 {
        return Ok(None);
    }
    let need = count.saturating_mul(size);
    let end = (offset as u64).saturating_add(need);
    if end > data.len() as u64 {
        return Err(Error::truncated(format!(
            "{what} at offset {offset} needs {need} bytes but the file ends after {} bytes",
            data.len()
        )));
    }
    Ok(Some(&data[offset as usize..end as usize]))
}

/// Parses a `.tfx` file from memory.
pub fn parse(data: &[u8]) -> Result<TfxFile> {
    let mut r = ByteReader::new(data);
    let version = r.f32("version").map_err(|_| {
        Error::truncated(format!(
            "a .tfx file starts with a header but this file has {} bytes",
            data.len()
        ))
    })?;
    let v3 = (2.5..3.5).contains(&version);
    let v4 = (3.5..5.0).contains(&version);
    if !(v3 || v4) {
        return Err(Error::corrupt(format!(
            "not a TressFX .tfx file (version field reads {version}, expected 3.x or 4.x)"
        )));
    }
    let header_len = if v3 { 296 } else { 160 };
    if data.len() < header_len {
        return Err(Error::truncated(format!(
            "a TressFX {version} header is {header_len} bytes but the file has only {}",
            data.len()
        )));
    }
    let strands = u32_at(data, 4);
    let per_strand = u32_at(data, 8);
    if strands == 0 || per_strand < 2 {
        return Err(Error::corrupt(format!(
            "header says {strands} strands of {per_strand} vertices; a groom needs strands of 2 or more"
        )));
    }
    let n = strands as u64 * per_strand as u64;
    let (vertex_size, vertex_off) = if v3 {
        (12u64, u32_at(data, 0x90))
    } else {
        (16u64, u32_at(data, 0x0c))
    };
    if (vertex_off as usize) < header_len {
        return Err(Error::corrupt(format!(
            "vertex array offset {vertex_off} points into the {header_len}-byte header"
        )));
    }
    let what = format!("header claims {strands} strands × {per_strand} vertices; the vertex array");
    let verts = array_at(data, vertex_off, n, vertex_size, &what)?.expect("offset is non-zero");
    let mut points = Vec::with_capacity(n as usize);
    let mut inverse_mass = (!v3).then(|| Vec::with_capacity(n as usize));
    for c in verts.chunks_exact(vertex_size as usize) {
        let f = |i: usize| f32::from_le_bytes(c[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
        points.push([f(0), f(1), f(2)]);
        if let Some(w) = inverse_mass.as_mut() {
            w.push(f(3));
        }
    }
    let counts = vec![per_strand; strands as usize];
    let mut attrs = StrandAttrs::default();
    let (thickness_off, strand_uv_off, color_off) = if v3 {
        (u32_at(data, 0x94), u32_at(data, 0x98), u32_at(data, 0x9c))
    } else {
        (u32_at(data, 0x18), u32_at(data, 0x10), u32_at(data, 0x1c))
    };
    if let Some(t) = array_at(data, thickness_off, strands as u64, 4, "strand thickness array")? {
        attrs.width = Some(Attr::PerStrand(crate::bytes::le_f32s(t)));
    }
    if let Some(uv) = array_at(data, strand_uv_off, strands as u64, 8, "strand UV array")? {
        let f = crate::bytes::le_f32s(uv);
        attrs.root_uv = Some(f.chunks_exact(2).map(|c| [c[0], c[1]]).collect());
    }
    if let Some(col) = array_at(data, color_off, n, 16, "vertex colour array")? {
        let f = crate::bytes::le_f32s(col);
        attrs.color = Some(Attr::PerVertex(
            f.chunks_exact(4).map(|c| [c[0], c[1], c[2]]).collect(),
        ));
    }
    let info = TfxInfo {
        version,
        strands,
        vertices_per_strand: per_strand,
        both_ends_immovable: v3 && u32_at(data, 0x10) & 0xff != 0,
        follow_hairs_per_guide: if v3 { u32_at(data, 0x0c) } else { 0 },
    };
    Ok(TfxFile {
        info,
        strands: Strands::new(points, counts, attrs)?,
        inverse_mass,
    })
}

/// Reads a `.tfx` file from disk.
pub fn read(path: impl AsRef<Path>) -> Result<TfxFile> {
    let path = path.as_ref();
    let data = std::fs::read(path).in_file(path)?;
    parse(&data).in_file(path)
}

/// Serializes strands as a TressFX 4.0 file (every strand must have the same vertex count);
/// used by tests and for handing grooms to TressFX-based engines. Roots get w = 0.
pub fn to_bytes_v4(strands: &Strands) -> Result<Vec<u8>> {
    strands.validate()?;
    let per = *strands
        .counts
        .first()
        .ok_or_else(|| Error::invalid("no strands"))?;
    if strands.counts.iter().any(|&c| c != per) || per < 2 {
        return Err(Error::invalid(
            "TressFX needs every strand to have the same vertex count (≥ 2)",
        ));
    }
    let mut out = vec![0u8; 160];
    out[0..4].copy_from_slice(&4.0f32.to_le_bytes());
    out[4..8].copy_from_slice(&(strands.counts.len() as u32).to_le_bytes());
    out[8..12].copy_from_slice(&per.to_le_bytes());
    out[12..16].copy_from_slice(&160u32.to_le_bytes());
    for (i, p) in strands.points.iter().enumerate() {
        for c in p {
            out.extend_from_slice(&c.to_le_bytes());
        }
        let w = if i % per as usize == 0 { 0.0f32 } else { 1.0 };
        out.extend_from_slice(&w.to_le_bytes());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v3_file(strands: u32, per: u32) -> Vec<u8> {
        let mut d = vec![0u8; 296];
        d[0..4].copy_from_slice(&3.0f32.to_le_bytes());
        d[4..8].copy_from_slice(&strands.to_le_bytes());
        d[8..12].copy_from_slice(&per.to_le_bytes());
        d[0x10] = 1;
        d[0x90..0x94].copy_from_slice(&296u32.to_le_bytes());
        for i in 0..strands * per {
            for c in 0..3 {
                d.extend_from_slice(&((i * 3 + c) as f32).to_le_bytes());
            }
        }
        d
    }

    #[test]
    fn reads_v3_layout() {
        let f = parse(&v3_file(2, 3)).unwrap();
        assert_eq!(f.info.strands, 2);
        assert!(f.info.both_ends_immovable);
        assert_eq!(f.strands.counts, vec![3, 3]);
        assert_eq!(f.strands.points[1], [3.0, 4.0, 5.0]);
        assert!(f.inverse_mass.is_none());
    }

    #[test]
    fn v4_round_trip() {
        let s = Strands::new(
            vec![
                [1.0, 2.0, 3.0],
                [4.0, 5.0, 6.0],
                [7.0, 8.0, 9.0],
                [0.5, 0.25, 0.125],
            ],
            vec![2, 2],
            StrandAttrs::default(),
        )
        .unwrap();
        let f = parse(&to_bytes_v4(&s).unwrap()).unwrap();
        assert_eq!(f.info.version, 4.0);
        assert_eq!(f.strands.points, s.points);
        assert_eq!(f.inverse_mass, Some(vec![0.0, 1.0, 0.0, 1.0]));
    }

    #[test]
    fn truncation_and_garbage() {
        let d = v3_file(4, 4);
        for len in [0, 3, 100, 295, 296, d.len() - 1] {
            assert!(parse(&d[..len]).is_err(), "length {len}");
        }
        let mut bad = d.clone();
        bad[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(
            parse(&bad)
                .unwrap_err()
                .to_string()
                .contains("4294967295 strands")
        );
        let mut bad = d.clone();
        bad[0x90..0x94].copy_from_slice(&8u32.to_le_bytes());
        assert!(parse(&bad).is_err());
        assert!(
            parse(b"HAIRxxxxxxxxxxxxxxxxxxx")
                .unwrap_err()
                .to_string()
                .contains("not a TressFX")
        );
    }
}
