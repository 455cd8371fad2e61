//! One frame: colliders, then strands over them, depth-tested, shaded, labelled.

use glam::Vec3;
use image::RgbImage;

use super::camera::Camera;
use super::canvas::Canvas;
use super::font::draw_text;
use super::heat::heat_color;
use super::shade::Lighting;
use super::solid::{depth_range, draw_colliders};
use crate::collide::ColliderFrame;

/// How strands are coloured.
#[derive(Clone, Copy, Debug)]
pub enum Coloring<'a> {
    /// Kajiya–Kay shading of the lighting's hair colour.
    Shaded,
    /// A value per vertex mapped through the heat scale, 0 at `range.0`, hot at `range.1`.
    Heat { values: &'a [f32], range: (f32, f32) },
}

/// What to draw besides the strands.
#[derive(Clone, Copy, Debug)]
pub struct FrameStyle<'a> {
    pub lighting: Lighting,
    pub coloring: Coloring<'a>,
    /// Text in the top-left corner.
    pub label: Option<&'a str>,
}

impl Default for FrameStyle<'_> {
    fn default() -> Self {
        FrameStyle {
            lighting: Lighting::default(),
            coloring: Coloring::Shaded,
            label: None,
        }
    }
}

/// The colliders drawn alone (the expensive part of a frame: sphere tracing), to draw several
/// versions of a frame's hair over; `depth_points` bound the depths searched.
pub fn background(
    camera: &Camera,
    colliders: Option<&ColliderFrame>,
    depth_points: &[Vec3],
    lighting: &Lighting,
) -> Canvas {
    let mut canvas = Canvas::new(camera.width, camera.height, lighting.background);
    if let Some(c) = colliders {
        let (near, far) = depth_range(
            camera,
            depth_points,
            0.5 * camera.width.max(camera.height) as f32 / camera.scale,
        );
        draw_colliders(&mut canvas, camera, c, lighting, near, far);
    }
    canvas
}

/// Draws strands (`points`, `counts` vertices each) into `canvas`.
pub fn draw_strands(
    canvas: &mut Canvas,
    points: &[Vec3],
    counts: &[u32],
    camera: &Camera,
    style: &FrameStyle,
) {
    let l = &style.lighting;
    let view = -camera.forward;
    let mut o = 0usize;
    for &n in counts {
        let n = n as usize;
        let s = &points[o..o + n];
        let colour = |i: usize| -> [f32; 3] {
            match style.coloring {
                Coloring::Shaded => {
                    let t = (s[(i + 1).min(n - 1)] - s[i.saturating_sub(1)]).normalize_or(Vec3::Y);
                    l.hair(t, view, l.hair)
                }
                Coloring::Heat { values, range } => {
                    heat_color(((values[o + i] - range.0) / (range.1 - range.0).max(1e-12)).clamp(0.0, 1.0))
                }
            }
        };
        let mut prev = (camera.project(s[0]), colour(0));
        for (i, p) in s.iter().enumerate().skip(1) {
            let cur = (camera.project(*p), colour(i));
            canvas.line(prev.0, cur.0, prev.1, cur.1);
            prev = cur;
        }
        o += n;
    }
}

/// Writes `text` in the picture's top-left corner.
pub fn label(img: &mut RgbImage, text: &str) {
    let scale = (img.height() / 200).max(1);
    draw_text(img, 4 * scale, 4 * scale, text, scale, [40, 40, 40]);
}

/// Renders strands (`points`, `counts` vertices each) and optionally colliders.
pub fn render_frame(
    points: &[Vec3],
    counts: &[u32],
    colliders: Option<&ColliderFrame>,
    camera: &Camera,
    style: &FrameStyle,
) -> RgbImage {
    let mut canvas = background(camera, colliders, points, &style.lighting);
    draw_strands(&mut canvas, points, counts, camera, style);
    let mut img = canvas.resolve();
    if let Some(text) = style.label {
        label(&mut img, text);
    }
    img
}
