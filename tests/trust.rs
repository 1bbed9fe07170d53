//! Identity you can trust: an element is kept for a press only where its
//! box, on the screen, holds the press; a toolkit whose boxes are not the
//! screen's (GTK 4 under X11) is mapped, not believed.

use serde_json::Value;

use crate::harness::run_ok;
use crate::identity::{json_lines, result, run_scenario, said, step_lines};

/// The identity check of each press of `recording`, as `show --json` gives
/// it, beside the element kept (`role name`, or `-` for none).
fn press_checks(display: &crate::harness::Display, recording: &str) -> Vec<(String, Value)> {
    let shown: Value = serde_json::from_str(&run_ok(
        display.reprise().args(["show", recording, "--json"]),
    ))
    .expect("show --json prints JSON");
    shown["events"]
        .as_array()
        .expect("events")
        .iter()
        .flat_map(|tree| tree["children"].as_array().cloned().unwrap_or_default())
        .filter(|event| event["mouse_pressed"] == true)
        .map(|event| {
            let element = match event.get("element") {
                Some(element) => format!(
                    "{} {}",
                    element["role"].as_str().unwrap_or("?"),
                    element["name"].as_str().unwrap_or("-")
                ),
                None => "-".into(),
            };
            (element, event["identity"].clone())
        })
        .collect()
}

#[test]
fn a_gtk4_press_is_recorded_as_the_element_under_it_and_replayed_where_the_window_is_now() {
    let display = run_scenario("gtk4-demo.sh", 1280, 800);
    let recorded = result(&display, "recorded", "shows");
    assert_eq!(recorded, "window Application Class\ntab Source");
    // Each press named the element under it (before the boxes were mapped,
    // the tab's press named the source view that GTK 4's shifted boxes put
    // under the point), checked against the screen with GTK 4's offset.
    let kept_as = |recording: &str, field: &str, offset: Value| {
        let checks = press_checks(&display, recording);
        let elements: Vec<&str> = checks.iter().map(|(element, _)| element.as_str()).collect();
        assert_eq!(
            elements,
            ["label Application Class", "label Source"],
            "{checks:?}"
        );
        for (_, check) in &checks {
            assert_eq!(check["kept"], "checked", "{checks:?}");
            assert_eq!(check[field], offset, "{checks:?}");
        }
    };
    kept_as("demo", "mapped_by", serde_json::json!([155, 125]));
    let shown = run_ok(display.reprise().args(["show", "demo"]));
    assert!(
        shown.contains("(tree boxes moved by (155, 125))"),
        "{shown}"
    );
    // Replayed on the window moved, and in the dark theme: the application
    // shows the same demo and the same tab, and the run says so (exit 0:
    // the first press's window gave way to the demo's, as recorded; the
    // tab's press, which changed nothing at its target in the recording
    // either, landed on the tab re-checked just before it).
    for case in ["moved", "dark"] {
        let err = result(&display, case, "err");
        assert_eq!(result(&display, case, "shows"), recorded, "{case}: {err}");
        assert_eq!(result(&display, case, "code"), "0", "{case}: {err}");
    }
    // With the tree's boxes skewed by a row while recording, the first
    // press named the row above ("GTK Demo") whose skewed box held it: the
    // pixels in that box read the pressed row's name. The offset between
    // the two (a row up) was borne out by the pixels of the row then under
    // the press and of another row, so the press was kept as the row
    // pressed, its box moved; the tab's press, whose skewed box missed it,
    // was kept at the same offset where its pixels read its name. Kept as
    // named, the first would have been pressed exactly, on the wrong row.
    let said_while_recording = result(&display, "skewed.record", "err");
    for kept in [
        "label \"Application Class\" in \"GTK Demo\"",
        "label \"Source\" in \"Application Class\"",
    ] {
        assert!(
            said_while_recording.contains(&format!(
                "press kept once its tree's boxes were moved onto its pixels: click left down on {kept}"
            )),
            "{said_while_recording}"
        );
    }
    kept_as("skewed", "fitted", serde_json::json!([0, -38]));
    // Replayed where the tree tells the truth, and on the window moved with
    // the tree still skewed (the same offset found again in the pixels):
    // the same demo and tab, every step proven.
    for case in ["skewed", "skewed-still"] {
        let err = result(&display, case, "err");
        assert_eq!(result(&display, case, "shows"), recorded, "{case}: {err}");
        assert_eq!(result(&display, case, "code"), "0", "{case}: {err}");
    }
    let first = &step_lines(&display, "skewed-still")[0];
    assert!(
        first["found"]
            .as_str()
            .is_some_and(|found| found.contains("its boxes moved by (0, -38)")),
        "{first}"
    );
    // The truthful recording replayed with the tree skewed: the tree's row
    // and the pixels' disagree, and the run refuses before any press (the
    // row below, whose box the skewed tree gives, is never pressed).
    let err = result(&display, "live-skewed", "err");
    assert!(
        err.contains("the pixels find the target elsewhere")
            && err.contains("they disagree about the element"),
        "{err}"
    );
    assert_eq!(result(&display, "live-skewed", "code"), "10", "{err}");
    assert_eq!(
        result(&display, "live-skewed", "shows"),
        "window GTK Demo\ntab Info",
        "{err}"
    );
}

/// A second GTK 4 application (gtk4-print-editor): a click into its text,
/// typing, the text marked as the outcome, Ctrl+S and a path typed into GTK
/// 4's file chooser. Judged by the file it saved: right, and every step
/// proven (exit 0), on the window moved, in the dark theme, at scale 2 and
/// resized; on an editor that already holds a draft, every step before the
/// outcome check passes its own check, and the check halts the run before
/// the save, with both texts.
#[test]
fn a_second_gtk4_application_saves_the_same_file_under_every_drift_and_a_draft_is_caught() {
    let display = run_scenario("gtk4-print-editor.sh", 1600, 1200);
    let saved =
        |case: &str| std::fs::read_to_string(display.dir.path().join(format!("{case}.txt"))).ok();
    assert_eq!(saved("recorded").as_deref(), Some("hello gtk4"));
    let recorded = result(&display, "recorded", "err");
    assert!(
        recorded.contains("outcome check kept in version 2: text field \"GtkTextView\""),
        "{recorded}"
    );
    for case in ["moved", "dark", "scaled", "resized"] {
        let err = result(&display, case, "err");
        assert_eq!(saved(case).as_deref(), Some("hello gtk4"), "{case}: {err}");
        assert_eq!(result(&display, case, "code"), "0", "{case}: {err}");
        let lines = json_lines(&display, case);
        let outcome = lines.last().unwrap();
        // The click's focus, the typed text and the outcome check, by the
        // tree; the file chooser that opened and gave way to the saved
        // file's window; the move to the marked text.
        assert_eq!(
            outcome["coverage"]["evidence"],
            serde_json::json!({"state": 3, "window": 2, "move": 1}),
            "{case}: {outcome:#}"
        );
    }
    let drafted = result(&display, "drafted", "err");
    assert_eq!(saved("drafted"), None, "{drafted}");
    assert_eq!(result(&display, "drafted", "code"), "10", "{drafted}");
    assert!(
        drafted.contains("holds \"draft hello gtk4\"; expected a value that equals \"hello gtk4\""),
        "{drafted}"
    );
}

/// openadapt-flow's qualification, for record/replay: a text typed into a
/// GTK 3 entry and saved by a button that writes it to a file, judged by
/// the file alone. Clean, with the button in another container and place,
/// and with it shown 2 s late: the file written and exit 0 (the Save press
/// changed nothing the window shows, in the recording either: the press
/// landing on the re-checked button is its proof); a twin button: refused,
/// nothing written; a disabled button: nothing written, and the run fails
/// rather than say it saved (`scripts/bench-qualification.sh` makes each
/// case three times).
#[test]
fn a_saved_text_is_judged_by_the_file_right_where_the_button_is_and_refused_where_it_is_twinned() {
    let display = run_scenario("save-entry.sh", 1280, 800);
    let saved =
        |case: &str| std::fs::read_to_string(display.dir.path().join(format!("{case}.saved"))).ok();
    assert_eq!(saved("recorded").as_deref(), Some("hello qual"));
    for case in ["clean-1", "replaced-1", "late-1"] {
        let err = result(&display, case, "err");
        assert_eq!(saved(case).as_deref(), Some("hello qual"), "{case}: {err}");
        assert_eq!(result(&display, case, "code"), "0", "{case}: {err}");
        let steps = step_lines(&display, case);
        assert_eq!(steps.len(), 3, "{case}: {steps:#?}");
        assert_eq!(steps[2]["evidence"], "landed", "{case}: {:#}", steps[2]);
    }
    let twin = result(&display, "twin-1", "err");
    assert_eq!(saved("twin-1"), None, "{twin}");
    assert_eq!(result(&display, "twin-1", "code"), "10", "{twin}");
    assert!(twin.contains("nothing tells them apart"), "{twin}");
    // Pressed but insensitive: no file, and never "verified".
    let disabled = result(&display, "disabled-1", "err");
    assert_eq!(saved("disabled-1"), None, "{disabled}");
    assert_eq!(result(&display, "disabled-1", "code"), "10", "{disabled}");
}

#[test]
fn a_changed_target_is_healed_into_a_new_version_only_when_asked() {
    let display = run_scenario("zenity-heal.sh", 1280, 800);
    let said = |case: &str| said(&display, case);
    assert_eq!(result(&display, "recorded", "out"), "proceeded");
    // The renamed button is found (a trailing ellipsis is the same name),
    // pressed and proven; the heal is listed, not saved.
    assert_eq!(
        result(&display, "listed", "code"),
        "0",
        "{}",
        said("listed")
    );
    assert_eq!(result(&display, "listed", "out"), "proceeded");
    let listed = result(&display, "listed", "err");
    assert!(
        listed.contains("heal: step 1: found as button \"Proceed…\""),
        "{listed}"
    );
    assert!(listed.contains("--save-healed"), "{listed}");
    let versions: Value =
        serde_json::from_str(&result(&display, "after-listed", "versions")).unwrap();
    assert_eq!(
        versions["latest"], 1,
        "nothing healed silently: {versions:#}"
    );
    // Saved when asked: version 2, and diff shows what changed.
    assert_eq!(result(&display, "saved", "code"), "0", "{}", said("saved"));
    assert_eq!(result(&display, "saved", "out"), "proceeded");
    assert!(
        result(&display, "saved", "err").contains("as version 2 of \"heal\""),
        "{}",
        said("saved")
    );
    let diff = result(&display, "diff", "txt");
    assert!(
        diff.starts_with("heal@1 → heal@2: 1 step changed"),
        "{diff}"
    );
    assert!(diff.contains("step 1: its name\n"), "{diff}");
    assert!(diff.contains("- button \"Proceed\" in \"Start\""), "{diff}");
    assert!(
        diff.contains("+ button \"Proceed…\" in \"Start\""),
        "{diff}"
    );
    let json: Value = serde_json::from_str(&result(&display, "diff", "json")).unwrap();
    assert_eq!(
        (json["from"].clone(), json["to"].clone()),
        (1.into(), 2.into())
    );
    assert!(result(&display, "show-2", "txt").contains("\"Proceed…\""));
    let imported: Value = serde_json::from_str(&result(&display, "imported", "versions")).unwrap();
    assert_eq!(
        imported["latest"], 2,
        "an export carries its versions: {imported:#}"
    );
    assert!(!result(&display, "show-1", "txt").contains("Proceed…"));
    // The newest version is replayed by default: nothing left to heal.
    assert_eq!(result(&display, "next", "code"), "0", "{}", said("next"));
    assert_eq!(result(&display, "next", "out"), "proceeded");
    assert!(
        !result(&display, "next", "err").contains("heal:"),
        "{}",
        said("next")
    );
    // The first, pinned, is the recording as made: it heals again.
    assert_eq!(
        result(&display, "pinned", "code"),
        "0",
        "{}",
        said("pinned")
    );
    assert!(result(&display, "pinned", "err").contains("heal: step 1"));
    // A version that does not exist: refused, nothing pressed.
    assert_eq!(
        result(&display, "unknown", "code"),
        "3",
        "{}",
        said("unknown")
    );
    assert_eq!(result(&display, "unknown", "out"), "");
    assert!(
        result(&display, "unknown", "err").contains("@7"),
        "{}",
        said("unknown")
    );
}

#[test]
fn a_twin_taught_once_is_chosen_by_the_resumed_run_and_every_later_one() {
    let display = run_scenario("zenity-teach.sh", 1280, 800);
    assert_eq!(result(&display, "recorded", "out"), "Maria Olsen|Tromsø|3");
    // Twins nothing on the screen tells apart: refused, both listed in
    // reading order, nothing pressed.
    assert_eq!(
        result(&display, "twins", "code"),
        "10",
        "{}",
        said(&display, "twins")
    );
    assert_eq!(result(&display, "twins", "out"), "");
    let twins = result(&display, "twins", "err");
    assert!(
        twins.contains("refused: 2 elements fit table cell \"Maria Olsen\" (row: Tromsø)")
            && twins.contains("1. table cell")
            && twins.contains("2. table cell")
            && twins.contains("`reprise teach`"),
        "{twins}"
    );
    // The report lists them as twins, each with its crop as the run saw it.
    let report = result(&display, "twins", "html");
    let rows: Vec<&str> = report.split("<tr class=\"candidate\">").skip(1).collect();
    assert!(
        report.contains("twins nothing tells apart, in reading order") && rows.len() == 2,
        "{report}"
    );
    for row in rows {
        let row = &row[..row.find("</tr>").unwrap()];
        assert!(
            row.contains("<td class=\"seen\"><div class=\"shot\"><img"),
            "{row}"
        );
    }
    // No terminal, no --pick: asked for one, nothing taught.
    assert_eq!(result(&display, "unpicked", "code"), "2");
    assert!(result(&display, "unpicked", "err").contains("give --pick N"));
    let taught = result(&display, "taught", "stdout");
    assert!(
        taught.contains("taught step 1: the 2nd of 2 twins in reading order"),
        "{taught}"
    );
    let versions: Value = serde_json::from_str(&result(&display, "taught", "versions")).unwrap();
    assert_eq!(versions["latest"], 2, "{versions:#}");
    assert!(
        versions["versions"][0]["changes"][0]["why"]
            .as_str()
            .unwrap()
            .starts_with("taught: the 2nd of 2 twins"),
        "{versions:#}"
    );
    // The halted run goes on and picks the second (id 3), not the first.
    crate::identity::printed(&display, &["resumed"], "Maria Olsen|Tromsø|3");
    // A later run decides alone: the second of two twins again (id 6).
    crate::identity::printed(&display, &["later"], "Maria Olsen|Tromsø|6");
    // Three twins are not what was taught: refused, nothing pressed.
    assert_eq!(result(&display, "three", "code"), "10");
    assert_eq!(result(&display, "three", "out"), "");
    assert!(
        result(&display, "three", "err").contains("(taught: the 2nd of 2 twins; now 3 fit)"),
        "{}",
        result(&display, "three", "err")
    );
    // Taught again by a click on the third: read, never passed to the
    // list (its OK then submitted no row of it), kept as version 3, and
    // the halted run goes on with the third (id 10).
    let clicked = result(&display, "clicked", "err");
    assert_eq!(result(&display, "clicked", "code"), "0", "{clicked}");
    assert!(
        result(&display, "clicked", "stdout")
            .contains("taught step 1: the 3rd of 3 twins in reading order"),
        "{clicked}"
    );
    assert_eq!(result(&display, "three", "ok"), "closed", "OK was answered");
    assert_eq!(
        result(&display, "three", "out"),
        "",
        "the click reached the list"
    );
    let versions: Value = serde_json::from_str(&result(&display, "clicked", "versions")).unwrap();
    assert_eq!(versions["latest"], 3, "{versions:#}");
    assert_eq!(
        result(&display, "clickresumed", "code"),
        "0",
        "{}",
        said(&display, "clickresumed")
    );
    assert_eq!(
        result(&display, "clickresumed", "out"),
        "Maria Olsen|Tromsø|10"
    );
    // Taught as it halted (`replay --teach` at a terminal): two twins where
    // three were taught, the first answered, kept as version 4, and the
    // run went on from that step to pick it (id 11).
    let inline = result(&display, "inline", "stdout");
    assert_eq!(result(&display, "inline", "code"), "0", "{inline}");
    assert!(
        inline.contains("(taught: the 3rd of 3 twins; now 2 fit)")
            && inline.contains("taught step 1: the 1st of 2 twins in reading order")
            && inline.contains("going on from step 1"),
        "{inline}"
    );
    assert_eq!(result(&display, "inline", "out"), "Maria Olsen|Tromsø|11");
    let versions: Value = serde_json::from_str(&result(&display, "inline", "versions")).unwrap();
    assert_eq!(versions["latest"], 4, "{versions:#}");
}

/// No blind presses: in GTK 3's file chooser (zenity --file-selection),
/// the presses on a folder's row and a file's row, made on the rows'
/// blank ends, are recorded as the cells they hit (the chooser widget
/// inside the dialog is a widget, not a popup to stop above) and found by
/// them with two folders added above; with the folder gone, nothing is
/// pressed. With pixels alone, the presses have nothing of their own in
/// the pixels, only their places' looks: made where the place looks as
/// recorded, refused where another row took it. Judged by the file the
/// chooser printed.
#[test]
fn a_press_in_a_file_list_is_found_by_its_row_and_never_made_blind_where_the_rows_moved() {
    let display = run_scenario("zenity-files.sh", 1280, 800);
    let checks = press_checks(&display, "files");
    let elements: Vec<&str> = checks.iter().map(|(element, _)| element.as_str()).collect();
    assert_eq!(
        elements[0], "cell beta",
        "the double-click's first press names the folder's row: {checks:?}"
    );
    // Its second press names the folder's row too, or, where the reader
    // asked once the folder had opened, the tree named the row there now
    // ("plan.txt"), whose box shows "beta" in the press's frame: that
    // identity is not kept.
    match elements[1] {
        "cell beta" => {}
        "-" => {
            assert_eq!(checks[1].1["why"], "reads_another", "{checks:?}");
            assert_eq!(
                checks[1].1["element"], "table cell \"plan.txt\"",
                "{checks:?}"
            );
            assert_eq!(checks[1].1["read"], "beta", "{checks:?}");
        }
        other => panic!("the double-click's second press kept as {other}: {checks:?}"),
    }
    assert_eq!(elements[2..], ["cell plan.txt", "button OK"], "{checks:?}");
    let chosen = |case: &str| {
        let dir = display.dir.path().display().to_string();
        result(&display, case, "out").replace(&dir, "$OUT")
    };
    for case in ["same", "above"] {
        let err = result(&display, case, "err");
        assert_eq!(
            chosen(case),
            format!("$OUT/{case}/beta/plan.txt"),
            "{case}: {err}"
        );
        assert_eq!(result(&display, case, "code"), "0", "{case}: {err}");
    }
    // Every press was made on its row's or button's identity, re-checked.
    let coverage = |case: &str| -> Value {
        result(&display, case, "stdout")
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find(|line| line["type"] == "outcome")
            .map(|outcome| outcome["coverage"].clone())
            .unwrap_or(Value::Null)
    };
    let above = coverage("above");
    assert_eq!(
        (&above["presses"], &above["by_identity"]),
        (&serde_json::json!(3), &serde_json::json!(3)),
        "{above}"
    );
    let gone = result(&display, "gone", "err");
    assert_eq!(chosen("gone"), "", "{gone}");
    assert_eq!(result(&display, "gone", "code"), "10", "{gone}");
    assert!(gone.contains("no table cell \"beta\""), "{gone}");
    // Pixels alone.
    let same = result(&display, "pixels-same", "err");
    assert_eq!(
        chosen("pixels-same"),
        "$OUT/pixels-same/beta/plan.txt",
        "{same}"
    );
    assert_eq!(coverage("pixels-same")["by_identity"], 0);
    let above = result(&display, "pixels-above", "err");
    assert_eq!(chosen("pixels-above"), "", "{above}");
    assert_eq!(result(&display, "pixels-above", "code"), "10", "{above}");
    assert!(
        above.contains("nothing of its own to find it by but the look of its place"),
        "{above}"
    );
    assert!(above.contains("not made blind there"), "{above}");
}

/// A Tk editor (Python's IDLE) exposes no accessibility tree at all: the
/// click into its text is found by the pixels, the typing and Ctrl+S made
/// after it. Judged by the file each replay saved: right on the window
/// moved, in IDLE's dark theme, with a larger font and resized. The click's
/// only change in the recording was the caret, which blinks: no frame can
/// be counted on to show it, so the click is neither pressed again nor
/// failed for want of it; it is unverified, and the run exits 12.
#[test]
fn a_tk_editor_with_no_tree_saves_the_same_file_under_every_drift() {
    let display = run_scenario("idle-save.sh", 1280, 800);
    let saved =
        |case: &str| std::fs::read_to_string(display.dir.path().join(format!("{case}.py"))).ok();
    assert_eq!(saved("recorded").as_deref(), Some("print(\"hello tk\")\n"));
    for case in ["moved", "dark", "font", "resized"] {
        let err = result(&display, case, "err");
        assert_eq!(saved(case), saved("recorded"), "{case}: {err}");
        assert_eq!(result(&display, case, "code"), "12", "{case}: {err}");
        assert!(
            err.contains("steps by proof: pixels 1, unverified 1"),
            "{case}: {err}"
        );
        assert!(!err.contains("no visible effect"), "{case}: {err}");
    }
}

/// A file manager's icon view (Thunar, GTK 3), whose tree names no item:
/// a click on beta.txt, found by its label in the pixels, then F2 and a new
/// name in the rename dialog. Judged by the folder: beta.txt renamed on the
/// window moved, dark, at scale 2, resized, and with a file added before it
/// (the icons moved); with beta.txt gone, refused and nothing renamed. The
/// click's selection is nothing the tree exposes, so its pixels are weak
/// evidence and the run exits 12; the dialog's opening and closing are
/// proven by the windows.
#[test]
fn a_file_renamed_in_a_file_managers_icon_view_is_the_same_file_under_every_drift() {
    let display = run_scenario("thunar-rename.sh", 1280, 800);
    let files = |case: &str| result(&display, case, "files");
    assert_eq!(files("recorded"), "alpha.txt\ngamma.txt\nrenamed.txt");
    for (case, expected) in [
        ("moved", "alpha.txt\ngamma.txt\nrenamed.txt"),
        ("dark", "alpha.txt\ngamma.txt\nrenamed.txt"),
        ("scaled", "alpha.txt\ngamma.txt\nrenamed.txt"),
        ("resized", "alpha.txt\ngamma.txt\nrenamed.txt"),
        ("added", "aardvark.txt\nalpha.txt\ngamma.txt\nrenamed.txt"),
    ] {
        let err = result(&display, case, "err");
        assert_eq!(files(case), expected, "{case}: {err}");
        assert_eq!(result(&display, case, "code"), "12", "{case}: {err}");
        assert!(
            err.contains("steps by proof: unverified 1, window 2"),
            "{case}: {err}"
        );
    }
    let err = result(&display, "gone", "err");
    assert_eq!(files("gone"), "alpha.txt\ngamma.txt", "{err}");
    assert_eq!(result(&display, "gone", "code"), "10", "{err}");
    assert!(err.contains("no element on the screen matches"), "{err}");
}
