//! A step's attempts: tried until one ends it or the retries are spent.

use std::time::{Duration, Instant};

use super::{AttemptError, AttemptResult, FailedBy, Frame, Replaying, StepRecord, attempt, wait};

/// How a step's attempts ended: the last one's result, whether the
/// strategy refused (never skipped by --skip-failures), and what failed.
pub(super) struct Attempted {
    pub(super) result: AttemptResult,
    pub(super) refused: bool,
    pub(super) failed_by: FailedBy,
}

/// Attempts step `step_idx` until one ends it or `max_retries` are spent;
/// waiting for the screen to be ready spends no attempt (bounded by the
/// strategy's wait, abort checked).
pub(super) fn attempts(
    run: &mut Replaying<'_>,
    step_idx: usize,
    history: &[StepRecord],
    record: &mut StepRecord,
    last_frame: &mut Option<Frame>,
) -> Attempted {
    let (mut refused, mut failed_by) = (false, FailedBy::Step);
    // Since when the step has been waiting for the screen to be ready.
    let mut not_ready_since: Option<Instant> = None;
    let result = loop {
        if record.attempts > run.options.max_retries {
            break AttemptResult::Failed;
        }
        record.attempts += 1;
        let looked = not_ready_since.map_or(Duration::ZERO, |since| {
            run.desktop.now().duration_since(since)
        });
        match attempt(run, (step_idx, looked), history, record, last_frame) {
            Ok(result) => break result,
            Err(AttemptError::NotYet(error, wait))
                if {
                    let now = run.desktop.now();
                    now.duration_since(*not_ready_since.get_or_insert(now)) < wait
                } =>
            {
                // Not an attempt: look again shortly (the loop's waits
                // are bounded by `wait`, and abort is checked).
                tracing::debug!(step_idx, "{error}; looking again");
                record.attempts -= 1;
                if !self::wait(run.desktop, Duration::from_millis(100), run.abort) {
                    break AttemptResult::Aborted;
                }
            }
            Err(AttemptError::NotYet(error, wait)) => {
                let error = format!("{error} (waited {:.1} s)", wait.as_secs_f64());
                tracing::warn!(step_idx, attempt = record.attempts, "{error}");
                record.errors.push(error);
                not_ready_since = None;
                if let Err(err) = run.desktop.release_all() {
                    record.errors.push(format!("release held input: {err}"));
                }
            }
            Err(AttemptError::Retry(error)) => {
                tracing::warn!(step_idx, attempt = record.attempts, "{error}");
                record.errors.push(error);
                // Nothing may stay pressed after a failed attempt.
                if let Err(err) = run.desktop.release_all() {
                    record.errors.push(format!("release held input: {err}"));
                }
            }
            Err(AttemptError::Fatal(error)) => {
                record.errors.push(error);
                refused = true;
                break AttemptResult::Failed;
            }
            Err(AttemptError::Model(error)) => {
                record.errors.push(error);
                (refused, failed_by) = (true, FailedBy::Model);
                break AttemptResult::Failed;
            }
        }
    };
    Attempted {
        result,
        refused,
        failed_by,
    }
}
