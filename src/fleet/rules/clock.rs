//! The rules' time: a time as the fleet writes it, whether one has come,
//! and how long a worker has been silent. Always given `now`, never reading
//! the clock.

use std::time::Duration;

use chrono::{DateTime, Utc};

/// How long a worker has been silent, where it still holds its lease: its
/// last heartbeat, counted at most from the server's start (after a restart
/// every worker gets a lease); `None` for one that is gone or lost it.
pub fn liveness(
    heartbeat: &str,
    gone: bool,
    server_up_for: Duration,
    lease: Duration,
    now: DateTime<Utc>,
) -> Option<Duration> {
    let since_beat = seconds_since(heartbeat, now).unwrap_or(f64::INFINITY);
    let silent = since_beat.min(server_up_for.as_secs_f64()).max(0.0);
    (!gone && silent < lease.as_secs_f64()).then(|| Duration::from_secs_f64(silent))
}

/// Whether a time (RFC 3339) has come; a missing or unreadable one never has.
pub fn past(time: Option<&str>, now: DateTime<Utc>) -> bool {
    time.and_then(|time| seconds_since(time, now))
        .is_some_and(|since| since >= 0.0)
}

/// A time as the fleet writes it: RFC 3339 in UTC, to the millisecond.
pub fn stamp(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// When a step the worker says ended `at` (its clock) happened, as the
/// history keeps it: never later than `now` (a clock ahead of the
/// server's), nor before `floor` (its attempt's start); `None` where the
/// worker said nothing readable (the time the report came is kept then).
pub fn step_time(at: Option<&str>, floor: Option<&str>, now: DateTime<Utc>) -> Option<String> {
    let at = DateTime::parse_from_rfc3339(at?).ok()?.with_timezone(&Utc);
    let floor = floor
        .and_then(|floor| DateTime::parse_from_rfc3339(floor).ok())
        .map(|floor| floor.with_timezone(&Utc));
    Some(stamp(floor.map_or(at, |floor| at.max(floor)).min(now)))
}

/// Seconds from `time` (RFC 3339) to `now`.
pub fn seconds_since(time: &str, now: DateTime<Utc>) -> Option<f64> {
    let then = DateTime::parse_from_rfc3339(time).ok()?;
    Some((now - then.with_timezone(&Utc)).as_seconds_f64())
}

pub(super) fn seconds_between(from: Option<&str>, to: Option<&str>) -> Option<f64> {
    let from = DateTime::parse_from_rfc3339(from?).ok()?;
    let to = DateTime::parse_from_rfc3339(to?).ok()?;
    Some((to - from).as_seconds_f64())
}
