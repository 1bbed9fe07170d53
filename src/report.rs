//! Self-contained HTML pages (images inline) that a person can follow: the
//! report of a replay run, and a recording's events over its screenshots.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{Context as _, Result};
use base64::Engine as _;
use reprise_models::{ActionEvent, ReduceOptions, ScreenGeometry, reduce};
use reprise_strategies::StepStatus;

use crate::present::event_label;
use crate::store::Store;

const STYLE: &str = "
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 1100px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; }
table.meta td { padding: 2px 12px 2px 0; vertical-align: top; }
.badge { display: inline-block; padding: 2px 8px; border-radius: 4px; color: #fff; font-weight: bold; }
.verified, .completed, .dry_run { background: #2e7d32; } .failed, .step_limit { background: #c62828; }
.aborted, .skipped { background: #ef6c00; } .unverified { background: #6d4c41; }
.shot { position: relative; display: inline-block; max-width: 100%; border: 1px solid #999; }
.frames { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
.frames figure { margin: 0; max-width: 100%; } .frames figcaption { font-weight: bold; }
.shot img { display: block; max-width: 100%; height: auto; }
.shot svg { position: absolute; left: 0; top: 0; width: 100%; height: 100%; }
.step, .frame { border-top: 1px solid #ccc; padding-top: 1em; margin-top: 1em; }
.error { color: #c62828; } code { background: #f3f3f3; padding: 0 3px; }
ul.events { font-family: monospace; }
";

/// Escapes text for HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}</body></html>\n",
        escape(title)
    )
}

/// An image with markers (numbered circles) at logical screen points.
fn marked_image(
    png: &[u8],
    width: u32,
    height: u32,
    screen: &ScreenGeometry,
    marks: &[(f64, f64, String)],
) -> String {
    let data = base64::engine::general_purpose::STANDARD.encode(png);
    let mut svg = String::new();
    for (x, y, label) in marks {
        let px = (x - f64::from(screen.rect.left)) * screen.scale_factor;
        let py = (y - f64::from(screen.rect.top)) * screen.scale_factor;
        let _ = write!(
            svg,
            "<g class=\"mark\"><circle cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"14\" fill=\"none\" stroke=\"#e53935\" stroke-width=\"3\"/>\
             <line x1=\"{:.1}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" stroke=\"#e53935\" stroke-width=\"2\"/>\
             <line x1=\"{px:.1}\" y1=\"{:.1}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"#e53935\" stroke-width=\"2\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" fill=\"#e53935\" font-size=\"16\" font-weight=\"bold\">{}</text></g>",
            px - 22.0,
            px + 22.0,
            py - 22.0,
            py + 22.0,
            px + 16.0,
            py - 16.0,
            escape(label)
        );
    }
    format!(
        "<div class=\"shot\"><img alt=\"screenshot\" src=\"data:image/png;base64,{data}\">\
         <svg viewBox=\"0 0 {width} {height}\" preserveAspectRatio=\"none\">{svg}</svg></div>"
    )
}

/// A JSON value as a person reads it: a string without quotes, `none` for
/// null, a list or table as compact JSON.
fn plain_value(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Null => "none".into(),
        other => other.to_string(),
    }
}

/// The table at the top of a run's report: a row per step (its number
/// linking to it, the action, how its target was found, its outcome and
/// time).
fn summary_table(body: &mut String, steps: &[crate::store::RunStep]) {
    let _ = writeln!(
        body,
        "<table class=\"meta\" id=\"summary\"><tr><th>step</th><th>action</th><th>found by</th><th>outcome</th><th>time</th></tr>"
    );
    for stored in steps {
        let record = &stored.step.record;
        let status = record.status.as_str();
        let (label, found_by) =
            record
                .step
                .as_ref()
                .map_or(("(no step decided)".to_owned(), "-"), |step| {
                    (
                        step.label.clone(),
                        step.found_by
                            .map_or("-", reprise_strategies::FoundBy::words),
                    )
                });
        let _ = writeln!(
            body,
            "<tr><td><a href=\"#step-{number}\">{number}</a></td><td>{}</td><td class=\"found-by\">{}</td><td><span class=\"badge {status}\">{}</span></td><td>{:.0} ms</td></tr>",
            escape(&label),
            escape(found_by),
            status.replace('_', " "),
            record.duration_seconds * 1000.0,
            number = record.step_idx + 1,
        );
    }
    let _ = writeln!(body, "</table>");
}

/// An outcome's name, for a row whose outcome gives no reason.
fn outcome_name_or(outcome: &serde_json::Value) -> &str {
    outcome["outcome"].as_str().unwrap_or("unfinished")
}

/// The report of a batch (`replay --each`): a table of its rows (values,
/// outcome, steps, time, the failing step), each row linking to its own
/// report at `row_link(row)`.
pub fn batch_report(
    store: &Store,
    batch_id: &str,
    run_ids: &[String],
    row_link: &dyn Fn(u64) -> String,
) -> Result<String> {
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>Replay batch <code>{}</code></h1>",
        escape(batch_id)
    );
    let _ = writeln!(
        body,
        "<table class=\"meta\" id=\"rows\"><tr><th>row</th><th>values</th><th>outcome</th><th>steps</th><th>seconds</th><th>failing step</th></tr>"
    );
    for run_id in run_ids {
        let (run, steps) = store.load_run(run_id)?;
        let batch = &run.arguments["batch"];
        let row = batch["row"].as_u64().unwrap_or(0);
        let values: Vec<String> = batch["values"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|pair| {
                format!(
                    "{}={}",
                    pair[0].as_str().unwrap_or("?"),
                    pair[1].as_str().unwrap_or("?")
                )
            })
            .collect();
        let outcome = run
            .outcome
            .as_ref()
            .and_then(|outcome| outcome["outcome"].as_str())
            .unwrap_or("unfinished");
        let unverified = run
            .outcome
            .as_ref()
            .and_then(|outcome| outcome["unverified"].as_u64())
            .unwrap_or(0);
        let class = if outcome == "completed" && unverified > 0 {
            "unverified"
        } else {
            outcome
        };
        let failing = run
            .outcome
            .as_ref()
            .filter(|_| outcome != "completed")
            .map(|outcome| match outcome["step"].as_u64() {
                Some(step) => format!(
                    "step {}: {}",
                    step + 1,
                    outcome["reason"]
                        .as_str()
                        .unwrap_or(outcome_name_or(outcome))
                ),
                None => outcome_name_or(outcome).to_owned(),
            })
            .unwrap_or_default();
        let seconds = run
            .summary
            .as_ref()
            .and_then(|summary| summary["seconds"].as_f64())
            .map_or(String::new(), |seconds| format!("{seconds:.1}"));
        let _ = writeln!(
            body,
            "<tr class=\"row\"><td><a href=\"{}\">{row}</a></td><td>{}</td><td><span class=\"badge {class}\">{}</span></td><td>{}</td><td>{seconds}</td><td>{}</td></tr>",
            escape(&row_link(row)),
            escape(&values.join(", ")),
            escape(class),
            steps.len(),
            escape(failing.trim())
        );
    }
    let _ = writeln!(body, "</table>");
    Ok(page(&format!("Replay batch {batch_id}"), &body))
}

/// The report of one replay run.
pub fn run_report(store: &Store, run_id: &str) -> Result<String> {
    let (run, steps) = store.load_run(run_id)?;
    let recording = store
        .load(&run.recording_id)
        .map(|bundle| bundle.recording)
        .ok();
    let outcome_name = run
        .outcome
        .as_ref()
        .and_then(|outcome| outcome["outcome"].as_str())
        .unwrap_or("unfinished")
        .to_owned();
    // A completed run says how much of it was checked.
    let count = |key: &str| {
        run.outcome
            .as_ref()
            .and_then(|outcome| outcome[key].as_u64())
            .unwrap_or(0)
    };
    let (unverified, skipped) = (count("unverified"), count("skipped"));
    let dry_run = run.dry_run();
    let (outcome_class, outcome_text) = match outcome_name.as_str() {
        // Decided, never done: nothing was verified.
        "completed" if dry_run => (
            "dry_run",
            crate::present::outcome_words(run.outcome.as_ref(), true),
        ),
        "completed" if skipped > 0 => (
            "skipped",
            format!("completed, {skipped} failed and passed over, {unverified} unverified"),
        ),
        "completed" if unverified > 0 => {
            ("unverified", format!("completed, {unverified} unverified"))
        }
        "completed" => ("completed", "completed, every step verified".to_owned()),
        other => (other, other.to_owned()),
    };
    let mut body = String::new();
    let _ = writeln!(body, "<h1>Replay run <code>{}</code></h1>", escape(&run.id));
    let _ = writeln!(
        body,
        "<p>Outcome: <span class=\"badge {}\" id=\"outcome\">{}</span></p>",
        escape(outcome_class),
        escape(&outcome_text)
    );
    let _ = writeln!(body, "<table class=\"meta\">");
    let recording_label = recording.as_ref().map_or(run.recording_id.clone(), |r| {
        format!("{} ({})", r.name, r.id)
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
    if let Some(arguments) = run.arguments.as_object() {
        for (key, value) in arguments {
            rows.push((format!("argument {key}"), plain_value(value)));
        }
    }
    if let Some(summary) = &run.summary {
        let number = |key: &str| summary[key].as_f64().unwrap_or(0.0);
        rows.push(("seconds".into(), format!("{:.1}", number("seconds"))));
        rows.push((
            "model calls".into(),
            format!(
                "{} ({} answered from the cache), {} tokens",
                number("model_calls"),
                number("model_cache_hits"),
                number("tokens")
            ),
        ));
        // An estimate that rounds to nothing is nothing (never "-0.0").
        let cost = number("cost_usd");
        rows.push((
            "estimated cost".into(),
            if cost.abs() < 0.00005 {
                "$0".into()
            } else {
                format!("${cost:.4}")
            },
        ));
    }
    for (key, value) in rows {
        let _ = writeln!(
            body,
            "<tr><td>{}</td><td>{}</td></tr>",
            escape(&key),
            escape(&value)
        );
    }
    let _ = writeln!(body, "</table>");
    summary_table(&mut body, &steps);
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
    for stored in &steps {
        let (record, screen) = (&stored.step.record, stored.step.screen);
        let status = record.status.as_str();
        let label = record
            .step
            .as_ref()
            .map_or("(no step decided)".to_owned(), |step| step.label.clone());
        let _ = writeln!(
            body,
            "<div class=\"step\" id=\"step-{number}\"><h2>Step {number}: {} <span class=\"badge {status}\">{status}</span></h2>",
            escape(&label),
            number = record.step_idx + 1
        );
        let _ = writeln!(body, "<table class=\"meta\">");
        if let Some(step) = &record.step {
            let target = step
                .target
                .map_or("none".to_owned(), |(x, y)| format!("({x:.0}, {y:.0})"));
            let _ = writeln!(
                body,
                "<tr><td>target</td><td class=\"target\">{}</td></tr>",
                escape(&target)
            );
            let _ = writeln!(
                body,
                "<tr><td>reason</td><td>{}</td></tr>",
                escape(&step.reason)
            );
            let _ = writeln!(
                body,
                "<tr><td>actions</td><td>{}</td></tr>",
                step.actions.len()
            );
        }
        if let Some(check) = &record.check {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td class=\"check\">{}</td></tr>",
                if record.status == StepStatus::Verified {
                    "verified by"
                } else {
                    "not checked"
                },
                escape(check)
            );
        }
        let window = record.window_title.clone().unwrap_or_else(|| "none".into());
        let _ = writeln!(
            body,
            "<tr><td>active window</td><td>{}</td></tr>",
            escape(&window)
        );
        let _ = writeln!(
            body,
            "<tr><td>timing</td><td>at {:.2} s, decided in {:.1} ms, {:.2} s in all; attempts {}{}</td></tr>",
            record.started_seconds,
            record.decide_seconds * 1000.0,
            record.duration_seconds,
            record.attempts,
            if record.settled {
                ""
            } else {
                "; the screen had not settled"
            }
        );
        // Attempts that failed alike are one row, with their count.
        let mut errors: Vec<(&String, usize)> = Vec::new();
        for error in &record.errors {
            match errors.last_mut() {
                Some((last, count)) if *last == error => *count += 1,
                _ => errors.push((error, 1)),
            }
        }
        for (error, count) in errors {
            let times = if count > 1 {
                format!(" (attempts: {count})")
            } else {
                String::new()
            };
            let _ = writeln!(
                body,
                "<tr><td>error</td><td class=\"error\">{}{times}</td></tr>",
                escape(error)
            );
        }
        let _ = writeln!(body, "</table>");
        if let (Some(hash), Some(screen)) = (&stored.screenshot_hash, screen) {
            let marks: Vec<(f64, f64, String)> = record
                .step
                .as_ref()
                .and_then(|step| step.target)
                .map(|(x, y)| (x, y, format!("found {}", record.step_idx + 1)))
                .into_iter()
                .collect();
            // The step's window, before it (with where the step aimed) and
            // after it (the frame the next step saw); the whole screen
            // where the window is not known.
            let _ = writeln!(
                body,
                "<div class=\"frames\"><figure><figcaption>before</figcaption>"
            );
            let points: Vec<(f64, f64)> = marks.iter().map(|&(x, y, _)| (x, y)).collect();
            let (png, width, height, shown) =
                window_crop(store, hash, &screen, record.window_rect, &points)?;
            body.push_str(&marked_image(&png, width, height, &shown, &marks));
            let _ = writeln!(body, "</figure>");
            if let Some((next_hash, next_screen)) = after.get(&record.step_idx) {
                let _ = writeln!(body, "<figure><figcaption>after</figcaption>");
                let (png, width, height, shown) =
                    window_crop(store, next_hash, next_screen, record.window_rect, &points)?;
                body.push_str(&marked_image(&png, width, height, &shown, &[]));
                let _ = writeln!(body, "</figure>");
            }
            let _ = writeln!(body, "</div>");
        }
        body.push_str("</div>\n");
    }
    Ok(page(&format!("Replay run {}", run.id), &body))
}

/// Room around a window crop, in logical pixels.
const CROP_MARGIN: i32 = 24;

/// A frame cropped to `window` and `points` (with [`CROP_MARGIN`] around
/// them, inside the screen), as PNG with its size and the geometry the crop
/// shows (for the markers); the whole frame where no window is known or it
/// is off the frame.
fn window_crop(
    store: &Store,
    hash: &str,
    screen: &ScreenGeometry,
    window: Option<reprise_models::Rect>,
    points: &[(f64, f64)],
) -> Result<(Vec<u8>, u32, u32, ScreenGeometry)> {
    let whole = || -> Result<(Vec<u8>, u32, u32, ScreenGeometry)> {
        let png = store.image_png(hash)?;
        let (width, height) = image_size(&png)?;
        Ok((png, width, height, *screen))
    };
    let Some(window) = window else {
        return whole();
    };
    let frame = store.image(hash)?;
    let scale = screen.scale_factor;
    // The window and every marked point (a press that missed the window
    // must show where it went), with a margin.
    let (mut left, mut top) = (i64::from(window.left), i64::from(window.top));
    let (mut right, mut bottom) = (window.right(), window.bottom());
    for &(x, y) in points {
        left = left.min(x.floor() as i64);
        top = top.min(y.floor() as i64);
        right = right.max(x.ceil() as i64 + 1);
        bottom = bottom.max(y.ceil() as i64 + 1);
    }
    let margin = i64::from(CROP_MARGIN);
    let logical = reprise_models::Rect::new(
        (left - margin).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
        (top - margin).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
        (right - left + 2 * margin).clamp(1, i64::from(u32::MAX)) as u32,
        (bottom - top + 2 * margin).clamp(1, i64::from(u32::MAX)) as u32,
    );
    let Some(logical) = logical.intersection(&screen.rect) else {
        return whole();
    };
    let to_px =
        |value: i32, origin: i32| (f64::from(value - origin) * scale).round().max(0.0) as u32;
    let x = to_px(logical.left, screen.rect.left).min(frame.width());
    let y = to_px(logical.top, screen.rect.top).min(frame.height());
    let width = ((f64::from(logical.width) * scale).round() as u32).min(frame.width() - x);
    let height = ((f64::from(logical.height) * scale).round() as u32).min(frame.height() - y);
    if width == 0 || height == 0 {
        return whole();
    }
    let crop = image::imageops::crop_imm(&frame, x, y, width, height).to_image();
    let mut png = Vec::new();
    crop.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .context("encode a window's crop")?;
    Ok((
        png,
        width,
        height,
        ScreenGeometry {
            rect: logical,
            scale_factor: scale,
        },
    ))
}

fn image_size(png: &[u8]) -> Result<(u32, u32)> {
    let reader =
        image::ImageReader::with_format(std::io::Cursor::new(png), image::ImageFormat::Png);
    reader.into_dimensions().context("read a stored image")
}

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
    let mut body = String::new();
    let _ = writeln!(body, "<h1>Recording {}</h1>", escape(&recording.name));
    let _ = writeln!(body, "<table class=\"meta\">");
    for (key, value) in [
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
    ] {
        let _ = writeln!(body, "<tr><td>{key}</td><td>{}</td></tr>", escape(&value));
    }
    let _ = writeln!(body, "</table>");
    // An index of the actions, each linking to the frame it is shown on.
    let _ = writeln!(
        body,
        "<table class=\"meta\" id=\"index\"><tr><th>#</th><th>at</th><th>action</th></tr>"
    );
    for (idx, tree) in trees.iter().enumerate() {
        let anchor = frame_anchor(tree.screenshot_id);
        let _ = writeln!(
            body,
            "<tr><td><a href=\"#{anchor}\">{idx}</a></td><td>{:.2} s</td><td>{}</td></tr>",
            tree.timestamp,
            escape(&event_label(tree))
        );
    }
    let _ = writeln!(body, "</table>");
    // Group the top-level trees by the frame they link to, in order.
    let mut by_frame: BTreeMap<Option<u32>, Vec<(usize, &ActionEvent)>> = BTreeMap::new();
    for (idx, tree) in trees.iter().enumerate() {
        by_frame
            .entry(tree.screenshot_id)
            .or_default()
            .push((idx, tree));
    }
    for (frame_id, events) in by_frame {
        let state = events[0]
            .1
            .window_state_id
            .and_then(|id| bundle.window_states.get(id as usize));
        let window_rect = state.map(|state| state.rect);
        let window = state.map_or("no window".to_owned(), |state| {
            format!("{} ({})", state.title, state.app_class)
        });
        let _ = writeln!(
            body,
            "<div class=\"frame\" id=\"{}\"><h2>{} <small>in {}</small></h2><ul class=\"events\">",
            frame_anchor(frame_id),
            frame_id.map_or("No screenshot".to_owned(), |id| format!("Screenshot {id}")),
            escape(&window)
        );
        for (idx, tree) in &events {
            let _ = writeln!(
                body,
                "<li>#{idx} at {:.3} s: {}</li>",
                tree.timestamp,
                escape(&event_label(tree))
            );
        }
        let _ = writeln!(body, "</ul>");
        if let Some(shot) = frame_id.and_then(|id| bundle.screenshots.get(id as usize)) {
            let marks: Vec<(f64, f64, String)> = events
                .iter()
                .filter_map(|(idx, tree)| tree.position().map(|(x, y)| (x, y, format!("#{idx}"))))
                .collect();
            // The window the actions were in, and where the pointer was.
            let points: Vec<(f64, f64)> = marks.iter().map(|&(x, y, _)| (x, y)).collect();
            let (png, width, height, shown) = window_crop(
                store,
                &shot.content_hash,
                &shot.screen,
                window_rect,
                &points,
            )?;
            body.push_str(&marked_image(&png, width, height, &shown, &marks));
        }
        body.push_str("</div>\n");
    }
    Ok(page(&format!("Recording {}", recording.name), &body))
}
