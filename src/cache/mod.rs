//! Strand caches as streams of frames: sources (`.tcache`, Alembic curves, PLY sequences) and
//! sinks (the same three), so that simulations, conversions and previews never need more than a
//! few frames in memory.

pub mod convert;
pub mod groups;
pub mod ply_sequence;
pub mod sinks;
pub mod sources;
pub mod space;

use tress_formats::Strands;

pub use convert::{ConvertOptions, convert_cache, is_cache_path};
pub use groups::{Group, GroupsOptions, write_groups};
pub use sinks::{DEFAULT_USD_PRIM, FrameSink, SinkOptions, create_sink, usd_prim};
pub use sources::{FrameSource, open_source};
pub use space::{OutputSpace, Units};

/// What every frame of a cache shares: topology and attributes (with the first frame's or the
/// rest positions), frame rate and frame numbers.
#[derive(Clone, Debug)]
pub struct CacheInfo {
    pub topology: Strands,
    pub fps: f64,
    pub frames: Vec<f64>,
}

/// Parses an inclusive frame range `A-B` (or a single frame `A`).
pub fn parse_frame_range(s: &str) -> crate::Result<(f64, f64)> {
    let bad = || crate::Error::Invalid(format!("frame range {s:?}: expected A-B, e.g. 1001-1100"));
    let s = s.trim();
    // A leading '-' is a negative frame, not a separator.
    let split = s.char_indices().skip(1).find(|&(_, c)| c == '-').map(|(i, _)| i);
    let (a, b) = match split {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, s),
    };
    let a: f64 = a.trim().parse().map_err(|_| bad())?;
    let b: f64 = b.trim().parse().map_err(|_| bad())?;
    if !(a.is_finite() && b.is_finite()) {
        return Err(bad());
    }
    if b < a {
        return Err(crate::Error::Invalid(format!(
            "frame range {s:?} is reversed: the first frame comes after the last (did you mean {b}-{a}?)"
        )));
    }
    Ok((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_ranges() {
        assert_eq!(parse_frame_range("1001-1100").unwrap(), (1001.0, 1100.0));
        assert_eq!(parse_frame_range("7").unwrap(), (7.0, 7.0));
        assert_eq!(parse_frame_range("-5-3").unwrap(), (-5.0, 3.0));
        let e = parse_frame_range("1048-1001").unwrap_err().to_string();
        assert!(e.contains("reversed") && e.contains("1001-1048"), "{e}");
        assert!(parse_frame_range("10-2").is_err());
        assert!(parse_frame_range("a-b").is_err());
    }
}
