//! The configuration file: where it is, and reading its tables (for
//! `[llm]`, flags over environment over this file are merged in
//! `llm::settings`).

use std::collections::HashMap;

use anyhow::{Result, bail};
use serde::Deserialize;

/// The config file: the given one, or the default one if it exists (else
/// an empty config).
pub fn read(explicit: Option<&std::path::Path>) -> Result<ConfigFile> {
    let path = match (explicit, default_path()) {
        (Some(path), _) => path.to_owned(),
        (None, Some(path)) if path.exists() => path,
        _ => return Ok(Default::default()),
    };
    read_config_file(&path).map_err(|err| {
        anyhow::Error::new(crate::settings::errors::ConfigError(format!(
            "read the config file {}: {}",
            path.display(),
            crate::settings::errors::one_line(&err)
        )))
    })
}

/// Where the config file is when none is given.
pub fn default_path() -> Option<std::path::PathBuf> {
    dirs::config_dir().map(|dir| dir.join("reprise").join("config.toml"))
}

/// The `[llm]` settings from the config file.
pub fn config_file(explicit: Option<&std::path::Path>) -> Result<FileConfig> {
    Ok(read(explicit)?.llm)
}

/// Replay runs are kept this many days unless configured otherwise.
pub const DEFAULT_RUNS_KEEP_DAYS: f64 = 90.0;

/// How many days replay runs are kept (0: for ever): `REPRISE_RUNS_KEEP_DAYS`,
/// else `[runs] keep_days` in the config file, else
/// [`DEFAULT_RUNS_KEEP_DAYS`]. Checked like every time setting.
pub fn runs_keep_days(
    explicit: Option<&std::path::Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<f64> {
    let (days, what) = match env("REPRISE_RUNS_KEEP_DAYS") {
        Some(text) => (
            text.trim().parse::<f64>().map_err(|_| {
                crate::settings::errors::UsageError(format!(
                    "REPRISE_RUNS_KEEP_DAYS must be a number of days, not {text:?}"
                ))
            })?,
            "REPRISE_RUNS_KEEP_DAYS",
        ),
        None => (
            read(explicit)?
                .runs
                .keep_days
                .unwrap_or(DEFAULT_RUNS_KEEP_DAYS),
            "[runs] keep_days",
        ),
    };
    crate::settings::durations::days_ago(what, days)?;
    Ok(days)
}

/// The `[llm]` table of the config file.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub providers: Option<Vec<String>>,
    pub max_attempts: Option<u32>,
    pub timeout_seconds: Option<f64>,
    pub connect_timeout_seconds: Option<f64>,
    pub cache: Option<bool>,
    pub openai: Option<ProviderFile>,
    pub anthropic: Option<ProviderFile>,
    pub gemini: Option<ProviderFile>,
    /// `"provider/model" = { input_per_million = …, output_per_million = … }` in US dollars.
    #[serde(default)]
    pub prices: HashMap<String, Price>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderFile {
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub max_images: Option<usize>,
}

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input_per_million: f64,
    pub output_per_million: f64,
}

/// The whole config file: `[llm]` and `[runs]` are its tables, and anything
/// else is refused (a misspelt table would otherwise be ignored without a
/// word).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub llm: FileConfig,
    #[serde(default)]
    pub runs: RunsFile,
}

/// The `[runs]` table of the config file.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunsFile {
    /// Replay runs older than this many days are pruned after each replay
    /// (0 keeps every run).
    pub keep_days: Option<f64>,
}

/// Reads a config file; a missing default file is an empty config.
///
/// The file is parsed before anything is checked, so the checks see every
/// table (inline or not) and every spelling of a key: a key that names a
/// credential anywhere is refused, and so is any field the settings do not
/// know. No error quotes the file: a syntax error names its line and column,
/// and every string value the file holds is masked in the other errors, so
/// a key pasted into the file never reaches the terminal from here.
pub fn read_config_file(path: &std::path::Path) -> Result<ConfigFile> {
    let text = std::fs::read_to_string(path)?;
    let table: toml::Table = toml::from_str(&text).map_err(|err| {
        let place = match err.span() {
            Some(span) => {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.len() - before.rfind('\n').map_or(0, |at| at + 1) + 1;
                format!("line {line}, column {column}")
            }
            None => "somewhere".into(),
        };
        anyhow::anyhow!(
            "{} is not valid TOML at {place}: {}",
            path.display(),
            err.message().trim_end()
        )
    })?;
    let mut credentials = Vec::new();
    credential_keys(&table, "", &mut credentials);
    if !credentials.is_empty() {
        bail!(
            "{} holds {}, which looks like a credential: keys are read only from the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY); remove it from the file",
            path.display(),
            credentials.join(", ")
        );
    }
    let mut strings = Vec::new();
    string_values(&toml::Value::Table(table.clone()), &mut strings);
    toml::Value::Table(table)
        .try_into()
        .map_err(|err: toml::de::Error| {
            let mut message = err.message().trim_end().to_owned();
            strings.sort_by_key(|text| std::cmp::Reverse(text.len()));
            for text in strings.iter().filter(|text| text.chars().count() >= 4) {
                message = message.replace(text.as_str(), "<a value from the file>");
            }
            anyhow::anyhow!("{}: {message}", path.display())
        })
}

/// Whether a key's name, in any spelling (`api_key`, `"API-Key"`, `apikey`,
/// `token`), says that its value is a credential.
fn names_a_credential(key: &str) -> bool {
    let squashed: String = key
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    [
        "key",
        "token",
        "secret",
        "password",
        "passwd",
        "credential",
        "auth",
    ]
    .iter()
    .any(|word| squashed.contains(word))
}

/// The dotted paths of every credential-like key in `table`, at any depth.
fn credential_keys(table: &toml::Table, prefix: &str, found: &mut Vec<String>) {
    for (key, value) in table {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        if names_a_credential(key) {
            found.push(format!("`{path}`"));
        }
        let mut nested = vec![value];
        while let Some(value) = nested.pop() {
            match value {
                toml::Value::Table(inner) => credential_keys(inner, &path, found),
                toml::Value::Array(items) => nested.extend(items),
                _ => {}
            }
        }
    }
}

/// Every string value in the document, at any depth.
fn string_values(value: &toml::Value, found: &mut Vec<String>) {
    match value {
        toml::Value::String(text) => found.push(text.clone()),
        toml::Value::Table(table) => table.values().for_each(|value| string_values(value, found)),
        toml::Value::Array(items) => items.iter().for_each(|value| string_values(value, found)),
        _ => {}
    }
}
