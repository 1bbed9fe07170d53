//! One story per step: what the step was meant to do, how its target was
//! found, what was checked after it, and its attempts folded inside it. The
//! report, the `replay` lines and `--json` all tell a step through this, so
//! a retried step that then succeeded reads as a success with a retry, not
//! as an error beside a green badge.

use reprise_strategies::StepRecord;
use reprise_strategies::replay::StepStatus;

/// A step as it is told.
#[derive(Debug, Clone, PartialEq)]
pub struct Story {
    /// What the step was meant to do: the decided step's label, else the
    /// recorded action, else what was sought.
    pub meant: String,
    /// How its target was found (the decision's reason), where one was.
    pub found: Option<String>,
    /// How its effect was seen, or why it could not be (a done step).
    pub checked: Option<String>,
    /// Why the step did not get done: its last attempt's error (a step
    /// that failed, was passed over, retried as a block, or aborted).
    pub failure: Option<String>,
    /// The attempts before the last that failed, alike ones folded: each
    /// error with how many attempts ended so.
    pub retries: Vec<(String, usize)>,
    pub attempts: u32,
}

/// Whether a step with this status was done (its last attempt ended it).
pub fn done(status: StepStatus) -> bool {
    matches!(
        status,
        StepStatus::Verified | StepStatus::Unverified | StepStatus::DryRun
    )
}

impl Story {
    pub fn of(record: &StepRecord) -> Story {
        let sought = record.sought.as_ref();
        let meant = record
            .step
            .as_ref()
            .map(|step| step.label.clone())
            .or_else(|| sought.and_then(|sought| sought.action.clone()))
            .or_else(|| {
                sought
                    .and_then(|sought| sought.description.as_ref())
                    .map(|description| format!("find {description}"))
            })
            .unwrap_or_else(|| "the next step (none was decided)".to_owned());
        let mut errors: &[String] = &record.errors;
        let mut failure = None;
        if !done(record.status)
            && let Some((last, earlier)) = errors.split_last()
        {
            failure = Some(last.clone());
            errors = earlier;
        }
        let mut retries: Vec<(String, usize)> = Vec::new();
        for error in errors {
            match retries.last_mut() {
                Some((last, count)) if last == error => *count += 1,
                _ => retries.push((error.clone(), 1)),
            }
        }
        Story {
            meant,
            found: record.step.as_ref().map(|step| step.reason.clone()),
            checked: record.check.clone().filter(|_| done(record.status)),
            failure,
            retries,
            attempts: record.attempts,
        }
    }

    /// The one reason a person reads first: why it failed, or how it was
    /// checked.
    pub fn why(&self) -> Option<&str> {
        self.failure.as_deref().or(self.checked.as_deref())
    }

    /// How many failed attempts came before the last one.
    pub fn retried(&self) -> usize {
        self.retries.iter().map(|(_, count)| count).sum()
    }
}

/// `1 retry`, `2 retries`.
pub fn retries(count: usize) -> String {
    if count == 1 {
        "1 retry".to_owned()
    } else {
        format!("{count} retries")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reprise_strategies::{Sought, Step};

    fn step(label: &str) -> Step {
        Step {
            source_event: Some(1),
            label: label.into(),
            target: Some((10.0, 20.0)),
            reason: "by its identity".into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_retried_step_that_was_done_tells_its_check_and_folds_the_retry() {
        let mut record = StepRecord::new(1, 0.0);
        record.status = StepStatus::Verified;
        record.step = Some(step("singleclick left on push button \"OK\""));
        record.attempts = 3;
        record.errors = vec!["no window (waited 5.0 s)".into(); 2];
        record.check = Some("the field reads \"alice\"".into());
        let story = Story::of(&record);
        assert_eq!(story.meant, "singleclick left on push button \"OK\"");
        assert_eq!(story.failure, None);
        assert_eq!(story.why(), Some("the field reads \"alice\""));
        assert_eq!(story.retries, [("no window (waited 5.0 s)".to_owned(), 2)]);
        assert_eq!(story.retried(), 2);
    }

    #[test]
    fn a_failed_step_is_named_by_what_was_recorded_and_tells_its_last_error() {
        let mut record = StepRecord::new(4, 0.0);
        record.status = StepStatus::Failed;
        record.attempts = 2;
        record.errors = vec!["not found".into(), "refusing to guess".into()];
        record.check = Some("stale".into());
        record.sought = Some(Sought {
            action: Some("singleclick left at (230, 387)".into()),
            description: Some("button \"save\"".into()),
            ..Sought::default()
        });
        let story = Story::of(&record);
        assert_eq!(story.meant, "singleclick left at (230, 387)");
        assert_eq!(story.failure.as_deref(), Some("refusing to guess"));
        assert_eq!(story.why(), Some("refusing to guess"));
        assert_eq!(story.checked, None, "a failed step claims no check");
        assert_eq!(story.retries, [("not found".to_owned(), 1)]);
        // Without the recorded action: what was sought.
        record.sought.as_mut().unwrap().action = None;
        assert_eq!(Story::of(&record).meant, "find button \"save\"");
        record.sought = None;
        assert_eq!(Story::of(&record).meant, "the next step (none was decided)");
    }

    #[test]
    fn a_first_attempt_has_no_retries() {
        let mut record = StepRecord::new(0, 0.0);
        record.status = StepStatus::Unverified;
        record.step = Some(step("type \"alice\""));
        record.attempts = 1;
        record.check = Some("nothing to check".into());
        let story = Story::of(&record);
        assert_eq!(story.retried(), 0);
        assert_eq!(story.why(), Some("nothing to check"));
    }
}
