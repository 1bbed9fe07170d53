//! The strategy trait: given what the screen shows now and what was replayed
//! so far, decide the next step.

use reprise_models::{A11yTree, Rect, WindowState};

use crate::desktop::TreeRequest;
use crate::{Frame, Step, StepRecord};

/// What a strategy sees before each step.
#[derive(Debug)]
pub struct Observation<'a> {
    /// The screen now (after it settled).
    pub frame: &'a Frame,
    /// The active window now, if any.
    pub window: Option<&'a WindowState>,
    /// The live accessibility tree the strategy asked for with
    /// [`ReplayStrategy::wants_tree`], when the window exposes one.
    pub tree: Option<&'a A11yTree>,
    /// The popups showing now (menus, combo box lists), the topmost first,
    /// when the strategy asked with [`ReplayStrategy::wants_popups`]; else
    /// empty.
    pub popups: &'a [Rect],
    /// The index of the step about to be decided.
    pub step_idx: usize,
    /// The attempt at it, from 1 (a look again while the step said it is
    /// not ready yet is the same attempt).
    pub attempt: u32,
    /// How long this attempt has been looking again because the strategy
    /// said the screen was not ready yet (zero at its first look).
    pub looked: std::time::Duration,
    /// What was replayed so far.
    pub history: &'a [StepRecord],
}

/// What a step's effect is judged on: the screen before it and after it
/// settled, the window it was decided in, the window active after it, and
/// the window's accessibility tree after it (when the strategy asked for
/// one and the window has one).
#[derive(Debug)]
pub struct Effect<'a> {
    pub before: &'a Frame,
    pub after: &'a Frame,
    pub window: Option<&'a WindowState>,
    /// The active window after the step (once it is the one
    /// [`ReplayStrategy::window_after`] expects, or that wait passed).
    pub window_after: Option<&'a WindowState>,
    pub tree: Option<&'a A11yTree>,
    /// The popups showing after it (menus, combo box lists), the topmost
    /// first.
    pub popups_after: &'a [Rect],
    /// The window the step was decided in is gone from the window
    /// manager's list after it (closed, not merely behind another); false
    /// where it is listed or the platform cannot say.
    pub window_closed: bool,
}

/// A strategy's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Step(Step),
    /// First this, then decide the same step again: what brings the step's
    /// target within reach without acting on anything (a turn of the wheel
    /// over the list it is scrolled out of). The loop makes at most
    /// [`MAX_PREPARATIONS`](crate::replay::MAX_PREPARATIONS) of them per
    /// attempt.
    Prepare(Step),
    /// Nothing is left to do.
    Done,
}

/// Why a strategy could not decide.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StrategyError {
    /// This step cannot be decided now; the loop may retry it (bounded).
    #[error("{0}")]
    Retryable(String),
    /// The replay cannot go on.
    #[error("{0}")]
    Fatal(String),
    /// The model that decides each step failed (no answer, or answers that
    /// stayed unusable after feedback): the replay cannot go on, and the
    /// fault is the provider's, not the screen's.
    #[error("{0}")]
    Model(String),
    /// The screen is not ready for this step yet (the window its keys go to
    /// has not come up): the loop looks again, without spending an attempt,
    /// until `wait` has passed since the step first said so; then it is an
    /// ordinary failed attempt.
    #[error("{reason}")]
    NotYet {
        reason: String,
        wait: std::time::Duration,
    },
}

/// The longest the loop waits, after a step, for the window the recording
/// shows after it ([`ReplayStrategy::window_after`]): a dialog closes a
/// moment after the key that closes it, once the application did its work.
pub const WINDOW_AFTER_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether `live` is the window `recorded` was: the same application, and
/// the same title but for a leading `*` (an editor's unsaved mark).
pub fn is_same_window(recorded: &WindowState, live: &WindowState) -> bool {
    use reprise_models::element::unmarked_title;
    live.app_class == recorded.app_class
        && unmarked_title(&live.title) == unmarked_title(&recorded.title)
}

/// Whether two window states are the same window, not merely one of the
/// same title: its X window and its process (a window id is given again to
/// the next client once one exits).
pub fn same_instance(one: &WindowState, other: &WindowState) -> bool {
    one.window_id == other.window_id && one.pid == other.pid
}

/// A replay strategy (OpenAdapt's `BaseReplayStrategy`).
pub trait ReplayStrategy {
    /// The strategy's name, as given to `--strategy`.
    fn name(&self) -> &'static str;
    /// Decides the next step. Called again for the same step after a failed
    /// attempt, with the failure in `history`.
    fn decide(&mut self, observation: &Observation<'_>) -> Result<Decision, StrategyError>;

    /// Whether the strategy knows, without a look at the screen, that it
    /// has no step `step_idx` (every recorded step is done): the loop then
    /// ends at once, not after waiting for the screen to settle. `false`
    /// where only a look can tell (a model judges when the task is done).
    fn finished(&self, step_idx: usize) -> bool {
        let _ = step_idx;
        false
    }

    /// The window whose accessibility tree step `step_idx` needs; the loop
    /// reads it and passes it in the [`Observation`].
    fn wants_tree(&self, step_idx: usize) -> Option<TreeRequest> {
        let _ = step_idx;
        None
    }

    /// Whether step `step_idx` needs the popups showing (a press in a menu
    /// found by its pixels); the loop lists them in the [`Observation`].
    fn wants_popups(&self, step_idx: usize) -> bool {
        let _ = step_idx;
        false
    }

    /// What step `step_idx` was after, as recorded (and, after a failed
    /// attempt, the closest the strategy saw): the loop keeps it with the
    /// step for the report.
    fn sought(&self, step_idx: usize) -> Option<crate::Sought> {
        let _ = step_idx;
        None
    }

    /// Whether the loop should check each step's effect with [`Self::verify`]
    /// (it costs a wait for the screen to settle after every step). A step
    /// that is not checked is recorded as unverified, never as verified.
    fn verifies(&self) -> bool {
        false
    }

    /// Whether the recording shows the window step `step_idx` was made in
    /// giving way after it (to another, or to none): the loop then waits,
    /// bounded, for it to give way before the effect is checked.
    fn window_gives_way(&self, step_idx: usize) -> bool {
        let _ = step_idx;
        false
    }

    /// Whether step `step_idx`'s effect is proven once the window it was
    /// decided in closes (its press is known to close it): the loop then
    /// stops waiting for the screen to settle as soon as the window is gone.
    fn proven_by_close(&self, step_idx: usize) -> bool {
        let _ = step_idx;
        false
    }

    /// The box on the screen of the element step `step_idx` pressed, where
    /// the strategy found it in the application's tree and reads the
    /// step's effect there: its own look after the press (pressed,
    /// hovered, focused, animating back) is the toolkit's, and the wait
    /// for the screen to settle after the step leaves it out.
    fn pressed_box(&self, step_idx: usize) -> Option<reprise_models::Rect> {
        let _ = step_idx;
        None
    }

    /// Step `step_idx` failed every attempt: where the strategy goes on
    /// elsewhere (a retry block tried again from its start), how, in
    /// words; `None`: the failure ends the replay.
    fn recover(&mut self, step_idx: usize) -> Option<String> {
        let _ = step_idx;
        None
    }

    /// The recording's last step is not the replay's last (a program goes
    /// on after it, or runs it again): the window the recording ended with
    /// is not expected after it.
    fn open_end(&mut self) {}

    /// The window the recording shows active after step `step_idx`, when
    /// the strategy's check needs it (the end of the task): the loop waits
    /// for it, bounded by [`WINDOW_AFTER_WAIT`], before the check.
    fn window_after(&self, step_idx: usize) -> Option<&WindowState> {
        let _ = step_idx;
        None
    }

    /// Where step `step_idx` was checked in deciding it (an instruction: a
    /// wait, an assertion, a read), how: the loop then checks nothing more.
    fn checked(&self, step_idx: usize) -> Option<Evidence> {
        let _ = step_idx;
        None
    }

    /// Checks the effect of step `step_idx`: verified (with the evidence),
    /// unverified (nothing the recording allows to check, and why), or
    /// missed (the recorded effect did not come).
    fn verify(&mut self, step_idx: usize, effect: &Effect<'_>) -> Result<Verification, Missed> {
        let _ = (step_idx, effect);
        Ok(Verification::Unverified(
            "this strategy does not check a step's effect".into(),
        ))
    }
}

/// What checking a step's effect found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verification {
    /// The effect the recording shows came: how it was seen.
    Verified(Evidence),
    /// Nothing could be checked: why.
    Unverified(String),
}

/// How a step's effect was seen, in words and of which kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    pub kind: EvidenceKind,
    pub words: String,
}

/// What a step's verification rests on, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceKind {
    /// The application's own state, read from its accessibility tree (a
    /// field's text, a selection, the focus).
    State,
    /// The windows changed as the recording's did: a window gave way to
    /// the one the recording shows next, or a popup opened or closed.
    Window,
    /// Nothing the application exposes was expected to change (the
    /// person's own press changed nothing there), and the element at the
    /// point was re-checked to be the one identified just before the press.
    Landed,
    /// The pixels of the target's region, in a window that exposes no
    /// accessibility tree (nothing better can be read).
    Pixels,
    /// The pixels changed where the application exposes a tree that said
    /// nothing of the step: weak evidence, which a run cannot rest on.
    Weak,
    /// The step had no effect to check but its own (a pointer move).
    Move,
    /// A decision of the recording's steps (which block runs, a loop's
    /// round), made on what the application showed or the values read.
    Program,
}

impl EvidenceKind {
    /// One word for reports and `--json`.
    pub fn word(self) -> &'static str {
        match self {
            EvidenceKind::State => "state",
            EvidenceKind::Window => "window",
            EvidenceKind::Landed => "landed",
            EvidenceKind::Pixels => "pixels",
            EvidenceKind::Weak => "weak",
            EvidenceKind::Move => "move",
            EvidenceKind::Program => "program",
        }
    }

    /// Whether a step verified so is proven: all but weak evidence.
    pub fn proves(self) -> bool {
        self != EvidenceKind::Weak
    }
}

impl Evidence {
    pub fn new(kind: EvidenceKind, words: impl Into<String>) -> Evidence {
        Evidence {
            kind,
            words: words.into(),
        }
    }
}

/// The effect the recording shows did not come after a step.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Missed {
    pub reason: String,
    /// Whether the loop may try the step again: true where the step found
    /// its target afresh (trying again acts on what is there now), false
    /// where it would only repeat the same blind action.
    pub retry: bool,
}
