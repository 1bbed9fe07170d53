//! What replay does with a recorded event tree, whatever the strategy: the
//! exact actions that replay it, and when it ended.

use reprise_models::{ActionEvent, EventName};

use crate::{Action, KeySpec};

/// A pause inside a step (between a double-click's clicks, a chord's
/// keys) at replay `speed`: shortened when replaying faster, never
/// stretched when slower, which would make a double-click two clicks.
pub fn inner_pause(seconds: f64, speed: f64) -> Action {
    Action::pause(std::time::Duration::from_secs_f64(
        (seconds / speed.max(1.0)).max(0.0),
    ))
}

/// The last timestamp in a tree.
pub fn end_time(event: &ActionEvent) -> f64 {
    event
        .children
        .iter()
        .map(end_time)
        .fold(event.timestamp, f64::max)
}

/// The actions that replay one recorded tree exactly.
pub fn actions_for(tree: &ActionEvent, mut pause: impl FnMut(f64) -> Action) -> Vec<Action> {
    let mut actions = Vec::new();
    let move_to = |actions: &mut Vec<Action>, event: &ActionEvent| {
        if let Some((x, y)) = event.position() {
            actions.push(Action::MoveTo { x, y });
        }
    };
    match tree.name {
        EventName::Move => move_to(&mut actions, tree),
        EventName::Click => {
            move_to(&mut actions, tree);
            if let Some(button) = tree.mouse_button_name {
                actions.push(if tree.mouse_pressed == Some(true) {
                    Action::ButtonDown { button }
                } else {
                    Action::ButtonUp { button }
                });
            }
        }
        EventName::Singleclick | EventName::Doubleclick => {
            move_to(&mut actions, tree);
            let button = tree
                .mouse_button_name
                .unwrap_or(reprise_models::MouseButton::Left);
            let mut previous: Option<f64> = None;
            for child in &tree.children {
                if let Some(previous) = previous {
                    actions.push(pause(child.timestamp - previous));
                }
                previous = Some(child.timestamp);
                actions.push(if child.mouse_pressed == Some(true) {
                    Action::ButtonDown { button }
                } else {
                    Action::ButtonUp { button }
                });
            }
        }
        EventName::Scroll => {
            move_to(&mut actions, tree);
            actions.push(Action::Scroll {
                dx: tree.mouse_dx.unwrap_or(0.0).round() as i32,
                dy: tree.mouse_dy.unwrap_or(0.0).round() as i32,
            });
        }
        EventName::Press | EventName::Release | EventName::Type => {
            key_actions(tree, &mut pause, &mut actions);
        }
    }
    actions
}

/// A key tree's actions: its exact presses and releases, so a chord stays a
/// chord, with the recorded pauses between them; a secret's keys are its
/// value, typed once where its first key was pressed (a key released in
/// between changes nothing).
fn key_actions(
    tree: &ActionEvent,
    pause: &mut impl FnMut(f64) -> Action,
    actions: &mut Vec<Action>,
) {
    let mut previous: Option<f64> = None;
    // The secret typed last, until a key of another is pressed.
    let mut typed_secret: Option<&str> = None;
    for leaf in key_leaves(tree) {
        let secret = leaf.secret.as_deref();
        if leaf.name == EventName::Press && secret != typed_secret {
            typed_secret = None;
        }
        if let Some(name) = secret {
            if leaf.name == EventName::Press && typed_secret.is_none() {
                typed_secret = Some(name);
                if let Some(previous) = previous {
                    actions.push(pause(leaf.timestamp - previous));
                }
                previous = Some(leaf.timestamp);
                actions.push(Action::TypeSecret {
                    name: name.to_owned(),
                });
            }
            continue;
        }
        let Some(key) = KeySpec::of_event(leaf) else {
            continue;
        };
        if let Some(previous) = previous {
            actions.push(pause(leaf.timestamp - previous));
        }
        previous = Some(leaf.timestamp);
        actions.push(if leaf.name == EventName::Press {
            Action::KeyDown { key }
        } else {
            Action::KeyUp { key }
        });
    }
}

fn key_leaves(tree: &ActionEvent) -> Vec<&ActionEvent> {
    if tree.children.is_empty() {
        return vec![tree];
    }
    tree.children.iter().flat_map(key_leaves).collect()
}
