//! How a replay that is not a plain success ended: the error the run returns,
//! whose kind the binary maps to its exit code.

use super::ReplayResult;

/// A replay that did not complete, or completed without every step
/// checked; its exit code says which.
#[derive(Debug, thiserror::Error)]
#[error("replay run {run_id} {what}; see `reprise report {run_id} -o report.html`")]
pub struct ReplayStopped {
    pub run_id: String,
    pub what: String,
    pub kind: StopKind,
}

/// How a replay that is not a plain success ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopKind {
    /// A step failed (the replay stopped there, or passed over it with
    /// `--skip-failures`), or the step limit was reached.
    Failed,
    Aborted,
    /// Every step was done, and some could not be checked.
    Unverified,
    /// The model deciding each step failed (no answer, or answers that
    /// stayed unusable after feedback): exit 5, the providers' failure.
    Model,
}

/// How a replay that is not a plain success ended, in words; `None` for
/// one that completed with every step verified.
pub fn stop_of(result: &ReplayResult) -> Option<(String, StopKind)> {
    use reprise_strategies::ReplayOutcome;
    Some(match &result.outcome {
        ReplayOutcome::Completed {
            steps,
            unverified,
            skipped,
        } => {
            let verified = steps - unverified - skipped;
            if *unverified == 0 && *skipped == 0 {
                return None;
            }
            let counts = format!(
                "{verified} verified, {unverified} unverified, {skipped} failed and passed over"
            );
            if *skipped > 0 {
                (
                    format!(
                        "went on past {} that failed ({counts})",
                        crate::present::plural(*skipped, "step")
                    ),
                    StopKind::Failed,
                )
            } else {
                (
                    format!(
                        "did all {} of recording {}, but the effect of {unverified} could not be checked ({counts}; --require-verified makes that a failure)",
                        crate::present::plural(*steps, "step"),
                        result.recording_id
                    ),
                    StopKind::Unverified,
                )
            }
        }
        ReplayOutcome::Failed { step, reason, by } => (
            match by {
                reprise_strategies::FailedBy::Step => {
                    format!("failed at step {}: {reason}", step + 1)
                }
                reprise_strategies::FailedBy::Model => {
                    format!("stopped at step {}: the model failed: {reason}", step + 1)
                }
            },
            match by {
                reprise_strategies::FailedBy::Step => StopKind::Failed,
                reprise_strategies::FailedBy::Model => StopKind::Model,
            },
        ),
        ReplayOutcome::Aborted { step } => (
            format!("was aborted at step {}", step + 1),
            StopKind::Aborted,
        ),
        ReplayOutcome::StepLimit { steps } => (
            format!("reached the step limit ({steps})"),
            StopKind::Failed,
        ),
    })
}
