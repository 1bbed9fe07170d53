//! The replay loop: capture → decide → inject, one step at a time, with a step
//! limit, a bounded number of attempts per step, an abort check between every
//! action, and a record of every step.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::settle::SettleOptions;
use crate::{
    Action, Decision, Desktop, DesktopError, Frame, Observation, ReplayStrategy, Step,
    StrategyError, Verification,
};
use crate::{Evidence, EvidenceKind};

/// How a replay runs.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// The most steps to take (a bound for strategies that decide freely).
    pub max_steps: usize,
    /// How many times a failed step is tried again before it fails.
    pub max_retries: u32,
    /// Go on after a step that failed every attempt (default: stop, since a
    /// wrong click on a desktop can do harm).
    pub skip_failures: bool,
    /// Decide every step but inject nothing.
    pub dry_run: bool,
    /// A step whose effect could not be checked fails the replay, instead
    /// of counting as unverified.
    pub require_verified: bool,
    pub settle: SettleOptions,
}

/// The most preparations ([`Decision::Prepare`]) the loop makes in one
/// attempt at a step before it gives the attempt up.
pub const MAX_PREPARATIONS: usize = 12;

/// The most steps a replay takes unless told otherwise (the CLI's default too).
pub const DEFAULT_MAX_STEPS: usize = 10_000;

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            max_steps: DEFAULT_MAX_STEPS,
            max_retries: 3,
            skip_failures: false,
            dry_run: false,
            require_verified: false,
            settle: SettleOptions::default(),
        }
    }
}

/// What happened to one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Done, and its effect was seen.
    Verified,
    /// Done, but nothing could check its effect (runs stored before steps
    /// were checked read as this: they never claimed a check).
    #[serde(alias = "done")]
    Unverified,
    /// Decided but not injected (`--dry-run`).
    DryRun,
    /// Failed every attempt; the replay went on (`--skip-failures`).
    Skipped,
    Failed,
    /// Failed every attempt, and the block around it (a retry block of
    /// the recording's steps) was tried again from its start.
    Retried,
    Aborted,
    /// Its input was begun and the run ended before it was known to be
    /// made whole (the process was killed): part of it may have reached
    /// the application. Only a stored run says this of a step.
    Interrupted,
}

impl StepStatus {
    /// The status as it is stored and shown (`verified`, `dry_run`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Verified => "verified",
            StepStatus::Unverified => "unverified",
            StepStatus::DryRun => "dry_run",
            StepStatus::Skipped => "skipped",
            StepStatus::Failed => "failed",
            StepStatus::Retried => "retried",
            StepStatus::Aborted => "aborted",
            StepStatus::Interrupted => "interrupted",
        }
    }
}

/// One step as it happened, for the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub step_idx: usize,
    pub status: StepStatus,
    /// The step the strategy chose (on the last attempt).
    pub step: Option<Step>,
    pub attempts: u32,
    /// Every attempt's error, oldest first.
    pub errors: Vec<String>,
    /// What was made before the step, to bring its target within reach
    /// (turns of the wheel), oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prepared: Vec<Prepared>,
    /// How the step's effect was seen (verified), or why it could not be
    /// checked (unverified).
    #[serde(default)]
    pub check: Option<String>,
    /// What a verified step's check rests on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<EvidenceKind>,
    /// Whether the screen settled before the step (else the wait timed out).
    pub settled: bool,
    /// The active window's title when the step was decided.
    pub window_title: Option<String>,
    /// That window's place on the screen (logical coordinates), so that a
    /// report can show the window rather than the whole screen.
    #[serde(default)]
    pub window_rect: Option<reprise_models::Rect>,
    /// What the step was after, as recorded, and the closest candidates
    /// when its target was not found (strategies that replay a recording).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sought: Option<crate::Sought>,
    /// How the element found for the press was re-checked just before it,
    /// where it was found by its identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recheck: Option<recheck::Recheck>,
    /// Seconds since the replay started.
    pub started_seconds: f64,
    /// Seconds the strategy took to decide (the last attempt).
    pub decide_seconds: f64,
    /// Seconds for the whole step, waits included.
    pub duration_seconds: f64,
    /// When the step's last input was made (this replay only): the next
    /// step's recorded pause counts from it.
    #[serde(skip)]
    pub input_ended: Option<Instant>,
}

impl StepRecord {
    /// A step not yet attempted, started `started_seconds` into the replay.
    pub fn new(step_idx: usize, started_seconds: f64) -> StepRecord {
        StepRecord {
            step_idx,
            status: StepStatus::Failed,
            step: None,
            attempts: 0,
            errors: Vec::new(),
            prepared: Vec::new(),
            check: None,
            evidence: None,
            settled: false,
            window_title: None,
            window_rect: None,
            sought: None,
            recheck: None,
            started_seconds,
            decide_seconds: 0.0,
            duration_seconds: 0.0,
            input_ended: None,
        }
    }
}

/// One preparation made before a step ([`Decision::Prepare`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prepared {
    /// What it did (`scroll 3 notches down at (641, 438)`).
    pub label: String,
    /// Why.
    pub reason: String,
}

/// What made a replay fail.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailedBy {
    /// The step: its target was not found or refused, or its effect not seen.
    #[default]
    Step,
    /// The model that decides each step (vanilla's): no answer, or answers
    /// that stayed unusable after feedback.
    Model,
}

impl FailedBy {
    fn is_step(&self) -> bool {
        *self == FailedBy::Step
    }
}

/// How a replay ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ReplayOutcome {
    /// Every step was done; `unverified` of them could not be checked and
    /// `skipped` failed and were passed over (`--skip-failures`).
    Completed {
        steps: usize,
        #[serde(default)]
        unverified: usize,
        #[serde(default)]
        skipped: usize,
    },
    Failed {
        step: usize,
        reason: String,
        /// What failed: the step, or the model deciding it.
        #[serde(default, skip_serializing_if = "FailedBy::is_step")]
        by: FailedBy,
    },
    Aborted {
        step: usize,
    },
    StepLimit {
        steps: usize,
    },
}

impl ReplayOutcome {
    /// Every one of `steps` done, none skipped, `unverified` of them unchecked.
    pub const fn completed(steps: usize, unverified: usize) -> Self {
        Self::Completed {
            steps,
            unverified,
            skipped: 0,
        }
    }

    /// Why the run failed; `None` where it did not.
    pub fn failure(&self) -> Option<&str> {
        match self {
            Self::Failed { reason, .. } => Some(reason),
            _ => None,
        }
    }
}

/// Runs a replay. `abort` is polled between actions and during waits;
/// `on_step` receives every finished step with the frame its decision saw.
pub fn run_replay(
    strategy: &mut dyn ReplayStrategy,
    desktop: &mut dyn Desktop,
    options: &ReplayOptions,
    abort: &dyn Fn() -> bool,
    on_step: &mut dyn FnMut(&StepRecord, Option<&Frame>),
) -> ReplayOutcome {
    run_replay_from(strategy, desktop, options, Vec::new(), abort, on_step)
}

/// [`run_replay`] resumed: `done` are the records of the steps done before
/// (the first `done.len()` steps, in order), which are not done again; the
/// loop starts at the step after them, and the outcome counts them.
pub fn run_replay_from(
    strategy: &mut dyn ReplayStrategy,
    desktop: &mut dyn Desktop,
    options: &ReplayOptions,
    done: Vec<StepRecord>,
    abort: &dyn Fn() -> bool,
    on_step: &mut dyn FnMut(&StepRecord, Option<&Frame>),
) -> ReplayOutcome {
    run_replay_into(
        strategy,
        desktop,
        options,
        done,
        abort,
        &mut sink::OnlyDone(on_step),
    )
}

/// [`run_replay_from`] telling `steps` each step's marks as well as its end
/// ([`StepSink`]): what a run that must survive its process being killed
/// stores.
pub fn run_replay_into(
    strategy: &mut dyn ReplayStrategy,
    desktop: &mut dyn Desktop,
    options: &ReplayOptions,
    done: Vec<StepRecord>,
    abort: &dyn Fn() -> bool,
    steps: &mut dyn StepSink,
) -> ReplayOutcome {
    let replay_started = desktop.now();
    let start = done.len();
    let mut history: Vec<StepRecord> = done;
    let mut run = Replaying {
        strategy,
        desktop,
        options,
        abort,
        steps,
        settled: None,
    };
    for step_idx in start..options.max_steps {
        // Known to be over: no look at the screen is waited for to learn it.
        if run.strategy.finished(step_idx) {
            return completed(run.desktop, &history, step_idx);
        }
        let step_started = run.desktop.now();
        let started_seconds = step_started.duration_since(replay_started).as_secs_f64();
        let mut record = StepRecord::new(step_idx, started_seconds);
        let mut last_frame: Option<Frame> = None;
        let Attempted {
            result: attempt_result,
            refused,
            failed_by,
        } = attempts(&mut run, step_idx, &history, &mut record, &mut last_frame);
        record.duration_seconds = run.desktop.now().duration_since(step_started).as_secs_f64();
        let outcome = match attempt_result {
            AttemptResult::Done(status) => {
                record.status = status;
                None
            }
            AttemptResult::Finished => return completed(run.desktop, &history, step_idx),
            AttemptResult::Aborted => {
                record.status = StepStatus::Aborted;
                let _ = run.desktop.release_all();
                Some(ReplayOutcome::Aborted { step: step_idx })
            }
            AttemptResult::AbortedUnchecked => {
                record.status = StepStatus::Unverified;
                record.check = Some(STOPPED_UNCHECKED.into());
                let _ = run.desktop.release_all();
                Some(ReplayOutcome::Aborted { step: step_idx })
            }
            AttemptResult::Failed => on_failure(
                run.strategy,
                run.desktop,
                options,
                &mut record,
                (step_idx, refused, failed_by),
            ),
        };
        record.sought = run.strategy.sought(step_idx);
        run.steps.done(&record, last_frame.as_ref());
        history.push(record);
        if let Some(outcome) = outcome {
            return outcome;
        }
    }
    let _ = run.desktop.release_all();
    ReplayOutcome::StepLimit {
        steps: options.max_steps,
    }
}

/// The replay's end, once `steps` steps were done: nothing is left held
/// (a recording may end mid-chord, stopped with a key down).
fn completed(desktop: &mut dyn Desktop, history: &[StepRecord], steps: usize) -> ReplayOutcome {
    let _ = desktop.release_all();
    let count = |status: StepStatus| {
        history
            .iter()
            .filter(|record| record.status == status)
            .count()
    };
    ReplayOutcome::Completed {
        steps,
        unverified: count(StepStatus::Unverified),
        skipped: count(StepStatus::Skipped),
    }
}

/// A step that failed every attempt: passed over (`--skip-failures`, never
/// a refusal), its block tried again (the strategy recovers), or the
/// replay's end.
fn on_failure(
    strategy: &mut dyn ReplayStrategy,
    desktop: &mut dyn Desktop,
    options: &ReplayOptions,
    record: &mut StepRecord,
    (step_idx, refused, failed_by): (usize, bool, FailedBy),
) -> Option<ReplayOutcome> {
    if options.skip_failures && !refused {
        record.status = StepStatus::Skipped;
        return None;
    }
    let _ = desktop.release_all();
    if let Some(how) = strategy.recover(step_idx) {
        record.status = StepStatus::Retried;
        record.check = Some(how);
        return None;
    }
    record.status = StepStatus::Failed;
    let reason = record
        .errors
        .last()
        .cloned()
        .unwrap_or_else(|| "the step failed".into());
    Some(ReplayOutcome::Failed {
        step: step_idx,
        reason,
        by: failed_by,
    })
}

/// What a replay's attempts work with, borrowed for the whole replay: the
/// strategy, the desktop, the options and the stop.
struct Replaying<'a> {
    strategy: &'a mut dyn ReplayStrategy,
    desktop: &'a mut dyn Desktop,
    options: &'a ReplayOptions,
    abort: &'a dyn Fn() -> bool,
    /// Where each step goes, with its marks.
    steps: &'a mut dyn StepSink,
    /// The last step's effect check found the screen settled so: the next
    /// decision's wait goes on from it.
    settled: Option<crate::settle::Settled>,
}

enum AttemptResult {
    Done(StepStatus),
    Finished,
    Aborted,
    /// Stopped after the step's input was made, before its effect was
    /// checked: the step is done (a resume must not make it again).
    AbortedUnchecked,
    Failed,
}

enum AttemptError {
    Retry(String),
    NotYet(String, Duration),
    Fatal(String),
    /// The deciding model failed: fatal, and said to be the model's.
    Model(String),
}

impl From<StrategyError> for AttemptError {
    fn from(error: StrategyError) -> Self {
        match error {
            StrategyError::Retryable(error) => AttemptError::Retry(error),
            StrategyError::NotYet { reason, wait } => AttemptError::NotYet(reason, wait),
            StrategyError::Fatal(error) => AttemptError::Fatal(error),
            StrategyError::Model(error) => AttemptError::Model(error),
        }
    }
}

/// A desktop's failure as an attempt's: tried again, unless the display
/// is gone.
fn attempt_error(err: DesktopError) -> AttemptError {
    match err {
        DesktopError::Gone(_) => AttemptError::Fatal(err.to_string()),
        err => AttemptError::Retry(err.to_string()),
    }
}

fn attempt(
    run: &mut Replaying<'_>,
    (step_idx, looked): (usize, Duration),
    history: &[StepRecord],
    record: &mut StepRecord,
    last_frame: &mut Option<Frame>,
) -> Result<AttemptResult, AttemptError> {
    let (window, region, step) = match decide(run, (step_idx, looked), history, record, last_frame)?
    {
        Decided::Step(window, region, step) => (window, region, step),
        Decided::Ended(result) => return Ok(result),
    };
    record.step = Some(step.clone());
    if run.options.dry_run {
        return Ok(AttemptResult::Done(StepStatus::DryRun));
    }
    let pause = recorded_pause(run.desktop, history, &step)
        .saturating_sub(recheck::expected_time(history, &step));
    if !wait(run.desktop, pause, run.abort) {
        return Ok(AttemptResult::Aborted);
    }
    let begun = run.desktop.now();
    run.steps.begun(record);
    let kept = run.desktop.now();
    let decided_in = window.as_ref().map(|window| window.window_id);
    if !recheck::make_rechecked(
        run.strategy,
        run.desktop,
        (step_idx, &step, decided_in),
        record,
        run.abort,
    )? {
        return Ok(AttemptResult::Aborted);
    }
    record.input_ended = Some(run.desktop.now());
    tracing::debug!(
        step = step_idx,
        paused_ms = pause.as_millis(),
        kept_ms = kept.duration_since(begun).as_millis(),
        input_ms = run.desktop.now().duration_since(kept).as_millis(),
        "a step's input: what was left of its recorded pause, the step kept as begun, its input (the re-check in it)"
    );
    run.steps.made(record);
    let Some(verification) = check_effect(
        run,
        step_idx,
        &step,
        (window.as_ref(), region),
        last_frame.as_ref().expect("the decision's frame is kept"),
    )?
    else {
        return Ok(AttemptResult::AbortedUnchecked);
    };
    status_of(verification, run.options, record)
}

/// A step's status from its effect's check: pixels that changed where the
/// application exposes a tree that said nothing of the step prove nothing.
fn status_of(
    verification: Verification,
    options: &ReplayOptions,
    record: &mut StepRecord,
) -> Result<AttemptResult, AttemptError> {
    if let Verification::Verified(evidence) = &verification {
        record.evidence = Some(evidence.kind);
    }
    let verification = match verification {
        Verification::Verified(evidence) if !evidence.kind.proves() => {
            Verification::Unverified(format!("weak evidence only: {}", evidence.words))
        }
        verification => verification,
    };
    match verification {
        Verification::Verified(evidence) => {
            record.check = Some(evidence.words);
            Ok(AttemptResult::Done(StepStatus::Verified))
        }
        Verification::Unverified(reason) if options.require_verified => {
            Err(AttemptError::Fatal(format!(
                "the step was done but its effect could not be checked ({reason}), and --require-verified is set"
            )))
        }
        Verification::Unverified(reason) => {
            record.check = Some(reason);
            Ok(AttemptResult::Done(StepStatus::Unverified))
        }
    }
}

/// What is left of `step`'s recorded pause: it counts from the previous
/// step's last input, as the person's did, so the time spent since then
/// checking that step's effect and deciding this one is taken out of it (a
/// replay keeps the recorded pace where its checks are quicker than the
/// person was).
fn recorded_pause(desktop: &dyn Desktop, history: &[StepRecord], step: &Step) -> Duration {
    let since_input = history
        .last()
        .and_then(|previous| previous.input_ended)
        .map_or(Duration::ZERO, |ended| {
            desktop.now().saturating_duration_since(ended)
        });
    Duration::from_secs_f64(step.delay_before_seconds.max(0.0)).saturating_sub(since_input)
}

/// Why a step whose input was made is unverified when the replay was
/// stopped while its effect was being checked.
pub const STOPPED_UNCHECKED: &str =
    "the replay was stopped after the step's input, before its effect was checked";

/// The accessibility tree the strategy wants for step `step_idx`. A tree
/// that cannot be read counts as absent: the strategy falls back to what the
/// pixels show.
fn read_tree(
    strategy: &dyn ReplayStrategy,
    desktop: &mut dyn Desktop,
    step_idx: usize,
) -> Option<reprise_models::A11yTree> {
    let request = strategy.wants_tree(step_idx)?;
    desktop.accessibility_tree(&request).unwrap_or_else(|err| {
        tracing::warn!(step_idx, "no accessibility tree: {err}");
        None
    })
}

mod attempts;
mod coverage;
mod decide;
mod effect;
mod input;

mod recheck;
mod sink;
use attempts::{Attempted, attempts};
pub use coverage::Coverage;
use decide::{Decided, decide};
use effect::check_effect;
use input::{input_error, make, wait};
pub use recheck::{Recheck, RecheckBy};
pub use sink::{StepSink, as_begun, as_made};

#[cfg(test)]
mod tests;
