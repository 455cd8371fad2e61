//! The `.tcache` header: topology, rest pose, attributes, timing and codec.

use crate::bytes::ByteReader;
use crate::error::{Error, Result};
use crate::strands::{Attr, StrandAttrs, Strands};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Codec {
    /// Bit-exact floats.
    Lossless,
    /// Every vertex within `bound` (scene units, Euclidean) of the original.
    Lossy { bound: f32 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct TcacheHeader {
    pub fps: f64,
    pub codec: Codec,
    /// Frames between rest-pose predictions (random access decodes at most this many).
    pub keyframe_interval: u32,
    /// Topology, rest pose (head-local, i.e. at the identity head pose) and attributes.
    pub rest: Strands,
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_attr(out: &mut Vec<u8>, tag: u8, a: Option<&Attr<f32>>) {
    match a {
        None => out.push(0),
        Some(Attr::Constant(c)) => {
            out.push(tag | 1);
            out.extend_from_slice(&c.to_le_bytes());
        }
        Some(Attr::PerStrand(v)) | Some(Attr::PerVertex(v)) => {
            out.push(
                tag | if matches!(a, Some(Attr::PerStrand(_))) {
                    2
                } else {
                    3
                },
            );
            put_u32(out, v.len() as u32);
            crate::bytes::put_f32s(out, v);
        }
    }
}

impl TcacheHeader {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.fps.to_le_bytes());
        match self.codec {
            Codec::Lossless => {
                out.push(0);
                out.extend_from_slice(&0f32.to_le_bytes());
            }
            Codec::Lossy { bound } => {
                out.push(1);
                out.extend_from_slice(&bound.to_le_bytes());
            }
        }
        put_u32(&mut out, self.keyframe_interval);
        let s = &self.rest;
        put_u32(&mut out, s.counts.len() as u32);
        for &c in &s.counts {
            put_u32(&mut out, c);
        }
        put_u32(&mut out, s.points.len() as u32);
        crate::bytes::put_vec3s(&mut out, &s.points);
        put_attr(&mut out, 0x10, s.attrs.width.as_ref());
        match &s.attrs.root_uv {
            Some(uv) => {
                out.push(1);
                for p in uv {
                    crate::bytes::put_f32s(&mut out, p);
                }
            }
            None => out.push(0),
        }
        match &s.attrs.id {
            Some(ids) => {
                out.push(1);
                for &i in ids {
                    put_u32(&mut out, i);
                }
            }
            None => out.push(0),
        }
        match &s.attrs.guide {
            Some(g) => {
                out.push(1);
                out.extend(g.iter().map(|&b| b as u8));
            }
            None => out.push(0),
        }
        out
    }

    pub fn decode(data: &[u8]) -> Result<TcacheHeader> {
        let mut r = ByteReader::new(data);
        let fps = f64::from_le_bytes(r.array("fps")?);
        let codec = match (r.u8("codec")?, r.f32("error bound")?) {
            (0, _) => Codec::Lossless,
            (1, b) if b > 0.0 && b.is_finite() => Codec::Lossy { bound: b },
            (c, b) => return Err(Error::corrupt(format!("unknown codec {c} (bound {b})"))),
        };
        if !(fps > 0.0 && fps.is_finite()) {
            return Err(Error::corrupt(format!("fps is {fps}")));
        }
        let keyframe_interval = r.u32("keyframe interval")?.max(1);
        let strands = r.u32("strand count")? as usize;
        let counts = r.u32_vec(strands, "vertex counts")?;
        let points = r.u32("point count")? as usize;
        let total: u64 = counts.iter().map(|&c| c as u64).sum();
        if total != points as u64 {
            return Err(Error::corrupt(format!(
                "vertex counts add up to {total}, the header says {points} points"
            )));
        }
        let rest_points = r.vec3_vec(points, "rest pose")?;
        let mut attrs = StrandAttrs::default();
        let tag = r.u8("width tag")?;
        attrs.width = match tag & 0x0f {
            0 => None,
            1 => Some(Attr::Constant(r.f32("width")?)),
            k @ (2 | 3) => {
                let n = r.u32("width count")? as usize;
                let v = r.f32_vec(n, "widths")?;
                Some(if k == 2 {
                    Attr::PerStrand(v)
                } else {
                    Attr::PerVertex(v)
                })
            }
            _ => return Err(Error::corrupt("unknown width layout")),
        };
        if r.u8("uv flag")? == 1 {
            let f = r.f32_vec(strands * 2, "root uvs")?;
            attrs.root_uv = Some(f.chunks_exact(2).map(|c| [c[0], c[1]]).collect());
        }
        if r.u8("id flag")? == 1 {
            attrs.id = Some(r.u32_vec(strands, "ids")?);
        }
        if r.u8("guide flag")? == 1 {
            attrs.guide = Some(r.take(strands, "guide flags")?.iter().map(|&b| b != 0).collect());
        }
        let rest = Strands::new(rest_points, counts, attrs)?;
        Ok(TcacheHeader {
            fps,
            codec,
            keyframe_interval,
            rest,
        })
    }
}
