//! A picture being made: linear colour per pixel, and the opaque solids under the hair (their
//! depth, their position, and their colour split into the ambient part and the part the key
//! light adds, so the hair drawn over them can shadow them).

use glam::Vec3;
use image::RgbImage;

use super::solid::PixelHits;

/// Samples per pixel along each axis when the solids are traced.
pub const SUPERSAMPLE: u32 = 3;

/// A solid seen by one sample: depth along the camera, position, normal.
#[derive(Clone, Copy, Debug)]
pub struct Hit {
    pub depth: f32,
    pub point: Vec3,
    pub normal: Vec3,
}

#[derive(Clone)]
pub struct Film {
    pub width: u32,
    pub height: u32,
    /// Linear RGB.
    pub color: Vec<[f32; 3]>,
    /// Depth of the solid at the pixel's centre (infinite where there is none).
    pub depth: Vec<f32>,
    /// Solids: the key light's part of the colour and the point it lights (per pixel).
    pub(crate) lit: Vec<Option<([f32; 3], Vec3)>>,
}

impl Film {
    /// An empty picture of `background`.
    pub fn new(width: u32, height: u32, background: [f32; 3]) -> Film {
        let n = (width * height) as usize;
        Film {
            width,
            height,
            color: vec![background; n],
            depth: vec![f32::INFINITY; n],
            lit: vec![None; n],
        }
    }

    /// Solids from what each pixel's rays hit; `parts(normal)` gives a hit's ambient and lit
    /// colours.
    pub fn with_solids(
        width: u32,
        height: u32,
        background: [f32; 3],
        hits: &[PixelHits],
        parts: impl Fn(Vec3) -> ([f32; 3], [f32; 3]) + Sync,
    ) -> Film {
        use rayon::prelude::*;
        let mut film = Film::new(width, height, background);
        let centre = (SUPERSAMPLE * SUPERSAMPLE / 2) as usize;
        film.color
            .par_iter_mut()
            .zip(film.depth.par_iter_mut())
            .zip(film.lit.par_iter_mut())
            .zip(hits.par_iter())
            .for_each(|(((color, depth), lit), px)| {
                let one = [*match px {
                    PixelHits::One(h) => h,
                    PixelHits::Many(_) => &None,
                }];
                let samples: &[Option<Hit>] = match px {
                    PixelHits::One(_) => &one,
                    PixelHits::Many(m) => m,
                };
                let inv = 1.0 / samples.len() as f32;
                let (mut base, mut light, mut any) = ([0.0f32; 3], [0.0f32; 3], None);
                for (q, h) in samples.iter().enumerate() {
                    match h {
                        Some(h) => {
                            let (a, l) = parts(h.normal);
                            for k in 0..3 {
                                base[k] += a[k] * inv;
                                light[k] += l[k] * inv;
                            }
                            // The centre sample's point, else the first hit's.
                            if any.is_none() || q == centre {
                                any = Some(*h);
                            }
                        }
                        None => {
                            for k in 0..3 {
                                base[k] += background[k] * inv;
                            }
                        }
                    }
                }
                if let Some(h) = any {
                    *color = [base[0] + light[0], base[1] + light[1], base[2] + light[2]];
                    *lit = Some((light, h.point));
                    let c = if samples.len() == 1 { 0 } else { centre };
                    if let Some(c) = samples[c] {
                        *depth = c.depth;
                    }
                }
            });
        film
    }

    /// Darkens the solids by the share of the key light `lit(point)` lets through.
    pub fn shadow_solids(&mut self, lit: impl Fn(Vec3) -> f32 + Sync) {
        use rayon::prelude::*;
        self.color
            .par_iter_mut()
            .zip(self.lit.par_iter())
            .for_each(|(c, l)| {
                if let Some((part, p)) = l {
                    let t = lit(*p);
                    for k in 0..3 {
                        c[k] -= part[k] * (1.0 - t);
                    }
                }
            });
    }

    /// The picture, sRGB-ish gamma applied.
    pub fn resolve(&self) -> RgbImage {
        RgbImage::from_fn(self.width, self.height, |x, y| {
            let c = self.color[(y * self.width + x) as usize];
            image::Rgb(c.map(|v| (v.clamp(0.0, 1.0).powf(1.0 / 2.2) * 255.0 + 0.5) as u8))
        })
    }
}
