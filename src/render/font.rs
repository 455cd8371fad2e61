//! A 5 × 7 pixel font for labels on previews (frame numbers, method names): upper-case
//! letters, digits and a little punctuation; other characters draw as blanks.

use image::{Rgb, RgbImage};

/// Rows of each glyph, most significant of the 5 bits on the left.
fn glyph(c: char) -> [u8; 7] {
    match c.to_ascii_uppercase() {
        '0' => [14, 17, 19, 21, 25, 17, 14],
        '1' => [4, 12, 4, 4, 4, 4, 14],
        '2' => [14, 17, 1, 2, 4, 8, 31],
        '3' => [31, 2, 4, 2, 1, 17, 14],
        '4' => [2, 6, 10, 18, 31, 2, 2],
        '5' => [31, 16, 30, 1, 1, 17, 14],
        '6' => [6, 8, 16, 30, 17, 17, 14],
        '7' => [31, 1, 2, 4, 8, 8, 8],
        '8' => [14, 17, 17, 14, 17, 17, 14],
        '9' => [14, 17, 17, 15, 1, 2, 12],
        'A' => [14, 17, 17, 31, 17, 17, 17],
        'B' => [30, 17, 17, 30, 17, 17, 30],
        'C' => [14, 17, 16, 16, 16, 17, 14],
        'D' => [28, 18, 17, 17, 17, 18, 28],
        'E' => [31, 16, 16, 30, 16, 16, 31],
        'F' => [31, 16, 16, 30, 16, 16, 16],
        'G' => [14, 17, 16, 23, 17, 17, 15],
        'H' => [17, 17, 17, 31, 17, 17, 17],
        'I' => [14, 4, 4, 4, 4, 4, 14],
        'J' => [7, 2, 2, 2, 2, 18, 12],
        'K' => [17, 18, 20, 24, 20, 18, 17],
        'L' => [16, 16, 16, 16, 16, 16, 31],
        'M' => [17, 27, 21, 21, 17, 17, 17],
        'N' => [17, 17, 25, 21, 19, 17, 17],
        'O' => [14, 17, 17, 17, 17, 17, 14],
        'P' => [30, 17, 17, 30, 16, 16, 16],
        'Q' => [14, 17, 17, 17, 21, 18, 13],
        'R' => [30, 17, 17, 30, 20, 18, 17],
        'S' => [15, 16, 16, 14, 1, 1, 30],
        'T' => [31, 4, 4, 4, 4, 4, 4],
        'U' => [17, 17, 17, 17, 17, 17, 14],
        'V' => [17, 17, 17, 17, 17, 10, 4],
        'W' => [17, 17, 17, 21, 21, 21, 10],
        'X' => [17, 17, 10, 4, 10, 17, 17],
        'Y' => [17, 17, 17, 10, 4, 4, 4],
        'Z' => [31, 1, 2, 4, 8, 16, 31],
        '-' => [0, 0, 0, 31, 0, 0, 0],
        '.' => [0, 0, 0, 0, 0, 12, 12],
        ':' => [0, 12, 12, 0, 12, 12, 0],
        '/' => [1, 1, 2, 4, 8, 16, 16],
        '%' => [24, 25, 2, 4, 8, 19, 3],
        '|' => [4, 4, 4, 4, 4, 4, 4],
        '+' => [0, 4, 4, 31, 4, 4, 0],
        '(' => [2, 4, 8, 8, 8, 4, 2],
        ')' => [8, 4, 2, 2, 2, 4, 8],
        _ => [0; 7],
    }
}

/// Width in pixels of `text` at `scale`.
pub fn text_width(text: &str, scale: u32) -> u32 {
    text.chars().count() as u32 * 6 * scale
}

/// Draws `text` with its top-left corner at (x, y), each font pixel `scale` × `scale`.
pub fn draw_text(img: &mut RgbImage, x: u32, y: u32, text: &str, scale: u32, color: [u8; 3]) {
    for (i, c) in text.chars().enumerate() {
        let g = glyph(c);
        let x0 = x + i as u32 * 6 * scale;
        for (row, bits) in g.iter().enumerate() {
            for col in 0..5u32 {
                if bits & (16 >> col) == 0 {
                    continue;
                }
                for dy in 0..scale {
                    for dx in 0..scale {
                        let (px, py) = (x0 + col * scale + dx, y + row as u32 * scale + dy);
                        if px < img.width() && py < img.height() {
                            img.put_pixel(px, py, Rgb(color));
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_inside_its_box() {
        let mut img = RgbImage::new(40, 10);
        draw_text(&mut img, 1, 1, "F10", 1, [255, 255, 255]);
        let lit: Vec<(u32, u32)> = img
            .enumerate_pixels()
            .filter(|(_, _, p)| p[0] > 0)
            .map(|(x, y, _)| (x, y))
            .collect();
        assert!(!lit.is_empty());
        assert!(
            lit.iter()
                .all(|&(x, y)| x >= 1 && x < 1 + text_width("F10", 1) && (1..8).contains(&y))
        );
        // Distinct glyphs differ.
        assert_ne!(glyph('0'), glyph('8'));
    }
}
