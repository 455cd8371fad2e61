//! A supersampled colour + depth buffer, resolved to an RGB picture by box filtering.

use image::RgbImage;

/// Samples per pixel along each axis.
pub const SUPERSAMPLE: u32 = 3;

#[derive(Clone)]
pub struct Canvas {
    /// Size in samples.
    pub width: u32,
    pub height: u32,
    color: Vec<[f32; 3]>,
    depth: Vec<f32>,
}

impl Canvas {
    /// A canvas for a `width` × `height` picture, cleared to `background`.
    pub fn new(width: u32, height: u32, background: [f32; 3]) -> Canvas {
        let (w, h) = (width * SUPERSAMPLE, height * SUPERSAMPLE);
        Canvas {
            width: w,
            height: h,
            color: vec![background; (w * h) as usize],
            depth: vec![f32::INFINITY; (w * h) as usize],
        }
    }

    /// Writes a sample if it is nearer than what is there (`x`, `y` in samples).
    #[inline]
    pub fn plot(&mut self, x: i32, y: i32, depth: f32, color: [f32; 3]) {
        if x < 0 || y < 0 || x >= self.width as i32 || y >= self.height as i32 {
            return;
        }
        let k = (y as u32 * self.width + x as u32) as usize;
        if depth < self.depth[k] {
            self.depth[k] = depth;
            self.color[k] = color;
        }
    }

    /// A one-sample-wide line from `a` to `b` (picture pixels, depth), colours interpolated.
    pub fn line(&mut self, a: (f32, f32, f32), b: (f32, f32, f32), ca: [f32; 3], cb: [f32; 3]) {
        let s = SUPERSAMPLE as f32;
        let (x0, y0, x1, y1) = (a.0 * s, a.1 * s, b.0 * s, b.1 * s);
        if !(x0.is_finite() && y0.is_finite() && x1.is_finite() && y1.is_finite()) {
            return;
        }
        let steps = (x1 - x0).abs().max((y1 - y0).abs()).ceil().clamp(1.0, 1e5) as i32;
        for i in 0..=steps {
            let t = i as f32 / steps as f32;
            let c = [
                ca[0] + t * (cb[0] - ca[0]),
                ca[1] + t * (cb[1] - ca[1]),
                ca[2] + t * (cb[2] - ca[2]),
            ];
            self.plot(
                (x0 + t * (x1 - x0)).floor() as i32,
                (y0 + t * (y1 - y0)).floor() as i32,
                a.2 + t * (b.2 - a.2),
                c,
            );
        }
    }

    /// Depth at a sample (infinite where nothing was drawn).
    pub fn depth_at(&self, x: u32, y: u32) -> f32 {
        self.depth[(y * self.width + x) as usize]
    }

    /// The picture: each pixel the mean of its samples, sRGB-ish gamma applied.
    pub fn resolve(&self) -> RgbImage {
        let (w, h) = (self.width / SUPERSAMPLE, self.height / SUPERSAMPLE);
        let n = (SUPERSAMPLE * SUPERSAMPLE) as f32;
        RgbImage::from_fn(w, h, |px, py| {
            let mut sum = [0.0f32; 3];
            for sy in 0..SUPERSAMPLE {
                for sx in 0..SUPERSAMPLE {
                    let c =
                        self.color[((py * SUPERSAMPLE + sy) * self.width + px * SUPERSAMPLE + sx) as usize];
                    for k in 0..3 {
                        sum[k] += c[k];
                    }
                }
            }
            image::Rgb(sum.map(|v| ((v / n).clamp(0.0, 1.0).powf(1.0 / 2.2) * 255.0 + 0.5) as u8))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearer_samples_win_and_lines_reach_their_ends() {
        let mut c = Canvas::new(10, 10, [0.0; 3]);
        c.line((1.0, 5.0, 2.0), (8.0, 5.0, 2.0), [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]);
        c.line((5.0, 1.0, 1.0), (5.0, 8.0, 1.0), [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]);
        // The crossing sample holds the nearer (green) line; both are visible along their length.
        assert_eq!(c.depth_at(15, 15), 1.0);
        let img = c.resolve();
        assert!(img.get_pixel(2, 5)[0] > 0 && img.get_pixel(7, 5)[0] > 0);
        assert!(img.get_pixel(5, 2)[1] > 0 && img.get_pixel(5, 7)[1] > 0);
        assert_eq!(img.get_pixel(0, 0)[0], 0);
    }
}
