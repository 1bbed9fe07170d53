//! Secrets and parameters on a third-party GTK form (zenity --forms, a user
//! name and a password): a password typed while recording is stored nowhere,
//! in no form (the store and its WAL while the recorder writes, the export,
//! the recording's page, the replay report, the recorder's debug log), its
//! field is masked in the stored frames, and replays take it from the
//! environment or a secrets file, judged by what zenity printed; `--set`
//! changes the user name; a missing secret is refused before any input.

use std::path::Path;

use reprise_models::EventName;

use crate::harness::{Display, run_ok};
use crate::identity::{result, run_scenario_with};

/// Its capitals appear nowhere else in the task (the user name is "alice").
const PASSWORD: &str = "QZXJ-Wv9";

/// Typed into a dialog the moment it opens; its capitals too appear nowhere
/// else.
const QUICK_PASSWORD: &str = "KYPM-Hq4";

/// Every way a key of the passwords could be written: the whole, its keys
/// joined as a label joins them, and each capital as a stored key event.
fn password_forms() -> Vec<String> {
    let mut forms = vec![
        PASSWORD.to_owned(),
        "Q-Z-X-J".to_owned(),
        QUICK_PASSWORD.to_owned(),
        "K-Y-P-M".to_owned(),
    ];
    for char in ['Q', 'Z', 'X', 'J', 'W', 'K', 'Y', 'P', 'M', 'H'] {
        forms.push(format!("\"key_char\":\"{char}\""));
        forms.push(format!("\"key_char\": \"{char}\""));
    }
    forms
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

/// The files to search: every file in `dir` whose name starts with `prefix`.
fn files(dir: &Path, prefix: &str) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("read {}: {err}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with(prefix))
        })
        .collect();
    found.sort();
    found
}

/// Searches `paths` for every form of the password (none may be there) and
/// for `control` (which must be, in at least one: the search can find).
fn search(paths: &[std::path::PathBuf], control: &str) {
    assert!(!paths.is_empty(), "nothing to search");
    let mut control_found = false;
    for path in paths {
        let mut bytes =
            std::fs::read(path).unwrap_or_else(|err| panic!("read {}: {err}", path.display()));
        // An export is a zip whose manifest is compressed: search what its
        // entries hold, as `unzip` gives them.
        if bytes.starts_with(b"PK\x03\x04") {
            let out = std::process::Command::new("unzip")
                .arg("-p")
                .arg(path)
                .output()
                .unwrap();
            assert!(out.status.success(), "unzip -p {}", path.display());
            bytes = out.stdout;
        }
        for form in password_forms() {
            assert!(
                !contains(&bytes, &form),
                "{form:?} is in {}",
                path.display()
            );
        }
        control_found |= contains(&bytes, control);
    }
    assert!(
        control_found,
        "{control:?} is in none of {paths:?}: the search proves nothing"
    );
}

#[test]
fn a_password_typed_into_a_gtk_form_is_stored_nowhere_and_replayed_from_outside() {
    let display: Display = run_scenario_with(
        "zenity-login.sh",
        1280,
        800,
        &[("PASSWORD", PASSWORD), ("QUICK_PASSWORD", QUICK_PASSWORD)],
    );
    let dir = display.dir.path();
    assert_eq!(
        result(&display, "recorded", "out"),
        format!("alice|{PASSWORD}")
    );

    // Nowhere, in no form; the user name, typed into a plain field, is.
    let during = files(&dir.join("during"), "");
    assert!(
        during
            .iter()
            .any(|path| path.to_string_lossy().ends_with("-wal")),
        "the store's WAL was copied while the recorder wrote: {during:?}"
    );
    search(&during, "\"key_char\":\"a\"");
    search(&files(dir, "store"), "\"key_char\":\"a\"");
    search(&[dir.join("login.export")], "\"key_char\":\"a\"");
    search(&[dir.join("login.html")], "&quot;alice");
    search(&[dir.join("login.record.err")], "read an element");
    let report = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        report.contains("{password}"),
        "the report shows the placeholder"
    );
    for value in ["s3cr3t", "fr0m-file"] {
        for path in files(dir, "store").iter().chain([&dir.join("report.html")]) {
            let bytes = std::fs::read(path).unwrap();
            assert!(
                !contains(&bytes, value),
                "the replayed secret is in {}",
                path.display()
            );
        }
    }

    // The parameters: the user name by its field's label, the password as
    // a secret.
    let params: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("params.json")).unwrap()).unwrap();
    assert_eq!(params[0]["name"], "user_name", "{params}");
    assert_eq!(params[0]["kind"], "text");
    assert_eq!(params[0]["recorded"], "alice");
    assert_eq!(params[1]["name"], "password");
    assert_eq!(params[1]["kind"], "secret");
    assert_eq!(params.as_array().unwrap().len(), 2, "{params}");

    // The field is masked in every frame stored from its first key to the
    // press on OK (which closes the form).
    let store = reprise::store::Store::open_to_read(&display.store()).unwrap();
    let id = store.resolve("login").unwrap();
    let bundle = store.load(&id).unwrap();
    let first_secret = bundle
        .events
        .iter()
        .find(|event| event.secret.is_some() && event.name == EventName::Press)
        .expect("a secret key is stored");
    assert!(first_secret.key_char.is_none() && first_secret.key_vk.is_none());
    let field = first_secret
        .element
        .as_ref()
        .expect("the secret key names its field")
        .rect;
    assert_eq!(
        first_secret.element.as_ref().unwrap().role,
        accesskit::Role::PasswordInput
    );
    let ok = bundle
        .events
        .iter()
        .find(|event| event.name == EventName::Click && event.timestamp > first_secret.timestamp)
        .expect("the press on OK is stored");
    let later: Vec<_> = bundle
        .screenshots
        .iter()
        .filter(|shot| Some(shot.id) >= first_secret.screenshot_id && shot.timestamp < ok.timestamp)
        .collect();
    // (A frame like the one before it is not stored again: with the field
    // masked from the start, typing into it changes nothing.)
    assert!(
        !later.is_empty(),
        "a frame shows the form while the password is typed"
    );
    for shot in later {
        let png = store.image_png(&shot.content_hash).unwrap();
        let frame = image::load_from_memory(&png).unwrap().into_rgba8();
        for y in field.top..field.top + field.height as i32 {
            for x in field.left..field.left + field.width as i32 {
                assert_eq!(
                    frame.get_pixel(x as u32, y as u32).0,
                    [128, 128, 128, 255],
                    "frame {} at ({x}, {y}) in the field {field:?}",
                    shot.id
                );
            }
        }
    }

    // The replay's stored frames mask the field too: the last run's press
    // on OK saw the form with the password typed.
    let run = store.resolve_run("last").unwrap();
    let (_, steps) = store.load_run(&run).unwrap();
    let ok_step = steps.last().expect("the last run stored its steps");
    let png = store
        .image_png(ok_step.screenshot_hash.as_deref().expect("a frame"))
        .unwrap();
    let frame = image::load_from_memory(&png).unwrap().into_rgba8();
    let masked = (field.top..field.top + field.height as i32)
        .flat_map(|y| (field.left..field.left + field.width as i32).map(move |x| (x, y)))
        .filter(|&(x, y)| frame.get_pixel(x as u32, y as u32).0 == [128, 128, 128, 255])
        .count();
    assert_eq!(
        masked,
        (field.width * field.height) as usize,
        "the replay's frame of the form masks the password field"
    );

    // A missing secret: refused before any input (the form, answered by
    // hand, held nothing), naming where it is looked for.
    assert_eq!(result(&display, "missing", "code"), "2");
    assert_eq!(result(&display, "missing", "out"), "|");
    let missing = result(&display, "missing", "err");
    assert!(missing.contains("REPRISE_SECRET_PASSWORD"), "{missing}");
    assert!(
        !missing.contains("to abort"),
        "a refused replay never said it was starting: {missing}"
    );
    assert!(result(&display, "env", "err").contains("to abort"));
    // From the environment (any characters), with another user name; and
    // from a file.
    assert_eq!(result(&display, "env", "out"), "bob|s3cr3t Ünï");
    assert_eq!(
        result(&display, "env", "code"),
        "0",
        "{}",
        result(&display, "env", "err")
    );
    assert_eq!(result(&display, "file", "out"), "alice|fr0m-file");
    assert_eq!(
        result(&display, "file", "code"),
        "0",
        "{}",
        result(&display, "file", "err")
    );

    // Almost TOML: refused with the line, nothing typed, the value unsaid.
    assert_eq!(result(&display, "almost", "code"), "2");
    assert_eq!(result(&display, "almost", "out"), "|");
    let almost = result(&display, "almost", "err");
    assert!(almost.contains("line 2 is not valid TOML"), "{almost}");
    assert!(!almost.contains("fr0m-file"), "{almost}");
    // A dry run refuses what the live run would.
    assert_eq!(result(&display, "dry", "code"), "2");
    assert!(result(&display, "dry", "err").contains("REPRISE_SECRET_PASSWORD"));

    // No child of Reprise inherits a credential: the reset command, the
    // application it starts, the recorder's input listener.
    for name in [
        "reset-env-1.txt",
        "app-env-1.txt",
        "reset-env-3.txt",
        "listener-env.txt",
    ] {
        let env = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(
            env.contains("DISPLAY="),
            "{name} holds the environment: {env}"
        );
        for leaked in ["leak-value", "leak-token-value", "S3cret"] {
            assert!(!env.contains(leaked), "{name} inherited {leaked}");
        }
    }

    // One run per row of a CSV, its secrets a column: rows 1 and 3 typed
    // into their forms, in order; row 2's form is another dialog, and that
    // row alone fails (--keep-going); the exit code says a row failed.
    assert_eq!(
        result(&display, "each", "out"),
        "ann|S3cret-one\nCarol, Jr.|S3cret-three"
    );
    assert_eq!(result(&display, "each", "code"), "10");
    let each = result(&display, "each", "err");
    assert!(each.contains("failed at row 2;"), "{each}");
    assert!(each.contains("row 3 of 3: completed"), "{each}");
    let batch = std::fs::read_to_string(dir.join("batch.html")).unwrap();
    let rows: Vec<&str> = batch
        .match_indices("<tr class=\"row\">")
        .map(|(at, _)| &batch[at..])
        .collect();
    assert_eq!(rows.len(), 3, "{batch}");
    assert!(
        rows[0].starts_with(
            "<tr class=\"row\"><td><a href=\"batch-row-1.html\">1</a></td><td>user_name=ann, password=(secret)</td><td><span class=\"badge completed\">"
        ),
        "{batch}"
    );
    assert!(
        rows[1].contains("badge failed") && rows[1].contains("step 1: the keys were typed into"),
        "{batch}"
    );
    assert!(dir.join("batch-row-2.html").exists());
    // Resumed: row 2 alone was typed, into the form opened for it, once;
    // rows 1 and 3 were done before and not replayed; still one batch of
    // three runs, each row's run the one it was.
    let resumed = result(&display, "each-resumed", "err");
    assert_eq!(
        result(&display, "each-resumed", "out"),
        "ben|S3cret-two",
        "{resumed}"
    );
    assert!(
        ["0", "12"].contains(&result(&display, "each-resumed", "code").as_str()),
        "{resumed}"
    );
    for row in [1, 3] {
        assert!(
            resumed.contains(&format!("row {row} of 3: done in run ")),
            "{resumed}"
        );
    }
    let runs: Vec<serde_json::Value> =
        serde_json::from_str(&run_ok(display.reprise().args(["runs", "--json"]))).unwrap();
    let batch_id = result(&display, "batch", "id");
    let in_batch = runs
        .iter()
        .filter(|run| run["batch"] == batch_id.as_str())
        .count();
    assert_eq!(in_batch, 3, "{runs:#?}");
    // A rows file whose row 2 changed: refused (exit 2) before any row.
    assert_eq!(result(&display, "changed-rows", "code"), "2");
    assert!(result(&display, "changed-rows", "err").contains("the rows file changed"));
    for path in files(dir, "store").iter().chain(&files(dir, "batch")) {
        let bytes = std::fs::read(path).unwrap();
        assert!(
            !contains(&bytes, "S3cret"),
            "a row's secret is in {}",
            path.display()
        );
    }
    // A column that names no parameter: refused before the first row.
    assert_eq!(result(&display, "bad-rows", "code"), "2");
    assert!(result(&display, "bad-rows", "err").contains("\"pin\" (it has: user_name, password)"));
    let started = std::fs::read_to_string(dir.join("rows-started")).unwrap();
    assert_eq!(started.trim(), "3", "no row of the bad file started");

    // A dialog typed into the moment it opened: the first key found it.
    assert_eq!(result(&display, "quick", "out"), QUICK_PASSWORD);
    search(&[dir.join("quick.export")], "\"enter\"");
    assert!(result(&display, "quick", "record.err").contains("key events typed as secrets"));

    // Renamed: the secret is then REPRISE_SECRET_PIN, the text {login}.
    let renamed = std::fs::read_to_string(dir.join("renamed.txt")).unwrap();
    assert!(renamed.starts_with("{login} = \"alice\""), "{renamed}");
    assert!(
        renamed.contains("{pin} secret, from REPRISE_SECRET_PIN"),
        "{renamed}"
    );
    assert_eq!(result(&display, "renamed", "out"), "zoe|p1n-value");
}

#[test]
fn a_secret_typed_at_a_terminal_prompt_is_marked_by_the_toggle_key_or_its_window() {
    // xterm exposes no accessibility tree: only the person can say.
    let display = run_scenario_with("terminal-secret.sh", 1280, 800, &[("PASSWORD", PASSWORD)]);
    let dir = display.dir.path();
    for case in ["toggled", "window"] {
        assert_eq!(result(&display, case, "out"), PASSWORD, "{case}");
        let said = result(&display, case, "record.err");
        assert!(
            said.contains("key events typed as secrets"),
            "{case}: {said}"
        );
        search(&[dir.join(format!("{case}.export"))], "\"enter\"");
        assert_eq!(
            result(&display, &format!("{case}-replayed"), "out"),
            "n3w Välue",
            "{case}: {}",
            result(&display, &format!("{case}-replayed"), "err")
        );
    }
    let toggled = result(&display, "toggled", "record.err");
    assert!(
        toggled.contains("pause turns secret typing on and off"),
        "{toggled}"
    );
    assert!(toggled.contains("secret typing on"), "{toggled}");
    search(&files(dir, "store"), "\"enter\"");
}
