//! Time samplings: how a property's sample index maps to time (AbcCoreAbstract `TimeSampling`).
//!
//! Serialized per sampling as `u32 max samples, f64 time per cycle, u32 stored times, f64
//! times[…]`. Uniform: one stored time (the start) and Δt per cycle; cyclic: several times in
//! the first cycle; acyclic: every time, with time per cycle set to f64::MAX / 32.

use crate::bytes::ByteReader;
use crate::error::{Error, Result};

pub const ACYCLIC_TIME_PER_CYCLE: f64 = f64::MAX / 32.0;

#[derive(Clone, Debug, PartialEq)]
pub enum TimeSamplingKind {
    Uniform { time_per_cycle: f64, start: f64 },
    Cyclic { time_per_cycle: f64, times: Vec<f64> },
    Acyclic { times: Vec<f64> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimeSampling {
    pub kind: TimeSamplingKind,
    /// Largest sample count of the properties using this sampling (written at close).
    pub max_samples: u32,
}

impl TimeSampling {
    /// The identity sampling every archive has at index 0.
    pub fn identity() -> Self {
        TimeSampling::uniform(1.0, 0.0)
    }

    pub fn uniform(time_per_cycle: f64, start: f64) -> Self {
        TimeSampling {
            kind: TimeSamplingKind::Uniform {
                time_per_cycle,
                start,
            },
            max_samples: 0,
        }
    }

    /// Time of sample `index`.
    pub fn time(&self, index: usize) -> f64 {
        match &self.kind {
            TimeSamplingKind::Uniform {
                time_per_cycle,
                start,
            } => start + time_per_cycle * index as f64,
            TimeSamplingKind::Cyclic {
                time_per_cycle,
                times,
            } => {
                let n = times.len();
                times[index % n] + time_per_cycle * (index / n) as f64
            }
            TimeSamplingKind::Acyclic { times } => times
                .get(index)
                .copied()
                .unwrap_or_else(|| *times.last().unwrap_or(&0.0)),
        }
    }

    /// Frames per second of a uniform sampling.
    pub fn fps(&self) -> Option<f64> {
        match self.kind {
            TimeSamplingKind::Uniform { time_per_cycle, .. } if time_per_cycle > 0.0 => {
                Some(1.0 / time_per_cycle)
            }
            _ => None,
        }
    }

    /// The sample index nearest to time `t` among `n` samples (ties to the earlier one).
    pub fn nearest_index(&self, t: f64, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let floor = self.floor_index(t, n);
        if floor + 1 < n && (self.time(floor + 1) - t).abs() < (t - self.time(floor)).abs() {
            floor + 1
        } else {
            floor
        }
    }

    /// The last sample index whose time is at or before `t` (within 1e-5 s).
    pub fn floor_index(&self, t: f64, n: usize) -> usize {
        const EPS: f64 = 1e-5;
        if n <= 1 || t <= self.time(0) {
            return 0;
        }
        if t >= self.time(n - 1) {
            return n - 1;
        }
        let (mut lo, mut hi) = (0usize, n - 1);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.time(mid) <= t + EPS {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        let (tpc, times): (f64, Vec<f64>) = match &self.kind {
            TimeSamplingKind::Uniform {
                time_per_cycle,
                start,
            } => (*time_per_cycle, vec![*start]),
            TimeSamplingKind::Cyclic {
                time_per_cycle,
                times,
            } => (*time_per_cycle, times.clone()),
            TimeSamplingKind::Acyclic { times } => (ACYCLIC_TIME_PER_CYCLE, times.clone()),
        };
        out.extend_from_slice(&self.max_samples.to_le_bytes());
        out.extend_from_slice(&tpc.to_le_bytes());
        out.extend_from_slice(&(times.len() as u32).to_le_bytes());
        for t in times {
            out.extend_from_slice(&t.to_le_bytes());
        }
    }

    /// The time-per-cycle and stored times as they enter property hashes.
    pub fn hash_bytes(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.encode(&mut v);
        v.drain(..4);
        v
    }

    /// Whether two samplings are the same for the library's de-duplication of samplings.
    pub fn same_as(&self, other: &TimeSampling) -> bool {
        match (&self.kind, &other.kind) {
            (
                TimeSamplingKind::Uniform {
                    time_per_cycle: a,
                    start: s,
                },
                TimeSamplingKind::Uniform {
                    time_per_cycle: b,
                    start: t,
                },
            ) => (a - b).abs() < 1e-9 && s == t,
            (a, b) => a == b,
        }
    }

    /// Parses the time-samplings blob of an archive.
    pub fn decode_all(blob: &[u8]) -> Result<Vec<TimeSampling>> {
        let mut r = ByteReader::new(blob);
        let mut out = Vec::new();
        while r.remaining() > 0 {
            let max_samples = r.u32("time sampling")?;
            let tpc = f64::from_le_bytes(r.array("time sampling")?);
            let n = r.u32("time sampling")? as usize;
            if n == 0 {
                return Err(Error::corrupt("a time sampling stores no times"));
            }
            r.expect(n as u64, 8, "time sampling times")?;
            let times: Vec<f64> = (0..n)
                .map(|_| r.array::<8>("time").map(f64::from_le_bytes))
                .collect::<Result<_>>()?;
            if times.iter().any(|t| !t.is_finite()) || !tpc.is_finite() {
                return Err(Error::corrupt("a time sampling holds a non-finite time"));
            }
            let kind = if tpc.to_bits() == ACYCLIC_TIME_PER_CYCLE.to_bits() {
                TimeSamplingKind::Acyclic { times }
            } else if n == 1 {
                if tpc <= 0.0 {
                    return Err(Error::corrupt(format!("a uniform time sampling has step {tpc}")));
                }
                TimeSamplingKind::Uniform {
                    time_per_cycle: tpc,
                    start: times[0],
                }
            } else {
                TimeSamplingKind::Cyclic {
                    time_per_cycle: tpc,
                    times,
                }
            };
            out.push(TimeSampling { kind, max_samples });
        }
        if out.is_empty() {
            return Err(Error::corrupt("the archive has no time samplings"));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_blob_round_trip() {
        // ref_curves.abc: ts0 identity (max 1), ts1 1/24 starting at 1/24 (max 4).
        let mut a = TimeSampling::identity();
        a.max_samples = 1;
        let mut b = TimeSampling::uniform(1.0 / 24.0, 1.0 / 24.0);
        b.max_samples = 4;
        let mut blob = Vec::new();
        a.encode(&mut blob);
        b.encode(&mut blob);
        assert_eq!(blob.len(), 48);
        assert_eq!(
            &blob[24..36],
            &[4, 0, 0, 0, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0xa5, 0x3f]
        );
        assert_eq!(TimeSampling::decode_all(&blob).unwrap(), vec![a, b]);
    }

    #[test]
    fn index_and_time() {
        let t = TimeSampling::uniform(1.0 / 24.0, 1001.0 / 24.0);
        assert_eq!(t.nearest_index(1003.0 / 24.0, 100), 2);
        assert_eq!(t.nearest_index(0.0, 100), 0);
        assert_eq!(t.nearest_index(1e9, 100), 99);
        assert_eq!(t.floor_index((1003.0 - 1e-7) / 24.0, 100), 2);
        let c = TimeSampling {
            kind: TimeSamplingKind::Cyclic {
                time_per_cycle: 1.0,
                times: vec![0.0, 0.25],
            },
            max_samples: 0,
        };
        assert_eq!(c.time(3), 1.25);
        assert_eq!(c.nearest_index(1.2, 10), 3);
    }
}
