//! Strands drawn as hair: every segment a camera-facing ribbon of the strand's width,
//! anti-aliased by its coverage of each pixel, composited back to front.
//!
//! - **Coverage**: a pixel's share of a ribbon is the overlap of the pixel's box with the
//!   ribbon across it (`min(d + ½, w/2) − max(d − ½, −w/2)` for a pixel centre `d` pixels off
//!   the axis), times the same overlap along it at the strand's two ends; inside a strand the
//!   segments split the length without overlap (a pixel centre belongs to the segment whose
//!   span holds its projection), so joints are neither doubled nor dropped. Summed over the
//!   pixels this is the ribbon's area, however thin: a hair 0.1 pixel wide darkens its pixels
//!   by a tenth instead of vanishing or drawing a whole pixel.
//! - **Depth**: segments are sorted far to near by their middle's depth (ties by index, so the
//!   order is total) and blended with the over operator, so many overlapping strands resolve
//!   as they stack; a solid nearer than the segment at a pixel hides it.
//! - **Culling**: a segment behind the solids at every pixel it could cover (the film's
//!   farthest solid depth per 8×8 tile) is dropped before sorting, and only the vertices of
//!   the segments kept are lit and shaded: the same picture, without drawing the hair behind
//!   the head.
//! - **Shading**: [`Lighting::hair`] per vertex (tangent from the neighbours), with the key
//!   light's share from a deep opacity map ([`super::shadow`]); colours interpolate along a
//!   segment. The map also shadows the solids under the hair.
//! - **Threads**: the picture is cut into bands of rows; each band draws the segments that
//!   touch it in the sorted order, so every pixel sees the same operations in the same order
//!   whatever the thread count.

use glam::Vec3;
use rayon::prelude::*;

use super::camera::Camera;
use super::film::Film;
use super::shade::Lighting;
use super::shadow::DeepOpacity;

/// Width of strands that carry none (cm): a human hair, 80 µm.
pub const DEFAULT_WIDTH: f32 = 0.008;
/// Texels a side of the deep opacity map.
pub const SHADOW_RES: usize = 256;
/// Rows per band.
const BAND: u32 = 32;

/// A strand's vertices as the rasterizer needs them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Vertex {
    /// Picture position (pixels, y down) and depth along the camera.
    pub x: f32,
    pub y: f32,
    pub z: f32,
    /// Half the ribbon's width (pixels).
    pub half: f32,
    /// Linear RGB.
    pub color: [f32; 3],
}

/// Per-vertex widths of strands in scene units: the strands' own or [`DEFAULT_WIDTH`], times
/// `scale`.
pub fn vertex_widths(n: usize, widths: Option<&[f32]>, scale: f32) -> Vec<f32> {
    match widths {
        Some(w) if w.len() == n => w.iter().map(|w| w.max(0.0) * scale).collect(),
        _ => vec![DEFAULT_WIDTH * scale; n],
    }
}

/// How much previews thicken the strands of a sparse groom so that it covers the scalp as a
/// full one does: √(100,000 / strands), at least 1 (100,000 strands: a full head). Drawn at
/// their own widths, 2,000 strands cover a fiftieth of what a head of hair does and read as
/// scratches; the square root keeps them strands rather than ribbons.
pub fn preview_width_scale(strands: usize) -> f32 {
    (100_000.0 / strands.max(1) as f32).sqrt().max(1.0)
}

/// The key light's share at every vertex of strands (1 without shadows), looked up only where
/// `needed` (when given) says so; the shadow map is built from all of them.
pub fn vertex_light(
    points: &[Vec3],
    counts: &[u32],
    widths: &[f32],
    lighting: &Lighting,
    needed: Option<&[bool]>,
) -> (Vec<f32>, Option<DeepOpacity>) {
    if !lighting.shadows {
        return (vec![1.0; points.len()], None);
    }
    let map = DeepOpacity::build(
        points,
        counts,
        widths,
        lighting.light,
        SHADOW_RES,
        lighting.fibre_opacity,
    );
    let lit = points
        .par_iter()
        .enumerate()
        .map(|(i, p)| {
            if needed.is_none_or(|n| n[i]) {
                map.transmittance(*p)
            } else {
                1.0
            }
        })
        .collect();
    (lit, Some(map))
}

/// Shaded colours of strands' vertices, the key light's share `lit` at each; only those
/// `needed` says so (when given), black elsewhere.
pub fn shade(
    points: &[Vec3],
    counts: &[u32],
    lit: &[f32],
    camera: &Camera,
    lighting: &Lighting,
    needed: Option<&[bool]>,
) -> Vec<[f32; 3]> {
    let view = -camera.forward;
    let offs = tress_formats::offsets_of(counts);
    let mut out = vec![[0.0f32; 3]; points.len()];
    let mut parts: Vec<&mut [[f32; 3]]> = Vec::with_capacity(counts.len());
    let mut rest = out.as_mut_slice();
    for &n in counts {
        let (a, b) = rest.split_at_mut(n as usize);
        parts.push(a);
        rest = b;
    }
    parts.into_par_iter().zip(offs).for_each(|(dst, o)| {
        let n = dst.len();
        let s = &points[o..o + n];
        for (i, c) in dst.iter_mut().enumerate() {
            if needed.is_some_and(|m| !m[o + i]) {
                continue;
            }
            let t = (s[(i + 1).min(n - 1)] - s[i.saturating_sub(1)]).normalize_or(Vec3::Y);
            *c = lighting.hair(t, view, lighting.hair, lit[o + i]);
        }
    });
    out
}

/// Projects strands' vertices (`widths` in scene units), uncoloured.
pub fn project(points: &[Vec3], widths: &[f32], camera: &Camera) -> Vec<Vertex> {
    points
        .par_iter()
        .zip(widths)
        .map(|(p, w)| {
            let (x, y, z) = camera.project(*p);
            Vertex {
                x,
                y,
                z,
                half: 0.5 * w * camera.scale,
                color: [0.0; 3],
            }
        })
        .collect()
}

/// A segment to draw: its first vertex, and whether it starts or ends its strand.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    first: u32,
    starts: bool,
    ends: bool,
}

/// The segments of strands (`counts` vertices each, projected) that can show on `film`: finite,
/// within reach of the picture, and not behind its solids at every pixel they could cover.
pub fn segments_in_view(film: &Film, verts: &[Vertex], counts: &[u32]) -> Vec<Segment> {
    let (w, h) = (film.width as f32, film.height as f32);
    let hidden = Occluders::of(film);
    let offsets = tress_formats::offsets_of(counts);
    counts
        .par_iter()
        .zip(offsets)
        .flat_map_iter(|(&n, o)| {
            let n = n as usize;
            let hidden = hidden.as_ref();
            (o..(o + n).saturating_sub(1)).filter_map(move |i| {
                let (a, b) = (&verts[i], &verts[i + 1]);
                let ok = [a.x, a.y, a.z, b.x, b.y, b.z].iter().all(|v| v.is_finite());
                let m = a.half.max(b.half) + 1.0;
                let out = !ok
                    || a.x.max(b.x) < -m
                    || a.y.max(b.y) < -m
                    || a.x.min(b.x) > w + m
                    || a.y.min(b.y) > h + m
                    || hidden.is_some_and(|o| o.hides(a, b, m));
                (!out).then_some(Segment {
                    first: i as u32,
                    starts: i == o,
                    ends: i + 2 == o + n,
                })
            })
        })
        .collect()
}

/// The vertices the segments use.
pub fn used_vertices(segments: &[Segment], vertices: usize) -> Vec<bool> {
    let mut used = vec![false; vertices];
    for s in segments {
        used[s.first as usize] = true;
        used[s.first as usize + 1] = true;
    }
    used
}

/// Draws strands of `counts` vertices (projected, coloured) over `film`, back to front.
pub fn composite(film: &mut Film, verts: &[Vertex], counts: &[u32]) {
    let segments = segments_in_view(film, verts, counts);
    draw_segments(film, verts, &segments);
}

/// Draws `segments` of `verts` over `film`, back to front.
pub fn draw_segments(film: &mut Film, verts: &[Vertex], segments: &[Segment]) {
    let (w, h) = (film.width, film.height);
    // Keys: the middle's depth, far first, as bits that sort like the float, then the index.
    let mut keyed: Vec<u64> = segments
        .par_iter()
        .enumerate()
        .map(|(k, s)| {
            let (a, b) = (&verts[s.first as usize], &verts[s.first as usize + 1]);
            ((order_bits(-(a.z + b.z)) as u64) << 32) | k as u64
        })
        .collect();
    keyed.par_sort_unstable();
    // The segments with their vertices, in drawing order: the bands below read them in order
    // instead of gathering vertices from all over memory.
    let ordered: Vec<Drawn> = keyed
        .par_iter()
        .map(|&key| {
            let seg = segments[(key & 0xffff_ffff) as usize];
            let i = seg.first as usize;
            (verts[i], verts[i + 1], seg.starts, seg.ends)
        })
        .collect();
    drop(keyed);
    // Bands: the segments touching each, in drawing order.
    let bands = h.div_ceil(BAND) as usize;
    let mut binned: Vec<Vec<u32>> = vec![Vec::new(); bands];
    for (k, (a, b, _, _)) in ordered.iter().enumerate() {
        let m = a.half.max(b.half) + 1.0;
        let lo = ((a.y.min(b.y) - m).max(0.0) as u32 / BAND) as usize;
        let hi = (((a.y.max(b.y) + m).max(0.0) as u32 / BAND) as usize).min(bands - 1);
        for band in binned.iter_mut().take(hi + 1).skip(lo) {
            band.push(k as u32);
        }
    }
    let row = w as usize * BAND as usize;
    film.color
        .par_chunks_mut(row)
        .zip(film.depth.par_chunks(row))
        .zip(binned.par_iter())
        .enumerate()
        .for_each(|(band, ((color, depth), list))| {
            let y0 = band as u32 * BAND;
            let rows = (color.len() / w as usize) as u32;
            for (j, &k) in list.iter().enumerate() {
                // A band's segments are spread over the whole sorted list: fetch a few ahead.
                #[cfg(target_arch = "x86_64")]
                if let Some(&next) = list.get(j + 8) {
                    // SAFETY: a prefetch only hints the cache; `next` indexes `ordered`.
                    unsafe {
                        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
                        let at = ordered.as_ptr().add(next as usize) as *const i8;
                        _mm_prefetch::<_MM_HINT_T0>(at);
                        _mm_prefetch::<_MM_HINT_T0>(at.add(std::mem::size_of::<Drawn>() - 1));
                    }
                }
                let (a, b, starts, ends) = &ordered[k as usize];
                draw_segment(color, depth, w, y0, rows, a, b, *starts, *ends);
            }
        });
}

/// Solids of a film by tiles: the farthest solid depth in each tile of [`Occluders::TILE`]²
/// pixels (infinite where a pixel has none), so a segment behind a solid everywhere it could
/// cover is dropped before it is sorted and drawn (hair behind the head).
struct Occluders {
    far: Vec<f32>,
    tiles_x: usize,
    tiles_y: usize,
}

impl Occluders {
    const TILE: usize = 8;

    /// None when the film has no solid.
    fn of(film: &Film) -> Option<Occluders> {
        if !film.depth.iter().any(|d| d.is_finite()) {
            return None;
        }
        let (w, h) = (film.width as usize, film.height as usize);
        let (tiles_x, tiles_y) = (w.div_ceil(Self::TILE), h.div_ceil(Self::TILE));
        let far = (0..tiles_x * tiles_y)
            .into_par_iter()
            .map(|t| {
                let (tx, ty) = (t % tiles_x * Self::TILE, t / tiles_x * Self::TILE);
                let mut far = f32::NEG_INFINITY;
                for y in ty..(ty + Self::TILE).min(h) {
                    for &d in &film.depth[y * w + tx..y * w + (tx + Self::TILE).min(w)] {
                        far = far.max(d);
                    }
                }
                far
            })
            .collect();
        Some(Occluders {
            far,
            tiles_x,
            tiles_y,
        })
    }

    /// Whether the segment from `a` to `b`, `m` pixels around it, lies behind solids at every
    /// pixel it could cover (finite picture coordinates).
    fn hides(&self, a: &Vertex, b: &Vertex, m: f32) -> bool {
        let tile = |v: f32, n: usize| ((v.max(0.0) as usize) / Self::TILE).min(n - 1);
        let (x0, x1) = (
            tile(a.x.min(b.x) - m, self.tiles_x),
            tile(a.x.max(b.x) + m, self.tiles_x),
        );
        let (y0, y1) = (
            tile(a.y.min(b.y) - m, self.tiles_y),
            tile(a.y.max(b.y) + m, self.tiles_y),
        );
        let z = a.z.min(b.z);
        (y0..=y1).all(|ty| {
            self.far[ty * self.tiles_x + x0..=ty * self.tiles_x + x1]
                .iter()
                .all(|&f| z >= f)
        })
    }
}

/// A segment's two vertices and whether it starts or ends its strand.
type Drawn = (Vertex, Vertex, bool, bool);

/// Bits of `f` that sort as `f.total_cmp` does.
fn order_bits(f: f32) -> u32 {
    let b = f.to_bits();
    if b & 0x8000_0000 != 0 { !b } else { b | 0x8000_0000 }
}

/// `v.floor()` as an integer without a libm call (the baseline x86-64 target has no SSE4.1
/// rounding instruction); `v` within ±2³¹.
#[inline]
fn floor_i(v: f32) -> i32 {
    let i = v as i32;
    if (i as f32) > v { i - 1 } else { i }
}

/// Draws one ribbon into rows `y0 .. y0 + rows` of a band. Along each row the pixels whose
/// centres lie within `reach` of the axis and within the segment's span form one interval
/// whose ends move linearly with the row, so a row costs a few multiply-adds before its pixels.
#[allow(clippy::too_many_arguments)]
fn draw_segment(
    color: &mut [[f32; 3]],
    depth: &[f32],
    width: u32,
    y0: u32,
    rows: u32,
    a: &Vertex,
    b: &Vertex,
    starts: bool,
    ends: bool,
) {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let len = (dx * dx + dy * dy).sqrt();
    if len < 1e-5 {
        return;
    }
    let inv_len = 1.0 / len;
    let (ux, uy) = (dx * inv_len, dy * inv_len);
    let (nx, ny) = (-uy, ux);
    let reach = a.half.max(b.half) + 0.5;
    let (s_lo, s_hi) = (
        if starts { -0.5 } else { 0.0 },
        if ends { len + 0.5 } else { len },
    );
    let ylo = floor_i(a.y.min(b.y) - reach).max(y0 as i32);
    let yhi = (floor_i(a.y.max(b.y) + reach) + 1).min((y0 + rows) as i32);
    const EPS: f32 = 1e-6;
    let dhalf = b.half - a.half;
    let dz = b.z - a.z;
    let dc = [
        b.color[0] - a.color[0],
        b.color[1] - a.color[1],
        b.color[2] - a.color[2],
    ];
    // Per-row interval ends as multiply-adds of the row's offset `ry`.
    let steep = nx.abs() > EPS;
    let (kc, rx) = if steep {
        (-ny / nx, reach / nx.abs())
    } else {
        (0.0, 0.0)
    };
    let along = ux.abs() > EPS;
    let inv_ux = if along { 1.0 / ux } else { 0.0 };
    for y in ylo..yhi {
        let ry = y as f32 + 0.5 - a.y;
        // Pixel-centre x range (relative to a.x) from the distance to the axis …
        let (mut lo, mut hi) = if steep {
            let c = ry * kc;
            (c - rx, c + rx)
        } else if (ry * ny).abs() <= reach {
            (f32::NEG_INFINITY, f32::INFINITY)
        } else {
            continue;
        };
        // … and from the segment's span.
        if along {
            let (p, q) = ((s_lo - ry * uy) * inv_ux, (s_hi - ry * uy) * inv_ux);
            lo = lo.max(p.min(q));
            hi = hi.min(p.max(q));
        } else if !(s_lo..=s_hi).contains(&(ry * uy)) {
            continue;
        }
        // Pixel x whose centre x + 0.5 − a.x lies in [lo, hi].
        let first = (-floor_i(-(lo + a.x - 0.5).clamp(-1.0, width as f32))).max(0);
        let last = floor_i((hi + a.x - 0.5).clamp(-1.0, width as f32)).min(width as i32 - 1);
        if first > last {
            continue;
        }
        let base = ((y as u32 - y0) * width) as usize;
        let rx0 = first as f32 + 0.5 - a.x;
        let mut s = rx0 * ux + ry * uy;
        let mut d = rx0 * nx + ry * ny;
        for x in first..=last {
            let (sc, dc_) = (s, d);
            s += ux;
            d += nx;
            // Hard split between a strand's segments: [0, len).
            if (!starts && sc < 0.0) || (!ends && sc >= len) {
                continue;
            }
            let t = (sc * inv_len).clamp(0.0, 1.0);
            let half = a.half + dhalf * t;
            let across = ((dc_ + 0.5).min(half) - (dc_ - 0.5).max(-half)).clamp(0.0, 1.0);
            let mut alpha = across;
            if starts {
                alpha *= (sc + 0.5).clamp(0.0, 1.0);
            }
            if ends {
                alpha *= (len - sc + 0.5).clamp(0.0, 1.0);
            }
            if alpha <= 0.0 {
                continue;
            }
            let k = base + x as usize;
            if a.z + dz * t >= depth[k] {
                continue;
            }
            let c = &mut color[k];
            for j in 0..3 {
                let v = a.color[j] + dc[j] * t;
                c[j] += alpha * (v - c[j]);
            }
        }
    }
}

/// Draws shaded strands over `film` (which their shadows darken where it shows solids):
/// `widths` per vertex in scene units, `colors` per vertex to draw flat instead of shading.
/// Only the vertices of segments that can show are lit and shaded (hair behind the head
/// still casts its shadows).
pub fn draw_hair(
    film: &mut Film,
    points: &[Vec3],
    counts: &[u32],
    widths: &[f32],
    colors: Option<&[[f32; 3]]>,
    camera: &Camera,
    lighting: &Lighting,
) {
    let mut verts = project(points, widths, camera);
    let segments = segments_in_view(film, &verts, counts);
    let shaded;
    let colors = match colors {
        Some(c) => c,
        None => {
            let used = used_vertices(&segments, points.len());
            let (lit, map) = vertex_light(points, counts, widths, lighting, Some(&used));
            if let Some(map) = &map {
                film.shadow_solids(|p| map.transmittance(p));
            }
            shaded = shade(points, counts, &lit, camera, lighting, Some(&used));
            &shaded
        }
    };
    verts.par_iter_mut().zip(colors).for_each(|(v, c)| v.color = *c);
    draw_segments(film, &verts, &segments);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::camera::View;

    fn vertex(x: f32, y: f32, z: f32, half: f32, color: [f32; 3]) -> Vertex {
        Vertex { x, y, z, half, color }
    }

    /// Total coverage of white ribbons drawn on black.
    fn covered(verts: &[Vertex], counts: &[u32]) -> f64 {
        let mut film = Film::new(128, 96, [0.0; 3]);
        composite(&mut film, verts, counts);
        film.color.iter().map(|c| c[0] as f64).sum()
    }

    #[test]
    fn a_ribbon_covers_its_exact_area_however_thin_or_tilted() {
        for (width, angle) in [
            (3.0f32, 0.0f32),
            (3.0, 0.52),
            (0.3, 0.52),
            (0.08, 1.2),
            (1.7, 2.4),
        ] {
            let len = 40.0;
            let (c, s) = (angle.cos(), angle.sin());
            let (x0, y0) = (60.3, 47.7);
            // The same ribbon as one segment and as a strand of five.
            for pieces in [1usize, 5] {
                let verts: Vec<Vertex> = (0..=pieces)
                    .map(|k| {
                        let t = len * k as f32 / pieces as f32 - 0.5 * len;
                        vertex(x0 + t * c, y0 + t * s, 1.0, 0.5 * width, [1.0; 3])
                    })
                    .collect();
                let area = covered(&verts, &[verts.len() as u32]);
                let exact = (width * len) as f64;
                assert!(
                    (area / exact - 1.0).abs() < 0.02,
                    "width {width} angle {angle} pieces {pieces}: {area} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn depth_keys_sort_as_the_floats() {
        let v = [-3.5f32, -0.0, 0.0, 1e-20, 2.0, -1e30, 7.25, -1e-20];
        let mut by_bits = v.to_vec();
        by_bits.sort_by_key(|f| order_bits(*f));
        let mut by_float = v.to_vec();
        by_float.sort_by(f32::total_cmp);
        assert_eq!(
            by_bits.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
            by_float.iter().map(|f| f.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_strand_behind_another_is_hidden_whatever_the_drawing_order() {
        let red = [1.0, 0.0, 0.0];
        let green = [0.0, 1.0, 0.0];
        let front = [
            vertex(10.0, 50.0, 1.0, 3.0, red),
            vertex(110.0, 50.0, 1.0, 3.0, red),
        ];
        let back = [
            vertex(60.0, 5.0, 5.0, 3.0, green),
            vertex(60.0, 90.0, 5.0, 3.0, green),
        ];
        for verts in [[front, back].concat(), [back, front].concat()] {
            let mut film = Film::new(128, 96, [0.0; 3]);
            composite(&mut film, &verts, &[2, 2]);
            let at = |x: u32, y: u32| film.color[(y * 128 + x) as usize];
            assert_eq!(at(60, 50), red, "the crossing shows the front strand");
            assert_eq!(at(60, 20), green, "the back strand shows elsewhere");
        }
        // A solid in front hides both.
        let mut film = Film::new(128, 96, [0.0; 3]);
        film.depth.iter_mut().for_each(|d| *d = 0.5);
        composite(&mut film, &[front, back].concat(), &[2, 2]);
        assert!(film.color.iter().all(|c| *c == [0.0; 3]));
    }

    #[test]
    fn hair_culled_behind_a_solid_leaves_the_picture_as_drawing_it_does() {
        // A wall at depth 0 over the left half of the picture; strands in front of it, behind
        // it, and crossing from behind to in front, at many slants.
        let (w, h) = (160u32, 120u32);
        let mut film = Film::new(w, h, [0.2; 3]);
        for y in 0..h {
            for x in 0..w / 2 {
                film.depth[(y * w + x) as usize] = 0.0;
            }
        }
        let mut verts = Vec::new();
        let mut counts = Vec::new();
        for k in 0..40 {
            let (x0, x1) = (2.0 + 3.9 * k as f32, 150.0 - 3.7 * k as f32);
            let z = [-1.0f32, 1.0, 3.0][k % 3];
            let dz = if k % 4 == 0 { -2.5 } else { 0.0 };
            let c = [k as f32 / 40.0, 1.0 - k as f32 / 40.0, 0.5];
            for j in 0..6 {
                let t = j as f32 / 5.0;
                verts.push(vertex(
                    x0 + (x1 - x0) * t,
                    5.0 + 110.0 * t,
                    z + dz * t,
                    0.4 + 0.1 * (k % 5) as f32,
                    c,
                ));
            }
            counts.push(6);
        }
        let culled = segments_in_view(&film, &verts, &counts);
        let all: Vec<Segment> = {
            let mut o = 0;
            let mut all = Vec::new();
            for &n in &counts {
                for i in o..o + n as usize - 1 {
                    all.push(Segment {
                        first: i as u32,
                        starts: i == o,
                        ends: i + 2 == o + n as usize,
                    });
                }
                o += n as usize;
            }
            all
        };
        assert!(
            culled.len() < all.len(),
            "some segments lie wholly behind the wall"
        );
        let mut a = film.clone();
        draw_segments(&mut a, &verts, &culled);
        let mut b = film.clone();
        draw_segments(&mut b, &verts, &all);
        assert_eq!(a.color, b.color);
        assert!(a.color.iter().any(|c| *c != [0.2; 3]));
    }

    /// Strands along z at x ∈ [−10, 0], `gap` apart, in the plane y = 0 (a sheet), over a
    /// strand along x at y = −3 that runs under the sheet and out of it.
    fn sheet_over_a_strand(w: f32, gap: f32) -> (Vec<Vec3>, Vec<u32>, Vec<f32>) {
        let (mut pts, mut counts, mut widths) = (Vec::new(), Vec::new(), Vec::new());
        let mut x = -10.0;
        while x <= 0.0 {
            for k in 0..=20 {
                pts.push(Vec3::new(x, 0.0, -10.0 + k as f32));
                widths.push(w);
            }
            counts.push(21);
            x += gap;
        }
        for k in 0..=40 {
            pts.push(Vec3::new(-10.0 + 0.5 * k as f32, -3.0, 0.0));
            // Thin, so that its own share of the map's layer (a deep opacity map's
            // self-shadowing) stays below a percent.
            widths.push(0.01);
        }
        counts.push(41);
        (pts, counts, widths)
    }

    #[test]
    fn shadowed_strands_are_darker_than_lit_ones_by_the_sheets_opacity() {
        let (w, gap) = (0.05, 0.25);
        let (pts, counts, widths) = sheet_over_a_strand(w, gap);
        let lighting = Lighting {
            light: Vec3::Y,
            ..Lighting::default()
        };
        let camera = Camera::new(View::Front, Vec3::new(0.0, -2.0, 0.0), 12.0, 240, 240);
        let mut film = Film::new(240, 240, [0.0; 3]);
        draw_hair(&mut film, &pts, &counts, &widths, None, &camera, &lighting);
        let pixel = |p: Vec3| {
            let (x, y, _) = camera.project(p);
            film.color[(y as u32 * 240 + x as u32) as usize]
        };
        let (shadowed, lit) = (
            pixel(Vec3::new(-5.0, -3.0, 0.0)),
            pixel(Vec3::new(5.0, -3.0, 0.0)),
        );
        // Beer–Lambert through a sheet covering w/gap of the light: the key light's parts of the
        // colour (diffuse and highlights) scale by exp(−w/gap), the ambient part stays. The
        // strand is thinner than a pixel: both pixels hold the same share of it, so compare
        // the ratio.
        let t = (-w / gap).exp();
        let view = -camera.forward;
        let expect_lit = lighting.hair(Vec3::X, view, lighting.hair, 1.0);
        let expect_dark = lighting.hair(Vec3::X, view, lighting.hair, t);
        for k in 0..3 {
            let (got, want) = (shadowed[k] / lit[k], expect_dark[k] / expect_lit[k]);
            assert!(
                (got - want).abs() < 0.02 * want,
                "channel {k}: shadowed/lit {got} vs {want} (transmittance {t})"
            );
        }
        assert!(shadowed[0] < 0.9 * lit[0]);
    }

    #[test]
    fn the_same_picture_for_any_thread_count() {
        let g = crate::groom::generate(&crate::groom::GroomParams {
            strands: 400,
            ..Default::default()
        })
        .unwrap();
        let camera = Camera::fit(View::ThreeQuarter, g.points(), 200, 160);
        let widths = vertex_widths(g.points().len(), None, 6.0);
        let draw = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    let mut film = Film::new(200, 160, [0.9; 3]);
                    draw_hair(
                        &mut film,
                        g.points(),
                        g.counts(),
                        &widths,
                        None,
                        &camera,
                        &Lighting::default(),
                    );
                    film.resolve()
                })
        };
        let one = draw(1);
        assert_eq!(one, draw(2));
        assert_eq!(one, draw(5));
        // And it drew hair over the background.
        let bg = (0.9f32.powf(1.0 / 2.2) * 255.0 + 0.5) as i32;
        assert!(one.pixels().filter(|p| (p[0] as i32 - bg).abs() > 10).count() > 500);
    }
}
