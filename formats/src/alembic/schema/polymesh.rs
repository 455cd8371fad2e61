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
