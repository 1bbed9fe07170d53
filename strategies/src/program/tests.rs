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
    let compiled = compile(planned(), program, &[], &Default::default()).unwrap();
    let inner = NaiveStrategy::new(compiled.trees.clone(), vec![], 1000.0);
    let mut strategy = ProgramStrategy::new(Box::new(inner), &compiled);
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

fn read_total_then_type_it() -> Program {
    Program {
        entries: vec![
            Entry::Read(Read {
                element: query(Role::TextInput, "Total"),
                into: "total".into(),
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
    let err = compile(planned(), &program, &[], &Default::default()).unwrap_err();
    assert_eq!((err.entry, err.field.as_str()), (Some(3), "recorded"));
    // An instruction with no window near it to look in.
    let lonely = Program {
        entries: vec![Entry::Read(Read {
            element: Query {
                role: Some(Role::Label),
                ..Default::default()
            },
            into: "x".into(),
        })],
        values: BTreeMap::new(),
    };
    let err = compile(planned(), &lonely, &[], &Default::default()).unwrap_err();
    assert_eq!(err.field, "window");
}
