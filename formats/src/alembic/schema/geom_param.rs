//! Geometry parameters (GeomParams): arrays with a scope (`geoScope`), either plain or indexed
//! (a compound holding `.vals` and `.indices`). A missing `geoScope` means constant scope.

use super::super::abc::{Archive, Compound, MetaData, Pod, PropertyKind};
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Constant,
    Uniform,
    Varying,
    Vertex,
    FaceVarying,
    Unknown,
}

impl Scope {
    pub fn code(self) -> &'static str {
        match self {
            Scope::Constant => "con",
            Scope::Uniform => "uni",
            Scope::Varying => "var",
            Scope::Vertex => "vtx",
            Scope::FaceVarying => "fvr",
            Scope::Unknown => "unk",
        }
    }

    pub fn from_metadata(md: &MetaData) -> Scope {
        match md.get("geoScope").unwrap_or("") {
            "" | "con" => Scope::Constant,
            "uni" => Scope::Uniform,
            "var" => Scope::Varying,
            "vtx" => Scope::Vertex,
            "fvr" => Scope::FaceVarying,
            _ => Scope::Unknown,
        }
    }
}

/// Metadata of a GeomParam as `OGeomParam` writes it.
pub fn geom_param_metadata(pod: Pod, extent: u8, scope: Scope, interpretation: Option<&str>) -> MetaData {
    let extent = extent.to_string();
    let mut pairs = vec![
        ("arrayExtent", "1"),
        ("geoScope", scope.code()),
        ("isGeomParam", "true"),
        ("podExtent", extent.as_str()),
        ("podName", pod.name()),
    ];
    if let Some(i) = interpretation {
        pairs.push(("interpretation", i));
    }
    MetaData::from_pairs(pairs)
}

/// A GeomParam sample, expanded through its indices when it has them.
#[derive(Clone, Debug, PartialEq)]
pub struct GeomParamSample<T> {
    pub values: Vec<T>,
    pub scope: Scope,
    pub indexed: bool,
}

/// Reads sample `index` of GeomParam `name` in `parent`, if present. `T` must match the
/// parameter's POD × extent size (e.g. `[f32; 2]` for uv).
pub fn read<T: bytemuck::Pod>(
    ar: &Archive,
    parent: &Compound,
    name: &str,
    index: usize,
) -> Result<Option<GeomParamSample<T>>> {
    let Some(h) = parent.children.iter().find(|h| h.name == name) else {
        return Ok(None);
    };
    if h.kind == PropertyKind::Compound {
        let c = ar.compound(parent, name)?.expect("listed");
        let vals = ar
            .property(&c, ".vals")?
            .ok_or_else(|| Error::corrupt(format!("indexed parameter {name} has no .vals")))?;
        let values: Vec<T> = ar.read_sample(&vals, index.min(vals.num_samples().saturating_sub(1)))?;
        let indices: Vec<u32> = match ar.property(&c, ".indices")? {
            Some(ip) if ip.num_samples() > 0 => ar.read_sample(&ip, index.min(ip.num_samples() - 1))?,
            _ => {
                return Err(Error::corrupt(format!(
                    "indexed parameter {name} has no .indices"
                )));
            }
        };
        let expanded = indices
            .iter()
            .map(|&i| {
                values.get(i as usize).copied().ok_or_else(|| {
                    Error::corrupt(format!(
                        "parameter {name}: index {i} is outside its {} values",
                        values.len()
                    ))
                })
            })
            .collect::<Result<Vec<T>>>()?;
        return Ok(Some(GeomParamSample {
            values: expanded,
            scope: Scope::from_metadata(&h.metadata),
            indexed: true,
        }));
    }
    let p = ar.property(parent, name)?.expect("listed");
    if p.num_samples() == 0 {
        return Ok(None);
    }
    let values = ar.read_sample(&p, index.min(p.num_samples() - 1))?;
    Ok(Some(GeomParamSample {
        values,
        scope: Scope::from_metadata(&h.metadata),
        indexed: false,
    }))
}
