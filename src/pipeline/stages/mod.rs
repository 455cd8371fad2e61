//! The stages of a job, one file each, registered once in [`ALL`] (in running order). Each
//! implements [`crate::pipeline::engine::Stage`]: whether it has work in a job, the stages it
//! reads, what its outputs depend on (a typed key and the files it reads) and how it runs; the
//! files it writes are named once in its file ([`crate::pipeline::engine::Artefact`]). Stages
//! read only stages upstream of them.
//!
//! prepare → train_sim → simulate → guides → [fit, train, displace, ablate] → guide_sim →
//! [two_way, hairmesh, drape] → upsample → write → preview → eval → report

pub mod ablate;
pub mod displace;
pub mod drape;
pub mod eval;
pub mod fit;
pub mod guide_sim;
pub mod guides;
pub mod hairmesh;
pub mod prepare;
pub mod preview;
pub mod report;
pub mod scoring;
pub mod simulate;
pub mod train;
pub mod train_sim;
pub mod two_way;
pub mod upsample;
pub mod write;

use crate::pipeline::engine::graph::Stages;

/// Every stage, in running order.
pub const ALL: Stages = &[
    &prepare::Prepare,
    &train_sim::TrainSim,
    &simulate::Simulate,
    &guides::Guides,
    &fit::Fit,
    &train::Train,
    &displace::Displace,
    &ablate::Ablate,
    &guide_sim::GuideSim,
    &two_way::TwoWayStage,
    &hairmesh::HairMeshStage,
    &drape::DrapeStage,
    &upsample::Upsample,
    &write::Write,
    &preview::Preview,
    &eval::Eval,
    &report::Report,
];
