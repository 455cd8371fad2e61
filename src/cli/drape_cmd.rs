//! `tress drape`: the groom's quasi-static shape for a list of head poses, found by minimizing
//! the drape energy (see `crate::neural::drape`), one output frame per pose.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use serde_json::json;

use super::report::output_file;
use crate::cache::{CacheInfo, SinkOptions, create_sink};
use crate::error::{Error, Result};
use crate::groom::Transform;
use crate::neural::drape::calibrate::{Calibration, calibrate};
use crate::neural::drape::config::GroomEntry;
use crate::neural::drape::draper::{DrapeSolver, Draper, DraperSpec, LineSearch};
use crate::neural::drape::energy::TermValues;
use crate::neural::drape::scene::drape_scene;
use crate::neural::drape::solve::energy_at;
use crate::neural::drape::{DrapeMaterial, DrapeMetrics, PoseSet};
use crate::pipeline::progress::FrameProgress;
use crate::sim::Material;

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["groom", "grooms"])))]
pub struct DrapeArgs {
    /// Groom file, procedural preset (straight, wavy, curly) or preset file (.toml, e.g.
    /// `extends = "wavy"` with other lengths, curls or seed).
    #[arg(long, value_name = "FILE|PRESET")]
    pub groom: Option<String>,
    /// A folder of groom files, draped one after the other (every file tress reads as a groom,
    /// by name); each output's `{groom}` is replaced by the file's name without extension.
    #[arg(long, value_name = "DIR")]
    pub grooms: Option<PathBuf>,
    /// Strands of a procedural groom preset.
    #[arg(long)]
    pub strands: Option<usize>,
    #[command(flatten)]
    pub head: super::HeadArgs,
    /// Head rotations relative to the torso: a preset (rest, turns, bodies) or a TOML file of
    /// [[pose]] tables with yaw, pitch and roll in degrees and an optional change of the body's
    /// shape (shape = { shoulder_width, shoulder_height, neck_radius } in cm).
    #[arg(long, value_name = "PRESET|FILE", default_value = "turns")]
    pub poses: String,
    /// How the energy is minimized.
    #[arg(long, value_enum, default_value_t = DrapeSolver::Lbfgs)]
    pub solver: DrapeSolver,
    /// The drape network for --solver network (.tnn from `tress train drape`).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<PathBuf>,
    /// Iterations: Adam's steps, L-BFGS's outer steps of up to 20 iterations each, XPBD's
    /// constraint iterations per step, or the network's line search along its output (golden
    /// sections of its scale on [0, 1.5], one energy evaluation each; 0: the decoder's output as
    /// it is) [default: 3000 for adam, 100 for lbfgs, 1000 for xpbd, 4 for network].
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub iterations: Option<u64>,
    /// Adam's first step size (cm).
    #[arg(long, default_value_t = 0.05)]
    pub learning_rate: f64,
    /// The network's search along its output: one scale for every strand (uniform), or that
    /// search and then a scale per strand smoothed over the scalp (strands).
    #[arg(long, value_enum, default_value_t = LineSearch::Strands)]
    pub search: LineSearch,
    /// Stiffness and sizes of the energy from a TOML file (cosserat, stretch, weight, body,
    /// body_distance, self_collision, smoothing); a network uses the material it was trained
    /// with.
    #[arg(long, value_name = "FILE")]
    pub material: Option<PathBuf>,
    /// A simulation material (straight, wavy, curly or a file) whose sag the drape's Cosserat
    /// stiffness is matched to on each groom's strands (a cantilever test; direct solvers).
    #[arg(long, value_name = "PRESET|FILE", conflicts_with = "material")]
    pub sim_material: Option<String>,
    /// Scalp texture size: the groom is draped as one strand per occupied texel of a T × T map
    /// of root positions, then carried back to all its strands [default: 32, a network's own].
    #[arg(long, value_name = "T")]
    pub texture: Option<usize>,
    /// Vertices per draped strand [default: 24, a network's own].
    #[arg(long)]
    pub points: Option<usize>,
    #[command(flatten)]
    pub space: super::InputSpace,
    /// Cell size (cm) of head mesh distance grids.
    #[arg(long, default_value_t = 0.2)]
    pub sdf_cell: f32,
    /// Outputs (one frame per pose, from frame 1): .abc, .tcache, or a PLY sequence pattern
    /// (hair.####.ply); repeat for several. `{groom}` in a name is replaced by the groom's
    /// name (required with --grooms).
    #[arg(short, long, required = true)]
    pub output: Vec<PathBuf>,
    /// Print the result as JSON on standard output (errors too: {"error", "exit_code"}).
    #[arg(long)]
    pub json: bool,
}

/// What draping one groom gave.
struct Draped {
    name: String,
    strands: usize,
    seconds: f64,
    before: Vec<DrapeMetrics>,
    after: Vec<DrapeMetrics>,
    /// Per pose: the posed input's energy and the drape's.
    energies: Vec<(TermValues, TermValues)>,
    per_pose: Vec<serde_json::Value>,
    files: Vec<PathBuf>,
    head: String,
    /// The cantilever test of `--sim-material`.
    calibration: Option<Calibration>,
}

/// Drapes one groom for every pose and writes its caches.
fn drape_one(
    a: &DrapeArgs,
    name: &str,
    spec: &str,
    t: &Transform,
    setup: &mut Draper,
    poses: &PoseSet,
    sim_material: Option<&Material>,
) -> Result<Draped> {
    let entry = GroomEntry {
        name: name.to_string(),
        groom: spec.to_string(),
        strands: a.strands,
        head: a.head.head.clone(),
        body: a.head.body.clone(),
        ..Default::default()
    };
    let ds = drape_scene(
        &entry,
        t,
        a.sdf_cell,
        setup.texture,
        setup.points,
        &setup.material,
    )?;
    let (subject, scene) = (&ds.subject, &ds.scene);
    let calibration = match sim_material {
        Some(m) => {
            // `--material` conflicts with `--sim-material`: each groom starts from the default.
            let (fitted, c) = calibrate(&scene.groom, m, setup.points, &DrapeMaterial::default())?;
            setup.material = fitted;
            Some(c)
        }
        None => None,
    };
    let setup = &*setup;
    let topology = scene.groom.to_strands();
    let info = CacheInfo {
        topology,
        fps: 24.0,
        frames: Vec::new(),
    };
    let mut sinks = Vec::new();
    for o in &a.output {
        let path = PathBuf::from(o.to_string_lossy().replace("{groom}", name));
        sinks.push(create_sink(&path, &info, 1.0, &SinkOptions::default())?);
    }
    if !a.json {
        eprintln!(
            "groom     {name}: {} strands on the texture, head {}",
            subject.groom.strands(),
            ds.head
        );
        if let Some(c) = &calibration {
            eprintln!(
                "          Cosserat stiffness {:.3} from --sim-material: tips fall {:.1} cm simulated, {:.1} cm draped ({} strands of {:.1} cm)",
                c.cosserat, c.sim_drop_cm, c.drape_drop_cm, c.strands, c.length_cm
            );
        }
    }
    let latent = setup.latent(subject);
    let mut progress = FrameProgress::new(name, poses.pose.len() as u64, a.json);
    let (mut before, mut after, mut per_pose) = (Vec::new(), Vec::new(), Vec::new());
    let mut energies = Vec::new();
    let mut seconds = 0.0;
    for (k, rot) in poses.pose.iter().enumerate() {
        let pose = subject.pose(rot)?;
        let (head_pose, posed, cp) = (pose.head, &pose.posed, pose.contact());
        let (x, report) = setup.drape(
            subject,
            latent.as_ref(),
            rot,
            posed,
            (&pose.colliders, &pose.poses),
        );
        seconds += report.seconds;
        let m0 = DrapeMetrics::of(&posed.x, posed, cp);
        let m1 = DrapeMetrics::of(&x, posed, cp);
        // The energy (003 Eq. 6-13) of the posed input, beside the drape's: what draping must
        // lower.
        let posed_energy = energy_at::<burn::backend::Flex>(
            posed,
            &posed.x,
            Some((&pose.colliders, &pose.poses)),
            &setup.material,
            &Default::default(),
        );
        let points = subject.groom.to_groom(&x, &head_pose, scene.groom.points().len());
        let p: &[[f32; 3]] = bytemuck::cast_slice(&points);
        for s in sinks.iter_mut() {
            s.write((k + 1) as f64, p, Some(head_pose.into()))?;
        }
        per_pose.push(json!({
            "name": rot.name, "yaw": rot.yaw, "pitch": rot.pitch, "roll": rot.roll,
            "shape": pose.shape, "trained_pose": setup.trained_for(subject, rot),
            "seconds": report.seconds, "iterations": report.iterations, "scale": report.scale, "scale_range": report.scale_range,
            "converged": report.converged, "energy": report.energy,
            "posed_energy": posed_energy,
            "posed": m0, "draped": m1,
        }));
        before.push(m0);
        after.push(m1);
        energies.push((posed_energy, report.energy));
        progress.tick((k + 1) as i64);
    }
    progress.finish();
    let mut files = Vec::new();
    for s in sinks {
        files.extend(s.finish()?);
    }
    Ok(Draped {
        name: name.to_string(),
        strands: subject.groom.strands(),
        seconds,
        before,
        after,
        energies,
        per_pose,
        files,
        head: ds.head.clone(),
        calibration,
    })
}

/// The grooms to drape: (name, spec).
fn groom_list(a: &DrapeArgs) -> Result<Vec<(String, String)>> {
    if let Some(g) = &a.groom {
        let name = std::path::Path::new(g)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| g.clone());
        return Ok(vec![(name, g.clone())]);
    }
    let dir = a.grooms.as_ref().expect("clap requires --groom or --grooms");
    let entries = std::fs::read_dir(dir).map_err(|e| Error::Invalid(format!("{}: {e}", dir.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && crate::groom::GroomFormat::from_extension(p).is_some())
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Error::Invalid(format!("{}: no groom files", dir.display())));
    }
    if a.output.iter().any(|o| !o.to_string_lossy().contains("{groom}")) {
        return Err(Error::Invalid(
            "with --grooms every -o needs {groom} in its name (one cache per groom)".into(),
        ));
    }
    Ok(files
        .into_iter()
        .map(|p| {
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            (name, p.display().to_string())
        })
        .collect())
}

/// The network (read and checked against the flags) or the direct solvers' settings.
fn setup(a: &DrapeArgs) -> Result<Draper> {
    let material = match &a.material {
        Some(path) => {
            let m: DrapeMaterial = crate::presets::parse_file(path)?;
            m.check()
                .map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
            Some(m)
        }
        None => None,
    };
    let key = |k: &str| format!("--{}", k.replace('_', "-"));
    Draper::new(&DraperSpec {
        solver: a.solver,
        model: a.model.as_deref(),
        material,
        texture: a.texture,
        points: a.points,
        iterations: a.iterations,
        learning_rate: a.learning_rate,
        search: a.search,
        key: &key,
    })
}

pub fn run(a: &DrapeArgs) -> Result<()> {
    if !(a.space.scale > 0.0 && a.space.scale.is_finite()) {
        return Err(Error::Invalid("--scale must be positive".into()));
    }
    let mut setup = setup(a)?;
    let sim_material = match &a.sim_material {
        Some(_) if a.solver == DrapeSolver::Network => {
            return Err(Error::Invalid(
                "--sim-material: a network drapes with the material it was trained with".into(),
            ));
        }
        Some(m) => Some(Material::preset(m).map_err(|e| Error::Invalid(format!("--sim-material: {e}")))?),
        None => None,
    };
    super::distinct_outputs(&a.output)?;
    let poses = PoseSet::load(&a.poses)?;
    let t = Transform {
        scale: a.space.scale,
        up: a.space.up,
    };
    let grooms = groom_list(a)?;
    if !a.json {
        eprintln!(
            "drape     {} poses on a {}² texture ({} vertices per strand), solver {}",
            poses.pose.len(),
            setup.texture,
            setup.points,
            a.solver.name()
        );
    }
    let clock = Instant::now();
    let mut done = Vec::new();
    for (name, spec) in grooms {
        done.push(drape_one(
            a,
            &name,
            &spec,
            &t,
            &mut setup,
            &poses,
            sim_material.as_ref(),
        )?);
    }
    let before: Vec<DrapeMetrics> = done.iter().flat_map(|d| d.before.clone()).collect();
    let after: Vec<DrapeMetrics> = done.iter().flat_map(|d| d.after.clone()).collect();
    let seconds: f64 = done.iter().map(|d| d.seconds).sum();
    let files: Vec<PathBuf> = done.iter().flat_map(|d| d.files.clone()).collect();
    let solver_name = a.solver.name().to_string();
    let seconds_per_groom = seconds / (poses.pose.len() * done.len()).max(1) as f64;
    if a.json {
        let mut metrics = serde_json::Map::new();
        metrics.insert(
            "posed".into(),
            serde_json::to_value(DrapeMetrics::mean(&before)).expect("json"),
        );
        metrics.insert(
            solver_name.clone(),
            serde_json::to_value(DrapeMetrics::mean(&after)).expect("json"),
        );
        let all: Vec<&(TermValues, TermValues)> = done.iter().flat_map(|d| &d.energies).collect();
        let doc = json!({
            "solver": a.solver.name(),
            "energy": TermValues::mean(all.iter().map(|e| &e.1)),
            "posed_energy": TermValues::mean(all.iter().map(|e| &e.0)),
            "grooms": done.len(),
            "poses": poses.pose.len(),
            "points": setup.points,
            "texture": setup.texture,
            "seconds_per_groom": seconds_per_groom,
            "seconds_total": clock.elapsed().as_secs_f64(),
            "metrics": metrics,
            "per_groom": done.iter().map(|d| json!({
                "name": d.name,
                "strands": d.strands,
                "head": d.head,
                "metrics": {"posed": DrapeMetrics::mean(&d.before), solver_name.as_str(): DrapeMetrics::mean(&d.after)},
                "energy": TermValues::mean(d.energies.iter().map(|e| &e.1)),
                "posed_energy": TermValues::mean(d.energies.iter().map(|e| &e.0)),
                "per_pose": d.per_pose,
                "calibration": d.calibration,
                "outputs": d.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "material": setup.material,
            "outputs": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
    } else {
        let (m0, m1) = (DrapeMetrics::mean(&before), DrapeMetrics::mean(&after));
        let all: Vec<&(TermValues, TermValues)> = done.iter().flat_map(|d| &d.energies).collect();
        let (e0, e1) = (
            TermValues::mean(all.iter().map(|e| &e.0)),
            TermValues::mean(all.iter().map(|e| &e.1)),
        );
        eprintln!(
            "          {:>10} {:>12} {:>14} {:>12} {:>10} {:>10}",
            "inside %", "length err %", "orientation °", "gravity", "energy", "self"
        );
        for (name, m, e) in [("posed", m0, e0), (solver_name.as_str(), m1, e1)] {
            eprintln!(
                "{name:<9} {:>10.3} {:>12.3} {:>14.2} {:>12.1} {:>10.2} {:>10.2}",
                100.0 * m.intersection_fraction,
                100.0 * m.length_error_mean,
                m.orientation_error_deg,
                m.gravity_potential,
                e.total,
                e.self_collision
            );
        }
        eprintln!("time      {seconds_per_groom:.2} s per groom and pose");
        for f in &files {
            output_file(f);
        }
    }
    Ok(())
}
