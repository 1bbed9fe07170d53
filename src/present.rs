//! How recordings look to a person: the `list` table, the `show` tree, and the
//! JSON shape of `show --json`.

use std::fmt::Write as _;

use reprise_models::{ActionEvent, EventName, Recording, RecordingBundle, Screenshot, WindowState};
use serde::Serialize;

use crate::store::RecordingSummary;

/// What `reprise show --json` prints.
#[derive(Debug, Serialize)]
pub struct ShowJson<'a> {
    pub recording: &'a Recording,
    /// The reduced event trees.
    pub events: &'a [ActionEvent],
    pub screenshots: &'a [Screenshot],
    pub window_states: &'a [WindowState],
}

/// The `reprise list` table.
pub fn summaries_table(summaries: &[RecordingSummary]) -> String {
    if summaries.is_empty() {
        return "no recordings yet: make one with `reprise record`\n".to_owned();
    }
    let name_width = summaries
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!(
        "{:<8}  {:<name_width$}  {:<20}  {:>8}  {:>6}  {:>11}  STATUS\n",
        "ID", "NAME", "CREATED", "DURATION", "EVENTS", "SCREENSHOTS"
    );
    for summary in summaries {
        let _ = writeln!(
            out,
            "{:<8}  {:<name_width$}  {:<20}  {:>7.1}s  {:>6}  {:>11}  {}",
            short_id(&summary.id),
            summary.name,
            summary
                .created
                .get(..19)
                .unwrap_or(&summary.created)
                .replace('T', " "),
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

fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// The `reprise show` text: a header and the reduced event trees, indented.
pub fn recording_text(bundle: &RecordingBundle, trees: &[ActionEvent]) -> String {
    let recording = &bundle.recording;
    let mut out = String::new();
    let _ = writeln!(out, "recording {} {:?}", recording.id, recording.name);
    if !recording.task_description.is_empty() {
        let _ = writeln!(out, "task: {}", recording.task_description);
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
    let _ = writeln!(
        out,
        "{} raw events in {} trees over {:.1} s, {} screenshots, {} window states",
        bundle.events.len(),
        trees.len(),
        bundle.duration(),
        bundle.screenshots.len(),
        bundle.window_states.len()
    );
    let mut last_window: Option<u32> = None;
    for tree in trees {
        if tree.window_state_id != last_window
            && let Some(state) = tree
                .window_state_id
                .and_then(|id| bundle.window_states.get(id as usize))
        {
            let rect = state.rect;
            let _ = writeln!(
                out,
                "window {:?} ({}) at {},{} {}x{}",
                state.title, state.app_class, rect.left, rect.top, rect.width, rect.height
            );
            last_window = tree.window_state_id;
        }
        write_tree(&mut out, tree, 1);
    }
    out
}

fn write_tree(out: &mut String, event: &ActionEvent, depth: usize) {
    let _ = write!(
        out,
        "{:>9.3}s {}{}",
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
            "{:>10} {}({} moves)",
            "",
            "  ".repeat(depth + 1),
            event.children.len()
        );
        return;
    }
    for child in &event.children {
        write_tree(out, child, depth + 1);
    }
}

/// One event on one line (see [`ActionEvent::label`]).
pub fn event_label(event: &ActionEvent) -> String {
    event.label()
}
