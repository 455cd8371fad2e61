//! Head tracks from files: Alembic transforms and animated meshes, glTF node animation, and
//! track files (CSV / JSON).

use std::path::{Path, PathBuf};

use glam::{DMat4, DQuat, DVec3, Vec3};
use serde::Serialize;
use tress_formats::InFile;
use tress_formats::alembic::cache::AbcReader;
use tress_formats::alembic::schema::SchemaKind;
use tress_formats::alembic::schema::polymesh::PolyMeshReader;
use tress_formats::alembic::schema::xform::{Matrix, XformReader};
use tress_formats::gltf::{ChannelPath, GltfDoc, Interpolation};
use tress_formats::track::{KeyTime, KeyValue};

use super::fit::fit_rigid;
use super::pose::Pose;
use super::track::HeadTrack;
use crate::error::{Error, Result};

/// Where head motion comes from: a preset (or a TOML of one), a glTF node, an Alembic transform
/// or rigidly moving mesh, a track file, constant velocities, or nothing (a still head). One
/// type for the command line and jobs (each reads its own syntax into it).
#[derive(Clone, Debug, PartialEq)]
pub enum MotionSource {
    /// The head holds still.
    Still,
    /// A random key-pose preset (gentle, walk, turn, violent), the range of motion `rom`, or a
    /// TOML file of either; `seed`
    /// overrides the preset's.
    Preset { name: String, seed: Option<u64> },
    /// A glTF / GLB file's node (joint) animation.
    Gltf {
        file: PathBuf,
        node: Option<String>,
        animation: Option<String>,
    },
    /// An Alembic file: an animated transform, or a rigidly moving polygon mesh.
    Abc {
        file: PathBuf,
        xform: Option<String>,
        mesh: Option<String>,
    },
    /// A CSV or JSON track file.
    Track(PathBuf),
    /// Constant velocities from the first frame.
    Constant(ConstantSpec),
}

/// A constant linear and angular head velocity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConstantSpec {
    /// cm/s.
    pub velocity: DVec3,
    /// Degrees per second about the world axes, through `pivot`.
    pub angular_velocity: DVec3,
    /// cm, where the head starts.
    pub pivot: DVec3,
    /// Seconds the motion lasts from the first frame [default: the whole shot].
    pub moving: Option<f64>,
}

impl MotionSource {
    /// Whether the track comes from a file (kept at the file's own times, seen relative to its
    /// pose at the first frame, in the file's units and axes).
    pub fn from_file(&self) -> bool {
        matches!(
            self,
            MotionSource::Gltf { .. } | MotionSource::Abc { .. } | MotionSource::Track(_)
        )
    }

    /// The track of a preset or file, sampled at `fps` where the source needs sampling, at
    /// its own times and in its own units.
    pub fn load(&self, fps: f64) -> Result<(HeadTrack, TrackReport)> {
        match self {
            MotionSource::Preset { name, seed } => {
                let mut m = super::MotionPreset::load(name)?;
                if let Some(s) = seed {
                    m.set_seed(*s);
                }
                let (t, phases) = m.track_with_phases()?;
                let report = TrackReport {
                    source: format!("motion preset {name} (seed {})", m.seed()),
                    samples: t.len(),
                    phases,
                    ..Default::default()
                };
                Ok((t, report))
            }
            MotionSource::Gltf {
                file,
                node,
                animation,
            } => from_gltf(file, node.as_deref(), animation.as_deref(), fps),
            MotionSource::Abc {
                file, mesh: Some(m), ..
            } => from_abc_mesh(file, Some(m)),
            MotionSource::Abc { file, xform, .. } => from_abc_xform(file, xform.as_deref()),
            MotionSource::Track(file) => from_track_file(file, fps),
            MotionSource::Still | MotionSource::Constant(_) => Err(Error::Invalid(
                "give a motion: --motion, --gltf, --abc or --track".into(),
            )),
        }
    }
}

/// How a track was obtained, for reports.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TrackReport {
    pub source: String,
    pub samples: usize,
    /// Rigid fits of meshes: the worst RMS and maximum residual over all samples.
    pub fit_rms: Option<f64>,
    pub fit_max: Option<f64>,
    /// Largest deviation of the sampled transforms' scale from 1 (scale is dropped).
    pub scale_deviation: f64,
    /// A range of motion's phases: name, start and end (s).
    pub phases: Vec<super::rom::PhaseSpan>,
}

/// Imath (row-major, row vectors) to glam (column vectors).
fn imath_to_glam(m: &Matrix) -> DMat4 {
    DMat4::from_cols_array_2d(m)
}

fn not_found(path: &Path, what: String) -> Error {
    Error::Invalid(format!("{}: {what}", path.display()))
}

/// The world transform of Alembic object `object` (an xform, or the first animated xform when
/// `None`), one key per sample of that xform.
pub fn from_abc_xform(path: &Path, object: Option<&str>) -> Result<(HeadTrack, TrackReport)> {
    let r = AbcReader::open(path)?;
    let ar = &r.archive;
    let objects = ar.objects().in_file(path)?;
    let obj = match object {
        Some(name) => objects
            .iter()
            .find(|o| {
                o.full_name == name || o.full_name.trim_start_matches('/') == name.trim_start_matches('/')
            })
            .ok_or_else(|| not_found(path, format!("no object {name}")))?,
        None => objects
            .iter()
            .find(|o| {
                SchemaKind::of(o) == SchemaKind::Xform
                    && XformReader::open(ar, o).is_ok_and(|x| x.num_samples() > 1)
            })
            .ok_or_else(|| not_found(path, "no animated transform; name one with --xform".into()))?,
    };
    if SchemaKind::of(obj) != SchemaKind::Xform {
        return Err(not_found(
            path,
            format!(
                "{} is a {}, not a transform",
                obj.full_name,
                SchemaKind::of(obj).name()
            ),
        ));
    }
    let x = XformReader::open(ar, obj).in_file(path)?;
    let n = x.num_samples().max(1);
    let ts = &ar.time_samplings[x.time_sampling() as usize];
    let mut keys = Vec::with_capacity(n);
    let mut scale_dev: f64 = 0.0;
    for i in 0..n {
        let t = ts.time(i);
        let m = imath_to_glam(&r.world_matrix(&obj.full_name, t)?);
        let (pose, scale) = Pose::from_mat4(&m);
        scale_dev = scale_dev.max((scale - DVec3::ONE).abs().max_element());
        keys.push((t, pose));
    }
    let report = TrackReport {
        source: format!("{} {}", path.display(), obj.full_name),
        samples: n,
        scale_deviation: scale_dev,
        ..Default::default()
    };
    Ok((HeadTrack::new(keys)?, report))
}

/// A rigid track fitted to an animated Alembic mesh (world space): the pose at each sample maps
/// the mesh's first sample onto it. The report's residual tells how rigid the mesh really was.
pub fn from_abc_mesh(path: &Path, object: Option<&str>) -> Result<(HeadTrack, TrackReport)> {
    let r = AbcReader::open(path)?;
    let ar = &r.archive;
    let objects = ar.objects().in_file(path)?;
    let obj = objects
        .iter()
        .find(|o| {
            SchemaKind::of(o) == SchemaKind::PolyMesh
                && object.is_none_or(|n| {
                    o.full_name == n || o.full_name.trim_start_matches('/') == n.trim_start_matches('/')
                })
        })
        .ok_or_else(|| not_found(path, format!("no polymesh {}", object.unwrap_or(""))))?;
    let m = PolyMeshReader::open(ar, obj).in_file(path)?;
    let ts = &ar.time_samplings[m.positions.header.time_sampling as usize];
    let world = |i: usize| -> Result<Vec<DVec3>> {
        let t = ts.time(i);
        let w = imath_to_glam(&r.world_matrix(&obj.full_name, t)?);
        let s = m.sample(ar, i).in_file(path)?;
        Ok(s.positions
            .iter()
            .map(|p| w.transform_point3(Vec3::from_array(*p).as_dvec3()))
            .collect())
    };
    let rest = world(0)?;
    let mut keys = Vec::with_capacity(m.num_samples());
    let (mut worst_rms, mut worst_max) = (0.0f64, 0.0f64);
    for i in 0..m.num_samples() {
        let pts = world(i)?;
        if pts.len() != rest.len() {
            return Err(not_found(
                path,
                format!("{} changes its point count: not a rigid head", obj.full_name),
            ));
        }
        let fit = fit_rigid(&rest, &pts);
        worst_rms = worst_rms.max(fit.rms);
        worst_max = worst_max.max(fit.max);
        keys.push((ts.time(i), fit.pose));
    }
    let report = TrackReport {
        source: format!("{} {} (rigid fit)", path.display(), obj.full_name),
        samples: keys.len(),
        fit_rms: Some(worst_rms),
        fit_max: Some(worst_max),
        ..Default::default()
    };
    Ok((HeadTrack::new(keys)?, report))
}

/// Translation, rotation and scale of a node at time `t` under one animation.
fn node_local(doc: &GltfDoc, anim: Option<usize>, node: usize, t: f32) -> DMat4 {
    let n = &doc.nodes[node];
    let mut tr = Vec3::from_array(n.translation);
    let mut rot = glam::Quat::from_array(n.rotation);
    let mut sc = Vec3::from_array(n.scale);
    if let Some(a) = anim {
        for ch in doc.animations[a].channels.iter().filter(|c| c.node == node) {
            let v = sample_channel(ch, t);
            match ch.path {
                ChannelPath::Translation => tr = Vec3::new(v[0], v[1], v[2]),
                ChannelPath::Rotation => rot = glam::Quat::from_array(v).normalize(),
                ChannelPath::Scale => sc = Vec3::new(v[0], v[1], v[2]),
            }
        }
    }
    glam::Mat4::from_scale_rotation_translation(sc, rot, tr).as_dmat4()
}

/// Evaluates a glTF channel at time `t` (linear: slerp for rotations; step; cubic Hermite).
fn sample_channel(ch: &tress_formats::gltf::Channel, t: f32) -> [f32; 4] {
    let times = &ch.times;
    let cubic = ch.interpolation == Interpolation::CubicSpline;
    let value = |k: usize| if cubic { ch.values[3 * k + 1] } else { ch.values[k] };
    let n = times.len();
    if t <= times[0] {
        return value(0);
    }
    if t >= times[n - 1] {
        return value(n - 1);
    }
    let k = times.partition_point(|&x| x <= t) - 1;
    let (t0, t1) = (times[k], times[k + 1]);
    let u = if t1 > t0 { (t - t0) / (t1 - t0) } else { 0.0 };
    let (a, b) = (value(k), value(k + 1));
    match ch.interpolation {
        Interpolation::Step => a,
        Interpolation::Linear if ch.path == ChannelPath::Rotation => glam::Quat::from_array(a)
            .normalize()
            .slerp(glam::Quat::from_array(b).normalize(), u)
            .to_array(),
        Interpolation::Linear => std::array::from_fn(|i| a[i] + (b[i] - a[i]) * u),
        Interpolation::CubicSpline => {
            let dt = t1 - t0;
            let (out_a, in_b) = (ch.values[3 * k + 2], ch.values[3 * (k + 1)]);
            let (u2, u3) = (u * u, u * u * u);
            let h = [
                2.0 * u3 - 3.0 * u2 + 1.0,
                u3 - 2.0 * u2 + u,
                -2.0 * u3 + 3.0 * u2,
                u3 - u2,
            ];
            std::array::from_fn(|i| h[0] * a[i] + h[1] * dt * out_a[i] + h[2] * b[i] + h[3] * dt * in_b[i])
        }
    }
}

/// The node that carries the head when none is named: the node named like a head joint (not its
/// end or top bone; of several, the one nearest the root), else the neck joint nearest the head
/// (of a neck chain, the deepest). The first in file order among equals; `None` when no name
/// suggests one.
pub fn guess_head_node(doc: &tress_formats::gltf::GltfDoc) -> Option<usize> {
    let depth = |mut n: usize| {
        let mut d = 0;
        while let Some(p) = doc.nodes[n].parent {
            n = p;
            d += 1;
            if d > doc.nodes.len() {
                break;
            }
        }
        d
    };
    for (word, deepest) in [("head", false), ("neck", true)] {
        let found = (0..doc.nodes.len())
            .filter(|&i| {
                let name = doc.nodes[i].name.as_deref().unwrap_or("").to_lowercase();
                name.contains(word) && !["end", "top", "nub", "tip"].iter().any(|x| name.contains(x))
            })
            .min_by_key(|&i| {
                let d = depth(i) as i64;
                (if deepest { -d } else { d }, i)
            });
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The world transform of a glTF node under an animation, sampled at `fps` over the animation.
/// Without a node name, the head or neck joint is found by name ([`guess_head_node`]); failing
/// that, the error lists the animated nodes to choose from.
pub fn from_gltf(
    path: &Path,
    node: Option<&str>,
    animation: Option<&str>,
    fps: f64,
) -> Result<(HeadTrack, TrackReport)> {
    let doc = tress_formats::gltf::read(path)?;
    let candidates = || {
        let animated: Vec<&str> = (0..doc.nodes.len())
            .filter(|&i| {
                doc.animations
                    .iter()
                    .any(|a| a.channels.iter().any(|c| c.node == i))
            })
            .filter_map(|i| doc.nodes[i].name.as_deref())
            .collect();
        let names: Vec<&str> = if animated.is_empty() {
            doc.nodes.iter().filter_map(|n| n.name.as_deref()).collect()
        } else {
            animated
        };
        let more = names.len().saturating_sub(30);
        let mut list = names.into_iter().take(30).collect::<Vec<_>>().join(", ");
        if more > 0 {
            list.push_str(&format!(" and {more} more"));
        }
        list
    };
    let target = match node {
        Some(node) => doc.node_by_name(node).ok_or_else(|| {
            not_found(
                path,
                format!("no node named {node:?} (animated nodes: {})", candidates()),
            )
        })?,
        None => {
            let found = guess_head_node(&doc).ok_or_else(|| {
                Error::Invalid(format!(
                    "{}: no node is named like a head or neck joint; name the one that carries the head with --node (animated nodes: {})",
                    path.display(),
                    candidates()
                ))
            })?;
            tracing::info!(
                "{}: head motion from node {:?} (found by name; --node chooses another)",
                path.display(),
                doc.nodes[found].name.as_deref().unwrap_or("")
            );
            found
        }
    };
    let node = doc.nodes[target]
        .name
        .clone()
        .unwrap_or_else(|| format!("#{target}"));
    let anim = match animation {
        Some(name) => Some(
            doc.animations
                .iter()
                .position(|a| a.name.as_deref() == Some(name))
                .ok_or_else(|| not_found(path, format!("no animation named {name:?}")))?,
        ),
        None => (!doc.animations.is_empty()).then_some(0),
    };
    // Animations play from time 0 (the first key holds until it is reached).
    let (t0, t1) = anim
        .map(|a| doc.animations[a].span())
        .map(|(a, b)| (a.min(0.0), b))
        .unwrap_or((0.0, 0.0));
    let frames = (((t1 - t0) as f64) * fps).round() as usize;
    let mut chain = vec![target];
    while let Some(p) = doc.nodes[*chain.last().expect("non-empty")].parent {
        chain.push(p);
    }
    let mut keys = Vec::with_capacity(frames + 1);
    let mut scale_dev: f64 = 0.0;
    for f in 0..=frames {
        let t = t0 as f64 + f as f64 / fps;
        let world = chain.iter().rev().fold(DMat4::IDENTITY, |acc, &n| {
            acc * node_local(&doc, anim, n, t as f32)
        });
        let (pose, scale) = Pose::from_mat4(&world);
        scale_dev = scale_dev.max((scale - DVec3::ONE).abs().max_element());
        keys.push((t, pose));
    }
    let report = TrackReport {
        source: format!("{} node {node}", path.display()),
        samples: keys.len(),
        scale_deviation: scale_dev,
        ..Default::default()
    };
    Ok((HeadTrack::new(keys)?, report))
}

/// A track file (CSV / JSON); frame numbers use the file's fps, else `fps`.
pub fn from_track_file(path: &Path, fps: f64) -> Result<(HeadTrack, TrackReport)> {
    let f = tress_formats::track::read(path)?;
    let fps = f.fps.unwrap_or(fps);
    let mut keys = Vec::with_capacity(f.keys.len());
    for (t, v) in &f.keys {
        let time = match t {
            KeyTime::Frame(fr) => fr / fps,
            KeyTime::Seconds(s) => *s,
        };
        let pose = match v {
            KeyValue::TranslationRotation(tr, q) => {
                let q = DQuat::from_xyzw(q[0], q[1], q[2], q[3]);
                if (q.length() - 1.0).abs() > 1e-3 {
                    return Err(not_found(
                        path,
                        format!("the rotation at {time} s is not a unit quaternion"),
                    ));
                }
                Pose::new(q, DVec3::from_array(*tr))
            }
            KeyValue::Matrix(m) => Pose::from_mat4(&DMat4::from_cols_array(m).transpose()).0,
        };
        keys.push((time, pose));
    }
    let report = TrackReport {
        source: path.display().to_string(),
        samples: keys.len(),
        ..Default::default()
    };
    Ok((
        HeadTrack::new(keys).map_err(|e| not_found(path, e.to_string()))?,
        report,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(names: &[(&str, Option<usize>)]) -> tress_formats::gltf::GltfDoc {
        let mut nodes: Vec<serde_json::Value> = names
            .iter()
            .map(|(n, _)| serde_json::json!({ "name": n }))
            .collect();
        for (i, (_, parent)) in names.iter().enumerate() {
            if let Some(p) = parent {
                let kids = nodes[*p]
                    .as_object_mut()
                    .unwrap()
                    .entry("children")
                    .or_insert(serde_json::json!([]));
                kids.as_array_mut().unwrap().push(serde_json::json!(i));
            }
        }
        let gltf = serde_json::json!({
            "asset": { "version": "2.0" },
            "nodes": nodes,
            "scenes": [{ "nodes": [0] }],
        });
        tress_formats::gltf::parse(gltf.to_string().as_bytes(), None).unwrap()
    }

    fn guess(names: &[(&str, Option<usize>)]) -> Option<&'static str> {
        let d = doc(names);
        guess_head_node(&d).map(|i| {
            let n: &'static str = names[i].0.to_string().leak();
            n
        })
    }

    #[test]
    fn the_head_joint_is_found_by_name() {
        // A mixamo-like chain: the head, not its end bone, not the neck.
        let chain = [
            ("Hips", None),
            ("Spine", Some(0)),
            ("Neck", Some(1)),
            ("Head", Some(2)),
            ("HeadTop_End", Some(3)),
        ];
        assert_eq!(guess(&chain), Some("Head"));
        // No head joint: the upper neck joint (CesiumMan's two neck joints).
        let necks = [
            ("torso", None),
            ("Skeleton_neck_joint_1", Some(0)),
            ("Skeleton_neck_joint_2", Some(1)),
        ];
        assert_eq!(guess(&necks), Some("Skeleton_neck_joint_2"));
        // Nothing named like either.
        assert_eq!(guess(&[("root", None), ("bone_7", Some(0))]), None);
    }
}
