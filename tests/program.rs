//! Recordings as programs: steps printed as a text, edited by file and in
//! an editor into a new version, and replayed with waits, reads and
//! assertions, judged by what a third-party dialog (zenity) printed.

use serde_json::Value;

use crate::identity::{result, run_scenario, said};

#[test]
fn an_edited_recording_waits_reads_a_value_checks_it_and_types_it() {
    let display = run_scenario("zenity-program.sh", 1280, 800);
    let said = |case: &str| said(&display, case);
    assert_eq!(result(&display, "recorded", "out"), "999");
    let steps = result(&display, "steps-1", "toml");
    assert!(
        steps.contains("# The steps of \"copy\" (version 1 of 1)"),
        "{steps}"
    );
    assert!(
        steps.contains(
            "recorded = 1\ndo = \"singleclick\"\non = { role = \"text field\", window = \"Target\" }"
        ),
        "{steps}"
    );
    assert!(steps.contains("types = \"999\""), "{steps}");
    assert!(steps.contains("recorded = 3"), "{steps}");

    // Mistakes name their line and field, and nothing is saved.
    for (case, expected) in [
        ("unbounded", "line 20, wait.timeout: a wait needs its bound"),
        ("unknown", "{totl} is not read by any step before this one"),
        ("unclosed", "line 23, toml:"),
    ] {
        assert_eq!(result(&display, case, "code"), "2", "{}", said(case));
        let err = result(&display, case, "err");
        assert!(err.contains(expected), "{case}: {err}");
        assert!(err.contains("nothing was saved"), "{case}: {err}");
    }
    let versions: Value =
        serde_json::from_str(&result(&display, "after-mistakes", "versions")).unwrap();
    assert_eq!(versions["latest"], 1, "{versions:#}");

    // In the editor: the mistake said at the top of the file opened again,
    // then saved as version 2.
    assert_eq!(result(&display, "edit", "code"), "0", "{}", said("edit"));
    assert_eq!(result(&display, "editor", "rounds"), "2");
    let again = result(&display, "editor-1", "head");
    assert!(
        again.starts_with("# reprise edit: NOT SAVED: line 22 (wait.timeout)"),
        "{again}"
    );
    assert!(
        result(&display, "edit", "stdout").contains("saved version 2 of \"copy\""),
        "{}",
        result(&display, "edit", "stdout")
    );
    let versions: Value = serde_json::from_str(&result(&display, "edited", "versions")).unwrap();
    assert_eq!(versions["latest"], 2, "{versions:#}");
    assert_eq!(versions["versions"][0]["note"], "read the total");
    let edited = result(&display, "steps-2", "toml");
    assert!(edited.contains("(version 2 of 2)"), "{edited}");
    assert!(
        edited.contains("read = { role = \"text field\", window = \"Source\", into = \"total\" }"),
        "{edited}"
    );
    assert!(
        edited.contains("= \"{total}\"    # recorded: \"999\""),
        "{edited}"
    );
    assert_eq!(
        result(&display, "again", "stdout"),
        "no change: nothing was saved"
    );

    // The total read off the late Source, checked, typed into the Target
    // in place of 999, checked there, and submitted: exit 0, every step
    // proven by the application's own state.
    assert_eq!(result(&display, "right", "code"), "0", "{}", said("right"));
    assert_eq!(result(&display, "right", "out"), "123.45");
    let lines: Vec<Value> = result(&display, "right", "stdout")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .filter(|line: &Value| line["type"] == "step")
        .collect();
    let checks: Vec<(String, String)> = lines
        .iter()
        .map(|line| {
            (
                line["evidence"].as_str().unwrap_or("-").to_owned(),
                line["check"].as_str().unwrap_or("-").to_owned(),
            )
        })
        .collect();
    assert_eq!(lines.len(), 7, "{checks:#?}");
    assert!(
        checks[0].1.contains("text field in \"Source\" shows"),
        "{checks:#?}"
    );
    assert!(
        checks[1].1.contains("holds \"123.45\", kept as {total}"),
        "{checks:#?}"
    );
    assert!(checks[4].1.contains("holds \"123.45\""), "{checks:#?}");
    assert!(
        checks[5].1.contains("which equals \"123.45\""),
        "{checks:#?}"
    );
    assert!(
        checks
            .iter()
            .take(6)
            .all(|(evidence, _)| evidence == "state"),
        "{checks:#?}"
    );

    // A total the check refuses: the run halts there with both values,
    // nothing typed, nothing submitted.
    assert_eq!(result(&display, "wrong", "code"), "10", "{}", said("wrong"));
    assert_eq!(result(&display, "wrong", "out"), "");
    let wrong = result(&display, "wrong", "err");
    assert!(
        wrong.contains(
            "failed at step 3: assertion failed: text field in \"Source\" holds \"99.10\"; expected a value that is within 0.005 of 123.45"
        ),
        "{wrong}"
    );
}
