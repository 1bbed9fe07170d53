//! The fleet: replay jobs across many desktops. `reprise serve` holds the
//! durable record (the store) and an HTTP API; the queue is Redis Streams
//! (one stream per pool and priority, one consumer group, a worker's pending entries as
//! its lease); `reprise worker` on each desktop pulls jobs of its pool and
//! replays them as `reprise replay` does; `reprise jobs` is the API's client.
//!
//! This module holds what the three share beside the wire types (in
//! `reprise_models::fleet`): the tokens and the command line's parsers.

pub mod client;
mod queue;
pub mod rules;
pub mod server;
pub mod worker;

pub use reprise_models::fleet::*;

/// The environment variable holding the API token of `reprise worker` and
/// `reprise jobs` (a user token or a worker token).
pub const TOKEN_VAR: &str = "REPRISE_FLEET_TOKEN";
/// The server's user token (submit, read, cancel).
pub const USER_TOKEN_VAR: &str = "REPRISE_FLEET_USER_TOKEN";
/// The server's worker token (pull work, report steps).
pub const WORKER_TOKEN_VAR: &str = "REPRISE_FLEET_WORKER_TOKEN";
/// The server's viewer token (read only: jobs, workers, schedules, dead
/// letters, metrics; the web console without its actions). Optional.
pub const VIEWER_TOKEN_VAR: &str = "REPRISE_FLEET_VIEWER_TOKEN";
/// The server's admin token (what a user may, and administer: the audit
/// log, discarding dead letters, removing schedules, forgetting workers).
/// Optional: without one, users administer.
pub const ADMIN_TOKEN_VAR: &str = "REPRISE_FLEET_ADMIN_TOKEN";
/// Where `reprise worker` and `reprise jobs` find the server by default.
pub const DEFAULT_SERVER: &str = "http://127.0.0.1:8787";
/// The shortest token the server accepts.
pub const MIN_TOKEN_LEN: usize = 16;

/// Whether two tokens are equal, in time that depends only on their
/// lengths (a wrong token's first byte takes as long to refuse as its last).
pub fn same_token(given: &[u8], expected: &[u8]) -> bool {
    if given.len() != expected.len() {
        return false;
    }
    given
        .iter()
        .zip(expected)
        .fold(0u8, |diff, (a, b)| diff | (a ^ b))
        == 0
}

impl From<Strategy> for crate::replay::StrategyChoice {
    fn from(strategy: Strategy) -> Self {
        match strategy {
            Strategy::Naive => crate::replay::StrategyChoice::Naive,
            Strategy::Visual => crate::replay::StrategyChoice::Visual,
            Strategy::Vanilla => crate::replay::StrategyChoice::Vanilla,
        }
    }
}

/// `--state` of `jobs list`.
pub fn parse_state(text: &str) -> Result<JobState, crate::settings::errors::UsageError> {
    JobState::parse(text).ok_or_else(|| {
        let known: Vec<&str> = JobState::ALL.iter().map(|state| state.as_str()).collect();
        crate::settings::errors::UsageError(format!(
            "no state {text:?}; one of {}",
            known.join(", ")
        ))
    })
}

/// `--strategy` of `jobs submit`.
pub fn parse_strategy(text: &str) -> Result<Strategy, crate::settings::errors::UsageError> {
    match text {
        "naive" => Ok(Strategy::Naive),
        "visual" => Ok(Strategy::Visual),
        "vanilla" => Ok(Strategy::Vanilla),
        _ => Err(crate::settings::errors::UsageError(format!(
            "no strategy {text:?}; one of naive, visual, vanilla"
        ))),
    }
}

/// `--retry` of `jobs submit`.
pub fn parse_retry(text: &str) -> Result<RetryPolicy, crate::settings::errors::UsageError> {
    match text {
        "never" => Ok(RetryPolicy::Never),
        "restart" => Ok(RetryPolicy::Restart),
        _ => Err(crate::settings::errors::UsageError(format!(
            "no retry policy {text:?}; one of never, restart"
        ))),
    }
}

/// `--priority` of `jobs submit`.
pub fn parse_priority(text: &str) -> Result<Priority, crate::settings::errors::UsageError> {
    Priority::parse(text).ok_or_else(|| {
        crate::settings::errors::UsageError(format!(
            "no priority {text:?}; one of high, normal, low"
        ))
    })
}

/// `k=v` of `--label`.
pub fn parse_label(text: &str) -> Result<(String, String), crate::settings::errors::UsageError> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err(crate::settings::errors::UsageError(format!(
            "--label takes KEY=VALUE, not {text:?}"
        ))),
    }
}

/// `--in` of `jobs submit`: seconds, or a number with `s`, `m`, `h` or `d`.
pub fn parse_delay(text: &str) -> Result<f64, crate::settings::errors::UsageError> {
    let text = text.trim();
    let (number, unit) = match text.char_indices().last() {
        Some((at, 's')) => (&text[..at], 1.0),
        Some((at, 'm')) => (&text[..at], 60.0),
        Some((at, 'h')) => (&text[..at], 3_600.0),
        Some((at, 'd')) => (&text[..at], 86_400.0),
        _ => (text, 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 && value * unit < 1e9 => Ok(value * unit),
        _ => Err(crate::settings::errors::UsageError(format!(
            "--in takes a duration, as 90, 90s, 15m, 2h or 1d, not {text:?}"
        ))),
    }
}

pub(crate) fn now() -> String {
    rules::stamp(chrono::Utc::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fleet_and_providers_credentials_are_never_inherited_by_a_child() {
        use crate::llm::{provider::Kind, settings::ProviderDefaults};
        use crate::platform::child::is_credential;
        for var in [
            TOKEN_VAR,
            USER_TOKEN_VAR,
            WORKER_TOKEN_VAR,
            VIEWER_TOKEN_VAR,
        ] {
            assert!(is_credential(var), "{var}");
        }
        for kind in [Kind::OpenAi, Kind::Anthropic, Kind::Gemini] {
            for var in ProviderDefaults::of(kind).key_vars {
                assert!(is_credential(var), "{var}");
            }
        }
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token(b"0123456789abcdef", b"0123456789abcdef"));
        assert!(!same_token(b"0123456789abcdeX", b"0123456789abcdef"));
        assert!(!same_token(b"X123456789abcdef", b"0123456789abcdef"));
        assert!(!same_token(b"0123456789abcde", b"0123456789abcdef"));
        assert!(!same_token(b"", b"0123456789abcdef"));
    }

    #[test]
    fn the_command_line_names_states_strategies_and_policies_as_the_wire_does() {
        for state in JobState::ALL {
            assert_eq!(parse_state(state.as_str()).unwrap(), state);
        }
        assert!(parse_state("done").is_err());
        assert_eq!(parse_delay("90").unwrap(), 90.0);
        assert_eq!(parse_delay("15m").unwrap(), 900.0);
        assert_eq!(parse_delay("1.5h").unwrap(), 5_400.0);
        assert_eq!(parse_delay("2d").unwrap(), 172_800.0);
        for bad in ["", "m", "-5s", "soon", "NaNs", "1e12"] {
            assert!(parse_delay(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_strategy("visual").unwrap(), Strategy::Visual);
        assert_eq!(parse_retry("restart").unwrap(), RetryPolicy::Restart);
        for priority in Priority::ALL {
            assert_eq!(parse_priority(priority.as_str()).unwrap(), priority);
        }
        assert!(parse_priority("urgent").is_err());
        assert_eq!(Priority::High.lane("default"), "default:high");
        assert_eq!(Priority::Normal.lane("default"), "default");
        assert_eq!(Priority::Low.lane("a.b"), "a.b:low");
        assert_eq!(
            serde_json::to_string(&Strategy::Visual).unwrap(),
            "\"visual\""
        );
    }
}
