use accesskit::Role;
use reprise_models::Rect;
use reprise_models::element::{outline, parents};

use super::*;

/// A window with a table of five rows of 20 px in a view 100 px tall,
/// above a spin button; the middle row's cell holds `inside` (if any), as
/// a cell that edits a number holds a spin button.
fn window(inside: Option<Role>) -> A11yTree {
    let mut rows = vec![
        (0, Role::Window, "Pick", (0, 0, 400, 300)),
        (1, Role::Table, "", (10, 10, 200, 100)),
    ];
    for row in 0..5 {
        rows.push((2, Role::Cell, "Anne Berg", (10, 10 + 20 * row, 200, 20)));
        if let Some(role) = inside.filter(|_| row == 2) {
            rows.push((3, role, "Amount", (10, 50, 200, 20)));
        }
    }
    rows.push((1, Role::SpinButton, "Count", (10, 150, 100, 20)));
    outline(&rows)
}

#[test]
fn the_wheel_turns_over_the_view_and_never_over_what_takes_the_wheel() {
    let live = window(None);
    let view = 1;
    assert_eq!(
        wheel_point(&live, &parents(&live), view, live.nodes[1].rect.unwrap()),
        Some((110.0, 60.0))
    );
    // A spin button in the middle row: the wheel would change its value
    // there, so the row above is chosen.
    let live = window(Some(Role::SpinButton));
    assert_eq!(
        wheel_point(&live, &parents(&live), view, live.nodes[1].rect.unwrap()),
        Some((110.0, 40.0))
    );
    // A plain label there lets the wheel through.
    let live = window(Some(Role::Label));
    assert_eq!(
        wheel_point(&live, &parents(&live), view, live.nodes[1].rect.unwrap()),
        Some((110.0, 60.0))
    );
    // A view outside the window, or covered everywhere by a nested list:
    // none.
    let live = window(None);
    assert_eq!(
        wheel_point(&live, &parents(&live), view, Rect::new(500, 500, 10, 10)),
        None,
        "outside the window"
    );
    let live = outline(&[
        (0, Role::Window, "Pick", (0, 0, 400, 300)),
        (1, Role::ScrollView, "", (10, 10, 200, 100)),
        (2, Role::List, "", (10, 10, 200, 100)),
    ]);
    assert_eq!(
        wheel_point(&live, &parents(&live), 1, live.nodes[1].rect.unwrap()),
        None
    );
}

#[test]
fn the_shortfall_brings_the_element_inside_the_view_with_a_margin() {
    let view = Rect::new(0, 100, 200, 100);
    let row = |top| Rect::new(0, top, 200, 20);
    // Showing: nothing to travel.
    assert_eq!(shortfall(row(100), view), (0, 0));
    assert_eq!(shortfall(row(180), view), (0, 0));
    // Below the view: up until its bottom is a row above the view's.
    assert_eq!(shortfall(row(300), view), (0, -140));
    // Partly below.
    assert_eq!(shortfall(row(190), view), (0, -30));
    // Above: down until its top is a row below the view's top.
    assert_eq!(shortfall(row(40), view), (0, 80));
    // Taller than the view: its start shows, whichever side it is on.
    let tall = |top| Rect::new(0, top, 200, 150);
    assert_eq!(shortfall(tall(300), view), (0, -200));
    assert_eq!(shortfall(tall(-100), view), (0, 200));
    // To the right of a narrow view: leftwards.
    let narrow = Rect::new(0, 100, 100, 100);
    assert_eq!(shortfall(Rect::new(150, 120, 40, 20), narrow), (-115, 0));
}

#[test]
fn notches_are_learned_from_the_last_turn_and_bounded() {
    let row = Rect::new(0, 300, 200, 20);
    let guess = PerNotch::guess(row);
    assert_eq!(guess, PerNotch { x: -60.0, y: 60.0 });
    // 240 px to go up: 4 notches down at the guess.
    assert_eq!(guess.notches((0, -240)), (0, -4));
    // They moved it 116 px: 29 px a notch (GTK's, for a view of 160 px);
    // the 124 px left take 5 more.
    let learned = guess.learned((0, -4), (0, -116)).unwrap();
    assert_eq!(learned, PerNotch { x: -60.0, y: 29.0 });
    assert_eq!(learned.notches((0, -124)), (0, -5));
    // A toolkit that scrolls the other way learns a negative notch and
    // turns the wheel the other way.
    let inverted = guess.learned((0, -4), (0, 116)).unwrap();
    assert_eq!(inverted.notches((0, -124)), (0, 5));
    // A turn that did not move it: stuck.
    assert_eq!(guess.learned((0, -4), (0, 0)), Err(Stuck));
    // An axis not turned keeps its guess; a far target is bounded.
    assert_eq!(learned.notches((-600, 0)), (10, 0));
    assert_eq!(learned.notches((0, -100_000)), (0, -30));
}

#[test]
fn a_turn_is_said_in_notches_and_directions() {
    assert_eq!(turn_words((0, -3)), "3 notches down");
    assert_eq!(turn_words((1, 2)), "1 notch right and 2 notches up");
}
