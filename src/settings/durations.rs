//! Time settings given in seconds (flags, environment variables, the config
//! file), checked before they become durations.

use std::time::Duration;

use crate::settings::errors::UsageError;

/// The longest time any setting may name: a year. (`Duration::from_secs_f64`
/// panics past about 584 billion years; a setting past a year is a typo.)
pub const MAX_SETTING_SECONDS: f64 = 365.0 * 86_400.0;

/// A time setting (`what`, in seconds) as a duration: a finite number above
/// zero (or zero itself, where `zero_ok`) and at most [`MAX_SETTING_SECONDS`];
/// anything else is refused with a message that names the setting.
pub fn seconds_setting(what: &str, seconds: f64, zero_ok: bool) -> Result<Duration, UsageError> {
    let low_ok = if zero_ok {
        seconds >= 0.0
    } else {
        seconds > 0.0
    };
    if seconds.is_finite() && low_ok && seconds <= MAX_SETTING_SECONDS {
        return Ok(Duration::from_secs_f64(seconds));
    }
    let low = if zero_ok { "0 or more" } else { "more than 0" };
    Err(UsageError(format!(
        "{what} must be a number of seconds, {low} and at most {MAX_SETTING_SECONDS} (a year), not {seconds}"
    )))
}

/// The time `days` days ago, stamped as runs are (RFC 3339, UTC, in
/// milliseconds), for `what` (a setting in days: finite, 0 or more, at
/// most a century).
pub fn days_ago(what: &str, days: f64) -> Result<String, UsageError> {
    if !(days.is_finite() && (0.0..=36_500.0).contains(&days)) {
        return Err(UsageError(format!(
            "{what} must be a number of days from 0 to 36500, not {days}"
        )));
    }
    let ago = chrono::Duration::milliseconds((days * 86_400_000.0) as i64);
    Ok((chrono::Utc::now() - ago).to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_settings_are_checked_before_they_become_durations() {
        let check = |seconds: f64, zero_ok: bool, expect: Option<f64>| {
            let got = seconds_setting("--x", seconds, zero_ok).ok();
            assert_eq!(
                got.map(|duration| duration.as_secs_f64()),
                expect,
                "{seconds}"
            );
        };
        check(0.5, false, Some(0.5));
        check(MAX_SETTING_SECONDS, false, Some(MAX_SETTING_SECONDS));
        check(0.0, true, Some(0.0));
        check(0.0, false, None);
        check(-1.0, true, None);
        check(1e300, false, None);
        check(f64::INFINITY, false, None);
        check(f64::NAN, true, None);
        let message = seconds_setting("--settle-timeout", 1e300, false)
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("--settle-timeout must be a number of seconds"),
            "{message}"
        );
    }
}
