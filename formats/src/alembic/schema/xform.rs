//! `AbcGeom_Xform_v3`: transforms. The `.xform` compound holds `.inherits` (bool per sample;
//! its sample count and time sampling are the xform's), `.ops` (u8 per op: type << 4 | hint,
//! on time sampling 0), `.vals` (all channels of all ops per sample), `isNotConstantIdentity`
//! and `.animChans`. Matrices follow Imath: row-major, row vectors (`p' = p · M`), translation
//! in the last row; the first op in the list is the outermost.

use std::io::{Seek, Write};

use super::super::abc::write::{CompoundId, OArchive, ObjectId, PropId};
use super::super::abc::{Archive, MetaData, Object, Pod, Property};
use super::schema_metadata;
use crate::error::{Error, Result};

pub const SCHEMA: &str = "AbcGeom_Xform_v3";

/// Row-major 4×4, row-vector convention (Imath `M44d`).
pub type Matrix = [[f64; 4]; 4];

pub const IDENTITY: Matrix = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

/// `a · b`: apply `a`, then `b` (row vectors).
pub fn mul(a: &Matrix, b: &Matrix) -> Matrix {
    let mut m = [[0.0; 4]; 4];
    for (r, row) in m.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = (0..4).map(|k| a[r][k] * b[k][c]).sum();
        }
    }
    m
}

fn rotation(axis: [f64; 3], degrees: f64) -> Matrix {
    let len = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
    if len == 0.0 {
        return IDENTITY;
    }
    let [x, y, z] = axis.map(|a| a / len);
    let (s, c) = degrees.to_radians().sin_cos();
    let t = 1.0 - c;
    // Column-vector Rodrigues matrix, transposed for row vectors.
    let col = [
        [t * x * x + c, t * x * y - s * z, t * x * z + s * y],
        [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
        [t * x * z - s * y, t * y * z + s * x, t * z * z + c],
    ];
    let mut m = IDENTITY;
    for r in 0..3 {
        for k in 0..3 {
            m[r][k] = col[k][r];
        }
    }
    m
}

/// Composes an op list with its channel values into the local matrix.
pub fn compose(ops: &[u8], vals: &[f64]) -> Result<Matrix> {
    let mut at = 0usize;
    let mut mats = Vec::with_capacity(ops.len());
    for &op in ops {
        let n = match op >> 4 {
            0 | 1 => 3,
            2 => 4,
            3 => 16,
            4..=6 => 1,
            t => return Err(Error::corrupt(format!("unknown xform op type {t}"))),
        };
        let v = vals.get(at..at + n).ok_or_else(|| {
            Error::corrupt(format!(
                "xform ops need more than the {} channel values",
                vals.len()
            ))
        })?;
        at += n;
        let mut m = IDENTITY;
        match op >> 4 {
            0 => (0..3).for_each(|i| m[i][i] = v[i]),
            1 => m[3][..3].copy_from_slice(&v[..3]),
            2 => m = rotation([v[0], v[1], v[2]], v[3]),
            3 => (0..16).for_each(|i| m[i / 4][i % 4] = v[i]),
            4 => m = rotation([1.0, 0.0, 0.0], v[0]),
            5 => m = rotation([0.0, 1.0, 0.0], v[0]),
            _ => m = rotation([0.0, 0.0, 1.0], v[0]),
        }
        mats.push(m);
    }
    // First op outermost: M = M_n · … · M_1.
    Ok(mats.iter().rev().fold(IDENTITY, |acc, m| mul(&acc, m)))
}

pub struct XformReader {
    inherits: Option<Property>,
    ops: Option<Property>,
    vals: Option<Property>,
}

impl XformReader {
    pub fn open(ar: &Archive, obj: &Object) -> Result<XformReader> {
        let top = ar.properties(obj)?;
        let Some(x) = ar.compound(&top, ".xform")? else {
            return Ok(XformReader {
                inherits: None,
                ops: None,
                vals: None,
            });
        };
        Ok(XformReader {
            inherits: ar.property(&x, ".inherits")?,
            ops: ar.property(&x, ".ops")?,
            vals: ar.property(&x, ".vals")?,
        })
    }

    /// Samples of the xform (those of `.inherits`; 0 for a static identity).
    pub fn num_samples(&self) -> usize {
        self.inherits.as_ref().map_or(0, Property::num_samples)
    }

    pub fn time_sampling(&self) -> u32 {
        self.inherits.as_ref().map_or(0, |p| p.header.time_sampling)
    }

    pub fn inherits(&self, ar: &Archive, index: usize) -> Result<bool> {
        match &self.inherits {
            Some(p) if p.num_samples() > 0 => {
                Ok(ar.sample_bytes(p, index)?.first().copied().unwrap_or(1) != 0)
            }
            _ => Ok(true),
        }
    }

    /// Op codes (constant over samples).
    pub fn ops(&self, ar: &Archive) -> Result<Vec<u8>> {
        match &self.ops {
            Some(p) if p.num_samples() > 0 => ar.sample_bytes(p, 0),
            _ => Ok(Vec::new()),
        }
    }

    /// The local matrix at sample `index`.
    pub fn local(&self, ar: &Archive, index: usize) -> Result<Matrix> {
        let ops = self.ops(ar)?;
        if ops.is_empty() {
            return Ok(IDENTITY);
        }
        let vals = match &self.vals {
            Some(p) if p.num_samples() > 0 => {
                if p.header.pod != Pod::F64 {
                    return Err(Error::corrupt("xform .vals is not float64"));
                }
                ar.sample_bytes(p, index)?
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect::<Vec<f64>>()
            }
            _ => return Err(Error::corrupt("xform has ops but no .vals")),
        };
        compose(&ops, &vals)
    }
}

/// Writes a transform: a static identity (only `.inherits`), or a matrix per sample.
pub struct XformWriter {
    pub object: ObjectId,
    pub compound: CompoundId,
    inherits: PropId,
    matrix: Option<(PropId, PropId)>,
    not_identity: Option<PropId>,
    first: Option<[f64; 16]>,
    animated: [bool; 16],
    time_sampling: u32,
}

impl XformWriter {
    pub fn new<W: Write + Seek>(
        ar: &mut OArchive<W>,
        parent: ObjectId,
        name: &str,
        time_sampling: u32,
        animated: bool,
    ) -> Result<XformWriter> {
        let (obj_md, xf_md) = schema_metadata(SCHEMA, None, ".xform");
        let object = ar.add_object(parent, name, obj_md)?;
        let top = ar.properties(object);
        let compound = ar.add_compound(top, ".xform", xf_md)?;
        let inherits = ar.add_scalar(
            compound,
            ".inherits",
            Pod::Bool,
            1,
            time_sampling,
            MetaData::new(),
        )?;
        let matrix = if animated {
            Some((
                ar.add_scalar(compound, ".ops", Pod::U8, 1, 0, MetaData::new())?,
                ar.add_scalar(compound, ".vals", Pod::F64, 16, time_sampling, MetaData::new())?,
            ))
        } else {
            None
        };
        Ok(XformWriter {
            object,
            compound,
            inherits,
            matrix,
            not_identity: None,
            first: None,
            animated: [false; 16],
            time_sampling,
        })
    }

    /// Writes one sample: the identity for a static transform, `m` for an animated one.
    pub fn set<W: Write + Seek>(&mut self, ar: &mut OArchive<W>, m: Option<&Matrix>) -> Result<()> {
        ar.set_scalar(self.inherits, &[1])?;
        let Some((ops, vals)) = self.matrix else {
            if m.is_some_and(|m| *m != IDENTITY) {
                return Err(Error::invalid("a static transform can only hold the identity"));
            }
            return Ok(());
        };
        let m = m.copied().unwrap_or(IDENTITY);
        let flat: [f64; 16] = std::array::from_fn(|i| m[i / 4][i % 4]);
        ar.set_scalar(ops, &[0x30])?;
        ar.set_scalar(vals, bytemuck::cast_slice(&flat))?;
        match &self.first {
            None => self.first = Some(flat),
            Some(f) => {
                for i in 0..16 {
                    self.animated[i] |= (flat[i] - f[i]).abs() > 1e-12;
                }
            }
        }
        if m != IDENTITY && self.not_identity.is_none() {
            let p = ar.add_scalar(
                self.compound,
                "isNotConstantIdentity",
                Pod::Bool,
                1,
                0,
                MetaData::new(),
            )?;
            ar.set_scalar(p, &[1])?;
            self.not_identity = Some(p);
        }
        Ok(())
    }

    /// Records which channels are animated (`.animChans`); call once after the last sample.
    pub fn finish<W: Write + Seek>(&mut self, ar: &mut OArchive<W>) -> Result<()> {
        let chans: Vec<u32> = (0..16u32).filter(|&i| self.animated[i as usize]).collect();
        if !chans.is_empty() {
            let p = ar.add_array(
                self.compound,
                ".animChans",
                Pod::U32,
                1,
                self.time_sampling,
                MetaData::new(),
            )?;
            ar.set_array(p, bytemuck::cast_slice(&chans), chans.len() as u64)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(p: [f64; 3], m: &Matrix) -> [f64; 3] {
        std::array::from_fn(|c| p[0] * m[0][c] + p[1] * m[1][c] + p[2] * m[2][c] + m[3][c])
    }

    #[test]
    fn maya_op_order_translate_then_rotations() {
        // Maya writes [translate, rotateZ, rotateY, rotateX]: rotate first, translate last.
        let m = compose(&[0x10, 0x60, 0x50, 0x40], &[1.0, 2.0, 3.0, 90.0, 0.0, 0.0]).unwrap();
        let p = apply([1.0, 0.0, 0.0], &m);
        // Rz(90°) sends x to y, then translate by (1, 2, 3).
        assert!(
            (p[0] - 1.0).abs() < 1e-12 && (p[1] - 3.0).abs() < 1e-12 && (p[2] - 3.0).abs() < 1e-12,
            "{p:?}"
        );
    }

    #[test]
    fn axis_angle_matches_axis_rotations() {
        let a = compose(&[0x20], &[0.0, 1.0, 0.0, 30.0]).unwrap();
        let b = compose(&[0x50], &[30.0]).unwrap();
        for r in 0..4 {
            for c in 0..4 {
                assert!((a[r][c] - b[r][c]).abs() < 1e-12);
            }
        }
        // Ry(90°) sends z to x (right-handed).
        let p = apply([0.0, 0.0, 1.0], &compose(&[0x50], &[90.0]).unwrap());
        assert!((p[0] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn bad_ops_are_errors() {
        assert!(compose(&[0x70], &[]).is_err());
        assert!(compose(&[0x30], &[1.0; 4]).is_err());
    }
}
