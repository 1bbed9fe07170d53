//! The checks of a step's effect: states a press changed, and the kind
//! of evidence pixels are.

use super::{pixels_kind, states_changed};
use reprise_models::{A11yTree, ElementIdentity, ElementState, Rect, WindowIdentity};

/// The window "Form" with the check box "Remember me" in these states.
fn form(states: Vec<ElementState>) -> A11yTree {
    use accesskit::Role;
    let mut tree = reprise_models::element::outline(&[
        (0, Role::Window, "Form", (0, 0, 300, 200)),
        (1, Role::CheckBox, "Remember me", (20, 40, 120, 20)),
    ]);
    tree.app = "app".into();
    tree.nodes[1].states = states;
    tree
}

#[test]
fn a_state_the_pressed_element_gained_proves_the_press_and_one_lost_against_the_recording_does_not()
{
    let window = WindowIdentity {
        role: accesskit::Role::Window,
        name: Some("Form".into()),
    };
    let mut ticked = ElementIdentity::new(
        "app",
        window,
        accesskit::Role::CheckBox,
        Some("Remember me"),
        Rect::new(20, 40, 120, 20),
    );
    ticked.states = vec![ElementState::Checked];
    let press = (ticked.clone(), (30.0, 50.0));
    let checked = vec![ElementState::Checked];
    assert_eq!(
        states_changed(&press, &[], &form(checked.clone())).as_deref(),
        Some("checkbox \"Remember me\" became checked after the press")
    );
    // Nothing changed: no evidence.
    assert_eq!(
        states_changed(&press, &checked, &form(checked.clone())),
        None
    );
    // The person ticked it; here it was ticked already and the press
    // unticked it: not the recording's effect.
    assert_eq!(states_changed(&press, &checked, &form(vec![])), None);
    // A recording that unticked it: losing the tick is its effect.
    let unticked = (
        ElementIdentity {
            states: Vec::new(),
            ..ticked
        },
        (30.0, 50.0),
    );
    assert_eq!(
        states_changed(&unticked, &checked, &form(vec![])).as_deref(),
        Some("checkbox \"Remember me\" is no longer checked after the press")
    );
}

/// Pixels that changed are weak evidence where the application exposes a
/// tree, read after the step or only recorded with one of its windows (a
/// step with no element reads none); the evidence there is where it has
/// none (Tk's window lists only its own node).
#[test]
fn pixels_are_weak_where_the_application_exposes_a_tree_read_or_recorded() {
    use crate::strategy::{Effect, EvidenceKind};
    let frame = crate::Frame {
        image: image::RgbaImage::new(4, 4),
        screen: reprise_models::ScreenGeometry {
            rect: Rect::new(0, 0, 4, 4),
            scale_factor: 1.0,
        },
    };
    let tree = form(vec![]);
    let effect = |tree| Effect {
        before: &frame,
        after: &frame,
        window: None,
        window_after: None,
        tree,
        popups_after: &[],
        window_closed: false,
    };
    assert_eq!(pixels_kind(&effect(Some(&tree)), false), EvidenceKind::Weak);
    assert_eq!(pixels_kind(&effect(None), true), EvidenceKind::Weak);
    assert_eq!(pixels_kind(&effect(None), false), EvidenceKind::Pixels);
}
