//! Deforming colliders (002 §4's animated mannequin, 001's animated hand): a body mesh that
//! changes shape over time — an Alembic polymesh with animated points, or an OBJ sequence — as
//! one signed distance grid per mesh frame (in the mesh's own space, [`super::mesh_sdf`]),
//! blended linearly between the two frames around the time asked:
//!
//! `d(p, t) = (1 − s) d₀(p) + s d₁(p)`, `s = (t − t₀)/(t₁ − t₀)`,
//!
//! with the blended gradient as the normal and `−∂d/∂t n = −(d₁ − d₀)/(t₁ − t₀) n` as the
//! surface's velocity at `p` (how fast the surface moves along its normal there), which
//! friction and the collision response take like a rigid body's velocity. Before the first
//! frame and after the last the body holds still.

use std::path::Path;
use std::time::Instant;

use glam::Vec3;
use rayon::prelude::*;
use tress_formats::TriMesh;

use super::Shape;
use super::grid::SdfGrid;
use super::mesh_sdf::{SdfParams, build};
use crate::error::{Error, Result};
use crate::groom::Transform;

/// A body mesh's frames as distance grids.
pub struct DeformingSdf {
    /// Frame times (s), increasing.
    pub times: Vec<f64>,
    pub grids: Vec<SdfGrid>,
    /// Seconds spent building each frame's grid (mean).
    pub build_seconds_per_frame: f64,
}

impl DeformingSdf {
    /// Grids of every mesh frame `(time, mesh)` (times increasing). With `cache`, a folder, each
    /// frame's grid is kept there (`frame.K.sdf`, with its mesh's digest) and read back instead
    /// of built again while its mesh and cell size are the same: a job's stages build the body
    /// once.
    pub fn new(frames: &[(f64, TriMesh)], params: &SdfParams, cache: Option<&Path>) -> Result<DeformingSdf> {
        if frames.is_empty() {
            return Err(Error::Invalid(
                "a deforming body needs at least one mesh frame".into(),
            ));
        }
        if frames
            .windows(2)
            .any(|w| w[1].0.partial_cmp(&w[0].0) != Some(std::cmp::Ordering::Greater))
        {
            return Err(Error::Invalid("the body mesh's frame times must increase".into()));
        }
        let clock = Instant::now();
        // Frames one after the other: each build is parallel inside. All the frames' grids
        // together stay under the one-grid limit.
        let mut grids = Vec::with_capacity(frames.len());
        let mut nodes = 0u64;
        if let Some(dir) = cache {
            std::fs::create_dir_all(dir).map_err(|e| Error::Write {
                path: dir.to_path_buf(),
                source: e,
            })?;
        }
        for (k, (t, m)) in frames.iter().enumerate() {
            let g = match cache {
                Some(dir) => cached_grid(&dir.join(format!("frame.{k}.sdf")), m, params)?,
                None => build(m, params)?,
            };
            nodes += g.values.len() as u64;
            if nodes > super::mesh_sdf::MAX_NODES {
                return Err(Error::Invalid(format!(
                    "the body mesh's distance grids pass {} nodes at its frame at {t:.3} s: use coarser cells or fewer frames",
                    super::mesh_sdf::MAX_NODES
                )));
            }
            grids.push(g);
        }
        Ok(DeformingSdf {
            times: frames.iter().map(|f| f.0).collect(),
            grids,
            build_seconds_per_frame: clock.elapsed().as_secs_f64() / frames.len() as f64,
        })
    }

    /// The frames around `t` and the blend between them.
    fn around(&self, t: f64) -> (usize, usize, f32) {
        let n = self.times.len();
        if n == 1 || t <= self.times[0] {
            return (0, 0, 0.0);
        }
        if t >= self.times[n - 1] {
            return (n - 1, n - 1, 0.0);
        }
        let k = self.times.partition_point(|&x| x <= t).clamp(1, n - 1);
        let (t0, t1) = (self.times[k - 1], self.times[k]);
        (k - 1, k, ((t - t0) / (t1 - t0)) as f32)
    }
}

impl Shape for DeformingSdf {
    fn sdf(&self, p: Vec3) -> (f32, Vec3) {
        self.grids[0].sample(p)
    }

    fn sdf_at(&self, p: Vec3, t: f64) -> (f32, Vec3, Vec3) {
        let (a, b, s) = self.around(t);
        let (d0, n0) = self.grids[a].sample(p);
        if a == b {
            return (d0, n0, Vec3::ZERO);
        }
        let (d1, n1) = self.grids[b].sample(p);
        if d0 == d1 && n0 == n1 {
            // The body does not move here (and a still body gives exactly the rigid result).
            return (d0, n0, Vec3::ZERO);
        }
        let d = d0 + (d1 - d0) * s;
        let n = (n0 + (n1 - n0) * s).normalize_or(n1);
        let rate = (d1 - d0) / (self.times[b] - self.times[a]) as f32;
        (d, n, -rate * n)
    }
}

/// The grid of `mesh` kept at `path`, or built (and kept there) when the file is missing or was
/// made from another mesh or cell size.
fn cached_grid(path: &Path, mesh: &TriMesh, params: &SdfParams) -> Result<SdfGrid> {
    use super::head_mesh::{from_file, mesh_digest, to_file};
    let digest = mesh_digest(mesh);
    if let Ok(f) = tress_formats::sdf::read(path)
        && f.mesh_digest == digest
        && f.cell == params.cell
        && f.band_cells == params.band_cells
    {
        return Ok(from_file(f));
    }
    let g = build(mesh, params)?;
    tress_formats::sdf::write(path, &to_file(&g, params.band_cells, digest))
        .map_err(|e| crate::error::output_error(path, e))?;
    Ok(g)
}

/// Whether a body setting names an animated body mesh (an `.abc` or USD file, or an `.obj`
/// sequence with `#` for the frame digits) rather than a body preset.
pub fn is_body_mesh(spec: &str) -> bool {
    let lower = spec.to_ascii_lowercase();
    lower.ends_with(".abc") || is_usd(&lower) || (lower.ends_with(".obj") && spec.contains('#'))
}

fn is_usd(lower: &str) -> bool {
    [".usd", ".usda", ".usdc", ".usdz"]
        .iter()
        .any(|e| lower.ends_with(e))
}

/// The frames of an animated body mesh, brought into tress space by `transform`: every sample
/// of an Alembic file's first polymesh (at its time sampling's times, in world space), or the
/// files of an OBJ sequence (`body.####.obj`: every file whose `#`s are digits, at frame / fps).
pub fn read_body_frames(spec: &str, transform: &Transform, fps: f64) -> Result<Vec<(f64, TriMesh)>> {
    let lower = spec.to_ascii_lowercase();
    let mut frames = if lower.ends_with(".abc") {
        super::head_mesh::abc_polymesh_samples(Path::new(spec), false)?
    } else if is_usd(&lower) {
        super::head_mesh::usd_mesh_samples(Path::new(spec))?
    } else {
        obj_frames(spec, fps)?
    };
    for (_, m) in &mut frames {
        super::head_mesh::transform_mesh(m, transform);
    }
    Ok(frames)
}

/// The files of a body mesh setting: the `.abc` file, or the OBJ sequence's files in frame
/// order with their frame numbers.
pub fn body_files(spec: &str) -> Result<Vec<(i64, std::path::PathBuf)>> {
    let lower = spec.to_ascii_lowercase();
    if lower.ends_with(".abc") || is_usd(&lower) {
        return Ok(vec![(0, std::path::PathBuf::from(spec))]);
    }
    let path = Path::new(spec);
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| Error::Invalid(format!("{spec}: no file name")))?;
    let start = name.find('#').expect("a # in the pattern");
    let digits = name[start..].chars().take_while(|c| *c == '#').count();
    let (prefix, suffix) = (&name[..start], &name[start + digits..]);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let entries = std::fs::read_dir(&dir).map_err(|e| Error::Invalid(format!("{}: {e}", dir.display())))?;
    let mut found: Vec<(i64, std::path::PathBuf)> = Vec::new();
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(f) = file.to_str() else { continue };
        if let Some(mid) = f.strip_prefix(prefix).and_then(|r| r.strip_suffix(suffix))
            && mid.len() >= digits
            && mid.chars().all(|c| c.is_ascii_digit())
            && let Ok(n) = mid.parse::<i64>()
        {
            found.push((n, e.path()));
        }
    }
    if found.is_empty() {
        return Err(Error::Invalid(format!("{spec}: no files of the sequence")));
    }
    found.sort();
    if found.len() > 100_000 {
        return Err(Error::Invalid(format!("{spec}: more than 100000 frames")));
    }
    Ok(found)
}

fn obj_frames(pattern: &str, fps: f64) -> Result<Vec<(f64, TriMesh)>> {
    body_files(pattern)?
        .par_iter()
        .map(|(n, p)| Ok((*n as f64 / fps, tress_formats::obj::read(p)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::mesh_sdf::tests::uv_sphere;

    fn ball(r: f32) -> TriMesh {
        uv_sphere(r, 48, 96)
    }

    /// A ball growing from 5 to 6 cm in 1 s: halfway its surface is at 5.5 cm and moves
    /// outwards at 1 cm/s; before and after, it holds still at its end sizes; a ball that does
    /// not change gives the rigid grid's values exactly.
    #[test]
    fn a_growing_ball_blends_its_frames_and_moves_its_surface() {
        let params = SdfParams {
            cell: 0.1,
            ..Default::default()
        };
        let d = DeformingSdf::new(&[(0.0, ball(5.0)), (1.0, ball(6.0))], &params, None).unwrap();
        let p = Vec3::new(0.0, 5.5, 0.0);
        let (dist, n, v) = d.sdf_at(p, 0.5);
        assert!(dist.abs() < 0.01, "{dist}");
        // (The ball's facets and the grid tilt the normal by up to a few degrees.)
        assert!(n.dot(Vec3::Y) > 0.998, "{n}");
        assert!(
            (v.length() - 1.0).abs() < 0.02 && v.normalize().dot(n) > 0.9999,
            "{v}"
        );
        let (d0, _, v0) = d.sdf_at(p, -1.0);
        let (d1, _, v1) = d.sdf_at(p, 2.0);
        assert!((d0 - 0.5).abs() < 0.01 && (d1 + 0.5).abs() < 0.01, "{d0} {d1}");
        assert_eq!((v0, v1), (Vec3::ZERO, Vec3::ZERO));
        let still = DeformingSdf::new(
            &[(0.0, ball(5.0)), (0.5, ball(5.0)), (1.0, ball(5.0))],
            &params,
            None,
        )
        .unwrap();
        let rigid = build(&ball(5.0), &params).unwrap();
        for q in [Vec3::new(1.0, 4.0, 2.0), Vec3::new(-3.0, 0.5, 4.2), Vec3::ZERO] {
            for t in [0.1, 0.5, 0.77] {
                let (a, na, va) = still.sdf_at(q, t);
                let (b, nb) = rigid.sdf(q);
                assert_eq!((a, na, va), (b, nb, Vec3::ZERO));
            }
        }
        assert!(is_body_mesh("body.####.obj") && is_body_mesh("anim.abc") && !is_body_mesh("default"));
    }

    /// Kept grids are read back while the meshes are the same and built again when one
    /// changes.
    #[test]
    fn kept_grids_are_reused_only_for_the_same_mesh() {
        let dir = std::env::temp_dir().join(format!("tress-body-cache-{}", std::process::id()));
        let params = SdfParams {
            cell: 0.5,
            ..Default::default()
        };
        let frames = [(0.0, ball(5.0)), (1.0, ball(6.0))];
        let a = DeformingSdf::new(&frames, &params, Some(&dir)).unwrap();
        let kept = dir.join("frame.1.sdf");
        let stamp = std::fs::metadata(&kept).unwrap().modified().unwrap();
        let b = DeformingSdf::new(&frames, &params, Some(&dir)).unwrap();
        assert_eq!(std::fs::metadata(&kept).unwrap().modified().unwrap(), stamp);
        for (x, y) in a.grids.iter().zip(&b.grids) {
            assert_eq!(x.values, y.values);
        }
        let changed = [(0.0, ball(5.0)), (1.0, ball(7.0))];
        let c = DeformingSdf::new(&changed, &params, Some(&dir)).unwrap();
        let fresh = build(&ball(7.0), &params).unwrap();
        assert_eq!(c.grids[1].values, fresh.values);
        std::fs::remove_dir_all(&dir).ok();
    }
}
