//! The `.mss` mass-spring scene text format of the student project (004).
//!
//! One record per line, a type letter then whitespace-separated numbers:
//! `p x y z vx vy vz m` (also `v`, as the paper names it) a particle; `s a b k` a spring between
//! particles `a` and `b` (0-based, in `p` order) whose rest length is their initial distance;
//! `z a x y z k` a zero-length spring pinning particle `a` to an anchor that moves with the head;
//! `c x y z` the head (unit sphere) centre; `h vx vy vz` the head velocity. Blank lines and `#`
//! comments are accepted; the last `c`/`h` wins. Strands are the chains of `s` springs, rooted
//! at the pinned particle. The head radius (1.0) and gravity are not stored in the file.

use std::path::Path;

use crate::error::{Error, InFile, Result};
use crate::strands::{StrandAttrs, Strands};

#[derive(Clone, Debug, PartialEq)]
pub struct Particle {
    pub position: [f64; 3],
    pub velocity: [f64; 3],
    pub mass: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Spring {
    pub a: usize,
    pub b: usize,
    pub stiffness: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Pin {
    pub particle: usize,
    pub anchor: [f64; 3],
    pub stiffness: f64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct MssScene {
    pub particles: Vec<Particle>,
    pub springs: Vec<Spring>,
    pub pins: Vec<Pin>,
    pub head_center: [f64; 3],
    pub head_velocity: [f64; 3],
}

/// The head radius the original simulator hard-codes.
pub const HEAD_RADIUS: f64 = 1.0;

fn numbers<const N: usize>(tokens: &[&str], line: usize, what: &str) -> Result<[f64; N]> {
    if tokens.len() < N {
        return Err(Error::corrupt(format!(
            "line {line}: a {what} record needs {N} numbers, found {}",
            tokens.len()
        )));
    }
    let mut out = [0.0; N];
    for (i, t) in tokens[..N].iter().enumerate() {
        let v: f64 = t
            .parse()
            .map_err(|_| Error::corrupt(format!("line {line}: {t:?} is not a number")))?;
        if !v.is_finite() {
            return Err(Error::corrupt(format!(
                "line {line}: {t:?} is not a finite number"
            )));
        }
        out[i] = v;
    }
    Ok(out)
}

fn index(v: f64, line: usize) -> Result<usize> {
    if v < 0.0 || v.fract() != 0.0 || v > u32::MAX as f64 {
        return Err(Error::corrupt(format!(
            "line {line}: particle index {v} is not valid"
        )));
    }
    Ok(v as usize)
}

/// Parses a scene from text.
pub fn parse(data: &[u8]) -> Result<MssScene> {
    let text =
        std::str::from_utf8(data).map_err(|_| Error::corrupt("not an .mss scene: the file is not text"))?;
    let mut scene = MssScene::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let mut tokens = raw.split_ascii_whitespace();
        let Some(tag) = tokens.next() else { continue };
        let rest: Vec<&str> = tokens.collect();
        match tag {
            "p" | "v" => {
                let [x, y, z, vx, vy, vz, m] = numbers::<7>(&rest, line, "particle")?;
                if m <= 0.0 {
                    return Err(Error::corrupt(format!(
                        "line {line}: particle mass {m} must be positive"
                    )));
                }
                scene.particles.push(Particle {
                    position: [x, y, z],
                    velocity: [vx, vy, vz],
                    mass: m,
                });
            }
            "s" => {
                let [a, b, k] = numbers::<3>(&rest, line, "spring")?;
                scene.springs.push(Spring {
                    a: index(a, line)?,
                    b: index(b, line)?,
                    stiffness: k,
                });
            }
            "z" => {
                let [a, x, y, z, k] = numbers::<5>(&rest, line, "zero-length spring")?;
                scene.pins.push(Pin {
                    particle: index(a, line)?,
                    anchor: [x, y, z],
                    stiffness: k,
                });
            }
            "c" => scene.head_center = numbers::<3>(&rest, line, "head centre")?,
            "h" => scene.head_velocity = numbers::<3>(&rest, line, "head velocity")?,
            t if t.starts_with('#') => {}
            t => {
                return Err(Error::corrupt(format!(
                    "line {line}: unknown record type {t:?} (expected p, v, s, z, c or h)"
                )));
            }
        }
    }
    let n = scene.particles.len();
    for s in &scene.springs {
        if s.a >= n || s.b >= n || s.a == s.b {
            return Err(Error::corrupt(format!(
                "spring {}–{} does not join two of the {n} particles",
                s.a, s.b
            )));
        }
    }
    if let Some(p) = scene.pins.iter().find(|p| p.particle >= n) {
        return Err(Error::corrupt(format!(
            "zero-length spring on particle {} but there are {n} particles",
            p.particle
        )));
    }
    if n == 0 {
        return Err(Error::corrupt("the scene has no particles"));
    }
    Ok(scene)
}

impl MssScene {
    /// The strands: chains of springs, each starting at its pinned particle (or its lowest
    /// index when unpinned).
    pub fn strands(&self) -> Result<Strands> {
        let n = self.particles.len();
        let mut nbr = vec![Vec::new(); n];
        for s in &self.springs {
            nbr[s.a].push(s.b);
            nbr[s.b].push(s.a);
        }
        if let Some(v) = nbr.iter().position(|l| l.len() > 2) {
            return Err(Error::corrupt(format!(
                "particle {v} has more than two springs: not a strand"
            )));
        }
        let mut pinned = vec![false; n];
        for p in &self.pins {
            pinned[p.particle] = true;
        }
        let mut visited = vec![false; n];
        let mut points = Vec::with_capacity(n);
        let mut counts = Vec::new();
        // Pinned ends first, in particle order; then any other chain end.
        let starts = (0..n)
            .filter(|&v| pinned[v] && nbr[v].len() <= 1)
            .chain((0..n).filter(|&v| nbr[v].len() <= 1));
        for start in starts {
            if visited[start] {
                continue;
            }
            let (mut prev, mut cur, mut len) = (usize::MAX, start, 0u32);
            loop {
                visited[cur] = true;
                let p = self.particles[cur].position;
                points.push([p[0] as f32, p[1] as f32, p[2] as f32]);
                len += 1;
                match nbr[cur].iter().copied().find(|&w| w != prev && !visited[w]) {
                    Some(w) => {
                        prev = cur;
                        cur = w;
                    }
                    None => break,
                }
            }
            counts.push(len);
        }
        if visited.iter().any(|v| !v) {
            return Err(Error::corrupt("springs form a closed loop: not a strand"));
        }
        Strands::new(points, counts, StrandAttrs::default())
    }
}

impl MssScene {
    /// The scene as `.mss` text (`v`, `s`, `z`, `c`, `h` records, as the project's generator
    /// writes them); [`parse`] reads it back to the same scene (numbers in shortest round-trip
    /// form).
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut t = String::new();
        for p in &self.particles {
            let [x, y, z] = p.position;
            let [a, b, c] = p.velocity;
            let _ = writeln!(t, "v {x} {y} {z} {a} {b} {c} {}", p.mass);
        }
        for s in &self.springs {
            let _ = writeln!(t, "s {} {} {}", s.a, s.b, s.stiffness);
        }
        for p in &self.pins {
            let [x, y, z] = p.anchor;
            let _ = writeln!(t, "z {} {x} {y} {z} {}", p.particle, p.stiffness);
        }
        let [x, y, z] = self.head_center;
        let _ = writeln!(t, "c {x} {y} {z}");
        let [x, y, z] = self.head_velocity;
        let _ = writeln!(t, "h {x} {y} {z}");
        t
    }
}

/// Reads a scene from disk.
pub fn read(path: impl AsRef<Path>) -> Result<MssScene> {
    let path = path.as_ref();
    let data = std::fs::read(path).in_file(path)?;
    parse(&data).in_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENE: &str = "p 0 1 0 0 0 0 2\np 0.025 1 0 0 0 0 2\np 0.05 1 0 0 0 0 2\nv 0 0 1 0 0 0 2\np 0 0 1.025 0 0 0 2\n\
s 0 1 25\nz 0 0 1 0 200\ns 1 2 25\ns 4 3 25\nz 3 0 0 1 200\nc 0.5 -1.25 2\nh 0.25 0 0\n";

    #[test]
    fn parses_records_and_recovers_strands() {
        let s = parse(SCENE.as_bytes()).unwrap();
        assert_eq!(s.particles.len(), 5);
        assert_eq!(s.springs.len(), 3);
        assert_eq!(s.pins.len(), 2);
        assert_eq!(s.head_center, [0.5, -1.25, 2.0]);
        assert_eq!(s.head_velocity, [0.25, 0.0, 0.0]);
        let st = s.strands().unwrap();
        assert_eq!(st.counts, vec![3, 2]);
        // The second strand starts at its pinned particle (3), not at particle 4.
        assert_eq!(st.points[3], [0.0, 0.0, 1.0]);
    }

    #[test]
    fn text_round_trips() {
        let s = parse(SCENE.as_bytes()).unwrap();
        assert_eq!(parse(s.to_text().as_bytes()).unwrap(), s);
    }

    #[test]
    fn bad_records_name_the_line() {
        let e = parse(b"p 0 0 0 0 0 0 1\ns 0 9 1\n").unwrap_err().to_string();
        assert!(e.contains("does not join"), "{e}");
        let e = parse(b"p 0 0 0\n").unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
        let e = parse(b"q 1 2 3\n").unwrap_err().to_string();
        assert!(e.contains("unknown record"), "{e}");
        assert!(parse(&[0xff, 0xfe]).is_err());
        assert!(parse(b"").is_err());
    }
}
