//! The replay loop: capture → decide → inject, one step at a time, with a step
//! limit, a bounded number of attempts per step, an abort check between every
//! action, and a record of every step.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::settle::{SettleOptions, wait_until_settled};
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
    let replay_started = desktop.now();
    let start = done.len();
    let mut history: Vec<StepRecord> = done;
    for step_idx in start..options.max_steps {
        // Known to be over: no look at the screen is waited for to learn it.
        if strategy.finished(step_idx) {
            return completed(desktop, &history, step_idx);
        }
        let step_started = desktop.now();
        let started_seconds = desktop.now().duration_since(replay_started).as_secs_f64();
        let mut record = StepRecord::new(step_idx, started_seconds);
        let mut last_frame: Option<Frame> = None;
        let Attempted {
            result: attempt_result,
            refused,
            failed_by,
        } = attempts(
            strategy,
            desktop,
            options,
            abort,
            step_idx,
            &history,
            &mut record,
            &mut last_frame,
        );
        record.duration_seconds = desktop.now().duration_since(step_started).as_secs_f64();
        let outcome = match attempt_result {
            AttemptResult::Done(status) => {
                record.status = status;
                None
            }
            AttemptResult::Finished => return completed(desktop, &history, step_idx),
            AttemptResult::Aborted => {
                record.status = StepStatus::Aborted;
                let _ = desktop.release_all();
                Some(ReplayOutcome::Aborted { step: step_idx })
            }
            AttemptResult::Failed => on_failure(
                strategy,
                desktop,
                options,
                &mut record,
                (step_idx, refused, failed_by),
            ),
        };
        record.sought = strategy.sought(step_idx);
        on_step(&record, last_frame.as_ref());
        history.push(record);
        if let Some(outcome) = outcome {
            return outcome;
        }
    }
    let _ = desktop.release_all();
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

enum AttemptResult {
    Done(StepStatus),
    Finished,
    Aborted,
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

#[expect(
    clippy::too_many_arguments,
    reason = "the loop's state, passed once per attempt"
)]
fn attempt(
    strategy: &mut dyn ReplayStrategy,
    desktop: &mut dyn Desktop,
    options: &ReplayOptions,
    abort: &dyn Fn() -> bool,
    (step_idx, looked): (usize, Duration),
    history: &[StepRecord],
    record: &mut StepRecord,
    last_frame: &mut Option<Frame>,
) -> Result<AttemptResult, AttemptError> {
    // Decide, making what the strategy asks first (a bounded number of
    // preparations: turns of the wheel that bring the target into view),
    // and deciding again after each on a fresh look.
    let mut preparations = 0;
    let (window, region, step) = loop {
        let window = desktop.active_window().map_err(attempt_error)?;
        record.window_title = window.as_ref().map(|window| window.title.clone());
        record.window_rect = window.as_ref().map(|window| window.rect);
        let region = window.as_ref().map(|window| window.rect);
        let Some((frame, settled)) =
            wait_until_settled(desktop, &options.settle, region, abort).map_err(attempt_error)?
        else {
            return Ok(AttemptResult::Aborted);
        };
        record.settled = settled;
        // Deciding includes reading the tree the strategy asked for.
        let decide_started = desktop.now();
        let tree = read_tree(strategy, desktop, step_idx);
        let wants_popups = strategy.wants_popups(step_idx);
        let popups = wants_popups.then(|| desktop.popups()).transpose();
        let popups = popups.map_err(attempt_error)?.unwrap_or_default();
        let observation = Observation {
            tree: tree.as_ref(),
            popups: &popups,
            frame: &frame,
            window: window.as_ref(),
            step_idx,
            attempt: record.attempts,
            looked,
            history,
        };
        let decision = strategy.decide(&observation);
        record.decide_seconds = desktop.now().duration_since(decide_started).as_secs_f64();
        *last_frame = Some(frame);
        match decision {
            Ok(Decision::Done) => return Ok(AttemptResult::Finished),
            Ok(Decision::Step(step)) => break (window, region, step),
            // A dry run makes nothing: what it would make first is the step.
            Ok(Decision::Prepare(step)) if options.dry_run => break (window, region, step),
            Ok(Decision::Prepare(step)) => {
                if preparations == MAX_PREPARATIONS {
                    return Err(AttemptError::Retry(format!(
                        "the step was still not within reach after {MAX_PREPARATIONS} preparations (the last: {})",
                        step.reason
                    )));
                }
                preparations += 1;
                if !make(desktop, &step.actions, abort).map_err(attempt_error)? {
                    return Ok(AttemptResult::Aborted);
                }
                record.prepared.push(Prepared {
                    label: step.label,
                    reason: step.reason,
                });
            }
            Err(error) => return Err(error.into()),
        }
    };
    record.step = Some(step.clone());
    if options.dry_run {
        return Ok(AttemptResult::Done(StepStatus::DryRun));
    }
    let pause = recorded_pause(desktop, history, &step);
    if !wait(desktop, pause, abort) {
        return Ok(AttemptResult::Aborted);
    }
    if !recheck::make_rechecked(strategy, desktop, step_idx, &step, record, abort)? {
        return Ok(AttemptResult::Aborted);
    }
    record.input_ended = Some(desktop.now());
    let Some(verification) = check_effect(
        strategy,
        desktop,
        options,
        abort,
        step_idx,
        &step,
        (window.as_ref(), region),
        last_frame.as_ref().expect("the decision's frame is kept"),
    )?
    else {
        return Ok(AttemptResult::Aborted);
    };
    status_of(verification, options, record)
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

/// Injects `actions` in order (a pause is waited), checking `abort` before
/// each; false if aborted.
fn make(
    desktop: &mut dyn Desktop,
    actions: &[Action],
    abort: &dyn Fn() -> bool,
) -> Result<bool, DesktopError> {
    for action in actions {
        if abort() {
            return Ok(false);
        }
        match action {
            Action::Pause { seconds } => {
                if !wait(desktop, Duration::from_secs_f64(seconds.max(0.0)), abort) {
                    return Ok(false);
                }
            }
            action => desktop.inject(action)?,
        }
    }
    Ok(true)
}

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

/// Waits in slices of at most 10 ms, checking `abort`; false if aborted.
fn wait(desktop: &mut dyn Desktop, duration: Duration, abort: &dyn Fn() -> bool) -> bool {
    let deadline = desktop.now() + duration;
    loop {
        if abort() {
            return false;
        }
        let left = deadline.saturating_duration_since(desktop.now());
        if left.is_zero() {
            return true;
        }
        desktop.sleep(left.min(Duration::from_millis(10)));
    }
}

mod attempts;
mod coverage;
mod effect;

mod recheck;
use attempts::{Attempted, attempts};
pub use coverage::Coverage;
use effect::check_effect;
pub use recheck::{Recheck, RecheckBy};

#[cfg(test)]
mod tests;
