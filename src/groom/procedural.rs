//! Procedural grooms: roots spread evenly over the scalp, strands combed down over the head,
//! straight, wavy or curly. The same parameters and seed give the same groom, bit for bit.
//!
//! Roots follow a Fibonacci spiral over the hair-bearing cap (equal-area spacing, exactly the
//! requested count), rotated and jittered by the seed. Each strand lifts off along the scalp
//! normal, then is combed down and outwards, kept a small distance off the cranium, and finally
//! hangs under gravity's direction. Waves and curls are offsets from that centreline in a
//! parallel-transported frame; their amplitude ramps in over the first centimetre so roots stay
//! on the scalp. The strand's arc length (curl included) is the requested length.

use glam::{Quat, Vec2, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tress_formats::{Attr, StrandAttrs};

use super::model::Groom;
use super::resample::resample;
use super::scalp::ScalpShape;
use super::scalp_uv::scalp_uv;
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Style {
    Straight,
    Wavy,
    Curly,
}

/// Parameters of a procedural groom. Lengths in centimetres.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GroomParams {
    pub style: Style,
    pub strands: usize,
    /// Points per strand.
    pub points: usize,
    /// Mean strand arc length (cm).
    pub length: f32,
    /// Relative spread of strand lengths (0.1 = ±10 %).
    pub length_jitter: f32,
    /// Wave amplitude or curl (helix) radius (cm).
    pub curl_radius: f32,
    /// Waves or curl turns per centimetre of strand centreline.
    pub curl_frequency: f32,
    /// Strand diameter (cm); 0.008 cm = 80 µm, a typical human hair.
    pub width: f32,
    pub seed: u64,
    pub scalp: ScalpShape,
}

impl Default for GroomParams {
    fn default() -> Self {
        GroomParams::for_style(Style::Straight)
    }
}

impl GroomParams {
    /// Sensible defaults for a style.
    pub fn for_style(style: Style) -> Self {
        let (length, curl_radius, curl_frequency) = match style {
            Style::Straight => (25.0, 0.0, 0.0),
            Style::Wavy => (25.0, 0.8, 0.2),
            Style::Curly => (20.0, 0.6, 0.25),
        };
        GroomParams {
            style,
            strands: 5000,
            points: 25,
            length,
            length_jitter: 0.1,
            curl_radius,
            curl_frequency,
            width: 0.008,
            seed: 1,
            scalp: ScalpShape::default(),
        }
    }

    fn check(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Invalid(m));
        if self.strands == 0 {
            return bad("a groom needs at least one strand".into());
        }
        if self.points < 2 {
            return bad(format!("strands need at least 2 points, got {}", self.points));
        }
        if self.strands.saturating_mul(self.points) > 200_000_000 {
            return bad(format!(
                "{} strands × {} points is over the 200 million point limit",
                self.strands, self.points
            ));
        }
        if !(self.length > 0.0 && self.length.is_finite()) {
            return bad(format!("length must be positive, got {}", self.length));
        }
        if !(0.0..1.0).contains(&self.length_jitter) {
            return bad(format!(
                "length_jitter must be in [0, 1), got {}",
                self.length_jitter
            ));
        }
        if self.curl_radius < 0.0 || self.curl_frequency < 0.0 {
            return bad("curl radius and frequency must not be negative".into());
        }
        if self.scalp.radii.min_element() <= 0.0 || !(1.0..=180.0).contains(&self.scalp.cap_angle_deg) {
            return bad("scalp radii must be positive and the cap angle in [1, 180] degrees".into());
        }
        Ok(())
    }
}

/// Distance the combed hair keeps from the cranium (cm), before per-strand layering.
const LIFT: f32 = 0.35;
/// Least distance of any point past the root from the cranium (cm, along each axis).
const MIN_CLEARANCE: f32 = 0.1;
/// Dense steps per output segment while growing a strand.
const OVERSAMPLE: usize = 8;
/// Laplacian smoothing of the dense centreline: rounds of passes, each round followed by
/// pushing the curve back out of the head.
const SMOOTHING_ROUNDS: usize = 6;
const SMOOTHING_PASSES: usize = 8;

/// Evenly spread unit directions over the cap (a Fibonacci spiral in the cap's frame), spun
/// and jittered by the seed within a fifth of the mean spacing.
fn root_directions(p: &GroomParams, rng: &mut ChaCha8Rng) -> Vec<Vec3> {
    let n = p.strands;
    let cos_cap = p.scalp.cap_angle_deg.to_radians().cos();
    let golden = std::f32::consts::PI * (3.0 - 5f32.sqrt());
    let spin: f32 = rng.random_range(0.0..std::f32::consts::TAU);
    let to_cap = Quat::from_rotation_arc(Vec3::Y, p.scalp.cap_axis());
    let spacing = (std::f32::consts::TAU * (1.0 - cos_cap) / n as f32).sqrt();
    (0..n)
        .map(|i| {
            let y = 1.0 - (1.0 - cos_cap) * (i as f32 + 0.5) / n as f32;
            let r = (1.0 - y * y).max(0.0).sqrt();
            let phi = spin + golden * i as f32;
            let d = Vec3::new(r * phi.cos(), y, r * phi.sin());
            let (t1, t2) = d.any_orthonormal_pair();
            let j = Vec2::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)) * (0.2 * spacing);
            to_cap * (d + t1 * j.x + t2 * j.y).normalize()
        })
        .collect()
}

/// Grows the combed centreline of one strand: `steps` segments of `step` cm.
fn centreline(scalp: &ScalpShape, root: Vec3, lift: f32, steps: usize, step: f32) -> Vec<Vec3> {
    let normal = scalp.normal(root);
    // Combing direction in the horizontal plane: outwards and swept back, so hair clears the face.
    let out = Vec3::new(root.x - scalp.center.x, 0.0, root.z - scalp.center.z).normalize_or(Vec3::ZERO);
    let sweep = (out - Vec3::Z * 1.2).normalize_or(-Vec3::Z);
    let mut pts = Vec::with_capacity(steps + 1);
    pts.push(root);
    let mut p = root;
    for k in 0..steps {
        // Lift off along the normal for the first few millimetres, then comb: over the head the
        // comb slides along the surface (projected onto its tangent plane); once free of the
        // head it falls nearly straight down.
        let lifting = (k as f32 * step) < lift * 1.5;
        let touching = scalp.implicit(p, lift * 1.05) <= 1.0;
        let mut dir = if lifting {
            normal
        } else if touching {
            (-0.5 * Vec3::Y + sweep).normalize()
        } else {
            (-Vec3::Y + 0.12 * sweep).normalize()
        };
        if !lifting && touching {
            let n = scalp.normal(scalp.push_out(p, 0.0));
            if dir.dot(n) < 0.0 {
                dir = (dir - n * dir.dot(n)).normalize_or(-Vec3::Y);
            }
        }
        let target = if lifting {
            p + dir * step
        } else {
            scalp.push_out(p + dir * step, lift)
        };
        p += (target - p).normalize_or(dir) * step;
        pts.push(p);
    }
    // Switching between sliding and falling leaves kinks at the dense scale; smooth them out
    // (root fixed) so the curl frame below turns gently, then keep clear of the head.
    for _ in 0..SMOOTHING_ROUNDS {
        for _ in 0..SMOOTHING_PASSES {
            for i in 1..pts.len() - 1 {
                pts[i] = pts[i] * 0.5 + (pts[i - 1] + pts[i + 1]) * 0.25;
            }
        }
        for q in pts.iter_mut().skip(1) {
            *q = scalp.push_out(*q, lift * 0.5);
        }
    }
    pts
}

/// Adds waves (planar) or curls (helix) around a centreline, in a parallel-transported frame.
fn curl(centre: &[Vec3], style: Style, radius: f32, freq: f32, phase: f32, step: f32) -> Vec<Vec3> {
    if style == Style::Straight || radius == 0.0 || freq == 0.0 {
        return centre.to_vec();
    }
    let mut out = Vec::with_capacity(centre.len());
    let t0 = (centre[1] - centre[0]).normalize_or(Vec3::NEG_Y);
    let mut b1 = t0.any_orthonormal_vector();
    for i in 0..centre.len() {
        let t = if i + 1 < centre.len() {
            (centre[i + 1] - centre[i]).normalize_or(t0)
        } else {
            (centre[i] - centre[i - 1]).normalize_or(t0)
        };
        // Parallel transport: remove the tangent component and renormalize.
        b1 = (b1 - t * b1.dot(t)).normalize_or(t.any_orthonormal_vector());
        let b2 = t.cross(b1);
        let s = i as f32 * step;
        let ramp = (s / 1.0).min(1.0);
        let a = std::f32::consts::TAU * freq * s + phase;
        let offset = match style {
            Style::Wavy => b1 * (radius * a.sin()),
            Style::Curly => (b1 * a.cos() + b2 * a.sin()) * radius,
            Style::Straight => Vec3::ZERO,
        };
        out.push(centre[i] + offset * ramp);
    }
    out
}

fn arc_length(pts: &[Vec3]) -> f32 {
    pts.windows(2).map(|w| w[0].distance(w[1])).sum()
}

/// Generates a groom. Root UVs (000 App. A around the cranium centre), ids and a constant
/// width are attached.
/// One strand from its root direction and its random draws.
fn grow(
    p: &GroomParams,
    d: Vec3,
    length: f32,
    lift: f32,
    phase: f32,
    dense_steps: usize,
) -> Result<Vec<Vec3>> {
    let root = p.scalp.surface_point(d);
    // Curls and waves swing `curl_radius` around the centreline: lift it that much more so
    // they clear the cranium.
    let lift = lift
        + if p.style == Style::Straight {
            0.0
        } else {
            p.curl_radius
        };
    // Grow the centreline short enough that the curled, resampled strand comes out at
    // `length` (curls add arc length; resampling cuts a little off as chords).
    let mut centre_len = length;
    let mut strand: Vec<Vec3> = Vec::new();
    let mut best_error = f32::INFINITY;
    for _ in 0..6 {
        let step = centre_len / dense_steps as f32;
        let c = centreline(&p.scalp, root, lift, dense_steps, step);
        let mut dense = curl(&c, p.style, p.curl_radius, p.curl_frequency, phase, step);
        // Where the centreline turns tightly a curl can still dip towards the head.
        for q in dense.iter_mut().skip(1) {
            *q = p.scalp.push_out(*q, MIN_CLEARANCE);
        }
        let dense = Groom::new(dense, vec![dense_steps as u32 + 1], StrandAttrs::default())?;
        let candidate = resample(&dense, p.points).points().to_vec();
        let got = arc_length(&candidate);
        // Coarse curls alias, so the iteration need not converge: keep the closest.
        if (got - length).abs() < best_error {
            best_error = (got - length).abs();
            strand = candidate;
        }
        if best_error < 1e-4 * length {
            break;
        }
        centre_len *= length / got;
    }
    Ok(strand)
}

pub fn generate(p: &GroomParams) -> Result<Groom> {
    p.check()?;
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let dirs = root_directions(p, &mut rng);
    let dense_steps = (p.points - 1) * OVERSAMPLE;
    // The random draws in strand order, then the strands in parallel (the same groom whatever
    // the thread count).
    let draws: Vec<(f32, f32, f32)> = dirs
        .iter()
        .map(|_| {
            let length = p.length * (1.0 + rng.random_range(-p.length_jitter..=p.length_jitter));
            let lift = LIFT * rng.random_range(0.6..1.6);
            let phase: f32 = rng.random_range(0.0..std::f32::consts::TAU);
            (length, lift, phase)
        })
        .collect();
    let strands: Vec<Vec<Vec3>> = dirs
        .par_iter()
        .zip(&draws)
        .map(|(d, &(length, lift, phase))| grow(p, *d, length, lift, phase, dense_steps))
        .collect::<Result<_>>()?;
    let points: Vec<Vec3> = strands.concat();
    let root_uv = dirs
        .iter()
        .map(|d| {
            let uv: Vec2 = scalp_uv(p.scalp.surface_point(*d), p.scalp.center);
            [uv.x, uv.y]
        })
        .collect();
    let attrs = StrandAttrs {
        width: Some(Attr::Constant(p.width)),
        root_uv: Some(root_uv),
        id: Some((0..p.strands as u32).collect()),
        ..Default::default()
    };
    Groom::uniform(points, p.points, attrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(style: Style) -> GroomParams {
        GroomParams {
            strands: 300,
            ..GroomParams::for_style(style)
        }
    }

    #[test]
    fn counts_and_lengths_match_the_request() {
        for style in [Style::Straight, Style::Wavy, Style::Curly] {
            let p = small(style);
            let g = generate(&p).unwrap();
            assert_eq!(g.strand_count(), 300);
            assert_eq!(g.uniform_count(), Some(25));
            for l in g.lengths() {
                // Curls sampled at 25 points alias a little; allow 2 % there.
                let slack = if style == Style::Curly { 0.02 } else { 0.001 };
                let (lo, hi) = (1.0 - p.length_jitter, 1.0 + p.length_jitter);
                assert!(
                    l >= p.length * lo * (1.0 - slack) && l <= p.length * hi * (1.0 + slack),
                    "{style:?} {l}"
                );
            }
        }
    }

    #[test]
    fn same_seed_same_groom_other_seed_other_groom() {
        let a = generate(&small(Style::Wavy)).unwrap();
        let b = generate(&small(Style::Wavy)).unwrap();
        assert_eq!(a, b);
        let c = generate(&GroomParams {
            seed: 2,
            ..small(Style::Wavy)
        })
        .unwrap();
        assert_ne!(a.points(), c.points());
    }

    #[test]
    fn roots_lie_on_the_scalp_and_hair_stays_outside_the_cranium() {
        for style in [Style::Straight, Style::Wavy, Style::Curly] {
            let p = small(style);
            let g = generate(&p).unwrap();
            for s in g.strands() {
                assert!((p.scalp.implicit(s[0], 0.0) - 1.0).abs() < 1e-4);
                for q in &s[1..] {
                    // Clear of the cranium grown by half the clearance (resampling takes
                    // chords of the dense curve).
                    assert!(
                        p.scalp.implicit(*q, 0.5 * MIN_CLEARANCE) > 1.0,
                        "{style:?}: point inside the head"
                    );
                }
                // Combed hair ends below its root, or (short curly centrelines from the crown)
                // at least behind it.
                let (tip, root) = (s[s.len() - 1], s[0]);
                assert!(
                    tip.y < root.y || (style == Style::Curly && tip.z < root.z),
                    "{style:?}: tip {tip:?} root {root:?}"
                );
            }
        }
    }

    #[test]
    fn roots_are_evenly_spread() {
        // Nearest-neighbour distances of an even spread vary little; random sampling would
        // give some pairs almost on top of each other.
        let g = generate(&GroomParams {
            strands: 1000,
            ..small(Style::Straight)
        })
        .unwrap();
        let roots = g.roots();
        let nn: Vec<f32> = roots
            .iter()
            .enumerate()
            .map(|(i, a)| {
                roots
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, b)| a.distance(*b))
                    .fold(f32::INFINITY, f32::min)
            })
            .collect();
        let mean = nn.iter().sum::<f32>() / nn.len() as f32;
        let min = nn.iter().copied().fold(f32::INFINITY, f32::min);
        assert!(min > 0.25 * mean, "min {min} mean {mean}");
    }

    #[test]
    fn curly_hair_keeps_its_radius() {
        // Long strands, so that the part hanging free of the head (no centreline bend) dominates.
        let p = GroomParams {
            strands: 20,
            points: 200,
            length: 45.0,
            ..GroomParams::for_style(Style::Curly)
        };
        let g = generate(&p).unwrap();
        // A helix of radius r and pitch 2πc has curvature κ = r / (r² + c²), c = 1 / (2π f).
        let c = 1.0 / (std::f32::consts::TAU * p.curl_frequency);
        let want = p.curl_radius / (p.curl_radius * p.curl_radius + c * c);
        for s in g.strands() {
            // The lower half hangs free of the head.
            let mut ks: Vec<f32> = s[100..]
                .windows(3)
                .map(|w| {
                    let (a, b) = (w[1] - w[0], w[2] - w[1]);
                    a.angle_between(b) / (0.5 * (a.length() + b.length()))
                })
                .collect();
            ks.sort_by(f32::total_cmp);
            let median = ks[ks.len() / 2];
            assert!(
                (median - want).abs() / want < 0.1,
                "median curvature {median}, helix {want}"
            );
            // No kinks where the strand leaves the head.
            assert!(
                ks[ks.len() - 1] < 4.0 * want,
                "max curvature {} vs {want}",
                ks[ks.len() - 1]
            );
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(
            generate(&GroomParams {
                strands: 0,
                ..Default::default()
            })
            .is_err()
        );
        assert!(
            generate(&GroomParams {
                points: 1,
                ..Default::default()
            })
            .is_err()
        );
        assert!(
            generate(&GroomParams {
                length: -1.0,
                ..Default::default()
            })
            .is_err()
        );
    }
}
