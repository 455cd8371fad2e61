//! Triangle meshes as the mesh readers return them (head and body colliders).

use crate::error::{Error, Result};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriMesh {
    pub positions: Vec<[f32; 3]>,
    pub triangles: Vec<[u32; 3]>,
}

impl TriMesh {
    /// Checks that every index is in range and every position finite.
    pub fn validate(&self) -> Result<()> {
        let n = self.positions.len();
        if let Some((t, tri)) = self
            .triangles
            .iter()
            .enumerate()
            .find(|(_, t)| t.iter().any(|&i| i as usize >= n))
        {
            return Err(Error::corrupt(format!(
                "triangle {t} references vertex {} but the mesh has {n} vertices",
                tri.iter().max().expect("three indices")
            )));
        }
        if let Some(i) = self
            .positions
            .iter()
            .position(|p| p.iter().any(|c| !c.is_finite()))
        {
            return Err(Error::corrupt(format!("vertex {i} is not finite")));
        }
        Ok(())
    }

    /// Axis-aligned bounds (min, max); `None` for an empty mesh.
    pub fn bounds(&self) -> Option<([f32; 3], [f32; 3])> {
        let first = *self.positions.first()?;
        Some(self.positions.iter().fold((first, first), |(lo, hi), p| {
            (
                [lo[0].min(p[0]), lo[1].min(p[1]), lo[2].min(p[2])],
                [hi[0].max(p[0]), hi[1].max(p[1]), hi[2].max(p[2])],
            )
        }))
    }
}
