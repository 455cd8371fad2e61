//! `.tskin`: a fitted strand-skinning model (001 §6): for every normal strand, its eligible
//! guides and the eligible guide sets fitted over them, each guide's weight along the strand a
//! quadratic polynomial (001 Eq. 8: three coefficients per guide–strand pair); plus, for the
//! runtime guide graph, the training averages A_ij and B_ij of every guide pair that shares an
//! eligible set (001 §7.1).
//!
//! Little-endian: magic `TRESSKIN`, format version (u32, 1), the metadata length (u32) and the
//! metadata (UTF-8 JSON: what the model was fitted from and how), the counts of the arrays
//! below (7 × u64), the decompressed body length (u64), the zstd-compressed body (u64 length +
//! bytes) and a CRC-32 of everything before it, checked before anything is decompressed.
//!
//! The body holds, in order: `counts` (u32 per strand: points of the groom's strands),
//! `guides` (u32 strand indices), `eligible_start` (u32 per strand + 1) and `eligible` (u32
//! guide slots), `set_start` (u32 per strand + 1) and `set_mask` (u16 per set: which of the
//! strand's eligible guides the set holds, bit k = k-th eligible guide), `coefs` (3 × f32 per
//! member of every set, members in bit order: a, b, c of w(t) = a·t² + b·t + c with
//! t = i / (n − 1) along the strand), `pairs` (2 × u32 guide slots, a < b) with `pair_a` and
//! `pair_b` (f32 each).

use crate::bytes::ByteReader;
use crate::error::{Error, Result};

pub const MAGIC: &[u8; 8] = b"TRESSKIN";
pub const VERSION: u32 = 1;
/// Most eligible guides per strand (set masks are 16 bits).
pub const MAX_ELIGIBLE: usize = 16;
/// Most strands, guides, sets or pairs a file may declare.
const MAX_ITEMS: u64 = 1 << 30;

/// A skinning model, as flat arrays (one allocation per array, whatever the groom's size).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinModel {
    /// What the model was fitted from and how (JSON).
    pub meta: String,
    /// Points of every strand of the groom the model belongs to.
    pub counts: Vec<u32>,
    /// Guide strands (indices into the groom), increasing; a guide's slot is its position here.
    pub guides: Vec<u32>,
    /// Strand `s`'s eligible guide slots are `eligible[eligible_start[s]..eligible_start[s + 1]]`.
    pub eligible_start: Vec<u32>,
    pub eligible: Vec<u32>,
    /// Strand `s`'s sets are `set_mask[set_start[s]..set_start[s + 1]]`; the first is the whole
    /// eligible set (static skinning).
    pub set_start: Vec<u32>,
    pub set_mask: Vec<u16>,
    /// Quadratic weight coefficients, per member of every set in order.
    pub coefs: Vec<[f32; 3]>,
    /// Guide pairs (slots, a < b) that share an eligible set, with their training averages of
    /// squared position and velocity differences (A_ij, B_ij of 001 §7.1).
    pub pairs: Vec<[u32; 2]>,
    pub pair_a: Vec<f32>,
    pub pair_b: Vec<f32>,
}

impl SkinModel {
    pub fn strand_count(&self) -> usize {
        self.counts.len()
    }

    /// Where each set's coefficients start in `coefs` (one entry per set, plus the end).
    pub fn coef_start(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.set_mask.len() + 1);
        let mut o = 0u32;
        out.push(0);
        for m in &self.set_mask {
            o += m.count_ones();
            out.push(o);
        }
        out
    }

    /// Checks every index and count against the others.
    pub fn validate(&self) -> Result<()> {
        let n = self.counts.len();
        let bad = |m: String| Err(Error::corrupt(m));
        if self.eligible_start.len() != n + 1 || self.set_start.len() != n + 1 {
            return bad(format!(
                "{n} strands but {} eligible offsets and {} set offsets",
                self.eligible_start.len(),
                self.set_start.len()
            ));
        }
        if self.guides.windows(2).any(|w| w[0] >= w[1]) || self.guides.iter().any(|&g| g as usize >= n) {
            return bad("guide strands are not increasing strand indices of the groom".into());
        }
        let monotone = |v: &[u32], end: usize, what: &str| -> Result<()> {
            if v[0] != 0 || v.windows(2).any(|w| w[0] > w[1]) || *v.last().expect("n + 1 > 0") as usize != end
            {
                return Err(Error::corrupt(format!(
                    "{what} offsets are not increasing from 0 to {end}"
                )));
            }
            Ok(())
        };
        monotone(&self.eligible_start, self.eligible.len(), "eligible-guide")?;
        monotone(&self.set_start, self.set_mask.len(), "set")?;
        let guides = self.guides.len() as u32;
        for s in 0..n {
            let e = (self.eligible_start[s + 1] - self.eligible_start[s]) as usize;
            if e > MAX_ELIGIBLE {
                return bad(format!(
                    "strand {s} has {e} eligible guides (at most {MAX_ELIGIBLE})"
                ));
            }
            let full = if e == MAX_ELIGIBLE {
                u16::MAX
            } else {
                ((1u32 << e) - 1) as u16
            };
            let sets = &self.set_mask[self.set_start[s] as usize..self.set_start[s + 1] as usize];
            if sets.iter().any(|&m| m == 0 || m & !full != 0) {
                return bad(format!(
                    "strand {s} has a guide set outside its {e} eligible guides"
                ));
            }
        }
        if self.eligible.iter().any(|&g| g >= guides) {
            return bad(format!("an eligible guide slot is not below the {guides} guides"));
        }
        let members: u64 = self.set_mask.iter().map(|m| m.count_ones() as u64).sum();
        if members != self.coefs.len() as u64 {
            return bad(format!(
                "{} coefficient triples for {members} set members",
                self.coefs.len()
            ));
        }
        if self.pair_a.len() != self.pairs.len() || self.pair_b.len() != self.pairs.len() {
            return bad("guide pairs and their averages differ in number".into());
        }
        if self.pairs.iter().any(|p| p[0] >= p[1] || p[1] >= guides) {
            return bad("a guide pair is not two increasing guide slots".into());
        }
        if self
            .coefs
            .iter()
            .flatten()
            .chain(&self.pair_a)
            .chain(&self.pair_b)
            .any(|x| !x.is_finite())
        {
            return bad("a coefficient or pair average is not finite".into());
        }
        Ok(())
    }
}

fn lens(m: &SkinModel) -> [u64; 7] {
    [
        m.counts.len() as u64,
        m.guides.len() as u64,
        m.eligible.len() as u64,
        m.set_mask.len() as u64,
        m.coefs.len() as u64,
        m.pairs.len() as u64,
        0,
    ]
}

/// Serializes a model (zstd level 3).
pub fn to_bytes(m: &SkinModel) -> Result<Vec<u8>> {
    m.validate()
        .map_err(|e| Error::invalid(format!("not a consistent skinning model: {e}")))?;
    let mut body = Vec::new();
    for v in [&m.counts, &m.guides, &m.eligible_start, &m.eligible, &m.set_start] {
        body.extend_from_slice(bytemuck::cast_slice(v));
    }
    body.extend_from_slice(bytemuck::cast_slice(&m.set_mask));
    body.extend_from_slice(bytemuck::cast_slice(&m.coefs));
    body.extend_from_slice(bytemuck::cast_slice(&m.pairs));
    body.extend_from_slice(bytemuck::cast_slice(&m.pair_a));
    body.extend_from_slice(bytemuck::cast_slice(&m.pair_b));
    let packed = zstd::bulk::compress(&body, 3).map_err(Error::from)?;
    let mut out = Vec::with_capacity(packed.len() + m.meta.len() + 96);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(m.meta.len() as u32).to_le_bytes());
    out.extend_from_slice(m.meta.as_bytes());
    for l in lens(m) {
        out.extend_from_slice(&l.to_le_bytes());
    }
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&(packed.len() as u64).to_le_bytes());
    out.extend_from_slice(&packed);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    Ok(out)
}

fn array<T: bytemuck::Pod>(r: &mut ByteReader, count: u64, what: &str) -> Result<Vec<T>> {
    let size = std::mem::size_of::<T>() as u64;
    let n = r.expect(count, size, what)?;
    let bytes = r.take(n, what)?;
    Ok(bytemuck::pod_collect_to_vec(bytes))
}

/// Parses a model file.
pub fn parse(data: &[u8]) -> Result<SkinModel> {
    if data.len() < 8 || &data[..8] != MAGIC {
        return Err(Error::corrupt("not a tress skinning model (no TRESSKIN magic)"));
    }
    if data.len() < 8 + 4 + 4 + 4 {
        return Err(Error::truncated(format!(
            "a .tskin file is at least 20 bytes, this one {}",
            data.len()
        )));
    }
    let (body, tail) = data.split_at(data.len() - 4);
    let crc = u32::from_le_bytes(tail.try_into().expect("4 bytes"));
    if crc32fast::hash(body) != crc {
        return Err(Error::corrupt(
            "checksum mismatch: the skinning model is damaged or truncated; fit it again",
        ));
    }
    let mut r = ByteReader::new(body);
    r.take(8, "magic")?;
    let version = r.u32("version")?;
    if version != VERSION {
        return Err(Error::unsupported(format!(
            "skinning model format version {version}; this tress reads version {VERSION}"
        )));
    }
    let meta_len = r.u32("metadata length")? as usize;
    let meta = std::str::from_utf8(r.take(meta_len, "metadata")?)
        .map_err(|_| Error::corrupt("the metadata is not UTF-8"))?
        .to_string();
    let mut l = [0u64; 7];
    for (i, x) in l.iter_mut().enumerate() {
        *x = r.u64(&format!("array length {i}"))?;
        if *x > MAX_ITEMS {
            return Err(Error::corrupt(format!(
                "an array of {x} items (at most {MAX_ITEMS})"
            )));
        }
    }
    let [strands, guides, eligible, sets, coefs, pairs, _] = l;
    let raw_len = r.u64("body length")?;
    let packed_len = r.u64("compressed body length")?;
    let packed = r.take(
        usize::try_from(packed_len).map_err(|_| Error::corrupt("compressed body too long"))?,
        "compressed body",
    )?;
    // What the declared arrays need; the body must be exactly that.
    let need = 4 * (strands + guides + (strands + 1) + eligible + (strands + 1))
        + 2 * sets
        + 12 * coefs
        + 8 * pairs
        + 8 * pairs;
    if raw_len != need {
        return Err(Error::corrupt(format!(
            "the body is {raw_len} bytes but its arrays need {need}"
        )));
    }
    // zstd of this data does not compress 64-fold; refuse to allocate for bigger claims.
    if raw_len > 64 * packed_len + (1 << 20) {
        return Err(Error::corrupt(format!(
            "a {packed_len}-byte compressed body claims {raw_len} bytes"
        )));
    }
    let raw = zstd::bulk::decompress(packed, raw_len as usize)
        .map_err(|e| Error::corrupt(format!("the compressed body does not decompress: {e}")))?;
    if raw.len() as u64 != raw_len {
        return Err(Error::corrupt("the body decompresses to the wrong length"));
    }
    let mut b = ByteReader::new(&raw);
    let m = SkinModel {
        meta,
        counts: array(&mut b, strands, "strand point counts")?,
        guides: array(&mut b, guides, "guide strands")?,
        eligible_start: array(&mut b, strands + 1, "eligible offsets")?,
        eligible: array(&mut b, eligible, "eligible guides")?,
        set_start: array(&mut b, strands + 1, "set offsets")?,
        set_mask: array(&mut b, sets, "guide sets")?,
        coefs: array(&mut b, coefs, "weight coefficients")?,
        pairs: array(&mut b, pairs, "guide pairs")?,
        pair_a: array(&mut b, pairs, "pair position averages")?,
        pair_b: array(&mut b, pairs, "pair velocity averages")?,
    };
    m.validate()?;
    Ok(m)
}

/// Reads a model file.
pub fn read(path: &std::path::Path) -> Result<SkinModel> {
    use crate::error::InFile;
    let data = std::fs::read(path).in_file(path)?;
    parse(&data).in_file(path)
}

/// Writes a model file atomically.
pub fn write(path: &std::path::Path, m: &SkinModel) -> Result<()> {
    use crate::error::InFile;
    let bytes = to_bytes(m).in_file(path)?;
    crate::atomic::write(path, &bytes).in_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> SkinModel {
        // Three strands of 4 points; strand 1 is the only guide besides strand 2.
        SkinModel {
            meta: "{\"fitted\": true}".into(),
            counts: vec![4, 4, 4],
            guides: vec![1, 2],
            eligible_start: vec![0, 2, 2, 2],
            eligible: vec![0, 1],
            set_start: vec![0, 3, 3, 3],
            set_mask: vec![0b11, 0b01, 0b10],
            coefs: vec![
                [0.0, 0.1, 0.4],
                [0.0, -0.1, 0.6],
                [0.0, 0.0, 1.0],
                [0.0, 0.0, 1.0],
            ],
            pairs: vec![[0, 1]],
            pair_a: vec![2.5],
            pair_b: vec![40.0],
        }
    }

    #[test]
    fn round_trip_and_every_damage_is_an_error() {
        let m = model();
        let bytes = to_bytes(&m).unwrap();
        assert_eq!(parse(&bytes).unwrap(), m);
        for cut in 0..bytes.len() {
            assert!(parse(&bytes[..cut]).is_err(), "truncated at {cut}");
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x20;
            assert!(parse(&b).is_err(), "flipped byte {i}");
        }
    }

    #[test]
    fn inconsistent_models_are_refused() {
        let mut m = model();
        m.set_mask[1] = 0b100; // a guide the strand does not have
        assert!(to_bytes(&m).is_err());
        let mut m = model();
        m.eligible[1] = 7; // no such guide slot
        assert!(m.validate().is_err());
        let mut m = model();
        m.coefs.pop();
        assert!(m.validate().is_err());
        let mut m = model();
        m.pairs[0] = [1, 0];
        assert!(m.validate().is_err());
        // A hostile header cannot make the reader allocate: the CRC is recomputed so only the
        // claimed length is wrong.
        let mut bytes = to_bytes(&model()).unwrap();
        let at = 8 + 4 + 4 + m.meta.len();
        bytes[at..at + 8].copy_from_slice(&(1u64 << 29).to_le_bytes());
        let n = bytes.len() - 4;
        let crc = crc32fast::hash(&bytes[..n]);
        bytes[n..].copy_from_slice(&crc.to_le_bytes());
        assert!(parse(&bytes).is_err());
    }
}
