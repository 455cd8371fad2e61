//! Guides on a uniform lattice of root UVs (000 §4.1: n_g × n_g strands spread evenly over the
//! scalp's (u, v) parameterization). tress's grooms are not laid out on a UV grid, so each
//! lattice cell takes the strand whose root UV is closest to the cell's centre.

use glam::Vec2;

use crate::groom::{Groom, scalp_center, scalp_uv};

/// Root UVs of the groom: its own when it has them, else 000 App. A around a centre fitted to
/// the roots.
pub fn root_uvs(groom: &Groom) -> Vec<Vec2> {
    if let Some(uv) = &groom.attrs.root_uv {
        return uv.iter().map(|u| Vec2::from_array(*u)).collect();
    }
    let roots = groom.roots();
    let c = scalp_center(&roots);
    roots.iter().map(|r| scalp_uv(*r, c)).collect()
}

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
