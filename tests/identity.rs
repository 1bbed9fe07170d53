//! Structural identity on third-party applications: a pick in zenity's GTK
//! list (and in an AccessKit table) is recorded with the element's identity
//! (the cell, the other cell of its row, its window) and replayed against
//! drifted lists, judged by what the application itself printed (the row
//! chosen, or nothing when replay refused); a
//! save in FeatherPad (Qt 5) is replayed after its window moved, judged by
//! the file it wrote.

use serde_json::Value;

use crate::harness::{Display, assert_proven, run_ok};

const TARGET: &str = "Maria Olsen|Tromsø";

/// Runs `tests/scenarios/SCRIPT` in a D-Bus session of its own on a fresh
/// display; returns the display (its folder holds the results).
pub(crate) fn run_scenario(script: &str, width: u32, height: u32) -> Display {
    run_scenario_with(script, width, height, &[])
}

/// [`run_scenario`] with more of the scenario's environment.
pub(crate) fn run_scenario_with(
    script: &str,
    width: u32,
    height: u32,
    env: &[(&str, &str)],
) -> Display {
    run_scenario_on(Display::start(width, height), script, env)
}

/// [`run_scenario_with`] on a display already started.
pub(crate) fn run_scenario_on(display: Display, script: &str, env: &[(&str, &str)]) -> Display {
    // A comma in the path: the accessibility bus's address escapes it, and
    // the reader must still find the socket.
    let runtime = display.dir.path().join("run,time");
    std::fs::create_dir(&runtime).expect("make a runtime folder");
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .expect("make the runtime folder private");
    let script = format!("{}/tests/scenarios/{script}", env!("CARGO_MANIFEST_DIR"));
    run_ok(
        display
            .command("dbus-run-session")
            .args(["--", "bash", &script])
            // The accessibility bus keeps its socket here: a private one, so
            // parallel sessions cannot remove each other's.
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("REPRISE", env!("CARGO_BIN_EXE_reprise"))
            .env("REPRISE_STORE", display.store())
            .env("OMP_THREAD_LIMIT", "1")
            .env("SCRIPTS", concat!(env!("CARGO_MANIFEST_DIR"), "/scripts"))
            .env("OUT", display.dir.path())
            .envs(env.iter().copied()),
    );
    display
}

pub(crate) fn result(display: &Display, case: &str, what: &str) -> String {
    let path = display.dir.path().join(format!("{case}.{what}"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("read {}: {err}", path.display()))
        .trim()
        .to_owned()
}

/// Every line a case's replay printed with `--json`, parsed (a line that
/// is not JSON fails the test): its steps, then its outcome.
pub(crate) fn json_lines(display: &Display, case: &str) -> Vec<serde_json::Value> {
    result(display, case, "stdout")
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|err| panic!("{case}: {err}: {line}"))
        })
        .collect()
}

/// The step lines of [`json_lines`].
pub(crate) fn step_lines(display: &Display, case: &str) -> Vec<serde_json::Value> {
    json_lines(display, case)
        .into_iter()
        .filter(|line| line["type"] == "step")
        .collect()
}

/// A case's exit code, what the application printed and what the run
/// said, for an assertion's message.
pub(crate) fn said(display: &Display, case: &str) -> String {
    format!(
        "{case}: exit {}, printed {:?}\n{}",
        result(display, case, "code"),
        result(display, case, "out"),
        result(display, case, "err")
    )
}

/// Asserts that the scenario's replay `case` exited 0 with every step
/// proven as `proof` says (`state 2, window 3`).
fn case_proven(display: &Display, case: &str, proof: &str) {
    assert_proven(
        result(display, case, "code").parse().ok(),
        &result(display, case, "err"),
        proof,
    );
}

/// The elements of the recording's presses (and the focused elements its keys
/// read), as `role name [band]`.
pub(crate) fn recorded_elements(display: &Display, recording: &str) -> Vec<String> {
    let shown: Value = serde_json::from_str(&run_ok(
        display.reprise().args(["show", recording, "--json"]),
    ))
    .expect("show --json prints JSON");
    let mut elements = Vec::new();
    for tree in shown["events"].as_array().expect("events") {
        for event in tree["children"].as_array().into_iter().flatten() {
            if let Some(element) = event.get("element") {
                elements.push(format!(
                    "{} {} {}",
                    element["role"].as_str().unwrap_or("?"),
                    element["name"].as_str().unwrap_or("-"),
                    element["band"]
                ));
            }
        }
    }
    elements
}

/// The popup boxes the recording's presses were made in, as
/// `left,top widthxheight`, one per press made in a popup.
fn recorded_popups(display: &Display, recording: &str) -> Vec<String> {
    let shown: Value = serde_json::from_str(&run_ok(
        display.reprise().args(["show", recording, "--json"]),
    ))
    .expect("show --json prints JSON");
    let trees = shown["events"].as_array().expect("events");
    trees
        .iter()
        .flat_map(|tree| tree["children"].as_array().into_iter().flatten())
        .filter_map(|event| event.get("popup"))
        .map(|rect| {
            format!(
                "{},{} {}x{}",
                rect["left"], rect["top"], rect["width"], rect["height"]
            )
        })
        .collect()
}

/// How replay CASE (run with `--json`) found the target of its step whose
/// action names `name`.
fn found_for(display: &Display, case: &str, name: &str) -> String {
    step_for(display, case, name)["found"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The step of replay CASE (run with `--json`) whose action names `name`.
fn step_for(display: &Display, case: &str, name: &str) -> Value {
    let steps = result(display, case, "stdout");
    steps
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|step| {
            step["type"] == "step"
                && step["action"]
                    .as_str()
                    .is_some_and(|action| action.contains(&format!("{name:?}")))
        })
        .unwrap_or_else(|| panic!("a step on {name:?} in {case}: {steps}"))
}

/// The kind of evidence replay CASE (run with `--json`) proved its step
/// whose action names `name` by.
fn evidence_for(display: &Display, case: &str, name: &str) -> String {
    step_for(display, case, name)["evidence"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Each case's replay completed (exit 0) and zenity printed the target's row.
fn picked_the_target(display: &Display, cases: &[&str]) {
    printed(display, cases, TARGET);
}

/// Each case's replay completed (exit 0) and zenity printed `expected`.
pub(crate) fn printed(display: &Display, cases: &[&str], expected: &str) {
    for &case in cases {
        assert_eq!(
            (result(display, case, "code"), result(display, case, "out")),
            ("0".to_owned(), expected.to_owned()),
            "{case}: {}",
            result(display, case, "err")
        );
    }
}

/// Two monitors: a pick in a GTK list recorded with the dialog on the
/// second monitor is made where the dialog is now: on the first monitor
/// with its rows re-sorted, and elsewhere on the second. zenity is the judge.
#[test]
fn a_pick_recorded_on_the_second_monitor_is_made_where_the_list_is_now() {
    let display = run_scenario_on(
        Display::start_two_monitors(800, 600),
        "zenity-monitors.sh",
        &[],
    );
    assert_eq!(result(&display, "recorded", "out"), TARGET);
    assert_eq!(
        recorded_elements(&display, "pick"),
        [r#"cell Maria Olsen ["Tromsø"]"#, "button OK null"]
    );
    let shown = result(&display, "pick", "show");
    assert!(
        shown.contains("2 monitors:")
            && shown.contains("(Zenity) at 9")
            && shown.contains("on monitor 2"),
        "the dialog was recorded on the second monitor:\n{shown}"
    );
    picked_the_target(&display, &["first", "second"]);
}

#[test]
fn a_row_in_a_gtk_list_is_found_by_its_identity_scrolled_to_and_refused_when_gone_or_twinned() {
    let display = run_scenario("zenity-list.sh", 1600, 1200);
    assert_eq!(result(&display, "recorded", "out"), TARGET);
    assert_eq!(
        recorded_elements(&display, "pick"),
        [r#"cell Maria Olsen ["Tromsø"]"#, "button OK null"]
    );
    // Unchanged, with decoys above it, re-sorted, in the dark theme, at
    // twice the scale, scrolled out of the list's view (and far out, in a
    // list longer than is read beyond what shows at first): the same person.
    picked_the_target(
        &display,
        &[
            "same", "decoys", "resorted", "dark", "scale2", "scrolled", "far",
        ],
    );
    scrolled_into_view(&display, "scrolled");
    scrolled_into_view(&display, "far");
    refused_where_the_target_is_not(&display);
}

/// The same pick in a toolkit that is neither GTK nor Qt: the fixture's
/// table of customers, an AccessKit tree (egui) of rows of two cells, in a
/// window that moved; judged by the row the fixture printed.
#[test]
fn a_row_in_an_accesskit_table_is_found_by_its_identity_scrolled_to_and_refused_when_gone_or_twinned()
 {
    // With a big window of 40 more rows too: its Choose button lies over
    // the rows that run on below the table's view (egui's table box is its
    // whole content), and is pressed, not refused as under a row.
    let display = run_scenario_with("fixture-table.sh", 1600, 1200, &[("FILLER", "40")]);
    assert_eq!(result(&display, "recorded", "out"), TARGET);
    assert_eq!(
        recorded_elements(&display, "pick"),
        [r#"cell Maria Olsen ["Tromsø"]"#, "button Choose null"]
    );
    // AccessKit's tree keeps the rows below the window, with their boxes
    // there (a press at the target's box would land on the desktop, as it
    // did before the structural rung checked the view): scrolled into view.
    picked_the_target(
        &display,
        &[
            "same", "decoys", "resorted", "dark", "scale2", "scrolled", "big",
        ],
    );
    scrolled_into_view(&display, "scrolled");
    refused_where_the_target_is_not(&display);
}

/// The pick of `case` was made after turns of the wheel over the list, each
/// said in the step's record, and then by the target's identity.
fn scrolled_into_view(display: &Display, case: &str) {
    let steps = result(display, case, "stdout");
    let pick = steps
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|step| step["type"] == "step" && step["step"] == 0)
        .unwrap_or_else(|| panic!("the pick's step: {steps}"));
    let prepared: Vec<(&str, &str)> = pick["prepared"]
        .as_array()
        .map(|turns| {
            turns
                .iter()
                .filter_map(|turn| Some((turn["label"].as_str()?, turn["reason"].as_str()?)))
                .collect()
        })
        .unwrap_or_default();
    assert!(
        !prepared.is_empty()
            && prepared.iter().all(|(label, reason)| {
                label.starts_with("scroll ")
                    && label.contains("notches down")
                    && reason.starts_with(r#"table cell "Maria Olsen" (row: Tromsø) is in the window's accessibility tree but scrolled out of view"#)
            }),
        "{pick}"
    );
    assert!(
        pick["found"]
            .as_str()
            .is_some_and(|found| found.contains("by its identity in the accessibility tree")),
        "{pick}"
    );
}

/// The cases of a list scenario where the target is not to be found: gone
/// (refused with the reason), a near-namesake alone, twins (refused, both
/// named); in each, nothing chosen.
fn refused_where_the_target_is_not(display: &Display) {
    for case in ["removed", "near-namesake", "twins"] {
        assert_eq!(
            (result(display, case, "code"), result(display, case, "out")),
            ("10".to_owned(), String::new()),
            "{case}: {}",
            result(display, case, "err")
        );
    }
    let removed = result(display, "removed", "err");
    assert!(
        removed.contains(r#"no table cell "Maria Olsen" (row: Tromsø)"#)
            && removed.contains(r#"only table cell "Maria Olsen" (row: Bergen)"#),
        "{removed}"
    );
    let twins = result(display, "twins", "err");
    assert!(twins.contains("refused: 2 elements fit"), "{twins}");
}

#[test]
fn a_qt_editor_saves_the_same_file_after_its_window_moved_and_resumes_where_its_dialog_went() {
    let display = run_scenario("featherpad-save.sh", 1280, 800);
    assert_eq!(result(&display, "recorded", "txt"), "hello qt");
    // The toolbar's Save button was named by Qt's accessibility tree.
    assert!(
        recorded_elements(&display, "save").contains(&"button Save null".to_owned()),
        "{:?}",
        recorded_elements(&display, "save")
    );
    // The text marked as the outcome: the 1st of the editor's two unnamed
    // text fields, expecting what was typed.
    let recorded = result(&display, "recorded", "err");
    assert!(
        recorded.contains(
            "outcome check kept in version 2: text field (the 1st) in \"*Untitled\" equals \"{text}\""
        ),
        "{recorded}"
    );
    // Every step proven: the press into the text (an unnamed text area,
    // which holds the focus), the text it holds after the keys and the
    // outcome check, by the tree; the save dialog that opened, and gave
    // way to the file; the pointer put where the mark was made.
    case_proven(&display, "replay", "move 1, state 3, window 2");
    assert_eq!(result(&display, "replayed", "txt"), "hello qt");
    // A draft in the editor: the outcome check halts the run with both
    // texts, before Save; nothing saved.
    assert_eq!(result(&display, "drafted", "code"), "10");
    let drafted = result(&display, "drafted", "err");
    assert!(
        drafted.contains("holds \"draft hello qt\"; expected a value that equals \"hello qt\""),
        "{drafted}"
    );
    assert!(!display.dir.path().join("drafted.txt").exists());
    // The save dialog closed before the path was typed: the run halted at
    // that step (by the window check before it, or by the one before its
    // first key), typing the path nowhere; resumed once the dialog was
    // back, it typed the path alone, and the file holds the text once.
    assert_eq!(result(&display, "dismissed", "code"), "10");
    let dismissed = result(&display, "dismissed", "err");
    assert!(dismissed.contains("failed at step 6"), "{dismissed}");
    assert_eq!(result(&display, "dismissed", "saved"), "", "{dismissed}");
    let resumed = result(&display, "resumed", "err");
    assert_eq!(result(&display, "resumed", "code"), "0", "{resumed}");
    assert!(resumed.contains("at step 6"), "{resumed}");
    assert_eq!(result(&display, "resumed", "txt"), "hello qt");
}

/// `replay --launch`: the recording keeps how FeatherPad was started; with
/// none open, the replay starts it so, saves the file, and ends it; with one
/// open, it starts nothing and leaves that one running.
#[test]
fn launch_starts_the_recorded_editor_when_none_is_open_and_ends_only_what_it_started() {
    let display = run_scenario("featherpad-launch.sh", 1280, 800);
    assert_eq!(result(&display, "recorded", "txt"), "hello launch");
    let shown: Value = serde_json::from_str(&run_ok(
        display.reprise().args(["show", "launch", "--json"]),
    ))
    .unwrap();
    assert!(
        shown["window_states"]
            .as_array()
            .unwrap()
            .iter()
            .any(|state| state["app_class"] == "FeatherPad"
                && state["command"]["argv"] == serde_json::json!(["featherpad"])),
        "{}",
        shown["window_states"]
    );
    case_proven(&display, "launched", "state 2, window 2");
    let err = result(&display, "launched", "err");
    assert!(
        err.contains("started FeatherPad (`featherpad`) for the replay"),
        "{err}"
    );
    assert_eq!(result(&display, "launched", "txt"), "hello launch");
    let env = result(&display, "launched-env", "txt");
    assert!(env.contains("DISPLAY="), "the editor's environment: {env}");
    assert!(
        !env.contains("leak-value"),
        "the started editor inherited a credential"
    );
    assert_eq!(
        result(&display, "left", "txt"),
        "",
        "the FeatherPad it started is ended"
    );
    case_proven(&display, "open", "state 2, window 2");
    let err = result(&display, "open", "err");
    assert!(!err.contains("started FeatherPad"), "{err}");
    assert_eq!(result(&display, "open", "txt"), "hello launch");
    assert_eq!(
        result(&display, "alive", "txt"),
        "yes",
        "the open one is left running"
    );
}

/// Also at Qt's scale 1.25, where the menu's popup is an X window of the
/// scaled size and Qt's boxes are the screen's divided by the scale: the
/// re-check's hit test in the popup takes the scale of the window the
/// popup is nested in, not the popup's size against that window's.
#[test]
fn a_qt_menu_item_in_its_popup_is_found_by_identity_and_the_file_saved() {
    let display = run_scenario_with("featherpad-menu.sh", 1280, 800, &[("DRIFTS", "scaled")]);
    assert_eq!(result(&display, "recorded", "txt"), "hello menu");
    // The press in the menu's popup (an override-redirect window that Qt
    // keeps under the menu bar in its tree) is named, not the text below it.
    let elements = recorded_elements(&display, "menu");
    assert!(
        elements.contains(&"menuItem File null".to_owned())
            && elements.contains(&"menuItem Save As null".to_owned()),
        "{elements:?}"
    );
    for case in ["replay", "scaled"] {
        case_proven(&display, case, "state 2, window 3");
        assert_eq!(result(&display, case, "txt"), "hello menu", "{case}");
    }
}

/// A GTK 3 text view with no name and no label (zenity's editable text) is
/// the identity of the click into it and of the keys after: found where
/// the window moved and in the dark theme, holding the focus after the
/// click and the typed text after the keys, so the run is proven by the
/// tree; the OK by the dialog gone from the window manager's list after
/// its press (its tree gone with it).
#[test]
fn a_click_and_typing_into_an_unnamed_gtk_text_view_are_proven_by_its_text() {
    let display = run_scenario("zenity-notes.sh", 1280, 800);
    assert_eq!(result(&display, "recorded", "out"), "hello gtk");
    let elements = recorded_elements(&display, "notes");
    assert!(
        elements
            .iter()
            .any(|element| element.starts_with("textInput")),
        "{elements:?}"
    );
    for case in ["moved", "dark"] {
        case_proven(&display, case, "state 2, window 1");
        assert_eq!(result(&display, case, "out"), "hello gtk", "{case}");
    }
}

/// Keys go only to the field they were typed into: a GTK form whose fields
/// come in another order opens with the focus on another field, and the
/// replay types nothing there (it would have typed the name into City).
#[test]
fn keys_for_one_field_are_never_typed_into_another() {
    let display = run_scenario("zenity-focus.sh", 1280, 800);
    assert_eq!(result(&display, "recorded", "out"), "alice|Bergen");
    // The recording named the entry each key group went to.
    let elements = recorded_elements(&display, "customer");
    assert!(
        elements
            .iter()
            .any(|element| element.starts_with("textInput") && element.contains("[\"Name\"]")),
        "{elements:?}"
    );
    // The same form: each value where it was typed.
    let err = result(&display, "same", "err");
    assert!(
        matches!(result(&display, "same", "code").as_str(), "0" | "12"),
        "{err}"
    );
    assert_eq!(result(&display, "same", "out"), "alice|Bergen", "{err}");
    // Swapped: refused before the first key, nothing typed.
    let err = result(&display, "swapped", "err");
    assert_eq!(result(&display, "swapped", "code"), "10", "{err}");
    assert!(
        err.contains("the keys are for text field")
            && err.contains("refusing to type into another field"),
        "{err}"
    );
    assert_eq!(result(&display, "swapped", "out"), "", "{err}");
}

/// A choice in a GTK combo box's popup, with both rungs and with pixels
/// alone: the popup (a window of its own, taller than the form when it
/// lists four choices) is where its item is looked for, by identity or in
/// its own pixels. The person rested the pointer on the item before the
/// press, so the frame at the press shows it hovered (white on blue); the
/// pixels look for it as it looked before, as it shows at replay.
#[test]
fn a_gtk_combo_box_choice_is_found_in_its_popup_and_refused_when_gone() {
    for (rungs, gone) in [
        ("structural,visual", r#"no menu item "Bergen""#),
        ("visual", "no element on the screen matches "),
    ] {
        let display = run_scenario_with("zenity-combo.sh", 1280, 800, &[("RUNGS", rungs)]);
        assert_eq!(result(&display, "recorded", "out"), "Bergen");
        // The press that opened the list is the combo box's (labelled City),
        // not the list item the popup put under the pointer a moment later.
        assert_eq!(
            recorded_elements(&display, "trip"),
            [
                r#"comboBox - ["City"]"#,
                "menuItem Bergen null",
                "button OK null"
            ]
        );
        // Only the press on Bergen was made in a popup (the list's box).
        let popups = recorded_popups(&display, "trip");
        assert_eq!(popups.len(), 1, "{popups:?}");
        if rungs == "visual" {
            // Found by the description it had at rest, not by a text
            // merely like the hovered one's.
            let found = found_for(&display, "same", "Bergen");
            assert!(found.contains("by its exact description"), "{found}");
            // Bergen chosen, but OK found by its pixels alone in an
            // application with a tree proves nothing: done, unverified.
            for case in ["same", "reordered"] {
                assert_eq!(
                    (
                        result(&display, case, "code"),
                        result(&display, case, "out")
                    ),
                    ("12".to_owned(), "Bergen".to_owned()),
                    "{}",
                    said(&display, case)
                );
                assert_eq!(evidence_for(&display, case, "OK"), "weak", "{case}");
            }
        } else {
            printed(&display, &["same", "reordered"], "Bergen");
            // The OK that closed the form: proven by the form gone.
            assert_eq!(evidence_for(&display, "same", "OK"), "window");
        }
        // Bergen gone (Bergem is not Bergen): refused, nothing chosen.
        assert_eq!(result(&display, "removed", "code"), "10", "{rungs}");
        assert_eq!(result(&display, "removed", "out"), "", "{rungs}");
        let removed = result(&display, "removed", "err");
        assert!(
            removed.contains(gone) && removed.to_lowercase().contains(r#""bergen""#),
            "{rungs}: {removed}"
        );
    }
}

#[test]
fn a_slow_dialog_is_waited_for_and_one_that_never_opens_gets_no_keys_until_resumed() {
    let display = run_scenario("zenity-slow.sh", 1280, 800);
    assert_eq!(result(&display, "recorded", "out"), "alice");
    // Five seconds later than recorded: the keys wait for it, then go in.
    assert_eq!(
        (
            result(&display, "slow", "code"),
            result(&display, "slow", "out")
        ),
        ("0".to_owned(), "alice".to_owned()),
        "{}",
        result(&display, "slow", "err")
    );
    assert_eq!(result(&display, "slow", "terminal"), "");
    // Its typing was checked in the field itself: the live tree's text.
    let runs: Value =
        serde_json::from_str(&run_ok(display.reprise().args(["runs", "--json"]))).unwrap();
    let slow = runs
        .as_array()
        .and_then(|runs| runs.last())
        .and_then(|run| run["id"].as_str())
        .expect("the first run, listed last");
    let shown: Value = serde_json::from_str(&run_ok(
        display.reprise().args(["runs", "show", slow, "--json"]),
    ))
    .unwrap();
    assert_eq!(
        shown["steps"][1]["record"]["check"],
        r#"text field (label: Your name) holds "alice", as typed"#
    );
    // Never: a clear failure, and the terminal that had the focus got nothing.
    assert_eq!(result(&display, "never", "code"), "10");
    let never = result(&display, "never", "err");
    assert!(
        never.contains(
            r#"the keys were typed into "Name" (Zenity), but "Terminal" (XTerm) has the focus"#
        ),
        "{never}"
    );
    assert_eq!(result(&display, "never", "terminal"), "");
    assert_eq!(result(&display, "never", "out"), "");
    // Resumed once the dialog was there: from the halted typing, not from
    // "Yes" (its dialog was gone), and the dialog received the name once.
    assert_eq!(
        (
            result(&display, "resumed", "code"),
            result(&display, "resumed", "out")
        ),
        ("0".to_owned(), "alice".to_owned()),
        "{}",
        result(&display, "resumed", "err")
    );
    assert!(result(&display, "resumed", "err").contains("at step 2"));
    let shown: Value = serde_json::from_str(&run_ok(
        display.reprise().args(["runs", "show", "last", "--json"]),
    ))
    .unwrap();
    // One run: its first step from before the halt, the rest from the
    // resumption, the halt said.
    let run = &shown["run"];
    assert_eq!(run["outcome"]["outcome"], "completed", "{run:#}");
    let resumptions = run["arguments"]["resumptions"].as_array().unwrap();
    assert_eq!(resumptions.len(), 1, "{run:#}");
    assert_eq!(resumptions[0]["from_step"], 1);
    assert!(
        resumptions[0]["halted"]
            .as_str()
            .unwrap()
            .starts_with("halted at step 2"),
        "{run:#}"
    );
    let statuses: Vec<&Value> = shown["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| &step["record"]["status"])
        .collect();
    assert_eq!(statuses, ["verified", "verified", "verified"], "{shown:#}");
    // Ended: not resumed again (exit 2, a reason).
    assert_eq!(result(&display, "again", "code"), "2");
    assert!(result(&display, "again", "err").contains("there is nothing to resume"));
}
