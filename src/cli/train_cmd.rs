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
use crate::neural::data::GridFrames;
use crate::neural::device::DeviceKind;
use crate::neural::grid::UvGrid;
use crate::neural::interp::InterpConfig;
use crate::neural::interp::train::{StepReport, model_file, train, validate};

#[derive(Debug, Subcommand)]
pub enum TrainCommand {
    /// Train the neural interpolator (weights over each particle's 4 × 4 guides) on a full
    /// simulation of the groom; writes a .tnn model for `tress upsample --method neural`.
    Interp(InterpArgs),
}

#[derive(Debug, Args)]
pub struct InterpArgs {
    /// A training config: a built-in name (interp_small, interp_paper) or a TOML file.
    #[arg(long, default_value = "interp_small")]
    pub config: String,
    /// The training frames: a cache of the whole groom simulated in full (.tcache, .abc, PLY
    /// sequence), e.g. from `tress simulate`.
    #[arg(long, value_name = "CACHE")]
    pub gt: PathBuf,
    /// Validation frames (another motion of the same groom); without it the last frames of
    /// --gt are held out (`train.validation` of the config).
    #[arg(long, value_name = "CACHE")]
    pub val: Option<PathBuf>,
    /// The groom at rest in the head's frame, the same strands as the caches.
    #[arg(long)]
    pub groom: PathBuf,
    #[command(flatten)]
    pub space: super::InputSpace,
    /// Override the config's number of steps.
    #[arg(long)]
    pub steps: Option<usize>,
    /// Where to train.
    #[arg(long, value_enum, default_value_t = DeviceKind::Cpu)]
    pub device: DeviceKind,
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

pub fn run(c: &TrainCommand) -> Result<()> {
    match c {
        TrainCommand::Interp(a) => run_interp(a),
    }
}

fn run_interp(a: &InterpArgs) -> Result<()> {
    a.device.check()?;
    let mut cfg = InterpConfig::load(&a.config)?;
    if let Some(s) = a.steps {
        cfg.train.steps = s;
    }
    let mut groom = read_groom(&a.groom, &ReadOptions::default())?.groom;
    Transform {
        scale: a.space.scale,
        up: a.space.up,
    }
    .apply(&mut groom);
    let grid = UvGrid::new(&groom, cfg.grid)?;
    let quiet = a.json;
    let say = |m: &str| {
        if !quiet {
            eprintln!("{m}");
        }
    };
    say(&format!(
        "grid      {0}×{0} cells × {1} particles, {2:.0} % near a root; {3} guides ({4}×{4} lattice)",
        cfg.grid.n,
        cfg.grid.points,
        100.0 * grid.occupancy(),
        grid.guide_strands().len(),
        cfg.grid.guides_per_side()
    ));
    let mut frames = HeadFrames::open(&a.gt, &groom)?;
    let (train_set, val_set) = match &a.val {
        Some(v) => {
            let t = GridFrames::load(grid.clone(), &mut frames, None)?;
            let mut vf = HeadFrames::open(v, &groom)?;
            (t, GridFrames::load(grid, &mut vf, None)?)
        }
        None => GridFrames::load_split(grid, &mut frames, cfg.train.validation, cfg.train.batch)?,
    };
    say(&format!(
        "data      {} training frames, {} validation frames",
        train_set.len(),
        val_set.len()
    ));
    let ckpt = {
        let mut p = a.output.clone().into_os_string();
        p.push(".ckpt");
        PathBuf::from(p)
    };
    if ckpt.exists() && !a.resume {
        return Err(Error::Invalid(format!(
            "{} exists (an interrupted run): pass --resume to go on from it, or remove it",
            ckpt.display()
        )));
    }
    let dev = burn::backend::flex::FlexDevice;
    let before = validate(
        &crate::neural::interp::train::init_net::<Flex>(&cfg, &dev),
        &val_set,
        cfg.train.batch,
        &dev,
    );
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
    let trained = train::<Autodiff<Flex>>(
        &cfg,
        &train_set,
        &val_set,
        &dev,
        Some((&ckpt, a.resume)),
        &mut report,
    )?;
    let (best_step, best) = trained.progress.best.unwrap_or_default();
    let summary = json!({
        "gt": a.gt,
        "val": a.val,
        "frames": train_set.len(),
        "validation_frames": val_set.len(),
        "steps": trained.progress.step,
        "best_step": best_step,
        "validation": best,
        "untrained_validation": before,
        "seconds": trained.seconds,
        "stopped_early": trained.stopped_early,
        "device": a.device,
        "threads": rayon::current_num_threads(),
    });
    model_file(&cfg, &trained.net, summary.clone()).write(&a.output)?;
    let _ = std::fs::remove_file(&ckpt);
    if a.json {
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
    output_file(&a.output);
    Ok(())
}
