//! `tress motion preview`: print a head track (from a preset, Alembic, glTF or a track file).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use glam::EulerRot;
use serde_json::json;

use super::report::num;
use crate::error::{Error, Result};
use crate::motion::sources::MotionSource;

#[derive(Debug, Subcommand)]
pub enum MotionCommand {
    /// Print a head track: duration, peak speeds, and poses per frame.
    Preview(PreviewArgs),
}

/// Where head motion comes from (shared by `motion preview` and `simulate`).
#[derive(Debug, Args, Default, Clone)]
pub struct MotionArgs {
    /// A motion preset (gentle, walk, turn, violent, rom) or a TOML file of one.
    #[arg(
        long = "motion",
        alias = "preset",
        group = "source",
        value_name = "PRESET|FILE"
    )]
    pub preset: Option<String>,
    /// A glTF / GLB file; with --node, the node (joint) whose world transform is the head.
    #[arg(long, group = "source")]
    pub gltf: Option<PathBuf>,
    /// The glTF node (joint) that carries the head [default: the node named like a head or
    /// neck joint; without one, the error lists the candidates].
    #[arg(long, requires = "gltf")]
    pub node: Option<String>,
    /// A glTF animation by name (default: the first).
    #[arg(long, requires = "gltf")]
    pub animation: Option<String>,
    /// An Alembic file: an animated transform (--xform PATH) or a rigidly moving mesh (--mesh PATH).
    #[arg(long, group = "source")]
    pub abc: Option<PathBuf>,
    /// The Alembic transform (object path) whose animation is the head.
    #[arg(long, requires = "abc", conflicts_with = "mesh")]
    pub xform: Option<String>,
    /// The Alembic polygon mesh (object path) that moves rigidly with the head.
    #[arg(long, requires = "abc")]
    pub mesh: Option<String>,
    /// A CSV or JSON track file.
    #[arg(long, group = "source")]
    pub track: Option<PathBuf>,
}

impl MotionArgs {
    pub fn source(&self) -> MotionSource {
        if let Some(p) = &self.preset {
            MotionSource::Preset {
                name: p.clone(),
                seed: None,
            }
        } else if let Some(f) = &self.gltf {
            MotionSource::Gltf {
                file: f.clone(),
                node: self.node.clone(),
                animation: self.animation.clone(),
            }
        } else if let Some(f) = &self.abc {
            MotionSource::Abc {
                file: f.clone(),
                xform: self.xform.clone(),
                mesh: self.mesh.clone(),
            }
        } else if let Some(f) = &self.track {
            MotionSource::Track(f.clone())
        } else {
            MotionSource::Still
        }
    }

    pub fn is_given(&self) -> bool {
        self.source() != MotionSource::Still
    }
}

#[derive(Debug, Args)]
pub struct PreviewArgs {
    #[command(flatten)]
    pub motion: MotionArgs,
    /// Frames per second for sampling and frame numbers.
    #[arg(long, default_value_t = 24.0)]
    pub fps: f64,
    /// Print every frame (default: at most 40 evenly spaced lines).
    #[arg(long)]
    pub all: bool,
    /// Print the result as JSON on standard output (errors too: {"error", "exit_code"}).
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: &MotionCommand) -> Result<()> {
    let MotionCommand::Preview(a) = cmd;
    if a.fps.is_nan() || a.fps <= 0.0 {
        return Err(Error::Invalid("--fps must be positive".into()));
    }
    let (track, report) = a.motion.source().load(a.fps)?;
    let (t0, t1) = track.span();
    let first = (t0 * a.fps).round() as i64;
    let last = (t1 * a.fps).round() as i64;
    let (lin, ang) = track.peak_speeds();
    let frames: Vec<i64> = (first..=last).collect();
    let shown: Vec<i64> = if a.all || frames.len() <= 40 {
        frames.clone()
    } else {
        (0..40).map(|i| frames[i * (frames.len() - 1) / 39]).collect()
    };
    let row = |f: i64| {
        let t = f as f64 / a.fps;
        let p = track.at(t);
        let (y, x, z) = p.rotation.to_euler(EulerRot::YXZ);
        (f, t, p, [y.to_degrees(), x.to_degrees(), z.to_degrees()])
    };
    if a.json {
        let doc = json!({
            "source": report.source,
            "fps": a.fps,
            "first_frame": first,
            "last_frame": last,
            "duration": t1 - t0,
            "peak_linear_speed": lin,
            "peak_angular_speed_deg": ang,
            "fit_rms": report.fit_rms,
            "fit_max": report.fit_max,
            "scale_deviation": report.scale_deviation,
            "phases": report.phases.iter().map(|(n, s, e)| json!({"name": n, "start": s, "end": e,
                "first_frame": (s * a.fps).round() as i64, "last_frame": (e * a.fps).round() as i64}))
                .collect::<Vec<_>>(),
            "frames": shown.iter().map(|&f| {
                let (f, t, p, e) = row(f);
                json!({"frame": f, "time": t, "translation": p.translation.to_array(),
                       "rotation": p.rotation.to_array(), "yaw_pitch_roll_deg": e})
            }).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
        return Ok(());
    }
    println!("source       {}", report.source);
    println!(
        "frames       {first}-{last} at {} fps ({} s)",
        num(a.fps),
        num(t1 - t0)
    );
    println!("peak speed   {} units/s, {} deg/s", num(lin), num(ang));
    if let (Some(rms), Some(max)) = (report.fit_rms, report.fit_max) {
        println!(
            "rigid fit    residual RMS {} max {} (units): {}",
            num(rms),
            num(max),
            if max < 1e-3 { "rigid" } else { "NOT rigid" }
        );
    }
    for (name, s, e) in &report.phases {
        println!(
            "phase        {:<14} frames {}-{} ({} s)",
            name,
            (s * a.fps).round() as i64,
            (e * a.fps).round() as i64,
            num(e - s)
        );
    }
    if report.scale_deviation > 1e-4 {
        println!(
            "note         the transform is scaled by up to {}; tress uses its rotation and translation",
            num(1.0 + report.scale_deviation)
        );
    }
    println!(
        "{:>7} {:>8} {:>9} {:>9} {:>9} {:>7} {:>7} {:>7}",
        "frame", "t (s)", "tx", "ty", "tz", "yaw", "pitch", "roll"
    );
    for f in shown {
        let (f, t, p, e) = row(f);
        let tr = p.translation;
        println!(
            "{f:>7} {t:>8.3} {:>9.3} {:>9.3} {:>9.3} {:>7.1} {:>7.1} {:>7.1}",
            tr.x, tr.y, tr.z, e[0], e[1], e[2]
        );
    }
    Ok(())
}
