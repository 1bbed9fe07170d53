//! The visual strategy (OpenAdapt's `VisualReplayStrategy`, made robust): the
//! target of every recorded mouse action is fingerprinted in its own
//! screenshot (its segment's description, crop and place among look-alikes);
//! at replay the live window is segmented (through the cache), described, and
//! the target found again and clicked inside its mask. Offline by default:
//! zero model calls. Preparation is in `prepare`, the effect checks in
//! `verify`, the analysis of a window image in [`crate::analysis`].

pub mod instructions;
mod look;
pub mod matching;
mod pixels;
mod prepare;
mod structural;
pub use structural::TWIN_MEASURE;
mod verify;
mod window_check;

pub use prepare::prepare;

use image::RgbaImage;
use reprise_models::element::ELEMENT_VERSION;
use reprise_models::{ActionEvent, ElementIdentity, WindowState};

use crate::analysis::{Vision, VisualStats, window_image};
use crate::describe::Description;
use crate::desktop::TreeRequest;
use crate::identity::{StructuralAnswer, locate};
use crate::strategy::{Effect, Missed, Verification};
use crate::tree::{actions_for, end_time, inner_pause};
use crate::vision::PixelRect;
use crate::vision::scale::ImagePoint;
use crate::{Action, Decision, FoundBy, Observation, ReplayStrategy, Step, StrategyError};
pub use look::Look;
use matching::{MatchOptions, find_target};
use prepare::{image_rect_on_screen, is_pointer_target};
use structural::band_on_line;
#[cfg(test)]
use structural::line_agrees;
pub use window_check::{InWindow, WrongWindow, window_check};

/// What identifies a recorded target.
#[derive(Debug, Clone, PartialEq)]
pub struct Fingerprint {
    pub description: Description,
    /// The target's pixels in the recorded window.
    pub crop: RgbaImage,
    /// Its place among the segments with the same description, in reading order.
    pub nth: usize,
    pub n_same: usize,
}

/// Where a recorded pointer action aims.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// An element, found again by its fingerprint.
    Element {
        fingerprint: Fingerprint,
        window_rect: PixelRect,
        /// Where in it the press was, as shares of its width and height
        /// (a row pressed on its right end is pressed there again).
        press: (f64, f64),
        /// Whose pixels it is found in.
        area: Area,
    },
    /// A point relative to the window's origin (moves, scrolls over
    /// nothing, a press with nothing else to find it by).
    WindowRelative {
        dx: f64,
        dy: f64,
        area: Area,
        /// For a press: what showed around it at rest, the only thing
        /// that may let it be made at the same place again (`None`: no
        /// frame showed it, and it is not made).
        look: Option<Look>,
    },
    /// A press outside any window the recording knows (or where it knew
    /// none): made at its recorded place on the screen, only where that
    /// place looks as it did (`None`: no frame showed it, and it is not
    /// made).
    ScreenPlace { look: Option<Look> },
    /// Not a press (a key, a scroll, a move) outside any window the
    /// recording knows: replayed as recorded.
    AsRecorded,
}

/// What a recorded press is found in, and placed relative to: the active
/// window, or the popup the press was made in (a menu, a combo box's list:
/// a window of its own, over or beside the active one, that is never
/// active). A popup's own image is segmented, so its items are seen whole,
/// not cut off at the active window's edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    Window,
    Popup,
}

/// One recorded tree with its target.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedStep {
    pub tree: ActionEvent,
    pub target: Target,
    /// The recording shows the window change after this step (its frame and
    /// the next step's differ, at a press's target by more than a caret), so
    /// the replay checks that it changes too.
    pub expects_change: bool,
}

/// Which rungs of the ladder may find a target: the structural rung (the
/// element's identity in the live accessibility tree) first, then the
/// visual one (its description and look in the pixels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rungs {
    pub structural: bool,
    pub visual: bool,
}

impl Default for Rungs {
    fn default() -> Self {
        Rungs {
            structural: true,
            visual: true,
        }
    }
}

/// The element a recorded pointer press acted on, when the recording named
/// it in a form this build reads.
pub fn pressed_element(tree: &ActionEvent) -> Option<&ElementIdentity> {
    if !is_pointer_target(tree) {
        return None;
    }
    std::iter::once(tree)
        .chain(&tree.children)
        .filter(|event| event.mouse_pressed != Some(false))
        .find_map(|event| event.element.as_deref())
        .filter(|element| element.version <= ELEMENT_VERSION)
}

/// The box of the popup a recorded pointer press was made in, if it was
/// made in one.
pub fn pressed_popup(tree: &ActionEvent) -> Option<reprise_models::Rect> {
    if !is_pointer_target(tree) {
        return None;
    }
    std::iter::once(tree)
        .chain(&tree.children)
        .filter(|event| event.mouse_pressed != Some(false))
        .find_map(|event| event.popup)
}

/// For a step of keys, the element that had the focus at its first key, as
/// the recording named it.
pub fn typed_element(tree: &ActionEvent) -> Option<&ElementIdentity> {
    if !tree.name.is_key() {
        return None;
    }
    std::iter::once(tree)
        .chain(&tree.children)
        .find_map(|event| event.element.as_deref())
        .filter(|element| element.version <= ELEMENT_VERSION)
}

/// The least time a step's keys wait for the window they were typed into.
pub const KEYS_WINDOW_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The visual strategy.
pub struct VisualStrategy {
    steps: Vec<PlannedStep>,
    vision: Vision,
    speed: f64,
    options: MatchOptions,
    /// What the last decision found: one value, cleared as each decision
    /// starts, read by the effect check and the report.
    findings: Findings,
    rungs: Rungs,
    /// The recording's window states, for where its keys went.
    windows: Vec<WindowState>,
    /// The applications (their classes) whose windows the recording read
    /// a tree of (the windows are kept without their trees).
    apps_with_trees: Vec<String>,
    /// What a step's attempts learn from each other.
    attempts: Attempts,
    /// The recording's last step is not the replay's last (a program runs
    /// on after it): no window is expected after it.
    open_end: bool,
}

/// What the last decision found, for its effect check and the report.
#[derive(Debug, Default)]
struct Findings {
    /// The live target of the decided step, on the screen.
    target: Option<reprise_models::Rect>,
    /// The recorded element and press, where the structural rung decided
    /// the step (its effect is checked in the tree).
    structural: Option<(ElementIdentity, (f64, f64))>,
    /// The closest elements an attempt saw when it did not find its target.
    candidates: Vec<crate::Candidate>,
    /// The popup a press recorded in one was decided in (the topmost).
    popup: Option<reprise_models::Rect>,
    /// The states the structural rung's element had in the live tree when
    /// the step was decided.
    states_before: Option<Vec<reprise_models::ElementState>>,
    /// The structural rung's element as the live tree names it.
    live: Option<ElementIdentity>,
    /// The offset the live tree's boxes were moved by (a recorded fit).
    fitted: Option<(i32, i32)>,
}

/// What a step's attempts learn from each other.
#[derive(Debug, Default)]
struct Attempts {
    /// The turns of the wheel made to bring a step's target into view.
    scrolling: Option<Scrolling>,
    /// The step whose target was not among what the long lists of its
    /// window show: its trees are read with those lists whole.
    whole_lists: Option<usize>,
}

/// How the structural rung answered a step.
enum StructuralRung {
    /// The target, found by its identity.
    Found(Found),
    /// A preparation first: a turn of the wheel toward the target.
    Prepare(Box<Step>),
    /// No answer from the tree: the visual rung decides.
    Pass,
}

/// Where a rung found a step's target and how.
struct Found {
    /// The point to act at (`None`: as recorded).
    point: Option<(f64, f64)>,
    by: FoundBy,
    reason: String,
}

/// The turns of the wheel made for one step's target, scrolled out of its
/// view: how many, how far a notch moved it, and the last turn with where
/// the target was before it.
#[derive(Debug, Clone, Copy)]
struct Scrolling {
    step_idx: usize,
    turns: u32,
    per_notch: crate::scroll::PerNotch,
    last: Option<(reprise_models::Rect, (i32, i32))>,
}

reprise_models::debug_showing!(VisualStrategy, steps: |it| it.steps.len());

impl VisualStrategy {
    pub fn new(steps: Vec<PlannedStep>, vision: Vision, speed: f64) -> Self {
        VisualStrategy {
            steps,
            vision,
            speed: if speed > 0.0 { speed } else { 1.0 },
            options: MatchOptions::default(),
            findings: Findings::default(),
            rungs: Rungs::default(),
            windows: Vec::new(),
            apps_with_trees: Vec::new(),
            attempts: Attempts::default(),
            open_end: false,
        }
    }

    /// The recording's window states: keys are then sent only to the
    /// window they were typed into.
    pub fn with_windows(mut self, windows: &[WindowState]) -> Self {
        self.apps_with_trees = windows
            .iter()
            .filter(|window| {
                window
                    .a11y
                    .as_ref()
                    .is_some_and(|tree| tree.nodes.len() > 1)
            })
            .map(|window| window.app_class.clone())
            .collect();
        self.apps_with_trees.sort();
        self.apps_with_trees.dedup();
        self.windows = windows
            .iter()
            .map(|window| WindowState {
                a11y: None,
                ..window.clone()
            })
            .collect();
        self
    }

    /// Chooses the rungs that may find targets (both by default).
    pub fn with_rungs(mut self, rungs: Rungs) -> Self {
        self.rungs = rungs;
        self
    }

    pub fn steps(&self) -> &[PlannedStep] {
        &self.steps
    }

    /// Replaces the plan (after instructions changed it).
    pub fn set_steps(&mut self, steps: Vec<PlannedStep>) {
        self.steps = steps;
    }

    pub fn stats(&self) -> VisualStats {
        self.vision.stats
    }

    /// The tree's actions with every pointer position moved to `point`.
    fn actions_at(&self, tree: &ActionEvent, point: Option<(f64, f64)>) -> Vec<Action> {
        let speed = self.speed;
        let mut actions = actions_for(tree, |seconds| inner_pause(seconds, speed));
        if let Some((x, y)) = point {
            for action in &mut actions {
                if let Action::MoveTo { x: ax, y: ay } = action {
                    (*ax, *ay) = (x, y);
                }
            }
        }
        actions
    }
}

impl ReplayStrategy for VisualStrategy {
    fn name(&self) -> &'static str {
        "visual"
    }

    fn verifies(&self) -> bool {
        true
    }

    fn wants_tree(&self, step_idx: usize) -> Option<TreeRequest> {
        if !self.rungs.structural {
            return None;
        }
        let tree = &self.steps.get(step_idx)?.tree;
        let element = pressed_element(tree).or_else(|| typed_element(tree))?;
        Some(TreeRequest {
            app: element.app.clone(),
            window: element.window.clone(),
            whole_lists: self.attempts.whole_lists == Some(step_idx),
        })
    }

    fn wants_popups(&self, step_idx: usize) -> bool {
        self.rungs.visual
            && self.steps.get(step_idx).is_some_and(|step| {
                matches!(
                    step.target,
                    Target::Element {
                        area: Area::Popup,
                        ..
                    } | Target::WindowRelative {
                        area: Area::Popup,
                        ..
                    }
                )
            })
    }

    fn verify(&mut self, step_idx: usize, effect: &Effect<'_>) -> Result<Verification, Missed> {
        // Only the last step expects a window after it (the one the
        // recording ended with).
        match self.verify_step(step_idx, effect)? {
            Verification::Verified(evidence) => Ok(
                match final_window_differs(self.window_after(step_idx), effect.window_after) {
                    Some(differs) => Verification::Unverified(differs),
                    None => Verification::Verified(evidence),
                },
            ),
            verification => Ok(verification),
        }
    }

    fn sought(&self, step_idx: usize) -> Option<crate::Sought> {
        let planned = self.steps.get(step_idx)?;
        let tree = &planned.tree;
        // A press's element, or the field its keys were typed into.
        let element = pressed_element(tree).or_else(|| typed_element(tree));
        let description = match &planned.target {
            Target::Element { fingerprint, .. } => Some(fingerprint.description.text.clone()),
            _ => element.map(ElementIdentity::label),
        };
        Some(crate::Sought {
            action: Some(tree.label()),
            description,
            recorded_frame: tree.screenshot_id,
            recorded_point: tree.position(),
            recorded_rect: element.map(|element| element.rect),
            candidates: self.findings.candidates.clone(),
        })
    }

    fn window_gives_way(&self, step_idx: usize) -> bool {
        let Some(step) = self.steps.get(step_idx) else {
            return false;
        };
        self.recorded_windows(step, self.steps.get(step_idx + 1))
            .is_some_and(|(before, after)| !crate::strategy::is_same_window(before, after))
    }

    fn open_end(&mut self) {
        self.open_end = true;
    }

    fn proven_by_close(&self, step_idx: usize) -> bool {
        self.closing_command(step_idx).is_some()
    }

    fn pressed_box(&self, step_idx: usize) -> Option<reprise_models::Rect> {
        pressed_element(&self.steps.get(step_idx)?.tree)?;
        self.findings.structural.as_ref().and(self.findings.target)
    }

    fn window_after(&self, step_idx: usize) -> Option<&WindowState> {
        (!self.open_end && step_idx + 1 == self.steps.len())
            .then(|| self.windows.last())
            .flatten()
    }

    fn decide(&mut self, observation: &Observation<'_>) -> Result<Decision, StrategyError> {
        self.decide_step(observation)
    }

    fn finished(&self, step_idx: usize) -> bool {
        step_idx >= self.steps.len()
    }
}

/// The box a step's target is looked for in now, and its name for people:
/// the active window, or the topmost popup showing (the one the step
/// before opened). No popup yet: wait (bounded) for it, then fail.
fn area_now(
    area: Area,
    observation: &Observation<'_>,
) -> Result<(reprise_models::Rect, String), StrategyError> {
    match area {
        Area::Window => observation
            .window
            .map(|window| (window.rect, format!("{:?}", window.title)))
            .ok_or_else(|| StrategyError::Retryable("no window is active".into())),
        Area::Popup => observation
            .popups
            .first()
            .map(|rect| (*rect, "the popup".to_owned()))
            .ok_or_else(|| StrategyError::NotYet {
                reason: "the press was made in a popup (a menu or a list), and none is showing"
                    .into(),
                wait: KEYS_WINDOW_WAIT,
            }),
    }
}

/// Why the window active at the end of a replay is not the one the
/// recording ended with (another title or application: an error dialog, a
/// document saved under another name), if it is not; nothing when either is
/// unknown. The last step's own check cannot see that: an error dialog over
/// the window changes it as much as the save did.
fn final_window_differs(
    recorded: Option<&WindowState>,
    live: Option<&WindowState>,
) -> Option<String> {
    let (recorded, live) = (recorded?, live?);
    (!crate::strategy::is_same_window(recorded, live)).then(|| {
        format!(
            "the recording ended with {:?} ({}) active, the replay with {:?} ({})",
            recorded.title, recorded.app_class, live.title, live.app_class
        )
    })
}
impl VisualStrategy {
    /// The ladder for one step: where its input goes is checked, then the
    /// structural rung answers (found, a turn of the wheel first, or no
    /// answer), then the visual rung where the structural one did not.
    fn decide_step(&mut self, observation: &Observation<'_>) -> Result<Decision, StrategyError> {
        let idx = observation.step_idx;
        self.findings = Findings::default();
        let Some(planned) = self.steps.get(idx).cloned() else {
            return Ok(Decision::Done);
        };
        // The pixel rung and the cross-check read: a describer that cannot
        // (its reader did not start) refuses before any step is made.
        if self.rungs.visual {
            self.vision
                .describer
                .ready()
                .map_err(|err| StrategyError::Fatal(format!("the pixels cannot be read: {err}")))?;
        }
        let tree = &planned.tree;
        let delay = match idx.checked_sub(1).and_then(|prev| self.steps.get(prev)) {
            Some(previous) => ((tree.timestamp - end_time(&previous.tree)) / self.speed).max(0.0),
            None => 0.0,
        };
        self.check_where_input_goes(tree, observation, delay)?;
        if pressed_popup(tree).is_some() {
            self.findings.popup = observation.popups.first().copied();
        }
        let found = match self.structural_rung(idx, &planned, observation)? {
            StructuralRung::Found(found) => found,
            StructuralRung::Prepare(turn) => return Ok(Decision::Prepare(*turn)),
            StructuralRung::Pass => self.pixel_rung(&planned, observation)?,
        };
        let actions = self.actions_at(tree, found.point);
        let expect = self.expected(found.by);
        Ok(Decision::Step(Step {
            source_event: Some(idx),
            label: tree.label(),
            target: found.point,
            reason: found.reason,
            actions,
            delay_before_seconds: delay,
            found_by: Some(found.by),
            expect,
            found: self
                .findings
                .live
                .clone()
                .filter(|_| found.by == FoundBy::Structural),
            tree_offset: self.findings.fitted,
        }))
    }

    /// Input goes only where the person's went: a step waits (bounded by the
    /// pause the person took, at least [`KEYS_WINDOW_WAIT`]) for its window
    /// to be active, and keys for the field they were typed into to hold
    /// the focus.
    fn check_where_input_goes(
        &self,
        tree: &ActionEvent,
        observation: &Observation<'_>,
        delay: f64,
    ) -> Result<(), StrategyError> {
        let what = if tree.name.is_key() {
            Some(InWindow::Keys)
        } else if is_pointer_target(tree) {
            Some(InWindow::Press)
        } else {
            None
        };
        if let Some(what) = what
            && let Some(recorded) = tree
                .window_state_id
                .and_then(|id| self.windows.get(id as usize))
        {
            // Typing into another window, or looking for the target in
            // one, is the way to a wrong action: wait for the recorded one
            // to be active (a dialog that opens slowly).
            window_check(recorded, observation.window, what).map_err(|err| {
                StrategyError::NotYet {
                    reason: err.to_string(),
                    wait: KEYS_WINDOW_WAIT
                        .max(std::time::Duration::from_secs_f64((3.0 * delay).min(30.0))),
                }
            })?;
        }
        // Keys go to the element the person typed into: when the live tree
        // shows that element without the focus, and another with it, the
        // keys would land in the wrong field. Wait (the focus may still be
        // on its way), then fail: never type into another field.
        if self.rungs.structural
            && let Some(element) = typed_element(tree)
            && let Some(live) = observation.tree
            && let Some(holder) = crate::identity::focus_elsewhere(element, live)
        {
            return Err(StrategyError::NotYet {
                reason: format!(
                    "the keys are for {}, but {holder} has the focus: refusing to type into another field",
                    element.label()
                ),
                wait: KEYS_WINDOW_WAIT,
            });
        }
        Ok(())
    }
}

/// A box for a person: `(left, top) width×height`.
fn place_of(rect: &reprise_models::Rect) -> String {
    format!(
        "({}, {}) {}×{}",
        rect.left, rect.top, rect.width, rect.height
    )
}

#[cfg(test)]
mod tests;
