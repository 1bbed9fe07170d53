//! Recordings as programs: steps printed as a text, edited by file and in
//! an editor into a new version, and replayed with waits, reads and
//! assertions, judged by what a third-party dialog (zenity) printed.

use serde_json::Value;

use crate::identity::{result, run_scenario, said, step_lines};

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
        ("unbounded", "line 22, wait.timeout: a wait needs its bound"),
        ("unknown", "{totl} is not read by any step before this one"),
        ("unclosed", "line 25, toml:"),
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
        again.starts_with("# reprise edit: NOT SAVED: line 24 (wait.timeout)"),
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
    let lines = step_lines(&display, "right");
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

    // The total read as a secret: the Target received it and the checks
    // passed on it, and Reprise wrote it nowhere (what it printed, its
    // messages, the run's report), its name in its place.
    let steps = result(&display, "steps-3", "toml");
    assert!(
        steps.contains("into = \"total\", secret = true }"),
        "{steps}"
    );
    assert_eq!(
        result(&display, "hidden", "code"),
        "0",
        "{}",
        said("hidden")
    );
    assert_eq!(result(&display, "hidden", "out"), "123.45");
    let stdout = result(&display, "hidden", "stdout");
    assert!(
        stdout.contains("holds {total}, kept as {total}"),
        "{stdout}"
    );
    assert!(stdout.contains("which equals {total}"), "{stdout}");
    for what in ["stdout", "err", "html"] {
        let text = result(&display, "hidden", what);
        assert!(!text.contains("123.45"), "{what}: {text}");
    }
}

#[test]
fn an_edited_recording_repeats_for_each_row_and_answers_a_dialog_only_when_it_shows() {
    let display = run_scenario("zenity-blocks.sh", 1280, 800);
    assert_eq!(result(&display, "recorded", "names"), "alice");
    assert_eq!(result(&display, "recorded", "confirms"), "alice");
    let edited = result(&display, "steps-2", "toml");
    assert!(edited.contains("(version 2 of 2)"), "{edited}");
    assert!(
        edited.contains("\n  [[step]]\n  if = { window = \"Confirm\", timeout = 4 }\n\n    [[step]]\n    recorded = 4\n"),
        "{edited}"
    );
    for (case, confirmed) in [("asked", "bo"), ("never", "")] {
        let said = said_of(&display, case);
        assert_eq!(result(&display, case, "code"), "0", "{said}");
        assert_eq!(result(&display, case, "names"), "ann\nbo\ncy", "{said}");
        assert_eq!(result(&display, case, "confirms"), confirmed, "{said}");
        let lines = step_lines(&display, case);
        let ifs: Vec<&str> = lines
            .iter()
            .filter(|line| line["action"].as_str().unwrap_or("").starts_with("if "))
            .map(|line| line["check"].as_str().unwrap_or("-"))
            .collect();
        assert_eq!(ifs.len(), 3, "{ifs:#?}");
        for (row, check) in ["ann", "bo", "cy"].iter().zip(&ifs) {
            let runs = check.ends_with("its block runs");
            assert_eq!(runs, *row == confirmed, "{row}: {check}");
        }
        assert!(
            lines.iter().all(|line| line["status"] == "verified"),
            "{lines:#?}"
        );
    }
}

fn said_of(display: &crate::harness::Display, case: &str) -> String {
    format!(
        "{case}: exit {}\n{}",
        result(display, case, "code"),
        result(display, case, "err")
    )
}

/// An OpenAI-format answer holding `text`.
fn answer(text: &str) -> reprise::testing::Reply {
    reprise::testing::Reply::json(
        200,
        serde_json::json!({
            "choices": [{"message": {"content": text}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 50}
        }),
    )
}

/// `reprise` on a store of the sample recording, its models the scripted
/// server at `url`.
fn asking(store: &std::path::Path, url: &str) -> std::process::Command {
    let mut command = crate::llm::reprise(store);
    command
        .env("REPRISE_OPENAI_BASE_URL", format!("{url}/v1"))
        .env("REPRISE_OPENAI_MODEL", "editor");
    command
}

#[test]
fn an_edit_asked_in_plain_language_is_checked_shown_and_kept_only_when_accepted() {
    use crate::harness::{assert_fails, run_ok};
    let instruction =
        "type bob instead of alice, and wait for the Saved window before the last click";
    let (_dir, store) = crate::cli::store_with_sample();
    let steps = run_ok(crate::llm::reprise(&store).args(["steps", "demo"]));
    // The change a person would make by hand, and a mistaken one (a wait
    // for an element no window near it names).
    let edited = steps
        .replace("# text = \"alice\"", "text = \"bob\"")
        .replace(
            "[[step]]\nrecorded = 6",
            "[[step]]\nwait = { window = \"Saved\", timeout = 5 }\n\n[[step]]\nrecorded = 6",
        );
    assert_ne!(edited, steps);
    let mistaken = edited.replace(
        "wait = { window = \"Saved\", timeout = 5 }",
        "wait = { role = \"label\", name = \"Saved\", timeout = 5 }",
    );
    let fenced = |text: &str| format!("Here is the changed file:\n```toml\n{text}```\n");

    // By hand, for comparison.
    let (_by_hand_dir, by_hand) = crate::cli::store_with_sample();
    let file = by_hand.with_file_name("edited.toml");
    std::fs::write(&file, &edited).unwrap();
    run_ok(crate::llm::reprise(&by_hand).args(["edit", "demo", "--file", file.to_str().unwrap()]));
    let hand_steps = run_ok(crate::llm::reprise(&by_hand).args(["steps", "demo"]));

    // A mistaken answer, then a right one: the mistake goes back with its
    // line and field; the change is shown and kept.
    let server = reprise::testing::ScriptedServer::start(vec![
        answer(&fenced(&mistaken)),
        answer(&fenced(&edited)),
    ]);
    let out = run_ok(asking(&store, &server.url).args([
        "edit",
        "demo",
        "--instruct",
        instruction,
        "--yes",
    ]));
    assert!(out.contains("+ text = \"bob\""), "{out}");
    assert!(
        out.contains("+ wait = { window = \"Saved\", timeout = 5 }"),
        "{out}"
    );
    assert!(out.contains("saved version 2 of \"demo\""), "{out}");
    let received = server.received();
    assert_eq!(received.len(), 2);
    let first: Value = serde_json::from_str(&received[0].body).unwrap();
    let prompt = first["messages"].to_string();
    assert!(
        prompt.contains(instruction) && prompt.contains("recorded = 6"),
        "{prompt}"
    );
    assert!(
        !received[0].body.contains("image_url"),
        "no frames are sent"
    );
    let second = &received[1].body;
    assert!(
        second.contains("could not be used") && second.contains("window"),
        "{second}"
    );
    assert_eq!(
        run_ok(crate::llm::reprise(&store).args(["steps", "demo"])),
        hand_steps,
        "the same steps as the hand edit"
    );

    // Never a usable answer: refused after a bounded number, nothing kept.
    let (_never_dir, never) = crate::cli::store_with_sample();
    let server = reprise::testing::ScriptedServer::start(vec![
        answer(&fenced(&mistaken)),
        answer("I cannot do that."),
        answer(&fenced(&mistaken)),
        answer(&fenced(&edited)),
    ]);
    let out = asking(&never, &server.url)
        .args(["edit", "demo", "--instruct", instruction, "--yes"])
        .output()
        .unwrap();
    assert_fails(
        &out,
        5,
        &["stayed unusable after 3 attempts", "nothing was saved"],
        "never",
    );
    assert_eq!(server.received().len(), 3);
    assert_eq!(latest_version(&never), 1);

    // No terminal and no --yes: shown, not kept.
    let server = reprise::testing::ScriptedServer::start(vec![answer(&fenced(&edited))]);
    let out = asking(&never, &server.url)
        .args(["edit", "demo", "--instruct", instruction])
        .output()
        .unwrap();
    assert_fails(
        &out,
        2,
        &["give --yes to keep it", "nothing was saved"],
        "unasked",
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("+ text = \"bob\""));
    assert_eq!(latest_version(&never), 1);

    // With --frames: the screen before each step goes with the text, each
    // image named by its step, and the person is told before it is sent.
    let server = reprise::testing::ScriptedServer::start(vec![answer(&fenced(&edited))]);
    let out = asking(&never, &server.url)
        .args([
            "edit",
            "demo",
            "--instruct",
            instruction,
            "--frames",
            "--yes",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let n_steps = steps.matches("\nrecorded = ").count();
    assert!(
        err.contains(&format!("the frames of {n_steps} steps")),
        "{err}"
    );
    let body: Value = serde_json::from_str(&server.received()[0].body).unwrap();
    let parts = body["messages"][1]["content"].as_array().unwrap();
    let images: Vec<&str> = parts
        .iter()
        .filter_map(|part| part["image_url"]["url"].as_str())
        .collect();
    assert_eq!(images.len(), n_steps, "{parts:#?}");
    assert!(
        images
            .iter()
            .all(|url| url.starts_with("data:image/png;base64,"))
    );
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|part| part["text"].as_str())
        .collect();
    assert!(texts[0].contains("Images follow"), "{}", texts[0]);
    assert!(
        texts[1].starts_with("The screen before step 1 (recorded = 1)"),
        "{texts:#?}"
    );
}

/// The newest version of the recording "demo" in the store at `store`.
fn latest_version(store: &std::path::Path) -> u64 {
    let versions: Value = serde_json::from_str(&crate::harness::run_ok(
        crate::llm::reprise(store).args(["versions", "demo", "--json"]),
    ))
    .unwrap();
    versions["latest"].as_u64().expect("a version number")
}

/// An outcome marked while recording (#41): the field a person pointed at
/// with the mark key, kept as a check of the value it showed, after the
/// typing. Where the dialog opens holding a draft, every step's own check
/// passes (the field holds the typed "hello"), and only the outcome check
/// sees the wrong result: the run halts there with both values, and OK is
/// never pressed.
#[test]
fn an_outcome_marked_while_recording_catches_a_replay_whose_steps_all_passed() {
    let display = run_scenario("zenity-outcome.sh", 1280, 800);
    let said = |case: &str| said(&display, case);
    assert_eq!(result(&display, "recorded", "out"), "hello");
    // The check, after the typing and before OK, in the steps a person
    // reads and edits, expecting the parameter the typed "hello" is; the
    // mark key itself is no step.
    let steps = result(&display, "steps", "toml");
    let param = steps
        .lines()
        .find_map(|line| line.strip_prefix("# ")?.strip_suffix(" = \"hello\""))
        .unwrap_or_else(|| panic!("no parameter typed as hello in {steps}"));
    let recorded = result(&display, "recorded", "err");
    assert!(
        recorded.contains(&format!(
            "outcome check kept in version 2: text field in \"Greeting\" equals \"{{{param}}}\""
        )),
        "{recorded}"
    );
    let check = format!(
        "assert = {{ role = \"text field\", window = \"Greeting\", app = \"zenity\", equals = \"{{{param}}}\" }}"
    );
    let (before, after) = steps
        .split_once(&check)
        .unwrap_or_else(|| panic!("no outcome check in {steps}"));
    assert!(before.contains("types = \"hello\""), "{steps}");
    assert!(after.contains("name = \"OK\""), "{steps}");
    assert!(!steps.contains("scroll_lock"), "{steps}");
    // `show` lists the recording's steps, then the check its version adds.
    let shown = result(&display, "greet", "show");
    assert!(
        shown.contains(&format!(
            "version 2 adds to these steps (`reprise steps greet` shows them all):\n  after step 2: {check}"
        )),
        "{shown}"
    );
    // So does the recording's page, in its header.
    let page = result(&display, "greet", "html");
    assert!(page.contains("version 2 adds"), "{page}");
    assert!(
        page.contains("after step 2: assert = { role = &quot;text field&quot;"),
        "{page}"
    );
    let versions: Value = serde_json::from_str(&result(&display, "greet", "versions")).unwrap();
    assert_eq!(versions["latest"], 2, "{versions:#}");

    // The same result: proven by the field's own value, then OK.
    assert_eq!(result(&display, "same", "code"), "0", "{}", said("same"));
    assert_eq!(result(&display, "same", "out"), "hello");
    // A draft in the field: the steps before the check all passed, the
    // check failed with both values, and nothing was submitted.
    assert_eq!(
        result(&display, "drafted", "code"),
        "10",
        "{}",
        said("drafted")
    );
    assert_eq!(result(&display, "drafted", "out"), "");
    let lines = step_lines(&display, "drafted");
    let statuses: Vec<&str> = lines
        .iter()
        .map(|line| line["status"].as_str().unwrap_or("-"))
        .collect();
    // The click and the typing, then the check (the moves to the result
    // and the mark's place went with the press on OK after them).
    assert_eq!(statuses, ["verified", "verified", "failed"], "{lines:#?}");
    let drafted = result(&display, "drafted", "err");
    assert!(
        drafted.contains("holds \"draft hello\"") && drafted.contains("equals \"hello\""),
        "{drafted}"
    );
    // Another name typed (`--set`): the check expects it, and it passes.
    assert_eq!(result(&display, "named", "code"), "0", "{}", said("named"));
    assert_eq!(result(&display, "named", "out"), "bob");
}
