//! `tress simulate`: the full strand simulation (ground truth) of a groom on a moving head.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use super::motion_cmd::MotionArgs;
use super::report::{num, output_file, thousands};
use crate::cache::{CacheInfo, SinkOptions, create_sink};
use crate::error::{Error, Result};
use crate::groom::Transform;
use crate::guides::{AdaptiveOptions, select_uv_lattice};
use crate::motion::sources::{ConstantSpec, MotionSource};
use crate::scene::{GroomSource, HeadSource, Scene, SceneFiles, SceneSpec};
use crate::sim::run::{RunPlan, run as run_plan};
use crate::sim::{Integrator, Material, SimOptions, Simulation};
use crate::upsample::{Method, Model, Options, Upsampler};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    Full,
    Reduced,
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Groom file (.hair, .data, .ply, .tfx, .tfxproj, .abc, …) or a procedural preset:
    /// straight, wavy, curly.
    #[arg(long, value_name = "FILE|PRESET", required_unless_present = "scene")]
    pub groom: Option<String>,
    /// A mass-spring scene of the student project (.mss): its hair, sphere head, head
    /// velocity, springs and explicit integrator, each overridable (--motion, --material,
    /// --integrator, --substeps).
    #[arg(long, value_name = "F.mss", conflicts_with_all = ["groom", "strands", "head"])]
    pub scene: Option<PathBuf>,
    /// Centimetres per unit of a --scene (its head is a unit sphere).
    #[arg(long, value_name = "CM", default_value_t = crate::scene::mss::DEFAULT_UNIT_CM)]
    pub unit: f32,
    /// Strands of a procedural groom preset.
    #[arg(long)]
    pub strands: Option<usize>,
    #[command(flatten)]
    pub head: super::HeadArgs,
    #[command(flatten)]
    pub motion: MotionArgs,
    /// Material preset (straight, wavy, curly) or TOML file [default: the groom preset's style,
    /// else straight].
    #[arg(long, value_name = "NAME|FILE")]
    pub material: Option<String>,
    /// Output frames, inclusive.
    #[arg(long, value_name = "A-B", default_value = "1001-1100")]
    pub frames: String,
    /// Frames per second of the output (and of sampling file motion).
    #[arg(long, default_value_t = 24.0)]
    pub fps: f64,
    /// Substeps per frame at least (more are added on fast motion unless --fixed-substeps).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub substeps: Option<u32>,
    /// Always take exactly --substeps substeps per frame, even on fast motion.
    #[arg(long)]
    pub fixed_substeps: bool,
    /// Time integrator [default: implicit, the material preset's choice].
    #[arg(long, value_enum)]
    pub integrator: Option<Integrator>,
    /// Collider contact response [default: penalty; `reflect` is the student project's, with
    /// which a --scene runs at 40 substeps per frame, 10 with --integrator implicit].
    #[arg(long, value_enum)]
    pub contact: Option<crate::sim::contact::Contact>,
    /// full: every strand; reduced: guide strands simulated alone and upsampled to the whole
    /// groom every frame (--method), then pushed out of the colliders.
    #[arg(long, value_enum, default_value_t = Mode::Full)]
    pub mode: Mode,
    /// Reduced mode without --skinning: about this many guides on the root-UV lattice.
    #[arg(long, default_value_t = 200)]
    pub guides: usize,
    /// Reduced mode: a skinning model fitted to this groom (`tress skinning fit`); its guides
    /// are simulated.
    #[arg(long, value_name = "MODEL")]
    pub skinning: Option<PathBuf>,
    /// Reduced mode: how guides become the whole groom [default: adaptive with --skinning,
    /// else idw].
    #[arg(long, value_enum)]
    pub method: Option<Method>,

    /// Leave out hair–hair interaction.
    #[arg(long)]
    pub no_hair_hair: bool,
    /// Strand–strand contacts: segments of different strands kept --contact-thickness apart
    /// (checked over each step, so strands do not pass through each other). For sparse hair:
    /// on a whole groom it costs about 200× the step.
    #[arg(long)]
    pub strand_contacts: bool,
    /// Distance kept between strands with --strand-contacts (cm).
    #[arg(long, value_name = "CM", requires = "strand_contacts")]
    pub contact_thickness: Option<f32>,
    /// Frames simulated at the first pose before the first output frame (settling).
    #[arg(long)]
    pub preroll: Option<u32>,
    /// Worker threads [default: all cores]. Results are identical for any count.
    #[arg(long)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub space: super::InputSpace,
    #[command(flatten)]
    pub out_space: super::OutputSpaceArgs,
    /// Cell size (cm) of head mesh distance grids.
    #[arg(long, default_value_t = 0.2)]
    pub sdf_cell: f32,
    /// Save a checkpoint every N frames (frames go to a frame log in the work folder until the
    /// end), so a killed run can continue with --resume.
    #[arg(long, value_name = "N")]
    pub checkpoint_every: Option<u32>,
    /// Work folder of checkpoints [default: the first output + ".work"].
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Continue from the checkpoint in the work folder (same inputs and options).
    #[arg(long)]
    pub resume: bool,
    /// Outputs: .abc, .tcache, USD (.usda or .usd text, .usdc binary), or a PLY sequence pattern
    /// (hair.####.ply); repeat for several.
    #[arg(short, long, required = true)]
    pub output: Vec<PathBuf>,
    /// Print the result as JSON on standard output (errors too: {"error", "exit_code"}).
    #[arg(long)]
    pub json: bool,
}

fn options(a: &SimulateArgs, mss: Option<&crate::scene::mss::MssPhysics>) -> SimOptions {
    let contact = a.contact.unwrap_or_default();
    let mut o = match mss {
        Some(p) => crate::scene::mss::sim_options(p, crate::scene::mss::default_substeps(a.fps, contact)),
        None => SimOptions::default(),
    };
    o.contact = contact;
    if let Some(k) = a.substeps {
        o.substeps = k;
    }
    o.adaptive = o.adaptive && !a.fixed_substeps;
    if let Some(i) = a.integrator {
        o.integrator = i;
    }
    o.hair_hair = o.hair_hair && !a.no_hair_hair;
    o.strand_contacts = o.strand_contacts || a.strand_contacts;
    if let Some(t) = a.contact_thickness {
        o.contact_thickness = t;
    }
    if let Some(p) = a.preroll {
        o.preroll_frames = p;
    }
    o
}

/// An `.mss` scene's path and physics (its groom and sphere head in scene units of --unit cm).
type Mss = Option<(String, crate::scene::mss::MssPhysics)>;

/// The `.mss` scene of `--scene`, if given.
fn mss_scene(a: &SimulateArgs) -> Result<Mss> {
    let Some(path) = &a.scene else {
        return Ok(None);
    };
    if a.space.scale != 1.0 || a.space.up != crate::groom::UpAxis::Y {
        return Err(Error::Invalid(
            "--scene takes its size from --unit (cm per scene unit), not --scale / --up".into(),
        ));
    }
    let file = tress_formats::mss::read(path)?;
    let phys = crate::scene::mss::physics(&file, a.unit, crate::groom::UpAxis::Y)
        .map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
    Ok(Some((path.display().to_string(), phys)))
}

/// The scene the arguments name (an `.mss` scene's own groom, head and velocity unless
/// overridden), and where its motion came from.
fn scene(a: &SimulateArgs, mss: &Mss, (first, last): (i64, i64)) -> Result<(Scene, String)> {
    let transform = match mss {
        Some(_) => Transform {
            scale: a.unit,
            up: crate::groom::UpAxis::Y,
        },
        None => Transform {
            scale: a.space.scale,
            up: a.space.up,
        },
    };
    let groom = match (mss, &a.groom) {
        (Some((path, _)), _) => GroomSource::File(path.into(), Default::default()),
        (None, Some(g)) => GroomSource::parse(g, a.strands)?,
        (None, None) => return Err(Error::Invalid("give --groom or --scene".into())),
    };
    let motion = match (mss, a.motion.is_given()) {
        // The scene's head velocity, for the whole shot.
        (Some((_, phys)), false) => MotionSource::Constant(ConstantSpec {
            velocity: phys.velocity,
            angular_velocity: glam::DVec3::ZERO,
            pivot: phys.centre.as_dvec3(),
            moving: None,
        }),
        _ => a.motion.source(),
    };
    let mut spec = SceneSpec {
        groom,
        transform,
        head: HeadSource::Fitted,
        body: a.head.body.clone(),
        sdf_cell: a.sdf_cell,
        motion,
        fps: a.fps,
        first,
        last,
        hold_after: last,
        props: Vec::new(),
    };
    let groom = spec.load_groom()?;
    spec.head = match a.head.head.as_deref() {
        Some(h) => HeadSource::parse(h),
        None => HeadSource::default_for(&groom),
    };
    let built = spec.build(groom, &SceneFiles::default())?;
    let motion_what = match (mss, a.motion.is_given()) {
        (Some((_, phys)), false) => format!("the scene's head velocity, {:.2} cm/s", phys.velocity.length()),
        _ => built.motion_what.clone(),
    };
    Ok((built, motion_what))
}

/// The material: `--material`, an `.mss` scene's springs, or the groom style's preset.
fn material(a: &SimulateArgs, mss: &Mss, scene: &Scene) -> Result<(String, Material)> {
    Ok(match (&a.material, mss) {
        (Some(m), _) => (m.clone(), Material::preset(m)?),
        (None, Some((path, phys))) => (format!("the springs of {path}"), phys.material.clone()),
        (None, None) => {
            let name = Material::preset_for_style(scene.groom.procedural.as_ref().map(|p| p.style));
            (name.to_string(), Material::preset(name)?)
        }
    })
}

/// Reduced mode: the guide strands to simulate, with the sinks behind an upsampler of
/// `method` that makes the whole groom of every frame, pushed out of the colliders.
fn reduced(
    a: &SimulateArgs,
    mss: &Mss,
    scene: &Scene,
    method: Method,
    sinks: Vec<Box<dyn crate::cache::FrameSink>>,
) -> Result<(crate::groom::Groom, Box<dyn crate::cache::FrameSink>)> {
    let groom = &scene.groom.groom;
    let skin = match &a.skinning {
        Some(p) => Model::skinning(p, groom)?,
        None => Model::None,
    };
    let guides = match skin.guides() {
        Some(g) => g.to_vec(),
        None => select_uv_lattice(groom, a.guides),
    };
    if method.needs_skinning() && a.skinning.is_none() {
        return Err(Error::Invalid(format!(
            "--method {method} needs --skinning (a model fitted with `tress skinning fit`)"
        )));
    }
    let settings = Options {
        neighbors: 10,
        adaptive: &AdaptiveOptions::default(),
    };
    let model = crate::upsample::interpolator(method, groom, &guides, skin, &settings)?;
    let margin = options(a, mss.as_ref().map(|m| &m.1)).collision_margin;
    let up = Upsampler::new(model, a.fps, Some(scene.colliders.clone()), Some(margin), sinks);
    let set: std::collections::HashSet<usize> = guides.into_iter().collect();
    Ok((groom.filter_strands(|s| set.contains(&s)), Box::new(up)))
}

pub fn run(a: &SimulateArgs) -> Result<()> {
    if !(a.fps > 0.0 && a.fps.is_finite() && a.space.scale > 0.0 && a.space.scale.is_finite()) {
        return Err(Error::Invalid("--fps and --scale must be positive".into()));
    }
    options(a, None)
        .check()
        .map_err(|e| Error::Invalid(format!("--{}", e.replace('_', "-"))))?;
    let (first, last) = super::whole_frames(&a.frames)?;
    super::distinct_outputs(&a.output)?;
    super::threads(a.threads)?;
    let mss = mss_scene(a)?;
    let (scene, motion_what) = scene(a, &mss, (first, last))?;
    let (material_name, material) = material(a, &mss, &scene)?;
    let full_info = CacheInfo {
        topology: scene.groom.groom.to_strands(),
        fps: a.fps,
        frames: Vec::new(),
    };
    let mut sinks = Vec::new();
    let sink_opts = SinkOptions {
        space: a.out_space.space(),
        ..SinkOptions::default()
    };
    for o in &a.output {
        sinks.push(create_sink(o, &full_info, first as f64, &sink_opts)?);
    }
    if a.mode == Mode::Full && (a.skinning.is_some() || a.method.is_some()) {
        return Err(Error::Invalid(
            "--skinning and --method need --mode reduced".into(),
        ));
    }
    let method = a.method.unwrap_or(if a.skinning.is_some() {
        Method::Adaptive
    } else {
        Method::Idw
    });
    let simulated = match a.mode {
        Mode::Full => scene.groom.groom.clone(),
        Mode::Reduced => {
            // Simulate the guides; the sink upsamples every frame to the whole groom.
            let (guides, up) = reduced(a, &mss, &scene, method, std::mem::take(&mut sinks))?;
            sinks.push(up);
            guides
        }
    };
    let topology = simulated.to_strands();
    let mut sim = Simulation::new(
        &simulated,
        material,
        options(a, mss.as_ref().map(|m| &m.1)),
        scene.colliders.clone(),
        first as f64 / a.fps,
    );
    let work_dir = a.work_dir.clone().unwrap_or_else(|| {
        let mut p = a.output[0].clone().into_os_string();
        p.push(".work");
        PathBuf::from(p)
    });
    let plan = RunPlan {
        fps: a.fps,
        first,
        last,
        checkpoint_every: a.checkpoint_every,
        work_dir: Some(work_dir),
        resume: a.resume,
    };
    if !a.json {
        eprintln!(
            "groom     {} ({} strands, {} particles)",
            scene.groom.source,
            thousands(sim.model.strand_count() as u64),
            thousands(sim.model.particle_count() as u64)
        );
        if a.mode == Mode::Reduced {
            eprintln!(
                "reduced   {} guides simulated, upsampled to {} strands ({method})",
                sim.model.strand_count(),
                full_info.topology.counts.len()
            );
        }
        let setup = Setup {
            scene: &scene,
            motion: &motion_what,
            material: &material_name,
            mss: &mss,
        };
        setup.print(&sim);
    }
    let (report, files) = simulate(a, &mut sim, &plan, sinks, &topology)?;
    let setup = Setup {
        scene: &scene,
        motion: &motion_what,
        material: &material_name,
        mss: &mss,
    };
    if a.json {
        setup.json(&sim, &report, &files);
    } else {
        setup.summary(&sim, &report);
        for f in &files {
            output_file(f);
        }
    }
    Ok(())
}

/// Runs the simulation with a progress bar (a line every 10 frames in a log).
fn simulate(
    a: &SimulateArgs,
    sim: &mut Simulation,
    plan: &RunPlan,
    sinks: Vec<Box<dyn crate::cache::FrameSink>>,
    topology: &tress_formats::Strands,
) -> Result<(crate::sim::run::RunReport, Vec<PathBuf>)> {
    let (first, last) = (plan.first, plan.last);
    let frames = (last - first + 1) as u64;
    let tty = std::io::stderr().is_terminal() && !a.json;
    let bar = if tty {
        let b = ProgressBar::new(frames);
        b.set_style(
            ProgressStyle::with_template("{spinner} frame {msg} [{bar:30}] {pos}/{len} {per_sec} ETA {eta}")
                .expect("template")
                .progress_chars("=> "),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let started = Instant::now();
    let quiet = a.json;
    let result = run_plan(sim, plan, sinks, topology, &mut |frame, stats| {
        bar.set_message(format!("{frame} ({} substeps)", stats.substeps));
        bar.inc(1);
        if !tty && !quiet && ((frame - first) % 10 == 0 || frame == last) {
            let done = (frame - first + 1) as f64;
            eprintln!(
                "frame {frame} ({}/{frames}) {:.2} s/frame",
                done as u64,
                started.elapsed().as_secs_f64() / done
            );
        }
        true
    });
    bar.finish_and_clear();
    result
}

/// What a simulation ran on, for its log and JSON.
struct Setup<'a> {
    scene: &'a Scene,
    motion: &'a str,
    material: &'a str,
    mss: &'a Mss,
}

impl Setup<'_> {
    fn print(&self, sim: &Simulation) {
        eprintln!("head      {}", self.scene.head_what);
        if let Some(b) = &self.scene.body_mesh {
            eprintln!("body      {b}");
        }
        eprintln!("motion    {}", self.motion);
        if let Some((_, phys)) = self.mss {
            for n in &phys.notes {
                eprintln!("scene     {n}");
            }
        }
        eprintln!(
            "material  {}; {:?} integrator, {} substeps{}",
            self.material,
            sim.options.integrator,
            sim.options.substeps,
            if sim.options.adaptive {
                " or more on fast motion"
            } else {
                ""
            }
        );
    }

    fn json(&self, sim: &Simulation, report: &crate::sim::run::RunReport, files: &[PathBuf]) {
        let secs = report.seconds;
        let doc = json!({
            "groom": self.scene.groom.source,
            "strands": sim.model.strand_count(),
            "particles": sim.model.particle_count(),
            "head": self.scene.head_what,
            "motion": self.motion,
            "material": self.material,
            "scene_notes": self.mss.as_ref().map(|m| &m.1.notes),
            "frames": report.frames,
            "resumed_after": report.resumed_after,
            "seconds": secs,
            "seconds_per_frame": secs / report.frames.max(1) as f64,
            "max_substeps": report.max_substeps,
            "max_speed": report.max_speed,
            "max_strain_before_limiting": report.max_strain,
            "max_residual_penetration_cm": report.max_residual_penetration,
            "strand_contacts": report.strand_contacts,
            "deepest_strand_contact_cm": report.deepest_strand_contact,
            "counters": sim.counters,
            "outputs": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
    }

    fn summary(&self, sim: &Simulation, report: &crate::sim::run::RunReport) {
        let secs = report.seconds;
        eprintln!(
            "simulated {} frames in {} s ({} s/frame, up to {} substeps); peak speed {} cm/s, deepest penetration after a frame {} mm",
            report.frames,
            num(secs),
            num(secs / report.frames.max(1) as f64),
            report.max_substeps,
            num(report.max_speed as f64),
            num(report.max_residual_penetration as f64 * 10.0)
        );
        if sim.options.strand_contacts {
            eprintln!(
                "contacts  {} strand–strand contacts, deepest overlap {} mm before the response",
                thousands(report.strand_contacts),
                num(report.deepest_strand_contact as f64 * 10.0)
            );
        }
        eprintln!("timing    {}", sim.counters.report());
    }
}
