//! Line charts (error per frame in reports) drawn by `plotters` on its bitmap backend, with text
//! in the labels' typeface ([`super::font`], DejaVu Sans).

use std::sync::Once;

use image::RgbImage;
use plotters::prelude::*;

use crate::error::{Error, Result};

/// A series: name, points (x, y), colour.
pub type Series = (String, Vec<(f64, f64)>, [u8; 3]);

/// Registers the typeface under plotters' `sans-serif` family, once.
fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, super::font::ttf());
    });
}

fn chart_error(e: impl std::fmt::Display) -> Error {
    Error::Runtime(format!("drawing a chart: {e}"))
}

/// A chart of `series` with axes from the data's range (y from 0), a legend of the series'
/// names, and its title and axis labels as given (any Unicode text).
pub fn line_plot(
    series: &[Series],
    title: &str,
    x_label: &str,
    y_label: &str,
    width: u32,
    height: u32,
) -> Result<RgbImage> {
    register_font();
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y) in series.iter().flat_map(|s| s.1.iter()) {
        if x.is_finite() {
            x0 = x0.min(x);
            x1 = x1.max(x);
        }
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
    let y1 = if y1 > 0.0 { y1 * 1.05 } else { 1.0 };
    // Frame numbers and other whole numbers label as such.
    let whole = series.iter().flat_map(|s| s.1.iter()).all(|p| p.0.fract() == 0.0);
    let x_format = move |x: &f64| {
        if whole && x.fract() == 0.0 {
            format!("{x:.0}")
        } else if whole {
            String::new()
        } else {
            format!("{x}")
        }
    };
    let mut buf = vec![255u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(38)
            .y_label_area_size(56)
            .build_cartesian_2d(x0..x1, 0.0..y1)
            .map_err(chart_error)?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .label_style(("sans-serif", 12))
            .x_label_formatter(&x_format)
            .axis_desc_style(("sans-serif", 13))
            .light_line_style(RGBColor(238, 238, 238))
            .bold_line_style(RGBColor(215, 215, 215))
            .draw()
            .map_err(chart_error)?;
        for (name, points, c) in series {
            let colour = RGBColor(c[0], c[1], c[2]);
            chart
                .draw_series(LineSeries::new(
                    points
                        .iter()
                        .copied()
                        .filter(|p| p.0.is_finite() && p.1.is_finite()),
                    colour.stroke_width(2),
                ))
                .map_err(chart_error)?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2)));
        }
        if !series.is_empty() {
            chart
                .configure_series_labels()
                .label_font(("sans-serif", 12))
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(180, 180, 180))
                .position(SeriesLabelPosition::UpperRight)
                .draw()
                .map_err(chart_error)?;
        }
        root.present().map_err(chart_error)?;
    }
    RgbImage::from_raw(width, height, buf).ok_or_else(|| chart_error("buffer size"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_land_where_their_values_say() {
        let s = vec![("A".to_string(), vec![(0.0, 0.0), (10.0, 1.0)], [255, 0, 0])];
        let img = line_plot(&s, "RMSE per frame – 2 × 3°", "frame", "cm", 400, 300).unwrap();
        // Pure red pixels: the series (the legend's sample is short and sits top right).
        let red: Vec<(u32, u32)> = img
            .enumerate_pixels()
            .filter(|(_, _, p)| p[0] > 200 && p[1] < 60 && p[2] < 60)
            .map(|(x, y, _)| (x, y))
            .collect();
        let left = red.iter().min_by_key(|p| p.0).unwrap();
        let right = red.iter().filter(|p| p.1 > 60).max_by_key(|p| p.0).unwrap();
        // The line rises from the lower left to the upper right of the plot area.
        assert!(right.0 - left.0 > 250, "{left:?} {right:?}");
        assert!(left.1 > right.1 + 150, "{left:?} {right:?}");
        // Text was drawn (dark anti-aliased ink in the title band).
        let title_ink = (0..400)
            .flat_map(|x| (0..28).map(move |y| (x, y)))
            .filter(|&(x, y)| img.get_pixel(x, y)[0] < 128)
            .count();
        assert!(title_ink > 100, "{title_ink}");
        // The same chart twice is the same pixels.
        assert_eq!(
            img,
            line_plot(&s, "RMSE per frame – 2 × 3°", "frame", "cm", 400, 300).unwrap()
        );
    }
}
