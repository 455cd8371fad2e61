//! PLY strand files: read ASCII and binary (either endianness) in every strand layout tress
//! knows (see [`layout`]); write binary little-endian with a `vertex` element (x, y, z and
//! optionally thickness and colour) and a `strand` element holding each strand's vertex count.

pub mod body;
pub mod header;
pub mod layout;

use std::path::Path;

use crate::error::{Error, InFile, Result};
use crate::strands::{Attr, StrandAttrs, Strands};
use header::{Element, Encoding, Header, Property};

/// Options for reading strand PLYs.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// For point clouds without a strand layout: consecutive points per strand.
    pub points_per_strand: Option<usize>,
}

/// A decoded strand PLY and how its strands were found.
#[derive(Debug)]
pub struct PlyStrands {
    pub strands: Strands,
    pub encoding: Encoding,
    pub layout: &'static str,
    pub comments: Vec<String>,
}

const WIDTH_PROPS: &[(&str, f64)] = &[("thickness", 1.0), ("width", 1.0), ("radius", 2.0)];

fn wanted(e: &Element, p: &Property) -> bool {
    let n = p.name.as_str();
    match e.name.as_str() {
        "vertex" => {
            matches!(n, "x" | "y" | "z" | "red" | "green" | "blue" | "r" | "g" | "b")
                || WIDTH_PROPS.iter().any(|(w, _)| *w == n)
                || layout::ID_PROPS.contains(&n)
        }
        name if layout::EDGE_ELEMENTS.contains(&name) => {
            matches!(n, "vertex1" | "vertex2" | "vertex_indices")
        }
        name if layout::STRAND_ELEMENTS.contains(&name) => layout::COUNT_PROPS.contains(&n),
        _ => false,
    }
}

/// Parses a strand PLY from memory.
pub fn parse(data: &[u8], opts: &ReadOptions) -> Result<PlyStrands> {
    let header = header::parse(data)?;
    let vertex_el = header
        .element("vertex")
        .ok_or_else(|| Error::corrupt("the PLY has no vertex element, so it holds no strand points"))?;
    for axis in ["x", "y", "z"] {
        if vertex_el.prop(axis).is_none() {
            return Err(Error::corrupt(format!("vertex element has no {axis} property")));
        }
    }
    let decoded = body::decode(&header, data, &wanted)?;
    let index = header
        .elements
        .iter()
        .position(|e| e.name == "vertex")
        .expect("found above");
    let vdata = &decoded[index];
    let n = vertex_el.count;
    let col = |name: &str| vdata.scalar(vertex_el, name);
    let (xs, ys, zs) = (col("x").expect("x"), col("y").expect("y"), col("z").expect("z"));
    let mut points: Vec<[f32; 3]> = (0..n)
        .map(|i| [xs[i] as f32, ys[i] as f32, zs[i] as f32])
        .collect();

    let layouts = find_layouts(&header, &decoded, n, opts)?;
    let Some(first) = layouts.first() else {
        return Err(Error::invalid(format!(
            "the PLY has {n} vertices but no strand layout (no strand element with vertex counts, no per-vertex strand id, no edges); for point clouds pass the points per strand (--points-per-strand N)"
        )));
    };
    for other in &layouts[1..] {
        if other.counts != first.counts || other.order != first.order {
            return Err(Error::corrupt(format!(
                "strand layouts disagree: the {} gives {} strands, the {} gives {} strands{}",
                first.name,
                first.counts.len(),
                other.name,
                other.counts.len(),
                if other.counts.len() == first.counts.len() {
                    " of different sizes"
                } else {
                    ""
                }
            )));
        }
    }
    let order = first.order.clone();
    let reorder = |v: Vec<f32>| -> Vec<f32> {
        match &order {
            Some(o) => o.iter().map(|&i| v[i as usize]).collect(),
            None => v,
        }
    };
    if let Some(o) = &order {
        points = o.iter().map(|&i| points[i as usize]).collect();
    }

    let mut attrs = StrandAttrs::default();
    if let Some((vals, scale)) = WIDTH_PROPS.iter().find_map(|(w, s)| col(w).map(|v| (v, *s))) {
        attrs.width = Some(Attr::PerVertex(reorder(
            vals.iter().map(|&v| (v * scale) as f32).collect(),
        )));
    }
    let rgb = [("red", "green", "blue"), ("r", "g", "b")]
        .iter()
        .find_map(|&(r, g, b)| Some((r, col(r)?, col(g)?, col(b)?)));
    if let Some((rname, r, g, b)) = rgb {
        let prop = &vertex_el.props[vertex_el.prop(rname).expect("present")];
        let scale = match prop.kind {
            header::PropKind::Scalar(s) if s.is_integer() => 1.0 / 255.0,
            _ => 1.0,
        };
        let chan = |c: &[f64]| reorder(c.iter().map(|&v| (v * scale) as f32).collect());
        let (r, g, b) = (chan(r), chan(g), chan(b));
        attrs.color = Some(Attr::PerVertex((0..n).map(|i| [r[i], g[i], b[i]]).collect()));
    }
    let strands = Strands::new(points, first.counts.clone(), attrs)?;
    Ok(PlyStrands {
        strands,
        encoding: header.encoding,
        layout: first.name,
        comments: header.comments,
    })
}

fn find_layouts(
    header: &Header,
    decoded: &[body::ElementData],
    n: usize,
    opts: &ReadOptions,
) -> Result<Vec<layout::Layout>> {
    let mut out = Vec::new();
    if let Some(k) = opts.points_per_strand {
        out.push(layout::fixed(k, n)?);
    }
    for (el, data) in header.elements.iter().zip(decoded) {
        if layout::STRAND_ELEMENTS.contains(&el.name.as_str())
            && let Some(l) = layout::from_strand_element(el, data, n)?
        {
            out.push(l);
        }
    }
    let vi = header
        .elements
        .iter()
        .position(|e| e.name == "vertex")
        .expect("checked");
    let vertex_el = &header.elements[vi];
    if let Some((name, ids)) = layout::ID_PROPS
        .iter()
        .find_map(|p| Some((*p, decoded[vi].scalar(vertex_el, p)?)))
    {
        out.push(layout::from_strand_ids(name, ids)?);
    }
    for (el, data) in header.elements.iter().zip(decoded) {
        if layout::EDGE_ELEMENTS.contains(&el.name.as_str())
            && let Some(l) = layout::from_edges(el, data, n)?
        {
            out.push(l);
        }
    }
    Ok(out)
}

/// Reads a strand PLY from disk.
pub fn read(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<PlyStrands> {
    let path = path.as_ref();
    let data = std::fs::read(path).in_file(path)?;
    parse(&data, opts).in_file(path)
}

/// Serializes strands as binary little-endian PLY (vertex + strand elements).
pub fn to_bytes(strands: &Strands, comment: &str) -> Result<Vec<u8>> {
    strands.validate()?;
    let n = strands.points.len();
    let width = strands
        .attrs
        .width
        .as_ref()
        .map(|w| w.per_vertex(&strands.counts));
    let color = strands
        .attrs
        .color
        .as_ref()
        .map(|c| c.per_vertex(&strands.counts));
    let mut head = String::from("ply\nformat binary_little_endian 1.0\n");
    for line in comment.lines() {
        head.push_str(&format!("comment {line}\n"));
    }
    head.push_str(&format!(
        "element vertex {n}\nproperty float x\nproperty float y\nproperty float z\n"
    ));
    if width.is_some() {
        head.push_str("property float thickness\n");
    }
    if color.is_some() {
        head.push_str("property uchar red\nproperty uchar green\nproperty uchar blue\n");
    }
    head.push_str(&format!(
        "element strand {}\nproperty int vertex_count\nend_header\n",
        strands.counts.len()
    ));
    let row = 12 + if width.is_some() { 4 } else { 0 } + if color.is_some() { 3 } else { 0 };
    let mut out = Vec::with_capacity(head.len() + n * row + strands.counts.len() * 4);
    out.extend_from_slice(head.as_bytes());
    for (i, p) in strands.points.iter().enumerate() {
        for c in p {
            out.extend_from_slice(&c.to_le_bytes());
        }
        if let Some(w) = &width {
            out.extend_from_slice(&w[i].to_le_bytes());
        }
        if let Some(c) = &color {
            for ch in c[i] {
                out.push((ch.clamp(0.0, 1.0) * 255.0).round() as u8);
            }
        }
    }
    for &c in &strands.counts {
        let c = i32::try_from(c).map_err(|_| Error::invalid("strand too long for PLY int count"))?;
        out.extend_from_slice(&c.to_le_bytes());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Strands {
        Strands::new(
            vec![
                [0.0, 1.0, 2.0],
                [0.5, 1.5, 2.5],
                [9.0, 8.0, 7.0],
                [1e-8, -3.0, f32::MAX],
                [4.0, 4.0, 4.0],
            ],
            vec![2, 3],
            StrandAttrs {
                width: Some(Attr::PerVertex(vec![0.1, 0.2, 0.3, 0.4, 0.5])),
                ..Default::default()
            },
        )
        .unwrap()
    }

    #[test]
    fn binary_round_trip_is_bit_exact() {
        let s = sample();
        let bytes = to_bytes(&s, "tress test").unwrap();
        let back = parse(&bytes, &ReadOptions::default()).unwrap();
        assert_eq!(back.layout, "strand element");
        assert_eq!(back.strands, s);
        assert_eq!(back.comments, vec!["tress test".to_string()]);
    }

    #[test]
    fn every_truncation_fails_cleanly() {
        let bytes = to_bytes(&sample(), "").unwrap();
        for len in 0..bytes.len() {
            assert!(
                parse(&bytes[..len], &ReadOptions::default()).is_err(),
                "length {len}"
            );
        }
    }

    #[test]
    fn edge_chains_in_any_order() {
        let text = b"ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\nelement edge 2\nproperty int vertex1\nproperty int vertex2\nend_header\n0 0 0\n1 0 0\n2 0 0\n3 0 0\n2 0\n3 1\n";
        let p = parse(text, &ReadOptions::default()).unwrap();
        assert_eq!(p.strands.counts, vec![2, 2]);
        assert_eq!(p.strands.points[1], [2.0, 0.0, 0.0]);
        let cycle = b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement edge 3\nproperty int vertex1\nproperty int vertex2\nend_header\n0 0 0\n1 0 0\n2 0 0\n0 1\n1 2\n2 0\n";
        assert!(
            parse(cycle, &ReadOptions::default())
                .unwrap_err()
                .to_string()
                .contains("cycle")
        );
    }

    #[test]
    fn point_cloud_needs_a_count() {
        let text = b"ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\nend_header\n0 0 0\n1 0 0\n2 0 0\n3 0 0\n";
        let e = parse(text, &ReadOptions::default()).unwrap_err().to_string();
        assert!(e.contains("--points-per-strand"), "{e}");
        let p = parse(
            text,
            &ReadOptions {
                points_per_strand: Some(2),
            },
        )
        .unwrap();
        assert_eq!(p.strands.counts, vec![2, 2]);
    }
}
