//! Input made as the replay loop makes it: actions in order with their
//! pauses, the stop (`abort`) checked between them and in every wait.

use std::time::Duration;

use crate::{Action, Desktop, DesktopError};

/// Injects `actions` in order (a pause is waited), checking `abort` before
/// each; false if aborted.
pub(super) fn make(
    desktop: &mut dyn Desktop,
    actions: &[Action],
    abort: &dyn Fn() -> bool,
) -> Result<bool, DesktopError> {
    make_with(desktop, actions, abort, None)
}

/// Injects a step's `actions` in order, as [`make`] does, except that once
/// its input has begun (anything beyond a pointer move) and what is left of
/// it takes at most [`FINISH_WITHIN`] of recorded pauses, the rest is made
/// whatever `abort` says: a typed word, a click or a chord is made whole or
/// not at all, so a stop never leaves half a word typed and a resumed run
/// can take the step as done. A longer hold (a slow drag) still stops at
/// once. `begun` says whether input was made.
pub(super) fn make_input(
    desktop: &mut dyn Desktop,
    actions: &[Action],
    abort: &dyn Fn() -> bool,
    begun: &mut bool,
) -> Result<bool, DesktopError> {
    make_with(desktop, actions, abort, Some(begun))
}

/// How long a begun step's input may take to finish after a stop was asked
/// for: a step whose remaining recorded pauses are longer stops at once.
pub const FINISH_WITHIN: Duration = Duration::from_secs(1);

/// The recorded pauses among `actions`, in seconds.
fn pauses(actions: &[Action]) -> f64 {
    actions
        .iter()
        .map(|action| match action {
            Action::Pause { seconds } => seconds.max(0.0),
            _ => 0.0,
        })
        .sum()
}

/// [`make`], or [`make_input`] where `begun` is given.
fn make_with(
    desktop: &mut dyn Desktop,
    actions: &[Action],
    abort: &dyn Fn() -> bool,
    mut begun: Option<&mut bool>,
) -> Result<bool, DesktopError> {
    let never = || false;
    for (idx, action) in actions.iter().enumerate() {
        let committed = begun.as_deref().copied().unwrap_or(false)
            && pauses(&actions[idx..]) <= FINISH_WITHIN.as_secs_f64();
        let abort: &dyn Fn() -> bool = if committed { &never } else { abort };
        if abort() {
            return Ok(false);
        }
        match action {
            Action::Pause { seconds } => {
                if !wait(desktop, Duration::from_secs_f64(seconds.max(0.0)), abort) {
                    return Ok(false);
                }
            }
            Action::MoveTo { .. } => desktop.inject(action)?,
            action => {
                if let Some(begun) = begun.as_deref_mut() {
                    *begun = true;
                }
                desktop.inject(action)?;
            }
        }
    }
    Ok(true)
}

/// Waits in slices of at most 10 ms, checking `abort`; false if aborted.
pub(super) fn wait(
    desktop: &mut dyn Desktop,
    duration: Duration,
    abort: &dyn Fn() -> bool,
) -> bool {
    let deadline = desktop.now() + duration;
    loop {
        if abort() {
            return false;
        }
        let left = deadline.saturating_duration_since(desktop.now());
        if left.is_zero() {
            return true;
        }
        desktop.sleep(left.min(Duration::from_millis(10)));
    }
}
