//! How a finished step is told while the replay runs: a JSON object
//! (`replay --json`, the fleet's worker) or a line for a person.

use reprise_strategies::StepRecord;
use serde_json::json;

/// One finished step as `replay --json` prints it.
pub fn step_json(record: &StepRecord, total: Option<usize>) -> serde_json::Value {
    json!({
        "type": "step",
        "step": record.step_idx,
        "of": total,
        "action": record.step.as_ref().map(|step| step.label.as_str()),
        "status": record.status,
        "found": record.step.as_ref().map(|step| step.reason.as_str()),
        "check": record.check,
        "errors": record.errors,
        "prepared": record.prepared,
        "attempts": record.attempts,
        "seconds": record.duration_seconds,
    })
}

/// One finished step as a line for a person.
pub fn step_line(record: &StepRecord, total: Option<usize>) -> String {
    let place = match total {
        Some(total) => format!("step {}/{total}", record.step_idx + 1),
        None => format!("step {}", record.step_idx + 1),
    };
    let action = record
        .step
        .as_ref()
        .map_or("(no step decided)".to_owned(), |step| step.label.clone());
    let status = record.status.as_str().replace('_', " ");
    let why = record
        .errors
        .last()
        .or(record.check.as_ref())
        .cloned()
        .unwrap_or_default();
    // What was made first (a turn of the wheel), said by what it did.
    let first = record
        .prepared
        .iter()
        .map(|made| format!("; first {}", made.label))
        .collect::<String>();
    crate::present::terminal_safe(&format!(
        "{place} {action} … {status} ({why}{first}; {:.0} ms)",
        record.duration_seconds * 1000.0
    ))
}
