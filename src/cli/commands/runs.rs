//! The commands on replay runs: `runs` (list, show, prune) and `report`.

use anyhow::{Context as _, Result, bail};
use reprise_strategies::ReplayOutcome;

use super::StoreAt;
use super::output::{print_json, print_text, write_atomically};
use crate::cli::{ReportArgs, RunsArgs, RunsCommand};
use crate::present::{self, plural};
use crate::settings::errors::UsageError;
use crate::store::{Store, StoreError};

/// `reprise report`: a run's page, or a batch's.
pub fn report(store: &Store, args: &ReportArgs) -> Result<()> {
    let run_id = match store.resolve_run(&args.run) {
        Err(StoreError::RunNotFound(query)) => match store.resolve_batch(&query)? {
            Some((batch_id, run_ids)) => {
                return batch_report(store, &batch_id, &run_ids, &args.output);
            }
            None => return Err(StoreError::RunNotFound(query).into()),
        },
        other => other?,
    };
    let html = crate::present::report::run_report(store, &run_id)?;
    write_atomically(&args.output, html.as_bytes())?;
    println!(
        "wrote the report of run {run_id} to {}",
        args.output.display()
    );
    Ok(())
}

/// `reprise runs`: the list, or its subcommands.
pub fn runs(store: &StoreAt, args: RunsArgs) -> Result<()> {
    match args.command {
        None => {
            let store = store.open_to_read()?;
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
        Some(RunsCommand::Show { run, json }) => run_show(&store.open_to_read()?, &run, json),
        Some(RunsCommand::Prune {
            older_than,
            keep,
            dry_run,
        }) => runs_prune(store.path(), older_than, keep, dry_run),
    }
}

/// `report BATCH -o FILE`: the batch's page in FILE, and each row's report
/// beside it (`FILE-row-N.html`, linked from the page).
pub(super) fn batch_report(
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
    let html = crate::present::batch::batch_report(store, batch_id, run_ids, &row_name)?;
    for run_id in run_ids {
        let (run, _) = store.load_run(run_id)?;
        let row = run
            .arguments
            .batch
            .as_ref()
            .map_or(0, |batch| batch.row as u64);
        let path = output.with_file_name(row_name(row));
        write_atomically(
            &path,
            crate::present::report::run_report(store, run_id)?.as_bytes(),
        )?;
    }
    write_atomically(output, html.as_bytes())?;
    println!(
        "wrote the report of batch {batch_id} ({}) to {}",
        plural(run_ids.len(), "row"),
        output.display()
    );
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
            .map(|summary| format!(", {:.1} s", summary.seconds))
            .unwrap_or_default(),
    ));
    text.push_str("\noutcome: ");
    let dry_run = run.dry_run();
    text.push_str(&present::terminal_safe(&present::outcome_words(
        run.outcome.as_ref(),
        dry_run,
    )));
    text.push('\n');
    for resumption in &run.arguments.resumptions {
        text.push_str(&present::terminal_safe(&format!(
            "halted: {}; resumed {} at step {}\n",
            resumption.halted,
            resumption.at,
            resumption.from_step + 1
        )));
    }
    let total = match run.outcome {
        Some(ReplayOutcome::Completed { steps, .. } | ReplayOutcome::StepLimit { steps }) => {
            Some(steps)
        }
        _ => None,
    };
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
        .map(|days| crate::settings::durations::days_ago("--older-than", days))
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
pub(super) struct Freed {
    pub bytes: u64,
    /// False where the space stays in the store for now (see
    /// [`delete_with_room`]).
    pub given_back: bool,
}

/// Runs a deletion on the store at `store_path` so that it works on a full
/// disk: the store's reserve is released first and written again after,
/// whatever happened. `delete` returns `None` when it found nothing to
/// delete; else the freed space is given back to the disk. Where that
/// cannot be done now (no room to rewrite an old store, another process
/// busy with it), the log says why and the space stays in the store for
/// new recordings: the deletion stands, and is not reported as failed.
pub(super) fn delete_with_room<T>(
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
pub(super) fn prune_runs(
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
