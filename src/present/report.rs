//! Self-contained HTML pages (images inline) that a person can follow: the
//! report of a replay run, and a recording's events over its screenshots.
//! Written with maud's templates: every value is escaped unless it is
//! marked as markup.

use std::collections::BTreeMap;

use anyhow::{Context as _, Result};
use base64::Engine as _;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use reprise_models::{ActionEvent, RecordingBundle, Rect, ReduceOptions, ScreenGeometry, reduce};
use reprise_strategies::{ReplayOutcome, Sought, StepStatus};

use crate::present::event_label;
use crate::store::Store;

const STYLE: &str = "
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 1100px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; }
table.meta td { padding: 2px 12px 2px 0; vertical-align: top; }
table.candidates td, table.candidates th { padding: 2px 12px 2px 0; text-align: left; }
.badge { display: inline-block; padding: 2px 8px; border-radius: 4px; color: #fff; font-weight: bold; }
.verified, .completed, .dry_run { background: #2e7d32; } .failed, .step_limit { background: #c62828; }
.aborted, .skipped { background: #ef6c00; } .unverified { background: #6d4c41; }
.shot { position: relative; display: inline-block; max-width: 100%; border: 1px solid #999; }
.frames { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; margin-top: 8px; }
.frames figure { margin: 0; max-width: 100%; } .frames figcaption { font-weight: bold; }
.shot img { display: block; max-width: 100%; height: auto; }
.shot svg { position: absolute; left: 0; top: 0; width: 100%; height: 100%; }
.step, .frame { border-top: 1px solid #ccc; padding-top: 1em; margin-top: 1em; }
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

/// One step of a run's report: what it did and why, what it looked for and
/// what it found (the recorded target's crop beside the found one), the
/// closest candidates when it found nothing, and its window before and
/// after.
/// A step's check: how its effect was seen (or why it could not be), on
/// what evidence, and how its element was re-checked before the press.
fn check_rows(record: &reprise_strategies::StepRecord) -> Markup {
    let verified = record.status == StepStatus::Verified;
    html! {
        @if let Some(check) = &record.check {
            tr {
                td { (if verified { "verified by" } else { "not checked" }) }
                td class="check" { (check) }
            }
        }
        @if let Some(kind) = record.evidence {
            tr { td { "evidence" } td class="evidence" { (kind.word()) } }
        }
        @if let Some(recheck) = &record.recheck {
            tr {
                td { "re-checked" }
                td class="recheck" {
                    (format!("by {}, {:.0} ms before the press", recheck.by.words(), recheck.seconds * 1000.0))
                }
            }
        }
    }
}

mod arguments;
mod crops;
mod summary;

use arguments::argument_rows;
use crops::*;

fn step_section(
    store: &Store,
    bundle: Option<&RecordingBundle>,
    stored: &crate::store::RunStep,
    after: Option<&(String, ScreenGeometry)>,
) -> Result<Markup> {
    let (record, screen) = (&stored.step.record, stored.step.screen);
    let status = record.status.as_str();
    let number = record.step_idx + 1;
    let label = record
        .step
        .as_ref()
        .map_or("(no step decided)".to_owned(), |step| step.label.clone());
    let target = record.step.as_ref().and_then(|step| step.target);
    let sought = record.sought.as_ref();
    let candidates = sought.map_or(&[][..], |sought| sought.candidates.as_slice());
    // Attempts that failed alike are one row, with their count.
    let mut errors: Vec<(&String, usize)> = Vec::new();
    for error in &record.errors {
        match errors.last_mut() {
            Some((last, count)) if *last == error => *count += 1,
            _ => errors.push((error, 1)),
        }
    }
    let recorded = sought
        .and_then(|sought| recorded_crop(store, bundle, sought).transpose())
        .transpose()?;
    let mut found = None;
    let mut before = None;
    let mut after_image = None;
    if let (Some(hash), Some(screen)) = (&stored.screenshot_hash, screen) {
        if let Some(point) = target {
            let recorded_rect = sought.and_then(|sought| sought.recorded_rect);
            found = Some(target_crop(
                store,
                hash,
                &screen,
                point,
                recorded_rect,
                "found",
            )?);
        }
        // The step's window, before it (with where the step aimed, or the
        // candidates it saw) and after it (the frame the next step saw); the
        // whole screen where the window is not known.
        let mut marks: Vec<Mark> = target
            .map(|point| Mark::point(point, format!("found {number}")))
            .into_iter()
            .collect();
        marks.extend(
            candidates
                .iter()
                .enumerate()
                .filter_map(|(idx, candidate)| {
                    candidate.rect.map(|rect| Mark::Box {
                        rect,
                        label: (idx + 1).to_string(),
                    })
                }),
        );
        let points: Vec<(f64, f64)> = marks.iter().flat_map(Mark::points).collect();
        before = Some(marked_crop(
            store,
            hash,
            &screen,
            record.window_rect,
            &points,
            &marks,
        )?);
        if let Some((next_hash, next_screen)) = after {
            after_image = Some(marked_crop(
                store,
                next_hash,
                next_screen,
                record.window_rect,
                &points,
                &[],
            )?);
        }
    }
    Ok(html! {
        div.step id={ "step-" (number) } {
            h2 { "Step " (number) ": " (label) " " span class={ "badge " (status) } { (status) } }
            table.meta {
                @if let Some(sought) = sought {
                    tr {
                        td { "looking for" }
                        td class="sought" { (sought.description.as_deref().unwrap_or("the recorded action")) }
                    }
                    @if let Some(point) = sought.recorded_point {
                        tr { td { "recorded at" } td class="recorded" { (at(point)) } }
                    }
                }
                @for prepared in &record.prepared {
                    tr { td { "first" } td class="prepared" { (prepared.label) ": " (prepared.reason) } }
                }
                @if let Some(step) = &record.step {
                    tr { td { "found at" } td class="target" { (step.target.map_or("none".to_owned(), at)) } }
                    tr { td { "reason" } td { (step.reason) } }
                    tr { td { "actions" } td { (step.actions.len()) } }
                }
                (check_rows(record))
                tr { td { "active window" } td { (record.window_title.as_deref().unwrap_or("none")) } }
                tr {
                    td { "timing" }
                    td {
                        (format!(
                            "at {:.2} s, decided in {:.1} ms, {:.2} s in all; attempts {}{}",
                            record.started_seconds,
                            record.decide_seconds * 1000.0,
                            record.duration_seconds,
                            record.attempts,
                            if record.settled { "" } else { "; the screen had not settled" }
                        ))
                    }
                }
                @for (error, count) in &errors {
                    tr {
                        td { "error" }
                        td class="error" {
                            (error)
                            @if *count > 1 { " (attempts: " (count) ")" }
                        }
                    }
                }
            }
            @if !candidates.is_empty() {
                table.candidates {
                    tr { th { "closest candidates, not taken" } th { "alike by" } th { "score" } }
                    @for (idx, candidate) in candidates.iter().enumerate() {
                        tr class="candidate" {
                            td { (idx + 1) ". " (candidate.description) }
                            td { (candidate.measure) }
                            td { (format!("{:.2}", candidate.score)) }
                        }
                    }
                }
            }
            @if recorded.is_some() || found.is_some() {
                div.frames.compare {
                    @if let Some(image) = &recorded {
                        figure.recorded {
                            figcaption {
                                "recorded"
                                @if let Some(point) = sought.and_then(|sought| sought.recorded_point) { " at " (at(point)) }
                            }
                            (image)
                        }
                    }
                    @if let (Some(image), Some(point)) = (&found, target) {
                        figure.found { figcaption { "found at " (at(point)) } (image) }
                    }
                }
            }
            @if let Some(before) = before {
                div.frames {
                    figure.before { figcaption { "before" } (before) }
                    @if let Some(after_image) = after_image {
                        figure.after { figcaption { "after" } (after_image) }
                    }
                }
            }
        }
    })
}

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
    let trees = reduce(
        bundle.events.clone(),
        &ReduceOptions {
            double_click: recording.double_click,
        },
    );
    let rows: Vec<(String, String)> = [
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
                "{} raw in {} trees, over {:.1} s",
                bundle.events.len(),
                trees.len(),
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
    .collect();
    // Group the top-level trees by the frame they link to, in order.
    let mut by_frame: BTreeMap<Option<u32>, Vec<(usize, &ActionEvent)>> = BTreeMap::new();
    for (idx, tree) in trees.iter().enumerate() {
        by_frame
            .entry(tree.screenshot_id)
            .or_default()
            .push((idx, tree));
    }
    let mut frames = Vec::with_capacity(by_frame.len());
    for (frame_id, events) in by_frame {
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
                            .map(|point| Mark::point(point, format!("#{idx}")))
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
        frames.push(html! {
            div.frame id=(frame_anchor(frame_id)) {
                h2 {
                    (frame_id.map_or("No screenshot".to_owned(), |id| format!("Screenshot {id}")))
                    " " small { "in " (window) }
                }
                ul.events {
                    @for (idx, tree) in &events {
                        li { (format!("#{idx} at {:.3} s: ", tree.timestamp)) (event_label(tree)) }
                    }
                }
                @if let Some(image) = image { (image) }
            }
        });
    }
    let body = html! {
        h1 { "Recording " (recording.name) }
        (meta_rows(&rows))
        // An index of the actions, each linking to the frame it is shown on.
        table.meta #index {
            tr { th { "#" } th { "at" } th { "action" } }
            @for (idx, tree) in trees.iter().enumerate() {
                tr {
                    td { a href={ "#" (frame_anchor(tree.screenshot_id)) } { (idx) } }
                    td { (format!("{:.2} s", tree.timestamp)) }
                    td { (event_label(tree)) }
                }
            }
        }
        @for frame in frames { (frame) }
    };
    Ok(page(&format!("Recording {}", recording.name), body))
}
