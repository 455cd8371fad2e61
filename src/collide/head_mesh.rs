//! Head and body meshes from files (OBJ, glTF, Alembic polymesh), brought into tress's units
//! and axes, and their signed distance grids built or loaded from an `.sdf` cache.

use std::path::Path;

use glam::{UVec3, Vec3};
use tress_formats::alembic::cache::AbcReader;
use tress_formats::alembic::schema::SchemaKind;
use tress_formats::alembic::schema::polymesh::PolyMeshReader;
use tress_formats::sdf::SdfFile;
use tress_formats::{InFile, TriMesh};

use super::grid::SdfGrid;
use super::mesh_sdf::{SdfParams, build};
use crate::error::{Error, Result};
use crate::groom::Transform;

/// Reads a triangle mesh: `.obj`, `.glb` / `.gltf` (every mesh node, at rest, in world space),
/// `.abc` (the first polymesh's first sample, in world space) or USD (every `Mesh` prim at its
/// default value or first time sample, in world space).
pub fn read_mesh(path: &Path) -> Result<TriMesh> {
    let ext = tress_formats::extension(path);
    match ext.as_deref() {
        Some("obj") => Ok(tress_formats::obj::read(path)?),
        Some("glb") | Some("gltf") => {
            let doc = tress_formats::gltf::read(path)?;
            if let Some(why) = &doc.meshes_unreadable {
                return Err(Error::Invalid(format!(
                    "{}: {why} (tress reads uncompressed triangle meshes; its animation can still drive a head track)",
                    path.display()
                )));
            }
            let mut out = TriMesh::default();
            for (i, node) in doc.nodes.iter().enumerate() {
                let Some(m) = node.mesh else { continue };
                let mut world = glam::Mat4::IDENTITY;
                let mut at = Some(i);
                while let Some(n) = at {
                    let nd = &doc.nodes[n];
                    let local = glam::Mat4::from_scale_rotation_translation(
                        Vec3::from_array(nd.scale),
                        glam::Quat::from_array(nd.rotation),
                        Vec3::from_array(nd.translation),
                    );
                    world = local * world;
                    at = nd.parent;
                }
                let Some(mesh) = doc.meshes.get(m) else { continue };
                let base = out.positions.len() as u32;
                out.positions.extend(
                    mesh.positions
                        .iter()
                        .map(|p| world.transform_point3(Vec3::from_array(*p)).to_array()),
                );
                out.triangles
                    .extend(mesh.triangles.iter().map(|t| t.map(|i| i + base)));
            }
            if out.triangles.is_empty() {
                return Err(Error::Invalid(format!("{}: no triangle meshes", path.display())));
            }
            Ok(out)
        }
        Some("abc") => Ok(abc_polymesh_samples(path, true)?.remove(0).1),
        Some("usd" | "usda" | "usdc" | "usdz") => {
            // Every Mesh prim, at its default value or first sample, in world space.
            let f = tress_formats::usd::read::UsdFile::open(path)?;
            let mut out = TriMesh::default();
            for p in f.prims_of("Mesh")? {
                let m = f.mesh(&p, None)?;
                let base = out.positions.len() as u32;
                out.positions.extend(m.positions);
                out.triangles
                    .extend(m.triangles.iter().map(|t| t.map(|i| i + base)));
            }
            if out.triangles.is_empty() {
                return Err(Error::Invalid(format!(
                    "{}: no Mesh prim with faces",
                    path.display()
                )));
            }
            Ok(out)
        }
        _ => Err(Error::Invalid(format!(
            "{}: unknown mesh format (known: .obj, .glb, .gltf, .abc, .usd/.usda/.usdc/.usdz)",
            path.display()
        ))),
    }
}

/// The first polymesh of an Alembic file, in world space, at each sample's time (only the first
/// sample with `first_only`).
pub fn abc_polymesh_samples(path: &Path, first_only: bool) -> Result<Vec<(f64, TriMesh)>> {
    let r = AbcReader::open(path)?;
    let obj = r
        .archive
        .objects()
        .in_file(path)?
        .into_iter()
        .find(|o| SchemaKind::of(o) == SchemaKind::PolyMesh)
        .ok_or_else(|| Error::Invalid(format!("{}: no polymesh", path.display())))?;
    let m = PolyMeshReader::open(&r.archive, &obj).in_file(path)?;
    let sampling = &r.archive.time_samplings[m.positions.header.time_sampling as usize];
    let count = if first_only { 1 } else { m.num_samples() };
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let s = m.sample(&r.archive, i).in_file(path)?;
        let t = sampling.time(i);
        let w = glam::DMat4::from_cols_array_2d(&r.world_matrix(&obj.full_name, t)?);
        let positions = s
            .positions
            .iter()
            .map(|p| {
                w.transform_point3(Vec3::from_array(*p).as_dvec3())
                    .as_vec3()
                    .to_array()
            })
            .collect();
        out.push((
            t,
            TriMesh {
                positions,
                triangles: s.triangles(),
            },
        ));
    }
    Ok(out)
}

/// The first time-sampled `Mesh` prim of a USD stage (else the first Mesh), in world space at
/// each of its `points` time codes (frame numbers), as (seconds, mesh) at `fps` time codes per
/// second.
pub fn usd_mesh_samples(path: &Path) -> Result<Vec<(f64, TriMesh)>> {
    let f = tress_formats::usd::read::UsdFile::open(path)?;
    let fps = f.info()?.time_codes_per_second;
    let meshes = f.prims_of("Mesh")?;
    let mut chosen = None;
    for p in &meshes {
        let times = f.sample_times(p, "points")?;
        if !times.is_empty() {
            chosen = Some((p.clone(), times));
            break;
        }
    }
    let (prim, times) = match chosen {
        Some(c) => c,
        None => match meshes.first() {
            Some(p) => (p.clone(), Vec::new()),
            None => return Err(Error::Invalid(format!("{}: no Mesh prim", path.display()))),
        },
    };
    if times.is_empty() {
        return Ok(vec![(0.0, f.mesh(&prim, None)?)]);
    }
    times
        .into_iter()
        .map(|t| Ok((t / fps, f.mesh(&prim, Some(t))?)))
        .collect()
}

/// Applies a unit / axis conversion to a mesh.
pub fn transform_mesh(mesh: &mut TriMesh, t: &Transform) {
    for p in &mut mesh.positions {
        *p = t.apply_point(Vec3::from_array(*p)).to_array();
    }
}

/// Digest of a mesh's geometry, stored in `.sdf` files to notice stale caches.
pub fn mesh_digest(mesh: &TriMesh) -> [u8; 16] {
    let mut bytes: Vec<u8> = bytemuck::cast_slice(&mesh.positions).to_vec();
    bytes.extend_from_slice(bytemuck::cast_slice(&mesh.triangles));
    tress_formats::alembic::abc::hash::digest(&bytes).to_bytes()
}

pub fn to_file(g: &SdfGrid, band_cells: u32, digest: [u8; 16]) -> SdfFile {
    SdfFile {
        dims: g.dims.to_array(),
        origin: g.origin.to_array(),
        cell: g.cell,
        band_cells,
        mesh_digest: digest,
        values: g.values.clone(),
    }
}

pub fn from_file(f: SdfFile) -> SdfGrid {
    SdfGrid {
        origin: Vec3::from_array(f.origin),
        cell: f.cell,
        dims: UVec3::from_array(f.dims),
        values: f.values,
    }
}

/// The grid of a head given as a mesh file (built) or an `.sdf` file (loaded).
pub fn head_grid(path: &Path, t: &Transform, params: &SdfParams) -> Result<SdfGrid> {
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("sdf")) {
        return Ok(from_file(tress_formats::sdf::read(path)?));
    }
    let mut mesh = read_mesh(path)?;
    transform_mesh(&mut mesh, t);
    build(&mesh, params)
}
