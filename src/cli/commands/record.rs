//! `reprise record` and `reprise events reduce`.

use anyhow::{Context as _, Result, bail};
use reprise_models::{ActionEvent, DoubleClickSettings, ReduceOptions, reduce};

use crate::cli::{RecordArgs, ReduceArgs};
use crate::present::plural;
use crate::settings::errors::UsageError;
use crate::store::Store;

pub fn record(store: &mut Store, args: &RecordArgs, quiet: bool) -> Result<()> {
    let duration = args
        .duration
        .map(|seconds| crate::settings::durations::seconds_setting("--duration", seconds, false))
        .transpose()?;
    let stop_sequence: Vec<String> = if args.stop_sequence == "none" {
        Vec::new()
    } else {
        args.stop_sequence
            .split(',')
            .map(|key| key.trim().to_owned())
            .filter(|key| !key.is_empty())
            .collect()
    };
    reprise_models::recording::check_name(&args.name).map_err(|err| UsageError(err.to_string()))?;
    let (secrets, excluded_windows) = secret_rules(args, &stop_sequence)?;
    let mark_key = mark_key(args, &stop_sequence, secrets.toggle.as_deref())?;
    // Every argument is checked before the banner.
    crate::record::check_frame_rate(args.frame_rate)?;
    let options = crate::record::RecordOptions {
        name: args.name.clone(),
        task_description: args.task.clone(),
        duration,
        frame_rate: args.frame_rate,
        stop_sequence: stop_sequence.clone(),
        queue_frames: args.queue_frames,
        secrets,
        excluded_windows,
        show_status: std::io::IsTerminal::is_terminal(&std::io::stderr()) && !quiet,
        mark_key,
    };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // SIGHUP (the terminal closed) finishes the recording like Ctrl-C.
    let _signals =
        crate::platform::signals::StopSignals::set(&stop).context("install the signal handlers")?;
    let how_to_stop = if stop_sequence.is_empty() {
        "press Ctrl-C to stop".to_owned()
    } else {
        format!("type {} or press Ctrl-C to stop", stop_sequence.join(" "))
    };
    let secret_key = options
        .secrets
        .toggle
        .as_ref()
        .map(|key| format!("; {key} turns secret typing on and off"))
        .unwrap_or_default();
    let mark_key = options
        .mark_key
        .as_ref()
        .map(|key| format!("; {key} marks the outcome under the pointer"))
        .unwrap_or_default();
    eprintln!(
        "recording {:?}: {how_to_stop}{secret_key}{mark_key}",
        args.name
    );
    let mut summary = crate::record::record(store, &options, &stop)?;
    // Before the outcomes' version is made of the recording's steps.
    match crate::record::labels::check(store, &summary.id) {
        Ok(labels) => summary.labels = labels,
        Err(err) => summary.labels.not_read = Some(format!("{err:#}")),
    }
    summary.outcomes =
        crate::record::outcome::keep(store, &summary.id, &summary.marks, summary.secret_keys)
            .context("keep the outcomes marked (the recording itself is saved)")?;
    say_recorded(&summary, args.json)?;
    if summary.stop_reason == crate::record::StopReason::DisplayLost {
        bail!(
            "the display's connection was lost; the recording {} keeps everything captured up to then",
            summary.id
        );
    }
    Ok(())
}

/// The named key given to `flag` (`examples` name some), or `None` for
/// `none`.
fn named_key(flag: &str, value: &str, examples: &str) -> Result<Option<String>> {
    match value.trim() {
        "none" => Ok(None),
        key if crate::platform::keys::is_key_name(key) => Ok(Some(key.to_owned())),
        key => bail!(UsageError(format!(
            "{flag} takes a named key ({examples}, …) or none, not {key:?}"
        ))),
    }
}

/// The key that marks an outcome (`--mark-key`), checked: a named key,
/// neither in the stop sequence nor the secret toggle; `None` for `none`.
fn mark_key(
    args: &RecordArgs,
    stop_sequence: &[String],
    toggle: Option<&str>,
) -> Result<Option<String>> {
    let Some(key) = named_key("--mark-key", &args.mark_key, "scroll_lock, f12")? else {
        return Ok(None);
    };
    if stop_sequence.contains(&key) || toggle == Some(key.as_str()) {
        bail!(UsageError(format!(
            "--mark-key {key} is already the stop sequence's or the secret toggle's"
        )));
    }
    Ok(Some(key))
}

/// What `record` keeps secret (`--secret-window`, `--secret-key`) and the
/// windows it leaves out (`--exclude-window`), each checked.
fn secret_rules(
    args: &RecordArgs,
    stop_sequence: &[String],
) -> Result<(
    crate::record::secrets::SecretRules,
    Vec<crate::record::secrets::WindowPattern>,
)> {
    let patterns = |flag: &str, values: &[String]| {
        values
            .iter()
            .map(|value| {
                crate::record::secrets::WindowPattern::new(value).ok_or_else(|| {
                    UsageError(format!("{flag} needs a class or a title, not {value:?}"))
                })
            })
            .collect::<Result<Vec<_>, UsageError>>()
    };
    let toggle = named_key("--secret-key", &args.secret_key, "pause, scroll_lock, f12")?;
    if toggle.is_some() && stop_sequence.iter().any(|key| Some(key) == toggle.as_ref()) {
        bail!(UsageError(
            "--secret-key cannot be a key of the stop sequence".into()
        ));
    }
    let secrets = crate::record::secrets::SecretRules {
        windows: patterns("--secret-window", &args.secret_window)?,
        toggle,
    };
    Ok((secrets, patterns("--exclude-window", &args.exclude_window)?))
}

pub fn events_reduce(args: &ReduceArgs) -> Result<()> {
    let usable = |value: f64| value.is_finite() && value >= 0.0;
    if !usable(args.double_click_interval) || !usable(args.double_click_distance) {
        bail!(UsageError(
            "double-click interval and distance must be finite and not negative".into()
        ));
    }
    // Read as it arrives: the text is never held whole beside the events.
    let raw_events: Vec<ActionEvent> = serde_json::from_reader(std::io::BufReader::with_capacity(
        1 << 16,
        std::io::stdin().lock(),
    ))
    .context("parse the raw events (a JSON array of events)")?;
    let options = ReduceOptions {
        double_click: DoubleClickSettings {
            interval_seconds: args.double_click_interval,
            distance_pixels: args.double_click_distance,
        },
    };
    super::output::stream_json(&reduce(raw_events, &options))
}

/// What a finished recording says: its summary (a line, or JSON), the keys
/// typed as secrets, and what was lost under load.
fn say_recorded(summary: &crate::record::RecordSummary, json: bool) -> Result<()> {
    if json {
        super::output::print_json(summary)?;
    } else {
        println!(
            "recorded {} ({}, {}, {}; stopped by {})",
            summary.id,
            plural(summary.n_events as usize, "event"),
            plural(summary.n_screenshots as usize, "screenshot"),
            plural(summary.n_window_states as usize, "window state"),
            summary.stop_reason.words()
        );
    }
    if summary.secret_keys > 0 {
        eprintln!(
            "{} typed as secrets: stored as their parameters, never as keys",
            plural(summary.secret_keys as usize, "key event")
        );
    }
    for refitted in &summary.labels.refitted {
        eprintln!("press kept once its tree's boxes were moved onto its pixels: {refitted}");
    }
    for dropped in &summary.labels.dropped {
        eprintln!("press kept by its pixels alone: {dropped}");
    }
    if let Some(why) = &summary.labels.not_read {
        eprintln!("the presses' labels were not checked against their pixels: {why}");
    }
    let outcomes = &summary.outcomes;
    if let Some(version) = outcomes.version {
        for check in &outcomes.kept {
            eprintln!("outcome check kept in version {version}: {check}");
        }
    }
    for why in &outcomes.not_kept {
        eprintln!("outcome not kept: {why}");
    }
    if summary.frames_dropped + summary.capture_failures + summary.window_failures > 0 {
        eprintln!(
            "note: {} frames dropped under load, {} failed screenshots, {} failed window queries",
            summary.frames_dropped, summary.capture_failures, summary.window_failures
        );
    }
    Ok(())
}
