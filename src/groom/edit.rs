//! Groom editing (000 §5.9, Fig. 11: grooms edited to test how learned methods generalize):
//! operations applied in order, each deterministic, roots never moving off the scalp. Written
//! `op=arguments` (jobs' `[groom] edits`, `tress groom edit --edit`); lengths in cm, regions
//! and partings in root UV (000 App. A, [`super::root_uvs`]).
//!
//! - **length=F**: every strand cut to F times its length (F < 1) or grown past its tip along
//!   its last direction (F > 1); curls keep their size. The particles are spread evenly along
//!   the new length (the point count stays), and the chords between them stretched to make the
//!   length exact.
//! - **mirror**: left ↔ right about the head's mid-plane x = 0 (tress space: Y up, face +Z);
//!   root UVs follow (u → 1 − u, 000 App. A's u is mirror-symmetric about x = 0).
//! - **comb=X,Y,Z[,S]**: each segment turned towards a direction by a share that grows from 0
//!   at the root to S (default 1) at the tip; segment lengths kept.
//! - **curl=R,F**: a helix of radius R wound F times per cm around each strand (its frame
//!   carried along the strand by parallel transport), growing from the root over the first
//!   R cm; the strand keeps its length (a curled strand reaches less far).
//! - **straighten=S[,W]**: each point moved the share S (0–1) of the way to the mean of the
//!   strand's points within W cm of arc length of it (default 3: waves and curls shorter than
//!   about 2W flatten), then the strand brought back to its length.
//! - **parting=U[,W[,S]]**: a parting along the root-UV line u = U: strands rooted within W of
//!   it (default 0.15) are combed away from it, towards +x where u < U (000 App. A's u grows
//!   towards −x) and −x beyond, by S (default 0.8) at the line, falling to 0 at W.
//! - **copy=U0,V0,U1,V1,DU,DV**: the strands rooted in the root-UV rectangle [U0, U1] × [V0, V1]
//!   moved by (DU, DV) take the shape of the source strand rooted nearest to their own root
//!   less (DU, DV): its root-relative points, turned by the rotation between the two roots'
//!   directions from the scalp's centre, resampled to the target's point count and length ratio
//!   kept at 1 (the target keeps the source's length).
//! - any of length, comb, curl, straighten and parting followed by **@U0,V0,U1,V1** applies only
//!   to the strands rooted in that root-UV rectangle (per-region edits).

use glam::{Quat, Vec2, Vec3};

use super::model::Groom;
use crate::error::{Error, Result};

/// A root-UV rectangle `[u0, v0, u1, v1]`.
pub type UvRect = [f32; 4];

fn inside(r: &UvRect, uv: Vec2) -> bool {
    uv.x >= r[0] && uv.x <= r[2] && uv.y >= r[1] && uv.y <= r[3]
}

#[derive(Clone, Debug, PartialEq)]
pub enum Edit {
    Length(f32),
    Mirror,
    Comb {
        direction: Vec3,
        strength: f32,
    },
    Curl {
        radius: f32,
        frequency: f32,
    },
    Straighten {
        share: f32,
        window: f32,
    },
    Parting {
        u: f32,
        width: f32,
        strength: f32,
    },
    Copy {
        from: UvRect,
        shift: Vec2,
    },
    /// An edit applied only to the strands rooted in a root-UV rectangle.
    Within {
        region: UvRect,
        edit: Box<Edit>,
    },
}

impl Edit {
    /// Parses the `op=arguments[@u0,v0,u1,v1]` form (see the module's list).
    pub fn parse(s: &str) -> Result<Edit> {
        let bad = |why: &str| Error::Invalid(format!("groom edit {s:?}: {why}"));
        let nums = |a: &str| -> Result<Vec<f32>> {
            a.split(',')
                .map(|x| {
                    x.trim()
                        .parse::<f32>()
                        .map_err(|_| bad("expected numbers separated by commas"))
                })
                .collect()
        };
        let (body, region) = match s.split_once('@') {
            Some((b, r)) => {
                let v = nums(r)?;
                let r: UvRect = v.try_into().map_err(|_| bad("a region is @u0,v0,u1,v1"))?;
                (b, Some(r))
            }
            None => (s, None),
        };
        let (op, arg) = body
            .split_once('=')
            .map(|(a, b)| (a.trim(), Some(b.trim())))
            .unwrap_or((body.trim(), None));
        let e = match (op, arg) {
            ("length", Some(a)) => Edit::Length(*nums(a)?.first().ok_or_else(|| bad("no factor"))?),
            ("mirror", None) => Edit::Mirror,
            ("comb", Some(a)) => {
                let v = nums(a)?;
                let (d, k) = match v.as_slice() {
                    [x, y, z] => (Vec3::new(*x, *y, *z), 1.0),
                    [x, y, z, k] => (Vec3::new(*x, *y, *z), *k),
                    _ => return Err(bad("comb takes x,y,z or x,y,z,strength")),
                };
                Edit::Comb {
                    direction: d,
                    strength: k,
                }
            }
            ("curl", Some(a)) => match nums(a)?.as_slice() {
                [r, f] => Edit::Curl {
                    radius: *r,
                    frequency: *f,
                },
                _ => return Err(bad("curl takes radius,turns_per_cm")),
            },
            ("straighten", Some(a)) => match nums(a)?.as_slice() {
                [k] => Edit::Straighten {
                    share: *k,
                    window: 3.0,
                },
                [k, w] => Edit::Straighten {
                    share: *k,
                    window: *w,
                },
                _ => return Err(bad("straighten takes share[,window_cm]")),
            },
            ("parting", Some(a)) => {
                let v = nums(a)?;
                let (u, width, strength) = match v.as_slice() {
                    [u] => (*u, 0.15, 0.8),
                    [u, w] => (*u, *w, 0.8),
                    [u, w, k] => (*u, *w, *k),
                    _ => return Err(bad("parting takes u[,width[,strength]]")),
                };
                Edit::Parting { u, width, strength }
            }
            ("copy", Some(a)) => match nums(a)?.as_slice() {
                [u0, v0, u1, v1, du, dv] => Edit::Copy {
                    from: [*u0, *v0, *u1, *v1],
                    shift: Vec2::new(*du, *dv),
                },
                _ => return Err(bad("copy takes u0,v0,u1,v1,du,dv")),
            },
            _ => {
                return Err(bad(
                    "the edits are length=F, mirror, comb=x,y,z[,strength], curl=radius,turns_per_cm, straighten=S, parting=u[,width[,strength]], copy=u0,v0,u1,v1,du,dv, each but mirror and copy optionally @u0,v0,u1,v1",
                ));
            }
        };
        let e = match region {
            Some(region) => Edit::Within {
                region,
                edit: Box::new(e),
            },
            None => e,
        };
        e.check().map_err(|w| bad(&w))?;
        Ok(e)
    }

    fn check(&self) -> std::result::Result<(), String> {
        let rect_ok = |r: &UvRect| r.iter().all(|v| v.is_finite()) && r[0] < r[2] && r[1] < r[3];
        match self {
            Edit::Length(f) if !(f.is_finite() && *f > 0.0 && *f <= 100.0) => {
                Err(format!("length factor {f} must be in (0, 100]"))
            }
            Edit::Comb { direction, strength }
                if !(direction.is_finite()
                    && direction.length() > 1e-6
                    && strength.is_finite()
                    && (0.0..=1.0).contains(strength)) =>
            {
                Err("comb needs a non-zero direction and a strength in [0, 1]".into())
            }
            Edit::Curl { radius, frequency }
                if !(radius.is_finite()
                    && *radius > 0.0
                    && *radius <= 10.0
                    && frequency.is_finite()
                    && *frequency > 0.0
                    && *frequency <= 5.0) =>
            {
                Err("curl needs a radius in (0, 10] cm and turns per cm in (0, 5]".into())
            }
            Edit::Straighten { share, window }
                if !(share.is_finite()
                    && (0.0..=1.0).contains(share)
                    && window.is_finite()
                    && *window > 0.0
                    && *window <= 100.0) =>
            {
                Err("straighten needs a share in [0, 1] and a window in (0, 100] cm".into())
            }
            Edit::Parting { u, width, strength }
                if !(u.is_finite()
                    && width.is_finite()
                    && *width > 0.0
                    && *width <= 1.0
                    && strength.is_finite()
                    && (0.0..=1.0).contains(strength)) =>
            {
                Err("parting needs a finite u, a width in (0, 1] and a strength in [0, 1]".into())
            }
            Edit::Copy { from, shift } if !(rect_ok(from) && shift.is_finite()) => {
                Err("copy needs a rectangle u0 < u1, v0 < v1 and a finite shift".into())
            }
            Edit::Within { region, edit } => {
                if !rect_ok(region) {
                    return Err("a region needs u0 < u1 and v0 < v1".into());
                }
                match **edit {
                    Edit::Mirror | Edit::Copy { .. } | Edit::Within { .. } => {
                        Err("mirror and copy apply to the whole groom (no @region)".into())
                    }
                    ref e => e.check(),
                }
            }
            _ => Ok(()),
        }
    }
}

/// Spreads `s` evenly over `len` of its arc length (continuing past its tip along its last
/// segment) and stretches the chords between the new points to make the length exact.
fn to_length(s: &mut [Vec3], len: f32, buf: &mut Vec<Vec3>) {
    super::resample::sample_over(s, s.len(), len, buf);
    let chords = super::model::strand_length(buf);
    let k = if chords > 0.0 { len / chords } else { 1.0 };
    for i in 1..s.len() {
        s[i] = s[i - 1] + (buf[i] - buf[i - 1]) * k;
    }
}

/// Turns each segment of `s` towards `d` by a share growing from 0 at the root to `strength`
/// at the tip, keeping segment lengths.
fn comb(s: &mut [Vec3], d: Vec3, strength: f32) {
    let n = s.len();
    if n < 2 {
        return;
    }
    let segs: Vec<Vec3> = s.windows(2).map(|q| q[1] - q[0]).collect();
    for (i, v) in segs.iter().enumerate() {
        let l = v.length();
        let share = strength * (i + 1) as f32 / (n - 1) as f32;
        let dir = if l > 1e-9 { *v / l } else { d };
        let turned = dir.lerp(d, share).normalize_or(d);
        s[i + 1] = s[i] + turned * l;
    }
}

/// Winds a helix of `radius`, `frequency` turns per cm around `s`, then brings it back to its
/// length.
fn curl(s: &mut [Vec3], radius: f32, frequency: f32, buf: &mut Vec<Vec3>) {
    let n = s.len();
    if n < 2 {
        return;
    }
    let len = super::model::strand_length(s);
    let tangent = |i: usize| (s[(i + 1).min(n - 1)] - s[i.saturating_sub(1)]).normalize_or(Vec3::NEG_Y);
    // A normal carried along by parallel transport (rotating it with the tangent).
    let t0 = tangent(0);
    let mut normal = t0.any_orthonormal_vector();
    let mut prev = t0;
    let mut out = Vec::with_capacity(n);
    let mut arc = 0.0f32;
    for i in 0..n {
        if i > 0 {
            arc += s[i].distance(s[i - 1]);
        }
        let t = tangent(i);
        normal = (Quat::from_rotation_arc(prev, t) * normal)
            .reject_from(t)
            .normalize_or(normal);
        prev = t;
        let binormal = t.cross(normal);
        let phase = std::f32::consts::TAU * frequency * arc;
        let ramp = (arc / radius).min(1.0);
        out.push(s[i] + radius * ramp * (phase.cos() * normal + phase.sin() * binormal));
    }
    out[0] = s[0];
    s.copy_from_slice(&out);
    to_length(s, len, buf);
}

/// Moves each point of `s` the share `k` to the mean of the points within `window` cm of arc
/// length of it, then brings it back to its length.
fn straighten(s: &mut [Vec3], k: f32, window: f32, buf: &mut Vec<Vec3>) {
    let n = s.len();
    if n < 3 {
        return;
    }
    let len = super::model::strand_length(s);
    let src = s.to_vec();
    let mut arc = vec![0.0f32; n];
    for i in 1..n {
        arc[i] = arc[i - 1] + src[i].distance(src[i - 1]);
    }
    let (mut a, mut b) = (0usize, 0usize);
    for i in 1..n {
        while arc[i] - arc[a] > window {
            a += 1;
        }
        while b + 1 < n && arc[b + 1] - arc[i] <= window {
            b += 1;
        }
        let mean = src[a..=b].iter().sum::<Vec3>() / (b - a + 1) as f32;
        s[i] = src[i].lerp(mean, k);
    }
    to_length(s, len, buf);
}

/// `groom` with `edits` applied in order.
pub fn apply(groom: &Groom, edits: &[Edit]) -> Result<Groom> {
    let mut points = groom.points().to_vec();
    let mut attrs = groom.attrs.clone();
    let offsets = groom.offsets().to_vec();
    let counts = groom.counts().to_vec();
    for e in edits {
        e.check()
            .map_err(|w| Error::Invalid(format!("groom edit: {w}")))?;
        // Root UVs as they are now (mirror changes them), for the edits that use them.
        let uvs = match e {
            Edit::Within { .. } | Edit::Parting { .. } | Edit::Copy { .. } => {
                let roots: Vec<Vec3> = offsets[..offsets.len() - 1].iter().map(|&o| points[o]).collect();
                super::scalp_uv::root_uvs_of(&roots, attrs.root_uv.as_deref())
            }
            _ => Vec::new(),
        };
        let (region, op) = match e {
            Edit::Within { region, edit } => (Some(*region), &**edit),
            e => (None, e),
        };
        let chosen = |s: usize| region.is_none_or(|r| inside(&r, uvs[s]));
        let mut buf = Vec::new();
        match op {
            Edit::Mirror => {
                for p in &mut points {
                    p.x = -p.x;
                }
                if let Some(uv) = &mut attrs.root_uv {
                    for t in uv.iter_mut() {
                        t[0] = 1.0 - t[0];
                    }
                }
            }
            Edit::Copy { from, shift } => copy(&mut points, &offsets, &uvs, from, *shift, &mut buf),
            _ => {
                for (sidx, w) in offsets.windows(2).enumerate() {
                    if !chosen(sidx) {
                        continue;
                    }
                    let s = &mut points[w[0]..w[1]];
                    if s.len() < 2 {
                        continue;
                    }
                    match op {
                        Edit::Length(f) => {
                            let len = super::model::strand_length(s);
                            to_length(s, len * f, &mut buf);
                        }
                        Edit::Comb { direction, strength } => comb(s, direction.normalize(), *strength),
                        Edit::Curl { radius, frequency } => curl(s, *radius, *frequency, &mut buf),
                        Edit::Straighten { share, window } => straighten(s, *share, *window, &mut buf),
                        Edit::Parting { u, width, strength } => {
                            let d = uvs[sidx].x - u;
                            let share = strength * (1.0 - d.abs() / width);
                            if share > 0.0 {
                                let away = if d < 0.0 { Vec3::X } else { Vec3::NEG_X };
                                comb(s, away, share);
                            }
                        }
                        Edit::Mirror | Edit::Copy { .. } | Edit::Within { .. } => unreachable!("checked"),
                    }
                }
            }
        }
    }
    Groom::new(points, counts, attrs)
}

/// The copy edit: see the module's list.
fn copy(
    points: &mut [Vec3],
    offsets: &[usize],
    uvs: &[Vec2],
    from: &UvRect,
    shift: Vec2,
    buf: &mut Vec<Vec3>,
) {
    let roots: Vec<Vec3> = offsets[..offsets.len() - 1].iter().map(|&o| points[o]).collect();
    let centre = super::scalp_center(&roots);
    let sources: Vec<usize> = (0..uvs.len()).filter(|&s| inside(from, uvs[s])).collect();
    if sources.is_empty() {
        return;
    }
    let to = [
        from[0] + shift.x,
        from[1] + shift.y,
        from[2] + shift.x,
        from[3] + shift.y,
    ];
    let original = points.to_vec();
    for t in (0..uvs.len()).filter(|&t| inside(&to, uvs[t])) {
        let want = uvs[t] - shift;
        // The nearest source root in UV (ties: the lower index).
        let s = *sources
            .iter()
            .min_by(|a, b| {
                uvs[**a]
                    .distance_squared(want)
                    .total_cmp(&uvs[**b].distance_squared(want))
                    .then(a.cmp(b))
            })
            .expect("sources");
        if s == t {
            continue;
        }
        let src = &original[offsets[s]..offsets[s + 1]];
        let (t0, t1) = (offsets[t], offsets[t + 1]);
        if src.len() < 2 || t1 - t0 < 2 {
            continue;
        }
        let turn = Quat::from_rotation_arc(
            (src[0] - centre).normalize_or(Vec3::Y),
            (points[t0] - centre).normalize_or(Vec3::Y),
        );
        super::resample::sample_over(src, t1 - t0, super::model::strand_length(src), buf);
        let root = points[t0];
        for (i, p) in buf.iter().enumerate() {
            points[t0 + i] = root + turn * (*p - src[0]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groom::{GroomParams, Style, generate, strand_length};

    fn groom() -> Groom {
        generate(&GroomParams {
            strands: 300,
            points: 20,
            ..GroomParams::for_style(Style::Curly)
        })
        .unwrap()
    }

    #[test]
    fn length_cuts_and_grows_exactly_and_keeps_roots() {
        let g = groom();
        for f in [0.5f32, 1.7] {
            let e = apply(&g, &[Edit::Length(f)]).unwrap();
            for (a, b) in g.strands().zip(e.strands()) {
                assert_eq!(a[0], b[0]);
                assert_eq!(a.len(), b.len());
                let (la, lb) = (strand_length(a), strand_length(b));
                assert!((lb / (la * f) - 1.0).abs() < 1e-4, "{f}: {lb} vs {}", la * f);
            }
        }
        // Cutting a straight groom to half keeps the first half: the new tip lies on the old
        // strand.
        let g = generate(&GroomParams {
            strands: 50,
            points: 20,
            ..GroomParams::for_style(Style::Straight)
        })
        .unwrap();
        let e = apply(&g, &[Edit::Length(0.5)]).unwrap();
        let (a, b) = (g.strand(7), e.strand(7));
        let tip = b[b.len() - 1];
        let nearest = a.windows(2).map(|w| {
            let d = w[1] - w[0];
            let t = ((tip - w[0]).dot(d) / d.length_squared().max(1e-12)).clamp(0.0, 1.0);
            tip.distance(w[0] + d * t)
        });
        let off = nearest.fold(f32::MAX, f32::min);
        assert!(off < 0.05, "{off} cm");
    }

    #[test]
    fn mirror_twice_is_the_groom_and_comb_keeps_lengths() {
        let g = groom();
        let m = apply(&g, &[Edit::Mirror]).unwrap();
        assert_eq!(m.strand(3)[0].x, -g.strand(3)[0].x);
        let back = apply(&m, &[Edit::Mirror]).unwrap();
        assert_eq!(back.points(), g.points());
        // Combed fully down: segments keep their lengths and the last one points down.
        let c = apply(
            &g,
            &[Edit::Comb {
                direction: Vec3::NEG_Y,
                strength: 1.0,
            }],
        )
        .unwrap();
        for (a, b) in g.strands().zip(c.strands()) {
            assert_eq!(a[0], b[0]);
            for i in 1..a.len() {
                let (la, lb) = (a[i].distance(a[i - 1]), b[i].distance(b[i - 1]));
                assert!((la - lb).abs() < 1e-4 * la.max(1.0));
            }
            let last = (b[b.len() - 1] - b[b.len() - 2]).normalize();
            assert!(last.dot(Vec3::NEG_Y) > 0.999, "{last:?}");
        }
        // Deterministic.
        assert_eq!(
            apply(&g, &[Edit::Length(0.7), Edit::Mirror]).unwrap().points(),
            apply(&g, &[Edit::Length(0.7), Edit::Mirror]).unwrap().points()
        );
        // Parsing and bad values.
        assert_eq!(Edit::parse("length=0.5").unwrap(), Edit::Length(0.5));
        assert_eq!(
            Edit::parse("comb=0,-1,0,0.5").unwrap(),
            Edit::Comb {
                direction: Vec3::NEG_Y,
                strength: 0.5
            }
        );
        assert!(Edit::parse("length=-1").is_err());
        assert!(Edit::parse("curl=2").is_err());
    }

    /// Vertical straight strands `spacing` cm between points (roots on a line across the
    /// scalp, UVs from 0 to 1 in u).
    fn vertical(strands: usize, points: usize, spacing: f32) -> Groom {
        let mut pts = Vec::new();
        let mut uv = Vec::new();
        for s in 0..strands {
            let x = s as f32 - strands as f32 / 2.0;
            for i in 0..points {
                pts.push(Vec3::new(x, 10.0 - spacing * i as f32, 0.0));
            }
            uv.push([s as f32 / (strands - 1) as f32, 0.5]);
        }
        let mut g = Groom::new(pts, vec![points as u32; strands], Default::default()).unwrap();
        g.attrs.root_uv = Some(uv);
        g
    }

    /// A helix wound around a straight strand: each point lies the radius off the old line once
    /// the ramp has grown, the length stays, and the tip comes nearer the root.
    #[test]
    fn curl_winds_a_helix_of_the_radius_and_keeps_the_length() {
        // 20 cm strands of 201 points: 40 points per turn of the helix.
        let g = vertical(3, 201, 0.1);
        let c = apply(&g, &[Edit::parse("curl=1.5,0.25").unwrap()]).unwrap();
        for (a, b) in g.strands().zip(c.strands()) {
            assert_eq!(a[0], b[0]);
            assert!((strand_length(b) / strand_length(a) - 1.0).abs() < 1e-4);
            for p in &b[60..] {
                let off = Vec2::new(p.x - a[0].x, p.z - a[0].z).length();
                assert!((off - 1.5).abs() < 0.08, "{off} cm off the axis");
            }
            assert!(b[b.len() - 1].distance(b[0]) < a[a.len() - 1].distance(a[0]) - 1.0);
        }
        // Straightening the curled strands brings their tips back down, lengths kept.
        let s = apply(&c, &[Edit::parse("straighten=1").unwrap()]).unwrap();
        let reach = |g: &Groom| g.strands().map(|s| s[0].y - s[s.len() - 1].y).sum::<f32>();
        assert!(reach(&s) > reach(&c) + 1.0, "{} vs {}", reach(&s), reach(&c));
        for (a, b) in c.strands().zip(s.strands()) {
            assert!((strand_length(b) / strand_length(a) - 1.0).abs() < 1e-4);
        }
    }

    /// A parting at u = 0.5 combs the strands on each side away from it, most at the line, and
    /// leaves strands farther than its width alone; a region edit touches only its strands.
    #[test]
    fn parting_and_regions_change_only_their_strands() {
        let g = vertical(11, 12, 1.0);
        let p = apply(&g, &[Edit::parse("parting=0.5,0.35,1").unwrap()]).unwrap();
        let dx = |s: usize| p.strand(s)[11].x - g.strand(s)[11].x;
        // u < 0.5 (000 App. A: +x side) turns towards +x, u ≥ 0.5 towards −x.
        assert!(dx(4) > 1.0 && dx(3) > 0.0 && dx(3) < dx(4), "{} {}", dx(3), dx(4));
        assert!(
            dx(5) < -1.0 && dx(6) < 0.0 && dx(6) > dx(5),
            "{} {}",
            dx(5),
            dx(6)
        );
        for s in [0, 1, 9, 10] {
            assert_eq!(p.strand(s), g.strand(s));
        }
        let r = apply(&g, &[Edit::parse("length=0.5@0,0,0.45,1").unwrap()]).unwrap();
        for s in 0..11 {
            let want = if s <= 4 { 0.5 } else { 1.0 };
            let k = strand_length(r.strand(s)) / strand_length(g.strand(s));
            assert!((k - want).abs() < 1e-4, "strand {s}: {k}");
        }
    }

    /// Copying the strands of u ≤ 0.2 to u + 0.6: each target takes its source's length; roots
    /// and the strands outside the target region stay.
    #[test]
    fn copy_pastes_a_regions_shapes() {
        let mut g = vertical(11, 12, 1.0);
        // Source strands: cut and combed differently from the rest.
        g = apply(&g, &[Edit::parse("comb=1,0,1,0.7@0,0,0.21,1").unwrap()]).unwrap();
        g = apply(&g, &[Edit::parse("length=0.4@0,0,0.21,1").unwrap()]).unwrap();
        let c = apply(&g, &[Edit::parse("copy=0,0,0.21,1,0.6,0").unwrap()]).unwrap();
        for (src, dst) in [(0usize, 6usize), (1, 7), (2, 8)] {
            let (a, b) = (g.strand(src), c.strand(dst));
            assert_eq!(b[0], g.strand(dst)[0], "roots stay");
            let k = strand_length(b) / strand_length(a);
            assert!((k - 1.0).abs() < 1e-3, "{k}");
        }
        // Strands outside the target region are untouched.
        for s in [0, 3, 4, 5, 9, 10] {
            assert_eq!(c.strand(s), g.strand(s));
        }
        assert!(Edit::parse("mirror@0,0,1,1").is_err());
        assert!(Edit::parse("copy=0,0,0.5,1,0.2").is_err());
        assert!(Edit::parse("curl=0,1").is_err());
        assert!(Edit::parse("length=0.5@0.5,0,0.2,1").is_err());
    }
}
