//! Animated pictures: APNG (full colour, what reports embed), GIF (256 colours per frame,
//! what every viewer plays) and numbered PNG sequences (`frames.####.png`, the `#` run as in PLY
//! sequences), chosen by the
//! output path. Every file is written atomically.

use std::path::{Path, PathBuf};

use image::RgbImage;

use crate::cache::ply_sequence::Pattern;
use crate::error::{Error, Result};

/// How an animation is written, from its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnimFormat {
    Apng,
    Gif,
    /// One PNG per frame; the path's run of `#` is the frame number, zero-padded.
    Sequence,
}

impl AnimFormat {
    /// `.apng` → APNG, `.gif` → GIF, a `.png` path with `#` → sequence; None otherwise.
    pub fn of(path: &Path) -> Option<AnimFormat> {
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        if name.ends_with(".apng") {
            Some(AnimFormat::Apng)
        } else if name.ends_with(".gif") {
            Some(AnimFormat::Gif)
        } else if name.ends_with(".png") && Pattern::parse(path).is_some() {
            Some(AnimFormat::Sequence)
        } else {
            None
        }
    }
}

/// Writes `frames` (same size) to `path` at `fps`, looping; `numbers` name the frames of a
/// sequence. Returns the files written.
pub fn save_animation(path: &Path, frames: &[RgbImage], numbers: &[i64], fps: f64) -> Result<Vec<PathBuf>> {
    let format = AnimFormat::of(path).ok_or_else(|| {
        Error::Invalid(format!(
            "{}: an animation is written as .apng, .gif or a PNG sequence pattern like frames.####.png",
            path.display()
        ))
    })?;
    let Some(first) = frames.first() else {
        return Err(Error::Invalid(format!("{}: no frames to write", path.display())));
    };
    if frames.iter().any(|f| f.dimensions() != first.dimensions()) {
        return Err(Error::Runtime("animation frames differ in size".into()));
    }
    let fps = if fps.is_finite() && fps > 0.0 { fps } else { 24.0 };
    let encoding = |e: &dyn std::fmt::Display| Error::Runtime(format!("{}: encoding: {e}", path.display()));
    match format {
        AnimFormat::Apng => {
            let mut bytes = Vec::new();
            {
                let mut enc = png::Encoder::new(&mut bytes, first.width(), first.height());
                enc.set_color(png::ColorType::Rgb);
                enc.set_depth(png::BitDepth::Eight);
                enc.set_animated(frames.len() as u32, 0)
                    .map_err(|e| encoding(&e))?;
                // Delay in 1/1000 s (u16), at least 1 ms.
                let ms = (1000.0 / fps).round().clamp(1.0, 65535.0) as u16;
                enc.set_frame_delay(ms, 1000).map_err(|e| encoding(&e))?;
                let mut w = enc.write_header().map_err(|e| encoding(&e))?;
                for f in frames {
                    w.write_image_data(f.as_raw()).map_err(|e| encoding(&e))?;
                }
                w.finish().map_err(|e| encoding(&e))?;
            }
            tress_formats::atomic::write(path, &bytes).map_err(|e| crate::error::output_error(path, e))?;
            Ok(vec![path.to_path_buf()])
        }
        AnimFormat::Gif => {
            use image::codecs::gif::{GifEncoder, Repeat};
            let mut bytes = Vec::new();
            {
                let mut enc = GifEncoder::new_with_speed(&mut bytes, 10);
                enc.set_repeat(Repeat::Infinite).map_err(|e| encoding(&e))?;
                // GIF delays are in 1/100 s.
                let cs = (100.0 / fps).round().clamp(1.0, 65535.0) as u32;
                for f in frames {
                    let rgba = image::DynamicImage::ImageRgb8(f.clone()).into_rgba8();
                    let frame =
                        image::Frame::from_parts(rgba, 0, 0, image::Delay::from_numer_denom_ms(cs * 10, 1));
                    enc.encode_frame(frame).map_err(|e| encoding(&e))?;
                }
            }
            tress_formats::atomic::write(path, &bytes).map_err(|e| crate::error::output_error(path, e))?;
            Ok(vec![path.to_path_buf()])
        }
        AnimFormat::Sequence => {
            let pattern = Pattern::parse(path).expect("AnimFormat::of parsed it");
            let mut out = Vec::new();
            for (i, f) in frames.iter().enumerate() {
                let p = pattern.path(numbers.get(i).copied().unwrap_or(i as i64));
                super::save_png(&p, f)?;
                out.push(p);
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames() -> Vec<RgbImage> {
        (0..3u8)
            .map(|k| RgbImage::from_fn(20, 10, |x, y| image::Rgb([x as u8 * 10, y as u8 * 20, k * 100])))
            .collect()
    }

    #[test]
    fn apng_and_gif_decode_to_their_frames() {
        let dir = std::env::temp_dir().join(format!("tress-anim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = frames();
        // APNG: the png crate's decoder sees an animation of 3 frames, each lossless.
        let apng = dir.join("a.apng");
        save_animation(&apng, &f, &[], 12.0).unwrap();
        let mut dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&apng).unwrap()))
            .read_info()
            .unwrap();
        assert_eq!(dec.info().animation_control().unwrap().num_frames, 3);
        let mut buf = vec![0; dec.output_buffer_size().unwrap()];
        for want in &f {
            dec.next_frame(&mut buf).unwrap();
            assert_eq!(&buf[..want.as_raw().len()], want.as_raw().as_slice());
        }
        // GIF: image's decoder sees 3 frames of the right size, colours within quantization.
        let gif = dir.join("a.gif");
        save_animation(&gif, &f, &[], 12.0).unwrap();
        use image::AnimationDecoder;
        let dec =
            image::codecs::gif::GifDecoder::new(std::io::BufReader::new(std::fs::File::open(&gif).unwrap()))
                .unwrap();
        let got = dec.into_frames().collect_frames().unwrap();
        assert_eq!(got.len(), 3);
        let px = got[2].buffer().get_pixel(5, 5);
        let want = f[2].get_pixel(5, 5);
        assert!(
            (0..3).all(|c| (px[c] as i32 - want[c] as i32).abs() < 24),
            "{px:?} vs {want:?}"
        );
        // A sequence: numbered files.
        let seq = save_animation(&dir.join("f.####.png"), &f, &[1001, 1002, 1003], 24.0).unwrap();
        assert_eq!(seq[2].file_name().unwrap(), "f.1003.png");
        assert!(seq.iter().all(|p| p.exists()));
        // Anything else is refused with the path named.
        let e = save_animation(&dir.join("x.jpg"), &f, &[], 24.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.jpg"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
