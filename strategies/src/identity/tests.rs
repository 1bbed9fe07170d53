use accesskit::Role;
use reprise_models::element::outline;
use reprise_models::{A11yTree, ElementIdentity, identity_of};

use super::*;

/// A customers dialog with `rows` of (name, city), each row 23 px below the
/// last, and an OK button.
fn customers(rows: &[(&str, &str)]) -> A11yTree {
    let mut outline_rows = vec![
        (0, Role::Dialog, "Customers", (490, 302, 302, 260)),
        (1, Role::Group, "", (498, 329, 286, 230)),
        (
            2,
            Role::Label,
            "Select items from the list below.",
            (503, 334, 276, 17),
        ),
        (2, Role::Table, "", (504, 358, 274, 160)),
        (3, Role::ColumnHeader, "Name", (504, 358, 86, 25)),
        (3, Role::ColumnHeader, "City", (590, 358, 188, 25)),
    ];
    for (row, (name, city)) in rows.iter().enumerate() {
        let top = 384 + 23 * row as i32;
        outline_rows.push((3, Role::Cell, name, (506, top, 82, 21)));
        outline_rows.push((3, Role::Cell, city, (592, top, 184, 21)));
    }
    let below_rows = 384 + 23 * rows.len() as i32 + 20;
    outline_rows.push((2, Role::Button, "OK", (698, below_rows, 86, 34)));
    outline(&outline_rows)
}

const RECORDED_ROWS: &[(&str, &str)] = &[
    ("Maria Olsen", "Bergen"),
    ("Per Hansen", "Oslo"),
    ("Maria Olsen", "Tromsø"),
];

/// The identity of the cell named `name` in the row of `city`, as recorded.
fn recorded_cell(name: &str, city: &str) -> ElementIdentity {
    let tree = customers(RECORDED_ROWS);
    let idx = (0..tree.nodes.len() as u32)
        .find(|&idx| {
            identity_of(&tree, "zenity", idx).is_some_and(|identity| {
                identity.name.as_deref() == Some(name) && identity.band == [city]
            })
        })
        .expect("the recorded cell");
    identity_of(&tree, "zenity", idx).unwrap()
}

/// What the structural rung answers for `recorded` in `live`, in words:
/// `found <label> at (x, y)`, `ambiguous: …`, `gone: …` or `no answer`.
fn check(recorded: &ElementIdentity, live: &A11yTree, expect: &str) {
    let press = (
        f64::from(recorded.rect.left) + 10.0,
        f64::from(recorded.rect.top) + 10.0,
    );
    let answer = match locate(recorded, press, live) {
        StructuralAnswer::Found {
            node_idx, point, ..
        } => format!(
            "found {} at ({}, {})",
            identity_of(live, "zenity", node_idx).unwrap().label(),
            point.0,
            point.1
        ),
        StructuralAnswer::Ambiguous { candidates } => {
            let words: Vec<String> = candidates.iter().map(super::Twin::words).collect();
            format!("ambiguous: {}", words.join("; "))
        }
        StructuralAnswer::Gone { reason } => format!("gone: {reason}"),
        StructuralAnswer::OutOfView {
            label,
            place,
            wheel,
            ..
        } => format!(
            "out of view: {label} {place}; turn the wheel at ({}, {})",
            wheel.0, wheel.1
        ),
        StructuralAnswer::NoAnswer => "no answer".into(),
    };
    assert_eq!(answer, expect);
}

#[test]
fn the_same_list_finds_the_same_row() {
    check(
        &recorded_cell("Maria Olsen", "Tromsø"),
        &customers(RECORDED_ROWS),
        r#"found table cell "Maria Olsen" (row: Tromsø) at (516, 440)"#,
    );
}

#[test]
fn rows_inserted_above_or_resorted_do_not_move_the_target() {
    let target = recorded_cell("Maria Olsen", "Tromsø");
    // A decoy above: a near-namesake, and the namesake from Bergen.
    check(
        &target,
        &customers(&[
            ("Maria Olson", "Tromsø"),
            ("Anne Berg", "Oslo"),
            ("Maria Olsen", "Bergen"),
            ("Per Hansen", "Oslo"),
            ("Maria Olsen", "Tromsø"),
        ]),
        r#"found table cell "Maria Olsen" (row: Tromsø) at (516, 486)"#,
    );
    // Sorted the other way round.
    check(
        &target,
        &customers(&[
            ("Maria Olsen", "Tromsø"),
            ("Per Hansen", "Oslo"),
            ("Maria Olsen", "Bergen"),
        ]),
        r#"found table cell "Maria Olsen" (row: Tromsø) at (516, 394)"#,
    );
}

#[test]
fn a_target_scrolled_out_of_its_lists_view_is_scrolled_to_not_pressed_where_it_does_not_show() {
    let target = recorded_cell("Maria Olsen", "Tromsø");
    let mut rows: Vec<(&str, &str)> = vec![("Anne Berg", "Oslo"); 5];
    rows.push(("Maria Olsen", "Tromsø"));
    // The sixth row still shows at the list's bottom edge.
    check(
        &target,
        &customers(&rows),
        r#"found table cell "Maria Olsen" (row: Tromsø) at (516, 509)"#,
    );
    // One more row above: the target's box lies below the list's; the
    // wheel is turned over the list's middle (a row of it).
    rows.insert(0, ("Per Hansen", "Oslo"));
    check(
        &target,
        &customers(&rows),
        r#"out of view: table cell "Maria Olsen" (row: Tromsø) at (516, 532), outside its table at (504, 358) 274×160; turn the wheel at (641, 438)"#,
    );
    // A list whose every row holds spin buttons (cells that edit a number,
    // the rows without a gap between): no turn of the wheel is safe,
    // refused.
    let mut live = customers(&rows);
    let table = 3;
    let cells: Vec<u32> = live.nodes[table].children.clone();
    for cell in cells {
        if live.nodes[cell as usize].role == Role::Cell
            && let Some(rect) = live.nodes[cell as usize].rect.as_mut()
        {
            rect.height = 23;
        }
        let rect = live.nodes[cell as usize].rect;
        let spin = live.nodes.len() as u32;
        live.nodes.push(reprise_models::A11yNode {
            role: Role::SpinButton,
            name: None,
            rect,
            states: Vec::new(),
            value: None,
            children: Vec::new(),
        });
        live.nodes[cell as usize].children.push(spin);
    }
    check(
        &target,
        &live,
        r#"gone: table cell "Maria Olsen" (row: Tromsø) is in the window's accessibility tree but scrolled out of view (at (516, 533), outside its table at (504, 358) 274×160), and no point of the view lets a turn of the wheel scroll it: refusing to press where it does not show"#,
    );
}

/// A popup's items lie outside what holds the popup (LibreOffice puts its
/// menus under a menu bar inside a scroll pane): they are not out of view.
#[test]
fn an_item_in_a_popup_is_not_clipped_by_what_holds_the_popup() {
    let window = |popup: Role| {
        outline(&[
            (0, Role::Window, "Calc", (0, 0, 1280, 800)),
            (1, Role::ScrollView, "", (0, 19, 1256, 25)),
            (2, popup, "File", (0, 19, 40, 25)),
            (3, Role::MenuItem, "Save As...", (100, 300, 200, 20)),
        ])
    };
    let live = window(Role::Menu);
    let recorded = identity_of(&live, "soffice", 3).unwrap();
    assert!(
        matches!(
            locate(&recorded, (110.0, 310.0), &live),
            StructuralAnswer::Found { node_idx: 3, .. }
        ),
        "in a menu"
    );
    // Under a plain group instead, the scroll pane's box holds it in view:
    // it is scrolled into it, never pressed where it lies.
    let answer = locate(&recorded, (110.0, 310.0), &window(Role::Group));
    assert!(
        matches!(&answer, StructuralAnswer::OutOfView { view, .. } if view.height == 25),
        "{answer:?}"
    );
}

#[test]
fn a_removed_target_is_gone_even_with_namesakes_left() {
    check(
        &recorded_cell("Maria Olsen", "Tromsø"),
        &customers(&[
            ("Maria Olsen", "Bergen"),
            ("Maria Olson", "Tromsø"),
            ("Per Hansen", "Oslo"),
        ]),
        r#"gone: no table cell "Maria Olsen" (row: Tromsø) in the window's accessibility tree; only table cell "Maria Olsen" (row: Bergen)"#,
    );
}

#[test]
fn twins_that_nothing_tells_apart_are_refused_with_both_named() {
    check(
        &recorded_cell("Maria Olsen", "Tromsø"),
        &customers(&[("Maria Olsen", "Tromsø"), ("Maria Olsen", "Tromsø")]),
        r#"ambiguous: table cell "Maria Olsen" (row: Tromsø) at (506, 384); table cell "Maria Olsen" (row: Tromsø) at (506, 407)"#,
    );
}

#[test]
fn a_taught_twin_is_found_by_its_place_among_as_many_twins_and_no_other() {
    let mut taught = recorded_cell("Maria Olsen", "Tromsø");
    taught.ordinal = Some(reprise_models::element::Ordinal { index: 2, of: 2 });
    let twins = [
        ("Per Hansen", "Oslo"),
        ("Maria Olsen", "Tromsø"),
        ("Maria Olsen", "Tromsø"),
    ];
    let live = customers(&twins);
    let StructuralAnswer::Found { rect, evidence, .. } = locate(&taught, (520.0, 440.0), &live)
    else {
        panic!("the taught twin is found");
    };
    assert_eq!(rect.top, 384 + 2 * 23, "the second in reading order");
    assert!(
        evidence.ends_with("the 2nd of 2 twins in reading order, as taught"),
        "{evidence}"
    );
    // Three twins now: what was taught no longer says which.
    let three = customers(&[
        ("Maria Olsen", "Tromsø"),
        ("Maria Olsen", "Tromsø"),
        ("Maria Olsen", "Tromsø"),
    ]);
    assert!(matches!(
        locate(&taught, (520.0, 440.0), &three),
        StructuralAnswer::Ambiguous { candidates } if candidates.len() == 3
    ));
    // One alone is itself, taught or not.
    assert!(matches!(
        locate(&taught, (520.0, 440.0), &customers(RECORDED_ROWS)),
        StructuralAnswer::Found { .. }
    ));
}

#[test]
fn a_poor_tree_leaves_the_decision_to_the_visual_rung() {
    let poor = outline(&[
        (0, Role::Window, "Calculator", (0, 0, 300, 300)),
        (1, Role::Canvas, "", (0, 0, 300, 300)),
    ]);
    check(&recorded_cell("Per Hansen", "Oslo"), &poor, "no answer");
}

#[test]
fn a_button_is_found_where_the_dialog_moved_it() {
    let recorded_tree = customers(RECORDED_ROWS);
    let ok = (0..recorded_tree.nodes.len() as u32)
        .find(|&idx| recorded_tree.nodes[idx as usize].name.as_deref() == Some("OK"))
        .unwrap();
    let recorded = identity_of(&recorded_tree, "zenity", ok).unwrap();
    // Four rows push the button down by 23 px.
    check(
        &recorded,
        &customers(&[
            ("Anne Berg", "Oslo"),
            ("Maria Olsen", "Bergen"),
            ("Per Hansen", "Oslo"),
            ("Maria Olsen", "Tromsø"),
        ]),
        r#"found button "OK" at (708, 506)"#,
    );
}

/// Names that rendering may change match; any other letter or digit makes
/// another element.
#[test]
fn names_match_only_where_rendering_explains_the_difference() {
    let cases: &[(&str, &str, bool)] = &[
        ("Maria Olsen", "Maria Olsen", true),
        ("Maria Olsen", "maria  olsen", true),
        ("Save As…", "Save As...", true),
        ("Save As…", "Save As", true),
        ("User name:", "User name", true),
        ("_File", "File", true),
        ("Maria Olsen", "Maria Olson", false),
        ("Invoice 1042", "Invoice 1043", false),
        ("OK", "OK2", false),
        ("Open", "Open Recent", false),
    ];
    for &(recorded, live, expect) in cases {
        assert_eq!(
            same_name(Some(recorded), Some(live)),
            expect,
            "{recorded:?} vs {live:?}"
        );
    }
    assert!(same_name(None, Some("  ")));
    assert!(!same_name(None, Some("OK")));
}

#[test]
fn the_click_keeps_its_place_inside_the_element() {
    let recorded = Rect::new(100, 100, 80, 20);
    let live = Rect::new(300, 50, 160, 40);
    assert_eq!(
        offset_point(&recorded, (120.0, 105.0), &live),
        (340.0, 60.0)
    );
    // A press on the recorded box's edge stays a pixel inside the live one.
    assert_eq!(offset_point(&recorded, (100.0, 99.0), &live), (301.0, 51.0));
}

#[test]
fn pixels_read_as_a_name_only_where_ocr_explains_the_difference() {
    use crate::identity::reads_as;
    let check = |name: &str, read: &str, expect: bool| {
        assert_eq!(reads_as(name, read), expect, "{name:?} read as {read:?}");
    };
    check("Bergen", "bergen", true);
    check("Save As…", "save as shift ctrl s", true);
    check("Invoice 1042", "lnvoice lo42", true);
    check("Modern", "modem", true);
    check("Bergen", "bergem", false);
    check("Invoice 1042", "invoice 1043", false);
    check("Save", "save as", false);
    check("Save", "save ctri s", true);
    check("Save As", "save", false);
    check("Save", "saved", false);
    check("Bergen", "", false);
    check("", "anything", false);
    // A letter beyond OCR's alphabet reads as any one letter; no other.
    check("Tromsø", "tromse", true);
    check("Tromsø", "tromsø", true);
    check("Tromsø", "troms", false);
    check("Olsen", "olsøn", false);
}

#[test]
fn a_line_of_pixels_starts_with_a_name_or_holds_a_text_only_in_whole_words() {
    use crate::identity::{reads_within, rest_after};
    let starts = |name: &str, read: &str, expect: Option<&str>| {
        assert_eq!(
            rest_after(name, read).as_deref(),
            expect,
            "{name:?} at the start of {read:?}"
        );
    };
    starts("Maria Olsen", "maria olsen tromse", Some("tromse"));
    starts("Maria Olsen", "Maria  Olsen", Some(""));
    starts("Maria Olsen", "maria olsenby", None);
    starts("Maria Olsen", "maria olson tromsø", None);
    starts("Maria Olsen", "per hansen maria olsen", None);
    starts("", "maria", None);
    let within = |text: &str, read: &str, expect: bool| {
        assert_eq!(reads_within(text, read), expect, "{text:?} in {read:?}");
    };
    within("Tromsø", "maria olsen tromse", true);
    within("Tromsø", "tromsø", true);
    within("Oslo", "maria olsen osloby", false);
    within("Oslo", "maria olsen 0slo", true);
    within("Bergen", "maria olsen tromsø", false);
    within("New York", "ann new york", true);
    within("New York", "ann new yorkshire", false);
    within("", "anything", false);
}

#[test]
fn two_readings_are_one_name_only_where_ocr_explains_the_difference() {
    use crate::identity::same_reading;
    let check = |recorded: &str, live: &str, expect: bool| {
        assert_eq!(
            same_reading(recorded, live),
            expect,
            "{recorded:?} and {live:?}"
        );
        assert_eq!(same_reading(live, recorded), expect, "either way round");
    };
    check("cancel", "cance1", true);
    check("remember me", "rernember me", true);
    check("invoice 1042", "lnvoice lo42", true);
    check("maria olsen", "Maria  Olsen", true);
    check("maria olsen", "maria olson", false);
    check("invoice 1042", "invoice 1043", false);
    check("save", "sav3", false);
    check("save", "save as", false);
    check("+", "+", true);
    check("+", "-", false);
    check("+", "", false);
    check("", "", false);
}

/// The fixture's customers window as egui's AccessKit tree has it: a table
/// whose box is its whole content (rows below the window included), then
/// a Choose button and a status line drawn over the table's lower part;
/// `above` rows of "Anne Berg" above the target's. The table's role is
/// `table` (`Group` for one that does not scroll).
fn egui_table(above: usize, table: Role) -> (A11yTree, u32) {
    let mut rows = vec![
        (0, Role::Window, "Customers", (261, 160, 420, 400)),
        (1, Role::Label, "Customers:", (269, 168, 100, 16)),
        (1, table, "Customers", (269, 190, 400, 1000)),
    ];
    let mut people = vec![("Anne Berg", "Oslo"); above];
    people.push(("Maria Olsen", "Tromsø"));
    for (row, (name, city)) in people.iter().enumerate() {
        let top = 190 + 23 * row as i32;
        rows.push((2, Role::Row, "", (269, top, 400, 21)));
        rows.push((3, Role::Cell, name, (269, top, 180, 21)));
        rows.push((3, Role::Cell, city, (449, top, 140, 21)));
    }
    rows.push((1, Role::Button, "Choose", (269, 500, 80, 24)));
    rows.push((1, Role::Label, "Status: none", (269, 530, 200, 16)));
    let tree = outline(&rows);
    let target = 3 + 3 * above as u32 + 1;
    (tree, target)
}

#[test]
fn a_row_below_a_window_or_under_a_button_drawn_over_its_list_is_scrolled_to() {
    let (recorded, idx) = egui_table(0, Role::Table);
    let target = identity_of(&recorded, "fixture", idx).unwrap();
    let press = (279.0, 200.0);
    // Below the window: scrolled within what of the table shows, above the
    // Choose button.
    let (live, _) = egui_table(20, Role::Table);
    let answer = locate(&target, press, &live);
    let StructuralAnswer::OutOfView {
        view, wheel, place, ..
    } = &answer
    else {
        panic!("{answer:?}");
    };
    assert_eq!(*view, Rect::new(269, 190, 400, 310), "{place}");
    assert_eq!(*wheel, (469.0, 345.0));
    assert!(place.contains("outside its window"), "{place}");
    // Inside the window, but under the Choose button: never pressed there.
    let (live, _) = egui_table(14, Role::Table);
    let answer = locate(&target, press, &live);
    assert!(
        matches!(&answer, StructuralAnswer::OutOfView { place, view, .. }
            if place.contains(r#"under button "Choose""#) && view.bottom() == 500),
        "{answer:?}"
    );
    // In a box that does not scroll: refused, with what shows there.
    let (live, _) = egui_table(14, Role::Group);
    let answer = locate(&target, press, &live);
    assert!(
        matches!(&answer, StructuralAnswer::Gone { reason }
            if reason.contains(r#"but something else shows where it is (at (279, 522), under button "Choose")"#)),
        "{answer:?}"
    );
}

#[test]
fn a_button_over_the_rows_running_on_below_a_list_is_pressed() {
    // egui's rows run on under the Choose button below their list: they
    // do not show there (the list shows above the button), the button does.
    let (recorded, _) = egui_table(0, Role::Table);
    let choose = (0..recorded.nodes.len() as u32)
        .find(|&idx| recorded.nodes[idx as usize].name.as_deref() == Some("Choose"))
        .unwrap();
    let target = identity_of(&recorded, "fixture", choose).unwrap();
    let (live, _) = egui_table(20, Role::Table);
    let answer = locate(&target, (279.0, 515.0), &live);
    assert!(
        matches!(
            answer,
            StructuralAnswer::Found {
                point: (279.0, 515.0),
                ..
            }
        ),
        "{answer:?}"
    );
}

#[test]
fn a_row_known_to_be_out_of_view_is_never_pressed_where_its_box_is() {
    // The toolkit says the target does not show, yet its box (or the
    // guess at it) lies in the list's view: refused.
    let target = recorded_cell("Maria Olsen", "Tromsø");
    let mut live = customers(RECORDED_ROWS);
    let idx = (0..live.nodes.len())
        .rfind(|&idx| live.nodes[idx].name.as_deref() == Some("Maria Olsen"))
        .unwrap();
    live.nodes[idx]
        .states
        .push(reprise_models::ElementState::Offscreen);
    check(
        &target,
        &live,
        r#"gone: table cell "Maria Olsen" (row: Tromsø) is in the window's accessibility tree but does not show, and where it is cannot be told: refusing to press where it does not show"#,
    );
}

/// A Qt editor's window as FeatherPad's tree gives it: a menu bar, a
/// search bar's text field, and the text area (unnamed, no label) whose
/// viewport (an unnamed group) is what a press hits and what holds the
/// focus; `areas` text areas side by side.
fn editor(left: i32, areas: usize) -> A11yTree {
    let mut rows = vec![
        (0, Role::Window, "Untitled", (left, 60, 700, 500)),
        (1, Role::MenuBar, "", (left, 60, 700, 22)),
        (2, Role::MenuItem, "File", (left + 6, 60, 30, 22)),
        (2, Role::MenuItem, "Edit", (left + 36, 60, 30, 22)),
        (1, Role::Button, "Save", (left + 40, 84, 24, 24)),
        // The search bar: a text field in a combo box, a level deeper.
        (1, Role::ComboBox, "", (left + 2, 507, 555, 25)),
        (2, Role::TextInput, "", (left + 4, 509, 532, 21)),
    ];
    let width = 700 / areas as u32;
    for area in 0..areas {
        let x = left + (width * area as u32) as i32;
        rows.push((1, Role::TextInput, "", (x, 110, width, 400)));
        rows.push((2, Role::Group, "", (x, 110, width - 12, 388)));
    }
    outline(&rows)
}

/// An unnamed text area stands alone: a press on its viewport is the text
/// area's (not the window's, not nothing), found again where the window
/// moved, and not taken for the unnamed text field a level deeper in the
/// search bar's combo box; two of them that nothing tells apart are twins,
/// refused.
#[test]
fn an_unnamed_text_area_is_an_identity_and_two_of_them_are_twins() {
    let recorded_tree = editor(60, 1);
    let viewport = recorded_tree.nodes.len() as u32 - 1;
    let recorded = identity_of(&recorded_tree, "FeatherPad", viewport).unwrap();
    assert_eq!(recorded.role, Role::TextInput);
    assert_eq!(recorded.label(), "text field");
    check(&recorded, &editor(300, 1), "found text field at (310, 120)");
    assert!(
        matches!(
            locate(&recorded, (70.0, 120.0), &editor(300, 2)),
            StructuralAnswer::Ambiguous { ref candidates } if candidates.len() == 2
        ),
        "two unnamed text areas are twins"
    );
    // The focus on its viewport is the text area's too.
    let mut focused = editor(60, 1);
    focused.nodes[viewport as usize]
        .states
        .push(reprise_models::ElementState::Focused);
    let holder = reprise_models::element::focused(&focused).unwrap();
    let typed_into =
        reprise_models::element::identity_of_node(&focused, "FeatherPad", holder).unwrap();
    assert_eq!(typed_into.role, Role::TextInput);
    assert_eq!(typed_into.rect, recorded.rect);
    // Another element marked focused too (Qt marks its current tab so):
    // the keys still go to the text area, whose viewport has them; with the
    // other alone focused, they would not.
    let save = 4;
    focused.nodes[save]
        .states
        .push(reprise_models::ElementState::Focused);
    assert_eq!(focus_elsewhere(&typed_into, &focused), None);
    focused.nodes[viewport as usize].states.clear();
    assert_eq!(
        focus_elsewhere(&typed_into, &focused).as_deref(),
        Some(r#"button "Save""#)
    );
}
