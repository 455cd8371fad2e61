//! Cem Yuksel's `.hair` format (<http://www.cemyuksel.com/research/hairmodels/>).
//!
//! Layout (little-endian): a 128-byte header — `"HAIR"`, strand count (u32), point count (u32),
//! a bit field of the arrays present (u32: 1 segments, 2 points, 4 thickness, 8 transparency,
//! 16 colour), default segments per strand (u32), default thickness, transparency (f32) and colour
//! (3 × f32), an 88-byte info string — followed by the arrays present, in that bit order:
//! segments (u16 per strand), points (3 × f32 per point), thickness (f32 per point),
//! transparency (f32 per point), colour (3 × f32 per point). A strand of `s` segments has `s + 1`
//! points; without a segment array every strand has `default_segments + 1`.

use std::path::Path;

use crate::bytes::{ByteReader, put_f32s, put_vec3s};
use crate::error::{Error, InFile, Result};
use crate::strands::{Attr, StrandAttrs, Strands};

pub const MAGIC: &[u8; 4] = b"HAIR";
const HEADER_LEN: usize = 128;
const INFO_LEN: usize = 88;

const HAS_SEGMENTS: u32 = 1;
const HAS_POINTS: u32 = 2;
const HAS_THICKNESS: u32 = 4;
const HAS_TRANSPARENCY: u32 = 8;
const HAS_COLOR: u32 = 16;
const KNOWN_BITS: u32 = 31;

/// The header defaults, used for strands or points whose array is absent.
#[derive(Clone, Debug, PartialEq)]
pub struct HairDefaults {
    pub segments: u32,
    pub thickness: f32,
    pub transparency: f32,
    pub color: [f32; 3],
}

impl Default for HairDefaults {
    fn default() -> Self {
        // Values of Cem Yuksel's reference loader.
        HairDefaults {
            segments: 0,
            thickness: 1.0,
            transparency: 0.0,
            color: [1.0, 1.0, 1.0],
        }
    }
}

/// A `.hair` file as stored: defaults, info string and whichever arrays it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct HairFile {
    pub defaults: HairDefaults,
    pub info: String,
    /// Segments per strand when the file has a segment array.
    pub segments: Option<Vec<u16>>,
    pub points: Vec<[f32; 3]>,
    pub thickness: Option<Vec<f32>>,
    pub transparency: Option<Vec<f32>>,
    pub color: Option<Vec<[f32; 3]>>,
    pub strand_count: u32,
}

impl HairFile {
    /// Vertices of each strand.
    pub fn counts(&self) -> Vec<u32> {
        match &self.segments {
            Some(s) => s.iter().map(|&s| s as u32 + 1).collect(),
            None => vec![self.defaults.segments + 1; self.strand_count as usize],
        }
    }

    /// The arrays present, by bit.
    pub fn array_bits(&self) -> u32 {
        let mut bits = HAS_POINTS;
        if self.segments.is_some() {
            bits |= HAS_SEGMENTS;
        }
        if self.thickness.is_some() {
            bits |= HAS_THICKNESS;
        }
        if self.transparency.is_some() {
            bits |= HAS_TRANSPARENCY;
        }
        if self.color.is_some() {
            bits |= HAS_COLOR;
        }
        bits
    }

    /// Converts to the common strand set; header defaults become constant attributes.
    pub fn into_strands(self) -> Result<Strands> {
        let counts = self.counts();
        let d = &self.defaults;
        let attrs = StrandAttrs {
            width: Some(match self.thickness {
                Some(t) => Attr::PerVertex(t),
                None => Attr::Constant(d.thickness),
            }),
            transparency: Some(match self.transparency {
                Some(t) => Attr::PerVertex(t),
                None => Attr::Constant(d.transparency),
            }),
            color: Some(match self.color {
                Some(c) => Attr::PerVertex(c),
                None => Attr::Constant(d.color),
            }),
            ..Default::default()
        };
        Strands::new(self.points, counts, attrs)
    }

    /// Builds a file from a strand set: constant attributes go to the header, others to arrays.
    pub fn from_strands(strands: &Strands, info: &str) -> Result<Self> {
        strands.validate()?;
        let mut defaults = HairDefaults::default();
        let counts = &strands.counts;
        if let Some(&c) = counts.iter().find(|&&c| c == 0 || c > u16::MAX as u32 + 1) {
            return Err(Error::invalid(format!(
                ".hair stores 1 to 65536 points per strand; a strand has {c}"
            )));
        }
        let uniform = counts.first().filter(|&&c| counts.iter().all(|&x| x == c));
        let segments = match uniform {
            Some(&c) => {
                defaults.segments = c - 1;
                None
            }
            None => Some(counts.iter().map(|&c| (c - 1) as u16).collect()),
        };
        let a = &strands.attrs;
        let thickness = split_attr(a.width.as_ref(), counts, &mut defaults.thickness);
        let transparency = split_attr(a.transparency.as_ref(), counts, &mut defaults.transparency);
        let color = split_attr(a.color.as_ref(), counts, &mut defaults.color);
        Ok(HairFile {
            defaults,
            info: info.to_string(),
            segments,
            points: strands.points.clone(),
            thickness,
            transparency,
            color,
            strand_count: counts.len() as u32,
        })
    }
}

/// A constant attribute goes to the header default; anything else becomes a per-point array.
fn split_attr<T: Copy>(attr: Option<&Attr<T>>, counts: &[u32], default: &mut T) -> Option<Vec<T>> {
    match attr {
        None => None,
        Some(Attr::Constant(c)) => {
            *default = *c;
            None
        }
        Some(a) => Some(a.per_vertex(counts)),
    }
}

/// Parses a `.hair` file from memory.
pub fn parse(data: &[u8]) -> Result<HairFile> {
    if data.len() < HEADER_LEN {
        if data.len() >= 4 && &data[..4] != MAGIC {
            return Err(not_hair(&data[..4]));
        }
        return Err(Error::truncated(format!(
            "a .hair file starts with a {HEADER_LEN}-byte header but this file has only {} bytes",
            data.len()
        )));
    }
    let mut r = ByteReader::new(data);
    let magic = r.take(4, "signature")?;
    if magic != MAGIC {
        return Err(not_hair(magic));
    }
    let strand_count = r.u32("strand count")?;
    let point_count = r.u32("point count")?;
    let bits = r.u32("array flags")?;
    let defaults = HairDefaults {
        segments: r.u32("default segments")?,
        thickness: r.f32("default thickness")?,
        transparency: r.f32("default transparency")?,
        color: [
            r.f32("default colour")?,
            r.f32("default colour")?,
            r.f32("default colour")?,
        ],
    };
    let info_bytes = r.take(INFO_LEN, "info string")?;
    let info_end = info_bytes.iter().position(|&b| b == 0).unwrap_or(INFO_LEN);
    let info = String::from_utf8_lossy(&info_bytes[..info_end]).into_owned();

    if bits & !KNOWN_BITS != 0 {
        return Err(Error::unsupported(format!(
            "array flags 0x{bits:x} name arrays this reader does not know (known: 0x1f)"
        )));
    }
    if bits & HAS_POINTS == 0 {
        return Err(Error::corrupt("the header says the file has no point array"));
    }

    let segments = if bits & HAS_SEGMENTS != 0 {
        let need = strand_count as u64 * 2;
        if need > r.remaining() as u64 {
            return Err(Error::truncated(format!(
                "header claims {strand_count} strands but the file ends after {} bytes (the segment array alone needs {need})",
                data.len()
            )));
        }
        Some(r.u16_vec(strand_count as usize, "segment array")?)
    } else {
        if strand_count > 0 && defaults.segments > u16::MAX as u32 {
            return Err(Error::corrupt(format!(
                "default segment count {} is larger than any strand .hair can hold",
                defaults.segments
            )));
        }
        None
    };

    let implied: u64 = match &segments {
        Some(s) => s.iter().map(|&s| s as u64 + 1).sum(),
        None => strand_count as u64 * (defaults.segments as u64 + 1),
    };
    if implied != point_count as u64 {
        return Err(Error::corrupt(format!(
            "header claims {point_count} points but the {strand_count} strands' segment counts add up to {implied}"
        )));
    }

    let per_point = |bit: u32, size: u64| if bits & bit != 0 { size } else { 0 };
    let need = point_count as u64
        * (12 + per_point(HAS_THICKNESS, 4) + per_point(HAS_TRANSPARENCY, 4) + per_point(HAS_COLOR, 12));
    if need > r.remaining() as u64 {
        return Err(Error::truncated(format!(
            "header claims {strand_count} strands and {point_count} points ({need} bytes of arrays) but the file ends after {} bytes",
            data.len()
        )));
    }
    let n = point_count as usize;
    let points = r.vec3_vec(n, "point array")?;
    let thickness = (bits & HAS_THICKNESS != 0)
        .then(|| r.f32_vec(n, "thickness array"))
        .transpose()?;
    let transparency = (bits & HAS_TRANSPARENCY != 0)
        .then(|| r.f32_vec(n, "transparency array"))
        .transpose()?;
    let color = (bits & HAS_COLOR != 0)
        .then(|| r.vec3_vec(n, "colour array"))
        .transpose()?;

    Ok(HairFile {
        defaults,
        info,
        segments,
        points,
        thickness,
        transparency,
        color,
        strand_count,
    })
}

fn not_hair(magic: &[u8]) -> Error {
    Error::corrupt(format!(
        "not a Cem Yuksel .hair file (starts with {:?}, expected \"HAIR\")",
        String::from_utf8_lossy(magic)
    ))
}

/// Serializes a `.hair` file.
pub fn to_bytes(file: &HairFile) -> Result<Vec<u8>> {
    let n = file.points.len();
    let counts_ok = file.counts().iter().map(|&c| c as u64).sum::<u64>() == n as u64;
    if !counts_ok {
        return Err(Error::invalid(
            "segment counts do not add up to the number of points",
        ));
    }
    for (name, len) in [
        ("thickness", file.thickness.as_ref().map(Vec::len)),
        ("transparency", file.transparency.as_ref().map(Vec::len)),
        ("colour", file.color.as_ref().map(Vec::len)),
    ] {
        if let Some(len) = len
            && len != n
        {
            return Err(Error::invalid(format!(
                "{name} array has {len} values for {n} points"
            )));
        }
    }
    let count = u32::try_from(n).map_err(|_| Error::invalid("too many points for .hair"))?;
    let mut out = Vec::with_capacity(HEADER_LEN + n * 32);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&file.strand_count.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&file.array_bits().to_le_bytes());
    let d = &file.defaults;
    out.extend_from_slice(&d.segments.to_le_bytes());
    put_f32s(&mut out, &[d.thickness, d.transparency]);
    put_f32s(&mut out, &d.color);
    let mut info = [0u8; INFO_LEN];
    let bytes = file.info.as_bytes();
    let len = bytes.len().min(INFO_LEN - 1);
    info[..len].copy_from_slice(&bytes[..len]);
    out.extend_from_slice(&info);
    if let Some(s) = &file.segments {
        for v in s {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    put_vec3s(&mut out, &file.points);
    if let Some(t) = &file.thickness {
        put_f32s(&mut out, t);
    }
    if let Some(t) = &file.transparency {
        put_f32s(&mut out, t);
    }
    if let Some(c) = &file.color {
        put_vec3s(&mut out, c);
    }
    Ok(out)
}

/// Reads a `.hair` file from disk.
pub fn read(path: impl AsRef<Path>) -> Result<HairFile> {
    let path = path.as_ref();
    let data = std::fs::read(path).in_file(path)?;
    parse(&data).in_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> HairFile {
        HairFile {
            defaults: HairDefaults {
                segments: 2,
                thickness: 0.1,
                transparency: 0.25,
                color: [1.0, 0.5, 0.25],
            },
            info: "test".into(),
            segments: Some(vec![1, 2]),
            points: vec![
                [0.0, 1.0, 2.0],
                [3.0, 4.0, 5.0],
                [6.0, 7.0, 8.0],
                [9.0, 10.0, 11.0],
                [1.5, -2.5, 1e-7],
            ],
            thickness: Some(vec![0.1, 0.2, 0.3, 0.4, 0.5]),
            transparency: None,
            color: Some(vec![[0.1, 0.2, 0.3]; 5]),
            strand_count: 2,
        }
    }

    #[test]
    fn round_trip_is_exact() {
        let f = sample();
        let bytes = to_bytes(&f).unwrap();
        assert_eq!(bytes.len(), 128 + 2 * 2 + 5 * 12 + 5 * 4 + 5 * 12);
        assert_eq!(parse(&bytes).unwrap(), f);
    }

    #[test]
    fn header_layout_matches_the_spec() {
        let bytes = to_bytes(&sample()).unwrap();
        assert_eq!(&bytes[0..4], b"HAIR");
        assert_eq!(u32::from_le_bytes(bytes[4..8].try_into().unwrap()), 2);
        assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 5);
        assert_eq!(
            u32::from_le_bytes(bytes[12..16].try_into().unwrap()),
            1 | 2 | 4 | 16
        );
        assert_eq!(u32::from_le_bytes(bytes[16..20].try_into().unwrap()), 2);
        assert_eq!(f32::from_le_bytes(bytes[20..24].try_into().unwrap()), 0.1);
        assert_eq!(&bytes[40..44], b"test");
        // The segment array starts right after the header.
        assert_eq!(u16::from_le_bytes(bytes[128..130].try_into().unwrap()), 1);
    }

    #[test]
    fn defaults_apply_without_arrays() {
        let mut f = sample();
        f.segments = None;
        f.defaults.segments = 1;
        f.points.truncate(4);
        f.thickness = None;
        f.color = None;
        let back = parse(&to_bytes(&f).unwrap()).unwrap();
        let s = back.into_strands().unwrap();
        assert_eq!(s.counts, vec![2, 2]);
        assert_eq!(s.attrs.width, Some(Attr::Constant(0.1)));
        assert_eq!(s.attrs.color, Some(Attr::Constant([1.0, 0.5, 0.25])));
    }

    #[test]
    fn strand_count_beyond_the_file_is_reported() {
        let mut bytes = to_bytes(&sample()).unwrap();
        bytes[4..8].copy_from_slice(&10000u32.to_le_bytes());
        bytes.truncate(812);
        let e = parse(&bytes).unwrap_err().to_string();
        assert!(e.contains("10000 strands"), "{e}");
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = to_bytes(&sample()).unwrap();
        for len in 0..bytes.len() {
            assert!(parse(&bytes[..len]).is_err(), "length {len} parsed");
        }
    }

    #[test]
    fn wrong_magic_is_named() {
        let mut bytes = to_bytes(&sample()).unwrap();
        bytes[0] = b'X';
        let e = parse(&bytes).unwrap_err().to_string();
        assert!(e.contains("not a Cem Yuksel .hair file"), "{e}");
    }

    #[test]
    fn strands_round_trip_through_hair() {
        let s = sample().into_strands().unwrap();
        let f = HairFile::from_strands(&s, "x").unwrap();
        let back = parse(&to_bytes(&f).unwrap()).unwrap().into_strands().unwrap();
        assert_eq!(back.points, s.points);
        assert_eq!(back.counts, s.counts);
        assert_eq!(back.attrs.width, s.attrs.width);
    }
}
