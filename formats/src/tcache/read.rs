//! `.tcache` reader: random access by frame through the index, or — for a cache whose writer
//! stopped early — by scanning the chunks up to the first incomplete or damaged one.

use std::path::{Path, PathBuf};

use super::codec::{self, LossyContext, Predictor};
use super::header::{Codec, TcacheHeader};
use super::write::lattice;
use super::{END_TAG, FRAME_TAG, HeadPose, INDEX_TAG, MAGIC, VERSION};
use crate::alembic::ogawa::source::{FileSource, MemSource, ReadAt};
use crate::bytes::ByteReader;
use crate::error::{Error, InFile, Result};

/// Where a frame chunk starts and where it ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameEntry {
    pub frame: f64,
    pub offset: u64,
}

/// How a cache without a complete index was read.
#[derive(Clone, Debug, PartialEq)]
pub struct ScanReport {
    /// Frames that are complete and intact.
    pub frames: usize,
    /// Why reading stopped before the end of the file, if it did.
    pub stopped: Option<String>,
}

struct Decoded {
    seq: usize,
    ints: Option<Vec<i32>>,
    before: Option<Vec<i32>>,
    bits: Option<Vec<u32>>,
    before_bits: Option<Vec<u32>>,
    pose: HeadPose,
    /// Pose of the frame before (lossless extrapolation).
    before_pose: HeadPose,
    /// Positions of lossy frames (lossless frames are their `bits`).
    positions: Vec<[f32; 3]>,
}

impl Decoded {
    fn positions(&self) -> Vec<[f32; 3]> {
        match &self.bits {
            Some(b) => bytemuck::cast_slice(b).to_vec(),
            None => self.positions.clone(),
        }
    }
}

/// Lattice integers back to world positions. The writer checks its bound with
/// [`HeadPose::to_world`]; this computes the very same expression, in parallel.
pub(crate) fn dequantize(k: &[i32], step: f64, pose: &HeadPose) -> Vec<[f32; 3]> {
    use rayon::prelude::*;
    k.par_chunks_exact(3)
        .map(|c| {
            pose.to_world([c[0] as f64 * step, c[1] as f64 * step, c[2] as f64 * step])
                .map(|v| v as f32)
        })
        .collect()
}

pub struct TcacheReader {
    src: Box<dyn ReadAt>,
    path: PathBuf,
    pub header: TcacheHeader,
    pub frames: Vec<FrameEntry>,
    /// `Some` when the index was missing (the writer stopped) and chunks were scanned.
    pub scan: Option<ScanReport>,
    step: f64,
    rest: Vec<i32>,
    first_of_strand: Vec<bool>,
    /// Float bits of the rest pose (lossless keyframes).
    rest_bits: Vec<u32>,
    last: Option<Decoded>,
}

fn read_at(src: &dyn ReadAt, offset: u64, len: usize) -> Result<Vec<u8>> {
    let mut b = vec![0u8; len];
    src.read_exact_at(&mut b, offset)?;
    Ok(b)
}

impl TcacheReader {
    pub fn open(path: impl AsRef<Path>) -> Result<TcacheReader> {
        let path = path.as_ref();
        let file = std::fs::File::open(path).in_file(path)?;
        let src = FileSource::new(file).in_file(path)?;
        TcacheReader::from_source(Box::new(src), path.to_path_buf()).in_file(path)
    }

    pub fn from_bytes(bytes: Vec<u8>) -> Result<TcacheReader> {
        TcacheReader::from_source(Box::new(MemSource(bytes.into())), PathBuf::from("<memory>"))
    }

    fn from_source(src: Box<dyn ReadAt>, path: PathBuf) -> Result<TcacheReader> {
        let len = src.len();
        if len < 24 {
            return Err(Error::truncated(format!(
                "a .tcache starts with a 24-byte preamble; the file has {len} bytes"
            )));
        }
        let pre = read_at(&*src, 0, 20)?;
        if &pre[..8] != MAGIC {
            return Err(Error::corrupt("not a tress .tcache (no TRSCACHE magic)"));
        }
        let version = u32::from_le_bytes(pre[8..12].try_into().expect("4"));
        if version != VERSION {
            return Err(Error::unsupported(format!(
                ".tcache version {version} (this tress reads {VERSION})"
            )));
        }
        let hlen = u64::from_le_bytes(pre[12..20].try_into().expect("8"));
        if hlen > len - 24 {
            return Err(Error::truncated(format!(
                "the header claims {hlen} bytes but the file has {len}"
            )));
        }
        let body = read_at(&*src, 20, hlen as usize + 4)?;
        let crc = u32::from_le_bytes(body[hlen as usize..].try_into().expect("4"));
        if crc32fast::hash(&body[..hlen as usize]) != crc {
            return Err(Error::corrupt(
                "the header's checksum does not match: the file is damaged",
            ));
        }
        let header = TcacheHeader::decode(&body[..hlen as usize])?;
        let first_chunk = 20 + hlen + 4;
        let (frames, scan) = match Self::index(&*src, first_chunk)? {
            Some(f) => (f, None),
            None => {
                let (f, report) = Self::scan_chunks(&*src, first_chunk)?;
                (f, Some(report))
            }
        };
        let rest_bits = header.rest.points.iter().flatten().map(|c| c.to_bits()).collect();
        let (rest, first_of_strand, step) = lattice(&header);
        Ok(TcacheReader {
            src,
            path,
            header,
            frames,
            scan,
            step,
            rest,
            first_of_strand,
            rest_bits,
            last: None,
        })
    }

    /// The index from the footer, if the file has a valid one.
    fn index(src: &dyn ReadAt, first_chunk: u64) -> Result<Option<Vec<FrameEntry>>> {
        let len = src.len();
        if len < first_chunk + 16 {
            return Ok(None);
        }
        let foot = read_at(src, len - 16, 16)?;
        if &foot[8..] != END_TAG {
            return Ok(None);
        }
        let at = u64::from_le_bytes(foot[..8].try_into().expect("8"));
        if at < first_chunk || at > len - 16 - 16 {
            return Ok(None);
        }
        let idx = read_at(src, at, (len - 16 - at) as usize)?;
        let (body, crc) = idx.split_at(idx.len() - 4);
        if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4")) || &body[..4] != INDEX_TAG
        {
            return Ok(None);
        }
        let mut r = ByteReader::new(&body[4..]);
        let n = r.u64("index count")?;
        r.expect(n, 16, "index")?;
        let mut out = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let frame = f64::from_le_bytes(r.array("index")?);
            let offset = r.u64("index")?;
            if offset < first_chunk || offset >= at {
                return Err(Error::corrupt(format!(
                    "the index points at offset {offset}, outside the frames"
                )));
            }
            out.push(FrameEntry { frame, offset });
        }
        Ok(Some(out))
    }

    /// Walks the chunks from the start, keeping every complete one with a valid checksum.
    fn scan_chunks(src: &dyn ReadAt, mut at: u64) -> Result<(Vec<FrameEntry>, ScanReport)> {
        let len = src.len();
        let mut frames = Vec::new();
        let stopped = loop {
            if at == len {
                break None;
            }
            match Self::chunk_len(src, at) {
                Ok(Some(n)) => {
                    let chunk = read_at(src, at, n as usize)?;
                    let (body, crc) = chunk.split_at(chunk.len() - 4);
                    if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4")) {
                        break Some(format!(
                            "frame chunk {} at byte {at} is damaged (checksum mismatch)",
                            frames.len()
                        ));
                    }
                    let frame = f64::from_le_bytes(body[8..16].try_into().expect("8"));
                    frames.push(FrameEntry { frame, offset: at });
                    at += n;
                }
                Ok(None) => {
                    break Some(format!(
                        "the file ends inside frame chunk {} (byte {at}); the writer stopped",
                        frames.len()
                    ));
                }
                Err(e) => break Some(format!("frame chunk {} at byte {at}: {e}", frames.len())),
            }
        };
        let report = ScanReport {
            frames: frames.len(),
            stopped,
        };
        Ok((frames, report))
    }

    /// Length of the chunk at `at` (None if the file ends inside it).
    fn chunk_len(src: &dyn ReadAt, at: u64) -> Result<Option<u64>> {
        let len = src.len();
        let fixed = 4 + 4 + 8 + 56 + 1 + 4;
        if at + fixed > len {
            return Ok(None);
        }
        let head = read_at(src, at, fixed as usize)?;
        if &head[..4] != FRAME_TAG {
            if &head[..4] == INDEX_TAG {
                return Err(Error::corrupt("an index without a footer"));
            }
            return Err(Error::corrupt("not a frame chunk"));
        }
        let blocks = u32::from_le_bytes(head[fixed as usize - 4..].try_into().expect("4")) as u64;
        let mut pos = at + fixed;
        for _ in 0..blocks {
            if pos + 8 > len {
                return Ok(None);
            }
            let b = u64::from_le_bytes(read_at(src, pos, 8)?.try_into().expect("8"));
            pos = pos.saturating_add(8).saturating_add(b);
            if pos > len {
                return Ok(None);
            }
        }
        if pos + 4 > len {
            return Ok(None);
        }
        Ok(Some(pos + 4 - at))
    }

    pub fn fps(&self) -> f64 {
        self.header.fps
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Sequence index of frame number `frame`, if the cache has it.
    pub fn find(&self, frame: f64) -> Option<usize> {
        self.frames.iter().position(|f| (f.frame - frame).abs() < 1e-6)
    }

    /// The predictor and stored size (bytes) of the frame at sequence `seq`, from its chunk
    /// header alone (no decoding, no checksum): for statistics.
    pub fn frame_stats(&self, seq: usize) -> Result<(Predictor, u64)> {
        let entry = self
            .frames
            .get(seq)
            .ok_or_else(|| Error::invalid(format!("no frame {seq}")))?;
        let n = Self::chunk_len(&*self.src, entry.offset)?
            .ok_or_else(|| Error::truncated(format!("frame {} is cut off", entry.frame)))?;
        let head = read_at(&*self.src, entry.offset + 8 + 8 + 56, 1)?;
        Ok((Predictor::from_u8(head[0])?, n))
    }

    /// Decodes the chunk at sequence `seq`: (pose, predictor, stored words).
    fn chunk(&self, seq: usize) -> Result<(HeadPose, Predictor, Vec<u32>)> {
        let entry = self.frames[seq];
        let n = Self::chunk_len(&*self.src, entry.offset)?
            .ok_or_else(|| Error::truncated(format!("frame {} is cut off", entry.frame)))?;
        let chunk = read_at(&*self.src, entry.offset, n as usize)?;
        let (body, crc) = chunk.split_at(chunk.len() - 4);
        if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4")) {
            return Err(Error::corrupt(format!(
                "frame {} is damaged (checksum mismatch at byte {})",
                entry.frame, entry.offset
            )));
        }
        let mut r = ByteReader::new(body);
        r.take(8, "chunk")?;
        r.take(8, "frame")?;
        let mut v = [0f64; 7];
        for x in &mut v {
            *x = f64::from_le_bytes(r.array("pose")?);
        }
        let pose = HeadPose {
            rotation: [v[0], v[1], v[2], v[3]],
            translation: [v[4], v[5], v[6]],
        };
        let predictor = Predictor::from_u8(r.u8("predictor")?)?;
        let nb = r.u32("blocks")?;
        let mut blocks = Vec::new();
        for _ in 0..nb {
            let l = r.u64("block")?;
            blocks.push(r.take(usize::try_from(l).unwrap_or(usize::MAX), "block")?);
        }
        let words = codec::unpack(&blocks, self.header.rest.points.len())?;
        Ok((pose, predictor, words))
    }

    /// Positions (world space) of the frame at sequence index `seq`.
    pub fn frame(&mut self, seq: usize) -> Result<Vec<[f32; 3]>> {
        if seq >= self.frames.len() {
            return Err(Error::invalid(format!(
                "{}: frame index {seq} is past the {} frames",
                self.path.display(),
                self.frames.len()
            )));
        }
        // Resume from the last decoded frame when it is on the way, else from the keyframe.
        let key = seq - seq % self.header.keyframe_interval as usize;
        let start = match &self.last {
            Some(d) if d.seq == seq => return Ok(d.positions()),
            Some(d) if d.seq < seq && d.seq >= key => d.seq + 1,
            _ => {
                self.last = None;
                key
            }
        };
        for s in start..=seq {
            self.decode_next(s).in_file(&self.path)?;
        }
        Ok(self.last.as_ref().expect("decoded").positions())
    }

    /// Head pose stored with the frame at sequence index `seq` (identity when none was).
    pub fn pose(&mut self, seq: usize) -> Result<HeadPose> {
        if !matches!(&self.last, Some(d) if d.seq == seq) {
            self.frame(seq)?;
        }
        Ok(self.last.as_ref().expect("decoded").pose)
    }

    fn decode_next(&mut self, seq: usize) -> Result<()> {
        let (pose, predictor, words) = self.chunk(seq)?;
        let keyframe = seq.is_multiple_of(self.header.keyframe_interval as usize);
        let prev = self.last.take().filter(|d| d.seq + 1 == seq && !keyframe);
        match self.header.codec {
            Codec::Lossless => {
                let moved = prev
                    .as_ref()
                    .and_then(|d| d.bits.as_deref().map(|b| pose.carry(&d.pose, b)));
                let extrapolated = match &prev {
                    Some(d) => match (&d.bits, &d.before_bits) {
                        (Some(a), Some(b)) if a.len() == b.len() => {
                            Some(pose.extrapolate(&d.pose, a, &d.before_pose, b))
                        }
                        _ => None,
                    },
                    None => None,
                };
                let carried_rest = Some(pose.carry(&HeadPose::IDENTITY, &self.rest_bits));
                let h = match &prev {
                    Some(d) => codec::BitHistory {
                        previous: d.bits.as_deref(),
                        before: d.before_bits.as_deref(),
                        moved,
                        extrapolated,
                        first_of_strand: Some(&self.first_of_strand),
                        carried_rest,
                    },
                    None => codec::BitHistory {
                        first_of_strand: Some(&self.first_of_strand),
                        carried_rest,
                        ..Default::default()
                    },
                };
                let bits = codec::lossless_bits(words, predictor, &h)?;
                let before_pose = prev.as_ref().map_or(HeadPose::IDENTITY, |d| d.pose);
                let before_bits = prev.and_then(|d| d.bits);
                self.last = Some(Decoded {
                    seq,
                    ints: None,
                    before: None,
                    bits: Some(bits),
                    before_bits,
                    pose,
                    before_pose,
                    positions: Vec::new(),
                });
            }
            Codec::Lossy { .. } => {
                let (p1, p2) = match &prev {
                    Some(d) => (d.ints.as_deref(), d.before.as_deref()),
                    None => (None, None),
                };
                let ctx = LossyContext {
                    rest: &self.rest,
                    previous: p1,
                    before: p2,
                    first_of_strand: &self.first_of_strand,
                };
                let k = codec::lossy_ints(&ctx, &words, predictor)?;
                let positions = dequantize(&k, self.step, &pose);
                let before_pose = prev.as_ref().map_or(HeadPose::IDENTITY, |d| d.pose);
                let before = prev.and_then(|d| d.ints);
                self.last = Some(Decoded {
                    seq,
                    ints: Some(k),
                    before,
                    bits: None,
                    before_bits: None,
                    pose,
                    before_pose,
                    positions,
                });
            }
        }
        Ok(())
    }
}
