//! How recordings and runs look to a person: the `list` and `runs` tables,
//! the `show` tree and the JSON shape of `show --json` (here); the HTML pages
//! of a run and a recording ([`report`]) and of a batch ([`batch`]); a
//! segmentation drawn over its image ([`overlay`]).

pub mod batch;
pub mod overlay;
pub mod report;
pub mod steps;
pub mod story;

use std::fmt::Write as _;

use reprise_models::{ActionEvent, EventName, Recording, RecordingBundle, Screenshot, WindowState};
use reprise_strategies::ReplayOutcome;
use serde::Serialize;

use crate::store::{RecordingSummary, RunListing};

/// What `reprise show --json` prints.
#[derive(Debug, Serialize)]
pub struct ShowJson<'a> {
    pub recording: &'a Recording,
    /// The reduced event trees.
    pub events: &'a [ActionEvent],
    pub screenshots: &'a [Screenshot],
    pub window_states: &'a [WindowState],
    /// The shown version's steps, where it was edited (or kept outcome
    /// checks): what replay takes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<&'a reprise_models::program::Program>,
}

/// The `reprise list` table.
pub fn summaries_table(summaries: &[RecordingSummary]) -> String {
    if summaries.is_empty() {
        return "no recordings yet: make one with `reprise record`\n".to_owned();
    }
    let (names, name_width) = name_column(summaries.iter().map(|summary| &summary.name[..]), 4);
    let mut out = format!(
        "{:<8}  {:<name_width$}  {:<20}  {:>8}  {:>6}  {:>11}  STATUS\n",
        "ID", "NAME", "CREATED", "DURATION", "EVENTS", "SCREENSHOTS"
    );
    for (summary, name) in summaries.iter().zip(&names) {
        let _ = writeln!(
            out,
            "{:<8}  {:<name_width$}  {:<20}  {:>7.1}s  {:>6}  {:>11}  {}",
            short_id(&summary.id),
            name,
            to_the_second(&summary.created),
            summary.duration_seconds,
            summary.n_events,
            summary.n_screenshots,
            if summary.complete {
                "complete"
            } else {
                "incomplete"
            }
        );
    }
    out
}

/// A run's outcome in words, (`None`: not ended). A
/// dry run's steps were decided, never done: it claims nothing verified.
pub fn outcome_words(outcome: Option<&ReplayOutcome>, dry_run: bool) -> String {
    let Some(outcome) = outcome else {
        return "not ended: still running, or halted when its process was killed".to_owned();
    };
    match outcome {
        ReplayOutcome::Completed { steps, .. } if dry_run => format!(
            "dry run: {} decided, nothing injected",
            plural(*steps, "step")
        ),
        ReplayOutcome::Completed {
            steps,
            unverified: 0,
            skipped: 0,
        } => format!("completed, {} verified", plural(*steps, "step")),
        // Not "completed": a step nobody checked may have done nothing (a
        // naive run checks none).
        ReplayOutcome::Completed {
            steps,
            unverified,
            skipped,
        } => format!(
            "{}: {} verified, {unverified} unverified, {skipped} failed and passed over",
            if *skipped > 0 {
                "ended with failed steps passed over"
            } else {
                "ended unverified"
            },
            steps.saturating_sub(unverified + skipped)
        ),
        // Steps are counted from 1 for people (the data count from 0).
        // Halted: `reprise resume` goes on from there.
        ReplayOutcome::Failed {
            step,
            reason,
            by: reprise_strategies::FailedBy::Model,
        } => format!("halted at step {}: the model failed: {reason}", step + 1),
        ReplayOutcome::Failed { step, reason, .. } => {
            format!("halted at step {}: {reason}", step + 1)
        }
        ReplayOutcome::Aborted { step } => format!("halted at step {}: aborted", step + 1),
        ReplayOutcome::StepLimit { steps } => format!("reached the step limit ({steps})"),
    }
}

/// The `reprise runs` table.
pub fn runs_table(runs: &[RunListing]) -> String {
    if runs.is_empty() {
        return "no replay runs yet: run `reprise replay` first\n".to_owned();
    }
    let (names, name_width) = name_column(runs.iter().map(|run| &run.recording_name[..]), 9);
    let mut out = format!(
        "{:<8}  {:<name_width$}  {:<8}  {:<19}  {:>5}  {:>8}  OUTCOME\n",
        "ID", "RECORDING", "STRATEGY", "STARTED", "STEPS", "DURATION"
    );
    for (run, name) in runs.iter().zip(&names) {
        let duration = run
            .seconds
            .map_or("-".to_owned(), |seconds| format!("{seconds:.1}s"));
        let _ = writeln!(
            out,
            "{:<8}  {:<name_width$}  {:<8}  {:<19}  {:>5}  {:>8}  {}",
            short_id(&run.id),
            name,
            terminal_safe(&run.strategy),
            to_the_second(&run.started),
            run.steps,
            duration,
            shortened(
                &terminal_safe(&outcome_words(run.outcome.as_ref(), run.dry_run)),
                100
            )
        );
    }
    out
}

/// A table's name column: each name escaped and cut, and the column's
/// width (at least `header` characters, at most [`NAME_COLUMN_CHARS`]).
fn name_column<'a>(names: impl Iterator<Item = &'a str>, header: usize) -> (Vec<String>, usize) {
    let names: Vec<String> = names
        .map(|name| shortened(&terminal_safe(name), NAME_COLUMN_CHARS))
        .collect();
    let width = names
        .iter()
        .map(|name| name.chars().count())
        .max()
        .unwrap_or(header)
        .clamp(header, NAME_COLUMN_CHARS);
    (names, width)
}

/// An RFC 3339 time as a table shows it: `2026-12-02 13:44:10`.
fn to_the_second(time: &str) -> String {
    time.get(..19).unwrap_or(time).replace('T', " ")
}

/// The widest the `list` table's name column grows; longer names are cut.
const NAME_COLUMN_CHARS: usize = 40;

/// `text` as a terminal shows it without being steered by it: control
/// characters and bidirectional overrides become visible escapes (`\n`,
/// `\u{1b}`, `\u{202e}`), so a name can neither run a terminal command nor
/// pass for another name. JSON output stays exact; this is for people.
pub fn terminal_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if reprise_models::recording::is_deceptive_char(c) {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                other => out.push_str(&format!("\\u{{{:x}}}", u32::from(other))),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` cut to `max` characters, the last one an ellipsis when cut.
fn shortened(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// The `reprise show` text: a header and the reduced event trees, indented.
/// A recording's steps as replay takes them: its reduced trees, planned
/// (a typed word is one step, a key released in the step that pressed it).
pub fn planned_steps(bundle: &RecordingBundle) -> Vec<ActionEvent> {
    let options = reprise_models::ReduceOptions {
        double_click: bundle.recording.double_click,
    };
    reprise_strategies::plan::plan_steps(
        reprise_models::reduce(bundle.events.clone(), &options),
        &bundle.window_states,
    )
}

/// A recording as text for `show`: its data, then its steps as replay takes
/// them (`steps`: planned from the reduced trees), numbered.
pub fn recording_text(bundle: &RecordingBundle, trees: &[ActionEvent]) -> String {
    let recording = &bundle.recording;
    let mut out = recording_head(bundle, trees.len());
    let mut last_window: Option<u32> = None;
    for (idx, tree) in trees.iter().enumerate() {
        if tree.window_state_id != last_window
            && let Some(state) = tree
                .window_state_id
                .and_then(|id| bundle.window_states.get(id as usize))
        {
            let rect = state.rect;
            // With several monitors, the one holding the window's centre.
            let on = (recording.monitors.len() > 1)
                .then(|| {
                    let (x, y) = rect.center();
                    reprise_models::monitor_at(&recording.monitors, x, y)
                })
                .flatten()
                .map(|number| format!(" on monitor {number}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "window \"{}\" ({}) at {},{} {}x{}{on}",
                terminal_safe(&state.title),
                terminal_safe(&state.app_class),
                rect.left,
                rect.top,
                rect.width,
                rect.height
            );
            last_window = tree.window_state_id;
        }
        write_tree(&mut out, tree, 1, Some(idx + 1));
    }
    out
}

/// The lines `show` begins a recording with: its name, task, where and
/// when it was made, its monitors, and how much it holds (`steps`: as replay
/// takes them).
fn recording_head(bundle: &RecordingBundle, steps: usize) -> String {
    let recording = &bundle.recording;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "recording {} \"{}\"",
        terminal_safe(&recording.id),
        terminal_safe(&recording.name)
    );
    if !recording.task_description.is_empty() {
        let _ = writeln!(out, "task: {}", terminal_safe(&recording.task_description));
    }
    let monitor = recording.monitor;
    let _ = writeln!(
        out,
        "created {} on {}, screen {}x{} at scale {}{}",
        recording.created,
        recording.platform,
        monitor.rect.width,
        monitor.rect.height,
        monitor.scale_factor,
        if recording.complete {
            ""
        } else {
            " (incomplete: the recorder did not stop cleanly)"
        }
    );
    if recording.monitors.len() > 1 {
        let monitors: Vec<String> = recording
            .monitors
            .iter()
            .enumerate()
            .map(|(index, monitor)| {
                format!(
                    "{} \"{}\" {}x{} at {},{}{}",
                    index + 1,
                    terminal_safe(&monitor.name),
                    monitor.rect.width,
                    monitor.rect.height,
                    monitor.rect.left,
                    monitor.rect.top,
                    if monitor.primary { " (primary)" } else { "" }
                )
            })
            .collect();
        let _ = writeln!(out, "{} monitors: {}", monitors.len(), monitors.join("; "));
    }
    let _ = writeln!(
        out,
        "{} raw events in {steps} steps (as replay takes them) over {:.1} s, {} screenshots, {} window states",
        bundle.events.len(),
        bundle.duration(),
        bundle.screenshots.len(),
        bundle.window_states.len()
    );
    out
}

/// A tree as lines: a step's (numbered as replay numbers it) and, indented
/// below it, its children's.
fn write_tree(out: &mut String, event: &ActionEvent, depth: usize, number: Option<usize>) {
    let _ = write!(
        out,
        "{}{:>9.3}s {}{}",
        number.map_or_else(|| "     ".to_owned(), |number| format!("{number:>4}.")),
        event.timestamp,
        "  ".repeat(depth),
        event_label(event)
    );
    if let Some(id) = event.screenshot_id {
        let _ = write!(out, "  [screenshot {id}]");
    }
    out.push('\n');
    // A merged move's children are only the path it took: count them instead.
    if event.name == EventName::Move && !event.children.is_empty() {
        let _ = writeln!(
            out,
            "{:>15} {}({} moves)",
            "",
            "  ".repeat(depth + 1),
            event.children.len()
        );
        return;
    }
    for child in &event.children {
        write_tree(out, child, depth + 1, None);
    }
}

/// One event on one line (see [`ActionEvent::label`]).
pub fn event_label(event: &ActionEvent) -> String {
    terminal_safe(&event.label())
}

/// `1 step`, `2 steps`.
pub fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// A size for people: `0 bytes`, `1 byte`, `900 bytes`, `1.5 KiB`, `12.3 MiB`.
pub fn bytes(count: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if count < 1024 {
        return plural(count as usize, "byte");
    }
    let mut value = count as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_the_largest_unit_below_them() {
        assert_eq!(bytes(0), "0 bytes");
        assert_eq!(bytes(1), "1 byte");
        assert_eq!(bytes(1023), "1023 bytes");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(12_900_000), "12.3 MiB");
        assert_eq!(bytes(u64::MAX), "16777216.0 TiB");
    }

    #[test]
    fn names_reach_the_terminal_escaped_and_cut_to_the_column() {
        assert_eq!(
            terminal_safe("evil\u{1b}[2J\nname\u{202e}gpj.exe"),
            "evil\\u{1b}[2J\\nname\\u{202e}gpj.exe"
        );
        assert_eq!(
            terminal_safe("Maria Olsen – Tromsø"),
            "Maria Olsen – Tromsø"
        );
        let summary = |name: String| RecordingSummary {
            id: "0b5c2a8e-3f1d-4c6e-9a7b-2d4e6f8a0c1e".into(),
            name,
            created: "2026-12-01T12:00:00.000Z".into(),
            duration_seconds: 1.0,
            n_events: 2,
            n_screenshots: 1,
            complete: true,
            latest_version: 1,
        };
        // A name far past any width: no panic, one line, cut with an ellipsis.
        let table = summaries_table(&[summary("x".repeat(70_000)), summary("a\nb".into())]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert!(lines[1].contains(&format!("{}…", "x".repeat(NAME_COLUMN_CHARS - 1))));
        assert!(lines[2].contains("a\\nb"), "{table}");
    }

    #[test]
    fn a_run_is_called_completed_only_when_every_step_was_checked() {
        let done = |unverified, skipped| {
            outcome_words(
                Some(&ReplayOutcome::Completed {
                    steps: 5,
                    unverified,
                    skipped,
                }),
                false,
            )
        };
        assert_eq!(done(0, 0), "completed, 5 steps verified");
        // A naive run checks no step: it is not "completed".
        assert_eq!(
            done(5, 0),
            "ended unverified: 0 verified, 5 unverified, 0 failed and passed over"
        );
        assert_eq!(
            done(1, 2),
            "ended with failed steps passed over: 2 verified, 1 unverified, 2 failed and passed over"
        );
        for words in [done(5, 0), done(1, 2)] {
            assert!(!words.contains("completed"), "{words}");
        }
    }
}
