//! Self-contained HTML pages (images inline) that a person can follow: the
//! report of a replay run, and a recording's events over its screenshots.
//! Written with maud's templates: every value is escaped unless it is
//! marked as markup.

use std::collections::BTreeMap;

use anyhow::{Context as _, Result};
use base64::Engine as _;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use reprise_models::{ActionEvent, RecordingBundle, Rect, ScreenGeometry};
use reprise_strategies::{ReplayOutcome, Sought, StepStatus};

use crate::present::event_label;
use crate::store::Store;

const STYLE: &str = "
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 1100px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; }
table.meta td { padding: 2px 12px 2px 0; vertical-align: top; }
table.candidates td, table.candidates th { padding: 2px 12px 2px 0; text-align: left; }
td.seen .shot { max-width: 360px; }
.badge { display: inline-block; padding: 2px 8px; border-radius: 4px; color: #fff; font-weight: bold; }
.verified, .completed, .dry_run { background: #2e7d32; } .failed, .step_limit { background: #c62828; }
.aborted, .skipped { background: #ef6c00; } .unverified { background: #6d4c41; }
.shot { position: relative; display: inline-block; max-width: 100%; border: 1px solid #999; }
.frames { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; margin-top: 8px; }
.frames figure { margin: 0; max-width: 100%; } .frames figcaption { font-weight: bold; }
.shot img { display: block; max-width: 100%; height: auto; }
.shot svg { position: absolute; left: 0; top: 0; width: 100%; height: 100%; }
.step, .frame { border-top: 1px solid #ccc; padding-top: 1em; margin-top: 1em; }
small.retried { color: #6d4c41; font-weight: normal; }
details.attempts summary { cursor: pointer; } li.retry { color: #555; }
.error { color: #c62828; } code { background: #f3f3f3; padding: 0 3px; }
ul.events { font-family: monospace; }
";

/// The colour of where a step aimed (and a recording's pointer).
const MARK_RED: &str = "#e53935";
/// The colour of the candidates a failed search saw.
const MARK_BLUE: &str = "#1e63c6";

pub(super) fn page(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body { (body) }
        }
    }
    .into_string()
}

/// What is drawn over a frame: a labelled point (a circle with a cross),
/// or a labelled box.
enum Mark {
    Point { x: f64, y: f64, label: String },
    Box { rect: Rect, label: String },
}

impl Mark {
    fn point((x, y): (f64, f64), label: String) -> Mark {
        Mark::Point { x, y, label }
    }

    /// The logical points a crop must show for this mark.
    fn points(&self) -> Vec<(f64, f64)> {
        match self {
            Mark::Point { x, y, .. } => vec![(*x, *y)],
            Mark::Box { rect, .. } => vec![
                (f64::from(rect.left), f64::from(rect.top)),
                (rect.right() as f64, rect.bottom() as f64),
            ],
        }
    }
}

/// One decimal, as SVG coordinates are written.
fn d1(value: f64) -> String {
    format!("{value:.1}")
}

/// An image with marks at logical screen points and boxes.
fn marked_image(
    png: &[u8],
    width: u32,
    height: u32,
    screen: &ScreenGeometry,
    marks: &[Mark],
) -> Markup {
    let data = base64::engine::general_purpose::STANDARD.encode(png);
    let px = |x: f64| (x - f64::from(screen.rect.left)) * screen.scale_factor;
    let py = |y: f64| (y - f64::from(screen.rect.top)) * screen.scale_factor;
    html! {
        div.shot {
            img alt="screenshot" src={ "data:image/png;base64," (data) };
            svg viewBox={ "0 0 " (width) " " (height) } preserveAspectRatio="none" {
                @for mark in marks {
                    @match mark {
                        Mark::Point { x, y, label } => {
                            @let (x, y) = (px(*x), py(*y));
                            g class="mark" {
                                circle cx=(d1(x)) cy=(d1(y)) r="14" fill="none" stroke=(MARK_RED) stroke-width="3" {}
                                line x1=(d1(x - 22.0)) y1=(d1(y)) x2=(d1(x + 22.0)) y2=(d1(y)) stroke=(MARK_RED) stroke-width="2" {}
                                line x1=(d1(x)) y1=(d1(y - 22.0)) x2=(d1(x)) y2=(d1(y + 22.0)) stroke=(MARK_RED) stroke-width="2" {}
                                text x=(d1(x + 16.0)) y=(d1(y - 16.0)) fill=(MARK_RED) font-size="16" font-weight="bold" { (label) }
                            }
                        }
                        Mark::Box { rect, label } => {
                            @let (x, y) = (px(f64::from(rect.left)), py(f64::from(rect.top)));
                            g class="candidate" {
                                rect x=(d1(x)) y=(d1(y)) width=(d1(f64::from(rect.width) * screen.scale_factor)) height=(d1(f64::from(rect.height) * screen.scale_factor)) fill="none" stroke=(MARK_BLUE) stroke-width="2" stroke-dasharray="6 3" {}
                                text x=(d1(x + 2.0)) y=(d1(y - 4.0)) fill=(MARK_BLUE) font-size="14" font-weight="bold" { (label) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Rows of a key and a value, as a table.
fn meta_rows(rows: &[(String, String)]) -> Markup {
    html! {
        table.meta {
            @for (key, value) in rows {
                tr { td { (key) } td { (value) } }
            }
        }
    }
}

/// A point as a person reads it: `(412, 300)`.
fn at((x, y): (f64, f64)) -> String {
    format!("({x:.0}, {y:.0})")
}

/// An outcome's badge: its name, or how a completed run was checked.
pub(super) fn outcome_class(outcome: Option<&ReplayOutcome>, dry_run: bool) -> &'static str {
    match outcome {
        None => "unfinished",
        Some(ReplayOutcome::Completed { .. }) if dry_run => "dry_run",
        Some(ReplayOutcome::Completed { skipped, .. }) if *skipped > 0 => "skipped",
        Some(ReplayOutcome::Completed { unverified, .. }) if *unverified > 0 => "unverified",
        Some(ReplayOutcome::Completed { .. }) => "completed",
        Some(ReplayOutcome::Failed { .. }) => "failed",
        Some(ReplayOutcome::Aborted { .. }) => "aborted",
        Some(ReplayOutcome::StepLimit { .. }) => "step_limit",
    }
}

/// The report of one replay run.
pub fn run_report(store: &Store, run_id: &str) -> Result<String> {
    let (run, steps) = store.load_run(run_id)?;
    // The recording, for its frames beside the replay's (it may have been
    // deleted since).
    let bundle = store.load(&run.recording_id).ok();
    let dry_run = run.dry_run();
    let outcome_class = outcome_class(run.outcome.as_ref(), dry_run);
    let outcome_text = match &run.outcome {
        // Decided, never done: nothing was verified.
        Some(ReplayOutcome::Completed { .. }) if dry_run => {
            crate::present::outcome_words(run.outcome.as_ref(), true)
        }
        Some(ReplayOutcome::Completed {
            unverified,
            skipped,
            ..
        }) if *skipped + *unverified > 0 => {
            crate::present::outcome_words(run.outcome.as_ref(), false)
        }
        Some(ReplayOutcome::Completed { .. }) => "completed, every step verified".to_owned(),
        // Halted (at which step, why), or not ended.
        _ => crate::present::outcome_words(run.outcome.as_ref(), false),
    };
    let recording_label = bundle.as_ref().map_or(run.recording_id.clone(), |b| {
        format!("{} ({})", b.recording.name, b.recording.id)
    });
    let mut rows: Vec<(String, String)> = vec![
        ("recording".into(), recording_label),
        ("strategy".into(), run.strategy.clone()),
        ("started".into(), run.started.clone()),
        (
            "ended".into(),
            run.ended.clone().unwrap_or_else(|| "did not end".into()),
        ),
        (
            "outcome".into(),
            crate::present::outcome_words(run.outcome.as_ref(), dry_run),
        ),
    ];
    rows.push(summary::coverage_row(&steps));
    rows.extend(argument_rows(&run.arguments));
    if let Some(summary) = &run.summary {
        rows.extend(summary::cost_rows(summary));
    }
    // Each step's "after" is the frame the next step's decision saw.
    let after: BTreeMap<usize, (String, ScreenGeometry)> = steps
        .windows(2)
        .filter_map(|pair| {
            let next = &pair[1];
            Some((
                pair[0].step.record.step_idx,
                (next.screenshot_hash.clone()?, next.step.screen?),
            ))
        })
        .collect();
    let mut sections = Vec::with_capacity(steps.len());
    for stored in &steps {
        sections.push(step_section(
            store,
            bundle.as_ref(),
            stored,
            after.get(&stored.step.record.step_idx),
        )?);
    }
    let body = html! {
        h1 { "Replay run " code { (run.id) } }
        p { "Outcome: " span class={ "badge " (outcome_class) } id="outcome" { (outcome_text) } }
        (meta_rows(&rows))
        (summary::summary_table(&steps))
        @for section in sections { (section) }
    };
    Ok(page(&format!("Replay run {}", run.id), body))
}

mod arguments;
mod crops;
pub(crate) use crops::window_crop;
mod step;
mod summary;

use arguments::argument_rows;
use crops::*;
use step::step_section;

/// The size of the region shown around a target whose box is not known,
/// in logical pixels.
const TARGET_REGION: (u32, u32) = (240, 120);

/// The id of a recording page's frame section (the index links to it).
fn frame_anchor(frame_id: Option<u32>) -> String {
    frame_id.map_or("frame-none".to_owned(), |id| format!("frame-{id}"))
}

/// A recording as a page: an index of its actions, then for each screenshot
/// the actions linked to it, over the screenshot cropped to their window
/// with the pointer positions marked.
pub fn recording_page(store: &Store, recording_id: &str) -> Result<String> {
    let bundle = store.load(recording_id)?;
    let recording = &bundle.recording;
    let trees = crate::present::planned_steps(&bundle);
    // What the newest version adds (the outcome checks marked while
    // recording, an edit's waits and checks).
    let added = match store.version_state(recording_id, None)? {
        (version, _, Some(program)) => Some((version, super::steps::added_entries(&program)))
            .filter(|(_, lines)| !lines.is_empty()),
        _ => None,
    };
    // Group the top-level trees by the frame they link to, in order.
    let mut by_frame: BTreeMap<Option<u32>, Vec<(usize, &ActionEvent)>> = BTreeMap::new();
    for (idx, tree) in trees.iter().enumerate() {
        by_frame
            .entry(tree.screenshot_id)
            .or_default()
            .push((idx, tree));
    }
    let frames = by_frame
        .into_iter()
        .map(|(frame_id, events)| frame_section(store, &bundle, frame_id, &events))
        .collect::<Result<Vec<_>>>()?;
    let body = html! {
        h1 { "Recording " (recording.name) }
        (meta_rows(&recording_rows(&bundle, trees.len(), added)))
        // An index of the actions, each linking to the frame it is shown on.
        table.meta #index {
            tr { th { "step" } th { "at" } th { "action" } }
            @for (idx, tree) in trees.iter().enumerate() {
                tr {
                    td { a href={ "#" (frame_anchor(tree.screenshot_id)) } { (idx + 1) } }
                    td { (format!("{:.2} s", tree.timestamp)) }
                    td { (event_label(tree)) }
                }
            }
        }
        @for frame in frames { (frame) }
    };
    Ok(page(&format!("Recording {}", recording.name), body))
}

/// A recording page's header rows: what was recorded, where, and how much
/// (`steps`: the steps as replay takes them).
fn recording_rows(
    bundle: &RecordingBundle,
    steps: usize,
    added: Option<(u32, Vec<String>)>,
) -> Vec<(String, String)> {
    let recording = &bundle.recording;
    let added = added.map(|(version, lines)| (format!("version {version} adds"), lines.join("; ")));
    [
        ("id", recording.id.clone()),
        ("task", recording.task_description.clone()),
        ("created", recording.created.clone()),
        ("platform", recording.platform.clone()),
        (
            "screen",
            format!(
                "{}x{} at scale {}",
                recording.monitor.rect.width,
                recording.monitor.rect.height,
                recording.monitor.scale_factor
            ),
        ),
        (
            "events",
            format!(
                "{} raw in {steps} steps (as replay takes them), over {:.1} s",
                bundle.events.len(),
                bundle.duration()
            ),
        ),
        ("complete", recording.complete.to_string()),
        (
            "windows",
            bundle
                .window_states
                .iter()
                .map(|state| {
                    format!(
                        "{:.2} s: {} ({})",
                        state.timestamp, state.title, state.app_class
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
        ),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .chain(added)
    .collect()
}

/// A screenshot's section of a recording page: the actions linked to it,
/// over the screenshot cropped to their window with the pointer positions
/// marked.
fn frame_section(
    store: &Store,
    bundle: &RecordingBundle,
    frame_id: Option<u32>,
    events: &[(usize, &ActionEvent)],
) -> Result<Markup> {
    let state = events[0]
        .1
        .window_state_id
        .and_then(|id| bundle.window_states.get(id as usize));
    let window = state.map_or("no window".to_owned(), |state| {
        format!("{} ({})", state.title, state.app_class)
    });
    let image = match frame_id.and_then(|id| bundle.screenshots.get(id as usize)) {
        Some(shot) => {
            let marks: Vec<Mark> = events
                .iter()
                .filter_map(|(idx, tree)| {
                    tree.position()
                        .map(|point| Mark::point(point, format!("{}", idx + 1)))
                })
                .collect();
            // The window the actions were in, and where the pointer was.
            let points: Vec<(f64, f64)> = marks.iter().flat_map(Mark::points).collect();
            Some(marked_crop(
                store,
                &shot.content_hash,
                &shot.screen,
                state.map(|state| state.rect),
                &points,
                &marks,
            )?)
        }
        None => None,
    };
    Ok(html! {
        div.frame id=(frame_anchor(frame_id)) {
            h2 {
                (frame_id.map_or("No screenshot".to_owned(), |id| format!("Screenshot {id}")))
                " " small { "in " (window) }
            }
            ul.events {
                @for (idx, tree) in events {
                    li { (format!("{}. at {:.3} s: ", idx + 1, tree.timestamp)) (event_label(tree)) }
                }
            }
            @if let Some(image) = image { (image) }
        }
    })
}
