//! The fleet's job rules, read as a specification: each test is a rule, with
//! the job before, what happened, and then the job's state, what the server
//! does (in order) and what it answers. The clock is fixed at [`NOW`].

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::*;
use crate::fleet::JobSpec;

const NOW: &str = "2026-01-01T12:00:00.000Z";
const A_MINUTE_AGO: &str = "2026-01-01T11:59:00.000Z";
const AN_HOUR_AGO: &str = "2026-01-01T11:00:00.000Z";
const IN_AN_HOUR: &str = "2026-01-01T13:00:00.000Z";

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(NOW)
        .unwrap()
        .with_timezone(&Utc)
}

/// Job `j` of pool `p`, on its first attempt of three, delivered by entry
/// `e1`; `w1` holds it where its state says a worker does.
fn job(state: JobState) -> Job {
    let held = matches!(
        state,
        JobState::Assigned | JobState::Running | JobState::Retrying
    );
    Job {
        id: "j".into(),
        recording_id: "r".into(),
        pool: "p".into(),
        spec: JobSpec {
            attempts: 3,
            retry: RetryPolicy::Never,
            ..JobSpec::default()
        },
        state,
        attempt: u32::from(state != JobState::Queued),
        worker: held.then(|| "w1".into()),
        injected: state == JobState::Running,
        cancel_requested: false,
        reason: None,
        outcome: None,
        run_id: None,
        created: AN_HOUR_AGO.into(),
        started: (state != JobState::Queued).then(|| A_MINUTE_AGO.into()),
        ended: None,
        entry: Some("e1".into()),
        retry_at: None,
        settled: None,
    }
}

fn no_labels() -> &'static BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    &EMPTY
}

/// `e1` delivered to `taker`: a new delivery, or one reclaimed; the job's
/// owner silent for `owner_silent` while it holds its lease.
fn delivered(
    before: Job,
    taker: &str,
    reclaimed: bool,
    owner_silent: Option<Duration>,
) -> Decision {
    let event = Event::Delivered {
        taker: Taker {
            id: taker,
            labels: no_labels(),
        },
        entry: "e1",
        reclaimed,
        owner_silent,
    };
    decide(before, event, now())
}

fn reported(before: Job, worker: &str, attempt: u32, what: ReportKind) -> Decision {
    let report = Report {
        worker: worker.into(),
        attempt,
        what,
    };
    decide(before, Event::Reported(&report), now())
}

fn finished(before: Job, end: Finish) -> Decision {
    let attempt = before.attempt;
    reported(
        before,
        "w1",
        attempt,
        ReportKind::Finish {
            end,
            reason: "boom".into(),
            outcome: None,
            run_id: None,
            report: None,
        },
    )
}

fn save(state: JobState, reason: Option<&str>, worker: Option<&str>) -> Effect {
    Effect::Save {
        note: Some(Note::State(crate::fleet::StateChange {
            state,
            reason: reason.map(str::to_owned),
            worker: worker.map(str::to_owned),
        })),
        step_seconds: None,
    }
}

fn save_quietly() -> Effect {
    Effect::Save {
        note: None,
        step_seconds: None,
    }
}

fn free(worker: &str) -> Effect {
    Effect::SetWorkerJob {
        worker: worker.into(),
        job: None,
    }
}

fn ack(entry: &str) -> Effect {
    Effect::Ack(entry.into())
}

fn answer(go: bool, reason: Option<&str>, state: JobState) -> Reply {
    Reply::Go(Answer {
        go,
        reason: reason.map(str::to_owned),
        state: Some(state),
    })
}

// A delivery of a job's queue entry.

#[test]
fn an_entry_the_job_no_longer_points_at_is_acknowledged_and_nothing_else() {
    let mut before = job(JobState::Queued);
    before.entry = Some("e0".into());
    let after = delivered(before.clone(), "w2", false, None);
    assert_eq!(after.job, before);
    assert_eq!(after.effects, vec![ack("e1")]);
    assert_eq!(after.reply, Reply::Nothing);
}

#[test]
fn an_entry_of_an_ended_job_is_acknowledged() {
    let before = job(JobState::Completed);
    let after = delivered(before.clone(), "w2", false, None);
    assert_eq!(after.job, before);
    assert_eq!(after.effects, vec![ack("e1")]);
}

#[test]
fn a_queued_job_is_the_takers_with_a_new_attempt() {
    let after = delivered(job(JobState::Queued), "w2", false, None);
    assert_eq!(after.reply, Reply::Assigned);
    assert_eq!(after.job.state, JobState::Assigned);
    assert_eq!(after.job.attempt, 1);
    assert_eq!(after.job.worker.as_deref(), Some("w2"));
    assert_eq!(after.job.started.as_deref(), Some(NOW));
    assert_eq!(
        after.effects,
        vec![
            Effect::Observe(Measure::WaitSeconds, 3600.0),
            save(JobState::Assigned, None, Some("w2")),
            Effect::SetWorkerJob {
                worker: "w2".into(),
                job: Some("j".into()),
            },
        ]
    );
}

#[test]
fn a_queued_job_past_its_deadline_expires_when_delivered() {
    let mut before = job(JobState::Queued);
    before.spec.deadline = Some(A_MINUTE_AGO.into());
    let after = delivered(before, "w2", false, None);
    assert_eq!(after.job.state, JobState::Expired);
    assert_eq!(after.job.ended.as_deref(), Some(NOW));
    assert_eq!(
        after.effects,
        vec![
            save(
                JobState::Expired,
                Some("its deadline passed while queued"),
                None
            ),
            ack("e1"),
        ]
    );
    assert_eq!(after.reply, Reply::Nothing);
}

#[test]
fn a_queued_job_whose_labels_the_taker_lacks_is_parked_for_another() {
    let mut before = job(JobState::Queued);
    before.spec.labels.insert("os".into(), "debian".into());
    let after = delivered(before.clone(), "w2", false, None);
    assert_eq!(after.job, before);
    assert_eq!(after.effects, vec![Effect::Park("e1".into())]);
}

#[test]
fn a_queued_job_cancelled_meanwhile_ends_cancelled_when_delivered() {
    let mut before = job(JobState::Queued);
    before.cancel_requested = true;
    let after = delivered(before, "w2", false, None);
    assert_eq!(after.job.state, JobState::Cancelled);
    assert_eq!(
        after.effects,
        vec![
            save(JobState::Cancelled, Some("cancelled"), None),
            ack("e1")
        ]
    );
}

#[test]
fn a_held_job_read_as_new_stays_its_owners_with_a_fresh_lease() {
    let before = job(JobState::Running);
    let after = delivered(before.clone(), "w2", false, None);
    assert_eq!(after.job, before);
    assert_eq!(
        after.effects,
        vec![Effect::Refresh {
            owner: "w1".into(),
            entry: "e1".into(),
        }]
    );
}

#[test]
fn a_reclaimed_job_whose_owner_is_alive_goes_back_to_it() {
    let before = job(JobState::Running);
    let silent = Duration::from_secs(3);
    let after = delivered(before.clone(), "w2", true, Some(silent));
    assert_eq!(after.job, before);
    assert_eq!(
        after.effects,
        vec![Effect::GiveBack {
            owner: "w1".into(),
            entry: "e1".into(),
            silent,
        }]
    );
}

#[test]
fn a_reclaimed_job_that_injected_input_is_abandoned_and_dead_lettered() {
    let after = delivered(job(JobState::Running), "w2", true, None);
    let reason = "worker w1 stopped answering after it had injected input: the task may be half done, so it is not run again (submit with retry=restart for tasks that are safe to redo)";
    assert_eq!(after.job.state, JobState::Abandoned);
    assert_eq!(
        after.effects,
        vec![
            Effect::Count(Counter::Reclaims),
            Effect::Observe(Measure::JobSeconds, 60.0),
            save(JobState::Abandoned, Some(reason), Some("w1")),
            free("w1"),
            ack("e1"),
            Effect::DeadLetter(reason.into()),
        ]
    );
    assert_eq!(after.reply, Reply::Nothing);
}

#[test]
fn a_reclaimed_job_that_may_restart_is_taken_over_as_a_new_attempt() {
    let mut before = job(JobState::Running);
    before.spec.retry = RetryPolicy::Restart;
    let after = delivered(before, "w2", true, None);
    assert_eq!(after.reply, Reply::Assigned);
    assert_eq!(after.job.state, JobState::Assigned);
    assert_eq!(after.job.attempt, 2);
    assert!(!after.job.injected);
    // Its attempt starts now, not when the lost worker's did; no second
    // wait is measured.
    assert_eq!(after.job.started.as_deref(), Some(NOW));
    assert_eq!(
        after.effects,
        vec![
            Effect::Count(Counter::Reclaims),
            free("w1"),
            save(
                JobState::Assigned,
                Some("taken over from worker w1"),
                Some("w2")
            ),
            Effect::SetWorkerJob {
                worker: "w2".into(),
                job: Some("j".into()),
            },
        ]
    );
}

/// A job resumed on worker `w1`'s desktop.
fn resumed(state: JobState) -> Job {
    let mut job = job(state);
    job.spec.resume = Some(crate::fleet::ResumeSpec {
        worker: "w1".into(),
        run: "run-1".into(),
        from: None,
    });
    job
}

#[test]
fn a_resumed_job_waits_for_the_worker_whose_desktop_it_halted_on() {
    let after = delivered(resumed(JobState::Queued), "w2", false, None);
    assert_eq!(after.job.state, JobState::Queued);
    assert_eq!(after.effects, vec![Effect::Park("e1".into())]);
    assert_eq!(after.reply, Reply::Nothing);
    let after = delivered(resumed(JobState::Queued), "w1", false, None);
    assert_eq!(after.reply, Reply::Assigned);
    assert_eq!(after.job.worker.as_deref(), Some("w1"));
}

#[test]
fn a_resumed_job_whose_worker_went_silent_is_never_taken_over() {
    // Not even one that may restart, nor one that had injected nothing:
    // no other desktop holds its half-done task.
    for injected in [true, false] {
        let mut before = resumed(JobState::Running);
        before.spec.retry = RetryPolicy::Restart;
        before.injected = injected;
        let after = delivered(before, "w2", true, None);
        assert_eq!(after.job.state, JobState::Abandoned, "injected {injected}");
        assert!(
            after
                .job
                .reason
                .as_deref()
                .unwrap()
                .contains("only on the desktop of worker w1"),
            "{:?}",
            after.job.reason
        );
        assert_eq!(after.job.worker.as_deref(), Some("w1"));
        assert!(after.effects.contains(&ack("e1")));
        assert_eq!(after.reply, Reply::Nothing);
    }
}

#[test]
fn a_resumed_job_whose_worker_left_ends_a_dead_letter_and_others_are_untouched() {
    let after = decide(resumed(JobState::Queued), Event::WorkerGone("w1"), now());
    assert_eq!(after.job.state, JobState::Abandoned);
    let reason = after.job.reason.clone().unwrap();
    assert!(
        reason.contains("worker w1") && reason.contains("requeue"),
        "{reason}"
    );
    assert_eq!(after.effects.first(), Some(&Effect::Delete("e1".into())));
    assert_eq!(after.effects.last(), Some(&Effect::DeadLetter(reason)));
    // Another worker left; a job not resumed; one already running.
    for (before, gone) in [
        (resumed(JobState::Queued), "w2"),
        (job(JobState::Queued), "w1"),
        (resumed(JobState::Running), "w1"),
    ] {
        let after = decide(before.clone(), Event::WorkerGone(gone), now());
        assert_eq!(after.job, before);
        assert!(after.effects.is_empty());
    }
}

#[test]
fn restarts_stop_after_the_attempts_and_the_extra_restarts() {
    let mut before = job(JobState::Running);
    before.spec.retry = RetryPolicy::Restart;
    before.attempt = before.spec.attempts + MAX_EXTRA_RESTARTS;
    let after = delivered(before, "w2", true, None);
    assert_eq!(after.job.state, JobState::Abandoned);
}

#[test]
fn a_reclaimed_attempt_that_never_began_does_not_count() {
    let after = delivered(job(JobState::Assigned), "w2", true, None);
    assert_eq!(after.job.state, JobState::Assigned);
    assert_eq!(after.job.attempt, 1);
    assert_eq!(after.job.worker.as_deref(), Some("w2"));
}

#[test]
fn a_workers_own_idle_entry_reclaimed_by_itself_is_not_given_back() {
    // The owner's liveness counts only for another taker: a worker that
    // reclaims its own entry lost the attempt it held.
    let after = delivered(
        job(JobState::Assigned),
        "w1",
        true,
        Some(Duration::from_secs(1)),
    );
    assert_eq!(after.reply, Reply::Assigned);
    assert_eq!(after.job.worker.as_deref(), Some("w1"));
}

#[test]
fn an_entry_of_a_job_waiting_to_retry_is_acknowledged() {
    let before = job(JobState::Retrying);
    let after = delivered(before.clone(), "w2", false, None);
    assert_eq!(after.job, before);
    assert_eq!(after.effects, vec![ack("e1")]);
}

// A worker's report.

#[test]
fn a_report_of_an_attempt_that_is_not_current_is_refused_and_changes_nothing() {
    for (worker, attempt) in [("w2", 1), ("w1", 2)] {
        let before = job(JobState::Running);
        let after = reported(before.clone(), worker, attempt, ReportKind::Begin);
        assert_eq!(after.job, before);
        assert!(after.effects.is_empty());
        assert_eq!(
            after.reply,
            Reply::NotCurrent(Answer {
                go: false,
                reason: Some("job j is no longer this worker's attempt (it is running)".into()),
                state: Some(JobState::Running),
            })
        );
    }
    let after = reported(job(JobState::Completed), "w1", 1, ReportKind::Heartbeat);
    assert!(matches!(after.reply, Reply::NotCurrent(_)));
}

#[test]
fn a_heartbeat_is_a_sign_of_life_and_renews_the_lease() {
    let after = reported(job(JobState::Running), "w1", 1, ReportKind::Heartbeat);
    assert_eq!(
        after.effects,
        vec![
            Effect::Touch("w1".into()),
            Effect::Refresh {
                owner: "w1".into(),
                entry: "e1".into(),
            },
        ]
    );
    assert_eq!(after.reply, answer(true, None, JobState::Running));
}

#[test]
fn a_heartbeat_is_told_to_stop_once_cancelled_or_past_the_deadline() {
    let mut cancelled = job(JobState::Running);
    cancelled.cancel_requested = true;
    let after = reported(cancelled, "w1", 1, ReportKind::Heartbeat);
    assert_eq!(
        after.reply,
        answer(false, Some("cancelled"), JobState::Running)
    );
    let mut late = job(JobState::Running);
    late.spec.deadline = Some(A_MINUTE_AGO.into());
    let after = reported(late, "w1", 1, ReportKind::Heartbeat);
    assert_eq!(
        after.reply,
        answer(false, Some("its deadline passed"), JobState::Running)
    );
}

#[test]
fn the_first_input_makes_the_job_running_and_injected() {
    let after = reported(job(JobState::Assigned), "w1", 1, ReportKind::Begin);
    assert_eq!(after.job.state, JobState::Running);
    assert!(after.job.injected);
    assert_eq!(
        after.effects,
        vec![
            Effect::Touch("w1".into()),
            save(JobState::Running, None, Some("w1")),
        ]
    );
    assert_eq!(after.reply, answer(true, None, JobState::Running));
}

#[test]
fn no_input_begins_once_cancelled() {
    let mut before = job(JobState::Assigned);
    before.cancel_requested = true;
    let after = reported(before, "w1", 1, ReportKind::Begin);
    assert_eq!(after.job.state, JobState::Assigned);
    assert!(!after.job.injected);
    assert_eq!(after.effects, vec![Effect::Touch("w1".into())]);
    assert_eq!(
        after.reply,
        answer(false, Some("cancelled"), JobState::Assigned)
    );
}

#[test]
fn a_step_is_kept_with_its_seconds_and_when_the_worker_made_it() {
    let record = serde_json::json!({"step": 2});
    let step_at = |at: Option<&str>| ReportKind::Step {
        step: 2,
        record: record.clone(),
        seconds: 0.5,
        at: at.map(str::to_owned),
    };
    let saved = |at: Option<&str>| Effect::Save {
        note: Some(Note::Step {
            step: 2,
            record: record.clone(),
            at: at.map(str::to_owned),
        }),
        step_seconds: Some(0.5),
    };
    // Sent a minute late (the server was away): kept at its own time.
    let mut running = job(JobState::Running);
    running.started = Some(AN_HOUR_AGO.into());
    let after = reported(running.clone(), "w1", 1, step_at(Some(A_MINUTE_AGO)));
    assert_eq!(
        after.effects,
        vec![Effect::Touch("w1".into()), saved(Some(A_MINUTE_AGO))]
    );
    assert_eq!(after.reply, answer(true, None, JobState::Running));
    // A worker's clock ahead of the server's: never later than now; one
    // behind it: never before the attempt began; none: when it came.
    for (said, kept) in [
        (Some(IN_AN_HOUR), Some(NOW)),
        (Some("2026-01-01T10:00:00.000Z"), Some(AN_HOUR_AGO)),
        (Some("yesterday"), None),
        (None, None),
    ] {
        let after = reported(running.clone(), "w1", 1, step_at(said));
        assert_eq!(after.effects[1], saved(kept), "{said:?}");
    }
}

// The end of an attempt.

#[test]
fn a_completed_attempt_ends_the_job_and_then_acknowledges_its_entry() {
    let after = finished(job(JobState::Running), Finish::Completed);
    assert_eq!(after.job.state, JobState::Completed);
    assert_eq!(after.job.reason.as_deref(), Some("boom"));
    assert_eq!(
        after.effects,
        vec![
            Effect::Touch("w1".into()),
            Effect::Observe(Measure::JobSeconds, 60.0),
            save(JobState::Completed, Some("boom"), Some("w1")),
            free("w1"),
            ack("e1"),
        ]
    );
    assert_eq!(
        after.reply,
        answer(false, Some("boom"), JobState::Completed)
    );
}

#[test]
fn an_unverified_attempt_ends_the_job_unverified() {
    let after = finished(job(JobState::Running), Finish::Unverified);
    assert_eq!(after.job.state, JobState::Unverified);
}

#[test]
fn the_report_page_and_outcome_are_kept_before_the_end_is_stored() {
    let what = ReportKind::Finish {
        end: Finish::Completed,
        reason: "done".into(),
        outcome: Some(serde_json::json!({"steps": 3})),
        run_id: Some("run-1".into()),
        report: Some("<html>".into()),
    };
    let after = reported(job(JobState::Running), "w1", 1, what);
    assert_eq!(after.job.run_id.as_deref(), Some("run-1"));
    assert_eq!(after.job.outcome, Some(serde_json::json!({"steps": 3})));
    assert_eq!(after.effects[1], Effect::KeepReport("<html>".into()));
}

#[test]
fn a_failed_attempt_with_attempts_left_retries_after_a_backoff() {
    let after = finished(job(JobState::Running), Finish::Failed);
    assert_eq!(after.job.state, JobState::Retrying);
    assert_eq!(
        after.job.retry_at.as_deref(),
        Some("2026-01-01T12:00:01.000Z")
    );
    assert_eq!(
        after.effects,
        vec![
            Effect::Touch("w1".into()),
            Effect::Count(Counter::Retries),
            save(
                JobState::Retrying,
                Some("boom; attempt 2 in 1 s"),
                Some("w1")
            ),
            free("w1"),
            ack("e1"),
        ]
    );
    // The backoff doubles each attempt.
    let mut second = job(JobState::Running);
    second.attempt = 2;
    second.spec.attempts = 5;
    let after = finished(second, Finish::Failed);
    assert_eq!(
        after.job.retry_at.as_deref(),
        Some("2026-01-01T12:00:02.000Z")
    );
}

#[test]
fn the_backoff_is_at_most_a_minute() {
    let mut before = job(JobState::Running);
    before.attempt = 10;
    before.spec.attempts = 20;
    let after = finished(before, Finish::Failed);
    assert_eq!(
        after.job.retry_at.as_deref(),
        Some("2026-01-01T12:01:00.000Z")
    );
}

#[test]
fn the_last_failed_attempt_fails_the_job_into_the_dead_letters() {
    let mut before = job(JobState::Running);
    before.attempt = 3;
    let after = finished(before, Finish::Failed);
    assert_eq!(after.job.state, JobState::Failed);
    assert_eq!(
        after.effects,
        vec![
            Effect::Touch("w1".into()),
            Effect::Observe(Measure::JobSeconds, 60.0),
            save(JobState::Failed, Some("boom"), Some("w1")),
            free("w1"),
            Effect::DeadLetter("boom".into()),
            ack("e1"),
        ]
    );
}

#[test]
fn an_aborted_attempt_ends_cancelled_expired_or_aborted_by_what_stopped_it() {
    let mut cancelled = job(JobState::Running);
    cancelled.cancel_requested = true;
    let after = finished(cancelled, Finish::Stopped);
    assert_eq!(
        (after.job.state, after.job.reason.as_deref()),
        (JobState::Cancelled, Some("cancelled"))
    );
    let mut late = job(JobState::Running);
    late.spec.deadline = Some(A_MINUTE_AGO.into());
    let after = finished(late, Finish::Stopped);
    assert_eq!(
        (after.job.state, after.job.reason.as_deref()),
        (JobState::Expired, Some("its deadline passed"))
    );
    let after = finished(job(JobState::Running), Finish::Aborted);
    assert_eq!(
        (after.job.state, after.job.reason.as_deref()),
        (JobState::Aborted, Some("boom"))
    );
}

#[test]
fn a_job_given_back_before_any_input_is_queued_again_under_a_new_entry() {
    let after = finished(job(JobState::Assigned), Finish::Released);
    assert_eq!(after.job.state, JobState::Queued);
    assert_eq!(after.job.attempt, 0);
    assert_eq!(after.job.worker, None);
    assert_eq!(
        after.effects,
        vec![
            Effect::Touch("w1".into()),
            Effect::Enqueue,
            save(JobState::Queued, Some("boom"), Some("w1")),
            free("w1"),
            ack("e1"),
        ]
    );
    assert_eq!(after.reply, answer(false, None, JobState::Queued));
}

#[test]
fn a_job_given_back_after_input_is_aborted_unless_it_may_restart() {
    let after = finished(job(JobState::Running), Finish::Released);
    assert_eq!(after.job.state, JobState::Aborted);
    assert_eq!(
        after.job.reason.as_deref(),
        Some("boom (after input was injected: not run again)")
    );
    let mut restartable = job(JobState::Running);
    restartable.spec.retry = RetryPolicy::Restart;
    let after = finished(restartable, Finish::Released);
    assert_eq!(after.job.state, JobState::Queued);
    assert_eq!(after.job.attempt, 1, "an attempt that injected counts");
}

#[test]
fn a_worker_that_stopped_itself_mid_job_abandons_it_unless_it_may_restart() {
    // Fenced (cut off from the server) or signalled after input: the task
    // may be half done.
    let after = finished(job(JobState::Running), Finish::Interrupted);
    assert_eq!(after.job.state, JobState::Abandoned);
    let reason = after.job.reason.clone().unwrap();
    assert!(
        reason.starts_with("boom: the task may be half done, so it is not run again"),
        "{reason}"
    );
    assert!(after.effects.contains(&Effect::DeadLetter(reason)));
    assert!(after.effects.contains(&ack("e1")));
    // With retry=restart it goes back in the queue, the attempt counted.
    let mut restartable = job(JobState::Running);
    restartable.spec.retry = RetryPolicy::Restart;
    let after = finished(restartable.clone(), Finish::Interrupted);
    assert_eq!((after.job.state, after.job.attempt), (JobState::Queued, 1));
    assert!(after.effects.contains(&Effect::Enqueue));
    // ... while restarts remain.
    restartable.attempt = restartable.spec.attempts + MAX_EXTRA_RESTARTS;
    let after = finished(restartable, Finish::Interrupted);
    assert_eq!(after.job.state, JobState::Abandoned);
    // Before any input nothing was done: queued again, the attempt not counted.
    let after = finished(job(JobState::Assigned), Finish::Interrupted);
    assert_eq!((after.job.state, after.job.attempt), (JobState::Queued, 0));
}

#[test]
fn a_step_reported_late_is_kept_in_its_attempts_history_and_refused() {
    let record = serde_json::json!({"step": 3});
    let step = ReportKind::Step {
        step: 3,
        seconds: 0.5,
        record: record.clone(),
        at: Some(A_MINUTE_AGO.into()),
    };
    let late = |attempt: u32, worker: &str| {
        Some(Effect::Save {
            note: Some(Note::LateStep {
                attempt,
                worker: worker.into(),
                step: 3,
                record: record.clone(),
                at: Some(A_MINUTE_AGO.into()),
            }),
            step_seconds: None,
        })
    };
    // Taken over by w2 (attempt 2): w1's step of attempt 1 is history.
    let mut taken = job(JobState::Running);
    (taken.attempt, taken.worker) = (2, Some("w2".into()));
    let after = reported(taken.clone(), "w1", 1, step.clone());
    assert_eq!(after.job, taken, "it changes nothing");
    assert_eq!(after.effects.first().cloned(), late(1, "w1"));
    assert!(matches!(after.reply, Reply::NotCurrent(_)));
    // Abandoned while w1 was cut off: its step of that attempt is kept.
    let mut abandoned = job(JobState::Abandoned);
    abandoned.worker = Some("w1".into());
    let after = reported(abandoned.clone(), "w1", 1, step.clone());
    assert_eq!(after.effects, vec![late(1, "w1").unwrap()]);
    // Not an attempt the job had, or not that attempt's worker: nothing.
    for (worker, attempt) in [("w1", 2), ("w2", 1), ("w1", 0)] {
        let after = reported(abandoned.clone(), worker, attempt, step.clone());
        assert!(after.effects.is_empty(), "{worker} {attempt}");
    }
    // A late heartbeat or end is only refused.
    let after = reported(taken, "w1", 1, ReportKind::Heartbeat);
    assert!(after.effects.is_empty());
}

#[test]
fn a_waiting_or_held_job_whose_entry_was_lost_is_entered_again_once() {
    for state in [JobState::Queued, JobState::Assigned, JobState::Running] {
        let before = job(state);
        let after = decide(before.clone(), Event::EntryLost, now());
        assert_eq!(after.job, before, "the state and the worker stay");
        assert_eq!(after.effects.len(), 2, "{:?}", after.effects);
        assert_eq!(after.effects[0], Effect::Enqueue);
        assert!(
            matches!(&after.effects[1], Effect::Save { note: Some(Note::State(change)), .. }
                if change.state == state && change.reason.as_deref().unwrap().contains("lost its entry e1")),
            "{:?}",
            after.effects
        );
        assert_eq!(after.reply, Reply::Nothing);
    }
    // Ended, waiting to retry (the tick enters it) or with no entry: nothing.
    let mut no_entry = job(JobState::Queued);
    no_entry.entry = None;
    for before in [job(JobState::Completed), job(JobState::Retrying), no_entry] {
        let after = decide(before, Event::EntryLost, now());
        assert!(after.effects.is_empty(), "{:?}", after.effects);
    }
}

// A cancel.

#[test]
fn an_ended_job_cannot_be_cancelled() {
    let before = job(JobState::Failed);
    let after = decide(before.clone(), Event::Cancel, now());
    assert_eq!(after.job, before);
    assert!(after.effects.is_empty());
    assert_eq!(after.reply, Reply::AlreadyEnded);
}

#[test]
fn a_waiting_job_is_cancelled_at_once_and_its_entry_removed() {
    for state in [JobState::Queued, JobState::Retrying] {
        let after = decide(job(state), Event::Cancel, now());
        assert_eq!(after.job.state, JobState::Cancelled);
        assert_eq!(after.effects[0], Effect::Delete("e1".into()));
        assert!(after.effects.contains(&save(
            JobState::Cancelled,
            Some("cancelled while queued"),
            after.job.worker.as_deref()
        )));
        assert_eq!(after.reply, Reply::Cancelling);
    }
}

#[test]
fn a_running_job_is_only_marked_and_told_at_its_next_report() {
    let after = decide(job(JobState::Running), Event::Cancel, now());
    assert_eq!(after.job.state, JobState::Running);
    assert!(after.job.cancel_requested);
    assert_eq!(after.effects, vec![save_quietly()]);
}

// Time passing.

#[test]
fn a_retry_that_is_due_goes_back_in_the_queue() {
    let mut before = job(JobState::Retrying);
    before.retry_at = Some(A_MINUTE_AGO.into());
    let after = decide(before, Event::Tick, now());
    assert_eq!(after.job.state, JobState::Queued);
    assert_eq!(after.job.worker, None);
    assert_eq!(after.job.retry_at, None);
    assert_eq!(
        after.effects,
        vec![
            Effect::Enqueue,
            save(JobState::Queued, Some("next attempt"), None)
        ]
    );
}

#[test]
fn a_retry_not_yet_due_waits() {
    let mut before = job(JobState::Retrying);
    before.retry_at = Some(IN_AN_HOUR.into());
    let after = decide(before.clone(), Event::Tick, now());
    assert_eq!(after.job, before);
    assert!(after.effects.is_empty());
}

#[test]
fn a_waiting_job_past_its_deadline_expires() {
    let mut retrying = job(JobState::Retrying);
    retrying.spec.deadline = Some(A_MINUTE_AGO.into());
    let after = decide(retrying, Event::Tick, now());
    assert_eq!(after.job.state, JobState::Expired);
    assert_eq!(after.job.reason.as_deref(), Some("its deadline passed"));

    let mut queued = job(JobState::Queued);
    queued.spec.deadline = Some(A_MINUTE_AGO.into());
    let after = decide(queued, Event::Tick, now());
    assert_eq!(
        after.effects,
        vec![
            Effect::Delete("e1".into()),
            save(
                JobState::Expired,
                Some("its deadline passed while queued"),
                None
            ),
        ]
    );
}

#[test]
fn a_queued_job_the_queue_did_not_take_gets_an_entry() {
    let mut before = job(JobState::Queued);
    before.entry = None;
    let after = decide(before, Event::Tick, now());
    assert_eq!(after.effects, vec![Effect::Enqueue, save_quietly()]);
    let after = decide(job(JobState::Queued), Event::Tick, now());
    assert!(after.effects.is_empty(), "{:?}", after.effects);
}

#[test]
fn time_leaves_a_held_job_alone() {
    for state in [JobState::Assigned, JobState::Running, JobState::Completed] {
        let mut before = job(state);
        before.spec.deadline = Some(A_MINUTE_AGO.into());
        let after = decide(before.clone(), Event::Tick, now());
        assert_eq!(after.job, before);
    }
}

// Liveness and time.

#[test]
fn a_worker_holds_its_lease_while_it_beat_within_it_and_did_not_leave() {
    let lease = Duration::from_secs(30);
    let up = Duration::from_secs(3600);
    let five_ago = "2026-01-01T11:59:55.000Z";
    assert_eq!(
        liveness(five_ago, false, up, lease, now()),
        Some(Duration::from_secs(5))
    );
    assert_eq!(liveness(five_ago, true, up, lease, now()), None);
    assert_eq!(liveness(A_MINUTE_AGO, false, up, lease, now()), None);
    assert_eq!(liveness("not a time", false, up, lease, now()), None);
    // A server that restarted two seconds ago gives every worker a lease.
    assert_eq!(
        liveness(A_MINUTE_AGO, false, Duration::from_secs(2), lease, now()),
        Some(Duration::from_secs(2))
    );
}

#[test]
fn a_time_has_come_once_it_is_now_or_before() {
    assert!(past(Some(A_MINUTE_AGO), now()));
    assert!(past(Some(NOW), now()));
    assert!(!past(Some(IN_AN_HOUR), now()));
    assert!(!past(Some("not a time"), now()));
    assert!(!past(None, now()));
}
