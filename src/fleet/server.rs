//! `reprise serve`: the fleet's HTTP API over the store (the durable record
//! of every job, step and report) and the queue (Redis Streams).
//!
//! Every decision about a job is taken here, one at a time (the `decide`
//! lock), from the store: which delivery of a job is current (its `entry`),
//! whether a reclaimed job may run again (nothing was injected, or it was
//! submitted with `retry = "restart"`), when a failed one is retried. A
//! stream entry is acknowledged only after what it led to is stored.

mod audit;
mod auth;
mod console;
mod dead;
mod events;
mod jobs;
mod listen;
mod metrics;
mod reconcile;
mod retention;
mod schedules;
mod workers;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast;

use super::queue::{Entry, Queue};
use super::rules::{self, Effect, Note, Reply, Taker};
use super::{
    Assignment, EventKind, Job, JobSpec, JobState, Register, Report, StateChange, SubmitRequest,
    Worker,
};
use crate::store::{NewEvent, Store, StoreError, WorkerRow};
use metrics::Metrics;
use workers::ticker;

/// `reprise serve`'s settings.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: SocketAddr,
    pub redis: String,
    pub store: PathBuf,
    /// A worker that has not heart-beaten for this long loses its job.
    pub lease: Duration,
    /// The largest request body (an uploaded recording, a report).
    pub max_upload: usize,
    /// How long jobs that ended, silent workers and schedules over are
    /// kept; `None`: for ever.
    pub keep: Option<Duration>,
    /// A file of named tokens (by their hashes) beside the environment's.
    pub tokens: Option<PathBuf>,
}

/// The most uploads read at once (a sixth waits for a 503's retry).
const MAX_UPLOADS: usize = 2;
/// The most labels a job or a worker may have, and a value's longest.
const MAX_LABELS: usize = 32;
const MAX_LABEL_VALUE: usize = 256;
/// The most rows one submission may have.
const MAX_ROWS: usize = 10_000;
/// The most attempts a job may ask for.
const MAX_ATTEMPTS: u32 = 20;
/// How often queued, retrying and expired jobs are looked at.
const TICK: Duration = Duration::from_millis(500);
struct Fleet {
    store: Mutex<Store>,
    queue: Queue,
    /// One decision about jobs at a time.
    decide: tokio::sync::Mutex<()>,
    tokens: auth::Tokens,
    /// The web console's logins.
    sessions: auth::Sessions,
    lease: Duration,
    started: Instant,
    /// A job's id whenever it has a new event.
    events: broadcast::Sender<String>,
    metrics: Mutex<Metrics>,
    stopping: tokio::sync::watch::Receiver<bool>,
    /// Uploads being read and checked at once (each may be large).
    uploads: Arc<tokio::sync::Semaphore>,
    max_upload: usize,
    keep: Option<Duration>,
    /// Each worker's last screen (PNG) and when it came; kept in memory.
    screens: Mutex<std::collections::HashMap<String, (Bytes, String)>>,
}

type Shared = Arc<Fleet>;

/// An API error: a status, a code and a message, as JSON.
#[derive(Debug)]
pub struct Fail {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl Fail {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Fail {
        Fail {
            status,
            code,
            message: message.into(),
        }
    }

    fn bad(message: impl Into<String>) -> Fail {
        Fail::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    fn not_found(message: impl Into<String>) -> Fail {
        Fail::new(StatusCode::NOT_FOUND, "not_found", message)
    }
}

impl IntoResponse for Fail {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.code, "message": self.message}});
        (self.status, axum::Json(body)).into_response()
    }
}

impl From<StoreError> for Fail {
    fn from(err: StoreError) -> Fail {
        match err {
            StoreError::NotFound(_) | StoreError::Ambiguous { .. } => {
                Fail::new(StatusCode::NOT_FOUND, "unknown_recording", err.to_string())
            }
            err => {
                tracing::error!("the store: {err}");
                Fail::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "store",
                    "the server's store failed (see its log)",
                )
            }
        }
    }
}

impl From<super::queue::QueueError> for Fail {
    fn from(err: super::queue::QueueError) -> Fail {
        tracing::warn!("the queue: {err}");
        Fail::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "queue_unavailable",
            "the queue (Redis) does not answer; try again",
        )
    }
}

type ApiResult<T> = Result<T, Fail>;

impl Fleet {
    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        // A handler that panicked while holding the store left it as SQLite
        // keeps it: consistent (each change is one transaction).
        self.store
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Worker `id`'s last screen and when it came.
    fn screen_of(&self, id: &str) -> Option<(Bytes, String)> {
        self.screens
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .get(id)
            .cloned()
    }

    fn metrics(&self) -> std::sync::MutexGuard<'_, Metrics> {
        self.metrics
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Stores a job's change (and its event), and tells the watchers.
    fn save(&self, job: &Job, event: Option<NewEvent>) -> ApiResult<Option<i64>> {
        let id = self.store().update_job(job, event.as_ref())?;
        if id.is_some() {
            let _ = self.events.send(job.id.clone());
        }
        Ok(id)
    }

    fn set_worker_job(&self, worker: &str, job: Option<&str>) -> ApiResult<()> {
        let mut store = self.store();
        if let Some(mut row) = store.worker(worker)?
            && row.job.as_deref() != job
        {
            row.job = job.map(str::to_owned);
            store.upsert_worker(&row)?;
        }
        Ok(())
    }

    /// How long a worker has been silent, if it still holds its lease.
    fn silent_for(&self, worker: &str) -> ApiResult<Option<Duration>> {
        let Some(row) = self.store().worker(worker)? else {
            return Ok(None);
        };
        Ok(rules::liveness(
            &row.heartbeat,
            row.gone,
            self.started.elapsed(),
            self.lease,
            chrono::Utc::now(),
        ))
    }

    /// Applies the rule for `event` to `job` and carries its effects out in
    /// order; the job is left as the rule made it.
    async fn apply(&self, job: &mut Job, event: rules::Event<'_>) -> ApiResult<Reply> {
        let decision = rules::decide(job.clone(), event, chrono::Utc::now());
        *job = decision.job;
        for effect in decision.effects {
            self.carry_out(job, effect).await?;
        }
        Ok(decision.reply)
    }

    /// One effect of a rule on `job`.
    async fn carry_out(&self, job: &mut Job, effect: Effect) -> ApiResult<()> {
        let lane = job.lane();
        match effect {
            Effect::Save { note, step_seconds } => {
                let new = self.save(job, note.map(new_event))?;
                if let (Some(_), Some(seconds)) = (new, step_seconds) {
                    self.metrics().step(seconds);
                }
            }
            Effect::KeepReport(html) => self.store().set_job_report(&job.id, &html)?,
            Effect::SetWorkerJob { worker, job } => self.set_worker_job(&worker, job.as_deref())?,
            Effect::Touch(worker) => {
                self.store().touch_worker(&worker, &super::now())?;
            }
            Effect::Enqueue => job.entry = Some(self.queue.add(&lane, &job.id).await?),
            Effect::Ack(entry) => self.queue.ack(&lane, &entry).await?,
            Effect::Delete(entry) => self.queue.delete(&lane, &entry).await.unwrap_or(()),
            Effect::Park(entry) => self.queue.park(&lane, &entry, self.lease).await?,
            Effect::Refresh { owner, entry } => {
                self.queue.refresh(&lane, &owner, &entry).await?;
            }
            Effect::GiveBack {
                owner,
                entry,
                silent,
            } => self.queue.give_back(&lane, &owner, &entry, silent).await?,
            Effect::DeadLetter(reason) => {
                self.queue.dead_letter(&job.pool, &job.id, &reason).await?
            }
            Effect::Observe(measure, value) => self.metrics().observe(measure, value),
            Effect::Count(counter) => self.metrics().count(counter),
        }
        Ok(())
    }
}

/// A line of a job's history as the store keeps it.
fn new_event(note: Note) -> NewEvent {
    match note {
        Note::State(change) => NewEvent {
            kind: EventKind::State,
            step: None,
            attempt: None,
            data: serde_json::to_value(change).expect("a state change serializes"),
            at: None,
        },
        Note::Step { step, record, at } => NewEvent {
            kind: EventKind::Step,
            step: Some(step),
            attempt: None,
            data: record,
            at,
        },
        Note::LateStep {
            attempt,
            worker,
            step,
            mut record,
            at,
        } => {
            tracing::warn!(
                "worker {worker} reported step {step} of attempt {attempt} after that attempt ended: kept in its history, refused as a report"
            );
            if let Some(fields) = record.as_object_mut() {
                fields.insert("late".into(), serde_json::Value::Bool(true));
            }
            NewEvent {
                kind: EventKind::Step,
                step: Some(step),
                attempt: Some(attempt),
                data: record,
                at,
            }
        }
    }
}

/// Runs the server until SIGINT or SIGTERM.
pub fn serve(options: ServeOptions) -> anyhow::Result<()> {
    let tokens = auth::Tokens::load(options.tokens.as_deref())?;
    let store = Store::open(&options.store)?;
    raise_open_files();
    // Two threads: a slow request (an upload being checked, a big list)
    // never holds up the workers' heartbeats.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("start the server's runtime")?;
    runtime.block_on(async move {
        let queue = Queue::connect(&options.redis).await?;
        queue
            .ping()
            .await
            .context("reach Redis (is redis-server running? --redis URL)")?;
        let (stop_tx, stopping) = tokio::sync::watch::channel(false);
        let fleet = Arc::new(Fleet {
            store: Mutex::new(store),
            queue,
            decide: Default::default(),
            tokens,
            sessions: Default::default(),
            lease: options.lease,
            started: Instant::now(),
            events: broadcast::channel(1024).0,
            metrics: Default::default(),
            stopping,
            uploads: Arc::new(tokio::sync::Semaphore::new(MAX_UPLOADS)),
            max_upload: options.max_upload,
            keep: options.keep,
            screens: Default::default(),
        });
        let listener = tokio::net::TcpListener::bind(options.listen)
            .await
            .with_context(|| format!("listen on {}", options.listen))?;
        let address = listener.local_addr()?;
        eprintln!(
            "reprise serve: listening on http://{address}, queue {}, store {}",
            super::queue::shown(&options.redis),
            options.store.display()
        );
        tokio::spawn(ticker(Arc::clone(&fleet)));
        let app = router(Arc::clone(&fleet), options.max_upload);
        tokio::spawn(async move {
            stop_signal().await;
            eprintln!("reprise serve: stopping");
            let _ = stop_tx.send(true);
        });
        let graceful = listen::serve(listener, app, fleet.stopping.clone());
        let mut stopped = fleet.stopping.clone();
        // Connections get 5 s to finish after the signal (an event
        // stream ends by itself; a stuck client does not hold the server).
        tokio::select! {
            served = graceful => served.context("serve HTTP")?,
            _ = async {
                let _ = stopped.changed().await;
                tokio::time::sleep(Duration::from_secs(5)).await;
            } => {}
        }
        Ok(())
    })
}

/// As many open descriptors as the system allows this process: each
/// connection holds one, and a server out of them answers no one.
fn raise_open_files() {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, getrlimit, setrlimit};
        let mut limit = getrlimit(Resource::Nofile);
        if limit.current < limit.maximum {
            limit.current = limit.maximum;
            if let Err(err) = setrlimit(Resource::Nofile, limit) {
                tracing::warn!("raise the open files' limit: {err}");
            }
        }
    }
}

async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

fn router(fleet: Shared, max_upload: usize) -> Router {
    let read = Router::new()
        .route("/api/recordings", get(jobs::recordings))
        .route("/api/jobs", get(jobs::list_jobs))
        .route("/api/jobs/{id}", get(jobs::show_job))
        .route("/api/dead", get(dead::list))
        .route("/api/events", get(events::all_events))
        .route("/api/jobs/{id}/events", get(events::events))
        .route("/api/jobs/{id}/report", get(jobs::report))
        .route("/api/workers", get(workers::workers))
        .route("/api/schedules", get(schedules::list))
        .route("/metrics", get(metrics::metrics))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&fleet),
            auth::reader,
        ));
    let user = Router::new()
        .route("/api/recordings", post(jobs::upload))
        .route("/api/jobs", post(jobs::submit))
        .route("/api/jobs/{id}/cancel", post(jobs::cancel))
        .route("/api/jobs/{id}/requeue", post(dead::requeue))
        .route("/api/jobs/{id}/resume", post(dead::resume))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&fleet),
            auth::user_only,
        ));
    let admin = Router::new()
        .route("/api/jobs/{id}/discard", post(dead::discard))
        .route("/api/audit", get(audit::list))
        .route(
            "/api/schedules/{id}",
            axum::routing::delete(schedules::remove),
        )
        .route("/api/workers/{id}", axum::routing::delete(workers::forget))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&fleet),
            auth::admin_only,
        ));
    let worker = Router::new()
        .route("/api/workers", post(workers::register))
        .route("/api/workers/{id}/pull", post(workers::pull))
        .route("/api/workers/{id}/leave", post(workers::leave))
        .route(
            "/api/workers/{id}/screen",
            axum::routing::put(workers::screen),
        )
        .route("/api/jobs/{id}/progress", post(workers::progress))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&fleet),
            auth::worker_only,
        ));
    let either = Router::new()
        .route("/api/recordings/{id}/export", get(jobs::export))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&fleet),
            auth::any_role,
        ));
    read.merge(user)
        .merge(admin)
        .merge(worker)
        .merge(either)
        .merge(console::routes())
        .fallback(|| async { Fail::not_found("no such endpoint") })
        .layer(middleware::from_fn_with_state(
            Arc::clone(&fleet),
            audit::audit,
        ))
        .layer(DefaultBodyLimit::max(max_upload))
        .layer(middleware::from_fn(listen::time_limit))
        .with_state(fleet)
}

fn too_large() -> Fail {
    Fail::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        "the request is larger than the server accepts (reprise serve --max-upload)",
    )
}

fn body_of(body: Result<Bytes, BytesRejection>) -> ApiResult<Bytes> {
    body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            too_large()
        } else {
            Fail::bad(format!("read the request: {rejection}"))
        }
    })
}

fn json_of<T: serde::de::DeserializeOwned>(body: &[u8]) -> ApiResult<T> {
    serde_json::from_slice(body)
        .map_err(|err| Fail::new(StatusCode::BAD_REQUEST, "bad_json", format!("{err}")))
}
