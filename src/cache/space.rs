//! The space caches are delivered in: tress works in centimetres with Y up; a shot may want
//! metres (Houdini, Blender), millimetres, or Z up (USD stages for Blender, Unreal's scenes).
//! Positions and widths are scaled and rotated as frames are written (velocities follow from
//! the positions), and the files' metadata (`metersPerUnit`, `upAxis`) say which space they are
//! in. USD readers follow that metadata; Alembic has no standard up axis, and Maya, Houdini and
//! Blender read every Alembic file as Y up (`tests/usd_interop.rs` measures it in Blender).

use serde::{Deserialize, Serialize};
use tress_formats::Strands;

/// The up axis of a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum UpAxis {
    #[default]
    Y,
    Z,
}

/// Length unit of written caches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    #[default]
    Cm,
    M,
    Mm,
}

impl Units {
    /// Metres per unit (USD's `metersPerUnit`).
    pub fn meters_per_unit(self) -> f64 {
        match self {
            Units::Cm => 0.01,
            Units::M => 1.0,
            Units::Mm => 0.001,
        }
    }

    /// Units per centimetre.
    pub fn per_cm(self) -> f32 {
        match self {
            Units::Cm => 1.0,
            Units::M => 0.01,
            Units::Mm => 10.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Units::Cm => "cm",
            Units::M => "m",
            Units::Mm => "mm",
        }
    }
}

/// The space of written caches: units and up axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputSpace {
    pub units: Units,
    pub up: UpAxis,
}

impl OutputSpace {
    /// tress's own space (centimetres, Y up): nothing to do.
    pub fn is_identity(&self) -> bool {
        self.units == Units::Cm && self.up == UpAxis::Y
    }

    /// A point of tress's space in this one: scaled, then Y-up turned Z-up ((x, y, z) →
    /// (x, −z, y), right-handed: the inverse of how Z-up files are read).
    pub fn point(&self, p: [f32; 3]) -> [f32; 3] {
        let s = self.units.per_cm();
        let [x, y, z] = p.map(|v| v * s);
        match self.up {
            UpAxis::Y => [x, y, z],
            UpAxis::Z => [x, -z, y],
        }
    }

    /// A point of this space in tress's: the inverse of [`OutputSpace::point`].
    pub fn to_tress(&self, p: [f32; 3]) -> [f32; 3] {
        let s = self.units.per_cm();
        let [x, y, z] = match self.up {
            UpAxis::Y => p,
            UpAxis::Z => [p[0], p[2], -p[1]],
        };
        [x / s, y / s, z / s]
    }

    /// The space an archive's metadata names (`metersPerUnit` of 0.01, 1 or 0.001 and `upAxis`
    /// Y or Z, as tress writes them); `None` when either is missing or another value.
    pub fn from_metadata(meters_per_unit: Option<&str>, up_axis: Option<&str>) -> Option<OutputSpace> {
        let m: f64 = meters_per_unit?.trim().parse().ok()?;
        let units = [Units::Cm, Units::M, Units::Mm]
            .into_iter()
            .find(|u| (u.meters_per_unit() - m).abs() <= 1e-9 * m.abs().max(1e-3))?;
        let up = match up_axis?.trim() {
            "Y" | "y" => UpAxis::Y,
            "Z" | "z" => UpAxis::Z,
            _ => return None,
        };
        Some(OutputSpace { units, up })
    }

    /// A point of space `from` in space `self` (the same bits when they are the same space).
    pub fn from_space(&self, from: OutputSpace, p: [f32; 3]) -> [f32; 3] {
        if from == *self {
            return p;
        }
        self.point(from.to_tress(p))
    }

    /// Strands of space `from` in this one: points moved, widths scaled (unchanged, bit for
    /// bit, when the spaces are the same).
    pub fn strands_from(&self, from: OutputSpace, s: &Strands) -> Strands {
        if from == *self {
            return s.clone();
        }
        let mut out = s.clone();
        out.points = s.points.iter().map(|p| self.from_space(from, *p)).collect();
        let k = self.units.per_cm() / from.units.per_cm();
        out.attrs.width = s.attrs.width.as_ref().map(|w| w.map(|v| v * k));
        out
    }

    /// Every point of a frame.
    pub fn points(&self, p: &[[f32; 3]]) -> Vec<[f32; 3]> {
        p.iter().map(|p| self.point(*p)).collect()
    }

    /// `upAxis` as USD writes it.
    pub fn up_axis(&self) -> char {
        match self.up {
            UpAxis::Y => 'Y',
            UpAxis::Z => 'Z',
        }
    }

    /// "cm, Y up".
    pub fn describe(&self) -> String {
        format!("{}, {} up", self.units.name(), self.up_axis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `to_tress` undoes `point` in every space (to float rounding), and the metadata tress
    /// writes names the space back.
    #[test]
    fn spaces_round_trip() {
        for units in [Units::Cm, Units::M, Units::Mm] {
            for up in [UpAxis::Y, UpAxis::Z] {
                let s = OutputSpace { units, up };
                let p = [1.5f32, -20.25, 7.0];
                let back = s.to_tress(s.point(p));
                for k in 0..3 {
                    assert!((back[k] - p[k]).abs() <= 1e-5 * p[k].abs(), "{s:?}: {back:?}");
                }
                let md = format!("{}", units.meters_per_unit());
                assert_eq!(
                    OutputSpace::from_metadata(Some(&md), Some(&s.up_axis().to_string())),
                    Some(s)
                );
            }
        }
        assert_eq!(OutputSpace::from_metadata(Some("0.3048"), Some("Y")), None);
        assert_eq!(OutputSpace::from_metadata(None, Some("Y")), None);
    }

    #[test]
    fn the_rotation_keeps_handedness() {
        let s = OutputSpace {
            units: Units::Cm,
            up: UpAxis::Z,
        };
        let (x, y, z) = (
            s.point([1.0, 0.0, 0.0]),
            s.point([0.0, 1.0, 0.0]),
            s.point([0.0, 0.0, 1.0]),
        );
        let cross = [
            x[1] * y[2] - x[2] * y[1],
            x[2] * y[0] - x[0] * y[2],
            x[0] * y[1] - x[1] * y[0],
        ];
        assert_eq!(cross, z, "x × y = z after the rotation too");
        assert_eq!(y, [0.0, 0.0, 1.0], "up is +Z");
    }
}
