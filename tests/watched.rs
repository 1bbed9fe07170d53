//! The watched application: recording costs it a bounded, small amount of
//! work whatever it exposes. LibreOffice Calc's sheet reports 2^31 cells;
//! a person's task in it is recorded while Calc's answer times are sampled,
//! judged by the file Calc saved, then replayed on a fresh Calc and judged
//! the same way. A GTK list of a million rows (two million cells) is
//! recorded while it answers, and its row found again with one more above.
//! A dialog that stops answering is backed off, and the input goes on being
//! recorded.

use crate::harness::run_ok;
use crate::identity::{recorded_elements, result, run_scenario};

/// The cells of the first sheet of an OpenDocument spreadsheet, as
/// `(address, value or formula)`, from its `content.xml`.
fn sheet_cells(path: &std::path::Path) -> Vec<(String, String)> {
    let out = std::process::Command::new("unzip")
        .arg("-p")
        .arg(path)
        .arg("content.xml")
        .output()
        .expect("run unzip");
    assert!(out.status.success(), "unzip {}", path.display());
    let content = String::from_utf8(out.stdout).expect("content.xml is UTF-8");
    let attribute = |element: &str, name: &str| -> Option<String> {
        let start = element.find(&format!(" {name}=\""))? + name.len() + 3;
        let end = start + element[start..].find('"')?;
        Some(element[start..end].to_owned())
    };
    let repeated = |element: &str, name: &str| -> usize {
        attribute(element, name).map_or(1, |n| n.parse().expect("a repeat count"))
    };
    let mut cells = Vec::new();
    let mut row = 0;
    for row_element in content.split("<table:table-row ").skip(1) {
        let row_end = row_element
            .find("</table:table-row>")
            .unwrap_or(row_element.len());
        let (row_tag, row_body) = row_element[..row_end].split_once('>').expect("a row tag");
        let mut column = 0;
        for cell in row_body.split("<table:table-cell").skip(1) {
            let tag = cell.split('>').next().unwrap_or_default();
            let value = attribute(tag, "table:formula").or_else(|| attribute(tag, "office:value"));
            if let Some(value) = value {
                let letter = char::from(b'A' + column as u8);
                cells.push((format!("{letter}{}", row + 1), value));
            }
            column += repeated(tag, "table:number-columns-repeated");
        }
        row += repeated(row_tag, "table:number-rows-repeated");
    }
    cells
}

/// The answer times of a sampling file (`scripts/a11y-answers.py`), in
/// milliseconds; a sample that got no answer is `None`.
fn answers(display: &crate::harness::Display, when: &str) -> Vec<Option<f64>> {
    result(display, "answers", when)
        .lines()
        .map(|line| line.parse().ok())
        .collect()
}

#[test]
fn a_calc_task_is_recorded_while_calc_answers_and_replayed_on_a_fresh_calc() {
    let display = run_scenario("calc.sh", 1280, 800);
    let expected = [
        ("B3".to_owned(), "42".to_owned()),
        ("B4".to_owned(), "of:=[.B3]*2".to_owned()),
    ];
    // The person's task went through while it was recorded: Calc saved
    // what was typed, in the cells clicked.
    assert_eq!(
        sheet_cells(&display.dir.path().join("recorded.ods")),
        expected
    );
    // Each press is named by Calc's tree: the cells (only the cells that
    // show were read of 2^31), the menu and the item in its popup; and the
    // file name typed into Save As went to its focused field (read at the
    // first key after the menu item opened the dialog).
    let elements = recorded_elements(&display, "calc");
    let named: Vec<&str> = elements
        .iter()
        .map(|element| element.split(" [").next().unwrap_or(element))
        .collect();
    assert_eq!(
        named,
        [
            "cell B3",
            "cell B4",
            "menu File null",
            "menuItem Save As... null",
            "textInput -"
        ],
        "{elements:?}"
    );
    // Calc answered its accessibility requests all through the recording
    // and after it: a frozen Calc answers none within 16 s.
    for name in ["during", "after"] {
        let samples = answers(&display, name);
        assert!(samples.len() >= 5, "{name}: {samples:?}");
        assert!(
            samples
                .iter()
                .all(|answer| answer.is_some_and(|ms| ms < 2000.0)),
            "{name}: {samples:?}"
        );
    }
    // Replayed on a fresh Calc (whose sheet reports its boxes 25 px off
    // until its first click): every step done, none failed, and the same
    // cells in the same file. A step may be unverified (exit 12) where the
    // recorder, on a loaded machine, took no frame between it and the next
    // step: then the recording shows no effect to expect.
    let (code, err) = (
        result(&display, "replay", "code"),
        result(&display, "replay", "err"),
    );
    match code.as_str() {
        "0" => {}
        "12" => assert!(err.contains(" unverified, 0 failed"), "{err}"),
        other => panic!("replay exit {other}: {err}"),
    }
    assert_eq!(
        sheet_cells(&display.dir.path().join("replayed.ods")),
        expected
    );
}

/// The figures of a `reprise bench answers` line: the samples and how many
/// got no answer in time.
fn sampled(line: &str) -> (usize, usize) {
    let number_before = |word: &str| -> usize {
        let at = line
            .find(word)
            .unwrap_or_else(|| panic!("{word:?} in {line:?}"));
        line[..at]
            .split_whitespace()
            .last()
            .and_then(|number| number.parse().ok())
            .unwrap_or_else(|| panic!("a number before {word:?} in {line:?}"))
    };
    (
        number_before(" samples"),
        number_before(" without an answer"),
    )
}

#[test]
fn a_pick_in_a_list_of_a_million_rows_is_recorded_and_replayed_by_its_identity() {
    let display = run_scenario("big-list.sh", 1280, 800);
    assert_eq!(result(&display, "recorded", "out"), "Person 3|City 3");
    // The row is named by its cells, read from what shows of a table of
    // two million cells.
    assert_eq!(
        recorded_elements(&display, "pick"),
        [r#"cell Person 3 ["City 3"]"#, "button OK null"]
    );
    // The list answered every request while the recorder read it.
    let (n_samples, n_missed) = sampled(&result(&display, "answers", "during"));
    assert_eq!((n_samples, n_missed), (12, 0));
    // One more row above, the window moved: the same person.
    assert_eq!(
        result(&display, "replay", "code"),
        "0",
        "{}",
        result(&display, "replay", "err")
    );
    assert_eq!(result(&display, "replayed", "out"), "Person 3|City 3");
}

#[test]
fn a_dialog_that_stops_answering_is_backed_off_once_and_its_input_still_recorded() {
    let display = run_scenario("frozen.sh", 1280, 800);
    // Let go again, the dialog took the typing the person did meanwhile.
    assert_eq!(result(&display, "recorded", "out"), "abc");
    // Asked once, backed off once, said once.
    let err = result(&display, "record", "err");
    assert_eq!(
        err.matches("did not answer its accessibility requests in time")
            .count(),
        1,
        "{err}"
    );
    // Every input event is in the recording.
    let shown = run_ok(display.reprise().args(["show", "frozen"]));
    for event in [
        "click left down",
        "click left up",
        r#"press "a""#,
        r#"press "b""#,
        r#"press "c""#,
        r#"press "<enter>""#,
    ] {
        assert!(shown.contains(event), "{event}: {shown}");
    }
}
