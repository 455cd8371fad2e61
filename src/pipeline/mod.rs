//! The main job: a job file in; caches, metrics, pictures and a report out. Stages run in order
//! (prepare → simulate → guides → guide_sim → [two_way, hairmesh, drape] → upsample → write → preview → eval → report),
//! each recording a content hash of its inputs so re-runs skip what is done and resume after a
//! crash.

pub mod ctx;
pub mod drape;
pub mod evaluate;
pub mod farm;
pub mod job;
pub mod preview;
pub mod progress;
pub mod report;
pub mod run;
pub mod scene;
pub mod stage;
pub mod stages;
pub mod trajectory;

pub use job::Job;
pub use run::{RunOptions, RunReport, run};
pub use stage::Stage;
