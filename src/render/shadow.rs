//! Self-shadowing of hair: a deep opacity map (Yuksel & Keyser 2008, "Deep Opacity Maps").
//!
//! Seen from the key light (orthographic, along the light's direction), a first pass keeps per
//! texel the depth `z₀` of the hair nearest the light; a second pass deposits every strand's
//! optical thickness into one of [`LAYERS`] layers that start at `z₀` and double in thickness
//! (Yuksel & Keyser's layers follow the hair's own front, so the map is fine where the hair
//! is and coarse behind it). The layers are summed front to back; a point's optical depth is
//! interpolated between the boundaries of the layer it falls in, and bilinearly between texels.
//!
//! A strand of width `w` crossing a texel of side `s` over a length `ℓ` deposits `w·ℓ / s²`:
//! the share of the texel it covers. Fibres placed at random then let through `exp(−κ Σ)`
//! (Beer–Lambert), `κ` the fibres' opacity (1: opaque fibres).
//!
//! Strands far apart next to the texel size would leave the map striped (a texel holds a
//! strand or none); the front is min-filtered and the layers blurred by a Gaussian of
//! [`BLUR`] texels, which keeps their sums (the light blocked over an area) and smooths out
//! spacings up to about 3 texels.
//!
//! Deterministic for any thread count: strands are split into a fixed number of chunks whose
//! maps are summed in order.

use glam::Vec3;
use rayon::prelude::*;

/// Layers of the map behind the front.
pub const LAYERS: usize = 8;
/// Standard deviation of the blur of the layers (texels).
pub const BLUR: f32 = 1.5;
/// Strand chunks deposited in parallel (fixed, so sums do not depend on the thread count).
const CHUNKS: usize = 8;

/// A deep opacity map.
pub struct DeepOpacity {
    right: Vec3,
    up: Vec3,
    /// Unit vector from the light into the scene.
    forward: Vec3,
    origin: (f32, f32),
    texel: f32,
    res: usize,
    /// Thickness of the first layer; layer k ends at `first · (2^(k+1) − 1)` behind `z₀`.
    first: f32,
    front: Vec<f32>,
    /// Optical depth summed up to the end of each layer, `res² × LAYERS`.
    summed: Vec<f32>,
    opacity: f32,
}

impl DeepOpacity {
    /// The map of strands (`points`, `counts`, per-vertex `widths`) lit from `light` (unit
    /// vector towards the light), `res` texels a side; `opacity` is the fibres' κ.
    pub fn build(
        points: &[Vec3],
        counts: &[u32],
        widths: &[f32],
        light: Vec3,
        res: usize,
        opacity: f32,
    ) -> DeepOpacity {
        let forward = -light.normalize_or(Vec3::Y);
        let right = forward.any_orthonormal_vector();
        let up = right.cross(forward);
        let (mut lo, mut hi) = (
            (f32::INFINITY, f32::INFINITY),
            (f32::NEG_INFINITY, f32::NEG_INFINITY),
        );
        for p in points.iter().filter(|p| p.is_finite()) {
            let (u, v) = (p.dot(right), p.dot(up));
            lo = (lo.0.min(u), lo.1.min(v));
            hi = (hi.0.max(u), hi.1.max(v));
        }
        let res = res.max(4);
        if !lo.0.is_finite() {
            lo = (0.0, 0.0);
            hi = (1.0, 1.0);
        }
        let extent = (hi.0 - lo.0).max(hi.1 - lo.1).max(1e-3);
        // Two texels of border so bilinear lookups at the edge stay inside.
        let texel = extent / (res - 4) as f32;
        let origin = (lo.0 - 2.0 * texel, lo.1 - 2.0 * texel);
        let mut map = DeepOpacity {
            right,
            up,
            forward,
            origin,
            texel,
            res,
            first: 2.0 * texel,
            front: vec![f32::INFINITY; res * res],
            summed: vec![0.0; res * res * LAYERS],
            opacity,
        };
        let offsets = tress_formats::offsets_of(counts);
        let chunk = counts.len().div_ceil(CHUNKS).max(1);
        let ranges: Vec<(usize, usize)> = (0..counts.len())
            .step_by(chunk)
            .map(|s| (s, (s + chunk).min(counts.len())))
            .collect();
        // Pass 1: the front, from the vertices (the min filter below closes the gaps between
        // them).
        let fronts: Vec<Vec<f32>> = ranges
            .par_iter()
            .map(|&(a, b)| {
                let mut f = vec![f32::INFINITY; res * res];
                for p in &points
                    [offsets.get(a).copied().unwrap_or(0)..offsets.get(b).copied().unwrap_or(points.len())]
                {
                    if let Some(k) = map.texel_of(*p) {
                        let z = p.dot(map.forward);
                        if z < f[k] {
                            f[k] = z;
                        }
                    }
                }
                f
            })
            .collect();
        for f in fronts {
            for (m, v) in map.front.iter_mut().zip(f) {
                *m = m.min(v);
            }
        }
        map.front = min_filter(&map.front, res, (3.0 * BLUR).ceil() as usize);
        // Pass 2: optical thickness into layers.
        let deposits: Vec<Vec<f32>> = ranges
            .par_iter()
            .map(|&(a, b)| {
                let mut d = vec![0.0f32; res * res * LAYERS];
                map.samples(points, counts, widths, &offsets, a, b, |k, z, amount| {
                    let l = map.layer_of(z - map.front[k]);
                    d[k * LAYERS + l] += amount;
                });
                d
            })
            .collect();
        for d in deposits {
            for (m, v) in map.summed.iter_mut().zip(d) {
                *m += v;
            }
        }
        blur_layers(&mut map.summed, res, BLUR);
        for t in map.summed.chunks_mut(LAYERS) {
            for l in 1..LAYERS {
                t[l] += t[l - 1];
            }
        }
        map
    }

    /// The layer holding a point `dz` behind the front.
    fn layer_of(&self, dz: f32) -> usize {
        let mut end = self.first;
        for l in 0..LAYERS {
            if dz < end {
                return l;
            }
            end = 2.0 * end + self.first;
        }
        LAYERS - 1
    }

    /// Samples along every segment of strands `a..b`, at most a texel apart; calls
    /// `f(texel, depth, optical thickness)`.
    #[allow(clippy::too_many_arguments)]
    fn samples(
        &self,
        points: &[Vec3],
        counts: &[u32],
        widths: &[f32],
        offsets: &[usize],
        a: usize,
        b: usize,
        mut f: impl FnMut(usize, f32, f32),
    ) {
        let area = self.texel * self.texel;
        let inv = 1.0 / self.texel;
        // Texel coordinates and depth of a point: the samples of a segment step through them
        // linearly.
        let map = |p: Vec3| {
            Vec3::new(
                (p.dot(self.right) - self.origin.0) * inv,
                (p.dot(self.up) - self.origin.1) * inv,
                p.dot(self.forward),
            )
        };
        let res = self.res as f32;
        for s in a..b {
            let o = offsets[s];
            let n = counts[s] as usize;
            for i in o..(o + n).saturating_sub(1) {
                let (p, q) = (points[i], points[i + 1]);
                if !(p.is_finite() && q.is_finite()) {
                    continue;
                }
                let len = p.distance(q);
                let steps = ((len * inv).ceil() as usize).clamp(1, 4096);
                let w = 0.5 * (widths[i] + widths[i + 1]);
                let amount = w * len / steps as f32 / area;
                let (mp, mq) = (map(p), map(q));
                let step = (mq - mp) / steps as f32;
                let mut x = mp + 0.5 * step;
                for _ in 0..steps {
                    if x.x >= 0.0 && x.y >= 0.0 && x.x < res && x.y < res {
                        f(x.y as usize * self.res + x.x as usize, x.z, amount);
                    }
                    x += step;
                }
            }
        }
    }

    fn uv(&self, p: Vec3) -> (f32, f32) {
        (
            (p.dot(self.right) - self.origin.0) / self.texel,
            (p.dot(self.up) - self.origin.1) / self.texel,
        )
    }

    fn texel_of(&self, p: Vec3) -> Option<usize> {
        let (u, v) = self.uv(p);
        let (i, j) = (u.floor(), v.floor());
        (i >= 0.0 && j >= 0.0 && (i as usize) < self.res && (j as usize) < self.res)
            .then(|| j as usize * self.res + i as usize)
    }

    /// Optical depth of the hair between the light and texel `k` at depth `z`.
    fn depth_in(&self, k: usize, z: f32) -> f32 {
        let dz = z - self.front[k];
        if !dz.is_finite() || dz <= 0.0 {
            return 0.0;
        }
        let t = &self.summed[k * LAYERS..(k + 1) * LAYERS];
        let (mut start, mut end) = (0.0f32, self.first);
        let mut before = 0.0f32;
        for &upto in t {
            if dz < end {
                return before + (upto - before) * (dz - start) / (end - start);
            }
            before = upto;
            start = end;
            end = 2.0 * end + self.first;
        }
        before
    }

    /// Optical depth (before κ) between the light and `p`.
    pub fn optical_depth(&self, p: Vec3) -> f32 {
        let (u, v) = self.uv(p);
        let (u, v) = (u - 0.5, v - 0.5);
        let (i, j) = (u.floor(), v.floor());
        let (fu, fv) = (u - i, v - j);
        // Looked up one first layer nearer the light, so a strand does not shadow itself.
        let z = p.dot(self.forward) - self.first;
        let mut sum = 0.0;
        for (di, dj, w) in [
            (0, 0, (1.0 - fu) * (1.0 - fv)),
            (1, 0, fu * (1.0 - fv)),
            (0, 1, (1.0 - fu) * fv),
            (1, 1, fu * fv),
        ] {
            let (x, y) = (i as i64 + di, j as i64 + dj);
            if x < 0 || y < 0 || x >= self.res as i64 || y >= self.res as i64 || w == 0.0 {
                continue;
            }
            sum += w * self.depth_in(y as usize * self.res + x as usize, z);
        }
        sum
    }

    /// The share of the key light that reaches `p`: `exp(−κ · optical depth)`.
    pub fn transmittance(&self, p: Vec3) -> f32 {
        if !p.is_finite() {
            return 1.0;
        }
        (-self.opacity * self.optical_depth(p)).exp()
    }
}

/// The smallest value within `r` texels (a square), separably.
fn min_filter(v: &[f32], res: usize, r: usize) -> Vec<f32> {
    let mut tmp = vec![f32::INFINITY; v.len()];
    for y in 0..res {
        for x in 0..res {
            let (a, b) = (x.saturating_sub(r), (x + r).min(res - 1));
            tmp[y * res + x] = v[y * res + a..=y * res + b]
                .iter()
                .copied()
                .fold(f32::INFINITY, f32::min);
        }
    }
    let mut out = vec![f32::INFINITY; v.len()];
    for y in 0..res {
        let (a, b) = (y.saturating_sub(r), (y + r).min(res - 1));
        for x in 0..res {
            out[y * res + x] = (a..=b).map(|j| tmp[j * res + x]).fold(f32::INFINITY, f32::min);
        }
    }
    out
}

/// Blurs every layer of a `res² × LAYERS` map by a Gaussian of `sigma` texels, separably;
/// weights that fall off the map are dropped (the map's border is empty).
fn blur_layers(v: &mut [f32], res: usize, sigma: f32) {
    let r = (3.0 * sigma).ceil() as i64;
    let kernel: Vec<f32> = (-r..=r)
        .map(|i| (-0.5 * (i as f32 / sigma).powi(2)).exp())
        .collect();
    let norm: f32 = kernel.iter().sum();
    let kernel: Vec<f32> = kernel.iter().map(|k| k / norm).collect();
    let pass = |src: &[f32], step: (usize, usize)| -> Vec<f32> {
        let mut out = vec![0.0f32; src.len()];
        out.par_chunks_mut(res * LAYERS).enumerate().for_each(|(y, row)| {
            for x in 0..res {
                for (k, w) in kernel.iter().enumerate() {
                    let o = k as i64 - r;
                    let (sx, sy) = (x as i64 + o * step.0 as i64, y as i64 + o * step.1 as i64);
                    if sx < 0 || sy < 0 || sx >= res as i64 || sy >= res as i64 {
                        continue;
                    }
                    let s = (sy as usize * res + sx as usize) * LAYERS;
                    for l in 0..LAYERS {
                        row[x * LAYERS + l] += w * src[s + l];
                    }
                }
            }
        });
        out
    };
    let h = pass(v, (1, 0));
    let out = pass(&h, (0, 1));
    v.copy_from_slice(&out);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sheet of parallel strands along x in the plane y = 0, `gap` apart along z, of width `w`,
    /// spanning x, z ∈ [−10, 10].
    fn sheet(w: f32, gap: f32) -> (Vec<Vec3>, Vec<u32>, Vec<f32>) {
        let mut pts = Vec::new();
        let mut counts = Vec::new();
        let mut z = -10.0;
        while z <= 10.0 {
            for k in 0..=20 {
                pts.push(Vec3::new(-10.0 + k as f32, 0.0, z));
            }
            counts.push(21);
            z += gap;
        }
        let widths = vec![w; pts.len()];
        (pts, counts, widths)
    }

    #[test]
    fn a_sheet_of_strands_lets_through_beer_lambert_of_its_coverage() {
        // Light from above: the sheet covers w/gap of the area below it.
        let (w, gap) = (0.05, 0.25);
        let (pts, counts, widths) = sheet(w, gap);
        let map = DeepOpacity::build(&pts, &counts, &widths, Vec3::Y, 256, 1.0);
        let coverage = w / gap;
        for x in [-4.0f32, 0.0, 3.3] {
            let below = map.transmittance(Vec3::new(x, -3.0, 0.1));
            assert!(
                (below - (-coverage).exp()).abs() < 0.02,
                "below the sheet at x={x}: {below} vs {}",
                (-coverage).exp()
            );
            // Above the sheet nothing is in the way.
            assert!(map.transmittance(Vec3::new(x, 2.0, 0.0)) > 0.999);
        }
        // Half as opaque fibres let through exp(−κ c).
        let half = DeepOpacity::build(&pts, &counts, &widths, Vec3::Y, 256, 0.5);
        let t = half.transmittance(Vec3::new(0.0, -3.0, 0.1));
        assert!((t - (-0.5 * coverage).exp()).abs() < 0.02, "{t}");
    }

    #[test]
    fn the_same_map_for_any_thread_count() {
        let (pts, counts, widths) = sheet(0.03, 0.4);
        let build = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| DeepOpacity::build(&pts, &counts, &widths, Vec3::new(0.3, 1.0, 0.2), 64, 1.0))
        };
        let (a, b) = (build(1), build(3));
        assert_eq!(a.summed, b.summed);
        assert_eq!(a.front, b.front);
    }
}
