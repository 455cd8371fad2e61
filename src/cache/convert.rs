//! Streaming cache conversion: frames flow from a source to a sink one at a time.

use std::path::{Path, PathBuf};

use super::ply_sequence::Pattern;
use super::{SinkOptions, create_sink, open_source};
use crate::error::{Error, Result};

/// Whether a path names a cache (as opposed to a static groom).
pub fn is_cache_path(path: &Path) -> bool {
    Pattern::parse(path).is_some() || path.extension().is_some_and(|e| e.eq_ignore_ascii_case("tcache"))
}

#[derive(Clone, Debug)]
pub struct ConvertOptions {
    /// Inclusive frame range to keep.
    pub frames: Option<(f64, f64)>,
    /// Frame rate of PLY sequences (which do not store one).
    pub fps: f64,
    /// Alembic input: the curves object (default: the first).
    pub object: Option<String>,
    pub sink: SinkOptions,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            frames: None,
            fps: 24.0,
            object: None,
            sink: SinkOptions::default(),
        }
    }
}

/// The indices of `frames` inside the inclusive `range` (all without one); an error naming
/// `path` when none is.
pub fn frames_in(path: &Path, frames: &[f64], range: Option<(f64, f64)>) -> Result<Vec<usize>> {
    let chosen: Vec<usize> = (0..frames.len())
        .filter(|&i| range.is_none_or(|(a, b)| frames[i] >= a - 1e-6 && frames[i] <= b + 1e-6))
        .collect();
    if chosen.is_empty() {
        return Err(Error::Invalid(format!(
            "{}: no frames in the requested range (the cache has frames {}-{})",
            path.display(),
            frames.first().copied().unwrap_or(0.0),
            frames.last().copied().unwrap_or(0.0)
        )));
    }
    Ok(chosen)
}

/// Converts a cache; returns the files written and the number of frames.
pub fn convert_cache(input: &Path, output: &Path, opts: &ConvertOptions) -> Result<(Vec<PathBuf>, usize)> {
    let mut src = open_source(input, opts.object.as_deref(), opts.fps)?;
    let info = src.info().clone();
    let chosen = frames_in(input, &info.frames, opts.frames)?;
    let start = info.frames[chosen[0]];
    // Frames stay in the space the cache records until the sink writes them in its own.
    let sink_opts = SinkOptions {
        from: src.space(),
        ..opts.sink.clone()
    };
    let mut sink = create_sink(output, &info, start, &sink_opts)?;
    for &i in &chosen {
        let p = src.read(i)?;
        let pose = src.pose(i)?;
        sink.write(info.frames[i], &p, pose)?;
    }
    Ok((sink.finish()?, chosen.len()))
}
