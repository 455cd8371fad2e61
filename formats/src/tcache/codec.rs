//! Frame codecs of `.tcache`: lossless float-bit XOR deltas and lossy quantized residuals,
//! both stored as byte planes in independently zstd-compressed blocks of vertices.

use rayon::prelude::*;

use super::BLOCK_VERTICES;
use crate::error::{Error, Result};

/// How a frame's values are predicted (stored per frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Predictor {
    /// Lossless: raw float bits.
    Raw = 0,
    /// Lossless: bits XOR the previous frame's.
    Xor = 1,
    /// Lossy: quantized rest pose.
    Rest = 2,
    /// Lossy: the previous frame.
    Previous = 3,
    /// Lossy: 2 × previous − the one before (constant velocity).
    Linear = 4,
    /// Lossy: the previous frame, corrected by the change of each vertex's predecessor along
    /// its strand (neighbouring vertices move together).
    Chain = 5,
    /// Lossless: bits minus the previous frame's bits (as integers: floats of one sign are
    /// ordered like their bit patterns, so small moves give small differences).
    BitDelta = 6,
    /// Lossless: bits minus the linear extrapolation of the two previous frames' bits.
    BitLinear = 7,
    /// Lossless: bits minus those of the previous frame moved rigidly with the head (from its
    /// head pose to this frame's): hair that rides along with the head leaves small numbers.
    BitPose = 8,
}

impl Predictor {
    pub fn from_u8(v: u8) -> Result<Predictor> {
        Ok(match v {
            0 => Predictor::Raw,
            1 => Predictor::Xor,
            2 => Predictor::Rest,
            3 => Predictor::Previous,
            4 => Predictor::Linear,
            5 => Predictor::Chain,
            6 => Predictor::BitDelta,
            7 => Predictor::BitLinear,
            8 => Predictor::BitPose,
            _ => return Err(Error::corrupt(format!("unknown frame predictor {v}"))),
        })
    }
}

fn zigzag(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

fn unzigzag(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

/// Splits `words` (3 per vertex, xyz interleaved) into blocks of [`BLOCK_VERTICES`] vertices,
/// each stored as x, y and z byte planes (least significant byte first) and zstd-compressed.
pub fn pack(words: &[u32], level: i32) -> Result<Vec<Vec<u8>>> {
    words
        .par_chunks(BLOCK_VERTICES * 3)
        .map(|block| {
            let n = block.len();
            let verts = n / 3;
            // Axis-major order first, then one byte plane at a time (sequential, vectorizable).
            let mut axis_major = vec![0u32; n];
            for axis in 0..3 {
                for v in 0..verts {
                    axis_major[axis * verts + v] = block[3 * v + axis];
                }
            }
            let mut planes = vec![0u8; n * 4];
            for (b, plane) in planes.chunks_exact_mut(n).enumerate() {
                for (dst, &w) in plane.iter_mut().zip(&axis_major) {
                    *dst = (w >> (8 * b)) as u8;
                }
            }
            zstd::bulk::compress(&planes, level).map_err(Error::from)
        })
        .collect()
}

/// Inverse of [`pack`]: `vertices` words × 3 from the blocks.
pub fn unpack(blocks: &[&[u8]], vertices: usize) -> Result<Vec<u32>> {
    let expected = vertices
        .div_ceil(BLOCK_VERTICES)
        .max(if vertices == 0 { 0 } else { 1 });
    if blocks.len() != expected {
        return Err(Error::corrupt(format!(
            "a frame has {} blocks, {expected} expected",
            blocks.len()
        )));
    }
    let mut out = vec![0u32; vertices * 3];
    out.par_chunks_mut(BLOCK_VERTICES * 3)
        .zip(blocks.par_iter())
        .try_for_each(|(dst, src)| -> Result<()> {
            let n = dst.len();
            let planes = zstd::bulk::decompress(src, n * 4)
                .map_err(|e| Error::corrupt(format!("a frame block does not decompress ({e})")))?;
            if planes.len() != n * 4 {
                return Err(Error::corrupt("a frame block has the wrong size"));
            }
            let verts = n / 3;
            let mut axis_major = vec![0u32; n];
            for (b, plane) in planes.chunks_exact(n).enumerate() {
                for (w, &byte) in axis_major.iter_mut().zip(plane) {
                    *w |= (byte as u32) << (8 * b);
                }
            }
            for axis in 0..3 {
                for v in 0..verts {
                    dst[3 * v + axis] = axis_major[axis * verts + v];
                }
            }
            Ok(())
        })?;
    Ok(out)
}

fn cost(words: &[u32]) -> u64 {
    words.iter().map(|&w| 32 - w.leading_zeros() as u64).sum()
}

/// The frames a lossless frame may be predicted from (float bits, 3 per vertex).
#[derive(Clone, Copy, Default)]
pub struct BitHistory<'a> {
    pub previous: Option<&'a [u32]>,
    pub before: Option<&'a [u32]>,
    /// The previous frame moved rigidly with the head to this frame's pose.
    pub moved: Option<&'a [u32]>,
}

fn bit_prediction(p: Predictor, i: usize, h: &BitHistory) -> u32 {
    match p {
        Predictor::BitDelta | Predictor::Xor => h.previous.expect("checked")[i],
        Predictor::BitLinear => h.previous.expect("checked")[i]
            .wrapping_mul(2)
            .wrapping_sub(h.before.expect("checked")[i]),
        Predictor::BitPose => h.moved.expect("checked")[i],
        _ => 0,
    }
}

/// Lossless: the cheapest of the bit predictors the history allows, and the words to store.
pub fn lossless_words(bits: &[u32], h: &BitHistory) -> (Predictor, Vec<u32>) {
    let mut options = vec![Predictor::Raw];
    if h.previous.is_some() {
        options.extend([Predictor::Xor, Predictor::BitDelta]);
        if h.before.is_some() {
            options.push(Predictor::BitLinear);
        }
        if h.moved.is_some() {
            options.push(Predictor::BitPose);
        }
    }
    options
        .into_iter()
        .map(|p| {
            let w: Vec<u32> = (0..bits.len())
                .map(|i| match p {
                    Predictor::Raw => bits[i],
                    Predictor::Xor => bits[i] ^ bit_prediction(p, i, h),
                    _ => zigzag(bits[i].wrapping_sub(bit_prediction(p, i, h)) as i32),
                })
                .collect();
            (p, w)
        })
        .min_by_key(|(_, w)| cost(w))
        .expect("raw is always possible")
}

/// Lossless: the float bits back from stored words.
pub fn lossless_bits(words: Vec<u32>, p: Predictor, h: &BitHistory) -> Result<Vec<u32>> {
    let fits = |v: Option<&[u32]>| v.is_some_and(|v| v.len() == words.len());
    let ok = match p {
        Predictor::Raw => true,
        Predictor::Xor | Predictor::BitDelta => fits(h.previous),
        Predictor::BitLinear => fits(h.previous) && fits(h.before),
        Predictor::BitPose => fits(h.moved),
        _ => false,
    };
    if !ok {
        return Err(Error::corrupt(
            "a lossless frame refers to a previous frame that is missing",
        ));
    }
    let un = |w: u32| unzigzag(w) as u32;
    Ok(match p {
        Predictor::Raw => words,
        Predictor::Xor => words
            .iter()
            .zip(h.previous.expect("checked"))
            .map(|(w, q)| w ^ q)
            .collect(),
        Predictor::BitDelta => words
            .iter()
            .zip(h.previous.expect("checked"))
            .map(|(&w, &q)| un(w).wrapping_add(q))
            .collect(),
        Predictor::BitPose => words
            .iter()
            .zip(h.moved.expect("checked"))
            .map(|(&w, &q)| un(w).wrapping_add(q))
            .collect(),
        _ => words
            .iter()
            .zip(
                h.previous
                    .expect("checked")
                    .iter()
                    .zip(h.before.expect("checked")),
            )
            .map(|(&w, (&a, &b))| un(w).wrapping_add(a.wrapping_mul(2).wrapping_sub(b)))
            .collect(),
    })
}

/// The quantized frames a lossy frame may be predicted from.
pub struct LossyContext<'a> {
    pub rest: &'a [i32],
    pub previous: Option<&'a [i32]>,
    pub before: Option<&'a [i32]>,
    /// Strand start of every vertex (for the chain predictor).
    pub first_of_strand: &'a [bool],
}

/// `k + sign · prediction(p)` for every element, one loop per predictor (vectorizable).
fn apply_prediction(ctx: &LossyContext, p: Predictor, values: &mut [i32], sign: i32) {
    match p {
        Predictor::Rest => values
            .iter_mut()
            .zip(ctx.rest)
            .for_each(|(v, r)| *v = v.wrapping_add(sign.wrapping_mul(*r))),
        Predictor::Previous | Predictor::Chain => values
            .iter_mut()
            .zip(ctx.previous.expect("checked"))
            .for_each(|(v, r)| *v = v.wrapping_add(sign.wrapping_mul(*r))),
        Predictor::Linear => values
            .iter_mut()
            .zip(
                ctx.previous
                    .expect("checked")
                    .iter()
                    .zip(ctx.before.expect("checked")),
            )
            .for_each(|(v, (a, b))| {
                *v = v.wrapping_add(sign.wrapping_mul(a.wrapping_mul(2).wrapping_sub(*b)))
            }),
        _ => {}
    }
}

/// Residuals of `k` under predictor `p`.
fn residuals(ctx: &LossyContext, k: &[i32], p: Predictor) -> Vec<i32> {
    let mut r = k.to_vec();
    apply_prediction(ctx, p, &mut r, -1);
    if p == Predictor::Chain {
        // Difference to the predecessor's change, walking backwards so predecessors are intact.
        for i in (0..r.len()).rev() {
            if !ctx.first_of_strand[i / 3] {
                r[i] = r[i].wrapping_sub(r[i - 3]);
            }
        }
    }
    r
}

/// Picks the cheapest predictor (by the bits of the zigzagged residuals) and returns the stored
/// words.
pub fn lossy_words(ctx: &LossyContext, k: &[i32], keyframe: bool) -> (Predictor, Vec<u32>) {
    let mut options = vec![Predictor::Rest];
    if !keyframe && ctx.previous.is_some() {
        options.push(Predictor::Previous);
        options.push(Predictor::Chain);
        if ctx.before.is_some() {
            options.push(Predictor::Linear);
        }
    }
    let cost = |r: &[i32]| -> u64 { r.iter().map(|&v| 32 - zigzag(v).leading_zeros() as u64).sum() };
    let (p, r) = options
        .into_iter()
        .map(|p| {
            let r = residuals(ctx, k, p);
            (p, r)
        })
        .min_by_key(|(_, r)| cost(r))
        .expect("at least the rest predictor");
    (p, r.into_iter().map(zigzag).collect())
}

/// Lossy: the quantized integers back from stored words.
pub fn lossy_ints(ctx: &LossyContext, words: &[u32], p: Predictor) -> Result<Vec<i32>> {
    let needs_prev = matches!(p, Predictor::Previous | Predictor::Chain | Predictor::Linear);
    if (needs_prev && ctx.previous.is_none()) || (p == Predictor::Linear && ctx.before.is_none()) {
        return Err(Error::corrupt(
            "a lossy frame refers to a previous frame that is missing",
        ));
    }
    if !matches!(
        p,
        Predictor::Rest | Predictor::Previous | Predictor::Linear | Predictor::Chain
    ) {
        return Err(Error::corrupt("a lossy frame uses a lossless predictor"));
    }
    let mut r: Vec<i32> = words.iter().map(|&w| unzigzag(w)).collect();
    if p == Predictor::Chain {
        for i in 0..r.len() {
            if !ctx.first_of_strand[i / 3] {
                r[i] = r[i].wrapping_add(r[i - 3]);
            }
        }
    }
    apply_prediction(ctx, p, &mut r, 1);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes_round_trip_across_blocks() {
        let n = BLOCK_VERTICES + 17;
        let words: Vec<u32> = (0..n * 3)
            .map(|i| (i as u32).wrapping_mul(2_654_435_761))
            .collect();
        let blocks = pack(&words, 3).unwrap();
        assert_eq!(blocks.len(), 2);
        let refs: Vec<&[u8]> = blocks.iter().map(Vec::as_slice).collect();
        assert_eq!(unpack(&refs, n).unwrap(), words);
        assert!(unpack(&refs[..1], n).is_err());
    }

    #[test]
    fn every_predictor_inverts() {
        let first = [true, false, false, true, false];
        let rest: Vec<i32> = (0..15).map(|i| i * 7 - 30).collect();
        let prev: Vec<i32> = rest.iter().map(|v| v + 3).collect();
        let before: Vec<i32> = rest.iter().map(|v| v + 1).collect();
        let k: Vec<i32> = (0..15).map(|i| i * 7 - 25 + (i % 4)).collect();
        let ctx = LossyContext {
            rest: &rest,
            previous: Some(&prev),
            before: Some(&before),
            first_of_strand: &first,
        };
        for p in [
            Predictor::Rest,
            Predictor::Previous,
            Predictor::Linear,
            Predictor::Chain,
        ] {
            let w: Vec<u32> = residuals(&ctx, &k, p).into_iter().map(zigzag).collect();
            assert_eq!(lossy_ints(&ctx, &w, p).unwrap(), k, "{p:?}");
        }
        let (p, w) = lossy_words(&ctx, &k, false);
        assert_eq!(lossy_ints(&ctx, &w, p).unwrap(), k);
        assert_eq!(lossy_words(&ctx, &k, true).0, Predictor::Rest);
        for v in [0, 1, -1, i32::MAX, i32::MIN] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        // Lossless: every bit predictor inverts, including across sign changes and NaN bits.
        let bits: Vec<u32> = [1.5f32, -0.0, 3e38, -2.0, 1e-40, 7.25]
            .iter()
            .map(|f| f.to_bits())
            .collect();
        let prev: Vec<u32> = [1.25f32, 0.0, -3e38, 2.0, 0.0, 7.0]
            .iter()
            .map(|f| f.to_bits())
            .collect();
        let before: Vec<u32> = [1.0f32, 1.0, 1.0, 1.0, 1.0, 6.75]
            .iter()
            .map(|f| f.to_bits())
            .collect();
        let moved: Vec<u32> = [1.4f32, 0.1, 3e38, -1.9, 0.0, 7.2]
            .iter()
            .map(|f| f.to_bits())
            .collect();
        let h = BitHistory {
            previous: Some(&prev),
            before: Some(&before),
            moved: Some(&moved),
        };
        let (p, w) = lossless_words(&bits, &h);
        assert_eq!(lossless_bits(w, p, &h).unwrap(), bits);
        for p in [
            Predictor::Xor,
            Predictor::BitDelta,
            Predictor::BitLinear,
            Predictor::BitPose,
        ] {
            let w: Vec<u32> = (0..bits.len())
                .map(|i| match p {
                    Predictor::Xor => bits[i] ^ prev[i],
                    _ => zigzag(bits[i].wrapping_sub(bit_prediction(p, i, &h)) as i32),
                })
                .collect();
            assert_eq!(lossless_bits(w, p, &h).unwrap(), bits, "{p:?}");
        }
    }
}
