//! Reading archives: root, objects, compound / scalar / array properties and their samples.
//!
//! Objects and properties are read lazily, one group at a time. Every group offset is checked
//! to be smaller than its parent's (writers append children before parents), which rules out
//! cycles in hostile files; counts are checked against the file before allocating.

use std::path::Path;
use std::sync::Arc;

use super::header::{
    ObjectHeader, PropertyHeader, PropertyKind, decode_objects, decode_properties, decode_table,
};
use super::metadata::MetaData;
use super::pod::Pod;
use super::time::TimeSampling;
use crate::alembic::ogawa::Entry;
use crate::alembic::ogawa::read::{DataRef, OgawaReader};
use crate::alembic::ogawa::source::{FileSource, MemSource, ReadAt};
use crate::error::{Error, InFile, Result};

/// An open archive.
pub struct Archive {
    ogawa: OgawaReader,
    pub file_version: i32,
    pub library_version: i32,
    pub metadata: MetaData,
    pub time_samplings: Vec<TimeSampling>,
    table: Vec<MetaData>,
    top: u64,
}

/// An object: its header and where its group is.
#[derive(Clone, Debug)]
pub struct Object {
    pub name: String,
    pub full_name: String,
    pub metadata: MetaData,
    group: u64,
}

/// A compound property with its sub-property headers.
#[derive(Clone, Debug)]
pub struct Compound {
    pub header: PropertyHeader,
    entries: Vec<Entry>,
    pub children: Vec<PropertyHeader>,
    group: u64,
}

/// A scalar or array property with the entries of its stored samples.
#[derive(Clone, Debug)]
pub struct Property {
    pub header: PropertyHeader,
    entries: Vec<Entry>,
}

impl Archive {
    pub fn open(path: impl AsRef<Path>) -> Result<Archive> {
        let path = path.as_ref();
        let file = std::fs::File::open(path).in_file(path)?;
        let src = FileSource::new(file).in_file(path)?;
        Archive::from_source(Box::new(src)).in_file(path)
    }

    pub fn from_bytes(bytes: impl Into<Arc<[u8]>>) -> Result<Archive> {
        Archive::from_source(Box::new(MemSource(bytes.into())))
    }

    pub fn from_source(src: Box<dyn ReadAt>) -> Result<Archive> {
        let ogawa = OgawaReader::new(src)?;
        let root = ogawa.root()?;
        let kinds_ok = root.len() >= 6
            && matches!(root[0], Entry::Data(_))
            && matches!(root[1], Entry::Data(_))
            && matches!(root[2], Entry::Group(_))
            && root[3..6].iter().all(|e| matches!(e, Entry::Data(_)));
        if !kinds_ok {
            return Err(Error::corrupt(
                "the root group is not an Alembic archive's (data, data, group, data, data, data)",
            ));
        }
        let data = |e: Entry| -> Result<Vec<u8>> {
            let Entry::Data(o) = e else {
                unreachable!("checked above")
            };
            ogawa.read(ogawa.data(o)?)
        };
        let i32_of = |e: Entry, what: &str| -> Result<i32> {
            let b = data(e)?;
            let b: [u8; 4] = b
                .as_slice()
                .try_into()
                .map_err(|_| Error::corrupt(format!("{what} is not 4 bytes")))?;
            Ok(i32::from_le_bytes(b))
        };
        let file_version = i32_of(root[0], "the archive file version")?;
        if file_version != 0 {
            return Err(Error::unsupported(format!(
                "AbcCoreOgawa file version {file_version} (only 0 is known)"
            )));
        }
        let library_version = i32_of(root[1], "the library version")?;
        if library_version < 9999 {
            return Err(Error::corrupt(format!(
                "library version {library_version} is older than any Ogawa writer"
            )));
        }
        let md_text =
            String::from_utf8(data(root[3])?).map_err(|_| Error::corrupt("archive metadata is not UTF-8"))?;
        let time_samplings = TimeSampling::decode_all(&data(root[4])?)?;
        let table = decode_table(&data(root[5])?)?;
        let Entry::Group(top) = root[2] else {
            unreachable!("checked above")
        };
        Ok(Archive {
            ogawa,
            file_version,
            library_version,
            metadata: MetaData::parse(&md_text),
            time_samplings,
            table,
            top,
        })
    }

    /// The top object ("/"); its metadata is the archive's.
    pub fn top(&self) -> Object {
        Object {
            name: "ABC".into(),
            full_name: "/".into(),
            metadata: self.metadata.clone(),
            group: self.top,
        }
    }

    /// The application that wrote the archive.
    pub fn application(&self) -> Option<&str> {
        self.metadata.get("_ai_Application")
    }

    fn child_group(&self, parent: u64, child: u64, what: &str) -> Result<u64> {
        if child != 0 && child >= parent {
            return Err(Error::corrupt(format!(
                "{what} at offset {child} does not precede its parent group at {parent}: the archive is not a tree"
            )));
        }
        Ok(child)
    }

    fn read_data(&self, e: Entry, what: &str) -> Result<Vec<u8>> {
        match e {
            Entry::Data(o) => self.ogawa.read(self.ogawa.data(o)?),
            Entry::Group(_) => Err(Error::corrupt(format!("{what} should be data but is a group"))),
        }
    }

    /// The child objects of `obj`.
    pub fn children(&self, obj: &Object) -> Result<Vec<Object>> {
        let entries = self.ogawa.group(obj.group)?;
        let Some(&last) = entries.last() else {
            return Ok(Vec::new());
        };
        let headers: Vec<ObjectHeader> = match last {
            Entry::Data(_) => decode_objects(&self.read_data(last, "object headers")?, &self.table)?,
            Entry::Group(_) => Vec::new(),
        };
        if !headers.is_empty() && headers.len() + 2 != entries.len() {
            return Err(Error::corrupt(format!(
                "object {} lists {} children but its group holds {}",
                obj.full_name,
                headers.len(),
                entries.len().saturating_sub(2)
            )));
        }
        let base = if obj.full_name == "/" {
            ""
        } else {
            obj.full_name.as_str()
        };
        headers
            .into_iter()
            .enumerate()
            .map(|(i, h)| {
                let Entry::Group(g) = entries[i + 1] else {
                    return Err(Error::corrupt(format!("child object {} is not a group", h.name)));
                };
                Ok(Object {
                    full_name: format!("{base}/{}", h.name),
                    name: h.name,
                    metadata: h.metadata,
                    group: self.child_group(obj.group, g, "a child object")?,
                })
            })
            .collect()
    }

    /// The top compound property of `obj` (empty when the object has no properties).
    pub fn properties(&self, obj: &Object) -> Result<Compound> {
        let entries = self.ogawa.group(obj.group)?;
        let group = match entries.first() {
            Some(Entry::Group(g)) if entries.len() >= 2 => {
                self.child_group(obj.group, *g, "a property group")?
            }
            _ => 0,
        };
        self.compound_at(PropertyHeader::compound("", MetaData::new()), group)
    }

    fn compound_at(&self, header: PropertyHeader, group: u64) -> Result<Compound> {
        let entries = self.ogawa.group(group)?;
        let children = match entries.last() {
            Some(&e @ Entry::Data(_)) => decode_properties(
                &self.read_data(e, "property headers")?,
                &self.table,
                self.time_samplings.len(),
            )?,
            _ => Vec::new(),
        };
        if !children.is_empty() && children.len() + 1 != entries.len() {
            return Err(Error::corrupt(format!(
                "compound {:?} lists {} properties but its group holds {}",
                header.name,
                children.len(),
                entries.len().saturating_sub(1)
            )));
        }
        Ok(Compound {
            header,
            entries,
            children,
            group,
        })
    }

    fn child_entry(&self, c: &Compound, index: usize) -> Result<u64> {
        match c.entries.get(index) {
            Some(Entry::Group(g)) => self.child_group(c.group, *g, "a property"),
            _ => Err(Error::corrupt(format!(
                "property {} of {:?} is not a group",
                index, c.header.name
            ))),
        }
    }

    /// Opens sub-compound `name` of `c`.
    pub fn compound(&self, c: &Compound, name: &str) -> Result<Option<Compound>> {
        let Some(i) = c.children.iter().position(|h| h.name == name) else {
            return Ok(None);
        };
        let h = &c.children[i];
        if h.kind != PropertyKind::Compound {
            return Err(Error::corrupt(format!("{name} should be a compound property")));
        }
        let g = self.child_entry(c, i)?;
        self.compound_at(h.clone(), g).map(Some)
    }

    /// Opens scalar or array property `name` of `c`.
    pub fn property(&self, c: &Compound, name: &str) -> Result<Option<Property>> {
        let Some(i) = c.children.iter().position(|h| h.name == name) else {
            return Ok(None);
        };
        let h = &c.children[i];
        if h.kind == PropertyKind::Compound {
            return Err(Error::corrupt(format!(
                "{name} should be a scalar or array property"
            )));
        }
        let g = self.child_entry(c, i)?;
        let entries = self.ogawa.group(g)?;
        let per_slot = if h.kind == PropertyKind::Array { 2 } else { 1 };
        let needed = h.stored_slots() * per_slot;
        if entries.len() < needed {
            return Err(Error::corrupt(format!(
                "property {name} should store {} samples but its group holds {} entries",
                h.stored_slots(),
                entries.len()
            )));
        }
        Ok(Some(Property {
            header: h.clone(),
            entries,
        }))
    }

    /// The data block of sample `index` (digest included; empty for empty arrays).
    fn sample_block(&self, p: &Property, index: usize) -> Result<DataRef> {
        if p.header.num_samples == 0 {
            return Err(Error::invalid(format!(
                "property {} has no samples",
                p.header.name
            )));
        }
        let slot = p.header.slot(index);
        let e = if p.header.kind == PropertyKind::Array {
            p.entries[2 * slot]
        } else {
            p.entries[slot]
        };
        let Entry::Data(o) = e else {
            return Err(Error::corrupt(format!(
                "sample {index} of {} is not data",
                p.header.name
            )));
        };
        let d = self.ogawa.data(o)?;
        if d.size != 0 && d.size < 16 {
            return Err(Error::corrupt(format!(
                "sample {index} of {} is shorter than its digest",
                p.header.name
            )));
        }
        Ok(d)
    }

    /// The raw value bytes of sample `index` (after the 16-byte digest).
    pub fn sample_bytes(&self, p: &Property, index: usize) -> Result<Vec<u8>> {
        let d = self.sample_block(p, index)?;
        if d.size == 0 {
            return Ok(Vec::new());
        }
        let mut out = vec![0u8; (d.size - 16) as usize];
        self.ogawa.read_into(d, 16, &mut out)?;
        self.check_scalar_size(p, out.len())?;
        Ok(out)
    }

    /// The 16-byte digest of sample `index` (zero for empty arrays).
    pub fn sample_digest(&self, p: &Property, index: usize) -> Result<[u8; 16]> {
        let d = self.sample_block(p, index)?;
        let mut out = [0u8; 16];
        if d.size != 0 {
            self.ogawa.read_into(d, 0, &mut out)?;
        }
        Ok(out)
    }

    fn check_scalar_size(&self, p: &Property, len: usize) -> Result<()> {
        let h = &p.header;
        if h.kind == PropertyKind::Scalar && !h.pod.is_string() && len != h.pod.size() * h.extent as usize {
            return Err(Error::corrupt(format!(
                "scalar {} holds {len} bytes, expected {} × {}",
                h.name,
                h.extent,
                h.pod.size()
            )));
        }
        Ok(())
    }

    /// Reads a numeric sample as `T` values (`T` must match the property's POD size, e.g.
    /// `[f32; 3]` for P). Appends to `out` after clearing it, reusing its allocation.
    pub fn read_sample_into<T: bytemuck::Pod>(
        &self,
        p: &Property,
        index: usize,
        out: &mut Vec<T>,
    ) -> Result<()> {
        let h = &p.header;
        let value = h.pod.size() * h.extent as usize;
        if h.pod.is_string() || std::mem::size_of::<T>() != value {
            return Err(Error::invalid(format!(
                "property {} holds {}×{} values, which do not read as {}-byte items",
                h.name,
                h.pod.name(),
                h.extent,
                std::mem::size_of::<T>()
            )));
        }
        let d = self.sample_block(p, index)?;
        out.clear();
        if d.size == 0 {
            return Ok(());
        }
        let bytes = (d.size - 16) as usize;
        if !bytes.is_multiple_of(value) {
            return Err(Error::corrupt(format!(
                "sample {index} of {} has a partial value",
                h.name
            )));
        }
        self.check_scalar_size(p, bytes)?;
        out.resize(bytes / value, T::zeroed());
        self.ogawa.read_into(d, 16, bytemuck::cast_slice_mut(out))
    }

    /// A numeric sample as a new vector of `T`.
    pub fn read_sample<T: bytemuck::Pod>(&self, p: &Property, index: usize) -> Result<Vec<T>> {
        let mut v = Vec::new();
        self.read_sample_into(p, index, &mut v)?;
        Ok(v)
    }

    /// A string sample (each value NUL-terminated in the file).
    pub fn read_strings(&self, p: &Property, index: usize) -> Result<Vec<String>> {
        if p.header.pod != Pod::String {
            return Err(Error::invalid(format!(
                "property {} is not a string property",
                p.header.name
            )));
        }
        let bytes = self.sample_bytes(p, index)?;
        let mut out: Vec<String> = bytes
            .split(|&b| b == 0)
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect();
        if bytes.last() == Some(&0) || bytes.is_empty() {
            out.pop();
        }
        Ok(out)
    }

    /// Time of sample `index` of a property.
    pub fn sample_time(&self, p: &Property, index: usize) -> f64 {
        self.time_samplings[p.header.time_sampling as usize].time(index)
    }

    /// Every object, depth first from the top (which is included), refusing shared groups.
    pub fn objects(&self) -> Result<Vec<Object>> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![self.top()];
        while let Some(o) = stack.pop() {
            if o.group != 0 && !seen.insert(o.group) {
                return Err(Error::corrupt(format!(
                    "object {} shares its group with another object",
                    o.full_name
                )));
            }
            let kids = self.children(&o)?;
            out.push(o);
            stack.extend(kids.into_iter().rev());
        }
        Ok(out)
    }
}

impl Object {
    /// The `schema` metadata value (e.g. `AbcGeom_Curve_v2`), if any.
    pub fn schema(&self) -> Option<&str> {
        self.metadata.get("schema").filter(|s| !s.is_empty())
    }
}

impl Property {
    pub fn num_samples(&self) -> usize {
        self.header.num_samples as usize
    }
}

/// What [`Archive::verify`] read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub objects: usize,
    pub properties: usize,
    pub samples: usize,
    pub bytes: u64,
}

impl Archive {
    /// Reads every stored sample of every property and checks it against its digest. Alembic
    /// has no checksums, but the MurmurHash3 digest before each sample serves as one: a damaged
    /// payload is reported with the property and sample it hit.
    pub fn verify(&self) -> Result<VerifyReport> {
        let mut report = VerifyReport::default();
        for o in self.objects()? {
            report.objects += 1;
            let top = self.properties(&o)?;
            self.verify_compound(&top, &o.full_name, &mut report)?;
        }
        Ok(report)
    }

    fn verify_compound(&self, c: &Compound, path: &str, report: &mut VerifyReport) -> Result<()> {
        for h in &c.children {
            let here = format!("{path}/{}", h.name);
            if h.kind == PropertyKind::Compound {
                let sub = self.compound(c, &h.name)?.expect("listed");
                self.verify_compound(&sub, &here, report)?;
                continue;
            }
            report.properties += 1;
            let p = self.property(c, &h.name)?.expect("listed");
            let per_slot = if h.kind == PropertyKind::Array { 2 } else { 1 };
            for slot in 0..h.stored_slots() {
                let Entry::Data(o) = p.entries[slot * per_slot] else {
                    return Err(Error::corrupt(format!("{here}: sample slot {slot} is not data")));
                };
                let d = self.ogawa.data(o)?;
                if d.size == 0 {
                    continue;
                }
                if d.size < 16 {
                    return Err(Error::corrupt(format!(
                        "{here}: sample slot {slot} is shorter than its digest"
                    )));
                }
                let bytes = self.ogawa.read(d)?;
                let value = &bytes[16..];
                self.check_scalar_size(&p, value.len())
                    .map_err(|e| Error::corrupt(format!("{here}: {e}")))?;
                let hashed = if h.pod == Pod::WString {
                    &value[..value.len() / 4]
                } else {
                    value
                };
                let want = super::hash::digest(hashed).to_bytes();
                if bytes[..16] != want {
                    return Err(Error::corrupt(format!(
                        "{here}: sample slot {slot} does not match its digest: the file is damaged"
                    )));
                }
                report.samples += 1;
                report.bytes += value.len() as u64;
            }
        }
        Ok(())
    }
}

impl Archive {
    /// The hashes stored in an object's header trailer: (properties hash, children hash).
    /// The top object's are those of the archive root's object group.
    pub fn object_hashes(&self, obj: &Object) -> Result<(super::hash::Hash128, super::hash::Hash128)> {
        let entries = self.ogawa.group(obj.group)?;
        let Some(&last @ Entry::Data(_)) = entries.last() else {
            return Err(Error::corrupt(format!(
                "object {} has no header blob",
                obj.full_name
            )));
        };
        let blob = self.read_data(last, "object headers")?;
        if blob.len() < 32 {
            return Err(Error::corrupt(format!(
                "object {} has no hash trailer",
                obj.full_name
            )));
        }
        let t = &blob[blob.len() - 32..];
        Ok((
            super::hash::Hash128::from_bytes(t[..16].try_into().expect("16 bytes")),
            super::hash::Hash128::from_bytes(t[16..].try_into().expect("16 bytes")),
        ))
    }

    /// The indexed-metadata table, serialized, in table order.
    pub fn metadata_table(&self) -> Vec<String> {
        self.table.iter().map(MetaData::serialize).collect()
    }
}
