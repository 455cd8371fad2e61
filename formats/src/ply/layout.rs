//! How a PLY file says which vertices form which strand.
//!
//! Three conventions exist in the wild (see `shared/tools/ply_inspect.py`): a `strand` element
//! with a vertex count per strand (hairutil, and what tress writes), a per-vertex strand id, and
//! an `edge` element chaining vertices. Point clouds with a fixed count per strand
//! (NeuralHaircut / trimesh) carry none of them, and need the count from the user.

use super::body::{Column, ElementData};
use super::header::Element;
use crate::error::{Error, Result};

pub const STRAND_ELEMENTS: &[&str] = &["strand", "strands", "curve", "curves", "hair", "hairs"];
pub const COUNT_PROPS: &[&str] = &[
    "vertex_count",
    "num_vertices",
    "nvertices",
    "vertex_counts",
    "count",
    "n",
    "size",
    "num_points",
    "point_count",
    // hairutil: segments per strand, one less than the vertex count.
    "nsegs",
];
pub const EDGE_ELEMENTS: &[&str] = &["edge", "edges", "segment", "segments"];
pub const ID_PROPS: &[&str] = &[
    "strand_id",
    "strand",
    "strandid",
    "strand_index",
    "curve_id",
    "curve",
    "hair_id",
    "hair",
];

/// The strands a layout yields: vertex counts, and the vertex order when it differs from the file's.
#[derive(Debug, PartialEq)]
pub struct Layout {
    pub name: &'static str,
    pub counts: Vec<u32>,
    pub order: Option<Vec<u32>>,
}

fn as_index(v: f64, what: &str, row: usize) -> Result<u64> {
    if v < 0.0 || v.fract() != 0.0 || v > u32::MAX as f64 {
        return Err(Error::corrupt(format!(
            "{what} {row} is {v}, not a valid count or index"
        )));
    }
    Ok(v as u64)
}

/// Counts from a strand element.
pub fn from_strand_element(el: &Element, data: &ElementData, vertices: usize) -> Result<Option<Layout>> {
    let Some(prop) = COUNT_PROPS.iter().find_map(|n| el.prop(n)) else {
        return Ok(None);
    };
    let Some(Some(Column::Scalar(values))) = data.columns.get(prop) else {
        return Ok(None);
    };
    let name = &el.props[prop].name;
    let what = format!("{}.{name}", el.name);
    let extra = if name == "nsegs" { 1 } else { 0 };
    let mut counts = Vec::with_capacity(values.len());
    let mut total = 0u64;
    for (row, &v) in values.iter().enumerate() {
        let c = as_index(v, &what, row)? + extra;
        if c == 0 {
            return Err(Error::corrupt(format!(
                "{what} {row} is 0: a strand needs at least one vertex"
            )));
        }
        total += c;
        counts.push(c as u32);
    }
    if total != vertices as u64 {
        return Err(Error::corrupt(format!(
            "{what} sums to {total} but the vertex element has {vertices} vertices"
        )));
    }
    Ok(Some(Layout {
        name: "strand element",
        counts,
        order: None,
    }))
}

/// Counts from a per-vertex strand id, which must form contiguous runs.
pub fn from_strand_ids(name: &str, ids: &[f64]) -> Result<Layout> {
    let mut counts: Vec<u32> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut prev: Option<f64> = None;
    for &id in ids {
        if prev == Some(id) {
            *counts.last_mut().expect("a run is open") += 1;
        } else {
            if !seen.insert(id.to_bits()) {
                return Err(Error::corrupt(format!(
                    "vertex.{name}: strand id {id} appears in two separate runs; ids must be contiguous"
                )));
            }
            counts.push(1);
            prev = Some(id);
        }
    }
    Ok(Layout {
        name: "per-vertex strand id",
        counts,
        order: None,
    })
}

/// Strands as chains of an edge element (`vertex1`/`vertex2` or a 2-item `vertex_indices` list).
pub fn from_edges(el: &Element, data: &ElementData, vertices: usize) -> Result<Option<Layout>> {
    let pairs: Vec<(u64, u64)> =
        if let (Some(a), Some(b)) = (data.scalar(el, "vertex1"), data.scalar(el, "vertex2")) {
            a.iter()
                .zip(b)
                .enumerate()
                .map(|(row, (&a, &b))| Ok((as_index(a, "edge", row)?, as_index(b, "edge", row)?)))
                .collect::<Result<_>>()?
        } else if let Some(Some(Column::List { lens, items })) =
            el.prop("vertex_indices").and_then(|i| data.columns.get(i))
        {
            let mut out = Vec::with_capacity(lens.len());
            let mut at = 0usize;
            for (row, &n) in lens.iter().enumerate() {
                if n != 2 {
                    return Err(Error::corrupt(format!("edge {row} lists {n} vertices, not 2")));
                }
                out.push((
                    as_index(items[at], "edge", row)?,
                    as_index(items[at + 1], "edge", row)?,
                ));
                at += 2;
            }
            out
        } else {
            return Ok(None);
        };
    let n = vertices;
    let mut nbr = vec![[u32::MAX; 2]; n];
    let mut degree = vec![0u8; n];
    for (row, &(a, b)) in pairs.iter().enumerate() {
        if a >= n as u64 || b >= n as u64 {
            return Err(Error::corrupt(format!(
                "edge {row} references vertex {} outside [0, {n})",
                a.max(b)
            )));
        }
        if a == b {
            return Err(Error::corrupt(format!("edge {row} joins vertex {a} to itself")));
        }
        for (v, w) in [(a as usize, b as u32), (b as usize, a as u32)] {
            if degree[v] == 2 {
                return Err(Error::corrupt(format!(
                    "vertex {v} has more than two edges: strands cannot branch"
                )));
            }
            nbr[v][degree[v] as usize] = w;
            degree[v] += 1;
        }
    }
    let mut visited = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut counts = Vec::new();
    for start in 0..n {
        if visited[start] || degree[start] == 2 {
            continue;
        }
        // Walk from an end (degree 0 or 1) to the other end.
        let mut len = 0u32;
        let (mut prev, mut cur) = (u32::MAX, start as u32);
        loop {
            visited[cur as usize] = true;
            order.push(cur);
            len += 1;
            let next = nbr[cur as usize]
                .iter()
                .copied()
                .find(|&w| w != u32::MAX && w != prev);
            match next {
                Some(w) => {
                    prev = cur;
                    cur = w;
                }
                None => break,
            }
        }
        counts.push(len);
    }
    if order.len() != n {
        return Err(Error::corrupt(format!(
            "edges close {} cycle vertices: strands must be open chains",
            n - order.len()
        )));
    }
    let identity = order.iter().enumerate().all(|(i, &v)| i as u32 == v);
    Ok(Some(Layout {
        name: "edge element",
        counts,
        order: (!identity).then_some(order),
    }))
}

/// A fixed number of consecutive points per strand.
pub fn fixed(points_per_strand: usize, vertices: usize) -> Result<Layout> {
    if points_per_strand == 0 || !vertices.is_multiple_of(points_per_strand) {
        return Err(Error::invalid(format!(
            "{vertices} vertices do not split into strands of {points_per_strand} points"
        )));
    }
    Ok(Layout {
        name: "fixed points per strand",
        counts: vec![points_per_strand as u32; vertices / points_per_strand],
        order: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_must_be_runs() {
        assert_eq!(
            from_strand_ids("s", &[0., 0., 1., 1., 1.]).unwrap().counts,
            vec![2, 3]
        );
        assert!(from_strand_ids("s", &[0., 1., 0.]).is_err());
    }

    #[test]
    fn fixed_needs_a_divisor() {
        assert_eq!(fixed(100, 190_000).unwrap().counts.len(), 1900);
        assert!(fixed(7, 100).is_err());
        assert!(fixed(0, 100).is_err());
    }
}
