//! `reprise serve`: the fleet's HTTP API over the store (the durable record
//! of every job, step and report) and the queue (Redis Streams).
//!
//! Every decision about a job is taken here, one at a time (the `decide`
//! lock), from the store: which delivery of a job is current (its `entry`),
//! whether a reclaimed job may run again (nothing was injected, or it was
//! submitted with `retry = "restart"`), when a failed one is retried. A
//! stream entry is acknowledged only after what it led to is stored.

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
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast;

use super::queue::{Entry, Queue};
use super::{
    Answer, Assignment, EventKind, Finish, Job, JobSpec, JobState, Register, Report, ReportKind,
    SubmitRequest, Worker,
};
use crate::store::{NewEvent, Store, StoreError, WorkerRow};

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
}

/// The most rows one submission may have.
const MAX_ROWS: usize = 10_000;
/// The most attempts a job may ask for.
const MAX_ATTEMPTS: u32 = 20;
/// How often queued, retrying and expired jobs are looked at.
const TICK: Duration = Duration::from_millis(500);
/// Reclaims after a worker died, beyond the job's own attempts
/// (`retry = "restart"`): a task that kills every worker stops somewhere.
const MAX_EXTRA_RESTARTS: u32 = 3;

struct Fleet {
    store: Mutex<Store>,
    queue: Queue,
    /// One decision about jobs at a time.
    decide: tokio::sync::Mutex<()>,
    user_token: String,
    worker_token: String,
    lease: Duration,
    started: Instant,
    /// A job's id whenever it has a new event.
    events: broadcast::Sender<String>,
    metrics: Mutex<Metrics>,
    stopping: tokio::sync::watch::Receiver<bool>,
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

    /// Ends a job in a final state, with its reason.
    fn end(&self, job: &mut Job, state: JobState, reason: String) -> ApiResult<()> {
        job.state = state;
        job.reason = Some(reason.clone());
        job.ended = Some(super::now());
        if let Some(seconds) = seconds_between(job.started.as_deref(), job.ended.as_deref()) {
            self.metrics().job_seconds.observe(seconds);
        }
        self.save(
            job,
            Some(state_event(state, Some(&reason), job.worker.as_deref())),
        )?;
        if let Some(worker) = &job.worker {
            self.set_worker_job(worker, None)?;
        }
        Ok(())
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

    /// How long a worker has been silent, if it heart-beat within the
    /// lease (counting from this server's start: after a restart every
    /// worker gets a lease); `None` for one that lost its lease.
    fn silent_for(&self, worker: &str) -> ApiResult<Option<Duration>> {
        let Some(row) = self.store().worker(worker)? else {
            return Ok(None);
        };
        let since_beat = seconds_since(&row.heartbeat).unwrap_or(f64::INFINITY);
        let silent = since_beat
            .min(self.started.elapsed().as_secs_f64())
            .max(0.0);
        Ok((!row.gone && silent < self.lease.as_secs_f64())
            .then(|| Duration::from_secs_f64(silent)))
    }
}

fn state_event(state: JobState, reason: Option<&str>, worker: Option<&str>) -> NewEvent {
    NewEvent {
        kind: EventKind::State,
        step: None,
        data: json!({"state": state, "reason": reason, "worker": worker}),
    }
}

fn seconds_since(time: &str) -> Option<f64> {
    let then = chrono::DateTime::parse_from_rfc3339(time).ok()?;
    Some((chrono::Utc::now() - then.with_timezone(&chrono::Utc)).as_seconds_f64())
}

fn seconds_between(from: Option<&str>, to: Option<&str>) -> Option<f64> {
    let from = chrono::DateTime::parse_from_rfc3339(from?).ok()?;
    let to = chrono::DateTime::parse_from_rfc3339(to?).ok()?;
    Some((to - from).as_seconds_f64())
}

fn past(deadline: Option<&str>) -> bool {
    deadline
        .and_then(seconds_since)
        .is_some_and(|since| since >= 0.0)
}

/// Runs the server until SIGINT or SIGTERM.
pub fn serve(options: ServeOptions) -> anyhow::Result<()> {
    let user_token = token(super::USER_TOKEN_VAR)?;
    let worker_token = token(super::WORKER_TOKEN_VAR)?;
    if user_token == worker_token {
        anyhow::bail!(crate::settings::errors::UsageError(format!(
            "{} and {} must differ (the roles are told apart by their token)",
            super::USER_TOKEN_VAR,
            super::WORKER_TOKEN_VAR
        )));
    }
    let store = Store::open(&options.store)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
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
            user_token,
            worker_token,
            lease: options.lease,
            started: Instant::now(),
            events: broadcast::channel(1024).0,
            metrics: Default::default(),
            stopping,
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
        let mut stopped = fleet.stopping.clone();
        let graceful = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.changed().await;
            })
            .into_future();
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

fn token(variable: &str) -> anyhow::Result<String> {
    let value = std::env::var(variable).unwrap_or_default();
    if value.len() < super::MIN_TOKEN_LEN {
        anyhow::bail!(crate::settings::errors::UsageError(format!(
            "set {variable} to a token of at least {} characters (the server reads its tokens only from the environment)",
            super::MIN_TOKEN_LEN
        )));
    }
    Ok(value)
}

fn router(fleet: Shared, max_upload: usize) -> Router {
    let user = Router::new()
        .route("/api/recordings", post(upload).get(recordings))
        .route("/api/jobs", post(submit).get(list_jobs))
        .route("/api/jobs/{id}", get(show_job))
        .route("/api/jobs/{id}/cancel", post(cancel))
        .route("/api/jobs/{id}/events", get(events))
        .route("/api/jobs/{id}/report", get(report))
        .route("/api/workers", get(workers))
        .route("/metrics", get(metrics))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&fleet),
            user_only,
        ));
    let worker = Router::new()
        .route("/api/workers", post(register))
        .route("/api/workers/{id}/pull", post(pull))
        .route("/api/workers/{id}/leave", post(leave))
        .route("/api/jobs/{id}/progress", post(progress))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&fleet),
            worker_only,
        ));
    let either = Router::new()
        .route("/api/recordings/{id}/export", get(export))
        .route_layer(middleware::from_fn_with_state(Arc::clone(&fleet), any_role));
    user.merge(worker)
        .merge(either)
        .fallback(|| async { Fail::not_found("no such endpoint") })
        .layer(DefaultBodyLimit::max(max_upload))
        .with_state(fleet)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    User,
    Worker,
}

fn role_of(fleet: &Fleet, headers: &HeaderMap) -> Option<Role> {
    let given = headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")?
        .as_bytes();
    // Both compared, whichever matches, so the time says nothing of which.
    let user = super::same_token(given, fleet.user_token.as_bytes());
    let worker = super::same_token(given, fleet.worker_token.as_bytes());
    match (user, worker) {
        (true, _) => Some(Role::User),
        (_, true) => Some(Role::Worker),
        _ => None,
    }
}

async fn check_role(fleet: &Fleet, request: Request, next: Next, want: Option<Role>) -> Response {
    match (role_of(fleet, request.headers()), want) {
        (None, _) => {
            Fail::new(StatusCode::UNAUTHORIZED, "unauthorized", "unauthorized").into_response()
        }
        (Some(role), Some(want)) if role != want => {
            Fail::new(StatusCode::FORBIDDEN, "forbidden", "forbidden").into_response()
        }
        _ => next.run(request).await,
    }
}

async fn user_only(State(fleet): State<Shared>, request: Request, next: Next) -> Response {
    check_role(&fleet, request, next, Some(Role::User)).await
}

async fn worker_only(State(fleet): State<Shared>, request: Request, next: Next) -> Response {
    check_role(&fleet, request, next, Some(Role::Worker)).await
}

async fn any_role(State(fleet): State<Shared>, request: Request, next: Next) -> Response {
    check_role(&fleet, request, next, None).await
}

fn body_of(body: Result<Bytes, BytesRejection>) -> ApiResult<Bytes> {
    body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Fail::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_large",
                "the request is larger than the server accepts (reprise serve --max-upload)",
            )
        } else {
            Fail::bad(format!("read the request: {rejection}"))
        }
    })
}

fn json_of<T: serde::de::DeserializeOwned>(body: &[u8]) -> ApiResult<T> {
    serde_json::from_slice(body)
        .map_err(|err| Fail::new(StatusCode::BAD_REQUEST, "bad_json", format!("{err}")))
}

/// `POST /api/recordings`: an export file, checked whole as `import` does.
async fn upload(
    State(fleet): State<Shared>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let body = body_of(body)?;
    let archive = crate::store::archive::decode(&body).map_err(|err| {
        Fail::new(
            StatusCode::BAD_REQUEST,
            "bad_export",
            format!("not a recording export: {err}"),
        )
    })?;
    let recording = &archive.bundle.recording;
    let imported = fleet.store().import(&archive.bundle, &archive.images);
    let existing = match imported {
        Ok(()) => false,
        Err(StoreError::AlreadyExists(_)) => true,
        Err(err) => return Err(err.into()),
    };
    let status = if existing {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((
        status,
        axum::Json(json!({"id": recording.id, "name": recording.name, "existing": existing})),
    )
        .into_response())
}

async fn recordings(State(fleet): State<Shared>) -> ApiResult<Response> {
    let list = fleet.store().list_recordings()?;
    Ok(axum::Json(list).into_response())
}

async fn export(State(fleet): State<Shared>, Path(id): Path<String>) -> ApiResult<Response> {
    let bytes = {
        let store = fleet.store();
        let id = store.resolve(&id)?;
        crate::store::archive::export_bytes(&store, &id).map_err(|err| {
            tracing::error!("export {id}: {}", crate::settings::errors::one_line(&err));
            Fail::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "export",
                "the recording could not be exported (see the server's log)",
            )
        })?
    };
    Ok(([(header::CONTENT_TYPE, "application/zip")], bytes).into_response())
}

fn check_name(what: &str, name: &str) -> ApiResult<()> {
    let fine = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if fine {
        Ok(())
    } else {
        Err(Fail::bad(format!(
            "{what} {name:?} must be 1 to 64 letters, digits, '-', '_' or '.'"
        )))
    }
}

/// `POST /api/jobs`.
async fn submit(
    State(fleet): State<Shared>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let request: SubmitRequest = json_of(&body_of(body)?)?;
    check_name("the pool", &request.pool)?;
    for key in request.labels.keys() {
        check_name("the label", key)?;
    }
    let options = &request.options;
    if !(options.speed.is_finite() && options.speed > 0.0) {
        return Err(Fail::bad("options.speed must be a positive number"));
    }
    if !(1..=MAX_ATTEMPTS).contains(&request.attempts) {
        return Err(Fail::bad(format!(
            "attempts must be from 1 to {MAX_ATTEMPTS}"
        )));
    }
    let deadline = match request.deadline_seconds {
        None => None,
        Some(seconds) if seconds.is_finite() && seconds > 0.0 && seconds < 1e9 => Some(
            (chrono::Utc::now() + chrono::Duration::milliseconds((seconds * 1000.0) as i64))
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        ),
        Some(_) => return Err(Fail::bad("deadline_seconds must be a positive number")),
    };
    let rows = match &request.rows {
        Some(rows) if rows.is_empty() => return Err(Fail::bad("rows is empty")),
        Some(rows) if rows.len() > MAX_ROWS => {
            return Err(Fail::bad(format!("at most {MAX_ROWS} rows per submission")));
        }
        Some(rows) => rows.iter().map(Some).collect(),
        None => vec![None],
    };
    let (recording_id, parameters) = {
        let store = fleet.store();
        let id = store.resolve(&request.recording)?;
        let bundle = store.load(&id)?;
        (
            id,
            crate::replay::parameters_in(&bundle, &bundle.recording.parameter_names),
        )
    };
    let batch = request
        .rows
        .is_some()
        .then(|| uuid::Uuid::new_v4().to_string());
    let mut jobs = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        let mut values = request.set.clone();
        if let Some(row) = row {
            values.extend(row.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        check_parameters(&values, &parameters)?;
        jobs.push(Job {
            id: uuid::Uuid::new_v4().to_string(),
            recording_id: recording_id.clone(),
            pool: request.pool.clone(),
            spec: JobSpec {
                options: request.options.clone(),
                labels: request.labels.clone(),
                parameters: values,
                attempts: request.attempts,
                retry: request.retry,
                deadline: deadline.clone(),
                batch: batch.clone(),
                row: row.map(|_| index + 1),
            },
            state: JobState::Queued,
            attempt: 0,
            worker: None,
            injected: false,
            cancel_requested: false,
            reason: None,
            outcome: None,
            run_id: None,
            created: super::now(),
            started: None,
            ended: None,
            entry: None,
            retry_at: None,
        });
    }
    let _decide = fleet.decide.lock().await;
    for job in &mut jobs {
        fleet
            .store()
            .insert_job(job, &state_event(JobState::Queued, None, None))?;
        // A Redis that does not answer now leaves the job queued without an
        // entry; the ticker adds it when Redis is back.
        match fleet.queue.add(&job.pool, &job.id).await {
            Ok(entry) => {
                job.entry = Some(entry);
                fleet.save(job, None)?;
            }
            Err(err) => tracing::warn!("queue job {}: {err} (added later)", job.id),
        }
    }
    fleet.metrics().submitted += jobs.len() as u64;
    Ok((
        StatusCode::CREATED,
        axum::Json(json!({"batch": batch, "jobs": jobs})),
    )
        .into_response())
}

/// Every value names a text parameter of the recording; secrets never
/// travel through the fleet (a worker takes them from its environment).
fn check_parameters(
    values: &BTreeMap<String, String>,
    parameters: &[reprise_strategies::params::Parameter],
) -> ApiResult<()> {
    use reprise_strategies::params::ParameterKind;
    for name in values.keys() {
        match parameters.iter().find(|p| &p.name == name) {
            Some(p) if p.kind == ParameterKind::Secret => {
                return Err(Fail::bad(format!(
                    "{name} is a secret: a worker takes it from its own environment (REPRISE_SECRET_{}), never through the fleet",
                    name.to_uppercase()
                )));
            }
            Some(_) => {}
            None => {
                let known: Vec<&str> = parameters.iter().map(|p| p.name.as_str()).collect();
                return Err(Fail::bad(format!(
                    "the recording has no parameter {name:?}; it has: {}",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                )));
            }
        }
    }
    Ok(())
}

#[derive(Debug, Deserialize)]
struct ListQuery {
    state: Option<String>,
    limit: Option<usize>,
}

async fn list_jobs(
    State(fleet): State<Shared>,
    Query(query): Query<ListQuery>,
) -> ApiResult<Response> {
    let state = match query.state.as_deref() {
        None => None,
        Some(text) => Some(
            JobState::parse(text).ok_or_else(|| Fail::bad(format!("unknown state {text:?}")))?,
        ),
    };
    let jobs = fleet
        .store()
        .jobs(state, query.limit.unwrap_or(1000).min(10_000))?;
    Ok(axum::Json(jobs).into_response())
}

fn job_or_404(fleet: &Fleet, id: &str) -> ApiResult<Job> {
    fleet
        .store()
        .job(id)?
        .ok_or_else(|| Fail::not_found(format!("no job {id:?}")))
}

async fn show_job(State(fleet): State<Shared>, Path(id): Path<String>) -> ApiResult<Response> {
    let job = job_or_404(&fleet, &id)?;
    let events = fleet.store().job_events(&id, 0, 100_000)?;
    Ok(axum::Json(json!({"job": job, "events": events})).into_response())
}

async fn report(State(fleet): State<Shared>, Path(id): Path<String>) -> ApiResult<Response> {
    job_or_404(&fleet, &id)?;
    let html = fleet
        .store()
        .job_report(&id)?
        .ok_or_else(|| Fail::not_found(format!("job {id} has no report yet")))?;
    Ok(([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response())
}

/// `POST /api/jobs/{id}/cancel`: a queued job ends at once; a running one
/// is told at its next step or heartbeat.
async fn cancel(State(fleet): State<Shared>, Path(id): Path<String>) -> ApiResult<Response> {
    let _decide = fleet.decide.lock().await;
    let mut job = job_or_404(&fleet, &id)?;
    if job.state.is_final() {
        return Err(Fail::new(
            StatusCode::CONFLICT,
            "final",
            format!("job {id} already ended {}", job.state.as_str()),
        ));
    }
    job.cancel_requested = true;
    match job.state {
        JobState::Queued | JobState::Retrying => {
            if let Some(entry) = job.entry.clone() {
                fleet.queue.delete(&job.pool, &entry).await.ok();
            }
            fleet.end(
                &mut job,
                JobState::Cancelled,
                "cancelled while queued".into(),
            )?;
        }
        _ => {
            fleet.save(&job, None)?;
        }
    }
    Ok(axum::Json(job).into_response())
}

async fn workers(State(fleet): State<Shared>) -> ApiResult<Response> {
    let rows = fleet.store().workers()?;
    let lease = fleet.lease.as_secs_f64();
    let list: Vec<Worker> = rows
        .into_iter()
        .map(|row| {
            let silent = seconds_since(&row.heartbeat).is_none_or(|since| since > lease);
            let state = match (row.gone, silent, &row.job) {
                (true, _, _) => "gone",
                (_, true, _) => "silent",
                (_, _, Some(_)) => "busy",
                _ => "idle",
            };
            Worker {
                state: state.to_owned(),
                id: row.id,
                host: row.host,
                pool: row.pool,
                labels: row.labels,
                job: row.job,
                registered: row.registered,
                last_heartbeat: row.heartbeat,
            }
        })
        .collect();
    Ok(axum::Json(list).into_response())
}

/// `POST /api/workers`: a worker says who it is; its id names its consumer.
async fn register(
    State(fleet): State<Shared>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let register: Register = json_of(&body_of(body)?)?;
    check_name("the pool", &register.pool)?;
    if register.host.is_empty() || register.host.len() > 255 {
        return Err(Fail::bad("host must be 1 to 255 characters"));
    }
    let id = format!(
        "{}-{}",
        register
            .host
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .take(40)
            .collect::<String>(),
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    );
    let now = super::now();
    fleet.store().upsert_worker(&WorkerRow {
        id: id.clone(),
        host: register.host,
        pool: register.pool,
        labels: register.labels,
        job: None,
        registered: now.clone(),
        heartbeat: now,
        gone: false,
    })?;
    Ok((
        StatusCode::CREATED,
        axum::Json(json!({"id": id, "lease_seconds": fleet.lease.as_secs_f64()})),
    )
        .into_response())
}

/// `POST /api/workers/{id}/leave`: a worker that stops says so.
async fn leave(State(fleet): State<Shared>, Path(worker): Path<String>) -> ApiResult<Response> {
    let row = fleet.store().worker(&worker)?;
    let mut row = row.ok_or_else(|| Fail::not_found(format!("no worker {worker:?}")))?;
    row.gone = true;
    fleet.store().upsert_worker(&row)?;
    Ok(axum::Json(json!({"id": worker, "state": "gone"})).into_response())
}

#[derive(Debug, Deserialize)]
struct PullQuery {
    /// Seconds to wait for a job (at most 30).
    wait: Option<f64>,
}

/// `POST /api/workers/{id}/pull`: the next job of the worker's pool whose
/// labels it has, waiting up to `wait` seconds; 204 when none came.
async fn pull(
    State(fleet): State<Shared>,
    Path(worker): Path<String>,
    Query(query): Query<PullQuery>,
) -> ApiResult<Response> {
    let wait = Duration::from_secs_f64(query.wait.unwrap_or(10.0).clamp(0.0, 30.0));
    let until = Instant::now() + wait;
    loop {
        {
            let _decide = fleet.decide.lock().await;
            if !fleet.store().touch_worker(&worker, &super::now())? {
                return Err(Fail::not_found(format!(
                    "no worker {worker:?}: register first"
                )));
            }
            let row = fleet
                .store()
                .worker(&worker)?
                .ok_or_else(|| Fail::not_found(format!("no worker {worker:?}: register first")))?;
            let stale = fleet
                .queue
                .claim_stale(&row.pool, &worker, fleet.lease, 10)
                .await?;
            for entry in stale {
                if let Some(job) = consider(&fleet, &row, entry, true).await? {
                    return Ok(assigned(&fleet, job));
                }
            }
            for entry in fleet.queue.read_new(&row.pool, &worker, 1).await? {
                if let Some(job) = consider(&fleet, &row, entry, false).await? {
                    return Ok(assigned(&fleet, job));
                }
            }
        }
        if Instant::now() >= until || *fleet.stopping.borrow() {
            return Ok(StatusCode::NO_CONTENT.into_response());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn assigned(fleet: &Fleet, job: Job) -> Response {
    axum::Json(Assignment {
        job,
        lease_seconds: fleet.lease.as_secs_f64(),
    })
    .into_response()
}

/// What a delivered entry leads to: a job for this worker, or nothing (the
/// entry was stale, the job ended, or it is not this worker's to take).
async fn consider(
    fleet: &Fleet,
    worker: &WorkerRow,
    entry: Entry,
    reclaimed: bool,
) -> ApiResult<Option<Job>> {
    let pool = worker.pool.as_str();
    let job = match &entry.job {
        Some(id) => fleet.store().job(id)?,
        None => None,
    };
    let Some(mut job) = job else {
        fleet.queue.ack(pool, &entry.id).await?;
        return Ok(None);
    };
    if job.entry.as_deref() != Some(entry.id.as_str()) || job.state.is_final() {
        // An older delivery of the job, or one that ended.
        fleet.queue.ack(pool, &entry.id).await?;
        return Ok(None);
    }
    match job.state {
        JobState::Queued => {
            if past(job.spec.deadline.as_deref()) {
                fleet.end(
                    &mut job,
                    JobState::Expired,
                    "its deadline passed while queued".into(),
                )?;
                fleet.queue.ack(pool, &entry.id).await?;
                return Ok(None);
            }
            if !super::labels_match(&job.spec.labels, &worker.labels) {
                fleet.queue.park(pool, &entry.id, fleet.lease).await?;
                return Ok(None);
            }
        }
        JobState::Assigned | JobState::Running => {
            let owner = job.worker.clone().unwrap_or_default();
            let alive = match owner == worker.id {
                true => None,
                false => fleet.silent_for(&owner)?,
            };
            if !reclaimed {
                fleet.queue.refresh(pool, &owner, &entry.id).await?;
                return Ok(None);
            }
            if let Some(silent) = alive {
                // Its worker is alive (it reported since its last heartbeat,
                // or this server restarted): the entry goes back to it, idle
                // since the worker's last sign of life, so the lease still
                // ends a lease after it.
                fleet
                    .queue
                    .give_back(pool, &owner, &entry.id, silent)
                    .await?;
                return Ok(None);
            }
            fleet.metrics().reclaims += 1;
            let restart = !job.injected
                || (job.spec.retry == super::RetryPolicy::Restart
                    && job.attempt < job.spec.attempts + MAX_EXTRA_RESTARTS);
            if !restart {
                let reason = format!(
                    "worker {owner} stopped answering after it had injected input: the task may be half done, so it is not run again (submit with retry=restart for tasks that are safe to redo)"
                );
                fleet.end(&mut job, JobState::Abandoned, reason.clone())?;
                fleet.queue.ack(pool, &entry.id).await?;
                fleet.queue.dead_letter(pool, &job.id, &reason).await?;
                return Ok(None);
            }
            fleet.set_worker_job(&owner, None)?;
            if !job.injected {
                // The attempt never began: it does not count.
                job.attempt = job.attempt.saturating_sub(1);
            }
        }
        JobState::Retrying => {
            fleet.queue.ack(pool, &entry.id).await?;
            return Ok(None);
        }
        _ => unreachable!("final states are handled above"),
    }
    if job.cancel_requested {
        fleet.end(&mut job, JobState::Cancelled, "cancelled".into())?;
        fleet.queue.ack(pool, &entry.id).await?;
        return Ok(None);
    }
    let reclaimed_from = job.worker.clone().filter(|_| reclaimed);
    job.attempt += 1;
    job.worker = Some(worker.id.clone());
    job.injected = false;
    job.state = JobState::Assigned;
    if job.started.is_none() {
        job.started = Some(super::now());
        if let Some(wait) = seconds_between(Some(&job.created), job.started.as_deref()) {
            fleet.metrics().wait_seconds.observe(wait);
        }
    }
    let reason = reclaimed_from.map(|from| format!("taken over from worker {from}"));
    fleet.save(
        &job,
        Some(state_event(
            JobState::Assigned,
            reason.as_deref(),
            Some(&worker.id),
        )),
    )?;
    fleet.set_worker_job(&worker.id, Some(&job.id))?;
    Ok(Some(job))
}

/// `POST /api/jobs/{id}/progress`: a worker's heartbeat, the start of
/// input, a step, or the end of an attempt.
async fn progress(
    State(fleet): State<Shared>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let report: Report = json_of(&body_of(body)?)?;
    let _decide = fleet.decide.lock().await;
    let mut job = job_or_404(&fleet, &id)?;
    let mine = job.worker.as_deref() == Some(report.worker.as_str())
        && job.attempt == report.attempt
        && matches!(job.state, JobState::Assigned | JobState::Running);
    if !mine {
        // A report of an attempt that is no longer current: the job was
        // taken over, or ended. Its steps are not this job's record.
        return Ok((
            StatusCode::CONFLICT,
            axum::Json(Answer {
                go: false,
                reason: Some(format!(
                    "job {id} is no longer this worker's attempt (it is {})",
                    job.state.as_str()
                )),
                state: Some(job.state),
            }),
        )
            .into_response());
    }
    // Any report is a sign of life.
    fleet.store().touch_worker(&report.worker, &super::now())?;
    let stop_reason = if job.cancel_requested {
        Some("cancelled".to_owned())
    } else if past(job.spec.deadline.as_deref()) {
        Some("its deadline passed".to_owned())
    } else {
        None
    };
    let state = job.state;
    let answer = |go: bool| Answer {
        go,
        reason: if go { None } else { stop_reason.clone() },
        state: Some(state),
    };
    match report.what {
        ReportKind::Heartbeat => {
            if let Some(entry) = &job.entry {
                fleet
                    .queue
                    .refresh(&job.pool, &report.worker, entry)
                    .await?;
            }
            Ok(axum::Json(answer(stop_reason.is_none())).into_response())
        }
        ReportKind::Begin => {
            if stop_reason.is_some() {
                return Ok(axum::Json(answer(false)).into_response());
            }
            job.injected = true;
            job.state = JobState::Running;
            fleet.save(
                &job,
                Some(state_event(JobState::Running, None, Some(&report.worker))),
            )?;
            Ok(axum::Json(Answer {
                go: true,
                reason: None,
                state: Some(JobState::Running),
            })
            .into_response())
        }
        ReportKind::Step {
            step,
            record,
            seconds,
        } => {
            let new = fleet.save(
                &job,
                Some(NewEvent {
                    kind: EventKind::Step,
                    step: Some(step),
                    data: record,
                }),
            )?;
            if new.is_some() {
                fleet.metrics().step_seconds.observe(seconds);
            }
            Ok(axum::Json(answer(stop_reason.is_none())).into_response())
        }
        ReportKind::Finish {
            end,
            reason,
            outcome,
            run_id,
            report: html,
        } => {
            job.outcome = outcome;
            job.run_id = run_id.or(job.run_id.take());
            if let Some(html) = &html {
                fleet.store().set_job_report(&job.id, html)?;
            }
            finish(&fleet, &mut job, end, reason, stop_reason).await?;
            Ok(axum::Json(Answer {
                go: false,
                reason: job.reason.clone(),
                state: Some(job.state),
            })
            .into_response())
        }
    }
}

/// An attempt's end: the job's next state.
async fn finish(
    fleet: &Fleet,
    job: &mut Job,
    end: Finish,
    reason: String,
    stop_reason: Option<String>,
) -> ApiResult<()> {
    let worker = job.worker.clone();
    let old_entry = job.entry.clone();
    match end {
        Finish::Completed => fleet.end(job, JobState::Completed, reason)?,
        Finish::Unverified => fleet.end(job, JobState::Unverified, reason)?,
        Finish::Failed if job.attempt < job.spec.attempts => {
            // Backoff: 1 s, 2 s, 4 s … at most a minute.
            let backoff = 2f64.powi(job.attempt as i32 - 1).min(60.0);
            job.state = JobState::Retrying;
            job.retry_at = Some(
                (chrono::Utc::now() + chrono::Duration::milliseconds((backoff * 1000.0) as i64))
                    .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            );
            job.reason = Some(reason.clone());
            fleet.metrics().retries += 1;
            fleet.save(
                job,
                Some(state_event(
                    JobState::Retrying,
                    Some(&format!(
                        "{reason}; attempt {} in {backoff:.0} s",
                        job.attempt + 1
                    )),
                    worker.as_deref(),
                )),
            )?;
            if let Some(worker) = &worker {
                fleet.set_worker_job(worker, None)?;
            }
            if let Some(entry) = &old_entry {
                fleet.queue.ack(&job.pool, entry).await?;
            }
        }
        Finish::Failed => {
            fleet.end(job, JobState::Failed, reason.clone())?;
            fleet.queue.dead_letter(&job.pool, &job.id, &reason).await?;
        }
        Finish::Aborted | Finish::Stopped => {
            let state = match (&stop_reason, job.cancel_requested) {
                (_, true) => JobState::Cancelled,
                (Some(_), false) => JobState::Expired,
                (None, false) => JobState::Aborted,
            };
            fleet.end(job, state, stop_reason.unwrap_or(reason))?;
        }
        Finish::Released if job.injected && job.spec.retry == super::RetryPolicy::Never => {
            fleet.end(
                job,
                JobState::Aborted,
                format!("{reason} (after input was injected: not run again)"),
            )?;
        }
        Finish::Released => {
            // Back in the queue for another worker: a new entry first, then
            // the job points at it, then the old one is acknowledged.
            let entry = fleet.queue.add(&job.pool, &job.id).await?;
            job.entry = Some(entry);
            if !job.injected {
                job.attempt = job.attempt.saturating_sub(1);
            }
            job.state = JobState::Queued;
            job.worker = None;
            job.injected = false;
            fleet.save(
                job,
                Some(state_event(
                    JobState::Queued,
                    Some(&reason),
                    worker.as_deref(),
                )),
            )?;
            if let Some(worker) = &worker {
                fleet.set_worker_job(worker, None)?;
            }
            if let Some(entry) = &old_entry {
                fleet.queue.ack(&job.pool, entry).await?;
            }
        }
    }
    // Acknowledged only now that the result is stored (a job put back or
    // retried has acknowledged its entry above).
    if job.state.is_final()
        && let Some(entry) = &old_entry
    {
        fleet.queue.ack(&job.pool, entry).await?;
    }
    Ok(())
}

/// Jobs that wait on time: retries due, entries Redis did not take, queued
/// jobs past their deadline.
async fn ticker(fleet: Shared) {
    let mut stopping = fleet.stopping.clone();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(TICK) => {}
            _ = stopping.changed() => return,
        }
        if let Err(err) = tick(&fleet).await {
            tracing::debug!("tick: {}", err.message);
        }
    }
}

async fn tick(fleet: &Fleet) -> ApiResult<()> {
    let _decide = fleet.decide.lock().await;
    let retrying = fleet.store().jobs(Some(JobState::Retrying), 10_000)?;
    let queued = fleet.store().jobs(Some(JobState::Queued), 10_000)?;
    for mut job in retrying {
        if past(job.spec.deadline.as_deref()) {
            fleet.end(&mut job, JobState::Expired, "its deadline passed".into())?;
            continue;
        }
        if !past(job.retry_at.as_deref()) {
            continue;
        }
        let entry = fleet.queue.add(&job.pool, &job.id).await?;
        job.entry = Some(entry);
        job.state = JobState::Queued;
        job.worker = None;
        job.injected = false;
        job.retry_at = None;
        fleet.save(
            &job,
            Some(state_event(JobState::Queued, Some("next attempt"), None)),
        )?;
    }
    for mut job in queued {
        if past(job.spec.deadline.as_deref()) {
            if let Some(entry) = job.entry.clone() {
                fleet.queue.delete(&job.pool, &entry).await.ok();
            }
            fleet.end(
                &mut job,
                JobState::Expired,
                "its deadline passed while queued".into(),
            )?;
        } else if job.entry.is_none() {
            job.entry = Some(fleet.queue.add(&job.pool, &job.id).await?);
            fleet.save(&job, None)?;
        }
    }
    Ok(())
}

#[derive(Debug, Deserialize)]
struct EventsQuery {
    after: Option<i64>,
}

/// `GET /api/jobs/{id}/events`: the job's events as Server-Sent Events,
/// from the start or after `Last-Event-ID` (or `?after=`), ending with the
/// job's final state.
async fn events(
    State(fleet): State<Shared>,
    Path(id): Path<String>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    job_or_404(&fleet, &id)?;
    let after = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.trim().parse::<i64>().ok())
        .or(query.after)
        .unwrap_or(0);
    struct Follow {
        fleet: Shared,
        job: String,
        last: i64,
        pending: std::collections::VecDeque<super::JobEvent>,
        news: broadcast::Receiver<String>,
        done: bool,
    }
    let follow = Follow {
        news: fleet.events.subscribe(),
        fleet,
        job: id,
        last: after,
        pending: Default::default(),
        done: false,
    };
    let stream = futures_util::stream::unfold(follow, |mut follow| async move {
        loop {
            if let Some(event) = follow.pending.pop_front() {
                follow.last = event.id;
                let name = match event.kind {
                    EventKind::State => "state",
                    EventKind::Step => "step",
                };
                let sse = Event::default()
                    .id(event.id.to_string())
                    .event(name)
                    .json_data(&event)
                    .unwrap_or_default();
                return Some((Ok::<_, std::convert::Infallible>(sse), follow));
            }
            if follow.done || *follow.fleet.stopping.borrow() {
                return None;
            }
            let (final_now, events) = {
                let store = follow.fleet.store();
                let job = store.job(&follow.job).ok().flatten();
                // The state is read before the events: a final state seen
                // here has its event among those read after it.
                let final_now = job.is_none_or(|job| job.state.is_final());
                let events = store
                    .job_events(&follow.job, follow.last, 100)
                    .unwrap_or_default();
                (final_now, events)
            };
            if !events.is_empty() {
                follow.pending.extend(events);
                continue;
            }
            if final_now {
                follow.done = true;
                continue;
            }
            let mut stopping = follow.fleet.stopping.clone();
            tokio::select! {
                _ = follow.news.recv() => {}
                _ = tokio::time::sleep(Duration::from_secs(5)) => {}
                _ = stopping.changed() => {}
            }
        }
    });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(10)))
        .into_response())
}

/// A Prometheus histogram.
#[derive(Debug, Clone)]
struct Histogram {
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

const BUCKETS: [f64; 13] = [
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0,
];

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; BUCKETS.len()],
            sum: 0.0,
            count: 0,
        }
    }
}

impl Histogram {
    fn observe(&mut self, value: f64) {
        if !value.is_finite() || value < 0.0 {
            return;
        }
        for (bound, count) in BUCKETS.iter().zip(&mut self.counts) {
            if value <= *bound {
                *count += 1;
            }
        }
        self.sum += value;
        self.count += 1;
    }

    fn write(&self, out: &mut String, name: &str, help: &str) {
        use std::fmt::Write as _;
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        for (bound, count) in BUCKETS.iter().zip(&self.counts) {
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {count}");
        }
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {}", self.count);
        let _ = writeln!(out, "{name}_sum {}", self.sum);
        let _ = writeln!(out, "{name}_count {}", self.count);
    }
}

/// Counters since the server started.
#[derive(Debug, Default)]
struct Metrics {
    submitted: u64,
    retries: u64,
    reclaims: u64,
    step_seconds: Histogram,
    job_seconds: Histogram,
    wait_seconds: Histogram,
}

/// `GET /metrics`: Prometheus text format.
async fn metrics(State(fleet): State<Shared>) -> ApiResult<Response> {
    use std::fmt::Write as _;
    let counts = fleet.store().job_counts()?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP reprise_queue_depth Jobs waiting for a worker (queued or retrying), per pool.\n# TYPE reprise_queue_depth gauge"
    );
    let mut depth: BTreeMap<&str, u64> = BTreeMap::new();
    for (pool, state, n) in &counts {
        let entry = depth.entry(pool).or_default();
        if matches!(state, JobState::Queued | JobState::Retrying) {
            *entry += n;
        }
    }
    for (pool, n) in &depth {
        let _ = writeln!(out, "reprise_queue_depth{{pool=\"{pool}\"}} {n}");
    }
    let _ = writeln!(
        out,
        "# HELP reprise_jobs Jobs by state.\n# TYPE reprise_jobs gauge"
    );
    for state in JobState::ALL {
        let n: u64 = counts
            .iter()
            .filter(|(_, s, _)| *s == state)
            .map(|(_, _, n)| n)
            .sum();
        let _ = writeln!(out, "reprise_jobs{{state=\"{}\"}} {n}", state.as_str());
    }
    let metrics = fleet.metrics();
    for (name, help, value) in [
        (
            "reprise_jobs_submitted_total",
            "Jobs submitted since the server started.",
            metrics.submitted,
        ),
        (
            "reprise_job_retries_total",
            "Attempts started again after a failed step.",
            metrics.retries,
        ),
        (
            "reprise_job_reclaims_total",
            "Jobs taken from a worker that stopped heart-beating.",
            metrics.reclaims,
        ),
    ] {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
        );
    }
    metrics.step_seconds.write(
        &mut out,
        "reprise_step_seconds",
        "How long a replayed step took.",
    );
    metrics.job_seconds.write(
        &mut out,
        "reprise_job_seconds",
        "From a job's first start to its end.",
    );
    metrics.wait_seconds.write(
        &mut out,
        "reprise_job_wait_seconds",
        "From submission to a worker's start.",
    );
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_counts_each_value_in_every_bucket_above_it() {
        let mut histogram = Histogram::default();
        histogram.observe(0.3);
        histogram.observe(7.0);
        histogram.observe(f64::NAN);
        let mut out = String::new();
        histogram.write(&mut out, "x", "help");
        assert!(out.contains("x_bucket{le=\"0.25\"} 0\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"0.5\"} 1\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"10\"} 2\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"+Inf\"} 2\n"), "{out}");
        assert!(out.contains("x_count 2\n"), "{out}");
    }

    #[test]
    fn deadlines_pass() {
        assert!(past(Some("2000-01-01T00:00:00Z")));
        assert!(!past(Some("2999-01-01T00:00:00Z")));
        assert!(!past(None));
    }
}
