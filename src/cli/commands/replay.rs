//! `reprise replay`, of one run or of a batch (`--each`).

use anyhow::{Result, bail};
use reprise_strategies::params::{Parameter, ParameterKind};

use super::runs::prune_runs;
use crate::cli::ReplayArgs;
use crate::present::{self, plural};
use crate::replay::ReplayRequest;
use crate::replay::secrets::SecretValues;
use crate::replay::stopped::StopKind;
use crate::settings::errors::UsageError;
use crate::store::Store;

pub fn replay(
    store: &mut Store,
    config: Option<&std::path::Path>,
    args: &ReplayArgs,
    quiet: bool,
) -> Result<()> {
    let request = request_of(config, args, quiet)?;
    apply_retention(store, config)?;
    if let Some(path) = &args.each {
        if args.save_healed {
            bail!(UsageError(
                "--save-healed saves one run's heals as a version: replay one row (--set) to heal, not --each".into()
            ));
        }
        return replay_each(store, args, request, path);
    }
    let result = crate::replay::replay(store, &request)?;
    super::versions::heals_said(store, &result, args.save_healed)?;
    if args.teach {
        let resume = super::teach::resume_args(&result.run_id, args);
        return super::teach::taught_and_gone_on(store, config, result, &resume, quiet);
    }
    said(&result, args.json, args.dry_run)
}

/// The replay `args` ask for, each argument checked.
fn request_of(
    config: Option<&std::path::Path>,
    args: &ReplayArgs,
    quiet: bool,
) -> Result<ReplayRequest> {
    if !(args.speed.is_finite() && args.speed > 0.0) {
        bail!(UsageError("--speed must be a positive number".into()));
    }
    let settle = reprise_strategies::settle::SettleOptions {
        timeout: crate::settings::durations::seconds_setting(
            "--settle-timeout",
            args.settle_timeout,
            false,
        )?,
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
    Ok(ReplayRequest {
        recording: args.recording.clone(),
        parameters,
        secret_overrides: Default::default(),
        batch: None,
        hooks: Default::default(),
        resume: None,
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
        progress: progress_of(args, quiet),
        config: config.map(std::path::Path::to_path_buf),
        options: reprise_strategies::ReplayOptions {
            max_steps: args.max_steps,
            max_retries: args.max_retries,
            skip_failures: args.skip_failures,
            dry_run: args.dry_run,
            require_verified: args.require_verified,
            settle,
        },
    })
}

/// What a replay tells as it goes: its banner (once every argument, the
/// recording and its secrets are checked), its step lines on a terminal,
/// and JSON lines where asked.
fn progress_of(args: &ReplayArgs, quiet: bool) -> crate::replay::Progress {
    crate::replay::Progress {
        banner: Some(format!(
            "replaying {:?} with {}{}: move the pointer into a screen corner or press {} to abort",
            args.recording,
            clap::ValueEnum::to_possible_value(&args.strategy)
                .map(|value| value.get_name().to_owned())
                .unwrap_or_default(),
            if args.dry_run { " (dry run)" } else { "" },
            crate::replay::ABORT_KEYS
        )),
        lines: std::io::IsTerminal::is_terminal(&std::io::stderr()) && !quiet,
        json: args.json,
    }
}

/// The last line of `replay --json`: the outcome, with the run it was.
#[derive(serde::Serialize)]
struct OutcomeLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    outcome: &'a reprise_strategies::ReplayOutcome,
    run_id: &'a str,
    recording_id: &'a str,
    seconds: f64,
    version: u32,
    heals: &'a [reprise_models::version::TargetChange],
    coverage: &'a reprise_strategies::replay::Coverage,
}

/// What a replay (or a resumed one) says at its end: the outcome as JSON
/// or a line, and an error whose kind is its exit code when it did not
/// complete with every step verified.
pub(super) fn said(result: &crate::replay::ReplayResult, json: bool, dry_run: bool) -> Result<()> {
    let run_id = result.run_id.clone();
    if json {
        let line = OutcomeLine {
            kind: "outcome",
            outcome: &result.outcome,
            run_id: &run_id,
            recording_id: &result.recording_id,
            seconds: result.seconds,
            version: result.version,
            heals: &result.heals,
            coverage: &result.coverage,
        };
        println!(
            "{}",
            serde_json::to_string(&line).expect("outcome lines serialize")
        );
    }
    if !json && !dry_run && result.coverage.steps > 0 {
        eprintln!("coverage: {}", result.coverage.words());
    }
    match crate::replay::stop_of(result) {
        None => {
            let steps = match &result.outcome {
                reprise_strategies::ReplayOutcome::Completed { steps, .. } => *steps,
                _ => result.n_steps,
            };
            if json {
            } else if dry_run {
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
        Some((what, kind)) => {
            Err(crate::replay::stopped::ReplayStopped { run_id, what, kind }.into())
        }
    }
}

/// `replay --each FILE`: one replay run per row, each row's columns naming
/// parameters (texts, or secrets). Everything a row needs is checked before
/// the first row runs.
fn replay_each(
    store: &mut Store,
    args: &ReplayArgs,
    template: ReplayRequest,
    path: &std::path::Path,
) -> Result<()> {
    let rows = crate::replay::rows::read_rows(path)?;
    let params = crate::replay::parameters_of(store, &args.recording)?;
    check_columns(&rows.columns, &params, &template, path)?;
    let shared_secrets = shared_secrets(&params, &rows.columns, &template)?;
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
    let earlier = match &args.resume {
        Some(query) => earlier_rows(store, query, &args.recording)?,
        None => Default::default(),
    };
    let batch_id = earlier
        .id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    earlier.check(&rows, n_rows, &params, path)?;
    let mut outcomes: Vec<(usize, Option<(String, StopKind)>)> = Vec::new();
    for (idx, values) in rows.rows.iter().take(n_rows).enumerate() {
        let row = idx + 1;
        eprintln!("row {row} of {n_rows}");
        let mut request = template.clone();
        if let Some(done) = earlier.resume_row(row, n_rows, &mut request)? {
            outcomes.push((row, done));
            continue;
        }
        request.progress.banner = None;
        request.secret_overrides = shared_secrets.clone();
        for (column, value) in rows.columns.iter().zip(values) {
            if kind_of(&params, column) == Some(ParameterKind::Secret) {
                request
                    .secret_overrides
                    .insert(column.clone(), value.clone());
            } else {
                request.parameters.push((column.clone(), value.clone()));
            }
        }
        // As the run keeps them (and `--resume` compares them): one rule.
        let shown = shown_values(&rows.columns, values, &params);
        request.batch = Some(crate::replay::BatchRow {
            id: batch_id.clone(),
            row,
            values: shown,
        });
        let stop = run_row(store, args, &request)?;
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
    batch_outcome(&batch_id, n_rows, &outcomes, &args.recording)
}

/// The secrets no column of a batch gives: from the environment, the file
/// or the person, once, before the first row (a dry run only checks that
/// each has a source).
fn shared_secrets(
    params: &[Parameter],
    columns: &[String],
    template: &ReplayRequest,
) -> Result<SecretValues> {
    let others: Vec<String> = params
        .iter()
        .filter(|param| param.kind == ParameterKind::Secret && !columns.contains(&param.name))
        .map(|param| param.name.clone())
        .collect();
    let environment = |name: &str| std::env::var(name).ok();
    let file = template.secrets_file.as_deref();
    Ok(if template.options.dry_run {
        SecretValues::check(&others, file, &environment, true)?;
        Default::default()
    } else {
        SecretValues::resolve(&others, file, &environment, true)?
    })
}

/// A batch run before (`--resume`): its id and its rows' runs by row.
#[derive(Default)]
struct EarlierRows {
    id: Option<String>,
    rows: std::collections::BTreeMap<usize, (crate::store::RunRecord, Vec<crate::store::RunStep>)>,
}

/// The batch `query` names, of `recording`, with each row's latest run.
fn earlier_rows(store: &Store, query: &str, recording: &str) -> Result<EarlierRows> {
    let Some((id, run_ids)) = store.resolve_batch(query)? else {
        bail!(UsageError(format!(
            "--resume {query:?}: no batch has that id"
        )));
    };
    let recording_id = store.resolve(recording)?;
    let mut rows = std::collections::BTreeMap::new();
    for run_id in run_ids {
        let (run, steps) = store.load_run(&run_id)?;
        if run.recording_id != recording_id {
            bail!(UsageError(format!(
                "batch {id} replayed another recording ({}), not {recording:?}",
                run.recording_id
            )));
        }
        if let Some(row) = run.arguments.batch.as_ref().map(|batch| batch.row) {
            rows.insert(row, (run, steps));
        }
    }
    Ok(EarlierRows { id: Some(id), rows })
}

impl EarlierRows {
    /// A rows file that changed under the rows already run is refused
    /// before anything is replayed.
    fn check(
        &self,
        rows: &crate::replay::rows::Rows,
        n_rows: usize,
        params: &[Parameter],
        path: &std::path::Path,
    ) -> Result<()> {
        for (idx, values) in rows.rows.iter().take(n_rows).enumerate() {
            if let Some((run, _)) = self.rows.get(&(idx + 1)) {
                let shown = shown_values(&rows.columns, values, params);
                let stored = run.arguments.batch.as_ref().map(|batch| &batch.values);
                if stored != Some(&shown) {
                    bail!(UsageError(format!(
                        "row {} of {} is not the row the batch ran (run {}): the rows file changed",
                        idx + 1,
                        path.display(),
                        run.id
                    )));
                }
            }
        }
        Ok(())
    }

    /// Row `row` of a resumed batch: done before (its outcome, not
    /// replayed: `Some`), halted (`request` resumes it), or not run yet.
    fn resume_row(
        &self,
        row: usize,
        n_rows: usize,
        request: &mut ReplayRequest,
    ) -> Result<Option<Option<(String, StopKind)>>> {
        let Some((run, steps)) = self.rows.get(&row) else {
            return Ok(None);
        };
        if let Some(outcome @ reprise_strategies::ReplayOutcome::Completed { .. }) = &run.outcome {
            let done = crate::replay::ReplayResult {
                run_id: run.id.clone(),
                recording_id: run.recording_id.clone(),
                outcome: outcome.clone(),
                n_steps: steps.len(),
                seconds: 0.0,
                version: run.arguments.version.unwrap_or(1),
                heals: Vec::new(),
                coverage: Default::default(),
            };
            eprintln!(
                "row {row} of {n_rows}: done in run {} before; not replayed",
                run.id
            );
            return Ok(Some(crate::replay::stop_of(&done)));
        }
        request.resume = Some(
            crate::replay::resume::plan(run, steps, None)
                .map_err(|err| UsageError(format!("row {row}: {err}")))?,
        );
        Ok(None)
    }
}

/// A row's values as a run keeps them: secrets masked.
fn shown_values(
    columns: &[String],
    values: &[String],
    params: &[Parameter],
) -> Vec<(String, String)> {
    columns
        .iter()
        .zip(values)
        .map(|(column, value)| match kind_of(params, column) {
            Some(ParameterKind::Secret) => (column.clone(), "(secret)".to_owned()),
            _ => (column.clone(), value.clone()),
        })
        .collect()
}

/// A parameter's kind, by its name.
fn kind_of(params: &[Parameter], name: &str) -> Option<ParameterKind> {
    params
        .iter()
        .find(|param| param.name == name)
        .map(|param| param.kind.clone())
}

/// The rows' columns must name the recording's parameters, and none that
/// `--set` gives too.
fn check_columns(
    columns: &[String],
    params: &[Parameter],
    template: &ReplayRequest,
    path: &std::path::Path,
) -> Result<()> {
    let unknown: Vec<&String> = columns
        .iter()
        .filter(|column| kind_of(params, column).is_none())
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
        .find(|(name, _)| columns.contains(name))
    {
        bail!(UsageError(format!(
            "{name} is both set with --set and a column of {}: give it in one place",
            path.display()
        )));
    }
    Ok(())
}

/// One row's replay, after the reset: how it stopped (`None`: completed,
/// every step verified). A refused request ends the batch.
fn run_row(
    store: &mut Store,
    args: &ReplayArgs,
    request: &ReplayRequest,
) -> Result<Option<(String, StopKind)>> {
    // A resumed row goes on where it halted: resetting would undo its steps.
    if request.resume.is_none()
        && let Err(reason) = crate::replay::reset::reset(args.reset_with.as_deref())
    {
        return Ok(Some((format!("was not run: {reason}"), StopKind::Failed)));
    }
    Ok(match crate::replay::replay(store, request) {
        Ok(result) => crate::replay::stop_of(&result)
            .map(|(what, kind)| (format!("(run {}) {what}", result.run_id), kind)),
        Err(err) if err.downcast_ref::<UsageError>().is_some() => return Err(err),
        Err(err) => Some((crate::settings::errors::one_line(&err), StopKind::Failed)),
    })
}

/// The batch's result from its rows' outcomes: done when every row
/// completed with every step verified, else how it stopped.
fn batch_outcome(
    batch_id: &str,
    n_rows: usize,
    outcomes: &[(usize, Option<(String, StopKind)>)],
    recording: &str,
) -> Result<()> {
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
            "replay batch {batch_id}: all {} of recording {recording:?} completed, every step verified",
            plural(n_rows, "row"),
        );
        return Ok(());
    }
    let rows_list = failed
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let (what, kind) = if failed.is_empty() {
        (
            format!(
                "(a batch of {}) completed every row, {unverified} with steps that could not be checked",
                plural(n_rows, "row")
            ),
            StopKind::Unverified,
        )
    } else {
        let not_run = if not_run > 0 {
            format!(
                "; {} not run (--keep-going runs them)",
                plural(not_run, "row")
            )
        } else {
            String::new()
        };
        (
            format!(
                "(a batch of {}) failed at row {rows_list}{not_run}",
                plural(n_rows, "row"),
            ),
            StopKind::Failed,
        )
    };
    Err(crate::replay::stopped::ReplayStopped {
        run_id: batch_id.to_owned(),
        what,
        kind,
    }
    .into())
}

/// Prunes the runs older than the retention (see
/// [`crate::settings::config::runs_keep_days`]) before a replay. A setting that is
/// wrong is refused; a prune that fails is only a warning.
fn apply_retention(store: &Store, config: Option<&std::path::Path>) -> Result<()> {
    let days = crate::settings::config::runs_keep_days(config, &|var| std::env::var(var).ok())?;
    if days == 0.0 {
        return Ok(());
    }
    let before = crate::settings::durations::days_ago("the runs' retention", days)?;
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
            crate::settings::errors::one_line(&err)
        ),
    }
    Ok(())
}

/// `--set NAME=VALUE` (of `replay` and `jobs submit`).
pub(super) fn parse_set(pair: &str) -> Result<(String, String), UsageError> {
    use crate::replay::rows::MAX_VALUE_BYTES;
    match pair.split_once('=') {
        Some((name, value)) if reprise_models::parameter::is_valid_name(name) => {
            if value.len() > MAX_VALUE_BYTES {
                return Err(UsageError(format!(
                    "--set {name}: the value is longer than {} kB (each character is typed)",
                    MAX_VALUE_BYTES / 1024
                )));
            }
            Ok((name.to_owned(), value.to_owned()))
        }
        _ => Err(UsageError(format!(
            "--set takes NAME=VALUE with a parameter's name (see reprise params), not {:?}",
            pair.split_once('=').map_or(pair, |(name, _)| name)
        ))),
    }
}
