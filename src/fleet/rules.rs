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
    /// The queue no longer holds the entry the job points at (Redis
    /// restarted without its data, or from an older file): the store is
    /// the truth, and the queue is mended from it.
    EntryLost,
    /// A worker left for good (`reprise worker` stopped): a resumed job
    /// waiting for it can never run.
    WorkerGone(&'a str),
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
        /// When it happened (see [`clock::step_time`]).
        at: Option<String>,
    },
    /// A step of an earlier attempt, reported after that attempt ended
    /// (its worker was cut off from the server meanwhile).
    LateStep {
        attempt: u32,
        worker: String,
        step: u32,
        record: serde_json::Value,
        at: Option<String>,
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
        Event::EntryLost => {
            rule.entry_lost();
            Reply::Nothing
        }
        Event::WorkerGone(worker) => {
            rule.worker_gone(worker);
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
                if !labels_match(&self.job.spec.labels, taker.labels)
                    || self.pinned_elsewhere(taker.id).is_some()
                {
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
        let pinned = self.pinned_elsewhere(taker.id);
        if pinned.is_some() || !self.may_run_again() {
            match pinned {
                Some(pinned) => self.end(
                    JobState::Abandoned,
                    format!(
                        "worker {owner} stopped answering; a resumed job goes on only on the desktop of worker {pinned}, where its task was halted"
                    ),
                ),
                None => self.abandon(format!(
                    "worker {owner} stopped answering after it had injected input"
                )),
            }
            self.push(Effect::Ack(entry.to_owned()));
            self.push(Effect::DeadLetter(
                self.job.reason.clone().unwrap_or_default(),
            ));
            return false;
        }
        self.free(Some(owner));
        if !self.job.injected {
            // The attempt never began: it does not count.
            self.job.attempt = self.job.attempt.saturating_sub(1);
        }
        true
    }

    /// The worker a resumed job is pinned to, where it is not `taker`.
    fn pinned_elsewhere(&self, taker: &str) -> Option<String> {
        self.job
            .spec
            .resume
            .as_ref()
            .filter(|resume| resume.worker != taker)
            .map(|resume| resume.worker.clone())
    }

    /// Whether an attempt that ended half way may run again: nothing was
    /// injected, or the job was submitted with `retry = "restart"` and has
    /// restarts left.
    fn may_run_again(&self) -> bool {
        !self.job.injected
            || (self.job.spec.retry == RetryPolicy::Restart
                && self.job.attempt < self.job.spec.attempts + MAX_EXTRA_RESTARTS)
    }

    /// The job ends `abandoned`: its worker stopped (`why`) after input was
    /// injected, and it may not run again.
    fn abandon(&mut self, why: String) {
        self.end(
            JobState::Abandoned,
            format!(
                "{why}: the task may be half done, so it is not run again (submit with retry=restart for tasks that are safe to redo)"
            ),
        );
    }

    /// The job is the taker's: a new attempt, nothing injected yet.
    fn assign(&mut self, taker: Taker<'_>, reclaimed: bool) {
        let reclaimed_from = self.job.worker.clone().filter(|_| reclaimed);
        self.job.attempt += 1;
        self.job.worker = Some(taker.id.to_owned());
        self.job.injected = false;
        self.job.state = JobState::Assigned;
        // `started` is the current attempt's: a job taken over or retried
        // ran only since (its history keeps the earlier ones). The wait
        // measured is until its first start.
        let first = self.job.started.is_none();
        self.job.started = Some(stamp(self.now));
        if first
            && let Some(wait) =
                seconds_between(Some(&self.job.created), self.job.started.as_deref())
        {
            self.push(Effect::Observe(Measure::WaitSeconds, wait));
        }
        let reason = reclaimed_from.map(|from| format!("taken over from worker {from}"));
        self.save_state(JobState::Assigned, reason, Some(taker.id.to_owned()));
        self.push(Effect::SetWorkerJob {
            worker: taker.id.to_owned(),
            job: Some(self.job.id.clone()),
        });
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

    /// A job waiting for a worker, or held by one, whose entry the queue
    /// lost gets a new one. A held job's new entry, delivered to any
    /// worker, goes back to its owner (a delivery of a held job is never
    /// an assignment), so its lease works again; a queued job is delivered
    /// once, as any: nothing runs twice.
    fn entry_lost(&mut self) {
        let waiting_or_held = matches!(
            self.job.state,
            JobState::Queued | JobState::Assigned | JobState::Running
        );
        let Some(lost) = self.job.entry.clone().filter(|_| waiting_or_held) else {
            return;
        };
        self.push(Effect::Enqueue);
        let worker = self.job.worker.clone();
        self.save_state(
            self.job.state,
            Some(format!(
                "the queue had lost its entry {lost} (Redis restarted without it): entered again"
            )),
            worker,
        );
    }

    /// A resumed job still waiting for `worker`, which left, ends
    /// abandoned (a dead letter): no other desktop holds its task.
    fn worker_gone(&mut self, worker: &str) {
        let waiting = matches!(self.job.state, JobState::Queued | JobState::Retrying);
        let pinned = self
            .job
            .spec
            .resume
            .as_ref()
            .is_some_and(|resume| resume.worker == worker);
        if !(waiting && pinned) {
            return;
        }
        if let Some(entry) = self.job.entry.clone() {
            self.push(Effect::Delete(entry));
        }
        let reason = format!(
            "worker {worker}, on whose desktop it was to go on, left before it could: requeue it to run it from the start"
        );
        self.end(JobState::Abandoned, reason.clone());
        self.push(Effect::DeadLetter(reason));
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
mod report;
pub mod schedule;
#[cfg(test)]
mod tests;
