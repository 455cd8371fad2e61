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
use crate::guides::Upsampler;
use crate::guides::{AdaptiveOptions, Method, Skinning, select_uv_lattice};
use crate::motion::HeadTrack;
use crate::motion::Pose;
use crate::scene::{body_params, colliders, head_shape, head_spec, load_groom, place_track};
use crate::sim::run::{RunPlan, run as run_plan};
use crate::sim::{Integrator, Material, SimOptions, Simulation};

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
    /// Outputs: .abc, .tcache, or a PLY sequence pattern (hair.####.ply); repeat for several.
    #[arg(short, long, required = true)]
    pub output: Vec<PathBuf>,
    /// Print the result as JSON on standard output (errors too: {"error", "exit_code"}).
    #[arg(long)]
    pub json: bool,
}

fn options(a: &SimulateArgs, mss: Option<&crate::scene::mss::MssPhysics>) -> SimOptions {
    let mut o = match mss {
        Some(p) => crate::scene::mss::sim_options(p, crate::scene::mss::default_substeps(a.fps)),
        None => SimOptions::default(),
    };
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

pub fn run(a: &SimulateArgs) -> Result<()> {
    if !(a.fps > 0.0 && a.fps.is_finite() && a.space.scale > 0.0 && a.space.scale.is_finite()) {
        return Err(Error::Invalid("--fps and --scale must be positive".into()));
    }
    options(a, None)
        .check()
        .map_err(|e| Error::Invalid(format!("--{}", e.replace('_', "-"))))?;
    let (first, last) = super::whole_frames(&a.frames)?;
    super::distinct_outputs(&a.output)?;
    if let Some(t) = a.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t.max(1))
            .build_global()
            .map_err(|e| Error::Runtime(format!("thread pool: {e}")))?;
    }
    // An .mss scene: its groom and sphere head in scene units of --unit cm, and its physics.
    let mss = match &a.scene {
        Some(path) => {
            if a.space.scale != 1.0 || a.space.up != crate::groom::UpAxis::Y {
                return Err(Error::Invalid(
                    "--scene takes its size from --unit (cm per scene unit), not --scale / --up".into(),
                ));
            }
            let file = tress_formats::mss::read(path)?;
            let phys = crate::scene::mss::physics(&file, a.unit, crate::groom::UpAxis::Y)
                .map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
            Some((path.display().to_string(), phys))
        }
        None => None,
    };
    let transform = match &mss {
        Some(_) => Transform {
            scale: a.unit,
            up: crate::groom::UpAxis::Y,
        },
        None => Transform {
            scale: a.space.scale,
            up: a.space.up,
        },
    };
    let scene = match (&mss, &a.groom) {
        (Some((path, _)), _) => crate::scene::file_groom(std::path::Path::new(path), &transform)?,
        (None, Some(g)) => load_groom(g, &transform, a.strands)?,
        (None, None) => return Err(Error::Invalid("give --groom or --scene".into())),
    };
    let head_spec = head_spec(a.head.head.as_deref(), &scene);
    let (head, head_what) = head_shape(&head_spec, &scene, &transform, a.sdf_cell)?;
    let body = body_params(a.head.body.as_deref(), &head)?;
    let start = first as f64 / a.fps;
    let (track, motion_what) = if let (Some((_, phys)), false) = (&mss, a.motion.is_given()) {
        // The scene's head velocity, for the whole shot.
        let c = crate::motion::experiments::ConstantMotion {
            velocity: phys.velocity,
            angular_velocity: glam::DVec3::ZERO,
            pivot: phys.centre.as_dvec3(),
            duration: (last - first) as f64 / a.fps + 1.0,
        };
        (
            c.track(start)?,
            format!("the scene's head velocity, {:.2} cm/s", phys.velocity.length()),
        )
    } else if a.motion.is_given() {
        let (track, report) = a.motion.source().load(a.fps)?;
        let from_file = a.motion.preset.is_none();
        (place_track(track, from_file, &transform, start), report.source)
    } else {
        (HeadTrack::still(Pose::IDENTITY), "still head".to_string())
    };
    let mut all_colliders = colliders(head, &body, track);
    let body_mesh = crate::scene::add_body_mesh(
        &mut all_colliders,
        a.head.body.as_deref(),
        &transform,
        a.fps,
        a.sdf_cell,
        None,
    )?;
    let (material_name, material) = match (&a.material, &mss) {
        (Some(m), _) => (m.clone(), Material::preset(m)?),
        (None, Some((path, phys))) => (format!("the springs of {path}"), phys.material.clone()),
        (None, None) => {
            let name = Material::preset_for_style(scene.procedural.as_ref().map(|p| p.style));
            (name.to_string(), Material::preset(name)?)
        }
    };
    let full_info = CacheInfo {
        topology: scene.groom.to_strands(),
        fps: a.fps,
        frames: Vec::new(),
    };
    let mut sinks = Vec::new();
    for o in &a.output {
        sinks.push(create_sink(o, &full_info, first as f64, &SinkOptions::default())?);
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
    let (simulated, topology) = match a.mode {
        Mode::Full => (scene.groom.clone(), full_info.topology.clone()),
        Mode::Reduced => {
            // Simulate the guides; the sink upsamples every frame to the whole groom.
            let skin = a
                .skinning
                .as_ref()
                .map(|p| Skinning::load(p, &scene.groom))
                .transpose()?;
            let guides = match &skin {
                Some(s) => s.layout.guides.clone(),
                None => select_uv_lattice(&scene.groom, a.guides),
            };
            if method.needs_skinning() && skin.is_none() {
                return Err(Error::Invalid(format!(
                    "--method {method} needs --skinning (a model fitted with `tress skinning fit`)"
                )));
            }
            let model = crate::guides::interpolator(
                method,
                &scene.groom,
                &guides,
                10,
                skin,
                &AdaptiveOptions::default(),
            )?;

            let projection = all_colliders.clone();
            let margin = options(a, mss.as_ref().map(|m| &m.1)).collision_margin;
            let up = Upsampler::new(
                model,
                a.fps,
                Some(projection),
                Some(margin),
                std::mem::take(&mut sinks),
            );
            sinks.push(Box::new(up));
            let set: std::collections::HashSet<usize> = guides.into_iter().collect();
            let g = scene.groom.filter_strands(|s| set.contains(&s));
            let t = g.to_strands();
            (g, t)
        }
    };
    let mut sim = Simulation::new(
        &simulated,
        material,
        options(a, mss.as_ref().map(|m| &m.1)),
        all_colliders,
        start,
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
            scene.source,
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
        eprintln!("head      {head_what}");
        if let Some(b) = &body_mesh {
            eprintln!("body      {b}");
        }
        eprintln!("motion    {motion_what}");
        if let Some((_, phys)) = &mss {
            for n in &phys.notes {
                eprintln!("scene     {n}");
            }
        }
        eprintln!(
            "material  {material_name}; {:?} integrator, {} substeps{}",
            sim.options.integrator,
            sim.options.substeps,
            if sim.options.adaptive {
                " or more on fast motion"
            } else {
                ""
            }
        );
    }
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
    let result = run_plan(&mut sim, &plan, sinks, &topology, &mut |frame, stats| {
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
    let (report, files) = result?;
    let secs = report.seconds;
    let per_frame = secs / report.frames.max(1) as f64;
    if a.json {
        let doc = json!({
            "groom": scene.source,
            "strands": sim.model.strand_count(),
            "particles": sim.model.particle_count(),
            "head": head_what,
            "motion": motion_what,
            "material": material_name,
            "scene_notes": mss.as_ref().map(|m| &m.1.notes),
            "frames": report.frames,
            "resumed_after": report.resumed_after,
            "seconds": secs,
            "seconds_per_frame": per_frame,
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
    } else {
        eprintln!(
            "simulated {} frames in {} s ({} s/frame, up to {} substeps); peak speed {} cm/s, deepest penetration after a frame {} mm",
            report.frames,
            num(secs),
            num(per_frame),
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
    if !a.json {
        for f in &files {
            output_file(f);
        }
    }
    Ok(())
}
