//! The student project's mass-spring scenes (004) as tress simulations, and its groom
//! generator.
//!
//! An `.mss` scene is a complete mass-spring system: particles with masses, Hooke springs
//! `F = k (l − L)` whose rest length L is the particles' first distance, zero-length springs
//! `F = −k (x − P)` pinning each root to an anchor P on the head, a unit-sphere head and its
//! constant velocity. Gravity, the head radius (1) and the time step are the simulator's, not
//! the file's. tress runs it with its own strand solver, mapped exactly:
//!
//! - lengths: one scene unit is `unit` cm (default 10: the head becomes a human-sized 10 cm
//!   sphere);
//! - a spring pulls its particles with k (l − L) / m; tress's edge spring between particles
//!   of equal mass (`SimOptions::uniform_mass`, as the project's) pulls with
//!   stretch · (l − L) / L, so `stretch = k L / m` (cm/s², per spring; the material takes
//!   their mean);
//! - a zero-length spring pulls with k (x − P) / m; tress's root spring with
//!   root_spring · (x − P), so `root_spring = k / m` (1/s²);
//! - nothing else: no bending, twisting, damping, friction or hair–hair interaction (the
//!   project's hair is a chain of springs, "rather jellyfish-like"), strain not limited;
//!   gravity 981 cm/s² down −Y; the project's integrator (symplectic Euler).
//!
//! What differs is reported, not hidden: tress pins each root to where it starts (an anchor
//! elsewhere is noted) and starts the hair at rest (initial velocities are noted). Head
//! contact is tress's own response (resting-contact penalty, projection and friction) unless
//! the run asks for the project's (`contact = "reflect"`: the velocity reflected, 60 % of it
//! kept), which needs far fewer steps per frame ([`default_substeps`]).

use glam::{DVec3, Vec3};

use tress_formats::mss::{HEAD_RADIUS, MssScene, Particle, Pin, Spring};

use crate::collide::Sphere;
use crate::error::{Error, Result};
use crate::groom::Transform;
use crate::sim::{Integrator, Material};

/// Centimetres per scene unit unless a job or command says otherwise.
pub const DEFAULT_UNIT_CM: f32 = 10.0;

/// The scene's sphere head in tress space (the groom's transform: its scale is the unit).
pub fn head_sphere(scene: &MssScene, transform: &Transform) -> Sphere {
    let c = scene.head_center.map(|v| v as f32);
    Sphere {
        center: transform.apply_point(Vec3::from_array(c)),
        radius: HEAD_RADIUS as f32 * transform.scale,
    }
}

/// A scene's physics in tress's terms.
#[derive(Clone, Debug)]
pub struct MssPhysics {
    /// The springs as a tress material (stretch only; gravity 981 cm/s² down −Y).
    pub material: Material,
    /// Zero-length root spring stiffness (1/s²), `None` when the scene pins no particle.
    pub root_spring: Option<f32>,
    /// The head's constant velocity (cm/s, tress axes).
    pub velocity: DVec3,
    /// The head's centre (cm, tress axes): the pivot of head rotations.
    pub centre: Vec3,
    /// What tress does differently from the file, one line each.
    pub notes: Vec<String>,
}

fn positive(x: f64) -> bool {
    x > 0.0 && x.is_finite()
}

fn mean_spread(values: &[f64]) -> (f64, f64) {
    let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (mean, if mean > 0.0 { (hi - lo) / mean } else { 0.0 })
}

/// The tress material, root springs and head motion of `scene` at `unit` cm per scene unit.
pub fn physics(scene: &MssScene, unit: f32, up: crate::groom::UpAxis) -> Result<MssPhysics> {
    if !(unit > 0.0 && unit.is_finite()) {
        return Err(Error::Invalid(format!("scene unit {unit} cm must be positive")));
    }
    let transform = Transform { scale: unit, up };
    let u = unit as f64;
    let mut notes = Vec::new();
    let pos = |i: usize| DVec3::from_array(scene.particles[i].position);
    let mass = |i: usize| scene.particles[i].mass;
    let mut stretch = Vec::with_capacity(scene.springs.len());
    for s in &scene.springs {
        let l = pos(s.a).distance(pos(s.b));
        if l <= 0.0 {
            return Err(Error::Invalid(format!(
                "spring {}–{} joins two particles at the same place: its rest length would be 0",
                s.a, s.b
            )));
        }
        if !positive(s.stiffness) {
            return Err(Error::Invalid(format!(
                "spring {}–{} has stiffness {}: tress needs positive stiffness",
                s.a, s.b, s.stiffness
            )));
        }
        let m = 0.5 * (mass(s.a) + mass(s.b));
        stretch.push(s.stiffness * l * u / m);
    }
    if stretch.is_empty() {
        return Err(Error::Invalid(
            "the scene has no springs: no strand to simulate".into(),
        ));
    }
    let (k, spread) = mean_spread(&stretch);
    if spread > 0.01 {
        notes.push(format!(
            "spring stiffness per length and mass varies by {:.0} %: tress uses the mean, {k:.4e} cm/s² per unit strain",
            spread * 100.0
        ));
    }
    let roots: Vec<f64> = scene
        .pins
        .iter()
        .map(|p| p.stiffness / mass(p.particle))
        .collect();
    let root_spring = if roots.is_empty() {
        notes.push("no zero-length springs: tress moves the roots with the head".into());
        None
    } else {
        if let Some(p) = scene
            .pins
            .iter()
            .find(|p| !positive(p.stiffness / mass(p.particle)))
        {
            return Err(Error::Invalid(format!(
                "the zero-length spring on particle {} has stiffness {} (particle mass {}): tress needs a positive stiffness per mass",
                p.particle,
                p.stiffness,
                mass(p.particle)
            )));
        }
        let (r, spread) = mean_spread(&roots);
        if spread > 0.01 {
            notes.push(format!(
                "zero-length spring stiffness per mass varies by {:.0} %: tress uses the mean, {r:.4e} 1/s²",
                spread * 100.0
            ));
        }
        Some(r as f32)
    };
    let off = scene
        .pins
        .iter()
        .map(|p| DVec3::from_array(p.anchor).distance(pos(p.particle)))
        .fold(0.0, f64::max);
    if off > 1e-6 {
        notes.push(format!(
            "zero-length spring anchors lie up to {:.4} cm from their particles: tress anchors each root where it starts",
            off * u
        ));
    }
    notes.extend(pin_notes(scene, root_spring.is_some()));
    if scene.particles.iter().any(|p| p.velocity != [0.0; 3]) {
        notes.push("particles have initial velocities: tress starts the hair at rest".into());
    }
    let masses: Vec<f64> = scene.particles.iter().map(|p| p.mass).collect();
    if mean_spread(&masses).1 > 0.01 {
        notes.push("particle masses differ: tress gives every particle of a strand the same mass".into());
    }
    notes.push(
        "head contact: tress's projection and friction response unless --contact reflect / [simulate] contact = \"reflect\" (the project's: velocity reflected, 60 % kept)".into(),
    );
    let material = Material {
        stretch: k as f32,
        bend: 0.0,
        twist: 0.0,
        altitude: 0.0,
        damping: 0.0,
        air_damping: 0.0,
        friction: 0.0,
        hair_friction: 0.0,
        repulsion: 0.0,
        max_strain: 10.0,
        gravity: Vec3::new(0.0, -981.0, 0.0),
    };
    material.check()?;
    let v = transform.apply_point(Vec3::from_array(scene.head_velocity.map(|v| v as f32)));
    Ok(MssPhysics {
        material,
        root_spring,
        velocity: v.as_dvec3(),
        centre: head_sphere(scene, &transform).center,
        notes,
    })
}

/// Where the scene's zero-length springs sit that tress cannot follow: tress springs the first
/// particle of every strand (when the scene has any zero-length spring), nothing else.
fn pin_notes(scene: &MssScene, springs: bool) -> Vec<String> {
    let n = scene.particles.len();
    let mut degree = vec![0u32; n];
    // The chain each particle belongs to.
    let mut chain = petgraph::unionfind::UnionFind::<usize>::new(n);
    for s in &scene.springs {
        degree[s.a] += 1;
        degree[s.b] += 1;
        chain.union(s.a, s.b);
    }
    let mut end_pins = vec![0usize; n];
    let mut inner = 0;
    for p in &scene.pins {
        if degree[p.particle] >= 2 {
            inner += 1;
        } else {
            end_pins[chain.find_mut(p.particle)] += 1;
        }
    }
    let chains: Vec<usize> = (0..n).filter(|&v| chain.find_mut(v) == v).collect();
    let both = chains.iter().filter(|&&c| end_pins[c] > 1).count();
    let free = chains.iter().filter(|&&c| end_pins[c] == 0).count();
    let mut notes = Vec::new();
    if inner > 0 {
        notes.push(format!(
            "{inner} zero-length springs hold particles inside a strand: tress springs each strand's root only and leaves them out"
        ));
    }
    if both > 0 {
        notes.push(format!(
            "{both} strands are held at both ends: tress springs the root end only"
        ));
    }
    if springs && free > 0 {
        notes.push(format!(
            "{free} strands have no zero-length spring at an end: tress springs their first particle like the others'"
        ));
    }
    notes
}

/// The simulator settings of the project: its integrator, root springs, equal particle
/// masses, no hair–hair interaction, no settling before the first frame, `substeps` steps per
/// frame.
pub fn sim_options(p: &MssPhysics, substeps: u32) -> crate::sim::SimOptions {
    crate::sim::SimOptions {
        integrator: Integrator::Symplectic,
        substeps,
        adaptive: false,
        hair_hair: false,
        clamp_root: false,
        uniform_mass: true,
        root_spring: p.root_spring,
        preroll_frames: 0,
        ..Default::default()
    }
}

/// Steps per frame of the project's explicit integrator at 24 fps with tress's contact. The
/// stiffest term is not the hair's springs but tress's contact response (2·10⁶ cm/s² per cm,
/// damped at 2800/s), which an explicit step must resolve: damping alone needs h < 2/2800 s,
/// 34 steps per frame. On the generated scene 40 steps blow up (peak speed 10⁴ cm/s), 60 and
/// 80 overshoot (169, 87 cm/s), 100 are within 4 % of 140 (81 and 78 cm/s). Other frame rates
/// keep the step: [`default_substeps`].
pub const DEFAULT_SUBSTEPS: u32 = 100;

/// Steps per frame at 24 fps with the project's own contact (`contact = "reflect"`) and its
/// symplectic integrator: the hair's springs are then the stiffest term. The generated scene's
/// springs (k/m = 4·10⁵ /s²) make a chain whose highest frequency is 2√(k/m) = 1265 rad/s, so
/// symplectic Euler needs h < 2 / 1265 s: 27 steps per frame. Measured: 28 blow up (2800
/// cm/s), 30 hold (74 cm/s), 40 are within 3 % of 140 (77.9, 75.7 cm/s). With the implicit
/// integrator 10 steps hold (book: Simulation, the student project's scenes).
pub const REFLECT_SUBSTEPS: u32 = 40;

/// Steps per frame at `fps` frames per second for the same time step as at 24 fps
/// ([`DEFAULT_SUBSTEPS`], or [`REFLECT_SUBSTEPS`] with 004's contact): 100 at 24 fps, 50 at 48,
/// 125 at 19.2.
pub fn default_substeps(fps: f64, contact: crate::sim::contact::Contact) -> u32 {
    let base = match contact {
        crate::sim::contact::Contact::Penalty => DEFAULT_SUBSTEPS,
        crate::sim::contact::Contact::Reflect => REFLECT_SUBSTEPS,
    };
    if !(fps > 0.0 && fps.is_finite()) {
        return base;
    }
    ((base as f64 * 24.0 / fps).ceil() as u32).clamp(1, 10_000)
}

/// Which way the generator's hairs leave the head (the project's `spread`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spread {
    /// Away from the centre.
    Radial,
    /// Away from the vertical axis, level.
    Horizontal,
    /// Straight up.
    Up,
}

/// The project's scene generator (`generate_hairs.py`): roots on a spiral projected onto the
/// top of the unit sphere (mode 1: step 4/n, radius θ^0.7 / n while under 0.95), each hair
/// `points` particles `step` apart, springs along the hairs, a zero-length spring at each root.
#[derive(Clone, Debug)]
pub struct Generator {
    /// The project's density n (15 gives its default 167 hairs).
    pub density: usize,
    pub points: usize,
    pub step: f64,
    pub spread: Spread,
    pub mass: f64,
    pub stiffness: f64,
    pub root_stiffness: f64,
    pub centre: [f64; 3],
    pub velocity: [f64; 3],
}

impl Default for Generator {
    /// The project's defaults (density 15, 8 particles 0.025 apart, radial); masses and
    /// stiffnesses are tress's choice (the report gives none): mass 1, springs 4·10⁵ (about 8 %
    /// stretch at the root under the hair's weight at 10 cm per unit), root springs 4·10⁵.
    fn default() -> Self {
        Generator {
            density: 15,
            points: 8,
            step: 0.025,
            spread: Spread::Radial,
            mass: 1.0,
            stiffness: 4.0e5,
            root_stiffness: 4.0e5,
            centre: [0.0; 3],
            velocity: [0.25, 0.0, 0.0],
        }
    }
}

impl Generator {
    /// The roots on the unit sphere around the origin (the project's `generateRoots`, mode 1).
    pub fn roots(&self) -> Vec<DVec3> {
        let n = self.density.max(1) as f64;
        let (step, a) = (4.0 / n, 1.0 / n);
        let mut roots = Vec::new();
        let mut theta: f64 = 0.0;
        let mut rad = 0.0;
        while rad < 0.95 * HEAD_RADIUS {
            roots.push(DVec3::new(
                rad * theta.cos(),
                (HEAD_RADIUS * HEAD_RADIUS - rad * rad).sqrt(),
                rad * theta.sin(),
            ));
            theta += step;
            rad = a * theta.powf(0.7);
        }
        roots
    }

    /// The scene.
    pub fn scene(&self) -> Result<MssScene> {
        if self.points < 2 || !positive(self.step) || !positive(self.mass) {
            return Err(Error::Invalid(
                "a generated scene needs at least 2 points per hair, a positive step and mass".into(),
            ));
        }
        let c = DVec3::from_array(self.centre);
        let mut scene = MssScene {
            head_center: self.centre,
            head_velocity: self.velocity,
            ..Default::default()
        };
        for base in self.roots() {
            let dir = match self.spread {
                Spread::Radial => base,
                Spread::Horizontal => base * DVec3::new(1.0, 0.0, 1.0),
                Spread::Up => DVec3::Y,
            };
            let d = dir.try_normalize().unwrap_or(DVec3::X);
            let first = scene.particles.len();
            for i in 0..self.points {
                let p = c + base + i as f64 * self.step * d;
                scene.particles.push(Particle {
                    position: p.to_array(),
                    velocity: [0.0; 3],
                    mass: self.mass,
                });
                if i > 0 {
                    scene.springs.push(Spring {
                        a: first + i - 1,
                        b: first + i,
                        stiffness: self.stiffness,
                    });
                }
            }
            scene.pins.push(Pin {
                particle: first,
                anchor: (c + base).to_array(),
                stiffness: self.root_stiffness,
            });
        }
        Ok(scene)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::contact::Contact;

    #[test]
    fn the_generator_makes_the_projects_default_head() {
        // 004: "Using my default parameters will give you a head of 167 hairs with 1336 total
        // vertices."
        let s = Generator::default().scene().unwrap();
        let strands = s.strands().unwrap();
        assert_eq!(strands.counts.len(), 167);
        assert_eq!(s.particles.len(), 1336);
        // Roots on the unit sphere's top, spaced along the hairs by the step.
        for p in &s.pins {
            let r = DVec3::from_array(p.anchor);
            assert!((r.length() - 1.0).abs() < 1e-12 && r.y > 0.3);
        }
        let d =
            DVec3::from_array(s.particles[1].position).distance(DVec3::from_array(s.particles[0].position));
        assert!((d - 0.025).abs() < 1e-12);
    }

    #[test]
    fn a_hanging_chain_settles_where_hookes_law_puts_it() {
        // Four particles of mass 1 hanging 1 unit apart, k = 2000, the root on a zero-length
        // spring k0 = 4000, 10 cm per unit, g = 98.1 units/s². At rest each spring carries the
        // particles below it: spring i stretches (3 − i) m g / k = (3 − i) · 0.4905 cm, and
        // the root spring carries all four: sag 4 m g / k0 = 0.981 cm. Air drag (which moves no
        // equilibrium) lets it settle. With the end particles at half mass (a groom's masses)
        // the last spring would stretch 2/3 as far: the mapping needs equal masses.
        let scene = tress_formats::mss::parse(
            b"v 0 5 0 0 0 0 1\nv 0 4 0 0 0 0 1\nv 0 3 0 0 0 0 1\nv 0 2 0 0 0 0 1\n\
              s 0 1 2000\ns 1 2 2000\ns 2 3 2000\nz 0 0 5 0 4000\nc 0 -20 0\nh 0 0 0\n",
        )
        .unwrap();
        let p = physics(&scene, 10.0, crate::groom::UpAxis::Y).unwrap();
        let strands = scene.strands().unwrap();
        let points: Vec<Vec3> = strands
            .points
            .iter()
            .map(|q| Vec3::from_array(*q) * 10.0)
            .collect();
        let groom =
            crate::groom::Groom::new(points.clone(), strands.counts.clone(), Default::default()).unwrap();
        let mut material = p.material.clone();
        material.air_damping = 20.0;
        let colliders = crate::collide::Colliders::on_head(
            Vec::new(),
            crate::motion::HeadTrack::still(crate::motion::Pose::IDENTITY),
        );
        let mut sim = crate::sim::Simulation::new(&groom, material, sim_options(&p, 100), colliders, 0.0);
        for _ in 0..240 {
            sim.step_frame(1.0 / 24.0, false);
        }
        let speed = sim.v.iter().map(|v| v.length()).fold(0.0, f32::max);
        assert!(speed < 0.05, "still moving at {speed} cm/s");
        for i in 0..3 {
            let stretch = sim.x[i].distance(sim.x[i + 1]) - 10.0;
            let want = (3 - i) as f32 * 0.4905;
            assert!(
                (stretch - want).abs() < 1e-3 * want.max(1.0),
                "spring {i}: {stretch} cm, want {want}"
            );
        }
        let sag = points[0].y - sim.x[0].y;
        assert!((sag - 0.981).abs() < 1e-3, "root sag {sag} cm, want 0.981");
    }

    #[test]
    fn pins_tress_cannot_follow_are_noted() {
        // A three-particle chain held in its middle and at both ends, and a free chain.
        let scene = tress_formats::mss::parse(
            b"v 0 1 0 0 0 0 1\nv 0 2 0 0 0 0 1\nv 0 3 0 0 0 0 1\nv 5 1 0 0 0 0 1\nv 5 2 0 0 0 0 1\n\
              s 0 1 10\ns 1 2 10\ns 3 4 10\nz 0 0 1 0 5\nz 1 0 2 0 5\nz 2 0 3 0 5\nc 0 0 0\nh 0 0 0\n",
        )
        .unwrap();
        let p = physics(&scene, 10.0, crate::groom::UpAxis::Y).unwrap();
        let all = p.notes.join("\n");
        assert!(
            all.contains("1 zero-length springs hold particles inside a strand"),
            "{all}"
        );
        assert!(all.contains("1 strands are held at both ends"), "{all}");
        assert!(all.contains("1 strands have no zero-length spring"), "{all}");
        // Bad stiffness names its particle.
        let bad = tress_formats::mss::parse(
            b"v 0 1 0 0 0 0 1\nv 0 2 0 0 0 0 1\ns 0 1 10\nz 0 0 1 0 -5\nc 0 0 0\nh 0 0 0\n",
        )
        .unwrap();
        let e = physics(&bad, 10.0, crate::groom::UpAxis::Y)
            .unwrap_err()
            .to_string();
        assert!(e.contains("particle 0"), "{e}");
    }

    #[test]
    fn the_default_step_is_kept_at_other_frame_rates() {
        assert_eq!(default_substeps(24.0, Contact::Penalty), 100);
        assert_eq!(default_substeps(48.0, Contact::Penalty), 50);
        assert_eq!(default_substeps(30.0, Contact::Penalty), 80);
        assert_eq!(default_substeps(25.0, Contact::Penalty), 96);
        assert_eq!(default_substeps(24.0, Contact::Reflect), REFLECT_SUBSTEPS);
    }

    #[test]
    fn physics_maps_hooke_springs_to_tress_units() {
        // Two particles of mass 2, 0.5 units apart, k = 100, one pinned with k = 30, 10 cm per unit:
        // stretch = k L / m = 100 · 5 cm / 2 = 250 cm/s²; root spring = 30 / 2 = 15 1/s².
        let scene = tress_formats::mss::parse(
            b"v 0 1 0 0 0 0 2\nv 0 1.5 0 0 0 0 2\ns 0 1 100\nz 0 0 1 0 30\nc 0 0 0\nh 0 0 1\n",
        )
        .unwrap();
        let p = physics(&scene, 10.0, crate::groom::UpAxis::Y).unwrap();
        assert!((p.material.stretch - 250.0).abs() < 1e-3);
        assert_eq!(p.root_spring, Some(15.0));
        assert_eq!(p.velocity, DVec3::new(0.0, 0.0, 10.0));
        assert!(p.notes.iter().all(|n| !n.contains("anchor")));
        // An anchor away from its particle is reported.
        let moved =
            tress_formats::mss::parse(b"v 0 1 0 0 0 0 2\nv 0 1.5 0 0 0 0 2\ns 0 1 100\nz 0 0 1.1 0 30\n")
                .unwrap();
        let p = physics(&moved, 10.0, crate::groom::UpAxis::Y).unwrap();
        assert!(p.notes.iter().any(|n| n.contains("anchor")), "{:?}", p.notes);
    }
}
