//! `.tcache`: tress's native compressed strand cache — streamable, random access by frame,
//! every chunk checksummed, lossless or lossy within a stated error bound.
//!
//! ```text
//! "TRSCACHE" u32 version
//! u64 header length, header bytes, u32 CRC-32 of the header
//! frame chunks, appended as frames arrive:
//!     "FRAM" u32 sequence f64 frame number  f64×7 head pose (rotation xyzw, translation)
//!     u8 predictor  u32 block count  per block: u64 length, zstd bytes   u32 CRC-32 of the chunk
//! index chunk: "INDX" u64 count, per frame (f64 frame, u64 offset), u32 CRC-32
//! footer: u64 index offset, "TRSCEND!"
//! ```
//!
//! The header holds the topology once (vertex counts), the rest pose, the strand attributes,
//! fps, the codec and its error bound. A writer that is killed leaves the header and every frame
//! it finished: readers without a footer scan the chunks and stop at the first incomplete or
//! damaged one, saying where.
//!
//! **Lossless** frames store the float bits as they are, XOR the previous frame's, or as the
//! integer difference to the previous frame's bits or to their linear extrapolation (floats of
//! one sign are ordered like their bit patterns, so smooth motion leaves small numbers),
//! or as the difference to the previous frame carried rigidly with the head to this frame's
//! pose, whichever is cheapest, as byte planes, zstd-compressed. **Lossy** frames quantize head-local
//! positions on a lattice fine enough that every vertex lands within the bound (Euclidean),
//! predict the integers from the rest pose, the previous frame, a linear extrapolation of the two
//! previous frames, or the previous frame corrected by each vertex's predecessor along the
//! strand (whichever is cheapest), and store the residuals zigzag-coded as byte planes, zstd-
//! compressed. Every `keyframe_interval` frames the prediction restarts from the rest pose, so
//! seeking decodes at most that many frames.

pub mod codec;
pub mod header;
pub mod read;
pub mod write;

pub use header::{Codec, TcacheHeader};
pub use read::{ScanReport, TcacheReader};
pub use write::TcacheWriter;

pub const MAGIC: &[u8; 8] = b"TRSCACHE";
pub const VERSION: u32 = 2;
pub const FRAME_TAG: &[u8; 4] = b"FRAM";
pub const INDEX_TAG: &[u8; 4] = b"INDX";
pub const END_TAG: &[u8; 8] = b"TRSCEND!";
/// Vertices per independently compressed block (decoded in parallel).
pub const BLOCK_VERTICES: usize = 1 << 15;

/// A rigid head pose: unit quaternion (x, y, z, w) and translation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeadPose {
    pub rotation: [f64; 4],
    pub translation: [f64; 3],
}

/// a · bᵀ for 3×3 matrices.
fn mat_mul_t(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| a[i][0] * b[j][0] + a[i][1] * b[j][1] + a[i][2] * b[j][2]))
}

fn mat_vec(m: &[[f64; 3]; 3], v: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2])
}

impl HeadPose {
    pub const IDENTITY: HeadPose = HeadPose {
        rotation: [0.0, 0.0, 0.0, 1.0],
        translation: [0.0; 3],
    };

    fn rotate(&self, v: [f64; 3], inverse: bool) -> [f64; 3] {
        let [x, y, z, w] = self.rotation;
        let (qx, qy, qz) = if inverse { (-x, -y, -z) } else { (x, y, z) };
        // v + 2 q × (q × v + w v)
        let t = [
            qy * v[2] - qz * v[1] + w * v[0],
            qz * v[0] - qx * v[2] + w * v[1],
            qx * v[1] - qy * v[0] + w * v[2],
        ];
        [
            v[0] + 2.0 * (qy * t[2] - qz * t[1]),
            v[1] + 2.0 * (qz * t[0] - qx * t[2]),
            v[2] + 2.0 * (qx * t[1] - qy * t[0]),
        ]
    }

    /// The rotation as a row-major 3×3 matrix (`world = M · local + t`).
    pub fn matrix(&self) -> [[f64; 3]; 3] {
        let [x, y, z, w] = self.rotation;
        [
            [
                1.0 - 2.0 * (y * y + z * z),
                2.0 * (x * y - z * w),
                2.0 * (x * z + y * w),
            ],
            [
                2.0 * (x * y + z * w),
                1.0 - 2.0 * (x * x + z * z),
                2.0 * (y * z - x * w),
            ],
            [
                2.0 * (x * z - y * w),
                2.0 * (y * z + x * w),
                1.0 - 2.0 * (x * x + y * y),
            ],
        ]
    }

    /// Head-local → world.
    pub fn to_world(&self, p: [f64; 3]) -> [f64; 3] {
        let r = self.rotate(p, false);
        [
            r[0] + self.translation[0],
            r[1] + self.translation[1],
            r[2] + self.translation[2],
        ]
    }

    /// World → head-local.
    pub fn to_local(&self, p: [f64; 3]) -> [f64; 3] {
        let d = [
            p[0] - self.translation[0],
            p[1] - self.translation[1],
            p[2] - self.translation[2],
        ];
        self.rotate(d, true)
    }

    /// Positions of another frame (float bits) carried rigidly from head pose `from` to this
    /// one, as a per-vertex prediction: `self(from⁻¹(p)) = M·p + c` with M = R R_fᵀ,
    /// c = t − M·t_f.
    pub fn carry<'a>(&self, from: &HeadPose, bits: &'a [u32]) -> codec::Reference<'a> {
        let m = mat_mul_t(&self.matrix(), &from.matrix());
        let mt = mat_vec(&m, from.translation);
        codec::Reference::Affine {
            m,
            c: [
                self.translation[0] - mt[0],
                self.translation[1] - mt[1],
                self.translation[2] - mt[2],
            ],
            bits,
        }
    }

    /// The constant-velocity extrapolation of two frames in the head's frame, carried to this
    /// pose: `self(2 · prev⁻¹(a) − before⁻¹(b)) = M1·a − M2·b + c` with M1 = 2 R Rₚᵀ,
    /// M2 = R R_bᵀ, c = t − M1·tₚ + M2·t_b. (A damped extrapolation, 1.5·a − 0.5·b, stores
    /// no less on simulated hair.)
    pub fn extrapolate<'a>(
        &self,
        prev: &HeadPose,
        a: &'a [u32],
        before: &HeadPose,
        b: &'a [u32],
    ) -> codec::Reference<'a> {
        let r = self.matrix();
        let m1 = mat_mul_t(&r, &prev.matrix()).map(|row| row.map(|v| 2.0 * v));
        let m2 = mat_mul_t(&r, &before.matrix());
        let (p1, p2) = (mat_vec(&m1, prev.translation), mat_vec(&m2, before.translation));
        let c = [
            self.translation[0] - p1[0] + p2[0],
            self.translation[1] - p1[1] + p2[1],
            self.translation[2] - p1[2] + p2[2],
        ];
        codec::Reference::Extrapolate { m1, m2, c, a, b }
    }

    pub fn is_valid(&self) -> bool {
        let n: f64 = self.rotation.iter().map(|c| c * c).sum();
        (n - 1.0).abs() < 1e-6 && self.translation.iter().all(|c| c.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strands::{Attr, StrandAttrs, Strands};

    /// Frames of positions with their head poses.
    type Frames = Vec<(Vec<[f32; 3]>, HeadPose)>;

    /// A swaying groom: 40 strands × 12 points, moving with a head that turns and translates.
    fn scene(frames: usize) -> (Strands, Frames) {
        let mut pts = Vec::new();
        for s in 0..40 {
            for i in 0..12 {
                let a = s as f32 * 0.3;
                pts.push([10.0 * a.cos(), 10.0 - i as f32 * 1.5, 10.0 * a.sin()]);
            }
        }
        let rest = Strands::new(
            pts.clone(),
            vec![12; 40],
            StrandAttrs {
                width: Some(Attr::Constant(0.01)),
                id: Some((0..40).collect()),
                ..Default::default()
            },
        )
        .unwrap();
        let out = (0..frames)
            .map(|f| {
                let t = f as f64 * 0.1;
                let (s, c) = (0.5 * t).sin_cos();
                let pose = HeadPose {
                    rotation: [0.0, s * 0.3, 0.0, (1.0 - 0.09 * s * s).sqrt()],
                    translation: [t * 5.0, 0.0, 1.0],
                };
                let frame: Vec<[f32; 3]> = pts
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        let sway = (i % 12) as f64 * 0.05 * (t * 3.0 + c).sin();
                        let local = [p[0] as f64 + sway, p[1] as f64, p[2] as f64 - sway];
                        pose.to_world(local).map(|v| v as f32)
                    })
                    .collect();
                (frame, pose)
            })
            .collect();
        (rest, out)
    }

    fn write(codec: Codec, frames: usize) -> (Vec<u8>, Frames) {
        let (rest, data) = scene(frames);
        let dir =
            std::env::temp_dir().join(format!("tress-tcache-{}-{frames}-{codec:?}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.tcache");
        let header = TcacheHeader {
            fps: 24.0,
            codec,
            keyframe_interval: 8,
            rest,
        };
        let mut w = TcacheWriter::create(&path, header, 3).unwrap();
        for (f, (p, pose)) in data.iter().enumerate() {
            w.write_frame(1001.0 + f as f64, p, Some(*pose)).unwrap();
        }
        w.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        (bytes, data)
    }

    #[test]
    fn lossless_is_bit_exact_in_any_order() {
        let (bytes, data) = write(Codec::Lossless, 20);
        let mut r = TcacheReader::from_bytes(bytes).unwrap();
        assert_eq!(r.len(), 20);
        assert!(r.scan.is_none());
        for seq in [0, 1, 2, 19, 5, 17, 9, 9, 10] {
            assert_eq!(r.frame(seq).unwrap(), data[seq].0, "frame {seq}");
        }
        assert_eq!(r.find(1010.0), Some(9));
        assert_eq!(r.header.rest.attrs.id.as_ref().unwrap().len(), 40);
    }

    #[test]
    fn lossy_holds_its_bound_on_every_vertex() {
        for bound in [0.001f32, 0.01, 0.1] {
            let (bytes, data) = write(Codec::Lossy { bound }, 20);
            let mut r = TcacheReader::from_bytes(bytes).unwrap();
            for seq in (0..20).chain([3, 18, 0]) {
                let got = r.frame(seq).unwrap();
                for (a, b) in got.iter().zip(&data[seq].0) {
                    let d = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
                    assert!(d <= bound, "bound {bound}, frame {seq}: error {d}");
                }
            }
        }
    }

    /// Fifteen metres from the origin (a long walk) float32 rounding is a sizeable part of a
    /// 0.01 mm bound (half a unit in the last place is 0.0006 mm there); the writer still keeps
    /// every vertex within it.
    #[test]
    fn lossy_holds_a_fine_bound_far_from_the_origin() {
        let (rest, data) = scene(6);
        let far = |p: &[f32; 3]| [p[0] + 1500.0, p[1] - 350.0, p[2] + 1211.0];
        let dir = std::env::temp_dir().join(format!("tress-tcache-far-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("far.tcache");
        let bound = 0.001f32;
        let header = TcacheHeader {
            fps: 24.0,
            codec: Codec::Lossy { bound },
            keyframe_interval: 4,
            rest,
        };
        let mut w = TcacheWriter::create(&path, header, 3).unwrap();
        let moved: Vec<Vec<[f32; 3]>> = data.iter().map(|(p, _)| p.iter().map(far).collect()).collect();
        for (f, p) in moved.iter().enumerate() {
            let mut pose = data[f].1;
            pose.translation = [
                pose.translation[0] + 1500.0,
                pose.translation[1] - 350.0,
                pose.translation[2] + 1211.0,
            ];
            w.write_frame(f as f64, p, Some(pose)).unwrap();
        }
        w.finish().unwrap();
        let mut r = TcacheReader::open(&path).unwrap();
        for (seq, want) in moved.iter().enumerate() {
            for (a, b) in r.frame(seq).unwrap().iter().zip(want) {
                let d = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
                assert!(d <= bound, "frame {seq}: error {d}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_cut_off_cache_reads_up_to_its_last_complete_frame() {
        let (bytes, data) = write(Codec::Lossless, 12);
        // Drop the footer, the index and half of the last frame.
        let mut r = TcacheReader::from_bytes(bytes.clone()).unwrap();
        let last = r.frames[11].offset as usize;
        let cut = bytes[..last + 40].to_vec();
        let mut r2 = TcacheReader::from_bytes(cut).unwrap();
        let scan = r2.scan.clone().unwrap();
        assert_eq!(scan.frames, 11);
        assert!(scan.stopped.unwrap().contains("ends inside frame chunk 11"));
        assert_eq!(r2.frame(10).unwrap(), data[10].0);
        assert_eq!(r.frame(11).unwrap(), data[11].0);
    }

    #[test]
    fn a_flipped_byte_is_caught() {
        let (bytes, _) = write(Codec::Lossy { bound: 0.01 }, 6);
        let r = TcacheReader::from_bytes(bytes.clone()).unwrap();
        let at = r.frames[3].offset as usize + 100;
        let mut bad = bytes.clone();
        bad[at] ^= 0x04;
        let mut r = TcacheReader::from_bytes(bad).unwrap();
        assert!(r.frame(2).is_ok());
        let e = r.frame(3).unwrap_err().to_string();
        assert!(e.contains("checksum"), "{e}");
        let mut head = bytes.clone();
        head[30] ^= 1;
        assert!(
            TcacheReader::from_bytes(head)
                .err()
                .unwrap()
                .to_string()
                .contains("checksum")
        );
        for len in [0, 10, 23, 60] {
            assert!(TcacheReader::from_bytes(bytes[..len].to_vec()).is_err());
        }
    }

    #[test]
    fn lossy_is_smaller_than_lossless_which_is_smaller_than_raw() {
        let (lossless, data) = write(Codec::Lossless, 40);
        let (lossy, _) = write(Codec::Lossy { bound: 0.01 }, 40);
        let raw = data.len() * data[0].0.len() * 12;
        // Smooth synthetic motion: the lossless predictors leave little to store.
        assert!(lossless.len() * 2 < raw, "{} vs {raw}", lossless.len());
        assert!(
            lossy.len() < lossless.len(),
            "{} vs {}",
            lossy.len(),
            lossless.len()
        );
    }
}
