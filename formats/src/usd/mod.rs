//! USD strand caches as text layers (`.usda`, also written for `.usd`) or binary crate layers
//! (`.usdc`, [`crate_layer`]): one `UsdGeomBasisCurves`
//! prim of linear curves with time-sampled `points` and `velocities`, widths, root UVs (`st`),
//! ids, guide flags and colours as primvars, and the stage metadata DCCs read (`upAxis`,
//! `metersPerUnit` = 0.01 for centimetres, `timeCodesPerSecond`, start and end time codes).
//!
//! Each frame's `extent` (the points' bounds grown by half the widest width, as
//! `UsdGeomCurves::ComputeExtent` defines it) is time-sampled too, so renderers and DCCs can
//! cull and frame the curves without reading every point.
//!
//! Frames stream: points are written as they arrive, velocities (central differences, in units
//! per second as `UsdGeomPointBased` defines them) go to a temporary file appended at the end,
//! and the end time code is patched into a fixed-width field of the header. Numbers are written
//! as the shortest decimal that reads back to the same `f32`, so a reader gets every point
//! bit for bit. Checked by Pixar's library (`../shared/tools/usd_inspect.py`).

mod crate_layer;
pub mod read;

use crate_layer::CrateCurves;

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::atomic::AtomicFile;
use crate::error::{Error, InFile, Result};
use crate::strands::{Attr, Strands};
use crate::velocity::CentralDifference;

/// Width of the patched `endTimeCode` field.
const END_FIELD: usize = 24;

/// Streams an animated strand cache into a USD layer: text (`.usda`, `.usd`) or binary
/// (`.usdc`), by the file's extension.
pub struct UsdWriter {
    path: PathBuf,
    points: usize,
    frames: usize,
    last_frame: f64,
    /// Half the widest width: what each frame's bounds grow by.
    pad: f32,
    layer: Layer,
}

enum Layer {
    Text(Box<TextLayer>),
    Crate(Box<CrateCurves>),
}

/// The text layer being written.
struct TextLayer {
    path: PathBuf,
    file: AtomicFile,
    /// Velocity samples, spooled to a temporary file (never committed) and appended to the
    /// layer at the end.
    velocities: Option<(CentralDifference, AtomicFile)>,
    /// Offset of the `endTimeCode` field.
    end_at: u64,
    last_frame: f64,
    line: String,
    /// Each frame's bounds (small: kept until the end).
    extents: Vec<(f64, [[f32; 3]; 2])>,
}

/// The prim names and provenance of a layer.
pub struct UsdSpec<'a> {
    /// Root prim (an Xform), the stage's default prim.
    pub root: &'a str,
    /// The curves prim under it.
    pub name: &'a str,
    /// The layer's `doc` string (the writer and its build).
    pub doc: &'a str,
    pub fps: f64,
    pub start_frame: f64,
    /// Write `velocities` (for motion blur).
    pub velocities: bool,
    /// The stage's `metersPerUnit` (0.01: centimetres) and `upAxis` ('Y' or 'Z').
    pub meters_per_unit: f64,
    pub up_axis: char,
}

/// Whether `s` is a USD prim name: letters, digits and `_`, not starting with a digit.
pub fn identifier(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn quoted(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if c.is_control() => {}
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A frame number as a time code (integers without a fraction).
fn time(t: f64) -> String {
    if t.fract() == 0.0 && t.abs() < 1e15 {
        format!("{}", t as i64)
    } else {
        format!("{t}")
    }
}

/// Appends `[v, v, …]` of floats.
fn floats(o: &mut String, v: impl Iterator<Item = f32>) {
    use std::fmt::Write as _;
    o.push('[');
    for (i, x) in v.enumerate() {
        if i > 0 {
            o.push_str(", ");
        }
        let _ = write!(o, "{x}");
    }
    o.push(']');
}

/// Appends `[(x, y, z), …]`.
fn tuples<const N: usize>(o: &mut String, v: &[[f32; N]]) {
    use std::fmt::Write as _;
    o.push('[');
    for (i, p) in v.iter().enumerate() {
        if i > 0 {
            o.push_str(", ");
        }
        o.push('(');
        for (k, x) in p.iter().enumerate() {
            if k > 0 {
                o.push_str(", ");
            }
            let _ = write!(o, "{x}");
        }
        o.push(')');
    }
    o.push(']');
}

/// `interpolation` of a per-strand or per-vertex attribute.
fn interpolation<T>(a: &Attr<T>) -> &'static str {
    match a {
        Attr::Constant(_) => "constant",
        Attr::PerStrand(_) => "uniform",
        Attr::PerVertex(_) => "vertex",
    }
}

fn attr_values<T: Copy>(a: &Attr<T>) -> Vec<T> {
    match a {
        Attr::Constant(c) => vec![*c],
        Attr::PerStrand(v) | Attr::PerVertex(v) => v.clone(),
    }
}

/// One time sample of velocities, as a line of the `velocities.timeSamples` block.
fn spool_velocities(
    spool: &mut AtomicFile,
    line: &mut String,
    at: f64,
    v: &[[f32; 3]],
) -> std::io::Result<()> {
    line.clear();
    line.push_str(&format!("            {}: ", time(at)));
    tuples(line, v);
    line.push_str(",\n");
    spool.write_all(line.as_bytes())
}

impl UsdWriter {
    /// Starts a layer for curves with the topology and attributes of `strands`: binary when
    /// `path` ends in `.usdc`, text otherwise.
    pub fn create(path: impl AsRef<Path>, strands: &Strands, spec: &UsdSpec) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        if !identifier(spec.root) || !identifier(spec.name) {
            return Err(Error::invalid(format!(
                "USD prim names must be identifiers, got {:?} / {:?}",
                spec.root, spec.name
            ))
            .in_file(&path));
        }
        if !(spec.meters_per_unit > 0.0
            && spec.meters_per_unit.is_finite()
            && matches!(spec.up_axis, 'Y' | 'Z'))
        {
            return Err(Error::invalid(format!(
                "USD stage space: metersPerUnit {} and upAxis {:?} (a positive number, Y or Z)",
                spec.meters_per_unit, spec.up_axis
            ))
            .in_file(&path));
        }
        if !(spec.fps > 0.0 && spec.fps.is_finite()) {
            return Err(Error::invalid(format!("frame rate {} is not positive", spec.fps)).in_file(&path));
        }
        strands.validate().map_err(|e| e.in_file(&path))?;
        let binary = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("usdc"));
        let layer = if binary {
            Layer::Crate(Box::new(CrateCurves::create(&path, strands, spec)?))
        } else {
            Layer::Text(Box::new(TextLayer::create(&path, strands, spec)?))
        };
        let pad = strands
            .attrs
            .width
            .as_ref()
            .map(|w| 0.5 * attr_values(w).into_iter().fold(0.0f32, f32::max))
            .unwrap_or(0.0);
        Ok(UsdWriter {
            path,
            points: strands.points.len(),
            frames: 0,
            last_frame: f64::NEG_INFINITY,
            pad,
            layer,
        })
    }

    /// Writes the positions of `frame` (frames must increase).
    pub fn write_frame(&mut self, frame: f64, positions: &[[f32; 3]]) -> Result<()> {
        if positions.len() != self.points {
            return Err(Error::invalid(format!(
                "frame {frame} has {} points where {} are expected",
                positions.len(),
                self.points
            ))
            .in_file(&self.path));
        }
        if !(frame.is_finite() && frame > self.last_frame) {
            return Err(
                Error::invalid(format!("frame {frame} does not follow frame {}", self.last_frame))
                    .in_file(&self.path),
            );
        }
        let Some(extent) = extent(positions, self.pad) else {
            return Err(
                Error::invalid(format!("frame {frame} holds non-finite positions")).in_file(&self.path),
            );
        };
        match &mut self.layer {
            Layer::Text(t) => t.write_frame(frame, positions, extent),
            Layer::Crate(c) => c.write_frame(frame, positions, extent),
        }?;
        self.frames += 1;
        self.last_frame = frame;
        Ok(())
    }

    /// Completes the layer and renames it into place.
    pub fn finish(self) -> Result<PathBuf> {
        if self.frames == 0 {
            return Err(Error::invalid("a cache needs at least one frame").in_file(&self.path));
        }
        match self.layer {
            Layer::Text(t) => t.finish(),
            Layer::Crate(c) => c.finish(),
        }
    }
}

/// The points' bounds grown by `pad` (zero for no points), or None when a coordinate is not
/// finite: one pass over the frame for both.
fn extent(positions: &[[f32; 3]], pad: f32) -> Option<[[f32; 3]; 2]> {
    if positions.is_empty() {
        return Some([[0.0; 3]; 2]);
    }
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    let mut finite = true;
    for p in positions {
        for k in 0..3 {
            finite &= p[k].is_finite();
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    finite.then(|| [lo.map(|v| v - pad), hi.map(|v| v + pad)])
}

impl TextLayer {
    fn create(path: &Path, strands: &Strands, spec: &UsdSpec) -> Result<Self> {
        let path = path.to_path_buf();
        let mut file = AtomicFile::create(&path)?;
        let mut h = String::new();
        h.push_str("#usda 1.0\n(\n");
        h.push_str(&format!("    defaultPrim = {}\n", quoted(spec.root)));
        h.push_str(&format!("    doc = {}\n", quoted(spec.doc)));
        let end_prefix = "    endTimeCode = ";
        let end_at = (h.len() + end_prefix.len()) as u64;
        h.push_str(end_prefix);
        h.push_str(&format!("{:<END_FIELD$}\n", time(spec.start_frame)));
        h.push_str(&format!("    framesPerSecond = {}\n", spec.fps));
        h.push_str(&format!("    metersPerUnit = {}\n", spec.meters_per_unit));
        h.push_str(&format!("    startTimeCode = {}\n", time(spec.start_frame)));
        h.push_str(&format!("    timeCodesPerSecond = {}\n", spec.fps));
        h.push_str(&format!("    upAxis = \"{}\"\n)\n\n", spec.up_axis));
        h.push_str(&format!(
            "def Xform {}\n{{\n    def BasisCurves {}\n    {{\n",
            quoted(spec.root),
            quoted(spec.name)
        ));
        h.push_str("        uniform token type = \"linear\"\n");
        h.push_str("        uniform token wrap = \"nonperiodic\"\n");
        h.push_str("        int[] curveVertexCounts = [");
        for (i, c) in strands.counts.iter().enumerate() {
            if i > 0 {
                h.push_str(", ");
            }
            h.push_str(&c.to_string());
        }
        h.push_str("]\n");
        let a = &strands.attrs;
        if let Some(w) = &a.width {
            h.push_str("        float[] widths = ");
            floats(&mut h, attr_values(w).into_iter());
            h.push_str(&format!(
                " (\n            interpolation = \"{}\"\n        )\n",
                interpolation(w)
            ));
        }
        if let Some(c) = &a.color {
            h.push_str("        color3f[] primvars:displayColor = ");
            tuples(&mut h, &attr_values(c));
            h.push_str(&format!(
                " (\n            interpolation = \"{}\"\n        )\n",
                interpolation(c)
            ));
        }
        if let Some(t) = &a.transparency {
            h.push_str("        float[] primvars:displayOpacity = ");
            floats(&mut h, attr_values(t).into_iter().map(|t| 1.0 - t));
            h.push_str(&format!(
                " (\n            interpolation = \"{}\"\n        )\n",
                interpolation(t)
            ));
        }
        if let Some(uv) = &a.root_uv {
            h.push_str("        texCoord2f[] primvars:st = ");
            tuples(&mut h, uv);
            h.push_str(" (\n            interpolation = \"uniform\"\n        )\n");
        }
        if let Some(id) = &a.id {
            h.push_str("        int[] primvars:groom_id = [");
            h.push_str(&id.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", "));
            h.push_str("] (\n            interpolation = \"uniform\"\n        )\n");
        }
        if let Some(g) = &a.guide {
            h.push_str("        int[] primvars:groom_guide = [");
            h.push_str(
                &g.iter()
                    .map(|v| if *v { "1" } else { "0" })
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            h.push_str("] (\n            interpolation = \"uniform\"\n        )\n");
        }
        h.push_str("        point3f[] points.timeSamples = {\n");
        file.write_all(h.as_bytes()).in_file(&path)?;
        let velocities = if spec.velocities {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            Some((
                CentralDifference::new(spec.fps),
                AtomicFile::create(path.with_file_name(format!("{name}.velocities")))?,
            ))
        } else {
            None
        };
        Ok(TextLayer {
            path,
            file,
            velocities,
            end_at,
            last_frame: f64::NEG_INFINITY,
            line: String::new(),
            extents: Vec::new(),
        })
    }

    fn write_frame(&mut self, frame: f64, positions: &[[f32; 3]], extent: [[f32; 3]; 2]) -> Result<()> {
        self.line.clear();
        self.line.push_str(&format!("            {}: ", time(frame)));
        tuples(&mut self.line, positions);
        self.line.push_str(",\n");
        self.file.write_all(self.line.as_bytes()).in_file(&self.path)?;
        self.extents.push((frame, extent));
        self.last_frame = frame;
        if let Some((d, spool)) = &mut self.velocities
            && let Some((at, _, v)) = d.push(frame, positions)
        {
            spool_velocities(spool, &mut self.line, at, v).in_file(&self.path)?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<PathBuf> {
        if let Some((d, spool)) = &mut self.velocities
            && let Some((at, _, v)) = d.finish()
        {
            spool_velocities(spool, &mut self.line, at, v).in_file(&self.path)?;
        }
        let path = self.path.clone();
        self.file.write_all(b"        }\n").in_file(&path)?;
        if let Some((_, mut v)) = self.velocities.take() {
            self.file
                .write_all(b"        vector3f[] velocities.timeSamples = {\n")
                .in_file(&path)?;
            v.writer().flush().in_file(&path)?;
            let f = v.writer().get_mut();
            f.seek(SeekFrom::Start(0)).in_file(&path)?;
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let n = f.read(&mut buf).in_file(&path)?;
                if n == 0 {
                    break;
                }
                self.file.write_all(&buf[..n]).in_file(&path)?;
            }
            self.file.write_all(b"        }\n").in_file(&path)?;
            drop(v); // never committed: removes the temporary file
        }
        self.file
            .write_all(b"        float3[] extent.timeSamples = {\n")
            .in_file(&path)?;
        for (at, e) in std::mem::take(&mut self.extents) {
            self.line.clear();
            self.line.push_str(&format!("            {}: ", time(at)));
            tuples(&mut self.line, &e);
            self.line.push_str(",\n");
            self.file.write_all(self.line.as_bytes()).in_file(&path)?;
        }
        self.file.write_all(b"        }\n").in_file(&path)?;
        self.file.write_all(b"    }\n}\n").in_file(&path)?;
        let end = time(self.last_frame);
        if end.len() > END_FIELD {
            return Err(Error::invalid(format!("end frame {end} is too long a number")).in_file(&path));
        }
        self.file.flush().in_file(&path)?;
        self.file.seek(SeekFrom::Start(self.end_at)).in_file(&path)?;
        self.file.write_all(end.as_bytes()).in_file(&path)?;
        self.file.seek(SeekFrom::End(0)).in_file(&path)?;
        self.file.commit()?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strands::StrandAttrs;

    #[test]
    fn a_layer_holds_every_frame_and_patches_its_end() {
        let dir = std::env::temp_dir().join(format!("tress-usd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let strands = Strands::new(
            vec![[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.5, 0.1]],
            vec![2, 2],
            StrandAttrs {
                width: Some(Attr::Constant(0.01)),
                root_uv: Some(vec![[0.25, 0.5], [0.75, 0.5]]),
                ..Default::default()
            },
        )
        .unwrap();
        let path = dir.join("c.usda");
        let spec = UsdSpec {
            root: "groom",
            name: "hair",
            doc: "test",
            fps: 24.0,
            start_frame: 1001.0,
            velocities: true,
            meters_per_unit: 0.01,
            up_axis: 'Y',
        };
        let mut w = UsdWriter::create(&path, &strands, &spec).unwrap();
        for f in 0..3 {
            let p: Vec<[f32; 3]> = strands
                .points
                .iter()
                .map(|q| [q[0] + 0.1 * f as f32, q[1], q[2]])
                .collect();
            w.write_frame(1001.0 + f as f64, &p).unwrap();
        }
        w.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("endTimeCode = 1003 "), "{text}");
        assert!(text.contains("1002: [(0.1, 0, 0), (0.1, 1, 0)"), "{text}");
        // 0.1 cm per frame at 24 fps: 2.4 cm/s at every frame.
        let vel = &text[text.find("velocities.timeSamples").unwrap()..];
        for f in ["1001", "1002", "1003"] {
            let at = vel.find(&format!("{f}: [(")).unwrap() + f.len() + 4;
            let v: f32 = vel[at..].split(',').next().unwrap().parse().unwrap();
            assert!((v - 2.4).abs() < 1e-5, "frame {f}: {v}");
        }
        // Frame 1003's bounds: x from 0.2 to 1.2, y 0 to 1.5, z 0 to 0.1, grown by 0.005.
        let ext = &text[text.find("extent.timeSamples").unwrap()..];
        let line = &ext[ext.find("1003: [").unwrap() + 7..];
        let nums: Vec<f32> = line[..line.find(']').unwrap()]
            .split(|c: char| c == '(' || c == ')' || c == ',')
            .filter_map(|t| t.trim().parse().ok())
            .collect();
        let want = [0.195, -0.005, -0.005, 1.205, 1.505, 0.105];
        assert_eq!(nums.len(), 6, "{line}");
        for (a, b) in nums.iter().zip(want) {
            assert!((a - b).abs() < 1e-6, "{nums:?} against {want:?}");
        }
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "temporary files left"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The same cache written as a binary and as a text layer, both read back by the
    /// `openusd` crate (an implementation of its own, independent of the writers): the same
    /// stage metadata, prims, curves, attributes and every time sample of points, velocities and
    /// extents, and the points bit for bit as given. Frames 1001–1200: more than the 255 an
    /// 8-bit delta holds in the tables.
    #[test]
    fn a_binary_layer_reads_back_as_its_text_layer() {
        let dir = std::env::temp_dir().join(format!("tress-usdc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let strands = Strands::new(
            vec![
                [0.0, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [1.0, 0.0, 0.0],
                [1.0, 1.5, 0.1],
                [2.0, 0.5, 0.3],
            ],
            vec![2, 3],
            StrandAttrs {
                width: Some(Attr::PerVertex(vec![0.01, 0.02, 0.03, 0.02, 0.01])),
                color: Some(Attr::PerStrand(vec![[0.5, 0.25, 0.125], [0.1, 0.2, 0.3]])),
                transparency: Some(Attr::Constant(0.25)),
                root_uv: Some(vec![[0.25, 0.5], [0.75, 0.5]]),
                id: Some(vec![7, 9]),
                guide: Some(vec![true, false]),
            },
        )
        .unwrap();
        let spec = UsdSpec {
            root: "character",
            name: "beard",
            doc: "a test \"doc\"",
            fps: 25.0,
            start_frame: 1001.0,
            velocities: true,
            meters_per_unit: 1.0,
            up_axis: 'Z',
        };
        let frame = |f: usize| -> Vec<[f32; 3]> {
            strands
                .points
                .iter()
                .enumerate()
                .map(|(i, q)| {
                    [
                        q[0] + 0.1 * f as f32,
                        q[1] * (1.0 + (f + i) as f32 * 1e-3).sin(),
                        q[2] / 3.0,
                    ]
                })
                .collect()
        };
        let files = ["c.usdc", "c.usda"].map(|n| dir.join(n));
        for path in &files {
            let mut w = UsdWriter::create(path, &strands, &spec).unwrap();
            for f in 0..200 {
                w.write_frame(1001.0 + f as f64, &frame(f)).unwrap();
            }
            w.finish().unwrap();
        }
        let bytes = std::fs::read(&files[0]).unwrap();
        assert_eq!(&bytes[..8], b"PXR-USDC");
        // Deterministic: the same cache gives the same bytes.
        let again = dir.join("again.usdc");
        let mut w = UsdWriter::create(&again, &strands, &spec).unwrap();
        for f in 0..200 {
            w.write_frame(1001.0 + f as f64, &frame(f)).unwrap();
        }
        w.finish().unwrap();
        assert!(std::fs::read(&again).unwrap() == bytes, "two writes differ");
        std::fs::remove_file(&again).unwrap();
        let [binary, text] = files.map(|p| read::UsdFile::open(p).unwrap());
        assert_eq!(binary.info().unwrap(), text.info().unwrap());
        assert_eq!(binary.info().unwrap().end_time_code, Some(1200.0));
        assert_eq!(binary.prims().unwrap(), text.prims().unwrap());
        let prim = "/character/beard";
        for attr in ["points", "velocities", "extent"] {
            let times = binary.sample_times(prim, attr).unwrap();
            assert_eq!(times.len(), 200, "{attr}");
            assert_eq!(times, text.sample_times(prim, attr).unwrap(), "{attr}");
        }
        for f in [0, 1, 137, 199] {
            let t = Some(1001.0 + f as f64);
            let b = binary.curves(prim, t).unwrap();
            assert_eq!(b, text.curves(prim, t).unwrap(), "frame {f}");
            assert_eq!(b.points, frame(f), "frame {f}");
            assert_eq!(b.attrs.id, Some(vec![7, 9]));
            for attr in [
                "velocities",
                "extent",
                "primvars:displayOpacity",
                "primvars:groom_guide",
                "type",
            ] {
                assert_eq!(
                    binary.value(prim, attr, t).unwrap(),
                    text.value(prim, attr, t).unwrap(),
                    "{attr} at frame {f}"
                );
            }
        }
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            2,
            "temporary files left"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
