//! Tests of the naive strategy: what it replays for each kind of tree.

use reprise_models::{ActionEvent, MouseButton, ReduceOptions, reduce};
use serde_json::json;

use super::*;
use crate::scripted::ScriptedDesktop;
use crate::{Action, Desktop, KeySpec};

fn trees(raw: serde_json::Value) -> Vec<ActionEvent> {
    reduce(
        serde_json::from_value(raw).unwrap(),
        &ReduceOptions::default(),
    )
}

fn decide_all(strategy: &mut NaiveStrategy) -> Vec<Step> {
    let mut desktop = ScriptedDesktop::new();
    let frame = desktop.screenshot().unwrap();
    let mut steps = Vec::new();
    loop {
        let observation = Observation {
            tree: None,
            frame: &frame,
            window: None,
            step_idx: steps.len(),
            attempt: 1,
            looked: std::time::Duration::ZERO,
            history: &[],
            popups: &[],
        };
        match strategy.decide(&observation).unwrap() {
            Decision::Step(step) => steps.push(step),
            Decision::Prepare(step) => panic!("the naive strategy prepares nothing: {step:?}"),
            Decision::Done => return steps,
        }
    }
}

#[test]
fn a_chord_is_replayed_as_its_exact_presses_and_releases() {
    let mut strategy = NaiveStrategy::new(
        trees(json!([
            {"name": "press", "timestamp": 1.0, "key_name": "ctrl", "canonical_key_name": "ctrl"},
            {"name": "press", "timestamp": 1.1, "key_char": "t", "canonical_key_char": "t"},
            {"name": "release", "timestamp": 1.2, "key_char": "t", "canonical_key_char": "t"},
            {"name": "release", "timestamp": 1.3, "key_name": "ctrl", "canonical_key_name": "ctrl"}
        ])),
        vec![],
        1000.0,
    );
    let steps = decide_all(&mut strategy);
    assert_eq!(steps.len(), 1);
    let keys: Vec<&Action> = steps[0]
        .actions
        .iter()
        .filter(|a| !matches!(a, Action::Pause { .. }))
        .collect();
    let ctrl = KeySpec::Named("ctrl".into());
    let t = KeySpec::Char("t".into());
    assert_eq!(
        keys,
        [
            &Action::KeyDown { key: ctrl.clone() },
            &Action::KeyDown { key: t.clone() },
            &Action::KeyUp { key: t },
            &Action::KeyUp { key: ctrl }
        ]
    );
}

#[test]
fn clicks_scrolls_and_timing_follow_the_recording() {
    let mut strategy = NaiveStrategy::new(
        trees(json!([
            {"name": "click", "timestamp": 1.0, "mouse_x": 10, "mouse_y": 20, "mouse_button_name": "left", "mouse_pressed": true},
            {"name": "click", "timestamp": 1.1, "mouse_x": 10, "mouse_y": 20, "mouse_button_name": "left", "mouse_pressed": false},
            {"name": "click", "timestamp": 1.3, "mouse_x": 10, "mouse_y": 20, "mouse_button_name": "left", "mouse_pressed": true},
            {"name": "click", "timestamp": 1.4, "mouse_x": 10, "mouse_y": 20, "mouse_button_name": "left", "mouse_pressed": false},
            {"name": "scroll", "timestamp": 3.4, "mouse_x": 50, "mouse_y": 60, "mouse_dx": 0, "mouse_dy": -1},
            {"name": "scroll", "timestamp": 3.5, "mouse_x": 50, "mouse_y": 60, "mouse_dx": 0, "mouse_dy": -1}
        ])),
        vec![],
        2.0,
    );
    let steps = decide_all(&mut strategy);
    assert_eq!(steps.len(), 2);
    let downs = steps[0]
        .actions
        .iter()
        .filter(|a| {
            **a == Action::ButtonDown {
                button: MouseButton::Left,
            }
        })
        .count();
    assert_eq!(downs, 2, "a doubleclick presses twice");
    assert_eq!(steps[0].actions[0], Action::MoveTo { x: 10.0, y: 20.0 });
    assert_eq!(steps[0].target, Some((10.0, 20.0)));
    // Two seconds between the double-click's end and the scroll, at speed 2.
    assert!((steps[1].delay_before_seconds - 1.0).abs() < 1e-9);
    assert_eq!(
        steps[1].actions,
        [
            Action::MoveTo { x: 50.0, y: 60.0 },
            Action::Scroll { dx: 0, dy: -2 }
        ]
    );
}

#[test]
fn a_slower_replay_stretches_the_pauses_between_steps_not_a_double_clicks() {
    let mut strategy = NaiveStrategy::new(
        trees(json!([
            {"name": "click", "timestamp": 1.0, "mouse_x": 10, "mouse_y": 20, "mouse_button_name": "left", "mouse_pressed": true},
            {"name": "click", "timestamp": 1.05, "mouse_x": 10, "mouse_y": 20, "mouse_button_name": "left", "mouse_pressed": false},
            {"name": "click", "timestamp": 1.15, "mouse_x": 10, "mouse_y": 20, "mouse_button_name": "left", "mouse_pressed": true},
            {"name": "click", "timestamp": 1.2, "mouse_x": 10, "mouse_y": 20, "mouse_button_name": "left", "mouse_pressed": false},
            {"name": "scroll", "timestamp": 3.2, "mouse_x": 50, "mouse_y": 60, "mouse_dx": 0, "mouse_dy": -1}
        ])),
        vec![],
        0.25,
    );
    let steps = decide_all(&mut strategy);
    let inner: f64 = steps[0]
        .actions
        .iter()
        .map(|action| match action {
            Action::Pause { seconds } => *seconds,
            _ => 0.0,
        })
        .sum();
    assert!(
        (inner - 0.2).abs() < 1e-9,
        "the double-click as recorded: {inner}"
    );
    // Two seconds between the steps, four times as long at speed 0.25.
    assert!((steps[1].delay_before_seconds - 8.0).abs() < 1e-9);
}

#[test]
fn the_replay_loop_injects_every_step_and_completes() {
    let mut strategy = NaiveStrategy::new(
        trees(json!([
            {"name": "click", "timestamp": 0.0, "mouse_x": 5, "mouse_y": 5, "mouse_button_name": "left", "mouse_pressed": true},
            {"name": "click", "timestamp": 0.05, "mouse_x": 5, "mouse_y": 5, "mouse_button_name": "left", "mouse_pressed": false},
            {"name": "press", "timestamp": 0.1, "key_char": "a"},
            {"name": "release", "timestamp": 0.12, "key_char": "a"}
        ])),
        vec![],
        100.0,
    );
    let mut desktop = ScriptedDesktop::new();
    let options = crate::ReplayOptions {
        settle: fast_settle(),
        ..Default::default()
    };
    let (outcome, records) = desktop.replay(&mut strategy, &options, &|| false);
    assert_eq!(outcome, crate::ReplayOutcome::completed(2, 2));
    assert_eq!(records.len(), 2);
    assert!(desktop.held.is_empty(), "nothing stays pressed");
    let injected: Vec<&Action> = desktop.injected.iter().collect();
    assert_eq!(injected.len(), 5, "{injected:?}");
}

pub(crate) fn fast_settle() -> crate::settle::SettleOptions {
    crate::settle::SettleOptions {
        quiet: std::time::Duration::from_millis(1),
        poll: std::time::Duration::from_millis(1),
        timeout: std::time::Duration::from_millis(50),
    }
}
