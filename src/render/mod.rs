//! Pictures of hair: a software strand renderer. Strands are camera-facing ribbons of their
//! widths, anti-aliased by coverage and composited back to front ([`hair`]), shaded with
//! Kajiya–Kay's model and Marschner's two highlights ([`shade`]) and self-shadowed through a
//! deep opacity map ([`shadow`]); colliders (analytic shapes and distance grids alike) are
//! drawn beneath by sphere tracing their distance fields ([`solid`]). Multi-threaded and
//! deterministic: the same inputs give the same pixels for any thread count.

pub mod anim;
pub mod camera;
pub mod film;
pub mod font;
pub mod frame;
pub mod hair;
pub mod heat;
pub mod plot;
pub mod preview;
pub mod shade;
pub mod shadow;
pub mod sheet;
pub mod solid;

pub use camera::{Camera, View};
pub use film::Film;
pub use frame::{Coloring, FrameStyle, render_frame};
pub use sheet::contact_sheet;

use std::path::Path;

use crate::error::{Error, Result};

/// Writes a picture as PNG, atomically.
pub fn save_png(path: &Path, img: &image::RgbImage) -> Result<()> {
    let mut bytes = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
        .map_err(|e| Error::Runtime(format!("PNG encoding: {e}")))?;
    tress_formats::atomic::write(path, &bytes).map_err(|e| crate::error::output_error(path, e))
}

/// A picture size `WIDTHxHEIGHT` (16 to 8192 pixels a side); `what` names the option in errors.
pub fn parse_size(s: &str, what: &str) -> Result<(u32, u32)> {
    let bad = || {
        Error::Invalid(format!(
            "{what} {s:?}: expected WIDTHxHEIGHT, e.g. 640x480, each side 16 to 8192 pixels"
        ))
    };
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (u32, u32) = (
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    );
    if !(16..=8192).contains(&w) || !(16..=8192).contains(&h) {
        return Err(bad());
    }
    Ok((w, h))
}
