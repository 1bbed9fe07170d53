//! How a finished step is told while the replay runs: a JSON object
//! (`replay --json`, the fleet's worker) or a line for a person.

use reprise_strategies::replay::{Prepared, Recheck, StepStatus};
use reprise_strategies::{EvidenceKind, StepRecord};
use serde::{Deserialize, Serialize};

/// One finished step as `replay --json` prints it and the fleet's worker
/// reports it (`{"type": "step", …}`): written and read as this type only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepLine {
    /// Always `step`: what tells this line from the outcome's.
    #[serde(rename = "type")]
    pub kind: StepKind,
    /// The step's index, from 0.
    pub step: usize,
    /// How many steps the replay has, where known.
    pub of: Option<usize>,
    /// What the step did, for people (`None`: no step was decided).
    pub action: Option<String>,
    pub status: StepStatus,
    /// How its target was found.
    pub found: Option<String>,
    /// How its effect was seen, or why it could not be.
    pub check: Option<String>,
    /// What a verified step's check rests on.
    #[serde(default)]
    pub evidence: Option<EvidenceKind>,
    /// How its element was re-checked just before the press.
    #[serde(default)]
    pub recheck: Option<Recheck>,
    #[serde(default)]
    pub errors: Vec<String>,
    #[serde(default)]
    pub prepared: Vec<Prepared>,
    pub attempts: u32,
    pub seconds: f64,
}

/// The one kind of a [`StepLine`]; a line of another kind is not read as one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    Step,
}

impl StepLine {
    /// The line of a finished step of a replay of `total` steps.
    pub fn of(record: &StepRecord, total: Option<usize>) -> StepLine {
        StepLine {
            kind: StepKind::Step,
            step: record.step_idx,
            of: total,
            action: record.step.as_ref().map(|step| step.label.clone()),
            status: record.status,
            found: record.step.as_ref().map(|step| step.reason.clone()),
            check: record.check.clone(),
            evidence: record.evidence,
            recheck: record.recheck.clone(),
            errors: record.errors.clone(),
            prepared: record.prepared.clone(),
            attempts: record.attempts,
            seconds: record.duration_seconds,
        }
    }

    /// The line as `replay --json` prints it.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a step line serializes")
    }
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

#[cfg(test)]
mod tests {
    use super::StepLine;
    use reprise_strategies::replay::StepStatus;

    #[test]
    fn a_step_line_reads_back_as_written_and_a_line_of_another_shape_is_refused() {
        let line = StepLine {
            kind: super::StepKind::Step,
            step: 2,
            of: Some(5),
            action: Some("singleclick left on button \"OK\"".into()),
            status: StepStatus::Verified,
            found: Some("found button \"OK\" by its identity".into()),
            check: Some("the press landed".into()),
            evidence: Some(reprise_strategies::EvidenceKind::Landed),
            recheck: Some(reprise_strategies::replay::Recheck {
                by: reprise_strategies::replay::RecheckBy::HitTest,
                seconds: 0.004,
            }),
            errors: Vec::new(),
            prepared: Vec::new(),
            attempts: 1,
            seconds: 0.8,
        };
        let json = line.to_json();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["type"], "step");
        assert_eq!(value["evidence"], "landed");
        assert_eq!(value["recheck"]["by"], "hit_test");
        assert_eq!(serde_json::from_str::<StepLine>(&json).unwrap(), line);
        // Another kind of line, or one whose status is not a status, is
        // not read as a step.
        let outcome = json.replace("\"type\":\"step\"", "\"type\":\"outcome\"");
        assert!(serde_json::from_str::<StepLine>(&outcome).is_err());
        let renamed = json.replace("\"status\":\"verified\"", "\"status\":\"fine\"");
        assert!(serde_json::from_str::<StepLine>(&renamed).is_err());
    }
}
