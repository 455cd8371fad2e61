//! Previews of a strand cache: frames rendered with the head placed where the roots say it is,
//! on a contact sheet. The head comes from the caller (a job's colliders) or is fitted to the
//! first frame's roots and carried through later frames by a rigid fit of the roots (hair
//! roots ride on the scalp, so their rigid motion is the head's).

use glam::Vec3;
use image::RgbImage;

use super::camera::{Camera, View};
use super::frame::{FrameStyle, render_frame};
use super::hair::preview_width_scale;
use super::sheet::contact_sheet;
use crate::collide::{BodyParams, Colliders, HeadShape, body};
use crate::motion::{HeadTrack, Pose};

/// Settings of a preview.
#[derive(Clone, Debug)]
pub struct PreviewOptions {
    pub view: View,
    /// Size of each tile.
    pub width: u32,
    pub height: u32,
    pub columns: usize,
    /// Strand widths drawn this many times wider; none: [`preview_width_scale`] of the strand
    /// count.
    pub width_scale: Option<f32>,
}

impl Default for PreviewOptions {
    fn default() -> Self {
        PreviewOptions {
            view: View::ThreeQuarter,
            width: 480,
            height: 480,
            columns: 4,
            width_scale: None,
        }
    }
}

pub use crate::groom::strand_roots as roots;

/// Colliders of `head` following `poses` (one per frame, keyed by frame index).
pub fn head_colliders(head: HeadShape, poses: &[Pose]) -> Colliders {
    let keys: Vec<(f64, Pose)> = poses.iter().enumerate().map(|(i, p)| (i as f64, *p)).collect();
    let track = HeadTrack::new(keys).unwrap_or_else(|_| HeadTrack::still(Pose::IDENTITY));
    let head_only = BodyParams {
        neck_radius: 0.0,
        shoulder_radius: 0.0,
        ..BodyParams::default()
    };
    body::colliders(head, &head_only, track)
}

/// One camera per frame: the scale that frames the first of `reference`, following the hair
/// when it travels further than a quarter of the picture (a walk).
pub fn cameras(reference: &[Vec<Vec3>], opts: &PreviewOptions) -> Vec<Camera> {
    let Some(first) = reference.first() else {
        return Vec::new();
    };
    let base = Camera::fit(opts.view, first, opts.width, opts.height);
    let centres: Vec<Vec3> = reference.iter().map(|f| bbox_center(f)).collect();
    let travel = centres
        .iter()
        .map(|c| c.distance(centres[0]))
        .fold(0.0f32, f32::max);
    let follow = travel * base.scale > 0.25 * opts.width.min(opts.height) as f32;
    centres
        .iter()
        .map(|c| {
            if follow {
                Camera { center: *c, ..base }
            } else {
                base
            }
        })
        .collect()
}

/// Renders each frame with its camera; `colliders(i)` gives the colliders of frame i.
#[allow(clippy::too_many_arguments)]
pub fn render_tiles<'c>(
    frames: &[Vec<Vec3>],
    cameras: &[Camera],
    labels: &[String],
    counts: &[u32],
    widths: Option<&[f32]>,
    width_scale: f32,
    colliders: impl Fn(usize) -> Option<crate::collide::ColliderFrame<'c>>,
    coloring: impl Fn(usize) -> super::frame::Coloring<'c>,
) -> Vec<RgbImage> {
    frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let frame = colliders(i);
            let style = FrameStyle {
                label: labels.get(i).map(String::as_str),
                coloring: coloring(i),
                widths,
                width_scale,
                ..FrameStyle::default()
            };
            render_frame(f, counts, frame.as_ref(), &cameras[i], &style)
        })
        .collect()
}

/// Renders `frames` (labelled) with optional colliders (queried at the frame's index) on a
/// contact sheet, with [`cameras`].
pub fn preview(
    frames: &[Vec<Vec3>],
    labels: &[String],
    counts: &[u32],
    widths: Option<&[f32]>,
    colliders: Option<&Colliders>,
    opts: &PreviewOptions,
) -> RgbImage {
    if frames.is_empty() {
        return RgbImage::new(1, 1);
    }
    let cams = cameras(frames, opts);
    let tiles = render_tiles(
        frames,
        &cams,
        labels,
        counts,
        widths,
        opts.width_scale
            .unwrap_or_else(|| preview_width_scale(counts.len())),
        |i| colliders.map(|c| c.at(i as f64)),
        |_| super::frame::Coloring::Shaded,
    );
    contact_sheet(&tiles, opts.columns)
}

/// `n` cameras turning once around the vertical axis through the middle of `points`, from
/// `opts.view`'s side, all at one scale (the closest that frames every turn).
pub fn turntable(points: &[Vec3], n: usize, opts: &PreviewOptions) -> Vec<Camera> {
    let eye = opts.view.eye();
    let cams: Vec<Camera> = (0..n.max(1))
        .map(|k| {
            let turn = glam::Quat::from_rotation_y(std::f32::consts::TAU * k as f32 / n.max(1) as f32);
            Camera::fit_eye(turn * eye, points, opts.width, opts.height)
        })
        .collect();
    let scale = cams.iter().map(|c| c.scale).fold(f32::INFINITY, f32::min);
    let center = bbox_center(points);
    cams.into_iter().map(|c| Camera { scale, center, ..c }).collect()
}

fn bbox_center(points: &[Vec3]) -> Vec3 {
    let (lo, hi) = points
        .iter()
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(l, h), p| {
            (l.min(*p), h.max(*p))
        });
    if lo.is_finite() {
        0.5 * (lo + hi)
    } else {
        Vec3::ZERO
    }
}

#[cfg(test)]
mod tests {
    use glam::DVec3;

    use super::*;
    use crate::groom::{GroomParams, generate};
    use crate::motion::fit::root_poses;

    #[test]
    fn root_fits_recover_a_head_turn_and_the_picture_shows_hair_and_head() {
        let p = GroomParams {
            strands: 300,
            ..GroomParams::default()
        };
        let g = generate(&p).unwrap();
        let turn = Pose::new(glam::DQuat::from_rotation_y(0.4), DVec3::new(1.0, 0.0, 0.0));
        let moved: Vec<Vec3> = g.points().iter().map(|q| turn.apply_f32(*q)).collect();
        let frames = vec![g.points().to_vec(), moved];
        let poses = root_poses(&frames, g.counts());
        assert!(poses[0].angle_deg() < 1e-3);
        assert!((poses[1].rotation.dot(turn.rotation).abs() - 1.0).abs() < 1e-6);
        let colliders = head_colliders(HeadShape::Procedural(p.scalp), &poses);
        let opts = PreviewOptions {
            width: 120,
            height: 120,
            columns: 2,
            ..Default::default()
        };
        let img = preview(
            &frames,
            &["A".into(), "B".into()],
            g.counts(),
            None,
            Some(&colliders),
            &opts,
        );
        assert_eq!((img.width(), img.height()), (242, 120));
        // Skin, hair and background all appear in the first tile.
        let bg = image::Rgb([246u8, 246, 248]);
        let px: Vec<_> = (0..120)
            .flat_map(|y| (0..120).map(move |x| (x, y)))
            .map(|(x, y)| *img.get_pixel(x, y))
            .collect();
        let skin = px
            .iter()
            .filter(|c| c[0] > 150 && c[0] < 245 && c[2] < c[0] - 30)
            .count();
        let hair = px.iter().filter(|c| c[0] < 150 && c[2] < c[0]).count();
        assert!(skin > 100 && hair > 100, "skin {skin} hair {hair}");
        assert!(
            px.iter()
                .filter(|c| (c[0] as i32 - bg[0] as i32).abs() < 4)
                .count()
                > 1000
        );
    }
}
