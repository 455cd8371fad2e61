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
//! - [`Blend::Affine`] (tress's option): the offset carried through the linear map A_p that
//!   best takes the particle's 16 neighbourhood guide particles from rest to now (least squares
//!   about their centroids, ridge-regularized toward I), c_pq = g_q + A_p (s̄_p − ḡ_q). Where
//!   the hair packs together its guides converge and the offsets shrink with them (`Offsets`
//!   keeps them whole and draws strands out of the hair's silhouette); a turn or shear of the
//!   neighbourhood turns them. Exact at rest and under a shift; any affine motion of the
//!   neighbourhood is carried up to the ridge's pull.
//! - A share λ of the rest offset (`[net] offset_share`, [`Space::share`]; 1 unless set): the
//!   `Offsets` and `Carried` candidates carry λ of it, c_pq = g_q + λ R_q (s̄_p − ḡ_q). λ = 0 is
//!   `Positions`, λ = 1 the full offset; between, s_p = λ s̄_p + Σ_q ω_pq (g_q − λ ḡ_q), so at
//!   rest the particle is λ of the way from its guides' convex blend to its own rest position:
//!   the weights still shape it, and the guides' packing together still moves it. Measured on
//!   the general dataset (book, Training once): neither end is best on every groom.
//!
//! Candidates are built on the CPU from the guides (they carry no parameters), in the layout
//! [`super::model::neighbourhood`] gives: `[b, u, v, w, 16, 3]`, neighbour c = 4·di + dj at
//! guide (⌊a/k⌋ − 1 + di, ⌊b/k⌋ − 1 + dj), clamped into the lattice.

use burn::prelude::*;
use glam::{Mat3, Quat, Vec3};
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
    /// The rest offsets carried through the linear map that best takes the particle's 4 × 4
    /// neighbourhood guides from rest to now (their packing, spreading, shear and turn).
    Affine,
}

/// What L blends and the share of the rest offset its candidates carry (the `[net] blend`,
/// `[net] offset_share` and `[net] learn_share` keys, stored with the model). `share` is
/// ignored by `Positions`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Space {
    pub blend: Blend,
    /// λ in c_pq = g_q + λ R_q (s̄_p − ḡ_q), in [0, 1]; with `learned`, only the prior λ₀ of
    /// the shares W_θ predicts.
    pub share: f32,
    /// Each particle's own λ_p, predicted by W_θ ([`super::model::Prediction::share`]).
    pub learned: bool,
}

impl Space {
    /// The full rest offset (λ = 1), or none for `Positions`.
    pub fn full(blend: Blend) -> Space {
        Space::fixed(blend, 1.0)
    }

    /// One share λ for every particle.
    pub fn fixed(blend: Blend, share: f32) -> Space {
        Space {
            blend,
            share,
            learned: false,
        }
    }
}

impl From<Blend> for Space {
    fn from(blend: Blend) -> Space {
        Space::full(blend)
    }
}

/// The candidates of a batch `[b, u, v, w, 16, 3]`: with a fixed share, `base` holds them; with
/// a learned one, `base` is the neighbourhood guides (λ = 0) and `offset` the full offsets
/// R_q (s̄_p − ḡ_q), so each particle's candidates are `base + λ_p offset` ([`Hood::at`]).
pub struct Hood<B: Backend> {
    pub base: Tensor<B, 6>,
    pub offset: Option<Tensor<B, 6>>,
}

impl<B: Backend> Hood<B> {
    /// The candidates L blends, given W_θ's shares `share` `[b, 1, u, v, w]` (a learned share;
    /// ignored otherwise).
    pub fn at(&self, share: Option<&Tensor<B, 5>>) -> Tensor<B, 6> {
        match (&self.offset, share) {
            (None, _) => self.base.clone(),
            (Some(o), Some(l)) => {
                let l: Tensor<B, 6> = l.clone().permute([0, 2, 3, 4, 1]).unsqueeze_dim(5);
                self.base.clone() + o.clone() * l
            }
            (Some(_), None) => panic!("learned-share candidates need the network's shares"),
        }
    }
}

fn at(v: &[f32], i: usize) -> Vec3 {
    Vec3::new(v[3 * i], v[3 * i + 1], v[3 * i + 2])
}

/// How one frame turns the candidates' rest offsets: not at all (`Offsets`), by each guide
/// particle's rotation (`Carried`), or by each neighbourhood's linear map (`Affine`).
enum Turns {
    None,
    Rotations(Vec<Quat>),
    Maps(Vec<Mat3>),
}

impl Turns {
    /// The turns of `blend` for the guides `guides` `[m, m, w, 3]` of one frame.
    fn new(blend: Blend, rest_guides: &[f32], guides: &[f32], m: usize, w: usize) -> Turns {
        match blend {
            Blend::Positions | Blend::Offsets => Turns::None,
            Blend::Carried => Turns::Rotations(rotations(rest_guides, guides, w)),
            Blend::Affine => Turns::Maps(affines(rest_guides, guides, m, w)),
        }
    }

    /// `offset` turned as guide particle `gp` turns it, or as the neighbourhood `block`
    /// ((⌊a/k⌋ · m + ⌊b/k⌋) · w + particle) maps it.
    #[inline]
    fn apply(&self, offset: Vec3, gp: usize, block: usize) -> Vec3 {
        match self {
            Turns::None => offset,
            Turns::Rotations(r) => r[gp] * offset,
            Turns::Maps(a) => a[block] * offset,
        }
    }
}

/// One candidate, c_pq = g_q + λ T (s̄_p − ḡ_q): guide particle `g` (`gp`) carrying `share` of
/// the particle `p`'s rest offset from the guide's rest particle `gbar`, turned by `turns`
/// (none for `Offsets`, the guide's rotation for `Carried`, the neighbourhood `block`'s map for
/// `Affine`). The one formula the training candidates ([`carried`]) and the inference blend
/// ([`blend_frame`]) share.
#[inline]
#[allow(clippy::too_many_arguments)]
fn candidate(g: Vec3, turns: &Turns, gp: usize, block: usize, p: Vec3, gbar: Vec3, share: f32) -> Vec3 {
    g + turns.apply((p - gbar) * share, gp, block)
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

/// The regularization of [`affines`]: μ = this share of the neighbourhood's mean squared
/// spread per axis (not tuned).
const AFFINE_RIDGE: f64 = 0.05;

/// Per neighbourhood of the m × m guide lattice and particle index (`[m, m, w]`: block (i, j)
/// blends the guides (i − 1 + di, j − 1 + dj), clamped, as [`neighbour`]), the linear map A
/// that best carries its 16 guide particles from rest to now about their centroids, ridge-
/// regularized toward the identity: A = (Σ d eᵀ + μ I)(Σ e eᵀ + μ I)⁻¹, e and d the rest and
/// current particles less their centroids. Any affine motion of the neighbourhood within the
/// span of its rest particles is carried exactly up to μ's pull toward I; across the span
/// (the guides at one index lie near a sheet) A keeps the offset as it is.
fn affines(rest_guides: &[f32], guides: &[f32], m: usize, w: usize) -> Vec<Mat3> {
    use glam::{DMat3, DVec3};
    let idx = |i: usize, d: usize| (i as i64 - 1 + d as i64).clamp(0, m as i64 - 1) as usize;
    let mut out = Vec::with_capacity(m * m * w);
    let mut pairs = [(DVec3::ZERO, DVec3::ZERO); NEIGHBORS];
    for i in 0..m {
        for j in 0..m {
            for k in 0..w {
                let (mut rc, mut gc) = (DVec3::ZERO, DVec3::ZERO);
                for (q, pair) in pairs.iter_mut().enumerate() {
                    let gp = (idx(i, q / 4) * m + idx(j, q % 4)) * w + k;
                    *pair = (at(rest_guides, gp).as_dvec3(), at(guides, gp).as_dvec3());
                    rc += pair.0;
                    gc += pair.1;
                }
                let n = NEIGHBORS as f64;
                let (rc, gc) = (rc / n, gc / n);
                let (mut ee, mut de) = (DMat3::ZERO, DMat3::ZERO);
                for (r, g) in pairs {
                    let (e, d) = (r - rc, g - gc);
                    ee += DMat3::from_cols(e * e.x, e * e.y, e * e.z);
                    de += DMat3::from_cols(d * e.x, d * e.y, d * e.z);
                }
                let trace = ee.x_axis.x + ee.y_axis.y + ee.z_axis.z;
                let mu = DMat3::from_diagonal(DVec3::splat((AFFINE_RIDGE * trace / 3.0).max(1e-12)));
                out.push(((de + mu) * (ee + mu).inverse()).as_mat3());
            }
        }
    }
    out
}

/// The 16 candidates of every particle of a `size`² window: `rest` the window's rest strands
/// `[size, size, w, 3]`, `rest_guides` and `guides` (`frames` frames) `[m, m, w, 3]` with
/// m = size / `stride`; returns `[frames, size, size, w, 16, 3]`. The offsets are turned as
/// `blend` turns them (`Offsets`: not; `Positions` is not a blend of offsets); each carries
/// `share` of the rest offset.
#[allow(clippy::too_many_arguments)]
pub fn carried(
    rest: &[f32],
    rest_guides: &[f32],
    guides: &[f32],
    frames: usize,
    size: usize,
    stride: usize,
    w: usize,
    blend: Blend,
    share: f32,
) -> Vec<f32> {
    assert!(blend != Blend::Positions, "positions carry no offsets");
    let m = size / stride;
    let mut out = Vec::with_capacity(frames * size * size * w * NEIGHBORS * 3);
    for f in 0..frames {
        let cur = &guides[f * m * m * w * 3..(f + 1) * m * m * w * 3];
        let turns = Turns::new(blend, rest_guides, cur, m, w);
        let idx = |a: usize, d: usize| neighbour(a, d, stride, m);
        for a in 0..size {
            for b in 0..size {
                for k in 0..w {
                    let p = at(rest, (a * size + b) * w + k);
                    let block = ((a / stride) * m + b / stride) * w + k;
                    for di in 0..4 {
                        for dj in 0..4 {
                            let gp = (idx(a, di) * m + idx(b, dj)) * w + k;
                            let c = candidate(at(cur, gp), &turns, gp, block, p, at(rest_guides, gp), share);
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
/// units), split for a learned share ([`Hood`]).
pub fn candidates<B: Backend>(
    space: Space,
    guides: Tensor<B, 5>,
    flat: &[f32],
    stride: usize,
    rest: &[f32],
    rest_guides: &[f32],
) -> Hood<B> {
    let carried_at = |share: f32| {
        let [b, m, _, w, _] = guides.dims();
        let size = m * stride;
        let c = carried(rest, rest_guides, flat, b, size, stride, w, space.blend, share);
        Tensor::<B, 6>::from_data(
            TensorData::new(c, [b, size, size, w, NEIGHBORS, 3]),
            &guides.device(),
        )
    };
    match (space.blend, space.learned) {
        (Blend::Positions, _) => Hood {
            base: neighbourhood(guides, stride),
            offset: None,
        },
        (Blend::Carried | Blend::Offsets | Blend::Affine, false) => Hood {
            base: carried_at(space.share),
            offset: None,
        },
        (Blend::Carried | Blend::Offsets | Blend::Affine, true) => {
            let base = neighbourhood(guides.clone(), stride);
            Hood {
                offset: Some(carried_at(1.0) - base.clone()),
                base,
            }
        }
    }
}

/// Eq. 3 for one frame on the CPU, without building the candidates: s_p = Σ_q ω_pq c_pq with
/// the candidates c_pq of `space` ([`candidates`], the same formulas), `omega` as W_θ gives it
/// `[16, size, size, w]`, `guides` `[m, m, w, 3]`, `rest` `[size, size, w, 3]` and
/// `rest_guides` `[m, m, w, 3]` (network units); returns `[size, size, w, 3]`. Inference's
/// path: the tensor one ([`super::model::interpolate`] of the candidates) permutes and strides
/// 16 copies of the grid, this one reads each guide particle where it lies. Each particle's
/// sum runs in the same order on any thread count. With a learned share, `shares` holds W_θ's
/// λ_p `[size, size, w]`.
#[allow(clippy::too_many_arguments)]
pub fn blend_frame(
    space: Space,
    omega: &[f32],
    shares: Option<&[f32]>,
    guides: &[f32],
    size: usize,
    stride: usize,
    w: usize,
    rest: &[f32],
    rest_guides: &[f32],
) -> Vec<f32> {
    use rayon::prelude::*;
    let m = size / stride;
    let (blend, share) = (space.blend, space.share);
    assert_eq!(
        space.learned && blend != Blend::Positions,
        shares.is_some(),
        "a learned share's blend takes the network's shares, a fixed one none"
    );
    let turns = Turns::new(blend, rest_guides, guides, m, w);
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
                let share = shares.map_or(share, |l| l[cell]);
                let block = ((a / stride) * m + b / stride) * w + k;
                let mut s = Vec3::ZERO;
                for di in 0..4 {
                    for dj in 0..4 {
                        let gp = (idx(a, di) * m + idx(b, dj)) * w + k;
                        let c = match blend {
                            Blend::Positions => at(guides, gp),
                            _ => candidate(at(guides, gp), &turns, gp, block, p, at(rest_guides, gp), share),
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

    /// At rest every candidate of `blend` (full share) is the particle's own rest position, and
    /// with the bent strands shifted, the particle shifted.
    fn exact_at_rest_and_shifted(blend: Blend) {
        let (size, k, w) = (8, 4, 6);
        let (rest, rg) = window(size, k, w, 1.0);
        all_at(&carried(&rest, &rg, &rg, 1, size, k, w, blend, 1.0), &rest);
        let shifted = moved(&rg, Quat::IDENTITY);
        let c = carried(&rest, &rg, &shifted, 1, size, k, w, blend, 1.0);
        all_at(&c, &moved(&rest, Quat::IDENTITY));
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
        exact_at_rest_and_shifted(Blend::Carried);
        // Straight strands (along −y) turned about an axis across them and shifted: every
        // candidate is the particle moved the same way.
        let (rest, rg) = window(size, k, w, 0.0);
        let rot = Quat::from_axis_angle(Vec3::new(0.6, 0.0, -0.8), 0.7);
        all_at(
            &carried(&rest, &rg, &moved(&rg, rot), 1, size, k, w, Blend::Carried, 1.0),
            &moved(&rest, rot),
        );
        // A twist about the strands' own axis is not seen (rotation-minimizing frames): the
        // candidates stay at the shifted rest, not where the twist takes the particle.
        let twist = Quat::from_rotation_y(0.5);
        let c = carried(&rest, &rg, &moved(&rg, twist), 1, size, k, w, Blend::Carried, 1.0);
        let far = moved(&rest, twist)
            .chunks(3)
            .zip(c.chunks(3 * NEIGHBORS))
            .any(|(p, cand)| Vec3::from_slice(p).distance(Vec3::from_slice(&cand[..3])) > 0.05);
        assert!(far);
    }

    #[test]
    fn offset_candidates_are_exact_at_rest_and_under_a_shift_but_not_a_turn() {
        let (size, k, w) = (8, 4, 6);
        exact_at_rest_and_shifted(Blend::Offsets);
        // Turned, a particle away from its guide is off by the unturned offset's change:
        // |(I − R)(s̄ − ḡ)| for the straight strands' turn across them.
        let (rest, rg) = window(size, k, w, 0.0);
        let rot = Quat::from_axis_angle(Vec3::new(0.6, 0.0, -0.8), 0.7);
        let c = carried(&rest, &rg, &moved(&rg, rot), 1, size, k, w, Blend::Offsets, 1.0);
        let want = moved(&rest, rot);
        let worst = want
            .chunks(3)
            .zip(c.chunks(3 * NEIGHBORS))
            .map(|(p, cand)| Vec3::from_slice(p).distance(Vec3::from_slice(&cand[..3])))
            .fold(0.0f32, f32::max);
        assert!(worst > 0.05, "{worst}");
    }

    /// Affine candidates: exact at rest and under a shift, like offsets; where the guides pack
    /// together (halfway to their centre across the strands) or turn about the strands' axis,
    /// each neighbourhood's map carries the offsets with them, to within the ridge's pull toward
    /// the identity: a tenth of the unturned offsets' error or less (a map fitted transposed or
    /// about the wrong centre is as far off as no map).
    #[test]
    fn affine_candidates_follow_their_guides_packing_and_turning() {
        let (size, k, w) = (12, 4, 6);
        let (rest, rg) = window(size, k, w, 1.0);
        exact_at_rest_and_shifted(Blend::Affine);
        let centre = Vec3::new(0.55, 0.0, 0.55);
        let pack = |v: &[f32]| -> Vec<f32> {
            v.chunks(3)
                .flat_map(|p| {
                    let d = Vec3::from_slice(p) - centre;
                    (centre + Vec3::new(0.5 * d.x, d.y, 0.5 * d.z)).to_array()
                })
                .collect()
        };
        let spin = Quat::from_rotation_y(0.5);
        let turn = |v: &[f32]| -> Vec<f32> {
            v.chunks(3)
                .flat_map(|p| (centre + spin * (Vec3::from_slice(p) - centre)).to_array())
                .collect()
        };
        type Motion<'a> = &'a dyn Fn(&[f32]) -> Vec<f32>;
        let motions: [(&str, Motion); 2] = [("packed", &pack), ("turned", &turn)];
        for (name, motion) in motions {
            let want = motion(&rest);
            let worst = |blend: Blend| {
                let c = carried(&rest, &rg, &motion(&rg), 1, size, k, w, blend, 1.0);
                want.chunks(3)
                    .zip(c.chunks(3 * NEIGHBORS))
                    .flat_map(|(p, cand)| {
                        let p = Vec3::from_slice(p);
                        cand.chunks(3).map(move |q| p.distance(Vec3::from_slice(q)))
                    })
                    .fold(0.0f32, f32::max)
            };
            let (aff, off) = (worst(Blend::Affine), worst(Blend::Offsets));
            assert!(off > 0.05, "{name}: offsets {off}");
            assert!(aff < 0.1 * off, "{name}: affine {aff}, offsets {off}");
        }
    }

    #[test]
    fn candidates_use_the_neighbourhood_guides_and_positions_are_eq3s() {
        let (size, k, w) = (8, 4, 5);
        let (rest, rg) = window(size, k, w, 1.0);
        // Guides bent differently: guide (i, j) sways along x by an amount of its own.
        let m = size / k;
        let g = swayed(&rg, w, false);
        let gt = Tensor::<B, 5>::from_data(TensorData::new(g.clone(), [1, m, m, w, 3]), &Default::default());
        let pos: Vec<f32> = candidates(Blend::Positions.into(), gt.clone(), &g, k, &rest, &rg)
            .base
            .into_data()
            .to_vec()
            .unwrap();
        let car: Vec<f32> = candidates(Blend::Carried.into(), gt.clone(), &g, k, &rest, &rg)
            .base
            .into_data()
            .to_vec()
            .unwrap();
        let shifted: Vec<f32> = candidates(Blend::Offsets.into(), gt, &g, k, &rest, &rg)
            .base
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

    /// Weights that are not one-hot (a softmax of noise over the 16 neighbours) `[1, 16, size,
    /// size, w]`, and the same values flat.
    fn noisy_weights(
        size: usize,
        w: usize,
        dev: &burn::backend::flex::FlexDevice,
    ) -> (Tensor<B, 5>, Vec<f32>) {
        let omega = burn::tensor::activation::softmax(
            Tensor::<B, 5>::random(
                [1, NEIGHBORS, size, size, w],
                burn::tensor::Distribution::Normal(0.0, 2.0),
                dev,
            ),
            1,
        );
        let flat = omega.clone().into_data().to_vec().unwrap();
        (omega, flat)
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
        let (omega, om) = noisy_weights(size, w, &dev);
        let gt = Tensor::<B, 5>::from_data(TensorData::new(g.clone(), [1, m, m, w, 3]), &dev);
        let spaces = [Blend::Positions, Blend::Offsets, Blend::Carried]
            .into_iter()
            .map(Space::full)
            .chain([0.3, 0.5].map(|share| Space::fixed(Blend::Offsets, share)))
            .chain([
                Space::fixed(Blend::Carried, 0.5),
                Space::full(Blend::Affine),
                Space::fixed(Blend::Affine, 0.5),
            ]);
        for space in spaces {
            let want: Vec<f32> = interpolate(
                omega.clone(),
                candidates(space, gt.clone(), &g, k, &rest, &rg).base,
            )
            .into_data()
            .to_vec()
            .unwrap();
            let got = blend_frame(space, &om, None, &g, size, k, w, &rest, &rg);
            assert_eq!(got.len(), want.len());
            let worst = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(worst < 1e-5, "{space:?}: {worst}");
        }
    }

    /// A share λ of the rest offset, written out by hand from the weights and guides (not from
    /// the candidates): λ = 0 is `Positions` to the bit, λ = 1 is s̄ + Σ ω (g − ḡ), and any λ
    /// gives s = λ s̄ + Σ ω (g − λ ḡ), which at rest is λ of the way from the guides' convex
    /// blend to the particle's own rest position.
    #[test]
    fn a_share_of_the_offset_runs_from_positions_to_offsets() {
        let (size, k, w) = (8, 4, 5);
        let (rest, rg) = window(size, k, w, 1.0);
        let m = size / k;
        let g = swayed(&rg, w, true);
        let dev = Default::default();
        let (_, om) = noisy_weights(size, w, &dev);
        let plane = size * size * w;
        let idx = |a: usize, d: usize| ((a / k) as i64 - 1 + d as i64).clamp(0, m as i64 - 1) as usize;
        // Σ ω g and Σ ω ḡ per particle, by hand.
        let sums = |guides: &[f32]| -> Vec<Vec3> {
            let mut out = Vec::new();
            for a in 0..size {
                for b in 0..size {
                    for i in 0..w {
                        let cell = (a * size + b) * w + i;
                        let mut s = Vec3::ZERO;
                        for n in 0..NEIGHBORS {
                            let gi = idx(a, n / 4) * m + idx(b, n % 4);
                            s += om[n * plane + cell] * Vec3::from_slice(&guides[(gi * w + i) * 3..]);
                        }
                        out.push(s);
                    }
                }
            }
            out
        };
        let (sg, srg) = (sums(&g), sums(&rg));
        let pos = blend_frame(Blend::Positions.into(), &om, None, &g, size, k, w, &rest, &rg);
        for blend in [Blend::Offsets, Blend::Carried] {
            let zero = blend_frame(Space::fixed(blend, 0.0), &om, None, &g, size, k, w, &rest, &rg);
            assert_eq!(zero, pos, "{blend:?} at λ = 0 is not Positions");
        }
        for share in [0.0f32, 0.25, 0.5, 1.0] {
            let space = Space::fixed(Blend::Offsets, share);
            let got = blend_frame(space, &om, None, &g, size, k, w, &rest, &rg);
            let at_rest = blend_frame(space, &om, None, &rg, size, k, w, &rest, &rg);
            for (p, sbar) in rest.chunks(3).enumerate() {
                let sbar = Vec3::from_slice(sbar);
                let want = share * sbar + sg[p] - share * srg[p];
                assert!(
                    Vec3::from_slice(&got[3 * p..]).distance(want) < 1e-5,
                    "λ = {share}"
                );
                let want = srg[p] + share * (sbar - srg[p]);
                assert!(
                    Vec3::from_slice(&at_rest[3 * p..]).distance(want) < 1e-5,
                    "λ = {share}"
                );
            }
        }
        // The candidates' tensor path agrees at a share between the ends.
        let gt = Tensor::<B, 5>::from_data(TensorData::new(g.clone(), [1, m, m, w, 3]), &dev);
        let half = Space::fixed(Blend::Offsets, 0.5);
        let c: Vec<f32> = candidates(half, gt, &g, k, &rest, &rg)
            .base
            .into_data()
            .to_vec()
            .unwrap();
        for a in 0..size {
            for b in 0..size {
                for i in 0..w {
                    let cell = (a * size + b) * w + i;
                    for n in 0..NEIGHBORS {
                        let gi = idx(a, n / 4) * m + idx(b, n % 4);
                        let raw = Vec3::from_slice(&g[(gi * w + i) * 3..]);
                        let off =
                            Vec3::from_slice(&rest[cell * 3..]) - Vec3::from_slice(&rg[(gi * w + i) * 3..]);
                        let o = (cell * NEIGHBORS + n) * 3;
                        assert!(Vec3::from_slice(&c[o..]).distance(raw + 0.5 * off) < 1e-5);
                    }
                }
            }
        }
    }

    /// A learned share: each particle carries its own λ_p. The CPU blend with per-particle
    /// shares equals the tensor blend of [`Hood::at`], and every particle equals the blend of
    /// one fixed share at its λ_p (the formulas checked by hand above), for both blends.
    #[test]
    fn a_learned_share_blends_each_particle_at_its_own_share() {
        use super::super::model::interpolate;
        let (size, k, w) = (8, 4, 5);
        let (rest, rg) = window(size, k, w, 1.0);
        let m = size / k;
        let g = swayed(&rg, w, true);
        let dev = Default::default();
        let (omega, om) = noisy_weights(size, w, &dev);
        let plane = size * size * w;
        // A few shares spread over the particles, ends included.
        let levels = [0.0f32, 0.2, 0.5, 0.9, 1.0];
        let lam: Vec<f32> = (0..plane)
            .map(|i| levels[(i * 7 + i / 5) % levels.len()])
            .collect();
        let lt = Tensor::<B, 5>::from_data(TensorData::new(lam.clone(), [1, 1, size, size, w]), &dev);
        let gt = Tensor::<B, 5>::from_data(TensorData::new(g.clone(), [1, m, m, w, 3]), &dev);
        for blend in [Blend::Offsets, Blend::Carried, Blend::Affine] {
            let space = Space {
                blend,
                share: 0.5,
                learned: true,
            };
            let hood = candidates(space, gt.clone(), &g, k, &rest, &rg);
            assert!(hood.offset.is_some());
            let want: Vec<f32> = interpolate(omega.clone(), hood.at(Some(&lt)))
                .into_data()
                .to_vec()
                .unwrap();
            let got = blend_frame(space, &om, Some(&lam), &g, size, k, w, &rest, &rg);
            let fixed: Vec<Vec<f32>> = levels
                .iter()
                .map(|&l| blend_frame(Space::fixed(blend, l), &om, None, &g, size, k, w, &rest, &rg))
                .collect();
            for p in 0..plane {
                let level = levels.iter().position(|&l| l == lam[p]).unwrap();
                for d in 0..3 {
                    let (a, b, c) = (got[3 * p + d], want[3 * p + d], fixed[level][3 * p + d]);
                    assert!((a - b).abs() < 1e-5, "{blend:?} particle {p}: cpu {a} tensor {b}");
                    assert!((a - c).abs() < 1e-5, "{blend:?} particle {p}: {a} vs fixed λ {c}");
                }
            }
        }
    }
}
