//! Where the providers come from: flags over environment over the config
//! file, merged once into validated settings. API keys come only from the
//! environment, so they are never written into a file Reprise reads or a
//! store it writes.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Result, bail};
use serde::Serialize;

use super::http::RetryPolicy;
use super::provider::{Kind, Provider};
pub use crate::settings::config::{FileConfig, Price, ProviderFile};

/// Flags that override the rest.
#[derive(Debug, Default, Clone)]
pub struct LlmFlags {
    /// Only this provider (by name).
    pub provider: Option<String>,
    pub no_cache: bool,
}

/// The merged, validated settings.
#[derive(Debug, Clone)]
pub struct LlmSettings {
    /// In the order they are tried.
    pub providers: Vec<Provider>,
    pub policy: RetryPolicy,
    pub use_cache: bool,
    pub prices: HashMap<String, Price>,
}

impl LlmSettings {
    /// The estimated cost of a call, when the price table knows the model.
    pub fn cost(
        &self,
        provider: &str,
        model: &str,
        input_tokens: u64,
        output_tokens: u64,
    ) -> Option<f64> {
        let price = self.prices.get(&format!("{provider}/{model}"))?;
        Some(
            input_tokens as f64 * price.input_per_million / 1e6
                + output_tokens as f64 * price.output_per_million / 1e6,
        )
    }
}

/// The providers tried when none are named (OpenAdapt's order).
pub const DEFAULT_PROVIDERS: [&str; 3] = ["openai", "gemini", "anthropic"];
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 60.0;
pub const DEFAULT_CONNECT_TIMEOUT_SECONDS: f64 = 10.0;

/// A provider's environment names and defaults.
#[derive(Debug, Clone, Copy)]
pub struct ProviderDefaults {
    /// `REPRISE_{prefix}_BASE_URL`, `REPRISE_{prefix}_MODEL`.
    pub prefix: &'static str,
    /// Where its key is read, in order.
    pub key_vars: &'static [&'static str],
    pub base_url: &'static str,
    pub model: &'static str,
}

impl ProviderDefaults {
    pub fn of(kind: Kind) -> ProviderDefaults {
        match kind {
            Kind::OpenAi => ProviderDefaults {
                prefix: "OPENAI",
                key_vars: &["OPENAI_API_KEY"],
                base_url: "https://api.openai.com/v1",
                model: "gpt-4o",
            },
            Kind::Anthropic => ProviderDefaults {
                prefix: "ANTHROPIC",
                key_vars: &["ANTHROPIC_API_KEY"],
                base_url: "https://api.anthropic.com",
                model: "claude-sonnet-4-5",
            },
            Kind::Gemini => ProviderDefaults {
                prefix: "GEMINI",
                key_vars: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
                base_url: "https://generativelanguage.googleapis.com",
                model: "gemini-2.5-flash",
            },
        }
    }

    /// The base URL's variables, in precedence order: Reprise's own, then
    /// the ecosystem's (OpenAI's and Anthropic's SDKs, ollama, vLLM).
    pub fn base_url_vars(self) -> Vec<String> {
        let mut vars = vec![format!("REPRISE_{}_BASE_URL", self.prefix)];
        if self.prefix != "GEMINI" {
            vars.push(format!("{}_BASE_URL", self.prefix));
        }
        vars
    }
}

/// A provider's table in the file's `[llm]`.
fn file_table(file: &FileConfig, kind: Kind) -> &Option<ProviderFile> {
    match kind {
        Kind::OpenAi => &file.openai,
        Kind::Anthropic => &file.anthropic,
        Kind::Gemini => &file.gemini,
    }
}

/// One setting as `reprise config show` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explained {
    pub setting: String,
    /// The value in effect; a key is never shown, only that it is set.
    pub value: String,
    /// Where it came from: a variable's name, `config file`, `default`.
    pub from: String,
}

/// Every model setting in effect and where it came from, by the rules
/// [`resolve`] applies (environment over file over default).
pub fn explain(env: &dyn Fn(&str) -> Option<String>, file: &FileConfig) -> Vec<Explained> {
    let mut out = Explaining {
        env,
        settings: Vec::new(),
    };
    out.pick(
        "llm.providers",
        &["REPRISE_LLM_PROVIDERS".to_owned()],
        file.providers.as_ref().map(|list| list.join(",")),
        DEFAULT_PROVIDERS.join(","),
    );
    for (setting, var, from_file, default) in [
        (
            "llm.max_attempts",
            "REPRISE_LLM_MAX_ATTEMPTS",
            file.max_attempts.map(|n| n.to_string()),
            DEFAULT_MAX_ATTEMPTS.to_string(),
        ),
        (
            "llm.timeout_seconds",
            "REPRISE_LLM_TIMEOUT",
            file.timeout_seconds.map(|n| n.to_string()),
            DEFAULT_TIMEOUT_SECONDS.to_string(),
        ),
        (
            "llm.connect_timeout_seconds",
            "REPRISE_LLM_CONNECT_TIMEOUT",
            file.connect_timeout_seconds.map(|n| n.to_string()),
            DEFAULT_CONNECT_TIMEOUT_SECONDS.to_string(),
        ),
    ] {
        out.pick(setting, &[var.to_owned()], from_file, default);
    }
    out.pick(
        "llm.cache",
        &[],
        file.cache.map(|on| on.to_string()),
        "true".to_owned(),
    );
    for kind in [Kind::OpenAi, Kind::Anthropic, Kind::Gemini] {
        out.provider(kind, file);
    }
    out.settings
}

/// The settings [`explain`] has found so far, and where it reads the
/// environment.
struct Explaining<'a> {
    env: &'a dyn Fn(&str) -> Option<String>,
    settings: Vec<Explained>,
}

impl Explaining<'_> {
    fn push(&mut self, setting: &str, value: String, from: &str) {
        self.settings.push(Explained {
            setting: setting.to_owned(),
            value,
            from: from.to_owned(),
        });
    }

    /// `setting` from the first of `vars` set, else the file, else the
    /// default.
    fn pick(&mut self, setting: &str, vars: &[String], from_file: Option<String>, default: String) {
        let (value, from) = match vars
            .iter()
            .find_map(|var| (self.env)(var).map(|v| (v, var)))
        {
            Some((value, var)) => (value, var.clone()),
            None => match from_file {
                Some(value) => (value, "config file".to_owned()),
                None => (default, "default".to_owned()),
            },
        };
        self.push(setting, value, &from);
    }

    /// Provider `kind`'s settings: whether it is configured, its key (only
    /// whether it is set), base URL, model and images a request.
    fn provider(&mut self, kind: Kind, file: &FileConfig) {
        let defaults = ProviderDefaults::of(kind);
        let name = kind.name();
        let from_file = file_table(file, kind).clone().unwrap_or_default();
        let key = defaults.key_vars.iter().find_map(|var| {
            (self.env)(var)
                .filter(|key| !key.trim().is_empty())
                .map(|key| (key, var))
        });
        let url_set = defaults
            .base_url_vars()
            .iter()
            .any(|var| (self.env)(var).is_some())
            || from_file.base_url.is_some();
        self.push(
            &format!("llm.{name}"),
            if key.is_some() || url_set {
                "configured".to_owned()
            } else {
                "not configured (no key, no base URL)".to_owned()
            },
            "",
        );
        match &key {
            Some((key, var)) => self.push(
                &format!("llm.{name}.api_key"),
                format!("set ({} characters, never shown)", key.chars().count()),
                var,
            ),
            None => self.push(
                &format!("llm.{name}.api_key"),
                "not set".to_owned(),
                &defaults.key_vars.join(" or "),
            ),
        }
        self.pick(
            &format!("llm.{name}.base_url"),
            &defaults.base_url_vars(),
            from_file.base_url,
            defaults.base_url.to_owned(),
        );
        self.pick(
            &format!("llm.{name}.model"),
            &[format!("REPRISE_{}_MODEL", defaults.prefix)],
            from_file.model,
            defaults.model.to_owned(),
        );
        self.pick(
            &format!("llm.{name}.max_images"),
            &[],
            from_file.max_images.map(|n| n.to_string()),
            kind.default_max_images().to_string(),
        );
    }
}

/// Merges flags, the environment (read through `env`) and the file.
pub fn resolve(
    flags: &LlmFlags,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
) -> Result<LlmSettings> {
    // Every refusal here is of a setting: the configuration's error (exit 2).
    resolve_settings(flags, env, file).map_err(|err| {
        if err.downcast_ref::<crate::llm::LlmFailure>().is_some() {
            err
        } else {
            anyhow::Error::new(crate::settings::errors::ConfigError(
                crate::settings::errors::one_line(&err),
            ))
        }
    })
}

fn resolve_settings(
    flags: &LlmFlags,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
) -> Result<LlmSettings> {
    let order: Vec<String> = match (env("REPRISE_LLM_PROVIDERS"), &file.providers) {
        (Some(list), _) => list
            .split(',')
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty())
            .collect(),
        (None, Some(list)) => list.clone(),
        (None, None) => DEFAULT_PROVIDERS
            .iter()
            .map(|name| (*name).into())
            .collect(),
    };
    let mut providers = Vec::new();
    for name in &order {
        let Some(kind) = Kind::from_name(name) else {
            bail!("unknown model provider {name:?}: use openai, anthropic or gemini");
        };
        providers.extend(configured(kind, env, file)?);
    }
    if let Some(only) = &flags.provider {
        let Some(kind) = Kind::from_name(only) else {
            bail!("unknown model provider {only:?}: use openai, anthropic or gemini");
        };
        providers.retain(|provider| provider.kind == kind);
        if providers.is_empty() {
            // Not a wrong setting: a missing one (exit 5, as with none).
            return Err(crate::llm::LlmFailure(format!(
                "the provider {only:?} is not configured (set its API key or base URL)"
            ))
            .into());
        }
    }
    let use_cache = !flags.no_cache && file.cache.unwrap_or(true);
    Ok(LlmSettings {
        providers,
        policy: retry_policy(env, file)?,
        use_cache,
        prices: file.prices.clone(),
    })
}

/// Provider `kind` as configured: by its key, or by a base URL of its own
/// (a local server needs no key); `None` without either.
fn configured(
    kind: Kind,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
) -> Result<Option<Provider>> {
    let defaults = ProviderDefaults::of(kind);
    let from_file = file_table(file, kind).clone().unwrap_or_default();
    let api_key = defaults
        .key_vars
        .iter()
        .find_map(|var| env(var))
        .filter(|key| !key.trim().is_empty());
    // The ecosystem's own names (OpenAI's SDKs, ollama's and vLLM's docs,
    // Anthropic's SDK) count too, after Reprise's: someone who set
    // OPENAI_BASE_URL to keep data on a local server must not have it sent
    // to the public one.
    let base_url = defaults
        .base_url_vars()
        .iter()
        .find_map(|var| env(var))
        .or(from_file.base_url);
    if api_key.is_none() && base_url.is_none() {
        return Ok(None);
    }
    let base_url = base_url.unwrap_or_else(|| defaults.base_url.to_owned());
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        bail!(
            "the {} base URL {base_url:?} must start with http:// or https://",
            kind.name()
        );
    }
    Ok(Some(Provider {
        kind,
        base_url,
        model: env(&format!("REPRISE_{}_MODEL", defaults.prefix))
            .or(from_file.model)
            .unwrap_or_else(|| defaults.model.to_owned()),
        api_key,
        max_images: from_file
            .max_images
            .unwrap_or_else(|| kind.default_max_images())
            .max(1),
    }))
}

/// The attempts and timeouts of a model call: environment over file over
/// default, each checked.
fn retry_policy(env: &dyn Fn(&str) -> Option<String>, file: &FileConfig) -> Result<RetryPolicy> {
    let seconds = |var: &str, from_file: Option<f64>, default: f64| -> Result<Duration> {
        let value = match env(var) {
            Some(text) => text
                .parse::<f64>()
                .map_err(|_| anyhow::anyhow!("{var} must be a number of seconds"))?,
            None => from_file.unwrap_or(default),
        };
        crate::settings::durations::seconds_setting(var, value, false)
            .map_err(|err| anyhow::anyhow!("{err}"))
    };
    let max_attempts = match env("REPRISE_LLM_MAX_ATTEMPTS") {
        Some(text) => text
            .parse::<u32>()
            .map_err(|_| anyhow::anyhow!("REPRISE_LLM_MAX_ATTEMPTS must be a whole number"))?,
        None => file.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
    };
    if !(1..=10).contains(&max_attempts) {
        bail!("the number of attempts must be between 1 and 10");
    }
    Ok(RetryPolicy {
        max_attempts,
        request_timeout: seconds(
            "REPRISE_LLM_TIMEOUT",
            file.timeout_seconds,
            DEFAULT_TIMEOUT_SECONDS,
        )?,
        connect_timeout: seconds(
            "REPRISE_LLM_CONNECT_TIMEOUT",
            file.connect_timeout_seconds,
            DEFAULT_CONNECT_TIMEOUT_SECONDS,
        )?,
        ..RetryPolicy::default()
    })
}
