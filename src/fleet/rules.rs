//! The fleet's job rules as a pure state machine: a job, what happened to it
//! and the time go in; the job as it is now, what the server must do and what
//! it answers come out. No Redis, no HTTP, no store and no clock: the
//! server's handlers (`server.rs`) read the job, call [`decide`] and carry the
//! effects out in order. `rules/tests.rs` is the specification, a row a rule.
//!
//! The rules in one place: a delivery of a job is current only while the job
//! points at its entry; a reclaimed job runs again only when nothing was
//! injected or it was submitted with `retry = "restart"` (bounded by
//! [`MAX_EXTRA_RESTARTS`]); a failed attempt is retried after a backoff while
//! attempts remain, then dead-lettered; a worker's report counts only for the
//! attempt that is current; an entry is acknowledged only after what it led
//! to is stored (the effects' order says so).

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::{
    Answer, Finish, Job, JobState, Report, ReportKind, RetryPolicy, StateChange, labels_match,
};
use clock::seconds_between;
pub use clock::{liveness, past, seconds_since, stamp};

/// Reclaims after a worker died, beyond the job's own attempts
/// (`retry = "restart"`): a task that kills every worker stops somewhere.
pub const MAX_EXTRA_RESTARTS: u32 = 3;

/// The longest wait before a failed attempt is tried again.
pub const MAX_BACKOFF_SECONDS: f64 = 60.0;

/// The worker a queue entry was delivered to.
#[derive(Debug, Clone, Copy)]
pub struct Taker<'a> {
    pub id: &'a str,
    pub labels: &'a BTreeMap<String, String>,
}

/// What happened to a job.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// One of the job's queue entries was delivered to a worker that pulls:
    /// a new entry, or one `reclaimed` from a consumer idle past the lease.
    /// `owner_silent` is how long the job's worker has been silent when it
    /// still holds its lease ([`liveness`]), `None` when it lost it.
    Delivered {
        taker: Taker<'a>,
        entry: &'a str,
        reclaimed: bool,
        owner_silent: Option<Duration>,
    },
    /// A worker's report on an attempt of the job.
    Reported(&'a Report),
    /// A user asked to cancel the job.
    Cancel,
    /// Time passed (the server's ticker): retries due, deadlines passed,
    /// a queued job with no entry.
    Tick,
}

/// A line of the job's history, stored with the job.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// The job entered a state (taken by or left by a worker).
    State(StateChange),
    /// A step of the current attempt, as the worker reported it.
    Step {
        step: u32,
        record: serde_json::Value,
    },
}

/// What the server measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Seconds from a job's submission to its first start.
    WaitSeconds,
    /// Seconds from a job's first start to its end.
    JobSeconds,
}

/// What the server counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    Retries,
    Reclaims,
}

/// What the server must do, in this order.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Store the job as it is now, with a line of history (none: only the
    /// job). A step's seconds are measured only where the step was new.
    Save {
        note: Option<Note>,
        step_seconds: Option<f64>,
    },
    /// Keep the report page a worker sent.
    KeepReport(String),
    /// The worker's current job (none: it is free).
    SetWorkerJob {
        worker: String,
        job: Option<String>,
    },
    /// The worker showed it is alive.
    Touch(String),
    /// Add a new queue entry for the job; the job points at it from here on.
    Enqueue,
    /// The entry is done with.
    Ack(String),
    /// Remove an entry nobody should take (errors are of no consequence).
    Delete(String),
    /// Not this worker's to take: another may take it after a lease.
    Park(String),
    /// The entry stays its owner's, its lease counted from now.
    Refresh {
        owner: String,
        entry: String,
    },
    /// The entry goes back to its owner, idle for as long as it was silent.
    GiveBack {
        owner: String,
        entry: String,
        silent: Duration,
    },
    /// The job goes to the pool's dead letters with its reason.
    DeadLetter(String),
    Observe(Measure, f64),
    Count(Counter),
}

/// What the server answers the one who caused the event.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Nothing for this delivery: the puller looks further.
    Nothing,
    /// The job is the taker's to run.
    Assigned,
    /// The worker's answer: go on or stop.
    Go(Answer),
    /// The report is not of the job's current attempt (409).
    NotCurrent(Answer),
    /// The job already ended (409).
    AlreadyEnded,
    /// The cancel was taken.
    Cancelling,
}

/// The job after an event, and what follows from it.
#[derive(Debug, Clone)]
pub struct Decision {
    pub job: Job,
    pub effects: Vec<Effect>,
    pub reply: Reply,
}

/// The rule for `event` on `job` at `now`.
pub fn decide(job: Job, event: Event<'_>, now: DateTime<Utc>) -> Decision {
    let mut decision = Decision {
        job,
        effects: Vec::new(),
        reply: Reply::Nothing,
    };
    let mut rule = Rule {
        job: &mut decision.job,
        effects: &mut decision.effects,
        now,
    };
    decision.reply = match event {
        Event::Delivered {
            taker,
            entry,
            reclaimed,
            owner_silent,
        } => rule.delivered(taker, entry, reclaimed, owner_silent),
        Event::Reported(report) => rule.reported(report),
        Event::Cancel => rule.cancel(),
        Event::Tick => {
            rule.tick();
            Reply::Nothing
        }
    };
    decision
}

/// One rule being applied: the job, the effects so far, the time.
struct Rule<'a> {
    job: &'a mut Job,
    effects: &'a mut Vec<Effect>,
    now: DateTime<Utc>,
}

impl Rule<'_> {
    fn push(&mut self, effect: Effect) {
        self.effects.push(effect);
    }

    fn save_state(&mut self, state: JobState, reason: Option<String>, worker: Option<String>) {
        self.push(Effect::Save {
            note: Some(Note::State(StateChange {
                state,
                reason,
                worker,
            })),
            step_seconds: None,
        });
    }

    fn free(&mut self, worker: Option<String>) {
        if let Some(worker) = worker {
            self.push(Effect::SetWorkerJob { worker, job: None });
        }
    }

    /// Ends the job in a final state with its reason; its worker is free.
    fn end(&mut self, state: JobState, reason: String) {
        self.job.state = state;
        self.job.reason = Some(reason.clone());
        self.job.ended = Some(stamp(self.now));
        if let Some(seconds) =
            seconds_between(self.job.started.as_deref(), self.job.ended.as_deref())
        {
            self.push(Effect::Observe(Measure::JobSeconds, seconds));
        }
        let worker = self.job.worker.clone();
        self.save_state(state, Some(reason), worker.clone());
        self.free(worker);
    }

    /// A delivered entry: the job for this taker, or nothing (the entry was
    /// stale, the job ended, or it is not this taker's to take).
    fn delivered(
        &mut self,
        taker: Taker<'_>,
        entry: &str,
        reclaimed: bool,
        owner_silent: Option<Duration>,
    ) -> Reply {
        if self.job.entry.as_deref() != Some(entry) || self.job.state.is_final() {
            // An older delivery of the job, or one that ended.
            self.push(Effect::Ack(entry.to_owned()));
            return Reply::Nothing;
        }
        match self.job.state {
            JobState::Queued => {
                if past(self.job.spec.deadline.as_deref(), self.now) {
                    self.end(JobState::Expired, "its deadline passed while queued".into());
                    self.push(Effect::Ack(entry.to_owned()));
                    return Reply::Nothing;
                }
                if !labels_match(&self.job.spec.labels, taker.labels) {
                    self.push(Effect::Park(entry.to_owned()));
                    return Reply::Nothing;
                }
            }
            JobState::Assigned | JobState::Running => {
                if !self.reclaim(taker, entry, reclaimed, owner_silent) {
                    return Reply::Nothing;
                }
            }
            JobState::Retrying => {
                self.push(Effect::Ack(entry.to_owned()));
                return Reply::Nothing;
            }
            _ => unreachable!("final states are handled above"),
        }
        if self.job.cancel_requested {
            self.end(JobState::Cancelled, "cancelled".into());
            self.push(Effect::Ack(entry.to_owned()));
            return Reply::Nothing;
        }
        self.assign(taker, reclaimed);
        Reply::Assigned
    }

    /// A delivery of a job some worker holds: whether the taker may take it
    /// over (its owner lost its lease, and the job may run again).
    fn reclaim(
        &mut self,
        taker: Taker<'_>,
        entry: &str,
        reclaimed: bool,
        owner_silent: Option<Duration>,
    ) -> bool {
        let owner = self.job.worker.clone().unwrap_or_default();
        let alive = if owner == taker.id {
            None
        } else {
            owner_silent
        };
        if !reclaimed {
            self.push(Effect::Refresh {
                owner,
                entry: entry.to_owned(),
            });
            return false;
        }
        if let Some(silent) = alive {
            // Its worker is alive (it reported since its last heartbeat, or
            // the server restarted): the entry goes back to it, idle since
            // the worker's last sign of life, so the lease still ends a lease
            // after it.
            self.push(Effect::GiveBack {
                owner,
                entry: entry.to_owned(),
                silent,
            });
            return false;
        }
        self.push(Effect::Count(Counter::Reclaims));
        let restart = !self.job.injected
            || (self.job.spec.retry == RetryPolicy::Restart
                && self.job.attempt < self.job.spec.attempts + MAX_EXTRA_RESTARTS);
        if !restart {
            let reason = format!(
                "worker {owner} stopped answering after it had injected input: the task may be half done, so it is not run again (submit with retry=restart for tasks that are safe to redo)"
            );
            self.end(JobState::Abandoned, reason.clone());
            self.push(Effect::Ack(entry.to_owned()));
            self.push(Effect::DeadLetter(reason));
            return false;
        }
        self.free(Some(owner));
        if !self.job.injected {
            // The attempt never began: it does not count.
            self.job.attempt = self.job.attempt.saturating_sub(1);
        }
        true
    }

    /// The job is the taker's: a new attempt, nothing injected yet.
    fn assign(&mut self, taker: Taker<'_>, reclaimed: bool) {
        let reclaimed_from = self.job.worker.clone().filter(|_| reclaimed);
        self.job.attempt += 1;
        self.job.worker = Some(taker.id.to_owned());
        self.job.injected = false;
        self.job.state = JobState::Assigned;
        if self.job.started.is_none() {
            self.job.started = Some(stamp(self.now));
            if let Some(wait) =
                seconds_between(Some(&self.job.created), self.job.started.as_deref())
            {
                self.push(Effect::Observe(Measure::WaitSeconds, wait));
            }
        }
        let reason = reclaimed_from.map(|from| format!("taken over from worker {from}"));
        self.save_state(JobState::Assigned, reason, Some(taker.id.to_owned()));
        self.push(Effect::SetWorkerJob {
            worker: taker.id.to_owned(),
            job: Some(self.job.id.clone()),
        });
    }

    /// A worker's heartbeat, the start of its input, a step, or the end of
    /// its attempt.
    fn reported(&mut self, report: &Report) -> Reply {
        let current = self.job.worker.as_deref() == Some(report.worker.as_str())
            && self.job.attempt == report.attempt
            && matches!(self.job.state, JobState::Assigned | JobState::Running);
        if !current {
            // A report of an attempt that is no longer current: the job was
            // taken over, or ended. Its steps are not this job's record.
            return Reply::NotCurrent(Answer {
                go: false,
                reason: Some(format!(
                    "job {} is no longer this worker's attempt (it is {})",
                    self.job.id,
                    self.job.state.as_str()
                )),
                state: Some(self.job.state),
            });
        }
        // Any report is a sign of life.
        self.push(Effect::Touch(report.worker.clone()));
        let stop_reason = if self.job.cancel_requested {
            Some("cancelled".to_owned())
        } else if past(self.job.spec.deadline.as_deref(), self.now) {
            Some("its deadline passed".to_owned())
        } else {
            None
        };
        self.report_of_current_attempt(report, stop_reason)
    }

    /// A report of the current attempt, told to go on or to stop (because
    /// of `stop_reason`).
    fn report_of_current_attempt(&mut self, report: &Report, stop_reason: Option<String>) -> Reply {
        let state = self.job.state;
        let answer = |go: bool| Answer {
            go,
            reason: if go { None } else { stop_reason.clone() },
            state: Some(state),
        };
        match &report.what {
            ReportKind::Heartbeat => {
                if let Some(entry) = self.job.entry.clone() {
                    self.push(Effect::Refresh {
                        owner: report.worker.clone(),
                        entry,
                    });
                }
                Reply::Go(answer(stop_reason.is_none()))
            }
            ReportKind::Begin if stop_reason.is_some() => Reply::Go(answer(false)),
            ReportKind::Begin => {
                self.job.injected = true;
                self.job.state = JobState::Running;
                self.save_state(JobState::Running, None, Some(report.worker.clone()));
                Reply::Go(Answer {
                    go: true,
                    reason: None,
                    state: Some(JobState::Running),
                })
            }
            ReportKind::Step {
                step,
                record,
                seconds,
            } => {
                self.push(Effect::Save {
                    note: Some(Note::Step {
                        step: *step,
                        record: record.clone(),
                    }),
                    step_seconds: Some(*seconds),
                });
                Reply::Go(answer(stop_reason.is_none()))
            }
            ReportKind::Finish {
                end,
                reason,
                outcome,
                run_id,
                report: html,
            } => {
                self.job.outcome = outcome.clone();
                self.job.run_id = run_id.clone().or(self.job.run_id.take());
                if let Some(html) = html {
                    self.push(Effect::KeepReport(html.clone()));
                }
                self.finish(*end, reason.clone(), stop_reason);
                Reply::Go(Answer {
                    go: false,
                    reason: self.job.reason.clone(),
                    state: Some(self.job.state),
                })
            }
        }
    }

    /// An attempt's end: the job's next state.
    fn finish(&mut self, end: Finish, reason: String, stop_reason: Option<String>) {
        let worker = self.job.worker.clone();
        let old_entry = self.job.entry.clone();
        match end {
            Finish::Completed => self.end(JobState::Completed, reason),
            Finish::Unverified => self.end(JobState::Unverified, reason),
            Finish::Failed if self.job.attempt < self.job.spec.attempts => {
                // Backoff: 1 s, 2 s, 4 s … at most a minute.
                let backoff = 2f64
                    .powi(self.job.attempt as i32 - 1)
                    .min(MAX_BACKOFF_SECONDS);
                self.job.state = JobState::Retrying;
                self.job.retry_at = Some(stamp(
                    self.now + chrono::Duration::milliseconds((backoff * 1000.0) as i64),
                ));
                self.job.reason = Some(reason.clone());
                self.push(Effect::Count(Counter::Retries));
                let next = self.job.attempt + 1;
                self.save_state(
                    JobState::Retrying,
                    Some(format!("{reason}; attempt {next} in {backoff:.0} s")),
                    worker.clone(),
                );
                self.free(worker);
                if let Some(entry) = &old_entry {
                    self.push(Effect::Ack(entry.clone()));
                }
            }
            Finish::Failed => {
                self.end(JobState::Failed, reason.clone());
                self.push(Effect::DeadLetter(reason));
            }
            Finish::Aborted | Finish::Stopped => {
                let state = match (&stop_reason, self.job.cancel_requested) {
                    (_, true) => JobState::Cancelled,
                    (Some(_), false) => JobState::Expired,
                    (None, false) => JobState::Aborted,
                };
                self.end(state, stop_reason.unwrap_or(reason));
            }
            Finish::Released if self.job.injected && self.job.spec.retry == RetryPolicy::Never => {
                self.end(
                    JobState::Aborted,
                    format!("{reason} (after input was injected: not run again)"),
                );
            }
            Finish::Released => {
                // Back in the queue for another worker: a new entry first,
                // then the job points at it, then the old one is acknowledged.
                self.push(Effect::Enqueue);
                if !self.job.injected {
                    self.job.attempt = self.job.attempt.saturating_sub(1);
                }
                self.job.state = JobState::Queued;
                self.job.worker = None;
                self.job.injected = false;
                self.save_state(JobState::Queued, Some(reason), worker.clone());
                self.free(worker);
                if let Some(entry) = &old_entry {
                    self.push(Effect::Ack(entry.clone()));
                }
            }
        }
        // Acknowledged only now that the result is stored (a job put back or
        // retried has acknowledged its entry above).
        if self.job.state.is_final()
            && let Some(entry) = old_entry
        {
            self.push(Effect::Ack(entry));
        }
    }

    /// A queued job ends at once; a running one is told at its next step or
    /// heartbeat.
    fn cancel(&mut self) -> Reply {
        if self.job.state.is_final() {
            return Reply::AlreadyEnded;
        }
        self.job.cancel_requested = true;
        match self.job.state {
            JobState::Queued | JobState::Retrying => {
                if let Some(entry) = self.job.entry.clone() {
                    self.push(Effect::Delete(entry));
                }
                self.end(JobState::Cancelled, "cancelled while queued".into());
            }
            _ => self.push(Effect::Save {
                note: None,
                step_seconds: None,
            }),
        }
        Reply::Cancelling
    }

    /// Time passed: a retry that is due goes back in the queue; a job past
    /// its deadline expires; a queued job with no entry gets one.
    fn tick(&mut self) {
        let deadline_passed = past(self.job.spec.deadline.as_deref(), self.now);
        match self.job.state {
            JobState::Retrying if deadline_passed => {
                self.end(JobState::Expired, "its deadline passed".into());
            }
            JobState::Retrying if past(self.job.retry_at.as_deref(), self.now) => {
                self.push(Effect::Enqueue);
                self.job.state = JobState::Queued;
                self.job.worker = None;
                self.job.injected = false;
                self.job.retry_at = None;
                self.save_state(JobState::Queued, Some("next attempt".into()), None);
            }
            JobState::Queued if deadline_passed => {
                if let Some(entry) = self.job.entry.clone() {
                    self.push(Effect::Delete(entry));
                }
                self.end(JobState::Expired, "its deadline passed while queued".into());
            }
            JobState::Queued if self.job.entry.is_none() => {
                self.push(Effect::Enqueue);
                self.push(Effect::Save {
                    note: None,
                    step_seconds: None,
                });
            }
            _ => {}
        }
    }
}

mod clock;
#[cfg(test)]
mod tests;
