//! One frame: colliders, then strands over them as shaded, shadowed hair ribbons, labelled.

use glam::Vec3;
use image::RgbImage;

use super::camera::Camera;
use super::film::Film;
use super::font::draw_text;
use super::hair::{draw_hair, vertex_widths};
use super::heat::heat_color;
use super::shade::Lighting;
use super::solid::{depth_range, trace_colliders};
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
    /// Per-vertex widths (scene units); none: [`super::hair::DEFAULT_WIDTH`].
    pub widths: Option<&'a [f32]>,
    /// Widths are drawn this many times wider ([`super::hair::preview_width_scale`]).
    pub width_scale: f32,
}

impl Default for FrameStyle<'_> {
    fn default() -> Self {
        FrameStyle {
            lighting: Lighting::default(),
            coloring: Coloring::Shaded,
            label: None,
            widths: None,
            width_scale: 1.0,
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
) -> Film {
    let Some(c) = colliders else {
        return Film::new(camera.width, camera.height, lighting.background);
    };
    let (near, far) = depth_range(
        camera,
        depth_points,
        0.5 * camera.width.max(camera.height) as f32 / camera.scale,
    );
    let hits = trace_colliders(camera, c, near, far);
    Film::with_solids(camera.width, camera.height, lighting.background, &hits, |n| {
        lighting.solid_parts(n)
    })
}

/// Draws strands (`points`, `counts` vertices each) over `film`.
pub fn draw_strands(film: &mut Film, points: &[Vec3], counts: &[u32], camera: &Camera, style: &FrameStyle) {
    let widths = vertex_widths(points.len(), style.widths, style.width_scale);
    match style.coloring {
        Coloring::Shaded => draw_hair(film, points, counts, &widths, None, camera, &style.lighting),
        Coloring::Heat { values, range } => {
            let colors: Vec<[f32; 3]> = values
                .iter()
                .map(|v| heat_color(((v - range.0) / (range.1 - range.0).max(1e-12)).clamp(0.0, 1.0)))
                .collect();
            draw_hair(
                film,
                points,
                counts,
                &widths,
                Some(&colors),
                camera,
                &style.lighting,
            )
        }
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
    let mut film = background(camera, colliders, points, &style.lighting);
    draw_strands(&mut film, points, counts, camera, style);
    let mut img = film.resolve();
    if let Some(text) = style.label {
        label(&mut img, text);
    }
    img
}
