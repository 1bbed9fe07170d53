//! Exit codes and logging set-up for the binary.
//!
//! The codes and their meanings are one table, [`Code::TABLE`], printed
//! at the foot of every command's `--help` and in the manual pages.

use crate::fleet::client::{JobEnded, ServerRefused};
use crate::llm::LlmFailure;
use crate::replay::stopped::{ReplayStopped, StopKind};
use crate::settings::errors::{ConfigError, UsageError};
use crate::store::StoreError;
use crate::store::archive::ArchiveError;

/// The documented exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Code {
    Failure = 1,
    Usage = 2,
    NotFound = 3,
    Refused = 4,
    Llm = 5,
    ReplayFailed = 10,
    ReplayAborted = 11,
    ReplayUnverified = 12,
}

impl Code {
    /// Every code a command may exit with, 0 first, and what it means: the
    /// one table the binary's `main`, every command's `--help` and the
    /// manual pages print.
    pub const TABLE: [(u8, &'static str); 9] = [
        (
            0,
            "success (for a replay: every step done, and every step's effect seen)",
        ),
        (
            Code::Failure as u8,
            "the command failed (I/O, the store, the display)",
        ),
        (
            Code::Usage as u8,
            "the command line is wrong, or the configuration (the config file, a setting's variable), a secrets file or a rows file",
        ),
        (
            Code::NotFound as u8,
            "the recording, run or fleet job named does not exist",
        ),
        (
            Code::Refused as u8,
            "the input was refused: malformed JSON, a bad export, a damaged store, or one written by a newer Reprise; a request or a token the fleet server refused",
        ),
        (
            Code::Llm as u8,
            "no model provider is configured, or the providers failed (no answer, or answers that could not be used, even when fed back)",
        ),
        (
            Code::ReplayFailed as u8,
            "a replay (or a watched job) stopped at a step that failed (or refused an ambiguous target), or went on past one with --skip-failures",
        ),
        (
            Code::ReplayAborted as u8,
            "a replay (or a watched job) was aborted by the person (abort keys, a screen corner), by SIGINT, SIGTERM or SIGHUP, or cancelled; it released all it held",
        ),
        (
            Code::ReplayUnverified as u8,
            "a replay (or a watched job) did every step, but the effect of some could not be checked (unverified); the warning counts them",
        ),
    ];

    /// The table as the `--help` footer and the manual's EXIT STATUS.
    pub fn footer() -> String {
        let mut text = String::from("Exit codes:\n");
        for (code, meaning) in Code::TABLE {
            text.push_str(&format!("  {code:>2}  {meaning}\n"));
        }
        text
    }
}

/// The exit code for an error: the first cause in its chain that says.
pub fn code_for(err: &anyhow::Error) -> Code {
    for cause in err.chain() {
        if let Some(store_err) = cause.downcast_ref::<StoreError>() {
            return match store_err {
                StoreError::NotFound(_)
                | StoreError::RunNotFound(_)
                | StoreError::NoVersion { .. }
                | StoreError::NoRuns
                | StoreError::Ambiguous { .. } => Code::NotFound,
                StoreError::Corrupt { .. }
                | StoreError::MissingTables { .. }
                | StoreError::Newer { .. }
                | StoreError::AlreadyExists(_)
                | StoreError::BadRow { .. }
                | StoreError::BadImage { .. } => Code::Refused,
                // SQLite found a damaged page while reading.
                err if err.is_damage() => Code::Refused,
                _ => Code::Failure,
            };
        }
        if cause
            .downcast_ref::<ArchiveError>()
            .is_some_and(|err| !matches!(err, ArchiveError::Read(_)))
            || cause.downcast_ref::<serde_json::Error>().is_some()
            || cause
                .downcast_ref::<reprise_models::FormatVersionError>()
                .is_some()
        {
            return Code::Refused;
        }
        if let Some(refused) = cause.downcast_ref::<ServerRefused>() {
            return match refused.status {
                404 => Code::NotFound,
                400 | 401 | 403 | 409 | 413 | 422 => Code::Refused,
                _ => Code::Failure,
            };
        }
        if let Some(ended) = cause.downcast_ref::<JobEnded>() {
            return match ended.kind {
                StopKind::Failed => Code::ReplayFailed,
                StopKind::Aborted => Code::ReplayAborted,
                StopKind::Unverified => Code::ReplayUnverified,
                StopKind::Model => Code::Llm,
            };
        }
        if let Some(stopped) = cause.downcast_ref::<ReplayStopped>() {
            return match stopped.kind {
                StopKind::Failed => Code::ReplayFailed,
                StopKind::Aborted => Code::ReplayAborted,
                StopKind::Unverified => Code::ReplayUnverified,
                StopKind::Model => Code::Llm,
            };
        }
        if cause
            .downcast_ref::<reprise_strategies::llm::LlmError>()
            .is_some()
            || cause.downcast_ref::<LlmFailure>().is_some()
        {
            return Code::Llm;
        }
        if cause.downcast_ref::<UsageError>().is_some()
            || cause.downcast_ref::<ConfigError>().is_some()
        {
            return Code::Usage;
        }
        // `--launch` asked of a recording that cannot give it, or of a dry
        // run; the application failing to start is an ordinary failure.
        if let Some(launch) = cause.downcast_ref::<crate::replay::launch::LaunchError>() {
            use crate::replay::launch::LaunchError;
            return match launch {
                LaunchError::NoWindow
                | LaunchError::NoCommand { .. }
                | LaunchError::DryRun { .. } => Code::Usage,
                LaunchError::Interrupted { .. } => Code::ReplayAborted,
                _ => Code::Failure,
            };
        }
    }
    Code::Failure
}

/// How the binary labels an error's message: a replay that did every step
/// but could not check some is a warning, not an error.
pub fn label_for(err: &anyhow::Error) -> &'static str {
    match (
        err.downcast_ref::<ReplayStopped>(),
        err.downcast_ref::<JobEnded>(),
    ) {
        (Some(ReplayStopped { kind, .. }), _) | (_, Some(JobEnded { kind, .. }))
            if *kind == StopKind::Unverified =>
        {
            "warning"
        }
        _ => "error",
    }
}

/// Logs go to stderr. By default warnings and errors, each line just its
/// level and message; `verbose` 1 adds info and 2 debug, with each line's
/// time and source; `quiet` leaves errors only. `REPRISE_LOG` (for example
/// `info` or `reprise=debug`), when set, is the filter instead, in the
/// detailed form.
pub fn init_logging(verbose: u8, quiet: bool) {
    let from_env = tracing_subscriber::EnvFilter::try_from_env("REPRISE_LOG").ok();
    let detailed = from_env.is_some() || verbose > 0;
    let filter = from_env.unwrap_or_else(|| {
        tracing_subscriber::EnvFilter::new(match (quiet, verbose) {
            (true, _) => "error",
            (false, 0) => "warn",
            (false, 1) => "info",
            (false, _) => "debug",
        })
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false);
    if detailed {
        builder.init();
    } else {
        builder.without_time().with_target(false).init();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manual_lists_the_exit_codes_as_the_code_does() {
        let usage = include_str!("../../docs/usage.md");
        for (code, meaning) in Code::TABLE {
            let row = format!("| {code} | {meaning} |");
            assert!(usage.contains(&row), "docs/usage.md lacks {row}");
        }
        let rows = usage
            .lines()
            .skip_while(|line| *line != "## Exit codes")
            .take_while(|line| !line.starts_with("## What"))
            .filter(|line| line.starts_with("| ") && line.as_bytes()[2].is_ascii_digit())
            .count();
        assert_eq!(rows, Code::TABLE.len(), "no code the binary does not use");
    }

    #[test]
    fn every_option_and_command_says_what_it_is_for() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in command.get_arguments() {
                let builtin = matches!(arg.get_id().as_str(), "help" | "version");
                if !builtin && arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in command.get_subcommands() {
                let sub_path = format!("{path} {}", sub.get_name());
                if sub.get_about().is_none() {
                    missing.push(sub_path.clone());
                }
                walk(sub, &sub_path, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&crate::cli::Cli::documented(), "reprise", &mut missing);
        assert!(missing.is_empty(), "without help: {missing:#?}");
    }
}
