//! The hair-mesh solver's physical and numerical parameters (a job's `[hairmesh.solver]`).

use serde::{Deserialize, Serialize};

/// Physical and numerical parameters (cm, g, s); a job's `[hairmesh.solver]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HairMeshParams {
    /// Mass per unit of mesh volume (g/cm³): hair fills a few percent of a bundle.
    pub density: f64,
    /// Stretch modulus along the hair on side faces (g/s²; energy κ/2 · area · strain²).
    pub stretch_along: f64,
    /// Stretch modulus across the hair (side faces across, layer faces both ways).
    pub stretch_across: f64,
    /// Shear modulus of every face (g/s²).
    pub shear: f64,
    /// Bend modulus of side faces stacked along the hair (g·cm²/s²).
    pub bend: f64,
    /// Volume modulus of the corner tets (g/(cm·s²); energy κ/2 · (V − V₀)²/V₀).
    pub volume: f64,
    /// Condition damping: k_d = damping · k (s).
    pub damping: f64,
    /// Air drag (1/s).
    pub drag: f64,
    /// Gravity (cm/s², along −Y).
    pub gravity: f64,
    /// Coulomb friction against colliders.
    pub friction: f64,
    /// Distance kept from collider surfaces (cm).
    pub skin: f64,
    /// Implicit steps per frame.
    pub substeps: u32,
    /// Frames simulated at the first head pose before the first output frame, so the mesh
    /// settles under gravity (as the strand simulation's preroll).
    pub preroll_frames: u32,
    /// Relative residual at which conjugate gradients stop, and their iteration cap.
    pub cg_tolerance: f64,
    pub cg_max_iterations: usize,
    /// Deformation minimization after position correction (002 Eq. 3–4).
    pub minimize_deformation: bool,
    /// How a mesh built around a groom first finds the shape it rests in
    /// ([`super::HairMeshSim::settled`]); `[hairmesh.solver.settle]`.
    pub settle: Settle,
}

/// The settling of a built mesh: `frames` frames at the first head pose with the loose hair's
/// moduli below (the other parameters as the solver's), after which the settled shape becomes
/// the mesh's rest shape. 002's meshes are modelled by artists in the shape the hair rests in; a
/// mesh fitted to a groom has the groom's shape, which loose hair does not keep under gravity
/// (the strand simulation's preroll lets its strands sag; straight hair at the sides of the head
/// falls in against it). `frames = 0` keeps the groom's shape as the rest shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settle {
    pub frames: u32,
    pub stretch_across: f64,
    pub shear: f64,
    pub bend: f64,
    pub volume: f64,
}

impl Default for Settle {
    fn default() -> Self {
        Settle {
            frames: 48,
            stretch_across: 2.0e1,
            shear: 1.0e2,
            bend: 1.0e1,
            volume: 5.0e2,
        }
    }
}

impl Default for HairMeshParams {
    fn default() -> Self {
        HairMeshParams {
            density: 0.05,
            stretch_along: 2.0e5,
            stretch_across: 2.0e3,
            shear: 1.0e3,
            bend: 2.0e4,
            volume: 2.0e4,
            damping: 0.01,
            drag: 0.5,
            gravity: 981.0,
            friction: 0.3,
            skin: 0.05,
            substeps: 2,
            preroll_frames: 24,
            cg_tolerance: 1e-3,
            cg_max_iterations: 100,
            minimize_deformation: true,
            settle: Settle::default(),
        }
    }
}

impl HairMeshParams {
    /// Checks the values, naming the first bad key.
    pub fn check(&self) -> std::result::Result<(), String> {
        let values = [
            ("density", self.density),
            ("stretch_along", self.stretch_along),
            ("stretch_across", self.stretch_across),
            ("shear", self.shear),
            ("bend", self.bend),
            ("volume", self.volume),
            ("damping", self.damping),
            ("drag", self.drag),
            ("gravity", self.gravity),
            ("friction", self.friction),
            ("skin", self.skin),
            ("cg_tolerance", self.cg_tolerance),
            ("settle.stretch_across", self.settle.stretch_across),
            ("settle.shear", self.settle.shear),
            ("settle.bend", self.settle.bend),
            ("settle.volume", self.settle.volume),
        ];
        crate::presets::non_negative(&values)?;
        if self.density <= 0.0 {
            return Err("density must be positive".into());
        }
        if self.preroll_frames > 100_000 {
            return Err(format!(
                "preroll_frames = {}: at most 100000",
                self.preroll_frames
            ));
        }
        if !(1..=1000).contains(&self.substeps) {
            return Err(format!("substeps = {}: must be within 1..=1000", self.substeps));
        }
        if self.settle.frames > 100_000 {
            return Err(format!("settle.frames = {}: at most 100000", self.settle.frames));
        }
        if self.cg_max_iterations == 0 {
            return Err("cg_max_iterations must be at least 1".into());
        }
        Ok(())
    }
}
