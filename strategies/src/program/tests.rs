//! A program replayed through the naive strategy on a scripted desktop:
//! what reaches the desktop, and how each instruction ends.

use accesskit::Role;
use reprise_models::program::{Assertion, Compare, Program, Query, Read, Until, Wait};
use reprise_models::{A11yNode, Rect, ReduceOptions, reduce};
use reprise_models::{A11yTree, ActionEvent};
use serde_json::json;
use std::collections::BTreeMap;

use super::*;
use crate::naive::tests::fast_settle;
use crate::scripted::ScriptedDesktop;
use crate::{
    EvidenceKind, NaiveStrategy, ReplayOptions, ReplayOutcome, StepRecord, StepStatus, run_replay,
};

/// A click on the field "Copy here" of "Target", then `999` typed.
fn planned() -> Vec<ActionEvent> {
    let field = json!({
        "version": 1, "app": "zenity", "window": {"role": "dialog", "name": "Target"},
        "role": "textInput", "name": "Copy here", "rect": {"left": 0, "top": 0, "width": 100, "height": 20}
    });
    let trees = reduce(
        serde_json::from_value(json!([
            {"name": "click", "timestamp": 0.0, "mouse_x": 5, "mouse_y": 5, "mouse_button_name": "left", "mouse_pressed": true, "element": field},
            {"name": "click", "timestamp": 0.05, "mouse_x": 5, "mouse_y": 5, "mouse_button_name": "left", "mouse_pressed": false},
            {"name": "press", "timestamp": 0.1, "key_char": "9"},
            {"name": "release", "timestamp": 0.12, "key_char": "9"},
            {"name": "press", "timestamp": 0.14, "key_char": "9"},
            {"name": "release", "timestamp": 0.16, "key_char": "9"}
        ]))
        .unwrap(),
        &ReduceOptions::default(),
    );
    crate::plan::plan_steps(trees, &[])
}

fn query(role: Role, name: &str) -> Query {
    Query {
        role: Some(role),
        name: Some(name.into()),
        window: Some("Source".into()),
        app: None,
        nth: None,
    }
}

fn tree(nodes: &[(Role, &str, Option<&str>)]) -> A11yTree {
    let mut all = vec![A11yNode {
        role: Role::Window,
        name: Some("Source".into()),
        rect: Some(Rect::new(0, 0, 200, 100)),
        states: Vec::new(),
        value: None,
        children: (1..=nodes.len() as u32).collect(),
    }];
    for (role, name, value) in nodes {
        all.push(A11yNode {
            role: *role,
            name: Some((*name).into()),
            rect: Some(Rect::new(10, 10, 50, 20)),
            states: Vec::new(),
            value: value.map(str::to_owned),
            children: Vec::new(),
        });
    }
    A11yTree {
        app: "zenity".into(),
        root: 0,
        nodes: all,
    }
}

fn replay(program: &Program, desktop: &mut ScriptedDesktop) -> (ReplayOutcome, Vec<StepRecord>) {
    let tables = Default::default();
    let compiled = compile(planned(), program, &[], &Default::default(), &tables).unwrap();
    run_compiled(&compiled, desktop)
}

fn read_total_then_type_it() -> Program {
    Program {
        entries: vec![
            Entry::Read(Read {
                element: query(Role::TextInput, "Total"),
                into: "total".into(),
                secret: false,
            }),
            Entry::Recorded { step: 1 },
            Entry::Recorded { step: 2 },
        ],
        values: BTreeMap::from([("copy_here".to_owned(), "{total} EUR".to_owned())]),
    }
}

#[test]
fn a_value_read_is_typed_where_the_recording_typed_its_text() {
    let mut desktop = ScriptedDesktop::new().with_window("Target", Rect::new(0, 0, 200, 100));
    desktop
        .trees
        .push_back(tree(&[(Role::TextInput, "Total", Some("123.45"))]));
    let (outcome, records) = replay(&read_total_then_type_it(), &mut desktop);
    assert!(
        matches!(outcome, ReplayOutcome::Completed { steps: 3, .. }),
        "{outcome:?}"
    );
    assert_eq!(records[0].status, StepStatus::Verified);
    assert_eq!(records[0].evidence, Some(EvidenceKind::State));
    assert!(records[0].check.as_deref().unwrap().contains("\"123.45\""));
    assert_eq!(desktop.tree_requests[0].app, "zenity");
    assert_eq!(
        desktop.tree_requests[0].window.name.as_deref(),
        Some("Source")
    );
    let typed: Vec<&Action> = desktop
        .injected
        .iter()
        .filter(|action| matches!(action, Action::TypeText { .. } | Action::KeyDown { .. }))
        .collect();
    assert_eq!(
        typed,
        [
            &Action::TypeText {
                text: "123.45".into()
            },
            &Action::KeyDown {
                key: crate::KeySpec::Char(" ".into())
            },
            &Action::KeyDown {
                key: crate::KeySpec::Char("E".into())
            },
            &Action::KeyDown {
                key: crate::KeySpec::Char("U".into())
            },
            &Action::KeyDown {
                key: crate::KeySpec::Char("R".into())
            },
        ],
        "the value read, then the rest of the value, never the recorded 99"
    );
}

#[test]
fn a_wait_looks_again_until_its_element_shows_and_no_longer() {
    let program = Program {
        entries: vec![
            Entry::Wait(Wait {
                until: Until::Shows {
                    element: query(Role::Label, "Saved"),
                },
                timeout_seconds: 5.0,
            }),
            Entry::Recorded { step: 1 },
        ],
        values: BTreeMap::new(),
    };
    let mut desktop = ScriptedDesktop::new().with_window("Target", Rect::new(0, 0, 200, 100));
    for _ in 0..5 {
        desktop.trees.push_back(tree(&[]));
    }
    desktop
        .trees
        .push_back(tree(&[(Role::Label, "Saved", None)]));
    let (outcome, records) = replay(&program, &mut desktop);
    assert!(
        matches!(outcome, ReplayOutcome::Completed { steps: 2, .. }),
        "{outcome:?}"
    );
    assert_eq!(records[0].status, StepStatus::Verified);
    assert_eq!(records[0].attempts, 1, "looking again is not an attempt");
    assert!(desktop.slept.as_secs_f64() < 5.0);

    // Never there: one bounded wait, then the run fails saying so, and
    // nothing of the steps after it is injected.
    let mut desktop = ScriptedDesktop::new().with_window("Target", Rect::new(0, 0, 200, 100));
    desktop.trees.push_back(tree(&[]));
    let (outcome, _) = replay(&program, &mut desktop);
    let ReplayOutcome::Failed {
        step: 0, reason, ..
    } = outcome
    else {
        panic!("{outcome:?}");
    };
    assert!(reason.contains("did not come within 5 s"), "{reason}");
    assert!(desktop.injected.is_empty());
    assert!(desktop.slept.as_secs_f64() < 12.0, "{:?}", desktop.slept);
}

#[test]
fn a_failed_assertion_halts_with_both_values() {
    let check = |expected: &str| Program {
        entries: vec![
            Entry::Recorded { step: 1 },
            Entry::Assert(Assertion {
                element: query(Role::TextInput, "Total"),
                compare: Compare::Equals(expected.into()),
            }),
            Entry::Recorded { step: 2 },
        ],
        values: BTreeMap::new(),
    };
    let mut desktop = ScriptedDesktop::new().with_window("Target", Rect::new(0, 0, 200, 100));
    desktop
        .trees
        .push_back(tree(&[(Role::TextInput, "Total", Some("41"))]));
    let (outcome, records) = replay(&check("41"), &mut desktop);
    assert!(
        matches!(outcome, ReplayOutcome::Completed { steps: 3, .. }),
        "{outcome:?}"
    );
    assert!(
        records[1]
            .check
            .as_deref()
            .unwrap()
            .contains("holds \"41\"")
    );

    let (outcome, _) = replay(&check("42"), &mut desktop);
    let ReplayOutcome::Failed {
        step: 1, reason, ..
    } = outcome
    else {
        panic!("{outcome:?}");
    };
    assert!(
        reason.contains("holds \"41\"") && reason.contains("equals \"42\""),
        "{reason}"
    );
}

#[test]
fn an_element_named_twice_is_refused_not_guessed() {
    let twins = tree(&[
        (Role::TextInput, "Total", Some("1")),
        (Role::TextInput, "Total", Some("2")),
    ]);
    let err = find(Some(&twins), &query(Role::TextInput, "Total")).unwrap_err();
    assert!(err.to_string().contains("names 2 elements"), "{err}");
    assert_eq!(
        find(Some(&twins), &query(Role::Button, "Total")).unwrap(),
        None
    );
}

#[test]
fn a_program_that_breaks_its_rules_is_refused_before_anything_runs() {
    let mut program = read_total_then_type_it();
    program.entries.push(Entry::Recorded { step: 7 });
    let err = compile(
        planned(),
        &program,
        &[],
        &Default::default(),
        &Default::default(),
    )
    .unwrap_err();
    assert_eq!((err.entry, err.field.as_str()), (Some(3), "recorded"));
    // An instruction with no window near it to look in.
    let lonely = Program {
        entries: vec![Entry::Read(Read {
            element: Query {
                role: Some(Role::Label),
                ..Default::default()
            },
            into: "x".into(),
            secret: false,
        })],
        values: BTreeMap::new(),
    };
    let err = compile(
        planned(),
        &lonely,
        &[],
        &Default::default(),
        &Default::default(),
    )
    .unwrap_err();
    assert_eq!(err.field, "window");
}

fn compiled_with_rows(program: &Program) -> Compiled {
    let tables = reprise_models::program::Tables::from([(
        "people.csv".to_owned(),
        reprise_models::program::Table {
            columns: vec!["who".into()],
            rows: vec![vec!["ann".into()], vec!["bo".into()], vec!["cy".into()]],
        },
    )]);
    compile(planned(), program, &[], &Default::default(), &tables).unwrap()
}

fn run_compiled(
    compiled: &Compiled,
    desktop: &mut ScriptedDesktop,
) -> (ReplayOutcome, Vec<StepRecord>) {
    let inner = NaiveStrategy::new(compiled.trees.clone(), vec![], 1000.0);
    let mut strategy = ProgramStrategy::new(Box::new(inner), compiled);
    let options = ReplayOptions {
        settle: fast_settle(),
        ..Default::default()
    };
    let mut records = Vec::new();
    let outcome = run_replay(
        &mut strategy,
        desktop,
        &options,
        &|| false,
        &mut |record, _| records.push(record.clone()),
    );
    (outcome, records)
}

fn typed_texts(desktop: &ScriptedDesktop) -> Vec<String> {
    desktop
        .injected
        .iter()
        .filter_map(|action| match action {
            Action::TypeText { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_repeat_runs_its_block_once_a_row_with_the_rows_values() {
    use reprise_models::program::{Over, Repeat};
    let program = Program {
        entries: vec![
            Entry::Repeat(Repeat {
                over: Over::Rows("people.csv".into()),
                max: 5,
            }),
            Entry::Recorded { step: 1 },
            Entry::Recorded { step: 2 },
            Entry::End,
        ],
        values: BTreeMap::from([("copy_here".to_owned(), "{who}".to_owned())]),
    };
    let compiled = compiled_with_rows(&program);
    assert!(compiled.has_blocks());
    let mut desktop = ScriptedDesktop::new().with_window("Target", Rect::new(0, 0, 200, 100));
    let (outcome, records) = run_compiled(&compiled, &mut desktop);
    assert!(
        matches!(outcome, ReplayOutcome::Completed { steps: 10, .. }),
        "{outcome:?}"
    );
    assert_eq!(typed_texts(&desktop), ["ann", "bo", "cy"]);
    let checks: Vec<&str> = records
        .iter()
        .filter_map(|record| record.check.as_deref())
        .filter(|check| check.contains("row") || check.contains("rows"))
        .collect();
    assert_eq!(
        checks,
        [
            "row 1 of 3: {who} = \"ann\"",
            "row 2 of 3: {who} = \"bo\"",
            "row 3 of 3: {who} = \"cy\"",
            "all 3 rows done"
        ]
    );
    assert_eq!(records[0].evidence, Some(EvidenceKind::Program));
}

#[test]
fn an_if_runs_its_block_or_its_else_as_the_screen_says() {
    let program = Program {
        entries: vec![
            Entry::If(Wait {
                until: Until::Window {
                    title: "Confirm".into(),
                },
                timeout_seconds: 1.0,
            }),
            Entry::Recorded { step: 1 },
            Entry::Else,
            Entry::Recorded { step: 2 },
            Entry::End,
        ],
        values: BTreeMap::new(),
    };
    let compiled = compiled_with_rows(&program);
    // The window shows: the first block, a click, and nothing typed.
    let mut desktop = ScriptedDesktop::new().with_window("Confirm", Rect::new(0, 0, 200, 100));
    let (outcome, records) = run_compiled(&compiled, &mut desktop);
    assert!(
        matches!(outcome, ReplayOutcome::Completed { steps: 2, .. }),
        "{outcome:?}"
    );
    assert!(
        records[0]
            .check
            .as_deref()
            .unwrap()
            .contains("its block runs")
    );
    assert!(
        desktop
            .injected
            .iter()
            .any(|action| matches!(action, Action::ButtonDown { .. }))
    );
    assert!(
        !desktop
            .injected
            .iter()
            .any(|action| matches!(action, Action::KeyDown { .. }))
    );
    // It never shows within its second: the else block, keys and no click.
    let mut desktop = ScriptedDesktop::new().with_window("Target", Rect::new(0, 0, 200, 100));
    let (outcome, records) = run_compiled(&compiled, &mut desktop);
    assert!(
        matches!(outcome, ReplayOutcome::Completed { steps: 2, .. }),
        "{outcome:?}"
    );
    let check = records[0].check.as_deref().unwrap();
    assert!(check.contains("its else block runs"), "{check}");
    assert_eq!(records[0].attempts, 1, "looking is not an attempt");
    assert!(
        !desktop
            .injected
            .iter()
            .any(|action| matches!(action, Action::ButtonDown { .. }))
    );
    assert!(
        desktop
            .injected
            .iter()
            .any(|action| matches!(action, Action::KeyDown { .. }))
    );
}

#[test]
fn a_program_with_blocks_is_not_resumed_midway() {
    let program = Program {
        entries: vec![
            Entry::If(Wait {
                until: Until::Window {
                    title: "Confirm".into(),
                },
                timeout_seconds: 0.0,
            }),
            Entry::Recorded { step: 1 },
            Entry::End,
            Entry::Recorded { step: 2 },
        ],
        values: BTreeMap::new(),
    };
    let compiled = compiled_with_rows(&program);
    let inner = NaiveStrategy::new(compiled.trees.clone(), vec![], 1000.0);
    let mut strategy = ProgramStrategy::new(Box::new(inner), &compiled);
    let mut desktop = ScriptedDesktop::new();
    let options = ReplayOptions {
        settle: fast_settle(),
        ..Default::default()
    };
    let done = vec![StepRecord::new(0, 0.0)];
    let outcome = crate::run_replay_from(
        &mut strategy,
        &mut desktop,
        &options,
        done,
        &|| false,
        &mut |_, _| {},
    );
    let reason = outcome.failure().unwrap_or_else(|| panic!("{outcome:?}"));
    assert!(reason.contains("cannot go on midway"), "{reason}");
    assert!(desktop.injected.is_empty());
}

#[test]
fn a_retry_block_is_tried_again_when_a_step_in_it_fails_and_no_more_than_its_times() {
    let program = |times: u32| Program {
        entries: vec![
            Entry::Retry { times },
            Entry::Recorded { step: 1 },
            Entry::End,
            Entry::Recorded { step: 2 },
        ],
        values: BTreeMap::new(),
    };
    // Every attempt of the click's first try fails (4: one and 3 retries),
    // then its second try succeeds.
    let failing = |n: usize| {
        let mut desktop = ScriptedDesktop::new().with_window("Target", Rect::new(0, 0, 200, 100));
        desktop.inject_failures =
            std::iter::repeat_n(Some("the display refused it".into()), n).collect();
        desktop
    };
    let mut desktop = failing(4);
    let (outcome, records) = run_compiled(&compiled_with_rows(&program(2)), &mut desktop);
    assert!(
        matches!(
            outcome,
            ReplayOutcome::Completed {
                steps: 5,
                skipped: 0,
                ..
            }
        ),
        "{outcome:?}"
    );
    let statuses: Vec<StepStatus> = records.iter().map(|record| record.status).collect();
    assert_eq!(statuses[1], StepStatus::Retried, "{records:#?}");
    assert!(records[1].check.as_deref().unwrap().contains("try 2 of 2"));
    assert!(records[2].check.as_deref().unwrap().contains("try 2 of 2"));
    assert_ne!(statuses[3], StepStatus::Failed);
    // One try only: the failure ends the run.
    let mut desktop = failing(4);
    let (outcome, records) = run_compiled(&compiled_with_rows(&program(1)), &mut desktop);
    assert!(
        matches!(outcome, ReplayOutcome::Failed { step: 1, .. }),
        "{outcome:?}"
    );
    assert_eq!(records.len(), 2);
}

#[test]
fn a_value_read_as_a_secret_is_typed_and_compared_but_never_shown() {
    let mut program = read_total_then_type_it();
    if let Entry::Read(read) = &mut program.entries[0] {
        read.secret = true;
    }
    let mut desktop = ScriptedDesktop::new().with_window("Target", Rect::new(0, 0, 200, 100));
    desktop
        .trees
        .push_back(tree(&[(Role::TextInput, "Total", Some("4711"))]));
    let (outcome, records) = replay(&program, &mut desktop);
    assert!(
        matches!(outcome, ReplayOutcome::Completed { steps: 3, .. }),
        "{outcome:?}"
    );
    let typed: Vec<Option<&str>> = desktop
        .injected
        .iter()
        .filter_map(|action| match action {
            Action::TypeHidden { name, value } if name == "total" => Some(value.reveal()),
            _ => None,
        })
        .collect();
    assert_eq!(typed, [Some("4711")], "{:?}", desktop.injected);
    let shown = serde_json::to_string(&records).unwrap() + &format!("{records:?}");
    assert!(!shown.contains("4711"), "{shown}");
    assert!(
        records[0]
            .check
            .as_deref()
            .unwrap()
            .contains("holds {total}"),
        "{records:#?}"
    );

    // A check that fails on it says so with the secret's name in its place.
    program.entries.insert(
        1,
        Entry::Assert(Assertion {
            element: query(Role::TextInput, "Total"),
            compare: Compare::Contains("{total}0".into()),
        }),
    );
    let mut desktop = ScriptedDesktop::new().with_window("Target", Rect::new(0, 0, 200, 100));
    desktop
        .trees
        .push_back(tree(&[(Role::TextInput, "Total", Some("4711"))]));
    let (outcome, records) = replay(&program, &mut desktop);
    let ReplayOutcome::Failed { reason, .. } = &outcome else {
        panic!("{outcome:?}");
    };
    assert!(
        reason.contains("holds {total}; expected a value that contains \"{total}0\""),
        "{reason}"
    );
    let shown = format!("{outcome:?}{records:?}");
    assert!(!shown.contains("4711"), "{shown}");
    assert!(desktop.injected.is_empty(), "{:?}", desktop.injected);
}

/// A check expecting a text parameter (an outcome marked while recording
/// that shows what was typed) expects the value typed in this run: the
/// recorded one, or `--set`'s.
#[test]
fn a_check_naming_a_parameter_expects_the_value_typed_in_this_run() {
    let program = Program {
        entries: vec![
            Entry::Recorded { step: 1 },
            Entry::Recorded { step: 2 },
            Entry::Assert(Assertion {
                element: query(Role::TextInput, "Total"),
                compare: Compare::Equals("{copy_here}".into()),
            }),
        ],
        values: BTreeMap::new(),
    };
    let run = |set: &[(String, String)]| {
        let mut desktop = ScriptedDesktop::new().with_window("Target", Rect::new(0, 0, 200, 100));
        desktop
            .trees
            .push_back(tree(&[(Role::TextInput, "Total", Some("123"))]));
        let tables = Default::default();
        let compiled = compile(planned(), &program, set, &Default::default(), &tables).unwrap();
        run_compiled(&compiled, &mut desktop).0
    };
    let set = run(&[("copy_here".into(), "123".into())]);
    assert!(
        matches!(set, ReplayOutcome::Completed { steps: 3, .. }),
        "{set:?}"
    );
    let ReplayOutcome::Failed {
        step: 2, reason, ..
    } = run(&[])
    else {
        panic!("the recorded 99 is expected where --set gave nothing");
    };
    assert!(
        reason.contains("holds \"123\"") && reason.contains("equals \"99\""),
        "{reason}"
    );
}

/// A label's value is its name: a check of one whose text changed finds
/// no such label, and says what labels show instead, so that both values
/// are still in the failure.
#[test]
fn a_check_of_a_label_that_shows_another_text_names_what_shows() {
    let program = Program {
        entries: vec![
            Entry::Recorded { step: 1 },
            Entry::Assert(Assertion {
                element: query(Role::Label, "Total: 42"),
                compare: Compare::Equals("Total: 42".into()),
            }),
        ],
        values: BTreeMap::new(),
    };
    let mut desktop = ScriptedDesktop::new().with_window("Target", Rect::new(0, 0, 200, 100));
    desktop
        .trees
        .push_back(tree(&[(Role::Label, "Total: 41", None)]));
    let (outcome, _) = replay(&program, &mut desktop);
    let ReplayOutcome::Failed { reason, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert!(
        reason.contains("label \"Total: 42\" in \"Source\" is not there")
            && reason.contains("labels there: \"Total: 41\""),
        "{reason}"
    );
}
