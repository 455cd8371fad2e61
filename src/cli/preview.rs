//! `tress preview CACHE|GROOM -o OUT.png`: a contact sheet of frames (or one frame), the head
//! drawn where the roots put it; `-o OUT.gif|OUT.apng|frames.####.png` animates every frame
//! (or turns around a groom with `--turntable`).

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use glam::Vec3;

use super::report::{output_file, outputs};
use crate::cache::{is_cache_path, open_source, parse_frame_range};
use crate::error::{Error, Result};
use crate::groom::{ReadOptions, Transform, read_groom};
use crate::motion::fit::root_poses;
use crate::render::View;
use crate::render::anim::{AnimFormat, save_animation};
use crate::render::frame::Coloring;
use crate::render::hair::preview_width_scale;
use crate::render::preview::{
    PreviewOptions, cameras, head_colliders, preview, render_tiles, roots, turntable,
};
use crate::scene::head_from_spec;

#[derive(Debug, Args)]
pub struct PreviewArgs {
    /// A cache (.abc, .tcache, PLY sequence pattern) or a groom file.
    pub input: PathBuf,
    /// The picture to write: a PNG contact sheet, or an animation of every frame in the range
    /// (.gif, .apng, or a PNG sequence pattern such as frames.####.png).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Print what was written as JSON on standard output (`outputs` and a summary).
    #[arg(long)]
    pub json: bool,
    /// Turn the camera once around the hair: over the frames of an animation, or in N frames
    /// around a groom.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "48")]
    pub turntable: Option<usize>,
    /// Frames to show, inclusive [default: all].
    #[arg(long, value_name = "A-B")]
    pub frames: Option<String>,
    /// Contact sheets: show at most this many frames, evenly spaced.
    #[arg(long, default_value_t = 12)]
    pub max_tiles: usize,
    /// Camera: front, back, side or three-quarter.
    #[arg(long, value_enum, default_value_t = View::ThreeQuarter)]
    pub view: View,
    /// Tile size in pixels, WIDTHxHEIGHT.
    #[arg(long, default_value = "480x480")]
    pub size: String,
    /// Tiles per row of the contact sheet.
    #[arg(long, default_value_t = 4)]
    pub columns: usize,
    /// Head: sphere (an ellipsoid fitted to the first frame's roots), none, or a mesh / .sdf
    /// file (with --scale / --up) in the first frame's pose.
    #[arg(long, default_value = "sphere")]
    pub head: String,
    #[command(flatten)]
    pub space: super::InputSpace,
    /// PLY sequences: frames per second.
    #[arg(long, default_value_t = 24.0)]
    pub fps: f64,
}

pub fn run(a: &PreviewArgs) -> Result<()> {
    let (width, height) = crate::render::parse_size(&a.size, "--size")?;
    let started = Instant::now();
    let animated = AnimFormat::of(&a.output).is_some();
    if !animated && a.turntable.is_some() {
        return Err(Error::Invalid(format!(
            "--turntable makes an animation: write it as .gif, .apng or frames.####.png, not {}",
            a.output.display()
        )));
    }
    let mut fps = a.fps;
    // Frames and their labels.
    let (counts, frames, labels, numbers) = if is_cache_path(&a.input)
        || a.input.extension().is_some_and(|e| e.eq_ignore_ascii_case("abc"))
            && open_source(&a.input, None, a.fps).is_ok()
    {
        let mut src = open_source(&a.input, None, a.fps)?;
        let info = src.info().clone();
        fps = info.fps;
        let range = a.frames.as_deref().map(parse_frame_range).transpose()?;
        let pick: Vec<usize> = (0..info.frames.len())
            .filter(|&i| range.is_none_or(|(lo, hi)| (lo..=hi).contains(&info.frames[i])))
            .collect();
        if pick.is_empty() {
            return Err(Error::Invalid(format!(
                "{}: no frames in the range asked for",
                a.input.display()
            )));
        }
        let n = if animated {
            pick.len()
        } else {
            pick.len().min(a.max_tiles.max(1))
        };
        let chosen: Vec<usize> = (0..n)
            .map(|k| pick[if n == 1 { 0 } else { k * (pick.len() - 1) / (n - 1) }])
            .collect();
        let mut frames = Vec::new();
        let mut labels = Vec::new();
        let mut numbers = Vec::new();
        for &i in &chosen {
            frames.push(src.read(i)?.into_iter().map(Vec3::from_array).collect::<Vec<_>>());
            labels.push(format!("frame {}", info.frames[i]));
            numbers.push(info.frames[i].round() as i64);
        }
        (info.topology.counts.clone(), frames, labels, numbers)
    } else {
        let mut g = read_groom(&a.input, &ReadOptions::default())?.groom;
        Transform {
            scale: a.space.scale,
            up: a.space.up,
        }
        .apply(&mut g);
        (
            g.counts().to_vec(),
            vec![g.points().to_vec()],
            vec![String::new()],
            vec![1],
        )
    };
    let head = head_from_spec(
        &a.head,
        &roots(&frames[0], &counts),
        &Transform {
            scale: a.space.scale,
            up: a.space.up,
        },
    )?;
    let colliders = head.map(|h| head_colliders(h, &root_poses(&frames, &counts)));
    let opts = PreviewOptions {
        view: a.view,
        width,
        height,
        columns: a.columns,
        width_scale: None,
    };
    if !animated {
        let img = preview(&frames, &labels, &counts, None, colliders.as_ref(), &opts);
        crate::render::save_png(&a.output, &img)?;
        eprintln!(
            "{} frame(s), {}×{} pixels, in {:.2} s",
            frames.len(),
            img.width(),
            img.height(),
            started.elapsed().as_secs_f64()
        );
        outputs(
            a.json,
            std::slice::from_ref(&a.output),
            serde_json::json!({
                "frames": frames.len(),
                "width": img.width(),
                "height": img.height(),
                "seconds": started.elapsed().as_secs_f64(),
            }),
        );
        return Ok(());
    }
    // An animation: a still groom turns in N frames (drawn from its one frame); a cache plays
    // (turning if asked).
    let shown = match a.turntable {
        Some(n) if frames.len() == 1 => n.max(2),
        _ => frames.len(),
    };
    let cams = match a.turntable {
        Some(_) => turntable(&frames[0], shown, &opts),
        None => cameras(&frames, &opts),
    };
    let mut bar = crate::pipeline::progress::FrameProgress::new("preview", shown as u64, false);
    let tiles: Vec<image::RgbImage> = (0..shown)
        .map(|k| {
            let i = k.min(frames.len() - 1);
            let t = render_tiles(
                &frames[i..i + 1],
                &cams[k..k + 1],
                &labels[i..i + 1],
                &counts,
                None,
                preview_width_scale(counts.len()),
                |_| colliders.as_ref().map(|c| c.at(i as f64)),
                |_| Coloring::Shaded,
            );
            bar.tick(k + 1);
            t.into_iter().next().expect("one tile")
        })
        .collect();
    bar.finish();
    let numbers: Vec<i64> = if shown == numbers.len() {
        numbers
    } else {
        (1..=shown as i64).collect()
    };
    let written = save_animation(&a.output, &tiles, &numbers, fps)?;
    eprintln!(
        "{} frame(s) at {} fps, {}×{} pixels, in {:.2} s",
        tiles.len(),
        fps,
        width,
        height,
        started.elapsed().as_secs_f64()
    );
    if a.json {
        outputs(
            true,
            &written,
            serde_json::json!({
                "frames": tiles.len(),
                "fps": fps,
                "width": width,
                "height": height,
                "seconds": started.elapsed().as_secs_f64(),
            }),
        );
    } else {
        // A PNG sequence's first file names it.
        for p in written.iter().take(1) {
            output_file(p);
        }
    }
    Ok(())
}
