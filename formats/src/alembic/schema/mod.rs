//! Schemas over the property layer, as the official AbcGeom library writes and reads them:
//! curves, xforms and polymeshes in full; every other schema is recognized by name so tools
//! can list it and skip it.

pub mod curves;
pub mod geom_param;
pub mod polymesh;
pub mod xform;

use super::abc::{MetaData, Object};

/// What an object is, from its `schema` metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchemaKind {
    Curves,
    Xform,
    PolyMesh,
    SubD,
    Points,
    NuPatch,
    Camera,
    Light,
    FaceSet,
    /// A schema tress does not know; listed and skipped.
    Other(String),
    /// A plain object without schema.
    None,
}

impl SchemaKind {
    pub fn of(obj: &Object) -> SchemaKind {
        match obj.schema() {
            None => SchemaKind::None,
            Some("AbcGeom_Curve_v2") => SchemaKind::Curves,
            Some("AbcGeom_Xform_v3") => SchemaKind::Xform,
            Some("AbcGeom_PolyMesh_v1") => SchemaKind::PolyMesh,
            Some("AbcGeom_SubD_v1") => SchemaKind::SubD,
            Some("AbcGeom_Points_v1") => SchemaKind::Points,
            Some("AbcGeom_NuPatch_v2") => SchemaKind::NuPatch,
            Some("AbcGeom_Camera_v1") => SchemaKind::Camera,
            Some("AbcGeom_Light_v1") => SchemaKind::Light,
            Some("AbcGeom_FaceSet_v1") => SchemaKind::FaceSet,
            Some(other) => SchemaKind::Other(other.to_string()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            SchemaKind::Curves => "Curves",
            SchemaKind::Xform => "Xform",
            SchemaKind::PolyMesh => "PolyMesh",
            SchemaKind::SubD => "SubD",
            SchemaKind::Points => "Points",
            SchemaKind::NuPatch => "NuPatch",
            SchemaKind::Camera => "Camera",
            SchemaKind::Light => "Light",
            SchemaKind::FaceSet => "FaceSet",
            SchemaKind::Other(s) => s,
            SchemaKind::None => "Object",
        }
    }

    /// The schema's property compound (`.geom`, `.xform`, `.faceset`).
    pub fn compound_name(&self) -> Option<&'static str> {
        match self {
            SchemaKind::Xform => Some(".xform"),
            SchemaKind::FaceSet => Some(".faceset"),
            SchemaKind::Other(_) | SchemaKind::None => None,
            _ => Some(".geom"),
        }
    }
}

/// Object and compound metadata of a schema object, as `OSchemaObject` writes them.
pub fn schema_metadata(schema: &str, base: Option<&str>, compound: &str) -> (MetaData, MetaData) {
    let title = format!("{schema}:{compound}");
    let mut obj = vec![("schema", schema), ("schemaObjTitle", title.as_str())];
    let mut comp = vec![("schema", schema)];
    if let Some(b) = base {
        obj.push(("schemaBaseType", b));
        comp.push(("schemaBaseType", b));
    }
    (MetaData::from_pairs(obj), MetaData::from_pairs(comp))
}

/// Axis-aligned bounds of points as Alembic's Box3d: min x, y, z, max x, y, z.
pub fn bounds_of(points: &[[f32; 3]]) -> [f64; 6] {
    if points.is_empty() {
        // The library's empty box.
        return [f64::MAX, f64::MAX, f64::MAX, -f64::MAX, -f64::MAX, -f64::MAX];
    }
    // Plain comparisons (not f32::min, whose NaN rule blocks vectorization) over 4-point
    // chunks of 12 lanes; positions are finite by the time they are written.
    let mut lo = [f32::INFINITY; 12];
    let mut hi = [f32::NEG_INFINITY; 12];
    let flat: &[f32] = bytemuck::cast_slice(points);
    let mut chunks = flat.chunks_exact(12);
    for c in &mut chunks {
        for k in 0..12 {
            lo[k] = if c[k] < lo[k] { c[k] } else { lo[k] };
            hi[k] = if c[k] > hi[k] { c[k] } else { hi[k] };
        }
    }
    for (i, &v) in chunks.remainder().iter().enumerate() {
        lo[i] = if v < lo[i] { v } else { lo[i] };
        hi[i] = if v > hi[i] { v } else { hi[i] };
    }
    let mut b = [0.0f64; 6];
    for k in 0..3 {
        b[k] = (0..4).map(|j| lo[3 * j + k]).fold(f32::INFINITY, f32::min) as f64;
        b[k + 3] = (0..4).map(|j| hi[3 * j + k]).fold(f32::NEG_INFINITY, f32::max) as f64;
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_match_a_plain_scan() {
        let pts: Vec<[f32; 3]> = (0..37)
            .map(|i| [(i as f32 * 1.7).sin(), (i as f32).cos() * 3.0, i as f32 - 20.0])
            .collect();
        let b = bounds_of(&pts);
        for k in 0..3 {
            let lo = pts.iter().map(|p| p[k]).fold(f32::INFINITY, f32::min) as f64;
            let hi = pts.iter().map(|p| p[k]).fold(f32::NEG_INFINITY, f32::max) as f64;
            assert_eq!((b[k], b[k + 3]), (lo, hi));
        }
        assert_eq!(bounds_of(&[[1.0, 2.0, 3.0]]), [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    }
}
