//! The visual strategy (OpenAdapt's `VisualReplayStrategy`, made robust): the
//! target of every recorded mouse action is fingerprinted in its own
//! screenshot (its segment's description, crop and place among look-alikes);
//! at replay the live window is segmented (through the cache), described, and
//! the target found again and clicked inside its mask. Offline by default:
//! zero model calls. Preparation is in `prepare`, the effect checks in
//! `verify`, the analysis of a window image in [`crate::analysis`].

pub mod instructions;
pub mod matching;
mod prepare;
mod verify;

pub use prepare::prepare;

use image::RgbaImage;
use reprise_models::element::ELEMENT_VERSION;
use reprise_models::{ActionEvent, ElementIdentity, WindowState};

use crate::analysis::{Vision, VisualStats, window_image};
use crate::describe::Description;
use crate::desktop::TreeRequest;
use crate::identity::{StructuralAnswer, locate};
use crate::strategy::{Effect, Missed, Verification};
use crate::tree::{actions_for, end_time};
use crate::vision::PixelRect;
use crate::vision::scale::ImagePoint;
use crate::{Action, Decision, FoundBy, Observation, ReplayStrategy, Step, StrategyError};
use matching::{MatchOptions, find_target};
use prepare::{image_rect_on_screen, is_pointer_target};
use verify::{verify_keys, verify_selection};

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
    /// A point relative to the window's origin (moves, scrolls over nothing).
    WindowRelative { dx: f64, dy: f64, area: Area },
    /// Not a pointer action, or no window was known: replayed as recorded.
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
    /// the next step's differ), so the replay checks that it changes too.
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
        .find_map(|event| event.element.as_ref())
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
        .find_map(|event| event.element.as_ref())
        .filter(|element| element.version <= ELEMENT_VERSION)
}

/// The least time a step's keys wait for the window they were typed into.
pub const KEYS_WINDOW_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// What a step did in its window, for [`window_check`]'s messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InWindow {
    Keys,
    Press,
}

/// Whether a step recorded in `recorded` (the window active then) may act
/// with `live` active: the same application, and the same title but for a
/// leading `*` (an editor's unsaved mark). Keys typed into another window,
/// or a press searched for in one, are wrong actions.
pub fn window_check(
    recorded: &WindowState,
    live: Option<&WindowState>,
    what: InWindow,
) -> Result<(), WrongWindow> {
    match live {
        Some(live) if crate::strategy::is_same_window(recorded, live) => Ok(()),
        _ => Err(WrongWindow {
            what,
            recorded: (recorded.title.clone(), recorded.app_class.clone()),
            live: live.map(|live| (live.title.clone(), live.app_class.clone())),
        }),
    }
}

/// The window a step needs is not the active one: the recorded window's
/// title and class, and the live one's (`None`: no window is active).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrongWindow {
    pub what: InWindow,
    pub recorded: (String, String),
    pub live: Option<(String, String)>,
}

impl std::fmt::Display for WrongWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (did, now) = match self.what {
            InWindow::Keys => ("the keys were typed into", "has the focus"),
            InWindow::Press => ("the press was made in", "is the active window"),
        };
        let (title, class) = &self.recorded;
        match &self.live {
            Some((live_title, live_class)) => write!(
                f,
                "{did} {title:?} ({class}), but {live_title:?} ({live_class}) {now}"
            ),
            None => write!(f, "{did} {title:?} ({class}), but no window {now}"),
        }
    }
}

impl std::error::Error for WrongWindow {}

/// The visual strategy.
pub struct VisualStrategy {
    steps: Vec<PlannedStep>,
    vision: Vision,
    speed: f64,
    options: MatchOptions,
    /// The live target of the last decided step, on the screen.
    last_target: Option<reprise_models::Rect>,
    /// The recorded element and press of the last step the structural rung
    /// decided, for its effect check.
    last_structural: Option<(ElementIdentity, (f64, f64))>,
    /// The closest elements the last attempt saw when it did not find its
    /// target (for the report).
    last_candidates: Vec<crate::Candidate>,
    rungs: Rungs,
    /// The recording's window states, for where its keys went.
    windows: Vec<WindowState>,
    /// The turns of the wheel made to bring a step's target into view.
    scrolling: Option<Scrolling>,
    /// The step whose target was not among what the long lists of its
    /// window show: its trees are read with those lists whole.
    whole_lists: Option<usize>,
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

impl std::fmt::Debug for VisualStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VisualStrategy")
            .field("steps", &self.steps.len())
            .finish_non_exhaustive()
    }
}

impl VisualStrategy {
    pub fn new(steps: Vec<PlannedStep>, vision: Vision, speed: f64) -> Self {
        VisualStrategy {
            steps,
            vision,
            speed: if speed > 0.0 { speed } else { 1.0 },
            options: MatchOptions::default(),
            last_target: None,
            last_structural: None,
            last_candidates: Vec::new(),
            rungs: Rungs::default(),
            windows: Vec::new(),
            scrolling: None,
            whole_lists: None,
        }
    }

    /// The recording's window states: keys are then sent only to the
    /// window they were typed into.
    pub fn with_windows(mut self, windows: &[WindowState]) -> Self {
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
        let mut actions = actions_for(tree, |seconds| {
            Action::pause(std::time::Duration::from_secs_f64(
                (seconds / speed).max(0.0),
            ))
        });
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
            whole_lists: self.whole_lists == Some(step_idx),
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
            description,
            recorded_frame: tree.screenshot_id,
            recorded_point: tree.position(),
            recorded_rect: element.map(|element| element.rect),
            candidates: self.last_candidates.clone(),
        })
    }

    fn window_after(&self, step_idx: usize) -> Option<&WindowState> {
        (step_idx + 1 == self.steps.len())
            .then(|| self.windows.last())
            .flatten()
    }

    fn decide(&mut self, observation: &Observation<'_>) -> Result<Decision, StrategyError> {
        self.decide_step(observation)
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
    fn verify_step(
        &mut self,
        step_idx: usize,
        effect: &Effect<'_>,
    ) -> Result<Verification, Missed> {
        let missed = |reason: String| Missed {
            reason,
            retry: true,
        };
        let Some(step) = self.steps.get(step_idx) else {
            return Ok(Verification::Unverified(
                "the recording has no such step".into(),
            ));
        };
        if let (Some(tree), Some(element)) = (effect.tree, self.last_structural.as_ref())
            && let Some(selected) = verify_selection(element, tree)?
        {
            return Ok(Verification::Verified(selected));
        }
        if step.tree.name.is_key()
            && let Some(tree) = effect.tree
            && let Some(checked) = verify::verify_value(step, tree)
        {
            return checked.map(Verification::Verified);
        }
        if step.tree.name.is_key()
            && let Some(window) = effect.window
        {
            return verify_keys(step, window, effect);
        }
        let (Some(window), Some(target)) = (effect.window, self.last_target) else {
            return Ok(Verification::Unverified(
                "the step has no target on the screen to watch".into(),
            ));
        };
        if !step.expects_change {
            return Ok(Verification::Unverified(
                "the recording shows no change at the target to expect".into(),
            ));
        }
        if crate::settle::same_region(effect.before, effect.after, Some(target)) {
            return Err(missed(format!(
                "nothing changed at the target in {:?} after {}, though the recording shows a change",
                window.title,
                step.tree.label()
            )));
        }
        Ok(Verification::Verified(
            "the target changed on the screen, as it did in the recording".into(),
        ))
    }

    /// The next turn of the wheel for step `idx`, whose target (now at
    /// `rect`) is scrolled out of `view`: in words and as the wheel's
    /// notches (dx, dy). How far a notch moves it is learned from the last
    /// turn; a turn that did not move it, or more than
    /// [`MAX_TURNS`](crate::scroll::MAX_TURNS), is refused.
    fn turn_toward(
        &mut self,
        idx: usize,
        rect: reprise_models::Rect,
        view: reprise_models::Rect,
        label: &str,
        place: &str,
    ) -> Result<(String, (i32, i32)), StrategyError> {
        use crate::scroll::{MAX_TURNS, PerNotch, shortfall, turn_words};
        let mut scrolling = match self.scrolling.take() {
            Some(scrolling) if scrolling.step_idx == idx => scrolling,
            _ => Scrolling {
                step_idx: idx,
                turns: 0,
                per_notch: PerNotch::guess(rect),
                last: None,
            },
        };
        if scrolling.turns >= MAX_TURNS {
            self.scrolling = Some(scrolling);
            return Err(StrategyError::Retryable(format!(
                "{label} is still scrolled out of view ({place}) after {MAX_TURNS} turns of the wheel: refusing to press where it does not show"
            )));
        }
        if let Some((before, notches)) = scrolling.last {
            let moved = (rect.left - before.left, rect.top - before.top);
            scrolling.per_notch = scrolling
                .per_notch
                .learned(notches, moved)
                .map_err(|_| {
                    StrategyError::Retryable(format!(
                        "{label} is scrolled out of view ({place}), and turning the wheel {} over the view did not move it: refusing to press where it does not show",
                        turn_words(notches)
                    ))
                })?;
        }
        let notches = scrolling.per_notch.notches(shortfall(rect, view));
        if notches == (0, 0) {
            return Err(StrategyError::Retryable(format!(
                "{label} is scrolled out of view ({place}), and no turn of the wheel brings it in: refusing to press where it does not show"
            )));
        }
        scrolling.turns += 1;
        scrolling.last = Some((rect, notches));
        self.scrolling = Some(scrolling);
        Ok((turn_words(notches), notches))
    }

    fn decide_step(&mut self, observation: &Observation<'_>) -> Result<Decision, StrategyError> {
        let idx = observation.step_idx;
        self.last_target = None;
        self.last_structural = None;
        self.last_candidates.clear();
        let Some(planned) = self.steps.get(idx).cloned() else {
            return Ok(Decision::Done);
        };
        let tree = &planned.tree;
        let delay = match idx.checked_sub(1).and_then(|prev| self.steps.get(prev)) {
            Some(previous) => ((tree.timestamp - end_time(&previous.tree)) / self.speed).max(0.0),
            None => 0.0,
        };
        let step = |target: Option<(f64, f64)>,
                    found_by: FoundBy,
                    reason: String,
                    actions: Vec<Action>| {
            Decision::Step(Step {
                source_event: Some(idx),
                label: tree.label(),
                target,
                reason,
                actions,
                delay_before_seconds: delay,
                found_by: Some(found_by),
            })
        };
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
            // one, is the way to a wrong action: wait (bounded by the pause
            // the person took, at least KEYS_WINDOW_WAIT) for the recorded
            // one to be active (a dialog that opens slowly).
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
        if self.rungs.structural
            && let Some(element) = pressed_element(tree)
        {
            let press = tree.position().unwrap_or((
                f64::from(element.rect.left) + f64::from(element.rect.width) / 2.0,
                f64::from(element.rect.top) + f64::from(element.rect.height) / 2.0,
            ));
            let answer = observation.tree.map_or(StructuralAnswer::NoAnswer, |live| {
                locate(element, press, live)
            });
            match answer {
                StructuralAnswer::Found {
                    rect,
                    point,
                    evidence,
                    ..
                } => {
                    let agreed = self
                        .cross_check(tree, &planned.target, observation, (rect, &evidence))
                        .map_err(StrategyError::Fatal)?;
                    self.last_target = Some(rect);
                    self.last_structural = Some((element.clone(), press));
                    let actions = self.actions_at(tree, Some(point));
                    return Ok(step(
                        Some(point),
                        FoundBy::Structural,
                        format!(
                            "found {evidence} by its identity in the accessibility tree{agreed}"
                        ),
                        actions,
                    ));
                }
                StructuralAnswer::Ambiguous { candidates } => {
                    return Err(StrategyError::Fatal(format!(
                        "refused: {} elements fit {} and nothing tells them apart: {}",
                        candidates.len(),
                        element.label(),
                        candidates.join("; ")
                    )));
                }
                StructuralAnswer::OutOfView {
                    rect,
                    view,
                    wheel,
                    label,
                    place,
                    ..
                } => {
                    let turn = self.turn_toward(idx, rect, view, &label, &place)?;
                    return Ok(Decision::Prepare(Step {
                        source_event: Some(idx),
                        label: format!("scroll {} at ({:.0}, {:.0})", turn.0, wheel.0, wheel.1),
                        target: Some(wheel),
                        reason: format!(
                            "{label} is in the window's accessibility tree but scrolled out of view ({place}): turning the wheel {} over the view to bring it in",
                            turn.0
                        ),
                        actions: vec![
                            Action::MoveTo {
                                x: wheel.0,
                                y: wheel.1,
                            },
                            Action::Scroll {
                                dx: turn.1.0,
                                dy: turn.1.1,
                            },
                        ],
                        delay_before_seconds: 0.0,
                        found_by: Some(FoundBy::Structural),
                    }));
                }
                StructuralAnswer::Gone { reason } => {
                    // A long list is read as far as it shows: the next
                    // attempt reads it whole (the target may be scrolled
                    // out of its view), and refuses as gone only then.
                    let looked_everywhere = self.whole_lists == Some(idx);
                    self.whole_lists = Some(idx);
                    return Err(StrategyError::Retryable(if looked_everywhere {
                        reason
                    } else {
                        format!(
                            "{reason}; looking again with long lists read beyond what they show"
                        )
                    }));
                }
                StructuralAnswer::NoAnswer if !self.rungs.visual => {
                    return Err(StrategyError::Retryable(format!(
                        "{} exposes no usable accessibility tree for {}, and the visual rung is off",
                        element.app,
                        element.label()
                    )));
                }
                StructuralAnswer::NoAnswer => {}
            }
        }
        if !self.rungs.visual && matches!(planned.target, Target::Element { .. }) {
            return Err(StrategyError::Retryable(format!(
                "the recording names no element for {}, and the visual rung is off",
                tree.label()
            )));
        }
        match &planned.target {
            Target::AsRecorded => {
                let actions = self.actions_at(tree, None);
                Ok(step(
                    tree.position(),
                    FoundBy::AsRecorded,
                    "not aimed at an element: replayed as recorded".into(),
                    actions,
                ))
            }
            Target::WindowRelative { dx, dy, area } => {
                let (rect, name) = area_now(*area, observation)?;
                let point = (f64::from(rect.left) + dx, f64::from(rect.top) + dy);
                let actions = self.actions_at(tree, Some(point));
                Ok(step(
                    Some(point),
                    FoundBy::WindowPlace,
                    format!("the same place in {name} as recorded"),
                    actions,
                ))
            }
            Target::Element { .. } => {
                let sought = planned.target.sought().expect("an element target");
                let found = self.find_in_pixels(tree, &sought, observation)?;
                self.last_target = Some(found.rect);
                let actions = self.actions_at(tree, Some(found.point));
                Ok(step(Some(found.point), found.by, found.reason, actions))
            }
        }
    }

    /// The recorded target found in the pixels of its area now (the visual
    /// rung): its box on the screen, the point to press, and how it was
    /// found. A failed search leaves its closest candidates in
    /// `last_candidates`.
    fn find_in_pixels(
        &mut self,
        tree: &ActionEvent,
        &Sought {
            fingerprint,
            window_rect,
            press,
            area,
        }: &Sought<'_>,
        observation: &Observation<'_>,
    ) -> Result<PixelFind, StrategyError> {
        let (rect, place) = area_now(area, observation)?;
        let (image, mapping) = window_image(observation.frame, &rect)
            .ok_or_else(|| StrategyError::Retryable(format!("{place} is off the screen")))?;
        let hint = (window_rect.right() <= image.width() && window_rect.bottom() <= image.height())
            .then_some(*window_rect);
        let (segments, descriptions) = self
            .vision
            .analyse(&image, hint)
            .map_err(|err| StrategyError::Retryable(err.to_string()))?;
        let candidate = |idx: usize, score: f64, measure: &str| crate::Candidate {
            description: descriptions[idx].text.clone(),
            score,
            measure: measure.to_owned(),
            rect: Some(image_rect_on_screen(&mapping, &segments[idx].rect)),
        };
        let found = match find_target(fingerprint, &segments, &descriptions, &image, &self.options)
        {
            Ok(found) => found,
            Err(err) => {
                self.last_candidates =
                    matching::closest(fingerprint, &segments, &descriptions, &image)
                        .into_iter()
                        .map(|(idx, score, measure)| candidate(idx, score, measure))
                        .collect();
                return Err(match err {
                    matching::MatchError::NotFound(_) => StrategyError::Retryable(err.to_string()),
                    matching::MatchError::Ambiguous(_) => StrategyError::Fatal(err.to_string()),
                });
            }
        };
        // A row member is itself only in its row: the one the pixels found,
        // or among its look-alikes (its namesakes in other rows), the one
        // whose line shows the other cells of its row (its band, as
        // recorded); never the one at its place, nor a namesake alone.
        let found = match pressed_element(tree) {
            Some(element)
                if reprise_models::element::is_row_member(element.role)
                    && !element.band.is_empty() =>
            {
                let text = &descriptions[found.segment_idx].text;
                let alike: Vec<usize> = (0..segments.len())
                    .filter(|&idx| &descriptions[idx].text == text)
                    .collect();
                let in_row: Vec<usize> = alike
                    .iter()
                    .copied()
                    .filter(|&idx| band_on_line(&element.band, idx, &segments, &descriptions))
                    .collect();
                match in_row[..] {
                    [only] => matching::Found {
                        segment_idx: only,
                        how: format!(
                            "its description and its row's other cells ({}) on its line",
                            element.band.join(", ")
                        ),
                        by: FoundBy::Exact,
                    },
                    _ => {
                        return Err(StrategyError::Retryable(format!(
                            "{} of the {} elements in {place} that look like {} show the rest of its row ({}) on their line: a namesake or a place is no identity, refusing to guess",
                            in_row.len(),
                            alike.len(),
                            element.label(),
                            element.band.join(", ")
                        )));
                    }
                }
            }
            _ => found,
        };
        // The recording named the element (its accessibility tree did):
        // what the pixels found must read as that name, or it is something
        // else at a familiar place.
        if let Some(element) = pressed_element(tree)
            && let Some(name) = element.name.as_deref()
            && !crate::identity::reads_as(name, &descriptions[found.segment_idx].label)
        {
            self.last_candidates = vec![candidate(
                found.segment_idx,
                matching::text_similarity(&descriptions[found.segment_idx].label, name),
                "text",
            )];
            return Err(StrategyError::Retryable(format!(
                "the recording names the target {}, but what the pixels found for it in {place} reads {:?}: refusing to act on something else",
                element.label(),
                descriptions[found.segment_idx].label
            )));
        }
        let segment = &segments[found.segment_idx];
        let point = mapping.to_screen(press_point(segment, press));
        Ok(PixelFind {
            rect: image_rect_on_screen(&mapping, &segment.rect),
            point: (point.x, point.y),
            reason: format!(
                "found {} by {} in {place}",
                descriptions[found.segment_idx].text, found.how
            ),
            by: found.by,
        })
    }

    /// The visual rung as a cross-check of the structural one: where the
    /// pixels find the target by what it reads (its exact description, or
    /// a text no other element shares), not by its place among look-alikes
    /// or its look, in a box apart from the element the tree found, the two
    /// disagree about the element: `Err` with both named. Where the pixels
    /// find nothing sure, or agree, `Ok` with what they said. Only with a
    /// describer that runs here: a healthy structural step never calls a
    /// model.
    fn cross_check(
        &mut self,
        tree: &ActionEvent,
        target: &Target,
        observation: &Observation<'_>,
        (structural, evidence): (reprise_models::Rect, &str),
    ) -> Result<&'static str, String> {
        let Some(sought) = target.sought() else {
            return Ok("");
        };
        if !self.rungs.visual || !self.vision.describer.runs_here() {
            return Ok("");
        }
        // Where the pixels on the element's own line read as it (its name in
        // its box, its row's other cells beside it), they agree: the window
        // is not read whole.
        if let Some(element) = pressed_element(tree)
            && let Some(line) = self.read_line(&structural, sought.area, observation)
            && line_agrees(element, &structural, &line)
        {
            return Ok("; the pixels read it on its line");
        }
        let found = self.find_in_pixels(tree, &sought, observation);
        self.last_candidates.clear();
        match found {
            Ok(found) if matches!(found.by, FoundBy::Exact | FoundBy::Text) => {
                if found.rect.intersection(&structural).is_some() {
                    return Ok("; the pixels agree");
                }
                Err(format!(
                    "refused: the accessibility tree finds {evidence} at {}, but the pixels find the target elsewhere ({}, at {}): they disagree about the element",
                    place_of(&structural),
                    found.reason,
                    place_of(&found.rect)
                ))
            }
            _ => Ok(""),
        }
    }
}

impl VisualStrategy {
    /// What the pixels read on the line of `structural` (a box on the
    /// screen) across `area`: each segment's box on the screen and its text.
    /// Never through the segmentation cache (a line is no window).
    fn read_line(
        &mut self,
        structural: &reprise_models::Rect,
        area: Area,
        observation: &Observation<'_>,
    ) -> Option<Vec<(reprise_models::Rect, String)>> {
        let (across, _) = area_now(area, observation).ok()?;
        let line = reprise_models::Rect::new(
            across.left,
            structural.top - LINE_MARGIN,
            across.width,
            structural.height + 2 * LINE_MARGIN as u32,
        );
        let (image, mapping) = window_image(observation.frame, &line)?;
        let segments = self.vision.segmenter.segment(&image).ok()?;
        self.vision.stats.segmentations += 1;
        let descriptions = self.vision.describer.describe(&image, &segments).ok()?;
        self.vision.stats.describe_calls += 1;
        Some(
            segments
                .iter()
                .zip(descriptions)
                .map(|(segment, description)| {
                    (
                        image_rect_on_screen(&mapping, &segment.rect),
                        description.label,
                    )
                })
                .collect(),
        )
    }
}

/// The pixels above and below an element's box read with its line.
const LINE_MARGIN: i32 = 1;

/// Whether what the pixels read on the line of the tree's element (`line`:
/// boxes on the screen and their texts) shows that element: a text that
/// starts in its box (`structural`, or the padding left of it, half its
/// height) and reads as its name, and, for an element with a band (a row's
/// other cells, a control's label), every text of the band read on the
/// line, after the name or in another box. One text holding the whole row
/// ("maria olsen tromsø", as GTK's rows read) is enough; a text that merely
/// contains the name ("click ok to go on") is not.
fn line_agrees(
    element: &ElementIdentity,
    structural: &reprise_models::Rect,
    line: &[(reprise_models::Rect, String)],
) -> bool {
    let Some(name) = element.name.as_deref() else {
        return false;
    };
    // A row's text may start in its padding, left of the cell's box.
    let padding = (structural.height / 2) as i32;
    line.iter().enumerate().any(|(idx, (rect, text))| {
        let middle = i64::from(rect.top) + i64::from(rect.height) / 2;
        let starts_inside = (structural.left - padding..).contains(&rect.left)
            && i64::from(rect.left) < structural.right()
            && (i64::from(structural.top)..structural.bottom()).contains(&middle);
        if !starts_inside {
            return false;
        }
        if element.band.is_empty() {
            return crate::identity::reads_as(name, text);
        }
        let Some(rest) = crate::identity::rest_after(name, text) else {
            return false;
        };
        let read = std::iter::once(rest)
            .chain(
                line.iter()
                    .enumerate()
                    .filter(|(other, _)| *other != idx)
                    .map(|(_, (_, text))| text.clone()),
            )
            .collect::<Vec<_>>()
            .join(" ");
        element
            .band
            .iter()
            .all(|text| crate::identity::reads_within(text, &read))
    })
}

/// Whether every text of `band` reads, in the pixels, on the line of
/// segment `idx`: in another segment whose middle lies within its height.
fn band_on_line(
    band: &[String],
    idx: usize,
    segments: &[crate::vision::Segment],
    descriptions: &[Description],
) -> bool {
    let line = &segments[idx].rect;
    band.iter().all(|text| {
        (0..segments.len()).any(|other| {
            let rect = &segments[other].rect;
            let middle = rect.y + rect.height / 2;
            other != idx
                && (line.y..line.bottom()).contains(&middle)
                && crate::identity::reads_as(text, &descriptions[other].label)
        })
    })
}

/// A box for a person: `(left, top) width×height`.
fn place_of(rect: &reprise_models::Rect) -> String {
    format!(
        "({}, {}) {}×{}",
        rect.left, rect.top, rect.width, rect.height
    )
}

/// What the visual rung looks for: a [`Target::Element`]'s parts.
struct Sought<'a> {
    fingerprint: &'a Fingerprint,
    window_rect: &'a PixelRect,
    press: (f64, f64),
    area: Area,
}

impl Target {
    /// What the visual rung looks for, where this is an element.
    fn sought(&self) -> Option<Sought<'_>> {
        match self {
            Target::Element {
                fingerprint,
                window_rect,
                press,
                area,
            } => Some(Sought {
                fingerprint,
                window_rect,
                press: *press,
                area: *area,
            }),
            Target::WindowRelative { .. } | Target::AsRecorded => None,
        }
    }
}

/// The target as the visual rung found it.
struct PixelFind {
    rect: reprise_models::Rect,
    point: (f64, f64),
    reason: String,
    by: FoundBy,
}

/// Where to press a found segment: at the recorded share of its box when
/// that lands inside its mask, else at its click point (inside the mask).
fn press_point(segment: &crate::vision::Segment, (fx, fy): (f64, f64)) -> ImagePoint {
    let rect = segment.rect;
    let at = |origin: u32, length: u32, share: f64| {
        let offset = (share.clamp(0.0, 1.0) * f64::from(length)).floor() as u32;
        origin + offset.min(length.saturating_sub(1))
    };
    let (x, y) = (at(rect.x, rect.width, fx), at(rect.y, rect.height, fy));
    if segment.mask.get(x, y) {
        ImagePoint::centre_of(x, y)
    } else {
        let (cx, cy) = segment.click_point;
        ImagePoint::centre_of(cx, cy)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod press_tests {
    use super::*;
    use crate::vision::{Mask, Segment, SegmentKind};

    #[test]
    fn a_found_target_is_pressed_where_it_was_pressed_inside_its_mask() {
        let rect = PixelRect {
            x: 100,
            y: 40,
            width: 200,
            height: 20,
        };
        let row = Segment::full(SegmentKind::Row, rect).unwrap();
        // Near the right end of a wide row, as recorded; not its centre.
        assert_eq!(press_point(&row, (0.9, 0.5)), ImagePoint::new(280.5, 50.5));
        assert_eq!(press_point(&row, (1.0, 1.0)), ImagePoint::new(299.5, 59.5));
        // A share that falls outside the mask (here it covers only the box's
        // left end) gives the mask's own click point.
        let bits = (0..rect.area())
            .map(|idx| idx % u64::from(rect.width) < 20)
            .collect();
        let left_end = Segment::from_mask(SegmentKind::Region, Mask { rect, bits }).unwrap();
        let (cx, cy) = left_end.click_point;
        assert_eq!(
            press_point(&left_end, (0.9, 0.5)),
            ImagePoint::centre_of(cx, cy)
        );
    }
}
