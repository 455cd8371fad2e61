//! `tress hairmesh`: hair meshes built around grooms and simulated as volumes, with render
//! strands inside (see `crate::hairmesh`).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::json;

use super::motion_cmd::MotionArgs;
use super::report::{num, output_file, thousands};
use crate::cache::{CacheInfo, SinkOptions, create_sink};
use crate::error::{Error, Result};
use crate::groom::{Groom, Transform};
use crate::hairmesh::{
    BuildOptions, HairMesh, HairMeshParams, HairMeshSim, RenderStrands, Topology, build, simulate,
};
use crate::pipeline::progress::FrameProgress;
use crate::scene::{GroomSource, HeadSource, SceneFiles, SceneGroom, SceneSpec, load_groom};

#[derive(Debug, Subcommand)]
pub enum HairmeshCommand {
    /// Build a hair mesh around a groom's strands and write it (OBJ + .hairmesh sidecar).
    Build(BuildArgs),
    /// Simulate a hair mesh on a moving head and write the strands inside it as a cache.
    Simulate(Box<SimulateArgs>),
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Groom file or procedural preset (straight, wavy, curly).
    #[arg(long, value_name = "FILE|PRESET")]
    pub groom: String,
    /// Strands of a procedural groom preset.
    #[arg(long)]
    pub strands: Option<usize>,
    #[command(flatten)]
    pub mesh: MeshShape,
    #[command(flatten)]
    pub space: super::InputSpace,
    /// The mesh to write (.obj; its topology goes to NAME.hairmesh beside it).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Print the result as JSON on standard output (errors too: {"error", "exit_code"}).
    #[arg(long)]
    pub json: bool,
}

/// How finely a mesh is built from a groom.
#[derive(Debug, Args, Clone)]
pub struct MeshShape {
    /// Grid cells across the scalp: one root face per cell with strands.
    #[arg(long, default_value_t = 10)]
    pub cells: usize,
    /// Vertex layers from root to tip, the root included.
    #[arg(long, default_value_t = 9)]
    pub layers: usize,
    /// connected: bundles side by side across the hair share their columns; bundles: a
    /// separate four-column bundle per cell.
    #[arg(long, value_enum, default_value_t = Topology::Connected)]
    pub topology: Topology,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("input").required(true).multiple(true).args(["groom", "mesh"])))]
pub struct SimulateArgs {
    /// Groom file or procedural preset: without --mesh a mesh is built around it; its strands
    /// are carried inside the mesh.
    #[arg(long, value_name = "FILE|PRESET")]
    pub groom: Option<String>,
    /// Strands of a procedural groom preset; with --mesh alone, strands generated in the mesh.
    #[arg(long)]
    pub strands: Option<usize>,
    /// A hair mesh (.obj with its .hairmesh sidecar, from `tress hairmesh build` or a DCC tool).
    #[arg(long, value_name = "OBJ")]
    pub mesh: Option<PathBuf>,
    /// With --mesh alone: points per generated strand.
    #[arg(long, default_value_t = 16)]
    pub points: usize,
    /// With --mesh alone: seed of the generated strands.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub shape: MeshShape,
    /// Head collider: procedural (a procedural groom's cranium), sphere (an ellipsoid fitted
    /// to the roots), none, or a mesh (.obj, .glb, .abc) / .sdf file. Default: procedural for
    /// presets, sphere otherwise.
    #[arg(long, value_name = "MESH|sphere|procedural|none")]
    pub head: Option<String>,
    /// Body colliders under the head: default (neck and shoulders), head_only, a TOML file, or
    /// an animated body mesh (an .abc polymesh, or an OBJ sequence such as body.####.obj).
    #[arg(long, value_name = "PRESET|FILE")]
    pub body: Option<String>,
    /// A motion preset (gentle, walk, turn, violent, rom) or a TOML file of one [default: still].
    #[arg(long, value_name = "PRESET|FILE", group = "motion_source")]
    pub motion: Option<String>,
    /// Head motion from a glTF / GLB file (with --node: that joint).
    #[arg(long, group = "motion_source")]
    pub gltf: Option<PathBuf>,
    /// The glTF node (joint) that carries the head.
    #[arg(long, requires = "gltf")]
    pub node: Option<String>,
    /// Head motion from an Alembic transform (--xform PATH).
    #[arg(long, group = "motion_source", requires = "xform")]
    pub abc: Option<PathBuf>,
    /// The Alembic transform (object path) whose animation is the head.
    #[arg(long, requires = "abc")]
    pub xform: Option<String>,
    /// Head motion from a CSV or JSON track file.
    #[arg(long, group = "motion_source")]
    pub track: Option<PathBuf>,
    /// Output frames, inclusive.
    #[arg(long, value_name = "A-B", default_value = "1001-1100")]
    pub frames: String,
    /// Frames per second.
    #[arg(long, default_value_t = 24.0)]
    pub fps: f64,
    /// Solver parameters from a TOML file (the keys of a job's [hairmesh.solver]: stiffness,
    /// damping, substeps, preroll_frames, …); the flags below override it.
    #[arg(long, value_name = "FILE")]
    pub solver: Option<PathBuf>,
    /// Implicit steps per frame.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub substeps: Option<u32>,
    /// Frames simulated at the first head pose before the first output frame [default: 24].
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub preroll: Option<u32>,
    /// Leave out the deformation minimization after collisions (to see what it does).
    #[arg(long)]
    pub no_minimize: bool,
    #[command(flatten)]
    pub space: super::InputSpace,
    /// Cell size (cm) of head mesh distance grids.
    #[arg(long, default_value_t = 0.2)]
    pub sdf_cell: f32,
    /// Outputs: .abc, .tcache, USD (.usda or .usd text, .usdc binary), or a PLY sequence pattern
    /// (hair.####.ply); repeat for several.
    #[arg(short, long, required = true)]
    pub output: Vec<PathBuf>,
    /// Also write the mesh at rest (.obj + .hairmesh), e.g. the one built from the groom.
    #[arg(long, value_name = "OBJ")]
    pub save_mesh: Option<PathBuf>,
    /// Print the result as JSON on standard output (errors too: {"error", "exit_code"}).
    #[arg(long)]
    pub json: bool,
}

pub fn run(c: &HairmeshCommand) -> Result<()> {
    match c {
        HairmeshCommand::Build(a) => run_build(a),
        HairmeshCommand::Simulate(a) => run_simulate(a),
    }
}

fn transform(space: &super::InputSpace) -> Result<Transform> {
    if !(space.scale > 0.0 && space.scale.is_finite()) {
        return Err(Error::Invalid("--scale must be positive".into()));
    }
    Ok(Transform {
        scale: space.scale,
        up: space.up,
    })
}

fn build_options(s: &MeshShape) -> Result<BuildOptions> {
    if !(1..=256).contains(&s.cells) || !(2..=64).contains(&s.layers) {
        return Err(Error::Invalid("--cells must be 1–256 and --layers 2–64".into()));
    }
    Ok(BuildOptions {
        cells: s.cells,
        layers: s.layers,
        topology: s.topology,
    })
}

fn run_build(a: &BuildArgs) -> Result<()> {
    let t = transform(&a.space)?;
    let scene = load_groom(&a.groom, &t, a.strands)?;
    let (mesh, report) = build(&scene.groom, &build_options(&a.mesh)?)?;
    if tress_formats::extension(&a.output).as_deref() != Some("obj") {
        return Err(Error::Invalid(format!(
            "{}: a hair mesh is written as .obj (with its .hairmesh sidecar)",
            a.output.display()
        )));
    }
    mesh.write(&a.output)?;
    let sidecar = HairMesh::sidecar(&a.output);
    if a.json {
        let doc = json!({
            "groom": scene.source,
            "columns": report.columns,
            "faces": report.faces,
            "layers": mesh.layers,
            "vertices": report.vertices,
            "dropped_faces": report.dropped_faces,
            "regions": report.regions,
            "outputs": [a.output.display().to_string(), sidecar.display().to_string()],
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
    } else {
        eprintln!(
            "hair mesh: {} columns × {} layers = {} vertices, {} root faces in {} region{}{}",
            thousands(report.columns as u64),
            mesh.layers,
            thousands(report.vertices as u64),
            thousands(report.faces as u64),
            report.regions,
            if report.regions == 1 { "" } else { "s" },
            if report.dropped_faces > 0 {
                format!(
                    " ({} grid cells with a single strand left without a bundle)",
                    report.dropped_faces
                )
            } else {
                String::new()
            }
        );
        output_file(&a.output);
        output_file(&sidecar);
    }
    Ok(())
}

fn motion(a: &SimulateArgs) -> MotionArgs {
    MotionArgs {
        preset: a.motion.clone(),
        gltf: a.gltf.clone(),
        node: a.node.clone(),
        abc: a.abc.clone(),
        xform: a.xform.clone(),
        track: a.track.clone(),
        ..Default::default()
    }
}

fn run_simulate(a: &SimulateArgs) -> Result<()> {
    if !(a.fps > 0.0 && a.fps.is_finite()) {
        return Err(Error::Invalid("--fps must be positive".into()));
    }
    let t = transform(&a.space)?;
    let (first, last) = super::whole_frames(&a.frames)?;
    super::distinct_outputs(&a.output)?;
    let (mesh, strands, topology, dropped, head_scene) = mesh_and_strands(a, &t)?;
    let (colliders, head_what, motion_what) = colliders(a, t, (first, last), head_scene)?;
    let start = first as f64 / a.fps;
    // A mesh built here settles into its rest shape first; a mesh given (--mesh) is modelled in
    // the shape it rests in.
    let mut sim = if a.mesh.is_none() {
        HairMeshSim::settled(mesh, solver_params(a)?, Some(colliders), start, 1.0 / a.fps)?.0
    } else {
        HairMeshSim::new(mesh, solver_params(a)?, Some(colliders), start)?
    };
    let info = CacheInfo {
        topology,
        fps: a.fps,
        frames: Vec::new(),
    };
    let mut sinks = Vec::new();
    for o in &a.output {
        sinks.push(create_sink(o, &info, first as f64, &SinkOptions::default())?);
    }
    if !a.json {
        eprintln!(
            "hair mesh {} columns × {} layers = {} vertices, {} tets{}",
            sim.mesh.columns(),
            sim.mesh.layers,
            thousands(sim.mesh.vertex_count() as u64),
            thousands(sim.tet_count() as u64),
            if dropped > 0 {
                format!(" ({dropped} grid cells without a bundle)")
            } else {
                String::new()
            }
        );
        eprintln!(
            "strands   {} ({} points), {}",
            thousands(strands.counts.len() as u64),
            thousands(strands.point_count() as u64),
            if a.groom.is_some() {
                "the groom's, carried in the mesh"
            } else {
                "generated in the mesh"
            }
        );
        eprintln!("head      {head_what}");
        eprintln!("motion    {motion_what}");
        eprintln!("steps     {} per frame", sim.params.substeps);
    }
    let frames = (last - first + 1).max(0) as u64;
    let mut progress = FrameProgress::new("hairmesh", frames, a.json);
    let result = simulate(
        &mut sim,
        Some(&strands),
        first,
        last,
        a.fps,
        sinks,
        &mut |frame, _| {
            progress.tick(frame);
            true
        },
    );
    progress.finish();
    let (report, files) = result?;
    if a.json {
        let doc = json!({
            "vertices": report.vertices,
            "tets": report.tets,
            "strands": strands.counts.len(),
            "frames": report.frames,
            "substeps": report.substeps,
            "ms_per_frame": report.ms_per_frame,
            "cg_iterations": report.cg_iterations,
            "deepest_penetration": report.deepest_penetration,
            "internal_penetrations": report.internal_penetrations,
            "min_volume_ratio": report.min_volume_ratio,
            "rest_error": report.rest_error,
            "head": head_what,
            "motion": motion_what,
            "params": sim.params,
            "outputs": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
    } else {
        eprintln!(
            "simulated {} frames: {} ms/frame ({}); deepest penetration {} mm; smallest volume ratio {}; {} cm from rest at the end",
            report.frames,
            num(report.ms_per_frame),
            crate::hairmesh::solve_words(report.cg_iterations),
            num(report.deepest_penetration as f64 * 10.0),
            num(report.min_volume_ratio),
            num(report.rest_error)
        );
        for f in &files {
            output_file(f);
        }
    }
    Ok(())
}

/// The mesh (read, or built around the groom), the strands it carries (the groom's, or
/// generated in it), their topology, the grid cells left without a bundle, and the groom the
/// head is fitted to (the mesh's columns without a groom).
#[allow(clippy::type_complexity)]
fn mesh_and_strands(
    a: &SimulateArgs,
    t: &Transform,
) -> Result<(HairMesh, RenderStrands, tress_formats::Strands, usize, SceneGroom)> {
    let scene = match &a.groom {
        Some(g) => Some(load_groom(g, t, a.strands)?),
        None => None,
    };
    let mut dropped = 0;
    let mesh = match (&a.mesh, &scene) {
        (Some(path), _) => HairMesh::read(path)?,
        (None, Some(s)) => {
            let (m, r) = build(&s.groom, &build_options(&a.shape)?)?;
            dropped = r.dropped_faces;
            m
        }
        (None, None) => unreachable!("clap requires --groom or --mesh"),
    };
    if let Some(path) = &a.save_mesh {
        mesh.write(path)?;
    }
    let strands = match &scene {
        Some(s) => RenderStrands::embed(&mesh, &s.groom),
        None => RenderStrands::generate(
            &mesh,
            a.strands.unwrap_or(5000).clamp(1, 10_000_000),
            a.points.clamp(2, 10_000),
            a.seed,
        ),
    };
    let topology = match &scene {
        Some(s) => s.groom.to_strands(),
        None => {
            let mut p = Vec::new();
            strands.positions(&mesh, &mesh.rest, &mut p);
            Groom::new(p, strands.counts.clone(), Default::default())?.to_strands()
        }
    };
    // The head: fitted to the groom's roots, or to the mesh's root layer without a groom.
    let head_scene = match scene {
        Some(s) => s,
        None => {
            let columns: Vec<glam::Vec3> = mesh.rest.clone();
            SceneGroom {
                groom: Groom::uniform(columns, mesh.layers, Default::default())?,
                procedural: None,
                file_shapes: None,
                source: a
                    .mesh
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            }
        }
    };
    Ok((mesh, strands, topology, dropped, head_scene))
}

/// The head and body (or none) on the motion, what the head is and where the motion came
/// from.
fn colliders(
    a: &SimulateArgs,
    t: Transform,
    (first, last): (i64, i64),
    head_scene: SceneGroom,
) -> Result<(crate::collide::Colliders, String, String)> {
    let mut spec = SceneSpec {
        // Without a groom, the mesh's own columns stand for it (`head_scene`).
        groom: match (&a.groom, &a.mesh) {
            (Some(g), _) => GroomSource::parse(g, a.strands)?,
            (None, m) => GroomSource::File(m.clone().unwrap_or_default(), Default::default()),
        },
        transform: t,
        head: HeadSource::default_for(&head_scene),
        body: a.body.clone(),
        sdf_cell: a.sdf_cell,
        motion: motion(a).source(),
        fps: a.fps,
        first,
        last,
        hold_after: last,
        props: Vec::new(),
    };
    let (colliders, head_what, motion_what) = match a.head.as_deref() {
        Some("none") => {
            let (track, what) = spec.track(&spec.motion, first)?;
            (
                crate::collide::Colliders::on_head(Vec::new(), track),
                "none".to_string(),
                what,
            )
        }
        given => {
            if let Some(h) = given {
                spec.head = HeadSource::parse(h);
            }
            let s = spec.build(head_scene, &SceneFiles::default())?;
            (s.colliders, s.head_what, s.motion_what)
        }
    };
    Ok((colliders, head_what, motion_what))
}

/// The solver's parameters: `--solver`'s file or the defaults, with the flags over them.
fn solver_params(a: &SimulateArgs) -> Result<HairMeshParams> {
    let mut params = match &a.solver {
        Some(path) => {
            let p: HairMeshParams = crate::presets::parse_file(path)?;
            p.check()
                .map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
            p
        }
        None => HairMeshParams::default(),
    };
    if let Some(k) = a.substeps {
        params.substeps = k;
    }
    if let Some(k) = a.preroll {
        params.preroll_frames = k;
    }
    params.minimize_deformation = !a.no_minimize;
    Ok(params)
}
