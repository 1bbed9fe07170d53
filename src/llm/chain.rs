//! The `Llm` the strategies get: the configured providers in order, each with
//! its retries; a provider that fails hands over to the next and the failure
//! is recorded; answers come from the cache when the same request was made
//! before; every call is accounted in the store.

use sha2::{Digest, Sha256};

use reprise_models::screenshot::hex;
use reprise_strategies::llm::{Llm, LlmError, LlmReply, LlmRequest, Usage};

use super::http::{HttpCaller, RealSleeper, Sleeper};
use super::provider::Provider;
use super::scrub::Secrets;
use super::settings::LlmSettings;
use crate::store::{CachedReply, CallRow, Store};

pub struct ChainLlm {
    settings: LlmSettings,
    caller: HttpCaller,
    store: Store,
    sleeper: Box<dyn Sleeper>,
    /// The replay run the calls belong to, for its totals.
    pub run_id: Option<String>,
}

impl std::fmt::Debug for ChainLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainLlm")
            .field("providers", &self.settings.providers)
            .finish_non_exhaustive()
    }
}

impl ChainLlm {
    /// A chain over the settings' providers, accounting into `store` (a
    /// connection of its own, so that callers keep theirs).
    pub fn new(settings: LlmSettings, store: Store) -> anyhow::Result<ChainLlm> {
        let secrets = Secrets::new(
            settings
                .providers
                .iter()
                .filter_map(|provider| provider.api_key.as_deref()),
        );
        let caller = HttpCaller::new(settings.policy.clone(), secrets)?;
        Ok(ChainLlm {
            settings,
            caller,
            store,
            sleeper: Box::new(RealSleeper),
            run_id: None,
        })
    }

    /// Replaces the clock that spaces retries (tests record the waits).
    pub fn with_sleeper(mut self, sleeper: Box<dyn Sleeper>) -> Self {
        self.sleeper = sleeper;
        self
    }

    pub fn providers(&self) -> &[Provider] {
        &self.settings.providers
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The cache key: a hash of everything that decides the answer.
    fn cache_key(provider: &Provider, request: &LlmRequest) -> String {
        let mut hasher = Sha256::new();
        for part in [
            provider.name(),
            provider.base_url.as_str(),
            provider.model.as_str(),
        ] {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
        hasher.update(serde_json::to_vec(request).expect("requests serialize"));
        hex(&hasher.finalize())
    }

    fn account(&mut self, call: CallRow) {
        if let Err(err) = self.store.record_llm_call(&call) {
            tracing::warn!("could not account a model call: {err}");
        }
    }

    /// The answer `provider` gave `request` before, kept under `key`, where
    /// the cache is on and holds one (accounted as a cached call).
    fn cached(&mut self, provider: &Provider, request: &LlmRequest, key: &str) -> Option<LlmReply> {
        if !self.settings.use_cache {
            return None;
        }
        let cached = self.store.cached_reply(key).ok()??;
        let usage = Usage {
            input_tokens: cached.input_tokens,
            output_tokens: cached.output_tokens,
        };
        let call = Call {
            usage,
            latency_ms: 0,
            attempts: 0,
            cached: true,
            error: None,
        };
        self.account_call(provider, request, call);
        Some(LlmReply {
            text: cached.text,
            provider: provider.name().into(),
            model: provider.model.clone(),
            usage,
            cached: true,
            latency_ms: 0,
        })
    }

    /// Accounts one call of `provider` for `request`: its cost is the price
    /// table's for an answered call, nothing for a cached or failed one.
    fn account_call(&mut self, provider: &Provider, request: &LlmRequest, call: Call) {
        let cost_usd = if call.cached || call.error.is_some() {
            Some(0.0)
        } else {
            self.settings.cost(
                provider.name(),
                &provider.model,
                call.usage.input_tokens,
                call.usage.output_tokens,
            )
        };
        self.account(CallRow {
            run_id: self.run_id.clone(),
            purpose: request.purpose.clone(),
            provider: provider.name().to_owned(),
            model: provider.model.clone(),
            input_tokens: call.usage.input_tokens,
            output_tokens: call.usage.output_tokens,
            latency_ms: call.latency_ms,
            attempts: call.attempts,
            cached: call.cached,
            cost_usd,
            error: call.error,
        });
    }
}

/// One model call as it is accounted.
struct Call {
    usage: Usage,
    latency_ms: u64,
    attempts: u32,
    cached: bool,
    error: Option<String>,
}

impl Llm for ChainLlm {
    fn complete(&mut self, request: &LlmRequest) -> Result<LlmReply, LlmError> {
        if self.settings.providers.is_empty() {
            return Err(LlmError::NotConfigured);
        }
        let mut failures: Vec<LlmError> = Vec::new();
        for provider in self.settings.providers.clone() {
            let key = Self::cache_key(&provider, request);
            if let Some(reply) = self.cached(&provider, request, &key) {
                return Ok(reply);
            }
            match self.caller.call(&provider, request, self.sleeper.as_mut()) {
                Ok(result) => {
                    let latency_ms = result.latency.as_millis() as u64;
                    let call = Call {
                        usage: result.usage,
                        latency_ms,
                        attempts: result.attempts,
                        cached: false,
                        error: None,
                    };
                    self.account_call(&provider, request, call);
                    if self.settings.use_cache {
                        let cached = CachedReply {
                            text: result.text.clone(),
                            input_tokens: result.usage.input_tokens,
                            output_tokens: result.usage.output_tokens,
                        };
                        if let Err(err) =
                            self.store
                                .cache_reply(&key, provider.name(), &provider.model, &cached)
                        {
                            tracing::warn!("could not cache a model answer: {err}");
                        }
                    }
                    return Ok(LlmReply {
                        text: result.text,
                        provider: provider.name().into(),
                        model: provider.model.clone(),
                        usage: result.usage,
                        cached: false,
                        latency_ms,
                    });
                }
                Err(failure) => {
                    let error = failure.error;
                    tracing::warn!(provider = provider.name(), "model provider failed: {error}");
                    let call = Call {
                        usage: Usage::default(),
                        latency_ms: failure.latency.as_millis() as u64,
                        attempts: failure.attempts,
                        cached: false,
                        error: Some(error.to_string()),
                    };
                    self.account_call(&provider, request, call);
                    failures.push(error);
                }
            }
        }
        if failures.len() == 1 {
            return Err(failures.pop().expect("one failure"));
        }
        Err(LlmError::AllFailed(
            failures.iter().map(ToString::to_string).collect(),
        ))
    }

    fn max_images_per_request(&self) -> usize {
        self.settings
            .providers
            .iter()
            .map(|provider| provider.max_images)
            .min()
            .unwrap_or(1)
    }
}
