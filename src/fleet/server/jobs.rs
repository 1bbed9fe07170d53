//! The jobs' and recordings' handlers: upload and export a recording,
//! submit a job (or a batch of rows), list, show, report, cancel.

use super::*;

/// `POST /api/recordings`: an export file, checked whole as `import` does.
/// A few at a time (each is held whole while it is checked), read only
/// once its turn came, and checked off the threads that answer requests.
pub(super) async fn upload(State(fleet): State<Shared>, request: Request) -> ApiResult<Response> {
    let Ok(_turn) = Arc::clone(&fleet.uploads).try_acquire_owned() else {
        return Ok((
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "5")],
            Fail::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "busy",
                format!("{MAX_UPLOADS} uploads are being read; try again shortly"),
            ),
        )
            .into_response());
    };
    let body = axum::body::to_bytes(request.into_body(), fleet.max_upload)
        .await
        .map_err(|err| match std::error::Error::source(&err) {
            Some(source) if source.is::<http_body_util::LengthLimitError>() => too_large(),
            _ => Fail::bad(format!("read the request: {err}")),
        })?;
    let checking = Arc::clone(&fleet);
    let (recording, existing) = tokio::task::spawn_blocking(move || {
        let archive = crate::store::archive::decode(&body).map_err(|err| {
            Fail::new(
                StatusCode::BAD_REQUEST,
                "bad_export",
                format!("not a recording export: {err}"),
            )
        })?;
        let mut store = checking.store();
        let imported = store.import(&archive.bundle, &archive.images);
        if imported.is_ok() || matches!(imported, Err(StoreError::AlreadyExists(_))) {
            // A recording uploaded again may bring versions made since.
            store.import_versions(&archive.bundle.recording.id, &archive.versions)?;
        }
        match imported {
            Ok(()) => Ok((archive.bundle.recording, false)),
            Err(StoreError::AlreadyExists(_)) => Ok((archive.bundle.recording, true)),
            Err(err) => Err(Fail::from(err)),
        }
    })
    .await
    .map_err(|err| {
        tracing::error!("checking an upload: {err}");
        Fail::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "upload",
            "the upload could not be checked (see the server's log)",
        )
    })??;
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

pub(super) async fn recordings(State(fleet): State<Shared>) -> ApiResult<Response> {
    let list = fleet.store().list_recordings()?;
    Ok(axum::Json(list).into_response())
}

pub(super) async fn export(
    State(fleet): State<Shared>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
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

/// At most [`MAX_LABELS`] labels, each a name and a value of at most
/// [`MAX_LABEL_VALUE`] bytes.
pub(super) fn check_labels(labels: &BTreeMap<String, String>) -> ApiResult<()> {
    if labels.len() > MAX_LABELS {
        return Err(Fail::bad(format!("at most {MAX_LABELS} labels")));
    }
    for (key, value) in labels {
        check_name("the label", key)?;
        if value.len() > MAX_LABEL_VALUE {
            return Err(Fail::bad(format!(
                "the label {key:?} has a value of {} bytes; at most {MAX_LABEL_VALUE}",
                value.len()
            )));
        }
    }
    Ok(())
}

pub(super) fn check_name(what: &str, name: &str) -> ApiResult<()> {
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

/// `POST /api/jobs`: jobs now, or a schedule that submits them later.
pub(super) async fn submit(
    State(fleet): State<Shared>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult<Response> {
    let request: SubmitRequest = json_of(&body_of(body)?)?;
    if request.is_scheduled() {
        let schedule = super::schedules::create(&fleet, request)?;
        return Ok((
            StatusCode::CREATED,
            axum::Json(json!({"schedule": schedule, "jobs": []})),
        )
            .into_response());
    }
    let jobs = submit_now(&fleet, &request).await?;
    let batch = jobs.first().and_then(|job| job.spec.batch.clone());
    Ok((
        StatusCode::CREATED,
        axum::Json(json!({"batch": batch, "jobs": jobs})),
    )
        .into_response())
}

/// A submission's jobs, made, stored and queued.
pub(super) async fn submit_now(fleet: &Fleet, request: &SubmitRequest) -> ApiResult<Vec<Job>> {
    let jobs = jobs_for(fleet, request, None)?;
    let _decide = fleet.decide.lock().await;
    for job in &jobs {
        fleet.store().insert_job(job, &queued_event())?;
    }
    tracing::info!(
        "submitted {} of {} to pool {}",
        crate::present::plural(jobs.len(), "job"),
        request.recording,
        request.pool
    );
    queue_new(fleet, jobs).await
}

/// The first line of a new job's history.
pub(super) fn queued_event() -> NewEvent {
    new_event(Note::State(StateChange {
        state: JobState::Queued,
        reason: None,
        worker: None,
    }))
}

/// Adds stored new jobs to their pools' queues. A Redis that does not
/// answer now leaves a job queued without an entry; the ticker adds it
/// when Redis is back.
pub(super) async fn queue_new(fleet: &Fleet, mut jobs: Vec<Job>) -> ApiResult<Vec<Job>> {
    for job in &mut jobs {
        match fleet.queue.add(&job.lane(), &job.id).await {
            Ok(entry) => {
                job.entry = Some(entry);
                fleet.save(job, None)?;
            }
            Err(err) => tracing::warn!("queue job {}: {err} (added later)", job.id),
        }
        let _ = fleet.events.send(job.id.clone());
    }
    fleet.metrics().submitted(jobs.len());
    Ok(jobs)
}

/// Checks the options every submission shares, whether now or scheduled.
pub(super) fn check_request(request: &SubmitRequest) -> ApiResult<()> {
    check_name("the pool", &request.pool)?;
    check_labels(&request.labels)?;
    let options = &request.options;
    if !(options.speed.is_finite() && options.speed > 0.0) {
        return Err(Fail::bad("options.speed must be a positive number"));
    }
    if !(1..=MAX_ATTEMPTS).contains(&request.attempts) {
        return Err(Fail::bad(format!(
            "attempts must be from 1 to {MAX_ATTEMPTS}"
        )));
    }
    if !request
        .deadline_seconds
        .is_none_or(|seconds| seconds.is_finite() && seconds > 0.0 && seconds < 1e9)
    {
        return Err(Fail::bad("deadline_seconds must be a positive number"));
    }
    match &request.rows {
        Some(rows) if rows.is_empty() => Err(Fail::bad("rows is empty")),
        Some(rows) if rows.len() > MAX_ROWS => {
            Err(Fail::bad(format!("at most {MAX_ROWS} rows per submission")))
        }
        _ => Ok(()),
    }
}

/// The jobs a submission makes now (one, or one per row), checked against
/// the recording as it is now; not stored yet. A schedule's slot passes
/// its schedule's id and the slot.
pub(super) fn jobs_for(
    fleet: &Fleet,
    request: &SubmitRequest,
    slot: Option<(&str, &str)>,
) -> ApiResult<Vec<Job>> {
    check_request(request)?;
    let deadline = request.deadline_seconds.map(|seconds| {
        (chrono::Utc::now() + chrono::Duration::milliseconds((seconds * 1000.0) as i64))
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    });
    let rows = match &request.rows {
        Some(rows) => rows.iter().map(Some).collect(),
        None => vec![None],
    };
    let (recording_id, version, parameters) = {
        let store = fleet.store();
        let (id, pinned) = store.resolve_versioned(&request.recording)?;
        let (bundle, version) = store.load_version(&id, pinned)?;
        (
            id,
            version,
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
        jobs.push(Job::queued(
            uuid::Uuid::new_v4().to_string(),
            recording_id.clone(),
            request.pool.clone(),
            JobSpec {
                options: request.options.clone(),
                labels: request.labels.clone(),
                parameters: values,
                attempts: request.attempts,
                retry: request.retry,
                priority: request.priority,
                deadline: deadline.clone(),
                batch: batch.clone(),
                row: row.map(|_| index + 1),
                version: Some(version),
                schedule: slot.map(|(schedule, _)| schedule.to_owned()),
                slot: slot.map(|(_, slot)| slot.to_owned()),
                requeued_from: None,
                resume: None,
            },
            crate::fleet::now(),
        ));
    }
    Ok(jobs)
}

/// Every value names a text parameter of the recording; secrets never
/// travel through the fleet (a worker takes them from its environment).
pub(super) fn check_parameters(
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
pub(super) struct ListQuery {
    state: Option<String>,
    limit: Option<usize>,
}

pub(super) async fn list_jobs(
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

pub(super) fn job_or_404(fleet: &Fleet, id: &str) -> ApiResult<Job> {
    fleet
        .store()
        .job(id)?
        .ok_or_else(|| Fail::not_found(format!("no job {id:?}")))
}

pub(super) async fn show_job(
    State(fleet): State<Shared>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let job = job_or_404(&fleet, &id)?;
    let events = fleet.store().job_events(&id, 0, 100_000)?;
    Ok(axum::Json(json!({"job": job, "events": events})).into_response())
}

pub(super) async fn report(
    State(fleet): State<Shared>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    job_or_404(&fleet, &id)?;
    let html = fleet
        .store()
        .job_report(&id)?
        .ok_or_else(|| Fail::not_found(format!("job {id} has no report yet")))?;
    // A page a worker wrote: shown, never run. No script, no request
    // anywhere, its pictures inline; a sandbox with no origin of ours.
    Ok((
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        html,
    )
        .into_response())
}

/// `POST /api/jobs/{id}/cancel`: a queued job ends at once; a running one
/// is told at its next step or heartbeat.
pub(super) async fn cancel(
    State(fleet): State<Shared>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let _decide = fleet.decide.lock().await;
    let mut job = job_or_404(&fleet, &id)?;
    match fleet.apply(&mut job, rules::Event::Cancel).await? {
        Reply::AlreadyEnded => Err(Fail::new(
            StatusCode::CONFLICT,
            "final",
            format!("job {id} already ended {}", job.state.as_str()),
        )),
        _ => Ok(axum::Json(job).into_response()),
    }
}
