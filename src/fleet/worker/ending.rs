//! How a worker's attempt ended, in the words it reports to the server:
//! from the replay's result (or why it did not run) and what stopped it.

use reprise_strategies::ReplayOutcome;

use super::Finish;
use crate::replay::{ReplayResult, Withdrawn};

/// What stopped the attempt from outside the replay, if anything.
#[derive(Debug, Default)]
pub(super) struct Stops {
    /// This worker's id, for the reason's words.
    pub worker: String,
    /// Why the fence closed (the server was silent for most of the lease).
    pub fenced: Option<String>,
    /// The worker was signalled (SIGTERM, SIGINT, SIGHUP).
    pub signalled: bool,
    /// The server said stop (cancelled, expired, not this attempt's).
    pub told: bool,
    /// The server's words when it said stop.
    pub told_reason: Option<String>,
}

/// The attempt's end as reported.
#[derive(Debug)]
pub(super) struct Ending {
    pub end: Finish,
    pub reason: String,
    pub outcome: Option<serde_json::Value>,
    pub run_id: Option<String>,
}

impl Ending {
    fn without_run(end: Finish, reason: String) -> Ending {
        Ending {
            end,
            reason,
            outcome: None,
            run_id: None,
        }
    }
}

/// The end of an attempt whose replay gave `result`.
pub(super) fn ending(result: anyhow::Result<ReplayResult>, stops: &Stops, dry_run: bool) -> Ending {
    match result {
        Ok(result) => replayed(&result, stops, dry_run),
        Err(err) if err.is::<Withdrawn>() => {
            let reason = match (&stops.told_reason, &stops.fenced) {
                (Some(told), _) => return Ending::without_run(Finish::Stopped, told.clone()),
                (None, Some(fenced)) => format!("{fenced} (before the first input)"),
                (None, None) if stops.signalled => {
                    "the worker stopped before the first input".into()
                }
                (None, None) => "the server did not confirm the start; nothing was injected".into(),
            };
            Ending::without_run(Finish::Released, reason)
        }
        Err(err) if stops.signalled => Ending::without_run(
            Finish::Released,
            format!(
                "the worker stopped before the replay began ({})",
                crate::settings::errors::one_line(&err)
            ),
        ),
        Err(err) => Ending::without_run(
            Finish::Failed,
            format!(
                "the replay could not run on this desktop: {}",
                crate::settings::errors::one_line(&err)
            ),
        ),
    }
}

/// The end of a replay that ran: a replay aborted because the worker
/// stopped itself (fenced, signalled) is `Interrupted`, the task perhaps
/// half done.
fn replayed(result: &ReplayResult, stops: &Stops, dry_run: bool) -> Ending {
    let aborted = matches!(result.outcome, ReplayOutcome::Aborted { .. });
    let interrupted = match (&stops.fenced, stops.signalled) {
        (Some(fenced), _) => Some(format!("worker {}: {fenced}", stops.worker)),
        (None, true) => Some(format!(
            "worker {} was told to stop (a signal)",
            stops.worker
        )),
        (None, false) => None,
    }
    .filter(|_| aborted);
    let end = match &result.outcome {
        _ if interrupted.is_some() => Finish::Interrupted,
        ReplayOutcome::Aborted { .. } if stops.told => Finish::Stopped,
        ReplayOutcome::Aborted { .. } => Finish::Aborted,
        ReplayOutcome::Completed {
            unverified,
            skipped,
            ..
        } => match (*unverified, *skipped) {
            (_, 1..) => Finish::Failed,
            (0, 0) => Finish::Completed,
            _ => Finish::Unverified,
        },
        _ => Finish::Failed,
    };
    let what = crate::replay::stop_of(result).map_or_else(
        || match dry_run {
            true => format!(
                "was a dry run: decided all {} steps and injected nothing",
                result.n_steps
            ),
            false => format!("completed {} steps, every one verified", result.n_steps),
        },
        |(what, _)| what,
    );
    let run = format!("replay run {} {what}", result.run_id);
    Ending {
        end,
        reason: interrupted.map_or_else(|| run.clone(), |why| format!("{why}; {run}")),
        outcome: serde_json::to_value(&result.outcome).ok(),
        run_id: Some(result.run_id.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(outcome: ReplayOutcome) -> anyhow::Result<ReplayResult> {
        Ok(ReplayResult {
            run_id: "r".into(),
            recording_id: "rec".into(),
            outcome,
            n_steps: 6,
            seconds: 1.0,
            version: 1,
            heals: Vec::new(),
            coverage: Default::default(),
        })
    }

    fn aborted() -> ReplayOutcome {
        serde_json::from_value(serde_json::json!({"outcome": "aborted", "step": 2})).unwrap()
    }

    #[test]
    fn an_abort_is_the_workers_own_stop_the_servers_or_a_persons() {
        let fenced = Stops {
            worker: "w".into(),
            fenced: Some("no answer".into()),
            ..Default::default()
        };
        let interrupted = ending(result(aborted()), &fenced, false);
        assert_eq!(interrupted.end, Finish::Interrupted);
        let reason = interrupted.reason;
        assert!(
            reason.starts_with("worker w: no answer; replay run r"),
            "{reason}"
        );
        let signalled = Stops {
            signalled: true,
            told: true,
            ..Default::default()
        };
        assert_eq!(
            ending(result(aborted()), &signalled, false).end,
            Finish::Interrupted
        );
        let told = Stops {
            told: true,
            ..Default::default()
        };
        assert_eq!(ending(result(aborted()), &told, false).end, Finish::Stopped);
        assert_eq!(
            ending(result(aborted()), &Stops::default(), false).end,
            Finish::Aborted
        );
    }

    #[test]
    fn a_replay_withdrawn_before_its_first_input_is_given_back_or_stopped() {
        let withdrawn = || Err(anyhow::Error::new(Withdrawn));
        let fenced = Stops {
            fenced: Some("no answer".into()),
            ..Default::default()
        };
        let ending_of = |stops: &Stops| ending(withdrawn(), stops, false);
        let given_back = ending_of(&fenced);
        assert_eq!(given_back.end, Finish::Released);
        assert_eq!(given_back.reason, "no answer (before the first input)");
        let told = Stops {
            told_reason: Some("cancelled".into()),
            ..fenced
        };
        assert_eq!(ending_of(&told).end, Finish::Stopped);
        let failed = ending(Err(anyhow::anyhow!("no display")), &Stops::default(), false);
        assert_eq!(failed.end, Finish::Failed);
    }
}
