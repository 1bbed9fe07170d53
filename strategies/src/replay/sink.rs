//! Where a replay's steps go as they happen: each finished step, and the
//! two moments before it that a run killed outright must not lose (its
//! input begun, its input made), so that a resume never makes a step twice
//! and never guesses over one half made.

use super::{Frame, StepRecord, StepStatus};

/// Receives a replay's steps. [`StepSink::done`] gets every step once, as
/// it ended; the two marks before it are for a durable store, which keeps
/// each until the step's end replaces it.
pub trait StepSink {
    /// The step's input is about to begin (its recorded pause waited):
    /// from here to [`StepSink::made`], a run that dies may have made part
    /// of it. `record` is the step so far.
    fn begun(&mut self, _record: &StepRecord) {}
    /// The step's input was all made; its effect is checked next.
    fn made(&mut self, _record: &StepRecord) {}
    /// The step ended, with the frame its decision saw.
    fn done(&mut self, record: &StepRecord, frame: Option<&Frame>);
}

/// A sink that hears only finished steps: a closure.
pub(super) struct OnlyDone<'a>(pub(super) &'a mut dyn FnMut(&StepRecord, Option<&Frame>));

impl StepSink for OnlyDone<'_> {
    fn done(&mut self, record: &StepRecord, frame: Option<&Frame>) {
        (self.0)(record, frame)
    }
}

/// Why a step stored at its [`StepSink::made`] mark, and never ended, is
/// unverified: the run died after its input, before its check.
const MADE_UNCHECKED: &str = "the step's input was made and the run ended (its process was killed) before its effect was checked";

/// Why a step stored at its [`StepSink::begun`] mark, and never ended, is
/// interrupted.
const BEGUN_UNFINISHED: &str = "the run ended (its process was killed) while the step's input was being made: part of it may have reached the application";

/// The record a durable store keeps at the [`StepSink::begun`] mark: the
/// step as a run killed there leaves it.
pub fn as_begun(record: &StepRecord) -> StepRecord {
    StepRecord {
        status: StepStatus::Interrupted,
        errors: vec![BEGUN_UNFINISHED.to_owned()],
        check: None,
        ..record.clone()
    }
}

/// The record a durable store keeps at the [`StepSink::made`] mark: done,
/// unchecked.
pub fn as_made(record: &StepRecord) -> StepRecord {
    StepRecord {
        status: StepStatus::Unverified,
        check: Some(MADE_UNCHECKED.to_owned()),
        ..record.clone()
    }
}
