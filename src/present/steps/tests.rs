use super::*;
use accesskit::Role;

fn steps() -> Vec<RecordedStep> {
    vec![
        RecordedStep {
            action: "singleclick".into(),
            on: Some(Query {
                role: Some(Role::TextInput),
                name: None,
                window: Some("Target".into()),
                app: None,
                nth: None,
            }),
            types: None,
        },
        RecordedStep {
            action: "type".into(),
            on: None,
            types: Some("999 <enter>".into()),
        },
    ]
}

fn parameters() -> Vec<Parameter> {
    vec![
        Parameter {
            name: "copy_here".into(),
            kind: ParameterKind::Text {
                recorded: "999".into(),
            },
            field: None,
            step: 1,
        },
        Parameter {
            name: "pin".into(),
            kind: ParameterKind::Secret,
            field: None,
            step: 1,
        },
    ]
}

fn no_rows(file: &str) -> Result<reprise_models::program::Table, String> {
    match file {
        "people.csv" => Ok(reprise_models::program::Table {
            columns: vec!["who".into()],
            rows: vec![vec!["ann".into()], vec!["bo".into()], vec!["cy".into()]],
        }),
        _ => Err(format!("{file}: no such file")),
    }
}

fn rendered(program: &Program) -> String {
    render(
        "\"copy\" (version 1 of 1)",
        "reprise edit copy --file FILE",
        program,
        &steps(),
        &parameters(),
    )
}

#[test]
fn the_recording_as_made_reads_back_as_itself() {
    let program = Program::recorded(2);
    let text = rendered(&program);
    assert!(text.contains("recorded = 1\ndo = \"singleclick\"\non = { role = \"text field\", window = \"Target\" }"), "{text}");
    assert!(text.contains("# copy_here = \"999\""), "{text}");
    assert!(text.contains("{pin} is a secret"), "{text}");
    assert_eq!(
        parse(&text, &steps(), &parameters(), &no_rows).unwrap(),
        program
    );
}

#[test]
fn instructions_and_values_read_back_as_written() {
    let text = rendered(&Program::recorded(2))
        .replace("# copy_here = \"999\"", "copy_here = \"{total} EUR\"")
        + "
[[step]]
wait = { window = \"Saved\", timeout = 10 }

[[step]]
wait = { role = \"label\", name = \"Status\", equals = \"Done\", timeout = 2.5 }

[[step]]
assert = { role = \"text field\", window = \"Target\", near = 999, within = 0.5 }

[[step]]
assert = { role = \"text field\", window = \"Target\", nth = 2, equals = \"{copy_here}\" }
";
    let text = text.replacen(
        "[[step]]\nrecorded = 1",
        "[[step]]\nread = { role = \"text field\", name = \"Total\", window = \"Source\", into = \"total\", secret = true }\n\n[[step]]\nrecorded = 1",
        1,
    );
    let program = parse(&text, &steps(), &parameters(), &no_rows).unwrap();
    assert_eq!(program.entries.len(), 7);
    assert!(matches!(&program.entries[6], Entry::Assert(check) if check.element.nth == Some(2)));
    assert_eq!(program.values["copy_here"], "{total} EUR");
    assert!(
        matches!(&program.entries[0], Entry::Read(read) if read.into == "total" && read.secret)
    );
    assert!(
        matches!(&program.entries[4], Entry::Wait(Wait { until: Until::Holds { .. }, timeout_seconds }) if *timeout_seconds == 2.5)
    );
    // What is parsed renders to a text that parses to the same program.
    let again = rendered(&program);
    assert!(
        again.contains("into = \"total\", secret = true }"),
        "{again}"
    );
    assert_eq!(
        parse(&again, &steps(), &parameters(), &no_rows).unwrap(),
        program
    );
}

fn mistake(text: &str) -> StepsError {
    parse(text, &steps(), &parameters(), &no_rows).unwrap_err()
}

#[test]
fn every_mistake_names_its_line_and_field() {
    let base = "[[step]]\nrecorded = 1\n\n[[step]]\nrecorded = 2\n";
    let err = mistake(&format!(
        "{base}\n[[step]]\nwait = {{ window = \"Saved\" }}\n"
    ));
    assert_eq!((err.line, err.field.as_str()), (7, "wait.timeout"), "{err}");

    let err = mistake(&format!(
        "{base}\n[[step]]\nwait = {{ window = \"Saved\", timeout = 0 }}\n"
    ));
    assert_eq!((err.line, err.field.as_str()), (7, "wait.timeout"), "{err}");

    let err = mistake("[values]\ncopy_here = \"{total}\"\n\n[[step]]\nrecorded = 1\n");
    assert_eq!(
        (err.line, err.field.as_str()),
        (2, "values.copy_here"),
        "{err}"
    );
    assert!(err.message.contains("{total} is not a variable"), "{err}");

    let err = mistake("[[step]]\nrecorded = 1\ndo = \"doubleclick\"\n");
    assert_eq!((err.line, err.field.as_str()), (1, "do"), "{err}");

    let err = mistake("[[step]]\nrecorded = 3\n");
    assert!(err.message.contains("1 to 2"), "{err}");

    let err = mistake("[[step]]\nassert = { role = \"knob\", equals = \"1\" }\n");
    assert_eq!(err.field, "assert.role", "{err}");

    let err = mistake("[[step]]\nrecorded = 1\n\n[[step]]\nasert = { name = \"x\" }\n");
    assert_eq!((err.line, err.field.as_str()), (5, "toml"), "{err}");

    let err = mistake("[[step]]\nrecorded = 1\nwait = { window = \"x\", timeout = 1 }\n");
    assert_eq!(err.field, "step", "{err}");

    let err = mistake("[[step]]\nread = { role = \"label\", name = \"Total\", window = \"W\" }\n");
    assert_eq!(err.field, "read.into", "{err}");

    let err = mistake("[[step]]\nrecorded = 1\n[[step]\n");
    assert_eq!((err.line, err.field.as_str()), (3, "toml"), "{err}");

    for nth in ["0", "1.5", "-1"] {
        let err = mistake(&format!(
            "[[step]]\nassert = {{ role = \"text field\", nth = {nth}, equals = \"1\" }}\n"
        ));
        assert_eq!(err.field, "assert.nth", "{nth}: {err}");
    }

    let err = mistake("[values]\npin = \"1234\"\n[[step]]\nrecorded = 1\n");
    assert!(err.message.contains("secret"), "{err}");

    assert!(mistake("").message.contains("no steps"));
}

#[test]
fn blocks_read_back_and_are_shown_indented() {
    let text = "[values]\ncopy_here = \"{who}\"\n
[[step]]
repeat = { rows = \"people.csv\", max = 10 }

  [[step]]
  if = { window = \"Confirm\", timeout = 2 }

    [[step]]
    recorded = 1

  [[step]]
  else = true

    [[step]]
    wait = { role = \"button\", name = \"OK\", gone = true, timeout = 3 }

  [[step]]
  end = true

  [[step]]
  recorded = 2

[[step]]
end = true

[[step]]
repeat = { role = \"button\", name = \"Next\", max = 5 }

[[step]]
end = true

[[step]]
if = { value = \"{who}\", equals = \"cy\" }

[[step]]
end = true
";
    let program = parse(text, &steps(), &parameters(), &no_rows).unwrap();
    assert_eq!(program.entries.len(), 12);
    let again = rendered(&program);
    assert!(
        again.contains("\n  [[step]]\n  if = { window = \"Confirm\", timeout = 2 }\n"),
        "{again}"
    );
    assert!(
        again.contains("\n    [[step]]\n    recorded = 1\n"),
        "{again}"
    );
    assert!(
        again.contains("repeat = { rows = \"people.csv\", max = 10 }"),
        "{again}"
    );
    assert!(
        again.contains("if = { value = \"{who}\", equals = \"cy\" }"),
        "{again}"
    );
    assert_eq!(
        parse(&again, &steps(), &parameters(), &no_rows).unwrap(),
        program
    );
}

#[test]
fn a_block_without_its_end_or_bound_is_refused_at_its_line() {
    let err = mistake(
        "[[step]]\nrecorded = 1\n\n[[step]]\nif = { window = \"Confirm\" }\n\n[[step]]\nrecorded = 2\n",
    );
    assert_eq!((err.line, err.field.as_str()), (4, "if"), "{err}");
    assert!(err.message.contains("has no end"), "{err}");

    let err = mistake("[[step]]\nrepeat = { rows = \"people.csv\" }\n\n[[step]]\nend = true\n");
    assert_eq!((err.line, err.field.as_str()), (1, "repeat.max"), "{err}");

    let err =
        mistake("[[step]]\nrepeat = { rows = \"gone.csv\", max = 3 }\n\n[[step]]\nend = true\n");
    assert_eq!((err.line, err.field.as_str()), (1, "repeat.rows"), "{err}");
    assert!(err.message.contains("no such file"), "{err}");

    let err =
        mistake("[[step]]\nrepeat = { rows = \"people.csv\", max = 2 }\n\n[[step]]\nend = true\n");
    assert!(err.message.contains("3 rows, more than max = 2"), "{err}");

    let err = mistake("[[step]]\nrecorded = 1\n\n[[step]]\nend = true\n");
    assert_eq!((err.line, err.field.as_str()), (4, "end"), "{err}");

    let err = mistake("[[step]]\nwait = { value = \"{x}\", equals = \"1\", timeout = 1 }\n");
    assert_eq!(err.field, "wait.value", "{err}");
}

#[test]
fn a_retry_block_reads_back_and_needs_its_tries() {
    let text =
        "[[step]]\nretry = { times = 3 }\n\n  [[step]]\n  recorded = 1\n\n[[step]]\nend = true\n";
    let program = parse(text, &steps(), &parameters(), &no_rows).unwrap();
    assert_eq!(program.entries[0], Entry::Retry { times: 3 });
    assert!(
        rendered(&program)
            .contains("\n[[step]]\nretry = { times = 3 }\n\n  [[step]]\n  recorded = 1\n")
    );
    let err = mistake("[[step]]\nretry = { }\n\n[[step]]\nend = true\n");
    assert_eq!((err.line, err.field.as_str()), (1, "retry.times"), "{err}");
    let err = mistake("[[step]]\nretry = { times = 3 }\n\n[[step]]\nrecorded = 1\n");
    assert!(err.message.contains("this retry has no end"), "{err}");
}
