//! Heals: steps done, and proven, on a target that differs from the one
//! the recording names (the window renamed, the element moved to another
//! path, its label changed): what a new version of the recording would
//! hold. Nothing is healed silently: a run lists them, and
//! `--save-healed` saves them as a new version.

use reprise_models::ActionEvent;
use reprise_models::element::IdentityCheck;
use reprise_models::version::{TargetChange, differences};
use reprise_strategies::{StepRecord, StepStatus};

/// The press in a step's tree that names its target (kept at record time).
pub fn recorded_press(tree: &ActionEvent) -> Option<&ActionEvent> {
    let kept = |event: &&ActionEvent| {
        event.element.is_some() && !matches!(event.identity, Some(IdentityCheck::Dropped(_)))
    };
    std::iter::once(tree)
        .find(kept)
        .or_else(|| tree.children.iter().find_map(recorded_press))
}

/// The heals a run's steps show against the steps it replayed (`trees`,
/// the recording's version as replayed): each verified step whose target
/// was found by its identity, and re-checked, as an element that differs
/// from the recorded one in who it is (not merely where).
pub fn heals(trees: &[ActionEvent], records: &[StepRecord]) -> Vec<TargetChange> {
    let mut found = Vec::new();
    for record in records {
        if record.status != StepStatus::Verified {
            continue;
        }
        let Some(step) = &record.step else { continue };
        let (Some(index), Some(live)) = (step.source_event, &step.found) else {
            continue;
        };
        let Some(press) = trees.get(index).and_then(recorded_press) else {
            continue;
        };
        let Some(recorded) = press.element.as_deref() else {
            continue;
        };
        let fields = differences(recorded, live);
        if fields.is_empty() {
            continue;
        }
        let window = |identity: &reprise_models::ElementIdentity| {
            identity
                .window
                .name
                .as_deref()
                .map_or_else(String::new, |name| format!(" in {name:?}"))
        };
        found.push(TargetChange {
            step: index,
            at: press.timestamp,
            before: Some(recorded.clone()),
            // What a person taught of it (which twin) holds for it still.
            after: reprise_models::ElementIdentity {
                ordinal: recorded.ordinal,
                ..live.clone()
            },
            why: format!(
                "found as {}{}; the recording had {}{} (its {} changed)",
                live.label(),
                window(live),
                recorded.label(),
                window(recorded),
                fields.join(", ")
            ),
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use accesskit::Role;
    use reprise_models::{ElementIdentity, EventName, Rect, WindowIdentity};
    use reprise_strategies::Step;

    fn button(name: &str, left: i32) -> ElementIdentity {
        let window = WindowIdentity {
            role: Role::Dialog,
            name: Some("Start".into()),
        };
        ElementIdentity::new(
            "zenity",
            window,
            Role::Button,
            Some(name),
            Rect::new(left, 10, 80, 30),
        )
    }

    /// A recorded single click on `recorded`, and a run's record of it.
    fn case(
        recorded: ElementIdentity,
        found: ElementIdentity,
        status: StepStatus,
    ) -> Vec<TargetChange> {
        let mut press = ActionEvent::new(EventName::Click, 1.25);
        press.element = Some(Box::new(recorded));
        let mut tree = ActionEvent::new(EventName::Singleclick, 1.25);
        tree.children = vec![press];
        let mut record = StepRecord::new(0, 0.0);
        record.status = status;
        record.step = Some(Step {
            source_event: Some(0),
            label: "singleclick".into(),
            target: Some((50.0, 25.0)),
            reason: String::new(),
            found: Some(found),
            ..Default::default()
        });
        heals(&[tree], &[record])
    }

    #[test]
    fn a_proven_step_on_a_renamed_target_is_a_heal_and_nothing_else_is() {
        let healed = case(
            button("Proceed", 10),
            button("Proceed…", 300),
            StepStatus::Verified,
        );
        assert_eq!(healed.len(), 1);
        assert_eq!((healed[0].step, healed[0].at), (0, 1.25));
        assert_eq!(healed[0].after, button("Proceed…", 300));
        assert!(
            healed[0].why.contains("(its name changed)"),
            "{}",
            healed[0].why
        );
        // Moved only: the same element, nothing to heal.
        assert!(
            case(
                button("Proceed", 10),
                button("Proceed", 300),
                StepStatus::Verified
            )
            .is_empty()
        );
        // Not proven: never a heal.
        assert!(
            case(
                button("Proceed", 10),
                button("Proceed…", 10),
                StepStatus::Unverified
            )
            .is_empty()
        );
    }
}
