//! Small line plots (error per frame) drawn with the preview font, no plotting library.

use image::{Rgb, RgbImage};

use super::font::{draw_text, text_width};

/// A series: name, points (x, y), colour.
pub type Series = (String, Vec<(f64, f64)>, [u8; 3]);

fn nice_step(range: f64) -> f64 {
    let raw = range / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let m = raw / mag;
    let nice = if m < 1.5 {
        1.0
    } else if m < 3.5 {
        2.0
    } else if m < 7.5 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

fn label(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn line(img: &mut RgbImage, (x0, y0): (f64, f64), (x1, y1): (f64, f64), c: [u8; 3], thick: i32) {
    let steps = (x1 - x0).abs().max((y1 - y0).abs()).ceil().max(1.0) as i32;
    for s in 0..=steps {
        let t = s as f64 / steps as f64;
        let (x, y) = (
            (x0 + t * (x1 - x0)).round() as i32,
            (y0 + t * (y1 - y0)).round() as i32,
        );
        for dy in 0..thick {
            for dx in 0..thick {
                let (px, py) = (x + dx, y + dy);
                if px >= 0 && py >= 0 && (px as u32) < img.width() && (py as u32) < img.height() {
                    img.put_pixel(px as u32, py as u32, Rgb(c));
                }
            }
        }
    }
}

/// A plot of `series` with axes from the data's range (y from 0).
pub fn line_plot(
    series: &[Series],
    title: &str,
    x_label: &str,
    y_label: &str,
    width: u32,
    height: u32,
) -> RgbImage {
    let mut img = RgbImage::from_pixel(width, height, Rgb([255, 255, 255]));
    let ink = [40, 40, 40];
    // Room under the axis for the tick labels, the axis label and one legend line per series.
    let (left, right, top) = (70.0, width as f64 - 20.0, 30.0);
    let bottom = height as f64 - 36.0 - 12.0 * series.len() as f64;
    let pts = series.iter().flat_map(|s| s.1.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        if y.is_finite() {
            y1 = y1.max(y);
        }
    }
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let ystep = nice_step(if y1 > 0.0 { y1 } else { 1.0 });
    let y1 = (y1 / ystep).ceil().max(1.0) * ystep;
    let sx = |x: f64| left + (x - x0) / (x1 - x0) * (right - left);
    let sy = |y: f64| bottom - y / y1 * (bottom - top);
    // Grid, ticks, labels.
    let mut y = 0.0;
    while y <= y1 + 1e-12 {
        line(&mut img, (left, sy(y)), (right, sy(y)), [225, 225, 225], 1);
        let l = label(y);
        draw_text(
            &mut img,
            (left as u32).saturating_sub(text_width(&l, 1) + 6),
            sy(y) as u32 - 3,
            &l,
            1,
            ink,
        );
        y += ystep;
    }
    let xstep = nice_step(x1 - x0);
    let mut x = (x0 / xstep).ceil() * xstep;
    while x <= x1 + 1e-9 {
        line(&mut img, (sx(x), bottom), (sx(x), bottom + 4.0), ink, 1);
        let l = label(x);
        draw_text(
            &mut img,
            (sx(x) as u32).saturating_sub(text_width(&l, 1) / 2),
            bottom as u32 + 8,
            &l,
            1,
            ink,
        );
        x += xstep;
    }
    line(&mut img, (left, top), (left, bottom), ink, 1);
    line(&mut img, (left, bottom), (right, bottom), ink, 1);
    draw_text(
        &mut img,
        (left as u32 + right as u32) / 2 - text_width(x_label, 1) / 2,
        bottom as u32 + 20,
        x_label,
        1,
        ink,
    );
    draw_text(&mut img, 6, 8, y_label, 1, ink);
    draw_text(&mut img, (width - text_width(title, 2)) / 2, 6, title, 2, ink);
    // Series and legend.
    for (k, (name, p, c)) in series.iter().enumerate() {
        for w in p.windows(2) {
            if w[0].1.is_finite() && w[1].1.is_finite() {
                line(
                    &mut img,
                    (sx(w[0].0), sy(w[0].1)),
                    (sx(w[1].0), sy(w[1].1)),
                    *c,
                    2,
                );
            }
        }
        // Legend: under the axis label.
        let ly = bottom as u32 + 34 + 12 * k as u32;
        line(
            &mut img,
            (left + 8.0, ly as f64 + 3.0),
            (left + 23.0, ly as f64 + 3.0),
            *c,
            2,
        );
        draw_text(&mut img, left as u32 + 28, ly, name, 1, ink);
    }
    img
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_land_where_their_values_say() {
        let s = vec![("A".to_string(), vec![(0.0, 0.0), (10.0, 1.0)], [255, 0, 0])];
        let img = line_plot(&s, "T", "FRAME", "CM", 400, 300);
        // The line rises from the bottom-left corner of the plot area to the top-right.
        let red = |x: u32, y: u32| {
            (y.saturating_sub(3)..y + 4)
                .any(|yy| img.get_pixel(x, yy.min(299))[0] == 255 && img.get_pixel(x, yy.min(299))[1] == 0)
        };
        assert!(red(72, 255));
        assert!(red(378, 30));
        assert_eq!(nice_step(10.0), 2.0);
        assert_eq!(nice_step(0.3), 0.05);
    }
}
