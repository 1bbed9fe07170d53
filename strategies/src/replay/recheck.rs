//! The re-check just before a press: once the pointer is at the point, what
//! the platform names there must be the element the step was decided on
//! (`Step::expect`), or the press waits for a new decision.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::input::make_input;
use super::{AttemptError, attempt_error, input_error, read_tree};
use crate::action::{Action, Step};
use crate::desktop::Desktop;
use crate::strategy::ReplayStrategy;

/// The re-check of a step's element just before its press: how the element
/// at the point was read, and the seconds from the start of that read to
/// the press.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recheck {
    pub by: RecheckBy,
    pub seconds: f64,
}

/// How the element at a point was read just before a press.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecheckBy {
    /// The platform's accessibility hit-testing.
    HitTest,
    /// The window's accessibility tree read again (its toolkit's
    /// hit-testing named nothing there).
    Tree,
}

impl RecheckBy {
    pub fn words(self) -> &'static str {
        match self {
            RecheckBy::HitTest => "hit-testing",
            RecheckBy::Tree => "the window's tree read again",
        }
    }
}

/// The most of a step's recorded pause its re-check may be given.
pub const MAX_EXPECTED_RECHECK: Duration = Duration::from_millis(250);

/// How long `step`'s re-check is expected to take, to be taken out of its
/// recorded pause so that the press, not the check, keeps the recorded
/// pace: the last re-check's time in this run (at most
/// [`MAX_EXPECTED_RECHECK`]), where `step` will be re-checked; else none.
/// The check itself stays just before the press.
pub(super) fn expected_time(history: &[super::StepRecord], step: &Step) -> Duration {
    let pressed = step
        .actions
        .iter()
        .any(|action| matches!(action, Action::ButtonDown { .. }));
    if step.expect.is_none() || step.target.is_none() || !pressed {
        return Duration::ZERO;
    }
    history
        .iter()
        .rev()
        .find_map(|record| record.recheck.as_ref())
        .map_or(Duration::ZERO, |last| {
            Duration::try_from_secs_f64(last.seconds)
                .unwrap_or_default()
                .min(MAX_EXPECTED_RECHECK)
        })
}

/// Makes `step`'s actions, the press (its first button down) only after the
/// re-check of its element, where the strategy found one, its keys only
/// into `window` (the one it was decided in); false if aborted. The
/// check's time, from its start to the press, is kept in `record`.
pub(super) fn make_rechecked(
    strategy: &mut dyn ReplayStrategy,
    desktop: &mut dyn Desktop,
    (step_idx, step, window): (usize, &Step, Option<u64>),
    record: &mut super::StepRecord,
    abort: &dyn Fn() -> bool,
) -> Result<bool, AttemptError> {
    let press = step
        .actions
        .iter()
        .position(|action| matches!(action, Action::ButtonDown { .. }))
        .unwrap_or(step.actions.len());
    let (before_press, from_press) = step.actions.split_at(press);
    let mut begun = false;
    if !make_input(desktop, before_press, abort, (&mut begun, window)).map_err(input_error)? {
        return Ok(false);
    }
    if let (Some(expected), Some(point), false) = (&step.expect, step.target, from_press.is_empty())
    {
        let started = desktop.now();
        // Where the live tree's boxes were moved to agree with the pixels,
        // the tree names the element at the point moved back.
        let (dx, dy) = step.tree_offset.unwrap_or_default();
        let point = (point.0 - f64::from(dx), point.1 - f64::from(dy));
        let by = recheck(strategy, desktop, step_idx, expected, point)?;
        record.recheck = Some(Recheck {
            by,
            seconds: desktop.now().duration_since(started).as_secs_f64(),
        });
    }
    make_input(desktop, from_press, abort, (&mut begun, window)).map_err(input_error)
}

/// Whether the element at `point` now is `expected`, the element the step
/// was decided on: as the platform's hit-testing names it, else (it names
/// nothing there) as the window's tree read again does. A failed attempt,
/// naming both, where another element is there or none is.
fn recheck(
    strategy: &mut dyn ReplayStrategy,
    desktop: &mut dyn Desktop,
    step_idx: usize,
    expected: &reprise_models::ElementIdentity,
    point: (f64, f64),
) -> Result<RecheckBy, AttemptError> {
    if let Some(live) = desktop.element_at(point).map_err(attempt_error)? {
        return crate::identity::same_element_at(expected, &live, point)
            .map(|()| RecheckBy::HitTest)
            .map_err(AttemptError::Retry);
    }
    let live = read_tree(strategy, desktop, step_idx).and_then(|tree| {
        let idx = reprise_models::element::deepest_at(&tree, point)?;
        reprise_models::identity_of(&tree, &tree.app, idx)
    });
    match live {
        Some(live) => crate::identity::same_element_at(expected, &live, point)
            .map(|()| RecheckBy::Tree)
            .map_err(AttemptError::Retry),
        None => Err(AttemptError::Retry(format!(
            "just before the press, nothing in the window's accessibility tree is at ({:.0}, {:.0}), where {} was",
            point.0,
            point.1,
            expected.label()
        ))),
    }
}
