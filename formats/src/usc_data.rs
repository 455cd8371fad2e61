//! USC-HairSalon `.data` grooms (Hu et al., "Single-view hair modeling using a hairstyle database").
//!
//! Little-endian: an int32 strand count, then per strand an int32 vertex count `n` followed by
//! `n` × 3 float32 positions. There is no header magic, so the reader checks that the counts
//! account for every byte of the file.

use std::path::Path;

use crate::bytes::ByteReader;
use crate::error::{Error, InFile, Result};
use crate::strands::{StrandAttrs, Strands};

/// Parses a `.data` groom from memory.
pub fn parse(data: &[u8]) -> Result<Strands> {
    let mut r = ByteReader::new(data);
    let count = r.i32("strand count").map_err(|_| {
        Error::truncated(format!(
            "a .data groom starts with a 4-byte strand count but the file has {} bytes",
            data.len()
        ))
    })?;
    if count < 0 {
        return Err(Error::corrupt(format!("strand count is negative ({count})")));
    }
    // Every strand takes at least its 4-byte count, so this bounds the allocation by the file.
    if count as u64 * 4 > r.remaining() as u64 {
        return Err(Error::truncated(format!(
            "header claims {count} strands but the file ends after {} bytes",
            data.len()
        )));
    }
    let mut counts = Vec::with_capacity(count as usize);
    let mut points: Vec<[f32; 3]> = Vec::with_capacity(r.remaining() / 12);
    for s in 0..count {
        let n = r.i32("vertex count").map_err(|_| {
            Error::truncated(format!(
                "header claims {count} strands but the file ends after {s} of them ({} bytes)",
                data.len()
            ))
        })?;
        if n < 0 {
            return Err(Error::corrupt(format!(
                "strand {s} has a negative vertex count ({n}) at offset {}",
                r.pos() - 4
            )));
        }
        let bytes = r.expect(n as u64, 12, "strand").map_err(|_| {
            Error::truncated(format!(
                "strand {s} of {count} claims {n} vertices but the file ends after {} bytes",
                data.len()
            ))
        })?;
        let raw = r.take(bytes, "strand")?;
        points.extend(crate::bytes::le_vec3s(raw));
        counts.push(n as u32);
    }
    if r.remaining() != 0 {
        return Err(Error::corrupt(format!(
            "{} bytes follow the last of the {count} strands; this is not a USC .data groom",
            r.remaining()
        )));
    }
    Strands::new(points, counts, StrandAttrs::default())
}

/// Serializes strands as a `.data` groom (used by tests and by `tress convert`).
pub fn to_bytes(strands: &Strands) -> Result<Vec<u8>> {
    strands.validate()?;
    let n = i32::try_from(strands.counts.len()).map_err(|_| Error::invalid("too many strands"))?;
    let mut out = Vec::with_capacity(4 + strands.counts.len() * 4 + strands.points.len() * 12);
    out.extend_from_slice(&n.to_le_bytes());
    for (s, range) in strands.offsets().windows(2).enumerate() {
        out.extend_from_slice(&(strands.counts[s] as i32).to_le_bytes());
        crate::bytes::put_vec3s(&mut out, &strands.points[range[0]..range[1]]);
    }
    Ok(out)
}

/// Reads a `.data` groom from disk.
pub fn read(path: impl AsRef<Path>) -> Result<Strands> {
    let path = path.as_ref();
    let data = std::fs::read(path).in_file(path)?;
    parse(&data).in_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Strands {
        Strands::new(
            vec![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],
            vec![1, 0, 2],
            StrandAttrs::default(),
        )
        .unwrap()
    }

    #[test]
    fn round_trip() {
        let bytes = to_bytes(&sample()).unwrap();
        assert_eq!(bytes.len(), 4 + 3 * 4 + 3 * 12);
        assert_eq!(parse(&bytes).unwrap(), sample());
    }

    #[test]
    fn truncations_and_trailing_bytes_fail() {
        let bytes = to_bytes(&sample()).unwrap();
        for len in 0..bytes.len() {
            assert!(parse(&bytes[..len]).is_err(), "length {len}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(parse(&longer).is_err());
    }

    #[test]
    fn hostile_counts() {
        let mut bytes = (i32::MAX).to_le_bytes().to_vec();
        bytes.extend_from_slice(&[0; 8]);
        let e = parse(&bytes).unwrap_err().to_string();
        assert!(e.contains("2147483647 strands"), "{e}");
        let mut bytes = 1i32.to_le_bytes().to_vec();
        bytes.extend_from_slice(&(-5i32).to_le_bytes());
        assert!(parse(&bytes).unwrap_err().to_string().contains("negative"));
    }
}
