//! `reprise jobs schedules` and `reprise jobs unschedule`, and how a
//! submission answered with a schedule is told.

use super::{Api, path_part};
use crate::fleet::Schedule;
use crate::present::terminal_safe;

/// What `jobs submit` says of a schedule it made.
pub fn made(schedule: &Schedule) {
    println!("{}", schedule.id);
    eprintln!(
        "scheduled {} ({}): next at {}",
        terminal_safe(&schedule.request.recording),
        when(schedule),
        schedule.next.as_deref().unwrap_or("-")
    );
}

fn when(schedule: &Schedule) -> String {
    match &schedule.every {
        Some(every) => format!("every {} in {}", terminal_safe(every), schedule.time_zone),
        None => "once".to_owned(),
    }
}

/// `reprise jobs schedules`.
pub fn list(api: &Api, json: bool) -> anyhow::Result<()> {
    let listed = api.listed::<Schedule>("/api/schedules", "list the schedules", json)?;
    let Some(schedules) = listed else {
        return Ok(());
    };
    println!(
        "{:<36}  {:<8}  {:<24}  {:>5}  {:>7}  {:<30}  recording",
        "schedule", "state", "next", "runs", "skipped", "when"
    );
    for schedule in schedules {
        println!(
            "{:<36}  {:<8}  {:<24}  {:>5}  {:>7}  {:<30}  {}{}",
            schedule.id,
            schedule.state.as_str(),
            schedule.next.as_deref().unwrap_or("-"),
            schedule.runs,
            schedule.skipped,
            when(&schedule),
            terminal_safe(&schedule.request.recording),
            schedule
                .last_error
                .as_deref()
                .map(|error| format!("  (last slot: {})", terminal_safe(error)))
                .unwrap_or_default()
        );
    }
    Ok(())
}

/// `reprise jobs unschedule ID`.
pub fn remove(api: &Api, id: &str) -> anyhow::Result<()> {
    let path = format!("/api/schedules/{}", path_part(id));
    let doing = format!("remove schedule {id}");
    let schedule: Schedule = api.acted(
        reqwest::Method::DELETE,
        &path,
        None::<&()>,
        doing,
        "schedule",
    )?;
    println!(
        "schedule {} removed after {} run(s); the jobs it made stay",
        schedule.id, schedule.runs
    );
    Ok(())
}
