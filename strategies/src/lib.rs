//! Reprise's replay: the [`ReplayStrategy`] trait, the strategies, and the
//! replay loop (capture → decide → inject) that drives them.
//!
//! Everything here is written against ports: the [`Desktop`] (screenshots,
//! the active window, injection) is implemented by the platform backend in
//! the application and by a scripted desktop in tests. Strategies return
//! actions as data and never touch the OS.

pub mod action;
pub mod analysis;
pub mod describe;
pub mod desktop;
pub mod edit;
pub mod identity;
pub mod llm;
pub mod naive;
pub mod params;
pub mod plan;
pub mod program;
pub mod replay;
pub mod scripted;
pub mod scroll;
pub mod settle;
pub mod strategy;
pub mod tree;
pub mod vanilla;
pub mod vision;
pub mod visual;

pub use action::{Action, Button, Candidate, FoundBy, Hidden, KeySpec, Sought, Step};
pub use desktop::{Desktop, DesktopError, Frame};
pub use naive::NaiveStrategy;
pub use replay::{
    FailedBy, Prepared, ReplayOptions, ReplayOutcome, StepRecord, StepSink, StepStatus, run_replay,
    run_replay_from, run_replay_into,
};
pub use strategy::{
    Decision, Evidence, EvidenceKind, Missed, Observation, ReplayStrategy, StrategyError,
    Verification,
};
