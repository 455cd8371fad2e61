//! `preview`: contact sheets of the first method's result and of the ground truth, and a
//! side-by-side sheet (ground truth | each method | the first method's error), with every
//! method's preview PSNR / SSIM against the ground truth's pictures (same camera).

use glam::Vec3;
use image::RgbImage;
use serde::{Deserialize, Serialize};
use tress_formats::tcache::TcacheReader;

use super::scoring::{scoring_inputs, scoring_upstream};
use super::{prepare, simulate, upsample};
use crate::error::{Error, Result};
use crate::metrics::{error_share_off, error_split_map, psnr, ssim};
use crate::pipeline::engine::{Artefact, Chunk, Ctx, Info, Inputs, Stage};
use crate::pipeline::job::{Job, PreviewSpec};
use crate::render::frame::Coloring;
use crate::render::frame::{FrameStyle, background, draw_strands, label};
use crate::render::heat::legend;
use crate::render::preview::{PreviewOptions, cameras};
use crate::render::sheet::contact_sheet;

pub const NAME: &str = "preview";
/// The first row's contact sheet, the ground truth's, the side-by-side comparison, where the
/// picture error falls, and the figures.
pub const SHEET: Artefact = Artefact::new(NAME, "preview.png");
pub const SHEET_GT: Artefact = Artefact::new(NAME, "preview_gt.png");
pub const COMPARE: Artefact = Artefact::new(NAME, "compare.png");
pub const WHERE: Artefact = Artefact::new(NAME, "where.png");
/// Every picked frame: ground truth | first method | its error, animated.
pub const ANIMATION: Artefact = Artefact::new(NAME, "compare.apng");
pub const FIGURES: Artefact = Artefact::new(NAME, "preview.json");

pub struct Preview;

#[derive(Serialize)]
struct Key<'a> {
    preview: &'a PreviewSpec,
}

impl Stage for Preview {
    fn info(&self) -> Info {
        // 2: upsample 2's results.
        Info::new(NAME, "Contact sheets and side-by-side comparisons").version(2)
    }

    fn upstream(&self, job: &Job) -> Vec<&'static str> {
        scoring_upstream(job)
    }

    fn inputs(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Inputs> {
        scoring_inputs(
            cx,
            Key {
                preview: &cx.job.preview,
            },
        )
    }

    fn run(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Vec<String>> {
        preview(cx)
    }
}

/// Picture similarity of one frame's previews.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct FrameImage {
    pub frame: f64,
    pub psnr: f64,
    pub ssim: f64,
    /// Share of the squared picture error on pixels where the ground truth shows no hair
    /// ([`crate::metrics::error_share_off`]): strands drawn where there are none.
    #[serde(default)]
    pub off_hair: f64,
}

/// One method row's pictures against the ground truth's.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RowImages {
    pub key: String,
    pub frames: Vec<FrameImage>,
    pub mean_psnr: f64,
    pub mean_ssim: f64,
    /// Mean over the frames of [`FrameImage::off_hair`].
    #[serde(default)]
    pub mean_off_hair: f64,
}

/// What `preview.json` holds: the first row's figures at the top, every row in `rows`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PreviewReport {
    pub frames: Vec<FrameImage>,
    pub mean_psnr: f64,
    pub mean_ssim: f64,
    /// Top of the error colour scale (cm).
    pub error_scale: f64,
    pub rows: Vec<RowImages>,
}

/// Rows shown side by side on the comparison sheet.
const COMPARED_ROWS: usize = 3;

fn save_png(cx: &Ctx, a: Artefact, img: &RgbImage) -> Result<String> {
    crate::render::save_png(&cx.path(a), img)?;
    Ok(a.path.to_string())
}

/// Frames picked for the sheets: every `every`-th from the first (and the last).
fn picked(first: i64, last: i64, every: usize) -> Vec<i64> {
    let mut v: Vec<i64> = (first..=last).step_by(every.max(1)).collect();
    if v.last() != Some(&last) {
        v.push(last);
    }
    v
}

fn preview(cx: &Ctx) -> Result<Vec<String>> {
    let job = cx.job;
    let (width, height) = crate::render::parse_size(&job.preview.size, "preview.size")?;
    let opts = PreviewOptions {
        view: job.preview.view,
        width,
        height,
        columns: job.preview.columns.max(1),
        width_scale: None,
    };
    let scene = prepare::scene(cx)?;
    let counts = scene.groom.groom.counts().to_vec();
    let widths = scene.groom.groom.vertex_widths();
    let colliders = &scene.colliders;
    let frames = picked(job.first, job.last, job.preview.every);
    let (gt, rows) = frames_of(cx, &frames)?;
    let method = &rows[0];
    let cams = cameras(&gt, &opts);
    let labels: Vec<String> = job.rows.iter().map(|r| r.key.clone()).collect();
    // Compared side by side: a few evenly spaced frames.
    let chosen = compared(frames.len(), job.preview.compare_frames);
    let errors: Vec<Vec<f32>> = chosen
        .iter()
        .map(|&i| {
            gt[i]
                .iter()
                .zip(&method[i])
                .map(|(a, b)| a.distance(*b))
                .collect()
        })
        .collect();
    let scale = error_scale(&errors);
    let style = FrameStyle {
        widths: widths.as_deref(),
        width_scale: crate::render::hair::preview_width_scale(counts.len()),
        ..FrameStyle::default()
    };
    let (mut gt_tiles, mut m_tiles, mut compare) = (Vec::new(), Vec::new(), Vec::new());
    let mut where_tiles = Vec::new();
    let mut animation = Vec::new();
    let mut images: Vec<Vec<FrameImage>> = vec![Vec::new(); rows.len()];
    let shown = rows.len().min(COMPARED_ROWS);
    for (i, &f) in frames.iter().enumerate() {
        // The head and body once per frame (sphere tracing is the costly part), the hair over it.
        let at = colliders.at(f as f64 / job.fps);
        let bg = background(&cams[i], Some(&at), &gt[i], &style.lighting);
        let over = |pts: &[Vec3], st: &FrameStyle| {
            let mut c = bg.clone();
            draw_strands(&mut c, pts, &counts, &cams[i], st);
            c.resolve()
        };
        let g = over(&gt[i], &style);
        let plain = bg.resolve();
        let mut pictures = Vec::with_capacity(rows.len());
        for (r, row) in rows.iter().enumerate() {
            let m = over(&row[i], &style);
            // Compared before labelling (the labels differ).
            images[r].push(FrameImage {
                frame: f as f64,
                psnr: psnr(&g, &m),
                ssim: ssim(&g, &m),
                off_hair: error_share_off(&g, &m, &plain),
            });
            pictures.push(m);
        }
        let labelled = |mut img: image::RgbImage, text: String| {
            label(&mut img, &text);
            img
        };
        if chosen.contains(&i) {
            for (m, l) in pictures.iter().zip(&labels).take(shown) {
                where_tiles.push(labelled(
                    error_split_map(&g, m, &plain),
                    format!("{l}: red off the hair, blue on it, frame {f}"),
                ));
            }
        }
        let g = labelled(g, format!("ground truth, frame {f}"));
        let pictures: Vec<RgbImage> = pictures
            .into_iter()
            .zip(&labels)
            .map(|(m, l)| labelled(m, format!("{l}, frame {f}")))
            .collect();
        let m = pictures[0].clone();
        // The first method's error at this frame, as heat on its strands.
        let frame_errors: Vec<f32>;
        let values = match chosen.iter().position(|&x| x == i) {
            Some(c) => &errors[c],
            None => {
                frame_errors = gt[i]
                    .iter()
                    .zip(&method[i])
                    .map(|(a, b)| a.distance(*b))
                    .collect();
                &frame_errors
            }
        };
        let heat_style = FrameStyle {
            coloring: Coloring::Heat {
                values,
                range: (0.0, scale),
            },
            ..style
        };
        let mut heat = labelled(
            over(&method[i], &heat_style),
            format!("{} error, frame {f}", labels[0]),
        );
        legend(&mut heat, scale, "cm");
        animation.push(contact_sheet(&[g.clone(), m.clone(), heat.clone()], 3));
        if chosen.contains(&i) {
            compare.push(g.clone());
            compare.extend(pictures[..shown].iter().cloned());
            compare.push(heat);
        }
        gt_tiles.push(g);
        m_tiles.push(m);
    }
    let mut out = vec![
        save_png(cx, SHEET, &contact_sheet(&m_tiles, opts.columns))?,
        save_png(cx, SHEET_GT, &contact_sheet(&gt_tiles, opts.columns))?,
        save_png(cx, COMPARE, &contact_sheet(&compare, shown + 2))?,
        save_png(cx, WHERE, &contact_sheet(&where_tiles, shown))?,
    ];
    // Played at the job's rate over the frames picked.
    let fps = job.fps / job.preview.every.max(1) as f64;
    crate::render::anim::save_animation(&cx.path(ANIMATION), &animation, &frames, fps)?;
    out.push(ANIMATION.path.to_string());
    out.push(cx.write_json(FIGURES.path, &figures(images, &job.rows, scale))?);
    Ok(out)
}

/// The ground truth and every row at `frames`.
#[allow(clippy::type_complexity)]
fn frames_of(cx: &Ctx, frames: &[i64]) -> Result<(Vec<Vec<Vec3>>, Vec<Vec<Vec<Vec3>>>)> {
    let mut gt = Vec::new();
    let mut r = TcacheReader::open(cx.path(simulate::GT))?;
    for &f in frames {
        let i = r
            .find(f as f64)
            .ok_or_else(|| Error::Runtime(format!("gt.tcache has no frame {f}")))?;
        gt.push(r.frame(i)?.into_iter().map(Vec3::from_array).collect::<Vec<_>>());
    }
    let rows: Vec<Vec<Vec<Vec3>>> = cx
        .job
        .rows
        .iter()
        .map(|row| {
            Ok(upsample::frames(cx, row, frames)?
                .into_iter()
                .map(|p| p.into_iter().map(Vec3::from_array).collect())
                .collect())
        })
        .collect::<Result<_>>()?;
    Ok((gt, rows))
}

/// `k` of `n` picked frames compared side by side, evenly spaced (indices).
fn compared(n: usize, k: usize) -> Vec<usize> {
    let k = k.clamp(1, n);
    (0..k)
        .map(|c| if k == 1 { 0 } else { c * (n - 1) / (k - 1) })
        .collect()
}

/// The top of the error colour scale: the 99th percentile of the compared frames' errors.
fn error_scale(errors: &[Vec<f32>]) -> f32 {
    let mut all: Vec<f32> = errors.iter().flatten().copied().collect();
    all.sort_by(f32::total_cmp);
    all.get(all.len() * 99 / 100).copied().unwrap_or(1.0).max(1e-3)
}

/// `preview.json`: every row's pictures against the ground truth's, the first row's at the
/// top.
fn figures(
    images: Vec<Vec<FrameImage>>,
    rows: &[crate::pipeline::job::MethodRow],
    scale: f32,
) -> PreviewReport {
    let per_row: Vec<RowImages> = images
        .into_iter()
        .zip(rows)
        .map(|(frames, row)| {
            let n = frames.len().max(1) as f64;
            RowImages {
                key: row.key.clone(),
                mean_psnr: frames.iter().map(|f| f.psnr).sum::<f64>() / n,
                mean_ssim: frames.iter().map(|f| f.ssim).sum::<f64>() / n,
                mean_off_hair: frames.iter().map(|f| f.off_hair).sum::<f64>() / n,
                frames,
            }
        })
        .collect();
    PreviewReport {
        mean_psnr: per_row[0].mean_psnr,
        mean_ssim: per_row[0].mean_ssim,
        frames: per_row[0].frames.clone(),
        error_scale: scale as f64,
        rows: per_row,
    }
}
