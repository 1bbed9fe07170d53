//! The fleet's data: jobs, their states and events, workers, and what a
//! worker and the server say to each other (`reprise serve`, `reprise
//! worker`, `reprise jobs`). JSON on the wire, typed everywhere else.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use options::{JobOptions, Priority, RetryPolicy, Strategy};

mod options;

/// `POST /api/jobs`: one job, or one per row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmitRequest {
    /// A recording's id, a unique prefix of it, or its name.
    pub recording: String,
    #[serde(default)]
    pub options: JobOptions,
    #[serde(default = "default_pool")]
    pub pool: String,
    /// Labels a worker must have (all of them, with these values).
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Texts typed in place of parameters (`--set`).
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// One job per row (`--each`), each row's values over `set`.
    #[serde(default)]
    pub rows: Option<Vec<BTreeMap<String, String>>>,
    /// Replays of a job that fails at a step, at most (at least 1).
    #[serde(default = "one")]
    pub attempts: u32,
    #[serde(default)]
    pub retry: RetryPolicy,
    /// Which waiting jobs of the pool go first.
    #[serde(default)]
    pub priority: Priority,
    /// Seconds from submission after which the job ends `expired`.
    #[serde(default)]
    pub deadline_seconds: Option<f64>,
    /// Submit it later, once: at this time (RFC 3339)…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// …or this many seconds from now (by the server's clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_seconds: Option<f64>,
    /// Submit it at every slot of this cron expression (five fields, or
    /// six with seconds first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<String>,
    /// The time zone `every` is read in (an IANA name); UTC by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
}

impl SubmitRequest {
    /// Whether it asks for a schedule rather than jobs now.
    pub fn is_scheduled(&self) -> bool {
        self.at.is_some() || self.delay_seconds.is_some() || self.every.is_some()
    }
}

/// Jobs submitted later: once (`at`) or at every slot of a cron
/// expression, each slot's jobs made from `request` as a submission then.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    pub id: String,
    /// What each slot submits: the recording as resolved when scheduled
    /// (its id, `@N` where a version was named), no timing fields.
    pub request: SubmitRequest,
    /// The cron expression; `None` for a one-off.
    pub every: Option<String>,
    pub time_zone: String,
    pub state: ScheduleState,
    /// The next slot (RFC 3339, UTC); `None` once it has run its course.
    pub next: Option<String>,
    /// The last slot fired.
    pub last_slot: Option<String>,
    /// Slots fired.
    pub runs: u32,
    /// Slots missed while the server was down (only the latest of a run of
    /// missed slots is fired).
    pub skipped: u32,
    /// Why the last slot made no job (the recording gone, say).
    pub last_error: Option<String>,
    pub created: String,
}

/// A schedule's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScheduleState {
    /// Waiting for its next slot.
    Active,
    /// A one-off that has fired, or an expression with no slot left.
    Done,
    /// Taken off by a user.
    Removed,
}

impl ScheduleState {
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleState::Active => "active",
            ScheduleState::Done => "done",
            ScheduleState::Removed => "removed",
        }
    }

    pub fn parse(text: &str) -> Option<ScheduleState> {
        [
            ScheduleState::Active,
            ScheduleState::Done,
            ScheduleState::Removed,
        ]
        .into_iter()
        .find(|state| state.as_str() == text)
    }
}

fn default_pool() -> String {
    "default".to_owned()
}

fn one() -> u32 {
    1
}

/// What a stored job is to do, as submitted (and checked).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    pub options: JobOptions,
    pub labels: BTreeMap<String, String>,
    pub parameters: BTreeMap<String, String>,
    pub attempts: u32,
    pub retry: RetryPolicy,
    /// `normal` in jobs stored before priorities.
    #[serde(default)]
    pub priority: Priority,
    /// RFC 3339.
    pub deadline: Option<String>,
    pub batch: Option<String>,
    /// The row's number in its batch, from 1.
    pub row: Option<usize>,
    /// The recording's version the job replays: its newest when submitted
    /// (`None` in jobs stored before versions: the recording as made).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// The schedule that submitted it, and the slot (RFC 3339) it was for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<String>,
    /// The dead letter it was requeued from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeued_from: Option<String>,
    /// It goes on with that job's halted run, where it halted, instead of
    /// replaying from the first step (`jobs resume`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<ResumeSpec>,
}

/// A job tried once, with the pool's defaults and nothing else asked.
impl Default for JobSpec {
    fn default() -> Self {
        Self {
            options: JobOptions::default(),
            labels: BTreeMap::new(),
            parameters: BTreeMap::new(),
            attempts: one(),
            retry: RetryPolicy::default(),
            priority: Priority::default(),
            deadline: None,
            batch: None,
            row: None,
            version: None,
            schedule: None,
            slot: None,
            requeued_from: None,
            resume: None,
        }
    }
}

/// A halted job gone on with: on the desktop whose application holds its
/// half-done task, by the worker whose store holds its run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumeSpec {
    /// The worker that ran the halted job: no other may take this one.
    pub worker: String,
    /// That worker's run of the job, continued as one run.
    pub run: String,
    /// The step to go on from, counted from 1, as `reprise resume --from`
    /// (at most the halted step); `None`: the halted step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<usize>,
}

/// `POST /api/jobs/{id}/resume`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumeRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<usize>,
}

/// A job's state. The last seven are final.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    /// In its pool's stream, waiting for a worker.
    Queued,
    /// A worker has it and injected nothing yet.
    Assigned,
    /// Its worker is injecting input.
    Running,
    /// It failed at a step and waits for its next attempt.
    Retrying,
    /// Every step done and verified.
    Completed,
    /// Every step done, some effects could not be checked.
    Unverified,
    /// It failed (at a step, or a step passed over), attempts exhausted.
    Failed,
    /// Stopped mid-task on its desktop (the abort keys, the worker stopped).
    Aborted,
    /// Its worker died after injecting input: it may be half done.
    Abandoned,
    Cancelled,
    /// Its deadline passed.
    Expired,
}

impl JobState {
    pub const ALL: [JobState; 11] = [
        JobState::Queued,
        JobState::Assigned,
        JobState::Running,
        JobState::Retrying,
        JobState::Completed,
        JobState::Unverified,
        JobState::Failed,
        JobState::Aborted,
        JobState::Abandoned,
        JobState::Cancelled,
        JobState::Expired,
    ];

    pub fn is_final(self) -> bool {
        !matches!(
            self,
            JobState::Queued | JobState::Assigned | JobState::Running | JobState::Retrying
        )
    }

    /// Ended at a step of its replay (failed there, aborted, or its worker
    /// stopped): its run may be gone on with (`jobs resume`).
    pub fn halted_at_a_step(self) -> bool {
        matches!(
            self,
            JobState::Failed | JobState::Aborted | JobState::Abandoned
        )
    }

    /// Ended without doing its task, and not by a user's cancel: a dead
    /// letter until it is requeued or discarded.
    pub fn is_dead(self) -> bool {
        matches!(
            self,
            JobState::Failed | JobState::Aborted | JobState::Abandoned | JobState::Expired
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Assigned => "assigned",
            JobState::Running => "running",
            JobState::Retrying => "retrying",
            JobState::Completed => "completed",
            JobState::Unverified => "unverified",
            JobState::Failed => "failed",
            JobState::Aborted => "aborted",
            JobState::Abandoned => "abandoned",
            JobState::Cancelled => "cancelled",
            JobState::Expired => "expired",
        }
    }

    pub fn parse(text: &str) -> Option<JobState> {
        JobState::ALL
            .into_iter()
            .find(|state| state.as_str() == text)
    }
}

/// A job as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub id: String,
    pub recording_id: String,
    pub pool: String,
    pub spec: JobSpec,
    pub state: JobState,
    /// Attempts started so far.
    pub attempt: u32,
    pub worker: Option<String>,
    /// Whether the current attempt has injected input.
    pub injected: bool,
    pub cancel_requested: bool,
    /// Why it ended as it did, in words.
    pub reason: Option<String>,
    /// The replay's outcome (as `replay --json` prints it).
    pub outcome: Option<serde_json::Value>,
    /// The worker's replay run.
    pub run_id: Option<String>,
    pub created: String,
    /// When its current attempt was given to its worker (a job taken over
    /// or retried starts again).
    pub started: Option<String>,
    pub ended: Option<String>,
    /// The stream entry carrying it (internal: which delivery is current).
    #[serde(skip)]
    pub entry: Option<String>,
    #[serde(skip)]
    pub retry_at: Option<String>,
    /// What a user made of it as a dead letter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<Settled>,
}

impl Job {
    /// A job as submitted: queued, no attempt yet.
    pub fn queued(
        id: String,
        recording_id: String,
        pool: String,
        spec: JobSpec,
        created: String,
    ) -> Job {
        Job {
            id,
            recording_id,
            pool,
            spec,
            state: JobState::Queued,
            attempt: 0,
            worker: None,
            injected: false,
            cancel_requested: false,
            reason: None,
            outcome: None,
            run_id: None,
            created,
            started: None,
            ended: None,
            entry: None,
            retry_at: None,
            settled: None,
        }
    }

    /// The queue lane it waits in: its pool's, at its priority.
    pub fn lane(&self) -> String {
        self.spec.priority.lane(&self.pool)
    }
}

/// What became of a dead letter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "as")]
pub enum Settled {
    /// Submitted again as the job `job`.
    Requeued { job: String },
    /// Set aside: it leaves the dead letters, its record stays.
    Discarded,
}

/// One event of a job: a state change or a finished step. Its id orders
/// all events of the fleet and is the SSE stream's `id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobEvent {
    pub id: i64,
    pub job: String,
    pub kind: EventKind,
    pub attempt: u32,
    /// A [`StateChange`] for a `state` event; for a `step` event, the
    /// step as `replay --json` prints it.
    pub data: serde_json::Value,
    pub at: String,
}

/// A job's change of state, as the data of its `state` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateChange {
    pub state: JobState,
    /// Why, in words.
    pub reason: Option<String>,
    /// The worker that took or left the job.
    pub worker: Option<String>,
}

impl JobEvent {
    /// The change of state a `state` event tells; `None` for a step (or
    /// data that is not a change of state).
    pub fn state_change(&self) -> Option<StateChange> {
        if self.kind != EventKind::State {
            return None;
        }
        serde_json::from_value(self.data.clone()).ok()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    State,
    Step,
}

/// A line of the server's audit log: who did what, when, from where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    pub id: i64,
    pub at: String,
    /// The name of the caller's token (`unknown` for none that matched).
    pub who: String,
    /// user, viewer or worker; empty for an unknown caller.
    pub role: String,
    /// The request: its method and path.
    pub action: String,
    /// The answer's HTTP status.
    pub status: u16,
    /// The caller's address.
    pub from: String,
}

/// A worker as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Worker {
    pub id: String,
    pub host: String,
    pub pool: String,
    pub labels: BTreeMap<String, String>,
    /// `idle`, `busy`, `silent` (no heartbeat within the lease) or `gone`.
    pub state: String,
    pub job: Option<String>,
    pub registered: String,
    pub last_heartbeat: String,
    /// When it last sent the screen of a step it replayed (the frame its
    /// run keeps, password fields masked), if it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_at: Option<String>,
}

/// The most bytes a worker's screen (a PNG thumbnail) may take.
pub const MAX_SCREEN_BYTES: usize = 512 * 1024;

/// `POST /api/workers`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Register {
    pub host: String,
    pub pool: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// The id this desktop was given before (kept beside its store): a
    /// worker restarted on it is the same worker, and the jobs waiting for
    /// it (a halted job resumed on its desktop) are still its.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// A job handed to a worker by `pull`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Assignment {
    pub job: Job,
    /// The lease: heart-beat well within it.
    pub lease_seconds: f64,
}

/// What a worker says about the job it holds (heartbeat, begin, step, finish).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub worker: String,
    pub attempt: u32,
    #[serde(flatten)]
    pub what: ReportKind,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ReportKind {
    /// Still at it.
    Heartbeat,
    /// About to inject the first input: answered `go` or `stop`.
    Begin,
    /// A finished step (as `replay --json` prints it).
    Step {
        step: u32,
        record: serde_json::Value,
        /// Seconds the step took.
        seconds: f64,
        /// When it ended, by the worker's clock (RFC 3339): a report sent
        /// late (the server was away) still tells when the step was made.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<String>,
    },
    /// The attempt's end.
    Finish {
        end: Finish,
        reason: String,
        outcome: Option<serde_json::Value>,
        run_id: Option<String>,
        /// The run's HTML report.
        report: Option<String>,
    },
}

/// How an attempt ended, as the worker saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Finish {
    Completed,
    Unverified,
    Failed,
    /// Stopped on the desktop (abort keys, the worker stopped).
    Aborted,
    /// Stopped because the server said so (cancelled, expired, not yours).
    Stopped,
    /// Nothing was injected and the worker gives the job back (it is
    /// stopping, or it could not prepare the replay on its desktop).
    Released,
    /// The worker stopped itself mid-job: it lost the server for most of
    /// its lease (fenced: it stops injecting before the server may give
    /// the job to another), or it was told to stop (SIGTERM). The task
    /// may be half done: run again only where `retry = "restart"` allows.
    Interrupted,
}

/// The server's answer to a report: go on, or stop (and why).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub go: bool,
    pub reason: Option<String>,
    /// The job's state after the report.
    #[serde(default)]
    pub state: Option<JobState>,
}

/// An API error's body.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApiError {
    pub error: ApiErrorBody,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApiErrorBody {
    pub code: String,
    pub message: String,
}

/// Whether `id` is a worker id as the server gives them: 1 to 64 ASCII
/// letters, digits or '-'.
pub fn is_worker_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Whether a worker with `has` may take a job that needs `needs`.
pub fn labels_match(needs: &BTreeMap<String, String>, has: &BTreeMap<String, String>) -> bool {
    needs.iter().all(|(key, value)| has.get(key) == Some(value))
}

#[cfg(test)]
mod tests;
