//! `tress preview CACHE|GROOM -o OUT.png`: a contact sheet of frames (or one frame), the head
//! drawn where the roots put it.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use glam::Vec3;

use super::report::output_file;
use crate::cache::{is_cache_path, open_source, parse_frame_range};
use crate::error::{Error, Result};
use crate::groom::{ReadOptions, Transform, read_groom};
use crate::motion::fit::root_poses;
use crate::render::View;
use crate::render::preview::{PreviewOptions, head_colliders, preview, roots};
use crate::scene::head_from_spec;

#[derive(Debug, Args)]
pub struct PreviewArgs {
    /// A cache (.abc, .tcache, PLY sequence pattern) or a groom file.
    pub input: PathBuf,
    /// The PNG image to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Frames to show, inclusive [default: all].
    #[arg(long, value_name = "A-B")]
    pub frames: Option<String>,
    /// Show at most this many frames, evenly spaced.
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
    // Frames and their labels.
    let (counts, frames, labels) = if is_cache_path(&a.input)
        || a.input.extension().is_some_and(|e| e.eq_ignore_ascii_case("abc"))
            && open_source(&a.input, None, a.fps).is_ok()
    {
        let mut src = open_source(&a.input, None, a.fps)?;
        let info = src.info().clone();
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
        let n = pick.len().min(a.max_tiles.max(1));
        let chosen: Vec<usize> = (0..n)
            .map(|k| pick[if n == 1 { 0 } else { k * (pick.len() - 1) / (n - 1) }])
            .collect();
        let mut frames = Vec::new();
        let mut labels = Vec::new();
        for &i in &chosen {
            frames.push(src.read(i)?.into_iter().map(Vec3::from_array).collect::<Vec<_>>());
            labels.push(format!("frame {}", info.frames[i]));
        }
        (info.topology.counts.clone(), frames, labels)
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
    };
    let img = preview(&frames, &labels, &counts, colliders.as_ref(), &opts);
    crate::render::save_png(&a.output, &img)?;
    eprintln!(
        "{} frame(s), {}×{} pixels, in {:.2} s",
        frames.len(),
        img.width(),
        img.height(),
        started.elapsed().as_secs_f64()
    );
    output_file(&a.output);
    Ok(())
}
