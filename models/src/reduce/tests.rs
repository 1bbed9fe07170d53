//! Tests of the reduction: every rule and its boundaries.

use super::*;

fn mv(t: f64, x: f64, y: f64) -> ActionEvent {
    let mut event = ActionEvent::new(EventName::Move, t);
    event.mouse_x = Some(x);
    event.mouse_y = Some(y);
    event
}

fn button(t: f64, x: f64, y: f64, which: MouseButton, pressed: bool) -> ActionEvent {
    let mut event = ActionEvent::new(EventName::Click, t);
    event.mouse_x = Some(x);
    event.mouse_y = Some(y);
    event.mouse_button_name = Some(which);
    event.mouse_pressed = Some(pressed);
    event
}

/// Left presses and releases at one place each: `(pressed, released, x, y)`.
fn clicks(at: &[(f64, f64, f64, f64)]) -> Vec<ActionEvent> {
    at.iter()
        .flat_map(|&(pressed, released, x, y)| [down(pressed, x, y), up(released, x, y)])
        .collect()
}

fn down(t: f64, x: f64, y: f64) -> ActionEvent {
    button(t, x, y, MouseButton::Left, true)
}

fn up(t: f64, x: f64, y: f64) -> ActionEvent {
    button(t, x, y, MouseButton::Left, false)
}

fn scroll(t: f64, x: f64, y: f64, dy: f64) -> ActionEvent {
    let mut event = ActionEvent::new(EventName::Scroll, t);
    event.mouse_x = Some(x);
    event.mouse_y = Some(y);
    event.mouse_dx = Some(0.0);
    event.mouse_dy = Some(dy);
    event
}

/// A key event; names longer than one character are named keys.
fn key(name: EventName, t: f64, key: &str) -> ActionEvent {
    let mut event = ActionEvent::key(name, t, key);
    event.key_vk = Some(38);
    event
}

fn press(t: f64, k: &str) -> ActionEvent {
    key(EventName::Press, t, k)
}

fn release(t: f64, k: &str) -> ActionEvent {
    key(EventName::Release, t, k)
}

/// A compact picture of a tree: `name(child child)` with key text in brackets.
fn shape(events: &[ActionEvent]) -> String {
    events
        .iter()
        .map(|event| {
            let mut out = event.name.as_str().to_owned();
            if event.name == EventName::Type {
                // A type's children are its key events; its text shows them.
                out.push_str(&format!("[{}]", event.text.as_deref().unwrap_or("")));
            } else if !event.children.is_empty() {
                out.push_str(&format!("({})", shape(&event.children)));
            }
            out
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn check(input: Vec<ActionEvent>, expect: &str) -> Vec<ActionEvent> {
    check_with(input, ReduceOptions::default(), expect)
}

fn check_with(input: Vec<ActionEvent>, options: ReduceOptions, expect: &str) -> Vec<ActionEvent> {
    let n_valid = input
        .iter()
        .filter(|event| !(event.is_raw_key() && event.key_vk == Some(0)))
        .count();
    let reduced = reduce(input.clone(), &options);
    assert_eq!(shape(&reduced), expect);
    // No event is ever dropped and no timestamp is rewritten: every valid raw
    // event appears in the trees exactly as it came in.
    let mut flattened = Vec::new();
    flatten(&reduced, &mut flattened);
    let valid = input
        .iter()
        .filter(|event| !(event.is_raw_key() && event.key_vk == Some(0)));
    for raw in valid {
        assert!(
            flattened.contains(raw),
            "raw event {raw:?} is in the trees unchanged"
        );
    }
    assert!(flattened.len() >= n_valid);
    assert_time_order(&reduced);
    reduced
}

fn flatten(events: &[ActionEvent], out: &mut Vec<ActionEvent>) {
    for event in events {
        let mut bare = event.clone();
        bare.children.clear();
        bare.text = None;
        out.push(bare);
        flatten(&event.children, out);
    }
}

fn assert_time_order(events: &[ActionEvent]) {
    for pair in events.windows(2) {
        assert!(
            pair[0].timestamp <= pair[1].timestamp,
            "top-level events stay in time order"
        );
    }
    for event in events {
        for pair in event.children.windows(2) {
            assert!(
                pair[0].timestamp <= pair[1].timestamp,
                "children stay in time order"
            );
        }
        assert_time_order(&event.children);
    }
}

#[test]
fn invalid_key_events_with_vk_zero_are_removed() {
    let mut bad = press(0.1, "x");
    bad.key_vk = Some(0);
    check(vec![press(0.0, "a"), bad, release(0.2, "a")], "type[a]");
}

#[test]
fn redundant_moves_become_children_of_the_next_kept_event() {
    let reduced = check(
        vec![
            mv(0.0, 1.0, 1.0),
            mv(0.1, 1.0, 1.0),
            mv(0.2, 5.0, 5.0),
            down(0.3, 5.0, 5.0),
            up(0.4, 5.0, 5.0),
        ],
        "singleclick(click(move move move) click)",
    );
    // The move at (5,5) is redundant with the press at the same position.
    assert_eq!(reduced[0].children[0].children.len(), 3);
}

#[test]
fn moves_at_distinct_positions_merge_into_one_move_at_the_last() {
    let reduced = check(
        vec![mv(0.0, 1.0, 1.0), mv(0.1, 2.0, 2.0), mv(0.2, 3.0, 4.0)],
        "move(move move move)",
    );
    assert_eq!(reduced[0].position(), Some((3.0, 4.0)));
    assert_eq!(
        reduced[0].timestamp, 0.0,
        "a parent takes its first child's timestamp"
    );
}

#[test]
fn a_single_move_passes_through() {
    check(vec![mv(0.0, 1.0, 1.0)], "move");
}

#[test]
fn trailing_redundant_moves_are_kept_under_the_last_kept_event() {
    check(
        vec![mv(0.0, 1.0, 1.0), mv(0.1, 2.0, 2.0), mv(0.2, 2.0, 2.0)],
        "move(move move)",
    );
    check(vec![mv(0.0, 2.0, 2.0), mv(0.1, 2.0, 2.0)], "move(move)");
}

#[test]
fn scroll_runs_merge_at_the_first_position_with_summed_deltas() {
    let reduced = check(
        vec![
            scroll(0.0, 10.0, 10.0, 1.0),
            scroll(0.1, 12.0, 12.0, 1.0),
            scroll(0.2, 14.0, 14.0, -3.0),
        ],
        "scroll(scroll scroll scroll)",
    );
    assert_eq!(reduced[0].position(), Some((10.0, 10.0)));
    assert_eq!(reduced[0].mouse_dy, Some(-1.0));
    check(vec![scroll(0.0, 1.0, 1.0, 1.0)], "scroll(scroll)");
}

#[test]
fn typed_text_is_one_type_parent() {
    let reduced = check(
        vec![
            press(0.0, "h"),
            release(0.1, "h"),
            press(0.2, "i"),
            release(0.3, "i"),
        ],
        "type[h-i]",
    );
    assert_eq!(reduced[0].children[0].text.as_deref(), Some("h"));
}

#[test]
fn a_chord_inside_typed_text_is_its_own_group() {
    check(
        vec![
            press(0.0, "a"),
            release(0.1, "a"),
            press(0.2, "ctrl"),
            press(0.3, "c"),
            release(0.4, "c"),
            release(0.5, "ctrl"),
            press(0.6, "b"),
            release(0.7, "b"),
        ],
        "type[a] type[<ctrl>-c] type[b]",
    );
}

#[test]
fn shifted_characters_form_a_chord_group() {
    check(
        vec![
            press(0.0, "shift"),
            press(0.1, "H"),
            release(0.2, "H"),
            release(0.3, "shift"),
            press(0.4, "i"),
            release(0.5, "i"),
        ],
        "type[<shift>-H] type[i]",
    );
}

#[test]
fn a_trailing_lone_key_event_is_kept() {
    // OpenAdapt drops this last release; Reprise keeps it as a group of one.
    check(
        vec![
            press(0.0, "ctrl"),
            press(0.1, "c"),
            release(0.2, "c"),
            release(0.3, "ctrl"),
            release(0.4, "x"),
        ],
        "type[<ctrl>-c] release",
    );
    check(vec![press(0.0, "a")], "press");
}

#[test]
fn auto_repeat_of_a_held_named_key_does_not_cut() {
    check(
        vec![
            press(0.0, "shift"),
            press(0.1, "shift"),
            press(0.2, "A"),
            release(0.3, "A"),
            release(0.4, "shift"),
        ],
        "type[<shift>-<shift>-A]",
    );
}

#[test]
fn key_run_broken_by_mouse_events_groups_separately() {
    check(
        vec![
            press(0.0, "a"),
            release(0.1, "a"),
            down(0.2, 1.0, 1.0),
            up(0.3, 1.0, 1.0),
            press(0.4, "b"),
            release(0.5, "b"),
        ],
        "type[a] singleclick(click click) type[b]",
    );
}

#[test]
fn double_click_exactly_at_the_interval_and_distance_is_fused() {
    check(
        clicks(&[(1.0, 1.1, 10.0, 10.0), (1.5, 1.6, 15.0, 5.0)]),
        "doubleclick(click click click click)",
    );
}

#[test]
fn double_click_one_pixel_past_the_distance_is_two_singleclicks() {
    check(
        clicks(&[(1.0, 1.1, 10.0, 10.0), (1.2, 1.3, 16.0, 10.0)]),
        "singleclick(click click) singleclick(click click)",
    );
}

#[test]
fn double_click_past_the_interval_is_two_singleclicks() {
    check(
        clicks(&[(1.0, 1.1, 10.0, 10.0), (1.501, 1.6, 10.0, 10.0)]),
        "singleclick(click click) singleclick(click click)",
    );
}

#[test]
fn the_recorded_double_click_settings_are_used() {
    let options = ReduceOptions {
        double_click: DoubleClickSettings {
            interval_seconds: 1.0,
            distance_pixels: 20.0,
        },
    };
    check_with(
        clicks(&[(1.0, 1.1, 10.0, 10.0), (1.9, 2.0, 30.0, 10.0)]),
        options,
        "doubleclick(click click click click)",
    );
}

#[test]
fn a_triple_click_is_a_doubleclick_then_a_singleclick() {
    check(
        clicks(&[
            (1.0, 1.05, 10.0, 10.0),
            (1.1, 1.15, 10.0, 10.0),
            (1.2, 1.25, 10.0, 10.0),
        ]),
        "doubleclick(click click click click) singleclick(click click)",
    );
}

#[test]
fn a_press_without_a_release_stays_a_raw_click() {
    check(vec![down(1.0, 10.0, 10.0)], "click");
    check(vec![up(1.0, 10.0, 10.0)], "click");
}

#[test]
fn a_drag_keeps_its_press_moves_and_release() {
    // The last move is at the release's position, so the release absorbs it.
    check(
        vec![
            down(0.0, 1.0, 1.0),
            mv(0.1, 5.0, 5.0),
            mv(0.2, 9.0, 9.0),
            up(0.3, 9.0, 9.0),
        ],
        "click move click(move)",
    );
}

#[test]
fn other_buttons_pass_through() {
    check(
        vec![
            button(0.0, 1.0, 1.0, MouseButton::Right, true),
            button(0.1, 1.0, 1.0, MouseButton::Right, false),
        ],
        "click click",
    );
}

#[test]
fn timestamps_are_never_compressed() {
    let reduced = check(
        vec![
            mv(0.0, 1.0, 1.0),
            mv(2.0, 2.0, 2.0),
            press(5.0, "a"),
            release(5.5, "a"),
            down(9.0, 3.0, 3.0),
            up(9.5, 3.0, 3.0),
        ],
        "move(move move) type[a] singleclick(click click)",
    );
    let times: Vec<f64> = reduced.iter().map(|event| event.timestamp).collect();
    assert_eq!(times, vec![0.0, 5.0, 9.0]);
    assert_eq!(reduced[2].children[1].timestamp, 9.5);
}

#[test]
fn parents_take_the_first_childs_links() {
    let mut first = press(0.0, "a");
    first.screenshot_id = Some(3);
    first.window_state_id = Some(1);
    let reduced = check(vec![first, release(0.1, "a")], "type[a]");
    assert_eq!(reduced[0].screenshot_id, Some(3));
    assert_eq!(reduced[0].window_state_id, Some(1));
}
