//! `tress upsample --method idw|nearest|static|adaptive|neural --guides CACHE --groom G [--model M]
//! -o OUT`: the whole groom from a cache of simulated guide strands (or from a cache of the
//! whole groom, whose guide strands are then taken from it).

use std::path::PathBuf;

use clap::Args;
use glam::Vec3;

use super::report::outputs;
use crate::cache::FrameSink;
use crate::cache::{CacheInfo, SinkOptions, create_sink, open_source};
use crate::error::{Error, Result};
use crate::groom::{ReadOptions, Transform, read_groom};
use crate::guides::{AdaptiveOptions, select_uv_lattice};
use crate::motion::fit::root_pose;
use crate::neural::device::DeviceKind;
use crate::upsample::{Method, Model, Options, Upsampler};

#[derive(Debug, Args)]
pub struct UpsampleArgs {
    /// idw and nearest need only the guides; static and adaptive skinning a fitted --model
    /// (.tskin); neural a trained --model (.tnn), whose uv-grid guides it uses.
    #[arg(long, value_enum, default_value_t = Method::Idw)]
    pub method: Method,
    /// The simulated guides: a cache whose strands are strands of the groom (matched by strand
    /// id, else by root position), or a cache of the whole groom (its guide strands are used).
    #[arg(long)]
    pub guides: PathBuf,
    /// A skinning model (`.tskin`, from `tress skinning fit` or a job's fit stage), a neural
    /// interpolator (`.tnn`, from `tress train interp`), or a built-in model's name (`general`:
    /// the neural interpolator trained on many grooms and motions).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Neural: leave out the model's fine-scale displacement generator (the interpolation alone).
    #[arg(long)]
    pub no_displacement: bool,
    /// Neural: where the network runs.
    #[arg(long, value_enum, default_value_t = DeviceKind::Cpu)]
    pub device: DeviceKind,
    /// With a cache of the whole groom and no model: about this many guides on the root-UV
    /// lattice.
    #[arg(long, default_value_t = 200)]
    pub count: usize,
    /// The whole groom at rest, in the head's frame (any groom format).
    #[arg(long)]
    pub groom: PathBuf,
    /// Guides each strand follows.
    #[arg(long, default_value_t = 10)]
    pub neighbors: usize,
    #[command(flatten)]
    pub space: super::InputSpace,
    #[command(flatten)]
    pub out_space: super::OutputSpaceArgs,
    /// PLY sequence guides: frames per second.
    #[arg(long, default_value_t = 24.0)]
    pub fps: f64,
    /// Output cache: .abc, .tcache, USD (.usda or .usd text, .usdc binary) or a PLY sequence
    /// pattern.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Print what was written as JSON on standard output (`outputs` and a summary).
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: &UpsampleArgs) -> Result<()> {
    let mut groom = read_groom(&a.groom, &ReadOptions::default())?.groom;
    Transform {
        scale: a.space.scale,
        up: a.space.up,
    }
    .apply(&mut groom);
    let mut src = open_source(&a.guides, None, a.fps)?;
    let info = src.info().clone();
    // A built-in model's name (`general`), unless a file of that name is here.
    let model_file = match &a.model {
        Some(m) => Some(crate::neural::builtin::resolve(&m.to_string_lossy(), m)?),
        None => None,
    };
    // A neural model also gives other methods its guides (to compare on the same guides).
    let is_tnn = model_file
        .as_ref()
        .is_some_and(|m| m.extension().is_some_and(|e| e.eq_ignore_ascii_case("tnn")));
    let neural = match &model_file {
        Some(m) if is_tnn || a.method == Method::Neural => {
            Some(Model::neural(m, &groom, !a.no_displacement, a.device)?)
        }
        None if a.method == Method::Neural => {
            return Err(Error::Invalid(
                "--method neural needs --model (a trained .tnn from `tress train interp`)".into(),
            ));
        }
        _ => None,
    };
    let skinning = match (&model_file, a.method.needs_skinning()) {
        (Some(_), false) => None,
        (Some(m), _) => Some(Model::skinning(m, &groom)?),
        (None, true) => {
            return Err(Error::Invalid(format!(
                "--method {} needs --model (a fitted .tskin)",
                a.method
            )));
        }
        (None, false) => None,
    };
    // The model of the method (a .tnn gives the other methods its guides).
    let model = skinning.or(neural).unwrap_or(Model::None);
    let whole_groom = info.topology.counts == groom.counts();
    // (groom strand, cache strand) of every guide, by groom strand.
    let order: Vec<(usize, usize)> = if whole_groom {
        let guides: Vec<usize> = match model.guides() {
            Some(g) => g.to_vec(),
            None => select_uv_lattice(&groom, a.count),
        };
        guides.iter().map(|&g| (g, g)).collect()
    } else {
        crate::guides::select::match_guide_strands(&a.guides, &groom, &info)?
    };
    let mut g_off = vec![0usize];
    for &c in &info.topology.counts {
        g_off.push(g_off.last().expect("non-empty") + c as usize);
    }
    let guides: Vec<usize> = order.iter().map(|p| p.0).collect();
    // -v lists them as a job's guides.json does (`{"guides": [...]}`), e.g. to fit skinning
    // on the same guides or to simulate exactly a model's guides.
    tracing::info!(
        "{} guide strands: {}",
        guides.len(),
        serde_json::json!({ "guides": guides })
    );
    let rest_roots: Vec<Vec3> = guides.iter().map(|&s| groom.strand(s)[0]).collect();
    let options = Options {
        neighbors: a.neighbors,
        adaptive: &AdaptiveOptions::default(),
    };
    let model = crate::upsample::interpolator(a.method, &groom, &guides, model, &options)?;
    let out_info = CacheInfo {
        topology: groom.to_strands(),
        fps: info.fps,
        frames: Vec::new(),
    };
    let first = info.frames.first().copied().unwrap_or(1.0);
    let sink_opts = SinkOptions {
        space: a.out_space.space(),
        ..SinkOptions::default()
    };
    let out = create_sink(&a.output, &out_info, first, &sink_opts)?;
    let mut sink = Upsampler::new(model, info.fps, None, None, vec![out]);
    for i in 0..info.frames.len() {
        let p = src.read(i)?;
        // Guide points in groom order, as the model expects them.
        let guide_points: Vec<[f32; 3]> = order
            .iter()
            .flat_map(|&(_, slot)| p[g_off[slot]..g_off[slot + 1]].iter().copied())
            .collect();
        // The head pose: stored, else the rigid fit of the guide roots to their rest.
        let head = match src.pose(i)? {
            Some(h) => h,
            None => {
                let now: Vec<Vec3> = order
                    .iter()
                    .map(|&(_, slot)| Vec3::from_array(p[g_off[slot]]))
                    .collect();
                root_pose(&rest_roots, &now).into()
            }
        };
        sink.write(info.frames[i], &guide_points, Some(head))?;
    }
    tracing::info!(diagnostics = %sink.diagnostics(), "upsampled");
    let diagnostics = sink.diagnostics().to_string();
    let files = Box::new(sink).finish()?;
    outputs(
        a.json,
        &files,
        serde_json::json!({
            "frames": info.frames.len(),
            "strands": out_info.topology.counts.len(),
            "diagnostics": diagnostics,
        }),
    );
    Ok(())
}
