//! `reprise resume`: where a halted run goes on from. A run halts at a step
//! (refused, failed, aborted, or its process killed); it is resumed from
//! that step, the steps before it (done, whether checked or not) are never
//! done again unless `--from` asks for an earlier one.

use reprise_strategies::{ReplayOutcome, StepRecord, StepStatus};

use crate::store::{RunRecord, RunStep};

/// A halted run and the step it goes on from.
#[derive(Debug, Clone)]
pub struct Resume {
    pub run: RunRecord,
    /// The step to go on from (counted from 0).
    pub from: usize,
    /// The records of the steps before `from`, not done again.
    pub done: Vec<StepRecord>,
    /// How the run had ended, in words.
    pub halted: String,
}

/// Why a run cannot be resumed.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error("run {run} ended ({words}): there is nothing to resume")]
    Ended { run: String, words: String },
    #[error("run {0} was a dry run: it injected nothing, so replay the recording again instead")]
    DryRun(String),
    #[error(
        "run {0} used the vanilla strategy, whose steps a model chose as it went: they cannot be resumed; replay the recording again"
    )]
    Vanilla(String),
    #[error(
        "run {run} is still running (process {pid}); stop it first, or resume it once it has halted"
    )]
    Running { run: String, pid: u32 },
    #[error(
        "--from {from}: run {run} halted at step {halted}; it can go on from step 1 to {halted}"
    )]
    From {
        run: String,
        from: usize,
        halted: usize,
    },
    #[error(
        "run {run} was killed while step {step}'s input was being made: part of it may have reached the application. Look at the screen, then resume with --from {step} to make the step again, or --from {next} to go on after it"
    )]
    HalfMade {
        run: String,
        step: usize,
        next: usize,
    },
    #[error("run {run} has no record of step {step}: it cannot be resumed after it")]
    Gap { run: String, step: usize },
}

/// Where `run` goes on from: its halted step, or `from` (counted from 1,
/// at most the halted step).
pub fn plan(
    run: &RunRecord,
    steps: &[RunStep],
    from: Option<usize>,
) -> Result<Resume, ResumeError> {
    let id = || run.id.clone();
    if run.dry_run() {
        return Err(ResumeError::DryRun(id()));
    }
    if run.strategy == "vanilla" {
        return Err(ResumeError::Vanilla(id()));
    }
    let halted = halted_at(run, steps)?;
    // Killed between a step's first input and its last: neither making it
    // again nor going on after it is safe to guess; the person says which.
    let half_made = steps.get(halted).is_some_and(|stored| {
        stored.step.record.step_idx == halted
            && stored.step.record.status == StepStatus::Interrupted
    });
    let last = halted + 1 + usize::from(half_made);
    let from = match from {
        None if half_made => {
            return Err(ResumeError::HalfMade {
                run: id(),
                step: halted + 1,
                next: halted + 2,
            });
        }
        None => halted,
        Some(n) if (1..=last).contains(&n) => n - 1,
        Some(n) => {
            return Err(ResumeError::From {
                run: id(),
                from: n,
                halted: halted + 1,
            });
        }
    };
    let done: Vec<StepRecord> = steps
        .iter()
        .take(from)
        .map(|step| went_on_after(step.step.record.clone()))
        .collect();
    if let Some(step) = (0..from).find(|idx| done.get(*idx).is_none_or(|r| r.step_idx != *idx)) {
        return Err(ResumeError::Gap {
            run: id(),
            step: step + 1,
        });
    }
    Ok(Resume {
        run: run.clone(),
        from,
        done,
        halted: crate::present::outcome_words(run.outcome.as_ref(), false),
    })
}

/// The step a run halted at (counted from 0): the first not done, a step
/// whose input was made counting as done.
fn halted_at(run: &RunRecord, steps: &[RunStep]) -> Result<usize, ResumeError> {
    let id = || run.id.clone();
    Ok(match &run.outcome {
        Some(ReplayOutcome::Failed { step, .. }) => *step,
        // Stopped while its effect was checked, its input made: the step
        // is done, and making it again would type or press twice.
        Some(ReplayOutcome::Aborted { step }) => {
            let made = steps
                .iter()
                .find(|stored| stored.step.record.step_idx == *step)
                .is_some_and(|stored| is_done(stored.step.record.status));
            step + usize::from(made)
        }
        Some(outcome @ (ReplayOutcome::Completed { .. } | ReplayOutcome::StepLimit { .. })) => {
            return Err(ResumeError::Ended {
                run: id(),
                words: crate::present::outcome_words(Some(outcome), false),
            });
        }
        // Not ended: killed (its process is gone), or still running.
        None => {
            // (A worker going on with its own run is not running it.)
            if let Some(pid) = run
                .arguments
                .pid
                .filter(|pid| *pid != std::process::id() && is_reprise(*pid))
            {
                return Err(ResumeError::Running { run: id(), pid });
            }
            // The step it was at when killed: the first not stored as
            // done (one whose input was made is stored as done).
            steps
                .iter()
                .take_while(|step| is_done(step.step.record.status))
                .count()
        }
    })
}

/// A step the resumption goes on after: one interrupted (`--from` past
/// it) counts as done, unchecked, as the person said.
fn went_on_after(record: StepRecord) -> StepRecord {
    if record.status != StepStatus::Interrupted {
        return record;
    }
    StepRecord {
        status: StepStatus::Unverified,
        check: Some(
            "its input was being made when the run was killed; the run was resumed after it, as asked (--from)"
                .to_owned(),
        ),
        ..record
    }
}

/// A step that was done (its input injected), checked or not.
fn is_done(status: StepStatus) -> bool {
    matches!(
        status,
        StepStatus::Verified | StepStatus::Unverified | StepStatus::Skipped | StepStatus::Retried
    )
}

/// Whether process `pid` is alive and is Reprise (a pid reused by another
/// program is not the run's).
fn is_reprise(pid: u32) -> bool {
    if pid == std::process::id() {
        return false;
    }
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|name| name.trim_end() == "reprise")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{RunArguments, StoredStep};

    fn run(outcome: Option<ReplayOutcome>, strategy: &str) -> RunRecord {
        RunRecord {
            id: "0b5c2a8e".into(),
            recording_id: "r".into(),
            strategy: strategy.into(),
            arguments: RunArguments::default(),
            started: "2026-12-05T00:00:00.000Z".into(),
            ended: None,
            outcome,
            summary: None,
        }
    }

    fn steps(statuses: &[StepStatus]) -> Vec<RunStep> {
        statuses
            .iter()
            .enumerate()
            .map(|(idx, status)| {
                let mut record = StepRecord::new(idx, 0.0);
                record.status = *status;
                RunStep {
                    idx: idx as u32,
                    step: StoredStep {
                        record,
                        screen: None,
                    },
                    screenshot_hash: None,
                }
            })
            .collect()
    }

    #[test]
    fn a_halted_run_goes_on_from_its_halted_step_and_never_redoes_one_before() {
        use StepStatus::*;
        let failed = Some(ReplayOutcome::Failed {
            step: 2,
            reason: "refused".into(),
            by: Default::default(),
        });
        let stored = steps(&[Verified, Unverified, Failed]);
        let planned = plan(&run(failed.clone(), "visual"), &stored, None).unwrap();
        assert_eq!((planned.from, planned.done.len()), (2, 2));
        assert!(
            planned.halted.starts_with("halted at step 3"),
            "{}",
            planned.halted
        );
        // --from an earlier step redoes from there; past the halt is refused.
        assert_eq!(plan_from(&failed, &stored, 1), Ok(0));
        assert!(matches!(
            plan(&run(failed.clone(), "visual"), &stored, Some(4)),
            Err(ResumeError::From { halted: 3, .. })
        ));
        // Killed mid-run (no outcome, no live process): from the first step
        // not stored as done.
        let killed = plan(&run(None, "naive"), &steps(&[Verified, Unverified]), None).unwrap();
        assert_eq!(killed.from, 2);
        // Stopped at step 2 before its input: from step 2. Stopped at step
        // 2 while its effect was checked (its input made, stored as done
        // unverified): from step 3, step 2 never made twice.
        let aborted = Some(ReplayOutcome::Aborted { step: 1 });
        let before_input = plan(
            &run(aborted.clone(), "visual"),
            &steps(&[Verified, Aborted]),
            None,
        );
        assert_eq!(before_input.unwrap().from, 1);
        let after_input = plan(
            &run(aborted, "visual"),
            &steps(&[Verified, Unverified]),
            None,
        );
        let after_input = after_input.unwrap();
        assert_eq!((after_input.from, after_input.done.len()), (2, 2));
    }

    #[test]
    fn a_run_killed_mid_input_asks_which_and_one_killed_before_its_check_never_redoes_the_step() {
        use StepStatus::*;
        // Killed after step 2's input, before its check: stored as made,
        // so the resume goes on at step 3.
        let made = plan(&run(None, "visual"), &steps(&[Verified, Unverified]), None);
        assert_eq!(made.unwrap().from, 2);
        // Killed while step 2's input was being made: refused, naming both
        // ways on.
        let stored = steps(&[Verified, Interrupted]);
        let err = plan(&run(None, "visual"), &stored, None).unwrap_err();
        assert!(
            matches!(
                err,
                ResumeError::HalfMade {
                    step: 2,
                    next: 3,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("--from 2"), "{err}");
        // --from 2 makes it again; --from 3 goes on after it, counted as
        // done unchecked; --from 4 is past the halt.
        assert_eq!(plan_from(&None, &stored, 2), Ok(1));
        let after = plan(&run(None, "visual"), &stored, Some(3)).unwrap();
        assert_eq!(after.from, 2);
        assert_eq!(after.done[1].status, Unverified);
        assert!(plan_from(&None, &stored, 4).is_err());
    }

    fn plan_from(
        outcome: &Option<ReplayOutcome>,
        stored: &[RunStep],
        from: usize,
    ) -> Result<usize, String> {
        plan(&run(outcome.clone(), "visual"), stored, Some(from))
            .map(|plan| plan.from)
            .map_err(|err| err.to_string())
    }

    #[test]
    fn ended_dry_and_vanilla_runs_are_not_resumed() {
        let done = Some(ReplayOutcome::completed(2, 1));
        let err = plan(&run(done, "visual"), &[], None).unwrap_err();
        assert!(matches!(err, ResumeError::Ended { .. }), "{err}");
        assert!(err.to_string().contains("ended unverified"), "{err}");
        let aborted = Some(ReplayOutcome::Aborted { step: 0 });
        assert!(matches!(
            plan(&run(aborted.clone(), "vanilla"), &[], None),
            Err(ResumeError::Vanilla(_))
        ));
        let mut dry = run(aborted, "visual");
        dry.arguments.dry_run = true;
        assert!(matches!(plan(&dry, &[], None), Err(ResumeError::DryRun(_))));
    }
}
