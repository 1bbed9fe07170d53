use reprise_models::{MouseButton, Rect, ReduceOptions, reduce};

use super::*;

/// A raw key event in window state `window`: a named key (`ctrl`) or a
/// character.
fn key(name: EventName, t: f64, key: &str, window: u32) -> ActionEvent {
    let mut event = ActionEvent::key(name, t, key);
    event.key_vk = Some(40);
    event.window_state_id = Some(window);
    event
}

fn down(t: f64, k: &str, window: u32) -> ActionEvent {
    key(EventName::Press, t, k, window)
}

fn up(t: f64, k: &str, window: u32) -> ActionEvent {
    key(EventName::Release, t, k, window)
}

/// Key events: `(time, "+ctrl" pressed or "-ctrl" released, window state)`.
fn keys(at: &[(f64, &str, u32)]) -> Vec<ActionEvent> {
    at.iter()
        .map(|&(t, key, window)| match key.split_at(1) {
            ("+", key) => down(t, key, window),
            (_, key) => up(t, key, window),
        })
        .collect()
}

fn click(t: f64, pressed: bool) -> ActionEvent {
    let mut event = ActionEvent::new(EventName::Click, t);
    (event.mouse_x, event.mouse_y) = (Some(5.0), Some(5.0));
    event.mouse_button_name = Some(MouseButton::Left);
    event.mouse_pressed = Some(pressed);
    event.window_state_id = Some(0);
    event
}

/// Window states 0 and 1 are one X window (its title changed), 2 another
/// (a dialog).
fn windows() -> Vec<WindowState> {
    let window = |id: u32, window_id: u64, title: &str| WindowState {
        id,
        timestamp: 0.0,
        title: title.into(),
        app_class: "Editor".into(),
        pid: None,
        window_id,
        rect: Rect::new(0, 0, 100, 100),
        a11y: None,
        command: None,
    };
    vec![
        window(0, 7, "notes"),
        window(1, 7, "*notes"),
        window(2, 9, "Save as"),
    ]
}

/// Each planned step as its keys (`+k` down, `-k` up) or its name, one
/// step per entry; and every step must release what it presses.
fn check(raw: Vec<ActionEvent>, expect: &[&str]) {
    let trees = reduce(raw, &ReduceOptions::default());
    let planned = plan_steps(trees, &windows());
    let pictures: Vec<String> = planned
        .iter()
        .map(|tree| {
            if !tree.name.is_key() {
                return tree.name.as_str().to_owned();
            }
            leaves(tree.clone())
                .iter()
                .map(|event| {
                    let sign = if event.name == EventName::Press {
                        '+'
                    } else {
                        '-'
                    };
                    format!("{sign}{}", KeySpec::of_event(event).unwrap().label())
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(pictures, expect);
    for tree in planned.iter().filter(|tree| tree.name.is_key()) {
        assert!(
            held_after(tree).is_empty(),
            "{} leaves keys held",
            tree.label()
        );
    }
}

#[test]
fn a_chord_releases_its_keys_in_its_own_step() {
    // ctrl released before s: reduce puts `release s` in a tree of its own.
    check(
        keys(&[
            (0.0, "+ctrl", 0),
            (0.1, "+s", 0),
            (0.2, "-ctrl", 0),
            (0.3, "-s", 0),
        ]),
        &["+<ctrl> +s -<ctrl> -s"],
    );
}

#[test]
fn typing_with_capitals_is_one_step() {
    check(
        keys(&[
            (0.0, "+a", 0),
            (0.05, "-a", 0),
            (0.1, "+shift", 0),
            (0.15, "+B", 0),
            (0.2, "-B", 1),
            (0.25, "-shift", 1),
            (0.3, "+c", 1),
            (0.35, "-c", 1),
        ]),
        &["+a -a +<shift> +B -B -<shift> +c -c"],
    );
}

#[test]
fn keys_for_a_dialog_are_a_step_of_their_own() {
    // Ctrl+S opens the dialog before `s` comes up: the release still belongs
    // to the chord; the typing in the dialog waits for the dialog.
    check(
        keys(&[
            (0.0, "+ctrl", 0),
            (0.1, "+s", 0),
            (0.2, "-ctrl", 0),
            (0.5, "-s", 2),
            (1.0, "+x", 2),
            (1.1, "-x", 2),
        ]),
        &["+<ctrl> +s -<ctrl> -s", "+x -x"],
    );
}

#[test]
fn a_pointer_action_separates_typing() {
    check(
        [
            keys(&[(0.0, "+a", 0), (0.1, "-a", 0)]),
            vec![click(0.5, true), click(0.6, false)],
            keys(&[(1.0, "+b", 0), (1.1, "-b", 0)]),
        ]
        .concat(),
        &["+a -a", "singleclick", "+b -b"],
    );
}
