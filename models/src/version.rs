//! Versions of a recording. Version 1 is the recording as it was made; each
//! later version holds the changes of its steps' targets made since (a heal
//! saved from a run, an ambiguity taught), all of them over the recording
//! as made, so that any version is the recording with its changes applied.
//! Raw events, frames and window states stay as recorded.

use serde::{Deserialize, Serialize};

use crate::{ActionEvent, ElementIdentity};

/// A version of a recording past the first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordingVersion {
    /// 2 and up (1 is the recording as made).
    pub version: u32,
    pub created: String,
    /// Why it was made, in words (`healed from run 3f2a…`).
    pub note: String,
    /// The run whose evidence it came from, where one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Every change over the recording as made, a step at most once.
    pub changes: Vec<TargetChange>,
    /// The steps as edited (`reprise edit`): their order, instructions
    /// between them, values typed; none where the recording's steps are
    /// replayed as they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<crate::program::Program>,
}

/// A step's target as a version has it instead of the recording's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetChange {
    /// The step (its event tree, counted from 0), for people.
    pub step: usize,
    /// The recorded press that names the target, by its time in the
    /// recording: the event the change applies to.
    pub at: f64,
    /// The target as the recording had it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<ElementIdentity>,
    /// The target as this version has it.
    pub after: ElementIdentity,
    /// Why (`found as button "Proceed" in window "Confirm"; the recording
    /// had window "Question"`).
    pub why: String,
}

/// What differs between two identities of the same target, in words
/// (`name`, `window`, `path`, `band`, `role`); empty where replay would
/// look for the same element.
pub fn differences(before: &ElementIdentity, after: &ElementIdentity) -> Vec<&'static str> {
    let mut fields = Vec::new();
    if before.role != after.role {
        fields.push("role");
    }
    if before.name != after.name {
        fields.push("name");
    }
    if before.window != after.window {
        fields.push("window");
    }
    let path = |identity: &ElementIdentity| -> Vec<(accesskit::Role, Option<String>)> {
        identity
            .path
            .iter()
            .map(|step| (step.role, step.name.clone()))
            .collect()
    };
    if path(before) != path(after) {
        fields.push("path");
    }
    if before.band != after.band {
        fields.push("band");
    }
    fields
}

/// `changes` merged over `earlier`: a step changed again keeps only its
/// newest target, its `before` still the recording's.
pub fn merge(earlier: &[TargetChange], changes: Vec<TargetChange>) -> Vec<TargetChange> {
    let mut merged: Vec<TargetChange> = earlier.to_vec();
    for mut change in changes {
        match merged.iter_mut().find(|old| old.at == change.at) {
            Some(old) => {
                change.before = old.before.take();
                *old = change;
            }
            None => merged.push(change),
        }
    }
    merged.sort_by_key(|change| change.step);
    merged
}

/// Versions past the first are numbered 2, 3, … in order.
pub fn check_numbers(versions: &[RecordingVersion]) -> Result<(), String> {
    let numbers: Vec<u32> = versions.iter().map(|known| known.version).collect();
    if numbers
        .iter()
        .enumerate()
        .any(|(i, n)| *n as usize != i + 2)
    {
        return Err(format!(
            "its versions are numbered {numbers:?}, not 2, 3, … in order"
        ));
    }
    Ok(())
}

/// The raw events with `changes` applied: each change's press names its
/// new target. Returns how many changes found their press.
pub fn apply(events: &mut [ActionEvent], changes: &[TargetChange]) -> usize {
    let mut applied = 0;
    for change in changes {
        let press = events
            .iter_mut()
            .find(|event| event.timestamp == change.at && event.element.is_some());
        if let Some(press) = press {
            press.element = Some(Box::new(change.after.clone()));
            // The new target was found and re-checked against the screen
            // on the run it came from.
            press.identity = Some(crate::element::IdentityCheck::Checked {
                mapped_by: None,
                read: None,
                fitted: None,
            });
            applied += 1;
        }
    }
    applied
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Rect, WindowIdentity};
    use accesskit::Role;

    fn button(name: &str, window: &str) -> ElementIdentity {
        ElementIdentity::new(
            "zenity",
            WindowIdentity {
                role: Role::Dialog,
                name: Some(window.into()),
            },
            Role::Button,
            Some(name),
            Rect::new(10, 10, 80, 30),
        )
    }

    fn change(step: usize, at: f64, before: &str, after: &str) -> TargetChange {
        TargetChange {
            step,
            at,
            before: Some(button("Yes", before)),
            after: button("Yes", after),
            why: "moved".into(),
        }
    }

    #[test]
    fn differences_name_what_replay_would_look_for_differently() {
        let before = button("Yes", "Question");
        assert!(differences(&before, &before.clone()).is_empty());
        let mut moved = before.clone();
        moved.rect = Rect::new(300, 300, 80, 30);
        assert!(differences(&before, &moved).is_empty(), "a box is not who");
        assert_eq!(differences(&before, &button("Yes", "Confirm")), ["window"]);
        assert_eq!(differences(&before, &button("OK", "Question")), ["name"]);
    }

    #[test]
    fn a_step_changed_again_keeps_its_newest_target_and_the_recordings_before() {
        let first = vec![change(2, 1.5, "Question", "Confirm")];
        let merged = merge(
            &first,
            vec![change(2, 1.5, "Confirm", "Sure?"), change(0, 0.2, "A", "B")],
        );
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].step, 0);
        assert_eq!(merged[1].before, Some(button("Yes", "Question")));
        assert_eq!(merged[1].after, button("Yes", "Sure?"));
    }
}
