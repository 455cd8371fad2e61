//! PLY body decoding for all three encodings into per-property columns.
//!
//! Values are widened to f64, which holds every PLY scalar type exactly, so float32 positions
//! come back bit-exact. Only the columns the caller asks for are stored; the rest are skipped.

use super::header::{Element, Encoding, Header, PropKind, Property, Scalar};
use crate::error::{Error, Result};

/// Decoded values of one property.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    Scalar(Vec<f64>),
    /// List lengths per row and all items back to back.
    List {
        lens: Vec<u32>,
        items: Vec<f64>,
    },
}

/// One element's decoded columns, `None` where the caller did not want the property.
#[derive(Clone, Debug, PartialEq)]
pub struct ElementData {
    pub name: String,
    pub count: usize,
    pub columns: Vec<Option<Column>>,
}

impl ElementData {
    pub fn scalar(&self, element: &Element, name: &str) -> Option<&[f64]> {
        match self.columns.get(element.prop(name)?)? {
            Some(Column::Scalar(v)) => Some(v),
            _ => None,
        }
    }
}

/// Decodes every element of the body, keeping the columns for which `want` is true.
pub fn decode(
    header: &Header,
    data: &[u8],
    want: &dyn Fn(&Element, &Property) -> bool,
) -> Result<Vec<ElementData>> {
    let body = &data[header.body_offset.min(data.len())..];
    match header.encoding {
        Encoding::Ascii => decode_ascii(header, body, want),
        Encoding::BinaryLittleEndian => decode_binary::<false>(header, body, want),
        Encoding::BinaryBigEndian => decode_binary::<true>(header, body, want),
    }
}

fn new_columns(e: &Element, want: &dyn Fn(&Element, &Property) -> bool) -> Vec<Option<Column>> {
    e.props
        .iter()
        .map(|p| {
            want(e, p).then(|| match p.kind {
                PropKind::Scalar(_) => Column::Scalar(Vec::with_capacity(e.count)),
                PropKind::List { .. } => Column::List {
                    lens: Vec::with_capacity(e.count),
                    items: Vec::new(),
                },
            })
        })
        .collect()
}

#[inline]
fn read_scalar<const BE: bool>(s: Scalar, b: &[u8]) -> f64 {
    macro_rules! get {
        ($t:ty, $n:expr) => {{
            let mut a = [0u8; $n];
            a.copy_from_slice(&b[..$n]);
            if BE {
                <$t>::from_be_bytes(a) as f64
            } else {
                <$t>::from_le_bytes(a) as f64
            }
        }};
    }
    match s {
        Scalar::I8 => b[0] as i8 as f64,
        Scalar::U8 => b[0] as f64,
        Scalar::I16 => get!(i16, 2),
        Scalar::U16 => get!(u16, 2),
        Scalar::I32 => get!(i32, 4),
        Scalar::U32 => get!(u32, 4),
        Scalar::F32 => get!(f32, 4),
        Scalar::F64 => get!(f64, 8),
    }
}

/// Appends the values of one fixed-offset scalar property of every row.
fn decode_column<const BE: bool>(rows: &[u8], stride: usize, off: usize, ty: Scalar, out: &mut Vec<f64>) {
    macro_rules! column {
        ($t:ty, $n:expr) => {
            out.extend(rows.chunks_exact(stride).map(|r| {
                let b: [u8; $n] = r[off..off + $n].try_into().expect("fixed size");
                (if BE {
                    <$t>::from_be_bytes(b)
                } else {
                    <$t>::from_le_bytes(b)
                }) as f64
            }))
        };
    }
    match ty {
        Scalar::I8 => out.extend(rows.chunks_exact(stride).map(|r| r[off] as i8 as f64)),
        Scalar::U8 => out.extend(rows.chunks_exact(stride).map(|r| r[off] as f64)),
        Scalar::I16 => column!(i16, 2),
        Scalar::U16 => column!(u16, 2),
        Scalar::I32 => column!(i32, 4),
        Scalar::U32 => column!(u32, 4),
        Scalar::F32 => column!(f32, 4),
        Scalar::F64 => column!(f64, 8),
    }
}

fn list_len(element: &str, row: usize, prop: &str, v: f64) -> Result<usize> {
    if v < 0.0 || v.fract() != 0.0 || v > u32::MAX as f64 {
        return Err(Error::corrupt(format!(
            "element {element} row {row}: list {prop} has an invalid length {v}"
        )));
    }
    Ok(v as usize)
}

fn decode_binary<const BE: bool>(
    header: &Header,
    body: &[u8],
    want: &dyn Fn(&Element, &Property) -> bool,
) -> Result<Vec<ElementData>> {
    let mut pos = 0usize;
    let mut out = Vec::with_capacity(header.elements.len());
    for e in &header.elements {
        let left = body.len() - pos;
        let min_row = e.min_binary_row();
        if min_row == 0 {
            out.push(ElementData {
                name: e.name.clone(),
                count: e.count,
                columns: e.props.iter().map(|_| None).collect(),
            });
            continue;
        }
        if (e.count as u128) * (min_row as u128) > left as u128 {
            return Err(Error::truncated(format!(
                "header declares {} {} elements ({} bytes each at least) but only {left} bytes of data remain",
                e.count, e.name, min_row
            )));
        }
        let mut columns = new_columns(e, want);
        let all_scalar = e.props.iter().all(|p| matches!(p.kind, PropKind::Scalar(_)));
        if all_scalar {
            // Fixed row size: the bounds check above covers every row.
            let scalars: Vec<(usize, Scalar)> = {
                let mut off = 0;
                e.props
                    .iter()
                    .map(|p| {
                        let PropKind::Scalar(s) = p.kind else {
                            unreachable!()
                        };
                        let o = off;
                        off += s.size();
                        (o, s)
                    })
                    .collect()
            };
            // Column by column: one tight loop per property, with the type matched once.
            let rows = &body[pos..pos + e.count * min_row];
            for (col, &(off, ty)) in columns.iter_mut().zip(&scalars) {
                if let Some(Column::Scalar(v)) = col {
                    decode_column::<BE>(rows, min_row, off, ty, v);
                }
            }
            pos += e.count * min_row;
        } else {
            for row in 0..e.count {
                for (p, col) in e.props.iter().zip(columns.iter_mut()) {
                    let truncated = || {
                        Error::truncated(format!(
                            "the file ends inside {} element {row} of {} (property {})",
                            e.name, e.count, p.name
                        ))
                    };
                    match p.kind {
                        PropKind::Scalar(s) => {
                            let b = body.get(pos..pos + s.size()).ok_or_else(truncated)?;
                            if let Some(Column::Scalar(v)) = col {
                                v.push(read_scalar::<BE>(s, b));
                            }
                            pos += s.size();
                        }
                        PropKind::List { count, item } => {
                            let b = body.get(pos..pos + count.size()).ok_or_else(truncated)?;
                            let n = list_len(&e.name, row, &p.name, read_scalar::<BE>(count, b))?;
                            pos += count.size();
                            let bytes = n.checked_mul(item.size()).ok_or_else(truncated)?;
                            let b = body.get(pos..pos + bytes).ok_or_else(truncated)?;
                            if let Some(Column::List { lens, items }) = col {
                                lens.push(n as u32);
                                items.extend(b.chunks_exact(item.size()).map(|c| read_scalar::<BE>(item, c)));
                            }
                            pos += bytes;
                        }
                    }
                }
            }
        }
        out.push(ElementData {
            name: e.name.clone(),
            count: e.count,
            columns,
        });
    }
    Ok(out)
}

fn decode_ascii(
    header: &Header,
    body: &[u8],
    want: &dyn Fn(&Element, &Property) -> bool,
) -> Result<Vec<ElementData>> {
    let text =
        std::str::from_utf8(body).map_err(|e| Error::corrupt(format!("ASCII PLY body is not text ({e})")))?;
    let mut tokens = text.split_ascii_whitespace();
    let mut out = Vec::with_capacity(header.elements.len());
    let mut left = text.len();
    for e in &header.elements {
        if e.props.is_empty() {
            out.push(ElementData {
                name: e.name.clone(),
                count: e.count,
                columns: Vec::new(),
            });
            continue;
        }
        // Each value takes at least one character and one separator.
        let min_chars = (e.count as u128) * (e.props.len() as u128) * 2;
        if min_chars > left as u128 + 1 {
            return Err(Error::truncated(format!(
                "header declares {} {} elements but the ASCII body has only {left} characters left",
                e.count, e.name
            )));
        }
        let mut columns = new_columns(e, want);
        for row in 0..e.count {
            for (p, col) in e.props.iter().zip(columns.iter_mut()) {
                let mut next = |what: &str| -> Result<f64> {
                    let tok = tokens.next().ok_or_else(|| {
                        Error::truncated(format!(
                            "the file ends inside {} element {row} of {} (property {})",
                            e.name, e.count, p.name
                        ))
                    })?;
                    left = left.saturating_sub(tok.len() + 1);
                    tok.parse::<f64>().map_err(|_| {
                        Error::corrupt(format!(
                            "{} element {row}: {what} {} is {tok:?}, not a number",
                            e.name, p.name
                        ))
                    })
                };
                match p.kind {
                    PropKind::Scalar(_) => {
                        let v = next("property")?;
                        if let Some(Column::Scalar(c)) = col {
                            c.push(v);
                        }
                    }
                    PropKind::List { .. } => {
                        let n = list_len(&e.name, row, &p.name, next("list length of")?)?;
                        // The length is untrusted: grow with the items actually read.
                        let mut vals = Vec::with_capacity(n.min(64));
                        for _ in 0..n {
                            vals.push(next("list item of")?);
                        }
                        if let Some(Column::List { lens, items }) = col {
                            lens.push(n as u32);
                            items.extend(vals);
                        }
                    }
                }
            }
        }
        out.push(ElementData {
            name: e.name.clone(),
            count: e.count,
            columns,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::header;
    use super::*;

    #[test]
    fn ascii_and_binary_agree() {
        let ascii = b"ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty uchar red\nelement edge 1\nproperty list uchar int vertex_indices\nend_header\n1.5 255\n-2 0\n2 0 1\n";
        let h = header::parse(ascii).unwrap();
        let a = decode(&h, ascii, &|_, _| true).unwrap();
        let mut bin = b"ply\nformat binary_big_endian 1.0\nelement vertex 2\nproperty float x\nproperty uchar red\nelement edge 1\nproperty list uchar int vertex_indices\nend_header\n".to_vec();
        bin.extend_from_slice(&1.5f32.to_be_bytes());
        bin.push(255);
        bin.extend_from_slice(&(-2f32).to_be_bytes());
        bin.push(0);
        bin.push(2);
        bin.extend_from_slice(&0i32.to_be_bytes());
        bin.extend_from_slice(&1i32.to_be_bytes());
        let hb = header::parse(&bin).unwrap();
        let b = decode(&hb, &bin, &|_, _| true).unwrap();
        assert_eq!(a, b);
        assert_eq!(a[0].columns[0], Some(Column::Scalar(vec![1.5, -2.0])));
        assert_eq!(
            a[1].columns[0],
            Some(Column::List {
                lens: vec![2],
                items: vec![0.0, 1.0]
            })
        );
    }

    #[test]
    fn huge_counts_fail_before_allocating() {
        let t = b"ply\nformat binary_little_endian 1.0\nelement vertex 4000000000000\nproperty float x\nend_header\n\0\0\0\0";
        let h = header::parse(t).unwrap();
        assert!(decode(&h, t, &|_, _| true).is_err());
        let t = b"ply\nformat ascii 1.0\nelement vertex 4000000000000\nproperty float x\nend_header\n1\n";
        let h = header::parse(t).unwrap();
        assert!(decode(&h, t, &|_, _| true).is_err());
    }
}
