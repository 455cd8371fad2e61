//! A bounds-checked little-endian cursor over a byte slice.
//!
//! Every binary reader in this crate parses through [`ByteReader`], so no reader indexes a slice
//! directly and no reader allocates for a count it has not first checked against the bytes that
//! are actually left: a hostile header cannot make tress allocate more than the file holds.

use crate::error::{Error, Result};

pub struct ByteReader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> ByteReader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        ByteReader { data, pos: 0 }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// Takes `n` bytes; `what` names them in the error ("segment array").
    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(Error::truncated(format!(
                "{what} needs {n} bytes at offset {} but the file ends after {} bytes",
                self.pos,
                self.data.len()
            )));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Checks that `count` items of `item_size` bytes fit in what is left, without taking them.
    pub fn expect(&self, count: u64, item_size: u64, what: &str) -> Result<usize> {
        let need = count.saturating_mul(item_size);
        if need > self.remaining() as u64 {
            return Err(Error::truncated(format!(
                "{what}: {count} × {item_size} bytes needed at offset {} but the file ends after {} bytes",
                self.pos,
                self.data.len()
            )));
        }
        Ok(need as usize)
    }

    pub fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }
    pub fn u16(&mut self, what: &str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }
    pub fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    pub fn i32(&mut self, what: &str) -> Result<i32> {
        Ok(i32::from_le_bytes(self.array(what)?))
    }
    pub fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    pub fn f32(&mut self, what: &str) -> Result<f32> {
        Ok(f32::from_le_bytes(self.array(what)?))
    }

    pub fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// `count` little-endian f32 values (bounds checked before the allocation).
    pub fn f32_vec(&mut self, count: usize, what: &str) -> Result<Vec<f32>> {
        let n = self.expect(count as u64, 4, what)?;
        Ok(le_f32s(self.take(n, what)?))
    }

    /// `count` little-endian f32 triples.
    pub fn vec3_vec(&mut self, count: usize, what: &str) -> Result<Vec<[f32; 3]>> {
        let n = self.expect(count as u64, 12, what)?;
        Ok(le_vec3s(self.take(n, what)?))
    }

    pub fn u16_vec(&mut self, count: usize, what: &str) -> Result<Vec<u16>> {
        let n = self.expect(count as u64, 2, what)?;
        Ok(self
            .take(n, what)?
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect())
    }

    pub fn u32_vec(&mut self, count: usize, what: &str) -> Result<Vec<u32>> {
        let n = self.expect(count as u64, 4, what)?;
        Ok(self
            .take(n, what)?
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}

/// Decodes little-endian f32s (the slice length must be a multiple of 4).
pub fn le_f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Decodes little-endian f32 triples (the slice length must be a multiple of 12).
pub fn le_vec3s(bytes: &[u8]) -> Vec<[f32; 3]> {
    bytes
        .chunks_exact(12)
        .map(|c| {
            [
                f32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                f32::from_le_bytes([c[4], c[5], c[6], c[7]]),
                f32::from_le_bytes([c[8], c[9], c[10], c[11]]),
            ]
        })
        .collect()
}

/// Appends f32 values as little-endian bytes.
pub fn put_f32s(out: &mut Vec<u8>, values: &[f32]) {
    out.reserve(values.len() * 4);
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends f32 triples as little-endian bytes.
pub fn put_vec3s(out: &mut Vec<u8>, values: &[[f32; 3]]) {
    out.reserve(values.len() * 12);
    for v in values {
        for c in v {
            out.extend_from_slice(&c.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_names_what_and_where() {
        let data = [1u8, 0, 0, 0, 7];
        let mut r = ByteReader::new(&data);
        assert_eq!(r.u32("count").unwrap(), 1);
        let e = r.u32("point array").unwrap_err().to_string();
        assert!(e.contains("point array"), "{e}");
        assert!(e.contains("offset 4"), "{e}");
        assert!(e.contains("after 5 bytes"), "{e}");
    }

    #[test]
    fn huge_counts_are_refused_before_allocating() {
        let data = [0u8; 16];
        let mut r = ByteReader::new(&data);
        assert!(r.f32_vec(usize::MAX / 2, "values").is_err());
        assert!(r.vec3_vec(1 << 40, "points").is_err());
        assert_eq!(r.pos(), 0);
    }

    #[test]
    fn f32_round_trip_is_bit_exact() {
        let v = [1.5f32, -0.0, f32::MIN_POSITIVE, 3.0e38];
        let mut bytes = Vec::new();
        put_f32s(&mut bytes, &v);
        let back = le_f32s(&bytes);
        for (a, b) in v.iter().zip(&back) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
    }
}
