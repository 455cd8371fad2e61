//! The two hashes of Alembic's Ogawa layer.
//!
//! * **Sample digests**: MurmurHash3 x64-128 (seed 0) of a sample's value bytes, stored in the 16
//!   bytes before every sample's data. Applications use them as cache keys ("same array as
//!   before"), and the writer uses them to store each distinct value once per archive.
//! * **Property and object hashes**: SpookyHash V2 (Bob Jenkins, 128-bit, seeds 0, 0) over
//!   headers and child hashes, stored in each object's 32-byte trailer. AbcDiff skips subtrees
//!   whose hashes agree, so they must be right. Its `ShortEnd` mixer also folds sample digests
//!   together (see `abc::write`).

/// A 128-bit hash as two little-endian words, in file order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Hash128(pub u64, pub u64);

impl Hash128 {
    pub const ZERO: Hash128 = Hash128(0, 0);

    pub fn to_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.0.to_le_bytes());
        b[8..].copy_from_slice(&self.1.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8; 16]) -> Self {
        Hash128(
            u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
            u64::from_le_bytes(b[8..].try_into().expect("8 bytes")),
        )
    }

    pub fn hex(self) -> String {
        self.to_bytes().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// MurmurHash3 x64-128 with seed 0: the digest Alembic stores before each sample.
pub fn digest(bytes: &[u8]) -> Hash128 {
    if bytes.is_empty() {
        return Hash128::ZERO;
    }
    let h = fastmurmur3::murmur3_x64_128(bytes, 0);
    Hash128(h as u64, (h >> 64) as u64)
}

const SC_CONST: u64 = 0xdead_beef_dead_beef;

/// SpookyHash V2 `ShortMix`: rounds alternate between mixing (h2, h3) into (h0, h1) and back.
#[inline]
fn short_mix(h0: &mut u64, h1: &mut u64, h2: &mut u64, h3: &mut u64) {
    *h2 = h2.rotate_left(50).wrapping_add(*h3);
    *h0 ^= *h2;
    *h3 = h3.rotate_left(52).wrapping_add(*h0);
    *h1 ^= *h3;
    *h0 = h0.rotate_left(30).wrapping_add(*h1);
    *h2 ^= *h0;
    *h1 = h1.rotate_left(41).wrapping_add(*h2);
    *h3 ^= *h1;
    *h2 = h2.rotate_left(54).wrapping_add(*h3);
    *h0 ^= *h2;
    *h3 = h3.rotate_left(48).wrapping_add(*h0);
    *h1 ^= *h3;
    *h0 = h0.rotate_left(38).wrapping_add(*h1);
    *h2 ^= *h0;
    *h1 = h1.rotate_left(37).wrapping_add(*h2);
    *h3 ^= *h1;
    *h2 = h2.rotate_left(62).wrapping_add(*h3);
    *h0 ^= *h2;
    *h3 = h3.rotate_left(34).wrapping_add(*h0);
    *h1 ^= *h3;
    *h0 = h0.rotate_left(5).wrapping_add(*h1);
    *h2 ^= *h0;
    *h1 = h1.rotate_left(36).wrapping_add(*h2);
    *h3 ^= *h1;
}

/// SpookyHash V2 `ShortEnd`: the final 4-word mixer. Alembic also uses it on its own to fold
/// sample digests into a property's running hash.
pub fn short_end(mut h0: u64, mut h1: u64, mut h2: u64, mut h3: u64) -> (u64, u64, u64, u64) {
    h3 ^= h2;
    h2 = h2.rotate_left(15);
    h3 = h3.wrapping_add(h2);
    h0 ^= h3;
    h3 = h3.rotate_left(52);
    h0 = h0.wrapping_add(h3);
    h1 ^= h0;
    h0 = h0.rotate_left(26);
    h1 = h1.wrapping_add(h0);
    h2 ^= h1;
    h1 = h1.rotate_left(51);
    h2 = h2.wrapping_add(h1);
    h3 ^= h2;
    h2 = h2.rotate_left(28);
    h3 = h3.wrapping_add(h2);
    h0 ^= h3;
    h3 = h3.rotate_left(9);
    h0 = h0.wrapping_add(h3);
    h1 ^= h0;
    h0 = h0.rotate_left(47);
    h1 = h1.wrapping_add(h0);
    h2 ^= h1;
    h1 = h1.rotate_left(54);
    h2 = h2.wrapping_add(h1);
    h3 ^= h2;
    h2 = h2.rotate_left(32);
    h3 = h3.wrapping_add(h2);
    h0 ^= h3;
    h3 = h3.rotate_left(25);
    h0 = h0.wrapping_add(h3);
    h1 ^= h0;
    h0 = h0.rotate_left(63);
    h1 = h1.wrapping_add(h0);
    (h0, h1, h2, h3)
}

#[inline]
fn word(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
}

/// SpookyHash V2 for messages under 192 bytes (`Short`).
fn spooky_short(msg: &[u8], seed1: u64, seed2: u64) -> Hash128 {
    let n = msg.len();
    let (mut a, mut b, mut c, mut d) = (seed1, seed2, SC_CONST, SC_CONST);
    let mut rest = msg;
    if n > 15 {
        while rest.len() >= 32 {
            c = c.wrapping_add(word(rest, 0));
            d = d.wrapping_add(word(rest, 1));
            short_mix(&mut a, &mut b, &mut c, &mut d);
            a = a.wrapping_add(word(rest, 2));
            b = b.wrapping_add(word(rest, 3));
            rest = &rest[32..];
        }
        if rest.len() >= 16 {
            c = c.wrapping_add(word(rest, 0));
            d = d.wrapping_add(word(rest, 1));
            short_mix(&mut a, &mut b, &mut c, &mut d);
            rest = &rest[16..];
        }
    }
    d = d.wrapping_add((n as u64) << 56);
    if rest.is_empty() {
        c = c.wrapping_add(SC_CONST);
        d = d.wrapping_add(SC_CONST);
    } else {
        // The reference's fall-through switch equals adding the zero-padded tail words.
        let mut tail = [0u8; 16];
        tail[..rest.len()].copy_from_slice(rest);
        c = c.wrapping_add(word(&tail, 0));
        if rest.len() > 8 {
            d = d.wrapping_add(word(&tail, 1));
        }
    }
    let (a, b, _, _) = short_end(a, b, c, d);
    Hash128(a, b)
}

#[inline]
#[allow(clippy::needless_range_loop)] // the index also picks neighbours modulo 12
fn mix(data: &[u8], s: &mut [u64; 12]) {
    const ROT: [u32; 12] = [11, 32, 43, 31, 17, 28, 39, 57, 55, 54, 22, 46];
    for i in 0..12 {
        s[i] = s[i].wrapping_add(word(data, i));
        s[(i + 2) % 12] ^= s[(i + 10) % 12];
        s[(i + 11) % 12] ^= s[i];
        s[i] = s[i].rotate_left(ROT[i]);
        s[(i + 11) % 12] = s[(i + 11) % 12].wrapping_add(s[(i + 1) % 12]);
    }
}

#[inline]
#[allow(clippy::needless_range_loop)] // the index also picks neighbours modulo 12
fn end_partial(h: &mut [u64; 12]) {
    const ROT: [u32; 12] = [44, 15, 34, 21, 38, 33, 10, 13, 38, 53, 42, 54];
    for i in 0..12 {
        // h[i-1] += h[i+1]; h[i+2] ^= h[i-1]; h[i+1] = rot(h[i+1]) (indices mod 12).
        let (prev, next, next2) = ((i + 11) % 12, (i + 1) % 12, (i + 2) % 12);
        h[prev] = h[prev].wrapping_add(h[next]);
        h[next2] ^= h[prev];
        h[next] = h[next].rotate_left(ROT[i]);
    }
}

/// SpookyHash V2 128-bit (`Hash128` with seeds 0, 0).
pub fn spooky(msg: &[u8]) -> Hash128 {
    if msg.len() < 192 {
        return spooky_short(msg, 0, 0);
    }
    let mut h = [0u64; 12];
    for i in 0..4 {
        h[3 * i] = 0;
        h[3 * i + 1] = 0;
        h[3 * i + 2] = SC_CONST;
    }
    let blocks = msg.len() / 96;
    for blk in msg[..blocks * 96].chunks_exact(96) {
        mix(blk, &mut h);
    }
    let rest = &msg[blocks * 96..];
    let mut last = [0u8; 96];
    last[..rest.len()].copy_from_slice(rest);
    last[95] = rest.len() as u8;
    for (i, v) in h.iter_mut().enumerate() {
        *v = v.wrapping_add(word(&last, i));
    }
    end_partial(&mut h);
    end_partial(&mut h);
    end_partial(&mut h);
    Hash128(h[0], h[1])
}

/// Concatenates everything hashed into one SpookyHash, as Alembic's incremental
/// Init/Update/Final does (the result equals hashing the concatenation).
#[derive(Default)]
pub struct SpookyBuffer(Vec<u8>);

impl SpookyBuffer {
    pub fn new() -> Self {
        SpookyBuffer(Vec::new())
    }
    pub fn update(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.extend_from_slice(bytes);
        self
    }
    pub fn hash(&mut self, h: Hash128) -> &mut Self {
        self.update(&h.to_bytes())
    }
    pub fn finish(&self) -> Hash128 {
        spooky(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(h: Hash128) -> String {
        h.hex()
    }

    #[test]
    fn murmur_vectors_from_reference_files() {
        // Digests stored in files written by the official library (ref_curves.abc).
        assert_eq!(hex(digest(b"hello")), "029bbd41b3a7d8cb191dae486a901e5b");
        assert_eq!(hex(digest(&[1])), "16fe7483905cce7a85670e43e4678877");
        assert_eq!(hex(digest(&[0x10])), "03723414eef19cc12f17d39bad9fba32");
        assert_eq!(hex(digest(&[1, 0, 0, 0])), "feca28aff5a3958840bee985ee7de4d3");
        let nv: Vec<u8> = [5i32, 5, 5].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(hex(digest(&nv)), "e06d1731d0e6925d2ed78759960eb0c1");
        let b: Vec<u8> = (0..16).collect();
        assert_eq!(hex(digest(&b)), "303f9091b524494445e82f76566490ab");
        let b: Vec<u8> = (0..200).collect();
        assert_eq!(hex(digest(&b)), "33e54dc358d26ce5b83eb17540a579a4");
        assert_eq!(digest(&[]), Hash128::ZERO);
    }

    #[test]
    fn spooky_vectors() {
        assert_eq!(spooky(b""), Hash128(0x232706fc6bf50919, 0x8b72ee65b4e851c7));
        assert_eq!(spooky(b"hello"), Hash128(0x3768826ad382e6ca, 0x5c941ed1c71ae043));
        let b: Vec<u8> = (0..16).collect();
        assert_eq!(spooky(&b), Hash128(0x340225d6331f2651, 0x886e7c23939a583d));
        let b: Vec<u8> = (0..200).collect();
        assert_eq!(spooky(&b), Hash128(0xfe37a87670835f72, 0xa2a00ec680624bf2));
        let (h0, h1, _, _) = short_end(1, 2, 3, 4);
        assert_eq!((h0, h1), (0xd05bc6ce4c6b2efe, 0x8616ffe259af1463));
    }
}
