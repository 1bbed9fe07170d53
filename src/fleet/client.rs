//! The fleet API's client: `reprise jobs submit|list|show|cancel|watch`,
//! and the calls `reprise worker` makes. The token comes from the
//! environment only and is sent only to the server's own address (no
//! redirect is followed).

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context as _;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{ApiError, Job, JobEvent, JobState, SubmitRequest};

/// A call that did not get the answer it wanted.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// No answer: the server is down, or the network is.
    #[error("the fleet server at {url} does not answer: {source}")]
    Unreachable { url: String, source: reqwest::Error },
    /// An answer with an error status.
    #[error("the fleet server refused")]
    Refused(#[source] crate::fleet::client::ServerRefused),
    #[error("the fleet server's answer is not what this client expects: {0}")]
    BadAnswer(String),
}

impl CallError {
    /// Worth trying again: no answer, or a server that is not ready.
    pub fn is_transient(&self) -> bool {
        match self {
            CallError::Unreachable { .. } => true,
            CallError::Refused(refused) => matches!(refused.status, 502 | 503),
            CallError::BadAnswer(_) => false,
        }
    }

    pub fn status(&self) -> Option<u16> {
        match self {
            CallError::Refused(refused) => Some(refused.status),
            _ => None,
        }
    }
}

/// The fleet server, from synchronous code (on a runtime of its own).
pub struct Api {
    base: String,
    token: String,
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("Api").field("base", &self.base).finish()
    }
}

/// An answer: its status and, unless it was 204, its body.
#[derive(Debug)]
pub struct Answered<T> {
    pub status: u16,
    pub body: Option<T>,
}

impl Api {
    /// A client of `server`, with the token of [`super::TOKEN_VAR`].
    pub fn new(server: &str) -> anyhow::Result<Api> {
        let token = std::env::var(super::TOKEN_VAR).unwrap_or_default();
        if token.is_empty() {
            anyhow::bail!(crate::settings::errors::UsageError(format!(
                "set {} to the fleet's token (a user token for `reprise jobs`, a worker token for `reprise worker`)",
                super::TOKEN_VAR
            )));
        }
        let url = reqwest::Url::parse(server).map_err(|err| {
            crate::settings::errors::UsageError(format!("--server {server:?}: {err}"))
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            anyhow::bail!(crate::settings::errors::UsageError(format!(
                "--server {server:?}: use an http:// or https:// URL"
            )));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let client = crate::llm::http::client_builder()
            .connect_timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Api {
            base: server.trim_end_matches('/').to_owned(),
            token,
            client,
            runtime,
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    fn send(
        &self,
        request: reqwest::RequestBuilder,
        timeout: Duration,
    ) -> Result<(u16, Vec<u8>), CallError> {
        let url = self.base.clone();
        self.runtime.block_on(async {
            let response = request
                .bearer_auth(&self.token)
                .timeout(timeout)
                .send()
                .await
                .map_err(|source| CallError::Unreachable {
                    url: url.clone(),
                    source,
                })?;
            let status = response.status().as_u16();
            let bytes = response
                .bytes()
                .await
                .map_err(|source| CallError::Unreachable { url, source })?;
            Ok((status, bytes.to_vec()))
        })
    }

    /// An answer read: a refusal's words are the server's (or a proxy's),
    /// shown without the token (a server that echoes the request's
    /// Authorization header would otherwise print it) and cut short.
    fn decode<T: DeserializeOwned>(
        &self,
        status: u16,
        bytes: &[u8],
    ) -> Result<Answered<T>, CallError> {
        if status == 204 {
            return Ok(Answered { status, body: None });
        }
        if !(200..300).contains(&status) {
            let redact = crate::llm::scrub::Secrets::new([self.token.as_str()]);
            let shown = |text: &str| {
                let text: String = redact.scrub(text).chars().take(300).collect();
                crate::present::terminal_safe(&text)
            };
            let error: Option<ApiError> = serde_json::from_slice(bytes).ok();
            return Err(CallError::Refused(match error {
                Some(error) => crate::fleet::client::ServerRefused {
                    status,
                    code: shown(&error.error.code),
                    message: shown(&error.error.message),
                },
                None => crate::fleet::client::ServerRefused {
                    status,
                    code: "unknown".into(),
                    message: shown(&String::from_utf8_lossy(bytes)),
                },
            }));
        }
        serde_json::from_slice(bytes)
            .map(|body| Answered {
                status,
                body: Some(body),
            })
            .map_err(|err| CallError::BadAnswer(err.to_string()))
    }

    /// The list at `path` (`doing` says what, in an error): printed as
    /// JSON where `json` (then `None`), else given for a table.
    pub fn listed<T: DeserializeOwned + Serialize>(
        &self,
        path: &str,
        doing: &'static str,
        json: bool,
    ) -> anyhow::Result<Option<Vec<T>>> {
        let answer: Answered<Vec<T>> = self
            .call(reqwest::Method::GET, path, None::<&()>, CALL)
            .context(doing)?;
        let items = answer.body.unwrap_or_default();
        if json {
            print_json(&items);
            return Ok(None);
        }
        Ok(Some(items))
    }

    /// An action on the thing at `path` (`doing` says what, in an error),
    /// with `body` where given: what it made of the thing (`what`).
    pub fn acted<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&(impl Serialize + ?Sized)>,
        doing: String,
        what: &str,
    ) -> anyhow::Result<T> {
        let answer: Answered<T> = self.call(method, path, body, CALL).context(doing)?;
        let made = answer
            .body
            .ok_or_else(|| CallError::BadAnswer(format!("no {what} in the answer")))?;
        Ok(made)
    }

    /// A JSON call; `timeout` bounds the whole exchange.
    pub fn call<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&(impl Serialize + ?Sized)>,
        timeout: Duration,
    ) -> Result<Answered<T>, CallError> {
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(body);
        }
        let (status, bytes) = self.send(request, timeout)?;
        self.decode(status, &bytes)
    }

    /// The body of a GET, as bytes.
    pub fn get_bytes(&self, path: &str, timeout: Duration) -> Result<Vec<u8>, CallError> {
        let request = self.client.get(format!("{}{path}", self.base));
        let (status, bytes) = self.send(request, timeout)?;
        if (200..300).contains(&status) {
            Ok(bytes)
        } else {
            self.decode::<serde_json::Value>(status, &bytes)
                .map(|_| Vec::new())
        }
    }

    /// Posts raw bytes (an export file).
    pub fn post_bytes<T: DeserializeOwned>(
        &self,
        path: &str,
        bytes: Vec<u8>,
        timeout: Duration,
    ) -> Result<Answered<T>, CallError> {
        self.send_bytes(
            reqwest::Method::POST,
            path,
            ("application/octet-stream", bytes),
            timeout,
        )
    }

    /// Sends raw bytes of a content type with `method`.
    pub fn send_bytes<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        (kind, bytes): (&str, Vec<u8>),
        timeout: Duration,
    ) -> Result<Answered<T>, CallError> {
        let request = self
            .client
            .request(method, format!("{}{path}", self.base))
            .header(reqwest::header::CONTENT_TYPE, kind)
            .body(bytes);
        let (status, bytes) = self.send(request, timeout)?;
        self.decode(status, &bytes)
    }

    /// Follows a job's Server-Sent Events, calling `each` for every event,
    /// until the stream ends (the job's final state), reconnecting after a
    /// dropped connection from the last event seen (at most `reconnects`
    /// times in a row).
    pub fn follow(
        &self,
        job: &str,
        reconnects: usize,
        each: &mut dyn FnMut(&JobEvent),
    ) -> Result<(), CallError> {
        let mut last: Option<i64> = None;
        let mut failures = 0;
        loop {
            let mut request = self
                .client
                .get(format!("{}/api/jobs/{job}/events", self.base))
                .bearer_auth(&self.token)
                .header(reqwest::header::ACCEPT, "text/event-stream");
            if let Some(last) = last {
                request = request.header("Last-Event-ID", last.to_string());
            }
            let base = self.base.clone();
            let ended = self.runtime.block_on(async {
                let mut response =
                    request
                        .send()
                        .await
                        .map_err(|source| CallError::Unreachable {
                            url: base.clone(),
                            source,
                        })?;
                let status = response.status().as_u16();
                if status != 200 {
                    let bytes = response.bytes().await.unwrap_or_default();
                    return self
                        .decode::<serde_json::Value>(status, &bytes)
                        .map(|_| true);
                }
                let mut buffer: Vec<u8> = Vec::new();
                loop {
                    // Silence longer than three keep-alives is a dead link.
                    let chunk =
                        tokio::time::timeout(Duration::from_secs(35), response.chunk()).await;
                    let chunk = match chunk {
                        Ok(Ok(Some(chunk))) => chunk,
                        Ok(Ok(None)) => return Ok(true),
                        Ok(Err(source)) => {
                            return Err(CallError::Unreachable { url: base, source });
                        }
                        Err(_) => return Ok(false),
                    };
                    buffer.extend_from_slice(&chunk);
                    for block in sse_blocks(&mut buffer)? {
                        if let Some(event) = parse_sse(&block) {
                            last = Some(event.id);
                            each(&event);
                        }
                    }
                }
            });
            match ended {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(err) if err.is_transient() && failures < reconnects => {}
                Err(err) => return Err(err),
            }
            failures += 1;
            if failures > reconnects {
                return Err(CallError::BadAnswer(
                    "the event stream kept dropping".into(),
                ));
            }
            std::thread::sleep(Duration::from_millis(500 * failures as u64));
        }
    }
}

const CALL: Duration = Duration::from_secs(30);

/// `reprise jobs submit`.
#[derive(Debug)]
pub struct Submit {
    pub request: SubmitRequest,
    /// A local export file to upload first (instead of a recording the
    /// server has).
    pub upload: Option<std::path::PathBuf>,
    pub json: bool,
}

pub fn submit(api: &Api, mut submit: Submit) -> anyhow::Result<()> {
    if let Some(path) = &submit.upload {
        let bytes = std::fs::read(path).with_context(|| format!("read {}", path.display()))?;
        let answer: Answered<serde_json::Value> = api
            .post_bytes("/api/recordings", bytes, Duration::from_secs(300))
            .with_context(|| format!("upload {}", path.display()))?;
        let body = answer.body.unwrap_or_default();
        if let Some(id) = body["id"].as_str() {
            submit.request.recording = id.to_owned();
        }
    }
    let answer: Answered<serde_json::Value> = api
        .call(
            reqwest::Method::POST,
            "/api/jobs",
            Some(&submit.request),
            CALL,
        )
        .context("submit the job")?;
    let body = answer.body.unwrap_or_default();
    if submit.json {
        println!("{body}");
        return Ok(());
    }
    if let Ok(schedule) = serde_json::from_value(body["schedule"].clone()) {
        schedules::made(&schedule);
        return Ok(());
    }
    let jobs: Vec<Job> = serde_json::from_value(body["jobs"].clone()).unwrap_or_default();
    for job in &jobs {
        println!("{}", job.id);
    }
    eprintln!(
        "submitted {} to pool {:?}",
        crate::present::plural(jobs.len(), "job"),
        submit.request.pool
    );
    Ok(())
}

pub fn list(api: &Api, state: Option<JobState>, json: bool) -> anyhow::Result<()> {
    let path = match state {
        Some(state) => format!("/api/jobs?state={}", state.as_str()),
        None => "/api/jobs".to_owned(),
    };
    let Some(jobs) = api.listed::<Job>(&path, "list the jobs", json)? else {
        return Ok(());
    };
    println!(
        "{:<36}  {:<10}  {:<10}  {:<8}  {:>7}  {:<24}  reason",
        "job", "state", "pool", "priority", "attempt", "worker"
    );
    for job in jobs {
        println!(
            "{:<36}  {:<10}  {:<10}  {:<8}  {:>7}  {:<24}  {}",
            job.id,
            job.state.as_str(),
            crate::present::terminal_safe(&job.pool),
            job.spec.priority.as_str(),
            job.attempt,
            crate::present::terminal_safe(job.worker.as_deref().unwrap_or("-")),
            crate::present::terminal_safe(job.reason.as_deref().unwrap_or(""))
        );
    }
    Ok(())
}

pub fn show(api: &Api, id: &str, json: bool) -> anyhow::Result<()> {
    let answer: Answered<serde_json::Value> = api
        .call(
            reqwest::Method::GET,
            &format!("/api/jobs/{}", path_part(id)),
            None::<&()>,
            CALL,
        )
        .with_context(|| format!("show job {id}"))?;
    let body = answer.body.unwrap_or_default();
    if json {
        print_json(&body);
        return Ok(());
    }
    let job: Job = serde_json::from_value(body["job"].clone())
        .map_err(|err| CallError::BadAnswer(err.to_string()))?;
    println!(
        "job {} ({}), recording {}, pool {} ({} priority), attempt {} of {}",
        job.id,
        job.state.as_str(),
        job.recording_id,
        crate::present::terminal_safe(&job.pool),
        job.spec.priority.as_str(),
        job.attempt,
        job.spec.attempts
    );
    if let Some(reason) = &job.reason {
        println!("  {}", crate::present::terminal_safe(reason));
    }
    let events: Vec<JobEvent> = serde_json::from_value(body["events"].clone()).unwrap_or_default();
    for event in &events {
        println!("  {}", event_line(event));
    }
    Ok(())
}

pub fn cancel(api: &Api, id: &str) -> anyhow::Result<()> {
    let path = format!("/api/jobs/{}/cancel", path_part(id));
    let doing = format!("cancel job {id}");
    let job: Job = api.acted(reqwest::Method::POST, &path, None::<&()>, doing, "job")?;
    if job.state.is_final() {
        println!("job {} {}", job.id, job.state.as_str());
    } else {
        println!(
            "job {} will stop at its next step (it is {})",
            job.id,
            job.state.as_str()
        );
    }
    Ok(())
}

/// `reprise jobs watch`: every event as it happens, until the job ends;
/// its final state and why.
pub fn watch(api: &Api, id: &str, json: bool) -> anyhow::Result<(JobState, String)> {
    let mut last_state = None;
    api.follow(&path_part(id), 5, &mut |event| {
        if json {
            println!(
                "{}",
                serde_json::to_string(event).expect("events serialize")
            );
        } else {
            eprintln!("{}", event_line(event));
        }
        if let Some(change) = event.state_change() {
            last_state = Some((change.state, change.reason.unwrap_or_default()));
        }
    })
    .with_context(|| format!("watch job {id}"))?;
    last_state.ok_or_else(|| anyhow::anyhow!("job {id}'s stream ended without a state"))
}

/// One event as a line for a person.
pub fn event_line(event: &JobEvent) -> String {
    let data = &event.data;
    let text = match event.kind {
        super::EventKind::State => match event.state_change() {
            Some(change) => {
                let mut line = format!("attempt {}: {}", event.attempt, change.state.as_str());
                if let Some(worker) = change.worker {
                    line.push_str(&format!(" on {worker}"));
                }
                if let Some(reason) = change.reason {
                    line.push_str(&format!(" ({reason})"));
                }
                line
            }
            None => format!("attempt {}: ?", event.attempt),
        },
        super::EventKind::Step => {
            match serde_json::from_value::<crate::replay::StepLine>(data.clone()) {
                Ok(line) => format!("attempt {}: {}", event.attempt, line.words()),
                Err(err) => format!(
                    "attempt {}: a step this client cannot read ({err})",
                    event.attempt
                ),
            }
        }
    };
    format!("{} {}", event.at, crate::present::terminal_safe(&text))
}

/// A value as the answer of `--json`: pretty JSON on stdout.
fn print_json<T: Serialize>(value: &T) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).expect("answers serialize")
    );
}

/// An id as one path segment (never a way to another endpoint).
pub(crate) fn path_part(id: &str) -> String {
    id.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect()
}

/// `k=v` pairs as a map; a repeated key keeps its last value.
pub fn pairs(
    items: &[String],
    parse: fn(&str) -> Result<(String, String), crate::settings::errors::UsageError>,
) -> Result<BTreeMap<String, String>, crate::settings::errors::UsageError> {
    items.iter().map(|item| parse(item)).collect()
}

pub mod audit;
pub mod dead;
pub mod schedules;
mod sse;
use sse::{parse_sse, sse_blocks};
#[cfg(test)]
mod tests;

/// A server (the fleet's) that answered with an error: its status, code
/// and message.
#[derive(Debug, thiserror::Error)]
#[error("{status}, {code}: {message}")]
pub struct ServerRefused {
    pub status: u16,
    pub code: String,
    pub message: String,
}

/// A fleet job watched to its end that did not complete with every step
/// verified; its exit code says how it ended, as a replay's would.
#[derive(Debug, thiserror::Error)]
#[error("job {id} ended {state}: {reason}")]
pub struct JobEnded {
    pub id: String,
    pub state: &'static str,
    pub reason: String,
    pub kind: crate::replay::stopped::StopKind,
}
