//! Binary USD layers (`.usdc`, Pixar's "crate" format, version 0.8.0), written by hand so that
//! frames stream: a crate file holds its values first and its tables last, so each frame's
//! `points` and `velocities` arrays go to the file as they arrive, and only their offsets (eight
//! bytes a frame) wait for the end, where the time samples, the tables (`TOKENS`, `STRINGS`,
//! `FIELDS`, `FIELDSETS`, `PATHS`, `SPECS`), the table of contents and the header's offset to
//! it are written. Memory stays one frame whatever the frame count, which is what a hero groom
//! needs (the text layer of 100K strands × 32 points × 240 frames is ~55 GB; the crate layer
//! stores each point in 12 bytes).
//!
//! The layout follows Pixar's `crateFile.cpp` as its reader expects it: an 88-byte bootstrap
//! (`PXR-USDC`, version, table of contents offset), values addressed by 64-bit `ValueRep`s
//! (bit 63 array, 62 inlined, 61 compressed, bits 48–55 the type, 48 bits of payload), arrays
//! as a 64-bit count and the elements, time samples as a relative jump to the times
//! (`std::vector<double>`), the times' rep, a jump to the values, their count and reps; the
//! tables' integers in Pixar's integer coding (deltas from the previous value: a most common
//! delta and 2-bit codes for 8-, 16- or 32-bit others), each table LZ4-compressed in a single
//! chunk. A prim's children are token vectors (type 41), not token arrays, under `primChildren` and
//! `properties` (the crate name of the text format's `propertyChildren`):
//! Pixar's library refuses a layer whose children are typed otherwise. Checked by Pixar's
//! library (usd-core) and Blender in `tests/usd_interop.rs`.

use std::collections::HashMap;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{UsdSpec, attr_values, interpolation};
use crate::atomic::AtomicFile;
use crate::error::{InFile, Result};
use crate::strands::Strands;
use crate::velocity::CentralDifference;

/// The crate version written: 64-bit array counts (0.7) and nothing newer.
const VERSION: [u8; 3] = [0, 8, 0];
/// Pixar's bootstrap: ident, version, table of contents offset, eight reserved words.
const BOOTSTRAP: usize = 88;

/// Value types of the crate format (Pixar's `crateDataTypes.h`).
mod ty {
    pub const INT: u64 = 3;
    pub const FLOAT: u64 = 8;
    pub const DOUBLE: u64 = 9;
    pub const STRING: u64 = 10;
    pub const TOKEN: u64 = 11;
    pub const VEC2F: u64 = 20;
    pub const VEC3F: u64 = 24;
    pub const TOKEN_VECTOR: u64 = 41;
    pub const SPECIFIER: u64 = 42;
    pub const VARIABILITY: u64 = 44;
    pub const TIME_SAMPLES: u64 = 46;
    pub const DOUBLE_VECTOR: u64 = 48;
}

/// Spec types (`SdfSpecType`).
#[derive(Clone, Copy)]
enum SpecKind {
    Attribute = 1,
    Prim = 6,
    PseudoRoot = 7,
}

/// A value's 64-bit reference: type, flags and payload (an offset or an inlined value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rep(u64);

impl Rep {
    fn new(ty: u64, array: bool, inlined: bool, payload: u64) -> Rep {
        Rep(((array as u64) << 63) | ((inlined as u64) << 62) | (ty << 48) | (payload & ((1 << 48) - 1)))
    }
    fn inlined(ty: u64, payload: u32) -> Rep {
        Rep::new(ty, false, true, payload as u64)
    }
}

/// A path of the layer: its parent (None for `/`), its last element and whether that is a
/// property.
struct PathNode {
    parent: Option<usize>,
    element: u32,
    property: bool,
}

/// A spec: its path index, type and fields (name token, value).
type Spec = (usize, SpecKind, Vec<(u32, Rep)>);

/// A crate layer being written: the values go to the file as they are given, the specs and
/// tables are kept (small) until [`CrateLayer::finish`].
struct CrateLayer {
    path: PathBuf,
    file: AtomicFile,
    pos: u64,
    tokens: Vec<String>,
    token_index: HashMap<String, u32>,
    strings: Vec<u32>,
    paths: Vec<PathNode>,
    specs: Vec<Spec>,
}

impl CrateLayer {
    pub fn create(path: PathBuf) -> Result<CrateLayer> {
        let mut file = AtomicFile::create(&path)?;
        file.write_all(&[0u8; BOOTSTRAP]).in_file(&path)?;
        let mut layer = CrateLayer {
            path,
            file,
            pos: BOOTSTRAP as u64,
            tokens: Vec::new(),
            token_index: HashMap::new(),
            strings: Vec::new(),
            paths: Vec::new(),
            specs: Vec::new(),
        };
        // Token 0 is never a property name: a property's element is stored negated.
        layer.token("");
        layer.paths.push(PathNode {
            parent: None,
            element: 0,
            property: false,
        });
        Ok(layer)
    }

    pub fn token(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.token_index.get(s) {
            return i;
        }
        let i = self.tokens.len() as u32;
        self.tokens.push(s.to_string());
        self.token_index.insert(s.to_string(), i);
        i
    }

    fn put(&mut self, bytes: &[u8]) -> Result<u64> {
        let at = self.pos;
        self.file.write_all(bytes).in_file(&self.path)?;
        self.pos += bytes.len() as u64;
        Ok(at)
    }

    /// A path below `parent` (a path index; 0 is `/`).
    pub fn child_path(&mut self, parent: usize, name: &str, property: bool) -> usize {
        let element = self.token(name);
        self.paths.push(PathNode {
            parent: Some(parent),
            element,
            property,
        });
        self.paths.len() - 1
    }

    /// A spec at `path` with its fields (name, value).
    pub fn spec(&mut self, path: usize, kind: SpecKind, fields: Vec<(&str, Rep)>) {
        let fields = fields.into_iter().map(|(n, r)| (self.token(n), r)).collect();
        self.specs.push((path, kind, fields));
    }

    pub fn token_value(&mut self, s: &str) -> Rep {
        let t = self.token(s);
        Rep::inlined(ty::TOKEN, t)
    }

    pub fn string_value(&mut self, s: &str) -> Rep {
        let t = self.token(s);
        self.strings.push(t);
        Rep::inlined(ty::STRING, (self.strings.len() - 1) as u32)
    }

    pub fn specifier_def() -> Rep {
        Rep::inlined(ty::SPECIFIER, 0)
    }

    pub fn variability_uniform() -> Rep {
        Rep::inlined(ty::VARIABILITY, 1)
    }

    pub fn double(&mut self, v: f64) -> Result<Rep> {
        let at = self.put(&v.to_le_bytes())?;
        Ok(Rep::new(ty::DOUBLE, false, false, at))
    }

    pub fn token_vector(&mut self, names: &[&str]) -> Result<Rep> {
        let mut b = (names.len() as u64).to_le_bytes().to_vec();
        for n in names {
            b.extend_from_slice(&self.token(n).to_le_bytes());
        }
        let at = self.put(&b)?;
        Ok(Rep::new(ty::TOKEN_VECTOR, false, false, at))
    }

    /// An array of `ty` elements given as their little-endian bytes (`count` of them).
    fn array(&mut self, ty: u64, count: usize, bytes: &[u8]) -> Result<Rep> {
        if count == 0 {
            return Ok(Rep::new(ty, true, false, 0));
        }
        let at = self.put(&(count as u64).to_le_bytes())?;
        self.put(bytes)?;
        Ok(Rep::new(ty, true, false, at))
    }

    pub fn ints(&mut self, v: &[i32]) -> Result<Rep> {
        let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.array(ty::INT, v.len(), &b)
    }

    pub fn floats(&mut self, v: &[f32]) -> Result<Rep> {
        let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.array(ty::FLOAT, v.len(), &b)
    }

    pub fn vec2fs(&mut self, v: &[[f32; 2]]) -> Result<Rep> {
        let b: Vec<u8> = v.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
        self.array(ty::VEC2F, v.len(), &b)
    }

    pub fn vec3fs(&mut self, v: &[[f32; 3]]) -> Result<Rep> {
        if cfg!(target_endian = "little") {
            self.array(ty::VEC3F, v.len(), bytemuck::cast_slice(v))
        } else {
            let b: Vec<u8> = v.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
            self.array(ty::VEC3F, v.len(), &b)
        }
    }

    /// Time samples: the times as a `std::vector<double>`, then the jumps, count and reps.
    pub fn time_samples(&mut self, samples: &[(f64, Rep)]) -> Result<Rep> {
        let mut times = (samples.len() as u64).to_le_bytes().to_vec();
        for (t, _) in samples {
            times.extend_from_slice(&t.to_le_bytes());
        }
        let times_at = self.put(&times)?;
        let mut b = Vec::with_capacity(32 + 8 * samples.len());
        // Each jump is relative to where it is stored; what it jumps to follows it.
        b.extend_from_slice(&8i64.to_le_bytes());
        b.extend_from_slice(
            &Rep::new(ty::DOUBLE_VECTOR, false, false, times_at)
                .0
                .to_le_bytes(),
        );
        b.extend_from_slice(&8i64.to_le_bytes());
        b.extend_from_slice(&(samples.len() as u64).to_le_bytes());
        for (_, r) in samples {
            b.extend_from_slice(&r.0.to_le_bytes());
        }
        let at = self.put(&b)?;
        Ok(Rep::new(ty::TIME_SAMPLES, false, false, at))
    }

    /// Writes the tables, the table of contents and the bootstrap, and renames the layer into
    /// place.
    pub fn finish(mut self) -> Result<PathBuf> {
        let mut sections: Vec<(&str, u64, u64)> = Vec::new();
        // TOKENS: count, uncompressed size, compressed text (NUL after each token).
        let mut text = Vec::new();
        for t in &self.tokens {
            text.extend_from_slice(t.as_bytes());
            text.push(0);
        }
        let mut b = (self.tokens.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(&(text.len() as u64).to_le_bytes());
        compressed(&mut b, &text);
        sections.push(("TOKENS", self.put(&b)?, b.len() as u64));
        // STRINGS: each string's token index.
        let mut b = (self.strings.len() as u64).to_le_bytes().to_vec();
        for s in &self.strings {
            b.extend_from_slice(&s.to_le_bytes());
        }
        sections.push(("STRINGS", self.put(&b)?, b.len() as u64));
        // FIELDS: every spec's (name, value) pairs, once each; FIELDSETS: each spec's field
        // indices, ended by ~0.
        let mut fields: Vec<(u32, Rep)> = Vec::new();
        let mut field_index: HashMap<(u32, u64), u32> = HashMap::new();
        let mut fieldsets: Vec<u32> = Vec::new();
        let mut spec_sets = Vec::with_capacity(self.specs.len());
        for (_, _, fs) in &self.specs {
            spec_sets.push(fieldsets.len() as u32);
            for &(name, rep) in fs {
                let i = *field_index.entry((name, rep.0)).or_insert_with(|| {
                    fields.push((name, rep));
                    (fields.len() - 1) as u32
                });
                fieldsets.push(i);
            }
            fieldsets.push(u32::MAX);
        }
        let mut b = (fields.len() as u64).to_le_bytes().to_vec();
        compressed(
            &mut b,
            &encode_ints(&fields.iter().map(|f| f.0 as i32).collect::<Vec<_>>()),
        );
        let reps: Vec<u8> = fields.iter().flat_map(|f| f.1.0.to_le_bytes()).collect();
        compressed(&mut b, &reps);
        sections.push(("FIELDS", self.put(&b)?, b.len() as u64));
        let mut b = (fieldsets.len() as u64).to_le_bytes().to_vec();
        compressed(
            &mut b,
            &encode_ints(&fieldsets.iter().map(|&i| i as i32).collect::<Vec<_>>()),
        );
        sections.push(("FIELDSETS", self.put(&b)?, b.len() as u64));
        // PATHS: the tree depth first from `/`.
        let (indexes, elements, jumps) = self.path_tree();
        let mut b = (self.paths.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(&(indexes.len() as u64).to_le_bytes());
        compressed(&mut b, &encode_ints(&indexes));
        compressed(&mut b, &encode_ints(&elements));
        compressed(&mut b, &encode_ints(&jumps));
        sections.push(("PATHS", self.put(&b)?, b.len() as u64));
        // SPECS: path, field set and type of each.
        let mut b = (self.specs.len() as u64).to_le_bytes().to_vec();
        let spec_paths: Vec<i32> = self.specs.iter().map(|s| s.0 as i32).collect();
        let spec_kinds: Vec<i32> = self.specs.iter().map(|s| s.1 as i32).collect();
        let sets: Vec<i32> = spec_sets.iter().map(|&s| s as i32).collect();
        compressed(&mut b, &encode_ints(&spec_paths));
        compressed(&mut b, &encode_ints(&sets));
        compressed(&mut b, &encode_ints(&spec_kinds));
        sections.push(("SPECS", self.put(&b)?, b.len() as u64));
        // Table of contents, then the bootstrap's offset to it.
        let mut b = (sections.len() as u64).to_le_bytes().to_vec();
        for (name, start, size) in &sections {
            let mut n = [0u8; 16];
            n[..name.len()].copy_from_slice(name.as_bytes());
            b.extend_from_slice(&n);
            b.extend_from_slice(&start.to_le_bytes());
            b.extend_from_slice(&size.to_le_bytes());
        }
        let toc = self.put(&b)?;
        let mut boot = [0u8; BOOTSTRAP];
        boot[..8].copy_from_slice(b"PXR-USDC");
        boot[8..11].copy_from_slice(&VERSION);
        boot[16..24].copy_from_slice(&toc.to_le_bytes());
        self.file.flush().in_file(&self.path)?;
        self.file.seek(SeekFrom::Start(0)).in_file(&self.path)?;
        self.file.write_all(&boot).in_file(&self.path)?;
        self.file.seek(SeekFrom::End(0)).in_file(&self.path)?;
        self.file.commit()?;
        Ok(self.path)
    }

    /// The path tree as Pixar's crate stores it, depth first from `/`: each node's path index,
    /// its element's token (negated for a property) and a jump: −1 a child follows and no
    /// sibling, 0 a sibling follows and no child, −2 neither, n > 0 the child follows and the
    /// sibling is n nodes on.
    fn path_tree(&self) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); self.paths.len()];
        for (i, p) in self.paths.iter().enumerate() {
            if let Some(parent) = p.parent {
                children[parent].push(i);
            }
        }
        let (mut indexes, mut elements, mut jumps) = (Vec::new(), Vec::new(), Vec::new());
        // (node, has a sibling after it); the sibling's jump is filled when it is reached.
        fn visit(
            paths: &[PathNode],
            children: &[Vec<usize>],
            node: usize,
            sibling: bool,
            out: &mut (&mut Vec<i32>, &mut Vec<i32>, &mut Vec<i32>),
        ) {
            let at = out.0.len();
            out.0.push(node as i32);
            let e = paths[node].element as i32;
            out.1.push(if paths[node].property { -e } else { e });
            out.2.push(0);
            let kids = &children[node];
            for (k, &c) in kids.iter().enumerate() {
                visit(paths, children, c, k + 1 < kids.len(), out);
            }
            out.2[at] = match (!kids.is_empty(), sibling) {
                (true, true) => (out.0.len() - at) as i32,
                (true, false) => -1,
                (false, true) => 0,
                (false, false) => -2,
            };
        }
        visit(
            &self.paths,
            &children,
            0,
            false,
            &mut (&mut indexes, &mut elements, &mut jumps),
        );
        (indexes, elements, jumps)
    }
}

/// Appends Pixar's fast compression of `data` (one chunk: a 0 byte and an LZ4 block) after its
/// 64-bit size.
fn compressed(out: &mut Vec<u8>, data: &[u8]) {
    let block = lz4_flex::block::compress(data);
    out.extend_from_slice(&(block.len() as u64 + 1).to_le_bytes());
    out.push(0);
    out.extend_from_slice(&block);
}

/// Pixar's integer coding of 32-bit integers: the most common delta from the previous value
/// (4 bytes), 2 bits per integer (0: that delta, 1/2/3: an 8/16/32-bit delta follows), then
/// the other deltas.
fn encode_ints(values: &[i32]) -> Vec<u8> {
    let mut deltas = Vec::with_capacity(values.len());
    let mut prev = 0i32;
    for &v in values {
        deltas.push(v.wrapping_sub(prev));
        prev = v;
    }
    let mut counts: HashMap<i32, usize> = HashMap::new();
    for &d in &deltas {
        *counts.entry(d).or_default() += 1;
    }
    // The most frequent delta, the smallest among equals (deterministic).
    let common = counts
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map_or(0, |(&d, _)| d);
    let mut out = common.to_le_bytes().to_vec();
    let mut codes = vec![0u8; (values.len() * 2).div_ceil(8)];
    let mut rest = Vec::new();
    for (i, &d) in deltas.iter().enumerate() {
        let code = if d == common {
            0
        } else if i8::try_from(d).is_ok() {
            rest.push(d as i8 as u8);
            1
        } else if let Ok(s) = i16::try_from(d) {
            rest.extend_from_slice(&s.to_le_bytes());
            2
        } else {
            rest.extend_from_slice(&d.to_le_bytes());
            3
        };
        codes[i / 4] |= code << (2 * (i % 4));
    }
    out.extend_from_slice(&codes);
    out.extend_from_slice(&rest);
    out
}

/// A strand cache as a crate layer: the same prims, attributes and metadata as the text layer
/// ([`super::UsdWriter`]), each frame's `points` and `velocities` written as they come.
pub(super) struct CrateCurves {
    layer: CrateLayer,
    root: String,
    name: String,
    doc: String,
    fps: f64,
    start: f64,
    meters_per_unit: f64,
    up_axis: char,
    /// The attributes known at the start: name and fields.
    attributes: Vec<(String, Vec<(&'static str, Rep)>)>,
    points: Vec<(f64, Rep)>,
    velocities: Option<(CentralDifference, Vec<(f64, Rep)>)>,
    extents: Vec<(f64, [[f32; 3]; 2])>,
}

impl CrateCurves {
    pub fn create(path: &Path, strands: &Strands, spec: &UsdSpec) -> Result<CrateCurves> {
        let mut layer = CrateLayer::create(path.to_path_buf())?;
        let mut attributes = Vec::new();
        let uniform = CrateLayer::variability_uniform();
        for (name, value) in [("type", "linear"), ("wrap", "nonperiodic")] {
            let fields = vec![
                ("typeName", layer.token_value("token")),
                ("variability", uniform),
                ("default", layer.token_value(value)),
            ];
            attributes.push((name.to_string(), fields));
        }
        let counts: Vec<i32> = strands.counts.iter().map(|&c| c as i32).collect();
        let fields = vec![
            ("typeName", layer.token_value("int[]")),
            ("default", layer.ints(&counts)?),
        ];
        attributes.push(("curveVertexCounts".into(), fields));
        let a = &strands.attrs;
        let mut primvar = |layer: &mut CrateLayer, name: &str, ty: &str, value: Rep, interp: &str| {
            let fields = vec![
                ("typeName", layer.token_value(ty)),
                ("default", value),
                ("interpolation", layer.token_value(interp)),
            ];
            attributes.push((name.to_string(), fields));
        };
        if let Some(w) = &a.width {
            let v = layer.floats(&attr_values(w))?;
            primvar(&mut layer, "widths", "float[]", v, interpolation(w));
        }
        if let Some(c) = &a.color {
            let v = layer.vec3fs(&attr_values(c))?;
            primvar(
                &mut layer,
                "primvars:displayColor",
                "color3f[]",
                v,
                interpolation(c),
            );
        }
        if let Some(t) = &a.transparency {
            let opacity: Vec<f32> = attr_values(t).into_iter().map(|t| 1.0 - t).collect();
            let v = layer.floats(&opacity)?;
            primvar(
                &mut layer,
                "primvars:displayOpacity",
                "float[]",
                v,
                interpolation(t),
            );
        }
        if let Some(uv) = &a.root_uv {
            let v = layer.vec2fs(uv)?;
            primvar(&mut layer, "primvars:st", "texCoord2f[]", v, "uniform");
        }
        if let Some(id) = &a.id {
            let v = layer.ints(&id.iter().map(|&i| i as i32).collect::<Vec<_>>())?;
            primvar(&mut layer, "primvars:groom_id", "int[]", v, "uniform");
        }
        if let Some(g) = &a.guide {
            let v = layer.ints(&g.iter().map(|&b| b as i32).collect::<Vec<_>>())?;
            primvar(&mut layer, "primvars:groom_guide", "int[]", v, "uniform");
        }
        Ok(CrateCurves {
            layer,
            root: spec.root.to_string(),
            name: spec.name.to_string(),
            doc: spec.doc.to_string(),
            fps: spec.fps,
            start: spec.start_frame,
            meters_per_unit: spec.meters_per_unit,
            up_axis: spec.up_axis,
            attributes,
            points: Vec::new(),
            velocities: spec
                .velocities
                .then(|| (CentralDifference::new(spec.fps), Vec::new())),
            extents: Vec::new(),
        })
    }

    pub fn write_frame(&mut self, frame: f64, positions: &[[f32; 3]], extent: [[f32; 3]; 2]) -> Result<()> {
        let rep = self.layer.vec3fs(positions)?;
        self.points.push((frame, rep));
        self.extents.push((frame, extent));
        if let Some((d, samples)) = &mut self.velocities
            && let Some((at, _, v)) = d.push(frame, positions)
        {
            samples.push((at, self.layer.vec3fs(v)?));
        }
        Ok(())
    }

    pub fn finish(mut self: Box<Self>) -> Result<PathBuf> {
        let end = self.points.last().map_or(self.start, |p| p.0);
        let l = &mut self.layer;
        let mut properties = std::mem::take(&mut self.attributes);
        let points = l.time_samples(&self.points)?;
        properties.push((
            "points".into(),
            vec![("typeName", l.token_value("point3f[]")), ("timeSamples", points)],
        ));
        if let Some((mut d, mut samples)) = self.velocities.take() {
            if let Some((at, _, v)) = d.finish() {
                samples.push((at, l.vec3fs(v)?));
            }
            let v = l.time_samples(&samples)?;
            properties.push((
                "velocities".into(),
                vec![("typeName", l.token_value("vector3f[]")), ("timeSamples", v)],
            ));
        }
        let mut extents = Vec::with_capacity(self.extents.len());
        for (at, e) in &self.extents {
            extents.push((*at, l.vec3fs(e)?));
        }
        let extent = l.time_samples(&extents)?;
        properties.push((
            "extent".into(),
            vec![("typeName", l.token_value("float3[]")), ("timeSamples", extent)],
        ));
        // The specs: `/` with the stage metadata, the Xform, the curves and their attributes.
        let up = l.token_value(&self.up_axis.to_string());
        let fields = vec![
            ("defaultPrim", l.token_value(&self.root)),
            ("documentation", l.string_value(&self.doc)),
            ("endTimeCode", l.double(end)?),
            ("framesPerSecond", l.double(self.fps)?),
            ("metersPerUnit", l.double(self.meters_per_unit)?),
            ("startTimeCode", l.double(self.start)?),
            ("timeCodesPerSecond", l.double(self.fps)?),
            ("upAxis", up),
            ("primChildren", l.token_vector(&[&self.root])?),
        ];
        l.spec(0, SpecKind::PseudoRoot, fields);
        let root = l.child_path(0, &self.root, false);
        let fields = vec![
            ("specifier", CrateLayer::specifier_def()),
            ("typeName", l.token_value("Xform")),
            ("primChildren", l.token_vector(&[&self.name])?),
        ];
        l.spec(root, SpecKind::Prim, fields);
        let curves = l.child_path(root, &self.name, false);
        let names: Vec<&str> = properties.iter().map(|p| p.0.as_str()).collect();
        let fields = vec![
            ("specifier", CrateLayer::specifier_def()),
            ("typeName", l.token_value("BasisCurves")),
            ("properties", l.token_vector(&names)?),
        ];
        l.spec(curves, SpecKind::Prim, fields);
        for (name, fields) in properties {
            let p = l.child_path(curves, &name, true);
            l.spec(p, SpecKind::Attribute, fields);
        }
        self.layer.finish()
    }
}
