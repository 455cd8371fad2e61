//! Velocities of a stream of frames for motion blur, as every cache writer stores them: central
//! differences, one-sided at the first and last frame (zero for a single frame), in units per
//! second. A frame is held back until its successor arrives, so at most three are in memory and
//! their buffers are reused.

/// Positions of one frame and its frame number.
type Held = (f64, Vec<[f32; 3]>);

/// A frame ready to write: its number, positions and velocities.
pub type Ready<'a> = (f64, &'a [[f32; 3]], &'a [[f32; 3]]);

pub struct CentralDifference {
    /// Seconds per frame.
    dt: f32,
    previous: Option<Held>,
    pending: Option<Held>,
    spare: Vec<[f32; 3]>,
    velocities: Vec<[f32; 3]>,
}

impl CentralDifference {
    pub fn new(fps: f64) -> CentralDifference {
        CentralDifference {
            dt: 1.0 / fps as f32,
            previous: None,
            pending: None,
            spare: Vec::new(),
            velocities: Vec::new(),
        }
    }

    /// (a − b) / ((frame_a − frame_b) · dt), into the velocity buffer.
    fn difference(&mut self, a: &Held, b: &Held) {
        let span = (a.0 - b.0) as f32 * self.dt;
        self.velocities.clear();
        if span > 0.0 {
            self.velocities.extend(
                a.1.iter()
                    .zip(&b.1)
                    .map(|(p, q)| [0, 1, 2].map(|k| (p[k] - q[k]) / span)),
            );
        } else {
            self.velocities.resize(a.1.len(), [0.0; 3]);
        }
    }

    /// Takes frame `frame`; returns the frame before it (its number, positions and velocities)
    /// once this one makes its central difference possible.
    pub fn push(&mut self, frame: f64, positions: &[[f32; 3]]) -> Option<Ready<'_>> {
        let mut buf = std::mem::take(&mut self.spare);
        buf.clear();
        buf.extend_from_slice(positions);
        let current = (frame, buf);
        let Some(pending) = self.pending.take() else {
            self.pending = Some(current);
            return None;
        };
        let back = self.previous.take();
        self.difference(&current, back.as_ref().unwrap_or(&pending));
        if let Some((_, b)) = back {
            self.spare = b;
        }
        self.pending = Some(current);
        let p = self.previous.insert(pending);
        Some((p.0, &p.1, &self.velocities))
    }

    /// The last frame held back, with its backward difference.
    pub fn finish(&mut self) -> Option<Ready<'_>> {
        let last = self.pending.take()?;
        let back = self.previous.take();
        self.difference(&last, back.as_ref().unwrap_or(&last));
        let p = self.previous.insert(last);
        Some((p.0, &p.1, &self.velocities))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn central_inside_one_sided_at_the_ends() {
        let mut c = CentralDifference::new(10.0);
        let x = |v: f32| vec![[v, 0.0, 0.0]];
        let mut got = Vec::new();
        for (f, v) in [(1.0, 0.0f32), (2.0, 1.0), (3.0, 4.0)] {
            if let Some((n, p, vel)) = c.push(f, &x(v)) {
                got.push((n, p[0][0], vel[0][0]));
            }
        }
        let (n, p, vel) = c.finish().unwrap();
        got.push((n, p[0][0], vel[0][0]));
        // 0.1 s per frame: forward (1 − 0)/0.1, central (4 − 0)/0.2, backward (4 − 1)/0.1.
        let want = [(1.0, 0.0, 10.0), (2.0, 1.0, 20.0), (3.0, 4.0, 30.0)];
        assert_eq!(got.len(), 3);
        for (g, w) in got.iter().zip(want) {
            assert!(g.0 == w.0 && g.1 == w.1 && (g.2 - w.2).abs() < 1e-4, "{got:?}");
        }
        // One frame: zero velocity.
        let mut c = CentralDifference::new(24.0);
        assert!(c.push(1.0, &x(5.0)).is_none());
        assert_eq!(c.finish().unwrap().2, &[[0.0; 3]]);
        assert!(c.finish().is_none());
    }
}
