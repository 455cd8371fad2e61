//! The error colour scale: dark blue (no error) through green and yellow to red, with a legend.

use image::RgbImage;

use super::font::draw_text;

/// Colour of `t` in [0, 1] (a piecewise-linear approximation of the "turbo" map's shape).
pub fn heat_color(t: f32) -> [f32; 3] {
    const STOPS: [[f32; 3]; 5] = [
        [0.05, 0.05, 0.35],
        [0.0, 0.45, 0.85],
        [0.1, 0.75, 0.3],
        [0.95, 0.8, 0.1],
        [0.8, 0.05, 0.05],
    ];
    let t = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f32;
    let i = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - i as f32;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    [
        a[0] + f * (b[0] - a[0]),
        a[1] + f * (b[1] - a[1]),
        a[2] + f * (b[2] - a[2]),
    ]
}

/// Draws a horizontal legend bar from 0 to `max` (labelled with `unit`) along the bottom.
pub fn legend(img: &mut RgbImage, max: f32, unit: &str) {
    let (w, h) = (img.width(), img.height());
    let scale = (h / 200).max(1);
    let bar_h = 6 * scale;
    let (x0, x1) = (w / 10, w * 9 / 10);
    let y0 = h.saturating_sub(bar_h + 15 * scale);
    for x in x0..x1 {
        let c = heat_color((x - x0) as f32 / (x1 - x0) as f32).map(|v| (v.powf(1.0 / 2.2) * 255.0) as u8);
        for y in y0..y0 + bar_h {
            img.put_pixel(x, y, image::Rgb(c));
        }
    }
    let ty = y0 + bar_h + 2 * scale;
    draw_text(img, x0, ty, "0", scale, [40, 40, 40]);
    let label = format!("{max:.2} {unit}");
    let lw = super::font::text_width(&label, scale);
    draw_text(img, x1.saturating_sub(lw), ty, &label, scale, [40, 40, 40]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_are_blue_and_red() {
        let (a, b) = (heat_color(0.0), heat_color(1.0));
        assert!(a[2] > a[0] && b[0] > b[2]);
        assert_eq!(heat_color(-1.0), a);
        assert_eq!(heat_color(2.0), b);
    }
}
