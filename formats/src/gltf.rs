//! glTF 2.0 (`.gltf` + `.bin`, or `.glb`) through the `gltf` crate: the node hierarchy with rest
//! transforms, node animations (translation, rotation, scale channels; linear, step and cubic
//! spline samplers) and triangle meshes. Evaluation lives above this crate.
//!
//! A head track needs only nodes and animations: the rest of a file (meshes, materials,
//! textures, and the extensions they require, such as Draco mesh compression) is checked but
//! its problems only make the meshes unavailable ([`GltfDoc::meshes_unreadable`] says why),
//! never the animation. Errors are one short paragraph: the first problems and how many more.

use std::path::Path;

use crate::error::{Error, InFile, Result};
use crate::mesh::TriMesh;

#[derive(Clone, Debug, PartialEq)]
pub struct GltfNode {
    pub name: Option<String>,
    pub parent: Option<usize>,
    pub translation: [f32; 3],
    /// Quaternion x, y, z, w.
    pub rotation: [f32; 4],
    pub scale: [f32; 3],
    pub mesh: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelPath {
    Translation,
    Rotation,
    Scale,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    Linear,
    Step,
    /// Outputs come as (in-tangent, value, out-tangent) triples per key.
    CubicSpline,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    pub node: usize,
    pub path: ChannelPath,
    pub interpolation: Interpolation,
    pub times: Vec<f32>,
    /// Values padded to 4 components (x, y, z[, w]).
    pub values: Vec<[f32; 4]>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GltfAnimation {
    pub name: Option<String>,
    pub channels: Vec<Channel>,
}

impl GltfAnimation {
    /// First and last key time of all channels (s).
    pub fn span(&self) -> (f32, f32) {
        let lo = self
            .channels
            .iter()
            .filter_map(|c| c.times.first())
            .fold(f32::INFINITY, |a, &b| a.min(b));
        let hi = self
            .channels
            .iter()
            .filter_map(|c| c.times.last())
            .fold(f32::NEG_INFINITY, |a, &b| a.max(b));
        if lo > hi { (0.0, 0.0) } else { (lo, hi) }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct GltfDoc {
    pub nodes: Vec<GltfNode>,
    pub animations: Vec<GltfAnimation>,
    /// Triangle meshes by mesh index, in mesh (not world) space (empty when unreadable).
    pub meshes: Vec<TriMesh>,
    /// Why the meshes were not read (e.g. a mesh compression extension tress does not decode),
    /// although the nodes and animations were.
    pub meshes_unreadable: Option<String>,
}

impl GltfDoc {
    pub fn node_by_name(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name.as_deref() == Some(name))
    }
}

fn gltf_error(e: gltf::Error) -> Error {
    Error::corrupt(format!("not a readable glTF file ({e})"))
}

/// Problems listed at most in an error; the rest are counted.
const SHOWN: usize = 3;

/// `what`: the first [`SHOWN`] of `problems` and how many more.
fn summary(what: &str, problems: &[String]) -> String {
    let mut s = format!("{what}: {}", problems[..problems.len().min(SHOWN)].join("; "));
    if problems.len() > SHOWN {
        s.push_str(&format!("; and {} more", problems.len() - SHOWN));
    }
    s
}

/// The gltf crate's validation of the whole document, split into the problems that stop a
/// head track from being read (nodes, scenes, animations and the accessors, views and buffers
/// the animations read) and the rest, which only make the meshes unavailable.
fn validate(g: &gltf::Gltf) -> (Vec<String>, Vec<String>) {
    use gltf::json::validation::Validate;
    let json = g.document.as_json();
    let mut all = Vec::new();
    json.validate(json, gltf::json::Path::new, &mut |path, error| {
        all.push((path().to_string(), error.to_string()))
    });
    // What the animations read: their accessors, those accessors' views, the views' buffers.
    let mut accessors = std::collections::BTreeSet::new();
    for a in &json.animations {
        for smp in &a.samplers {
            accessors.insert(smp.input.value());
            accessors.insert(smp.output.value());
        }
    }
    let views: std::collections::BTreeSet<usize> = accessors
        .iter()
        .filter_map(|&i| json.accessors.get(i)?.buffer_view.map(|v| v.value()))
        .collect();
    let buffers: std::collections::BTreeSet<usize> = views
        .iter()
        .filter_map(|&i| json.buffer_views.get(i).map(|v| v.buffer.value()))
        .collect();
    let index_of = |path: &str, field: &str| -> Option<usize> {
        path.strip_prefix(field)?
            .strip_prefix('[')?
            .split(']')
            .next()?
            .parse()
            .ok()
    };
    let (mut fatal, mut meshes) = (Vec::new(), Vec::new());
    for (path, error) in all {
        let line = format!("{path}: {error}");
        let needed = ["nodes", "scenes", "scene", "animations", "asset"]
            .iter()
            .any(|f| path == *f || path.starts_with(&format!("{f}[")) || path.starts_with(&format!("{f}.")))
            || index_of(&path, "accessors").is_some_and(|i| accessors.contains(&i))
            || index_of(&path, "bufferViews").is_some_and(|i| views.contains(&i))
            || index_of(&path, "buffers").is_some_and(|i| buffers.contains(&i));
        if needed {
            fatal.push(line);
        } else if path.starts_with("extensionsRequired") {
            meshes.push(format!(
                "it requires the extension {error}",
                error = path.split(" = ").nth(1).unwrap_or(&path)
            ));
        } else {
            meshes.push(line);
        }
    }
    (fatal, meshes)
}

/// Whether accessor `x` lies within its buffer view, counted without overflow: the gltf
/// crate's reader subtracts one from the count and multiplies unchecked.
fn fits(x: &gltf::Accessor) -> bool {
    let Some(view) = x.view() else { return false };
    let stride = view.stride().unwrap_or(x.size()).max(x.size());
    x.count() >= 1
        && x.sparse().is_none_or(|s| s.count() >= 1)
        && (x.count() - 1)
            .checked_mul(stride)
            .and_then(|v| v.checked_add(x.offset()))
            .and_then(|v| v.checked_add(x.size()))
            .is_some_and(|end| end <= view.length())
}

/// The bytes of an embedded buffer, `data:[<media type>];base64,<data>` (glTF 2.0 §3.6.1.1:
/// embedded buffers are base64). Decoding never grows past the text it is given.
fn data_uri(uri: &str, index: usize) -> Result<Vec<u8>> {
    use base64::Engine;
    let (head, body) = uri.split_once(',').ok_or_else(|| {
        Error::corrupt(format!(
            "buffer {index}: a data URI without a comma before its data"
        ))
    })?;
    if !head.ends_with(";base64") {
        return Err(Error::unsupported(format!(
            "buffer {index}: data URI {head:?} is not base64 (glTF embeds buffers as base64)"
        )));
    }
    base64::engine::general_purpose::STANDARD
        .decode(body.trim_end())
        .map_err(|e| Error::corrupt(format!("buffer {index}: embedded data is not base64 ({e})")))
}

/// Parses glTF from memory; external buffers are read relative to `base` (`.gltf` files),
/// embedded ones (`data:` URIs) decoded.
pub fn parse(data: &[u8], base: Option<&Path>) -> Result<GltfDoc> {
    // A GLB header's total length covers at least the header itself (the gltf crate subtracts
    // without checking).
    if let [b'g', b'l', b'T', b'F', _, _, _, _, l0, l1, l2, l3, ..] = *data
        && (u32::from_le_bytes([l0, l1, l2, l3]) as usize) < 12
    {
        return Err(Error::corrupt(
            "GLB header: its length is shorter than the header",
        ));
    }
    let g = gltf::Gltf::from_slice_without_validation(data).map_err(gltf_error)?;
    let (fatal, mesh_problems) = validate(&g);
    if !fatal.is_empty() {
        return Err(Error::corrupt(summary("not a readable glTF file", &fatal)));
    }
    let buffers = buffers(&g, base)?;
    let nodes = nodes(&g)?;
    check_animations(&g)?;
    let mut animations = Vec::new();
    for a in g.animations() {
        let mut channels = Vec::new();
        for ch in a.channels() {
            if let Some(c) = channel(&a, &ch, &buffers)? {
                channels.push(c);
            }
        }
        animations.push(GltfAnimation {
            name: a.name().map(String::from),
            channels,
        });
    }
    let (meshes, meshes_unreadable) = if mesh_problems.is_empty() {
        // A broken mesh does not stop the head track either.
        match meshes(&g, &buffers) {
            Ok(m) => (m, None),
            Err(e) => (Vec::new(), Some(format!("its meshes are not read: {e}"))),
        }
    } else {
        (
            Vec::new(),
            Some(summary("its meshes are not read", &mesh_problems)),
        )
    };
    Ok(GltfDoc {
        nodes,
        animations,
        meshes,
        meshes_unreadable,
    })
}

/// The bytes of every buffer: the GLB's binary chunk, embedded data, or a file beside the
/// `.gltf` (never outside its folder), each at least as long as it declares.
fn buffers(g: &gltf::Gltf, base: Option<&Path>) -> Result<Vec<Vec<u8>>> {
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    for b in g.buffers() {
        let bytes = match b.source() {
            gltf::buffer::Source::Bin => g
                .blob
                .clone()
                .ok_or_else(|| Error::corrupt("the file refers to a binary chunk it does not have"))?,
            gltf::buffer::Source::Uri(uri) if uri.starts_with("data:") => data_uri(uri, b.index())?,
            gltf::buffer::Source::Uri(uri) => {
                if uri.contains("..") || uri.contains(':') {
                    return Err(Error::unsupported(format!(
                        "buffer URI {uri:?}: only files beside the .gltf are read"
                    )));
                }
                let dir =
                    base.ok_or_else(|| Error::unsupported("external buffers need the file's folder"))?;
                std::fs::read(dir.join(uri)).in_file(dir.join(uri))?
            }
        };
        if bytes.len() < b.length() {
            return Err(Error::truncated(format!(
                "buffer {} declares {} bytes but holds {}",
                b.index(),
                b.length(),
                bytes.len()
            )));
        }
        buffers.push(bytes);
    }
    Ok(buffers)
}

/// The nodes with their parents (one each at most; no cycle).
fn nodes(g: &gltf::Gltf) -> Result<Vec<GltfNode>> {
    let mut nodes: Vec<GltfNode> = g
        .nodes()
        .map(|n| {
            let (t, r, s) = n.transform().decomposed();
            GltfNode {
                name: n.name().map(String::from),
                parent: None,
                translation: t,
                rotation: r,
                scale: s,
                mesh: n.mesh().map(|m| m.index()),
            }
        })
        .collect();
    for n in g.nodes() {
        for c in n.children() {
            if nodes[c.index()].parent.is_some() || c.index() == n.index() {
                return Err(Error::corrupt(format!("node {} has two parents", c.index())));
            }
            nodes[c.index()].parent = Some(n.index());
        }
    }
    // A cycle would make world transforms loop forever.
    for start in 0..nodes.len() {
        let mut at = nodes[start].parent;
        for _ in 0..=nodes.len() {
            match at {
                Some(p) if p == start => return Err(Error::corrupt("the node hierarchy has a cycle")),
                Some(p) => at = nodes[p].parent,
                None => break,
            }
        }
    }
    Ok(nodes)
}

/// The gltf crate's validation leaves channel targets out, and reading an invalid one panics:
/// checks what [`channel`] reads.
fn check_animations(g: &gltf::Gltf) -> Result<()> {
    {
        use gltf::json::validation::Checked;
        let json = g.document.as_json();
        for (i, a) in json.animations.iter().enumerate() {
            for (j, c) in a.channels.iter().enumerate() {
                if c.target.node.value() >= json.nodes.len() || c.sampler.value() >= a.samplers.len() {
                    return Err(Error::corrupt(format!(
                        "animation {i} channel {j}: node {} or sampler {} does not exist",
                        c.target.node.value(),
                        c.sampler.value()
                    )));
                }
            }
            for (j, s) in a.samplers.iter().enumerate() {
                if s.input.value() >= json.accessors.len() || s.output.value() >= json.accessors.len() {
                    return Err(Error::corrupt(format!(
                        "animation {i} sampler {j}: accessor {} or {} does not exist",
                        s.input.value(),
                        s.output.value()
                    )));
                }
            }
            if let Some(j) = a
                .channels
                .iter()
                .position(|c| matches!(c.target.path, Checked::Invalid))
            {
                return Err(Error::corrupt(format!(
                    "animation {i} channel {j}: the target path is not translation, rotation, scale or weights"
                )));
            }
            if let Some(j) = a
                .samplers
                .iter()
                .position(|s| matches!(s.interpolation, Checked::Invalid))
            {
                return Err(Error::corrupt(format!(
                    "animation {i} sampler {j}: the interpolation is not LINEAR, STEP or CUBICSPLINE"
                )));
            }
        }
    }
    Ok(())
}

/// One animation channel's keys (`None` for morph-target weights), checked: the accessor
/// types the spec allows, within their buffers, key times increasing, as many values as keys.
fn channel(
    a: &gltf::Animation,
    ch: &gltf::animation::Channel,
    buffers: &[Vec<u8>],
) -> Result<Option<Channel>> {
    let get = |b: gltf::Buffer| buffers.get(b.index()).map(Vec::as_slice);
    let path = match ch.target().property() {
        gltf::animation::Property::Translation => ChannelPath::Translation,
        gltf::animation::Property::Rotation => ChannelPath::Rotation,
        gltf::animation::Property::Scale => ChannelPath::Scale,
        gltf::animation::Property::MorphTargetWeights => return Ok(None),
    };
    let interpolation = match ch.sampler().interpolation() {
        gltf::animation::Interpolation::Linear => Interpolation::Linear,
        gltf::animation::Interpolation::Step => Interpolation::Step,
        gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
    };
    // The types the spec allows (the reader trusts them: another type reads garbage).
    {
        use gltf::accessor::{DataType, Dimensions};
        let (input, output) = (ch.sampler().input(), ch.sampler().output());
        let ok_in = input.data_type() == DataType::F32 && input.dimensions() == Dimensions::Scalar;
        let ok_out = match path {
            ChannelPath::Translation | ChannelPath::Scale => {
                output.data_type() == DataType::F32 && output.dimensions() == Dimensions::Vec3
            }
            ChannelPath::Rotation => {
                output.dimensions() == Dimensions::Vec4
                    && (output.data_type() == DataType::F32 || output.normalized())
                    && output.data_type() != DataType::U32
            }
        };
        if !fits(&input) || !fits(&output) {
            return Err(Error::corrupt(format!(
                "animation {} channel {}: its key accessors are empty or run past their buffer views",
                a.index(),
                ch.index()
            )));
        }
        if !ok_in || !ok_out {
            return Err(Error::corrupt(format!(
                "animation {} channel {}: key times must be float scalars and values float vectors (or normalized integer quaternions), not {:?} {:?} → {:?} {:?}",
                a.index(),
                ch.index(),
                input.data_type(),
                input.dimensions(),
                output.data_type(),
                output.dimensions()
            )));
        }
    }
    let reader = ch.reader(get);
    let times: Vec<f32> = reader
        .read_inputs()
        .ok_or_else(|| Error::corrupt("an animation channel has no key times"))?
        .collect();
    use gltf::animation::util::ReadOutputs;
    let values: Vec<[f32; 4]> = match reader.read_outputs() {
        Some(ReadOutputs::Translations(it)) | Some(ReadOutputs::Scales(it)) => {
            it.map(|v| [v[0], v[1], v[2], 0.0]).collect()
        }
        Some(ReadOutputs::Rotations(r)) => r.into_f32().collect(),
        _ => return Err(Error::corrupt("an animation channel has no values")),
    };
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    if values.len() != times.len() * per_key || times.is_empty() {
        return Err(Error::corrupt(format!(
            "an animation channel has {} key times but {} values",
            times.len(),
            values.len()
        )));
    }
    if times.iter().any(|t| !t.is_finite()) || times.windows(2).any(|w| w[1] < w[0]) {
        return Err(Error::corrupt("animation key times must increase"));
    }
    Ok(Some(Channel {
        node: ch.target().node().index(),
        path,
        interpolation,
        times,
        values,
    }))
}

/// The triangle meshes (triangle primitives only), checked.
fn meshes(g: &gltf::Gltf, buffers: &[Vec<u8>]) -> Result<Vec<TriMesh>> {
    let get = |b: gltf::Buffer| buffers.get(b.index()).map(Vec::as_slice);
    let mut meshes = Vec::new();
    for m in g.meshes() {
        let mut mesh = TriMesh::default();
        for p in m.primitives() {
            if p.mode() != gltf::mesh::Mode::Triangles {
                continue;
            }
            {
                use gltf::accessor::{DataType, Dimensions};
                let positions = p.get(&gltf::Semantic::Positions);
                let ok_pos = positions.as_ref().is_none_or(|x| {
                    fits(x) && x.data_type() == DataType::F32 && x.dimensions() == Dimensions::Vec3
                });
                let ok_idx = p.indices().as_ref().is_none_or(|x| {
                    fits(x)
                        && matches!(x.data_type(), DataType::U8 | DataType::U16 | DataType::U32)
                        && x.dimensions() == Dimensions::Scalar
                });
                if !ok_pos || !ok_idx {
                    return Err(Error::corrupt(format!(
                        "mesh {} primitive {}: positions must be float triples and indices unsigned integers, within their buffer views",
                        m.index(),
                        p.index()
                    )));
                }
            }
            let r = p.reader(get);
            let base = mesh.positions.len() as u32;
            let Some(pos) = r.read_positions() else { continue };
            mesh.positions.extend(pos);
            let count = mesh.positions.len() as u32 - base;
            let idx: Vec<u32> = match r.read_indices() {
                Some(i) => i.into_u32().collect(),
                None => (0..count).collect(),
            };
            for t in idx.chunks_exact(3) {
                mesh.triangles.push([base + t[0], base + t[1], base + t[2]]);
            }
        }
        mesh.validate()?;
        meshes.push(mesh);
    }
    Ok(meshes)
}

/// Reads a `.gltf` or `.glb` file.
pub fn read(path: impl AsRef<Path>) -> Result<GltfDoc> {
    let path = path.as_ref();
    let data = std::fs::read(path).in_file(path)?;
    parse(&data, path.parent()).in_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    /// A `.gltf` whose buffer is embedded: one node nodding on a translation channel.
    fn embedded(uri_head: &str, body: Option<&str>) -> String {
        // Times 0, 0.5, 1, then translations (0, 0, 0), (1, 2, 3), (0, 4, 0).
        let floats: [f32; 12] = [0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.0, 4.0, 0.0];
        let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let uri = format!("{uri_head},{}", body.unwrap_or(&b64));
        format!(
            r#"{{"asset": {{"version": "2.0"}}, "nodes": [{{"name": "head"}}],
            "buffers": [{{"byteLength": {len}, "uri": "{uri}"}}],
            "bufferViews": [{{"buffer": 0, "byteOffset": 0, "byteLength": 12}},
                            {{"buffer": 0, "byteOffset": 12, "byteLength": 36}}],
            "accessors": [{{"bufferView": 0, "componentType": 5126, "count": 3, "type": "SCALAR", "min": [0], "max": [1]}},
                          {{"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC3"}}],
            "animations": [{{"samplers": [{{"input": 0, "output": 1}}],
                            "channels": [{{"sampler": 0, "target": {{"node": 0, "path": "translation"}}}}]}}]}}"#,
            len = bytes.len()
        )
    }

    #[test]
    fn embedded_buffers_are_decoded() {
        let doc = parse(
            embedded("data:application/octet-stream;base64", None).as_bytes(),
            None,
        )
        .unwrap();
        assert_eq!(doc.node_by_name("head"), Some(0));
        let c = &doc.animations[0].channels[0];
        assert_eq!(c.times, vec![0.0, 0.5, 1.0]);
        assert_eq!(c.values[1][..3], [1.0, 2.0, 3.0]);
        assert_eq!(c.values[2][..3], [0.0, 4.0, 0.0]);
        assert_eq!(doc.animations[0].span(), (0.0, 1.0));
    }

    /// The error parsing `text` gives.
    fn error_of(text: &str) -> String {
        parse(text.as_bytes(), None).unwrap_err().to_string()
    }

    #[test]
    fn bad_embedded_buffers_are_errors() {
        const B64: &str = "data:application/octet-stream;base64";
        let e = error_of(&embedded(B64, Some("@@@")));
        assert!(e.contains("not base64"), "{e}");
        let e = error_of(&embedded("data:text/plain", Some("abc")));
        assert!(e.contains("is not base64"), "{e}");
        // An unknown channel target is an error, not a panic (the gltf crate does not check it).
        let e = error_of(&embedded(B64, None).replace("\"translation\"}", "\"roittaon\"}"));
        assert!(e.contains("target path"), "{e}");
        // So is a channel on a node that does not exist.
        let e = error_of(&embedded(B64, None).replace("\"node\": 0", "\"node\": 7"));
        assert!(e.contains("does not exist"), "{e}");
        // Short data: the declared length is checked as for any buffer.
        let e = error_of(&embedded(B64, Some("AAAA")));
        assert!(e.contains("declares"), "{e}");
    }

    /// A head track whose file also holds a Draco-compressed mesh (the extension required,
    /// the mesh's accessors without data): the animation reads, the meshes are said unreadable
    /// in one sentence.
    #[test]
    fn a_draco_mesh_does_not_stop_the_head_track() {
        let text = embedded("data:application/octet-stream;base64", None).replace(
            r#""nodes": [{"name": "head"}],"#,
            r#""extensionsUsed": ["KHR_draco_mesh_compression"],
            "extensionsRequired": ["KHR_draco_mesh_compression"],
            "nodes": [{"name": "head"}, {"name": "body", "mesh": 0}],
            "meshes": [{"primitives": [{"attributes": {"POSITION": 2}, "indices": 3,
                "extensions": {"KHR_draco_mesh_compression": {"bufferView": 1, "attributes": {"POSITION": 0}}}}]}],"#,
        ).replace(
            r#"{"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC3"}],"#,
            r#"{"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC3"},
               {"componentType": 5126, "count": 500, "type": "VEC3", "min": [0,0,0], "max": [1,1,1]},
               {"componentType": 5125, "count": 900, "type": "SCALAR"}],"#,
        );
        assert!(text.contains("KHR_draco"));
        let doc = parse(text.as_bytes(), None).unwrap();
        assert_eq!(doc.animations[0].channels[0].values[1][..3], [1.0, 2.0, 3.0]);
        assert!(doc.meshes.is_empty());
        let why = doc.meshes_unreadable.unwrap();
        assert!(why.contains("KHR_draco_mesh_compression"), "{why}");
        assert!(why.len() < 300, "{why}");
    }

    /// A file with hundreds of problems in what a head track reads gives one short paragraph:
    /// the first problems and a count.
    #[test]
    fn many_problems_are_summed_up_in_a_short_error() {
        let mut channels = Vec::new();
        for _ in 0..300 {
            channels.push(r#"{"sampler": 0, "target": {"node": 0, "path": "translation"}}"#);
        }
        let text = embedded("data:application/octet-stream;base64", None)
            .replace(r#""input": 0, "output": 1"#, r#""input": 40, "output": 41"#)
            .replace(
                r#""channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]"#,
                &format!(r#""channels": [{}]"#, channels.join(",")),
            )
            .replace(
                r#""nodes": [{"name": "head"}]"#,
                r#""nodes": [{"name": "head", "children": [5, 6, 7, 8, 9]}]"#,
            );
        let e = error_of(&text);
        assert!(e.contains("and ") && e.contains(" more"), "{e}");
        assert!(e.len() < 600, "{} characters: {e}", e.len());
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}
