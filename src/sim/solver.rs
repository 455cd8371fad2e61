//! The stepping loop: head motion → hair–hair grid → per strand (in parallel) repulsion and
//! friction from the grid, dynamics, strain limiting, collisions. Substeps per frame adapt to
//! how fast the roots move. Results do not depend on the number of threads.

use std::time::{Duration, Instant};

use glam::Vec3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::contact::{Contact, ContactStats, Response, Touch, collide, touches};
use super::counters::Counters;
use super::inextensible::{limit_strain, limit_strain_both_ways};
use super::material::Material;
use super::model::{AltitudeSprings, ModelOptions, Pin, StrandModel};
use super::strand::{Integrator, Scratch, StepInput, step_strand};
use super::strand_contact::{ContactParams, SegmentTouch, StrandContactStats, StrandContacts};
use super::volume::HairGrid;
use crate::collide::{ColliderFrame, Colliders};
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
    /// Strand–strand contacts (`strand_contact/`): segments of different strands kept
    /// `contact_thickness` apart, checked over each step so they do not pass through each other
    /// (beside the hair–hair grid, which does not stop sparse strands crossing). For sparse
    /// hair: a whole groom costs about 200× the step.
    pub strand_contacts: bool,
    /// Distance kept between strands' centre lines (cm).
    pub contact_thickness: f32,
    /// Coulomb friction coefficient between strands in contact.
    pub contact_friction: f32,
    /// Gauss–Seidel sweeps of the contact response per step, at most.
    pub contact_iterations: u32,
    /// Altitude springs per tetrahedron: `all` (the default: one per non-flat rest altitude) or
    /// `selle` (one, on the shortest current altitude, as Selle et al. 2008; its `altitude`
    /// stiffness must be about 20× higher for the same curl retention).
    pub altitude_springs: AltitudeSprings,
    /// How particles meet the colliders: `penalty` (tress's resting contact and projection
    /// with friction) or `reflect` (004's: velocity reflected, `reflect_keep` of it kept).
    pub contact: Contact,
    /// Share of the reflected velocity kept by `contact = "reflect"` (004: 0.6).
    pub reflect_keep: f32,
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
            strand_contacts: false,
            contact_thickness: 0.1,
            contact_friction: 0.2,
            contact_iterations: 16,
            altitude_springs: AltitudeSprings::All,
            contact: Contact::Penalty,
            reflect_keep: 0.6,
        }
    }
}

impl SimOptions {
    /// What particles found inside a collider after a step of `h` seconds get (`mu`: the
    /// material's friction).
    pub fn response(&self, mu: f32, h: f32) -> Response {
        match self.contact {
            Contact::Penalty => Response::Project {
                margin: self.collision_margin,
                mu,
                h,
            },
            Contact::Reflect => Response::Reflect {
                keep: self.reflect_keep,
            },
        }
    }

    /// Checks the strand–strand contact settings (the others are guarded where they are used):
    /// a thickness within (0, 10] cm keeps the contact grid's cells near a segment's size.
    pub fn check(&self) -> std::result::Result<(), String> {
        if !(0.0..=1.0).contains(&self.reflect_keep) {
            return Err(format!(
                "reflect_keep must be within [0, 1], not {}",
                self.reflect_keep
            ));
        }
        if self.contact == Contact::Reflect && self.strand_contacts {
            return Err(
                "contact = \"reflect\" (004's response) does not combine with strand_contacts".into(),
            );
        }
        if self.strand_contacts {
            if !(self.contact_thickness > 0.0 && self.contact_thickness <= 10.0) {
                return Err(format!(
                    "contact_thickness must be within (0, 10] cm, not {}",
                    self.contact_thickness
                ));
            }
            if !(self.contact_friction >= 0.0 && self.contact_friction.is_finite()) {
                return Err(format!(
                    "contact_friction must be a number ≥ 0, not {}",
                    self.contact_friction
                ));
            }
            if !(1..=1000).contains(&self.contact_iterations) {
                return Err(format!(
                    "contact_iterations must be within 1..=1000, not {}",
                    self.contact_iterations
                ));
            }
        }
        Ok(())
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
    /// Strand–strand contacts over the frame (segment pairs, summed over substeps).
    pub strand_contacts: u64,
    /// Largest strand–strand overlap found before the response, over the frame (cm).
    pub deepest_strand_contact: f32,
}

/// Extra accelerations on the simulated particles, worked out from the state at the start of
/// each substep and applied through it (the two-way coupling of reduced models, 001 §5).
pub trait ExternalForces: Send {
    /// World-space accelerations (cm/s², one per particle) for the substep starting at `time`
    /// with positions `x`; `None` for none.
    fn accelerations(&mut self, x: &[Vec3], time: f64, colliders: &Colliders) -> Option<Vec<Vec3>>;
}

/// `x` and `v` split into per-strand slices (strand index, positions, velocities), to be
/// processed in parallel.
type StrandSlice<'a> = (usize, &'a mut [Vec3], &'a mut [Vec3], &'a mut [bool]);

/// Per-strand slices of `x`, `v` and `flags` (which may be empty: then every strand gets an
/// empty slice of it).
fn strand_slices<'a>(
    model: &StrandModel,
    x: &'a mut [Vec3],
    v: &'a mut [Vec3],
    flags: &'a mut [bool],
) -> Vec<StrandSlice<'a>> {
    let mut slices = Vec::with_capacity(model.strand_count());
    let (mut xr, mut vr, mut fr) = (x, v, flags);
    for s in 0..model.strand_count() {
        let n = model.counts[s] as usize;
        let (xs, xrest) = std::mem::take(&mut xr).split_at_mut(n);
        let (vs, vrest) = std::mem::take(&mut vr).split_at_mut(n);
        let nf = n.min(fr.len());
        let (fs, frest) = std::mem::take(&mut fr).split_at_mut(nf);
        slices.push((s, xs, vs, fs));
        xr = xrest;
        vr = vrest;
        fr = frest;
    }
    slices
}

/// In strand–strand contacts, particles resting on a collider count this many times heavier:
/// hair lying on the head is not pressed into it by the hair above, which takes most of the
/// push.
const SUPPORTED_MASS: f32 = 10.0;

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
    /// Strand–strand contacts: buffers, positions at the start of the step, inverse masses
    /// (0 for kinematic particles) and which strands the response moved.
    contacts: StrandContacts,
    x_start: Vec<Vec3>,
    inv_mass: Vec<f32>,
    moved: Vec<bool>,
    /// Segment contacts for the implicit step, grouped by strand, and where each strand's start.
    segment_touches: Vec<(u32, SegmentTouch)>,
    segment_offsets: Vec<usize>,
    /// Particles within reach of a collider at the start of the step.
    supported: Vec<bool>,
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
                altitude_springs: options.altitude_springs,
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
            contacts: StrandContacts::default(),
            x_start: Vec::new(),
            inv_mass: Vec::new(),
            moved: Vec::new(),
            segment_touches: Vec::new(),
            segment_offsets: Vec::new(),
            supported: Vec::new(),
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
            stats.strand_contacts += s.2.contacts;
            stats.deepest_strand_contact = stats.deepest_strand_contact.max(s.2.deepest);
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

    /// One substep of every strand: external accelerations, the hair–hair grid, the
    /// strand–strand touches, then each strand's step (`strand::step_strand`) with its
    /// collider touches, hair–hair friction and repulsion, strain limiting and collider
    /// projection, in parallel; then the strand–strand response.
    fn substep(
        &mut self,
        h: f32,
        t1: f64,
        pose: &Pose,
        targets: &[Vec3],
        hold_head: bool,
    ) -> (f32, ContactStats, StrandContactStats) {
        self.external_accelerations(h, t1, hold_head);
        let hair_hair =
            self.options.hair_hair && (self.material.hair_friction > 0.0 || self.material.repulsion > 0.0);
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
        if self.options.strand_contacts {
            self.segment_touches(h);
        }
        let colliders = self.colliders.at(if hold_head { self.time } else { t1 });
        let step = StrandStep {
            h,
            input: StepInput {
                h,
                gravity: self.material.gravity,
                air_damping: self.material.air_damping,
                targets,
                root_spring: self.options.root_spring,
                margin: self.options.collision_margin,
                friction: self.material.friction,
                head_rotation: pose.rotation.as_quat(),
                strand_friction: self.options.contact_friction,
            },
            model: &self.model,
            material: &self.material,
            options: &self.options,
            colliders: &colliders,
            grid: &self.grid,
            rest_density: self.rest_density,
            external: &self.external,
            segment_touches: &self.segment_touches,
            segment_offsets: &self.segment_offsets,
            hair_hair,
            contacts_on: self.options.strand_contacts,
            roots_free: self.options.root_spring.is_some(),
        };
        if step.contacts_on {
            self.supported.resize(self.x.len(), false);
        }
        let supported: &mut [bool] = if step.contacts_on {
            &mut self.supported
        } else {
            &mut []
        };
        let slices = strand_slices(step.model, &mut self.x, &mut self.v, supported);
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
                |buffers, (s, x, v, supported)| step.strand(s, x, v, supported, buffers),
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
        let strand_stats = if self.options.strand_contacts {
            self.strand_contacts(h, t1, hold_head, &mut contacts)
        } else {
            StrandContactStats::default()
        };
        self.counters.steps += 1;
        self.counters.particle_steps += self.x.len() as u64;
        (strain, contacts, strand_stats)
    }

    /// The extra accelerations of the step's start (two-way correction), if any.
    fn external_accelerations(&mut self, h: f32, t1: f64, hold_head: bool) {
        if let Some(mut f) = self.forces.take() {
            let t = Instant::now();
            let now = if hold_head { self.time } else { t1 - h as f64 };
            self.external = f.accelerations(&self.x, now, &self.colliders).unwrap_or_default();
            self.forces = Some(f);
            self.counters.external += t.elapsed();
        }
    }

    /// The strand–strand touches of the coming step, grouped by strand.
    fn segment_touches(&mut self, h: f32) {
        let t = Instant::now();
        self.x_start.clone_from(&self.x);
        // Plain inverse masses: which particles rest on a collider is known only after the
        // step's own collider tests (and nothing carries over from the step before, so a
        // run resumed from a checkpoint takes the same steps).
        self.update_inv_mass(false);
        self.contacts.touches(
            self.options.contact_thickness,
            &self.model.offsets,
            &self.inv_mass,
            &self.model.rest,
            &self.x,
            &self.v,
            h,
            &mut self.segment_touches,
        );
        // Where each strand's touches start (they are grouped by strand).
        self.segment_offsets.clear();
        let mut k = 0;
        for s in 0..=self.model.strand_count() {
            while k < self.segment_touches.len() && (self.segment_touches[k].0 as usize) < s {
                k += 1;
            }
            self.segment_offsets.push(k);
        }
        self.counters.strand_contacts += t.elapsed();
    }

    /// Inverse masses for strand–strand contacts: 0 for kinematic particles (pins may have been
    /// changed since the start); with `supported`, particles this step found resting on a
    /// collider are heavier.
    fn update_inv_mass(&mut self, supported: bool) {
        let roots_free = self.options.root_spring.is_some();
        self.supported.resize(self.x.len(), false);
        self.inv_mass.clear();
        self.inv_mass.extend(
            self.model
                .mass
                .iter()
                .zip(&self.model.pins)
                .zip(&self.supported)
                .map(|((m, p), on)| {
                    let scale = if supported && *on {
                        1.0 / SUPPORTED_MASS
                    } else {
                        1.0
                    };
                    match p {
                        Pin::Free => scale / m,
                        Pin::Head if roots_free => scale / m,
                        _ => 0.0,
                    }
                }),
        );
    }

    /// Strand–strand contacts over the step just taken; strands they moved meet the colliders
    /// again.
    fn strand_contacts(
        &mut self,
        h: f32,
        t1: f64,
        hold_head: bool,
        contacts: &mut ContactStats,
    ) -> StrandContactStats {
        let t = Instant::now();
        let roots_free = self.options.root_spring.is_some();
        self.update_inv_mass(true);
        let params = ContactParams {
            thickness: self.options.contact_thickness,
            friction: self.options.contact_friction,
            iterations: self.options.contact_iterations,
        };
        let model = &self.model;
        let max_strain = self.material.max_strain;
        let colliders = self.colliders.at(if hold_head { self.time } else { t1 });
        let response = self.options.response(self.material.friction, h);
        let inv_mass = &self.inv_mass;
        let stats = self.contacts.resolve(
            &params,
            &model.offsets,
            inv_mass,
            &model.rest,
            &self.x_start,
            &mut self.x,
            &mut self.v,
            h,
            &mut self.moved,
            // Between sweeps, the strands moved keep their length and stay out of the colliders,
            // so contacts, inextensibility and colliders are satisfied together.
            &mut |x, v, moved| {
                for (s, _) in moved.iter().enumerate().filter(|(_, m)| **m) {
                    let r = model.offsets[s]..model.offsets[s + 1];
                    let o = model.offsets[s];
                    let (xs, vs) = (&mut x[r.clone()], &mut v[r.clone()]);
                    limit_strain_both_ways(xs, &inv_mass[r], |i| model.edge_rest(s, o + i), max_strain);
                    collide(model, s, xs, vs, &colliders, response, roots_free);
                }
            },
        );
        self.counters.strand_contacts += t.elapsed();
        // Then the colliders, for every strand.
        let t = Instant::now();
        let model = &self.model;
        let found: Vec<ContactStats> = strand_slices(model, &mut self.x, &mut self.v, &mut [])
            .into_par_iter()
            .map(|(s, x, v, _)| collide(model, s, x, v, &colliders, response, roots_free))
            .collect();
        for c in found {
            contacts.contacts += c.contacts;
            contacts.deepest = contacts.deepest.max(c.deepest);
        }
        self.counters.collisions += t.elapsed();
        stats
    }

    /// Head pose at the current time.
    pub fn head_pose(&self) -> Pose {
        self.colliders.head.at(self.time)
    }
}

/// What one strand's substep reads, shared by every strand of it.
struct StrandStep<'a> {
    h: f32,
    input: StepInput<'a>,
    model: &'a StrandModel,
    material: &'a Material,
    options: &'a SimOptions,
    colliders: &'a ColliderFrame<'a>,
    grid: &'a HairGrid,
    rest_density: f32,
    external: &'a [Vec3],
    segment_touches: &'a [(u32, SegmentTouch)],
    segment_offsets: &'a [usize],
    hair_hair: bool,
    contacts_on: bool,
    roots_free: bool,
}

impl StrandStep<'_> {
    /// Strand `s`'s substep with thread buffers (the solver's scratch, extra accelerations,
    /// collider touches): its strain before limiting, its collider contacts, and the time of
    /// dynamics, collisions, hair–hair and strain limiting.
    fn strand(
        &self,
        s: usize,
        x: &mut [Vec3],
        v: &mut [Vec3],
        supported: &mut [bool],
        (sc, ext, near): &mut (Scratch, Vec<Vec3>, Vec<Option<Touch>>),
    ) -> (f32, ContactStats, [Duration; 4]) {
        let (h, model, material, options) = (self.h, self.model, self.material, self.options);
        let mut times = [Duration::ZERO; 4];
        let t = Instant::now();
        if options.contact == Contact::Penalty {
            touches(
                model,
                s,
                x,
                v,
                h,
                self.colliders,
                options.collision_margin,
                self.roots_free,
                near,
            );
        } else {
            near.clear();
            near.resize(x.len(), None);
        }
        // Particles resting on a collider are heavier in the strand–strand response.
        for (f, t) in supported.iter_mut().zip(near.iter()) {
            *f = t.is_some_and(|t| !t.ahead);
        }
        times[1] = t.elapsed();
        ext.clear();
        ext.resize(x.len(), Vec3::ZERO);
        if self.hair_hair {
            let t = Instant::now();
            for i in 0..x.len() {
                let g = self.grid.sample(x[i]);
                // Friction: move toward the neighbours' mean velocity.
                v[i] += material.hair_friction * (g.velocity - v[i]);
                // Repulsion where denser than the rest groom.
                let excess = (g.density / self.rest_density - 1.0).clamp(0.0, 1.0);
                let gl = g.gradient.length();
                if excess > 0.0 && gl > 1e-9 {
                    ext[i] = -material.repulsion * excess * g.gradient / gl;
                }
            }
            times[2] = t.elapsed();
        }
        if !self.external.is_empty() {
            let o = model.offsets[s];
            for (e, a) in ext.iter_mut().zip(&self.external[o..o + x.len()]) {
                *e += *a;
            }
        }
        let t = Instant::now();
        let segments = if self.contacts_on {
            &self.segment_touches[self.segment_offsets[s]..self.segment_offsets[s + 1]]
        } else {
            &[]
        };
        step_strand(
            model,
            s,
            x,
            v,
            ext,
            near,
            segments,
            &self.input,
            options.integrator,
            sc,
        );
        times[0] = t.elapsed();
        let t = Instant::now();
        let strain = limit_strain(model, s, x, v, material.max_strain, h);
        times[3] = t.elapsed();
        // With strand–strand contacts, collider projection waits for their response (below):
        // colliders have the last word, and a strand falling onto another that lies on the
        // head meets that strand before the head.
        if self.contacts_on {
            return (strain, ContactStats::default(), times);
        }
        let t = Instant::now();
        let contact = collide(
            model,
            s,
            x,
            v,
            self.colliders,
            options.response(material.friction, h),
            self.roots_free,
        );
        times[1] += t.elapsed();
        (strain, contact, times)
    }
}
