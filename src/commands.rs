//! What each command does: the glue between the command line, the store and
//! the presentation.

use std::io::{Read as _, Write as _};

use anyhow::{Context as _, Result, bail};
use reprise_models::{ActionEvent, DoubleClickSettings, ReduceOptions, reduce};

use crate::cli::{
    Cli, Command, EventsCommand, ExportArgs, ImportArgs, RecordArgs, ReduceArgs, ReplayArgs,
    RunsCommand, ShowArgs,
};
use crate::exit::{StopKind, UsageError};
use crate::present::plural;
use crate::store::Store;
use crate::{archive, present};

/// Runs one command.
pub fn run(cli: Cli) -> Result<()> {
    let store_path = cli.global.store.clone().unwrap_or_else(Store::default_path);
    let open_store = || Store::open(&store_path).context("open the store");
    let quiet = cli.global.quiet;
    // Commands that only read the store work on one they cannot write.
    let open_to_read = || Store::open_to_read(&store_path).context("open the store");
    match cli.command {
        Command::Events(EventsCommand::Reduce(args)) => events_reduce(&args),
        Command::Segment(args) => segment(&store_path, &args),
        Command::Screenshot(args) => screenshot(&args),
        Command::Llm(command) => llm(&store_path, cli.global.config.as_deref(), command),
        Command::Bench(crate::cli::BenchCommand::Segment { screen, window }) => {
            print_text(&crate::bench::segment(&screen, &window)?)
        }
        Command::Bench(crate::cli::BenchCommand::Capture { frames }) => {
            print_text(&crate::bench::capture(frames)?)
        }
        #[cfg(feature = "test-support")]
        Command::Bench(crate::cli::BenchCommand::ModelServer) => crate::bench::model_server(),
        Command::Bench(crate::cli::BenchCommand::Answers {
            app,
            samples,
            interval_ms,
        }) => print_text(&crate::bench::answers(&app, samples, interval_ms)?),
        Command::Serve(args) => serve(&store_path, &args),
        Command::Worker(args) => worker(&store_path, cli.global.config.as_deref(), &args),
        Command::Jobs(command) => jobs(command),
        Command::Record(args) => record(&mut open_store()?, &args, quiet),
        Command::Replay(args) => replay(
            &mut open_store()?,
            cli.global.config.as_deref(),
            &args,
            quiet,
        ),
        Command::Report(args) => {
            let store = open_to_read()?;
            let run_id = match store.resolve_run(&args.run) {
                Err(crate::store::StoreError::RunNotFound(query)) => {
                    match store.resolve_batch(&query)? {
                        Some((batch_id, run_ids)) => {
                            return batch_report(&store, &batch_id, &run_ids, &args.output);
                        }
                        None => return Err(crate::store::StoreError::RunNotFound(query).into()),
                    }
                }
                other => other?,
            };
            let html = crate::report::run_report(&store, &run_id)?;
            write_atomically(&args.output, html.as_bytes())?;
            println!(
                "wrote the report of run {run_id} to {}",
                args.output.display()
            );
            Ok(())
        }
        Command::Visualize(args) => {
            let store = open_to_read()?;
            let id = store.resolve(&args.recording)?;
            let html = crate::report::recording_page(&store, &id)?;
            write_atomically(&args.output, html.as_bytes())?;
            println!("wrote recording {id} to {}", args.output.display());
            Ok(())
        }
        Command::List(args) => {
            let summaries = open_to_read()?.list_recordings()?;
            if args.json {
                print_json(&summaries)
            } else {
                print_text(&present::summaries_table(&summaries))
            }
        }
        Command::Show(args) => show(&open_to_read()?, &args),
        Command::Params(args) if args.rename.is_empty() => params(&open_to_read()?, &args),
        Command::Params(args) => {
            let mut store = open_store()?;
            rename_params(&mut store, &args)?;
            params(&store, &args)
        }
        Command::Delete(args) => {
            let (id, freed) = delete_with_room(&store_path, |store| {
                let id = store.resolve(&args.recording)?;
                store.delete_recording(&id)?;
                Ok(Some(id))
            })?;
            let id = id.expect("a delete names the recording it deleted");
            if freed.given_back {
                println!(
                    "deleted recording {id} ({} given back to the disk)",
                    present::bytes(freed.bytes)
                );
            } else {
                println!(
                    "deleted recording {id} (its space stays in the store for new recordings; \
                     the next deletion tries again to give it back)"
                );
            }
            Ok(())
        }
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut command, "reprise", &mut out);
            print_text(&String::from_utf8_lossy(&out))
        }
        Command::Man { dir } => man_pages(dir.as_deref()),
        Command::Config(crate::cli::ConfigCommand::Show { json }) => {
            config_show(&store_path, cli.global.config.as_deref(), json)
        }
        Command::Runs(args) => match args.command {
            None => {
                let store = open_to_read()?;
                let recording = args
                    .recording
                    .as_deref()
                    .map(|query| store.resolve(query))
                    .transpose()?;
                let runs = store.list_runs(recording.as_deref())?;
                if args.json {
                    print_json(&runs)
                } else {
                    print_text(&present::runs_table(&runs))
                }
            }
            Some(RunsCommand::Show { run, json }) => run_show(&open_to_read()?, &run, json),
            Some(RunsCommand::Prune {
                older_than,
                keep,
                dry_run,
            }) => runs_prune(&store_path, older_than, keep, dry_run),
        },
        Command::Export(args) => export(&open_to_read()?, &args),
        Command::Import(args) => import(&mut open_store()?, &args),
    }
}

fn record(store: &mut Store, args: &RecordArgs, quiet: bool) -> Result<()> {
    let duration = args
        .duration
        .map(|seconds| crate::durations::seconds_setting("--duration", seconds, false))
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
    let toggle = match args.secret_key.trim() {
        "none" => None,
        key if crate::platform::keys::is_key_name(key) => Some(key.to_owned()),
        key => bail!(UsageError(format!(
            "--secret-key takes a named key (pause, scroll_lock, f12, …) or none, not {key:?}"
        ))),
    };
    if toggle.is_some() && stop_sequence.iter().any(|key| Some(key) == toggle.as_ref()) {
        bail!(UsageError(
            "--secret-key cannot be a key of the stop sequence".into()
        ));
    }
    let secrets = crate::record::secrets::SecretRules {
        windows: patterns("--secret-window", &args.secret_window)?,
        toggle,
    };
    let excluded_windows = patterns("--exclude-window", &args.exclude_window)?;
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
    };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // SIGHUP (the terminal closed) finishes the recording like Ctrl-C.
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, std::sync::Arc::clone(&stop))
            .context("install the signal handler")?;
    }
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
    eprintln!("recording {:?}: {how_to_stop}{secret_key}", args.name);
    let summary = crate::record::record(store, &options, &stop)?;
    println!(
        "recorded {} ({}, {}, {}; stopped by {})",
        summary.id,
        plural(summary.n_events as usize, "event"),
        plural(summary.n_screenshots as usize, "screenshot"),
        plural(summary.n_window_states as usize, "window state"),
        summary.stop_reason.words()
    );
    if summary.secret_keys > 0 {
        eprintln!(
            "{} typed as secrets: stored as their parameters, never as keys",
            plural(summary.secret_keys as usize, "key event")
        );
    }
    if summary.frames_dropped + summary.capture_failures + summary.window_failures > 0 {
        eprintln!(
            "note: {} frames dropped under load, {} failed screenshots, {} failed window queries",
            summary.frames_dropped, summary.capture_failures, summary.window_failures
        );
    }
    if summary.stop_reason == crate::record::StopReason::DisplayLost {
        bail!(
            "the display's connection was lost; the recording {} keeps everything captured up to then",
            summary.id
        );
    }
    Ok(())
}

fn events_reduce(args: &ReduceArgs) -> Result<()> {
    let usable = |value: f64| value.is_finite() && value >= 0.0;
    if !usable(args.double_click_interval) || !usable(args.double_click_distance) {
        bail!(UsageError(
            "double-click interval and distance must be finite and not negative".into()
        ));
    }
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("read events from stdin")?;
    let raw_events: Vec<ActionEvent> =
        serde_json::from_str(&input).context("parse the raw events (a JSON array of events)")?;
    let options = ReduceOptions {
        double_click: DoubleClickSettings {
            interval_seconds: args.double_click_interval,
            distance_pixels: args.double_click_distance,
        },
    };
    print_json(&reduce(raw_events, &options))
}

fn show(store: &Store, args: &ShowArgs) -> Result<()> {
    let id = store.resolve(&args.recording)?;
    let bundle = store
        .load(&id)
        .with_context(|| format!("read recording {id}"))?;
    let options = ReduceOptions {
        double_click: bundle.recording.double_click,
    };
    let trees = reduce(bundle.events.clone(), &options);
    if args.json {
        print_json(&present::ShowJson {
            recording: &bundle.recording,
            events: &trees,
            screenshots: &bundle.screenshots,
            window_states: &bundle.window_states,
        })
    } else {
        print_text(&present::recording_text(&bundle, &trees))
    }
}

/// `params ID --rename OLD=NEW`: every rename checked, then all stored.
fn rename_params(store: &mut Store, args: &crate::cli::ParamsArgs) -> Result<()> {
    let id = store.resolve(&args.recording)?;
    let bundle = store
        .load(&id)
        .with_context(|| format!("read recording {id}"))?;
    let mut names = bundle.recording.parameter_names.clone();
    for pair in &args.rename {
        let Some((old, new)) = pair.split_once('=') else {
            bail!(UsageError(format!("--rename takes OLD=NEW, not {pair:?}")));
        };
        // Each rename sees the ones before it.
        let params = crate::replay::parameters_in(&bundle, &names);
        reprise_strategies::params::rename(&params, &mut names, old, new)
            .map_err(|err| UsageError(err.to_string()))?;
    }
    store.set_parameter_names(&id, &names)?;
    Ok(())
}

fn params(store: &Store, args: &crate::cli::ParamsArgs) -> Result<()> {
    let params = crate::replay::parameters_of(store, &args.recording)?;
    if args.json {
        return print_json(&params);
    }
    if params.is_empty() {
        return print_text("the recording types no text and no secret\n");
    }
    let mut text = String::new();
    for param in &params {
        let what = match &param.kind {
            reprise_strategies::params::ParameterKind::Text { recorded } => {
                format!("= {}", present::terminal_safe(&format!("{recorded:?}")))
            }
            reprise_strategies::params::ParameterKind::Secret => format!(
                "secret, from {}",
                crate::replay::secrets::env_name(&param.name)
            ),
        };
        let field = param
            .field
            .as_deref()
            .map(|field| format!(", typed into {}", present::terminal_safe(field)))
            .unwrap_or_default();
        text.push_str(&format!(
            "{{{}}} {what} (step {}{field})\n",
            present::terminal_safe(&param.name),
            param.step + 1
        ));
    }
    print_text(&text)
}

fn export(store: &Store, args: &ExportArgs) -> Result<()> {
    let id = store.resolve(&args.recording)?;
    let bundle = store
        .load(&id)
        .with_context(|| format!("read recording {id}"))?;
    let bytes = archive::export(store, &bundle)?;
    write_atomically(&args.output, &bytes)?;
    println!(
        "exported recording {id} ({}, {}, {}) to {}",
        plural(bundle.events.len(), "event"),
        plural(bundle.screenshots.len(), "screenshot"),
        plural(bytes.len(), "byte"),
        args.output.display()
    );
    Ok(())
}

fn import(store: &mut Store, args: &ImportArgs) -> Result<()> {
    let file =
        std::fs::File::open(&args.file).with_context(|| format!("read {}", args.file.display()))?;
    let mut archive = archive::read(std::io::BufReader::new(file))
        .with_context(|| format!("import {}: the store was not changed", args.file.display()))?;
    if let Some(name) = &args.as_name {
        reprise_models::recording::check_name(name).map_err(|err| UsageError(err.to_string()))?;
        archive.bundle.recording.id = uuid::Uuid::new_v4().to_string();
        archive.bundle.recording.name = name.clone();
    }
    store
        .import(&archive.bundle, &archive.images)
        .with_context(|| format!("import {}: the store was not changed", args.file.display()))?;
    let recording = &archive.bundle.recording;
    println!(
        "imported recording {} (\"{}\", {}, {})",
        recording.id,
        present::terminal_safe(&recording.name),
        plural(archive.bundle.events.len(), "event"),
        plural(archive.bundle.screenshots.len(), "screenshot")
    );
    Ok(())
}

/// Writes `bytes` to `path` whole or not at all: through a temporary file
/// of its own (a unique name beside the target, removed on any failure)
/// renamed over the target, so a failed write never leaves a half-written
/// file under the requested name, and two writers never share a temporary
/// file. A symbolic link is followed (the file it names is replaced, not
/// the link); a target that is not a regular file (a device such as
/// `/dev/stdout`, a pipe) is written to directly, never replaced.
fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    // The file a chain of links names, which need not exist yet (at most
    // 40 links, as the kernel allows).
    let mut target = path.to_owned();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&target) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let next = std::fs::read_link(&target)
                    .with_context(|| format!("follow the link {}", target.display()))?;
                target = match target.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
            }
            _ => break,
        }
    }
    if let Ok(meta) = std::fs::metadata(&target)
        && !meta.is_file()
    {
        if meta.is_dir() {
            bail!(UsageError(format!(
                "{} is a folder, not a file",
                path.display()
            )));
        }
        return std::fs::write(&target, bytes).with_context(|| format!("write {}", path.display()));
    }
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => std::path::PathBuf::from("."),
    };
    let name = target.file_name().map_or_else(
        || "output".into(),
        |name| name.to_string_lossy().into_owned(),
    );
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .tempfile_in(&dir)
        .with_context(|| format!("make a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("write {}", path.display()))?;
    // The temporary file is removed if the rename fails.
    tmp.persist(&target)
        .map_err(|err| err.error)
        .with_context(|| format!("move the file to {}", path.display()))?;
    Ok(())
}

fn replay(
    store: &mut Store,
    config: Option<&std::path::Path>,
    args: &ReplayArgs,
    quiet: bool,
) -> Result<()> {
    if !(args.speed.is_finite() && args.speed > 0.0) {
        bail!(UsageError("--speed must be a positive number".into()));
    }
    let settle = reprise_strategies::settle::SettleOptions {
        timeout: crate::durations::seconds_setting("--settle-timeout", args.settle_timeout, false)?,
        ..Default::default()
    };
    if args.rungs.is_empty() {
        bail!(UsageError(
            "--rungs needs structural, visual or both".into()
        ));
    }
    let replacements = args
        .replace
        .iter()
        .map(|pair| match pair.split_once('=') {
            Some((old, new)) if !old.is_empty() => Ok((old.to_owned(), new.to_owned())),
            _ => Err(UsageError(format!("--replace takes OLD=NEW, not {pair:?}"))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let parameters = args
        .set
        .iter()
        .map(|pair| parse_set(pair))
        .collect::<Result<Vec<_>, _>>()?;
    let request = crate::replay::ReplayRequest {
        recording: args.recording.clone(),
        parameters,
        secret_overrides: Default::default(),
        batch: None,
        hooks: Default::default(),
        strategy: args.strategy,
        rungs: reprise_strategies::visual::Rungs {
            structural: args.rungs.contains(&crate::replay::RungChoice::Structural),
            visual: args.rungs.contains(&crate::replay::RungChoice::Visual),
        },
        speed: args.speed,
        replacements,
        instructions: args.instructions.clone(),
        describer: args.describer,
        release_held: args.release_held_keys,
        launch: args.launch,
        secrets_file: args.secrets_file.clone(),
        // Once every argument, the recording and its secrets are checked.
        progress: crate::replay::Progress {
            banner: Some(format!(
                "replaying {:?} with {:?}{}: move the pointer into a screen corner or press {} to abort",
                args.recording,
                args.strategy,
                if args.dry_run { " (dry run)" } else { "" },
                crate::replay::ABORT_KEYS
            )),
            lines: std::io::IsTerminal::is_terminal(&std::io::stderr()) && !quiet,
            json: args.json,
        },
        config: config.map(std::path::Path::to_path_buf),
        options: reprise_strategies::ReplayOptions {
            max_steps: args.max_steps,
            max_retries: args.max_retries,
            skip_failures: args.skip_failures,
            dry_run: args.dry_run,
            require_verified: args.require_verified,
            settle,
        },
    };
    apply_retention(store, config)?;
    if let Some(path) = &args.each {
        return replay_each(store, args, request, path);
    }
    let result = crate::replay::replay(store, &request)?;
    let run_id = result.run_id.clone();
    if args.json {
        let mut outcome = serde_json::to_value(&result.outcome).expect("outcomes serialize");
        outcome["type"] = "outcome".into();
        outcome["run_id"] = run_id.clone().into();
        outcome["recording_id"] = result.recording_id.clone().into();
        outcome["seconds"] = result.seconds.into();
        println!("{outcome}");
    }
    match crate::replay::stop_of(&result) {
        None => {
            let steps = match &result.outcome {
                reprise_strategies::ReplayOutcome::Completed { steps, .. } => *steps,
                _ => result.n_steps,
            };
            if args.json {
            } else if args.dry_run {
                // Decided, never injected: nothing was done to verify.
                println!(
                    "replay run {run_id}: dry run of recording {}: decided all {} in {:.1} s and injected nothing",
                    result.recording_id,
                    plural(steps, "step"),
                    result.seconds
                );
            } else {
                println!(
                    "replay run {run_id}: completed {} of recording {} in {:.1} s, every one verified",
                    plural(steps, "step"),
                    result.recording_id,
                    result.seconds
                );
            }
            Ok(())
        }
        Some((what, kind)) => Err(crate::exit::ReplayStopped { run_id, what, kind }.into()),
    }
}

/// `report BATCH -o FILE`: the batch's page in FILE, and each row's report
/// beside it (`FILE-row-N.html`, linked from the page).
fn batch_report(
    store: &Store,
    batch_id: &str,
    run_ids: &[String],
    output: &std::path::Path,
) -> Result<()> {
    let stem = output.file_stem().map_or_else(
        || "batch".to_owned(),
        |stem| stem.to_string_lossy().into_owned(),
    );
    let row_name = |row: u64| format!("{stem}-row-{row}.html");
    let html = crate::report::batch_report(store, batch_id, run_ids, &row_name)?;
    for run_id in run_ids {
        let (run, _) = store.load_run(run_id)?;
        let row = run.arguments["batch"]["row"].as_u64().unwrap_or(0);
        let path = output.with_file_name(row_name(row));
        write_atomically(&path, crate::report::run_report(store, run_id)?.as_bytes())?;
    }
    write_atomically(output, html.as_bytes())?;
    println!(
        "wrote the report of batch {batch_id} ({}) to {}",
        plural(run_ids.len(), "row"),
        output.display()
    );
    Ok(())
}

/// `replay --each FILE`: one replay run per row, each row's columns naming
/// parameters (texts, or secrets). Everything a row needs is checked before
/// the first row runs.
fn replay_each(
    store: &mut Store,
    args: &ReplayArgs,
    template: crate::replay::ReplayRequest,
    path: &std::path::Path,
) -> Result<()> {
    use reprise_strategies::params::ParameterKind;
    let rows = crate::rows::read_rows(path)?;
    let params = crate::replay::parameters_of(store, &args.recording)?;
    let kind_of = |name: &str| {
        params
            .iter()
            .find(|param| param.name == name)
            .map(|param| param.kind.clone())
    };
    let unknown: Vec<&String> = rows
        .columns
        .iter()
        .filter(|column| kind_of(column).is_none())
        .collect();
    if !unknown.is_empty() {
        let known: Vec<String> = params.iter().map(|param| param.name.clone()).collect();
        bail!(UsageError(format!(
            "the rows in {} name {} the recording does not have: {} (it has: {})",
            path.display(),
            if unknown.len() == 1 {
                "a parameter"
            } else {
                "parameters"
            },
            unknown
                .iter()
                .map(|name| format!("{name:?}"))
                .collect::<Vec<_>>()
                .join(", "),
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        )));
    }
    if let Some((name, _)) = template
        .parameters
        .iter()
        .find(|(name, _)| rows.columns.contains(name))
    {
        bail!(UsageError(format!(
            "{name} is both set with --set and a column of {}: give it in one place",
            path.display()
        )));
    }
    // The secrets no column gives: from the environment, the file or the
    // person, once, before the first row.
    let other_secrets: Vec<String> = params
        .iter()
        .filter(|param| param.kind == ParameterKind::Secret && !rows.columns.contains(&param.name))
        .map(|param| param.name.clone())
        .collect();
    let shared_secrets = if template.options.dry_run {
        Default::default()
    } else {
        crate::replay::secrets::SecretValues::resolve(
            &other_secrets,
            template.secrets_file.as_deref(),
            &|name| std::env::var(name).ok(),
            true,
        )?
    };
    let n_rows = rows
        .rows
        .len()
        .min(args.max_iterations.unwrap_or(usize::MAX));
    if n_rows == 0 {
        bail!(UsageError("--max-iterations must be at least 1".into()));
    }
    if let Some(banner) = &template.progress.banner {
        eprintln!("{banner}, once per row of {n_rows}");
    }
    let batch_id = uuid::Uuid::new_v4().to_string();
    let mut outcomes: Vec<(usize, Option<(String, StopKind)>)> = Vec::new();
    for (idx, values) in rows.rows.iter().take(n_rows).enumerate() {
        let row = idx + 1;
        eprintln!("row {row} of {n_rows}");
        let mut request = template.clone();
        request.progress.banner = None;
        let mut shown = Vec::new();
        request.secret_overrides = shared_secrets.clone();
        for (column, value) in rows.columns.iter().zip(values) {
            if kind_of(column) == Some(ParameterKind::Secret) {
                request
                    .secret_overrides
                    .insert(column.clone(), value.clone());
                shown.push((column.clone(), "(secret)".to_owned()));
            } else {
                request.parameters.push((column.clone(), value.clone()));
                shown.push((column.clone(), value.clone()));
            }
        }
        request.batch = Some(crate::replay::BatchRow {
            id: batch_id.clone(),
            row,
            values: shown,
        });
        let stop = match crate::replay::reset::reset(args.reset_with.as_deref()) {
            Err(reason) => Some((format!("was not run: {reason}"), StopKind::Failed)),
            Ok(()) => match crate::replay::replay(store, &request) {
                Ok(result) => crate::replay::stop_of(&result)
                    .map(|(what, kind)| (format!("(run {}) {what}", result.run_id), kind)),
                Err(err) if err.downcast_ref::<UsageError>().is_some() => return Err(err),
                Err(err) => Some((crate::exit::one_line(&err), StopKind::Failed)),
            },
        };
        match &stop {
            None => eprintln!("row {row} of {n_rows}: completed, every step verified"),
            Some((what, _)) => eprintln!("row {row} of {n_rows}: {}", present::terminal_safe(what)),
        }
        let failed = stop
            .as_ref()
            .is_some_and(|(_, kind)| *kind != StopKind::Unverified);
        // An abort (the abort keys, a corner, a signal) ends the batch.
        let aborted = stop
            .as_ref()
            .is_some_and(|(_, kind)| *kind == StopKind::Aborted);
        outcomes.push((row, stop));
        if aborted || (failed && !args.keep_going) {
            break;
        }
    }
    let failed: Vec<usize> = outcomes
        .iter()
        .filter(|(_, stop)| {
            stop.as_ref()
                .is_some_and(|(_, kind)| *kind != StopKind::Unverified)
        })
        .map(|(row, _)| *row)
        .collect();
    let unverified = outcomes
        .iter()
        .filter(|(_, stop)| {
            stop.as_ref()
                .is_some_and(|(_, kind)| *kind == StopKind::Unverified)
        })
        .count();
    let not_run = n_rows - outcomes.len();
    if failed.is_empty() && unverified == 0 {
        println!(
            "replay batch {batch_id}: all {} of recording {:?} completed, every step verified",
            plural(n_rows, "row"),
            args.recording
        );
        return Ok(());
    }
    let rows_list = |rows: &[usize]| {
        rows.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (what, kind) = if failed.is_empty() {
        (
            format!(
                "(a batch of {}) completed every row, {unverified} with steps that could not be checked",
                plural(n_rows, "row")
            ),
            StopKind::Unverified,
        )
    } else {
        (
            format!(
                "(a batch of {}) failed at row {}{}",
                plural(n_rows, "row"),
                rows_list(&failed),
                if not_run > 0 {
                    format!(
                        "; {} not run (--keep-going runs them)",
                        plural(not_run, "row")
                    )
                } else {
                    String::new()
                }
            ),
            StopKind::Failed,
        )
    };
    Err(crate::exit::ReplayStopped {
        run_id: batch_id,
        what,
        kind,
    }
    .into())
}

fn segment(store_path: &std::path::Path, args: &crate::cli::SegmentArgs) -> Result<()> {
    let image = image::open(&args.image)
        .with_context(|| format!("read the image {}", args.image.display()))
        .map_err(|err| err.context(UsageError("the image must be a readable PNG".into())))?
        .into_rgba8();
    let target = match &args.target {
        None => None,
        Some(text) => {
            let numbers: Vec<u32> = text
                .split(',')
                .map(|part| part.trim().parse())
                .collect::<Result<_, _>>()
                .map_err(|_| {
                    UsageError(format!(
                        "--target takes x,y,width,height in whole pixels, not {text:?}"
                    ))
                })?;
            let [x, y, width, height] = numbers[..] else {
                bail!(UsageError(format!(
                    "--target takes four numbers, not {text:?}"
                )));
            };
            Some(reprise_strategies::vision::PixelRect {
                x,
                y,
                width,
                height,
            })
        }
    };
    let started = std::time::Instant::now();
    let segmenter: Box<dyn reprise_strategies::vision::Segmenter> = match &args.server {
        Some(url) => Box::new(crate::segment_server::HttpSegmenter::new(
            url,
            std::time::Duration::from_secs(60),
        )?),
        None => Box::new(reprise_strategies::vision::classical::ClassicalSegmenter::default()),
    };
    // The cache name is the segmenter's own: masks from a server are kept
    // apart from the built-in ones.
    let name = segmenter.cache_name();
    let mut cache = if args.cache {
        let store = Store::open(store_path).context("open the store")?;
        Some(reprise_strategies::vision::cache::SegmentationCache::new(
            Box::new(crate::vision_cache::StoreRows::new(store)),
        ))
    } else {
        None
    };
    let probe = reprise_strategies::vision::cache::Probe::of(&image);
    let cached = cache
        .as_mut()
        .and_then(|cache| cache.lookup(&name, &probe, target));
    let segments = match &cached {
        Some(cached) => {
            eprintln!("cache hit: reusing segmentation {}", cached.id);
            cached.segments.clone()
        }
        None => {
            let segments = segmenter.segment(&image)?;
            if let Some(cache) = cache.as_mut() {
                let id = cache.insert(&name, &probe, &segments);
                eprintln!(
                    "cache miss: segmented and stored as segmentation {}",
                    id.map_or("(not stored)".into(), |id| id.to_string())
                );
            }
            segments
        }
    };
    let elapsed = started.elapsed();
    let descriptions = if args.describe {
        use reprise_strategies::describe::Describer as _;
        let reader = crate::describe::TesseractReader::new()?;
        let mut describer = reprise_strategies::describe::OfflineDescriber::new(reader);
        Some(describer.describe(&image, &segments)?)
    } else {
        None
    };
    if let Some(path) = &args.overlay {
        crate::overlay::draw(&image, &segments)
            .save_with_format(path, image::ImageFormat::Png)
            .with_context(|| format!("write {}", path.display()))?;
    }
    if args.json {
        let listed: Vec<serde_json::Value> = segments
            .iter()
            .map(|segment| {
                serde_json::json!({
                    "id": segment.id,
                    "kind": segment.kind,
                    "rect": segment.rect,
                    "centroid": segment.centroid,
                    "click_point": segment.click_point,
                    "parent": segment.parent,
                    "pixels": segment.mask.count(),
                    "description": descriptions.as_ref().map(|all| all[segment.id].text.clone()),
                })
            })
            .collect();
        return print_json(&listed);
    }
    let mut text = format!(
        "{} segments in {:.1} ms\n",
        segments.len(),
        elapsed.as_secs_f64() * 1000.0
    );
    for segment in &segments {
        let rect = segment.rect;
        text.push_str(&format!(
            "{:>4}  {:<17} {:>5},{:<5} {:>4}x{:<4} click {},{}{}\n",
            segment.id,
            format!("{:?}", segment.kind),
            rect.x,
            rect.y,
            rect.width,
            rect.height,
            segment.click_point.0,
            segment.click_point.1,
            segment
                .parent
                .map_or(String::new(), |parent| format!("  in {parent}"))
        ));
        if let Some(all) = &descriptions {
            text.push_str(&format!("      {}\n", all[segment.id].text));
        }
    }
    print_text(&text)
}

fn screenshot(args: &crate::cli::ScreenshotArgs) -> Result<()> {
    let capture = crate::platform::capture::ScreenCapture::desktop()
        .context("find the screen (is DISPLAY set?)")?;
    let mut image = capture.capture()?;
    if args.active_window {
        let mut probe = crate::platform::WindowProbe::connect()?;
        let window = probe.active_window()?.context("no window is active")?;
        let (crop, _) = reprise_strategies::vision::scale::window_crop(
            &capture.geometry(),
            image.dimensions(),
            &window.rect,
        )
        .context("the active window is off the screen")?;
        image =
            image::imageops::crop_imm(&image, crop.x, crop.y, crop.width, crop.height).to_image();
    }
    image
        .save_with_format(&args.output, image::ImageFormat::Png)
        .with_context(|| format!("write {}", args.output.display()))?;
    println!(
        "wrote {}x{} pixels to {}",
        image.width(),
        image.height(),
        args.output.display()
    );
    Ok(())
}

fn llm(
    store_path: &std::path::Path,
    config: Option<&std::path::Path>,
    command: crate::cli::LlmCommand,
) -> Result<()> {
    use crate::cli::LlmCommand;
    use reprise_strategies::llm::{Llm as _, LlmRequest, Message};
    let file = crate::config::config_file(config)?;
    match command {
        LlmCommand::Ping { provider, no_cache } => {
            let flags = crate::llm::LlmFlags { provider, no_cache };
            let settings =
                crate::llm::settings::resolve(&flags, &|var| std::env::var(var).ok(), &file)?;
            let store = Store::open(store_path).context("open the store")?;
            let mut chain = crate::llm::ChainLlm::new(settings, store)?;
            let prompt = crate::llm::prompt::render("ping", &Default::default())?;
            let request = LlmRequest {
                purpose: "ping".into(),
                system: "You are a health check.".into(),
                messages: vec![Message::user_text(prompt)],
                max_output_tokens: 20,
            };
            let reply = chain.complete(&request)?;
            let answer = reprise_strategies::llm::extract_json(&reply.text);
            println!(
                "{} {}: answered in {} ms{} ({} tokens in, {} out): {}",
                reply.provider,
                reply.model,
                reply.latency_ms,
                if reply.cached { " from the cache" } else { "" },
                reply.usage.input_tokens,
                reply.usage.output_tokens,
                reply.text.trim()
            );
            match answer {
                Ok(value) if value["ok"] == true => Ok(()),
                _ => bail!(crate::exit::LlmFailure(
                    "the provider answered, but not with the JSON it was asked for".into()
                )),
            }
        }
        LlmCommand::Usage { run, json } => {
            let store = Store::open(store_path).context("open the store")?;
            let run_id = run.map(|run| store.resolve_run(&run)).transpose()?;
            let totals = store.llm_usage(run_id.as_deref())?;
            if json {
                return print_json(&totals);
            }
            if totals.is_empty() {
                return print_text("no model calls yet\n");
            }
            let mut text = format!(
                "{:<10} {:<28} {:>6} {:>6} {:>8} {:>10} {:>10} {:>10}\n",
                "PROVIDER",
                "MODEL",
                "CALLS",
                "CACHED",
                "FAILED",
                "TOKENS IN",
                "TOKENS OUT",
                "COST USD"
            );
            for total in &totals {
                text.push_str(&format!(
                    "{:<10} {:<28} {:>6} {:>6} {:>8} {:>10} {:>10} {:>10.4}\n",
                    total.provider,
                    total.model,
                    total.calls,
                    total.cache_hits,
                    total.failures,
                    total.input_tokens,
                    total.output_tokens,
                    total.cost_usd
                ));
            }
            print_text(&text)
        }
        LlmCommand::Prune { older_than_days } => {
            // At most a century: past that, converting to a duration panics.
            if !(older_than_days.is_finite() && (0.0..=36_500.0).contains(&older_than_days)) {
                bail!(UsageError(
                    "--older-than-days must be a number of days, from 0 to 36500".into()
                ));
            }
            let age = std::time::Duration::from_secs_f64(older_than_days * 86_400.0);
            let mut store = Store::open(store_path).context("open the store")?;
            let n = store.prune_llm_cache(age)?;
            println!("deleted {n} cached answers");
            Ok(())
        }
    }
}

/// `reprise man`: the top page on stdout, or every command's page in `dir`.
fn man_pages(dir: Option<&std::path::Path>) -> Result<()> {
    let command = <Cli as clap::CommandFactory>::command();
    let Some(dir) = dir else {
        let mut out = Vec::new();
        clap_mangen::Man::new(command)
            .render(&mut out)
            .context("render the manual page")?;
        return print_text(&String::from_utf8_lossy(&out));
    };
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    let mut written = 0;
    let mut pages = vec![(String::from("reprise"), command.clone())];
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        pages.push((format!("reprise-{}", sub.get_name()), sub.clone()));
    }
    for (name, page) in pages {
        let mut out = Vec::new();
        clap_mangen::Man::new(page)
            .title(name.clone())
            .render(&mut out)
            .context("render a manual page")?;
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, out).with_context(|| format!("write {}", path.display()))?;
        written += 1;
    }
    println!(
        "wrote {} in {}",
        present::plural(written, "manual page"),
        dir.display()
    );
    Ok(())
}

/// `reprise config show`: every setting in effect and where it came from;
/// then the settings are checked as a command using them would, and a
/// refusal is the command's error (exit 2).
fn config_show(
    store: &std::path::Path,
    config: Option<&std::path::Path>,
    json: bool,
) -> Result<()> {
    use crate::llm::settings::Explained;
    let env = |var: &str| std::env::var(var).ok();
    let row = |setting: &str, value: String, from: &str| Explained {
        setting: setting.to_owned(),
        value,
        from: from.to_owned(),
    };
    let given = |var: &str, value: &std::path::Path| {
        if env(var).is_some_and(|set| std::path::Path::new(&set) == value) {
            var.to_owned()
        } else {
            format!("--{}", var.trim_start_matches("REPRISE_").to_lowercase())
        }
    };
    let mut rows = vec![row(
        "store",
        store.display().to_string(),
        &if store == Store::default_path() && env("REPRISE_STORE").is_none() {
            "default".to_owned()
        } else {
            given("REPRISE_STORE", store)
        },
    )];
    let default_config = crate::config::default_path();
    rows.push(match (config, &default_config) {
        (Some(path), _) => row(
            "config file",
            path.display().to_string(),
            &given("REPRISE_CONFIG", path),
        ),
        (None, Some(path)) if path.exists() => {
            row("config file", path.display().to_string(), "default")
        }
        (None, Some(path)) => row(
            "config file",
            format!("none ({} does not exist)", path.display()),
            "default",
        ),
        (None, None) => row("config file", "none".to_owned(), "default"),
    });
    let file = crate::config::read(config);
    let checked = file
        .as_ref()
        .map_err(crate::exit::one_line)
        .and_then(|file| {
            rows.extend(crate::llm::settings::explain(&env, &file.llm));
            let (value, from) = match (env("REPRISE_RUNS_KEEP_DAYS"), file.runs.keep_days) {
                (Some(days), _) => (days, "REPRISE_RUNS_KEEP_DAYS"),
                (None, Some(days)) => (days.to_string(), "config file"),
                (None, None) => (crate::config::DEFAULT_RUNS_KEEP_DAYS.to_string(), "default"),
            };
            rows.push(row("runs.keep_days", value, from));
            crate::llm::settings::resolve(&Default::default(), &env, &file.llm)
                .map(drop)
                .and_then(|()| crate::config::runs_keep_days(config, &env).map(drop))
                .map_err(|err| crate::exit::one_line(&err))
        });
    if json {
        print_json(&rows)?;
    } else {
        let width = |pick: fn(&Explained) -> &str| {
            rows.iter()
                .map(|row| pick(row).chars().count())
                .max()
                .unwrap_or(0)
        };
        let (setting_width, value_width) = (width(|row| &row.setting), width(|row| &row.value));
        let mut text = String::new();
        for row in &rows {
            text.push_str(&present::terminal_safe(
                format!(
                    "{:<setting_width$}  {:<value_width$}  {}",
                    row.setting, row.value, row.from
                )
                .trim_end(),
            ));
            text.push('\n');
        }
        print_text(&text)?;
    }
    checked.map_err(|reason| crate::exit::ConfigError(reason).into())
}

/// Prunes the runs older than the retention (see
/// [`crate::config::runs_keep_days`]) before a replay. A setting that is
/// wrong is refused; a prune that fails is only a warning.
fn apply_retention(store: &Store, config: Option<&std::path::Path>) -> Result<()> {
    let days = crate::config::runs_keep_days(config, &|var| std::env::var(var).ok())?;
    if days == 0.0 {
        return Ok(());
    }
    let before = crate::durations::days_ago("the runs' retention", days)?;
    let due = store.runs_to_prune(Some(&before), None)?;
    if due.is_empty() {
        return Ok(());
    }
    match prune_runs(store.path(), Some(&before), None) {
        Ok((count, freed)) => eprintln!(
            "pruned {} older than {days} days ({} given back; REPRISE_RUNS_KEEP_DAYS or [runs] keep_days sets how long runs are kept, 0 for ever)",
            present::plural(count, "replay run"),
            present::bytes(freed)
        ),
        Err(err) => tracing::warn!(
            "old replay runs could not be pruned: {}",
            crate::exit::one_line(&err)
        ),
    }
    Ok(())
}

/// `reprise runs show RUN`: the run, then a line per step.
fn run_show(store: &Store, query: &str, json: bool) -> Result<()> {
    let run_id = store.resolve_run(query)?;
    let (run, steps) = store.load_run(&run_id)?;
    if json {
        #[derive(serde::Serialize)]
        struct RunJson<'a> {
            run: &'a crate::store::RunRecord,
            steps: Vec<&'a crate::store::StoredStep>,
        }
        return print_json(&RunJson {
            run: &run,
            steps: steps.iter().map(|step| &step.step).collect(),
        });
    }
    let recording = store
        .list_recordings()?
        .into_iter()
        .find(|recording| recording.id == run.recording_id)
        .map_or_else(
            || run.recording_id.clone(),
            |recording| format!("\"{}\" ({})", recording.name, recording.id),
        );
    let mut text = present::terminal_safe(&format!(
        "run {} of recording {recording}, strategy {}, started {}{}",
        run.id,
        run.strategy,
        run.started,
        run.summary
            .as_ref()
            .and_then(|summary| summary["seconds"].as_f64())
            .map(|seconds| format!(", {seconds:.1} s"))
            .unwrap_or_default(),
    ));
    text.push_str("\noutcome: ");
    let dry_run = run.dry_run();
    text.push_str(&present::terminal_safe(&present::outcome_words(
        run.outcome.as_ref(),
        dry_run,
    )));
    text.push('\n');
    let total = run
        .outcome
        .as_ref()
        .and_then(|outcome| outcome["steps"].as_u64())
        .map(|steps| steps as usize);
    for step in &steps {
        text.push_str(&crate::replay::step_line(&step.step.record, total));
        text.push('\n');
    }
    print_text(&text)
}

/// `reprise runs prune`: deletes the runs started before the cutoff or past
/// the newest `keep`, then gives the space back.
fn runs_prune(
    store_path: &std::path::Path,
    older_than: Option<f64>,
    keep: Option<usize>,
    dry_run: bool,
) -> Result<()> {
    if older_than.is_none() && keep.is_none() {
        bail!(UsageError(
            "say which runs to prune: --older-than DAYS, --keep N, or both".into()
        ));
    }
    let before = older_than
        .map(|days| crate::durations::days_ago("--older-than", days))
        .transpose()?;
    if dry_run {
        let store = Store::open_to_read(store_path).context("open the store")?;
        let ids = store.runs_to_prune(before.as_deref(), keep)?;
        let mut text = format!("would delete {}\n", present::plural(ids.len(), "run"));
        for id in &ids {
            text.push_str(id);
            text.push('\n');
        }
        return print_text(&text);
    }
    let pruned = prune_runs(store_path, before.as_deref(), keep);
    let (count, freed) = pruned?;
    println!(
        "deleted {} ({} given back to the disk)",
        present::plural(count, "run"),
        present::bytes(freed)
    );
    Ok(())
}

/// What a deletion gave back to the disk.
#[derive(Debug, Clone, Copy, Default)]
struct Freed {
    bytes: u64,
    /// False where the space stays in the store for now (see
    /// [`delete_with_room`]).
    given_back: bool,
}

/// Runs a deletion on the store at `store_path` so that it works on a full
/// disk: the store's reserve is released first and written again after,
/// whatever happened. `delete` returns `None` when it found nothing to
/// delete; else the freed space is given back to the disk. Where that
/// cannot be done now (no room to rewrite an old store, another process
/// busy with it), the log says why and the space stays in the store for
/// new recordings: the deletion stands, and is not reported as failed.
fn delete_with_room<T>(
    store_path: &std::path::Path,
    delete: impl FnOnce(&mut Store) -> Result<Option<T>, crate::store::StoreError>,
) -> Result<(Option<T>, Freed)> {
    let done = (|| -> Result<(Option<T>, Freed)> {
        let mut store = Store::open_to_delete(store_path).context("open the store")?;
        let before = crate::store::space::store_bytes(store_path);
        let Some(deleted) = delete(&mut store)? else {
            return Ok((None, Freed::default()));
        };
        let given_back = store.give_back_space().unwrap_or_else(|err| {
            tracing::warn!("the freed space stays in the store for now: {err}");
            false
        });
        let bytes = before.saturating_sub(crate::store::space::store_bytes(store_path));
        Ok((Some(deleted), Freed { bytes, given_back }))
    })();
    crate::store::space::keep_reserve(store_path);
    done
}

/// Deletes runs as a prune does (working on a full disk, like `delete`):
/// how many, and the bytes given back.
pub fn prune_runs(
    store_path: &std::path::Path,
    before: Option<&str>,
    keep: Option<usize>,
) -> Result<(usize, u64)> {
    let (count, freed) = delete_with_room(store_path, |store| {
        let ids = store.runs_to_prune(before, keep)?;
        if ids.is_empty() {
            return Ok(None);
        }
        store.delete_runs(&ids).map(Some)
    })?;
    Ok((count.unwrap_or(0), freed.bytes))
}

fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).context("write JSON")?;
    text.push('\n');
    print_text(&text)
}

/// Writes to stdout. A reader that stopped reading (`reprise list --json |
/// head -1`) is not an error.
fn print_text(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        result => result.context("write output"),
    }
}

/// `--set NAME=VALUE` (of `replay` and `jobs submit`).
fn parse_set(pair: &str) -> Result<(String, String), UsageError> {
    match pair.split_once('=') {
        Some((name, value)) if reprise_models::parameter::is_valid_name(name) => {
            Ok((name.to_owned(), value.to_owned()))
        }
        _ => Err(UsageError(format!(
            "--set takes NAME=VALUE with a parameter's name (see reprise params), not {:?}",
            pair.split_once('=').map_or(pair, |(name, _)| name)
        ))),
    }
}

/// `reprise serve`.
fn serve(store: &std::path::Path, args: &crate::cli::ServeArgs) -> Result<()> {
    let lease = crate::durations::seconds_setting("--lease", args.lease, false)?;
    if lease < std::time::Duration::from_secs(1) {
        bail!(UsageError("--lease must be at least 1 second".into()));
    }
    if args.max_upload == 0 || args.max_upload > 4096 {
        bail!(UsageError("--max-upload must be from 1 to 4096 MiB".into()));
    }
    crate::fleet::server::serve(crate::fleet::server::ServeOptions {
        listen: args.listen,
        redis: args.redis.clone(),
        store: store.to_owned(),
        lease,
        max_upload: args.max_upload * 1024 * 1024,
    })
}

/// `reprise worker`.
fn worker(
    store: &std::path::Path,
    config: Option<&std::path::Path>,
    args: &crate::cli::WorkerArgs,
) -> Result<()> {
    let labels = crate::fleet::client::pairs(&args.label, crate::fleet::parse_label)?;
    let give_up = crate::durations::seconds_setting("--give-up", args.give_up, false)?;
    crate::fleet::worker::run(crate::fleet::worker::WorkerOptions {
        server: args.server.clone(),
        pool: args.pool.clone(),
        labels,
        store: store.to_owned(),
        config: config.map(std::path::Path::to_path_buf),
        max_jobs: args.max_jobs,
        give_up,
        reset_with: args.reset_with.clone(),
    })
}

/// `reprise jobs …`.
fn jobs(command: crate::cli::JobsCommand) -> Result<()> {
    use crate::cli::JobsCommand;
    use crate::fleet::client::{self, Api};
    match command {
        JobsCommand::Submit(args) => {
            let api = Api::new(&args.server.server)?;
            let labels = client::pairs(&args.label, crate::fleet::parse_label)?;
            let set = client::pairs(&args.set, parse_set)?;
            let rows = match &args.each {
                None => None,
                Some(path) => {
                    let table = crate::rows::read_rows(path)?;
                    Some(
                        table
                            .rows
                            .iter()
                            .map(|row| {
                                table
                                    .columns
                                    .iter()
                                    .cloned()
                                    .zip(row.iter().cloned())
                                    .collect()
                            })
                            .collect(),
                    )
                }
            };
            let request = crate::fleet::SubmitRequest {
                recording: args.recording.clone(),
                options: crate::fleet::JobOptions {
                    strategy: args.strategy,
                    speed: args.speed,
                    max_retries: args.max_retries,
                    dry_run: args.dry_run,
                    require_verified: args.require_verified,
                },
                pool: args.pool.clone(),
                labels,
                set,
                rows,
                attempts: args.attempts,
                retry: args.retry,
                deadline_seconds: args.deadline,
            };
            client::submit(
                &api,
                client::Submit {
                    request,
                    upload: args.upload.then(|| args.recording.clone().into()),
                    json: args.json,
                },
            )
        }
        JobsCommand::List {
            state,
            json,
            server,
        } => client::list(&Api::new(&server.server)?, state, json),
        JobsCommand::Show { id, json, server } => {
            client::show(&Api::new(&server.server)?, &id, json)
        }
        JobsCommand::Cancel { id, server } => client::cancel(&Api::new(&server.server)?, &id),
        JobsCommand::Watch { id, json, server } => {
            let (state, reason) = client::watch(&Api::new(&server.server)?, &id, json)?;
            use crate::fleet::JobState;
            let kind = match state {
                JobState::Completed => return Ok(()),
                JobState::Unverified => StopKind::Unverified,
                JobState::Aborted | JobState::Cancelled => StopKind::Aborted,
                _ => StopKind::Failed,
            };
            Err(crate::exit::JobEnded {
                id,
                state: state.as_str(),
                reason,
                kind,
            }
            .into())
        }
    }
}
