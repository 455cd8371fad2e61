//! `tress bench NAME`: performance figures (see `crate::bench`).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::bench;
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum BenchName {
    /// Read speed of every groom and mesh reader on the shared real files.
    Formats,
    /// Alembic write and read throughput (optionally on an archive from another writer).
    Abc,
    /// Signed distance grid build time (real heads, 1 and 2 mm) and query rate.
    Sdf,
    /// .tcache ratio and speed against zstd on raw floats, on a cache (--input).
    Tcache,
    /// Simulation speed (particle-steps/s, s/frame) for 1 and 2 threads: straight.hair and a
    /// procedural straight groom of --strands strands (default 16,000 × 25); then the Blender
    /// peer scene (--strands × --points on a swinging sphere, --peer-frames frames) beside
    /// Blender's own hair dynamics when --blender is given, and --big strands × --points.
    Sim,
    /// Neural interpolator cost: set-up, first frame and steady state per frame beside IDW on
    /// the same guides, and training steps (--config, default interp_small), --strands strands.
    Neural,
    /// Reduced-model cost per frame: 150K strands × 25 points from 400 guides —
    /// adaptive grouping, interpolation, two-way correction — beside static skinning and IDW.
    Upsample,
    /// Hair-mesh solver ms per frame on one thread at 216, 360 and 2,304 vertices (the sizes
    /// the paper reports) with the walk motion, beside the paper's figures.
    Hairmesh,
    /// Strand renderer seconds per frame: --strands (default 100,000) × --points strands on the
    /// procedural head at --size (default 1024) pixels a side on --threads threads, by phase,
    /// beside the same frame without self-shadowing and without the head.
    Render,
    /// A production-size shot end to end through the job engine: --strands (default 150,000)
    /// × --points strands, --guides guides simulated, IDW and static skinning (fitted on a
    /// --training-frames simulation of the whole groom), the general neural model, Alembic
    /// outputs, --frames (default 100) frames: seconds and peak memory per stage.
    Shot,
    /// Drape network throughput for 1, 10, 100 and 1000 grooms at once (--config sizes, default
    /// drape_small; --threads), beside Adam on the same groom and pose.
    Drape,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The benchmark to run.
    pub name: BenchName,
    /// The shared data folder (default: $TRESS_DATA).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Timed runs per case (the best is reported); neural: training steps timed.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Print the result as JSON on standard output (errors too: {"error", "exit_code"}).
    #[arg(long)]
    pub json: bool,
    /// abc: read this archive's first curves and write them back.
    #[arg(long)]
    pub input: Option<PathBuf>,
    /// abc: synthetic groom size when no input is given.
    #[arg(long, default_value_t = 16_000)]
    pub strands: usize,
    /// Points per strand of the benchmark groom.
    #[arg(long, default_value_t = 25)]
    pub points: usize,
    /// Frames to simulate or write [default: 10; shot: 100].
    #[arg(long)]
    pub frames: Option<usize>,
    /// upsample: guide strands.
    #[arg(long, default_value_t = 400)]
    pub guides: usize,
    /// upsample, neural, render: worker threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// sim: a Python with Blender's `bpy` to run the peer script at the same size [default:
    /// $TRESS_BLENDER_PYTHON]; without one, the peer row is tress's alone.
    #[arg(long, value_name = "PYTHON")]
    pub blender: Option<PathBuf>,
    /// sim: the Blender peer script [default: DATA/../tools/peers/blender_hair_sim.py].
    #[arg(long, value_name = "FILE")]
    pub peer_script: Option<PathBuf>,
    /// sim: frames of the peer scene (the median s/frame is over frames 2..F, as the peer
    /// script reports).
    #[arg(long, default_value_t = 24)]
    pub peer_frames: usize,
    /// sim: strands of the large case on the peer scene (0: none).
    #[arg(long, default_value_t = 100_000)]
    pub big: usize,
    /// abc: keep the written archive at this path; shot: the folder the shot's jobs write in
    /// (kept) [default: a temporary folder, removed].
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// shot: frames of the whole-groom training simulation the skinning is fitted on.
    #[arg(long, default_value_t = 24)]
    pub training_frames: usize,
    /// shot: the jobs to run (repeat the flag) [default: skinning and neural].
    #[arg(long = "shot-job", value_enum)]
    pub shot_jobs: Vec<crate::pipeline::shot_bench::ShotJob>,
    /// render: pixels a side of the picture.
    #[arg(long, default_value_t = 1024)]
    pub size: u32,
    /// neural, drape: the training config (a preset name or TOML file) [default: interp_small,
    /// drape_small].
    #[arg(long)]
    pub config: Option<String>,
    /// neural: the grid side (32, 64, 128, …) instead of the config's, keeping its guide stride.
    #[arg(long)]
    pub grid: Option<usize>,
    /// neural, drape: where the networks run (cuda: a build with `--features cuda`; the first frame and
    /// training step include compiling kernels unless the kernel cache is warm).
    #[arg(long, value_enum, default_value_t = crate::neural::device::DeviceKind::Cpu)]
    pub device: crate::neural::device::DeviceKind,
}

fn data_dir(a: &BenchArgs) -> Result<PathBuf> {
    a.data
        .clone()
        .or_else(|| std::env::var_os("TRESS_DATA").map(PathBuf::from))
        .ok_or_else(|| Error::Invalid("give the shared data folder with --data or TRESS_DATA".into()))
}

pub fn run(a: &BenchArgs) -> Result<()> {
    match a.name {
        BenchName::Abc => abc(a),
        BenchName::Tcache => tcache(a),
        BenchName::Neural => neural(a),
        BenchName::Drape => drape(a),
        BenchName::Hairmesh => hairmesh(a),
        BenchName::Upsample => upsample(a),
        BenchName::Sim => sim(a),
        BenchName::Sdf => sdf(a),
        BenchName::Formats => formats(a),
        BenchName::Render => render(a),
        BenchName::Shot => shot(a),
    }
}

fn abc(a: &BenchArgs) -> Result<()> {
    let r = bench::alembic::run(
        a.input.as_deref(),
        a.strands,
        a.points,
        a.frames.unwrap_or(10),
        a.output.as_deref(),
        a.runs,
    )?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).expect("json"));
        return Ok(());
    }
    println!(
        "{} strands, {} points, {} frames; archive {:.1} MB",
        r.strands,
        r.points,
        r.frames,
        r.file_bytes as f64 / 1e6
    );
    println!("write  {:.3} s  {:.0} MB/s (file)", r.write_s, r.write_mb_per_s);
    println!(
        "read   {:.3} s  {:.0} MB/s (positions, every sample)",
        r.read_s, r.read_mb_per_s
    );
    if let (Some(t), Some(m)) = (r.input_read_s, r.input_read_mb_per_s) {
        println!("input  {t:.3} s  {m:.0} MB/s (positions of the input archive)");
    }
    Ok(())
}

fn tcache(a: &BenchArgs) -> Result<()> {
    let input = a
        .input
        .as_deref()
        .ok_or_else(|| Error::Invalid("bench tcache needs --input CACHE".into()))?;
    let r = bench::tcache::run(input, &std::env::temp_dir())?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).expect("json"));
        return Ok(());
    }
    println!(
        "{}: {} strands, {} points, {} frames, {:.1} MB of float32",
        r.input,
        r.strands,
        r.points,
        r.frames,
        r.raw_bytes as f64 / 1e6
    );
    println!(
        "{:<24} {:>12} {:>8} {:>12} {:>12} {:>12}",
        "codec", "bytes", "ratio", "encode MB/s", "decode MB/s", "max error"
    );
    for c in r.codecs {
        println!(
            "{:<24} {:>12} {:>8.2} {:>12.0} {:>12.0} {:>12.2e}",
            c.codec, c.bytes, c.ratio, c.encode_mb_per_s, c.decode_mb_per_s, c.max_error
        );
    }
    Ok(())
}

fn neural(a: &BenchArgs) -> Result<()> {
    let config = a.config.as_deref().unwrap_or("interp_small");
    let r = bench::neural::run(
        config,
        a.grid,
        a.strands,
        a.threads,
        a.frames.unwrap_or(10),
        a.runs,
        a.device,
    )?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).expect("json"));
        return Ok(());
    }
    println!(
        "{}: {} strands × {} points; grid {}² (stride {}, {} particles), {} guides; {} threads, {} frames; device {}",
        r.config,
        r.strands,
        r.points,
        r.grid,
        r.stride,
        r.grid_points,
        r.guides,
        r.threads,
        r.frames,
        r.device
    );
    if let (Some(dir), Some(warm)) = (&r.kernel_cache, r.kernel_cache_warm) {
        println!(
            "kernel cache {dir} ({})",
            if warm {
                "warm: kernels from earlier runs"
            } else {
                "cold: kernels compiled in this run"
            }
        );
    }
    println!("{:<44} {:>10.1}", "set-up (grid, rest features), ms", r.setup_ms);
    println!("{:<44} {:>10.1}", "first frame, ms", r.first_frame_ms);
    println!("{:<44} {:>10.1}", "neural, ms per frame (steady)", r.neural_ms);
    println!(
        "{:<44} {:>10.1}",
        "IDW on the same guides, ms per frame", r.idw_ms
    );
    println!("{:<44} {:>10.1}", "neural / IDW", r.neural_over_idw);
    let p = &r.phases;
    println!(
        "{:<44} {:>10}",
        "  of which: guides / network / blend / back, ms",
        format!(
            "{:.1} / {:.1} / {:.1} / {:.1}",
            p.guides_ms, p.network_ms, p.blend_ms, p.transfer_ms
        )
    );
    println!(
        "{:<44} {:>10.1}",
        "neural + displacement, first frame, ms", r.displaced_first_frame_ms
    );
    println!(
        "{:<44} {:>10.1}",
        "neural + displacement, ms per frame", r.displaced_ms
    );
    println!("{:<44} {:>10.1}", "  of which F_β, ms", p.displacement_ms);
    if let Some(d) = r.cpu_max_relative_difference {
        println!(
            "{:<44} {:>10.2e}",
            "largest difference from the CPU (relative)", d
        );
    }
    println!(
        "{:<44} {:>10.1}",
        "training, first step, ms", r.train_first_step_ms
    );
    println!(
        "{:<44} {:>10.1}",
        format!("training, ms per step (mean of {})", r.train_steps),
        r.train_step_ms
    );
    println!(
        "{:<44} {:>10.1}",
        "displacement training, first step, ms", r.displace_first_step_ms
    );
    println!(
        "{:<44} {:>10.1}",
        format!("displacement training, ms per step (mean of {})", r.train_steps),
        r.displace_step_ms
    );
    Ok(())
}

fn drape(a: &BenchArgs) -> Result<()> {
    let config = a.config.as_deref().unwrap_or("drape_small");
    let r = bench::drape::run(config, a.threads, a.runs, &[1, 10, 100, 1000], a.device)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).expect("json"));
        return Ok(());
    }
    println!(
        "{}: {}² texture × {} points ({} strands), {} threads, device {}",
        r.config, r.texture, r.points, r.strands, r.threads, r.device
    );
    println!(
        "{:>8} {:>12} {:>12} {:>12} {:>12}",
        "grooms", "first, ms", "ms", "ms/groom", "grooms/s"
    );
    for b in &r.batches {
        println!(
            "{:>8} {:>12.1} {:>12.1} {:>12.3} {:>12.0}",
            b.grooms, b.first_ms, b.ms, b.ms_per_groom, b.grooms_per_second
        );
    }
    println!(
        "one groom with the network solver's uniform line search: {:.1} ms ({} energy evaluations)",
        r.searched_ms, r.searched_evaluations
    );
    println!(
        "one groom with its default search, a scale per strand: {:.1} ms ({} energy evaluations)",
        r.strands_searched_ms, r.strands_searched_evaluations
    );
    println!(
        "Adam on the same groom and pose: {:.1} s ({} iterations); network {:.0}× faster per groom",
        r.adam_seconds, r.adam_iterations, r.speedup_over_adam
    );
    Ok(())
}

fn hairmesh(a: &BenchArgs) -> Result<()> {
    let r = bench::hairmesh::run(a.frames.unwrap_or(10).max(48))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).expect("json"));
        return Ok(());
    }
    println!(
        "{} frames of the {} motion at {} fps, {} steps per frame, conjugate gradients to {} relative residual; one thread",
        r.frames, r.motion, r.fps, r.substeps, r.cg_tolerance
    );
    println!(
        "{:<22} {:>9} {:>6} {:>10} {:>10} {:>9} {:>8} {:>8} {:>10} {:>8} {:>11} {:>13} {:>6}",
        "mesh",
        "vertices",
        "tets",
        "ms/frame",
        "paper ms",
        "ms/1000v",
        "forces",
        "solve",
        "collision",
        "CG its",
        "30 its cap",
        "1 step/frame",
        "its"
    );
    for c in r.cases {
        println!(
            "{:<22} {:>9} {:>6} {:>10.2} {:>10.1} {:>9.2} {:>8.2} {:>8.2} {:>10.2} {:>8.1} {:>11.2} {:>13.2} {:>6.1}",
            c.mesh,
            c.vertices,
            c.tets,
            c.ms_per_frame,
            c.paper_ms,
            c.ms_per_1000_vertices,
            c.forces_ms,
            c.solve_ms,
            c.collisions_ms,
            c.cg_iterations_per_step,
            c.capped_ms_per_frame,
            c.one_step_ms_per_frame,
            c.one_step_cg_iterations
        );
    }
    println!(
        "built: meshes made from the quickstart groom, connected (the default; settled first, untimed) and separate bundles on 8 cells (solved directly per bundle, CG its 0)"
    );
    Ok(())
}

fn upsample(a: &BenchArgs) -> Result<()> {
    let strands = if a.strands == 16_000 { 150_000 } else { a.strands };
    let r = bench::upsample::run(strands, a.guides, a.threads, a.frames.unwrap_or(10))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).expect("json"));
        return Ok(());
    }
    println!(
        "{} strands ({} points) from {} guides, {} threads, {} frames; model {:.1} MB ({:.0} bytes per strand, {:.1} sets per strand)",
        r.strands,
        r.points,
        r.guides,
        r.threads,
        r.frames,
        r.model_bytes as f64 / 1e6,
        r.model_bytes_per_strand,
        r.sets_per_strand
    );
    println!("{:<44} {:>10}", "ms per frame", "");
    println!("{:<44} {:>10.2}", "IDW, 10 guides (baseline)", r.idw_ms);
    println!("{:<44} {:>10.2}", "static skinning", r.static_ms);
    println!(
        "{:<44} {:>10.2}",
        "adaptive: guide graph, grouping, assignment", r.adaptive_grouping_ms
    );
    println!(
        "{:<44} {:>10.2}",
        "adaptive: interpolation (Eq. 5)", r.adaptive_interpolation_ms
    );
    println!(
        "{:<44} {:>10.2}",
        "two-way: interpolation for the check", r.correction_interpolation_ms
    );
    println!(
        "{:<44} {:>10.2}",
        "two-way: penalties + Eq. 4", r.correction_solve_ms
    );
    println!(
        "{:.0} normal particles in the rod and {:.0} set switches per frame",
        r.colliding_per_frame, r.switches_per_frame
    );
    Ok(())
}

fn shot(a: &BenchArgs) -> Result<()> {
    use crate::pipeline::shot_bench::ShotJob;
    let size = crate::pipeline::shot_bench::ShotSize {
        strands: if a.strands == 16_000 { 150_000 } else { a.strands },
        points: a.points,
        guides: a.guides,
        frames: a.frames.unwrap_or(100),
        training_frames: a.training_frames,
        threads: a.threads,
        jobs: if a.shot_jobs.is_empty() {
            vec![ShotJob::Skinning, ShotJob::Neural]
        } else {
            a.shot_jobs.clone()
        },
    };
    let (dir, temporary) = match &a.output {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("tress-bench-shot-{}", std::process::id())),
            true,
        ),
    };
    if !a.json {
        println!(
            "{} strands × {} points, {} guides, {} frames (training simulation {} frames), {} threads, in {}",
            size.strands,
            size.points,
            size.guides,
            size.frames,
            size.training_frames,
            size.threads,
            dir.display()
        );
    }
    let json = a.json;
    let r = crate::pipeline::shot_bench::run(&size, &dir, &mut |line| {
        if !json {
            println!("{line}");
        }
    });
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let r = r?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).expect("json"));
        return Ok(());
    }
    for (f, b) in &r.abc_bytes {
        println!("{f}: {:.2} GB", *b as f64 / 1e9);
    }
    println!(
        "whole shot: {:.1} s, peak memory {:.2} GiB{}",
        r.seconds,
        r.peak_memory_gib,
        if r.per_stage_peaks {
            ""
        } else {
            " (per-stage peaks are peaks so far)"
        }
    );
    Ok(())
}

fn sim(a: &BenchArgs) -> Result<()> {
    let data = data_dir(a).ok();
    let rows = bench::sim::run(data.as_deref(), a.strands, a.frames.unwrap_or(10))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows).expect("json"));
        return Ok(());
    }
    println!(
        "{:<44} {:>9} {:>7} {:>7} {:>9} {:>10} {:>14}",
        "groom", "particles", "threads", "frames", "substeps", "s/frame", "particle-steps/s"
    );
    for r in &rows {
        println!(
            "{:<44} {:>9} {:>7} {:>7} {:>9} {:>10.3} {:>14.3e}",
            r.groom,
            r.particles,
            r.threads,
            r.frames,
            r.substeps,
            r.seconds_per_frame,
            r.particle_steps_per_s
        );
    }
    for r in rows.iter().filter(|r| r.threads == 2) {
        println!("{} (2 threads): {}", r.groom, r.counters.report());
    }
    sim_peer(a, data.as_deref())
}

fn render(a: &BenchArgs) -> Result<()> {
    let strands = if a.strands == 16_000 { 100_000 } else { a.strands };
    let r = bench::render::run(strands, a.points, a.size.clamp(16, 8192), a.threads, a.runs)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r).expect("json"));
        return Ok(());
    }
    println!(
        "{} strands × {} points ({} segments) at {}×{} on {} thread(s), best of {} runs",
        r.strands, r.points, r.segments, r.width, r.height, r.threads, a.runs
    );
    println!(
        "{:<34} {:>9.3} s",
        "frame (head, shadows, hair)", r.seconds_per_frame
    );
    println!(
        "{:<34} {:>9.3} s",
        "  baseline: no self-shadowing", r.no_shadows_seconds_per_frame
    );
    println!(
        "{:<34} {:>9.3} s",
        "  baseline: hair alone, no head", r.hair_only_seconds_per_frame
    );
    println!(
        "phases (one frame): head {:.3} s, shadow map {:.3} s, shading {:.3} s, ribbons {:.3} s",
        r.head_s, r.shadow_map_s, r.shading_s, r.ribbons_s
    );
    println!(
        "segments drawn: {} of {} (the rest behind the head or out of the picture)",
        r.segments_in_view, r.segments
    );
    Ok(())
}

fn sdf(a: &BenchArgs) -> Result<()> {
    let rows = bench::sdf::run(&data_dir(a)?)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows).expect("json"));
        return Ok(());
    }
    println!(
        "{:<28} {:>9} {:>8} {:>11} {:>9} {:>14} {:>14}",
        "mesh", "triangles", "cell cm", "nodes", "build s", "queries/s", "ellipsoid q/s"
    );
    for r in rows {
        println!(
            "{:<28} {:>9} {:>8} {:>11} {:>9.2} {:>14.0} {:>14.0}",
            r.mesh, r.triangles, r.cell_cm, r.nodes, r.build_s, r.queries_per_s, r.ellipsoid_queries_per_s
        );
    }
    Ok(())
}

fn formats(a: &BenchArgs) -> Result<()> {
    let data = data_dir(a)?;
    let rows = bench::formats::run(&data, a.runs)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows).expect("json"));
        return Ok(());
    }
    println!(
        "{:<40} {:<13} {:>10} {:>9} {:>9} {:>8}",
        "file", "reader", "bytes", "best ms", "MB/s", "÷memcpy"
    );
    for r in rows {
        println!(
            "{:<40} {:<13} {:>10} {:>9.2} {:>9.0} {:>8.3}",
            r.file, r.reader, r.bytes, r.best_ms, r.mb_per_s, r.vs_memcpy
        );
    }
    Ok(())
}

/// The peer part of `tress bench sim`: tress and (where it can run) Blender on the same scene,
/// one after the other, and the large case.
fn sim_peer(a: &BenchArgs, data: Option<&std::path::Path>) -> Result<()> {
    let frames = a.peer_frames.max(3);
    let ours = bench::sim::peer_run(a.strands, a.points, frames)?;
    let blender_python = a
        .blender
        .clone()
        .or_else(|| std::env::var_os("TRESS_BLENDER_PYTHON").map(PathBuf::from));
    let theirs = match blender_python {
        Some(py) => {
            let script = a
                .peer_script
                .clone()
                .or_else(|| data.map(|d| d.join("../tools/peers/blender_hair_sim.py")))
                .ok_or_else(|| {
                    Error::Invalid(
                        "give the peer script with --peer-script (or the data folder beside it)".into(),
                    )
                })?;
            if !script.is_file() {
                return Err(Error::Invalid(format!("no peer script at {}", script.display())));
            }
            Some(bench::sim::blender_run(
                &py, &script, a.strands, a.points, frames,
            )?)
        }
        None => None,
    };
    let big = (a.big > 0)
        .then(|| bench::sim::peer_run(a.big, a.points, a.frames.unwrap_or(10).clamp(3, 24)))
        .transpose()?;
    if a.json {
        let doc = serde_json::json!({
            "peer": {"tress": ours, "blender": theirs,
                     "ratio": theirs.as_ref().map(|b| b.seconds_per_frame_median / ours.seconds_per_frame_median)},
            "big": big,
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
        return Ok(());
    }
    println!();
    println!(
        "peer scene: {} strands x {} points on a 10 cm sphere swinging ±40° with a 10 cm move, {} frames at 24 fps",
        ours.strands, ours.points, frames
    );
    let row = |name: &str, spf: f64, len: f64, mem: Option<f64>| {
        println!(
            "{:<34} {:>9.3} s/frame  length change {:>6.2} % mean  peak memory {}",
            name,
            spf,
            100.0 * len,
            mem.map_or("?".to_string(), |m| format!("{m:.0} MB"))
        );
    };
    row(
        "tress (hair-hair on, 2 threads)",
        ours.seconds_per_frame_median,
        ours.length_change_mean,
        ours.peak_rss_mb,
    );
    println!(
        "{:<34} {:>9.3e} particle-steps/s, {} substeps, deepest penetration {:.3} mm, length change max {:.2} %",
        "",
        ours.particle_steps_per_s,
        ours.substeps,
        10.0 * ours.deepest_penetration,
        100.0 * ours.length_change_max
    );
    match &theirs {
        Some(b) => {
            row(
                &format!("Blender {} (voxel off)", b.version),
                b.seconds_per_frame_median,
                b.length_change_mean,
                Some(b.peak_rss_mb),
            );
            println!(
                "ratio: tress is {:.1}x Blender (median s/frame, same run)",
                b.seconds_per_frame_median / ours.seconds_per_frame_median
            );
        }
        None => println!("Blender: not run (give --blender PYTHON or set TRESS_BLENDER_PYTHON)"),
    }
    if let Some(b) = &big {
        row(
            &format!("tress, {} strands", b.strands),
            b.seconds_per_frame_median,
            b.length_change_mean,
            b.peak_rss_mb,
        );
    }
    Ok(())
}
