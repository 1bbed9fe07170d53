//! One provider over HTTP: timeouts on connect and on the whole request,
//! retries on 429, 5xx, resets and timeouts with exponential backoff and
//! jitter (honouring `Retry-After`), at most `max_attempts` attempts; other
//! 4xx answers fail at once with the provider's message. A redirect is
//! followed only to the same origin (scheme, host and port) as the request,
//! so a credential header never reaches another host; every string that
//! leaves here has had the configured secrets scrubbed out of it.

use std::time::{Duration, Instant};

use reprise_strategies::llm::{LlmError, LlmRequest, Usage};

use super::provider::Provider;
use super::scrub::Secrets;

/// At most this many same-origin redirects are followed.
const MAX_REDIRECTS: usize = 5;

/// Waits between attempts; tests record the waits instead of sleeping.
pub trait Sleeper {
    fn sleep(&mut self, duration: Duration);
}

/// The real clock.
#[derive(Debug, Default)]
pub struct RealSleeper;

impl Sleeper for RealSleeper {
    fn sleep(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// How calls are retried.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    /// The first backoff; it doubles with every attempt.
    pub base_delay: Duration,
    /// No single wait is longer than this, `Retry-After` included.
    pub max_delay: Duration,
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    /// Seeds the jitter: drawn afresh for each policy made, so that two
    /// processes turned away together by one provider do not come back
    /// together; a test may set it to predict the waits.
    pub jitter_seed: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(60),
            jitter_seed: fastrand::u64(..),
        }
    }
}

impl RetryPolicy {
    /// The wait after failed attempt `attempt` (1-based): the base doubled
    /// for each earlier attempt, plus up to a quarter of it as jitter.
    pub fn backoff(&self, attempt: u32, jitter_state: &mut u64) -> Duration {
        let exponential = self.base_delay.saturating_mul(1 << (attempt - 1).min(16));
        // xorshift64: enough randomness to spread retries, no extra crate.
        *jitter_state ^= *jitter_state << 13;
        *jitter_state ^= *jitter_state >> 7;
        *jitter_state ^= *jitter_state << 17;
        let fraction = (*jitter_state % 1000) as f64 / 1000.0 * 0.25;
        exponential.mul_f64(1.0 + fraction).min(self.max_delay)
    }
}

/// A successful call.
#[derive(Debug)]
pub struct CallResult {
    pub text: String,
    pub usage: Usage,
    pub attempts: u32,
    pub latency: Duration,
}

/// A failed call: why, and what it cost.
#[derive(Debug)]
pub struct CallFailure {
    pub error: LlmError,
    /// Requests actually sent.
    pub attempts: u32,
    pub latency: Duration,
}

/// Calls providers over HTTP from synchronous code, on a runtime of its own.
#[derive(Debug)]
pub struct HttpCaller {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    pub policy: RetryPolicy,
    secrets: Secrets,
}

enum Failure {
    Retry {
        reason: String,
        retry_after: Option<Duration>,
    },
    Final(LlmError),
}

/// A client builder for every HTTP client of Reprise's (the providers', the
/// segmentation server's, the fleet's): TLS through rustls with *ring* as
/// its cryptography, installed for the process the first time one is made
/// (aws-lc-rs, reqwest's default, took minutes of a cold build on two
/// cores for the same certificates and ciphers).
pub fn client_builder() -> reqwest::ClientBuilder {
    static PROVIDER: std::sync::Once = std::sync::Once::new();
    PROVIDER.call_once(|| {
        // Err only when a provider is installed already: that one serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
}

impl HttpCaller {
    /// A caller that scrubs `secrets` from everything it returns or logs.
    pub fn new(policy: RetryPolicy, secrets: Secrets) -> anyhow::Result<HttpCaller> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let client = client_builder()
            .connect_timeout(policy.connect_timeout)
            .timeout(policy.request_timeout)
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                let same_origin = attempt
                    .previous()
                    .first()
                    .is_some_and(|first| first.origin() == attempt.url().origin());
                if same_origin && attempt.previous().len() <= MAX_REDIRECTS {
                    attempt.follow()
                } else {
                    // The 3xx answer itself comes back, and is refused below.
                    attempt.stop()
                }
            }))
            .build()?;
        Ok(HttpCaller {
            runtime,
            client,
            policy,
            secrets,
        })
    }

    /// Calls `provider`, retrying within the policy's bound.
    pub fn call(
        &self,
        provider: &Provider,
        request: &LlmRequest,
        sleeper: &mut dyn Sleeper,
    ) -> Result<CallResult, CallFailure> {
        let body = provider.body(request);
        let mut jitter_state = self.policy.jitter_seed | 1;
        let started = Instant::now();
        let max_attempts = self.policy.max_attempts.max(1);
        let mut last = String::new();
        for attempt in 1..=max_attempts {
            match self.attempt(provider, &body) {
                Ok((text, usage)) => {
                    return Ok(CallResult {
                        text: self.secrets.scrub(&text),
                        usage,
                        attempts: attempt,
                        latency: started.elapsed(),
                    });
                }
                Err(Failure::Final(error)) => {
                    return Err(CallFailure {
                        error: self.secrets.scrub_error(error),
                        attempts: attempt,
                        latency: started.elapsed(),
                    });
                }
                Err(Failure::Retry {
                    reason,
                    retry_after,
                }) => {
                    let reason = self.secrets.scrub(&reason);
                    tracing::warn!(
                        provider = provider.name(),
                        attempt,
                        "model call failed, will retry: {reason}"
                    );
                    last = reason;
                    if attempt < max_attempts {
                        let wait = match retry_after {
                            Some(wait) => wait.min(self.policy.max_delay),
                            None => self.policy.backoff(attempt, &mut jitter_state),
                        };
                        sleeper.sleep(wait);
                    }
                }
            }
        }
        Err(CallFailure {
            error: LlmError::GaveUp {
                provider: provider.name().into(),
                attempts: max_attempts,
                last,
            },
            attempts: max_attempts,
            latency: started.elapsed(),
        })
    }

    fn attempt(
        &self,
        provider: &Provider,
        body: &serde_json::Value,
    ) -> Result<(String, Usage), Failure> {
        let mut builder = self.client.post(provider.url()).json(body);
        for (name, value) in provider.headers() {
            builder = builder.header(name, value);
        }
        let name = provider.name();
        self.runtime.block_on(async {
            let response = builder.send().await.map_err(|err| Failure::Retry {
                reason: describe(&err),
                retry_after: None,
            })?;
            let status = response.status();
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.trim().parse::<f64>().ok())
                // A server's number, not ours: one past what a Duration holds
                // is ignored rather than trusted (the wait is capped anyway).
                .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok());
            let location = response
                .headers()
                .get("location")
                .and_then(|value| value.to_str().ok())
                .map(|value| response.url().join(value).ok());
            let text = response.text().await.map_err(|err| Failure::Retry {
                reason: describe(&err),
                retry_after: None,
            })?;
            if status.is_redirection() {
                let to = response_location(&location);
                return Err(Failure::Final(LlmError::Refused {
                    provider: name.into(),
                    status: status.as_u16(),
                    message: format!(
                        "it redirected the request to {to}; Reprise sends a provider's key only to its configured base URL's host, so the redirect was not followed (set the base URL to where the provider really is)"
                    ),
                }));
            }
            if status.as_u16() == 429 || status.is_server_error() {
                let reason = format!(
                    "HTTP {}: {}",
                    status.as_u16(),
                    Provider::error_message(&text)
                );
                return Err(Failure::Retry {
                    reason,
                    retry_after,
                });
            }
            if !status.is_success() {
                return Err(Failure::Final(LlmError::Refused {
                    provider: name.into(),
                    status: status.as_u16(),
                    message: Provider::error_message(&text),
                }));
            }
            let value: serde_json::Value = serde_json::from_str(&text).map_err(|err| {
                Failure::Final(LlmError::Malformed {
                    provider: name.into(),
                    reason: format!("the body is not JSON: {err}"),
                })
            })?;
            provider.parse(&value).map_err(|err| {
                Failure::Final(LlmError::Malformed {
                    provider: name.into(),
                    reason: err.to_string(),
                })
            })
        })
    }
}

/// Where a redirect pointed, as its origin only (a path or query may carry
/// anything).
fn response_location(location: &Option<Option<reqwest::Url>>) -> String {
    match location {
        Some(Some(url)) => format!("another host ({})", url.origin().ascii_serialization()),
        Some(None) => "an address that is not a URL".into(),
        None => "an unnamed place (no Location header)".into(),
    }
}

/// A transport error in words, without the URL's query or any header.
fn describe(err: &reqwest::Error) -> String {
    let kind = if err.is_timeout() {
        "timed out"
    } else if err.is_connect() {
        "could not connect"
    } else if err.is_body() || err.is_decode() {
        "the answer was cut off"
    } else {
        "the connection failed"
    };
    let mut source = std::error::Error::source(err);
    let mut detail = String::new();
    while let Some(cause) = source {
        detail = cause.to_string();
        source = cause.source();
    }
    if detail.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind} ({detail})")
    }
}
