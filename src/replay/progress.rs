//! How a finished step is told while the replay runs: a JSON object
//! (`replay --json`, the fleet's worker) or a line for a person.

use reprise_strategies::replay::{Prepared, Recheck, StepStatus};
use reprise_strategies::{EvidenceKind, StepRecord};
use serde::{Deserialize, Serialize};

use crate::present::story::Story;

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
    /// What the step was meant to do: its action, else the recorded one
    /// (named even when no step was decided).
    #[serde(default)]
    pub meant: String,
    pub status: StepStatus,
    /// The one reason to read first: why it failed, or how it was checked.
    #[serde(default)]
    pub why: Option<String>,
    /// How many failed attempts came before the last (their errors are
    /// the first of `errors`).
    #[serde(default)]
    pub retries: usize,
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
        let story = Story::of(record);
        StepLine {
            kind: StepKind::Step,
            step: record.step_idx,
            of: total,
            action: record.step.as_ref().map(|step| step.label.clone()),
            why: story.why().map(str::to_owned),
            retries: story.retried(),
            meant: story.meant,
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

    /// The step as a line for a person: what it was meant to do, its
    /// status, and the one reason (how it was checked, or why it failed),
    /// with its retries counted and what was made first.
    pub fn words(&self) -> String {
        let place = match self.of {
            Some(total) => format!("step {}/{total}", self.step + 1),
            None => format!("step {}", self.step + 1),
        };
        // A line from before `meant` was sent names its action only.
        let meant = match (self.meant.as_str(), &self.action) {
            ("", Some(action)) => action.as_str(),
            ("", None) => "(no step decided)",
            (meant, _) => meant,
        };
        let mut parts: Vec<String> = self.why.clone().into_iter().collect();
        if self.retries > 0 {
            parts.push(format!(
                "after {}",
                crate::present::story::retries(self.retries)
            ));
        }
        // What was made first (a turn of the wheel), said by what it did.
        parts.extend(
            self.prepared
                .iter()
                .map(|made| format!("first {}", made.label)),
        );
        parts.push(format!("{:.0} ms", self.seconds * 1000.0));
        crate::present::terminal_safe(&format!(
            "{place} {meant} … {} ({})",
            self.status.as_str().replace('_', " "),
            parts.join("; ")
        ))
    }

    /// The line as `replay --json` prints it.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a step line serializes")
    }
}

/// One finished step as a line for a person (see [`StepLine::words`]).
pub fn step_line(record: &StepRecord, total: Option<usize>) -> String {
    StepLine::of(record, total).words()
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
            meant: "singleclick left on button \"OK\"".into(),
            status: StepStatus::Verified,
            why: Some("the press landed".into()),
            retries: 0,
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
