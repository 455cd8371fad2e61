//! Guides on a uniform lattice of root UVs (000 §4.1: n_g × n_g strands spread evenly over the
//! scalp's (u, v) parameterization). tress's grooms are not laid out on a UV grid, so each
//! lattice cell takes the strand whose root UV is closest to the cell's centre.

use glam::Vec2;

use crate::groom::Groom;

pub use crate::groom::root_uvs;

/// The strand closest to the centre of each non-empty cell of an n × n lattice over `uvs`.
fn lattice(uvs: &[Vec2], lo: Vec2, size: Vec2, n: usize) -> Vec<usize> {
    let mut best: Vec<Option<(f32, usize)>> = vec![None; n * n];
    for (i, uv) in uvs.iter().enumerate() {
        let f = ((*uv - lo) / size * n as f32).clamp(Vec2::ZERO, Vec2::splat(n as f32 - 1e-3));
        let (cx, cy) = (f.x as usize, f.y as usize);
        let centre = Vec2::new(cx as f32 + 0.5, cy as f32 + 0.5);
        let d = f.distance_squared(centre);
        let slot = &mut best[cy * n + cx];
        if slot.is_none_or(|(bd, bi)| d < bd || (d == bd && i < bi)) {
            *slot = Some((d, i));
        }
    }
    let mut out: Vec<usize> = best.into_iter().flatten().map(|(_, i)| i).collect();
    out.sort_unstable();
    out
}

/// About `target` guides (at least 1) on a uniform root-UV lattice, as strand indices in
/// increasing order. The lattice is refined until it holds `target` occupied cells (the
/// groom's UVs cover only part of their bounding square).
pub fn select_uv_lattice(groom: &Groom, target: usize) -> Vec<usize> {
    let uvs = root_uvs(groom);
    let n_strands = uvs.len();
    let target = target.clamp(1, n_strands.max(1));
    if target >= n_strands {
        return (0..n_strands).collect();
    }
    let (lo, hi) = uvs
        .iter()
        .fold((Vec2::INFINITY, Vec2::NEG_INFINITY), |(l, h), u| {
            (l.min(*u), h.max(*u))
        });
    let size = (hi - lo).max(Vec2::splat(1e-6));
    let mut n = ((target as f64).sqrt().ceil() as usize).max(1);
    let mut chosen = lattice(&uvs, lo, size, n);
    // Grow the lattice until enough cells are occupied (a few rounds at most).
    for _ in 0..32 {
        if chosen.len() >= target {
            break;
        }
        let fill = chosen.len() as f64 / (n * n) as f64;
        n = ((target as f64 / fill.max(0.05)).sqrt().ceil() as usize).max(n + 1);
        chosen = lattice(&uvs, lo, size, n);
    }
    chosen
}

/// Which groom strand each strand of a guides-only cache is: by strand id, else by the nearest
/// root; (groom strand, cache strand) pairs by groom strand.
pub fn match_guide_strands(
    path: &std::path::Path,
    groom: &Groom,
    info: &crate::cache::CacheInfo,
) -> crate::error::Result<Vec<(usize, usize)>> {
    let bad = |m: String| crate::error::Error::Invalid(format!("{}: {m}", path.display()));
    // Where each guide strand starts in the cache, and its root.
    let mut g_off = vec![0usize];
    for &c in &info.topology.counts {
        g_off.push(g_off.last().expect("non-empty") + c as usize);
    }
    let guide_root = |slot: usize| -> crate::error::Result<glam::Vec3> {
        if info.topology.counts[slot] == 0 {
            return Err(bad(format!("guide strand {slot} is empty")));
        }
        Ok(glam::Vec3::from_array(info.topology.points[g_off[slot]]))
    };
    // Which groom strand each guide strand is: by strand id, else by the nearest root.
    let mapping: Vec<usize> = match (&info.topology.attrs.id, &groom.attrs.id) {
        (Some(gids), Some(ids)) => {
            let index: std::collections::HashMap<u32, usize> =
                ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
            gids.iter()
                .map(|id| {
                    index
                        .get(id)
                        .copied()
                        .ok_or_else(|| bad(format!("guide strand id {id} is not in the groom")))
                })
                .collect::<crate::error::Result<_>>()?
        }
        _ => (0..info.topology.counts.len())
            .map(|slot| {
                let r = guide_root(slot)?;
                (0..groom.strand_count())
                    .filter(|&s| !groom.strand(s).is_empty())
                    .min_by(|&i, &j| {
                        groom.strand(i)[0]
                            .distance_squared(r)
                            .total_cmp(&groom.strand(j)[0].distance_squared(r))
                    })
                    .ok_or_else(|| bad("the groom has no strands".into()))
            })
            .collect::<crate::error::Result<_>>()?,
    };
    let mut order: Vec<(usize, usize)> = mapping
        .iter()
        .copied()
        .enumerate()
        .map(|(slot, s)| (s, slot))
        .collect();
    order.sort();
    if order.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(bad("two guide strands map to the same groom strand".into()));
    }
    for &(s, slot) in &order {
        if groom.counts()[s] != info.topology.counts[slot] || groom.counts()[s] == 0 {
            return Err(bad(format!(
                "guide strand {slot} has {} points, groom strand {s} {}",
                info.topology.counts[slot],
                groom.counts()[s]
            )));
        }
    }
    Ok(order)
}

/// Guide strand indices from a JSON file: a list, or `{"guides": [...]}` (a job's
/// `guides.json`); sorted, without repeats. (`GuideLayout::new` checks them against a groom.)
pub fn read_guide_list(path: &std::path::Path) -> crate::error::Result<Vec<usize>> {
    let bad = |m: String| crate::error::Error::Invalid(format!("{}: {m}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let list = v
        .get("guides")
        .unwrap_or(&v)
        .as_array()
        .ok_or_else(|| bad("expected a list of strand indices (or {\"guides\": [...]})".into()))?;
    let mut out = Vec::with_capacity(list.len());
    for x in list {
        out.push(
            x.as_u64()
                .ok_or_else(|| bad(format!("{x} is not a strand index")))? as usize,
        );
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groom::{GroomParams, generate};

    #[test]
    fn guides_spread_evenly_over_the_scalp() {
        let g = generate(&GroomParams {
            strands: 3000,
            ..GroomParams::default()
        })
        .unwrap();
        let guides = select_uv_lattice(&g, 150);
        assert!(guides.len() >= 150 && guides.len() < 260, "{}", guides.len());
        assert!(guides.windows(2).all(|w| w[0] < w[1]));
        // Every strand has a guide nearby in UV: the largest gap is about one lattice cell.
        let uvs = root_uvs(&g);
        let worst = uvs
            .iter()
            .map(|u| {
                guides
                    .iter()
                    .map(|&k| u.distance(uvs[k]))
                    .fold(f32::INFINITY, f32::min)
            })
            .fold(0.0f32, f32::max);
        let (lo, hi) = uvs
            .iter()
            .fold((Vec2::INFINITY, Vec2::NEG_INFINITY), |(l, h), u| {
                (l.min(*u), h.max(*u))
            });
        let cell = (hi - lo).max_element() / (guides.len() as f32).sqrt();
        assert!(worst < 2.5 * cell, "worst gap {worst}, cell {cell}");
        // Asking for everything gives everything; the same groom gives the same guides.
        assert_eq!(select_uv_lattice(&g, 5000).len(), 3000);
        assert_eq!(select_uv_lattice(&g, 150), guides);
    }
}
