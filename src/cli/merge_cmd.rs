//! `tress merge -o CHARACTER.abc NAME=CACHE…`: several grooms' caches as the groom groups of one
//! Alembic archive ([`crate::cache::groups`]).

use std::path::PathBuf;

use clap::Args;

use super::report::outputs;
use crate::cache::{Group, GroupsOptions, SinkOptions, parse_frame_range, write_groups};
use crate::error::Result;

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The caches, one per groom group, in group-id order: NAME=CACHE (.tcache, .abc, a PLY
    /// sequence with #), or CACHE alone (named by its file's stem).
    #[arg(required = true, value_name = "NAME=CACHE")]
    pub groups: Vec<String>,
    /// The archive to write (.abc).
    #[arg(short, long)]
    pub output: PathBuf,
    /// The frames to keep, inclusive (e.g. 1001-1100); every cache must hold them.
    #[arg(long, value_name = "A-B")]
    pub frames: Option<String>,
    /// PLY sequence inputs: frames per second (PLY does not store one).
    #[arg(long, default_value_t = 24.0)]
    pub fps: f64,
    /// The units and up axis to write in (each cache is read in the space it records).
    #[command(flatten)]
    pub out_space: super::OutputSpaceArgs,
    /// Print what was written as JSON on standard output.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: &MergeArgs) -> Result<()> {
    let groups = a
        .groups
        .iter()
        .map(|g| Group::parse(g))
        .collect::<Result<Vec<_>>>()?;
    let opts = GroupsOptions {
        frames: a.frames.as_deref().map(parse_frame_range).transpose()?,
        fps: a.fps,
        sink: SinkOptions {
            space: a.out_space.space(),
            ..SinkOptions::default()
        },
    };
    let (path, frames) = write_groups(&groups, &a.output, &opts)?;
    if !a.json {
        eprintln!("{} groom groups, {frames} frames", groups.len());
    }
    outputs(
        a.json,
        &[path],
        serde_json::json!({
            "groups": groups.iter().enumerate().map(|(i, g)| serde_json::json!({
                "id": i, "name": g.name, "cache": g.path.display().to_string(),
            })).collect::<Vec<_>>(),
            "frames": frames,
            "units": opts.sink.space.units.name(),
            "up": opts.sink.space.up_axis().to_string(),
        }),
    );
    Ok(())
}
