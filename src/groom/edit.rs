//! Groom editing (000 §5.9, Fig. 11: grooms edited to test how learned methods generalize):
//! operations applied in order, each deterministic, roots never moving off the scalp.
//!
//! - **length** `F`: every strand cut to F times its length (F < 1) or grown past its tip along
//!   its last direction (F > 1); curls keep their size. The particles are spread evenly along
//!   the new length (the point count stays), and the chords between them stretched to make the
//!   length exact.
//! - **mirror**: left ↔ right about the head's mid-plane x = 0 (tress space: Y up, face +Z);
//!   root UVs follow (u → 1 − u, 000 App. A's u is mirror-symmetric about x = 0).
//! - **comb** `(direction, strength)`: each segment turned towards `direction` by a share that
//!   grows from 0 at the root to `strength` at the tip; segment lengths kept.

use glam::Vec3;

use super::model::Groom;
use crate::error::{Error, Result};

#[derive(Clone, Debug, PartialEq)]
pub enum Edit {
    Length(f32),
    Mirror,
    Comb { direction: Vec3, strength: f32 },
}

impl Edit {
    /// Parses `length=0.5`, `mirror`, `comb=0,-1,0` or `comb=0,-1,0,0.5` (the form jobs use).
    pub fn parse(s: &str) -> Result<Edit> {
        let bad = |why: &str| Error::Invalid(format!("groom edit {s:?}: {why}"));
        let (op, arg) = s
            .split_once('=')
            .map(|(a, b)| (a.trim(), Some(b.trim())))
            .unwrap_or((s.trim(), None));
        let nums = |a: &str| -> Result<Vec<f32>> {
            a.split(',')
                .map(|x| {
                    x.trim()
                        .parse::<f32>()
                        .map_err(|_| bad("expected numbers separated by commas"))
                })
                .collect()
        };
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
            _ => return Err(bad("the edits are length=F, mirror, comb=x,y,z[,strength]")),
        };
        e.check().map_err(|w| bad(&w))?;
        Ok(e)
    }

    fn check(&self) -> std::result::Result<(), String> {
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
            _ => Ok(()),
        }
    }
}

/// `groom` with `edits` applied in order.
pub fn apply(groom: &Groom, edits: &[Edit]) -> Result<Groom> {
    let mut points = groom.points().to_vec();
    let mut attrs = groom.attrs.clone();
    let offsets = groom.offsets().to_vec();
    for e in edits {
        e.check()
            .map_err(|w| Error::Invalid(format!("groom edit: {w}")))?;
        match e {
            Edit::Length(f) => {
                let mut buf = Vec::new();
                for w in offsets.windows(2) {
                    let s = &mut points[w[0]..w[1]];
                    if s.len() < 2 {
                        continue;
                    }
                    let len = super::model::strand_length(s);
                    super::resample::sample_over(s, s.len(), len * f, &mut buf);
                    // Evenly spread samples are chords of the curve, a little shorter than it:
                    // stretch them along their directions to the exact new length.
                    let chords = super::model::strand_length(&buf);
                    let k = if chords > 0.0 { len * f / chords } else { 1.0 };
                    for i in 1..s.len() {
                        s[i] = s[i - 1] + (buf[i] - buf[i - 1]) * k;
                    }
                }
            }
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
            Edit::Comb { direction, strength } => {
                let d = direction.normalize();
                for w in offsets.windows(2) {
                    let s = &mut points[w[0]..w[1]];
                    let n = s.len();
                    if n < 2 {
                        continue;
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
            }
        }
    }
    Groom::new(points, groom.counts().to_vec(), attrs)
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
}
