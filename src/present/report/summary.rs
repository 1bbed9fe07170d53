//! The top of a run's report: a row per step, and how far the run can be
//! trusted (its identity coverage and what its steps' proofs rested on).

use maud::{Markup, html};

use crate::store::{RunStep, RunSummary};

/// The run's time, model calls and their estimated cost, as rows of the
/// report's header.
pub(super) fn cost_rows(summary: &RunSummary) -> Vec<(String, String)> {
    // An estimate that rounds to nothing is nothing (never "-0.0").
    let cost = summary.cost_usd;
    vec![
        ("seconds".into(), format!("{:.1}", summary.seconds)),
        (
            "model calls".into(),
            format!(
                "{} ({} answered from the cache), {} tokens",
                summary.model_calls, summary.model_cache_hits, summary.tokens
            ),
        ),
        (
            "estimated cost".into(),
            if cost.abs() < 0.00005 {
                "$0".into()
            } else {
                format!("${cost:.4}")
            },
        ),
    ]
}

/// The run's coverage as a row of the report's header.
pub(super) fn coverage_row(steps: &[RunStep]) -> (String, String) {
    let records: Vec<_> = steps.iter().map(|step| step.step.record.clone()).collect();
    (
        "coverage".into(),
        reprise_strategies::replay::Coverage::of(&records).words(),
    )
}

/// The table at the top of a run's report: a row per step (its number
/// linking to it, the action, how its target was found, its outcome and
/// time).
pub(super) fn summary_table(steps: &[RunStep]) -> Markup {
    html! {
        table.meta #summary {
            tr { th { "step" } th { "action" } th { "found by" } th { "outcome" } th { "time" } }
            @for stored in steps {
                @let record = &stored.step.record;
                @let status = record.status.as_str();
                @let number = record.step_idx + 1;
                @let label = crate::present::story::Story::of(record).meant;
                @let found_by = record.step.as_ref().and_then(|step| step.found_by).map_or("-", reprise_strategies::FoundBy::words);
                tr {
                    td { a href={ "#step-" (number) } { (number) } }
                    td { (label) }
                    td class="found-by" { (found_by) }
                    td { span class={ "badge " (status) } { (status.replace('_', " ")) } }
                    td { (format!("{:.0} ms", record.duration_seconds * 1000.0)) }
                }
            }
        }
    }
}
