//! Who is asking: a token (`Authorization: Bearer`) names a role, user,
//! viewer or worker; the web console's session cookie names the role its
//! login token had, for reading only (a console's changes go through its
//! own forms, each with the session's CSRF token). A missing or wrong
//! credential is 401, the wrong role 403, with no detail.

use std::collections::HashMap;

use super::*;

/// What a credential may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// Submit, cancel, requeue, schedule; and read.
    User,
    /// Read only: jobs, workers, schedules, dead letters, metrics.
    Viewer,
    /// Pull work and report on it.
    Worker,
}

impl Role {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Viewer => "viewer",
            Role::Worker => "worker",
        }
    }
}

/// The server's tokens, from its environment.
#[derive(Debug)]
pub(super) struct Tokens {
    pub user: String,
    pub worker: String,
    pub viewer: Option<String>,
}

impl Tokens {
    /// The role `given` is the token of. Every token is compared, whichever
    /// matches, so the time says nothing of which.
    pub(super) fn role(&self, given: &[u8]) -> Option<Role> {
        let user = crate::fleet::same_token(given, self.user.as_bytes());
        let worker = crate::fleet::same_token(given, self.worker.as_bytes());
        let viewer = self
            .viewer
            .as_ref()
            .is_some_and(|viewer| crate::fleet::same_token(given, viewer.as_bytes()));
        match (user, worker, viewer) {
            (true, _, _) => Some(Role::User),
            (_, true, _) => Some(Role::Worker),
            (_, _, true) => Some(Role::Viewer),
            _ => None,
        }
    }
}

/// The name of the console's session cookie.
pub(super) const COOKIE: &str = "reprise_session";
/// How long a console session lasts.
pub(super) const SESSION: Duration = Duration::from_secs(12 * 3_600);
/// The most sessions kept at once (the oldest go first).
const MAX_SESSIONS: usize = 10_000;

/// A console session.
#[derive(Debug, Clone)]
pub(super) struct Session {
    pub role: Role,
    /// Sent back with every change the console makes.
    pub csrf: String,
    expires: Instant,
}

/// The console's sessions, in memory: a server restart logs everyone out.
#[derive(Debug, Default)]
pub(super) struct Sessions(Mutex<HashMap<String, Session>>);

impl Sessions {
    /// A new session for `role`: its cookie value.
    pub(super) fn open(&self, role: Role) -> String {
        let mut sessions = self.0.lock().unwrap_or_else(|poison| poison.into_inner());
        let now = Instant::now();
        sessions.retain(|_, session| session.expires > now);
        if sessions.len() >= MAX_SESSIONS
            && let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, session)| session.expires)
                .map(|(id, _)| id.clone())
        {
            sessions.remove(&oldest);
        }
        let id = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        sessions.insert(
            id.clone(),
            Session {
                role,
                csrf: uuid::Uuid::new_v4().simple().to_string(),
                expires: now + SESSION,
            },
        );
        id
    }

    /// The live session a request's cookie names.
    pub(super) fn of(&self, headers: &HeaderMap) -> Option<Session> {
        let id = cookie(headers, COOKIE)?;
        let sessions = self.0.lock().unwrap_or_else(|poison| poison.into_inner());
        sessions
            .get(&id)
            .filter(|session| session.expires > Instant::now())
            .cloned()
    }

    pub(super) fn close(&self, headers: &HeaderMap) {
        if let Some(id) = cookie(headers, COOKIE) {
            let mut sessions = self.0.lock().unwrap_or_else(|poison| poison.into_inner());
            sessions.remove(&id);
        }
    }
}

/// A cookie's value from the request's `Cookie` headers.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_owned())
}

/// The role of a request: its bearer token's, or, for a read (GET or
/// HEAD), its console session's.
fn role_of(fleet: &Fleet, request: &Request) -> Option<Role> {
    let headers = request.headers();
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        let given = value.to_str().ok()?.strip_prefix("Bearer ")?;
        return fleet.tokens.role(given.as_bytes());
    }
    let reading = matches!(*request.method(), Method::GET | Method::HEAD);
    reading
        .then(|| fleet.sessions.of(headers))
        .flatten()
        .map(|session| session.role)
}

async fn check_role(fleet: &Fleet, request: Request, next: Next, allowed: &[Role]) -> Response {
    match role_of(fleet, &request) {
        None => Fail::new(StatusCode::UNAUTHORIZED, "unauthorized", "unauthorized").into_response(),
        Some(role) if !allowed.is_empty() && !allowed.contains(&role) => {
            Fail::new(StatusCode::FORBIDDEN, "forbidden", "forbidden").into_response()
        }
        _ => next.run(request).await,
    }
}

/// Changes a user makes: a user's token only.
pub(super) async fn user_only(
    State(fleet): State<Shared>,
    request: Request,
    next: Next,
) -> Response {
    check_role(&fleet, request, next, &[Role::User]).await
}

/// What users and viewers read.
pub(super) async fn reader(State(fleet): State<Shared>, request: Request, next: Next) -> Response {
    check_role(&fleet, request, next, &[Role::User, Role::Viewer]).await
}

pub(super) async fn worker_only(
    State(fleet): State<Shared>,
    request: Request,
    next: Next,
) -> Response {
    check_role(&fleet, request, next, &[Role::Worker]).await
}

pub(super) async fn any_role(
    State(fleet): State<Shared>,
    request: Request,
    next: Next,
) -> Response {
    check_role(&fleet, request, next, &[]).await
}

/// A token from the server's environment: at least [`MIN_TOKEN_LEN`]
/// characters; `None` where it is optional and unset.
pub(super) fn token(variable: &str, required: bool) -> anyhow::Result<Option<String>> {
    let value = std::env::var(variable).unwrap_or_default();
    if value.is_empty() && !required {
        return Ok(None);
    }
    if value.len() < crate::fleet::MIN_TOKEN_LEN {
        anyhow::bail!(crate::settings::errors::UsageError(format!(
            "set {variable} to a token of at least {} characters (the server reads its tokens only from the environment)",
            crate::fleet::MIN_TOKEN_LEN
        )));
    }
    Ok(Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_token_names_its_role_and_a_cookie_is_read_by_its_name() {
        let tokens = Tokens {
            user: "u".repeat(16),
            worker: "w".repeat(16),
            viewer: Some("v".repeat(16)),
        };
        assert_eq!(tokens.role(&[b'u'; 16]), Some(Role::User));
        assert_eq!(tokens.role(&[b'w'; 16]), Some(Role::Worker));
        assert_eq!(tokens.role(&[b'v'; 16]), Some(Role::Viewer));
        assert_eq!(tokens.role(b"vvvvvvvvvvvvvvv"), None);
        let none = Tokens {
            viewer: None,
            ..tokens
        };
        assert_eq!(none.role(&[b'v'; 16]), None);
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, "a=1; reprise_session=abc".parse().unwrap());
        assert_eq!(cookie(&headers, COOKIE).as_deref(), Some("abc"));
        assert_eq!(cookie(&headers, "reprise"), None);
        let sessions = Sessions::default();
        let id = sessions.open(Role::Viewer);
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, format!("{COOKIE}={id}").parse().unwrap());
        assert_eq!(sessions.of(&headers).unwrap().role, Role::Viewer);
        sessions.close(&headers);
        assert!(sessions.of(&headers).is_none());
    }
}
