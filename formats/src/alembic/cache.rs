//! Hair caches in Alembic: the friendly API over the schema layer.
//!
//! [`AbcWriter`] lays a groom out as DCC tools and Unreal expect it — one `OXform` per groom
//! with one `OCurves` per strand set (hair, and optionally guides) — and streams animated
//! positions one frame at a time. Topology, widths, root UVs and the Unreal groom attributes
//! (`groom_*` in `.arbGeomParams`) are written once and shared by every later sample. The file
//! appears under its name only when the archive is complete. [`AbcReader`] lists what an
//! archive holds and reads curves at a frame.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::abc::write::{ArchiveInfo, OArchive};
use super::abc::{Archive, Object, Pod, TimeSampling};
use super::schema::SchemaKind;
use super::schema::curves::{CurveKind, CurvesLayout, CurvesReader, CurvesSample, CurvesWriter};
use super::schema::geom_param::{Scope, geom_param_metadata};
use super::schema::polymesh::PolyMeshReader;
use super::schema::xform::{self, Matrix, XformReader, XformWriter};
use crate::atomic::AtomicFile;
use crate::error::{Error, InFile, Result};
use crate::strands::{Attr, StrandAttrs, Strands};
use crate::velocity::CentralDifference;

/// The Unreal groom schema version tress writes (`groom_version_major` / `_minor`).
pub const GROOM_VERSION: (i16, i16) = (1, 4);

/// Archive-wide settings of a cache.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    pub fps: f64,
    /// Frame number of the first sample (1001 for film shots).
    pub start_frame: f64,
    pub application: String,
    pub description: String,
    /// `_ai_DateWritten`: `SOURCE_DATE_EPOCH` when set (reproducible files), else now.
    pub date: SystemTime,
    /// The space of the positions, as archive metadata (`metersPerUnit`, `upAxis`, the keys
    /// USD uses; Alembic has no standard ones): centimetres, Y up by default.
    pub meters_per_unit: f64,
    pub up_axis: char,
}

impl WriteOptions {
    pub fn new(fps: f64, start_frame: f64) -> Self {
        WriteOptions {
            fps,
            start_frame,
            application: format!("tress {}", env!("CARGO_PKG_VERSION")),
            description: String::new(),
            date: reproducible_now(),
            meters_per_unit: 0.01,
            up_axis: 'Y',
        }
    }
}

/// `SOURCE_DATE_EPOCH` if set (the reproducible-builds convention), else the current time.
pub fn reproducible_now() -> SystemTime {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map(|s| SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(s))
        .unwrap_or_else(SystemTime::now)
}

/// A strand set to write: topology and the attributes constant over the cache.
#[derive(Clone, Debug)]
pub struct CurvesSpec {
    /// Name of the groom (`OXform`) this set belongs to; created on first use.
    pub groom: String,
    /// Name of the curves object under it (`hair`, `guides`).
    pub name: String,
    pub counts: Vec<u32>,
    pub kind: CurveKind,
    /// Strand diameter: constant, per strand or per vertex.
    pub width: Option<Attr<f32>>,
    /// Linear RGB (Unreal `groom_color`): constant, per strand or per vertex.
    pub color: Option<Attr<[f32; 3]>>,
    pub root_uv: Option<Vec<[f32; 2]>>,
    pub ids: Option<Vec<u32>>,
    /// Whether these curves are simulation guides (Unreal `groom_guide`).
    pub guides: bool,
    /// Unreal's groom group (`groom_group_id`): grooms of one character (hair, beard, brows)
    /// in one archive, one id each.
    pub group_id: i32,
    /// The group's name (`groom_group_name`, read by Unreal 5's importer), when given.
    pub group_name: Option<String>,
    /// Write `.velocities` for motion blur, from the positions of neighbouring frames.
    pub velocities: bool,
}

impl CurvesSpec {
    /// A linear hair strand set with the attributes of `strands`.
    pub fn from_strands(groom: &str, name: &str, strands: &Strands) -> CurvesSpec {
        CurvesSpec {
            groom: groom.into(),
            name: name.into(),
            counts: strands.counts.clone(),
            kind: CurveKind::LINEAR,
            width: strands.attrs.width.clone(),
            color: strands.attrs.color.clone(),
            root_uv: strands.attrs.root_uv.clone(),
            ids: strands.attrs.id.clone(),
            guides: false,
            group_id: 0,
            group_name: None,
            velocities: true,
        }
    }
}

/// What every sample of a curves object repeats.
struct Constant {
    counts: Vec<i32>,
    kind: CurveKind,
    widths: Option<Vec<f32>>,
    uvs: Option<Vec<[f32; 2]>>,
    arb: Vec<Vec<u8>>,
}

struct CurvesState {
    writer: CurvesWriter,
    points: usize,
    sample: Constant,
    /// With velocities on: the frames held back for central differences.
    velocities: Option<CentralDifference>,
}

/// Streams an animated hair cache into an Alembic archive.
pub struct AbcWriter {
    path: PathBuf,
    archive: OArchive<AtomicFile>,
    time_sampling: u32,
    fps: f64,
    grooms: Vec<(String, XformWriter)>,
    curves: Vec<CurvesState>,
    frames: usize,
}

/// The Alembic scope of an attribute's values.
fn scope_of<T>(a: &Attr<T>) -> Scope {
    match a {
        Attr::Constant(_) => Scope::Constant,
        Attr::PerStrand(_) => Scope::Uniform,
        Attr::PerVertex(_) => Scope::Vertex,
    }
}

fn bytes_of<T: bytemuck::Pod>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

impl AbcWriter {
    /// A cache at `fps` whose first sample is frame `start_frame`.
    pub fn new(path: impl AsRef<Path>, fps: f64, start_frame: f64) -> Result<AbcWriter> {
        AbcWriter::with_options(path, &WriteOptions::new(fps, start_frame))
    }

    pub fn with_options(path: impl AsRef<Path>, opts: &WriteOptions) -> Result<AbcWriter> {
        let path = path.as_ref().to_path_buf();
        if !(opts.fps.is_finite() && opts.fps > 0.0) {
            return Err(Error::invalid(format!("fps must be positive, got {}", opts.fps)));
        }
        let file = AtomicFile::create(&path)?;
        let info = ArchiveInfo {
            application: opts.application.clone(),
            description: opts.description.clone(),
            fps: Some(opts.fps),
            date: opts.date,
            extra: vec![
                ("metersPerUnit".into(), format!("{}", opts.meters_per_unit)),
                ("upAxis".into(), opts.up_axis.to_string()),
            ],
        };
        let mut archive = OArchive::new(file, &info).in_file(&path)?;
        let dt = 1.0 / opts.fps;
        let time_sampling = archive.add_time_sampling(TimeSampling::uniform(dt, opts.start_frame / opts.fps));
        Ok(AbcWriter {
            path,
            archive,
            time_sampling,
            fps: opts.fps,
            grooms: Vec::new(),
            curves: Vec::new(),
            frames: 0,
        })
    }

    fn groom(&mut self, name: &str) -> Result<usize> {
        if let Some(i) = self.grooms.iter().position(|(n, _)| n == name) {
            return Ok(i);
        }
        let top = self.archive.top();
        let x = XformWriter::new(&mut self.archive, top, name, self.time_sampling, false)?;
        // Unreal's groom schema version, on the top-level object.
        let arb = self
            .archive
            .add_compound(x.compound, ".arbGeomParams", Default::default())?;
        for (attr, v) in [
            ("groom_version_major", GROOM_VERSION.0),
            ("groom_version_minor", GROOM_VERSION.1),
        ] {
            let md = geom_param_metadata(Pod::I16, 1, Scope::Constant, None);
            let p = self
                .archive
                .add_array(arb, attr, Pod::I16, 1, self.time_sampling, md)?;
            self.archive.set_array(p, &v.to_le_bytes(), 1)?;
        }
        self.grooms.push((name.to_string(), x));
        Ok(self.grooms.len() - 1)
    }

    /// Declares a strand set; returns its index for [`AbcWriter::write_frame`].
    pub fn add_curves(&mut self, spec: &CurvesSpec) -> Result<usize> {
        if self.frames > 0 {
            return Err(Error::invalid("curves must all be added before the first frame"));
        }
        let strands = spec.counts.len();
        let points: usize = spec.counts.iter().map(|&c| c as usize).sum();
        if spec.counts.iter().any(|&c| c == 0 || c > i32::MAX as u32) {
            return Err(Error::invalid("every curve needs at least one vertex"));
        }
        let check = |name: &str, len: Option<usize>| match len {
            Some(l) if l != strands => Err(Error::invalid(format!(
                "{name} has {l} values for {strands} curves"
            ))),
            _ => Ok(()),
        };
        check("root_uv", spec.root_uv.as_ref().map(Vec::len))?;
        check("ids", spec.ids.as_ref().map(Vec::len))?;
        if let Some(w) = &spec.width {
            w.check("width", strands, points)?;
        }
        if let Some(c) = &spec.color {
            c.check("color", strands, points)?;
        }
        let g = self.groom(&spec.groom)?;
        let parent = self.grooms[g].1.object;

        let width_scope = spec.width.as_ref().map(scope_of);
        let widths = spec.width.as_ref().map(|w| w.values().to_vec());
        let uni = |name: &str, pod: Pod, extent: u8| (name.to_string(), pod, extent, Scope::Uniform, None);
        let con = |name: &str, pod: Pod| (name.to_string(), pod, 1u8, Scope::Constant, None);
        let mut layout = CurvesLayout {
            velocities: spec.velocities,
            width: width_scope,
            uv: spec.root_uv.as_ref().map(|_| Scope::Uniform),
            arb: vec![
                con("groom_version_major", Pod::I16),
                con("groom_version_minor", Pod::I16),
                uni("groom_guide", Pod::I8, 1),
                con("groom_group_id", Pod::I32),
            ],
        };
        let mut arb: Vec<Vec<u8>> = vec![
            GROOM_VERSION.0.to_le_bytes().to_vec(),
            GROOM_VERSION.1.to_le_bytes().to_vec(),
            vec![spec.guides as u8; strands],
            spec.group_id.to_le_bytes().to_vec(),
        ];
        if let Some(name) = &spec.group_name {
            if name.is_empty() || name.contains('\0') {
                return Err(Error::invalid(format!(
                    "groom group name {name:?}: give a non-empty name without NUL"
                )));
            }
            layout.arb.push(con("groom_group_name", Pod::String));
            arb.push([name.as_bytes(), &[0]].concat());
        }
        if let Some(ids) = &spec.ids {
            layout.arb.push(uni("groom_id", Pod::I32, 1));
            arb.push(bytes_of(&ids.iter().map(|&i| i as i32).collect::<Vec<_>>()));
        }
        if let Some(uv) = &spec.root_uv {
            layout.arb.push(uni("groom_root_uv", Pod::F32, 2));
            arb.push(bytes_of(uv));
        }
        if let Some(w) = &spec.width {
            layout
                .arb
                .push(("groom_width".into(), Pod::F32, 1, Scope::Vertex, None));
            arb.push(bytes_of(&w.per_vertex(&spec.counts)));
        }
        if let Some(c) = &spec.color {
            // A colour parameter (C3f: three floats read as "rgb") at the attribute's own scope.
            layout
                .arb
                .push(("groom_color".into(), Pod::F32, 3, scope_of(c), Some("rgb")));
            arb.push(bytes_of(c.values()));
        }
        let writer = CurvesWriter::new(&mut self.archive, parent, &spec.name, self.time_sampling, &layout)?;
        self.curves.push(CurvesState {
            writer,
            points,
            sample: Constant {
                counts: spec.counts.iter().map(|&c| c as i32).collect(),
                kind: spec.kind,
                widths,
                uvs: spec.root_uv.clone(),
                arb,
            },
            velocities: spec.velocities.then(|| CentralDifference::new(self.fps)),
        });
        Ok(self.curves.len() - 1)
    }

    /// Writes the next frame: one position array per strand set, in [`AbcWriter::add_curves`]
    /// order. With velocities on, a frame is held back until the next arrives (central
    /// differences), so at most three frames are in memory.
    pub fn write_frame(&mut self, positions: &[&[[f32; 3]]]) -> Result<()> {
        if positions.len() != self.curves.len() {
            return Err(Error::invalid(format!(
                "a frame needs positions for {} strand sets, got {}",
                self.curves.len(),
                positions.len()
            )));
        }
        for (c, p) in self.curves.iter().zip(positions) {
            if p.len() != c.points {
                return Err(Error::invalid(format!(
                    "a frame has {} points where {} are expected",
                    p.len(),
                    c.points
                )));
            }
            let finite = bytemuck::cast_slice::<[f32; 3], f32>(p)
                .iter()
                .fold(true, |ok, v| ok & v.is_finite());
            if !finite {
                return Err(Error::invalid(format!(
                    "sample {} (counting from 0) holds non-finite positions",
                    self.frames
                )));
            }
        }
        for (_, x) in self.grooms.iter_mut() {
            x.set(&mut self.archive, None)?;
        }
        let frame = self.frames as f64;
        for (c, current) in self.curves.iter_mut().zip(positions) {
            match &mut c.velocities {
                None => emit(&mut self.archive, &mut c.writer, &c.sample, current, None)?,
                Some(d) => {
                    if let Some((_, p, v)) = d.push(frame, current) {
                        emit(&mut self.archive, &mut c.writer, &c.sample, p, Some(v))?;
                    }
                }
            }
        }
        self.frames += 1;
        Ok(())
    }

    /// Frames written so far.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Flushes held-back frames, writes the hierarchy and renames the file into place.
    pub fn finish(mut self) -> Result<PathBuf> {
        if self.frames == 0 {
            return Err(Error::invalid("a cache needs at least one frame"));
        }
        for c in &mut self.curves {
            if let Some((_, p, v)) = c.velocities.as_mut().and_then(CentralDifference::finish) {
                emit(&mut self.archive, &mut c.writer, &c.sample, p, Some(v))?;
            }
        }
        let path = self.path.clone();
        let file = self.archive.finish().in_file(&path)?;
        file.commit()?;
        Ok(path)
    }
}

/// Writes one sample of a curves object.
fn emit(
    archive: &mut OArchive<AtomicFile>,
    writer: &mut CurvesWriter,
    c: &Constant,
    positions: &[[f32; 3]],
    velocities: Option<&[[f32; 3]]>,
) -> Result<()> {
    let sample = CurvesSample {
        positions,
        counts: &c.counts,
        kind: c.kind,
        velocities,
        widths: c.widths.as_deref(),
        uvs: c.uvs.as_deref(),
    };
    let arb: Vec<&[u8]> = c.arb.iter().map(Vec::as_slice).collect();
    writer.set(archive, &sample, &arb)
}

/// One object of an archive, as `inspect` lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectSummary {
    pub path: String,
    pub schema: String,
    pub samples: usize,
    pub time_sampling: u32,
    /// Curves: (curves, points) at the first sample; meshes: (faces, points).
    pub counts: Option<(usize, usize)>,
}

/// Reads Alembic archives: object listing and curves at a frame.
pub struct AbcReader {
    pub archive: Archive,
    path: PathBuf,
}

impl AbcReader {
    pub fn open(path: impl AsRef<Path>) -> Result<AbcReader> {
        let path = path.as_ref().to_path_buf();
        let archive = Archive::open(&path)?;
        Ok(AbcReader { archive, path })
    }

    fn ctx<T>(&self, r: Result<T>) -> Result<T> {
        r.in_file(&self.path)
    }

    /// Every object below the top, depth first, with schema and sample counts. Unknown schemas
    /// are listed with their name and no counts.
    pub fn summary(&self) -> Result<Vec<ObjectSummary>> {
        let ar = &self.archive;
        let objects = self.ctx(ar.objects())?;
        let mut out = Vec::new();
        for o in objects.iter().skip(1) {
            let kind = SchemaKind::of(o);
            let (samples, ts, counts) = self.ctx(match &kind {
                SchemaKind::Curves => CurvesReader::open(ar, o).and_then(|c| {
                    let n = c.num_samples();
                    let counts = if n > 0 {
                        let k = c.counts(ar, 0)?;
                        Some((k.len(), k.iter().map(|&x| x as usize).sum()))
                    } else {
                        None
                    };
                    Ok((n, c.time_sampling(), counts))
                }),
                SchemaKind::PolyMesh => PolyMeshReader::open(ar, o).and_then(|m| {
                    let n = m.num_samples();
                    let counts = if n > 0 {
                        let s = m.sample(ar, 0)?;
                        Some((s.face_counts.len(), s.positions.len()))
                    } else {
                        None
                    };
                    Ok((n, m.positions.header.time_sampling, counts))
                }),
                SchemaKind::Xform => {
                    XformReader::open(ar, o).map(|x| (x.num_samples(), x.time_sampling(), None))
                }
                _ => Ok(self.schema_samples(o, &kind).unwrap_or((0, 0))).map(|(n, t)| (n, t, None)),
            })?;
            out.push(ObjectSummary {
                path: o.full_name.clone(),
                schema: kind.name().to_string(),
                samples,
                time_sampling: ts,
                counts,
            });
        }
        Ok(out)
    }

    /// Sample count of another schema: that of its first property with samples.
    fn schema_samples(&self, o: &Object, kind: &SchemaKind) -> Option<(usize, u32)> {
        let ar = &self.archive;
        let top = ar.properties(o).ok()?;
        let c = ar.compound(&top, kind.compound_name()?).ok()??;
        let name = if c.children.iter().any(|h| h.name == "P") {
            "P"
        } else {
            &c.children.first()?.name
        };
        let p = ar.property(&c, name).ok()??;
        Some((p.num_samples(), p.header.time_sampling))
    }

    /// Curves objects, depth first.
    pub fn curves_objects(&self) -> Result<Vec<Object>> {
        Ok(self
            .ctx(self.archive.objects())?
            .into_iter()
            .filter(|o| SchemaKind::of(o) == SchemaKind::Curves)
            .collect())
    }

    /// World matrix of the object at `path` at time `t` (product of its xform ancestors).
    pub fn world_matrix(&self, path: &str, t: f64) -> Result<Matrix> {
        let ar = &self.archive;
        let mut chain: Vec<Object> = Vec::new();
        let mut current = ar.top();
        for part in path.split('/').filter(|s| !s.is_empty()) {
            let next = self
                .ctx(ar.children(&current))?
                .into_iter()
                .find(|c| c.name == part)
                .ok_or_else(|| Error::invalid(format!("{}: no object {path}", self.path.display())))?;
            chain.push(next.clone());
            current = next;
        }
        let mut m = xform::IDENTITY;
        for o in chain.iter() {
            if SchemaKind::of(o) != SchemaKind::Xform {
                continue;
            }
            let x = self.ctx(XformReader::open(ar, o))?;
            let n = x.num_samples();
            if n == 0 {
                continue;
            }
            let i = ar.time_samplings[x.time_sampling() as usize].nearest_index(t, n);
            let local = self.ctx(x.local(ar, i))?;
            m = if self.ctx(x.inherits(ar, i))? {
                xform::mul(&local, &m)
            } else {
                local
            };
        }
        Ok(m)
    }

    /// All curves objects at frame `frame` (time = frame / fps), in world space, merged into one
    /// strand set with widths, root UVs and groom ids when present.
    pub fn read_curves_at_frame(&self, frame: f64, fps: f64) -> Result<Strands> {
        let ar = &self.archive;
        let t = frame / fps;
        let mut out = Strands::default();
        let mut widths: Vec<f32> = Vec::new();
        let mut have_width = true;
        let mut uvs: Vec<[f32; 2]> = Vec::new();
        let mut have_uv = true;
        let objects = self.curves_objects()?;
        if objects.is_empty() {
            return Err(Error::invalid(format!(
                "{}: the archive holds no curves",
                self.path.display()
            )));
        }
        for o in &objects {
            let c = self.ctx(CurvesReader::open(ar, o))?;
            let n = c.num_samples();
            if n == 0 {
                continue;
            }
            let i = ar.time_samplings[c.time_sampling() as usize].nearest_index(t, n);
            let mut p = self.ctx(c.positions(ar, i))?;
            let counts = self.ctx(c.counts(ar, i))?;
            let total: u64 = counts.iter().map(|&x| x as u64).sum();
            if total != p.len() as u64 {
                return Err(Error::corrupt(format!(
                    "curves {}: nVertices adds up to {total} but P has {} points",
                    o.full_name,
                    p.len()
                ))
                .in_file(&self.path));
            }
            let m = self.world_matrix(&o.full_name, t)?;
            if m != xform::IDENTITY {
                for q in p.iter_mut() {
                    let v = [q[0] as f64, q[1] as f64, q[2] as f64];
                    *q = std::array::from_fn(|k| {
                        (v[0] * m[0][k] + v[1] * m[1][k] + v[2] * m[2][k] + m[3][k]) as f32
                    });
                }
            }
            match self.ctx(c.widths(ar, i, counts.len(), p.len()))? {
                Some(w) if w.scope == Scope::Vertex && w.values.len() == p.len() => widths.extend(w.values),
                Some(w) if w.scope == Scope::Uniform && w.values.len() == counts.len() => widths.extend(
                    counts
                        .iter()
                        .zip(&w.values)
                        .flat_map(|(&c, &v)| std::iter::repeat_n(v, c as usize)),
                ),
                Some(w) if w.values.len() == 1 => widths.extend(std::iter::repeat_n(w.values[0], p.len())),
                _ => have_width = false,
            }
            match self.ctx(c.uvs(ar, i))? {
                Some(u) if u.values.len() == counts.len() => uvs.extend(u.values),
                _ => have_uv = false,
            }
            out.points.extend(p);
            out.counts.extend(counts);
        }
        let n = out.points.len();
        out.attrs = StrandAttrs {
            width: (have_width && widths.len() == n).then_some(Attr::PerVertex(widths)),
            root_uv: (have_uv && uvs.len() == out.counts.len()).then_some(uvs),
            ..Default::default()
        };
        out.validate().in_file(&self.path)?;
        Ok(out)
    }

    /// Frames per second of the archive (`_ai_DCC_FPS`, else the first uniform sampling).
    pub fn fps(&self) -> Option<f64> {
        self.archive
            .metadata
            .get("_ai_DCC_FPS")
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|f| *f > 0.0)
            .or_else(|| {
                self.archive
                    .time_samplings
                    .iter()
                    .skip(1)
                    .find_map(TimeSampling::fps)
            })
    }
}
