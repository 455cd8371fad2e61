//! `AbcGeom_Curve_v2`: curves objects. The `.geom` compound holds `.selfBnds` (Box3d),
//! `P` (f32×3 per vertex), `nVertices` (i32 per curve), `curveBasisAndType` (u8 × 4: type,
//! wrap, basis, basis), then optional `.velocities`, `uv`, `width`, `.arbGeomParams`.

use std::io::{Seek, Write};

use super::super::abc::write::{CompoundId, OArchive, ObjectId, PropId};
use super::super::abc::{Archive, Compound, MetaData, Object, Pod, Property};
use super::geom_param::{self, GeomParamSample, Scope, geom_param_metadata};
use super::{bounds_of, schema_metadata};
use crate::error::{Error, Result};

pub const SCHEMA: &str = "AbcGeom_Curve_v2";
pub const BASE: &str = "AbcGeom_GeomBase_v1";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CurveType {
    Cubic,
    Linear,
    VariableOrder,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    None,
    Bezier,
    Bspline,
    CatmullRom,
    Hermite,
    Power,
}

impl Basis {
    fn from_u8(v: u8) -> Basis {
        match v {
            1 => Basis::Bezier,
            2 => Basis::Bspline,
            3 => Basis::CatmullRom,
            4 => Basis::Hermite,
            5 => Basis::Power,
            _ => Basis::None,
        }
    }
    fn code(self) -> u8 {
        self as u8
    }
}

/// Curve type, wrap and basis of a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CurveKind {
    pub curve_type: CurveType,
    pub periodic: bool,
    pub basis: Basis,
}

impl CurveKind {
    pub const LINEAR: CurveKind = CurveKind {
        curve_type: CurveType::Linear,
        periodic: false,
        basis: Basis::None,
    };

    fn bytes(self) -> [u8; 4] {
        let t = match self.curve_type {
            CurveType::Cubic => 0,
            CurveType::Linear => 1,
            CurveType::VariableOrder => 2,
        };
        [t, self.periodic as u8, self.basis.code(), self.basis.code()]
    }

    fn from_bytes(b: &[u8]) -> CurveKind {
        CurveKind {
            curve_type: match b.first() {
                Some(0) => CurveType::Cubic,
                Some(2) => CurveType::VariableOrder,
                _ => CurveType::Linear,
            },
            periodic: b.get(1) == Some(&1),
            basis: Basis::from_u8(*b.get(2).unwrap_or(&0)),
        }
    }
}

/// Reads a curves object.
pub struct CurvesReader {
    pub geom: Compound,
    pub positions: Property,
    pub counts: Property,
    kind: Option<Property>,
    velocities: Option<Property>,
    arb: Option<Compound>,
}

impl CurvesReader {
    pub fn open(ar: &Archive, obj: &Object) -> Result<CurvesReader> {
        let top = ar.properties(obj)?;
        let geom = ar.compound(&top, ".geom")?.ok_or_else(|| {
            Error::corrupt(format!("curves object {} has no .geom compound", obj.full_name))
        })?;
        let need = |name: &str| -> Result<Property> {
            ar.property(&geom, name)?
                .ok_or_else(|| Error::corrupt(format!("curves object {} has no {name}", obj.full_name)))
        };
        let positions = need("P")?;
        let counts = need("nVertices")?;
        if positions.header.pod != Pod::F32 || positions.header.extent != 3 {
            return Err(Error::corrupt(format!("{}: P is not float32 × 3", obj.full_name)));
        }
        if counts.header.pod != Pod::I32 {
            return Err(Error::corrupt(format!(
                "{}: nVertices is not int32",
                obj.full_name
            )));
        }
        let kind = ar.property(&geom, "curveBasisAndType")?;
        if let Some(k) = &kind
            && (k.header.pod != Pod::U8 || k.header.extent != 4)
        {
            return Err(Error::corrupt(format!(
                "{}: curveBasisAndType is not uint8 × 4",
                obj.full_name
            )));
        }
        let velocities = ar
            .property(&geom, ".velocities")?
            .filter(|v| v.header.pod == Pod::F32 && v.header.extent == 3);
        let arb = ar.compound(&geom, ".arbGeomParams")?;
        Ok(CurvesReader {
            geom,
            positions,
            counts,
            kind,
            velocities,
            arb,
        })
    }

    /// Samples of the object (those of `P`).
    pub fn num_samples(&self) -> usize {
        self.positions.num_samples()
    }

    pub fn time_sampling(&self) -> u32 {
        self.positions.header.time_sampling
    }

    fn clamp(p: &Property, i: usize) -> usize {
        i.min(p.num_samples().saturating_sub(1))
    }

    pub fn positions(&self, ar: &Archive, index: usize) -> Result<Vec<[f32; 3]>> {
        ar.read_sample(&self.positions, index)
    }

    pub fn positions_into(&self, ar: &Archive, index: usize, out: &mut Vec<[f32; 3]>) -> Result<()> {
        ar.read_sample_into(&self.positions, index, out)
    }

    /// Vertices per curve, checked to be positive.
    pub fn counts(&self, ar: &Archive, index: usize) -> Result<Vec<u32>> {
        let raw: Vec<i32> = ar.read_sample(&self.counts, Self::clamp(&self.counts, index))?;
        raw.iter()
            .map(|&c| u32::try_from(c).map_err(|_| Error::corrupt(format!("a curve has {c} vertices"))))
            .collect()
    }

    pub fn kind(&self, ar: &Archive, index: usize) -> Result<CurveKind> {
        match &self.kind {
            Some(k) if k.num_samples() > 0 => {
                Ok(CurveKind::from_bytes(&ar.sample_bytes(k, Self::clamp(k, index))?))
            }
            _ => Ok(CurveKind::LINEAR),
        }
    }

    pub fn velocities(&self, ar: &Archive, index: usize) -> Result<Option<Vec<[f32; 3]>>> {
        match &self.velocities {
            Some(v) if v.num_samples() > 0 => Ok(Some(ar.read_sample(v, Self::clamp(v, index))?)),
            _ => Ok(None),
        }
    }

    /// `width`, with the scope inferred from the count when `geoScope` is missing (Blender).
    pub fn widths(
        &self,
        ar: &Archive,
        index: usize,
        curves: usize,
        points: usize,
    ) -> Result<Option<GeomParamSample<f32>>> {
        let Some(mut w) = geom_param::read::<f32>(ar, &self.geom, "width", index)? else {
            return Ok(None);
        };
        let declared = self
            .geom
            .children
            .iter()
            .find(|h| h.name == "width")
            .map(|h| h.metadata.get("geoScope").is_some());
        if declared == Some(false) {
            w.scope = infer_scope(w.values.len(), curves, points);
        }
        Ok(Some(w))
    }

    pub fn uvs(&self, ar: &Archive, index: usize) -> Result<Option<GeomParamSample<[f32; 2]>>> {
        geom_param::read(ar, &self.geom, "uv", index)
    }

    /// Names, PODs, extents and scopes of the `.arbGeomParams`.
    pub fn arb_params(&self) -> Vec<(String, Pod, u8, Scope)> {
        self.arb
            .as_ref()
            .map(|a| {
                a.children
                    .iter()
                    .map(|h| (h.name.clone(), h.pod, h.extent, Scope::from_metadata(&h.metadata)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Reads one `.arbGeomParams` entry.
    pub fn arb<T: bytemuck::Pod>(
        &self,
        ar: &Archive,
        name: &str,
        index: usize,
    ) -> Result<Option<GeomParamSample<T>>> {
        match &self.arb {
            Some(a) => geom_param::read(ar, a, name, index),
            None => Ok(None),
        }
    }
}

fn infer_scope(n: usize, curves: usize, points: usize) -> Scope {
    if n == points {
        Scope::Vertex
    } else if n == curves {
        Scope::Uniform
    } else if n == 1 {
        Scope::Constant
    } else {
        Scope::Unknown
    }
}

/// What to create in a curves object besides positions and topology.
#[derive(Clone, Debug, Default)]
pub struct CurvesLayout {
    pub velocities: bool,
    /// Scope of the `width` parameter, if written.
    pub width: Option<Scope>,
    /// Scope of the `uv` parameter, if written.
    pub uv: Option<Scope>,
    /// `.arbGeomParams` entries: name, POD, extent, scope, interpretation.
    pub arb: Vec<(String, Pod, u8, Scope, Option<&'static str>)>,
}

/// One frame of a curves object.
#[derive(Clone, Copy, Debug)]
pub struct CurvesSample<'a> {
    pub positions: &'a [[f32; 3]],
    pub counts: &'a [i32],
    pub kind: CurveKind,
    pub velocities: Option<&'a [[f32; 3]]>,
    pub widths: Option<&'a [f32]>,
    pub uvs: Option<&'a [[f32; 2]]>,
}

/// Writes a curves object, one sample per call of [`CurvesWriter::set`].
pub struct CurvesWriter {
    pub object: ObjectId,
    self_bounds: PropId,
    positions: PropId,
    counts: PropId,
    kind: PropId,
    velocities: Option<PropId>,
    uv: Option<PropId>,
    width: Option<PropId>,
    arb: Vec<(String, PropId, usize)>,
    pub arb_compound: Option<CompoundId>,
}

impl CurvesWriter {
    pub fn new<W: Write + Seek>(
        ar: &mut OArchive<W>,
        parent: ObjectId,
        name: &str,
        time_sampling: u32,
        layout: &CurvesLayout,
    ) -> Result<CurvesWriter> {
        let (obj_md, geom_md) = schema_metadata(SCHEMA, Some(BASE), ".geom");
        let object = ar.add_object(parent, name, obj_md)?;
        let top = ar.properties(object);
        let geom = ar.add_compound(top, ".geom", geom_md)?;
        let ts = time_sampling;
        let self_bounds = ar.add_scalar(
            geom,
            ".selfBnds",
            Pod::F64,
            6,
            ts,
            MetaData::from_pairs([("interpretation", "box")]),
        )?;
        let positions = ar.add_array(
            geom,
            "P",
            Pod::F32,
            3,
            ts,
            MetaData::from_pairs([("geoScope", "vtx"), ("interpretation", "point")]),
        )?;
        let counts = ar.add_array(geom, "nVertices", Pod::I32, 1, ts, MetaData::new())?;
        let kind = ar.add_scalar(geom, "curveBasisAndType", Pod::U8, 4, ts, MetaData::new())?;
        let mut arb = Vec::new();
        let mut arb_compound = None;
        if !layout.arb.is_empty() {
            let c = ar.add_compound(geom, ".arbGeomParams", MetaData::new())?;
            for (n, pod, extent, scope, interp) in &layout.arb {
                let md = geom_param_metadata(*pod, *extent, *scope, *interp);
                let p = ar.add_array(c, n, *pod, *extent, ts, md)?;
                arb.push((n.clone(), p, pod.size() * *extent as usize));
            }
            arb_compound = Some(c);
        }
        let velocities = if layout.velocities {
            Some(ar.add_array(
                geom,
                ".velocities",
                Pod::F32,
                3,
                ts,
                MetaData::from_pairs([("interpretation", "vector")]),
            )?)
        } else {
            None
        };
        let uv = match layout.uv {
            Some(scope) => Some(ar.add_array(
                geom,
                "uv",
                Pod::F32,
                2,
                ts,
                geom_param_metadata(Pod::F32, 2, scope, Some("vector")),
            )?),
            None => None,
        };
        let width = match layout.width {
            Some(scope) => Some(ar.add_array(
                geom,
                "width",
                Pod::F32,
                1,
                ts,
                geom_param_metadata(Pod::F32, 1, scope, None),
            )?),
            None => None,
        };
        Ok(CurvesWriter {
            object,
            self_bounds,
            positions,
            counts,
            kind,
            velocities,
            uv,
            width,
            arb,
            arb_compound,
        })
    }

    /// Writes one sample; `arb` gives the bytes of each `.arbGeomParams` entry in layout order.
    pub fn set<W: Write + Seek>(
        &mut self,
        ar: &mut OArchive<W>,
        s: &CurvesSample,
        arb: &[&[u8]],
    ) -> Result<()> {
        let total: i64 = s.counts.iter().map(|&c| c as i64).sum();
        if total != s.positions.len() as i64 || s.counts.iter().any(|&c| c < 1) {
            return Err(Error::invalid(format!(
                "curve vertex counts add up to {total} but there are {} positions",
                s.positions.len()
            )));
        }
        ar.set_scalar(self.self_bounds, bytemuck::cast_slice(&bounds_of(s.positions)))?;
        ar.set_array(
            self.positions,
            bytemuck::cast_slice(s.positions),
            s.positions.len() as u64,
        )?;
        ar.set_array(self.counts, bytemuck::cast_slice(s.counts), s.counts.len() as u64)?;
        ar.set_scalar(self.kind, &s.kind.bytes())?;
        if arb.len() != self.arb.len() {
            return Err(Error::invalid(format!(
                "{} arbitrary parameters given, {} declared",
                arb.len(),
                self.arb.len()
            )));
        }
        for ((name, p, item), bytes) in self.arb.iter().zip(arb) {
            if *item == 0 {
                // Strings: NUL-terminated, back to back.
                if bytes.last().is_some_and(|&b| b != 0) {
                    return Err(Error::invalid(format!(
                        "parameter {name}: strings must each end with a NUL byte"
                    )));
                }
                let n = bytes.iter().filter(|&&b| b == 0).count();
                ar.set_array(*p, bytes, n as u64)?;
                continue;
            }
            if bytes.len() % item != 0 {
                return Err(Error::invalid(format!(
                    "parameter {name}: {} bytes is not whole values",
                    bytes.len()
                )));
            }
            ar.set_array(*p, bytes, (bytes.len() / item) as u64)?;
        }
        match (self.velocities, s.velocities) {
            (Some(p), Some(v)) => ar.set_array(p, bytemuck::cast_slice(v), v.len() as u64)?,
            (Some(_), None) => return Err(Error::invalid("velocities were declared but not given")),
            _ => {}
        }
        match (self.uv, s.uvs) {
            (Some(p), Some(v)) => ar.set_array(p, bytemuck::cast_slice(v), v.len() as u64)?,
            (Some(_), None) => return Err(Error::invalid("uvs were declared but not given")),
            _ => {}
        }
        match (self.width, s.widths) {
            (Some(p), Some(v)) => ar.set_array(p, bytemuck::cast_slice(v), v.len() as u64)?,
            (Some(_), None) => return Err(Error::invalid("widths were declared but not given")),
            _ => {}
        }
        Ok(())
    }
}
