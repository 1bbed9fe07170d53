//! Tests of the replay loop against a scripted desktop: bounds, failures,
//! dry runs and aborts.

use reprise_models::{MouseButton, WindowState};

use super::*;
use crate::KeySpec;
use crate::naive::tests::fast_settle;
use crate::scripted::ScriptedDesktop;

/// A strategy that returns the same click-and-hold step for ever.
struct Repeat(Step);

impl ReplayStrategy for Repeat {
    fn name(&self) -> &'static str {
        "repeat"
    }
    fn decide(&mut self, _: &Observation<'_>) -> Result<Decision, StrategyError> {
        Ok(Decision::Step(self.0.clone()))
    }
}

/// A strategy that can never decide.
struct Confused;

impl ReplayStrategy for Confused {
    fn name(&self) -> &'static str {
        "confused"
    }
    fn decide(&mut self, _: &Observation<'_>) -> Result<Decision, StrategyError> {
        Err(StrategyError::Retryable("two look-alike buttons".into()))
    }
}

fn press_and_wait_step() -> Step {
    Step {
        label: "hold".into(),
        target: Some((1.0, 1.0)),
        reason: "test".into(),
        actions: vec![
            Action::MoveTo { x: 1.0, y: 1.0 },
            Action::ButtonDown {
                button: MouseButton::Left,
            },
            Action::Pause { seconds: 0.2 },
            Action::ButtonUp {
                button: MouseButton::Left,
            },
        ],
        ..Default::default()
    }
}

fn options() -> ReplayOptions {
    ReplayOptions {
        settle: fast_settle(),
        max_steps: 5,
        ..Default::default()
    }
}

fn run(
    strategy: &mut dyn ReplayStrategy,
    desktop: &mut ScriptedDesktop,
    options: &ReplayOptions,
    abort: &dyn Fn() -> bool,
) -> (ReplayOutcome, Vec<StepRecord>) {
    desktop.replay(strategy, options, abort)
}

#[test]
fn the_step_limit_bounds_a_strategy_that_never_finishes() {
    let mut desktop = ScriptedDesktop::new();
    let (outcome, records) = run(
        &mut Repeat(press_and_wait_step()),
        &mut desktop,
        &options(),
        &|| false,
    );
    assert_eq!(outcome, ReplayOutcome::StepLimit { steps: 5 });
    assert_eq!(records.len(), 5);
}

#[test]
fn retries_are_bounded_and_the_failure_is_reported() {
    let mut desktop = ScriptedDesktop::new();
    let options = ReplayOptions {
        max_retries: 2,
        ..options()
    };
    let (outcome, records) = run(&mut Confused, &mut desktop, &options, &|| false);
    assert!(
        matches!(&outcome, ReplayOutcome::Failed { step: 0, reason, .. } if reason.contains("look-alike")),
        "{outcome:?}"
    );
    assert_eq!(records[0].attempts, 3, "one attempt and two retries");
    assert_eq!(records[0].errors.len(), 3);
    assert!(desktop.injected.is_empty(), "nothing was clicked");
}

#[test]
fn skip_failures_goes_on_and_marks_the_step() {
    let mut desktop = ScriptedDesktop::new();
    desktop
        .inject_failures
        .extend([Some("gone".to_owned()), Some("gone".to_owned())]);
    let options = ReplayOptions {
        max_retries: 1,
        skip_failures: true,
        max_steps: 2,
        ..options()
    };
    let (outcome, records) = run(
        &mut Repeat(press_and_wait_step()),
        &mut desktop,
        &options,
        &|| false,
    );
    assert_eq!(outcome, ReplayOutcome::StepLimit { steps: 2 });
    assert_eq!(records[0].status, StepStatus::Skipped);
    assert_eq!(records[1].status, StepStatus::Unverified);
}

#[test]
fn a_failed_injection_is_retried_and_nothing_stays_held() {
    let mut desktop = ScriptedDesktop::new();
    let step = Step {
        actions: vec![
            Action::ButtonDown {
                button: MouseButton::Left,
            },
            Action::KeyDown {
                key: crate::KeySpec::Named("ctrl".into()),
            },
        ],
        ..press_and_wait_step()
    };
    // The second action of the first attempt fails after the button went down.
    desktop
        .inject_failures
        .extend([None, Some("display gone".to_owned())]);
    let mut strategy = Repeat(step);
    let options = ReplayOptions {
        max_steps: 1,
        ..options()
    };
    let (outcome, records) = run(&mut strategy, &mut desktop, &options, &|| false);
    assert_eq!(outcome, ReplayOutcome::StepLimit { steps: 1 });
    assert_eq!(records[0].attempts, 2);
    // Once after the failed attempt, once when the replay ended.
    assert_eq!(desktop.release_all_calls, 2);
    assert!(desktop.held.is_empty(), "nothing stays held");
    assert_eq!(records[0].errors, ["inject input: display gone"]);
}

/// A strategy whose one step needs `turns` turns of the wheel first (its
/// target scrolled out of view), or turns for ever when `turns` is `None`.
struct ScrollsFirst {
    turns: Option<u32>,
    turned: u32,
}

impl ReplayStrategy for ScrollsFirst {
    fn name(&self) -> &'static str {
        "scrolls-first"
    }
    fn decide(&mut self, observation: &Observation<'_>) -> Result<Decision, StrategyError> {
        if observation.step_idx > 0 {
            return Ok(Decision::Done);
        }
        if self.turns.is_none_or(|turns| self.turned < turns) {
            self.turned += 1;
            return Ok(Decision::Prepare(Step {
                label: "scroll 2 notches down".into(),
                reason: format!("turn {}", self.turned),
                actions: vec![
                    Action::MoveTo { x: 5.0, y: 5.0 },
                    Action::Scroll { dx: 0, dy: -2 },
                ],
                ..press_and_wait_step()
            }));
        }
        Ok(Decision::Step(press_and_wait_step()))
    }
}

#[test]
fn preparations_are_made_before_the_step_and_bounded() {
    // Two turns, then the step: the turns injected first, in order, and
    // kept with the step.
    let mut desktop = ScriptedDesktop::new();
    let mut strategy = ScrollsFirst {
        turns: Some(2),
        turned: 0,
    };
    let (outcome, records) = run(&mut strategy, &mut desktop, &options(), &|| false);
    assert!(
        matches!(outcome, ReplayOutcome::Completed { steps: 1, .. }),
        "{outcome:?}"
    );
    let scroll = Action::Scroll { dx: 0, dy: -2 };
    let scrolls: Vec<usize> = (0..desktop.injected.len())
        .filter(|&idx| desktop.injected[idx] == scroll)
        .collect();
    assert_eq!(scrolls, [1, 3], "{:?}", desktop.injected);
    assert_eq!(
        desktop.injected[4..],
        press_and_wait_step()
            .actions
            .into_iter()
            .filter(|action| !matches!(action, Action::Pause { .. }))
            .collect::<Vec<_>>()
    );
    let prepared: Vec<(&str, &str)> = records[0]
        .prepared
        .iter()
        .map(|made| (made.label.as_str(), made.reason.as_str()))
        .collect();
    assert_eq!(
        prepared,
        [
            ("scroll 2 notches down", "turn 1"),
            ("scroll 2 notches down", "turn 2")
        ]
    );
    assert_eq!(records[0].attempts, 1);
    // For ever: each attempt gives up after MAX_PREPARATIONS, and the
    // retries are bounded; nothing but turns of the wheel was made.
    let mut desktop = ScriptedDesktop::new();
    let mut strategy = ScrollsFirst {
        turns: None,
        turned: 0,
    };
    let retrying = ReplayOptions {
        max_retries: 1,
        ..options()
    };
    let (outcome, _) = run(&mut strategy, &mut desktop, &retrying, &|| false);
    assert!(
        matches!(&outcome, ReplayOutcome::Failed { step: 0, reason, .. } if reason.contains("still not within reach after 12 preparations")),
        "{outcome:?}"
    );
    assert_eq!(strategy.turned as usize, 2 * (MAX_PREPARATIONS + 1));
    assert!(desktop.only_moved_and_scrolled(), "{:?}", desktop.injected);
    // A dry run makes no turn: the first one is what it shows.
    let mut desktop = ScriptedDesktop::new();
    let dry = ReplayOptions {
        dry_run: true,
        ..options()
    };
    let mut strategy = ScrollsFirst {
        turns: Some(2),
        turned: 0,
    };
    let (_, records) = run(&mut strategy, &mut desktop, &dry, &|| false);
    assert!(desktop.injected.is_empty());
    assert_eq!(
        records[0].step.as_ref().unwrap().label,
        "scroll 2 notches down"
    );
}

#[test]
fn dry_run_injects_nothing_but_records_where_each_step_lands() {
    let mut desktop = ScriptedDesktop::new();
    let options = ReplayOptions {
        dry_run: true,
        max_steps: 3,
        ..options()
    };
    let (_, records) = run(
        &mut Repeat(press_and_wait_step()),
        &mut desktop,
        &options,
        &|| false,
    );
    assert!(desktop.injected.is_empty());
    assert!(
        records.iter().all(|r| r.status == StepStatus::DryRun
            && r.step.as_ref().unwrap().target == Some((1.0, 1.0)))
    );
}

#[test]
fn an_abort_during_a_steps_input_lets_the_step_finish_and_stops_before_the_next() {
    let mut desktop = ScriptedDesktop::new();
    // Abort once the button went down (the move, then the press), during
    // the pause before it goes up.
    let injections = desktop.injections.clone();
    let abort = || injections.get() >= 2;
    let options = ReplayOptions {
        max_steps: 2,
        ..options()
    };
    let (outcome, records) = run(
        &mut Repeat(press_and_wait_step()),
        &mut desktop,
        &options,
        &abort,
    );
    // The first step was made whole (its button went up, not released by
    // the stop), and it is done; the second was never begun.
    assert_eq!(outcome, ReplayOutcome::Aborted { step: 1 });
    assert_eq!(records[0].status, StepStatus::Unverified);
    assert_eq!(records[1].status, StepStatus::Aborted);
    assert_eq!(presses(&desktop), 1);
    assert!(
        matches!(
            desktop.injected.last(),
            Some(Action::ButtonUp {
                button: MouseButton::Left
            })
        ),
        "the step's own button up ended its input: {:?}",
        desktop.injected
    );
    assert!(desktop.held.is_empty(), "nothing is left held");

    // A hold longer than FINISH_WITHIN (a slow drag) stops at once: the
    // button is released by the stop, not by the step, and the step is
    // aborted (a resume makes it again).
    let mut desktop = ScriptedDesktop::new();
    let injections = desktop.injections.clone();
    let abort = || injections.get() >= 2;
    let mut long_hold = press_and_wait_step();
    long_hold.actions[2] = Action::Pause { seconds: 5.0 };
    let (outcome, records) = run(&mut Repeat(long_hold), &mut desktop, &options, &abort);
    assert_eq!(outcome, ReplayOutcome::Aborted { step: 0 });
    assert_eq!(records[0].status, StepStatus::Aborted);
    assert!(
        !desktop
            .injected
            .iter()
            .any(|action| matches!(action, Action::ButtonUp { .. })),
        "{:?}",
        desktop.injected
    );
    assert!(
        desktop.slept < Duration::from_secs(1),
        "{:?}",
        desktop.slept
    );
    assert!(desktop.held.is_empty(), "release_all left nothing held");
}

/// A step typing `text` (then Enter where `enter`), a key at a time.
fn typing_step(text: &str, enter: bool) -> Step {
    let mut keys: Vec<KeySpec> = text.chars().map(|c| KeySpec::Char(c.into())).collect();
    if enter {
        keys.push(KeySpec::Named("enter".into()));
    }
    Step {
        label: format!("type {text:?}"),
        target: None,
        actions: keys
            .into_iter()
            .flat_map(|key| {
                [
                    Action::KeyDown { key: key.clone() },
                    Action::KeyUp { key },
                    Action::Pause { seconds: 0.05 },
                ]
            })
            .collect(),
        ..press_and_wait_step()
    }
}

#[test]
fn keys_stop_where_another_window_takes_the_focus_while_a_step_types() {
    let mut desktop =
        ScriptedDesktop::new().with_window("Save as", reprise_models::Rect::new(0, 0, 200, 100));
    let mut editor = desktop.window.clone().expect("a window");
    editor.title = "Untitled".into();
    editor.window_id = 2;
    // The dialog closes after the 3rd key: its editor behind takes the focus.
    desktop.window_after_keys = Some((3, Some(editor.clone())));
    let options = ReplayOptions {
        max_steps: 1,
        ..options()
    };
    let (outcome, records) = run(
        &mut Repeat(typing_step("notes.txt", true)),
        &mut desktop,
        &options,
        &|| false,
    );
    let downs = |desktop: &ScriptedDesktop| -> Vec<String> {
        desktop
            .injected
            .iter()
            .filter_map(|action| match action {
                Action::KeyDown {
                    key: KeySpec::Char(c),
                } => Some(c.clone()),
                Action::KeyDown {
                    key: KeySpec::Named(name),
                } => Some(format!("<{name}>")),
                _ => None,
            })
            .collect()
    };
    // "not" went to the dialog; nothing went to the editor; the run halts
    // (what was typed is neither taken back nor typed again).
    assert_eq!(downs(&desktop), ["n", "o", "t"]);
    assert!(
        matches!(&outcome, ReplayOutcome::Failed { step: 0, reason, .. } if reason.contains(
            "\"Untitled\" (Test) became active before the step's keys were all typed: 3 of its 10 keys were typed, the rest were not, and none went to it"
        )),
        "{outcome:?}"
    );
    assert_eq!(records[0].attempts, 1, "not tried again");
    assert!(desktop.held.is_empty(), "nothing is left held");

    // Enter, the last key, closes the dialog: the window may change after
    // it, as the recording's did.
    let mut desktop =
        ScriptedDesktop::new().with_window("Save as", reprise_models::Rect::new(0, 0, 200, 100));
    desktop.window_after_keys = Some((10, Some(editor.clone())));
    let (_, records) = run(
        &mut Repeat(typing_step("notes.txt", true)),
        &mut desktop,
        &options,
        &|| false,
    );
    assert_eq!(downs(&desktop).len(), 10);
    assert_ne!(records[0].status, StepStatus::Failed, "{records:?}");

    // A press that gives the focus to another window, then keys: they are
    // not held to the window before the press.
    let mut desktop =
        ScriptedDesktop::new().with_window("Save as", reprise_models::Rect::new(0, 0, 200, 100));
    desktop.window_on_release = Some(Some(editor));
    let mut step = typing_step("ab", false);
    let press = press_and_wait_step().actions;
    step.actions.splice(0..0, press);
    let (_, records) = run(&mut Repeat(step), &mut desktop, &options, &|| false);
    assert_eq!(downs(&desktop), ["a", "b"]);
    assert_ne!(records[0].status, StepStatus::Failed, "{records:?}");
}

#[test]
fn an_abort_while_a_steps_effect_is_checked_keeps_the_step_as_done_unchecked() {
    let mut desktop = ScriptedDesktop::new();
    // No abort until the step's input was made (move, press, release); then
    // at once, while its effect is checked.
    let injections = desktop.injections.clone();
    let abort = || injections.get() >= 3;
    let seen = Verification::Verified(crate::Evidence::new(
        crate::EvidenceKind::State,
        "the box is checked",
    ));
    let mut strategy = Checked::one(Ok(seen));
    let (outcome, records) = run(&mut strategy, &mut desktop, &options(), &abort);
    // The halt names the step; its record says its input was made, so a
    // resume goes on after it instead of pressing again.
    assert_eq!(outcome, ReplayOutcome::Aborted { step: 0 });
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].status, StepStatus::Unverified);
    assert_eq!(records[0].check.as_deref(), Some(STOPPED_UNCHECKED));
    assert_eq!(presses(&desktop), 1);
    assert!(desktop.held.is_empty(), "nothing is left held");
}

/// A strategy whose screen is not ready for its first `not_ready` decisions
/// (the window its keys go to has not come up), then decides one step.
struct Slow {
    not_ready: u32,
    wait: Duration,
    decided: bool,
}

impl ReplayStrategy for Slow {
    fn name(&self) -> &'static str {
        "slow"
    }
    fn decide(&mut self, _: &Observation<'_>) -> Result<Decision, StrategyError> {
        if self.decided {
            return Ok(Decision::Done);
        }
        if self.not_ready > 0 {
            self.not_ready -= 1;
            return Err(StrategyError::NotYet {
                reason: "the keys were typed into \"Save as\"".into(),
                wait: self.wait,
            });
        }
        self.decided = true;
        Ok(Decision::Step(press_and_wait_step()))
    }
}

#[test]
fn waiting_for_the_screen_spends_no_attempt_and_is_bounded() {
    // Ready after three looks: one attempt, and the step is done.
    let mut desktop = ScriptedDesktop::new();
    let mut slow = Slow {
        not_ready: 3,
        wait: Duration::from_secs(10),
        decided: false,
    };
    let mut records = Vec::new();
    let options = ReplayOptions {
        max_retries: 0,
        ..options()
    };
    let outcome = run_replay(
        &mut slow,
        &mut desktop,
        &options,
        &|| false,
        &mut |record, _| records.push(record.clone()),
    );
    assert_eq!(outcome, ReplayOutcome::completed(1, 1));
    assert_eq!((records[0].attempts, records[0].errors.len()), (1, 0));

    // Never ready: each attempt waits its bound, then fails with the reason.
    let mut never = Slow {
        not_ready: u32::MAX,
        wait: Duration::from_millis(200),
        decided: false,
    };
    let options = ReplayOptions {
        max_retries: 1,
        ..options
    };
    let mut desktop = ScriptedDesktop::new();
    let outcome = run_replay(
        &mut never,
        &mut desktop,
        &options,
        &|| false,
        &mut |_, _| {},
    );
    let ReplayOutcome::Failed {
        step: 0, reason, ..
    } = outcome
    else {
        panic!("{outcome:?}");
    };
    assert_eq!(
        reason,
        "the keys were typed into \"Save as\" (waited 0.2 s)"
    );
    // Two attempts of 200 ms each (and their looks' 100 ms slices, on the
    // desktop's virtual clock), and nothing injected.
    assert!(
        (Duration::from_millis(400)..Duration::from_millis(700)).contains(&desktop.slept),
        "{:?}",
        desktop.slept
    );
    assert!(desktop.injected.is_empty());
}

/// `steps` steps (each `step`), then done, known without a look; each
/// check answers as told. Where `pressed_box` is given, the strategy found
/// each step's element there in the tree.
struct Checked {
    answer: Result<Verification, crate::Missed>,
    steps: usize,
    step: Step,
    pressed_box: Option<reprise_models::Rect>,
}

impl Checked {
    /// One press, its check answering `answer`.
    fn one(answer: Result<Verification, crate::Missed>) -> Checked {
        Checked {
            answer,
            steps: 1,
            step: press_and_wait_step(),
            pressed_box: None,
        }
    }
}

/// A check that read the step's effect in the application's state.
fn state_seen() -> Result<Verification, crate::Missed> {
    Ok(Verification::Verified(crate::Evidence::new(
        crate::EvidenceKind::State,
        "checked",
    )))
}

impl ReplayStrategy for Checked {
    fn name(&self) -> &'static str {
        "checked"
    }
    fn decide(&mut self, observation: &Observation<'_>) -> Result<Decision, StrategyError> {
        if observation.step_idx >= self.steps {
            return Ok(Decision::Done);
        }
        Ok(Decision::Step(self.step.clone()))
    }
    fn finished(&self, step_idx: usize) -> bool {
        step_idx >= self.steps
    }
    fn verifies(&self) -> bool {
        true
    }
    fn pressed_box(&self, _: usize) -> Option<reprise_models::Rect> {
        self.pressed_box
    }
    fn verify(
        &mut self,
        _: usize,
        _: &crate::strategy::Effect<'_>,
    ) -> Result<Verification, crate::Missed> {
        self.answer.clone()
    }
}

#[test]
fn a_step_is_verified_only_when_its_check_saw_the_effect() {
    let check = |answer: Result<Verification, crate::Missed>, require_verified: bool| {
        let mut desktop = ScriptedDesktop::new();
        let options = ReplayOptions {
            require_verified,
            max_retries: 2,
            ..options()
        };
        let mut strategy = Checked::one(answer);
        let (outcome, records) = run(&mut strategy, &mut desktop, &options, &|| false);
        let presses = desktop
            .injected
            .iter()
            .filter(|action| matches!(action, Action::ButtonDown { .. }))
            .count();
        assert!(desktop.held.is_empty(), "nothing stays pressed");
        (
            outcome,
            records[0].status,
            records[0].check.clone(),
            presses,
        )
    };
    let completed = |unverified| ReplayOutcome::completed(1, unverified);
    let seen = Verification::Verified(crate::Evidence::new(
        crate::EvidenceKind::State,
        "the box is checked",
    ));
    assert_eq!(
        check(Ok(seen.clone()), true),
        (
            completed(0),
            StepStatus::Verified,
            Some("the box is checked".into()),
            1
        )
    );
    // Pixels that changed where the application's tree said nothing: weak
    // evidence, which leaves the step unverified (the run exits 12).
    let weak = Verification::Verified(crate::Evidence::new(
        crate::EvidenceKind::Weak,
        "the target changed on the screen",
    ));
    assert_eq!(
        check(Ok(weak), false),
        (
            completed(1),
            StepStatus::Unverified,
            Some("weak evidence only: the target changed on the screen".into()),
            1
        )
    );
    let unseen = Verification::Unverified("no target to watch".into());
    assert_eq!(
        check(Ok(unseen.clone()), false),
        (
            completed(1),
            StepStatus::Unverified,
            Some("no target to watch".into()),
            1
        )
    );
    // --require-verified: the unverified step fails, and is not done again.
    let (outcome, status, _, presses) = check(Ok(unseen), true);
    assert!(
        matches!(&outcome, ReplayOutcome::Failed { step: 0, reason, .. } if reason.contains("--require-verified")),
        "{outcome:?}"
    );
    assert_eq!((status, presses), (StepStatus::Failed, 1));
    // A missed effect is tried again only where the strategy says it may be.
    for (retry, expected_presses) in [(true, 3), (false, 1)] {
        let missed = crate::Missed {
            reason: "nothing changed".into(),
            retry,
        };
        let (outcome, status, _, presses) = check(Err(missed), false);
        assert!(
            matches!(&outcome, ReplayOutcome::Failed { step: 0, reason, .. } if reason.contains("nothing changed")),
            "{outcome:?}"
        );
        assert_eq!((status, presses), (StepStatus::Failed, expected_presses));
    }
}

#[test]
fn a_stored_done_step_reads_as_unverified() {
    let status: StepStatus = serde_json::from_str("\"done\"").unwrap();
    assert_eq!(status, StepStatus::Unverified);
    let outcome: ReplayOutcome =
        serde_json::from_str(r#"{"outcome": "completed", "steps": 3}"#).unwrap();
    assert_eq!(outcome, ReplayOutcome::completed(3, 0));
}

#[test]
fn a_status_is_shown_as_it_is_stored() {
    for status in [
        StepStatus::Verified,
        StepStatus::Unverified,
        StepStatus::DryRun,
        StepStatus::Skipped,
        StepStatus::Failed,
        StepStatus::Aborted,
    ] {
        assert_eq!(
            serde_json::to_value(status).unwrap(),
            serde_json::Value::from(status.as_str())
        );
    }
}

/// A strategy that presses the element `expect` at (50, 40), found (it
/// says) by its identity, its tree's boxes moved by the offset where one is
/// given, and wants the window's tree for the re-check.
struct PressFound(reprise_models::ElementIdentity, Option<(i32, i32)>);

impl ReplayStrategy for PressFound {
    fn name(&self) -> &'static str {
        "press-found"
    }
    fn decide(&mut self, observation: &Observation<'_>) -> Result<Decision, StrategyError> {
        if observation.step_idx > 0 {
            return Ok(Decision::Done);
        }
        let mut step = press_and_wait_step();
        step.target = Some((50.0, 40.0));
        step.actions[0] = Action::MoveTo { x: 50.0, y: 40.0 };
        step.expect = Some(self.0.clone());
        step.tree_offset = self.1;
        Ok(Decision::Step(step))
    }
    fn wants_tree(&self, _: usize) -> Option<crate::desktop::TreeRequest> {
        Some(crate::desktop::TreeRequest {
            app: "app".into(),
            window: self.0.window.clone(),
            whole_lists: false,
        })
    }
}

fn button(name: &str, rect: reprise_models::Rect) -> reprise_models::ElementIdentity {
    let window = reprise_models::WindowIdentity {
        role: accesskit::Role::Window,
        name: Some("Form".into()),
    };
    reprise_models::ElementIdentity::new("app", window, accesskit::Role::Button, Some(name), rect)
}

/// The window "Form" with one button at (30, 30) 40x20.
fn form_tree(name: &str) -> reprise_models::A11yTree {
    use accesskit::Role;
    let mut tree = reprise_models::element::outline(&[
        (0, Role::Window, "Form", (0, 0, 200, 100)),
        (1, Role::Button, name, (30, 30, 40, 20)),
    ]);
    tree.app = "app".into();
    tree
}

fn presses(desktop: &ScriptedDesktop) -> usize {
    desktop
        .injected
        .iter()
        .filter(|action| matches!(action, Action::ButtonDown { .. }))
        .count()
}

/// The replay of [`PressFound`] (OK at (30, 30) 40x20, its tree's boxes
/// moved by `offset`) on a desktop whose hit-testing names `at`, one a
/// check (none: it names nothing), and whose window's tree is `tree`; two
/// retries.
fn press_found(
    offset: Option<(i32, i32)>,
    at: Vec<Option<reprise_models::ElementIdentity>>,
    tree: Option<reprise_models::A11yTree>,
) -> (ReplayOutcome, Vec<StepRecord>, ScriptedDesktop) {
    let ok = button("OK", reprise_models::Rect::new(30, 30, 40, 20));
    let mut desktop = ScriptedDesktop::new();
    desktop.elements_at = at.into();
    desktop.trees = tree.into_iter().collect();
    let retries = ReplayOptions {
        max_retries: 2,
        ..options()
    };
    let (outcome, records) = run(&mut PressFound(ok, offset), &mut desktop, &retries, &|| {
        false
    });
    (outcome, records, desktop)
}

#[test]
fn the_element_at_the_point_is_checked_just_before_the_press_and_another_one_is_never_pressed() {
    use reprise_models::Rect;
    let delete = || Some(button("Delete", Rect::new(30, 30, 40, 20)));
    let completed = |outcome: &ReplayOutcome| {
        assert!(
            matches!(outcome, ReplayOutcome::Completed { steps: 1, .. }),
            "{outcome:?}"
        );
    };
    // Between the decision and the press, "Delete" came under the point:
    // refused on every attempt, naming both, and nothing pressed.
    let (outcome, records, desktop) = press_found(None, vec![delete()], None);
    let ReplayOutcome::Failed {
        step: 0, reason, ..
    } = outcome
    else {
        panic!("{outcome:?}");
    };
    assert!(
        reason.contains("button \"Delete\"") && reason.contains("button \"OK\""),
        "{reason}"
    );
    assert_eq!(presses(&desktop), 0, "{:?}", desktop.injected);
    assert_eq!(records[0].attempts, 3);
    // Each check was made with the pointer at the point, before any press.
    assert_eq!(desktop.hit_tests, vec![(50.0, 40.0); 3]);
    assert!(matches!(
        desktop.injected[0],
        Action::MoveTo { x: 50.0, y: 40.0 }
    ));

    // It went away before the next attempt: pressed once, the check kept.
    let ok = Some(button("OK", Rect::new(30, 30, 40, 20)));
    let (outcome, records, desktop) = press_found(None, vec![delete(), ok], None);
    completed(&outcome);
    assert_eq!(presses(&desktop), 1);
    let by = |records: &[StepRecord]| records[0].recheck.as_ref().map(|check| check.by);
    assert_eq!(by(&records), Some(RecheckBy::HitTest));

    // A toolkit whose hit-testing names nothing: the window's tree is read
    // again, and what it has at the point decides.
    let (outcome, records, _) = press_found(None, Vec::new(), Some(form_tree("OK")));
    completed(&outcome);
    assert_eq!(by(&records), Some(RecheckBy::Tree));
    let (outcome, _, desktop) = press_found(None, Vec::new(), Some(form_tree("Delete")));
    assert!(
        matches!(outcome, ReplayOutcome::Failed { .. }),
        "{outcome:?}"
    );
    assert_eq!(presses(&desktop), 0);

    // A tree whose boxes the pixels put 30 pixels higher: OK's box, as the
    // tree gives it, is at (30, 60); the press lands at (50, 40), where the
    // pixels show it. The tree is asked what is at the point moved back.
    let below = Some(button("OK", Rect::new(30, 60, 40, 20)));
    let mut strategy = PressFound(below.clone().unwrap(), Some((0, -30)));
    let mut desktop = ScriptedDesktop::new();
    desktop.elements_at = [below].into();
    let (outcome, _) = run(&mut strategy, &mut desktop, &options(), &|| false);
    completed(&outcome);
    assert_eq!(desktop.hit_tests, vec![(50.0, 70.0)]);
    assert_eq!(presses(&desktop), 1);
}

/// Replay options whose screen settles after `quiet` of no change, looked
/// at every `poll`, waited for 5 s at most.
fn settling(quiet: Duration, poll: Duration) -> ReplayOptions {
    ReplayOptions {
        settle: crate::settle::SettleOptions {
            quiet,
            poll,
            timeout: Duration::from_secs(5),
        },
        ..Default::default()
    }
}

/// The seconds from each step's last input to the next's.
fn input_gaps(records: &[StepRecord]) -> Vec<f64> {
    let ended: Vec<Instant> = records.iter().filter_map(|r| r.input_ended).collect();
    assert_eq!(ended.len(), records.len(), "every step's input was made");
    ended
        .windows(2)
        .map(|pair| pair[1].duration_since(pair[0]).as_secs_f64())
        .collect()
}

/// The records of `step` made three times, its effect awaited until the
/// screen has been still for `quiet`.
fn three_times(step: Step, desktop: &mut ScriptedDesktop, quiet: Duration) -> Vec<StepRecord> {
    let options = ReplayOptions {
        max_steps: 3,
        ..settling(quiet, Duration::from_millis(10))
    };
    let (_, records) = run(&mut Repeat(step), desktop, &options, &|| false);
    assert_eq!(records.len(), 3);
    records
}

#[test]
fn a_recorded_pause_counts_from_the_previous_steps_input_not_from_its_checks() {
    // Each step waits for the screen to settle (a third of a second here)
    // before it is decided; its recorded pause is a second, its press holds
    // 0.2 s. From one step's last input to the next's: the pause and the
    // hold, the settling taken out of the pause, not added to it.
    let gaps = |quiet: f64| {
        let mut desktop = ScriptedDesktop::new();
        let step = Step {
            delay_before_seconds: 1.0,
            ..press_and_wait_step()
        };
        input_gaps(&three_times(
            step,
            &mut desktop,
            Duration::from_secs_f64(quiet),
        ))
    };
    for gap in gaps(0.3) {
        assert!((gap - 1.2).abs() < 0.05, "{gap}");
    }
    // Checks longer than the person's pause are waited for, and no more.
    for gap in gaps(1.5) {
        assert!((gap - 1.7).abs() < 0.05, "{gap}");
    }
}

#[test]
fn a_recheck_is_taken_out_of_the_recorded_pause_so_the_press_keeps_the_pace() {
    // Each step presses "OK", found by its identity, whose re-check at the
    // point takes `hit` on the clock; its recorded pause is a second, its
    // press holds 0.2 s, the screen settles in 0.3 s. From one step's last
    // input to the next's: the pause and the hold, the last re-check's time
    // taken out of the pause (at most MAX_EXPECTED_RECHECK), and the check
    // still made just before the press.
    use reprise_models::Rect;
    let gaps = |hit: f64| {
        let ok = button("OK", Rect::new(30, 30, 40, 20));
        let mut desktop = ScriptedDesktop::new();
        desktop.elements_at = [Some(ok.clone())].into();
        desktop.hit_test_takes = Duration::from_secs_f64(hit);
        let mut step = press_and_wait_step();
        step.target = Some((50.0, 40.0));
        step.actions[0] = Action::MoveTo { x: 50.0, y: 40.0 };
        step.expect = Some(ok);
        step.delay_before_seconds = 1.0;
        let records = three_times(step, &mut desktop, Duration::from_millis(300));
        for record in &records {
            let check = record.recheck.as_ref().expect("re-checked");
            assert!((check.seconds - hit).abs() < 1e-6, "{check:?}");
        }
        input_gaps(&records)
    };
    for gap in gaps(0.08) {
        assert!((gap - 1.2).abs() < 0.005, "{gap}");
    }
    // A slow re-check is given a quarter of a second of the pause, no more.
    for gap in gaps(0.4) {
        assert!((gap - 1.35).abs() < 0.005, "{gap}");
    }
}

#[test]
fn a_decision_right_after_a_settled_effect_check_does_not_wait_for_the_quiet_again() {
    // On a still screen, the first step's check waits for 150 ms of quiet;
    // the second step's decision, a moment later on the same window, goes
    // on from that look: one look, not another 150 ms. From one step's
    // last input to the next's: the check's quiet and the press's hold.
    let mut desktop = ScriptedDesktop::new();
    let options = settling(Duration::from_millis(150), Duration::from_millis(50));
    let (outcome, records) = run(
        &mut Checked {
            steps: 2,
            ..Checked::one(state_seen())
        },
        &mut desktop,
        &options,
        &|| false,
    );
    assert!(
        matches!(outcome, ReplayOutcome::Completed { .. }),
        "{outcome:?}"
    );
    let gaps = input_gaps(&records);
    assert_eq!(gaps.len(), 1);
    let gap = gaps[0];
    assert!((gap - 0.35).abs() < 0.005, "{gap}");
    assert!(records.iter().all(|record| record.settled));
}

/// The "Form" window whose button's box (30, 30) 40x20 changes for ten
/// seconds, and nothing else in it.
fn animating_form() -> ScriptedDesktop {
    let mut desktop =
        ScriptedDesktop::new().with_window("Form", reprise_models::Rect::new(0, 0, 200, 100));
    for tick in 1..=250u32 {
        let mut frame = desktop.frame.clone();
        frame
            .image
            .put_pixel(40 + tick % 20, 40, image::Rgba([255; 4]));
        desktop
            .timeline
            .push((Duration::from_millis(u64::from(tick) * 40), frame));
    }
    desktop
}

/// `strategy`, its pressed box the animating one, replayed to its end on
/// [`animating_form`] (the screen still for 150 ms is settled): the
/// desktop and the steps' records.
fn on_animating_form(mut strategy: Checked) -> (ScriptedDesktop, Vec<StepRecord>) {
    let mut desktop = animating_form();
    let options = settling(Duration::from_millis(150), Duration::from_millis(50));
    strategy.pressed_box = Some(reprise_models::Rect::new(30, 30, 40, 20));
    let (outcome, records) = run(&mut strategy, &mut desktop, &options, &|| false);
    assert!(
        matches!(outcome, ReplayOutcome::Completed { .. }),
        "{outcome:?}"
    );
    (desktop, records)
}

#[test]
fn a_presss_own_element_animating_does_not_hold_the_wait_for_its_effect() {
    // The pressed element's box changes for ten seconds (its look after
    // the press), the rest of the window never. After the press, the wait
    // for the screen leaves the box out: the quiet, not the wait's bound.
    // After keys (no press) the box counts: the wait runs to its bound.
    let effect_wait = |step: Step| {
        let (desktop, records) = on_animating_form(Checked {
            step,
            ..Checked::one(state_seen())
        });
        let ended = records[0].input_ended.expect("made");
        desktop.now().duration_since(ended).as_secs_f64()
    };
    let press = press_and_wait_step();
    let waited = effect_wait(press);
    assert!((0.15..0.2).contains(&waited), "{waited}");
    let key = crate::KeySpec::Char("a".into());
    let keys = Step {
        actions: vec![Action::KeyDown { key: key.clone() }, Action::KeyUp { key }],
        ..press_and_wait_step()
    };
    let waited = effect_wait(keys);
    assert!(waited >= 3.0, "{waited}");
}

#[test]
fn the_next_decision_leaves_out_what_the_effect_check_left_out() {
    // As above, the pressed element's box animates for ten seconds; a
    // second step follows the press. Its decision goes on from the effect
    // check's settled look, the box left out again: from the first step's
    // last input to the second's, the check's quiet and the press's hold,
    // not the animation's ten seconds (nor the wait's bound).
    let (_, records) = on_animating_form(Checked {
        steps: 2,
        ..Checked::one(state_seen())
    });
    let gaps = input_gaps(&records);
    assert_eq!(gaps.len(), 1);
    assert!((0.35..0.45).contains(&gaps[0]), "{gaps:?}");
}

/// One press in the "Form" window, then done. Where the recording shows
/// a window `after` it, its effect is checked (the press closed the
/// window); where it `knows` its steps, it says it is done without a look.
struct OnePress {
    after: Option<WindowState>,
    knows: bool,
}

impl ReplayStrategy for OnePress {
    fn name(&self) -> &'static str {
        "one press"
    }
    fn decide(&mut self, observation: &Observation<'_>) -> Result<Decision, StrategyError> {
        if observation.step_idx > 0 {
            return Ok(Decision::Done);
        }
        Ok(Decision::Step(press_and_wait_step()))
    }
    fn finished(&self, step_idx: usize) -> bool {
        self.knows && step_idx > 0
    }
    fn verifies(&self) -> bool {
        self.after.is_some()
    }
    fn window_after(&self, _: usize) -> Option<&WindowState> {
        self.after.as_ref()
    }
    fn verify(
        &mut self,
        _: usize,
        effect: &crate::strategy::Effect<'_>,
    ) -> Result<Verification, crate::Missed> {
        assert!(effect.window_after.is_none(), "the press closed the window");
        Ok(Verification::Verified(crate::Evidence::new(
            crate::EvidenceKind::Window,
            "the window closed",
        )))
    }
}

#[test]
fn a_window_the_step_itself_closed_is_not_waited_for() {
    // The press closes the form; the recording stopped before it closed,
    // so it shows the form (or, in the other case, a dialog the press
    // opened) after the press.
    let waited = |after_title: &str| {
        let rect = reprise_models::Rect::new(0, 0, 100, 50);
        let mut desktop = ScriptedDesktop::new().with_window("Form", rect);
        desktop.window_on_release = Some(None);
        let mut after = desktop.window.clone().unwrap();
        after.title = after_title.into();
        let mut strategy = OnePress {
            after: Some(after),
            knows: false,
        };
        let (outcome, records) = run(&mut strategy, &mut desktop, &options(), &|| false);
        assert!(
            matches!(outcome, ReplayOutcome::Completed { unverified: 0, .. }),
            "{outcome:?}"
        );
        assert_eq!(records[0].status, StepStatus::Verified);
        desktop.slept.as_secs_f64()
    };
    let (own, dialog) = (waited("Form"), waited("Dialog"));
    // The form's own absence is a glance (two looks a tenth of a second
    // apart); a dialog that does not come, a second with no window.
    assert!(
        (dialog - own - 0.9).abs() < 0.05,
        "own {own}, dialog {dialog}"
    );
}

#[test]
fn a_replay_known_to_be_over_ends_without_waiting_for_the_screen() {
    let slept = |knows: bool| {
        let mut desktop = ScriptedDesktop::new();
        let options = ReplayOptions {
            settle: crate::settle::SettleOptions {
                quiet: Duration::from_millis(300),
                poll: Duration::from_millis(10),
                timeout: Duration::from_secs(5),
            },
            ..options()
        };
        let mut strategy = OnePress { after: None, knows };
        let (outcome, _) = run(&mut strategy, &mut desktop, &options, &|| false);
        assert_eq!(outcome, ReplayOutcome::completed(1, 1));
        assert!(desktop.held.is_empty());
        desktop.slept.as_secs_f64()
    };
    // The same replay, less the look that learned it was over: a settled
    // screen (0.3 s of quiet).
    let (asked, known) = (slept(false), slept(true));
    assert!(
        (asked - known - 0.3).abs() < 0.02,
        "asked {asked}, known {known}"
    );
}

/// A sink that notes each mark and end with how many inputs the desktop
/// had been given by then.
struct Marks {
    injections: std::rc::Rc<std::cell::Cell<usize>>,
    seen: Vec<(&'static str, usize, StepStatus)>,
}

impl StepSink for Marks {
    fn begun(&mut self, record: &StepRecord) {
        let stored = as_begun(record);
        self.seen
            .push(("begun", self.injections.get(), stored.status));
    }
    fn made(&mut self, record: &StepRecord) {
        let stored = as_made(record);
        self.seen
            .push(("made", self.injections.get(), stored.status));
    }
    fn done(&mut self, record: &StepRecord, _: Option<&Frame>) {
        self.seen
            .push(("done", self.injections.get(), record.status));
    }
}

#[test]
fn a_steps_marks_come_before_its_first_input_and_after_its_last_and_never_in_a_dry_run() {
    let seen = Verification::Verified(crate::Evidence::new(
        crate::EvidenceKind::State,
        "the box is checked",
    ));
    let mut desktop = ScriptedDesktop::new();
    let mut marks = Marks {
        injections: desktop.injections.clone(),
        seen: Vec::new(),
    };
    let mut strategy = Checked::one(Ok(seen));
    let outcome = run_replay_into(
        &mut strategy,
        &mut desktop,
        &options(),
        Vec::new(),
        &|| false,
        &mut marks,
    );
    assert!(matches!(outcome, ReplayOutcome::Completed { steps: 1, .. }));
    // Killed at the first mark, the step is interrupted (nothing known);
    // at the second, done unchecked, its three inputs all made.
    assert_eq!(
        marks.seen,
        [
            ("begun", 0, StepStatus::Interrupted),
            ("made", 3, StepStatus::Unverified),
            ("done", 3, StepStatus::Verified),
        ]
    );
    let dry = ReplayOptions {
        dry_run: true,
        ..options()
    };
    let mut desktop = ScriptedDesktop::new();
    marks.seen.clear();
    marks.injections = desktop.injections.clone();
    let mut strategy = Checked::one(Ok(Verification::Unverified("no check".into())));
    run_replay_into(
        &mut strategy,
        &mut desktop,
        &dry,
        Vec::new(),
        &|| false,
        &mut marks,
    );
    assert_eq!(marks.seen, [("done", 0, StepStatus::DryRun)]);
}
