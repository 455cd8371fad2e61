//! Copying an archive property by property into a new one: the object tree, every property
//! with its type, metadata and time sampling, and every sample in order. The copy carries the
//! same digests and hierarchy hashes as its source (whatever wrote it), which makes it both a
//! repair tool for hand-edited archives and an exact test of tress's writer against files
//! written by the official library.

use std::io::{Seek, Write};

use super::header::PropertyKind;
use super::read::{Archive, Compound, Object};
use super::write::{CompoundId, OArchive, ObjectId, PropId};
use crate::error::Result;

struct Pending {
    id: PropId,
    source: super::read::Property,
}

/// Copies everything below `src`'s top object into `dst` (time samplings included, in order).
pub fn copy_archive<W: Write + Seek>(src: &Archive, dst: &mut OArchive<W>) -> Result<()> {
    for ts in src.time_samplings.iter().skip(1) {
        let mut t = ts.clone();
        t.max_samples = 0;
        dst.add_time_sampling_exact(t);
    }
    let mut props = Vec::new();
    let top = src.top();
    copy_properties(src, &top, dst, dst.properties(dst.top()), &mut props)?;
    copy_children(src, &top, dst, dst.top(), &mut props)?;
    // Samples in frame order across properties, as a DCC writes them.
    let most = props.iter().map(|p| p.source.num_samples()).max().unwrap_or(0);
    for i in 0..most {
        for p in &props {
            if i >= p.source.num_samples() {
                continue;
            }
            let bytes = src.sample_bytes(&p.source, i)?;
            let h = &p.source.header;
            match h.kind {
                PropertyKind::Array => {
                    let elements = if h.pod.is_string() {
                        bytes.iter().filter(|&&b| b == 0).count() as u64 / h.extent as u64
                    } else {
                        bytes.len() as u64 / (h.pod.size() * h.extent as usize) as u64
                    };
                    dst.set_array(p.id, &bytes, elements)?
                }
                _ => dst.set_scalar(p.id, &bytes)?,
            }
        }
    }
    Ok(())
}

fn copy_children<W: Write + Seek>(
    src: &Archive,
    obj: &Object,
    dst: &mut OArchive<W>,
    parent: ObjectId,
    props: &mut Vec<Pending>,
) -> Result<()> {
    for child in src.children(obj)? {
        let id = dst.add_object(parent, &child.name, child.metadata.clone())?;
        copy_properties(src, &child, dst, dst.properties(id), props)?;
        copy_children(src, &child, dst, id, props)?;
    }
    Ok(())
}

fn copy_properties<W: Write + Seek>(
    src: &Archive,
    obj: &Object,
    dst: &mut OArchive<W>,
    into: CompoundId,
    props: &mut Vec<Pending>,
) -> Result<()> {
    let top = src.properties(obj)?;
    copy_compound(src, &top, dst, into, props)
}

fn copy_compound<W: Write + Seek>(
    src: &Archive,
    c: &Compound,
    dst: &mut OArchive<W>,
    into: CompoundId,
    props: &mut Vec<Pending>,
) -> Result<()> {
    for h in &c.children {
        match h.kind {
            PropertyKind::Compound => {
                let sub = src.compound(c, &h.name)?.expect("listed");
                let id = dst.add_compound(into, &h.name, h.metadata.clone())?;
                copy_compound(src, &sub, dst, id, props)?;
            }
            kind => {
                let p = src.property(c, &h.name)?.expect("listed");
                let id = if kind == PropertyKind::Array {
                    dst.add_array(
                        into,
                        &h.name,
                        h.pod,
                        h.extent,
                        h.time_sampling,
                        h.metadata.clone(),
                    )?
                } else {
                    dst.add_scalar(
                        into,
                        &h.name,
                        h.pod,
                        h.extent,
                        h.time_sampling,
                        h.metadata.clone(),
                    )?
                };
                props.push(Pending { id, source: p });
            }
        }
    }
    Ok(())
}
