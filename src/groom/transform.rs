//! Units and axes on the way in and out: tress works in centimetres with Y up.

use glam::Vec3;

use super::model::Groom;
pub use crate::cache::space::UpAxis;

/// Scale, then rotate a Z-up file into Y-up (right-handed: (x, y, z) → (x, z, −y)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    pub scale: f32,
    pub up: UpAxis,
}

impl Default for Transform {
    fn default() -> Self {
        Transform {
            scale: 1.0,
            up: UpAxis::Y,
        }
    }
}

impl Transform {
    pub fn is_identity(&self) -> bool {
        self.scale == 1.0 && self.up == UpAxis::Y
    }

    /// The axis change as a rotation (identity for Y-up files; −90° about X for Z-up).
    pub fn axis_rotation(&self) -> glam::DQuat {
        match self.up {
            UpAxis::Y => glam::DQuat::IDENTITY,
            UpAxis::Z => glam::DQuat::from_rotation_x(-std::f64::consts::FRAC_PI_2),
        }
    }

    pub fn apply_point(&self, p: Vec3) -> Vec3 {
        let p = p * self.scale;
        match self.up {
            UpAxis::Y => p,
            UpAxis::Z => Vec3::new(p.x, p.z, -p.y),
        }
    }

    /// Applies to the groom's points and scales widths.
    pub fn apply(&self, groom: &mut Groom) {
        if self.is_identity() {
            return;
        }
        for p in groom.points_mut() {
            *p = self.apply_point(*p);
        }
        if self.scale != 1.0
            && let Some(w) = groom.attrs.width.as_mut()
        {
            match w {
                tress_formats::Attr::Constant(c) => *c *= self.scale,
                tress_formats::Attr::PerStrand(v) | tress_formats::Attr::PerVertex(v) => {
                    v.iter_mut().for_each(|x| *x *= self.scale)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writing_in_a_space_is_undone_by_reading_from_it() {
        // Reading a file in metres, Z up, is `Transform { scale: 100, up: Z }`: it must bring
        // back what writing in metres, Z up, wrote.
        use crate::cache::{OutputSpace, Units};
        let space = OutputSpace {
            units: Units::M,
            up: UpAxis::Z,
        };
        let p = [1.5f32, -2.25, 7.0];
        let written = space.point(p);
        // Z up: tress's up (y) is the file's z.
        assert_eq!(written[2], p[1] * 0.01);
        let second = space.point([p[0], p[1] - 3.0, p[2]]);
        let mut groom = Groom::from_strands(
            tress_formats::Strands::new(vec![written, second], vec![2], Default::default()).unwrap(),
        )
        .unwrap();
        Transform {
            scale: 100.0,
            up: UpAxis::Z,
        }
        .apply(&mut groom);
        let back = groom.points()[0].to_array();
        for k in 0..3 {
            assert!((back[k] - p[k]).abs() < 1e-5, "{back:?} vs {p:?}");
        }
    }

    #[test]
    fn z_up_becomes_y_up() {
        let t = Transform {
            scale: 2.0,
            up: UpAxis::Z,
        };
        // Z-up "up" (0,0,1) must become Y-up "up" (0,1,0); handedness is preserved.
        assert_eq!(t.apply_point(Vec3::Z), Vec3::new(0.0, 2.0, 0.0));
        assert_eq!(t.apply_point(Vec3::X), Vec3::new(2.0, 0.0, 0.0));
        let (x, y) = (t.apply_point(Vec3::X), t.apply_point(Vec3::Y));
        assert!(x.cross(y).dot(t.apply_point(Vec3::Z)) > 0.0);
    }
}
