//! The web console at `/`: pages rendered by the server (`console/pages.rs`)
//! with one script (`console/console.js`) that keeps the jobs and a job's
//! steps live over the event streams. A login with a user's or a viewer's
//! token opens a session (an HTTP-only, SameSite=Strict cookie); every
//! change is a form carrying the session's CSRF token, and only a user's
//! session may make one (a viewer gets 403).

mod images;
mod pages;

use axum::Form;
use axum::response::Redirect;

use super::auth::{COOKIE, Role, SESSION, Session};
use super::*;

pub(super) fn routes() -> Router<Shared> {
    Router::new()
        .route("/", get(|| async { Redirect::to("/console") }))
        .route("/console", get(jobs_page))
        .route("/console/login", get(login_page).post(login))
        .route("/console/logout", post(logout))
        .route("/console/console.js", get(script))
        .route("/console/console.css", get(style))
        .route("/console/jobs/{id}", get(job_page))
        .route("/console/jobs/{id}/{action}", post(job_action))
        .route("/console/workers", get(workers_page))
        .route("/console/recordings", get(recordings_page))
        .route("/console/recordings/{id}/thumbnail", get(images::thumbnail))
        .route("/console/workers/{id}/screen", get(images::worker_screen))
        .route("/console/workers/{id}/forget", post(forget_worker))
        .route("/console/schedules", get(schedules_page))
        .route("/console/schedules/{id}/remove", post(remove_schedule))
        .route("/console/dead", get(dead_page))
        .route("/console/submit", get(submit_page).post(submit))
}

/// A console page: no script but ours, nothing framed, nothing cached.
fn page(status: StatusCode, html: maud::Markup) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                 connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        html.into_string(),
    )
        .into_response()
}

/// The session of a page's request, or the way to the login page.
fn session(fleet: &Fleet, headers: &HeaderMap) -> Result<Session, Box<Response>> {
    fleet
        .sessions
        .of(fleet, headers)
        .ok_or_else(|| Box::new(Redirect::to("/console/login").into_response()))
}

/// A failure shown as a page.
fn failed(session: Option<&Session>, fail: Fail) -> Response {
    page(
        fail.status,
        pages::failure(session, fail.status, &fail.message),
    )
}

/// The session of a change: a user's, with the form's CSRF token.
fn may_change(fleet: &Fleet, headers: &HeaderMap, csrf: &str) -> Result<Session, Box<Response>> {
    let session = session(fleet, headers)?;
    if !crate::fleet::same_token(csrf.as_bytes(), session.csrf.as_bytes()) {
        return Err(Box::new(failed(
            Some(&session),
            Fail::new(
                StatusCode::FORBIDDEN,
                "csrf",
                "this form is stale (reload the page and try again)",
            ),
        )));
    }
    if session.role == Role::Viewer {
        return Err(Box::new(failed(
            Some(&session),
            Fail::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                format!(
                    "a {} may look but not change anything: log in with a user's token",
                    session.role.as_str()
                ),
            ),
        )));
    }
    Ok(session)
}

/// The session of a console form that administers ([`may_change`], by an
/// admin, or a user where the server has no admin token).
fn may_administer(
    fleet: &Fleet,
    headers: &HeaderMap,
    csrf: &str,
) -> Result<Session, Box<Response>> {
    let session = may_change(fleet, headers, csrf)?;
    if !session.administers {
        return Err(Box::new(failed(
            Some(&session),
            Fail::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                "only an admin may do this: log in with an admin's token",
            ),
        )));
    }
    Ok(session)
}

async fn login_page() -> Response {
    page(StatusCode::OK, pages::login(None))
}

#[derive(Debug, Deserialize)]
struct Login {
    token: String,
}

async fn login(State(fleet): State<Shared>, request: Request) -> Response {
    use axum::extract::FromRequest as _;
    let from = super::audit::from(&request);
    let token = match Form::<Login>::from_request(request, &()).await {
        Ok(Form(form)) => form.token,
        Err(rejection) => return rejection.into_response(),
    };
    let caller = fleet
        .tokens
        .caller(token.trim().as_bytes())
        .filter(|caller| caller.role != Role::Worker);
    let action = "POST /console/login".to_owned();
    let Some(caller) = caller else {
        super::audit::write(&fleet, None, action, StatusCode::UNAUTHORIZED, from);
        return page(
            StatusCode::UNAUTHORIZED,
            pages::login(Some(
                "That token opens no console: give a user's or a viewer's token.",
            )),
        );
    };
    let id = match fleet.sessions.open(&fleet, &caller) {
        Ok(id) => id,
        Err(fail) => return fail.into_response(),
    };
    super::audit::write(&fleet, Some(&caller), action, StatusCode::SEE_OTHER, from);
    let cookie = format!(
        "{COOKIE}={id}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}",
        SESSION.as_secs()
    );
    ([(header::SET_COOKIE, cookie)], Redirect::to("/console")).into_response()
}

#[derive(Debug, Deserialize)]
struct Csrf {
    csrf: String,
}

async fn logout(
    State(fleet): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<Csrf>,
) -> Response {
    if let Some(session) = fleet.sessions.of(&fleet, &headers)
        && crate::fleet::same_token(form.csrf.as_bytes(), session.csrf.as_bytes())
    {
        fleet.sessions.close(&fleet, &headers);
    }
    (
        [(
            header::SET_COOKIE,
            format!("{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"),
        )],
        Redirect::to("/console/login"),
    )
        .into_response()
}

async fn script() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        include_str!("console/console.js"),
    )
        .into_response()
}

async fn style() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        include_str!("console/console.css"),
    )
        .into_response()
}

#[derive(Debug, Deserialize)]
struct JobsFilter {
    state: Option<String>,
    pool: Option<String>,
    label: Option<String>,
}

async fn jobs_page(
    State(fleet): State<Shared>,
    headers: HeaderMap,
    Query(filter): Query<JobsFilter>,
) -> Response {
    let session = match session(&fleet, &headers) {
        Ok(session) => session,
        Err(login) => return *login,
    };
    let state = filter
        .state
        .as_deref()
        .filter(|text| !text.is_empty())
        .and_then(JobState::parse);
    let pool = filter.pool.filter(|text| !text.is_empty());
    let label = filter
        .label
        .as_deref()
        .and_then(|text| text.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
    let listed = {
        let store = fleet.store();
        store
            .jobs(state, 500)
            .and_then(|jobs| Ok((jobs, store.step_counts()?, store.last_event_id()?)))
    };
    let (jobs, steps, after) = match listed {
        Ok(listed) => listed,
        Err(err) => return failed(Some(&session), err.into()),
    };
    let jobs: Vec<Job> = jobs
        .into_iter()
        .filter(|job| pool.as_ref().is_none_or(|pool| &job.pool == pool))
        .filter(|job| {
            label
                .as_ref()
                .is_none_or(|(k, v)| job.spec.labels.get(k) == Some(v))
        })
        .collect();
    let filter = pages::Filter {
        state,
        pool: pool.as_deref(),
        label: label.as_ref().map(|(k, v)| (k.as_str(), v.as_str())),
    };
    page(
        StatusCode::OK,
        pages::jobs(&session, &jobs, &steps, after, &filter),
    )
}

async fn job_page(
    State(fleet): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let session = match session(&fleet, &headers) {
        Ok(session) => session,
        Err(login) => return *login,
    };
    let found = {
        let store = fleet.store();
        store.job(&id).and_then(|job| {
            Ok((
                job,
                store.job_events(&id, 0, 100_000)?,
                store.job_report(&id)?.is_some(),
            ))
        })
    };
    match found {
        Ok((Some(job), events, report)) => {
            page(StatusCode::OK, pages::job(&session, &job, &events, report))
        }
        Ok((None, _, _)) => failed(Some(&session), Fail::not_found(format!("no job {id:?}"))),
        Err(err) => failed(Some(&session), err.into()),
    }
}

/// `POST /console/jobs/{id}/{cancel,requeue,resume,discard}`.
async fn job_action(
    State(fleet): State<Shared>,
    headers: HeaderMap,
    Path((id, action)): Path<(String, String)>,
    Form(form): Form<Csrf>,
) -> Response {
    let allowed = if action == "discard" {
        may_administer(&fleet, &headers, &form.csrf)
    } else {
        may_change(&fleet, &headers, &form.csrf)
    };
    let session = match allowed {
        Ok(session) => session,
        Err(refused) => return *refused,
    };
    let done = match action.as_str() {
        "cancel" => super::jobs::cancel(State(Arc::clone(&fleet)), Path(id.clone())).await,
        "requeue" => super::dead::requeue(State(Arc::clone(&fleet)), Path(id.clone())).await,
        "resume" => {
            super::dead::resume(
                State(Arc::clone(&fleet)),
                Path(id.clone()),
                Ok(Default::default()),
            )
            .await
        }
        "discard" => super::dead::discard(State(Arc::clone(&fleet)), Path(id.clone())).await,
        _ => Err(Fail::not_found("no such action")),
    };
    match done {
        Ok(answer) => {
            tracing::info!("console: a user asked to {action} job {id}");
            // A requeue or a resume shows the new job; the others, the job.
            let next = match action.as_str() {
                "requeue" | "resume" => new_job_id(answer).await.unwrap_or(id),
                _ => id,
            };
            Redirect::to(&format!(
                "/console/jobs/{}",
                crate::fleet::client::path_part(&next)
            ))
            .into_response()
        }
        Err(fail) => failed(Some(&session), fail),
    }
}

/// The id of the job an API answer holds.
async fn new_job_id(answer: Response) -> Option<String> {
    let body = axum::body::to_bytes(answer.into_body(), 1 << 20)
        .await
        .ok()?;
    let job: Job = serde_json::from_slice(&body).ok()?;
    Some(job.id)
}

/// A page of what `read` finds, drawn by `draw` for the request's session.
fn listing<T>(
    fleet: &Fleet,
    headers: &HeaderMap,
    read: impl FnOnce(&Fleet) -> ApiResult<T>,
    draw: impl FnOnce(&Session, &T) -> maud::Markup,
) -> Response {
    let session = match session(fleet, headers) {
        Ok(session) => session,
        Err(login) => return *login,
    };
    match read(fleet) {
        Ok(found) => page(StatusCode::OK, draw(&session, &found)),
        Err(fail) => failed(Some(&session), fail),
    }
}

async fn workers_page(State(fleet): State<Shared>, headers: HeaderMap) -> Response {
    listing(
        &fleet,
        &headers,
        super::workers::worker_list,
        |session, workers| pages::workers(session, workers),
    )
}

async fn recordings_page(State(fleet): State<Shared>, headers: HeaderMap) -> Response {
    let read = |fleet: &Fleet| Ok(fleet.store().list_recordings()?);
    listing(&fleet, &headers, read, |session, recordings| {
        pages::recordings(session, recordings)
    })
}

async fn schedules_page(State(fleet): State<Shared>, headers: HeaderMap) -> Response {
    let read = |fleet: &Fleet| Ok(fleet.store().schedules()?);
    listing(&fleet, &headers, read, |session, schedules| {
        pages::schedules(session, schedules)
    })
}

async fn dead_page(State(fleet): State<Shared>, headers: HeaderMap) -> Response {
    let read = |fleet: &Fleet| Ok(fleet.store().dead_jobs(1_000)?);
    listing(&fleet, &headers, read, |session, jobs| {
        pages::dead(session, jobs)
    })
}

async fn submit_page(State(fleet): State<Shared>, headers: HeaderMap) -> Response {
    let read = |fleet: &Fleet| Ok(fleet.store().list_recordings()?);
    listing(&fleet, &headers, read, |session, recordings| {
        pages::submit(session, recordings)
    })
}

/// An admin's form: `act` done, said in the log, then back to `back`.
async fn administered<F: Future<Output = ApiResult<Response>>>(
    fleet: &Fleet,
    headers: &HeaderMap,
    csrf: &str,
    act: F,
    said: impl FnOnce(&Session) -> String,
    back: &str,
) -> Response {
    let session = match may_administer(fleet, headers, csrf) {
        Ok(session) => session,
        Err(refused) => return *refused,
    };
    match act.await {
        Ok(_) => {
            tracing::info!("console: {}", said(&session));
            Redirect::to(back).into_response()
        }
        Err(fail) => failed(Some(&session), fail),
    }
}

async fn remove_schedule(
    State(fleet): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<Csrf>,
) -> Response {
    let act = super::schedules::remove(State(Arc::clone(&fleet)), Path(id.clone()));
    let said = |session: &Session| format!("{} removed schedule {id}", session.name);
    administered(
        &fleet,
        &headers,
        &form.csrf,
        act,
        said,
        "/console/schedules",
    )
    .await
}

/// `POST /console/workers/{id}/forget`.
async fn forget_worker(
    State(fleet): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<Csrf>,
) -> Response {
    let act = super::workers::forget(State(Arc::clone(&fleet)), Path(id.clone()));
    let said = |session: &Session| format!("{} forgot worker {id}", session.name);
    administered(&fleet, &headers, &form.csrf, act, said, "/console/workers").await
}

/// The submit form: a recording, its parameters (`NAME=VALUE` a line),
/// a pool, labels (the same), a strategy, a priority, attempts, and
/// optionally a cron
/// expression with its time zone.
#[derive(Debug, Deserialize)]
struct SubmitForm {
    csrf: String,
    recording: String,
    #[serde(default)]
    parameters: String,
    #[serde(default)]
    labels: String,
    pool: String,
    strategy: String,
    #[serde(default)]
    priority: String,
    attempts: u32,
    #[serde(default)]
    every: String,
    #[serde(default)]
    time_zone: String,
}

/// `NAME=VALUE` lines as a map.
fn pairs(text: &str, what: &str) -> ApiResult<BTreeMap<String, String>> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| match line.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() => {
                Ok((name.trim().to_owned(), value.to_owned()))
            }
            _ => Err(Fail::bad(format!(
                "{what} are NAME=VALUE lines, not {line:?}"
            ))),
        })
        .collect()
}

fn request_of(form: &SubmitForm) -> ApiResult<SubmitRequest> {
    let strategy = crate::fleet::parse_strategy(&form.strategy).map_err(|err| Fail::bad(err.0))?;
    let priority = match form.priority.trim() {
        "" => Default::default(),
        text => crate::fleet::parse_priority(text).map_err(|err| Fail::bad(err.0))?,
    };
    let every = Some(form.every.trim().to_owned()).filter(|every| !every.is_empty());
    let zone = Some(form.time_zone.trim().to_owned()).filter(|zone| !zone.is_empty());
    Ok(SubmitRequest {
        recording: form.recording.clone(),
        options: crate::fleet::JobOptions {
            strategy,
            ..Default::default()
        },
        pool: form.pool.trim().to_owned(),
        labels: pairs(&form.labels, "labels")?,
        set: pairs(&form.parameters, "parameters")?,
        rows: None,
        attempts: form.attempts,
        retry: Default::default(),
        priority,
        deadline_seconds: None,
        at: None,
        delay_seconds: None,
        time_zone: every.as_ref().and(zone),
        every,
    })
}

async fn submit(
    State(fleet): State<Shared>,
    headers: HeaderMap,
    Form(form): Form<SubmitForm>,
) -> Response {
    let session = match may_change(&fleet, &headers, &form.csrf) {
        Ok(session) => session,
        Err(refused) => return *refused,
    };
    let request = match request_of(&form) {
        Ok(request) => request,
        Err(fail) => return failed(Some(&session), fail),
    };
    if request.is_scheduled() {
        return match super::schedules::create(&fleet, request) {
            Ok(_) => Redirect::to("/console/schedules").into_response(),
            Err(fail) => failed(Some(&session), fail),
        };
    }
    match super::jobs::submit_now(&fleet, &request).await {
        Ok(jobs) => {
            let first = jobs.first().map(|job| job.id.as_str()).unwrap_or_default();
            Redirect::to(&format!(
                "/console/jobs/{}",
                crate::fleet::client::path_part(first)
            ))
            .into_response()
        }
        Err(fail) => failed(Some(&session), fail),
    }
}
