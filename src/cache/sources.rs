//! Frame sources: `.tcache`, Alembic curves, USD `BasisCurves`, PLY sequences.

use std::path::Path;

use tress_formats::alembic::cache::AbcReader;
use tress_formats::alembic::schema::curves::CurvesReader;
use tress_formats::tcache::{HeadPose, TcacheReader};
use tress_formats::{InFile, ply};

use super::CacheInfo;
use super::ply_sequence::{Pattern, read_bytes};
use super::space::OutputSpace;
use crate::error::{Error, Result};

/// A cache read one frame at a time.
pub trait FrameSource {
    fn info(&self) -> &CacheInfo;
    /// Positions (world space) of the `index`-th frame of `info().frames`.
    fn read(&mut self, index: usize) -> Result<Vec<[f32; 3]>>;
    /// The head pose stored with the frame; `None` when there is none (the format keeps none,
    /// or the identity was stored).
    fn pose(&mut self, _index: usize) -> Result<Option<HeadPose>> {
        Ok(None)
    }
    /// The space the positions are in: tress's own (cm, Y up) unless the file says another
    /// (an Alembic archive's `metersPerUnit` and `upAxis`, as tress writes them).
    fn space(&self) -> OutputSpace {
        OutputSpace::default()
    }
}

struct Tcache {
    reader: TcacheReader,
    info: CacheInfo,
}

impl FrameSource for Tcache {
    fn info(&self) -> &CacheInfo {
        &self.info
    }
    fn read(&mut self, index: usize) -> Result<Vec<[f32; 3]>> {
        Ok(self.reader.frame(index)?)
    }
    fn pose(&mut self, index: usize) -> Result<Option<HeadPose>> {
        Ok(Some(self.reader.pose(index)?).filter(|p| *p != HeadPose::IDENTITY))
    }
}

struct Alembic {
    reader: AbcReader,
    curves: CurvesReader,
    path: std::path::PathBuf,
    info: CacheInfo,
    space: OutputSpace,
}

impl FrameSource for Alembic {
    fn info(&self) -> &CacheInfo {
        &self.info
    }
    fn space(&self) -> OutputSpace {
        self.space
    }
    fn read(&mut self, index: usize) -> Result<Vec<[f32; 3]>> {
        let p = self
            .curves
            .positions(&self.reader.archive, index)
            .in_file(&self.path)?;
        if p.len() != self.info.topology.points.len() {
            return Err(Error::Invalid(format!(
                "{}: sample {index} has {} points, the first {}: changing topology is not a strand cache",
                self.path.display(),
                p.len(),
                self.info.topology.points.len()
            )));
        }
        Ok(p)
    }
}

struct Usd {
    file: tress_formats::usd::read::UsdFile,
    prim: String,
    /// The time samples, decoded once; `None`: a default value only.
    samples: Option<tress_formats::usd::read::PointSamples>,
    info: CacheInfo,
    space: OutputSpace,
}

impl FrameSource for Usd {
    fn info(&self) -> &CacheInfo {
        &self.info
    }
    fn read(&mut self, index: usize) -> Result<Vec<[f32; 3]>> {
        let p = match &self.samples {
            Some(s) => self.file.sample_points(s, index)?,
            None => self.file.world_points(&self.prim, None)?,
        };
        if p.len() != self.info.topology.points.len() {
            return Err(Error::Invalid(format!(
                "{}: {} at time code {} has {} points, the first sample {}: changing topology is not a strand cache",
                self.file.path().display(),
                self.prim,
                self.info.frames[index],
                p.len(),
                self.info.topology.points.len()
            )));
        }
        Ok(p)
    }
    fn space(&self) -> OutputSpace {
        self.space
    }
}

struct PlySequence {
    pattern: Pattern,
    info: CacheInfo,
}

impl FrameSource for PlySequence {
    fn info(&self) -> &CacheInfo {
        &self.info
    }
    fn read(&mut self, index: usize) -> Result<Vec<[f32; 3]>> {
        let path = self.pattern.path(self.info.frames[index] as i64);
        let bytes = read_bytes(&path)?;
        let s = ply::parse(&bytes, &Default::default()).in_file(&path)?.strands;
        if s.counts != self.info.topology.counts {
            return Err(Error::Invalid(format!(
                "{}: its strands differ from the first frame's",
                path.display()
            )));
        }
        Ok(s.points)
    }
}

/// Opens a cache: `.tcache`, `.abc` (the first curves object, or `object`), or a PLY sequence
/// pattern with `#` (`fps` gives its frame rate).
pub fn open_source(path: &Path, object: Option<&str>, fps: f64) -> Result<Box<dyn FrameSource>> {
    if let Some(pattern) = Pattern::parse(path) {
        let frames = pattern.frames_on_disk()?;
        let Some(&first) = frames.first() else {
            return Err(Error::Invalid(format!(
                "{}: no files match the pattern",
                path.display()
            )));
        };
        let p0 = pattern.path(first);
        let topology = ply::parse(&read_bytes(&p0)?, &Default::default())
            .in_file(&p0)?
            .strands;
        let info = CacheInfo {
            topology,
            fps,
            frames: frames.iter().map(|&f| f as f64).collect(),
        };
        return Ok(Box::new(PlySequence { pattern, info }));
    }
    let ext = tress_formats::extension(path);
    match ext.as_deref() {
        Some("tcache") => {
            let reader = TcacheReader::open(path)?;
            if let Some(scan) = &reader.scan
                && let Some(why) = &scan.stopped
            {
                eprintln!(
                    "warning: {}: {why}; reading the {} complete frames",
                    path.display(),
                    scan.frames
                );
            }
            let info = CacheInfo {
                topology: reader.header.rest.clone(),
                fps: reader.fps(),
                frames: reader.frames.iter().map(|f| f.frame).collect(),
            };
            Ok(Box::new(Tcache { reader, info }))
        }
        Some("abc") => {
            let reader = AbcReader::open(path)?;
            let objects = reader.curves_objects()?;
            let obj = match object {
                Some(name) => objects.into_iter().find(|o| o.full_name == name),
                None => objects.into_iter().next(),
            }
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "{}: no curves object {}",
                    path.display(),
                    object.unwrap_or("")
                ))
            })?;
            let curves = CurvesReader::open(&reader.archive, &obj).in_file(path)?;
            let fps = reader.fps().unwrap_or(fps);
            let ts = reader.archive.time_samplings[curves.time_sampling() as usize].clone();
            let frames = (0..curves.num_samples())
                .map(|i| (ts.time(i) * fps * 1e6).round() / 1e6)
                .collect();
            let first = reader.read_curves_at_frame(ts.time(0) * fps, fps)?;
            // read_curves_at_frame merges every curves object: keep this object's only.
            let counts = curves.counts(&reader.archive, 0).in_file(path)?;
            let points = curves.positions(&reader.archive, 0).in_file(path)?;
            let mut topology = first;
            if topology.counts != counts {
                topology = tress_formats::Strands::new(points, counts, Default::default()).in_file(path)?;
            }
            let info = CacheInfo {
                topology,
                fps,
                frames,
            };
            let md = &reader.archive.metadata;
            let space =
                OutputSpace::from_metadata(md.get("metersPerUnit"), md.get("upAxis")).unwrap_or_default();
            Ok(Box::new(Alembic {
                reader,
                curves,
                path: path.to_path_buf(),
                info,
                space,
            }))
        }
        Some("usd" | "usda" | "usdc" | "usdz") => {
            let file = tress_formats::usd::read::UsdFile::open(path)?;
            let curves = file.prims_of("BasisCurves")?;
            let prim = match object {
                Some(name) => curves.into_iter().find(|p| p == name),
                None => curves.into_iter().next(),
            }
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "{}: no BasisCurves prim {}",
                    path.display(),
                    object.unwrap_or("")
                ))
            })?;
            let stage = file.info()?;
            let samples = file.point_samples(&prim)?;
            let mut frames = samples.times();
            // The first sample, already decoded, gives the topology's positions.
            let topology = match frames.is_empty() {
                true => file.curves(&prim, None)?,
                false => file.curves_at(&prim, file.sample_points(&samples, 0)?)?,
            };
            let samples = if frames.is_empty() {
                // A default value only: one frame at the stage's start.
                frames.push(stage.start_time_code.unwrap_or(1.0));
                None
            } else {
                Some(samples)
            };
            let space = OutputSpace::from_metadata(
                stage.meters_per_unit.map(|m| m.to_string()).as_deref(),
                stage.up_axis.map(|u| u.to_string()).as_deref(),
            )
            .unwrap_or_default();
            let info = CacheInfo {
                topology,
                fps: stage.time_codes_per_second,
                frames,
            };
            Ok(Box::new(Usd {
                file,
                prim,
                samples,
                info,
                space,
            }))
        }
        _ => Err(Error::Invalid(format!(
            "{}: not a cache (known: .tcache, .abc, .usd/.usda/.usdc/.usdz, and PLY sequences named with #, e.g. hair.####.ply)",
            path.display()
        ))),
    }
}
