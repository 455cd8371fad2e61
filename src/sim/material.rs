//! Hair materials: spring stiffnesses, damping, friction, from `presets/materials/*.toml`.
//!
//! Stiffnesses are accelerations per unit strain (cm/s²): a spring of rest length L between
//! particles of mass m exerts k·m̄·(l − L)/L, so the dynamics do not depend on how heavy or
//! finely sampled a strand is. Values start from 001 Table 1 and are tuned for centimetres.

use glam::Vec3;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::presets::{self, Table};

pub const TABLE: Table = &[
    ("straight", include_str!("../../presets/materials/straight.toml")),
    ("wavy", include_str!("../../presets/materials/wavy.toml")),
    ("curly", include_str!("../../presets/materials/curly.toml")),
];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Material {
    /// Edge springs between consecutive particles.
    pub stretch: f32,
    /// Springs across every other particle (i, i+2).
    pub bend: f32,
    /// Springs across three segments (i, i+3).
    pub twist: f32,
    /// Altitude springs of each tetrahedron of 4 consecutive particles (Selle et al. 2008):
    /// they keep curls from collapsing or turning inside out.
    pub altitude: f32,
    /// Damping along every spring (1/s).
    pub damping: f32,
    /// Drag on absolute velocity (1/s).
    pub air_damping: f32,
    /// Hair–solid friction coefficient μ (001 §7.1).
    pub friction: f32,
    /// Hair–hair friction: fraction of the difference to the local average velocity removed
    /// per step (volumetric velocity smoothing).
    pub hair_friction: f32,
    /// Hair–hair repulsion acceleration where the hair is denser than at rest (cm/s²).
    pub repulsion: f32,
    /// Largest edge strain allowed (0.002 = 0.2 %). The implicit step is linearized, so edges
    /// that turn during a step come out a little long; limiting them keeps that from storing
    /// spurious spring energy (released later as a gain).
    pub max_strain: f32,
    pub gravity: Vec3,
}

impl Default for Material {
    fn default() -> Self {
        Material::preset("straight").expect("the straight material parses")
    }
}

impl Material {
    /// The built-in material made for a procedural groom style (`straight` for grooms read
    /// from files, whose style is unknown).
    pub fn preset_for_style(style: Option<crate::groom::Style>) -> &'static str {
        match style {
            Some(crate::groom::Style::Wavy) => "wavy",
            Some(crate::groom::Style::Curly) => "curly",
            _ => "straight",
        }
    }

    /// A built-in material (`straight`, `wavy`, `curly`) or a TOML file.
    pub fn preset(name_or_path: &str) -> Result<Material> {
        let m: Material = presets::load("material", TABLE, name_or_path)?;
        m.check()?;
        Ok(m)
    }

    pub fn check(&self) -> Result<()> {
        let values = [
            self.stretch,
            self.bend,
            self.twist,
            self.altitude,
            self.damping,
            self.air_damping,
            self.friction,
            self.hair_friction,
            self.repulsion,
            self.max_strain,
        ];
        if values.iter().any(|v| !v.is_finite() || *v < 0.0) || !self.gravity.is_finite() {
            return Err(Error::Invalid(
                "material values must be finite and not negative".into(),
            ));
        }
        if self.stretch <= 0.0 || self.hair_friction > 1.0 || self.max_strain <= 0.0 {
            return Err(Error::Invalid(
                "material: stretch and max_strain must be positive and hair_friction at most 1".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_parse_and_order_by_stiffness() {
        let s = Material::preset("straight").unwrap();
        let w = Material::preset("wavy").unwrap();
        let c = Material::preset("curly").unwrap();
        assert!(s.bend < w.bend && w.bend < c.bend);
        assert!(s.friction < w.friction && w.friction < c.friction);
        assert!(Material::preset("rubber").is_err());
        let bad: Result<Material> = crate::presets::parse("stretch = 1\\n", "x.toml");
        assert!(bad.is_err());
    }

    /// 001 Table 1: straight 3e5 / 30 / 15 (stretch / bend / twist), damping 10, friction
    /// 0.05; wavy 2e6 / 200 / 100, damping 10, friction 0.1. The straight preset keeps every
    /// ratio; wavy and curly keep bend : twist and take stretch = 10³ × bend (the book's
    /// Simulation chapter measures why not 10⁴).
    #[test]
    fn presets_keep_001_table_1s_ratios() {
        let close = |a: f32, b: f32| ((a - b) / b).abs() < 1e-6;
        let s = Material::preset("straight").unwrap();
        assert!(close(s.stretch / s.bend, 3e5 / 30.0) && close(s.twist / s.bend, 15.0 / 30.0));
        assert!(s.damping == 10.0 && s.friction == 0.05);
        let w = Material::preset("wavy").unwrap();
        assert!(close(w.twist / w.bend, 100.0 / 200.0) && close(w.stretch / w.bend, 1e3));
        assert!(w.damping == 10.0 && w.friction == 0.1);
        let c = Material::preset("curly").unwrap();
        assert!(close(c.twist / c.bend, 0.5) && close(c.stretch / c.bend, 1e3));
    }
}
