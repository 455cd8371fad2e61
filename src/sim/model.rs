//! The strand model of Selle et al. 2008 as used in 000 [16]: particles with mass, edge
//! (stretch) springs, bending springs across every other particle, torsion springs across three
//! segments, and the altitude springs of each tetrahedron of four consecutive particles, all
//! with rest lengths taken from the groom so curls keep their shape.

use glam::Vec3;

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

/// An altitude spring of a tetrahedron: between a corner and the opposite face, or between two
/// opposite edges; its rest value is the signed altitude, so inverted tetrahedra push back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AltitudeKind {
    /// Corner `p` over face (a, b, c).
    PointFace { p: u32, a: u32, b: u32, c: u32 },
    /// Edge (a, b) against edge (c, d).
    EdgeEdge { a: u32, b: u32, c: u32, d: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Altitude {
    pub kind: AltitudeKind,
    pub rest: f32,
    pub k: f32,
    /// Damping of the altitude's rate of change (mass / s).
    pub c: f32,
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
    pub altitudes: Vec<Altitude>,
    pub altitude_offsets: Vec<usize>,
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
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            clamp_root: true,
            uniform_mass: false,
            linear_density: 1.0,
        }
    }
}

/// Tetrahedra flatter than this (altitude / mean edge) get no altitude springs: their direction
/// is undefined (straight hair), and bending / torsion springs already hold the shape.
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
        let mut altitudes = Vec::new();
        let mut altitude_offsets = vec![0];
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
                    tetrahedron(
                        &rest,
                        &mass,
                        [i, i + 1, i + 2, i + 3],
                        material,
                        mean_edge,
                        &mut altitudes,
                    );
                }
            }
            altitude_offsets.push(altitudes.len());
        }
        StrandModel {
            rest,
            counts,
            offsets,
            mass,
            pins,
            springs,
            spring_offsets,
            altitudes,
            altitude_offsets,
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
    out: &mut Vec<Altitude>,
) {
    let stiffness = material.altitude;
    let p = t.map(|i| rest[i]);
    let mbar = t.iter().map(|&i| mass[i]).sum::<f32>() / 4.0;
    let min = MIN_ALTITUDE * mean_edge;
    let mut push = |kind: AltitudeKind, h: f32| {
        if h.abs() >= min {
            out.push(Altitude {
                kind,
                rest: h,
                k: stiffness * mbar / mean_edge.max(1e-6),
                c: material.damping * mbar,
            });
        }
    };
    let u = |i: usize| t[i] as u32;
    for (pi, [a, b, c]) in [(0, [1, 2, 3]), (1, [0, 3, 2]), (2, [0, 1, 3]), (3, [0, 2, 1])] {
        if let Some((h, _, _, _)) = point_face(p[pi], p[a], p[b], p[c]) {
            push(
                AltitudeKind::PointFace {
                    p: u(pi),
                    a: u(a),
                    b: u(b),
                    c: u(c),
                },
                h,
            );
        }
    }
    for [a, b, c, d] in [[0, 1, 2, 3], [0, 2, 1, 3], [0, 3, 1, 2]] {
        if let Some((h, _, _, _, _)) = edge_edge(p[a], p[b], p[c], p[d]) {
            push(
                AltitudeKind::EdgeEdge {
                    a: u(a),
                    b: u(b),
                    c: u(c),
                    d: u(d),
                },
                h,
            );
        }
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
        // 4 edges, 3 bend, 2 twist; a straight strand has no altitude springs.
        assert_eq!(m.springs.len(), 9);
        assert_eq!(m.altitudes.len(), 0);
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
        assert!(m.altitudes.len() > 3 * 10, "{}", m.altitudes.len());
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
