//! Scripted ports for tests: a desktop (frames and windows it is given, and a
//! log of everything injected into it, including what is still held down) on
//! a virtual clock that only its waits advance, and a model that answers
//! from a script.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use reprise_models::{A11yTree, Rect, ScreenGeometry, WindowState};

use crate::desktop::TreeRequest;
use crate::{Action, Desktop, DesktopError, Frame};

#[derive(Debug)]
pub struct ScriptedDesktop {
    pub frame: Frame,
    pub window: Option<WindowState>,
    /// Every action injected, in order.
    pub injected: Vec<Action>,
    /// The outcomes of the next injections, one each: `Some(error)` fails,
    /// `None` succeeds; once empty, every injection succeeds.
    pub inject_failures: VecDeque<Option<String>>,
    /// Keys and buttons pressed and not yet released.
    pub held: Vec<Action>,
    pub release_all_calls: usize,
    /// The accessibility trees to answer with, one per request, oldest
    /// first; the last one answers every request after it. Empty: none.
    pub trees: VecDeque<A11yTree>,
    /// Every tree request, in order.
    pub tree_requests: Vec<TreeRequest>,
    /// The popups showing, the topmost first.
    pub popups: Vec<Rect>,
    /// What hit-testing names at a point, one answer per request, oldest
    /// first; the last one answers every request after it. Empty: nothing.
    pub elements_at: VecDeque<Option<reprise_models::ElementIdentity>>,
    /// Every point hit-tested, in order.
    pub hit_tests: Vec<(f64, f64)>,
    /// How long one hit-test takes on the virtual clock.
    pub hit_test_takes: Duration,
    /// Frames that replace `frame` once the clock reaches their time (since
    /// the desktop was made), in time order: a screen that changes by itself.
    pub timeline: Vec<(Duration, Frame)>,
    /// The window active once a mouse button is released, where the press
    /// changes it (`Some(None)`: the press closed the last window).
    pub window_on_release: Option<Option<WindowState>>,
    /// The window active once this many keys went down (`Some(None)` in
    /// it: none is): another window taking the focus while a step types.
    pub window_after_keys: Option<(usize, Option<WindowState>)>,
    /// The frame shown once a mouse button is released, where the press
    /// changes the screen (a window gone shows what was behind it).
    pub frame_on_release: Option<Frame>,
    /// The ids of the windows the window manager lists; `None`: the
    /// desktop cannot say.
    pub listed: Option<Vec<u64>>,
    /// How many actions were injected, shared: what a test's abort reads
    /// while the replay holds the desktop.
    pub injections: std::rc::Rc<std::cell::Cell<usize>>,
    /// The virtual clock: when the desktop was made, and how long its waits
    /// have slept since. Nothing else advances it.
    epoch: Instant,
    pub slept: Duration,
}

impl ScriptedDesktop {
    /// `strategy` replayed on this desktop until its end or until `abort`
    /// says so: the outcome, and the record of each step.
    pub fn replay(
        &mut self,
        strategy: &mut dyn crate::ReplayStrategy,
        options: &crate::ReplayOptions,
        abort: &dyn Fn() -> bool,
    ) -> (crate::ReplayOutcome, Vec<crate::StepRecord>) {
        let mut records = Vec::new();
        let outcome = crate::run_replay(strategy, self, options, abort, &mut |record, _| {
            records.push(record.clone())
        });
        (outcome, records)
    }

    /// Whether nothing but pointer moves and wheel turns was injected.
    pub fn only_moved_and_scrolled(&self) -> bool {
        let moved =
            |action: &Action| matches!(action, Action::MoveTo { .. } | Action::Scroll { .. });
        self.injected.iter().all(moved)
    }

    /// A blank 200x100 screen with no window.
    pub fn new() -> Self {
        let screen = ScreenGeometry {
            rect: Rect::new(0, 0, 200, 100),
            scale_factor: 1.0,
        };
        ScriptedDesktop {
            frame: Frame {
                image: image::RgbaImage::new(200, 100),
                screen,
            },
            window: None,
            injected: Vec::new(),
            inject_failures: VecDeque::new(),
            held: Vec::new(),
            release_all_calls: 0,
            trees: VecDeque::new(),
            tree_requests: Vec::new(),
            popups: Vec::new(),
            elements_at: VecDeque::new(),
            hit_tests: Vec::new(),
            hit_test_takes: Duration::ZERO,
            timeline: Vec::new(),
            window_on_release: None,
            window_after_keys: None,
            frame_on_release: None,
            listed: None,
            injections: Default::default(),
            epoch: Instant::now(),
            slept: Duration::ZERO,
        }
    }

    pub fn with_window(mut self, title: &str, rect: Rect) -> Self {
        self.window = Some(WindowState {
            id: 0,
            timestamp: 0.0,
            title: title.into(),
            app_class: "Test".into(),
            pid: None,
            window_id: 1,
            rect,
            a11y: None,
            command: None,
        });
        self
    }
}

impl Default for ScriptedDesktop {
    fn default() -> Self {
        ScriptedDesktop::new()
    }
}

impl Desktop for ScriptedDesktop {
    fn screenshot(&mut self) -> Result<Frame, DesktopError> {
        let slept = self.slept;
        Ok(self
            .timeline
            .iter()
            .rev()
            .find(|(at, _)| *at <= slept)
            .map_or(&self.frame, |(_, frame)| frame)
            .clone())
    }

    fn active_window(&mut self) -> Result<Option<WindowState>, DesktopError> {
        Ok(self.window.clone())
    }

    fn inject(&mut self, action: &Action) -> Result<(), DesktopError> {
        if let Some(Some(error)) = self.inject_failures.pop_front() {
            return Err(DesktopError::inject(error));
        }
        self.injections.set(self.injections.get() + 1);
        match action {
            Action::ButtonDown { button } => self.held.push(Action::ButtonUp { button: *button }),
            Action::ButtonUp { button } => {
                self.held
                    .retain(|held| held != &Action::ButtonUp { button: *button });
                if let Some(window) = self.window_on_release.take() {
                    self.window = window;
                }
                if let Some(frame) = self.frame_on_release.take() {
                    self.frame = frame;
                }
            }
            Action::KeyDown { key } => {
                self.held.push(Action::KeyUp { key: key.clone() });
                if let Some((keys, window)) = self.window_after_keys.take() {
                    match keys.checked_sub(1) {
                        Some(0) | None => self.window = window,
                        Some(left) => self.window_after_keys = Some((left, window)),
                    }
                }
            }
            Action::KeyUp { key } => self
                .held
                .retain(|held| held != &Action::KeyUp { key: key.clone() }),
            _ => {}
        }
        self.injected.push(action.clone());
        Ok(())
    }

    fn popups(&mut self) -> Result<Vec<Rect>, DesktopError> {
        Ok(self.popups.clone())
    }

    fn element_at(
        &mut self,
        point: (f64, f64),
    ) -> Result<Option<reprise_models::ElementIdentity>, DesktopError> {
        self.hit_tests.push(point);
        self.slept += self.hit_test_takes;
        Ok(if self.elements_at.len() > 1 {
            self.elements_at.pop_front().flatten()
        } else {
            self.elements_at.front().cloned().flatten()
        })
    }

    fn window_listed(&mut self, window_id: u64) -> Result<Option<bool>, DesktopError> {
        Ok(self.listed.as_ref().map(|ids| ids.contains(&window_id)))
    }

    fn accessibility_tree(
        &mut self,
        request: &TreeRequest,
    ) -> Result<Option<A11yTree>, DesktopError> {
        self.tree_requests.push(request.clone());
        Ok(if self.trees.len() > 1 {
            self.trees.pop_front()
        } else {
            self.trees.front().cloned()
        })
    }

    fn release_all(&mut self) -> Result<(), DesktopError> {
        self.release_all_calls += 1;
        self.held.clear();
        Ok(())
    }

    fn now(&self) -> Instant {
        self.epoch + self.slept
    }

    fn sleep(&mut self, duration: Duration) {
        self.slept += duration;
    }
}

/// A model port that answers from a script, in order, and keeps every
/// request it was sent.
#[derive(Debug)]
pub struct ScriptedLlm {
    pub answers: VecDeque<String>,
    pub requests: Vec<crate::llm::LlmRequest>,
    pub max_images: usize,
}

impl ScriptedLlm {
    pub fn new(answers: &[&str], max_images: usize) -> Self {
        ScriptedLlm {
            answers: answers.iter().map(|answer| (*answer).to_owned()).collect(),
            requests: Vec::new(),
            max_images,
        }
    }
}

impl crate::llm::Llm for ScriptedLlm {
    fn complete(
        &mut self,
        request: &crate::llm::LlmRequest,
    ) -> Result<crate::llm::LlmReply, crate::llm::LlmError> {
        self.requests.push(request.clone());
        let text = self.answers.pop_front().unwrap_or_default();
        Ok(crate::llm::LlmReply {
            text,
            provider: "scripted".into(),
            model: "m".into(),
            usage: crate::llm::Usage::default(),
            cached: false,
            latency_ms: 0,
        })
    }

    fn max_images_per_request(&self) -> usize {
        self.max_images
    }
}
