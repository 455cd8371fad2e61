//! Training data of the neural methods: a full simulation of a groom laid on its uv grid
//! ([`super::grid::UvGrid`]) in network units (head frame, relative to the scalp centre, over
//! [`super::grid::UNIT_CM`]), and the crops of 000 §4.2.3.
//!
//! Crop augmentation: a crop is the (n − k) × (n − k) window starting at cell (du, dv) ∈ [0, k)²
//! with its guides at crop-local (k·i, k·j), so every strand plays the guide in some crop ("every
//! slot of the k × k upper-left region ... as the corner of a valid crop"). Guides are taken from
//! the ground truth while training (000 §4.2.3); at run time they come from the guide simulation.

use burn::prelude::*;
use glam::Vec3;

use super::grid::UvGrid;
use crate::error::{Error, Result};
use crate::guides::training::HeadFrames;
use crate::neural::interp::carry::{Hood, Space, candidates};

/// Frames of one groom's simulation on its grid.
#[derive(Clone)]
pub struct GridFrames {
    pub grid: UvGrid,
    /// Rest, network units, [n, n, w] particles.
    pub rest: Vec<[f32; 3]>,
    /// Frames, network units.
    pub frames: Vec<Vec<[f32; 3]>>,
}

/// The most frames held in memory (a guard against a giant allocation).
const MAX_BYTES: usize = 8 << 30;

impl GridFrames {
    /// Reads frames `range` (all when `None`) of `cache` onto `grid`.
    pub fn load(
        grid: UvGrid,
        cache: &mut HeadFrames,
        range: Option<std::ops::Range<usize>>,
    ) -> Result<GridFrames> {
        let range = range.unwrap_or(0..cache.len());
        let per_frame = grid.cells() * grid.spec.points * 12;
        if per_frame.saturating_mul(range.len()) > MAX_BYTES {
            return Err(Error::Invalid(format!(
                "{}: {} frames of a {}² grid need more than {} GiB; train on fewer frames",
                cache.path().display(),
                range.len(),
                grid.spec.n,
                MAX_BYTES >> 30
            )));
        }
        let mut data = GridFrames::new(grid);
        for i in range {
            let (points, _) = cache.frame(i)?;
            data.push(&points);
        }
        Ok(data)
    }

    /// Training and validation frames from one cache: the last `share` of its frames (at least
    /// one) are held out, at least `batch` frames are left to train on.
    pub fn load_split(
        grid: UvGrid,
        cache: &mut HeadFrames,
        share: f64,
        batch: usize,
    ) -> Result<(GridFrames, GridFrames)> {
        let n = cache.len();
        if n < batch + 1 {
            return Err(Error::Invalid(format!(
                "{}: {n} frames; training on {batch}-frame batches with held-out validation needs at least {} (or give validation frames of their own)",
                cache.path().display(),
                batch + 1
            )));
        }
        let held = ((n as f64 * share).round() as usize).clamp(1, n - batch);
        let train = GridFrames::load(grid.clone(), cache, Some(0..n - held))?;
        Ok((train, GridFrames::load(grid, cache, Some(n - held..n))?))
    }

    /// No frames yet.
    pub fn new(grid: UvGrid) -> GridFrames {
        let rest = grid.rest.iter().map(|p| grid.to_net(*p)).collect();
        GridFrames {
            grid,
            rest,
            frames: Vec::new(),
        }
    }

    /// Adds a frame of the whole groom (head frame, groom order).
    pub fn push(&mut self, points: &[Vec3]) {
        let mut cells = Vec::new();
        self.grid.gather(points, &mut cells);
        self.frames
            .push(cells.iter().map(|p| self.grid.to_net(*p)).collect());
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

/// Training frames in segments of consecutive frames (one simulation each, of one groom on its
/// own grid): a training batch takes consecutive frames of one segment, never two. One groom's
/// frames in memory are one segment; a dataset is one segment per item, in memory
/// (`Vec<GridFrames>`) or read from its caches batch by batch ([`StreamedFrames`]), and both
/// give the same batches.
pub trait FrameSet {
    /// Frames in each segment.
    fn segments(&self) -> Vec<usize>;
    /// Frames `first..first + count` of segment `seg`: grid frames holding them, and the index
    /// of `first` in them.
    fn window(
        &self,
        seg: usize,
        first: usize,
        count: usize,
    ) -> Result<(std::borrow::Cow<'_, GridFrames>, usize)>;
}

impl FrameSet for GridFrames {
    fn segments(&self) -> Vec<usize> {
        vec![self.len()]
    }
    fn window(&self, _: usize, first: usize, _: usize) -> Result<(std::borrow::Cow<'_, GridFrames>, usize)> {
        Ok((std::borrow::Cow::Borrowed(self), first))
    }
}

impl FrameSet for Vec<GridFrames> {
    fn segments(&self) -> Vec<usize> {
        self.iter().map(GridFrames::len).collect()
    }
    fn window(
        &self,
        seg: usize,
        first: usize,
        _: usize,
    ) -> Result<(std::borrow::Cow<'_, GridFrames>, usize)> {
        Ok((std::borrow::Cow::Borrowed(&self[seg]), first))
    }
}

/// One simulation read from its cache a window at a time.
struct Streamed {
    /// The grid and rest, no frames.
    base: GridFrames,
    cache: std::sync::Mutex<HeadFrames>,
    len: usize,
}

/// Segments read from their caches as batches need them: memory holds one batch, not the
/// dataset.
pub struct StreamedFrames {
    items: Vec<Streamed>,
}

impl StreamedFrames {
    /// Segments of `(grid, cache)` pairs, each cache opened on its own groom's grid.
    pub fn new(items: Vec<(UvGrid, HeadFrames)>) -> StreamedFrames {
        StreamedFrames {
            items: items
                .into_iter()
                .map(|(grid, cache)| Streamed {
                    len: cache.len(),
                    base: GridFrames::new(grid),
                    cache: std::sync::Mutex::new(cache),
                })
                .collect(),
        }
    }

    /// The segments in memory (for tests and small datasets).
    pub fn load_all(&self) -> Result<Vec<GridFrames>> {
        (0..self.items.len())
            .map(|s| Ok(self.window(s, 0, self.items[s].len)?.0.into_owned()))
            .collect()
    }
}

impl FrameSet for StreamedFrames {
    fn segments(&self) -> Vec<usize> {
        self.items.iter().map(|i| i.len).collect()
    }
    fn window(
        &self,
        seg: usize,
        first: usize,
        count: usize,
    ) -> Result<(std::borrow::Cow<'_, GridFrames>, usize)> {
        let item = &self.items[seg];
        let mut cache = item.cache.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = item.base.clone();
        for i in first..first + count {
            let (points, _) = cache.frame(i)?;
            out.push(&points);
        }
        Ok((std::borrow::Cow::Owned(out), 0))
    }
}

/// One training sample: consecutive frames of one crop.
pub struct Batch<B: Backend> {
    /// Rest `[1, c, c, w, 3]`.
    pub rest: Tensor<B, 5>,
    /// Targets `[b, c, c, w, 3]`.
    pub target: Tensor<B, 5>,
    /// Guides `[b, c/k, c/k, w, 3]`.
    pub guides: Tensor<B, 5>,
    /// Cell mask `[1, c, c, 1, 1]`.
    pub mask: Tensor<B, 5>,
    /// What L blends for each particle `[b, c, c, w, 16, 3]` ([`crate::neural::interp::carry`]).
    pub hood: Hood<B>,
}

impl GridFrames {
    /// Frames `first..first + count` cut to the window of `size` cells at (du, dv), guides every
    /// k cells from the window's corner, with the candidates `space` gives L.
    pub fn batch<B: Backend>(
        &self,
        first: usize,
        count: usize,
        (du, dv): (usize, usize),
        size: usize,
        space: Space,
        dev: &B::Device,
    ) -> Batch<B> {
        let n = self.grid.spec.n;
        let w = self.grid.spec.points;
        let k = self.grid.spec.stride;
        let m = size / k;
        assert!(du + size <= n && dv + size <= n && size.is_multiple_of(k));
        let window = |src: &[[f32; 3]], out: &mut Vec<f32>| {
            for a in 0..size {
                for b in 0..size {
                    let c = (du + a) * n + dv + b;
                    out.extend(src[c * w..(c + 1) * w].iter().flatten());
                }
            }
        };
        let guides = |src: &[[f32; 3]], out: &mut Vec<f32>| {
            for i in 0..m {
                for j in 0..m {
                    let c = (du + k * i) * n + dv + k * j;
                    out.extend(src[c * w..(c + 1) * w].iter().flatten());
                }
            }
        };
        let mut rest = Vec::with_capacity(size * size * w * 3);
        window(&self.rest, &mut rest);
        let mut rest_guides = Vec::with_capacity(m * m * w * 3);
        guides(&self.rest, &mut rest_guides);
        let mut target = Vec::with_capacity(count * size * size * w * 3);
        let mut g = Vec::with_capacity(count * m * m * w * 3);
        for f in first..first + count {
            window(&self.frames[f], &mut target);
            guides(&self.frames[f], &mut g);
        }
        let mut mask = Vec::with_capacity(size * size);
        for a in 0..size {
            for b in 0..size {
                mask.push(if self.grid.occupied[(du + a) * n + dv + b] {
                    1f32
                } else {
                    0.0
                });
            }
        }
        let guides = Tensor::from_data(TensorData::new(g.clone(), [count, m, m, w, 3]), dev);
        Batch {
            hood: candidates(space, guides.clone(), &g, k, &rest, &rest_guides),
            rest: Tensor::from_data(TensorData::new(rest, [1, size, size, w, 3]), dev),
            target: Tensor::from_data(TensorData::new(target, [count, size, size, w, 3]), dev),
            guides,
            mask: Tensor::from_data(TensorData::new(mask, [1, size, size, 1, 1]), dev),
        }
    }
}

/// Positions `[b, u, v, w, 3]` → network layout `[b, 3, u, v, w]`.
pub fn channels_first<B: Backend>(x: Tensor<B, 5>) -> Tensor<B, 5> {
    x.permute([0, 4, 1, 2, 3])
}
