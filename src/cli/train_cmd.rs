//! `tress train interp --config NAME|FILE --gt CACHE --groom G -o MODEL`: trains the neural
//! interpolator (000 §4.2) on a full simulation of the groom.

use std::path::PathBuf;

use burn::backend::{Autodiff, Flex};
use clap::{Args, Subcommand};
use serde_json::json;

use super::report::output_file;
use crate::error::{Error, Result};
use crate::groom::{ReadOptions, Transform, read_groom};
use crate::guides::training::HeadFrames;
use crate::neural::data::{FrameSet, GridFrames, StreamedFrames};
use crate::neural::device::DeviceKind;
use crate::neural::drape::config::DrapeTrainConfig;
use crate::neural::drape::network::DrapeModel;
use crate::neural::drape::network::TrainedDrape;
use crate::neural::drape::scene::drape_scene;
use crate::neural::drape::train::{DrapeStep, GroupScore, train as train_drape};
use crate::neural::grid::UvGrid;
use crate::neural::interp::InterpConfig;
use crate::neural::interp::train::{StepReport, Training, model_file_of};

#[derive(Debug, Subcommand)]
pub enum TrainCommand {
    /// Train the neural interpolator (weights over each particle's 4 × 4 guides) on a full
    /// simulation of the groom; writes a .tnn model for `tress upsample --method neural`.
    Interp(InterpArgs),
    /// Train the fine-scale displacement generator of a trained interpolator (fine detail added
    /// to its output) against a discriminator; writes the model with the generator added.
    Displace(DisplaceArgs),
    /// Train the neural drape (a groom autoencoder, then a deformation decoder trained by the
    /// drape energy alone, no simulation) on the grooms and pose ranges of a config; writes a
    /// .tnn model for `tress drape --solver network`.
    Drape(DrapeTrainArgs),
}

/// Where a training writes, whether it resumes, how it reports (both trainings).
#[derive(Debug, Args)]
pub struct TrainOutput {
    /// Go on from the checkpoint (`MODEL.ckpt`) of an interrupted run.
    #[arg(long)]
    pub resume: bool,
    /// The model file (.tnn); a checkpoint `MODEL.ckpt` is kept beside it while training.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Print the training summary as JSON on standard output.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DrapeTrainArgs {
    /// A training config: a built-in name (drape_small) or a TOML file listing [[groom]]s,
    /// [poses] ranges, [autoencoder], [train] and [material].
    #[arg(long, default_value = "drape_small")]
    pub config: String,
    /// Override the config's decoder steps.
    #[arg(long)]
    pub steps: Option<usize>,
    /// Stop after this many minutes (the best model so far is written).
    #[arg(long)]
    pub max_minutes: Option<f64>,
    /// Cell size (cm) of head mesh distance grids.
    #[arg(long, default_value_t = 0.2)]
    pub sdf_cell: f32,
    #[command(flatten)]
    pub out: TrainOutput,
}

#[derive(Debug, Args)]
pub struct InterpArgs {
    /// A training config: a built-in name (interp_small, interp_paper) or a TOML file.
    #[arg(long, default_value = "interp_small")]
    pub config: String,
    /// The training frames: a cache of the whole groom simulated in full (.tcache, .abc, PLY
    /// sequence), e.g. from `tress simulate`.
    #[arg(
        long,
        value_name = "CACHE",
        required_unless_present = "dataset",
        requires = "groom"
    )]
    pub gt: Option<PathBuf>,
    /// Validation frames (another motion of the same groom); without it the last frames of
    /// --gt are held out (`train.validation` of the config).
    #[arg(long, value_name = "CACHE", requires = "gt")]
    pub val: Option<PathBuf>,
    /// The groom at rest in the head's frame, the same strands as the caches.
    #[arg(long, requires = "gt")]
    pub groom: Option<PathBuf>,
    /// Train on a dataset folder (`tress dataset build`): many grooms and motions, read from
    /// their caches batch by batch. Validation is on the items whose groom and motion are both
    /// held out; items with only one of them held out are not used.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["gt", "val", "groom"])]
    pub dataset: Option<PathBuf>,
    /// A dataset's groom held out for validation (the groom part of item names, e.g.
    /// `wavy-s2`); repeat for more [default: the dataset's last groom].
    #[arg(long, value_name = "GROOM", requires = "dataset")]
    pub hold_out_groom: Vec<String>,
    /// A dataset's motion held out for validation (the motion part of item names, e.g.
    /// `rom-s5`); repeat for more [default: the dataset's last motion].
    #[arg(long, value_name = "MOTION", requires = "dataset")]
    pub hold_out_motion: Vec<String>,
    /// Validate on every item of another dataset (grooms and motions of its own) and train on
    /// every item of --dataset.
    #[arg(long, value_name = "DIR", requires = "dataset", conflicts_with_all = ["hold_out_groom", "hold_out_motion"])]
    pub val_dataset: Option<PathBuf>,
    /// Frames of each validation item scored at each validation (evenly spaced).
    #[arg(long, default_value_t = 48, requires = "dataset")]
    pub validation_frames: usize,
    #[command(flatten)]
    pub space: super::InputSpace,
    /// Override the config's number of steps.
    #[arg(long)]
    pub steps: Option<usize>,
    /// Where to train.
    #[arg(long, value_enum, default_value_t = DeviceKind::Cpu)]
    pub device: DeviceKind,
    #[command(flatten)]
    pub out: TrainOutput,
}

#[derive(Debug, Args)]
pub struct DisplaceArgs {
    /// The trained interpolator (.tnn from `tress train interp`).
    #[arg(long)]
    pub model: PathBuf,
    /// Options: the `[displace]` section of a training config (a built-in name or a TOML
    /// file); without it, the model's own config's section, else the defaults.
    #[arg(long)]
    pub config: Option<String>,
    /// The training frames (a full simulation of the groom, as for `train interp`).
    #[arg(long, value_name = "CACHE")]
    pub gt: PathBuf,
    /// Validation frames; without it the last frames of --gt are held out.
    #[arg(long, value_name = "CACHE")]
    pub val: Option<PathBuf>,
    /// The groom at rest in the head's frame.
    #[arg(long)]
    pub groom: PathBuf,
    #[command(flatten)]
    pub space: super::InputSpace,
    /// Override the generator updates.
    #[arg(long)]
    pub steps: Option<usize>,
    /// Stop after this many minutes (the best generator so far is written).
    #[arg(long)]
    pub max_minutes: Option<f64>,
    /// Where to train.
    #[arg(long, value_enum, default_value_t = DeviceKind::Cpu)]
    pub device: DeviceKind,
    #[command(flatten)]
    pub out: TrainOutput,
}

pub fn run(c: &TrainCommand) -> Result<()> {
    match c {
        TrainCommand::Interp(a) => run_interp(a),
        TrainCommand::Displace(a) => run_displace(a),
        TrainCommand::Drape(a) => run_drape(a),
    }
}

fn run_interp(a: &InterpArgs) -> Result<()> {
    a.device.check()?;
    let mut cfg = InterpConfig::load(&a.config)?;
    if let Some(s) = a.steps {
        cfg.train.steps = s;
    }
    let quiet = a.out.json;
    let say = |m: &str| {
        if !quiet {
            eprintln!("{m}");
        }
    };
    let data = match (&a.dataset, &a.gt, &a.groom) {
        (Some(dir), _, _) => dataset_frames(a, dir, &cfg)?,
        (None, Some(gt), Some(groom_file)) => {
            let groom = training_groom(groom_file, &a.space)?;
            let grid = UvGrid::new(&groom, cfg.grid)?;
            say(&format!(
                "grid      {0}×{0} cells × {1} particles, {2:.0} % near a root; {3} guides ({4}×{4} lattice)",
                cfg.grid.n,
                cfg.grid.points,
                100.0 * grid.occupancy(),
                grid.guide_strands().len(),
                cfg.grid.guides_per_side()
            ));
            let (t, v) = training_frames(&groom, grid, gt, a.val.as_deref(), &cfg)?;
            TrainingData {
                train: Box::new(t),
                val: vec![v],
                about: json!({"gt": gt, "val": a.val}),
            }
        }
        _ => return Err(Error::Invalid("give --gt and --groom, or --dataset".into())),
    };
    let (train_frames, val_frames) = (
        data.train.segments().iter().sum::<usize>(),
        data.val.iter().map(GridFrames::len).sum::<usize>(),
    );
    say(&format!(
        "data      {train_frames} training frames, {val_frames} validation frames"
    ));
    let ckpt = checkpoint_path(&a.out.output, a.out.resume)?;
    let mut report = |r: &StepReport| {
        if quiet {
            return true;
        }
        if r.step.is_multiple_of(10) || r.validation.is_some() || r.step == 1 {
            let mut line = format!(
                "step {}/{}  loss {:.5} (data {:.4}, length {:.2e}, snap {:.4}, tempo {:.4})  {:.2} s/step",
                r.step, r.steps, r.total, r.data, r.length, r.snap, r.tempo, r.seconds_per_step
            );
            if let Some(v) = r.validation {
                line.push_str(&format!(
                    "  validation RMSE {:.3} cm (uniform weights {:.3}), length error {:.2} %",
                    v.rmse_cm,
                    v.uniform_rmse_cm,
                    100.0 * v.length_error
                ));
            }
            eprintln!("{line}");
        }
        true
    };
    let trained = a.device.run(Training {
        cfg: &cfg,
        train: data.train.as_ref(),
        val: &data.val,
        checkpoint: Some((&ckpt, a.out.resume)),
        score_untrained: true,
        report: &mut report,
    })?;
    let before = trained.untrained.unwrap_or_default();
    let (best_step, best) = trained.progress.best.unwrap_or_default();
    let summary = trained.progress.summary(
        trained.seconds,
        json!({
            "frames": train_frames,
            "validation_frames": val_frames,
            "data": data.about,
            "untrained_validation": before,
            "stopped_early": trained.stopped_early,
            "device": a.device,
            "threads": rayon::current_num_threads(),
        }),
    );
    model_file_of(&cfg, trained.weights, summary.clone()).write(&a.out.output)?;
    let _ = std::fs::remove_file(&ckpt);
    if a.out.json {
        println!("{}", serde_json::to_string_pretty(&summary).expect("json"));
    } else {
        eprintln!(
            "trained   {} steps in {:.0} s; best at step {best_step}: validation RMSE {:.3} cm (untrained {:.3}, uniform weights {:.3}), length error {:.2} %",
            trained.progress.step,
            trained.seconds,
            best.rmse_cm,
            before.rmse_cm,
            best.uniform_rmse_cm,
            100.0 * best.length_error
        );
    }
    output_file(&a.out.output);
    Ok(())
}

fn run_displace(a: &DisplaceArgs) -> Result<()> {
    use crate::neural::displace::train::{DisplaceStep, DisplaceTraining, with_generator_of};
    a.device.check()?;
    let (cfg, _, _) = crate::neural::interp::load_model::<Flex>(&a.model, &burn::backend::flex::FlexDevice)?;
    let mut opts = match &a.config {
        Some(c) => InterpConfig::load(c)?
            .displace
            .ok_or_else(|| Error::Invalid(format!("training config {c}: no [displace] section")))?,
        None => cfg.displace.clone().unwrap_or_default(),
    };
    if let Some(s) = a.steps {
        opts.steps = s;
    }
    if a.max_minutes.is_some() {
        opts.max_minutes = a.max_minutes;
    }
    opts.validate()?;
    if opts.steps == 0 {
        return Err(Error::Invalid(
            "the displacement generator needs at least one step (--steps or displace.steps)".into(),
        ));
    }
    opts.check_grid(&cfg.grid)
        .map_err(|e| Error::Invalid(format!("{}: {e}", a.model.display())))?;
    let groom = training_groom(&a.groom, &a.space)?;
    let grid = UvGrid::new(&groom, cfg.grid)?;
    let quiet = a.out.json;
    let (train_set, val_set) = training_frames(&groom, grid, &a.gt, a.val.as_deref(), &cfg)?;
    if !quiet {
        eprintln!(
            "data      {} training frames, {} validation frames; {} generator steps, {} critic updates each",
            train_set.len(),
            val_set.len(),
            opts.steps,
            opts.critic_steps
        );
    }
    let ckpt = checkpoint_path(&a.out.output, a.out.resume)?;
    let mut report = |r: &DisplaceStep| {
        if quiet {
            return true;
        }
        if r.step.is_multiple_of(10) || r.validation.is_some() || r.step == 1 {
            let mut line = format!(
                "step {}/{}  critic {:.4}  generator adversarial {:.4}, L1 {:.4} cm  {:.2} s/step",
                r.step, r.steps, r.critic, r.adversarial, r.l1_cm, r.seconds_per_step
            );
            if let Some(v) = r.validation {
                line.push_str(&format!("  validation {v}"));
            }
            eprintln!("{line}");
        }
        true
    };
    let trained = a.device.run(DisplaceTraining {
        model: &a.model,
        o: &opts,
        train: &train_set,
        val: &val_set,
        checkpoint: Some((&ckpt, a.out.resume)),
        report: &mut report,
    })?;
    let (best_step, best) = trained.progress.best.unwrap_or_default();
    let summary = trained.progress.summary(
        trained.seconds,
        json!({
            "frames": train_set.len(),
            "validation_frames": val_set.len(),
            "gt": a.gt,
            "val": a.val,
            "stopped_early": trained.stopped_early,
            "device": a.device,
            "threads": rayon::current_num_threads(),
        }),
    );
    let model = crate::neural::file::NeuralFile::read(&a.model)?;
    with_generator_of(model, &opts, trained.generator, summary.clone()).write(&a.out.output)?;
    let _ = std::fs::remove_file(&ckpt);
    if a.out.json {
        println!("{}", serde_json::to_string_pretty(&summary).expect("json"));
    } else {
        eprintln!(
            "trained   {} steps in {:.0} s; best at step {best_step}: validation {best}",
            trained.progress.step, trained.seconds
        );
    }
    output_file(&a.out.output);
    Ok(())
}

/// The groom a training reads, in centimetres, Y up.
fn training_groom(path: &std::path::Path, space: &super::InputSpace) -> Result<crate::groom::Groom> {
    let mut groom = read_groom(path, &ReadOptions::default())?.groom;
    Transform {
        scale: space.scale,
        up: space.up,
    }
    .apply(&mut groom);
    Ok(groom)
}

/// What W_θ trains and validates on, and a description for the model's summary.
struct TrainingData {
    train: Box<dyn FrameSet>,
    val: Vec<GridFrames>,
    about: serde_json::Value,
}

/// A dataset's training items streamed from their caches, and its validation items' frames
/// (`--validation-frames` of each, evenly spaced) in memory.
fn dataset_frames(a: &InterpArgs, dir: &std::path::Path, cfg: &InterpConfig) -> Result<TrainingData> {
    use crate::pipeline::dataset::{ItemRecord, read_manifest};
    let m = read_manifest(dir)?;
    let (grooms, motions) = m.parts();
    let other = match &a.val_dataset {
        Some(v) => Some((v.as_path(), read_manifest(v)?)),
        None => None,
    };
    let pick = |given: &[String], all: &[String], what: &str| -> Result<Vec<String>> {
        if given.is_empty() {
            return Ok(all.last().cloned().into_iter().collect());
        }
        for g in given {
            if !all.contains(g) {
                return Err(Error::Invalid(format!(
                    "{}: no {what} {g:?} in the dataset (its {what}s: {})",
                    dir.display(),
                    all.join(", ")
                )));
            }
        }
        Ok(given.to_vec())
    };
    let (held_g, held_m) = match &other {
        Some(_) => (Vec::new(), Vec::new()),
        None => (
            pick(&a.hold_out_groom, &grooms, "groom")?,
            pick(&a.hold_out_motion, &motions, "motion")?,
        ),
    };
    let (mut train, mut val) = (Vec::new(), Vec::new());
    for item in &m.items {
        match (
            held_g.contains(&item.item.groom_key),
            held_m.contains(&item.item.motion_key),
        ) {
            (false, false) => train.push((dir, item)),
            (true, true) => val.push((dir, item)),
            _ => {}
        }
    }
    if let Some((vdir, o)) = &other {
        val.extend(o.items.iter().map(|i| (*vdir, i)));
    }
    if train.is_empty() || val.is_empty() {
        return Err(Error::Invalid(format!(
            "{}: holding out grooms {held_g:?} and motions {held_m:?} leaves {} training and {} validation items; a dataset needs at least two grooms and two motions",
            dir.display(),
            train.len(),
            val.len()
        )));
    }
    let open = |(root, item): &(&std::path::Path, &ItemRecord)| -> Result<(UvGrid, HeadFrames)> {
        let groom = training_groom(&root.join(&item.rest), &a.space)?;
        let grid = UvGrid::new(&groom, cfg.grid)?;
        Ok((grid, HeadFrames::open(&root.join(&item.cache), &groom)?))
    };
    let streamed = StreamedFrames::new(train.iter().map(open).collect::<Result<_>>()?);
    let mut val_sets = Vec::new();
    for item in &val {
        let (grid, mut cache) = open(item)?;
        let n = cache.len();
        let k = a.validation_frames.clamp(1, n);
        let mut set = GridFrames::new(grid);
        for j in 0..k {
            let (points, _) = cache.frame(j * n / k)?;
            set.push(&points);
        }
        val_sets.push(set);
    }
    let names = |v: &[(&std::path::Path, &ItemRecord)]| -> Vec<String> {
        v.iter().map(|(_, i)| i.item.name.clone()).collect()
    };
    if !a.out.json {
        eprintln!(
            "dataset   {}: training on {} items ({} grooms × {} motions), validating on {}: {}",
            m.name,
            train.len(),
            grooms.len() - held_g.len(),
            motions.len() - held_m.len(),
            val.len(),
            names(&val).join(", ")
        );
    }
    Ok(TrainingData {
        train: Box::new(streamed),
        val: val_sets,
        about: json!({
            "dataset": dir,
            "dataset_name": m.name,
            "validation_dataset": a.val_dataset,
            "training_items": names(&train),
            "validation_items": names(&val),
            "validation_frames_per_item": a.validation_frames,
        }),
    })
}

/// Training and validation frames on the grid: `val`'s frames when given, else the held-out
/// end of `gt` (`train.validation`).
fn training_frames(
    groom: &crate::groom::Groom,
    grid: UvGrid,
    gt: &std::path::Path,
    val: Option<&std::path::Path>,
    cfg: &InterpConfig,
) -> Result<(GridFrames, GridFrames)> {
    let mut frames = HeadFrames::open(gt, groom)?;
    match val {
        Some(v) => {
            let t = GridFrames::load(grid.clone(), &mut frames, None)?;
            let mut vf = HeadFrames::open(v, groom)?;
            Ok((t, GridFrames::load(grid, &mut vf, None)?))
        }
        None => GridFrames::load_split(grid, &mut frames, cfg.train.validation, cfg.train.batch),
    }
}

/// The checkpoint kept beside a model while it trains (`MODEL.ckpt`); one left by an
/// interrupted run is an error unless the run resumes from it.
fn checkpoint_path(output: &std::path::Path, resume: bool) -> Result<PathBuf> {
    let mut p = output.to_path_buf().into_os_string();
    p.push(".ckpt");
    let ckpt = PathBuf::from(p);
    if ckpt.exists() && !resume {
        return Err(Error::Invalid(format!(
            "{} exists (an interrupted run): pass --resume to go on from it, or remove it",
            ckpt.display()
        )));
    }
    Ok(ckpt)
}

fn run_drape(a: &DrapeTrainArgs) -> Result<()> {
    let mut cfg = DrapeTrainConfig::load(&a.config)?;
    if let Some(s) = a.steps {
        cfg.train.steps = s;
    }
    if let Some(m) = a.max_minutes {
        if !(m > 0.0 && m.is_finite()) {
            return Err(Error::Invalid("--max-minutes must be positive".into()));
        }
        cfg.train.max_minutes = Some(m);
    }
    let quiet = a.out.json;
    let ckpt = checkpoint_path(&a.out.output, a.out.resume)?;
    let mut subjects = Vec::new();
    for (i, g) in cfg.grooms.iter().enumerate() {
        let ds = drape_scene(
            g,
            &Transform::default(),
            a.sdf_cell,
            cfg.net.texture,
            cfg.net.points,
            &cfg.material,
        )
        .map_err(|e| Error::Invalid(format!("{}: groom {} ({}): {e}", a.config, i + 1, g.name)))?;
        if !quiet {
            eprintln!(
                "groom     {}: {} strands on the texture, head {}{}",
                g.name,
                ds.subject.groom.strands(),
                ds.head,
                if g.held_out { " (held out)" } else { "" }
            );
        }
        subjects.push(ds.subject);
    }
    let dev = burn::backend::flex::FlexDevice;
    let mut report = |r: &DrapeStep| {
        if quiet {
            return true;
        }
        let show = r.step == 1
            || r.step.is_multiple_of(if r.stage == "decoder" { 10 } else { 50 })
            || r.validation.is_some();
        if show {
            let mut line = format!("{} {}/{}  loss {:.4}", r.stage, r.step, r.steps, r.loss);
            if r.stage == "decoder" {
                line.push_str(&format!("  (energy {:.3}, pose reg {:.4})", r.energy, r.pose_reg));
            }
            line.push_str(&format!("  {:.2} s/step", r.seconds_per_step));
            eprintln!("{line}");
        }
        if let Some(v) = r.validation {
            let row = |name: &str, g: &GroupScore| {
                eprintln!(
                    "  {name:<9} energy {:.3} (posed {:.3})  inside {:.2} % (posed {:.2})  length err {:.3} %  orientation {:.2}°",
                    g.energy,
                    g.energy_posed,
                    100.0 * g.network.intersection_fraction,
                    100.0 * g.posed.intersection_fraction,
                    100.0 * g.network.length_error_mean,
                    g.network.orientation_error_deg
                )
            };
            row("train", &v.train);
            if let Some(h) = &v.held_out {
                row("held out", h);
            }
        }
        true
    };
    let trained =
        train_drape::<Autodiff<Flex>>(&cfg, &subjects, &dev, Some((&ckpt, a.out.resume)), &mut report)?;
    let mut summary = trained.summary.clone();
    summary["config"] = json!(a.config);
    summary["threads"] = json!(rayon::current_num_threads());
    let trained = TrainedDrape {
        summary: summary.clone(),
        ..trained
    };
    DrapeModel::file(&cfg, &trained).write(&a.out.output)?;
    let _ = std::fs::remove_file(&ckpt);
    if a.out.json {
        println!("{}", serde_json::to_string_pretty(&summary).expect("json"));
    } else {
        eprintln!(
            "trained   {} decoder steps in {:.0} s; best at step {}",
            summary["steps"],
            summary["seconds"].as_f64().unwrap_or(0.0),
            summary["best_step"]
        );
        output_file(&a.out.output);
    }
    Ok(())
}
