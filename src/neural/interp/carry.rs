//! The interpolation space of L (000 Eq. 3): what the 16 weights of a particle blend.
//!
//! - [`Blend::Positions`] (000 Eq. 3 as written): the 16 neighbourhood guide particles at the
//!   same index along the strand, s_p = Σ_q ω_pq g_q. The convex blend must rebuild the
//!   particle's rest position from guides 2–3 cm away, so a network that is slightly off in its
//!   weights is off in position even when nothing moves.
//! - [`Blend::Carried`] (tress's option; 000 §7 notes the method "is not restricted to this
//!   representation" of vertex coordinates): each guide particle carries the particle's rest
//!   offset in its own frame, c_pq = g_q + R_q (s̄_p − ḡ_q), where R_q is the guide's rotation at
//!   that particle by parallel transport from its rest shape ([`crate::guides::frames`], the
//!   frames IDW carries strands in), and s_p = Σ_q ω_pq c_pq. At rest every candidate is the rest
//!   particle, a translation carries every candidate with it, and straight strands turned about
//!   an axis across them turn their candidates with them, so any weights are exact in these
//!   cases; the network learns only how the particle follows its guides' differing motions.
//!   The frames are rotation-minimizing: a guide's twist about its own axis is not seen.
//! - [`Blend::Offsets`] (tress's option): the same without the turn, c_pq = g_q + (s̄_p − ḡ_q),
//!   so s_p = s̄_p + Σ_q ω_pq (g_q − ḡ_q): the particle's rest position moved by a blend of its
//!   guides' moves (in head-local space). Exact at rest and under a shift for any weights, like
//!   `Carried`, with no lever arm: a guide's bend does not swing the particle's offset around.
//!
//! Candidates are built on the CPU from the guides (they carry no parameters), in the layout
//! [`super::model::neighbourhood`] gives: `[b, u, v, w, 16, 3]`, neighbour c = 4·di + dj at
//! guide (⌊a/k⌋ − 1 + di, ⌊b/k⌋ − 1 + dj), clamped into the lattice.

use burn::prelude::*;
use glam::{Quat, Vec3};
use serde::{Deserialize, Serialize};

use super::model::{NEIGHBORS, neighbour, neighbourhood};
use crate::guides::frames::transport;

/// What L blends (a `[net] blend` key of a training config, stored with the model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Blend {
    /// Guide particles (000 Eq. 3).
    #[default]
    Positions,
    /// Guide particles carrying the particle's rest offset in their frames.
    Carried,
    /// The particle's rest position moved by a blend of its guides' moves.
    Offsets,
}

fn at(v: &[f32], i: usize) -> Vec3 {
    Vec3::new(v[3 * i], v[3 * i + 1], v[3 * i + 2])
}

/// Per guide particle of `guides` (`w` particles a guide, flat `[g, w, 3]`), the rotation that
/// carries a rest offset with it: parallel transport from its rest shape `rest_guides`.
fn rotations(rest_guides: &[f32], guides: &[f32], w: usize) -> Vec<Quat> {
    let strand = |v: &[f32], g: usize| -> Vec<Vec3> { (0..w).map(|k| at(v, g * w + k)).collect() };
    let count = rest_guides.len() / (3 * w);
    let mut rot = Vec::with_capacity(count * w);
    let mut r = Vec::with_capacity(w);
    for g in 0..count {
        transport(&strand(rest_guides, g), &strand(guides, g), &mut r);
        rot.extend_from_slice(&r);
    }
    rot
}

/// The 16 candidates of every particle of a `size`² window: `rest` the window's rest strands
/// `[size, size, w, 3]`, `rest_guides` and `guides` (`frames` frames) `[m, m, w, 3]` with
/// m = size / `stride`; returns `[frames, size, size, w, 16, 3]`. With `turn` off the offsets
/// are carried unturned ([`Blend::Offsets`]).
#[allow(clippy::too_many_arguments)]
pub fn carried(
    rest: &[f32],
    rest_guides: &[f32],
    guides: &[f32],
    frames: usize,
    size: usize,
    stride: usize,
    w: usize,
    turn: bool,
) -> Vec<f32> {
    let m = size / stride;
    let mut out = Vec::with_capacity(frames * size * size * w * NEIGHBORS * 3);
    for f in 0..frames {
        let cur = &guides[f * m * m * w * 3..(f + 1) * m * m * w * 3];
        // Unturned offsets keep the identity; turned ones get each frame's transport.
        let rot = turn.then(|| rotations(rest_guides, cur, w));
        let idx = |a: usize, d: usize| neighbour(a, d, stride, m);
        for a in 0..size {
            for b in 0..size {
                for k in 0..w {
                    let p = at(rest, (a * size + b) * w + k);
                    for di in 0..4 {
                        for dj in 0..4 {
                            let gp = (idx(a, di) * m + idx(b, dj)) * w + k;
                            let r = rot.as_ref().map_or(Quat::IDENTITY, |r| r[gp]);
                            let c = at(cur, gp) + r * (p - at(rest_guides, gp));
                            out.extend_from_slice(&c.to_array());
                        }
                    }
                }
            }
        }
    }
    out
}

/// The candidates L blends for guides `guides` `[b, m, m, w, 3]` (`flat`: the same values, as
/// the caller built the tensor from): the neighbourhood guides themselves, or carried
/// ([`carried`]; `rest` `[size, size, w, 3]` and `rest_guides` `[m, m, w, 3]` flat, network
/// units).
pub fn candidates<B: Backend>(
    blend: Blend,
    guides: Tensor<B, 5>,
    flat: &[f32],
    stride: usize,
    rest: &[f32],
    rest_guides: &[f32],
) -> Tensor<B, 6> {
    match blend {
        Blend::Positions => neighbourhood(guides, stride),
        Blend::Carried | Blend::Offsets => {
            let [b, m, _, w, _] = guides.dims();
            let dev = guides.device();
            let size = m * stride;
            let turn = blend == Blend::Carried;
            let c = carried(rest, rest_guides, flat, b, size, stride, w, turn);
            Tensor::from_data(TensorData::new(c, [b, size, size, w, NEIGHBORS, 3]), &dev)
        }
    }
}

/// Eq. 3 for one frame on the CPU, without building the candidates: s_p = Σ_q ω_pq c_pq with
/// the candidates c_pq of `blend` ([`candidates`], the same formulas), `omega` as W_θ gives it
/// `[16, size, size, w]`, `guides` `[m, m, w, 3]`, `rest` `[size, size, w, 3]` and
/// `rest_guides` `[m, m, w, 3]` (network units); returns `[size, size, w, 3]`. Inference's
/// path: the tensor one ([`super::model::interpolate`] of the candidates) permutes and strides
/// 16 copies of the grid, this one reads each guide particle where it lies. Each particle's
/// sum runs in the same order on any thread count.
#[allow(clippy::too_many_arguments)]
pub fn blend_frame(
    blend: Blend,
    omega: &[f32],
    guides: &[f32],
    size: usize,
    stride: usize,
    w: usize,
    rest: &[f32],
    rest_guides: &[f32],
) -> Vec<f32> {
    use rayon::prelude::*;
    let m = size / stride;
    let rot = match blend {
        Blend::Carried => rotations(rest_guides, guides, w),
        Blend::Offsets | Blend::Positions => Vec::new(),
    };
    let idx = |a: usize, d: usize| neighbour(a, d, stride, m);
    let plane = size * size * w;
    let mut out = vec![0.0f32; plane * 3];
    out.par_chunks_mut(size * w * 3).enumerate().for_each(|(a, row)| {
        for b in 0..size {
            for k in 0..w {
                let cell = (a * size + b) * w + k;
                let p = if blend == Blend::Positions {
                    Vec3::ZERO
                } else {
                    at(rest, cell)
                };
                let mut s = Vec3::ZERO;
                for di in 0..4 {
                    for dj in 0..4 {
                        let gp = (idx(a, di) * m + idx(b, dj)) * w + k;
                        let c = match blend {
                            Blend::Positions => at(guides, gp),
                            Blend::Offsets => at(guides, gp) + (p - at(rest_guides, gp)),
                            Blend::Carried => at(guides, gp) + rot[gp] * (p - at(rest_guides, gp)),
                        };
                        s += omega[(di * 4 + dj) * plane + cell] * c;
                    }
                }
                let o = (b * w + k) * 3;
                row[o..o + 3].copy_from_slice(&s.to_array());
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::Flex;

    type B = Flex;

    /// Guides `rest_guides` (`w` particles each) swayed along x by an amount of each guide's own
    /// (and, with `bend`, curved along z by another).
    fn swayed(rest_guides: &[f32], w: usize, bend: bool) -> Vec<f32> {
        let mut g = rest_guides.to_vec();
        for gi in 0..rest_guides.len() / (3 * w) {
            for i in 0..w {
                g[(gi * w + i) * 3] += 0.05 * (gi as f32 + 1.0) * i as f32;
                if bend {
                    g[(gi * w + i) * 3 + 2] -= 0.02 * (gi % 3) as f32 * (i * i) as f32;
                }
            }
        }
        g
    }

    /// A window of strands (roots on a plane), bent by `bend`, its guides every `k` cells.
    fn window(size: usize, k: usize, w: usize, bend: f32) -> (Vec<f32>, Vec<f32>) {
        let mut rest = Vec::new();
        for a in 0..size {
            for b in 0..size {
                for i in 0..w {
                    let t = i as f32 * 0.1;
                    rest.extend_from_slice(&[
                        0.1 * a as f32 + bend * 0.02 * t * t,
                        -t,
                        0.1 * b as f32 + bend * 0.05 * (a as f32) * t,
                    ]);
                }
            }
        }
        let m = size / k;
        let mut guides = Vec::new();
        for i in 0..m {
            for j in 0..m {
                let c = (i * k) * size + j * k;
                guides.extend_from_slice(&rest[c * w * 3..(c + 1) * w * 3]);
            }
        }
        (rest, guides)
    }

    /// Particles `v` (flat) turned by `rot` about the origin, then shifted by a fixed offset.
    fn moved(v: &[f32], rot: Quat) -> Vec<f32> {
        let shift = Vec3::new(0.4, -0.1, 0.25);
        v.chunks(3)
            .flat_map(|p| (rot * Vec3::new(p[0], p[1], p[2]) + shift).to_array())
            .collect()
    }

    /// Every candidate of every particle equals `want`'s particle.
    fn all_at(c: &[f32], want: &[f32]) {
        for (p, cand) in want.chunks(3).zip(c.chunks(3 * NEIGHBORS)) {
            for q in cand.chunks(3) {
                for d in 0..3 {
                    assert!((p[d] - q[d]).abs() < 1e-4, "{p:?} vs {q:?}");
                }
            }
        }
    }

    #[test]
    fn carried_candidates_are_exact_at_rest_under_a_shift_and_a_turn_across_straight_strands() {
        let (size, k, w) = (8, 4, 6);
        let (rest, rg) = window(size, k, w, 1.0);
        // At rest every candidate is the particle's own rest position.
        all_at(&carried(&rest, &rg, &rg, 1, size, k, w, true), &rest);
        // Bent strands shifted: every candidate is the particle shifted.
        all_at(
            &carried(&rest, &rg, &moved(&rg, Quat::IDENTITY), 1, size, k, w, true),
            &moved(&rest, Quat::IDENTITY),
        );
        // Straight strands (along −y) turned about an axis across them and shifted: every
        // candidate is the particle moved the same way.
        let (rest, rg) = window(size, k, w, 0.0);
        let rot = Quat::from_axis_angle(Vec3::new(0.6, 0.0, -0.8), 0.7);
        all_at(
            &carried(&rest, &rg, &moved(&rg, rot), 1, size, k, w, true),
            &moved(&rest, rot),
        );
        // A twist about the strands' own axis is not seen (rotation-minimizing frames): the
        // candidates stay at the shifted rest, not where the twist takes the particle.
        let twist = Quat::from_rotation_y(0.5);
        let c = carried(&rest, &rg, &moved(&rg, twist), 1, size, k, w, true);
        let far = moved(&rest, twist)
            .chunks(3)
            .zip(c.chunks(3 * NEIGHBORS))
            .any(|(p, cand)| Vec3::from_slice(p).distance(Vec3::from_slice(&cand[..3])) > 0.05);
        assert!(far);
    }

    #[test]
    fn offset_candidates_are_exact_at_rest_and_under_a_shift_but_not_a_turn() {
        let (size, k, w) = (8, 4, 6);
        let (rest, rg) = window(size, k, w, 1.0);
        all_at(&carried(&rest, &rg, &rg, 1, size, k, w, false), &rest);
        all_at(
            &carried(&rest, &rg, &moved(&rg, Quat::IDENTITY), 1, size, k, w, false),
            &moved(&rest, Quat::IDENTITY),
        );
        // Turned, a particle away from its guide is off by the unturned offset's change:
        // |(I − R)(s̄ − ḡ)| for the straight strands' turn across them.
        let (rest, rg) = window(size, k, w, 0.0);
        let rot = Quat::from_axis_angle(Vec3::new(0.6, 0.0, -0.8), 0.7);
        let c = carried(&rest, &rg, &moved(&rg, rot), 1, size, k, w, false);
        let want = moved(&rest, rot);
        let worst = want
            .chunks(3)
            .zip(c.chunks(3 * NEIGHBORS))
            .map(|(p, cand)| Vec3::from_slice(p).distance(Vec3::from_slice(&cand[..3])))
            .fold(0.0f32, f32::max);
        assert!(worst > 0.05, "{worst}");
    }

    #[test]
    fn candidates_use_the_neighbourhood_guides_and_positions_are_eq3s() {
        let (size, k, w) = (8, 4, 5);
        let (rest, rg) = window(size, k, w, 1.0);
        // Guides bent differently: guide (i, j) sways along x by an amount of its own.
        let m = size / k;
        let g = swayed(&rg, w, false);
        let gt = Tensor::<B, 5>::from_data(TensorData::new(g.clone(), [1, m, m, w, 3]), &Default::default());
        let pos: Vec<f32> = candidates(Blend::Positions, gt.clone(), &g, k, &rest, &rg)
            .into_data()
            .to_vec()
            .unwrap();
        let car: Vec<f32> = candidates(Blend::Carried, gt.clone(), &g, k, &rest, &rg)
            .into_data()
            .to_vec()
            .unwrap();
        let shifted: Vec<f32> = candidates(Blend::Offsets, gt, &g, k, &rest, &rg)
            .into_data()
            .to_vec()
            .unwrap();
        assert_eq!(pos.len(), car.len());
        // Positions: the raw guide particle. Carried: that guide's particle plus the particle's
        // rest offset from it, turned by the guide's bend (a rotation: same length).
        let idx = |a: usize, d: usize| ((a / k) as i64 - 1 + d as i64).clamp(0, m as i64 - 1) as usize;
        for a in 0..size {
            for b in 0..size {
                for i in 0..w {
                    for n in 0..NEIGHBORS {
                        let gi = idx(a, n / 4) * m + idx(b, n % 4);
                        let o = ((((a * size + b) * w + i) * NEIGHBORS) + n) * 3;
                        let raw = Vec3::from_slice(&g[(gi * w + i) * 3..]);
                        assert!(Vec3::from_slice(&pos[o..]).distance(raw) < 1e-6);
                        let off = Vec3::from_slice(&rest[((a * size + b) * w + i) * 3..])
                            - Vec3::from_slice(&rg[(gi * w + i) * 3..]);
                        let d = Vec3::from_slice(&car[o..]) - raw;
                        assert!((d.length() - off.length()).abs() < 1e-4);
                        // Offsets: the rest offset itself, unturned.
                        assert!((Vec3::from_slice(&shifted[o..]) - raw).distance(off) < 1e-5);
                    }
                }
            }
        }
    }

    /// The CPU blend is Eq. 3 of the candidates as the tensors compute it, for every blend: the
    /// same grid to rounding, from weights that are not one-hot (a softmax of noise) and guides
    /// that bend and shift differently.
    #[test]
    fn the_cpu_blend_is_the_tensor_blend_of_the_candidates() {
        use super::super::model::interpolate;
        let (size, k, w) = (12, 4, 6);
        let (rest, rg) = window(size, k, w, 1.0);
        let m = size / k;
        let g = swayed(&rg, w, true);
        let dev = Default::default();
        let omega = burn::tensor::activation::softmax(
            Tensor::<B, 5>::random(
                [1, NEIGHBORS, size, size, w],
                burn::tensor::Distribution::Normal(0.0, 2.0),
                &dev,
            ),
            1,
        );
        let om: Vec<f32> = omega.clone().into_data().to_vec().unwrap();
        let gt = Tensor::<B, 5>::from_data(TensorData::new(g.clone(), [1, m, m, w, 3]), &dev);
        for blend in [Blend::Positions, Blend::Offsets, Blend::Carried] {
            let want: Vec<f32> = interpolate(omega.clone(), candidates(blend, gt.clone(), &g, k, &rest, &rg))
                .into_data()
                .to_vec()
                .unwrap();
            let got = blend_frame(blend, &om, &g, size, k, w, &rest, &rg);
            assert_eq!(got.len(), want.len());
            let worst = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(worst < 1e-5, "{blend:?}: {worst}");
        }
    }
}
