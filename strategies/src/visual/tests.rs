//! The visual strategy's structural rung through the real replay loop, on a
//! scripted desktop that answers with accessibility trees: a found target,
//! a refusal, a poor tree with the visual rung off, and an effect that did
//! not come.

use accesskit::Role;
use image::RgbaImage;
use reprise_models::element::outline;
use reprise_models::{A11yTree, ActionEvent, ElementState, EventName, MouseButton, Rect};

use super::*;
use crate::StepRecord;
use crate::describe::{DescribeError, Describer};
use crate::scripted::ScriptedDesktop;
use crate::settle::SettleOptions;
use crate::vision::VisionError;
use crate::vision::{Segment, Segmenter};
use crate::{ReplayOptions, ReplayOutcome};

/// Segments nothing: these tests never reach the visual rung's pixels.
struct NoSegments;

impl Segmenter for NoSegments {
    fn cache_name(&self) -> String {
        "none".into()
    }

    fn segment(&self, _image: &RgbaImage) -> Result<Vec<Segment>, VisionError> {
        Ok(Vec::new())
    }
}

struct NoDescriptions;

impl Describer for NoDescriptions {
    fn name(&self) -> &'static str {
        "none"
    }

    fn describe(
        &mut self,
        _window: &RgbaImage,
        segments: &[Segment],
    ) -> Result<Vec<Description>, DescribeError> {
        assert!(segments.is_empty());
        Ok(Vec::new())
    }
}

/// A list of `(name, city)` rows: the first cell of row `k` is at
/// (10, 10 + 20k), 60x18.
fn list(rows: &[(&str, &str)], selected: Option<usize>) -> A11yTree {
    let mut outline_rows = vec![
        (0, Role::Dialog, "Customers", (0, 0, 200, 100)),
        (1, Role::Table, "", (5, 5, 190, 90)),
    ];
    for (row, (name, city)) in rows.iter().enumerate() {
        let top = 10 + 20 * row as i32;
        outline_rows.push((2, Role::Cell, *name, (10, top, 60, 18)));
        outline_rows.push((2, Role::Cell, *city, (80, top, 60, 18)));
    }
    let mut tree = outline(&outline_rows);
    tree.app = "zenity".into();
    if let Some(row) = selected {
        tree.nodes[2 + 2 * row].states.push(ElementState::Selected);
    }
    tree
}

/// A recorded click on the name cell of row `row` of `rows`, 5 px into it.
fn recorded_click(rows: &[(&str, &str)], row: usize) -> PlannedStep {
    let tree = list(rows, Some(row));
    let mut element = reprise_models::identity_of(&tree, "zenity", 2 + 2 * row as u32).unwrap();
    element.states = vec![ElementState::Selected];
    let (x, y) = (15.0, f64::from(10 + 20 * row as i32) + 5.0);
    let button = |timestamp: f64, pressed: bool| {
        let mut event = ActionEvent::new(EventName::Click, timestamp);
        (event.mouse_x, event.mouse_y) = (Some(x), Some(y));
        event.mouse_button_name = Some(MouseButton::Left);
        event.mouse_pressed = Some(pressed);
        event
    };
    let mut press = button(0.0, true);
    press.element = Some(Box::new(element));
    let mut click = ActionEvent::new(EventName::Singleclick, 0.0);
    (click.mouse_x, click.mouse_y) = (Some(x), Some(y));
    click.mouse_button_name = Some(MouseButton::Left);
    click.children = vec![press, button(0.1, false)];
    PlannedStep {
        tree: click,
        target: Target::AsRecorded,
        expects_change: false,
    }
}

const ROWS: &[(&str, &str)] = &[("Maria Olsen", "Bergen"), ("Maria Olsen", "Tromsø")];

/// Replays `step` against the trees the desktop answers with; returns the
/// outcome, the pointer moves and how many trees were asked for.
fn check_replay(
    step: PlannedStep,
    trees: Vec<A11yTree>,
    rungs: Rungs,
) -> (ReplayOutcome, Vec<(f64, f64)>, usize) {
    let (outcome, desktop, _) = replay_with(step, no_pixels(), trees, rungs, 1);
    (outcome, moves(&desktop), desktop.tree_requests.len())
}

/// Where the pointer was moved, in order.
fn moves(desktop: &ScriptedDesktop) -> Vec<(f64, f64)> {
    desktop
        .injected
        .iter()
        .filter_map(|action| match action {
            Action::MoveTo { x, y } => Some((*x, *y)),
            _ => None,
        })
        .collect()
}

/// A vision that segments and describes nothing (for the structural rung).
fn no_pixels() -> Vision {
    Vision {
        segmenter: Box::new(NoSegments),
        describer: Box::new(NoDescriptions),
        cache: None,
        stats: VisualStats::default(),
    }
}

/// Replays `step` with `vision` on a desktop showing the window
/// "Customers" and answering with `trees`; returns the outcome, the desktop
/// and the step's records.
fn replay_with(
    step: PlannedStep,
    vision: Vision,
    trees: Vec<A11yTree>,
    rungs: Rungs,
    max_retries: u32,
) -> (ReplayOutcome, ScriptedDesktop, Vec<StepRecord>) {
    let mut desktop = ScriptedDesktop::new().with_window("Customers", Rect::new(0, 0, 200, 100));
    desktop.trees = trees.into();
    replay_on(step, vision, desktop, rungs, max_retries)
}

/// The recorded click on the Tromsø row replayed by the tree alone on
/// `trees`, refused: why, and the desktop.
fn refused_click(trees: Vec<A11yTree>, max_retries: u32) -> (String, ScriptedDesktop) {
    let step = recorded_click(ROWS, 1);
    let (outcome, desktop, _) =
        replay_with(step, no_pixels(), trees, Rungs::default(), max_retries);
    let reason = outcome.failure().unwrap_or_else(|| panic!("{outcome:?}"));
    (reason.to_owned(), desktop)
}

/// [`replay_with`] on a desktop of the caller's.
fn replay_on(
    step: PlannedStep,
    vision: Vision,
    mut desktop: ScriptedDesktop,
    rungs: Rungs,
    max_retries: u32,
) -> (ReplayOutcome, ScriptedDesktop, Vec<StepRecord>) {
    let mut strategy = VisualStrategy::new(vec![step], vision, 1.0).with_rungs(rungs);
    let options = ReplayOptions {
        max_retries,
        settle: SettleOptions {
            timeout: std::time::Duration::from_millis(50),
            ..Default::default()
        },
        ..Default::default()
    };
    let (outcome, records) = desktop.replay(&mut strategy, &options, &|| false);
    (outcome, desktop, records)
}

#[test]
fn the_recorded_row_is_clicked_where_it_is_now() {
    // Rows inserted above: the Tromsø row is now the fourth, and selected
    // after the click.
    let now = &[
        ("Per Hansen", "Oslo"),
        ("Maria Olson", "Tromsø"),
        ("Maria Olsen", "Bergen"),
        ("Maria Olsen", "Tromsø"),
    ];
    let (outcome, moves, requests) = check_replay(
        recorded_click(ROWS, 1),
        vec![list(now, None), list(now, Some(3))],
        Rungs::default(),
    );
    // Verified: the row is selected after the click, as recorded.
    assert_eq!(outcome, ReplayOutcome::completed(1, 0));
    // The same place inside the cell: 5 px right and down of its corner.
    assert_eq!(moves, [(15.0, 75.0)]);
    // One tree to decide, one to re-check what is at the point just before
    // the press (the scripted desktop's hit-testing names nothing), one to
    // check the effect.
    assert_eq!(requests, 3);
}

#[test]
fn a_click_on_the_cell_that_already_had_the_focus_is_verified_by_its_focus() {
    // A spreadsheet: Enter moved the focus to the next cell before the
    // person clicked it, so the screen did not change at the click, though
    // the recording's frames show a change there. The focus says it is done.
    let mut step = recorded_click(ROWS, 1);
    step.expects_change = true;
    for event in &mut step.tree.children {
        if let Some(element) = event.element.as_mut() {
            element.states = vec![ElementState::Focused];
        }
    }
    let focused = || {
        let mut tree = list(ROWS, None);
        tree.nodes[4].states.push(ElementState::Focused);
        tree
    };
    let (outcome, moves, _) = check_replay(step, vec![focused(), focused()], Rungs::default());
    assert_eq!(outcome, ReplayOutcome::completed(1, 0));
    assert_eq!(moves, [(15.0, 35.0)]);
}

#[test]
fn twins_are_refused_and_nothing_is_injected() {
    let twins = &[("Maria Olsen", "Tromsø"), ("Maria Olsen", "Tromsø")];
    let (outcome, moves, _) = check_replay(
        recorded_click(ROWS, 1),
        vec![list(twins, None)],
        Rungs::default(),
    );
    let reason = outcome.failure().unwrap_or_else(|| panic!("{outcome:?}"));
    assert!(reason.starts_with("refused: 2 elements fit"), "{reason}");
    assert!(moves.is_empty());
}

#[test]
fn a_row_not_yet_in_the_list_is_looked_for_again_within_the_attempts() {
    // The list is still filling when the step comes: its first tree lacks
    // the row. The next attempt finds it, and nothing was clicked before.
    let filling = &ROWS[..1];
    let (outcome, moves, requests) = check_replay(
        recorded_click(ROWS, 1),
        vec![list(filling, None), list(ROWS, None), list(ROWS, Some(1))],
        Rungs::default(),
    );
    assert_eq!(outcome, ReplayOutcome::completed(1, 0));
    assert_eq!(moves, [(15.0, 35.0)]);
    // Two to decide, one to re-check before the press, one for the effect.
    assert_eq!(requests, 4);
    // Without a retry left, the step fails with the reason, and nothing is
    // clicked: never the row that took its place.
    let (reason, desktop) = refused_click(vec![list(filling, None)], 0);
    assert!(reason.contains("Maria Olsen"), "{reason}");
    assert!(desktop.injected.is_empty(), "{:?}", desktop.injected);
}

#[test]
fn with_the_visual_rung_off_a_window_without_a_tree_fails_clearly() {
    let structural_only = Rungs {
        structural: true,
        visual: false,
    };
    let (outcome, moves, requests) =
        check_replay(recorded_click(ROWS, 1), Vec::new(), structural_only);
    let reason = outcome.failure().unwrap_or_else(|| panic!("{outcome:?}"));
    assert!(
        reason.contains("exposes no usable accessibility tree"),
        "{reason}"
    );
    assert!(moves.is_empty());
    // Asked again on the retry.
    assert_eq!(requests, 2);
}

#[test]
fn a_row_left_unselected_after_the_click_fails_the_step() {
    // The click went nowhere: the row is found but never selected.
    let (outcome, moves, _) = check_replay(
        recorded_click(ROWS, 1),
        vec![list(ROWS, None)],
        Rungs::default(),
    );
    let reason = outcome.failure().unwrap_or_else(|| panic!("{outcome:?}"));
    assert!(
        reason
            .contains(r#"table cell "Maria Olsen" (row: Tromsø) is not selected after the click"#),
        "{reason}"
    );
    // Tried twice (one retry), both at the row.
    assert_eq!(moves, [(15.0, 35.0), (15.0, 35.0)]);
}

#[test]
fn with_the_structural_rung_off_no_tree_is_asked_for() {
    let visual_only = Rungs {
        structural: false,
        visual: true,
    };
    let (_, _, requests) =
        check_replay(recorded_click(ROWS, 1), vec![list(ROWS, None)], visual_only);
    assert_eq!(requests, 0);
}

/// A window titled `title` of application `app`.
fn window_state(title: &str, app: &str) -> WindowState {
    WindowState {
        id: 0,
        timestamp: 0.0,
        title: title.into(),
        app_class: app.into(),
        pid: None,
        window_id: 1,
        rect: Rect::new(0, 0, 10, 10),
        a11y: None,
        command: None,
    }
}

#[test]
fn keys_and_presses_act_only_in_the_window_they_were_recorded_in() {
    let window = window_state;
    let recorded = window("Save as...", "FeatherPad");
    let cases: &[(Option<(&str, &str)>, bool)] = &[
        (Some(("Save as...", "FeatherPad")), true),
        (Some(("*Save as...", "FeatherPad")), true),
        (Some(("*Untitled", "FeatherPad")), false),
        (Some(("Save as...", "Gedit")), false),
        (None, false),
    ];
    for &(live, expect) in cases {
        let live = live.map(|(title, app)| window(title, app));
        for what in [InWindow::Keys, InWindow::Press] {
            assert_eq!(
                window_check(&recorded, live.as_ref(), what).is_ok(),
                expect,
                "{live:?}"
            );
        }
    }
    let other = window("*Untitled", "FeatherPad");
    assert_eq!(
        window_check(&recorded, Some(&other), InWindow::Press)
            .unwrap_err()
            .to_string(),
        r#"the press was made in "Save as..." (FeatherPad), but "*Untitled" (FeatherPad) is the active window"#
    );
}

#[test]
fn a_replay_that_ends_in_another_window_than_the_recording_is_not_verified() {
    let window = window_state;
    let saved = window("sheet.ods - LibreOffice Calc", "libreoffice-calc");
    let error = window("LibreOffice 7.4", "Soffice");
    assert_eq!(
        final_window_differs(Some(&saved), Some(&error)).as_deref(),
        Some(
            r#"the recording ended with "sheet.ods - LibreOffice Calc" (libreoffice-calc) active, the replay with "LibreOffice 7.4" (Soffice)"#
        )
    );
    let modified = window("*sheet.ods - LibreOffice Calc", "libreoffice-calc");
    assert_eq!(final_window_differs(Some(&saved), Some(&modified)), None);
    assert_eq!(final_window_differs(Some(&saved), None), None);
}

/// Look-alike boxes of 60×18 px with these top-left corners, described
/// with the label given.
struct BoxesAt(&'static [(u32, u32)]);

impl Segmenter for BoxesAt {
    fn cache_name(&self) -> String {
        "boxes".into()
    }

    fn segment(&self, _image: &RgbaImage) -> Result<Vec<Segment>, VisionError> {
        Ok(self
            .0
            .iter()
            .enumerate()
            .filter_map(|(id, &(x, y))| {
                let rect = crate::vision::PixelRect {
                    x,
                    y,
                    width: 60,
                    height: 18,
                };
                let mut segment = Segment::full(crate::vision::SegmentKind::Region, rect)?;
                segment.id = id;
                Some(segment)
            })
            .collect())
    }
}

/// Describes the segments with these (text, label)s in turn.
struct Described(Vec<(&'static str, &'static str)>);

impl Describer for Described {
    fn name(&self) -> &'static str {
        "described"
    }

    fn describe(
        &mut self,
        _window: &RgbaImage,
        segments: &[Segment],
    ) -> Result<Vec<Description>, DescribeError> {
        Ok(segments
            .iter()
            .zip(self.0.iter().cycle())
            .map(|(_, &(text, label))| Description {
                text: text.into(),
                role: "box".into(),
                label: label.into(),
            })
            .collect())
    }
}

/// The first of two look-alike boxes, labelled `label`, looked for in
/// `area`.
fn first_of_two_boxes(label: &str, area: Area) -> Target {
    Target::Element {
        fingerprint: Fingerprint {
            description: Description {
                text: "box".into(),
                role: "box".into(),
                label: label.into(),
            },
            crop: RgbaImage::new(60, 18),
            nth: 0,
            n_same: 2,
        },
        window_rect: crate::vision::PixelRect {
            x: 10,
            y: 20,
            width: 60,
            height: 18,
        },
        press: (0.5, 0.5),
        area,
    }
}

/// `step` with its element's band forgotten (a list item alone in its row):
/// its look-alikes are told apart by their place.
fn unbanded(mut step: PlannedStep) -> PlannedStep {
    for event in &mut step.tree.children {
        if let Some(element) = event.element.as_mut() {
            element.band.clear();
        }
    }
    step
}

/// A vision that sees two look-alike boxes labelled `label`, side by side.
fn two_boxes(label: &'static str) -> Vision {
    boxes_at(&[(10, 20), (100, 20)], label)
}

/// A vision that sees boxes at `corners`, labelled `label`.
fn boxes_at(corners: &'static [(u32, u32)], label: &'static str) -> Vision {
    Vision {
        segmenter: Box::new(BoxesAt(corners)),
        describer: Box::new(Described(vec![("box", label)])),
        cache: None,
        stats: VisualStats::default(),
    }
}

/// A press recorded in a popup (a menu, a list) is looked for in the
/// pixels of the popup showing now, and made there: not at the same place
/// in the active window. With no popup showing, the step waits for one
/// (bounded), then fails, pressing nothing.
#[test]
fn a_press_in_a_popup_is_found_in_the_popup_showing_now() {
    let run = |popups: Vec<Rect>| {
        let mut step = unbanded(recorded_click(ROWS, 1));
        step.target = first_of_two_boxes("maria olsen", Area::Popup);
        let mut desktop =
            ScriptedDesktop::new().with_window("Customers", Rect::new(0, 0, 200, 100));
        desktop.popups = popups;
        let (outcome, desktop, _) = replay_on(
            step,
            two_boxes("maria olsen"),
            desktop,
            Rungs {
                structural: false,
                visual: true,
            },
            0,
        );
        (outcome, moves(&desktop))
    };
    // The popup below and right of the window's origin; a tooltip-sized
    // one under it is not the topmost.
    let (outcome, presses) = run(vec![Rect::new(20, 30, 170, 60), Rect::new(0, 0, 10, 10)]);
    assert!(
        !matches!(outcome, ReplayOutcome::Failed { .. }),
        "{outcome:?}"
    );
    // The first box's middle (40, 29) in the popup's pixels.
    assert_eq!(presses, [(60.5, 59.5)]);
    let (outcome, presses) = run(Vec::new());
    assert!(
        matches!(&outcome, ReplayOutcome::Failed { reason, .. } if reason.contains("none is showing")),
        "{outcome:?}"
    );
    assert!(presses.is_empty(), "{presses:?}");
}

#[test]
fn pixels_found_at_a_named_elements_place_must_read_as_its_name() {
    // The recording named the press "Maria Olsen" (its tree did); the live
    // window has no tree, and two look-alike boxes, the first at the
    // recorded place.
    let run = |label: &'static str| {
        let mut step = unbanded(recorded_click(ROWS, 1));
        step.target = first_of_two_boxes(label, Area::Window);
        let (outcome, desktop, records) =
            replay_with(step, two_boxes(label), vec![], Rungs::default(), 0);
        let pressed = desktop
            .injected
            .iter()
            .any(|action| matches!(action, Action::ButtonDown { .. }));
        (outcome, pressed, records)
    };
    // What the pixels read is not the name: refused, nothing pressed; the
    // step's record says what it looked for, where it was recorded, and
    // what it saw instead (the box it did not take, on the screen).
    for other in ["", "maria olson", "per hansen"] {
        let (outcome, pressed, records) = run(other);
        assert!(
            matches!(&outcome, ReplayOutcome::Failed { reason, .. } if reason.contains("refusing to act on something else")),
            "{other:?}: {outcome:?}"
        );
        assert!(!pressed, "{other:?}");
        let sought = records[0].sought.as_ref().expect("what the step sought");
        assert_eq!(sought.description.as_deref(), Some("box"));
        assert!(sought.recorded_point.is_some() && sought.recorded_rect.is_some());
        assert_eq!(sought.candidates.len(), 1, "{sought:?}");
        assert_eq!(sought.candidates[0].measure, "text");
        assert_eq!(sought.candidates[0].rect, Some(Rect::new(10, 20, 60, 18)));
    }
    // It reads as the name: pressed, and nothing is left over from the
    // failed search.
    let (_, pressed, records) = run("maria olsen");
    assert!(pressed);
    assert!(records[0].sought.as_ref().unwrap().candidates.is_empty());
}

/// A form of labelled entries, top to bottom (a label, then its entry, on
/// each row), the focus on entry `focused`.
fn form(fields: &[&str], focused: usize) -> A11yTree {
    let mut rows = vec![(0, Role::Dialog, "Customers", (0, 0, 200, 100))];
    for (row, label) in fields.iter().enumerate() {
        let top = 10 + 30 * row as i32;
        rows.push((1, Role::Label, *label, (10, top, 50, 18)));
        rows.push((1, Role::TextInput, "", (70, top, 100, 18)));
    }
    let mut tree = outline(&rows);
    tree.app = "zenity".into();
    tree.nodes[2 + 2 * focused]
        .states
        .push(ElementState::Focused);
    tree
}

/// "a" typed into entry `field` of `fields`, which had the focus.
fn recorded_typing(fields: &[&str], field: usize) -> PlannedStep {
    let tree = form(fields, field);
    let element = reprise_models::identity_of(&tree, "zenity", 2 + 2 * field as u32).unwrap();
    let key = |name: EventName, timestamp: f64| {
        let mut event = ActionEvent::new(name, timestamp);
        event.key_char = Some("a".into());
        event
    };
    let mut press = key(EventName::Press, 0.0);
    press.element = Some(Box::new(element));
    let mut typed = ActionEvent::new(EventName::Type, 0.0);
    typed.children = vec![press, key(EventName::Release, 0.05)];
    PlannedStep {
        tree: typed,
        target: Target::AsRecorded,
        expects_change: false,
    }
}

/// Replays "a" typed into the Name field of a form, against `trees`:
/// the outcome, how many keys went down, and the step records.
fn type_a_into_name(
    trees: Vec<A11yTree>,
    max_retries: u32,
) -> (ReplayOutcome, usize, Vec<StepRecord>) {
    let (outcome, desktop, records) = replay_with(
        recorded_typing(&["Name", "City"], 0),
        no_pixels(),
        trees,
        Rungs::default(),
        max_retries,
    );
    let keys = desktop
        .injected
        .iter()
        .filter(|action| matches!(action, Action::KeyDown { .. }))
        .count();
    (outcome, keys, records)
}

/// After its keys, the field they were typed into is read in the live tree:
/// holding what they typed (after what it held) verifies the step; not
/// holding it fails the step, and the keys are not typed a second time; a
/// tree that does not give the field's text leaves the check to the pixels.
#[test]
fn typed_keys_are_checked_against_the_text_their_field_holds() {
    let run = |after: Option<&str>| {
        let mut holds = form(&["Name", "City"], 0);
        holds.nodes[2].value = after.map(str::to_owned);
        type_a_into_name(vec![form(&["Name", "City"], 0), holds], 1)
    };
    let (outcome, keys, records) = run(Some("xa"));
    assert!(
        matches!(outcome, ReplayOutcome::Completed { unverified: 0, .. }),
        "{outcome:?}"
    );
    assert_eq!(keys, 1);
    assert_eq!(
        records[0].check.as_deref(),
        Some(r#"text field (label: Name) holds "a", as typed"#)
    );
    let (outcome, keys, _) = run(Some("x"));
    let ReplayOutcome::Failed { reason, .. } = &outcome else {
        panic!("{outcome:?}");
    };
    assert!(
        reason.contains(
            r#"text field (label: Name) holds "x" after the keys, without the "a" they typed"#
        ),
        "{reason}"
    );
    assert_eq!(keys, 1, "typed once, not again");
    let (outcome, _, records) = run(None);
    assert!(
        matches!(outcome, ReplayOutcome::Completed { unverified: 1, .. }),
        "{outcome:?}"
    );
    assert_ne!(records[0].check.as_deref(), None);
}

#[test]
fn keys_are_never_typed_into_a_field_other_than_the_one_typed_into() {
    let typed = |live: A11yTree| type_a_into_name(vec![live], 0);
    // The recorded field has the focus: typed.
    let (outcome, keys, _) = typed(form(&["Name", "City"], 0));
    assert!(
        matches!(outcome, ReplayOutcome::Completed { .. }),
        "{outcome:?}"
    );
    assert!(keys > 0);
    // The fields swapped places and the focus is on the first, City: the
    // keys for Name are not typed at all.
    let (outcome, keys, records) = typed(form(&["City", "Name"], 0));
    let ReplayOutcome::Failed { reason, .. } = &outcome else {
        panic!("{outcome:?}");
    };
    assert!(
        reason.contains(r#"the keys are for text field (label: Name), but the text field of "City" has the focus"#),
        "{reason}"
    );
    assert_eq!(keys, 0, "{:?}", records[0].errors);
    // What the step was after, for the report: the field, and its box.
    let sought = records[0].sought.as_ref().unwrap();
    assert_eq!(
        sought.description.as_deref(),
        Some("text field (label: Name)")
    );
    assert_eq!(sought.recorded_rect, Some(Rect::new(70, 10, 100, 18)));
    // No field reports the focus: the tree cannot tell, and the keys go as
    // recorded (the window check still holds them to their window).
    let mut unfocused = form(&["City", "Name"], 0);
    for node in &mut unfocused.nodes {
        node.states.clear();
    }
    let (_, keys, _) = typed(unfocused);
    assert!(keys > 0);
}

/// The visual rung cross-checks the structural one: where the pixels see
/// the target surely (the only box that reads as it) somewhere apart from
/// the element the tree found (a tree whose boxes are stale), the step is
/// refused and nothing pressed; where they agree, or cannot tell
/// look-alikes apart, the tree's element is pressed.
#[test]
fn where_the_pixels_surely_see_the_target_apart_from_the_trees_element_the_step_is_refused() {
    // Rows in the pixels: "Maria Olsen" then "Tromsø" on each line.
    let run = |corners: &'static [(u32, u32)]| {
        let mut step = recorded_click(ROWS, 1);
        step.target = first_of_two_boxes("maria olsen", Area::Window);
        if let Target::Element { fingerprint, .. } = &mut step.target {
            fingerprint.n_same = corners.len() / 2;
        }
        let vision = Vision {
            segmenter: Box::new(BoxesAt(corners)),
            describer: Box::new(Described(vec![("box", "maria olsen"), ("text", "tromsø")])),
            cache: None,
            stats: VisualStats::default(),
        };
        let (outcome, desktop, records) = replay_with(
            step,
            vision,
            vec![list(ROWS, None), list(ROWS, Some(1))],
            Rungs::default(),
            0,
        );
        let reason = records[0].step.as_ref().map(|step| step.reason.clone());
        (outcome, moves(&desktop), reason)
    };
    // The tree's cell is at (10, 30) 60×18.
    let (outcome, presses, reason) = run(&[(12, 28), (80, 28)]);
    assert!(
        matches!(outcome, ReplayOutcome::Completed { .. }),
        "{outcome:?}"
    );
    assert_eq!(presses, [(15.0, 35.0)]);
    assert!(reason.unwrap().ends_with("; the pixels agree"));
    let (outcome, presses, _) = run(&[(100, 60), (170, 60)]);
    assert!(
        matches!(&outcome, ReplayOutcome::Failed { reason, .. }
            if reason.contains("the pixels find the target elsewhere")
                && reason.contains("at (100, 60) 60×18")
                && reason.contains("they disagree")),
        "{outcome:?}"
    );
    assert!(presses.is_empty(), "{presses:?}");
    // Two rows the pixels cannot tell apart: they have no answer, and the
    // tree's identity decides.
    let (outcome, presses, reason) = run(&[(100, 60), (170, 60), (100, 80), (170, 80)]);
    assert!(
        matches!(outcome, ReplayOutcome::Completed { .. }),
        "{outcome:?}"
    );
    assert_eq!(presses, [(15.0, 35.0)]);
    assert!(!reason.unwrap().contains("pixels"));
}

/// The cross-check's short way: the pixels on the tree element's own line
/// agree where a text starting in its box reads as its name and the rest of
/// its row reads on the line; a namesake's line, a line elsewhere, or a text
/// that only contains the name do not.
#[test]
fn the_pixels_agree_on_the_elements_line_only_with_its_name_in_its_box_and_its_row_beside() {
    let tree = list(ROWS, None);
    let cell = reprise_models::identity_of(&tree, "zenity", 4).unwrap();
    assert_eq!(cell.band, ["Tromsø"]);
    let structural = Rect::new(10, 30, 60, 18);
    let check = |element: &ElementIdentity, line: &[(Rect, &str)], expect: bool| {
        let line: Vec<(Rect, String)> = line
            .iter()
            .map(|(rect, text)| (*rect, (*text).to_owned()))
            .collect();
        assert_eq!(
            line_agrees(element, &structural, &line),
            expect,
            "{} on {line:?}",
            element.label()
        );
    };
    let name = |top| Rect::new(12, top, 50, 14);
    let city = |top| Rect::new(82, top, 40, 14);
    check(
        &cell,
        &[(name(32), "maria olsen"), (city(32), "tromse")],
        true,
    );
    check(
        &cell,
        &[(Rect::new(12, 32, 120, 14), "maria olsen tromse")],
        true,
    );
    check(
        &cell,
        &[(name(32), "maria olsen"), (city(32), "bergen")],
        false,
    );
    check(&cell, &[(name(32), "maria olsen")], false);
    check(
        &cell,
        &[(name(52), "maria olsen"), (city(52), "tromse")],
        false,
    );
    check(
        &cell,
        &[(name(32), "maria olson"), (city(32), "tromse")],
        false,
    );
    check(
        &cell,
        &[(Rect::new(2, 32, 130, 14), "x maria olsen tromse")],
        false,
    );
    // In the row's padding (GTK's), but not further left.
    check(
        &cell,
        &[(Rect::new(3, 32, 120, 14), "maria olsen tromse")],
        true,
    );
    check(
        &cell,
        &[(Rect::new(0, 32, 120, 14), "maria olsen tromse")],
        false,
    );
    let ok = ElementIdentity {
        role: Role::Button,
        name: Some("OK".into()),
        band: Vec::new(),
        ordinal: None,
        ..cell.clone()
    };
    check(&ok, &[(Rect::new(20, 32, 20, 14), "ok")], true);
    check(
        &ok,
        &[(Rect::new(12, 32, 100, 14), "click ok to go on")],
        false,
    );
    check(&ok, &[(Rect::new(90, 32, 20, 14), "ok")], false);
    let unnamed = ElementIdentity { name: None, ..ok };
    check(&unnamed, &[(Rect::new(20, 32, 20, 14), "ok")], false);
}

/// Pixels alone, a row's namesakes: the recorded cell "Maria Olsen" of the
/// Tromsø row was the first of two look-alikes; now the rows are re-sorted.
/// Its row's other cell, read on its line, tells which one it is; where no
/// line shows it, the step is refused rather than taken by place, and a
/// namesake alone is not taken either.
#[test]
fn a_row_members_look_alikes_are_told_apart_by_the_rest_of_their_row_not_their_place() {
    let run = |labels: &'static [(&'static str, &'static str)]| {
        let mut step = recorded_click(ROWS, 1);
        step.target = first_of_two_boxes("maria olsen", Area::Window);
        let vision = Vision {
            segmenter: Box::new(BoxesAt(&[(10, 20), (80, 20), (10, 40), (80, 40)])),
            describer: Box::new(Described(labels.to_vec())),
            cache: None,
            stats: VisualStats::default(),
        };
        let pixels_only = Rungs {
            structural: false,
            visual: true,
        };
        let (outcome, desktop, _) = replay_with(step, vision, vec![], pixels_only, 0);
        (outcome, moves(&desktop))
    };
    // Refused, nothing pressed.
    let refused = |labels| {
        let (outcome, presses) = run(labels);
        assert!(
            matches!(&outcome, ReplayOutcome::Failed { reason, .. } if reason.contains("refusing to guess")),
            "{outcome:?}"
        );
        assert!(presses.is_empty(), "{presses:?}");
    };
    let (outcome, presses) = run(&[
        ("box", "maria olsen"),
        ("text", "bergen"),
        ("box", "maria olsen"),
        ("text", "tromsø"),
    ]);
    assert!(
        !matches!(outcome, ReplayOutcome::Failed { .. }),
        "{outcome:?}"
    );
    // The second box, the Tromsø row's, in its middle: not the first by place.
    assert_eq!(presses, [(40.5, 49.5)]);
    refused(&[
        ("box", "maria olsen"),
        ("text", "bergen"),
        ("box", "maria olsen"),
        ("text", "oslo"),
    ]);
    // The target's row gone: its namesake alone, in the Bergen row, is not it.
    refused(&[
        ("box", "maria olsen"),
        ("text", "bergen"),
        ("other", "per hansen"),
        ("text", "oslo"),
    ]);
}

/// [`list`] of `rows` scrolled down by `offset` pixels: each cell's box
/// that much higher, the table's view where it was.
fn scrolled_list(rows: &[(&str, &str)], offset: i32, selected: Option<usize>) -> A11yTree {
    let mut tree = list(rows, selected);
    for node in tree.nodes.iter_mut().skip(2) {
        if let Some(rect) = node.rect.as_mut() {
            rect.top -= offset;
        }
    }
    tree
}

#[test]
fn a_row_scrolled_out_of_view_is_scrolled_to_with_the_wheel_then_clicked() {
    // Eight rows above the target now: it lies below the table's view
    // (5..95), at 190. The first turn guesses three rows (54 px) a notch:
    // 3 notches for the 131 px to go; they move it 60 px, so 20 px a notch,
    // and the 71 px left take 4.
    let mut rows: Vec<(&str, &str)> = vec![("Anne Berg", "Oslo"); 8];
    rows.extend_from_slice(ROWS);
    let target = 9;
    let (outcome, desktop, records) = replay_with(
        recorded_click(ROWS, 1),
        no_pixels(),
        vec![
            scrolled_list(&rows, 0, None),
            scrolled_list(&rows, 60, None),
            scrolled_list(&rows, 120, None),
            scrolled_list(&rows, 120, Some(target)),
        ],
        Rungs::default(),
        0,
    );
    assert_eq!(outcome, ReplayOutcome::completed(1, 0), "{records:?}");
    let wheel = Action::MoveTo { x: 100.0, y: 50.0 };
    assert_eq!(
        desktop.injected[..4],
        [
            wheel.clone(),
            Action::Scroll { dx: 0, dy: -3 },
            wheel,
            Action::Scroll { dx: 0, dy: -4 }
        ],
        "{:?}",
        desktop.injected
    );
    // Then the click, at the same place inside the cell, where it shows
    // now: 10 + 20 * 9 - 120 = 70 (the list the desktop answers with).
    assert_eq!(moves(&desktop)[2..], [(15.0, 75.0)]);
    assert_eq!(records[0].prepared.len(), 2);
    assert!(
        records[0].prepared[0].label == "scroll 3 notches down at (100, 50)"
            && records[0].prepared[0].reason.starts_with("table cell \"Maria Olsen\" (row: Tromsø) is in the window's accessibility tree but scrolled out of view"),
        "{:?}",
        records[0].prepared
    );
}

#[test]
fn a_turn_of_the_wheel_that_does_not_move_the_row_is_refused_and_nothing_is_pressed() {
    let mut rows: Vec<(&str, &str)> = vec![("Anne Berg", "Oslo"); 8];
    rows.extend_from_slice(ROWS);
    let (reason, desktop) = refused_click(vec![scrolled_list(&rows, 0, None)], 0);
    assert!(
        reason.contains("turning the wheel 3 notches down over the view did not move it"),
        "{reason}"
    );
    assert!(desktop.only_moved_and_scrolled(), "{:?}", desktop.injected);
}

#[test]
fn a_target_not_among_what_shows_is_looked_for_again_in_the_lists_read_whole() {
    // The first tree lacks the row (a long list read as far as it shows):
    // the next look asks for the lists whole, and finds it there.
    let filling = &ROWS[..1];
    let (outcome, desktop, records) = replay_with(
        recorded_click(ROWS, 1),
        no_pixels(),
        vec![list(filling, None), list(ROWS, None), list(ROWS, Some(1))],
        Rungs::default(),
        1,
    );
    assert!(
        matches!(outcome, ReplayOutcome::Completed { steps: 1, .. }),
        "{outcome:?}"
    );
    let whole: Vec<bool> = desktop
        .tree_requests
        .iter()
        .map(|request| request.whole_lists)
        .collect();
    // Decided on the list read whole; re-checked and checked on it too.
    assert_eq!(whole, [false, true, true, true]);
    assert!(
        records[0].errors[0]
            .ends_with("; looking again with long lists read beyond what they show"),
        "{:?}",
        records[0].errors
    );
    // Gone there too: refused with the plain reason, nothing pressed.
    let (reason, desktop) = refused_click(vec![list(filling, None)], 1);
    assert!(
        reason.starts_with("no table cell \"Maria Olsen\" (row: Tromsø)")
            && !reason.contains("looking again"),
        "{reason}"
    );
    assert!(desktop.injected.is_empty(), "{:?}", desktop.injected);
}

/// A 200x100 screen, white, with a line of "text" (dark letters 6 px
/// wide, 2 px apart) 50 px long at (120, `top`).
fn screen_with_text(top: u32) -> crate::Frame {
    let mut image = RgbaImage::from_pixel(200, 100, image::Rgba([250, 250, 250, 255]));
    for x in (120..170).filter(|x| x % 8 < 6) {
        for y in top..top + 10 {
            image.put_pixel(x, y, image::Rgba([20, 20, 20, 255]));
        }
    }
    crate::Frame {
        image,
        screen: reprise_models::ScreenGeometry {
            rect: Rect::new(0, 0, 200, 100),
            scale_factor: 1.0,
        },
    }
}

#[test]
fn an_icon_agrees_with_its_box_only_where_the_box_shows_its_recorded_shape() {
    use super::structural::shows_as_recorded;
    // The screen's "text" stands in for an icon: its recorded look is the
    // 60x20 segment around it, which reaches past the tree's box.
    let screen = screen_with_text(40);
    let recorded = image::imageops::crop_imm(&screen.image, 115, 35, 60, 20).to_image();
    // The tree's box, smaller, around the same middle: it agrees.
    let tree_box = Rect::new(125, 40, 40, 10);
    assert!(shows_as_recorded(&recorded, &tree_box, &screen));
    // A box the tree gives 30 px off (a toolkit whose boxes are not the
    // screen's): a blank there, not the shape.
    let shifted = Rect::new(125, 70, 40, 10);
    assert!(!shows_as_recorded(&recorded, &shifted, &screen));
    // The shape moved elsewhere on the screen: not at the box either.
    assert!(!shows_as_recorded(
        &recorded,
        &tree_box,
        &screen_with_text(70)
    ));
    // A blank recorded look agrees with nothing, a blank box included.
    let blank = image::imageops::crop_imm(&screen.image, 10, 10, 60, 20).to_image();
    assert!(!shows_as_recorded(
        &blank,
        &Rect::new(20, 60, 40, 10),
        &screen
    ));
}

#[test]
fn a_press_outside_any_known_window_is_made_only_where_its_place_looks_as_recorded() {
    // A press at (140, 75), on the text, in no window the recording knew
    // (a panel, the desktop), and (the other case) outside the window it
    // was recorded in.
    let recorded = screen_with_text(70);
    let button = |timestamp: f64, pressed: bool| {
        let mut event = ActionEvent::new(EventName::Click, timestamp);
        (event.mouse_x, event.mouse_y) = (Some(140.0), Some(75.0));
        event.mouse_button_name = Some(MouseButton::Left);
        event.mouse_pressed = Some(pressed);
        event
    };
    let mut click = ActionEvent::new(EventName::Singleclick, 1.0);
    (click.mouse_x, click.mouse_y) = (Some(140.0), Some(75.0));
    click.mouse_button_name = Some(MouseButton::Left);
    click.children = vec![button(1.0, true), button(1.1, false)];
    click.screenshot_id = Some(0);
    let mut in_window = click.clone();
    in_window.window_state_id = Some(0);
    let window = WindowState {
        rect: Rect::new(0, 0, 100, 50),
        ..window_state("Editor", "editor")
    };
    for tree in [click, in_window] {
        let frames = [recorded.clone()];
        let planned = prepare::prepare(
            vec![tree],
            std::slice::from_ref(&window),
            &mut |id| frames.get(id as usize).cloned(),
            &[0.5],
            &mut no_pixels(),
        )
        .expect("prepared");
        let step = planned.into_iter().next().expect("one step");
        assert!(
            matches!(&step.target, Target::ScreenPlace { look: Some(_) }),
            "{:?}",
            step.target
        );
        let pressed = |screen: crate::Frame| {
            let mut desktop = ScriptedDesktop::new();
            desktop.frame = screen;
            let (outcome, desktop, _) =
                replay_on(step.clone(), no_pixels(), desktop, Rungs::default(), 0);
            let downs = desktop
                .injected
                .iter()
                .filter(|action| matches!(action, Action::ButtonDown { .. }))
                .count();
            (outcome, moves(&desktop), downs)
        };
        // The screen as recorded: pressed at its place.
        let (_, moved, downs) = pressed(recorded.clone());
        assert_eq!((moved.last().copied(), downs), (Some((140.0, 75.0)), 1));
        // Another line of text there now (the text moved down a row): not
        // pressed, and the run says why.
        let (outcome, _, downs) = pressed(screen_with_text(80));
        assert_eq!(downs, 0);
        assert!(
            matches!(&outcome, ReplayOutcome::Failed { reason, .. } if reason.contains("not made blind")),
            "{outcome:?}"
        );
    }
}

/// A dialog "Notes" of application "Test" with the buttons Cancel and OK.
fn notes_dialog() -> A11yTree {
    let mut tree = outline(&[
        (0, Role::Dialog, "Notes", (0, 0, 200, 100)),
        (1, Role::Button, "Cancel", (100, 80, 40, 15)),
        (1, Role::Button, "OK", (150, 80, 40, 15)),
    ]);
    tree.app = "Test".into();
    tree
}

/// Replays a recorded press on OK in "Notes" (which changed the screen at
/// it: the recording's last step, or followed by a press on Cancel in the
/// same window where `then_cancel`) where OK's release leaves `after`
/// active, the window manager lists the windows `listed` and the screen
/// shows `behind` (else it stays as it was); OK's record, the desktop, and the box the settling after the press left out (OK's,
/// found in the tree).
fn press_ok_leaving(
    after: Option<WindowState>,
    listed: Vec<u64>,
    (then_cancel, behind): (bool, Option<crate::Frame>),
) -> (StepRecord, ScriptedDesktop, Option<Rect>) {
    let tree = notes_dialog();
    let press = |child: u32, (x, y): (f64, f64)| {
        let mut step = recorded_click(ROWS, 0);
        let element = reprise_models::identity_of(&tree, "Test", child).unwrap();
        step.tree.window_state_id = Some(0);
        (step.tree.mouse_x, step.tree.mouse_y) = (Some(x), Some(y));
        for event in &mut step.tree.children {
            (event.mouse_x, event.mouse_y) = (Some(x), Some(y));
        }
        step.tree.children[0].element = Some(Box::new(element));
        step.expects_change = true;
        step
    };
    let mut steps = vec![press(2, (170.0, 87.0))];
    if then_cancel {
        steps.push(press(1, (120.0, 87.0)));
    }
    let recorded = WindowState {
        rect: Rect::new(0, 0, 200, 100),
        a11y: Some(tree.clone()),
        ..window_state("Notes", "Test")
    };
    let mut desktop = ScriptedDesktop::new().with_window("Notes", Rect::new(0, 0, 200, 100));
    desktop.trees = vec![tree].into();
    desktop.window_on_release = Some(after);
    desktop.frame_on_release = behind;
    desktop.listed = Some(listed);
    let mut strategy = VisualStrategy::new(steps, no_pixels(), 1.0).with_windows(&[recorded]);
    let options = ReplayOptions {
        max_retries: 1,
        settle: SettleOptions {
            timeout: std::time::Duration::from_millis(50),
            ..Default::default()
        },
        ..Default::default()
    };
    let (_, records) = desktop.replay(&mut strategy, &options, &|| false);
    let pressed_box = strategy.pressed_box(0);
    let ok = records.into_iter().next().expect("OK's record");
    (ok, desktop, pressed_box)
}

#[test]
fn a_button_whose_press_closed_its_window_is_proven_by_the_window_gone() {
    // OK closed "Notes": gone from the window manager's list.
    let (closed, desktop, pressed_box) = press_ok_leaving(None, vec![], (false, None));
    // OK, found in the tree: its own look is left out of the settling.
    assert_eq!(pressed_box, Some(Rect::new(150, 80, 40, 15)));
    assert_eq!(
        (closed.status, closed.evidence),
        (
            crate::StepStatus::Verified,
            Some(crate::EvidenceKind::Window)
        ),
        "{closed:#?}"
    );
    let check = closed.check.unwrap_or_default();
    assert!(
        check.contains("\"Notes\" closed after the press of button \"OK\""),
        "{check}"
    );
    // Once the window was gone, the screen's settling (150 ms of quiet)
    // was not awaited after the press: the 150 ms before it are all the
    // clock ran (300 ms where the loop waits for the settling).
    assert_eq!(desktop.slept.as_millis(), 150);
    // An error dialog came over "Notes", still listed behind it: nothing
    // closed, and the unchanged pixels prove nothing.
    let error = WindowState {
        window_id: 2,
        ..window_state("Error", "Test")
    };
    let (covered, _, _) = press_ok_leaving(Some(error), vec![1, 2], (false, None));
    assert_eq!(covered.status, crate::StepStatus::Failed, "{covered:#?}");
    assert_ne!(covered.evidence, Some(crate::EvidenceKind::Window));
}

/// The window a press was made in gone after it (the application died or
/// closed it) where the recording's next press is made in it: the pixels
/// that changed at the target (what was behind the window) prove nothing,
/// and the step is tried again, finding no window, never called verified.
#[test]
fn a_window_gone_under_a_press_is_no_proof_where_the_recording_goes_on_in_it() {
    let behind = || {
        let mut frame = ScriptedDesktop::new().frame;
        frame.image = image::RgbaImage::from_pixel(200, 100, image::Rgba([200, 40, 40, 255]));
        Some(frame)
    };
    let presses = |desktop: &ScriptedDesktop| {
        let down = |action: &&Action| matches!(action, Action::ButtonDown { .. });
        desktop.injected.iter().filter(down).count()
    };
    let (gone, desktop, _) = press_ok_leaving(None, vec![], (true, behind()));
    assert_eq!(gone.status, crate::StepStatus::Failed, "{gone:#?}");
    assert!(
        gone.errors[0].contains("\"Notes\" is gone after") && gone.errors[0].contains("its going"),
        "{gone:#?}"
    );
    assert_eq!(gone.errors.len(), 2, "tried again: {gone:#?}");
    assert_eq!(
        presses(&desktop),
        1,
        "the second try found no window to press"
    );
    // The same change with "Notes" still there: the press landed on OK,
    // re-checked just before it.
    let notes = WindowState {
        rect: Rect::new(0, 0, 200, 100),
        ..window_state("Notes", "Test")
    };
    let (stays, _, _) = press_ok_leaving(Some(notes), vec![1], (true, behind()));
    assert_eq!(
        (stays.status, stays.evidence),
        (
            crate::StepStatus::Verified,
            Some(crate::EvidenceKind::Landed)
        ),
        "{stays:#?}"
    );
    // The recording's last press, whose window closed: no later step in
    // it, so its going is no contradiction (the button check proves it).
    let (last, _, _) = press_ok_leaving(None, vec![], (false, behind()));
    assert_eq!(
        last.evidence,
        Some(crate::EvidenceKind::Window),
        "{last:#?}"
    );
}
