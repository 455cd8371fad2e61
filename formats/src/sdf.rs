//! `.sdf`: tress's cache of a signed distance grid, so farm jobs do not rebuild it.
//!
//! Little-endian: magic `TRESSSDF`, format version (u32, 1), node counts (3 × u32), origin
//! (3 × f32), cell size (f32), band width in cells (u32), the source mesh's MurmurHash3 digest
//! (16 bytes, to notice a stale cache), the zstd-compressed node values (u64 length + bytes,
//! f32, x fastest) and a CRC-32 of everything before it. The CRC is checked before anything is
//! decompressed.

use std::io::Read;
use std::path::Path;

use crate::bytes::ByteReader;
use crate::error::{Error, InFile, Result};

pub const MAGIC: &[u8; 8] = b"TRESSSDF";
pub const VERSION: u32 = 1;
/// Largest grid a file may declare (1 GiB of values).
pub const MAX_NODES: u64 = 268_435_456;

#[derive(Clone, Debug, PartialEq)]
pub struct SdfFile {
    pub dims: [u32; 3],
    pub origin: [f32; 3],
    pub cell: f32,
    pub band_cells: u32,
    pub mesh_digest: [u8; 16],
    pub values: Vec<f32>,
}

/// Serializes a grid (zstd level 3).
pub fn to_bytes(f: &SdfFile) -> Result<Vec<u8>> {
    let n: u64 = f.dims.iter().map(|&d| d as u64).product();
    if n != f.values.len() as u64 {
        return Err(Error::invalid(format!(
            "{} values for a {:?} grid",
            f.values.len(),
            f.dims
        )));
    }
    let raw: &[u8] = bytemuck::cast_slice(&f.values);
    let packed = zstd::bulk::compress(raw, 3).map_err(Error::from)?;
    let mut out = Vec::with_capacity(packed.len() + 80);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    for d in f.dims {
        out.extend_from_slice(&d.to_le_bytes());
    }
    crate::bytes::put_f32s(&mut out, &f.origin);
    out.extend_from_slice(&f.cell.to_le_bytes());
    out.extend_from_slice(&f.band_cells.to_le_bytes());
    out.extend_from_slice(&f.mesh_digest);
    out.extend_from_slice(&(packed.len() as u64).to_le_bytes());
    out.extend_from_slice(&packed);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    Ok(out)
}

/// Parses a grid file.
pub fn parse(data: &[u8]) -> Result<SdfFile> {
    if data.len() < 8 || &data[..8] != MAGIC {
        return Err(Error::corrupt("not a tress .sdf file (no TRESSSDF magic)"));
    }
    if data.len() < 8 + 4 + 12 + 12 + 8 + 16 + 8 + 4 {
        return Err(Error::truncated(format!(
            "a .sdf header is 72 bytes but the file has {}",
            data.len()
        )));
    }
    let (body, tail) = data.split_at(data.len() - 4);
    let crc = u32::from_le_bytes(tail.try_into().expect("4 bytes"));
    if crc32fast::hash(body) != crc {
        return Err(Error::corrupt(
            "checksum mismatch: the .sdf file is damaged or truncated; rebuild it",
        ));
    }
    let mut r = ByteReader::new(body);
    r.take(8, "magic")?;
    let version = r.u32("version")?;
    if version != VERSION {
        return Err(Error::unsupported(format!(
            ".sdf version {version} (this tress reads version {VERSION})"
        )));
    }
    let dims = [r.u32("dims")?, r.u32("dims")?, r.u32("dims")?];
    let origin = [r.f32("origin")?, r.f32("origin")?, r.f32("origin")?];
    let cell = r.f32("cell")?;
    let band_cells = r.u32("band")?;
    let mesh_digest = r.array::<16>("mesh digest")?;
    let n: u64 = dims.iter().map(|&d| d as u64).product();
    if dims.iter().any(|&d| d < 2) || n > MAX_NODES || !(cell > 0.0 && cell.is_finite()) {
        return Err(Error::corrupt(format!(
            "implausible grid: {dims:?} nodes of {cell}"
        )));
    }
    let len = r.u64("payload length")?;
    let packed = r.take(
        usize::try_from(len).unwrap_or(usize::MAX).min(r.remaining() + 1),
        "payload",
    )?;
    // Decompress at most the declared size: a lying payload cannot make us allocate more.
    let mut raw = Vec::new();
    let want = n * 4;
    zstd::stream::read::Decoder::new(packed)
        .map_err(Error::from)?
        .take(want + 1)
        .read_to_end(&mut raw)
        .map_err(|e| Error::corrupt(format!("the grid values do not decompress ({e})")))?;
    if raw.len() as u64 != want {
        return Err(Error::corrupt(format!(
            "the grid holds {} bytes of values, {want} expected",
            raw.len()
        )));
    }
    Ok(SdfFile {
        dims,
        origin,
        cell,
        band_cells,
        mesh_digest,
        values: crate::bytes::le_f32s(&raw),
    })
}

pub fn read(path: impl AsRef<Path>) -> Result<SdfFile> {
    let path = path.as_ref();
    let data = std::fs::read(path).in_file(path)?;
    parse(&data).in_file(path)
}

/// Writes a grid atomically.
pub fn write(path: impl AsRef<Path>, f: &SdfFile) -> Result<()> {
    let path = path.as_ref();
    crate::atomic::write(path, &to_bytes(f).in_file(path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SdfFile {
        SdfFile {
            dims: [3, 4, 5],
            origin: [-1.0, 0.5, 2.0],
            cell: 0.25,
            band_cells: 4,
            mesh_digest: [7; 16],
            values: (0..60).map(|i| i as f32 * 0.5 - 3.0).collect(),
        }
    }

    #[test]
    fn round_trip() {
        let f = sample();
        assert_eq!(parse(&to_bytes(&f).unwrap()).unwrap(), f);
    }

    #[test]
    fn damage_is_detected() {
        let bytes = to_bytes(&sample()).unwrap();
        for len in [0, 7, 30, bytes.len() - 1] {
            assert!(parse(&bytes[..len]).is_err());
        }
        let mut flipped = bytes.clone();
        flipped[40] ^= 0x10;
        assert!(parse(&flipped).unwrap_err().to_string().contains("checksum"));
    }
}
