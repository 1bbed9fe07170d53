//! The fleet's durable record in the server's store: jobs, their events
//! (state changes and steps, ordered by id) and workers.

use std::collections::BTreeMap;

use rusqlite::{OptionalExtension, Row, params};

use super::{Result, Store, StoreError};
use reprise_models::fleet::{EventKind, Job, JobEvent, JobSpec, JobState, Settled};

/// An event to write with a job's change, in the same transaction.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub kind: EventKind,
    /// A step's number: a step reported twice (a retried report) is
    /// stored once.
    pub step: Option<u32>,
    /// The attempt it belongs to where not the job's current one (a step
    /// reported late).
    pub attempt: Option<u32>,
    pub data: serde_json::Value,
    /// When it happened, where not when it is stored (a step the worker
    /// reported late).
    pub at: Option<String>,
}

/// A worker's row.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerRow {
    pub id: String,
    pub host: String,
    pub pool: String,
    pub labels: BTreeMap<String, String>,
    pub job: Option<String>,
    pub registered: String,
    pub heartbeat: String,
    pub gone: bool,
}

const JOB_COLUMNS: &str = "id, recording_id, pool, spec, state, attempt, worker, entry, injected, \
     cancel, retry_at, outcome, reason, run_id, created, started, ended, requeued_as, discarded";

fn bad(id: &str, reason: impl std::fmt::Display) -> StoreError {
    StoreError::BadRow {
        id: id.to_owned(),
        reason: reason.to_string(),
    }
}

fn job_of(row: &Row<'_>) -> rusqlite::Result<(Job, String, String, Option<String>)> {
    let id: String = row.get(0)?;
    let spec: String = row.get(3)?;
    let state: String = row.get(4)?;
    let outcome: Option<String> = row.get(11)?;
    let job = Job {
        id,
        recording_id: row.get(1)?,
        pool: row.get(2)?,
        // Read from its JSON by `finish_job`.
        spec: JobSpec::default(),
        state: JobState::Queued,
        attempt: row.get(5)?,
        worker: row.get(6)?,
        entry: row.get(7)?,
        injected: row.get(8)?,
        cancel_requested: row.get(9)?,
        retry_at: row.get(10)?,
        outcome: None,
        reason: row.get(12)?,
        run_id: row.get(13)?,
        created: row.get(14)?,
        started: row.get(15)?,
        ended: row.get(16)?,
        settled: match (row.get::<_, Option<String>>(17)?, row.get::<_, bool>(18)?) {
            (Some(job), _) => Some(Settled::Requeued { job }),
            (None, true) => Some(Settled::Discarded),
            (None, false) => None,
        },
    };
    Ok((job, spec, state, outcome))
}

fn finish_job(parts: (Job, String, String, Option<String>)) -> Result<Job> {
    let (mut job, spec, state, outcome) = parts;
    job.spec = serde_json::from_str(&spec).map_err(|err| bad(&job.id, err))?;
    job.state =
        JobState::parse(&state).ok_or_else(|| bad(&job.id, format!("unknown state {state:?}")))?;
    job.outcome = outcome
        .map(|text| serde_json::from_str(&text))
        .transpose()
        .map_err(|err| bad(&job.id, err))?;
    Ok(job)
}

impl Store {
    pub fn insert_job(&mut self, job: &Job, event: &NewEvent) -> Result<i64> {
        let tx = self.conn.transaction()?;
        let id = insert_job_row(&tx, job, event)?;
        tx.commit()?;
        Ok(id)
    }

    /// Writes a job's changing fields, and its event, in one transaction.
    /// Returns the event's id, or `None` for a step already stored.
    pub fn update_job(&mut self, job: &Job, event: Option<&NewEvent>) -> Result<Option<i64>> {
        let tx = self.conn.transaction()?;
        write_changing(&tx, job)?;
        let id = match event {
            Some(event) => insert_event(&tx, job, event)?,
            None => None,
        };
        tx.commit()?;
        Ok(id)
    }

    pub fn job(&self, id: &str) -> Result<Option<Job>> {
        let parts = self
            .conn
            .query_row(
                &format!("SELECT {JOB_COLUMNS} FROM fleet_jobs WHERE id = ?1"),
                params![id],
                job_of,
            )
            .optional()?;
        parts.map(finish_job).transpose()
    }

    /// Jobs, newest first, in one state or all.
    pub fn jobs(&self, state: Option<JobState>, limit: usize) -> Result<Vec<Job>> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {JOB_COLUMNS} FROM fleet_jobs WHERE ?1 IS NULL OR state = ?1
             ORDER BY created DESC, rowid DESC LIMIT ?2"
        ))?;
        let rows = statement
            .query_map(params![state.map(JobState::as_str), limit as i64], job_of)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter().map(finish_job).collect()
    }

    /// The jobs that wait on time (the server's tick): every retrying job,
    /// and the queued ones whose deadline has passed by `now` or that have
    /// no queue entry; each found by its index (named: with few rows, the
    /// planner would take the state's index and read every queued job).
    pub fn jobs_waiting_on_time(&self, now: &str) -> Result<Vec<Job>> {
        let mut statement = self.conn.prepare(&waiting_on_time())?;
        let rows = statement
            .query_map(params![now], job_of)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter().map(finish_job).collect()
    }

    /// The dead letters (jobs that ended failed, aborted, abandoned or
    /// expired, neither requeued nor discarded), last ended first.
    pub fn dead_jobs(&self, limit: usize) -> Result<Vec<Job>> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {JOB_COLUMNS} FROM fleet_jobs
             WHERE state IN ('failed', 'aborted', 'abandoned', 'expired')
                 AND requeued_as IS NULL AND discarded = 0
             ORDER BY ended DESC, rowid DESC LIMIT ?1"
        ))?;
        let rows = statement
            .query_map(params![limit as i64], job_of)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter().map(finish_job).collect()
    }

    /// Settles a final job not settled before: requeued as `new` (stored
    /// in the same transaction) or discarded. Returns whether it was.
    pub fn settle_job(&mut self, id: &str, new: Option<(&Job, &NewEvent)>) -> Result<bool> {
        let tx = self.conn.transaction()?;
        let changed = tx.execute(
            "UPDATE fleet_jobs SET requeued_as = ?2, discarded = ?3
             WHERE id = ?1 AND requeued_as IS NULL AND discarded = 0
                 AND state NOT IN ('queued', 'assigned', 'running', 'retrying')",
            params![id, new.map(|(job, _)| &job.id), new.is_none()],
        )?;
        if changed == 0 {
            return Ok(false);
        }
        if let Some((job, event)) = new {
            insert_job_row(&tx, job, event)?;
        }
        tx.commit()?;
        Ok(true)
    }

    /// Retention: removes the jobs that ended before `before` (a stamp as
    /// the fleet writes it) with their events and reports, and the workers
    /// not heard from since then. Returns (jobs, workers) removed.
    pub fn prune_fleet(&mut self, before: &str) -> Result<(usize, usize)> {
        let tx = self.conn.transaction()?;
        let ended = "SELECT id FROM fleet_jobs
             WHERE ended IS NOT NULL AND ended < ?1
                 AND state NOT IN ('queued', 'assigned', 'running', 'retrying')";
        tx.execute(
            &format!("DELETE FROM fleet_events WHERE job_id IN ({ended})"),
            params![before],
        )?;
        let jobs = tx.execute(
            &format!("DELETE FROM fleet_jobs WHERE id IN ({ended})"),
            params![before],
        )?;
        let workers = tx.execute(
            "DELETE FROM fleet_workers WHERE heartbeat < ?1 AND job IS NULL",
            params![before],
        )?;
        tx.commit()?;
        Ok((jobs, workers))
    }

    /// How many jobs are in each (pool, state).
    pub fn job_counts(&self) -> Result<Vec<(String, JobState, u64)>> {
        let mut statement = self
            .conn
            .prepare("SELECT pool, state, COUNT(*) FROM fleet_jobs GROUP BY pool, state")?;
        let rows = statement
            .query_map([], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, i64>(2)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows
            .into_iter()
            .filter_map(|(pool, state, n)| Some((pool, JobState::parse(&state)?, n as u64)))
            .collect())
    }

    pub fn job_report(&self, id: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT report FROM fleet_jobs WHERE id = ?1",
                params![id],
                |row| row.get(0),
            )
            .optional()?
            .flatten())
    }

    pub fn set_job_report(&mut self, id: &str, report: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE fleet_jobs SET report = ?2 WHERE id = ?1",
            params![id, report],
        )?;
        Ok(())
    }

    /// A job's events after `after` (an event id), in order, at most `limit`.
    pub fn job_events(&self, job: &str, after: i64, limit: usize) -> Result<Vec<JobEvent>> {
        self.select_events("job_id = ?1 AND id > ?2", params![job, after], limit)
    }

    /// Every job's events after `after`, in order, at most `limit`.
    pub fn events_after(&self, after: i64, limit: usize) -> Result<Vec<JobEvent>> {
        self.select_events("id > ?1", params![after], limit)
    }

    /// How many steps each attempt of each job has reported.
    pub fn step_counts(&self) -> Result<std::collections::HashMap<(String, u32), u32>> {
        let mut statement = self.conn.prepare(
            "SELECT job_id, attempt, COUNT(*) FROM fleet_events WHERE kind = 'step'
             GROUP BY job_id, attempt",
        )?;
        let rows = statement
            .query_map([], |row| Ok(((row.get(0)?, row.get(1)?), row.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// The newest event's id (0 with none).
    pub fn last_event_id(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("SELECT COALESCE(MAX(id), 0) FROM fleet_events", [], |row| {
                row.get(0)
            })?)
    }

    fn select_events(
        &self,
        filter: &str,
        values: &[&dyn rusqlite::ToSql],
        limit: usize,
    ) -> Result<Vec<JobEvent>> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT id, job_id, kind, attempt, data, at FROM fleet_events
             WHERE {filter} ORDER BY id LIMIT {limit}"
        ))?;
        let rows = statement
            .query_map(values, |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, u32>(3)?,
                    row.get::<_, String>(4)?,
                    row.get::<_, String>(5)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter()
            .map(|(id, job, kind, attempt, data, at)| {
                let kind = match kind.as_str() {
                    "state" => EventKind::State,
                    "step" => EventKind::Step,
                    other => return Err(bad(&job, format!("unknown event kind {other:?}"))),
                };
                let data = serde_json::from_str(&data).map_err(|err| bad(&job, err))?;
                Ok(JobEvent {
                    id,
                    job,
                    kind,
                    attempt,
                    data,
                    at,
                })
            })
            .collect()
    }

    pub fn upsert_worker(&mut self, worker: &WorkerRow) -> Result<()> {
        self.conn.execute(
            "INSERT INTO fleet_workers (id, host, pool, labels, job, registered, heartbeat, gone)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT(id) DO UPDATE SET host = ?2, pool = ?3, labels = ?4, job = ?5,
                 heartbeat = ?7, gone = ?8",
            params![
                worker.id,
                worker.host,
                worker.pool,
                serde_json::to_string(&worker.labels).expect("labels serialize"),
                worker.job,
                worker.registered,
                worker.heartbeat,
                worker.gone,
            ],
        )?;
        Ok(())
    }

    /// Forgets worker `id`; false when the store had no such worker.
    pub fn remove_worker(&mut self, id: &str) -> Result<bool> {
        Ok(self
            .conn
            .execute("DELETE FROM fleet_workers WHERE id = ?1", params![id])?
            > 0)
    }

    pub fn worker(&self, id: &str) -> Result<Option<WorkerRow>> {
        let raw = self
            .conn
            .query_row(
                &format!("SELECT {WORKER_COLUMNS} FROM fleet_workers WHERE id = ?1"),
                params![id],
                raw_worker,
            )
            .optional()?;
        raw.map(finish_worker).transpose()
    }

    pub fn workers(&self) -> Result<Vec<WorkerRow>> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {WORKER_COLUMNS} FROM fleet_workers ORDER BY registered, id"
        ))?;
        let rows = statement
            .query_map([], raw_worker)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter().map(finish_worker).collect()
    }

    /// A sign of life from a worker: its heartbeat is now, and it is not
    /// gone. Returns whether the worker is known.
    pub fn touch_worker(&mut self, id: &str, now: &str) -> Result<bool> {
        let changed = self.conn.execute(
            "UPDATE fleet_workers SET heartbeat = ?2, gone = 0 WHERE id = ?1",
            params![id, now],
        )?;
        Ok(changed == 1)
    }
}

const WORKER_COLUMNS: &str = "id, host, pool, labels, job, registered, heartbeat, gone";

type RawWorker = (
    String,
    String,
    String,
    String,
    Option<String>,
    String,
    String,
    bool,
);

fn raw_worker(row: &Row<'_>) -> rusqlite::Result<RawWorker> {
    RawWorker::try_from(row)
}

fn finish_worker(raw: RawWorker) -> Result<WorkerRow> {
    let (id, host, pool, labels, job, registered, heartbeat, gone) = raw;
    let labels = serde_json::from_str(&labels).map_err(|err| bad(&id, err))?;
    Ok(WorkerRow {
        id,
        host,
        pool,
        labels,
        job,
        registered,
        heartbeat,
        gone,
    })
}

/// The tick's query ([`Store::jobs_waiting_on_time`]), `?1` the time.
pub(super) fn waiting_on_time() -> String {
    format!(
        "SELECT {JOB_COLUMNS} FROM fleet_jobs WHERE state = 'retrying'
         UNION
         SELECT {JOB_COLUMNS} FROM fleet_jobs INDEXED BY fleet_jobs_deadline
             WHERE state = 'queued' AND json_extract(spec, '$.deadline') <= ?1
         UNION
         SELECT {JOB_COLUMNS} FROM fleet_jobs INDEXED BY fleet_jobs_unqueued
             WHERE state = 'queued' AND entry IS NULL"
    )
}

/// A new job's row and its first event, in the caller's transaction.
pub(super) fn insert_job_row(
    tx: &rusqlite::Transaction<'_>,
    job: &Job,
    event: &NewEvent,
) -> Result<i64> {
    tx.execute(
        "INSERT INTO fleet_jobs (id, recording_id, pool, spec, state, created)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            job.id,
            job.recording_id,
            job.pool,
            serde_json::to_string(&job.spec).expect("specs serialize"),
            job.state.as_str(),
            job.created,
        ],
    )?;
    write_changing(tx, job)?;
    Ok(insert_event(tx, job, event)?.expect("a new job's first event is new"))
}

fn insert_event(
    tx: &rusqlite::Transaction<'_>,
    job: &Job,
    event: &NewEvent,
) -> Result<Option<i64>> {
    let kind = match event.kind {
        EventKind::State => "state",
        EventKind::Step => "step",
    };
    let changed = tx.execute(
        "INSERT OR IGNORE INTO fleet_events (job_id, kind, attempt, step, data, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            job.id,
            kind,
            event.attempt.unwrap_or(job.attempt),
            event.step,
            event.data.to_string(),
            event.at.clone().unwrap_or_else(
                || chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
            )
        ],
    )?;
    Ok((changed == 1).then(|| tx.last_insert_rowid()))
}

/// Writes the fields of a job that change as it goes.
fn write_changing(tx: &rusqlite::Transaction<'_>, job: &Job) -> Result<()> {
    tx.execute(
        "UPDATE fleet_jobs SET state = ?2, attempt = ?3, worker = ?4, entry = ?5,
             injected = ?6, cancel = ?7, retry_at = ?8, outcome = ?9, reason = ?10,
             run_id = ?11, started = ?12, ended = ?13
         WHERE id = ?1",
        params![
            job.id,
            job.state.as_str(),
            job.attempt,
            job.worker,
            job.entry,
            job.injected,
            job.cancel_requested,
            job.retry_at,
            job.outcome.as_ref().map(|outcome| outcome.to_string()),
            job.reason,
            job.run_id,
            job.started,
            job.ended,
        ],
    )?;
    Ok(())
}
