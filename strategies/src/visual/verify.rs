//! What a visual step's effect is checked against: the application's own
//! state first (the selection or focus the recording left on a row member,
//! the focus a press gave a field, the text keys typed into a field, in the
//! live tree); where the recording shows nothing changed, the press landing
//! on the element re-checked just before it; the pixels last, which prove
//! something only where the window exposes no tree, and nothing where the
//! step's window went away though the recording goes on in it.

use reprise_models::{ActionEvent, ElementIdentity, EventName, WindowState};

use super::{PlannedStep, typed_element};
use crate::identity::{StructuralAnswer, locate};
use crate::strategy::{Effect, Evidence, EvidenceKind, Missed, Verification};

/// The kind of evidence pixels that changed are: the only evidence there is
/// in a window with no tree, weak where the application exposes one (read
/// after the step, or `recorded_tree`: recorded with one of its windows)
/// that said nothing.
fn pixels_kind(effect: &Effect<'_>, recorded_tree: bool) -> EvidenceKind {
    if effect.tree.is_some() || recorded_tree {
        EvidenceKind::Weak
    } else {
        EvidenceKind::Pixels
    }
}

/// Whether the element a press was decided on shows, in the live tree
/// after it, a state it did not have before it or has lost one (selected,
/// checked, expanded, pressed): the application's own word that the press
/// acted on it. Nothing where no state changed, one the recording's element
/// had was lost, or the element is not found.
fn states_changed(
    (element, press): &(ElementIdentity, (f64, f64)),
    before: &[reprise_models::ElementState],
    tree: &reprise_models::A11yTree,
) -> Option<String> {
    use reprise_models::ElementState as S;
    let StructuralAnswer::Found { node_idx, .. } = locate(element, *press, tree) else {
        return None;
    };
    let after = &tree.nodes[node_idx as usize].states;
    let word = |state: &S| match state {
        S::Selected => Some("selected"),
        S::Checked => Some("checked"),
        S::Expanded => Some("expanded"),
        S::Pressed => Some("pressed"),
        _ => None,
    };
    let gained: Vec<&str> = after
        .iter()
        .filter(|state| !before.contains(state))
        .filter_map(word)
        .collect();
    let lost: Vec<&str> = before
        .iter()
        .filter(|state| !after.contains(state))
        .filter_map(word)
        .collect();
    // A state lost that the recording's element had at the press (a box
    // the person ticked, unticked here because it was ticked already) is
    // not the recording's effect: no evidence.
    let against_recording = before
        .iter()
        .any(|state| !after.contains(state) && element.states.contains(state));
    if against_recording || (gained.is_empty() && lost.is_empty()) {
        return None;
    }
    let mut words = Vec::new();
    if !gained.is_empty() {
        words.push(format!("became {}", gained.join(" and ")));
    }
    if !lost.is_empty() {
        words.push(format!("is no longer {}", lost.join(" or ")));
    }
    Some(format!(
        "{} {} after the press",
        element.label(),
        words.join(" and ")
    ))
}

/// Whether a field a press was recorded on (one that takes typing, not a
/// row member, whose selection is checked instead) holds the focus after
/// the press in the live tree: the evidence when it does; nothing when it
/// does not or cannot be told (the pixels then decide). A click into a
/// field that already held the focus changes no pixel, and is still done.
pub(super) fn verify_focus(
    (element, press): &(ElementIdentity, (f64, f64)),
    tree: &reprise_models::A11yTree,
) -> Option<String> {
    use reprise_models::element::{is_row_member, takes_typing};
    if !takes_typing(element.role) || is_row_member(element.role) {
        return None;
    }
    let StructuralAnswer::Found { node_idx, .. } = locate(element, *press, tree) else {
        return None;
    };
    tree.nodes[node_idx as usize]
        .states
        .contains(&reprise_models::ElementState::Focused)
        .then(|| format!("{} holds the focus after the press", element.label()))
}

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

/// The characters a step's keys type into the field that had the focus at
/// their first key: those before the first named key but Shift (a Tab
/// moves on to another field, an Enter may close the window), and whether
/// they are all the step typed. `None` where there are none, or a secret
/// comes first (a secret is never compared).
pub(super) fn typed_characters(tree: &ActionEvent) -> Option<(String, bool)> {
    let mut text = String::new();
    for key in std::iter::once(tree).chain(&tree.children) {
        if key.secret.is_some() {
            return (!text.is_empty()).then_some((text, false));
        }
        let named = key
            .key_name
            .as_deref()
            .or(key.canonical_key_name.as_deref());
        if named.is_some_and(|name| !name.starts_with("shift")) {
            return (!text.is_empty()).then_some((text, false));
        }
        if key.name == EventName::Press && named.is_none() {
            text.push_str(
                key.key_char
                    .as_deref()
                    .or(key.canonical_key_char.as_deref())?,
            );
        }
    }
    (!text.is_empty()).then_some((text, true))
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
    // Keys after the characters (an Enter that submits, a Tab that
    // reformats) may change the field again: there the text proves the
    // step when it is found, and says nothing when it is not.
    let (typed, all_keys) = typed_characters(&step.tree)?;
    let StructuralAnswer::Found { node_idx, .. } = locate(element, element.rect.center(), tree)
    else {
        return None;
    };
    let value = tree.nodes[node_idx as usize].value.as_deref()?;
    if !all_keys && !value.contains(&typed) {
        return None;
    }
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
    (window, recorded_tree): (&WindowState, bool),
    effect: &Effect<'_>,
) -> Result<Verification, Missed> {
    if !step.expects_change {
        return Ok(Verification::Unverified(
            "the recording shows no change in the window after these keys".into(),
        ));
    }
    if crate::settle::changed_beyond_caret(effect.before, effect.after, Some(window.rect)) {
        return Ok(Verification::Verified(Evidence::new(
            pixels_kind(effect, recorded_tree),
            "the window changed after the keys (more than a caret), as it did in the recording",
        )));
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
    /// The window a recorded step was made in.
    fn recorded_window(&self, step: &PlannedStep) -> Option<&WindowState> {
        step.tree
            .window_state_id
            .and_then(|id| self.windows.get(id as usize))
    }

    /// Whether the application `step` was made in exposed a tree in the
    /// recording, in any of its windows (the state a step is linked to may
    /// hold none: its tree is read a moment after the window came).
    fn app_has_tree(&self, step: &PlannedStep) -> bool {
        self.recorded_window(step)
            .is_some_and(|recorded| self.apps_with_trees.contains(&recorded.app_class))
    }

    /// The windows the recording shows before `step` and after it: the one
    /// the `next` step was made in, or the one the recording ended with.
    pub(super) fn recorded_windows(
        &self,
        step: &PlannedStep,
        next: Option<&PlannedStep>,
    ) -> Option<(&WindowState, &WindowState)> {
        let after = match next {
            Some(next) => self.recorded_window(next)?,
            None => self.windows.last()?,
        };
        Some((self.recorded_window(step)?, after))
    }

    /// Whether the windows changed after step `idx` as the recording's did:
    /// a popup opened where the recording's next press was made in one, a
    /// popup the press was made in closed, or the window the step was made
    /// in gave way to the one the recording shows next. The evidence when
    /// they did; nothing otherwise (the other checks decide).
    fn verify_windows(&self, idx: usize, effect: &Effect<'_>) -> Option<String> {
        let step = self.steps.get(idx)?;
        let next = self.steps.get(idx + 1);
        let in_popup = super::pressed_popup(&step.tree).is_some();
        let next_in_popup = next.is_some_and(|next| super::pressed_popup(&next.tree).is_some());
        if !in_popup && next_in_popup && !effect.popups_after.is_empty() {
            return Some("a popup opened, as the recording's next press was made in one".into());
        }
        let popup_closed = self
            .findings
            .popup
            .is_some_and(|popup| !effect.popups_after.contains(&popup));
        if in_popup && next.is_some_and(|_| !next_in_popup) && popup_closed {
            return Some(
                "the popup it was made in closed after the choice, as in the recording".into(),
            );
        }
        let (before, after) = self.recorded_windows(step, next)?;
        let (live_before, live_after) = (effect.window?, effect.window_after?);
        let same = crate::strategy::is_same_window;
        (!same(before, after) && same(after, live_after) && !same(live_before, live_after)).then(
            || {
                format!(
                    "{:?} gave way to {:?}, as in the recording",
                    live_before.title, live_after.title
                )
            },
        )
    }

    /// A command (a push button, a menu item outside a popup, a link) whose
    /// press changed nothing the application exposes, in the recording as
    /// here: the same window before and after, no popup, no state of its own
    /// (else the checks before would have spoken). Its effect lies beyond
    /// the tree (a file written, a request sent), and the pixels that
    /// changed at it were the press's own feedback; the press landing on it,
    /// enabled, re-checked at the point just before, is what the tree can
    /// prove, as where the recording shows no change at all.
    fn landed_command(&self, idx: usize, effect: &Effect<'_>) -> Option<String> {
        use accesskit::Role;
        use reprise_models::ElementState;
        let (element, _) = self.findings.structural.as_ref()?;
        if !matches!(
            element.role,
            Role::Button | Role::DefaultButton | Role::Link
        ) {
            return None;
        }
        let step = self.steps.get(idx)?;
        let next = self.steps.get(idx + 1);
        let popup = |step: &PlannedStep| super::pressed_popup(&step.tree).is_some();
        if popup(step) || next.is_some_and(popup) || !effect.popups_after.is_empty() {
            return None;
        }
        let (before, after) = self.recorded_windows(step, next)?;
        let same = crate::strategy::is_same_window;
        let (live_before, live_after) = (effect.window?, effect.window_after?);
        if !same(before, after) || !same(live_before, live_after) {
            return None;
        }
        // A toolkit that says which elements are enabled must say it of this
        // one, as the live tree showed it when the step was decided.
        let tree = effect.tree?;
        let says_enabled = |states: &[ElementState]| states.contains(&ElementState::Sensitive);
        let live = self.findings.states_before.as_deref().unwrap_or_default();
        if tree.nodes.iter().any(|node| says_enabled(&node.states)) && !says_enabled(live) {
            return None;
        }
        Some(format!(
            "the press of {} changed nothing the application shows, in the recording either: it landed on it, enabled, re-checked at the point just before it",
            element.label()
        ))
    }

    /// The push button of step `idx`, found by its identity (its press
    /// re-checked at the point just before it), whose press closes the
    /// window it is in, by the recording: its press changed the screen at
    /// it, outside a popup, and no later step was made in that window (the
    /// dialog's OK, Save or Close). Nothing otherwise.
    pub(super) fn closing_command(&self, idx: usize) -> Option<&ElementIdentity> {
        use accesskit::Role;
        let (element, _) = self.findings.structural.as_ref()?;
        if !matches!(element.role, Role::Button | Role::DefaultButton) {
            return None;
        }
        let step = self.steps.get(idx)?;
        if !step.expects_change || super::pressed_popup(&step.tree).is_some() {
            return None;
        }
        (!self.window_stays(idx)).then_some(element)
    }

    /// Whether a step after step `idx` was made in the window step `idx`
    /// was made in, by the recording.
    fn window_stays(&self, idx: usize) -> bool {
        let Some(recorded) = self
            .steps
            .get(idx)
            .and_then(|step| self.recorded_window(step))
        else {
            return false;
        };
        self.steps[idx + 1..].iter().any(|later| {
            self.recorded_window(later)
                .is_some_and(|window| crate::strategy::is_same_window(window, recorded))
        })
    }

    /// Step `idx`'s window gone from the window manager's list after it,
    /// where the recording's later steps are made in it: the application
    /// closed or died under the step, and what changed on the screen (at
    /// the target, or beyond a caret) is its going, not the step's effect.
    /// Pressed again where it was a press (a window gone takes no press:
    /// the next attempt finds none, or the one that came back); keys are
    /// not typed twice.
    fn vanished(&self, idx: usize, effect: &Effect<'_>) -> Option<Missed> {
        let (step, window) = (self.steps.get(idx)?, effect.window?);
        (effect.window_closed && self.window_stays(idx)).then(|| Missed {
            reason: format!(
                "{:?} is gone after {}, though the recording's later steps are made in it: what changed on the screen is its going, not the step's effect",
                window.title,
                step.tree.label()
            ),
            retry: !step.tree.name.is_key(),
        })
    }

    /// A [closing command](Self::closing_command) whose press closed the
    /// window it was in (gone from the window manager's list, not merely
    /// behind another). Which button closed it is the re-check's word
    /// (Cancel closes a dialog too). Nothing otherwise (the other checks
    /// decide).
    fn closed_by_command(&self, idx: usize, effect: &Effect<'_>) -> Option<String> {
        if !effect.window_closed {
            return None;
        }
        let element = self.closing_command(idx)?;
        Some(format!(
            "{:?} closed after the press of {}, re-checked at the point just before it, as the recording's press left it",
            effect.window?.title,
            element.label()
        ))
    }

    /// What the application's live tree says of the step, after it: the
    /// selection or focus left on a row member, the focus a press gave a
    /// field, the text keys typed into one, a state the pressed element
    /// gained or lost. The evidence, an error where it contradicts the
    /// recording, nothing where it says nothing.
    fn verify_state(
        &self,
        step: &PlannedStep,
        tree: &reprise_models::A11yTree,
    ) -> Option<Result<String, Missed>> {
        let structural = self.findings.structural.as_ref();
        if let Some(element) = structural {
            match verify_selection(element, tree) {
                Ok(Some(selected)) => return Some(Ok(selected)),
                Err(missed) => return Some(Err(missed)),
                Ok(None) => {}
            }
            if let Some(focused) = verify_focus(element, tree) {
                return Some(Ok(focused));
            }
        }
        if step.tree.name.is_key()
            && let Some(checked) = verify_value(step, tree)
        {
            return Some(checked);
        }
        let (element, before) = (structural?, self.findings.states_before.as_deref()?);
        states_changed(element, before, tree).map(Ok)
    }

    pub(super) fn verify_step(
        &mut self,
        step_idx: usize,
        effect: &Effect<'_>,
    ) -> Result<Verification, Missed> {
        let Some(step) = self.steps.get(step_idx) else {
            return Ok(Verification::Unverified(
                "the recording has no such step".into(),
            ));
        };
        // The application's own state first.
        if let Some(tree) = effect.tree
            && let Some(checked) = self.verify_state(step, tree)
        {
            return checked
                .map(|words| Verification::Verified(Evidence::new(EvidenceKind::State, words)));
        }
        if let Some(windows) = self.verify_windows(step_idx, effect) {
            return Ok(Verification::Verified(Evidence::new(
                EvidenceKind::Window,
                windows,
            )));
        }
        if let Some(missed) = self.vanished(step_idx, effect) {
            return Err(missed);
        }
        if step.tree.name.is_key()
            && let Some(window) = effect.window
        {
            return verify_keys(step, (window, self.app_has_tree(step)), effect);
        }
        let (Some(window), Some(target)) = (effect.window, self.findings.target) else {
            return Ok(Verification::Unverified(
                "the step has no target on the screen to watch".into(),
            ));
        };
        if !step.expects_change {
            // The person's own press changed nothing here either: the press
            // landing on the element identified (re-checked at the point
            // just before it) is what the step was.
            if let Some((element, _)) = &self.findings.structural {
                return Ok(Verification::Verified(Evidence::new(
                    EvidenceKind::Landed,
                    format!(
                        "the recording shows no change at the target either; the press landed on {}, re-checked at the point just before it",
                        element.label()
                    ),
                )));
            }
            return Ok(Verification::Unverified(
                "the recording shows no change at the target to expect".into(),
            ));
        }
        if let Some(closed) = self.closed_by_command(step_idx, effect) {
            return Ok(Verification::Verified(Evidence::new(
                EvidenceKind::Window,
                closed,
            )));
        }
        if let Some(landed) = self.landed_command(step_idx, effect) {
            return Ok(Verification::Verified(Evidence::new(
                EvidenceKind::Landed,
                landed,
            )));
        }
        if crate::settle::same_region(effect.before, effect.after, Some(target)) {
            return Err(Missed {
                reason: format!(
                    "nothing changed at the target in {:?} after {}, though the recording shows a change",
                    window.title,
                    step.tree.label()
                ),
                retry: true,
            });
        }
        Ok(Verification::Verified(Evidence::new(
            pixels_kind(effect, self.app_has_tree(step)),
            "the target changed on the screen, as it did in the recording",
        )))
    }
}

#[cfg(test)]
mod tests;
