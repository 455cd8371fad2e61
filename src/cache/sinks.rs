//! Frame sinks: `.tcache`, Alembic, USD text layers, PLY sequences.

use std::path::{Path, PathBuf};

use tress_formats::alembic::cache::{AbcWriter, CurvesSpec, WriteOptions};
use tress_formats::tcache::{Codec, HeadPose, TcacheHeader, TcacheWriter};
use tress_formats::usd::{UsdSpec, UsdWriter};
use tress_formats::{Strands, ply};

use super::CacheInfo;
use super::ply_sequence::Pattern;
use super::space::OutputSpace;
use crate::error::output_error;
use crate::error::{Error, Result};

/// Where frames go, one at a time.
pub trait FrameSink {
    fn write(&mut self, frame: f64, positions: &[[f32; 3]], pose: Option<HeadPose>) -> Result<()>;
    /// Completes the output; returns the files written.
    fn finish(self: Box<Self>) -> Result<Vec<PathBuf>>;
}

/// Settings of the sinks.
#[derive(Clone, Debug)]
pub struct SinkOptions {
    /// `.tcache`: lossy within this bound (scene units), lossless when `None`.
    pub error_bound: Option<f32>,
    /// `.tcache`: zstd level.
    pub level: i32,
    /// `.tcache`: frames between keyframes.
    pub keyframe_interval: u32,
    /// Alembic: write velocities for motion blur.
    pub velocities: bool,
    /// Alembic: the date recorded in the archive (default: `SOURCE_DATE_EPOCH`, else now).
    pub date: Option<std::time::SystemTime>,
    /// Alembic, USD, PLY: the units and up axis to write in (`.tcache`, which tress reads
    /// back, stays in tress's centimetres, Y up).
    pub space: OutputSpace,
    /// The space the frames (and the topology) arrive in: tress's own, unless they come from a
    /// cache written in another ([`super::FrameSource::space`]).
    pub from: OutputSpace,
    /// USD: the curves prim, "/ROOT/NAME" ([`DEFAULT_USD_PRIM`]).
    pub usd_prim: String,
}

/// The curves prim of USD caches unless a job names another.
pub const DEFAULT_USD_PRIM: &str = "/groom/hair";

/// "/ROOT/NAME" split into its two prim names, each a USD identifier; otherwise why not.
pub fn usd_prim(path: &str) -> std::result::Result<(&str, &str), String> {
    let ident = tress_formats::usd::identifier;
    match path.strip_prefix('/').and_then(|p| p.split_once('/')) {
        Some((root, name)) if ident(root) && ident(name) => Ok((root, name)),
        _ => Err(format!(
            "USD prim path {path:?}: give \"/ROOT/NAME\", two names of letters, digits and _ (not starting with a digit), e.g. \"/groom/hair\""
        )),
    }
}

impl Default for SinkOptions {
    fn default() -> Self {
        SinkOptions {
            error_bound: None,
            level: 3,
            keyframe_interval: 16,
            velocities: true,
            date: None,
            space: OutputSpace::default(),
            from: OutputSpace::default(),
            usd_prim: DEFAULT_USD_PRIM.into(),
        }
    }
}

struct Tcache {
    writer: TcacheWriter,
}

impl FrameSink for Tcache {
    fn write(&mut self, frame: f64, positions: &[[f32; 3]], pose: Option<HeadPose>) -> Result<()> {
        Ok(self.writer.write_frame(frame, positions, pose)?)
    }
    fn finish(self: Box<Self>) -> Result<Vec<PathBuf>> {
        Ok(vec![self.writer.finish()?])
    }
}

struct Alembic {
    writer: AbcWriter,
    path: PathBuf,
}

impl FrameSink for Alembic {
    fn write(&mut self, frame: f64, positions: &[[f32; 3]], _pose: Option<HeadPose>) -> Result<()> {
        if positions.iter().flatten().any(|c| !c.is_finite()) {
            return Err(crate::Error::Invalid(format!(
                "{}: frame {frame} holds non-finite positions",
                self.path.display()
            )));
        }
        self.writer
            .write_frame(&[positions])
            .map_err(|e| output_error(&self.path, e))
    }
    fn finish(self: Box<Self>) -> Result<Vec<PathBuf>> {
        let path = self.path.clone();
        Ok(vec![self.writer.finish().map_err(|e| output_error(&path, e))?])
    }
}

struct Usd {
    writer: UsdWriter,
    path: PathBuf,
}

impl FrameSink for Usd {
    fn write(&mut self, frame: f64, positions: &[[f32; 3]], _pose: Option<HeadPose>) -> Result<()> {
        self.writer
            .write_frame(frame, positions)
            .map_err(|e| output_error(&self.path, e))
    }
    fn finish(self: Box<Self>) -> Result<Vec<PathBuf>> {
        let path = self.path.clone();
        Ok(vec![self.writer.finish().map_err(|e| output_error(&path, e))?])
    }
}

struct PlySequence {
    pattern: Pattern,
    topology: Strands,
    /// "cm, Y up": PLY has no units, so its comment says them.
    space: String,
    written: Vec<PathBuf>,
}

impl FrameSink for PlySequence {
    fn write(&mut self, frame: f64, positions: &[[f32; 3]], _pose: Option<HeadPose>) -> Result<()> {
        if frame.fract() != 0.0 {
            return Err(Error::Invalid(format!(
                "PLY sequences need whole frame numbers, got {frame}"
            )));
        }
        let path = self.pattern.path(frame as i64);
        let mut s = self.topology.clone();
        s.points = positions.to_vec();
        let mut bytes = ply::to_bytes(
            &s,
            &format!(
                "tress {} frame {frame} ({})",
                env!("CARGO_PKG_VERSION"),
                self.space
            ),
        )?;
        if self.pattern.compressed() {
            bytes = zstd::bulk::compress(&bytes, 3).map_err(|e| Error::Runtime(e.to_string()))?;
        }
        tress_formats::atomic::write(&path, &bytes).map_err(|e| output_error(&path, e))?;
        self.written.push(path);
        Ok(())
    }
    fn finish(self: Box<Self>) -> Result<Vec<PathBuf>> {
        Ok(self.written)
    }
}

/// A sink fed in tress's space that writes in another.
struct InSpace {
    inner: Box<dyn FrameSink>,
    from: OutputSpace,
    space: OutputSpace,
    /// The frame in the output's space (kept between frames).
    moved: Vec<[f32; 3]>,
}

impl FrameSink for InSpace {
    fn write(&mut self, frame: f64, positions: &[[f32; 3]], pose: Option<HeadPose>) -> Result<()> {
        let (from, space) = (self.from, self.space);
        self.moved.clear();
        self.moved
            .extend(positions.iter().map(|p| space.from_space(from, *p)));
        self.inner.write(frame, &self.moved, pose)
    }
    fn finish(self: Box<Self>) -> Result<Vec<PathBuf>> {
        self.inner.finish()
    }
}

/// Opens a sink by path: `.tcache`, `.abc`, `.usd`/`.usda`, or a PLY sequence pattern
/// (`hair.####.ply[.zst]`); frames are given in `opts.from` (tress's space unless a source says
/// otherwise) and written in `opts.space` (unchanged when the two are the same).
pub fn create_sink(
    path: &Path,
    info: &CacheInfo,
    start_frame: f64,
    opts: &SinkOptions,
) -> Result<Box<dyn FrameSink>> {
    let space = opts.space;
    if space.is_identity() && opts.from.is_identity() {
        return open_sink(path, info, start_frame, opts);
    }
    if tress_formats::extension(path).as_deref() == Some("tcache") && !space.is_identity() {
        return Err(Error::Invalid(format!(
            "{}: .tcache is tress's own cache and stays in centimetres, Y up; write {} to .abc, .usda or a PLY sequence",
            path.display(),
            space.describe()
        )));
    }
    if opts.from == space {
        return open_sink(path, info, start_frame, opts);
    }
    let info = CacheInfo {
        topology: space.strands_from(opts.from, &info.topology),
        ..info.clone()
    };
    Ok(Box::new(InSpace {
        inner: open_sink(path, &info, start_frame, opts)?,
        from: opts.from,
        space,
        moved: Vec::new(),
    }))
}

fn open_sink(
    path: &Path,
    info: &CacheInfo,
    start_frame: f64,
    opts: &SinkOptions,
) -> Result<Box<dyn FrameSink>> {
    let space = opts.space;
    if let Some(pattern) = Pattern::parse(path) {
        return Ok(Box::new(PlySequence {
            pattern,
            topology: info.topology.clone(),
            space: space.describe(),
            written: Vec::new(),
        }));
    }
    let ext = tress_formats::extension(path);
    match ext.as_deref() {
        Some("tcache") => {
            let codec = match opts.error_bound {
                Some(bound) => Codec::Lossy { bound },
                None => Codec::Lossless,
            };
            let header = TcacheHeader {
                fps: info.fps,
                codec,
                keyframe_interval: opts.keyframe_interval,
                rest: info.topology.clone(),
            };
            let writer = TcacheWriter::create(path, header, opts.level).map_err(|e| output_error(path, e))?;
            Ok(Box::new(Tcache { writer }))
        }
        Some("abc") => {
            let mut o = WriteOptions::new(info.fps, start_frame);
            if let Some(d) = opts.date {
                o.date = d;
            }
            o.meters_per_unit = space.units.meters_per_unit();
            o.up_axis = space.up_axis();
            let mut w = AbcWriter::with_options(path, &o).map_err(|e| output_error(path, e))?;
            let mut spec = CurvesSpec::from_strands("groom", "hair", &info.topology);
            spec.velocities = opts.velocities;
            w.add_curves(&spec)?;
            Ok(Box::new(Alembic {
                writer: w,
                path: path.to_path_buf(),
            }))
        }
        Some("usd" | "usda" | "usdc") => {
            let (root, name) = usd_prim(&opts.usd_prim)
                .map_err(|e| crate::error::Error::Invalid(format!("{}: {e}", path.display())))?;
            let spec = UsdSpec {
                root,
                name,
                doc: concat!("written by tress ", env!("CARGO_PKG_VERSION")),
                fps: info.fps,
                start_frame,
                velocities: opts.velocities,
                meters_per_unit: space.units.meters_per_unit(),
                up_axis: space.up_axis(),
            };
            let writer = UsdWriter::create(path, &info.topology, &spec).map_err(|e| output_error(path, e))?;
            Ok(Box::new(Usd {
                writer,
                path: path.to_path_buf(),
            }))
        }
        Some("usdz") => Err(Error::Invalid(format!(
            "{}: a USD package (.usdz) is not written; write .usdc (binary) or .usda (text), or package one with `usdzip` where USD is installed",
            path.display()
        ))),
        _ => Err(Error::Invalid(format!(
            "{}: not a cache format (known: .tcache, .abc, .usd/.usda/.usdc, PLY sequences named with #)",
            path.display()
        ))),
    }
}
