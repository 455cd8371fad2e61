//! Streaming `.tcache` writer: one chunk per frame, flushed as written; index and footer at
//! the end. Memory holds the two previous frames.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::codec::{self, LossyContext};
use super::header::{Codec, TcacheHeader};
use super::{END_TAG, FRAME_TAG, HeadPose, INDEX_TAG, MAGIC, VERSION};
use crate::atomic::AtomicFile;
use crate::error::{Error, InFile, Result};

/// Quantization step that keeps every vertex within `bound` (Euclidean): each coordinate is
/// off by at most step / 2, so the distance is at most step·√3 / 2; a small margin absorbs the
/// rounding of the head transform.
pub fn quant_step(bound: f32) -> f64 {
    2.0 * bound as f64 / 3f64.sqrt() * 0.999
}

/// Rest pose on the quantization lattice, and the strand-start flags.
pub(crate) fn lattice(header: &TcacheHeader) -> (Vec<i32>, Vec<bool>, f64) {
    let step = match header.codec {
        Codec::Lossy { bound } => quant_step(bound),
        Codec::Lossless => 1.0,
    };
    let rest = header
        .rest
        .points
        .iter()
        .flat_map(|p| p.map(|c| (c as f64 / step).round() as i32))
        .collect();
    let mut first = vec![false; header.rest.points.len()];
    let mut at = 0usize;
    for &c in &header.rest.counts {
        if c > 0 {
            first[at] = true;
        }
        at += c as usize;
    }
    (rest, first, step)
}

/// Where a cache is written: under a temporary name renamed on completion (outputs), or
/// directly to its name (logs that must stay readable if the writer is killed).
enum Output {
    Atomic(AtomicFile),
    InPlace(std::io::BufWriter<std::fs::File>),
}

impl Output {
    fn sink(&mut self) -> &mut dyn Write {
        match self {
            Output::Atomic(f) => f,
            Output::InPlace(f) => f,
        }
    }
}

pub struct TcacheWriter {
    path: PathBuf,
    out: Output,
    header: TcacheHeader,
    pos: u64,
    index: Vec<(f64, u64)>,
    level: i32,
    step: f64,
    rest: Vec<i32>,
    first_of_strand: Vec<bool>,
    /// Float bits of the rest pose (lossless keyframes).
    rest_bits: Vec<u32>,
    previous: Option<Vec<i32>>,
    before: Option<Vec<i32>>,
    previous_bits: Option<Vec<u32>>,
    before_bits: Option<Vec<u32>>,
    previous_pose: HeadPose,
    before_pose: HeadPose,
}

impl TcacheWriter {
    /// Starts a cache; the header goes out at once. `level` is the zstd level (3 is fast). The
    /// file appears under its name when [`TcacheWriter::finish`] completes.
    pub fn create(path: impl AsRef<Path>, header: TcacheHeader, level: i32) -> Result<TcacheWriter> {
        let out = Output::Atomic(AtomicFile::create(path.as_ref())?);
        TcacheWriter::start(path.as_ref().to_path_buf(), out, header, level)
    }

    /// Like [`TcacheWriter::create`] but writing straight to `path`, frame by frame, so a killed
    /// writer leaves a readable prefix there (simulation frame logs).
    pub fn create_in_place(path: impl AsRef<Path>, header: TcacheHeader, level: i32) -> Result<TcacheWriter> {
        let path = path.as_ref();
        let file = std::fs::File::create(path).in_file(path)?;
        TcacheWriter::start(
            path.to_path_buf(),
            Output::InPlace(std::io::BufWriter::new(file)),
            header,
            level,
        )
    }

    fn start(path: PathBuf, mut out: Output, header: TcacheHeader, level: i32) -> Result<TcacheWriter> {
        header.rest.validate().in_file(&path)?;
        if let Codec::Lossy { bound } = header.codec
            && !(bound > 0.0 && bound.is_finite())
        {
            return Err(Error::invalid(format!(
                "the error bound must be positive, got {bound}"
            )));
        }
        let body = header.encode();
        let mut head = Vec::with_capacity(body.len() + 32);
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(&(body.len() as u64).to_le_bytes());
        head.extend_from_slice(&body);
        head.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        out.sink().write_all(&head).in_file(&path)?;
        out.sink().flush().in_file(&path)?;
        let (rest, first_of_strand, step) = lattice(&header);
        let rest_bits = header.rest.points.iter().flatten().map(|c| c.to_bits()).collect();
        Ok(TcacheWriter {
            pos: head.len() as u64,
            path,
            out,
            header,
            index: Vec::new(),
            level,
            step,
            rest,
            first_of_strand,
            rest_bits,
            previous: None,
            before: None,
            previous_bits: None,
            before_bits: None,
            previous_pose: HeadPose::IDENTITY,
            before_pose: HeadPose::IDENTITY,
        })
    }

    pub fn frames(&self) -> usize {
        self.index.len()
    }

    /// Appends a frame (world positions; `pose` is the head pose, for head-local quantization).
    pub fn write_frame(&mut self, frame: f64, positions: &[[f32; 3]], pose: Option<HeadPose>) -> Result<()> {
        let n = self.header.rest.points.len();
        if positions.len() != n {
            return Err(Error::invalid(format!(
                "frame {frame} has {} points, the cache {n}",
                positions.len()
            )));
        }
        if self.index.last().is_some_and(|&(f, _)| frame <= f) || !frame.is_finite() {
            return Err(Error::invalid(format!(
                "frame {frame} does not follow the previous frame"
            )));
        }
        let pose = pose.unwrap_or(HeadPose::IDENTITY);
        if !pose.is_valid() {
            return Err(Error::invalid(format!(
                "frame {frame}: the head pose is not a unit quaternion"
            )));
        }
        if positions.iter().flatten().any(|c| !c.is_finite()) {
            return Err(Error::invalid(format!(
                "frame {frame} holds non-finite positions"
            )));
        }
        let seq = self.index.len() as u32;
        let keyframe = seq.is_multiple_of(self.header.keyframe_interval);
        let (predictor, words) = match self.header.codec {
            Codec::Lossless => self.lossless(positions, pose, keyframe),
            Codec::Lossy { bound } => self.lossy(frame, positions, pose, keyframe, bound)?,
        };
        let blocks = codec::pack(&words, self.level)?;
        let mut chunk = Vec::with_capacity(blocks.iter().map(|b| b.len() + 8).sum::<usize>() + 80);
        chunk.extend_from_slice(FRAME_TAG);
        chunk.extend_from_slice(&seq.to_le_bytes());
        chunk.extend_from_slice(&frame.to_le_bytes());
        for v in pose.rotation.iter().chain(&pose.translation) {
            chunk.extend_from_slice(&v.to_le_bytes());
        }
        chunk.push(predictor as u8);
        chunk.extend_from_slice(&(blocks.len() as u32).to_le_bytes());
        for b in &blocks {
            chunk.extend_from_slice(&(b.len() as u64).to_le_bytes());
            chunk.extend_from_slice(b);
        }
        chunk.extend_from_slice(&crc32fast::hash(&chunk).to_le_bytes());
        self.out.sink().write_all(&chunk).in_file(&self.path)?;
        self.out.sink().flush().in_file(&self.path)?;
        self.before_pose = self.previous_pose;
        self.previous_pose = pose;
        self.index.push((frame, self.pos));
        self.pos += chunk.len() as u64;
        Ok(())
    }

    /// A frame's words in the lossless codec: float bits predicted from the frames before
    /// (carried by the head's motion, extrapolated), the rest groom, or the strand's first.
    fn lossless(
        &mut self,
        positions: &[[f32; 3]],
        pose: HeadPose,
        keyframe: bool,
    ) -> (codec::Predictor, Vec<u32>) {
        let bits: Vec<u32> = positions.iter().flatten().map(|c| c.to_bits()).collect();
        // Carried even when the pose did not change (then it is the previous frame, up to
        // rounding), so the chained predictor is there for still heads too.
        let moved = match (&self.previous_bits, keyframe) {
            (Some(prev), false) => Some(pose.carry(&self.previous_pose, prev)),
            _ => None,
        };
        let extrapolated = match (&self.previous_bits, &self.before_bits, keyframe) {
            (Some(a), Some(b), false) => Some(pose.extrapolate(&self.previous_pose, a, &self.before_pose, b)),
            _ => None,
        };
        let carried_rest = (keyframe || self.previous_bits.is_none())
            .then(|| pose.carry(&HeadPose::IDENTITY, &self.rest_bits));
        let h = if keyframe {
            codec::BitHistory {
                first_of_strand: Some(&self.first_of_strand),
                carried_rest,
                ..Default::default()
            }
        } else {
            codec::BitHistory {
                previous: self.previous_bits.as_deref(),
                before: self.before_bits.as_deref(),
                moved,
                extrapolated,
                first_of_strand: Some(&self.first_of_strand),
                carried_rest,
            }
        };
        let (p, w) = codec::lossless_words(&bits, &h);
        self.before_bits = if keyframe { None } else { self.previous_bits.take() };
        self.previous_bits = Some(bits);
        (p, w)
    }

    /// A frame's words in the lossy codec: head-local positions quantized to the step, each
    /// within `bound` of the position as the reader will decode it.
    fn lossy(
        &mut self,
        frame: f64,
        positions: &[[f32; 3]],
        pose: HeadPose,
        keyframe: bool,
        bound: f32,
    ) -> Result<(codec::Predictor, Vec<u32>)> {
        let n = positions.len();
        let mut k = Vec::with_capacity(n * 3);
        for (i, p) in positions.iter().enumerate() {
            let local = pose.to_local(p.map(|c| c as f64));
            for c in local {
                let q = (c / self.step).round();
                if q.abs() >= (1 << 30) as f64 {
                    return Err(Error::invalid(format!(
                        "frame {frame}, vertex {i}: positions of {c} are too far from the head for a {bound} bound"
                    )));
                }
                k.push(q as i32);
            }
        }
        // The guarantee, checked as the reader will decode it. Far from the origin the
        // float32 rounding of the decoded position adds to the quantization error; a
        // neighbouring lattice point then usually lands within the bound.
        let step = self.step;
        let error = |q: [i32; 3], p: &[f32; 3]| -> f32 {
            let back = pose.to_world(q.map(|v| v as f64 * step)).map(|c| c as f32);
            (0..3).map(|a| (back[a] - p[a]).powi(2)).sum::<f32>().sqrt()
        };
        for (i, p) in positions.iter().enumerate() {
            let q = [k[3 * i], k[3 * i + 1], k[3 * i + 2]];
            if error(q, p) <= bound {
                continue;
            }
            let best = (0..27)
                .map(|o| [q[0] + o % 3 - 1, q[1] + (o / 3) % 3 - 1, q[2] + o / 9 - 1])
                .map(|c| (error(c, p), c))
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .expect("27 candidates");
            if best.0 > bound {
                return Err(Error::invalid(format!(
                    "frame {frame}, vertex {i}: cannot hold the {bound} bound in float32 at this distance from the head"
                )));
            }
            k[3 * i..3 * i + 3].copy_from_slice(&best.1);
        }
        let ctx = LossyContext {
            rest: &self.rest,
            previous: if keyframe { None } else { self.previous.as_deref() },
            before: if keyframe { None } else { self.before.as_deref() },
            first_of_strand: &self.first_of_strand,
        };
        let (p, w) = codec::lossy_words(&ctx, &k, keyframe);
        // History restarts at keyframes, exactly as a reader seeking to them sees it.
        self.before = if keyframe { None } else { self.previous.take() };
        self.previous = Some(k);
        Ok((p, w))
    }

    /// Writes the index and footer and renames the file into place.
    pub fn finish(mut self) -> Result<PathBuf> {
        let mut idx = Vec::with_capacity(16 + self.index.len() * 16);
        idx.extend_from_slice(INDEX_TAG);
        idx.extend_from_slice(&(self.index.len() as u64).to_le_bytes());
        for (f, o) in &self.index {
            idx.extend_from_slice(&f.to_le_bytes());
            idx.extend_from_slice(&o.to_le_bytes());
        }
        idx.extend_from_slice(&crc32fast::hash(&idx).to_le_bytes());
        idx.extend_from_slice(&self.pos.to_le_bytes());
        idx.extend_from_slice(END_TAG);
        self.out.sink().write_all(&idx).in_file(&self.path)?;
        match self.out {
            Output::Atomic(f) => f.commit()?,
            Output::InPlace(mut f) => f.flush().in_file(&self.path)?,
        }
        Ok(self.path)
    }
}
