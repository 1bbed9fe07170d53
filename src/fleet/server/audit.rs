//! The audit log: every request that changes something (or tries to), by
//! whom (the name of its token, or its console session's), what, when and
//! from where, with the answer's status: kept in the store, logged, and
//! read with `GET /api/audit`. Reads, a worker's long polls and its step
//! reports are not lines of it. And a worker acts only as the workers its
//! own token registered.

use std::net::SocketAddr;

use axum::extract::ConnectInfo;

use super::auth::Caller;
use super::*;
use crate::fleet::AuditEntry;

/// Whether a request is a line of the audit log.
fn audited(method: &Method, path: &str) -> bool {
    !matches!(*method, Method::GET | Method::HEAD)
        && !path.ends_with("/pull")
        && !path.ends_with("/progress")
        && path != "/console/login"
}

/// The caller's address, as the connection gave it.
pub(super) fn from(request: &Request) -> String {
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip().to_string())
        .unwrap_or_default()
}

/// Adds a line to the log, and says it.
pub(super) fn write(
    fleet: &Fleet,
    who: Option<&Caller>,
    action: String,
    status: StatusCode,
    from: String,
) {
    let entry = AuditEntry {
        id: 0,
        at: crate::fleet::now(),
        who: who.map_or("unknown".to_owned(), |caller| caller.name.clone()),
        role: who.map_or("", |caller| caller.role.as_str()).to_owned(),
        action,
        status: status.as_u16(),
        from,
    };
    tracing::info!(
        "audit: {} ({}) {} -> {} from {}",
        entry.who,
        if entry.role.is_empty() {
            "no role"
        } else {
            &entry.role
        },
        entry.action,
        entry.status,
        entry.from
    );
    if let Err(err) = fleet.store().add_audit(&entry) {
        tracing::error!("audit log: {err}");
    }
}

/// The audit log's middleware: around every route, so that refusals are
/// lines too.
pub(super) async fn audit(State(fleet): State<Shared>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    if !audited(&method, &path) {
        return next.run(request).await;
    }
    // A console form is its session's; an API call its token's.
    let who = super::auth::caller_of(&fleet, &request).or_else(|| {
        fleet
            .sessions
            .of(&fleet, request.headers())
            .map(|session| Caller {
                name: session.name,
                role: session.role,
            })
    });
    let from = from(&request);
    let response = next.run(request).await;
    write(
        &fleet,
        who.as_ref(),
        format!("{method} {path}"),
        response.status(),
        from,
    );
    response
}

#[derive(Debug, Deserialize)]
pub(super) struct AuditQuery {
    limit: Option<usize>,
}

/// `GET /api/audit`: the newest lines first.
pub(super) async fn list(
    State(fleet): State<Shared>,
    Query(query): Query<AuditQuery>,
) -> ApiResult<Response> {
    let limit = query.limit.unwrap_or(1_000).min(100_000);
    Ok(axum::Json(fleet.store().audit(limit)?).into_response())
}

/// A worker's requests name a worker by its id: the token's own, else 403.
/// Workers registered before owners were kept are anyone's.
pub(super) fn own_worker(fleet: &Fleet, caller: &Caller, worker: &str) -> ApiResult<()> {
    match fleet.store().worker_owner(worker)? {
        Some(owner) if owner != caller.name => Err(Fail::new(
            StatusCode::FORBIDDEN,
            "not_yours",
            format!("worker {worker} was registered with another token"),
        )),
        _ => Ok(()),
    }
}
