//! Who is asking: a token (`Authorization: Bearer`) names a role, user,
//! viewer or worker; the web console's session cookie names the role its
//! login token had, for reading only (a console's changes go through its
//! own forms, each with the session's CSRF token). A missing or wrong
//! credential is 401, the wrong role 403, with no detail.

use anyhow::Context as _;

use super::*;

/// What a credential may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// What a user may, and administer: read the audit log, discard dead
    /// letters, remove schedules, forget workers. Where the server has no
    /// admin token, users administer.
    Admin,
    /// Submit, cancel, requeue, resume, schedule; and read.
    User,
    /// Read only: jobs, workers, schedules, dead letters, metrics.
    Viewer,
    /// Pull work and report on it.
    Worker,
}

impl Role {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::User => "user",
            Role::Viewer => "viewer",
            Role::Worker => "worker",
        }
    }
}

/// Who a request comes from: the name of its credential and its role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Caller {
    pub name: String,
    pub role: Role,
}

/// A token the server accepts: given whole (from the environment) or as
/// its SHA-256 (from a tokens file, so that the file holds no secret).
#[derive(Debug)]
enum Secret {
    Plain(String),
    Sha256([u8; 32]),
}

#[derive(Debug)]
struct Credential {
    name: String,
    role: Role,
    secret: Secret,
}

/// The server's tokens: its environment's (named `user`, `worker`,
/// `viewer`) and a tokens file's.
#[derive(Debug, Default)]
pub(super) struct Tokens(Vec<Credential>);

impl Tokens {
    pub(super) fn add_plain(&mut self, name: &str, role: Role, token: String) {
        self.0.push(Credential {
            name: name.to_owned(),
            role,
            secret: Secret::Plain(token),
        });
    }

    /// Whose token `given` is. Every credential is compared, whichever
    /// matches, so the time says nothing of which.
    pub(super) fn caller(&self, given: &[u8]) -> Option<Caller> {
        use sha2::Digest as _;
        let hashed: [u8; 32] = sha2::Sha256::digest(given).into();
        let mut found = None;
        for credential in &self.0 {
            let matches = match &credential.secret {
                Secret::Plain(token) => crate::fleet::same_token(given, token.as_bytes()),
                Secret::Sha256(hash) => crate::fleet::same_token(&hashed, hash),
            };
            if matches && found.is_none() {
                found = Some(Caller {
                    name: credential.name.clone(),
                    role: credential.role,
                });
            }
        }
        found
    }

    /// Whether a caller of `role` may administer: an admin, or a user
    /// where the server has no admin token.
    pub(super) fn administers(&self, role: Role) -> bool {
        role == Role::Admin
            || (role == Role::User
                && !self
                    .0
                    .iter()
                    .any(|credential| credential.role == Role::Admin))
    }

    /// Whether a credential of that name and role is the server's.
    pub(super) fn has(&self, name: &str, role: Role) -> bool {
        self.0
            .iter()
            .any(|credential| credential.name == name && credential.role == role)
    }

    /// The server's tokens: `REPRISE_FLEET_USER_TOKEN` and
    /// `REPRISE_FLEET_WORKER_TOKEN` (required unless a tokens file is
    /// given), `REPRISE_FLEET_VIEWER_TOKEN`, and the file's.
    pub(super) fn load(file: Option<&std::path::Path>) -> anyhow::Result<Tokens> {
        let mut tokens = Tokens::default();
        let required = file.is_none();
        for (name, role, variable) in [
            ("user", Role::User, crate::fleet::USER_TOKEN_VAR),
            ("worker", Role::Worker, crate::fleet::WORKER_TOKEN_VAR),
            ("viewer", Role::Viewer, crate::fleet::VIEWER_TOKEN_VAR),
            ("admin", Role::Admin, crate::fleet::ADMIN_TOKEN_VAR),
        ] {
            let optional = matches!(role, Role::Viewer | Role::Admin);
            if let Some(token) = token(variable, required && !optional)? {
                tokens.add_plain(name, role, token);
            }
        }
        if let Some(file) = file {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("read the tokens file {}", file.display()))?;
            tokens.add_file(&text).map_err(|reason| {
                crate::settings::errors::UsageError(format!("{}: {reason}", file.display()))
            })?;
        }
        tokens.check()?;
        Ok(tokens)
    }

    /// A tokens file's entries: `[[token]]` tables of `name`, `role`
    /// (admin, user, viewer or worker) and `sha256` (the token's, in hex).
    fn add_file(&mut self, text: &str) -> Result<(), String> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            #[serde(default)]
            token: Vec<Entry>,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Entry {
            name: String,
            role: String,
            sha256: String,
        }
        let file: File = toml::from_str(text).map_err(|err| err.to_string())?;
        for entry in file.token {
            let role = match entry.role.as_str() {
                "admin" => Role::Admin,
                "user" => Role::User,
                "viewer" => Role::Viewer,
                "worker" => Role::Worker,
                other => {
                    return Err(format!(
                        "token {:?} has the role {other:?}; one of admin, user, viewer, worker",
                        entry.name
                    ));
                }
            };
            let hash = hex32(&entry.sha256).ok_or_else(|| {
                format!(
                    "token {:?}: sha256 must be 64 hexadecimal digits (printf %s TOKEN | sha256sum)",
                    entry.name
                )
            })?;
            self.0.push(Credential {
                name: entry.name,
                role,
                secret: Secret::Sha256(hash),
            });
        }
        Ok(())
    }

    /// Names unique and plain; no token given twice; a user and a worker
    /// credential at least.
    fn check(&self) -> anyhow::Result<()> {
        use crate::settings::errors::UsageError;
        let mut names = std::collections::BTreeSet::new();
        for credential in &self.0 {
            let plain = !credential.name.is_empty()
                && credential.name.len() <= 64
                && credential
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
            if !plain {
                anyhow::bail!(UsageError(format!(
                    "the token name {:?} must be 1 to 64 letters, digits, '-', '_' or '.'",
                    credential.name
                )));
            }
            if !names.insert(credential.name.as_str()) {
                anyhow::bail!(UsageError(format!(
                    "two tokens are named {:?}",
                    credential.name
                )));
            }
        }
        for (index, credential) in self.0.iter().enumerate() {
            if let Secret::Plain(token) = &credential.secret
                && self.0[index + 1..]
                    .iter()
                    .any(|other| matches!(&other.secret, Secret::Plain(t) if t == token))
            {
                anyhow::bail!(UsageError(format!(
                    "{}, {} and {} must differ (the roles are told apart by their token)",
                    crate::fleet::USER_TOKEN_VAR,
                    crate::fleet::WORKER_TOKEN_VAR,
                    crate::fleet::VIEWER_TOKEN_VAR
                )));
            }
        }
        for role in [Role::User, Role::Worker] {
            if !self.0.iter().any(|credential| credential.role == role) {
                anyhow::bail!(UsageError(format!(
                    "no {} token: set {} or name one in --tokens",
                    role.as_str(),
                    match role {
                        Role::User => crate::fleet::USER_TOKEN_VAR,
                        _ => crate::fleet::WORKER_TOKEN_VAR,
                    }
                )));
            }
        }
        Ok(())
    }
}

fn hex32(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (index, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(index * 2..index * 2 + 2)?, 16).ok()?;
    }
    Some(out)
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
    /// Whether it may administer (see [`Tokens::administers`]).
    pub administers: bool,
    /// The name of the token it was opened with.
    pub name: String,
    /// Sent back with every change the console makes.
    pub csrf: String,
}

/// The console's sessions, in the server's store by their cookie's SHA-256:
/// a restart logs no one out, and a session whose token the server no
/// longer has (or has with another role) is over.
#[derive(Debug, Default)]
pub(super) struct Sessions;

/// The SHA-256 of a cookie's value, in hex.
fn cookie_hash(id: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(id.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

impl Sessions {
    /// A new session for `caller`: its cookie value.
    pub(super) fn open(&self, fleet: &Fleet, caller: &Caller) -> ApiResult<String> {
        let id = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let now = chrono::Utc::now();
        let session = crate::store::StoredSession {
            name: caller.name.clone(),
            role: caller.role.as_str().to_owned(),
            csrf: uuid::Uuid::new_v4().simple().to_string(),
            expires: rules::stamp(now + SESSION),
        };
        fleet.store().add_session(
            &cookie_hash(&id),
            &session,
            &rules::stamp(now),
            MAX_SESSIONS,
        )?;
        Ok(id)
    }

    /// The live session a request's cookie names.
    pub(super) fn of(&self, fleet: &Fleet, headers: &HeaderMap) -> Option<Session> {
        let id = cookie(headers, COOKIE)?;
        let stored = fleet
            .store()
            .session(&cookie_hash(&id), &rules::stamp(chrono::Utc::now()))
            .inspect_err(|err| tracing::warn!("read a console session: {err}"))
            .ok()??;
        let role = [Role::Admin, Role::User, Role::Viewer]
            .into_iter()
            .find(|role| role.as_str() == stored.role)?;
        fleet.tokens.has(&stored.name, role).then_some(Session {
            role,
            administers: fleet.tokens.administers(role),
            name: stored.name,
            csrf: stored.csrf,
        })
    }

    pub(super) fn close(&self, fleet: &Fleet, headers: &HeaderMap) {
        if let Some(id) = cookie(headers, COOKIE)
            && let Err(err) = fleet.store().remove_session(&cookie_hash(&id))
        {
            tracing::warn!("end a console session: {err}");
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

/// Who a request comes from: its bearer token's owner, or, for a read
/// (GET or HEAD), its console session's.
pub(super) fn caller_of(fleet: &Fleet, request: &Request) -> Option<Caller> {
    let headers = request.headers();
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        let given = value.to_str().ok()?.strip_prefix("Bearer ")?;
        return fleet.tokens.caller(given.as_bytes());
    }
    let reading = matches!(*request.method(), Method::GET | Method::HEAD);
    reading
        .then(|| fleet.sessions.of(fleet, headers))
        .flatten()
        .map(|session| Caller {
            name: session.name,
            role: session.role,
        })
}

/// Lets the request through where its caller has one of the roles
/// `allowed` (any, where empty), with the caller in its extensions.
async fn check_role(fleet: &Fleet, mut request: Request, next: Next, allowed: &[Role]) -> Response {
    match caller_of(fleet, &request) {
        None => Fail::new(StatusCode::UNAUTHORIZED, "unauthorized", "unauthorized").into_response(),
        Some(caller) if !allowed.is_empty() && !allowed.contains(&caller.role) => {
            Fail::new(StatusCode::FORBIDDEN, "forbidden", "forbidden").into_response()
        }
        Some(caller) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
    }
}

/// Changes a user makes: a user's token only.
pub(super) async fn user_only(
    State(fleet): State<Shared>,
    request: Request,
    next: Next,
) -> Response {
    check_role(&fleet, request, next, &[Role::User, Role::Admin]).await
}

/// What admins do (users, where the server has no admin token).
pub(super) async fn admin_only(
    State(fleet): State<Shared>,
    request: Request,
    next: Next,
) -> Response {
    let allowed: &[Role] = if fleet.tokens.administers(Role::User) {
        &[Role::User, Role::Admin]
    } else {
        &[Role::Admin]
    };
    check_role(&fleet, request, next, allowed).await
}

/// What users and viewers read.
pub(super) async fn reader(State(fleet): State<Shared>, request: Request, next: Next) -> Response {
    check_role(
        &fleet,
        request,
        next,
        &[Role::User, Role::Viewer, Role::Admin],
    )
    .await
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

    fn hex(token: &[u8]) -> String {
        use sha2::Digest as _;
        sha2::Sha256::digest(token)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }

    #[test]
    fn each_token_names_its_role_and_a_cookie_is_read_by_its_name() {
        let mut tokens = Tokens::default();
        tokens.add_plain("user", Role::User, "u".repeat(16));
        tokens.add_plain("worker", Role::Worker, "w".repeat(16));
        let role = |given: &[u8]| tokens.caller(given).map(|caller| caller.role);
        assert_eq!(role(&[b'u'; 16]), Some(Role::User));
        assert_eq!(role(&[b'w'; 16]), Some(Role::Worker));
        assert_eq!(role(&[b'v'; 16]), None);
        // A file names tokens by their hashes: sha256("ana's token 0123").
        tokens
            .add_file(
                r#"
                [[token]]
                name = "ana"
                role = "viewer"
                sha256 = "HASH"
                "#
                .replace("HASH", &hex(b"ana's token 0123"))
                .as_str(),
            )
            .unwrap();
        assert_eq!(
            tokens.caller(b"ana's token 0123"),
            Some(Caller {
                name: "ana".into(),
                role: Role::Viewer
            })
        );
        assert_eq!(tokens.caller(b"ana's token 0124"), None);
        tokens.check().unwrap();
        for (file, says) in [
            (
                "[[token]]\nname = \"x\"\nrole = \"root\"\nsha256 = \"00\"",
                "one of admin, user, viewer, worker",
            ),
            (
                "[[token]]\nname = \"x\"\nrole = \"user\"\nsha256 = \"zz\"",
                "64 hexadecimal digits",
            ),
            ("[[token]]\nname = \"x\"\nrole = \"user\"", "missing field"),
        ] {
            let err = Tokens::default().add_file(file).unwrap_err();
            assert!(err.contains(says), "{file}: {err}");
        }
        // Users administer where the server has no admin, not otherwise.
        assert!(tokens.administers(Role::User) && !tokens.administers(Role::Viewer));
        tokens.add_plain("root", Role::Admin, "r".repeat(16));
        assert!(!tokens.administers(Role::User) && tokens.administers(Role::Admin));
        let mut twice = Tokens::default();
        twice.add_plain("user", Role::User, "u".repeat(16));
        twice.add_plain("user", Role::Worker, "w".repeat(16));
        assert!(
            twice
                .check()
                .unwrap_err()
                .to_string()
                .contains("two tokens are named")
        );
        let mut lonely = Tokens::default();
        lonely.add_plain("user", Role::User, "u".repeat(16));
        assert!(
            lonely
                .check()
                .unwrap_err()
                .to_string()
                .contains("no worker token")
        );
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, "a=1; reprise_session=abc".parse().unwrap());
        assert_eq!(cookie(&headers, COOKIE).as_deref(), Some("abc"));
        assert_eq!(cookie(&headers, "reprise"), None);
        assert_eq!(cookie_hash("abc").len(), 64);
        assert_ne!(cookie_hash("abc"), cookie_hash("abd"));
    }
}
