//! `tress upsample --method idw --guides CACHE --groom G -o OUT`: the whole groom from a cache
//! of simulated guide strands.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use glam::{DVec3, Vec3};

use super::report::output_file;
use crate::cache::{CacheInfo, SinkOptions, create_sink, open_source};
use crate::error::{Error, Result};
use crate::groom::{ReadOptions, Transform, UpAxis, read_groom};
use crate::guides::IdwModel;
use crate::motion::Pose;
use crate::motion::fit::fit_rigid;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Method {
    /// Inverse-distance weights of the closest guides, carried in each guide's local frame
    /// (001 Eq. 11).
    Idw,
}

#[derive(Debug, Args)]
pub struct UpsampleArgs {
    #[arg(long, value_enum, default_value_t = Method::Idw)]
    pub method: Method,
    /// The simulated guides: a cache whose strands are strands of the groom (matched by strand
    /// id, else by root position).
    #[arg(long)]
    pub guides: PathBuf,
    /// The whole groom at rest, in the head's frame (any groom format).
    #[arg(long)]
    pub groom: PathBuf,
    /// Guides each strand follows.
    #[arg(long, default_value_t = 10)]
    pub neighbors: usize,
    #[arg(long, default_value_t = 1.0)]
    pub scale: f32,
    #[arg(long, value_enum, default_value_t = UpAxis::Y)]
    pub up: UpAxis,
    /// PLY sequence guides: frames per second.
    #[arg(long, default_value_t = 24.0)]
    pub fps: f64,
    /// Output cache: .abc, .tcache or a PLY sequence pattern.
    #[arg(short, long)]
    pub output: PathBuf,
}

pub fn run(a: &UpsampleArgs) -> Result<()> {
    let mut groom = read_groom(&a.groom, &ReadOptions::default())?.groom;
    Transform {
        scale: a.scale,
        up: a.up,
    }
    .apply(&mut groom);
    let mut src = open_source(&a.guides, None, a.fps)?;
    let info = src.info().clone();
    let roots = groom.roots();
    // Which groom strand each guide strand is.
    let guide_roots: Vec<Vec3> = {
        let mut o = 0usize;
        info.topology
            .counts
            .iter()
            .map(|&c| {
                let r = Vec3::from_array(info.topology.points[o]);
                o += c as usize;
                r
            })
            .collect()
    };
    let mapping: Vec<usize> = match (&info.topology.attrs.id, &groom.attrs.id) {
        (Some(gids), Some(ids)) => {
            let index: std::collections::HashMap<u32, usize> =
                ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
            gids.iter()
                .map(|id| {
                    index.get(id).copied().ok_or_else(|| {
                        Error::Invalid(format!(
                            "{}: guide strand id {id} is not in {}",
                            a.guides.display(),
                            a.groom.display()
                        ))
                    })
                })
                .collect::<Result<_>>()?
        }
        _ => guide_roots
            .iter()
            .map(|r| {
                (0..roots.len())
                    .min_by(|&i, &j| {
                        roots[i]
                            .distance_squared(*r)
                            .total_cmp(&roots[j].distance_squared(*r))
                    })
                    .expect("a groom has strands")
            })
            .collect(),
    };
    let mut order: Vec<(usize, usize)> = mapping
        .iter()
        .copied()
        .enumerate()
        .map(|(slot, s)| (s, slot))
        .collect();
    order.sort();
    if order.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(Error::Invalid(format!(
            "{}: two guide strands map to the same groom strand",
            a.guides.display()
        )));
    }
    for (k, &(s, slot)) in order.iter().enumerate() {
        let _ = k;
        if groom.counts()[s] != info.topology.counts[slot] {
            return Err(Error::Invalid(format!(
                "{}: guide strand {slot} has {} points, groom strand {s} {}",
                a.guides.display(),
                info.topology.counts[slot],
                groom.counts()[s]
            )));
        }
    }
    let guides: Vec<usize> = order.iter().map(|p| p.0).collect();
    let model = IdwModel::new(&groom, &guides, a.neighbors);
    let rest_roots: Vec<DVec3> = guides.iter().map(|&s| roots[s].as_dvec3()).collect();
    let out_info = CacheInfo {
        topology: groom.to_strands(),
        fps: info.fps,
        frames: Vec::new(),
    };
    let first = info.frames.first().copied().unwrap_or(1.0);
    let mut sink = create_sink(&a.output, &out_info, first, &SinkOptions::default())?;
    // Offsets of the guide strands in the cache.
    let mut g_off = vec![0usize];
    for &c in &info.topology.counts {
        g_off.push(g_off.last().expect("non-empty") + c as usize);
    }
    for i in 0..info.frames.len() {
        let p = src.read(i)?;
        // Guide points in groom order.
        let world: Vec<Vec3> = order
            .iter()
            .flat_map(|&(_, slot)| {
                p[g_off[slot]..g_off[slot + 1]]
                    .iter()
                    .map(|q| Vec3::from_array(*q))
            })
            .collect();
        // The head pose: stored, else the rigid fit of the guide roots to their rest.
        let stored = src
            .pose(i)
            .filter(|h| *h != tress_formats::tcache::HeadPose::IDENTITY);
        let pose = match stored {
            Some(h) => Pose::new(
                glam::DQuat::from_array(h.rotation),
                DVec3::from_array(h.translation),
            ),
            None => {
                let mut o = 0usize;
                let now: Vec<DVec3> = order
                    .iter()
                    .map(|&(s, _)| {
                        let r = world[o].as_dvec3();
                        o += groom.counts()[s] as usize;
                        r
                    })
                    .collect();
                fit_rigid(&rest_roots, &now).pose
            }
        };
        let inv = pose.inverse();
        let local: Vec<Vec3> = world.iter().map(|q| inv.apply_f32(*q)).collect();
        let all: Vec<[f32; 3]> = model
            .apply(&local)
            .into_iter()
            .map(|q| pose.apply_f32(q).to_array())
            .collect();
        sink.write(info.frames[i], &all, src.pose(i))?;
    }
    for f in sink.finish()? {
        output_file(&f);
    }
    Ok(())
}
