//! The strand model of Selle et al. 2008 as used in 000 [16]: particles with mass, edge
//! (stretch) springs, bending springs across every other particle, torsion springs across three
//! segments, and the altitude springs of each tetrahedron of four consecutive particles, all
//! with rest lengths taken from the groom so curls keep their shape.
//!
//! Altitude springs: a tetrahedron has seven altitudes (each corner over the opposite face, and
//! the three pairs of opposite edges); their signed rest values see the handedness that the
//! pair springs cannot (a curl and its mirror image have the same pair distances).
//! - [`AltitudeSprings::Selle`]: Selle et al. apply one spring per tetrahedron, on the altitude
//!   chosen from its *current* shape: the one whose cross product (face normal, or the two
//!   edges' common normal) is largest, i.e. the shortest altitude (altitude = 6·volume /
//!   |cross product|), the direction in which the tetrahedron is closest to collapse and best
//!   conditioned; its rest length is that altitude's signed value at rest, so a tetrahedron
//!   turned inside out is pushed back (002 §3.1 describes the model and its flicker). Every
//!   tetrahedron gets one, straight hair included (its rest altitudes are zero there).
//! - [`AltitudeSprings::All`] (the default): all seven springs of tetrahedra whose rest
//!   altitudes are not flat, each on its own. Measured against Selle's (book: Simulation):
//!   both turn a mirrored curl back exactly, and hold curls equally at 20× the stiffness for
//!   Selle's one spring, but the switch of Selle's spring between altitudes keeps near-root
//!   particles of a settled wavy groom flickering (0.6–1.3 cm/s), where all seven settle.

use glam::Vec3;

use serde::{Deserialize, Serialize};

use super::material::Material;
use crate::groom::Groom;

/// A two-particle spring (global particle indices).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spring {
    pub a: u32,
    pub b: u32,
    pub rest: f32,
    /// Hooke constant k·m̄/L.
    pub k: f32,
    /// Damping constant (mass / s).
    pub c: f32,
}

/// A tetrahedron of four consecutive particles of a strand and the signed rest values of its
/// seven altitudes (in the order of [`TET_ALTITUDES`]; 0 where the rest shape leaves that
/// altitude undefined: a straight strand).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tetrahedron {
    pub p: [u32; 4],
    pub rest: [f32; 7],
    /// Hooke constant of each altitude spring.
    pub k: f32,
    /// Damping of the altitude's rate of change (mass / s).
    pub c: f32,
    /// Which rest altitudes the [`AltitudeSprings::All`] model uses (bit j: altitude j).
    pub used: u8,
}

/// One altitude of a tetrahedron, by corner positions 0..4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TetAltitude {
    /// Corner `p` over face (a, b, c).
    PointFace { p: usize, a: usize, b: usize, c: usize },
    /// Edge (a, b) against edge (c, d).
    EdgeEdge { a: usize, b: usize, c: usize, d: usize },
}

/// The seven altitudes of a tetrahedron (faces wound so every normal points the same way
/// round for a positively oriented tetrahedron).
pub const TET_ALTITUDES: [TetAltitude; 7] = [
    TetAltitude::PointFace {
        p: 0,
        a: 1,
        b: 2,
        c: 3,
    },
    TetAltitude::PointFace {
        p: 1,
        a: 0,
        b: 3,
        c: 2,
    },
    TetAltitude::PointFace {
        p: 2,
        a: 0,
        b: 1,
        c: 3,
    },
    TetAltitude::PointFace {
        p: 3,
        a: 0,
        b: 2,
        c: 1,
    },
    TetAltitude::EdgeEdge {
        a: 0,
        b: 1,
        c: 2,
        d: 3,
    },
    TetAltitude::EdgeEdge {
        a: 0,
        b: 2,
        c: 1,
        d: 3,
    },
    TetAltitude::EdgeEdge {
        a: 0,
        b: 3,
        c: 1,
        d: 2,
    },
];

/// Which altitude springs a tetrahedron gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AltitudeSprings {
    /// Selle et al. 2008: one spring, on the shortest current altitude.
    Selle,
    /// Every non-flat rest altitude its own spring (the default: Selle's switching spring
    /// keeps near-root particles of wavy grooms flickering, book: Simulation).
    #[default]
    All,
}

/// An altitude of the current shape: its signed value, unit direction, the weights of the four
/// corners (the altitude's gradient is `w[q] · n` for corner q) and the sine of its face or
/// edge pair angle.
#[derive(Clone, Copy, Debug)]
pub struct AltitudeNow {
    pub h: f32,
    pub n: Vec3,
    pub w: [f32; 4],
    pub sine: f32,
}

/// Altitude `a` of the tetrahedron with corners `p`, or `None` where it is undefined (a
/// degenerate face or edge pair, or edges whose closest points lie far off them).
pub fn altitude_now(alt: TetAltitude, p: [Vec3; 4]) -> Option<AltitudeNow> {
    match alt {
        TetAltitude::PointFace { p: q, a, b, c } => {
            point_face(p[q], p[a], p[b], p[c]).map(|(h, n, w, sine)| AltitudeNow {
                h,
                n,
                w: {
                    let mut out = [0.0; 4];
                    out[q] = 1.0;
                    out[a] = -w[0];
                    out[b] = -w[1];
                    out[c] = -w[2];
                    out
                },
                sine,
            })
        }
        TetAltitude::EdgeEdge { a, b, c, d } => {
            edge_edge(p[a], p[b], p[c], p[d]).map(|(h, n, s, t, sine)| AltitudeNow {
                h,
                n,
                w: {
                    let mut out = [0.0; 4];
                    out[a] = -(1.0 - s);
                    out[b] = -s;
                    out[c] = 1.0 - t;
                    out[d] = t;
                    out
                },
                sine,
            })
        }
    }
}

/// The signed value of altitude `a` at rest: (6 × signed volume) / |cross product|, defined
/// wherever the face or edge pair is (whatever the edges' closest points), and 0 where it is
/// degenerate (a straight strand: its volume is zero too).
fn rest_altitude(a: TetAltitude, p: [Vec3; 4]) -> f32 {
    let (from, to, u, v) = spans(a, p);
    let cross = u.cross(v);
    let l = cross.length();
    let sine = l / (u.length() * v.length());
    if sine.is_nan() || sine <= MIN_SINE {
        return 0.0;
    }
    (to - from).dot(cross) / l
}

/// The altitude's base point and tip (its signed value is (tip − base)·n̂) and the two spans
/// whose cross product n is its direction: a face's two edges from its first corner, or the
/// two edges.
fn spans(a: TetAltitude, p: [Vec3; 4]) -> (Vec3, Vec3, Vec3, Vec3) {
    match a {
        TetAltitude::PointFace { p: q, a, b, c } => (p[a], p[q], p[b] - p[a], p[c] - p[a]),
        TetAltitude::EdgeEdge { a, b, c, d } => (p[a], p[c], p[b] - p[a], p[d] - p[c]),
    }
}

/// |n|² of altitude `a` (the selection key: altitude = 6·volume / |n|).
fn cross_squared(a: TetAltitude, p: [Vec3; 4]) -> f32 {
    let (_, _, u, v) = spans(a, p);
    u.cross(v).length_squared()
}

/// Selle et al.'s choice for the current shape `p`: the defined altitude with the largest cross
/// product (the shortest altitude; the first of equals), with its index in [`TET_ALTITUDES`].
/// Only the cross products are taken for all seven; the altitudes themselves are worked out
/// from the largest down until one is defined (nearly always the first).
pub fn shortest_altitude(p: [Vec3; 4]) -> Option<(usize, AltitudeNow)> {
    let mut order: [(f32, usize); 7] = std::array::from_fn(|j| (cross_squared(TET_ALTITUDES[j], p), j));
    // Stable: equal cross products keep their order.
    order.sort_by(|x, y| y.0.total_cmp(&x.0));
    order
        .iter()
        .find_map(|&(_, j)| altitude_now(TET_ALTITUDES[j], p).map(|now| (j, now)))
}

/// How a particle moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pin {
    Free,
    /// Follows the head rigidly (roots, and the second particle when the root is clamped).
    Head,
    /// Fixed in world space (tests, pinned tips).
    World,
}

impl Pin {
    /// Whether the particle meets the colliders: free particles, and head-pinned ones when
    /// zero-length root springs (004) make them dynamic (`roots_free`).
    pub fn collides(self, roots_free: bool) -> bool {
        self == Pin::Free || (self == Pin::Head && roots_free)
    }
}

/// The simulated strands, their rest shape (head-local) and springs.
#[derive(Clone, Debug)]
pub struct StrandModel {
    pub rest: Vec<Vec3>,
    pub counts: Vec<u32>,
    pub offsets: Vec<usize>,
    pub mass: Vec<f32>,
    pub pins: Vec<Pin>,
    pub springs: Vec<Spring>,
    /// Springs of strand s are `springs[spring_offsets[s]..spring_offsets[s + 1]]`; the first
    /// (count − 1) of them are the strand's edges, in order.
    pub spring_offsets: Vec<usize>,
    /// The tetrahedra of four consecutive particles (their altitude springs); those of strand
    /// s are `tets[tet_offsets[s]..tet_offsets[s + 1]]`.
    pub tets: Vec<Tetrahedron>,
    pub tet_offsets: Vec<usize>,
    pub altitude_springs: AltitudeSprings,
}

/// Options of the model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelOptions {
    /// Pin the second particle to the head too, so strands leave the scalp in their groomed
    /// direction instead of hinging at the root.
    pub clamp_root: bool,
    /// Every particle of a strand gets the strand's mean segment mass, ends included.
    pub uniform_mass: bool,
    /// Mass per cm of strand (forces scale with it, so only ratios matter).
    pub linear_density: f32,
    pub altitude_springs: AltitudeSprings,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            clamp_root: true,
            uniform_mass: false,
            linear_density: 1.0,
            altitude_springs: AltitudeSprings::All,
        }
    }
}

/// In the [`AltitudeSprings::All`] model, rest altitudes flatter than this (altitude / mean
/// edge) get no spring.
const MIN_ALTITUDE: f32 = 0.05;

impl StrandModel {
    /// Builds the model of `groom` (its rest shape, in the head's frame at rest).
    pub fn new(groom: &Groom, material: &Material, opts: &ModelOptions) -> StrandModel {
        let rest = groom.points().to_vec();
        let offsets = groom.offsets().to_vec();
        let counts = groom.counts().to_vec();
        let n = rest.len();
        let mut mass = vec![0.0f32; n];
        let mut pins = vec![Pin::Free; n];
        let mut springs = Vec::new();
        let mut spring_offsets = vec![0];
        let mut tets = Vec::new();
        let mut tet_offsets = vec![0];
        for s in 0..counts.len() {
            let (o, e) = (offsets[s], offsets[s + 1]);
            let len = |i: usize| rest[i].distance(rest[i + 1]);
            let mean_edge = if e - o > 1 {
                (o..e - 1).map(len).sum::<f32>() / (e - o - 1) as f32
            } else {
                0.0
            };
            #[allow(clippy::needless_range_loop)]
            for i in o..e {
                let left = if i > o { len(i - 1) } else { 0.0 };
                let right = if i + 1 < e { len(i) } else { 0.0 };
                let share = if opts.uniform_mass {
                    mean_edge
                } else {
                    0.5 * (left + right)
                };
                mass[i] = (opts.linear_density * share).max(1e-4 * opts.linear_density.max(1e-6));
            }
            if e > o {
                pins[o] = Pin::Head;
                if opts.clamp_root && e - o > 2 {
                    pins[o + 1] = Pin::Head;
                }
            }
            let mut add = |a: usize, b: usize, stiffness: f32| {
                let rest_len = rest[a].distance(rest[b]);
                if rest_len <= 0.0 || stiffness <= 0.0 {
                    return;
                }
                let mbar = 0.5 * (mass[a] + mass[b]);
                springs.push(Spring {
                    a: a as u32,
                    b: b as u32,
                    rest: rest_len,
                    k: stiffness * mbar / rest_len,
                    c: material.damping * mbar,
                });
            };
            // Edges first (strain limiting relies on their order), then bend and twist.
            for i in o..e.saturating_sub(1) {
                add(i, i + 1, material.stretch);
            }
            for i in o..e.saturating_sub(2) {
                add(i, i + 2, material.bend);
            }
            for i in o..e.saturating_sub(3) {
                add(i, i + 3, material.twist);
            }
            spring_offsets.push(springs.len());
            if material.altitude > 0.0 {
                for i in o..e.saturating_sub(3) {
                    tets.push(tetrahedron(
                        &rest,
                        &mass,
                        [i, i + 1, i + 2, i + 3],
                        material,
                        mean_edge,
                    ));
                }
            }
            tet_offsets.push(tets.len());
        }
        StrandModel {
            rest,
            counts,
            offsets,
            mass,
            pins,
            springs,
            spring_offsets,
            tets,
            tet_offsets,
            altitude_springs: opts.altitude_springs,
        }
    }

    pub fn strand_count(&self) -> usize {
        self.counts.len()
    }

    pub fn particle_count(&self) -> usize {
        self.rest.len()
    }

    /// Rest length of the edge from particle `i` to `i + 1` of strand `s`.
    pub fn edge_rest(&self, s: usize, i: usize) -> f32 {
        self.springs[self.spring_offsets[s] + (i - self.offsets[s])].rest
    }
}

/// Sine of the angle below which a face or an edge pair is degenerate: its normal (and so the
/// sign of the altitude) is not defined, and it would swing wildly from step to step.
const MIN_SINE: f32 = 0.02;
/// Altitude springs fade out between these sines of their face (or edge pair) angle. The
/// implicit step uses the Gauss–Newton part of their Jacobian (along the normal); the part it
/// leaves out grows as 1 / sine, and on near-degenerate faces it drives a limit cycle.
const FADE_LO: f32 = 0.15;
const FADE_HI: f32 = 0.35;

/// Weight of an altitude spring whose face (or edge pair) has this sine (smoothstep).
pub fn altitude_fade(sine: f32) -> f32 {
    let t = ((sine - FADE_LO) / (FADE_HI - FADE_LO)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Signed point–face altitude of `p` over (a, b, c), the face normal, the barycentric weights
/// of its foot and the sine of the face's angle at `a`.
pub fn point_face(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> Option<(f32, Vec3, [f32; 3], f32)> {
    let n = (b - a).cross(c - a);
    let area2 = n.length();
    let sine = area2 / ((b - a).length() * (c - a).length());
    if sine.is_nan() || sine <= MIN_SINE {
        return None;
    }
    let n = n / area2;
    let s = (p - a).dot(n);
    let q = p - s * n;
    let wa = (b - q).cross(c - q).dot(n) / area2;
    let wb = (c - q).cross(a - q).dot(n) / area2;
    Some((s, n, [wa, wb, 1.0 - wa - wb], sine))
}

/// Signed distance between the lines of edges (a, b) and (c, d) along their common normal,
/// with the parameters of the closest points and the sine of the edges' angle.
pub fn edge_edge(a: Vec3, b: Vec3, c: Vec3, d: Vec3) -> Option<(f32, Vec3, f32, f32, f32)> {
    let (u, v, w) = (b - a, d - c, a - c);
    let n = u.cross(v);
    let l = n.length();
    let (uu, uv, vv, uw, vw) = (u.dot(u), u.dot(v), v.dot(v), u.dot(w), v.dot(w));
    let sine = l / (uu * vv).sqrt();
    if sine.is_nan() || sine <= MIN_SINE {
        return None;
    }
    let n = n / l;
    // |u × v|² = |u|²|v|² − (u·v)², without the cancellation of the right-hand side.
    let den = l * l;
    // The line parameters are not clamped to the segments: with them the weights
    // [−(1 − s), −s, 1 − t, t] are the exact gradient of the lines' distance (envelope
    // theorem), so the spring force is conservative. Clamped, it is not, and it pumps energy
    // into curls. Closest points far off the edges belong to the point–face springs.
    let s = (uv * vw - vv * uw) / den;
    let t = (uu * vw - uv * uw) / den;
    if !((-0.5..=1.5).contains(&s) && (-0.5..=1.5).contains(&t)) {
        return None;
    }
    let h = (c - a).dot(n);
    Some((h, n, s, t, sine))
}

fn tetrahedron(
    rest: &[Vec3],
    mass: &[f32],
    t: [usize; 4],
    material: &Material,
    mean_edge: f32,
) -> Tetrahedron {
    let p = t.map(|i| rest[i]);
    let mbar = t.iter().map(|&i| mass[i]).sum::<f32>() / 4.0;
    let min = MIN_ALTITUDE * mean_edge;
    let mut rest_h = [0.0f32; 7];
    let mut used = 0u8;
    for (j, a) in TET_ALTITUDES.iter().enumerate() {
        rest_h[j] = rest_altitude(*a, p);
        if altitude_now(*a, p).is_some() && rest_h[j].abs() >= min {
            used |= 1 << j;
        }
    }
    Tetrahedron {
        p: t.map(|i| i as u32),
        rest: rest_h,
        k: material.altitude * mbar / mean_edge.max(1e-6),
        c: material.damping * mbar,
        used,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groom::{GroomParams, Style, generate};

    #[test]
    fn springs_and_pins() {
        let g = Groom::new(
            (0..5).map(|i| Vec3::new(0.0, -(i as f32), 0.0)).collect(),
            vec![5],
            Default::default(),
        )
        .unwrap();
        let m = StrandModel::new(&g, &Material::default(), &ModelOptions::default());
        // 4 edges, 3 bend, 2 twist; two tetrahedra, whose rest altitudes are all zero.
        assert_eq!(m.springs.len(), 9);
        assert_eq!(m.tets.len(), 2);
        assert!(m.tets.iter().all(|t| t.rest == [0.0; 7] && t.used == 0));
        assert_eq!(m.pins[..3], [Pin::Head, Pin::Head, Pin::Free]);
        assert_eq!(m.edge_rest(0, 2), 1.0);
        assert_eq!(m.mass[0], 0.5);
        assert_eq!(m.mass[2], 1.0);
    }

    #[test]
    fn curls_get_altitude_springs() {
        let g = generate(&GroomParams {
            strands: 3,
            ..GroomParams::for_style(Style::Curly)
        })
        .unwrap();
        let m = StrandModel::new(&g, &Material::preset("curly").unwrap(), &ModelOptions::default());
        let used: u32 = m.tets.iter().map(|t| t.used.count_ones()).sum();
        assert!(used > 3 * 10, "{used}");
    }

    #[test]
    fn shortest_altitude_is_six_volumes_over_the_largest_cross_product() {
        // A flat tetrahedron: corner 3 sits 0.1 over the unit right triangle (0, 1, 2).
        let p = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(0.2, 0.2, 0.1)];
        let (j, now) = shortest_altitude(p).unwrap();
        assert_eq!(
            TET_ALTITUDES[j],
            TetAltitude::PointFace {
                p: 3,
                a: 0,
                b: 2,
                c: 1
            }
        );
        // Its face (0, 2, 1) is wound the other way round: the signed altitude is −0.1.
        assert!((now.h + 0.1).abs() < 1e-6, "{}", now.h);
        let volume6 = (p[1] - p[0]).dot((p[2] - p[0]).cross(p[3] - p[0]));
        for (k, a) in TET_ALTITUDES.iter().enumerate() {
            // Every defined altitude is 6V / |cross product| in magnitude and no shorter.
            if let Some(o) = altitude_now(*a, p) {
                let cross = cross_squared(*a, p).sqrt();
                assert!((o.h.abs() - volume6.abs() / cross).abs() < 1e-5, "{k}");
                assert!(o.h.abs() >= now.h.abs() - 1e-6);
            }
            // The rest value agrees with the current one on the same shape.
            if let Some(o) = altitude_now(*a, p) {
                assert!((rest_altitude(*a, p) - o.h).abs() < 1e-5, "{k}");
            }
        }
        // The weights are the altitude's gradient: a finite difference of h along n.
        for q in 0..4 {
            let e = 1e-3;
            let mut moved = p;
            moved[q] += e * now.n;
            let h2 = altitude_now(TET_ALTITUDES[j], moved).unwrap().h;
            assert!(((h2 - now.h) / e - now.w[q]).abs() < 1e-2, "corner {q}");
        }
    }

    #[test]
    fn altitude_geometry() {
        let (h, n, w, _) = point_face(Vec3::new(0.2, 0.3, 2.0), Vec3::ZERO, Vec3::X, Vec3::Y).unwrap();
        assert!((h - 2.0).abs() < 1e-6 && (n - Vec3::Z).length() < 1e-6);
        assert!((w[0] - 0.5).abs() < 1e-6 && (w[1] - 0.2).abs() < 1e-6 && (w[2] - 0.3).abs() < 1e-6);
        let (h, _, s, t, _) = edge_edge(
            Vec3::ZERO,
            Vec3::X,
            Vec3::new(0.5, -1.0, 1.0),
            Vec3::new(0.5, 1.0, 1.0),
        )
        .unwrap();
        assert!((h.abs() - 1.0).abs() < 1e-6 && (s - 0.5).abs() < 1e-6 && (t - 0.5).abs() < 1e-6);
    }
}
