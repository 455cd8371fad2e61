//! Labels on pictures (frame numbers, method names, legends, chart text) in a real typeface:
//! DejaVu Sans from the `dejavu` crate, rasterized by `ab_glyph` with anti-aliasing, so mixed
//! case, °, ×, – and other Unicode text read as written. Deterministic: the same text gives the
//! same pixels on every machine.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
use image::RgbImage;

/// Pixel height of the font at `scale` 1 (labels on previews).
const BASE_PX: f32 = 11.0;

/// The typeface.
pub fn face() -> &'static FontRef<'static> {
    static FACE: OnceLock<FontRef<'static>> = OnceLock::new();
    FACE.get_or_init(|| FontRef::try_from_slice(dejavu::sans::regular()).expect("DejaVu Sans parses"))
}

/// The raw TrueType bytes of the typeface (for plotters).
pub fn ttf() -> &'static [u8] {
    dejavu::sans::regular()
}

fn px(scale: u32) -> PxScale {
    PxScale::from(BASE_PX * scale.max(1) as f32)
}

/// Width in pixels of `text` at `scale`.
pub fn text_width(text: &str, scale: u32) -> u32 {
    let f = face().as_scaled(px(scale));
    let mut w = 0.0;
    let mut prev = None;
    for c in text.chars() {
        let id = f.glyph_id(c);
        if let Some(p) = prev {
            w += f.kern(p, id);
        }
        w += f.h_advance(id);
        prev = Some(id);
    }
    w.ceil() as u32
}

/// Draws `text` with its top-left corner at (x, y), blending `color` over the image by the
/// glyphs' coverage.
pub fn draw_text(img: &mut RgbImage, x: u32, y: u32, text: &str, scale: u32, color: [u8; 3]) {
    let font = face();
    let f = font.as_scaled(px(scale));
    let baseline = y as f32 + f.ascent();
    let mut pen = x as f32;
    let mut prev = None;
    for c in text.chars() {
        let id = f.glyph_id(c);
        if let Some(p) = prev {
            pen += f.kern(p, id);
        }
        let glyph = id.with_scale_and_position(px(scale), ab_glyph::point(pen, baseline));
        pen += f.h_advance(id);
        prev = Some(id);
        let Some(outline) = font.outline_glyph(glyph) else {
            continue;
        };
        let b = outline.px_bounds();
        outline.draw(|gx, gy, coverage| {
            let (px, py) = (b.min.x as i64 + gx as i64, b.min.y as i64 + gy as i64);
            if px < 0 || py < 0 || px >= img.width() as i64 || py >= img.height() as i64 {
                return;
            }
            let a = coverage.clamp(0.0, 1.0);
            let p = img.get_pixel_mut(px as u32, py as u32);
            for k in 0..3 {
                p[k] = (p[k] as f32 * (1.0 - a) + color[k] as f32 * a).round() as u8;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_inside_its_box_in_a_real_typeface() {
        let mut img = RgbImage::new(120, 20);
        draw_text(&mut img, 1, 1, "Frame 10", 1, [255, 255, 255]);
        let lit: Vec<(u32, u32)> = img
            .enumerate_pixels()
            .filter(|(_, _, p)| p[0] > 0)
            .map(|(x, y, _)| (x, y))
            .collect();
        assert!(!lit.is_empty());
        let w = text_width("Frame 10", 1);
        assert!(
            lit.iter()
                .all(|&(x, y)| x >= 1 && x <= 1 + w && (1..16).contains(&y))
        );
        // Anti-aliased: partial coverage exists.
        assert!(img.pixels().any(|p| p[0] > 0 && p[0] < 255));
        // Lower and upper case differ, and the typeface has °, × and –.
        let ink = |s: &str| {
            let mut i = RgbImage::new(60, 20);
            draw_text(&mut i, 0, 0, s, 1, [255, 255, 255]);
            i.into_raw()
        };
        assert_ne!(ink("a"), ink("A"));
        for c in ['°', '×', '–'] {
            assert_ne!(face().glyph_id(c).0, 0, "{c} missing");
            assert!(ink(&c.to_string()).iter().any(|&v| v > 0), "{c} draws nothing");
        }
    }
}
