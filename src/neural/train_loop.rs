//! The one training loop of tress's networks — W_θ (000 §4.2), the displacement generator
//! (000 §4.3), the drape decoder and its groom autoencoder (003 §3.5) and the trajectory
//! baseline (004): steps, validation every so often and at the end, the best network kept,
//! progress reported (and a stop asked for honoured), checkpoints every so often, when stopped
//! and at the end, and a time budget. Each network says how to take a step, validate, keep its
//! best and save its state ([`Steps`]); the loop decides when. A run resumed from a checkpoint
//! starts at its step and ends as the uninterrupted run would (each step draws from a
//! generator seeded with the step, or keeps its generator in its state).

use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::Result;

/// When a training validates, checkpoints and stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    /// Optimizer steps in all.
    pub steps: usize,
    /// Validate every this many steps (0: only at the end).
    pub validate_every: usize,
    /// Checkpoint every this many steps (0: only when stopped and at the end).
    pub checkpoint_every: usize,
    /// Stop after this many minutes (the best network so far is kept).
    pub max_minutes: Option<f64>,
    /// Also checkpoint after the last step (a run that finished can be extended).
    pub checkpoint_at_end: bool,
    /// Validate before stopping early when the last step did not.
    pub validate_when_stopped: bool,
}

impl Schedule {
    /// `steps` steps, validated and checkpointed every so often, within `max_minutes`.
    pub fn new(
        steps: usize,
        validate_every: usize,
        checkpoint_every: usize,
        max_minutes: Option<f64>,
    ) -> Schedule {
        Schedule {
            steps,
            validate_every,
            checkpoint_every,
            max_minutes,
            checkpoint_at_end: true,
            validate_when_stopped: false,
        }
    }

    /// Every step in order, no validation before the end, no checkpoints, no time budget.
    pub fn plain(steps: usize) -> Schedule {
        Schedule {
            steps,
            validate_every: 0,
            checkpoint_every: 0,
            max_minutes: None,
            checkpoint_at_end: false,
            validate_when_stopped: false,
        }
    }
}

/// Where a training stands: the steps taken, the best validation, the losses of every step
/// (`H`, the network's own) and every validation. Saved in checkpoints.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Standing<V, H> {
    pub step: usize,
    /// The step and validation of the best network so far.
    pub best: Option<(usize, V)>,
    pub history: Vec<H>,
    pub validations: Vec<(usize, V)>,
}

impl<V, H> Default for Standing<V, H> {
    fn default() -> Self {
        Standing {
            step: 0,
            best: None,
            history: Vec::new(),
            validations: Vec::new(),
        }
    }
}

impl<V: Clone + Default + Serialize, H> Standing<V, H> {
    /// What a trained model's summary says of its training: the steps taken, the best step and
    /// its validation, the time taken (`seconds`), and the caller's own keys (`more`, a JSON
    /// object).
    pub fn summary(&self, seconds: f64, more: serde_json::Value) -> serde_json::Value {
        let (best_step, best) = self.best.clone().unwrap_or_default();
        let mut summary = serde_json::json!({
            "steps": self.step,
            "best_step": best_step,
            "validation": best,
            "seconds": seconds,
        });
        if let (Some(s), serde_json::Value::Object(more)) = (summary.as_object_mut(), more) {
            s.extend(more);
        }
        summary
    }
}

/// One network's training, driven by [`run`].
pub trait Steps {
    /// What a validation measures.
    type Validation: Clone;
    /// What the history keeps of each step.
    type History;

    /// Where the training stands (kept by the network's state, saved in its checkpoints).
    fn standing(&mut self) -> &mut Standing<Self::Validation, Self::History>;

    /// One optimizer update; `step` counts from 0.
    fn step(&mut self, step: usize) -> Result<()>;

    /// Scores the current network; `None` (the default) when the training has no validation.
    fn validate(&mut self) -> Result<Option<Self::Validation>> {
        Ok(None)
    }

    /// Whether `v` is better than `best` (only asked of trainings that validate).
    fn better(&self, _v: &Self::Validation, _best: &Self::Validation) -> bool {
        false
    }

    /// Keeps the current network as the best so far (nothing by default).
    fn keep_best(&mut self) -> Result<()> {
        Ok(())
    }

    /// Reports the step just taken (`step` steps done), how long it took and its validation
    /// if it had one; false asks the training to stop.
    fn report(&mut self, step: usize, seconds_per_step: f64, validation: Option<&Self::Validation>) -> bool;

    /// Saves the training's state to `path` (nothing by default: a training without
    /// checkpoints).
    fn checkpoint(&mut self, _path: &Path) -> Result<()> {
        Ok(())
    }
}

/// How a training ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ended {
    pub seconds: f64,
    /// Stopped before its last step (time budget or a stop asked for).
    pub stopped_early: bool,
}

/// Trains `t` from the step its standing is at to `s.steps`, checkpointing to `checkpoint`.
pub fn run<T: Steps>(t: &mut T, s: &Schedule, checkpoint: Option<&Path>) -> Result<Ended> {
    let started = Instant::now();
    let mut last = Instant::now();
    let mut stopped_early = false;
    while t.standing().step < s.steps {
        let step = t.standing().step;
        t.step(step)?;
        t.standing().step += 1;
        let done_steps = step + 1;
        let per_step = last.elapsed().as_secs_f64();
        last = Instant::now();
        let out_of_time = s
            .max_minutes
            .is_some_and(|m| started.elapsed().as_secs_f64() > m * 60.0);
        let done = done_steps == s.steps || out_of_time;
        let mut validation = None;
        if (s.validate_every > 0 && done_steps.is_multiple_of(s.validate_every)) || done {
            validation = validated(t, done_steps)?;
        }
        let go_on = t.report(done_steps, per_step, validation.as_ref());
        let interrupted = !go_on && !done;
        if let Some(path) = checkpoint
            && (s.checkpoint_at_end || done_steps < s.steps)
            && ((s.checkpoint_every > 0 && done_steps.is_multiple_of(s.checkpoint_every))
                || done
                || interrupted)
        {
            t.checkpoint(path)?;
        }
        if out_of_time || interrupted {
            if interrupted && validation.is_none() && s.validate_when_stopped {
                validated(t, done_steps)?;
            }
            stopped_early = done_steps < s.steps;
            break;
        }
    }
    Ok(Ended {
        seconds: started.elapsed().as_secs_f64(),
        stopped_early,
    })
}

/// Validates the network after `step` steps, keeping it when it is the best so far.
fn validated<T: Steps>(t: &mut T, step: usize) -> Result<Option<T::Validation>> {
    let Some(v) = t.validate()? else {
        return Ok(None);
    };
    let best = t.standing().best.as_ref().map(|(_, b)| b.clone());
    let better = best.is_none_or(|b| t.better(&v, &b));
    if better {
        t.standing().best = Some((step, v.clone()));
        t.keep_best()?;
    }
    t.standing().validations.push((step, v.clone()));
    Ok(Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake training: its "loss" after step k is (k − 7)², validated as itself.
    struct Fake {
        standing: Standing<f64, ()>,
        taken: Vec<usize>,
        kept: Vec<usize>,
        checkpoints: Vec<usize>,
        stop_after: Option<usize>,
    }

    impl Fake {
        fn new() -> Fake {
            Fake {
                standing: Standing::default(),
                taken: Vec::new(),
                kept: Vec::new(),
                checkpoints: Vec::new(),
                stop_after: None,
            }
        }
    }

    impl Steps for Fake {
        type Validation = f64;
        type History = ();
        fn standing(&mut self) -> &mut Standing<f64, ()> {
            &mut self.standing
        }
        fn step(&mut self, step: usize) -> Result<()> {
            self.taken.push(step);
            Ok(())
        }
        fn validate(&mut self) -> Result<Option<f64>> {
            let k = self.standing.step as f64;
            Ok(Some((k - 7.0) * (k - 7.0)))
        }
        fn better(&self, v: &f64, best: &f64) -> bool {
            v < best
        }
        fn keep_best(&mut self) -> Result<()> {
            self.kept.push(self.standing.step);
            Ok(())
        }
        fn report(&mut self, step: usize, _: f64, _: Option<&f64>) -> bool {
            self.stop_after != Some(step)
        }
        fn checkpoint(&mut self, _: &Path) -> Result<()> {
            self.checkpoints.push(self.standing.step);
            Ok(())
        }
    }

    #[test]
    fn validates_keeps_the_best_and_checkpoints_on_schedule() {
        let mut f = Fake::new();
        let s = Schedule::new(10, 2, 4, None);
        let end = run(&mut f, &s, Some(Path::new("ckpt"))).unwrap();
        assert_eq!(f.taken, (0..10).collect::<Vec<_>>());
        let steps: Vec<usize> = f.standing.validations.iter().map(|v| v.0).collect();
        assert_eq!(steps, [2, 4, 6, 8, 10]);
        // (k − 7)² over 2, 4, 6, 8, 10 is best at 6 (1) and 8 ties it: the first is kept.
        assert_eq!(f.kept, [2, 4, 6]);
        assert_eq!(f.standing.best, Some((6, 1.0)));
        assert_eq!(f.checkpoints, [4, 8, 10]);
        assert!(!end.stopped_early);
    }

    #[test]
    fn a_stop_checkpoints_and_a_resume_ends_as_the_uninterrupted_run() {
        let mut f = Fake::new();
        f.stop_after = Some(3);
        let s = Schedule::new(10, 2, 4, None);
        let end = run(&mut f, &s, Some(Path::new("ckpt"))).unwrap();
        assert!(end.stopped_early);
        assert_eq!(f.checkpoints, [3], "stopped: a checkpoint");
        assert_eq!(f.standing.step, 3);
        f.stop_after = None;
        run(&mut f, &s, Some(Path::new("ckpt"))).unwrap();
        assert_eq!(f.taken, (0..10).collect::<Vec<_>>());
        assert_eq!(f.standing.best, Some((6, 1.0)));
        // Without a checkpoint at the end, and validating when stopped.
        let mut g = Fake::new();
        g.stop_after = Some(3);
        let s = Schedule {
            checkpoint_at_end: false,
            validate_when_stopped: true,
            ..Schedule::new(10, 2, 4, None)
        };
        run(&mut g, &s, Some(Path::new("ckpt"))).unwrap();
        let steps: Vec<usize> = g.standing.validations.iter().map(|v| v.0).collect();
        assert_eq!(steps, [2, 3]);
        g.stop_after = None;
        run(&mut g, &s, Some(Path::new("ckpt"))).unwrap();
        assert_eq!(g.checkpoints, [3, 4, 8], "none after the last step");
    }
}
