//! How far a run can be trusted, in two figures a person and a scheduler
//! read at its end: the identity coverage (of the presses made, how many
//! were made on an element found by its identity, checked when it was
//! recorded and re-checked just before the press) and what each verified
//! step's proof rested on (the application's state, its windows, a
//! re-checked press, pixels; weak where pixels alone spoke for a window
//! with a tree).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{StepRecord, StepStatus};
use crate::{Action, FoundBy};

/// A run's identity coverage and evidence, counted from its steps.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    /// Steps done (verified or not).
    pub steps: usize,
    /// Steps done that pressed a button of the pointer.
    pub presses: usize,
    /// Of those, the presses made on an element found by its identity and
    /// re-checked at the point just before the press.
    pub by_identity: usize,
    /// Verified steps by what their proof rested on (`state`, `window`,
    /// `landed`, `pixels`, …), and `unverified` for the steps done that
    /// nothing could check.
    pub evidence: BTreeMap<String, usize>,
}

impl Coverage {
    pub fn of(records: &[StepRecord]) -> Coverage {
        let mut coverage = Coverage::default();
        for record in records {
            let done = matches!(record.status, StepStatus::Verified | StepStatus::Unverified);
            let Some(step) = record.step.as_ref().filter(|_| done) else {
                continue;
            };
            coverage.steps += 1;
            let presses = step
                .actions
                .iter()
                .any(|action| matches!(action, Action::ButtonDown { .. }));
            if presses {
                coverage.presses += 1;
                if step.found_by == Some(FoundBy::Structural) && record.recheck.is_some() {
                    coverage.by_identity += 1;
                }
            }
            let kind = match (record.status, record.evidence) {
                (StepStatus::Verified, Some(kind)) => kind.word(),
                (StepStatus::Verified, None) => "verified",
                _ => "unverified",
            };
            *coverage.evidence.entry(kind.to_owned()).or_default() += 1;
        }
        coverage
    }

    /// In words: `3 of 4 presses on a checked identity; proven by state 2, window 1, unverified 1`.
    pub fn words(&self) -> String {
        let evidence: Vec<String> = self
            .evidence
            .iter()
            .map(|(kind, count)| format!("{kind} {count}"))
            .collect();
        let evidence = if evidence.is_empty() {
            "no step done".to_owned()
        } else {
            evidence.join(", ")
        };
        format!(
            "{} of {} on a checked identity; steps by proof: {evidence}",
            self.by_identity,
            match self.presses {
                1 => "1 press".to_owned(),
                n => format!("{n} presses"),
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Recheck, RecheckBy};
    use crate::strategy::EvidenceKind;
    use crate::{Button, Step};

    fn step(found_by: FoundBy, press: bool) -> Step {
        Step {
            source_event: Some(0),
            label: "a step".into(),
            target: Some((1.0, 2.0)),
            reason: String::new(),
            actions: if press {
                vec![
                    Action::ButtonDown {
                        button: Button::Left,
                    },
                    Action::ButtonUp {
                        button: Button::Left,
                    },
                ]
            } else {
                vec![Action::TypeText { text: "hi".into() }]
            },
            found_by: Some(found_by),
            ..Default::default()
        }
    }

    fn record(
        status: StepStatus,
        step: Step,
        evidence: Option<EvidenceKind>,
        rechecked: bool,
    ) -> StepRecord {
        StepRecord {
            status,
            step: Some(step),
            evidence,
            recheck: rechecked.then_some(Recheck {
                by: RecheckBy::HitTest,
                seconds: 0.01,
            }),
            ..StepRecord::new(0, 0.0)
        }
    }

    #[test]
    fn presses_on_a_rechecked_identity_and_each_proof_are_counted() {
        let records = [
            record(
                StepStatus::Verified,
                step(FoundBy::Structural, true),
                Some(EvidenceKind::State),
                true,
            ),
            // Found by its identity but never re-checked: not counted.
            record(
                StepStatus::Verified,
                step(FoundBy::Structural, true),
                Some(EvidenceKind::Window),
                false,
            ),
            record(
                StepStatus::Unverified,
                step(FoundBy::WindowPlace, true),
                None,
                false,
            ),
            // Keys: a step, not a press.
            record(
                StepStatus::Verified,
                step(FoundBy::AsRecorded, false),
                Some(EvidenceKind::State),
                false,
            ),
            // Not done: not counted at all.
            record(
                StepStatus::Failed,
                step(FoundBy::Structural, true),
                None,
                true,
            ),
        ];
        let coverage = Coverage::of(&records);
        assert_eq!(
            (coverage.steps, coverage.presses, coverage.by_identity),
            (4, 3, 1)
        );
        assert_eq!(
            coverage.words(),
            "1 of 3 presses on a checked identity; steps by proof: state 2, unverified 1, window 1"
        );
        assert_eq!(
            Coverage::of(&[]).words(),
            "0 of 0 presses on a checked identity; steps by proof: no step done"
        );
    }
}
