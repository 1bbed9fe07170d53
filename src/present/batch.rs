//! The page of a batch (`replay --each`): a table of its rows, each linking
//! to its own run's report.

use anyhow::Result;
use maud::html;
use reprise_strategies::ReplayOutcome;

use super::report::{outcome_class, page};
use crate::store::Store;

/// The report of a batch (`replay --each`): a table of its rows (values,
/// outcome, steps, time, the failing step), each row linking to its own
/// report at `row_link(row)`.
pub fn batch_report(
    store: &Store,
    batch_id: &str,
    run_ids: &[String],
    row_link: &dyn Fn(u64) -> String,
) -> Result<String> {
    struct Row {
        row: u64,
        values: String,
        class: String,
        steps: usize,
        seconds: String,
        failing: String,
    }
    let mut rows = Vec::with_capacity(run_ids.len());
    for run_id in run_ids {
        let (run, steps) = store.load_run(run_id)?;
        let values: Vec<String> = run
            .arguments
            .batch
            .iter()
            .flat_map(|batch| &batch.values)
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        let class = outcome_class(run.outcome.as_ref(), run.dry_run());
        let failing = match &run.outcome {
            Some(ReplayOutcome::Failed { step, reason, .. }) => {
                format!("step {}: {reason}", step + 1)
            }
            Some(ReplayOutcome::Aborted { step }) => format!("step {}: aborted", step + 1),
            Some(ReplayOutcome::StepLimit { .. }) => "step_limit".to_owned(),
            Some(ReplayOutcome::Completed { .. }) => String::new(),
            None => String::new(),
        };
        rows.push(Row {
            row: run
                .arguments
                .batch
                .as_ref()
                .map_or(0, |batch| batch.row as u64),
            values: values.join(", "),
            class: class.to_owned(),
            steps: steps.len(),
            seconds: run
                .summary
                .as_ref()
                .map_or(String::new(), |summary| format!("{:.1}", summary.seconds)),
            failing,
        });
    }
    let body = html! {
        h1 { "Replay batch " code { (batch_id) } }
        table.meta #rows {
            tr { th { "row" } th { "values" } th { "outcome" } th { "steps" } th { "seconds" } th { "failing step" } }
            @for row in &rows {
                tr class="row" {
                    td { a href=(row_link(row.row)) { (row.row) } }
                    td { (row.values) }
                    td { span class={ "badge " (row.class) } { (row.class) } }
                    td { (row.steps) }
                    td { (row.seconds) }
                    td { (row.failing) }
                }
            }
        }
    };
    Ok(page(&format!("Replay batch {batch_id}"), body))
}
