//! Input made as the replay loop makes it: actions in order with their
//! pauses, the stop (`abort`) checked between them and in every wait.

use std::time::Duration;

use super::{AttemptError, attempt_error};
use crate::action::KeySpec;
use crate::{Action, Desktop, DesktopError};

/// Injects `actions` in order (a pause is waited), checking `abort` before
/// each; false if aborted.
pub(super) fn make(
    desktop: &mut dyn Desktop,
    actions: &[Action],
    abort: &dyn Fn() -> bool,
) -> Result<bool, InputError> {
    make_with(desktop, actions, abort, None, None)
}

/// Why a step's input stopped before its end.
#[derive(Debug)]
pub(super) enum InputError {
    Desktop(DesktopError),
    /// Another window became active while the step's keys were typed:
    /// `typed` of `keys` were made, the rest were not.
    WindowChanged {
        typed: usize,
        keys: usize,
        now: Option<String>,
    },
}

impl From<DesktopError> for InputError {
    fn from(err: DesktopError) -> Self {
        InputError::Desktop(err)
    }
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::Desktop(err) => err.fmt(f),
            InputError::WindowChanged { typed, keys, now } => {
                let now = now.as_deref().unwrap_or("no window (its window closed)");
                let typed = match typed {
                    0 => format!("none of its {keys} keys was typed"),
                    typed => format!("{typed} of its {keys} keys were typed, the rest were not"),
                };
                write!(
                    f,
                    "{now} became active before the step's keys were all typed: {typed}, and none went to it"
                )
            }
        }
    }
}

/// A step's input that stopped as an attempt's failure: a desktop's as
/// [`attempt_error`]'s; another window become active under its keys
/// halts the run (what was typed cannot be taken back, nor typed twice).
pub(super) fn input_error(err: InputError) -> AttemptError {
    match err {
        InputError::Desktop(err) => attempt_error(err),
        err @ InputError::WindowChanged { .. } => AttemptError::Fatal(err.to_string()),
    }
}

/// A key or text that types into the field it is in and cannot move the
/// focus to another window: a character, Shift for its capital, a space, an
/// edit, a text of one line.
fn keeps_window(action: &Action) -> bool {
    match action {
        Action::TypeText { text } => !text.contains(['\n', '\r', '\t']),
        Action::KeyDown { key } => match key {
            KeySpec::Char(_) => true,
            KeySpec::Named(name) => matches!(
                name.as_str(),
                "shift" | "shift_l" | "shift_r" | "caps_lock" | "space" | "backspace" | "delete"
            ),
            KeySpec::Code(_) => false,
        },
        _ => false,
    }
}

/// Whether `action` types: a key or a text.
fn types(action: &Action) -> bool {
    matches!(
        action,
        Action::KeyDown { .. }
            | Action::TypeText { .. }
            | Action::TypeSecret { .. }
            | Action::TypeHidden { .. }
    )
}

/// Injects a step's `actions` in order, as [`make`] does, except that once
/// its input has begun (anything beyond a pointer move) and what is left of
/// it takes at most [`FINISH_WITHIN`] of recorded pauses, the rest is made
/// whatever `abort` says: a typed word, a click or a chord is made whole or
/// not at all, so a stop never leaves half a word typed and a resumed run
/// can take the step as done. A longer hold (a slow drag) still stops at
/// once. `begun` says whether input was made.
///
/// Its keys go only to `window` (the window the step was decided in, where
/// one was active): before each key or text, up to the first key or press
/// that may move the focus (Enter, Tab, a chord, a button), the active
/// window is read, and where another is active the input stops there.
pub(super) fn make_input(
    desktop: &mut dyn Desktop,
    actions: &[Action],
    abort: &dyn Fn() -> bool,
    (begun, window): (&mut bool, Option<u64>),
) -> Result<bool, InputError> {
    let guard = window.map(|window| Guard {
        window,
        typed: 0,
        keys: actions.iter().filter(|action| types(action)).count(),
    });
    make_with(desktop, actions, abort, Some(begun), guard)
}

/// Keeps a step's keys to its window.
struct Guard {
    window: u64,
    /// The keys and texts made so far, and in all.
    typed: usize,
    keys: usize,
}

impl Guard {
    /// Before `action` (a key or a text): the step's window must still be
    /// the active one. `false` once the action may move the focus: nothing
    /// after it is guarded.
    fn check(&mut self, desktop: &mut dyn Desktop, action: &Action) -> Result<bool, InputError> {
        if desktop.active_window_id()? != Some(self.window) {
            let now = desktop.active_window()?;
            return Err(InputError::WindowChanged {
                typed: self.typed,
                keys: self.keys,
                now: now.map(|now| format!("{:?} ({})", now.title, now.app_class)),
            });
        }
        self.typed += 1;
        Ok(keeps_window(action))
    }
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
    mut guard: Option<Guard>,
) -> Result<bool, InputError> {
    let never = || false;
    for (idx, action) in actions.iter().enumerate() {
        let committed = begun.as_deref().copied().unwrap_or(false)
            && pauses(&actions[idx..]) <= FINISH_WITHIN.as_secs_f64();
        let abort: &dyn Fn() -> bool = if committed { &never } else { abort };
        if abort() {
            return Ok(false);
        }
        if types(action)
            && let Some(keeping) = guard.as_mut()
            && !keeping.check(desktop, action)?
        {
            guard = None;
        }
        // A press may give the focus to another window: the keys after it
        // are not held to the one before.
        if matches!(action, Action::ButtonDown { .. }) {
            guard = None;
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
