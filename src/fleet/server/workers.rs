//! The workers' handlers: register, leave, pull the next job, report on it;
//! and the ticker that moves jobs waiting on time. Every decision goes
//! through the rules ([`super::rules`]).

use super::jobs::{check_name, job_or_404};
use super::*;

pub(super) async fn workers(State(fleet): State<Shared>) -> ApiResult<Response> {
    Ok(axum::Json(worker_list(&fleet)?).into_response())
}

/// The workers as the API shows them: gone, silent (past the lease), busy
/// or idle.
pub(super) fn worker_list(fleet: &Fleet) -> ApiResult<Vec<Worker>> {
    let rows = fleet.store().workers()?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let silent = silent(fleet, &row.heartbeat);
            let state = match (row.gone, silent, &row.job) {
                (true, _, _) => "gone",
                (_, true, _) => "silent",
                (_, _, Some(_)) => "busy",
                _ => "idle",
            };
            Worker {
                screen_at: fleet.screen_of(&row.id).map(|(_, at)| at),
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
        .collect())
}

/// Whether a worker last heard from at `heartbeat` has been silent past
/// the lease.
fn silent(fleet: &Fleet, heartbeat: &str) -> bool {
    rules::seconds_since(heartbeat, chrono::Utc::now())
        .is_none_or(|since| since > fleet.lease.as_secs_f64())
}

/// `POST /api/workers`: a worker says who it is; its id names its consumer.
pub(super) async fn register(
    State(fleet): State<Shared>,
    axum::Extension(caller): axum::Extension<super::auth::Caller>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let register: Register = json_of(&body_of(body)?)?;
    check_name("the pool", &register.pool)?;
    super::jobs::check_labels(&register.labels)?;
    if register.host.is_empty() || register.host.len() > 255 {
        return Err(Fail::bad("host must be 1 to 255 characters"));
    }
    let id = match register.id.as_deref() {
        Some(known) => returning(&fleet, &caller, known, &register.host)?,
        None => format!(
            "{}-{}",
            register
                .host
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                .take(40)
                .collect::<String>(),
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        ),
    };
    let now = crate::fleet::now();
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
    fleet.store().set_worker_owner(&id, &caller.name)?;
    Ok((
        StatusCode::CREATED,
        axum::Json(json!({"id": id, "lease_seconds": fleet.lease.as_secs_f64()})),
    )
        .into_response())
}

/// The id `known` a worker restarted on its desktop registers with again
/// (the one it was given before): kept where it is well formed, of the
/// same token and the same host. One worker at a time runs on a desktop's
/// store (it holds a lock there), so the process that had the id is gone:
/// the job its row held is that process's, left to its lease (the entry
/// this worker claims back once idle past it, by the rules).
fn returning(
    fleet: &Fleet,
    caller: &super::auth::Caller,
    known: &str,
    host: &str,
) -> ApiResult<String> {
    if !reprise_models::fleet::is_worker_id(known) {
        return Err(Fail::bad(
            "a worker id is 1 to 64 ASCII letters, digits or '-'",
        ));
    }
    super::audit::own_worker(fleet, caller, known)?;
    if let Some(row) = fleet.store().worker(known)?
        && row.host != host
    {
        return Err(Fail::new(
            StatusCode::CONFLICT,
            "other_host",
            format!(
                "worker {known} runs on {:?}, not on {host:?}: a worker id is its desktop's",
                row.host
            ),
        ));
    }
    tracing::info!("worker {known} registered again on {host}");
    Ok(known.to_owned())
}

/// `POST /api/workers/{id}/leave`: a worker that stops says so. Resumed
/// jobs pinned to it wait: a worker restarted on its desktop comes back
/// with its id; forgetting it ends them.
pub(super) async fn leave(
    State(fleet): State<Shared>,
    axum::Extension(caller): axum::Extension<super::auth::Caller>,
    Path(worker): Path<String>,
) -> ApiResult<Response> {
    super::audit::own_worker(&fleet, &caller, &worker)?;
    let row = fleet.store().worker(&worker)?;
    let mut row = row.ok_or_else(|| Fail::not_found(format!("no worker {worker:?}")))?;
    row.gone = true;
    fleet.store().upsert_worker(&row)?;
    Ok(axum::Json(json!({"id": worker, "state": "gone"})).into_response())
}

/// Resumed jobs waiting for worker `worker`, which was forgotten, never
/// will run: dead letters now.
async fn pinned_jobs_dead(fleet: &Fleet, worker: &str) -> ApiResult<()> {
    let _decide = fleet.decide.lock().await;
    for state in [JobState::Queued, JobState::Retrying] {
        let jobs = fleet.store().jobs(Some(state), usize::MAX >> 1)?;
        for mut job in jobs {
            if job
                .spec
                .resume
                .as_ref()
                .is_some_and(|resume| resume.worker == worker)
            {
                fleet
                    .apply(&mut job, rules::Event::WorkerGone(worker))
                    .await?;
            }
        }
    }
    Ok(())
}

/// `DELETE /api/workers/ID`: an admin forgets a worker that left, or that
/// has been silent past the lease (it registers again if it comes back); a
/// live one is refused. Resumed jobs pinned to it become dead letters.
pub(super) async fn forget(
    State(fleet): State<Shared>,
    Path(worker): Path<String>,
) -> ApiResult<Response> {
    let row = fleet
        .store()
        .worker(&worker)?
        .ok_or_else(|| Fail::not_found(format!("no worker {worker:?}")))?;
    if !row.gone && !silent(&fleet, &row.heartbeat) {
        return Err(Fail::new(
            StatusCode::CONFLICT,
            "worker_alive",
            format!(
                "worker {worker} is alive (its last heartbeat {}): forget it once it has left or been silent past the lease",
                row.heartbeat
            ),
        ));
    }
    pinned_jobs_dead(&fleet, &worker).await?;
    fleet.store().remove_worker(&worker)?;
    fleet
        .screens
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .remove(&worker);
    Ok(axum::Json(json!({"id": worker, "state": "forgotten"})).into_response())
}

/// The most workers' screens the server keeps in memory.
const MAX_SCREENS: usize = 1_000;

/// `PUT /api/workers/ID/screen`: a worker's screen after a step it
/// replayed (a PNG, at most [`MAX_SCREEN_BYTES`]), shown on the console's
/// workers page; the newest replaces the one before.
pub(super) async fn screen(
    State(fleet): State<Shared>,
    axum::Extension(caller): axum::Extension<super::auth::Caller>,
    Path(worker): Path<String>,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> ApiResult<Response> {
    super::audit::own_worker(&fleet, &caller, &worker)?;
    let body = super::body_of(body)?;
    if body.len() > reprise_models::fleet::MAX_SCREEN_BYTES {
        return Err(Fail::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!(
                "a screen is at most {} bytes",
                reprise_models::fleet::MAX_SCREEN_BYTES
            ),
        ));
    }
    if !body.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Err(Fail::bad("a screen is a PNG image"));
    }
    if fleet.store().worker(&worker)?.is_none() {
        return Err(Fail::not_found(format!("no worker {worker:?}")));
    }
    let at = crate::fleet::now();
    let mut screens = fleet
        .screens
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    keep_screen(&mut screens, worker, (body, at), MAX_SCREENS);
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Keeps `worker`'s newest screen among at most `most`: past them, the
/// oldest screen (by when it came) goes.
fn keep_screen(
    screens: &mut std::collections::HashMap<String, (Bytes, String)>,
    worker: String,
    screen: (Bytes, String),
    most: usize,
) {
    if !screens.contains_key(&worker)
        && screens.len() >= most
        && let Some(oldest) = screens
            .iter()
            .min_by(|one, other| one.1.1.cmp(&other.1.1))
            .map(|(id, _)| id.clone())
    {
        screens.remove(&oldest);
    }
    screens.insert(worker, screen);
}

#[derive(Debug, Deserialize)]
pub(super) struct PullQuery {
    /// Seconds to wait for a job (at most 30).
    wait: Option<f64>,
}

/// `POST /api/workers/{id}/pull`: the next job of the worker's pool whose
/// labels it has, waiting up to `wait` seconds; 204 when none came.
pub(super) async fn pull(
    State(fleet): State<Shared>,
    axum::Extension(caller): axum::Extension<super::auth::Caller>,
    Path(worker): Path<String>,
    Query(query): Query<PullQuery>,
) -> ApiResult<Response> {
    super::audit::own_worker(&fleet, &caller, &worker)?;
    let wait = match query.wait.unwrap_or(10.0) {
        wait if wait.is_finite() => Duration::from_secs_f64(wait.clamp(0.0, 30.0)),
        _ => return Err(Fail::bad("wait must be a number of seconds")),
    };
    let until = Instant::now() + wait;
    loop {
        {
            let _decide = fleet.decide.lock().await;
            if !fleet.store().touch_worker(&worker, &crate::fleet::now())? {
                return Err(Fail::not_found(format!(
                    "no worker {worker:?}: register first"
                )));
            }
            let row = fleet
                .store()
                .worker(&worker)?
                .ok_or_else(|| Fail::not_found(format!("no worker {worker:?}: register first")))?;
            if let Some(job) = next_for(&fleet, &row).await? {
                return Ok(assigned(&fleet, job));
            }
        }
        if Instant::now() >= until || *fleet.stopping.borrow() {
            return Ok(StatusCode::NO_CONTENT.into_response());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The job `worker` is given now, if any: its pool's lanes looked in from
/// the highest priority down, in each the entries whose holder lost its
/// lease first, then one never delivered.
async fn next_for(fleet: &Fleet, worker: &WorkerRow) -> ApiResult<Option<Job>> {
    for priority in crate::fleet::Priority::ALL {
        let lane = priority.lane(&worker.pool);
        let stale = fleet
            .queue
            .claim_stale(&lane, &worker.id, fleet.lease, 10)
            .await?;
        for entry in stale {
            if let Some(job) = consider(fleet, worker, &lane, entry, true).await? {
                return Ok(Some(job));
            }
        }
        for entry in fleet.queue.read_new(&lane, &worker.id, 1).await? {
            if let Some(job) = consider(fleet, worker, &lane, entry, false).await? {
                return Ok(Some(job));
            }
        }
    }
    Ok(None)
}

pub(super) fn assigned(fleet: &Fleet, job: Job) -> Response {
    axum::Json(Assignment {
        job,
        lease_seconds: fleet.lease.as_secs_f64(),
    })
    .into_response()
}

/// What a delivered entry leads to: a job for this worker, or nothing (the
/// entry was stale, the job ended, or it is not this worker's to take).
pub(super) async fn consider(
    fleet: &Fleet,
    worker: &WorkerRow,
    lane: &str,
    entry: Entry,
    reclaimed: bool,
) -> ApiResult<Option<Job>> {
    let job = match &entry.job {
        Some(id) => fleet.store().job(id)?,
        None => None,
    };
    let Some(mut job) = job else {
        // An entry of no job the store knows.
        fleet.queue.ack(lane, &entry.id).await?;
        return Ok(None);
    };
    // Whether the job's owner still holds its lease matters only for a job
    // some other worker holds.
    let owner_silent = match job.worker.as_deref() {
        Some(owner)
            if owner != worker.id
                && matches!(job.state, JobState::Assigned | JobState::Running) =>
        {
            fleet.silent_for(owner)?
        }
        _ => None,
    };
    let event = rules::Event::Delivered {
        taker: Taker {
            id: &worker.id,
            labels: &worker.labels,
        },
        entry: &entry.id,
        reclaimed,
        owner_silent,
    };
    Ok(match fleet.apply(&mut job, event).await? {
        Reply::Assigned => Some(job),
        _ => None,
    })
}

/// `POST /api/jobs/{id}/progress`: a worker's heartbeat, the start of
/// input, a step, or the end of an attempt.
pub(super) async fn progress(
    State(fleet): State<Shared>,
    axum::Extension(caller): axum::Extension<super::auth::Caller>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let report: Report = json_of(&body_of(body)?)?;
    super::audit::own_worker(&fleet, &caller, &report.worker)?;
    let _decide = fleet.decide.lock().await;
    let mut job = job_or_404(&fleet, &id)?;
    Ok(
        match fleet
            .apply(&mut job, rules::Event::Reported(&report))
            .await?
        {
            Reply::NotCurrent(answer) => {
                tracing::warn!(
                    "refused a report of worker {} on job {id} attempt {}: {}",
                    report.worker,
                    report.attempt,
                    answer.reason.as_deref().unwrap_or("not current")
                );
                (StatusCode::CONFLICT, axum::Json(answer)).into_response()
            }
            Reply::Go(answer) => axum::Json(answer).into_response(),
            other => unreachable!("a report is answered go or not current, not {other:?}"),
        },
    )
}

/// Jobs that wait on time: retries due, entries Redis did not take, queued
/// jobs past their deadline.
/// Every few ticks, and thoroughly at start until it once succeeds, the
/// queue is mended from the store ([`reconcile`]).
pub(super) async fn ticker(fleet: Shared) {
    let mut stopping = fleet.stopping.clone();
    let mut thorough = true;
    for ticks in 0u32.. {
        tokio::select! {
            _ = tokio::time::sleep(TICK) => {}
            _ = stopping.changed() => return,
        }
        if ticks % super::retention::EVERY_TICKS == 0
            && let Err(err) = super::retention::prune(&fleet)
        {
            tracing::warn!("retention: {}", err.message);
        }
        let check = thorough || ticks % reconcile::EVERY_TICKS == 0;
        match tick(&fleet, check.then_some(thorough)).await {
            Ok(()) if check => thorough = false,
            Ok(()) => {}
            Err(err) => tracing::debug!("tick: {}", err.message),
        }
    }
}

/// A tick: the queue checked against the store (thoroughly or not) where
/// `reconcile` says, then every job and schedule that waits on time.
pub(super) async fn tick(fleet: &Fleet, reconcile: Option<bool>) -> ApiResult<()> {
    let _decide = fleet.decide.lock().await;
    // Schedules first: their slots are stored whether or not Redis answers
    // (a job stored without its entry is queued when Redis is back).
    let fired = super::schedules::fire_due(fleet).await;
    if let Some(thorough) = reconcile {
        reconcile::reconcile(fleet, thorough).await?;
    }
    let waiting = fleet
        .store()
        .jobs_waiting_on_time(&rules::stamp(chrono::Utc::now()))?;
    for mut job in waiting {
        fleet.apply(&mut job, rules::Event::Tick).await?;
    }
    fired
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_so_many_screens_are_kept_the_oldest_going_first() {
        let mut screens = std::collections::HashMap::new();
        let screen = |at: &str| (Bytes::from_static(b"png"), at.to_owned());
        keep_screen(
            &mut screens,
            "a".into(),
            screen("2026-12-06T10:00:00.000Z"),
            2,
        );
        keep_screen(
            &mut screens,
            "b".into(),
            screen("2026-12-06T09:00:00.000Z"),
            2,
        );
        // A newer screen of a worker kept replaces its own.
        keep_screen(
            &mut screens,
            "a".into(),
            screen("2026-12-06T11:00:00.000Z"),
            2,
        );
        assert_eq!(screens.len(), 2);
        // A third worker: the oldest screen (b's) goes.
        keep_screen(
            &mut screens,
            "c".into(),
            screen("2026-12-06T12:00:00.000Z"),
            2,
        );
        let mut kept: Vec<&String> = screens.keys().collect();
        kept.sort();
        assert_eq!(kept, ["a", "c"]);
    }
}
