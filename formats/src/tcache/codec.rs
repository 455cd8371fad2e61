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
    /// Lossless: the two previous frames extrapolated at constant velocity in the head's frame
    /// and carried to this frame's head pose; differences taken on the order-preserving map of
    /// float bits (so they stay small across zero). Swinging hair on a moving head leaves the
    /// smallest numbers.
    PoseLinear = 9,
    /// Lossless: [`Predictor::PoseLinear`] corrected, along each strand, by how far the
    /// previous vertex's extrapolation missed (a strand moves coherently, so its neighbours'
    /// misses are alike). Strands decode in parallel, vertices of a strand in order.
    PoseChain = 10,
    /// Lossless, needs no other frame (keyframes): the rest pose carried to this frame's head
    /// pose, chained along each strand like [`Predictor::PoseChain`] — each vertex is
    /// predicted from its predecessor plus the rest shape's segment between them.
    RestChain = 11,
    /// Lossless: [`Predictor::BitPose`]'s carried previous frame, chained along each strand
    /// (for the frame after a keyframe, which has no velocity yet).
    PoseCarryChain = 12,
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
            9 => Predictor::PoseLinear,
            10 => Predictor::PoseChain,
            11 => Predictor::RestChain,
            12 => Predictor::PoseCarryChain,
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
            // One pass: gather each word's four bytes from the planes (axis-major inside).
            let verts = n / 3;
            let (p0, rest) = planes.split_at(n);
            let (p1, rest) = rest.split_at(n);
            let (p2, p3) = rest.split_at(n);
            for axis in 0..3 {
                let o = axis * verts;
                for v in 0..verts {
                    let k = o + v;
                    dst[3 * v + axis] =
                        p0[k] as u32 | (p1[k] as u32) << 8 | (p2[k] as u32) << 16 | (p3[k] as u32) << 24;
                }
            }
            Ok(())
        })?;
    Ok(out)
}

/// Order-preserving map of float bits to integers: x < y as floats ⇔ ord(x) < ord(y).
/// Branch-free: the sign of hair coordinates is as good as random, and a branch on it
/// mispredicts half the time.
#[inline(always)]
pub fn ordered(bits: u32) -> u32 {
    bits ^ ((((bits as i32) >> 31) as u32) | 0x8000_0000)
}

/// Inverse of [`ordered`].
#[inline(always)]
pub fn unordered(v: u32) -> u32 {
    v ^ (((((v as i32) >> 31) as u32) ^ u32::MAX) | 0x8000_0000)
}

fn cost(words: &[u32]) -> u64 {
    words.iter().map(|&w| 32 - w.leading_zeros() as u64).sum()
}

/// A per-vertex prediction computed on the fly from other frames' float bits (no full-frame
/// buffers): writer and reader evaluate the very same expression per vertex, so they agree bit
/// for bit whatever the number of threads.
#[derive(Clone, Copy, Debug)]
pub enum Reference<'a> {
    /// Stored bits, 3 per vertex.
    Bits(&'a [u32]),
    /// `m · p + c` of each vertex p of `bits` (a frame carried rigidly from one head pose to
    /// another).
    Affine {
        m: [[f64; 3]; 3],
        c: [f64; 3],
        bits: &'a [u32],
    },
    /// `m1 · a − m2 · b + c` (two frames extrapolated at constant velocity in the head's frame
    /// and carried to this frame's pose).
    Extrapolate {
        m1: [[f64; 3]; 3],
        m2: [[f64; 3]; 3],
        c: [f64; 3],
        a: &'a [u32],
        b: &'a [u32],
    },
}

// The per-vertex helpers below are written out coordinate by coordinate: `[0, 1, 2].map(…)`
// does not inline here and costs a third of the decode time.

#[inline(always)]
fn vec_of(bits: &[u32], v: usize) -> [f64; 3] {
    let b = &bits[3 * v..3 * v + 3];
    [
        f32::from_bits(b[0]) as f64,
        f32::from_bits(b[1]) as f64,
        f32::from_bits(b[2]) as f64,
    ]
}

#[inline(always)]
fn mat_vec(m: &[[f64; 3]; 3], p: [f64; 3]) -> [f64; 3] {
    [
        m[0][0] * p[0] + m[0][1] * p[1] + m[0][2] * p[2],
        m[1][0] * p[0] + m[1][1] * p[1] + m[1][2] * p[2],
        m[2][0] * p[0] + m[2][1] * p[1] + m[2][2] * p[2],
    ]
}

#[inline(always)]
fn to_bits3(v: [f64; 3]) -> [u32; 3] {
    [
        (v[0] as f32).to_bits(),
        (v[1] as f32).to_bits(),
        (v[2] as f32).to_bits(),
    ]
}

impl Reference<'_> {
    /// Words covered (3 per vertex).
    pub fn len(&self) -> usize {
        match self {
            Reference::Bits(b) => b.len(),
            Reference::Affine { bits, .. } => bits.len(),
            Reference::Extrapolate { a, b, .. } => a.len().min(b.len()),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The predicted bits of vertex `v`.
    #[inline(always)]
    pub fn vertex(&self, v: usize) -> [u32; 3] {
        match self {
            Reference::Bits(b) => [b[3 * v], b[3 * v + 1], b[3 * v + 2]],
            Reference::Affine { m, c, bits } => {
                let u = mat_vec(m, vec_of(bits, v));
                to_bits3([u[0] + c[0], u[1] + c[1], u[2] + c[2]])
            }
            Reference::Extrapolate { m1, m2, c, a, b } => {
                let (u, w) = (mat_vec(m1, vec_of(a, v)), mat_vec(m2, vec_of(b, v)));
                to_bits3([u[0] - w[0] + c[0], u[1] - w[1] + c[1], u[2] - w[2] + c[2]])
            }
        }
    }
}

/// The frames a lossless frame may be predicted from (float bits, 3 per vertex).
#[derive(Clone, Copy, Default)]
pub struct BitHistory<'a> {
    pub previous: Option<&'a [u32]>,
    pub before: Option<&'a [u32]>,
    /// The previous frame moved rigidly with the head to this frame's pose.
    pub moved: Option<Reference<'a>>,
    /// The constant-velocity extrapolation in the head's frame (see [`Predictor::PoseLinear`]).
    pub extrapolated: Option<Reference<'a>>,
    /// The rest pose carried to this frame's head pose (for [`Predictor::RestChain`]).
    pub carried_rest: Option<Reference<'a>>,
    /// Which vertices start a strand (for the chained predictors).
    pub first_of_strand: Option<&'a [bool]>,
}

/// The reference a predictor uses, and whether it is chained along strands.
fn reference<'a>(p: Predictor, h: &BitHistory<'a>) -> Option<(Reference<'a>, bool)> {
    match p {
        Predictor::Xor | Predictor::BitDelta => h.previous.map(|b| (Reference::Bits(b), false)),
        Predictor::BitPose => h.moved.map(|r| (r, false)),
        Predictor::PoseLinear => h.extrapolated.map(|r| (r, false)),
        Predictor::PoseChain => h.extrapolated.map(|r| (r, true)),
        Predictor::PoseCarryChain => h.moved.map(|r| (r, true)),
        Predictor::RestChain => h.carried_rest.map(|r| (r, true)),
        _ => None,
    }
}

/// Vertex ranges holding whole strands, about `target` vertices each, from the strand-start
/// flags (units of parallel work for the chained predictors).
fn strand_groups(first: &[bool], target: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (v, &f) in first.iter().enumerate().skip(1) {
        if f && v - start >= target {
            out.push(start..v);
            start = v;
        }
    }
    if start < first.len() {
        out.push(start..first.len());
    }
    out
}

/// Chain prediction of vertex `v` from its reference `e`, the reference of the vertex before
/// it `e_prev` and that vertex's actual bits `x_prev`: e + (x_prev − e_prev), in f64.
#[inline(always)]
fn chained(e: [u32; 3], e_prev: [u32; 3], x_prev: [u32; 3]) -> [u32; 3] {
    let f = |b: u32| f32::from_bits(b) as f64;
    to_bits3([
        f(e[0]) + (f(x_prev[0]) - f(e_prev[0])),
        f(e[1]) + (f(x_prev[1]) - f(e_prev[1])),
        f(e[2]) + (f(x_prev[2]) - f(e_prev[2])),
    ])
}

/// Stored word of a coordinate against its prediction.
#[inline(always)]
fn residual(p: Predictor, actual: u32, predicted: u32) -> u32 {
    match p {
        Predictor::Raw => actual,
        Predictor::Xor => actual ^ predicted,
        Predictor::BitDelta | Predictor::BitLinear | Predictor::BitPose => {
            zigzag(actual.wrapping_sub(predicted) as i32)
        }
        _ => zigzag(ordered(actual).wrapping_sub(ordered(predicted)) as i32),
    }
}

/// Inverse of [`residual`].
#[inline(always)]
fn restore(p: Predictor, word: u32, predicted: u32) -> u32 {
    match p {
        Predictor::Raw => word,
        Predictor::Xor => word ^ predicted,
        Predictor::BitDelta | Predictor::BitLinear | Predictor::BitPose => {
            (unzigzag(word) as u32).wrapping_add(predicted)
        }
        _ => unordered((unzigzag(word) as u32).wrapping_add(ordered(predicted))),
    }
}

/// The three words of vertex `v` of `bits` under predictor `p` (its history checked by the
/// caller).
#[inline(always)]
fn words_of(p: Predictor, bits: &[u32], h: &BitHistory, v: usize) -> [u32; 3] {
    let pred = match p {
        Predictor::Raw => [0; 3],
        Predictor::BitLinear => {
            let (a, b) = (h.previous.expect("checked"), h.before.expect("checked"));
            [0, 1, 2].map(|k| a[3 * v + k].wrapping_mul(2).wrapping_sub(b[3 * v + k]))
        }
        _ => {
            let (r, chain) = reference(p, h).expect("checked");
            let e = r.vertex(v);
            if chain && v > 0 && !h.first_of_strand.expect("checked")[v] {
                let x_prev = [bits[3 * v - 3], bits[3 * v - 2], bits[3 * v - 1]];
                chained(e, r.vertex(v - 1), x_prev)
            } else {
                e
            }
        }
    };
    [0, 1, 2].map(|k| residual(p, bits[3 * v + k], pred[k]))
}

/// The words of `bits` under predictor `p` (its history checked by the caller).
fn encode(p: Predictor, bits: &[u32], h: &BitHistory) -> Vec<u32> {
    let mut out = vec![0u32; bits.len()];
    out.par_chunks_mut(3)
        .enumerate()
        .with_min_len(1024)
        .for_each(|(v, w)| w.copy_from_slice(&words_of(p, bits, h, v)));
    out
}

/// Vertices in a run of this many out of every [`SAMPLE_EVERY`] choose a frame's predictor:
/// the choice costs an eighth of encoding the frame with every predictor, and sampling whole
/// runs keeps the chained predictors' neighbours together.
const SAMPLE_RUN: usize = 256;
const SAMPLE_EVERY: usize = 2048;

/// The estimated size (significant bits of the words) of `bits` under `p`, on the sample.
fn sampled_cost(p: Predictor, bits: &[u32], h: &BitHistory) -> u64 {
    let n = bits.len() / 3;
    let runs = n.div_ceil(SAMPLE_EVERY);
    (0..runs)
        .into_par_iter()
        .map(|r| {
            let start = r * SAMPLE_EVERY;
            (start..(start + SAMPLE_RUN).min(n))
                .map(|v| cost(&words_of(p, bits, h, v)))
                .sum::<u64>()
        })
        .sum()
}

/// Lossless: the cheapest of the bit predictors the history allows (judged on a fixed sample of
/// the vertices), and the words to store.
pub fn lossless_words(bits: &[u32], h: &BitHistory) -> (Predictor, Vec<u32>) {
    let n = bits.len();
    let fits = |r: Option<Reference>| r.is_some_and(|r| r.len() == n);
    let chains = h.first_of_strand.is_some_and(|f| f.len() * 3 == n);
    let mut options = vec![Predictor::Raw];
    if chains && fits(h.carried_rest) {
        options.push(Predictor::RestChain);
    }
    if h.previous.is_some_and(|b| b.len() == n) {
        options.extend([Predictor::Xor, Predictor::BitDelta]);
        if h.before.is_some_and(|b| b.len() == n) {
            options.push(Predictor::BitLinear);
        }
        if fits(h.moved) {
            options.push(Predictor::BitPose);
            if chains {
                options.push(Predictor::PoseCarryChain);
            }
        }
        if fits(h.extrapolated) {
            options.push(Predictor::PoseLinear);
            if chains {
                options.push(Predictor::PoseChain);
            }
        }
    }
    let best = options
        .into_iter()
        .min_by_key(|p| sampled_cost(*p, bits, h))
        .expect("raw is always possible");
    (best, encode(best, bits, h))
}

/// Lossless: the float bits back from stored words.
pub fn lossless_bits(words: Vec<u32>, p: Predictor, h: &BitHistory) -> Result<Vec<u32>> {
    let n = words.len();
    let fits = |r: Option<Reference>| r.is_some_and(|r| r.len() == n);
    let chains = h.first_of_strand.is_some_and(|f| f.len() * 3 == n);
    let ok = match p {
        Predictor::Raw => true,
        Predictor::Xor | Predictor::BitDelta => h.previous.is_some_and(|b| b.len() == n),
        Predictor::BitLinear => {
            h.previous.is_some_and(|b| b.len() == n) && h.before.is_some_and(|b| b.len() == n)
        }
        Predictor::BitPose => fits(h.moved),
        Predictor::PoseLinear => fits(h.extrapolated),
        Predictor::PoseChain => chains && fits(h.extrapolated),
        Predictor::PoseCarryChain => chains && fits(h.moved),
        Predictor::RestChain => chains && fits(h.carried_rest),
        _ => false,
    };
    if !ok {
        return Err(Error::corrupt(
            "a lossless frame refers to a previous frame that is missing",
        ));
    }
    if p == Predictor::Raw {
        return Ok(words);
    }
    let mut out = vec![0u32; n];
    match reference(p, h) {
        Some((r, true)) => {
            // Chained: strands in parallel, the vertices of a strand in order.
            let first = h.first_of_strand.expect("checked");
            let groups = strand_groups(first, 2048);
            let mut slices = Vec::with_capacity(groups.len());
            let mut rest = out.as_mut_slice();
            for g in &groups {
                let (head, tail) = rest.split_at_mut(3 * g.len());
                slices.push((g.clone(), head));
                rest = tail;
            }
            slices.into_par_iter().for_each(|(g, dst)| {
                let (mut e_prev, mut x_prev) = ([0u32; 3], [0u32; 3]);
                for v in g.clone() {
                    let e = r.vertex(v);
                    let pred = if first[v] || v == 0 {
                        e
                    } else {
                        chained(e, e_prev, x_prev)
                    };
                    let base = 3 * (v - g.start);
                    for k in 0..3 {
                        dst[base + k] = restore(p, words[3 * v + k], pred[k]);
                    }
                    e_prev = e;
                    x_prev = [dst[base], dst[base + 1], dst[base + 2]];
                }
            });
        }
        Some((r, false)) => {
            out.par_chunks_mut(3)
                .enumerate()
                .with_min_len(1024)
                .for_each(|(v, dst)| {
                    let pred = r.vertex(v);
                    for k in 0..3 {
                        dst[k] = restore(p, words[3 * v + k], pred[k]);
                    }
                });
        }
        None => {
            // BitLinear.
            let (a, b) = (h.previous.expect("checked"), h.before.expect("checked"));
            out.par_iter_mut()
                .enumerate()
                .with_min_len(4096)
                .for_each(|(i, d)| {
                    *d = restore(p, words[i], a[i].wrapping_mul(2).wrapping_sub(b[i]));
                });
        }
    }
    Ok(out)
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
        let extrapolated: Vec<u32> = [-1.6f32, -0.0, f32::MAX, -2.5, -1e-40, 7.0]
            .iter()
            .map(|f| f.to_bits())
            .collect();
        // Four vertices on two strands; the references are affine maps and an extrapolation of
        // the frames above, evaluated on the fly.
        let m = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]];
        let (bits, prev, before, moved, extrapolated) = (
            [bits.clone(), bits[..3].to_vec(), bits[3..].to_vec()].concat(),
            [prev.clone(), prev[..3].to_vec(), prev[3..].to_vec()].concat(),
            [before.clone(), before[..3].to_vec(), before[3..].to_vec()].concat(),
            [moved.clone(), moved[..3].to_vec(), moved[3..].to_vec()].concat(),
            [
                extrapolated.clone(),
                extrapolated[..3].to_vec(),
                extrapolated[3..].to_vec(),
            ]
            .concat(),
        );
        let first = [true, false, true, false];
        let h = BitHistory {
            previous: Some(&prev),
            before: Some(&before),
            moved: Some(Reference::Affine {
                m,
                c: [0.5, -1.0, 2.0],
                bits: &moved,
            }),
            extrapolated: Some(Reference::Extrapolate {
                m1: m,
                m2: m,
                c: [0.0; 3],
                a: &extrapolated,
                b: &before,
            }),
            carried_rest: Some(Reference::Bits(&moved)),
            first_of_strand: Some(&first),
        };
        let (p, w) = lossless_words(&bits, &h);
        assert_eq!(lossless_bits(w, p, &h).unwrap(), bits);
        for p in [
            Predictor::Raw,
            Predictor::Xor,
            Predictor::BitDelta,
            Predictor::BitLinear,
            Predictor::BitPose,
            Predictor::PoseLinear,
            Predictor::PoseChain,
            Predictor::PoseCarryChain,
            Predictor::RestChain,
        ] {
            let w = encode(p, &bits, &h);
            assert_eq!(lossless_bits(w, p, &h).unwrap(), bits, "{p:?}");
        }
        // A missing reference is an error, not a panic.
        let bare = BitHistory {
            first_of_strand: Some(&first),
            ..Default::default()
        };
        assert!(lossless_bits(vec![0; 12], Predictor::PoseChain, &bare).is_err());
        // The order-preserving map: monotone, and inverted exactly.
        let xs = [
            f32::NEG_INFINITY,
            -3.0,
            -1e-40,
            -0.0,
            0.0,
            1e-40,
            2.0,
            f32::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(ordered(w[0].to_bits()) < ordered(w[1].to_bits()) || (w[0] == 0.0 && w[1] == 0.0));
        }
        for x in xs {
            assert_eq!(unordered(ordered(x.to_bits())), x.to_bits());
        }
    }
}
