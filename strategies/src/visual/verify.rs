//! What a visual step's effect is checked against: the selection or focus
//! the recording left on a row member (in the live tree), and the change
//! keys made in their window (in the pixels).

use reprise_models::{ElementIdentity, WindowState};

use super::PlannedStep;
use crate::identity::{StructuralAnswer, locate};
use crate::strategy::{Effect, Missed, Verification};

/// Whether a row member (a cell, a list item) the recording selected or
/// focused is so after the click: the evidence when it is, an error when it
/// is not, nothing when the element is neither (or the live tree does not
/// show it). A click on a cell that already held the focus changes nothing
/// on the screen, and is still done.
pub(super) fn verify_selection(
    (element, press): &(ElementIdentity, (f64, f64)),
    tree: &reprise_models::A11yTree,
) -> Result<Option<String>, Missed> {
    use reprise_models::ElementState;
    let expected: Vec<(ElementState, &str)> = [
        (ElementState::Selected, "selected"),
        (ElementState::Focused, "focused"),
    ]
    .into_iter()
    .filter(|(state, _)| element.states.contains(state))
    .collect();
    if !reprise_models::element::is_row_member(element.role) || expected.is_empty() {
        return Ok(None);
    }
    let StructuralAnswer::Found { node_idx, .. } = locate(element, *press, tree) else {
        return Ok(None);
    };
    let live = &tree.nodes[node_idx as usize].states;
    let words: Vec<&str> = expected.iter().map(|(_, word)| *word).collect();
    if expected.iter().all(|(state, _)| live.contains(state)) {
        Ok(Some(format!(
            "{} is {}, as the recording left it",
            element.label(),
            words.join(" and ")
        )))
    } else {
        Err(Missed {
            reason: format!(
                "{} is not {} after the click, though the recording left it so",
                element.label(),
                words.join(" and ")
            ),
            retry: true,
        })
    }
}

/// Whether keys had the effect the recording shows: the window changed by
/// more than a caret. Keys whose effect did not come are not typed again (a
/// second try could type them twice).
pub(super) fn verify_keys(
    step: &PlannedStep,
    window: &WindowState,
    effect: &Effect<'_>,
) -> Result<Verification, Missed> {
    if !step.expects_change {
        return Ok(Verification::Unverified(
            "the recording shows no change in the window after these keys".into(),
        ));
    }
    if crate::settle::changed_beyond_caret(effect.before, effect.after, Some(window.rect)) {
        return Ok(Verification::Verified(
            "the window changed after the keys (more than a caret), as it did in the recording"
                .into(),
        ));
    }
    Err(Missed {
        reason: format!(
            "nothing but a caret changed in {:?} after {}, though the recording shows a change",
            window.title,
            step.tree.label()
        ),
        retry: false,
    })
}
