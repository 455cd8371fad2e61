//! The discriminator's feature descriptor E (000 §4.3.2): five channels per hair particle, "the
//! distances to its four closest guide hair particles, and the geodesic distance to the root
//! particle on the strand".
//!
//! tress reads "closest guide particles" as the four closest among the particle's 4 × 4
//! neighbourhood guides (the same 16 guides Eq. 3 blends, border-clamped) at the same particle
//! index along the strand, sorted by distance (nearest first). Which four is decided on the
//! current positions without a gradient; the distances themselves carry it. The geodesic
//! distance is the sum of the segment lengths from the root (0 at the root).

use burn::prelude::*;

/// Channels of E.
pub const CHANNELS: usize = 5;

/// E of positions `s` `[b, u, v, w, 3]` with their neighbourhood guides `hood`
/// `[b, u, v, w, 16, 3]` (from [`crate::neural::interp::model::neighbourhood`]), channels first:
/// `[b, 5, u, v, w]`.
pub fn descriptor<B: Backend>(s: Tensor<B, 5>, hood: Tensor<B, 6>) -> Tensor<B, 5> {
    let [b, u, v, w, _] = s.dims();
    // Distances to the 16 guides: [b, u, v, w, 16].
    let d: Tensor<B, 5> = ((hood - s.clone().unsqueeze_dim::<6>(4)).powi_scalar(2).sum_dim(5) + 1e-12)
        .sqrt()
        .squeeze_dim(5);
    let order = d.clone().detach().argsort(4);
    let [_, _, _, _, q] = order.dims();
    let nearest = d.gather(4, order).slice([0..b, 0..u, 0..v, 0..w, 0..4.min(q)]);
    // Segment lengths, then their running sum from the root: [b, u, v, w, 1].
    let seg = (s.clone().slice([0..b, 0..u, 0..v, 1..w, 0..3]) - s.slice([0..b, 0..u, 0..v, 0..w - 1, 0..3]))
        .powi_scalar(2)
        .sum_dim(4);
    let seg = (seg + 1e-12).sqrt();
    let root = Tensor::<B, 5>::zeros([b, u, v, 1, 1], &seg.device());
    let geodesic = Tensor::cat(vec![root, seg], 3).cumsum(3);
    Tensor::cat(vec![nearest, geodesic], 4).permute([0, 4, 1, 2, 3])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neural::interp::model::neighbourhood;
    use burn::backend::{Autodiff, Flex};
    use rand::{Rng, SeedableRng};

    type B = Flex;

    /// E against a direct computation: every particle's 16 neighbourhood guides found by index
    /// arithmetic, their distances sorted, and the arc length summed along the strand.
    #[test]
    fn descriptor_by_brute_force() {
        let dev = Default::default();
        let (m, k, w) = (3usize, 2usize, 5usize);
        let n = m * k;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut gv = vec![0f32; m * m * w * 3];
        rng.fill(&mut gv[..]);
        let mut sv = vec![0f32; n * n * w * 3];
        rng.fill(&mut sv[..]);
        let g = Tensor::<B, 5>::from_data(TensorData::new(gv.clone(), [1, m, m, w, 3]), &dev);
        let s = Tensor::<B, 5>::from_data(TensorData::new(sv.clone(), [1, n, n, w, 3]), &dev);
        let e: Vec<f32> = descriptor(s, neighbourhood(g, k)).into_data().to_vec().unwrap();
        let at = |v: &[f32], side: usize, a: usize, b: usize, i: usize| {
            let o = ((a * side + b) * w + i) * 3;
            [v[o], v[o + 1], v[o + 2]]
        };
        let dist = |p: [f32; 3], q: [f32; 3]| {
            ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
        };
        for a in 0..n {
            for b in 0..n {
                let mut arc = 0.0;
                for i in 0..w {
                    let p = at(&sv, n, a, b, i);
                    if i > 0 {
                        arc += dist(p, at(&sv, n, a, b, i - 1));
                    }
                    let mut ds: Vec<f32> = (0..16)
                        .map(|c| {
                            let gi = ((a / k) as i64 - 1 + (c / 4) as i64).clamp(0, m as i64 - 1) as usize;
                            let gj = ((b / k) as i64 - 1 + (c % 4) as i64).clamp(0, m as i64 - 1) as usize;
                            dist(p, at(&gv, m, gi, gj, i))
                        })
                        .collect();
                    ds.sort_by(f32::total_cmp);
                    let got = |c: usize| e[(((c * n + a) * n + b) * w) + i];
                    for (c, want) in ds.iter().take(4).enumerate() {
                        assert!(
                            (got(c) - want).abs() < 1e-5,
                            "({a},{b},{i}) channel {c}: {} vs {want}",
                            got(c)
                        );
                    }
                    assert!(
                        (got(4) - arc).abs() < 1e-5,
                        "arc ({a},{b},{i}): {} vs {arc}",
                        got(4)
                    );
                }
            }
        }
    }

    /// The gradient of Σ E against central differences (the descriptor is what the generator
    /// learns through).
    #[test]
    fn descriptor_gradient_matches_finite_differences() {
        type A = Autodiff<Flex>;
        let dev = Default::default();
        let (m, k, w) = (2usize, 2usize, 4usize);
        let n = m * k;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut gv = vec![0f32; m * m * w * 3];
        rng.fill(&mut gv[..]);
        let mut sv = vec![0f32; n * n * w * 3];
        rng.fill(&mut sv[..]);
        let value = |sv: &[f32]| -> f64 {
            let g = Tensor::<B, 5>::from_data(TensorData::new(gv.clone(), [1, m, m, w, 3]), &dev);
            let s = Tensor::<B, 5>::from_data(TensorData::new(sv.to_vec(), [1, n, n, w, 3]), &dev);
            let e = descriptor(s, neighbourhood(g, k));
            // A weighted sum so every channel counts differently.
            let wts = Tensor::<B, 1>::from_floats([1.0, 0.7, 0.4, 0.2, 0.5], &dev).reshape([1, 5, 1, 1, 1]);
            let v: f32 = (e * wts).sum().into_scalar();
            v as f64
        };
        let g = Tensor::<A, 5>::from_data(TensorData::new(gv.clone(), [1, m, m, w, 3]), &dev);
        let s = Tensor::<A, 5>::from_data(TensorData::new(sv.clone(), [1, n, n, w, 3]), &dev).require_grad();
        let wts = Tensor::<A, 1>::from_floats([1.0, 0.7, 0.4, 0.2, 0.5], &dev).reshape([1, 5, 1, 1, 1]);
        let grads = (descriptor(s.clone(), neighbourhood(g, k)) * wts)
            .sum()
            .backward();
        let grad: Vec<f32> = s.grad(&grads).unwrap().into_data().to_vec().unwrap();
        let h = 5e-3f32;
        let mut checked = 0;
        for i in (0..sv.len()).step_by(7) {
            let mut p = sv.clone();
            p[i] += h;
            let mut q = sv.clone();
            q[i] -= h;
            let fd = (value(&p) - value(&q)) / (2.0 * h as f64);
            assert!(
                (fd - grad[i] as f64).abs() < 2e-2 * (1.0 + fd.abs()),
                "component {i}: autodiff {} vs finite differences {fd}",
                grad[i]
            );
            checked += 1;
        }
        assert!(checked > 20);
    }
}
