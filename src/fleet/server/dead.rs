//! Dead letters: jobs that ended failed, aborted, abandoned or expired.
//! A user lists them, requeues one (the same job again: its recording's
//! version, parameters, pool, labels and options, a new id), resumes one
//! that halted at a step (a new job going on with its run, on its desktop)
//! or discards it; each settles it once, and its record stays.

use super::jobs::{job_or_404, queue_new, queued_event};
use super::*;
use crate::fleet::{ResumeRequest, ResumeSpec, Settled};

/// `GET /api/dead`.
pub(super) async fn list(State(fleet): State<Shared>) -> ApiResult<Response> {
    Ok(axum::Json(fleet.store().dead_jobs(10_000)?).into_response())
}

/// Why a job cannot be settled now, or `None` when it can.
fn unsettled(job: &Job, requeue: bool) -> Option<Fail> {
    let conflict = |message: String| Some(Fail::new(StatusCode::CONFLICT, "settled", message));
    match &job.settled {
        Some(Settled::Requeued { job: next }) => {
            return conflict(format!("job {} was requeued already, as {next}", job.id));
        }
        Some(Settled::Discarded) => {
            return conflict(format!("job {} was discarded", job.id));
        }
        None => {}
    }
    if !job.state.is_final() {
        return Some(Fail::new(
            StatusCode::CONFLICT,
            "not_final",
            format!(
                "job {} is {}: cancel it first, or let it end",
                job.id,
                job.state.as_str()
            ),
        ));
    }
    if !requeue && !job.state.is_dead() {
        return Some(Fail::new(
            StatusCode::CONFLICT,
            "not_dead",
            format!(
                "job {} ended {}: not a dead letter",
                job.id,
                job.state.as_str()
            ),
        ));
    }
    None
}

/// `POST /api/jobs/{id}/requeue`: any job that ended (a dead letter, or
/// one cancelled) runs again as a new job, from its first step.
pub(super) async fn requeue(
    State(fleet): State<Shared>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let _decide = fleet.decide.lock().await;
    let old = job_or_404(&fleet, &id)?;
    if let Some(fail) = unsettled(&old, true) {
        return Err(fail);
    }
    settle_as(&fleet, &old, None, "requeued").await
}

/// `POST /api/jobs/{id}/resume` (`{"from": N}` optional): a job that
/// halted at a step (failed, aborted or abandoned) goes on with its run
/// from there, as a new job only the worker that ran it may take: its
/// desktop holds the half-done task, its store the run.
pub(super) async fn resume(
    State(fleet): State<Shared>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let body = body_of(body)?;
    let request: ResumeRequest = if body.iter().all(u8::is_ascii_whitespace) {
        ResumeRequest::default()
    } else {
        json_of(&body)?
    };
    if request.from == Some(0) {
        return Err(Fail::bad("from counts steps from 1"));
    }
    let _decide = fleet.decide.lock().await;
    let old = job_or_404(&fleet, &id)?;
    if let Some(fail) = unsettled(&old, true) {
        return Err(fail);
    }
    let resume = resumable(&fleet, &old, request.from)?;
    settle_as(&fleet, &old, Some(resume), "resumed").await
}

/// How `old` may be gone on with, or why it may not.
fn resumable(fleet: &Fleet, old: &Job, from: Option<usize>) -> ApiResult<ResumeSpec> {
    let refuse = |why: String| {
        Err(Fail::new(
            StatusCode::CONFLICT,
            "not_resumable",
            format!("job {}: {why}", old.id),
        ))
    };
    if !old.state.halted_at_a_step() {
        return refuse(format!(
            "it ended {}, not halted at a step: requeue it to run it again",
            old.state.as_str()
        ));
    }
    if old.spec.options.dry_run || old.spec.options.strategy == crate::fleet::Strategy::Vanilla {
        return refuse(
            "a dry run or a vanilla replay cannot be gone on with: requeue it instead".into(),
        );
    }
    let (Some(worker), Some(run)) = (old.worker.clone(), old.run_id.clone()) else {
        return refuse(
            "no run of it was reported (it halted before its replay began, or its worker's report was lost): requeue it instead"
                .into(),
        );
    };
    match fleet.store().worker(&worker)? {
        Some(row) if !row.gone => {}
        Some(_) => {
            return refuse(format!(
                "worker {worker}, whose desktop holds its half-done task and whose store holds its run, has left: resume it once a worker started again on that desktop has its id back, or requeue it to run it from the start"
            ));
        }
        None => {
            return refuse(format!(
                "worker {worker}, whose desktop holds its half-done task and whose store holds its run, was forgotten: requeue it to run it from the start"
            ));
        }
    }
    Ok(ResumeSpec { worker, run, from })
}

/// Settles `old` into a new job like it, queued now: from its first step,
/// or going on with its run (`resume`).
async fn settle_as(
    fleet: &Fleet,
    old: &Job,
    resume: Option<ResumeSpec>,
    how: &str,
) -> ApiResult<Response> {
    let now = chrono::Utc::now();
    // A deadline runs as long from the new submission as it did from the old.
    let deadline = old.spec.deadline.as_deref().and_then(|deadline| {
        let window = rules::seconds_since(
            &old.created,
            chrono::DateTime::parse_from_rfc3339(deadline)
                .ok()?
                .to_utc(),
        )?;
        Some(rules::stamp(
            now + chrono::Duration::milliseconds((window * 1000.0) as i64),
        ))
    });
    let new = Job::queued(
        uuid::Uuid::new_v4().to_string(),
        old.recording_id.clone(),
        old.pool.clone(),
        JobSpec {
            deadline,
            requeued_from: Some(old.id.clone()),
            resume,
            ..old.spec.clone()
        },
        rules::stamp(now),
    );
    if !fleet
        .store()
        .settle_job(&old.id, Some((&new, &queued_event())))?
    {
        return Err(Fail::new(
            StatusCode::CONFLICT,
            "settled",
            format!("job {} was settled meanwhile", old.id),
        ));
    }
    tracing::info!("job {} {how} as {}", old.id, new.id);
    let mut jobs = queue_new(fleet, vec![new]).await?;
    Ok((StatusCode::CREATED, axum::Json(jobs.remove(0))).into_response())
}

/// `POST /api/jobs/{id}/discard`: a dead letter set aside.
pub(super) async fn discard(
    State(fleet): State<Shared>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let _decide = fleet.decide.lock().await;
    let job = job_or_404(&fleet, &id)?;
    if let Some(fail) = unsettled(&job, false) {
        return Err(fail);
    }
    if !fleet.store().settle_job(&job.id, None)? {
        return Err(Fail::new(
            StatusCode::CONFLICT,
            "settled",
            format!("job {id} was settled meanwhile"),
        ));
    }
    tracing::info!("job {id} discarded from the dead letters");
    Ok(axum::Json(job_or_404(&fleet, &id)?).into_response())
}
