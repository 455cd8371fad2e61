//! PLY header: parsed with `ply-rs-bw`, flattened into the few facts the body decoder needs.

use ply_rs_bw::parser::{Parser, Reader};
use ply_rs_bw::ply::{DefaultElement, Encoding as PlyEncoding, PropertyType, ScalarType};

use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Ascii,
    BinaryLittleEndian,
    BinaryBigEndian,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Ascii => "ascii",
            Encoding::BinaryLittleEndian => "binary_little_endian",
            Encoding::BinaryBigEndian => "binary_big_endian",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

impl Scalar {
    pub fn size(self) -> usize {
        match self {
            Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::F64 => 8,
        }
    }

    pub fn is_integer(self) -> bool {
        !matches!(self, Scalar::F32 | Scalar::F64)
    }

    fn from_ply(t: &ScalarType) -> Self {
        match t {
            ScalarType::Char => Scalar::I8,
            ScalarType::UChar => Scalar::U8,
            ScalarType::Short => Scalar::I16,
            ScalarType::UShort => Scalar::U16,
            ScalarType::Int => Scalar::I32,
            ScalarType::UInt => Scalar::U32,
            ScalarType::Float => Scalar::F32,
            ScalarType::Double => Scalar::F64,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum PropKind {
    Scalar(Scalar),
    List { count: Scalar, item: Scalar },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Property {
    pub name: String,
    pub kind: PropKind,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Element {
    pub name: String,
    pub count: usize,
    pub props: Vec<Property>,
}

impl Element {
    pub fn prop(&self, name: &str) -> Option<usize> {
        self.props.iter().position(|p| p.name == name)
    }

    /// Bytes of one row in a binary body, counting an empty list for list properties.
    pub fn min_binary_row(&self) -> usize {
        self.props
            .iter()
            .map(|p| match p.kind {
                PropKind::Scalar(s) => s.size(),
                PropKind::List { count, .. } => count.size(),
            })
            .sum()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub encoding: Encoding,
    pub elements: Vec<Element>,
    pub comments: Vec<String>,
    pub obj_info: Vec<String>,
    /// Offset of the first body byte.
    pub body_offset: usize,
}

impl Header {
    pub fn element(&self, name: &str) -> Option<&Element> {
        self.elements.iter().find(|e| e.name == name)
    }
}

/// Parses the header at the start of `data`.
pub fn parse(data: &[u8]) -> Result<Header> {
    if !data.starts_with(b"ply") {
        let shown = String::from_utf8_lossy(&data[..data.len().min(8)]).into_owned();
        return Err(Error::corrupt(format!(
            "not a PLY file (starts with {shown:?}, expected \"ply\")"
        )));
    }
    // The header is text and small; refuse to scan megabytes of binary for `end_header`.
    let end = find_end_header(data)
        .ok_or_else(|| Error::truncated("the PLY header has no end_header line".to_string()))?;
    check_duplicate_names(&data[..end])?;
    let mut reader = Reader::new(&data[..end]);
    let parsed = Parser::<DefaultElement>::new()
        .read_header(&mut reader)
        .map_err(|e| Error::corrupt(format!("bad PLY header: {}", one_line(&e.to_string()))))?;
    let encoding = match parsed.encoding {
        PlyEncoding::Ascii => Encoding::Ascii,
        PlyEncoding::BinaryLittleEndian => Encoding::BinaryLittleEndian,
        PlyEncoding::BinaryBigEndian => Encoding::BinaryBigEndian,
    };
    let elements = parsed
        .elements
        .values()
        .map(|e| Element {
            name: e.name.clone(),
            count: e.count,
            props: e
                .properties
                .values()
                .map(|p| Property {
                    name: p.name.clone(),
                    kind: match &p.data_type {
                        PropertyType::Scalar(s) => PropKind::Scalar(Scalar::from_ply(s)),
                        PropertyType::List(c, i) => PropKind::List {
                            count: Scalar::from_ply(c),
                            item: Scalar::from_ply(i),
                        },
                    },
                })
                .collect(),
        })
        .collect();
    Ok(Header {
        encoding,
        elements,
        comments: parsed.comments,
        obj_info: parsed.obj_infos,
        body_offset: end,
    })
}

/// `ply-rs-bw` silently merges elements or properties declared twice, which would misalign the
/// body; refuse such headers instead.
fn check_duplicate_names(header: &[u8]) -> Result<()> {
    let text = String::from_utf8_lossy(header);
    let mut elements: Vec<&str> = Vec::new();
    let mut props: Vec<&str> = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_ascii_whitespace().collect();
        match words.as_slice() {
            ["element", name, ..] => {
                if elements.contains(name) {
                    return Err(Error::corrupt(format!(
                        "PLY header declares element {name:?} twice"
                    )));
                }
                elements.push(name);
                props.clear();
            }
            ["property", .., name] => {
                if props.contains(name) {
                    return Err(Error::corrupt(format!(
                        "PLY header declares property {name:?} twice in element {:?}",
                        elements.last().unwrap_or(&"")
                    )));
                }
                props.push(name);
            }
            _ => {}
        }
    }
    Ok(())
}

/// Offset just past the `end_header` line, searching at most the first 64 KiB.
fn find_end_header(data: &[u8]) -> Option<usize> {
    const NEEDLE: &[u8] = b"end_header";
    let window = &data[..data.len().min(64 * 1024)];
    let mut i = 0;
    while i + NEEDLE.len() <= window.len() {
        let at_line_start = i == 0 || window[i - 1] == b'\n';
        if at_line_start && window[i..].starts_with(NEEDLE) {
            let mut j = i + NEEDLE.len();
            while j < window.len() && (window[j] == b' ' || window[j] == b'\t' || window[j] == b'\r') {
                j += 1;
            }
            if j < data.len() && data[j] == b'\n' {
                return Some(j + 1);
            }
            if j == data.len() {
                return Some(j);
            }
        }
        i += 1;
    }
    None
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_elements_in_order() {
        let text = b"ply\nformat binary_little_endian 1.0\ncomment hi\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement strand 1\nproperty int vertex_count\nend_header\n";
        let h = parse(text).unwrap();
        assert_eq!(h.encoding, Encoding::BinaryLittleEndian);
        assert_eq!(h.elements[0].name, "vertex");
        assert_eq!(h.elements[0].count, 3);
        assert_eq!(h.elements[0].min_binary_row(), 12);
        assert_eq!(h.elements[1].props[0].kind, PropKind::Scalar(Scalar::I32));
        assert_eq!(h.comments, vec!["hi".to_string()]);
        assert_eq!(h.body_offset, text.len());
    }

    #[test]
    fn rejects_non_ply_and_missing_end() {
        assert!(parse(b"HAIR....").unwrap_err().to_string().contains("not a PLY"));
        assert!(parse(b"ply\nformat ascii 1.0\nelement vertex 1\n").is_err());
        assert!(parse(b"ply\nformat what 1.0\nend_header\n").is_err());
        let dup =
            b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float x\nend_header\n";
        assert!(parse(dup).unwrap_err().to_string().contains("twice"));
    }
}
