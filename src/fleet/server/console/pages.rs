//! The console's pages as maud templates: every value escaped, no inline
//! script or style (the page's CSP allows neither).

use std::collections::HashMap;

use maud::{DOCTYPE, Markup, html};

use super::super::auth::{Role, Session};
use crate::fleet::{Job, JobEvent, JobState, Schedule, ScheduleState, Worker};
use crate::store::RecordingSummary;

/// The jobs page's filter.
#[derive(Debug)]
pub(super) struct Filter<'a> {
    pub state: Option<JobState>,
    pub pool: Option<&'a str>,
    pub label: Option<(&'a str, &'a str)>,
}

fn layout(title: &str, session: Option<&Session>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (title) " · Reprise" }
                link rel="stylesheet" href="/console/console.css";
                script src="/console/console.js" defer {}
            }
            body {
                @if let Some(session) = session {
                    nav {
                        a href="/console" { "Jobs" }
                        @if session.role != Role::Viewer { a href="/console/submit" { "Submit" } }
                        a href="/console/workers" { "Workers" }
                        a href="/console/recordings" { "Recordings" }
                        a href="/console/schedules" { "Schedules" }
                        a href="/console/dead" { "Dead letters" }
                        span.who { "signed in as a " (session.role.as_str()) }
                        form method="post" action="/console/logout" {
                            input type="hidden" name="csrf" value=(session.csrf);
                            button type="submit" { "Log out" }
                        }
                    }
                }
                main {
                    h1 { (title) }
                    (body)
                }
            }
        }
    }
}

pub(super) fn login(error: Option<&str>) -> Markup {
    layout(
        "Log in",
        None,
        html! {
            @if let Some(error) = error { p.error { (error) } }
            form method="post" action="/console/login" {
                label { "Token " input type="password" name="token" autocomplete="current-password" autofocus; }
                button type="submit" id="login" { "Log in" }
            }
            p { "A user's token may submit, cancel and requeue; a viewer's may look." }
        },
    )
}

pub(super) fn failure(
    session: Option<&Session>,
    status: axum::http::StatusCode,
    message: &str,
) -> Markup {
    layout(
        &status.to_string(),
        session,
        html! { p.error id="failure" { (message) } p { a href="/console" { "Back to the jobs" } } },
    )
}

/// A form button for a change, with the session's CSRF token.
fn action(session: &Session, path: &str, label: &str, id: &str) -> Markup {
    html! {
        form.action method="post" action=(path) {
            input type="hidden" name="csrf" value=(session.csrf);
            button type="submit" id=(id) { (label) }
        }
    }
}

/// A table: its column heads, then its rows.
fn table(id: &str, heads: &[&str], rows: Markup) -> Markup {
    html! {
        table id=(id) {
            thead { tr { @for head in heads { th { (head) } } } }
            tbody { (rows) }
        }
    }
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// Seconds from one time to another, as text.
fn took(from: Option<&str>, to: Option<&str>) -> String {
    let parse = |time: &str| chrono::DateTime::parse_from_rfc3339(time).ok();
    match (from.and_then(parse), to.and_then(parse)) {
        (Some(from), Some(to)) => format!("{:.1} s", (to - from).as_seconds_f64()),
        _ => String::new(),
    }
}

pub(super) fn jobs(
    session: &Session,
    jobs: &[Job],
    steps: &HashMap<(String, u32), u32>,
    after: i64,
    filter: &Filter<'_>,
) -> Markup {
    let label = filter.label.map(|(k, v)| format!("{k}={v}"));
    layout(
        "Jobs",
        Some(session),
        html! {
            form.filter method="get" action="/console" {
                label { "State "
                    select name="state" {
                        option value="" { "any" }
                        @for state in JobState::ALL {
                            option value=(state.as_str()) selected[filter.state == Some(state)] { (state.as_str()) }
                        }
                    }
                }
                label { "Pool " input name="pool" value=(filter.pool.unwrap_or_default()); }
                label { "Label " input name="label" placeholder="key=value" value=(label.clone().unwrap_or_default()); }
                button type="submit" { "Filter" }
            }
            table id="jobs" data-after=(after)
                data-state=(filter.state.map(JobState::as_str).unwrap_or_default())
                data-pool=(filter.pool.unwrap_or_default())
                data-label=(label.unwrap_or_default()) {
                thead { tr {
                    th { "job" } th { "state" } th { "pool" } th { "priority" } th { "worker" } th { "attempt" }
                    th { "steps" } th { "submitted" } th { "waited" } th { "ran" } th { "reason" }
                } }
                tbody {
                    @for job in jobs {
                        tr data-job=(job.id) data-state=(job.state.as_str()) {
                            td.id { a href={ "/console/jobs/" (job.id) } { (short(&job.id)) } }
                            td.state { (job.state.as_str()) }
                            td.pool { (job.pool) }
                            td.priority { (job.spec.priority.as_str()) }
                            td.worker { (job.worker.as_deref().unwrap_or("-")) }
                            td.attempt { (job.attempt) }
                            td.steps { (steps.get(&(job.id.clone(), job.attempt)).copied().unwrap_or(0)) }
                            td.created { (job.created) }
                            td.waited { (took(Some(&job.created), job.started.as_deref())) }
                            td.ran { (took(job.started.as_deref(), job.ended.as_deref())) }
                            td.reason { (job.reason.as_deref().unwrap_or_default()) }
                        }
                    }
                }
            }
            @if jobs.is_empty() { p.empty { "No job yet: new ones show here as they are submitted." } }
        },
    )
}

pub(super) fn job(session: &Session, job: &Job, events: &[JobEvent], report: bool) -> Markup {
    let last = events.last().map_or(0, |event| event.id);
    let settled = job.settled.as_ref().map(|settled| match settled {
        crate::fleet::Settled::Requeued { job } => format!("requeued as {job}"),
        crate::fleet::Settled::Discarded => "discarded".to_owned(),
    });
    let user = session.role != Role::Viewer;
    let base = format!("/console/jobs/{}", job.id);
    // The server says why where it cannot be resumed.
    let resumable = job.state.halted_at_a_step() && job.run_id.is_some();
    layout(
        &format!("Job {}", short(&job.id)),
        Some(session),
        html! {
            dl {
                dt { "id" } dd { (job.id) }
                dt { "state" } dd id="state" { (job.state.as_str()) }
                dt { "recording" } dd { (job.recording_id) @if let Some(version) = job.spec.version { " version " (version) } }
                dt { "pool" } dd { (job.pool) }
                dt { "priority" } dd { (job.spec.priority.as_str()) }
                @for (key, value) in &job.spec.labels { dt { "label" } dd { (key) "=" (value) } }
                @for (key, value) in &job.spec.parameters { dt { "parameter" } dd { (key) "=" (value) } }
                dt { "attempt" } dd { (job.attempt) " of " (job.spec.attempts) }
                dt { "worker" } dd { (job.worker.as_deref().unwrap_or("-")) }
                dt { "submitted" } dd { (job.created) }
                dt { "started" } dd { (job.started.as_deref().unwrap_or("-")) }
                dt { "ended" } dd { (job.ended.as_deref().unwrap_or("-")) }
                @if let Some(reason) = &job.reason { dt { "reason" } dd id="reason" { (reason) } }
                @if let Some(schedule) = &job.spec.schedule { dt { "schedule" } dd { (schedule) " slot " (job.spec.slot.as_deref().unwrap_or("-")) } }
                @if let Some(from) = &job.spec.requeued_from { dt { "requeued from" } dd { a href={ "/console/jobs/" (from) } { (from) } } }
                @if let Some(resume) = &job.spec.resume { dt { "resumes" } dd id="resumes" { "run " (resume.run) " on worker " (resume.worker) @if let Some(from) = resume.from { " from step " (from) } } }
                @if let Some(settled) = &settled { dt { "settled" } dd id="settled" { (settled) } }
            }
            @if report { p { a href={ "/api/jobs/" (job.id) "/report" } id="report" { "The replay's report" } } }
            @if user {
                div.actions {
                    @if !job.state.is_final() { (action(session, &format!("{base}/cancel"), "Cancel", "cancel")) }
                    @if job.state.is_final() && job.settled.is_none() { (action(session, &format!("{base}/requeue"), "Requeue", "requeue")) }
                    @if resumable && job.settled.is_none() { (action(session, &format!("{base}/resume"), "Resume where it halted", "resume")) }
                    @if job.state.is_dead() && job.settled.is_none() && session.administers { (action(session, &format!("{base}/discard"), "Discard", "discard")) }
                }
            }
            h2 { "History" }
            ol id="events" data-job=(job.id) data-after=(last) data-final=(job.state.is_final()) {
                @for event in events { li { (crate::fleet::client::event_line(event)) } }
            }
        },
    )
}

pub(super) fn workers(session: &Session, workers: &[Worker]) -> Markup {
    layout(
        "Workers",
        Some(session),
        html! {
            (table("workers", &["worker", "state", "host", "pool", "labels", "job", "last heartbeat", "last screen", ""], html! {
                @for worker in workers {
                    tr data-worker=(worker.id) {
                        td { (worker.id) } td.state { (worker.state) } td { (worker.host) } td { (worker.pool) }
                        td { @for (key, value) in &worker.labels { (key) "=" (value) " " } }
                        td { @if let Some(job) = &worker.job { a href={ "/console/jobs/" (job) } { (short(job)) } } }
                        td { (worker.last_heartbeat) }
                        td.screen {
                            @if let Some(at) = &worker.screen_at {
                                img width="240" alt={ "the screen of worker " (worker.id) " at " (at) }
                                    src={ "/console/workers/" (crate::fleet::client::path_part(&worker.id)) "/screen" };
                                br; small { (at) }
                            }
                        }
                        td { @if session.administers && matches!(worker.state.as_str(), "gone" | "silent") {
                            (action(session, &format!("/console/workers/{}/forget", crate::fleet::client::path_part(&worker.id)), "Forget", "forget"))
                        } }
                    }
                }
            }))
        },
    )
}

pub(super) fn recordings(session: &Session, recordings: &[RecordingSummary]) -> Markup {
    layout(
        "Recordings",
        Some(session),
        html! {
            (table("recordings", &["starts on", "name", "id", "recorded", "length", "events", "screenshots", "version"], html! {
                @for recording in recordings {
                    tr data-recording=(recording.id) {
                        td.thumbnail {
                            @if recording.n_screenshots > 0 {
                                img loading="lazy" width="160" alt={ "the screen " (recording.name) " starts on" }
                                    src={ "/console/recordings/" (crate::fleet::client::path_part(&recording.id)) "/thumbnail" };
                            }
                        }
                        td { (recording.name) } td { (recording.id) } td { (recording.created) }
                        td { (format!("{:.1} s", recording.duration_seconds)) }
                        td { (recording.n_events) } td { (recording.n_screenshots) }
                        td.version { (recording.latest_version) }
                    }
                }
            }))
        },
    )
}

pub(super) fn schedules(session: &Session, schedules: &[Schedule]) -> Markup {
    layout(
        "Schedules",
        Some(session),
        html! {
            (table("schedules", &["schedule", "state", "when", "next", "runs", "skipped", "recording", "last slot", ""], html! {
                @for schedule in schedules {
                    tr data-schedule=(schedule.id) {
                        td { (short(&schedule.id)) } td.state { (schedule.state.as_str()) }
                        td { @match &schedule.every { Some(every) => { (every) " (" (schedule.time_zone) ")" } None => { "once" } } }
                        td { (schedule.next.as_deref().unwrap_or("-")) } td { (schedule.runs) } td { (schedule.skipped) }
                        td { (schedule.request.recording) }
                        td { (schedule.last_slot.as_deref().unwrap_or("-")) @if let Some(error) = &schedule.last_error { " (" (error) ")" } }
                        td { @if session.administers && schedule.state == ScheduleState::Active {
                            (action(session, &format!("/console/schedules/{}/remove", schedule.id), "Remove", "remove"))
                        } }
                    }
                }
            }))
        },
    )
}

pub(super) fn dead(session: &Session, jobs: &[Job]) -> Markup {
    layout(
        "Dead letters",
        Some(session),
        html! {
            p { "Jobs that ended failed, aborted, abandoned or expired: requeue one to run it again, or discard it." }
            (table("dead", &["job", "state", "ended", "pool", "reason", ""], html! {
                @for job in jobs {
                    tr data-job=(job.id) {
                        td { a href={ "/console/jobs/" (job.id) } { (short(&job.id)) } }
                        td.state { (job.state.as_str()) } td { (job.ended.as_deref().unwrap_or("-")) }
                        td { (job.pool) } td { (job.reason.as_deref().unwrap_or_default()) }
                        td { @if session.role != Role::Viewer {
                            (action(session, &format!("/console/jobs/{}/requeue", job.id), "Requeue", "requeue"))
                            @if session.administers { (action(session, &format!("/console/jobs/{}/discard", job.id), "Discard", "discard")) }
                        } }
                    }
                }
            }))
        },
    )
}

pub(super) fn submit(session: &Session, recordings: &[RecordingSummary]) -> Markup {
    layout(
        "Submit",
        Some(session),
        html! {
            form.submit method="post" action="/console/submit" {
                input type="hidden" name="csrf" value=(session.csrf);
                label { "Recording "
                    select name="recording" id="recording" {
                        @for recording in recordings { option value=(recording.id) { (recording.name) " (" (short(&recording.id)) ")" } }
                    }
                }
                label { "Parameters (NAME=VALUE, a line each) " textarea name="parameters" id="parameters" rows="3" {} }
                label { "Pool " input name="pool" id="pool" value="default"; }
                label { "Labels the desktop must have (KEY=VALUE, a line each) " textarea name="labels" id="labels" rows="2" {} }
                label { "Strategy "
                    select name="strategy" { option value="visual" { "visual" } option value="naive" { "naive" } option value="vanilla" { "vanilla" } }
                }
                label { "Priority "
                    select name="priority" id="priority" { option value="high" { "high" } option value="normal" selected { "normal" } option value="low" { "low" } }
                }
                label { "Attempts " input type="number" name="attempts" value="1" min="1" max="20"; }
                label { "Every (a cron expression; empty: now) " input name="every" id="every" placeholder="*/15 9-17 * * MON-FRI"; }
                label { "Time zone " input name="time_zone" placeholder="UTC"; }
                button type="submit" id="submit" { "Submit" }
            }
        },
    )
}
