//! Schedules: jobs submitted later, once (`at`, `delay_seconds`) or at
//! every slot of a cron expression in a time zone. Kept in the store; the
//! ticker fires the due ones (the rules in [`rules::schedule`]), each slot
//! written with its jobs in one transaction so that no slot runs twice
//! across restarts.

use super::jobs::{check_request, jobs_for, queue_new, queued_event};
use super::*;
use crate::fleet::{Schedule, ScheduleState};
use rules::schedule::{self as rule, Cron, Zone};

/// A zone from the system's tz database.
struct TzZone(tz::TimeZone);

impl Zone for TzZone {
    fn offset(&self, unix: i64) -> i64 {
        self.0
            .find_local_time_type(unix)
            .map_or(0, |kind| i64::from(kind.ut_offset()))
    }
}

/// The zone named `name` (an IANA name such as `Europe/Paris`, or `UTC`).
fn zone(name: &str) -> ApiResult<Box<dyn Zone>> {
    if name == "UTC" {
        return Ok(Box::new(rule::Fixed(0)));
    }
    let fine = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('/')
        && !name.split('/').any(|part| part == ".." || part == ".")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-' | '+'));
    let unknown = || {
        Fail::bad(format!(
            "no time zone {name:?} in the system's tz database (an IANA name, as Europe/Paris)"
        ))
    };
    if !fine {
        return Err(unknown());
    }
    let path = format!("/usr/share/zoneinfo/{name}");
    let bytes = std::fs::read(&path).map_err(|_| unknown())?;
    let tz = tz::TimeZone::from_tz_data(&bytes).map_err(|_| unknown())?;
    Ok(Box::new(TzZone(tz)))
}

fn unix(time: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(time)
        .ok()
        .map(|time| time.timestamp())
}

fn stamp_of(unix: i64) -> String {
    rules::stamp(chrono::DateTime::from_timestamp(unix, 0).unwrap_or_default())
}

/// A schedule from a submission that asks for one: its options checked as
/// a submission now is, its first slot found.
pub(super) fn create(fleet: &Fleet, mut request: SubmitRequest) -> ApiResult<Schedule> {
    check_request(&request)?;
    let now = chrono::Utc::now();
    let time_zone = request.time_zone.clone().unwrap_or_else(|| "UTC".into());
    let (every, next) = first_slot(&request, &time_zone, now.timestamp())?;
    if request.time_zone.is_some() && every.is_none() {
        return Err(Fail::bad(
            "time_zone is for every; at carries its own offset",
        ));
    }
    // The recording is named by its id from here on (a name may be given
    // to another recording later), with the version asked for if any.
    {
        let store = fleet.store();
        let (id, pinned) = store.resolve_versioned(&request.recording)?;
        request.recording = match pinned {
            Some(version) => format!("{id}@{version}"),
            None => id,
        };
    }
    // The parameters are checked against the recording as it is now.
    let request = timeless(&request);
    jobs_for(fleet, &request, None)?;
    let schedule = Schedule {
        id: uuid::Uuid::new_v4().to_string(),
        request,
        every,
        time_zone,
        state: ScheduleState::Active,
        next: Some(stamp_of(next)),
        last_slot: None,
        runs: 0,
        skipped: 0,
        last_error: None,
        created: crate::fleet::now(),
    };
    fleet.store().insert_schedule(&schedule)?;
    tracing::info!(
        "schedule {} made: {} of {}, next at {}",
        schedule.id,
        schedule.every.as_deref().unwrap_or("once"),
        schedule.request.recording,
        schedule.next.as_deref().unwrap_or("-")
    );
    Ok(schedule)
}

/// The schedule's expression (none for a one-off) and its first slot.
fn first_slot(
    request: &SubmitRequest,
    time_zone: &str,
    now: i64,
) -> ApiResult<(Option<String>, i64)> {
    let slot = match (&request.every, &request.at, request.delay_seconds) {
        (Some(every), None, None) => {
            let cron = Cron::parse(every).map_err(|err| Fail::bad(err.to_string()))?;
            let next = cron
                .next_after(zone(time_zone)?.as_ref(), now)
                .ok_or_else(|| {
                    Fail::bad(format!("{every:?} names no time in the next five years"))
                })?;
            (Some(every.clone()), next)
        }
        (None, Some(at), None) => {
            let at = unix(at).ok_or_else(|| {
                Fail::bad(format!(
                    "at {at:?} is not a time with its offset (RFC 3339, as 2026-12-05T21:00:00+01:00)"
                ))
            })?;
            if at < now - 60 {
                return Err(Fail::bad("at is in the past"));
            }
            (None, at)
        }
        (None, None, Some(seconds)) if seconds.is_finite() && (0.0..1e9).contains(&seconds) => {
            (None, now + seconds.ceil() as i64)
        }
        (None, None, Some(_)) => {
            return Err(Fail::bad(
                "delay_seconds must be a number of seconds, 0 or more",
            ));
        }
        _ => {
            return Err(Fail::bad(
                "a schedule is one of every (a cron expression), at (a time) or delay_seconds",
            ));
        }
    };
    Ok(slot)
}

/// The request each slot submits: the schedule's own fields taken off.
fn timeless(request: &SubmitRequest) -> SubmitRequest {
    SubmitRequest {
        at: None,
        delay_seconds: None,
        every: None,
        time_zone: None,
        ..request.clone()
    }
}

/// Fires every schedule whose slot has come (the ticker's, under the
/// decide lock): each slot's jobs stored with the schedule's move past
/// it, then queued.
pub(super) async fn fire_due(fleet: &Fleet) -> ApiResult<()> {
    let now = chrono::Utc::now();
    let due = fleet.store().due_schedules(&rules::stamp(now))?;
    for schedule in due {
        let jobs = fire(fleet, &schedule, now.timestamp())?;
        if !jobs.is_empty() {
            queue_new(fleet, jobs).await?;
        }
    }
    Ok(())
}

/// One due schedule: its slot's jobs, stored (none when the slot made no
/// job, or another tick fired it first).
fn fire(fleet: &Fleet, schedule: &Schedule, now: i64) -> ApiResult<Vec<Job>> {
    let Some(was_next) = schedule.next.as_deref() else {
        return Ok(Vec::new());
    };
    let cron = match schedule.every.as_deref().map(Cron::parse).transpose() {
        Ok(cron) => cron,
        Err(err) => {
            tracing::error!("schedule {}: {err}", schedule.id);
            return Ok(Vec::new());
        }
    };
    let zone = zone(&schedule.time_zone)?;
    let Some(due) =
        unix(was_next).and_then(|next| rule::due(cron.as_ref(), zone.as_ref(), next, now))
    else {
        return Ok(Vec::new());
    };
    let slot = stamp_of(due.slot);
    let next = due.next.map(stamp_of);
    if due.skipped > 0 {
        tracing::warn!(
            "schedule {}: {} slot(s) passed while the server was down, from {was_next}; the latest, {slot}, runs now and the others are skipped",
            schedule.id,
            due.skipped
        );
    }
    let (jobs, error) = match jobs_for(fleet, &schedule.request, Some((&schedule.id, &slot))) {
        Ok(jobs) => (jobs, None),
        Err(fail) => (Vec::new(), Some(fail.message)),
    };
    let rows: Vec<(Job, NewEvent)> = jobs
        .iter()
        .map(|job| (job.clone(), queued_event()))
        .collect();
    let fired = fleet.store().fire_schedule(
        &crate::store::Fired {
            id: &schedule.id,
            was_next,
            slot: &slot,
            next: next.as_deref(),
            skipped: due.skipped,
            error: error.as_deref(),
        },
        &rows,
    )?;
    if !fired {
        return Ok(Vec::new());
    }
    match &error {
        Some(error) => tracing::warn!("schedule {}: slot {slot} made no job: {error}", schedule.id),
        None => tracing::info!(
            "schedule {}: slot {slot} submitted {} job(s); next {}",
            schedule.id,
            jobs.len(),
            next.as_deref().unwrap_or("none: done")
        ),
    }
    Ok(jobs)
}

/// `GET /api/schedules`.
pub(super) async fn list(State(fleet): State<Shared>) -> ApiResult<Response> {
    Ok(axum::Json(fleet.store().schedules()?).into_response())
}

/// `DELETE /api/schedules/{id}`: no more slots; jobs it made stay.
pub(super) async fn remove(
    State(fleet): State<Shared>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let _decide = fleet.decide.lock().await;
    let before = fleet
        .store()
        .remove_schedule(&id)?
        .ok_or_else(|| Fail::not_found(format!("no schedule {id:?}")))?;
    if before != ScheduleState::Active {
        return Err(Fail::new(
            StatusCode::CONFLICT,
            "final",
            format!("schedule {id} is already {}", before.as_str()),
        ));
    }
    tracing::info!("schedule {id} removed");
    let schedule = fleet.store().schedule(&id)?;
    Ok(axum::Json(schedule).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(text)
            .unwrap()
            .timestamp()
    }

    #[test]
    fn zones_come_from_the_system_database_and_only_by_their_names() {
        let paris = zone("Europe/Paris").unwrap();
        assert_eq!(paris.offset(at("2026-01-15T12:00:00Z")), 3_600);
        assert_eq!(paris.offset(at("2026-07-15T12:00:00Z")), 7_200);
        // The DST change as the database has it, hour for hour.
        let cron = Cron::parse("30 2 * * *").unwrap();
        let first = cron
            .next_after(paris.as_ref(), at("2026-03-28T12:00:00Z"))
            .unwrap();
        assert_eq!(
            first,
            at("2026-03-30T00:30:00Z"),
            "02:30 did not exist on the 29th"
        );
        assert_eq!(zone("UTC").unwrap().offset(0), 0);
        for name in [
            "../../etc/passwd",
            "/etc/localtime",
            "Nowhere/City",
            "",
            "Europe/./Paris",
        ] {
            let err = zone(name).err().unwrap();
            assert!(
                err.message.contains("no time zone"),
                "{name:?}: {}",
                err.message
            );
        }
    }
}
