//! Several pictures on one: contact sheets of frames, side-by-side comparisons.

use image::{GenericImage, Rgb, RgbImage};

/// Tiles `tiles` (all the same size) left to right, top to bottom in `columns` columns, with a
/// 2-pixel gap.
pub fn contact_sheet(tiles: &[RgbImage], columns: usize) -> RgbImage {
    let Some(first) = tiles.first() else {
        return RgbImage::new(1, 1);
    };
    let columns = columns.clamp(1, tiles.len());
    let rows = tiles.len().div_ceil(columns);
    let (tw, th, gap) = (first.width(), first.height(), 2);
    let mut out = RgbImage::from_pixel(
        columns as u32 * (tw + gap) - gap,
        rows as u32 * (th + gap) - gap,
        Rgb([255, 255, 255]),
    );
    for (i, t) in tiles.iter().enumerate() {
        let (c, r) = ((i % columns) as u32, (i / columns) as u32);
        out.copy_from(t, c * (tw + gap), r * (th + gap))
            .expect("tile fits");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_land_in_their_cells() {
        let a = RgbImage::from_pixel(4, 3, Rgb([255, 0, 0]));
        let b = RgbImage::from_pixel(4, 3, Rgb([0, 0, 255]));
        let s = contact_sheet(&[a.clone(), b, a], 2);
        assert_eq!((s.width(), s.height()), (10, 8));
        assert_eq!(s.get_pixel(0, 0)[0], 255);
        assert_eq!(s.get_pixel(6, 0)[2], 255);
        assert_eq!(s.get_pixel(0, 5)[0], 255);
        // The empty fourth cell stays white.
        assert_eq!(*s.get_pixel(7, 6), Rgb([255, 255, 255]));
    }
}
