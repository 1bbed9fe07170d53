//! What a visual step's effect is checked against: the selection or focus
//! the recording left on a row member and the text keys typed into a field
//! (in the live tree), and the change keys made in their window (in the
//! pixels).

use reprise_models::{ActionEvent, ElementIdentity, EventName, WindowState};

use super::{PlannedStep, typed_element};
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

/// The characters a step's keys type, when they type nothing else: no
/// named key but Shift, no secret. `None` otherwise (Enter may close the
/// field's window; a secret is never compared).
fn typed_characters(tree: &ActionEvent) -> Option<String> {
    let mut text = String::new();
    for key in std::iter::once(tree).chain(&tree.children) {
        if key.secret.is_some() {
            return None;
        }
        let named = key
            .key_name
            .as_deref()
            .or(key.canonical_key_name.as_deref());
        if named.is_some_and(|name| !name.starts_with("shift")) {
            return None;
        }
        if key.name == EventName::Press && named.is_none() {
            text.push_str(
                key.key_char
                    .as_deref()
                    .or(key.canonical_key_char.as_deref())?,
            );
        }
    }
    (!text.is_empty()).then_some(text)
}

/// Whether the field the keys were typed into holds what they typed, in
/// the live tree after the step: the evidence when it does, an error when
/// it does not, nothing when that cannot be told (keys other than
/// characters, a secret, a password field, a field the tree does not show
/// or whose text it does not give).
pub(super) fn verify_value(
    step: &PlannedStep,
    tree: &reprise_models::A11yTree,
) -> Option<Result<String, Missed>> {
    let element = typed_element(&step.tree)?;
    if reprise_models::element::is_secret_field(element.role) {
        return None;
    }
    let typed = typed_characters(&step.tree)?;
    let rect = element.rect;
    let middle = (
        f64::from(rect.left) + f64::from(rect.width) / 2.0,
        f64::from(rect.top) + f64::from(rect.height) / 2.0,
    );
    let StructuralAnswer::Found { node_idx, .. } = locate(element, middle, tree) else {
        return None;
    };
    let value = tree.nodes[node_idx as usize].value.as_deref()?;
    Some(if value.contains(&typed) {
        Ok(format!("{} holds {typed:?}, as typed", element.label()))
    } else {
        let shown: String = value.chars().take(40).collect();
        Err(Missed {
            reason: format!(
                "{} holds {shown:?} after the keys, without the {typed:?} they typed",
                element.label()
            ),
            retry: false,
        })
    })
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

impl super::VisualStrategy {
    pub(super) fn verify_step(
        &mut self,
        step_idx: usize,
        effect: &Effect<'_>,
    ) -> Result<Verification, Missed> {
        let missed = |reason: String| Missed {
            reason,
            retry: true,
        };
        let Some(step) = self.steps.get(step_idx) else {
            return Ok(Verification::Unverified(
                "the recording has no such step".into(),
            ));
        };
        if let (Some(tree), Some(element)) = (effect.tree, self.findings.structural.as_ref())
            && let Some(selected) = verify_selection(element, tree)?
        {
            return Ok(Verification::Verified(selected));
        }
        if step.tree.name.is_key()
            && let Some(tree) = effect.tree
            && let Some(checked) = verify_value(step, tree)
        {
            return checked.map(Verification::Verified);
        }
        if step.tree.name.is_key()
            && let Some(window) = effect.window
        {
            return verify_keys(step, window, effect);
        }
        let (Some(window), Some(target)) = (effect.window, self.findings.target) else {
            return Ok(Verification::Unverified(
                "the step has no target on the screen to watch".into(),
            ));
        };
        if !step.expects_change {
            return Ok(Verification::Unverified(
                "the recording shows no change at the target to expect".into(),
            ));
        }
        if crate::settle::same_region(effect.before, effect.after, Some(target)) {
            return Err(missed(format!(
                "nothing changed at the target in {:?} after {}, though the recording shows a change",
                window.title,
                step.tree.label()
            )));
        }
        Ok(Verification::Verified(
            "the target changed on the screen, as it did in the recording".into(),
        ))
    }
}
