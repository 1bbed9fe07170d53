//! The configuration file: where it is, and reading its tables (for
//! `[llm]`, flags over environment over this file are merged in
//! `llm::settings`).

use anyhow::Result;

use crate::llm::settings::ConfigFile;

/// The config file: the given one, or the default one if it exists (else
/// an empty config).
pub fn read(explicit: Option<&std::path::Path>) -> Result<ConfigFile> {
    let path = match (explicit, default_path()) {
        (Some(path), _) => path.to_owned(),
        (None, Some(path)) if path.exists() => path,
        _ => return Ok(Default::default()),
    };
    crate::llm::settings::read_config_file(&path).map_err(|err| {
        anyhow::Error::new(crate::exit::ConfigError(format!(
            "read the config file {}: {}",
            path.display(),
            crate::exit::one_line(&err)
        )))
    })
}

/// Where the config file is when none is given.
pub fn default_path() -> Option<std::path::PathBuf> {
    dirs::config_dir().map(|dir| dir.join("reprise").join("config.toml"))
}

/// The `[llm]` settings from the config file.
pub fn config_file(explicit: Option<&std::path::Path>) -> Result<crate::llm::settings::FileConfig> {
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
                crate::exit::UsageError(format!(
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
    crate::durations::days_ago(what, days)?;
    Ok(days)
}
