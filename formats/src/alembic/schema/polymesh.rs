//! `AbcGeom_PolyMesh_v1`: `.geom` holds `P`, `.faceIndices` and `.faceCounts`.

use super::super::abc::{Archive, Compound, Object, Pod, Property};
use crate::error::{Error, Result};

pub const SCHEMA: &str = "AbcGeom_PolyMesh_v1";

pub struct PolyMeshReader {
    pub geom: Compound,
    pub positions: Property,
    pub face_indices: Property,
    pub face_counts: Property,
}

/// Topology and points of one sample.
#[derive(Clone, Debug, PartialEq)]
pub struct PolyMeshSample {
    pub positions: Vec<[f32; 3]>,
    pub face_counts: Vec<u32>,
    pub face_indices: Vec<u32>,
}

impl PolyMeshSample {
    /// Fan-triangulated faces.
    pub fn triangles(&self) -> Vec<[u32; 3]> {
        let mut out = Vec::new();
        let mut at = 0usize;
        for &c in &self.face_counts {
            let f = &self.face_indices[at..at + c as usize];
            for k in 1..f.len().saturating_sub(1) {
                out.push([f[0], f[k], f[k + 1]]);
            }
            at += c as usize;
        }
        out
    }
}

impl PolyMeshReader {
    pub fn open(ar: &Archive, obj: &Object) -> Result<PolyMeshReader> {
        let top = ar.properties(obj)?;
        let geom = ar
            .compound(&top, ".geom")?
            .ok_or_else(|| Error::corrupt(format!("mesh {} has no .geom compound", obj.full_name)))?;
        let need = |name: &str, pod: Pod, extent: u8| -> Result<Property> {
            let p = ar
                .property(&geom, name)?
                .ok_or_else(|| Error::corrupt(format!("mesh {} has no {name}", obj.full_name)))?;
            if p.header.pod != pod || p.header.extent != extent {
                return Err(Error::corrupt(format!(
                    "mesh {}: {name} has the wrong type",
                    obj.full_name
                )));
            }
            Ok(p)
        };
        Ok(PolyMeshReader {
            positions: need("P", Pod::F32, 3)?,
            face_indices: need(".faceIndices", Pod::I32, 1)?,
            face_counts: need(".faceCounts", Pod::I32, 1)?,
            geom,
        })
    }

    pub fn num_samples(&self) -> usize {
        self.positions.num_samples()
    }

    /// Sample `index`, with face indices checked against the points.
    pub fn sample(&self, ar: &Archive, index: usize) -> Result<PolyMeshSample> {
        let clamp = |p: &Property| index.min(p.num_samples().saturating_sub(1));
        let positions: Vec<[f32; 3]> = ar.read_sample(&self.positions, index)?;
        let counts: Vec<i32> = ar.read_sample(&self.face_counts, clamp(&self.face_counts))?;
        let indices: Vec<i32> = ar.read_sample(&self.face_indices, clamp(&self.face_indices))?;
        let total: i64 = counts.iter().map(|&c| c as i64).sum();
        if counts.iter().any(|&c| c < 0) || total != indices.len() as i64 {
            return Err(Error::corrupt(format!(
                "face counts add up to {total} but there are {} face indices",
                indices.len()
            )));
        }
        let n = positions.len() as i64;
        if let Some(&bad) = indices.iter().find(|&&i| i < 0 || i as i64 >= n) {
            return Err(Error::corrupt(format!(
                "a face uses point {bad} but the mesh has {n}"
            )));
        }
        Ok(PolyMeshSample {
            positions,
            face_counts: counts.into_iter().map(|c| c as u32).collect(),
            face_indices: indices.into_iter().map(|i| i as u32).collect(),
        })
    }
}

/// Writes a polymesh object, one sample per [`PolyMeshWriter::set`] (head caches, colliders).
pub struct PolyMeshWriter {
    pub object: super::super::abc::write::ObjectId,
    self_bounds: super::super::abc::write::PropId,
    positions: super::super::abc::write::PropId,
    indices: super::super::abc::write::PropId,
    counts: super::super::abc::write::PropId,
}

impl PolyMeshWriter {
    pub fn new<W: std::io::Write + std::io::Seek>(
        ar: &mut super::super::abc::write::OArchive<W>,
        parent: super::super::abc::write::ObjectId,
        name: &str,
        time_sampling: u32,
    ) -> Result<PolyMeshWriter> {
        use super::super::abc::MetaData;
        let (obj_md, geom_md) = super::schema_metadata(SCHEMA, Some("AbcGeom_GeomBase_v1"), ".geom");
        let object = ar.add_object(parent, name, obj_md)?;
        let top = ar.properties(object);
        let geom = ar.add_compound(top, ".geom", geom_md)?;
        let ts = time_sampling;
        Ok(PolyMeshWriter {
            object,
            self_bounds: ar.add_scalar(
                geom,
                ".selfBnds",
                Pod::F64,
                6,
                ts,
                MetaData::from_pairs([("interpretation", "box")]),
            )?,
            positions: ar.add_array(
                geom,
                "P",
                Pod::F32,
                3,
                ts,
                MetaData::from_pairs([("geoScope", "vtx"), ("interpretation", "point")]),
            )?,
            indices: ar.add_array(geom, ".faceIndices", Pod::I32, 1, ts, MetaData::new())?,
            counts: ar.add_array(geom, ".faceCounts", Pod::I32, 1, ts, MetaData::new())?,
        })
    }

    /// Writes one sample (topology repeats are stored once).
    pub fn set<W: std::io::Write + std::io::Seek>(
        &mut self,
        ar: &mut super::super::abc::write::OArchive<W>,
        positions: &[[f32; 3]],
        face_indices: &[i32],
        face_counts: &[i32],
    ) -> Result<()> {
        let total: i64 = face_counts.iter().map(|&c| c as i64).sum();
        if total != face_indices.len() as i64
            || face_indices
                .iter()
                .any(|&i| i < 0 || i as usize >= positions.len())
        {
            return Err(Error::invalid(
                "face counts and indices do not describe faces of these points",
            ));
        }
        ar.set_scalar(
            self.self_bounds,
            bytemuck::cast_slice(&super::bounds_of(positions)),
        )?;
        ar.set_array(
            self.positions,
            bytemuck::cast_slice(positions),
            positions.len() as u64,
        )?;
        ar.set_array(
            self.indices,
            bytemuck::cast_slice(face_indices),
            face_indices.len() as u64,
        )?;
        ar.set_array(
            self.counts,
            bytemuck::cast_slice(face_counts),
            face_counts.len() as u64,
        )
    }
}
