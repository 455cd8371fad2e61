//! The stepping loop: head motion → hair–hair grid → per strand (in parallel) repulsion and
//! friction from the grid, dynamics, strain limiting, collisions. Substeps per frame adapt to
//! how fast the roots move. Results do not depend on the number of threads.

use std::time::{Duration, Instant};

use glam::Vec3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::contact::{ContactStats, Touch, collide, limit_strain, touches};
use super::counters::Counters;
use super::material::Material;
use super::model::{ModelOptions, Pin, StrandModel};
use super::strand::{Integrator, Scratch, StepInput, step_strand};
use super::volume::HairGrid;
use crate::collide::Colliders;
use crate::groom::Groom;
use crate::motion::Pose;

/// Settings of the solver, with their defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimOptions {
    pub integrator: Integrator,
    /// Substeps per frame at least.
    pub substeps: u32,
    /// Add substeps on frames where the roots' motion changes fast (up to 16 × `substeps`).
    pub adaptive: bool,
    /// Largest change of root travel between consecutive frames (second difference, cm) per
    /// substep before adaptivity adds substeps.
    pub max_root_travel: f32,
    /// Volumetric hair–hair interaction.
    pub hair_hair: bool,
    /// Cell size of the hair–hair grid (cm).
    pub hair_cell: f32,
    /// Distance kept from colliders (cm).
    pub collision_margin: f32,
    /// Pin the second particle of every strand to the head too.
    pub clamp_root: bool,
    /// Give every particle of a strand the same mass (mass–spring scenes such as 004's) instead
    /// of half of each of its two segments'.
    pub uniform_mass: bool,
    /// Zero-length root springs of this stiffness instead of kinematic roots (004).
    pub root_spring: Option<f32>,
    /// Frames simulated at the first head pose before the first output frame, so the groom
    /// settles under gravity.
    pub preroll_frames: u32,
    /// Speed above which the simulation is declared unstable (cm/s).
    pub max_speed: f32,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            integrator: Integrator::Implicit,
            substeps: 2,
            adaptive: true,
            max_root_travel: 0.5,
            hair_hair: true,
            hair_cell: 1.5,
            collision_margin: 0.03,
            clamp_root: true,
            uniform_mass: false,
            root_spring: None,
            preroll_frames: 24,
            max_speed: 5.0e4,
        }
    }
}

/// What one frame did.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct FrameStats {
    pub substeps: u32,
    pub max_speed: f32,
    /// Largest strain seen before limiting, over the frame.
    pub max_strain: f32,
    /// Deepest penetration found before projection, over the frame (cm).
    pub deepest_contact: f32,
    /// Deepest penetration left at the end of the frame (cm, 0 if none).
    pub residual_penetration: f32,
    pub contacts: u64,
}

/// Extra accelerations on the simulated particles, worked out from the state at the start of
/// each substep and applied through it (the two-way coupling of reduced models, 001 §5).
pub trait ExternalForces: Send {
    /// World-space accelerations (cm/s², one per particle) for the substep starting at `time`
    /// with positions `x`; `None` for none.
    fn accelerations(&mut self, x: &[Vec3], time: f64, colliders: &Colliders) -> Option<Vec<Vec3>>;
}

/// A strand simulation in progress.
pub struct Simulation {
    pub model: StrandModel,
    pub material: Material,
    pub options: SimOptions,
    pub colliders: Colliders,
    pub x: Vec<Vec3>,
    pub v: Vec<Vec3>,
    /// Current time (s).
    pub time: f64,
    pub counters: Counters,
    /// Where extra accelerations come from, if anywhere.
    pub forces: Option<Box<dyn ExternalForces>>,
    /// This frame's extra accelerations (empty: none).
    external: Vec<Vec3>,
    grid: HairGrid,
    rest_density: f32,
}

/// Hair–hair repulsion starts where the grid density exceeds this multiple of the rest groom's
/// typical (95th percentile) density.
const DENSITY_SLACK: f32 = 1.2;

impl Simulation {
    /// A simulation of `groom` (its rest pose, in the head's frame) starting at time `start`
    /// with the head at its pose then; hair at rest.
    pub fn new(
        groom: &Groom,
        material: Material,
        options: SimOptions,
        colliders: Colliders,
        start: f64,
    ) -> Simulation {
        let model = StrandModel::new(
            groom,
            &material,
            &ModelOptions {
                clamp_root: options.clamp_root,
                uniform_mass: options.uniform_mass,
                ..Default::default()
            },
        );
        let pose = colliders.head.at(start);
        let x: Vec<Vec3> = model.rest.iter().map(|p| pose.apply_f32(*p)).collect();
        let v = vec![Vec3::ZERO; x.len()];
        let mut grid = HairGrid::default();
        grid.build(&x, &v, &model.mass, &model.offsets, options.hair_cell);
        let mut densities: Vec<f32> = x.iter().map(|p| grid.sample(*p).density).collect();
        densities.sort_by(f32::total_cmp);
        let rest_density = densities
            .get(densities.len() * 95 / 100)
            .copied()
            .unwrap_or(1.0)
            .max(1e-6)
            * DENSITY_SLACK;
        Simulation {
            model,
            material,
            options,
            colliders,
            x,
            v,
            time: start,
            counters: Counters::default(),
            forces: None,
            external: Vec::new(),
            grid,
            rest_density,
        }
    }

    /// World targets of head-pinned particles at time `t`.
    fn targets(&self, pose: &Pose, out: &mut Vec<Vec3>) {
        out.clear();
        out.extend(
            self.model
                .rest
                .iter()
                .zip(&self.model.pins)
                .map(|(p, pin)| match pin {
                    Pin::Head => pose.apply_f32(*p),
                    _ => Vec3::ZERO,
                }),
        );
    }

    /// Number of substeps for the frame from `t0` to `t0 + dt`.
    fn substeps_for(&self, t0: f64, dt: f64) -> u32 {
        let base = self.options.substeps.max(1);
        if !self.options.adaptive {
            return base;
        }
        // What the hair cannot follow in one step is the change of the roots' motion, not the
        // motion itself (a head carried at constant velocity drags the hair along): measure
        // each root's second difference over the frame.
        let (p0, p1, p2) = (
            self.colliders.head.at(t0 - dt),
            self.colliders.head.at(t0),
            self.colliders.head.at(t0 + dt),
        );
        let travel = self
            .model
            .offsets
            .iter()
            .take(self.model.strand_count())
            .map(|&o| {
                let r = self.model.rest[o];
                (p2.apply_f32(r) - 2.0 * p1.apply_f32(r) + p0.apply_f32(r)).length()
            })
            .fold(0.0f32, f32::max);
        let need = (travel / self.options.max_root_travel).ceil() as u32;
        need.clamp(base, base * 16)
    }

    /// Advances by `dt` seconds (one frame). With `hold_head`, the head stays at its current
    /// pose (pre-roll).
    pub fn step_frame(&mut self, dt: f64, hold_head: bool) -> FrameStats {
        let t_start = Instant::now();
        let t0 = self.time;

        let substeps = if hold_head {
            self.options.substeps.max(1)
        } else {
            self.substeps_for(t0, dt)
        };
        let h = (dt / substeps as f64) as f32;
        let mut stats = FrameStats {
            substeps,
            ..Default::default()
        };
        let mut targets = Vec::new();
        let hold = self.colliders.head.at(t0);
        for k in 0..substeps {
            let t1 = if hold_head {
                t0
            } else {
                t0 + dt * (k + 1) as f64 / substeps as f64
            };
            let pose = if hold_head {
                hold
            } else {
                self.colliders.head.at(t1)
            };
            self.targets(&pose, &mut targets);
            let s = self.substep(h, t1, &pose, &targets, hold_head);
            stats.max_strain = stats.max_strain.max(s.0);
            stats.deepest_contact = stats.deepest_contact.max(s.1.deepest);
            stats.contacts += s.1.contacts as u64;
        }
        if !hold_head {
            self.time = t0 + dt;
        }
        stats.max_speed = self.v.iter().map(|u| u.length()).fold(0.0, f32::max);
        stats.residual_penetration = self.deepest_penetration();
        self.counters.total += t_start.elapsed();
        stats
    }

    /// Deepest particle inside a collider now (cm; 0 when none is inside).
    pub fn deepest_penetration(&self) -> f32 {
        let frame = self.colliders.at(self.time);
        let roots_free = self.options.root_spring.is_some();
        self.x
            .par_iter()
            .zip(&self.model.pins)
            .filter(|(_, p)| p.collides(roots_free))
            .map(|(x, _)| {
                frame
                    .query_near(*x, 0.0, u64::MAX)
                    .map_or(0.0, |c| (-c.distance).max(0.0))
            })
            .reduce(|| 0.0, f32::max)
    }

    fn substep(
        &mut self,
        h: f32,
        t1: f64,
        pose: &Pose,
        targets: &[Vec3],
        hold_head: bool,
    ) -> (f32, ContactStats) {
        if let Some(mut f) = self.forces.take() {
            let t = Instant::now();
            let now = if hold_head { self.time } else { t1 - h as f64 };
            self.external = f.accelerations(&self.x, now, &self.colliders).unwrap_or_default();
            self.forces = Some(f);
            self.counters.external += t.elapsed();
        }
        let hair_hair =
            self.options.hair_hair && (self.material.hair_friction > 0.0 || self.material.repulsion > 0.0);
        let roots_free = self.options.root_spring.is_some();
        if hair_hair {
            let t = Instant::now();
            self.grid.build(
                &self.x,
                &self.v,
                &self.model.mass,
                &self.model.offsets,
                self.options.hair_cell,
            );
            self.counters.hair_hair += t.elapsed();
        }
        let input = StepInput {
            h,
            gravity: self.material.gravity,
            air_damping: self.material.air_damping,
            targets,
            root_spring: self.options.root_spring,
            margin: self.options.collision_margin,
            friction: self.material.friction,
            head_rotation: pose.rotation.as_quat(),
        };
        let model = &self.model;
        let material = &self.material;
        let options = &self.options;
        let colliders = self.colliders.at(if hold_head { self.time } else { t1 });
        let colliders = &colliders;
        let grid = &self.grid;
        let rest_density = self.rest_density;
        let external = &self.external;
        // Split x and v into per-strand slices processed in parallel.
        let mut slices: Vec<(usize, &mut [Vec3], &mut [Vec3])> = Vec::with_capacity(model.strand_count());
        {
            let (mut xr, mut vr) = (self.x.as_mut_slice(), self.v.as_mut_slice());
            for s in 0..model.strand_count() {
                let n = model.counts[s] as usize;
                let (xs, xrest) = xr.split_at_mut(n);
                let (vs, vrest) = vr.split_at_mut(n);
                slices.push((s, xs, vs));
                xr = xrest;
                vr = vrest;
            }
        }
        let results: Vec<(f32, ContactStats, [Duration; 4])> = slices
            .into_par_iter()
            .map_init(
                || {
                    (
                        Scratch::default(),
                        Vec::<Vec3>::new(),
                        Vec::<Option<Touch>>::new(),
                    )
                },
                |(sc, ext, near), (s, x, v)| {
                    let mut times = [Duration::ZERO; 4];
                    let t = Instant::now();
                    touches(
                        model,
                        s,
                        x,
                        v,
                        h,
                        colliders,
                        options.collision_margin,
                        roots_free,
                        near,
                    );
                    times[1] = t.elapsed();
                    ext.clear();
                    ext.resize(x.len(), Vec3::ZERO);
                    if hair_hair {
                        let t = Instant::now();
                        for i in 0..x.len() {
                            let g = grid.sample(x[i]);
                            // Friction: move toward the neighbours' mean velocity.
                            v[i] += material.hair_friction * (g.velocity - v[i]);
                            // Repulsion where denser than the rest groom.
                            let excess = (g.density / rest_density - 1.0).clamp(0.0, 1.0);
                            let gl = g.gradient.length();
                            if excess > 0.0 && gl > 1e-9 {
                                ext[i] = -material.repulsion * excess * g.gradient / gl;
                            }
                        }
                        times[2] = t.elapsed();
                    }
                    if !external.is_empty() {
                        let o = model.offsets[s];
                        for (e, a) in ext.iter_mut().zip(&external[o..o + x.len()]) {
                            *e += *a;
                        }
                    }
                    let t = Instant::now();
                    step_strand(model, s, x, v, ext, near, &input, options.integrator, sc);
                    times[0] = t.elapsed();
                    let t = Instant::now();
                    let strain = limit_strain(model, s, x, v, material.max_strain, h);
                    times[3] = t.elapsed();
                    let t = Instant::now();
                    let contact = collide(
                        model,
                        s,
                        x,
                        v,
                        colliders,
                        options.collision_margin,
                        material.friction,
                        h,
                        roots_free,
                    );
                    times[1] += t.elapsed();
                    (strain, contact, times)
                },
            )
            .collect();
        let mut strain: f32 = 0.0;
        let mut contacts = ContactStats::default();
        for (s, c, times) in results {
            strain = strain.max(s);
            contacts.contacts += c.contacts;
            contacts.deepest = contacts.deepest.max(c.deepest);
            self.counters.dynamics += times[0];
            self.counters.collisions += times[1];
            self.counters.hair_hair += times[2];
            self.counters.strain += times[3];
        }
        self.counters.steps += 1;
        self.counters.particle_steps += self.x.len() as u64;
        (strain, contacts)
    }

    /// Head pose at the current time.
    pub fn head_pose(&self) -> Pose {
        self.colliders.head.at(self.time)
    }
}
