//! Writing archives as a stream, the way the official library does.
//!
//! Samples are appended to the file as soon as they are set, so memory stays bounded by one
//! frame whatever the frame count. Each distinct value is stored once per archive (keyed by
//! length and MurmurHash3 digest); unchanged samples are not stored again — only the window
//! from the first to the last change is, with re-used references in between. Groups, headers,
//! hashes, the metadata table and the time samplings are written at [`OArchive::finish`], in the
//! library's post-order, which also reproduces its metadata-table numbering.

use std::collections::{HashMap, HashSet};
use std::io::{Seek, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use super::hash::{Hash128, SpookyBuffer, digest, short_end, spooky};
use super::header::{ObjectHeader, PropertyHeader, PropertyKind, encode_object, encode_property};
use super::metadata::MetaData;
use super::pod::Pod;
use super::time::TimeSampling;
use crate::alembic::ogawa::write::OgawaWriter;
use crate::alembic::ogawa::{EMPTY_DATA, EMPTY_GROUP};
use crate::error::{Error, Result};

/// The library version tress's files claim compatibility with (Alembic 1.8.12).
pub const LIBRARY_VERSION: i32 = 10812;

/// Who wrote the archive and when; stored in the archive metadata.
#[derive(Clone, Debug)]
pub struct ArchiveInfo {
    pub application: String,
    pub description: String,
    /// Frames per second of the scene (`_ai_DCC_FPS`).
    pub fps: Option<f64>,
    /// `_ai_DateWritten`; fixed dates make files reproducible.
    pub date: SystemTime,
    /// More archive metadata (key, value), e.g. `metersPerUnit` and `upAxis`.
    pub extra: Vec<(String, String)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ObjectId(usize);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CompoundId(usize);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PropId(usize);

struct ObjNode {
    name: String,
    metadata: MetaData,
    props: CompoundId,
    children: Vec<ObjectId>,
}

enum Node {
    Compound(CompoundId),
    Prop(PropId),
}

struct CompNode {
    name: String,
    metadata: MetaData,
    children: Vec<Node>,
    names: HashSet<String>,
}

/// De-duplication key: value length and digest (and the POD for strings, which only share with
/// their own kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct SampleKey {
    len: u64,
    digest: Hash128,
    string_pod: Option<Pod>,
}

struct Previous {
    key: SampleKey,
    entry: u64,
    elements: u64,
}

struct PropNode {
    header: PropertyHeader,
    /// Child entries of the property group: one per slot (scalar) or data + dims (array).
    slots: Vec<u64>,
    previous: Option<Previous>,
    /// Running fold of every sample's digest, for the property hash.
    accumulator: Option<Hash128>,
}

pub struct OArchive<W: Write + Seek> {
    ogawa: OgawaWriter<W>,
    version_entries: [u64; 2],
    metadata: MetaData,
    time_samplings: Vec<TimeSampling>,
    objects: Vec<ObjNode>,
    compounds: Vec<CompNode>,
    props: Vec<PropNode>,
    written: HashMap<SampleKey, (u64, u64)>,
}

/// `ctime()`-style UTC date: `Sun Nov 22 06:46:13 2026`.
pub fn ctime(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    const WD: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MON: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02} {}",
        WD[days.rem_euclid(7) as usize],
        MON[(month - 1) as usize],
        day,
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        year
    )
}

fn clean(s: &str) -> String {
    s.replace([';', '='], ",")
}

fn check_name(name: &str, taken: &HashSet<String>, what: &str) -> Result<()> {
    if name.is_empty() || name.contains('/') {
        return Err(Error::invalid(format!(
            "{what} name {name:?} must be non-empty and contain no '/'"
        )));
    }
    if taken.contains(name) {
        return Err(Error::invalid(format!("{what} {name:?} already exists here")));
    }
    Ok(())
}

/// The metadata table being built at close: short strings get a 1-byte index.
#[derive(Default)]
struct MetaTable {
    entries: Vec<String>,
    index: HashMap<String, u8>,
}

impl MetaTable {
    fn index_of(&mut self, md: &MetaData) -> u8 {
        let s = md.serialize();
        if s.is_empty() {
            return 0;
        }
        if s.len() >= 256 {
            return 255;
        }
        if let Some(&i) = self.index.get(&s) {
            return i;
        }
        if self.entries.len() >= 254 {
            return 255;
        }
        self.entries.push(s.clone());
        let i = self.entries.len() as u8;
        self.index.insert(s, i);
        i
    }

    fn blob(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for e in &self.entries {
            out.push(e.len() as u8);
            out.extend_from_slice(e.as_bytes());
        }
        out
    }
}

impl<W: Write + Seek> OArchive<W> {
    pub fn new(out: W, info: &ArchiveInfo) -> Result<Self> {
        let mut ogawa = OgawaWriter::new(out)?;
        let version_entries = [
            ogawa.data(&[&0i32.to_le_bytes()])?,
            ogawa.data(&[&LIBRARY_VERSION.to_le_bytes()])?,
        ];
        let mut metadata = MetaData::new();
        metadata.set(
            "_ai_AlembicVersion",
            &format!("Alembic 1.8.12 (tress-formats {})", env!("CARGO_PKG_VERSION")),
        )?;
        metadata.set("_ai_Application", &clean(&info.application))?;
        metadata.set("_ai_DateWritten", &ctime(info.date))?;
        metadata.set("_ai_Description", &clean(&info.description))?;
        if let Some(fps) = info.fps.filter(|f| *f > 0.0) {
            metadata.set("_ai_DCC_FPS", &format!("{fps:.6}"))?;
        }
        for (k, v) in &info.extra {
            metadata.set(&clean(k), &clean(v))?;
        }
        let top_props = CompNode {
            name: String::new(),
            metadata: MetaData::new(),
            children: Vec::new(),
            names: HashSet::new(),
        };
        Ok(OArchive {
            ogawa,
            version_entries,
            metadata,
            time_samplings: vec![TimeSampling::identity()],
            objects: vec![ObjNode {
                name: "ABC".into(),
                metadata: MetaData::new(),
                props: CompoundId(0),
                children: Vec::new(),
            }],
            compounds: vec![top_props],
            props: Vec::new(),
            written: HashMap::from([(
                SampleKey {
                    len: 0,
                    digest: Hash128::ZERO,
                    string_pod: None,
                },
                (EMPTY_DATA, 0),
            )]),
        })
    }

    /// Registers a time sampling; an equal one already present is re-used.
    pub fn add_time_sampling(&mut self, ts: TimeSampling) -> u32 {
        if let Some(i) = self.time_samplings.iter().position(|t| t.same_as(&ts)) {
            return i as u32;
        }
        self.time_samplings.push(ts);
        (self.time_samplings.len() - 1) as u32
    }

    /// Registers a time sampling at the next index even if an equal one exists (copies keep
    /// their source's indices).
    pub fn add_time_sampling_exact(&mut self, ts: TimeSampling) -> u32 {
        self.time_samplings.push(ts);
        (self.time_samplings.len() - 1) as u32
    }

    pub fn top(&self) -> ObjectId {
        ObjectId(0)
    }

    pub fn add_object(&mut self, parent: ObjectId, name: &str, metadata: MetaData) -> Result<ObjectId> {
        let taken: HashSet<String> = self.objects[parent.0]
            .children
            .iter()
            .map(|c| self.objects[c.0].name.clone())
            .collect();
        check_name(name, &taken, "object")?;
        self.compounds.push(CompNode {
            name: String::new(),
            metadata: MetaData::new(),
            children: Vec::new(),
            names: HashSet::new(),
        });
        let props = CompoundId(self.compounds.len() - 1);
        self.objects.push(ObjNode {
            name: name.to_string(),
            metadata,
            props,
            children: Vec::new(),
        });
        let id = ObjectId(self.objects.len() - 1);
        self.objects[parent.0].children.push(id);
        Ok(id)
    }

    /// The top compound property of an object.
    pub fn properties(&self, o: ObjectId) -> CompoundId {
        self.objects[o.0].props
    }

    pub fn add_compound(&mut self, parent: CompoundId, name: &str, metadata: MetaData) -> Result<CompoundId> {
        check_name(name, &self.compounds[parent.0].names, "property")?;
        self.compounds.push(CompNode {
            name: name.to_string(),
            metadata,
            children: Vec::new(),
            names: HashSet::new(),
        });
        let id = CompoundId(self.compounds.len() - 1);
        let p = &mut self.compounds[parent.0];
        p.names.insert(name.to_string());
        p.children.push(Node::Compound(id));
        Ok(id)
    }

    fn add_prop(
        &mut self,
        parent: CompoundId,
        name: &str,
        kind: PropertyKind,
        (pod, extent): (Pod, u8),
        time_sampling: u32,
        metadata: MetaData,
    ) -> Result<PropId> {
        check_name(name, &self.compounds[parent.0].names, "property")?;
        if extent == 0 {
            return Err(Error::invalid(format!(
                "property {name}: extent must be at least 1"
            )));
        }
        if time_sampling as usize >= self.time_samplings.len() {
            return Err(Error::invalid(format!(
                "property {name}: unknown time sampling {time_sampling}"
            )));
        }
        self.props.push(PropNode {
            header: PropertyHeader {
                name: name.to_string(),
                kind,
                pod,
                extent,
                time_sampling,
                num_samples: 0,
                first_changed: 0,
                last_changed: 0,
                scalar_like: kind == PropertyKind::Array,
                homogeneous: true,
                metadata,
            },
            slots: Vec::new(),
            previous: None,
            accumulator: None,
        });
        let id = PropId(self.props.len() - 1);
        let p = &mut self.compounds[parent.0];
        p.names.insert(name.to_string());
        p.children.push(Node::Prop(id));
        Ok(id)
    }

    pub fn add_scalar(
        &mut self,
        parent: CompoundId,
        name: &str,
        pod: Pod,
        extent: u8,
        time_sampling: u32,
        metadata: MetaData,
    ) -> Result<PropId> {
        self.add_prop(
            parent,
            name,
            PropertyKind::Scalar,
            (pod, extent),
            time_sampling,
            metadata,
        )
    }

    pub fn add_array(
        &mut self,
        parent: CompoundId,
        name: &str,
        pod: Pod,
        extent: u8,
        time_sampling: u32,
        metadata: MetaData,
    ) -> Result<PropId> {
        self.add_prop(
            parent,
            name,
            PropertyKind::Array,
            (pod, extent),
            time_sampling,
            metadata,
        )
    }

    /// Sets the next sample of a scalar property (`extent` values, little-endian).
    pub fn set_scalar(&mut self, p: PropId, value: &[u8]) -> Result<()> {
        let h = &self.props[p.0].header;
        if h.kind != PropertyKind::Scalar {
            return Err(Error::invalid(format!("{} is not a scalar property", h.name)));
        }
        if !h.pod.is_string() && value.len() != h.pod.size() * h.extent as usize {
            return Err(Error::invalid(format!(
                "scalar {} takes {} bytes, got {}",
                h.name,
                h.pod.size() * h.extent as usize,
                value.len()
            )));
        }
        self.set(p, value, None)
    }

    /// Sets the next sample of a 1-D array property: `elements` values of `extent` PODs each
    /// (for strings: the NUL-terminated strings back to back).
    pub fn set_array(&mut self, p: PropId, value: &[u8], elements: u64) -> Result<()> {
        let h = &self.props[p.0].header;
        if h.kind != PropertyKind::Array {
            return Err(Error::invalid(format!("{} is not an array property", h.name)));
        }
        if !h.pod.is_string() && value.len() as u64 != elements * (h.pod.size() * h.extent as usize) as u64 {
            return Err(Error::invalid(format!(
                "array {}: {} bytes do not hold {elements} values of {} × {}",
                h.name,
                value.len(),
                h.extent,
                h.pod.name()
            )));
        }
        self.set(p, value, Some(elements))
    }

    fn set(&mut self, p: PropId, value: &[u8], elements: Option<u64>) -> Result<()> {
        let pod = self.props[p.0].header.pod;
        let extent = self.props[p.0].header.extent as u64;
        // wstring digests cover only as many bytes as there are code units (library quirk).
        let d = if pod == Pod::WString {
            digest(&value[..value.len() / 4])
        } else {
            digest(value)
        };
        let key = SampleKey {
            len: value.len() as u64,
            digest: d,
            string_pod: pod.is_string().then_some(pod),
        };
        let is_array = elements.is_some();
        let mixed = match elements {
            Some(n) => spooky(&[&n.to_le_bytes()[..], &d.to_bytes()].concat()),
            None => d,
        };
        let prop = &mut self.props[p.0];
        prop.accumulator = Some(match prop.accumulator {
            None => mixed,
            Some(a) => {
                let (h0, h1, _, _) = short_end(a.0, a.1, mixed.0, mixed.1);
                Hash128(h0, h1)
            }
        });
        let n = prop.header.num_samples;
        let changed = prop.previous.as_ref().is_none_or(|prev| prev.key != key);
        if changed {
            // Samples since the last change repeat the previous value: re-reference it.
            let repeats = match &prop.previous {
                Some(prev) if prop.header.first_changed != 0 => {
                    Some((prev.entry, prev.elements, n - (prop.header.last_changed + 1)))
                }
                _ => None,
            };
            if let Some((entry, prev_elements, count)) = repeats {
                for _ in 0..count {
                    let dims = if is_array {
                        Some(self.ogawa_dims(pod, prev_elements)?)
                    } else {
                        None
                    };
                    let slots = &mut self.props[p.0].slots;
                    slots.push(entry);
                    slots.extend(dims);
                }
            }
            let (entry, recorded) = match self.written.get(&key) {
                Some(&found) => found,
                None => {
                    let e = self.ogawa.data(&[&d.to_bytes(), value])?;
                    let pods = elements.map_or(extent, |n| n * extent);
                    self.written.insert(key, (e, pods));
                    (e, pods)
                }
            };
            let dims = match elements {
                Some(n) => Some(self.ogawa_dims(pod, n)?),
                None => None,
            };
            let prop = &mut self.props[p.0];
            prop.slots.push(entry);
            if let Some(dims) = dims {
                prop.slots.push(dims);
            }
            if let Some(n_el) = elements {
                if n_el != 1 {
                    prop.header.scalar_like = false;
                }
                if n_el != recorded {
                    prop.header.homogeneous = false;
                }
            }
            let h = &mut prop.header;
            if h.first_changed == 0 {
                h.first_changed = n;
            }
            h.last_changed = n;
            prop.previous = Some(Previous {
                key,
                entry,
                elements: elements.unwrap_or(1),
            });
        }
        self.props[p.0].header.num_samples = n + 1;
        Ok(())
    }

    /// The dims entry of a 1-D array sample: implied for numbers, stored for strings.
    fn ogawa_dims(&mut self, pod: Pod, elements: u64) -> Result<u64> {
        if pod.is_string() {
            self.ogawa.data(&[&elements.to_le_bytes()])
        } else {
            Ok(EMPTY_DATA)
        }
    }

    /// Writes a property's group; returns (entry, hash, header).
    fn finish_prop(&mut self, p: PropId) -> Result<(u64, Hash128, PropertyHeader)> {
        let node = &self.props[p.0];
        let entry = self.ogawa.group(&node.slots)?;
        let h = &node.header;
        let mut hb = SpookyBuffer::new();
        hb.update(h.name.as_bytes())
            .update(h.metadata.serialize().as_bytes());
        hb.update(&[h.pod as u8, h.extent]);
        if h.kind == PropertyKind::Scalar {
            hb.update(&[0]);
        }
        hb.update(&self.time_samplings[h.time_sampling as usize].hash_bytes());
        if let Some(a) = node.accumulator {
            hb.hash(a);
        }
        Ok((entry, hb.finish(), h.clone()))
    }

    /// Writes a compound's children, header blob and group; returns (entry, hash, header).
    fn finish_compound(
        &mut self,
        c: CompoundId,
        table: &mut MetaTable,
    ) -> Result<(u64, Hash128, PropertyHeader)> {
        let (entries, hashes, headers) = self.finish_children(c, table)?;
        let comp = &self.compounds[c.0];
        let header = PropertyHeader::compound(&comp.name, comp.metadata.clone());
        let entry = self.compound_group(entries, &headers, table)?;
        let mut hb = SpookyBuffer::new();
        for h in &hashes {
            hb.hash(*h);
        }
        hb.update(header.name.as_bytes())
            .update(header.metadata.serialize().as_bytes());
        Ok((entry, hb.finish(), header))
    }

    fn finish_children(
        &mut self,
        c: CompoundId,
        table: &mut MetaTable,
    ) -> Result<(Vec<u64>, Vec<Hash128>, Vec<PropertyHeader>)> {
        let kids: Vec<Node> = std::mem::take(&mut self.compounds[c.0].children);
        let (mut entries, mut hashes, mut headers) = (Vec::new(), Vec::new(), Vec::new());
        for k in kids {
            let (e, h, hd) = match k {
                Node::Compound(sub) => self.finish_compound(sub, table)?,
                Node::Prop(p) => self.finish_prop(p)?,
            };
            entries.push(e);
            hashes.push(h);
            headers.push(hd);
        }
        Ok((entries, hashes, headers))
    }

    /// Header blob then group of a compound (the empty group when it has no children).
    fn compound_group(
        &mut self,
        mut entries: Vec<u64>,
        headers: &[PropertyHeader],
        table: &mut MetaTable,
    ) -> Result<u64> {
        if entries.is_empty() {
            return Ok(EMPTY_GROUP);
        }
        let mut blob = Vec::new();
        for h in headers {
            let idx = table.index_of(&h.metadata);
            encode_property(h, idx, &mut blob);
        }
        entries.push(self.ogawa.data(&[&blob])?);
        self.ogawa.group(&entries)
    }

    /// Writes an object subtree in the library's post-order; returns (group entry, object hash).
    fn finish_object(&mut self, o: ObjectId, table: &mut MetaTable) -> Result<(u64, Hash128)> {
        let children = self.objects[o.0].children.clone();
        let mut child_entries = Vec::with_capacity(children.len());
        let mut child_hashes = Vec::with_capacity(children.len());
        for c in &children {
            let (e, h) = self.finish_object(*c, table)?;
            child_entries.push(e);
            child_hashes.push(h);
        }
        let props = self.objects[o.0].props;
        let (prop_entries, prop_hashes, prop_headers) = self.finish_children(props, table)?;

        let mut blob = Vec::new();
        for c in &children {
            let node = &self.objects[c.0];
            let header = ObjectHeader {
                name: node.name.clone(),
                metadata: node.metadata.clone(),
            };
            encode_object(&header, table.index_of(&header.metadata), &mut blob);
        }
        let mut ph = SpookyBuffer::new();
        for h in &prop_hashes {
            ph.hash(*h);
        }
        let props_hash = ph.finish();
        let child_hash = if children.is_empty() {
            Hash128::ZERO
        } else {
            let mut ch = SpookyBuffer::new();
            for h in &child_hashes {
                ch.hash(*h);
            }
            ch.finish()
        };
        blob.extend_from_slice(&props_hash.to_bytes());
        blob.extend_from_slice(&child_hash.to_bytes());
        let headers_entry = self.ogawa.data(&[&blob])?;
        let props_entry = self.compound_group(prop_entries, &prop_headers, table)?;

        let mut group = Vec::with_capacity(children.len() + 2);
        group.push(props_entry);
        group.extend_from_slice(&child_entries);
        group.push(headers_entry);
        let entry = self.ogawa.group(&group)?;

        let node = &self.objects[o.0];
        let mut oh = SpookyBuffer::new();
        for h in &child_hashes {
            oh.hash(*h);
        }
        oh.hash(props_hash)
            .update(node.metadata.serialize().as_bytes())
            .update(node.name.as_bytes());
        Ok((entry, oh.finish()))
    }

    /// Writes the hierarchy, metadata, time samplings and root group; freezes the archive.
    pub fn finish(mut self) -> Result<W> {
        for p in &self.props {
            let h = &p.header;
            let count = if h.num_samples >= 1 && h.last_changed == 0 {
                1
            } else {
                h.num_samples
            };
            let ts = &mut self.time_samplings[h.time_sampling as usize];
            ts.max_samples = ts.max_samples.max(count);
        }
        let mut table = MetaTable::default();
        let (top, _) = self.finish_object(ObjectId(0), &mut table)?;
        let md = self.metadata.serialize();
        let md_entry = self.ogawa.data(&[md.as_bytes()])?;
        let mut ts_blob = Vec::new();
        for t in &self.time_samplings {
            t.encode(&mut ts_blob);
        }
        let ts_entry = self.ogawa.data(&[&ts_blob])?;
        let table_entry = self.ogawa.data(&[&table.blob()])?;
        let root = [
            self.version_entries[0],
            self.version_entries[1],
            top,
            md_entry,
            ts_entry,
            table_entry,
        ];
        self.ogawa.finish(&root)
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.ogawa.position()
    }
}

#[cfg(test)]
mod tests {
    use super::super::read::Archive;
    use super::*;
    use std::io::Cursor;

    fn info() -> ArchiveInfo {
        ArchiveInfo {
            application: "test".into(),
            description: "d".into(),
            fps: Some(24.0),
            date: UNIX_EPOCH,
            extra: Vec::new(),
        }
    }

    #[test]
    fn ctime_format() {
        assert_eq!(ctime(UNIX_EPOCH), "Thu Jan  1 00:00:00 1970");
        // Reference values from `date -u -d @N`.
        let t = UNIX_EPOCH + std::time::Duration::from_secs(1_795_330_000);
        assert_eq!(ctime(t), "Sun Nov 22 06:46:40 2026");
        let leap = UNIX_EPOCH + std::time::Duration::from_secs(951_782_400);
        assert_eq!(ctime(leap), "Tue Feb 29 00:00:00 2000");
    }

    #[test]
    fn first_last_windows_and_dedup() {
        let mut a = OArchive::new(Cursor::new(Vec::new()), &info()).unwrap();
        let ts = a.add_time_sampling(TimeSampling::uniform(1.0 / 24.0, 1.0 / 24.0));
        let o = a.add_object(a.top(), "o", MetaData::new()).unwrap();
        let c = a.properties(o);
        let pat = a
            .add_scalar(c, "pattern", Pod::I32, 1, ts, MetaData::new())
            .unwrap();
        let twin = a.add_array(c, "twin", Pod::U8, 1, ts, MetaData::new()).unwrap();
        // Values 1 1 2 3 3 1 1 1 1 1: first change at 2, last at 5 (the notes' edge file).
        for v in [1i32, 1, 2, 3, 3, 1, 1, 1, 1, 1] {
            a.set_scalar(pat, &v.to_le_bytes()).unwrap();
        }
        // The same 4 bytes as i32 value 2 written as a u8 array: stored once in the archive.
        a.set_array(twin, &2i32.to_le_bytes(), 4).unwrap();
        let bytes = a.finish().unwrap().into_inner();
        let r = Archive::from_bytes(bytes).unwrap();
        let obj = &r.children(&r.top()).unwrap()[0];
        let props = r.properties(obj).unwrap();
        let p = r.property(&props, "pattern").unwrap().unwrap();
        assert_eq!(
            (
                p.header.num_samples,
                p.header.first_changed,
                p.header.last_changed
            ),
            (10, 2, 5)
        );
        assert_eq!(p.header.stored_slots(), 5);
        let got: Vec<i32> = (0..10).map(|i| r.read_sample::<i32>(&p, i).unwrap()[0]).collect();
        assert_eq!(got, vec![1, 1, 2, 3, 3, 1, 1, 1, 1, 1]);
        let t = r.property(&props, "twin").unwrap().unwrap();
        assert_eq!(r.sample_digest(&t, 0).unwrap(), r.sample_digest(&p, 2).unwrap());
        assert_eq!(r.time_samplings[1].max_samples, 10);
    }

    #[test]
    fn names_are_checked() {
        let mut a = OArchive::new(Cursor::new(Vec::new()), &info()).unwrap();
        let o = a.add_object(a.top(), "o", MetaData::new()).unwrap();
        assert!(a.add_object(a.top(), "o", MetaData::new()).is_err());
        assert!(a.add_object(a.top(), "a/b", MetaData::new()).is_err());
        let c = a.properties(o);
        a.add_scalar(c, "x", Pod::F32, 1, 0, MetaData::new()).unwrap();
        assert!(a.add_array(c, "x", Pod::F32, 1, 0, MetaData::new()).is_err());
        assert!(a.add_array(c, "y", Pod::F32, 1, 7, MetaData::new()).is_err());
    }
}
