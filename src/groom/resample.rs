//! Arc-length resampling: every strand to N particles spaced uniformly by length (000 §4.1:
//! "each hair strand has n_w particles uniformly sampled by length").

use glam::Vec3;
use tress_formats::{Attr, StrandAttrs};

use super::model::Groom;

/// Where each of `n` uniformly spaced samples falls on a polyline: (segment index, fraction).
fn arc_positions(strand: &[Vec3], n: usize) -> Vec<(usize, f32)> {
    arc_positions_over(strand, n, None)
}

/// Where each of `n` samples spread evenly over arc lengths [0, `total`] falls on a polyline
/// (default: its own length; the tip then lands exactly on the last point). Beyond the tip the
/// last segment continues: its fraction exceeds 1, and [`Vec3::lerp`] extrapolates.
pub(crate) fn arc_positions_over(strand: &[Vec3], n: usize, total: Option<f32>) -> Vec<(usize, f32)> {
    let mut cum = Vec::with_capacity(strand.len());
    let mut acc = 0.0f64;
    cum.push(0.0f64);
    for w in strand.windows(2) {
        acc += w[0].distance(w[1]) as f64;
        cum.push(acc);
    }
    let length = acc;
    let total = total.map_or(length, f64::from);
    let last = strand.len().saturating_sub(1);
    let mut out = Vec::with_capacity(n);
    let mut seg = 0usize;
    for k in 0..n {
        if strand.len() < 2 || total <= 0.0 || length <= 0.0 {
            out.push((0, 0.0));
            continue;
        }
        if k + 1 == n && total == length {
            // The tip lands exactly on the last point.
            out.push((last - 1, 1.0));
            continue;
        }
        let target = total * k as f64 / (n - 1).max(1) as f64;
        while seg + 1 < last && cum[seg + 1] < target {
            seg += 1;
        }
        let len = cum[seg + 1] - cum[seg];
        let t = if len > 0.0 { (target - cum[seg]) / len } else { 0.0 };
        // Past the tip only when asked, and only on the last segment.
        let t = if seg + 1 == last && total > length {
            t.max(0.0)
        } else {
            t.clamp(0.0, 1.0)
        };
        out.push((seg, t as f32));
    }
    out
}

/// `strand` sampled at `n` points spread evenly over arc lengths [0, `total`], continuing past
/// its tip along its last segment.
pub(crate) fn sample_over(strand: &[Vec3], n: usize, total: f32, out: &mut Vec<Vec3>) {
    out.clear();
    out.extend(
        arc_positions_over(strand, n, Some(total))
            .into_iter()
            .map(|a| sample(strand, a, |p, q, t| p.lerp(q, t))),
    );
}

fn sample<T: Copy>(values: &[T], at: (usize, f32), lerp: impl Fn(T, T, f32) -> T) -> T {
    let (seg, t) = at;
    if values.len() < 2 {
        return values[0];
    }
    lerp(values[seg], values[seg + 1], t)
}

/// Resamples every strand to `n` points uniformly spaced by arc length. Roots and tips are
/// kept exactly; per-vertex attributes are interpolated at the same positions. A strand with a
/// single point (or zero length) becomes `n` copies of its first point.
pub fn resample(groom: &Groom, n: usize) -> Groom {
    assert!(n >= 2, "resampling needs at least 2 points per strand");
    let offsets = groom.offsets();
    let mut points = Vec::with_capacity(groom.strand_count() * n);
    let mut positions = Vec::with_capacity(groom.strand_count());
    for s in groom.strands() {
        if s.is_empty() {
            positions.push(Vec::new());
            continue;
        }
        let at = arc_positions(s, n);
        points.extend(at.iter().map(|&a| sample(s, a, |p, q, t| p.lerp(q, t))));
        positions.push(at);
    }
    let per_vertex = |a: &Attr<f32>| -> Attr<f32> {
        match a {
            Attr::PerVertex(v) => {
                Attr::PerVertex(resample_values(v, offsets, &positions, |p, q, t| p + (q - p) * t))
            }
            other => other.clone(),
        }
    };
    let a = &groom.attrs;
    let attrs = StrandAttrs {
        width: a.width.as_ref().map(per_vertex),
        transparency: a.transparency.as_ref().map(per_vertex),
        color: a.color.as_ref().map(|c| match c {
            Attr::PerVertex(v) => Attr::PerVertex(resample_values(v, offsets, &positions, |p, q, t| {
                [0, 1, 2].map(|i| p[i] + (q[i] - p[i]) * t)
            })),
            other => other.clone(),
        }),
        ..a.clone()
    };
    // Empty strands stay empty.
    let counts = groom
        .counts()
        .iter()
        .map(|&c| if c == 0 { 0 } else { n as u32 })
        .collect();
    Groom::new(points, counts, attrs).expect("resampling keeps topology consistent")
}

fn resample_values<T: Copy>(
    values: &[T],
    offsets: &[usize],
    positions: &[Vec<(usize, f32)>],
    lerp: impl Fn(T, T, f32) -> T + Copy,
) -> Vec<T> {
    let mut out = Vec::new();
    for (i, at) in positions.iter().enumerate() {
        let v = &values[offsets[i]..offsets[i + 1]];
        out.extend(at.iter().map(|&a| sample(v, a, lerp)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_spacing_on_a_bent_line() {
        // An L shape of total length 4: 1 along x, then 3 along y.
        let g = Groom::new(
            vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 3.0, 0.0)],
            vec![3],
            StrandAttrs::default(),
        )
        .unwrap();
        let r = resample(&g, 5);
        let s = r.strand(0);
        assert_eq!(s[0], Vec3::ZERO);
        assert_eq!(s[1], Vec3::X);
        assert!((s[2] - Vec3::new(1.0, 1.0, 0.0)).length() < 1e-6);
        assert_eq!(s[4], Vec3::new(1.0, 3.0, 0.0));
        for w in s.windows(2) {
            assert!((w[0].distance(w[1]) - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn attributes_follow_and_degenerate_strands_survive() {
        let g = Groom::new(
            vec![Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0), Vec3::ONE],
            vec![2, 1],
            StrandAttrs {
                width: Some(Attr::PerVertex(vec![1.0, 3.0, 5.0])),
                ..Default::default()
            },
        )
        .unwrap();
        let r = resample(&g, 3);
        assert_eq!(r.counts(), &[3, 3]);
        assert_eq!(r.strand(1), &[Vec3::ONE; 3]);
        assert_eq!(
            r.attrs.width,
            Some(Attr::PerVertex(vec![1.0, 2.0, 3.0, 5.0, 5.0, 5.0]))
        );
    }

    #[test]
    fn length_is_preserved_on_a_circle() {
        // A densely sampled quarter circle keeps its length when resampled.
        let pts: Vec<Vec3> = (0..=200)
            .map(|i| {
                let a = std::f32::consts::FRAC_PI_2 * i as f32 / 200.0;
                Vec3::new(a.cos(), a.sin(), 0.0) * 10.0
            })
            .collect();
        let g = Groom::new(pts, vec![201], StrandAttrs::default()).unwrap();
        let before = g.lengths()[0];
        let after = resample(&g, 100).lengths()[0];
        assert!((before - after).abs() / before < 1e-3, "{before} vs {after}");
    }
}
