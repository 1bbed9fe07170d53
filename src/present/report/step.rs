//! One step of a run's report, as one story: what it was meant to do, how
//! its target was found, what was checked after it (or why it failed), its
//! earlier attempts folded inside it; then the recorded target beside the
//! found one, the closest candidates when nothing was taken, and its window
//! before and after (or, with no window, the screen near where it aimed).

use super::*;
use crate::present::story::{Story, done, retries};

/// The region shown for a step that had no window: around where it aimed
/// (or was recorded), in logical pixels.
const NEAR_POINT: (u32, u32) = (480, 320);

/// The region of [`NEAR_POINT`]'s size centred on `(x, y)`.
fn near((x, y): (f64, f64)) -> Rect {
    Rect::new(
        (x - f64::from(NEAR_POINT.0) / 2.0).round() as i32,
        (y - f64::from(NEAR_POINT.1) / 2.0).round() as i32,
        NEAR_POINT.0,
        NEAR_POINT.1,
    )
}

/// Whether the candidates are twins a refusal could not tell apart.
fn twins(candidates: &[reprise_strategies::Candidate]) -> bool {
    candidates
        .iter()
        .all(|candidate| candidate.measure == reprise_strategies::visual::TWIN_MEASURE)
}

/// How a done step's effect was seen (or why it could not be), on what
/// evidence, and how its element was re-checked before the press.
fn check_rows(record: &reprise_strategies::StepRecord, story: &Story) -> Markup {
    let verified = record.status == StepStatus::Verified;
    html! {
        @if let Some(check) = &story.checked {
            tr {
                td { (if verified { "verified by" } else { "not checked" }) }
                td class="check" { (check) }
            }
        }
        @if let Some(kind) = record.evidence.filter(|_| verified) {
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

/// The attempts, folded: how many, and the error each earlier one ended
/// with (a retry is told as a retry, not as the step's error).
fn attempts_row(story: &Story) -> Markup {
    let retried = story.retried();
    html! {
        @if story.attempts > 1 || retried > 0 {
            tr {
                td { "attempts" }
                td {
                    details.attempts {
                        summary {
                            (story.attempts) " attempts: "
                            (retries(retried))
                            @if story.failure.is_some() { ", then the last failed" }
                            @else { ", then done" }
                        }
                        ol {
                            @for (error, count) in &story.retries {
                                li.retry {
                                    (error)
                                    @if *count > 1 { " (" (count) " attempts alike)" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The pictures of a step: the recorded target and the found one, and the
/// step's window before and after it (see the module).
struct Pictures {
    recorded: Option<Markup>,
    found: Option<Markup>,
    /// Each candidate as the frame showed it (its box, with room around).
    candidates: Vec<Option<Markup>>,
    before: Option<Markup>,
    after: Option<Markup>,
}

fn pictures(
    store: &Store,
    bundle: Option<&RecordingBundle>,
    stored: &crate::store::RunStep,
    after: Option<&(String, ScreenGeometry)>,
    number: usize,
) -> Result<Pictures> {
    let (record, screen) = (&stored.step.record, stored.step.screen);
    let target = record.step.as_ref().and_then(|step| step.target);
    let sought = record.sought.as_ref();
    let candidates = sought.map_or(&[][..], |sought| sought.candidates.as_slice());
    let mut shown = Pictures {
        recorded: sought
            .and_then(|sought| recorded_crop(store, bundle, sought).transpose())
            .transpose()?,
        found: None,
        candidates: Vec::new(),
        before: None,
        after: None,
    };
    let (Some(hash), Some(screen)) = (&stored.screenshot_hash, screen) else {
        return Ok(shown);
    };
    shown.candidates = candidate_crops(store, (hash, &screen), candidates)?;
    if let Some(point) = target {
        let recorded_rect = sought.and_then(|sought| sought.recorded_rect);
        shown.found = Some(target_crop(
            store,
            hash,
            &screen,
            point,
            recorded_rect,
            "found",
        )?);
    }
    // Where the step aimed, or the candidates it saw; with no target, where
    // the action was recorded.
    let recorded_point = sought.and_then(|sought| sought.recorded_point);
    let mut marks: Vec<Mark> = match (target, recorded_point) {
        (Some(point), _) => vec![Mark::point(point, format!("found {number}"))],
        (None, Some(point)) if candidates.is_empty() => {
            vec![Mark::point(point, "recorded here".to_owned())]
        }
        _ => Vec::new(),
    };
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
    // The step's window; with none, the screen near where it aimed (not a
    // whole, mostly empty desktop); the whole screen only where neither is
    // known.
    let region = record
        .window_rect
        .or_else(|| target.or(recorded_point).map(near));
    shown.before = Some(marked_crop(store, hash, &screen, region, &points, &marks)?);
    if let Some((next_hash, next_screen)) = after {
        shown.after = Some(marked_crop(
            store,
            next_hash,
            next_screen,
            region,
            &points,
            &[],
        )?);
    }
    Ok(shown)
}

/// Each candidate on the step's frame (`hash` of `screen`), its box with
/// room around it and its number.
fn candidate_crops(
    store: &Store,
    (hash, screen): (&str, &ScreenGeometry),
    candidates: &[reprise_strategies::Candidate],
) -> Result<Vec<Option<Markup>>> {
    candidates
        .iter()
        .enumerate()
        .map(|(idx, candidate)| {
            candidate
                .rect
                .map(|rect| {
                    let mark = Mark::Box {
                        rect,
                        label: (idx + 1).to_string(),
                    };
                    marked_crop(store, hash, screen, Some(rect), &[], &[mark])
                })
                .transpose()
        })
        .collect()
}

/// The step's story as rows: what it looked for, how it was found, what
/// was checked after (or why it stopped), its attempts, window and timing.
fn story_table(record: &reprise_strategies::StepRecord, story: &Story) -> Markup {
    let sought = record.sought.as_ref();
    html! {
        table.meta.story {
            @if let Some(description) = sought.and_then(|sought| sought.description.as_deref()) {
                tr { td { "looking for" } td class="sought" { (description) } }
            }
            @if let Some(point) = sought.and_then(|sought| sought.recorded_point) {
                tr { td { "recorded at" } td class="recorded" { (at(point)) } }
            }
            @for prepared in &record.prepared {
                tr { td { "first" } td class="prepared" { (prepared.label) ": " (prepared.reason) } }
            }
            @if let Some(found) = &story.found {
                tr { td { "found" } td class="found" { (found) } }
            }
            @if let Some(step) = &record.step {
                tr { td { "found at" } td class="target" { (step.target.map_or("none".to_owned(), at)) } }
            }
            (check_rows(record, story))
            @if let Some(failure) = &story.failure {
                tr { td { "why it stopped" } td class="error failure" { (failure) } }
            }
            (attempts_row(story))
            tr { td { "active window" } td { (record.window_title.as_deref().unwrap_or("none")) } }
            tr {
                td { "timing" }
                td {
                    (format!(
                        "at {:.2} s, decided in {:.1} ms, {:.2} s in all{}",
                        record.started_seconds,
                        record.decide_seconds * 1000.0,
                        record.duration_seconds,
                        if record.settled { "" } else { "; the screen had not settled" }
                    ))
                }
            }
        }
    }
}

pub(super) fn step_section(
    store: &Store,
    bundle: Option<&RecordingBundle>,
    stored: &crate::store::RunStep,
    after: Option<&(String, ScreenGeometry)>,
) -> Result<Markup> {
    let record = &stored.step.record;
    let story = Story::of(record);
    let status = record.status.as_str();
    let number = record.step_idx + 1;
    let target = record.step.as_ref().and_then(|step| step.target);
    let sought = record.sought.as_ref();
    let candidates = sought.map_or(&[][..], |sought| sought.candidates.as_slice());
    let shown = pictures(store, bundle, stored, after, number)?;
    let retried = story.retried();
    Ok(html! {
        div.step id={ "step-" (number) } {
            h2 {
                "Step " (number) ": " (story.meant) " "
                span class={ "badge " (status) } { (status.replace('_', " ")) }
                @if retried > 0 && done(record.status) {
                    " " small.retried { "after " (retries(retried)) }
                }
            }
            (story_table(record, &story))
            @if !candidates.is_empty() {
                table.candidates {
                    tr {
                        th {
                            @if twins(candidates) { "twins nothing tells apart, in reading order (`reprise teach --pick N` says which)" }
                            @else { "closest candidates, not taken" }
                        }
                        th { "alike by" } th { "score" } th { "as seen" }
                    }
                    @for (idx, candidate) in candidates.iter().enumerate() {
                        tr class="candidate" {
                            td { (idx + 1) ". " (candidate.description) }
                            td { (candidate.measure) }
                            td { (format!("{:.2}", candidate.score)) }
                            td.seen { @if let Some(Some(crop)) = shown.candidates.get(idx) { (crop) } }
                        }
                    }
                }
            }
            @if shown.recorded.is_some() || shown.found.is_some() {
                div.frames.compare {
                    @if let Some(image) = &shown.recorded {
                        figure.recorded {
                            figcaption {
                                "recorded"
                                @if let Some(point) = sought.and_then(|sought| sought.recorded_point) { " at " (at(point)) }
                            }
                            (image)
                        }
                    }
                    @if let (Some(image), Some(point)) = (&shown.found, target) {
                        figure.found { figcaption { "found at " (at(point)) } (image) }
                    }
                }
            }
            @if let Some(before) = shown.before {
                div.frames {
                    figure.before {
                        figcaption {
                            "before"
                            @if record.window_rect.is_none() { " (no window: the screen near where it aimed)" }
                        }
                        (before)
                    }
                    @if let Some(after_image) = shown.after {
                        figure.after { figcaption { "after" } (after_image) }
                    }
                }
            }
        }
    })
}
