//! Picture similarity of previews: PSNR over RGB and SSIM (Wang et al. 2004) over luma.

use image::RgbImage;

/// Peak signal-to-noise ratio in dB over the three channels (255 peak); identical pictures
/// give 100 dB (a cap, so reports stay finite).
pub fn psnr(a: &RgbImage, b: &RgbImage) -> f64 {
    assert_eq!(a.dimensions(), b.dimensions(), "pictures differ in size");
    let n = (a.width() * a.height() * 3).max(1) as f64;
    let mse: f64 = a
        .as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(x, y)| (*x as f64 - *y as f64).powi(2))
        .sum::<f64>()
        / n;
    if mse == 0.0 {
        100.0
    } else {
        (10.0 * (255.0f64 * 255.0 / mse).log10()).min(100.0)
    }
}

/// The share of the squared picture error of `b` against `a` that falls on pixels where `a`
/// equals `plain`, the same picture without the thing compared (previews: the head and
/// background without hair). For hair it is what `b` draws where the ground truth `a` shows
/// none, against the error where `a` has hair (strands off by a little, or missing). 0 for
/// equal pictures.
pub fn error_share_off(a: &RgbImage, b: &RgbImage, plain: &RgbImage) -> f64 {
    assert_eq!(a.dimensions(), b.dimensions(), "pictures differ in size");
    assert_eq!(a.dimensions(), plain.dimensions(), "pictures differ in size");
    let (mut off, mut all) = (0.0f64, 0.0f64);
    for ((p, q), r) in a.pixels().zip(b.pixels()).zip(plain.pixels()) {
        let e: f64 = (0..3).map(|c| (p[c] as f64 - q[c] as f64).powi(2)).sum();
        all += e;
        if p == r {
            off += e;
        }
    }
    if all == 0.0 { 0.0 } else { off / all }
}

/// A map of [`error_share_off`]'s split: white where `b` equals `a`; red where `a` equals
/// `plain` (error off the thing compared: `b` draws what `a` does not have), blue elsewhere (error
/// on it), deeper with the pixel's largest channel difference (full at 85 of 255).
pub fn error_split_map(a: &RgbImage, b: &RgbImage, plain: &RgbImage) -> RgbImage {
    assert_eq!(a.dimensions(), b.dimensions(), "pictures differ in size");
    assert_eq!(a.dimensions(), plain.dimensions(), "pictures differ in size");
    RgbImage::from_fn(a.width(), a.height(), |x, y| {
        let (p, q) = (a.get_pixel(x, y), b.get_pixel(x, y));
        let e = (0..3).map(|c| p[c].abs_diff(q[c]) as u32).max().unwrap_or(0);
        let k = 255 - (3 * e).min(255) as u8;
        if e == 0 {
            image::Rgb([255, 255, 255])
        } else if p == plain.get_pixel(x, y) {
            image::Rgb([255, k, k])
        } else {
            image::Rgb([k, k, 255])
        }
    })
}

fn luma(img: &RgbImage) -> Vec<f64> {
    img.pixels()
        .map(|p| 0.299 * p[0] as f64 + 0.587 * p[1] as f64 + 0.114 * p[2] as f64)
        .collect()
}

/// Mean structural similarity over 8 × 8 windows (step 4) of the luma, with the usual
/// constants C₁ = (0.01·255)², C₂ = (0.03·255)². 1 for identical pictures.
pub fn ssim(a: &RgbImage, b: &RgbImage) -> f64 {
    assert_eq!(a.dimensions(), b.dimensions(), "pictures differ in size");
    let (w, h) = (a.width() as usize, a.height() as usize);
    let (x, y) = (luma(a), luma(b));
    let (c1, c2) = ((0.01f64 * 255.0).powi(2), (0.03f64 * 255.0).powi(2));
    let win = 8usize.min(w).min(h);
    let (mut sum, mut count) = (0.0f64, 0usize);
    let mut oy = 0;
    while oy + win <= h {
        let mut ox = 0;
        while ox + win <= w {
            let (mut mx, mut my) = (0.0, 0.0);
            for j in oy..oy + win {
                for i in ox..ox + win {
                    mx += x[j * w + i];
                    my += y[j * w + i];
                }
            }
            let k = (win * win) as f64;
            mx /= k;
            my /= k;
            let (mut vx, mut vy, mut cxy) = (0.0, 0.0, 0.0);
            for j in oy..oy + win {
                for i in ox..ox + win {
                    let (dx, dy) = (x[j * w + i] - mx, y[j * w + i] - my);
                    vx += dx * dx;
                    vy += dy * dy;
                    cxy += dx * dy;
                }
            }
            vx /= k - 1.0;
            vy /= k - 1.0;
            cxy /= k - 1.0;
            sum += ((2.0 * mx * my + c1) * (2.0 * cxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2));
            count += 1;
            ox += 4;
        }
        oy += 4;
    }
    if count == 0 { 1.0 } else { sum / count as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgb;

    #[test]
    fn identical_noisy_and_known_error() {
        let a = RgbImage::from_fn(32, 32, |x, y| Rgb([(x * 8) as u8, (y * 8) as u8, 100]));
        assert_eq!(psnr(&a, &a), 100.0);
        assert!((ssim(&a, &a) - 1.0).abs() < 1e-12);
        // Every channel off by 5: MSE 25 → 10 log10(255²/25) = 34.15 dB.
        let b = RgbImage::from_fn(32, 32, |x, y| Rgb([(x * 8) as u8 + 5, (y * 8) as u8 + 5, 105]));
        assert!((psnr(&a, &b) - 34.151).abs() < 1e-3);
        // A structurally different picture scores lower than a shifted-brightness one.
        let c = RgbImage::from_fn(32, 32, |x, y| Rgb([(y * 8) as u8, (x * 8) as u8, 100]));
        assert!(ssim(&a, &c) < ssim(&a, &b));
    }

    #[test]
    fn error_share_off_splits_by_where_the_reference_shows_the_thing() {
        let plain = RgbImage::from_pixel(8, 8, Rgb([200, 200, 200]));
        let with = |pts: &[(u32, u32, u8)]| {
            let mut img = plain.clone();
            for &(x, y, v) in pts {
                img.put_pixel(x, y, Rgb([v, v, v]));
            }
            img
        };
        // Reference: two hair pixels. Equal pictures: no error anywhere.
        let a = with(&[(1, 1, 50), (2, 2, 50)]);
        assert_eq!(error_share_off(&a, &a, &plain), 0.0);
        // One hair pixel kept, one moved onto plain background: the missing pixel's error
        // (150² per channel) on hair, the stray one's (150²) off it → half.
        let b = with(&[(1, 1, 50), (5, 5, 50)]);
        assert!((error_share_off(&a, &b, &plain) - 0.5).abs() < 1e-12);
        // Only an extra stray pixel: all the error is off the hair.
        let c = with(&[(1, 1, 50), (2, 2, 50), (6, 1, 100)]);
        assert_eq!(error_share_off(&a, &c, &plain), 1.0);
        // Hair a little off in shade where the reference has hair: none off it.
        let d = with(&[(1, 1, 60), (2, 2, 40)]);
        assert_eq!(error_share_off(&a, &d, &plain), 0.0);
        // Weighted by squared error: a stray pixel 100 off (3·100²) and a hair pixel 50 off
        // (3·50²) → 10000 / 12500.
        let e = with(&[(1, 1, 100), (2, 2, 50), (4, 4, 100)]);
        assert!((error_share_off(&a, &e, &plain) - 0.8).abs() < 1e-12);
        // The map: white where equal, red for the stray pixel, blue for the hair pixel off.
        let m = error_split_map(&a, &e, &plain);
        assert_eq!(m.get_pixel(0, 0).0, [255, 255, 255]);
        assert_eq!(m.get_pixel(4, 4).0, [255, 0, 0]);
        assert_eq!(m.get_pixel(1, 1).0, [105, 105, 255]);
        assert_eq!(m.get_pixel(2, 2).0, [255, 255, 255]);
    }
}
