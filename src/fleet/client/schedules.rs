//! `reprise jobs schedules` and `reprise jobs unschedule`, and how a
//! submission answered with a schedule is told.

use anyhow::Context as _;

use super::{Answered, Api, CALL, CallError, path_part, print_json};
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
    let answer: Answered<Vec<Schedule>> = api
        .call(reqwest::Method::GET, "/api/schedules", None::<&()>, CALL)
        .context("list the schedules")?;
    let schedules = answer.body.unwrap_or_default();
    if json {
        print_json(&schedules);
        return Ok(());
    }
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
    let answer: Answered<Schedule> = api
        .call(
            reqwest::Method::DELETE,
            &format!("/api/schedules/{}", path_part(id)),
            None::<&()>,
            CALL,
        )
        .with_context(|| format!("remove schedule {id}"))?;
    let schedule = answer
        .body
        .ok_or_else(|| CallError::BadAnswer("no schedule in the answer".into()))?;
    println!(
        "schedule {} removed after {} run(s); the jobs it made stay",
        schedule.id, schedule.runs
    );
    Ok(())
}
