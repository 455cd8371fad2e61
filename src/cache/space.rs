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

    /// Every point of a frame.
    pub fn points(&self, p: &[[f32; 3]]) -> Vec<[f32; 3]> {
        p.iter().map(|p| self.point(*p)).collect()
    }

    /// Strands in this space: points moved, widths scaled.
    pub fn strands(&self, s: &Strands) -> Strands {
        let mut out = Strands {
            points: self.points(&s.points),
            counts: s.counts.clone(),
            attrs: s.attrs.clone(),
        };
        let k = self.units.per_cm();
        out.attrs.width = s.attrs.width.as_ref().map(|w| w.map(|v| v * k));
        out
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
