//! The student project's planned network (004, "Final Solution"): from the motion of the head
//! straight to the positions of every hair particle, with no guides and no simulation at run
//! time. The project meant an image-to-image translation of the head track X (3 × T) into the
//! stacked positions Y (3N × T); tress's baseline keeps its input and output and makes it
//! causal, frame by frame, so it runs on any length of motion:
//!
//! - input at frame t: the head's linear velocity (of the root centroid) and angular velocity
//!   at frames t, t − s, …, t − (w − 1)s, and the gravity direction, all in the head's frame at
//!   t ([`features`]), each channel divided by its spread over the training frames;
//! - output: every vertex's displacement from the rest groom in the head's frame, divided by
//!   its spread; the positions are the head's pose applied to rest + displacement;
//! - [`model`]: a multilayer perceptron (burn `Module` + `Config`); [`train`]: the loop, Adam
//!   on the mean squared error, seeded.
//!
//! It is trained on a batch of experiments (`[batch.trajectory]`) and scored on held-out ones
//! beside the methods that simulate guides.

pub mod model;
pub mod train;

use glam::{DQuat, DVec3, Vec3};
use serde::{Deserialize, Serialize};

use crate::motion::Pose;

/// Training and model settings (`[batch.trajectory]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrajectoryConfig {
    /// The last this many batch items are held out of training and scored.
    pub held_out: usize,
    /// Head-motion samples per input.
    pub window: usize,
    /// Frames between samples.
    pub stride: usize,
    /// Width of the two hidden layers.
    pub hidden: usize,
    pub steps: usize,
    /// Frames per step.
    pub batch: usize,
    pub learning_rate: f64,
    pub seed: u64,
}

impl Default for TrajectoryConfig {
    fn default() -> Self {
        TrajectoryConfig {
            held_out: 4,
            window: 16,
            stride: 2,
            hidden: 256,
            steps: 3000,
            batch: 32,
            learning_rate: 1e-3,
            seed: 1,
        }
    }
}

impl TrajectoryConfig {
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.held_out == 0 {
            return Err("held_out must be at least 1".into());
        }
        if !(1..=256).contains(&self.window) || !(1..=64).contains(&self.stride) {
            return Err("window must be within 1..=256 and stride within 1..=64".into());
        }
        if !(1..=8192).contains(&self.hidden) || self.steps == 0 || !(1..=4096).contains(&self.batch) {
            return Err("hidden within 1..=8192, steps at least 1 and batch within 1..=4096".into());
        }
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return Err("learning_rate must be positive".into());
        }
        Ok(())
    }

    /// Numbers per input: gravity (3) and a linear and angular velocity (6) per sample.
    pub fn inputs(&self) -> usize {
        3 + 6 * self.window
    }
}

/// The head's motion over a shot, frame by frame: where a head-frame point (the roots'
/// centroid) is and how the head is turned.
pub struct HeadMotion {
    pub poses: Vec<Pose>,
    /// The point whose velocity is the linear velocity (head frame, cm).
    pub point: DVec3,
    pub fps: f64,
}

impl HeadMotion {
    /// Linear (cm/s, world) and angular (rad/s, world) velocity at frame `i` by backward
    /// differences; zero at and before the first frame (the head is still before the shot).
    fn velocity(&self, i: isize) -> (DVec3, DVec3) {
        if i <= 0 || i as usize >= self.poses.len() {
            return (DVec3::ZERO, DVec3::ZERO);
        }
        let (a, b) = (&self.poses[i as usize - 1], &self.poses[i as usize]);
        let v = (b.apply(self.point) - a.apply(self.point)) * self.fps;
        let dq: DQuat = b.rotation * a.rotation.inverse();
        // The shorter way round.
        let dq = if dq.w < 0.0 { -dq } else { dq };
        (v, dq.to_scaled_axis() * self.fps)
    }

    /// The input of frame `i` (unscaled): gravity's direction, then per sample the linear and
    /// angular velocity, in the head's frame at `i`.
    pub fn features(&self, i: usize, cfg: &TrajectoryConfig) -> Vec<f32> {
        let inv = self.poses[i].rotation.inverse();
        let mut f = Vec::with_capacity(cfg.inputs());
        f.extend((inv * DVec3::NEG_Y).to_array().map(|x| x as f32));
        for k in 0..cfg.window {
            let (v, w) = self.velocity(i as isize - (k * cfg.stride) as isize);
            f.extend((inv * v).to_array().map(|x| x as f32));
            f.extend((inv * w).to_array().map(|x| x as f32));
        }
        f
    }
}

/// A frame's positions as displacements from `rest` in the head's frame (flattened).
pub fn displacements(pose: &Pose, rest: &[Vec3], x: &[[f32; 3]]) -> Vec<f32> {
    let inv = pose.inverse();
    let mut out = Vec::with_capacity(3 * rest.len());
    for (r, p) in rest.iter().zip(x) {
        let local = inv.apply_f32(Vec3::from_array(*p)) - *r;
        out.extend(local.to_array());
    }
    out
}

/// Positions from displacements (the inverse of [`displacements`]).
pub fn positions(pose: &Pose, rest: &[Vec3], d: &[f32]) -> Vec<[f32; 3]> {
    rest.iter()
        .zip(d.chunks_exact(3))
        .map(|(r, d)| pose.apply_f32(*r + Vec3::new(d[0], d[1], d[2])).to_array())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_see_the_motion_in_the_heads_frame() {
        // A head turning at 1 rad/s about Y and moving along X at 10 cm/s, at 100 fps.
        let fps = 100.0;
        let poses: Vec<Pose> = (0..50)
            .map(|i| {
                let t = i as f64 / fps;
                Pose::new(DQuat::from_rotation_y(t), DVec3::new(10.0 * t, 0.0, 0.0))
            })
            .collect();
        let m = HeadMotion {
            poses,
            point: DVec3::ZERO,
            fps,
        };
        let cfg = TrajectoryConfig {
            window: 3,
            stride: 1,
            ..Default::default()
        };
        let f = m.features(40, &cfg);
        assert_eq!(f.len(), cfg.inputs());
        // Gravity stays straight down in a frame turned about the vertical.
        assert!((f[1] + 1.0).abs() < 1e-6 && f[0].abs() < 1e-6);
        // The angular velocity is 1 rad/s about Y; the linear velocity 10 cm/s along world X,
        // seen from a head turned by 0.4 rad.
        assert!((f[7] - 1.0).abs() < 1e-4, "{f:?}");
        let v = DQuat::from_rotation_y(0.4).inverse() * DVec3::new(10.0, 0.0, 0.0);
        assert!(
            (f[3] as f64 - v.x).abs() < 1e-3 && (f[5] as f64 - v.z).abs() < 1e-3,
            "{f:?}"
        );
        // Nothing before the first frame.
        assert!(m.features(0, &cfg)[3..].iter().all(|x| *x == 0.0));
        // Displacements and positions invert each other.
        let rest = vec![Vec3::new(1.0, 2.0, 3.0), Vec3::new(-1.0, 0.5, 0.0)];
        let x = vec![[4.0, 1.0, 2.0], [0.0, 0.0, 1.0]];
        let d = displacements(&m.poses[7], &rest, &x);
        let back = positions(&m.poses[7], &rest, &d);
        for (a, b) in back.iter().zip(&x) {
            assert!(Vec3::from_array(*a).distance(Vec3::from_array(*b)) < 1e-5);
        }
    }
}
