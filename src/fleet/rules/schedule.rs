//! Schedules as pure rules: a cron expression read into the values each
//! field allows, the next slot after an instant in a time zone, and which
//! slot a tick fires when a schedule is due. No clock and no files: the
//! zone's offsets come in as a [`Zone`], the instants as Unix seconds.
//!
//! The rules: a local time that a DST change skips names no slot; a local
//! time that a DST change repeats names one slot, its first occurrence; of
//! slots missed while the server was down only the latest is fired (late),
//! the others counted as skipped, so that a long outage never starts a
//! stampede of the same task.

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, Timelike};

/// A time zone: its offset from UTC at any instant.
pub trait Zone {
    /// Seconds east of UTC at the Unix time `unix`.
    fn offset(&self, unix: i64) -> i64;
}

/// A zone at one offset (UTC is `Fixed(0)`).
#[derive(Debug, Clone, Copy)]
pub struct Fixed(pub i64);

impl Zone for Fixed {
    fn offset(&self, _unix: i64) -> i64 {
        self.0
    }
}

/// How far ahead a slot is looked for: an expression naming no time in
/// these years (`0 0 30 2 *`) is refused.
const HORIZON_SECONDS: i64 = 5 * 366 * 86_400;
/// The largest change of a zone's offset at once (DST, a zone's change of
/// mind): a skip ahead never passes a boundary by more than this.
const LARGEST_SHIFT: i64 = 2 * 3_600;
/// Missed slots counted one by one before the count stops.
const MAX_COUNTED: u32 = 10_000;

/// A cron expression: five fields (minute hour day-of-month month
/// day-of-week), or six with seconds first; `*`, lists, ranges, steps,
/// month and weekday names, and `@hourly`, `@daily`, `@weekly`,
/// `@monthly`, `@yearly`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cron {
    seconds: Option<u64>,
    minutes: u64,
    hours: u64,
    days: u64,
    months: u64,
    weekdays: u64,
    /// The day-of-month field was `*` (or `?`): only the weekday counts.
    any_day: bool,
    /// The day-of-week field was `*` (or `?`): only the day counts.
    any_weekday: bool,
}

/// Why an expression is not a schedule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{expression:?} is not a schedule: {reason}")]
pub struct CronError {
    pub expression: String,
    pub reason: String,
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

impl Cron {
    pub fn parse(expression: &str) -> Result<Cron, CronError> {
        let fail = |reason: String| CronError {
            expression: expression.to_owned(),
            reason,
        };
        let text = match expression.trim().to_ascii_lowercase().as_str() {
            "@yearly" | "@annually" => "0 0 1 1 *".to_owned(),
            "@monthly" => "0 0 1 * *".to_owned(),
            "@weekly" => "0 0 * * 0".to_owned(),
            "@daily" | "@midnight" => "0 0 * * *".to_owned(),
            "@hourly" => "0 * * * *".to_owned(),
            other if other.starts_with('@') => {
                return Err(fail(
                    "the named ones are @hourly, @daily, @weekly, @monthly and @yearly".into(),
                ));
            }
            _ => expression.trim().to_owned(),
        };
        let fields: Vec<&str> = text.split_whitespace().collect();
        let (seconds, rest) = match fields.len() {
            5 => (None, &fields[..]),
            6 => (Some(fields[0]), &fields[1..]),
            n => {
                return Err(fail(format!(
                    "it has {n} fields; a schedule has 5 (minute hour day month weekday) or 6 (seconds first)"
                )));
            }
        };
        let field = |name: &str, text: &str, min: u32, max: u32, names: &[&str]| {
            values(text, min, max, names).map_err(|reason| fail(format!("its {name}: {reason}")))
        };
        let mut weekdays = field("weekday", rest[4], 0, 7, &WEEKDAYS)?;
        if weekdays & (1 << 7) != 0 {
            weekdays = (weekdays | 1) & !(1 << 7);
        }
        let cron = Cron {
            seconds: seconds
                .map(|text| field("seconds", text, 0, 59, &[]))
                .transpose()?,
            minutes: field("minute", rest[0], 0, 59, &[])?,
            hours: field("hour", rest[1], 0, 23, &[])?,
            days: field("day", rest[2], 1, 31, &[])?,
            months: field("month", rest[3], 1, 12, &MONTHS)?,
            weekdays,
            any_day: rest[2].starts_with(['*', '?']),
            any_weekday: rest[4].starts_with(['*', '?']),
        };
        Ok(cron)
    }

    /// The smallest step between two slots it can name.
    fn unit(&self) -> i64 {
        if self.seconds.is_some() { 1 } else { 60 }
    }

    fn day_matches(&self, local: NaiveDateTime) -> bool {
        let day = has(self.days, local.day());
        let weekday = has(self.weekdays, local.weekday().num_days_from_sunday());
        match (self.any_day, self.any_weekday) {
            (true, true) => true,
            (true, false) => weekday,
            (false, true) => day,
            // Both named: either will do (as cron has always had it).
            (false, false) => day || weekday,
        }
    }

    /// The local time to skip to when `local` is not a slot: the start of
    /// the first unit that does not match; `None` when it is a slot.
    fn skip_to(&self, local: NaiveDateTime) -> Option<NaiveDateTime> {
        let date = local.date();
        let hour = date.and_hms_opt(local.hour(), 0, 0).expect("a valid hour");
        let minute = hour + Duration::minutes(i64::from(local.minute()));
        if !has(self.months, local.month()) {
            let (year, month) = match local.month() {
                12 => (local.year() + 1, 1),
                month => (local.year(), month + 1),
            };
            let first = NaiveDate::from_ymd_opt(year, month, 1).expect("a month's first day");
            return Some(first.and_hms_opt(0, 0, 0).expect("midnight"));
        }
        if !self.day_matches(local) {
            return Some(date.and_hms_opt(0, 0, 0).expect("midnight") + Duration::days(1));
        }
        if !has(self.hours, local.hour()) {
            return Some(hour + Duration::hours(1));
        }
        if !has(self.minutes, local.minute()) {
            return Some(minute + Duration::minutes(1));
        }
        let second_fits = match self.seconds {
            Some(seconds) => has(seconds, local.second()),
            None => local.second() == 0,
        };
        if !second_fits {
            return Some(match self.seconds {
                Some(_) => local + Duration::seconds(1),
                None => minute + Duration::minutes(1),
            });
        }
        None
    }

    /// The first slot strictly after `after` (Unix seconds) in `zone`;
    /// `None` when there is none within five years.
    pub fn next_after(&self, zone: &dyn Zone, after: i64) -> Option<i64> {
        let unit = self.unit();
        let horizon = after.saturating_add(HORIZON_SECONDS);
        let mut at = (after.div_euclid(unit) + 1) * unit;
        // Each pass moves ahead by a unit at least, by whole months, days
        // and hours where it can: far fewer passes than this.
        for _ in 0..1_000_000 {
            if at > horizon {
                return None;
            }
            let local = local_time(zone, at)?;
            match self.skip_to(local) {
                None if !repeated(zone, at) => return Some(at),
                None => at += unit,
                Some(boundary) => {
                    let gap = (boundary - local).num_seconds();
                    // The offset may change within a long skip: stop short
                    // of the boundary by the largest shift, and look again.
                    at += if gap > LARGEST_SHIFT + unit {
                        gap - LARGEST_SHIFT
                    } else {
                        gap.max(1)
                    };
                }
            }
        }
        None
    }
}

/// The local time at a Unix time in `zone`.
fn local_time(zone: &dyn Zone, unix: i64) -> Option<NaiveDateTime> {
    DateTime::from_timestamp(unix.checked_add(zone.offset(unix))?, 0).map(|time| time.naive_utc())
}

/// Whether the local time at `unix` already showed earlier (the second
/// pass through an hour that a DST change repeats).
fn repeated(zone: &dyn Zone, unix: i64) -> bool {
    let now = zone.offset(unix);
    let before = zone.offset(unix - LARGEST_SHIFT);
    if before <= now {
        return false;
    }
    let earlier = unix - (before - now);
    zone.offset(earlier) == before
}

fn has(mask: u64, value: u32) -> bool {
    mask & (1u64 << value) != 0
}

/// The values one field allows, as bits: `*`, `N`, `N-M`, any of them with
/// `/STEP` (`N/STEP` runs to the field's end), lists of these; `names`
/// stand for `min`, `min + 1`, ….
fn values(text: &str, min: u32, max: u32, names: &[&str]) -> Result<u64, String> {
    let number = |part: &str| -> Result<u32, String> {
        if let Some(index) = names.iter().position(|n| n.eq_ignore_ascii_case(part)) {
            return Ok(min + index as u32);
        }
        let value: u32 = part
            .parse()
            .map_err(|_| format!("{part:?} is not a number"))?;
        if value < min || value > max {
            return Err(format!("{value} is outside {min}-{max}"));
        }
        Ok(value)
    };
    let mut mask = 0u64;
    for item in text.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((range, step)) => {
                let step: u32 = step
                    .parse()
                    .map_err(|_| format!("the step {step:?} is not a number"))?;
                if step == 0 {
                    return Err("a step of 0".into());
                }
                (range, step)
            }
            None => (item, 1),
        };
        let (first, last) = match range {
            "*" | "?" => (min, max),
            _ => match range.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None if step > 1 => (number(range)?, max),
                None => {
                    let value = number(range)?;
                    (value, value)
                }
            },
        };
        if first > last {
            return Err(format!("the range {range:?} runs backwards"));
        }
        let mut value = first;
        while value <= last {
            mask |= 1 << value;
            value += step;
        }
    }
    Ok(mask)
}

/// What a tick does with a schedule whose next slot has come.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    /// The slot fired now.
    pub slot: i64,
    /// Slots that came and went before it while no tick ran (the server
    /// was down), at most [`MAX_COUNTED`].
    pub skipped: u32,
    /// The slot after it; `None`: the schedule has run its course.
    pub next: Option<i64>,
}

/// The slot to fire at `now` for a schedule whose next slot is `next`:
/// `None` before it; a one-off (`cron` none) fires once; a recurring one
/// fires its latest slot not after `now`.
pub fn due(cron: Option<&Cron>, zone: &dyn Zone, next: i64, now: i64) -> Option<Due> {
    if next > now {
        return None;
    }
    let Some(cron) = cron else {
        return Some(Due {
            slot: next,
            skipped: 0,
            next: None,
        });
    };
    let mut slot = next;
    let mut skipped = 0;
    while skipped < MAX_COUNTED {
        match cron.next_after(zone, slot) {
            Some(later) if later <= now => {
                slot = later;
                skipped += 1;
            }
            _ => break,
        }
    }
    Some(Due {
        slot,
        skipped,
        next: cron.next_after(zone, slot.max(now)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> i64 {
        DateTime::parse_from_rfc3339(text).unwrap().timestamp()
    }

    fn show(unix: i64) -> String {
        DateTime::from_timestamp(unix, 0)
            .unwrap()
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string()
    }

    /// Central Europe's rules: +1, +2 from the last Sunday of March (01:00
    /// UTC) to the last Sunday of October (01:00 UTC). 2026: 29 March, 25
    /// October.
    struct Paris;
    impl Zone for Paris {
        fn offset(&self, unix: i64) -> i64 {
            if (at("2026-03-29T01:00:00Z")..at("2026-10-25T01:00:00Z")).contains(&unix) {
                7_200
            } else {
                3_600
            }
        }
    }

    fn slots(expression: &str, zone: &dyn Zone, from: &str, n: usize) -> Vec<String> {
        let cron = Cron::parse(expression).unwrap();
        let mut at = at(from);
        let mut out = Vec::new();
        for _ in 0..n {
            at = cron.next_after(zone, at).unwrap();
            out.push(show(at));
        }
        out
    }

    #[test]
    fn fields_name_minutes_hours_days_months_and_weekdays() {
        let from = "2026-12-05T20:22:29Z"; // a Saturday
        // Each expression, and the slots that come after `from`, in UTC.
        let table: [(&str, &[&str]); 10] = [
            (
                "* * * * *",
                &["2026-12-05T20:23:00Z", "2026-12-05T20:24:00Z"],
            ),
            (
                "*/15 9-17 * * MON-FRI",
                &[
                    "2026-12-07T09:00:00Z",
                    "2026-12-07T09:15:00Z",
                    "2026-12-07T09:30:00Z",
                ],
            ),
            (
                "30 4 1,15 * *",
                &["2026-12-15T04:30:00Z", "2027-01-01T04:30:00Z"],
            ),
            ("0 0 29 feb *", &["2028-02-29T00:00:00Z"]),
            ("@monthly", &["2027-01-01T00:00:00Z"]),
            // Sunday is 0 and 7.
            ("0 12 * * 7", &["2026-12-06T12:00:00Z"]),
            ("0 12 * * sun", &["2026-12-06T12:00:00Z"]),
            // Both day and weekday named: either will do.
            (
                "0 0 13 * FRI",
                &["2026-12-11T00:00:00Z", "2026-12-13T00:00:00Z"],
            ),
            // Seconds first, when six fields.
            (
                "*/20 * * * * *",
                &[
                    "2026-12-05T20:22:40Z",
                    "2026-12-05T20:23:00Z",
                    "2026-12-05T20:23:20Z",
                ],
            ),
            // A step from a start runs to the field's end.
            (
                "50/5 * * * *",
                &[
                    "2026-12-05T20:50:00Z",
                    "2026-12-05T20:55:00Z",
                    "2026-12-05T21:50:00Z",
                ],
            ),
        ];
        for (expression, expected) in table {
            assert_eq!(
                slots(expression, &Fixed(0), from, expected.len()),
                expected,
                "{expression}"
            );
        }
    }

    #[test]
    fn what_is_not_a_schedule_is_refused_with_the_field_named() {
        for (expression, says) in [
            ("* * * *", "4 fields"),
            ("61 * * * *", "minute: 61 is outside 0-59"),
            ("* 24 * * *", "hour: 24 is outside 0-23"),
            ("* * 0 * *", "day: 0 is outside 1-31"),
            ("* * * foo *", "month: \"foo\" is not a number"),
            ("*/0 * * * *", "a step of 0"),
            ("5-1 * * * *", "runs backwards"),
            ("@often", "the named ones"),
            ("", "0 fields"),
        ] {
            let err = Cron::parse(expression).unwrap_err().to_string();
            assert!(err.contains(says), "{expression:?}: {err}");
        }
        // Parsed, but names no time at all.
        let never = Cron::parse("0 0 30 2 *").unwrap();
        assert_eq!(
            never.next_after(&Fixed(0), at("2026-01-01T00:00:00Z")),
            None
        );
    }

    #[test]
    fn local_times_follow_the_zone_through_its_dst_changes() {
        // 09:00 in Paris: 08:00 UTC in winter, 07:00 in summer.
        assert_eq!(
            slots("0 9 * * *", &Paris, "2026-03-28T00:00:00Z", 2),
            ["2026-03-28T08:00:00Z", "2026-03-29T07:00:00Z"]
        );
        // 02:30 does not exist on 29 March: no slot that day.
        assert_eq!(
            slots("30 2 * * *", &Paris, "2026-03-28T12:00:00Z", 2),
            ["2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"]
        );
        // 02:30 shows twice on 25 October: one slot, the first.
        assert_eq!(
            slots("30 2 * * *", &Paris, "2026-10-24T12:00:00Z", 2),
            ["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"]
        );
        // Every half hour through the repeated hour: each local time once.
        assert_eq!(
            slots("0,30 * * * *", &Paris, "2026-10-25T00:00:00Z", 4),
            [
                "2026-10-25T00:30:00Z", // 02:30 CEST
                "2026-10-25T02:00:00Z", // 03:00 CET (02:00 and 02:30 CET were seen)
                "2026-10-25T02:30:00Z",
                "2026-10-25T03:00:00Z"
            ]
        );
        // A zone half an hour off.
        assert_eq!(
            slots(
                "0 0 * * *",
                &Fixed(5 * 3600 + 1800),
                "2026-12-05T00:00:00Z",
                1
            ),
            ["2026-12-05T18:30:00Z"]
        );
    }

    #[test]
    fn a_due_schedule_fires_its_latest_slot_once_and_counts_the_missed() {
        let cron = Cron::parse("* * * * *").unwrap();
        let utc = Fixed(0);
        let next = at("2026-12-05T20:00:00Z");
        assert_eq!(due(Some(&cron), &utc, next, next - 1), None);
        assert_eq!(
            due(Some(&cron), &utc, next, next + 5),
            Some(Due {
                slot: next,
                skipped: 0,
                next: Some(next + 60)
            })
        );
        // Down from 20:00 to 20:03:30: 20:03 runs, 20:00 to 20:02 skipped.
        assert_eq!(
            due(Some(&cron), &utc, next, next + 210),
            Some(Due {
                slot: next + 180,
                skipped: 3,
                next: Some(next + 240)
            })
        );
        // A one-off runs once, then has no next.
        assert_eq!(
            due(None, &utc, next, next + 1_000),
            Some(Due {
                slot: next,
                skipped: 0,
                next: None
            })
        );
        // A long outage of an every-second schedule: bounded.
        let often = Cron::parse("* * * * * *").unwrap();
        let long = due(Some(&often), &utc, next, next + 86_400).unwrap();
        assert_eq!(long.skipped, MAX_COUNTED);
        assert!(long.next.unwrap() > next + 86_400);
    }
}
