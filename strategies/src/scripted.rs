//! A scripted desktop for tests: frames and windows it is given, and a log of
//! everything injected into it, including what is still held down.

use std::collections::VecDeque;

use reprise_models::{Rect, ScreenGeometry, WindowState};

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
}

impl ScriptedDesktop {
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
        Ok(self.frame.clone())
    }

    fn active_window(&mut self) -> Result<Option<WindowState>, DesktopError> {
        Ok(self.window.clone())
    }

    fn inject(&mut self, action: &Action) -> Result<(), DesktopError> {
        if let Some(Some(error)) = self.inject_failures.pop_front() {
            return Err(DesktopError::Inject(error));
        }
        match action {
            Action::ButtonDown { button } => self.held.push(Action::ButtonUp { button: *button }),
            Action::ButtonUp { button } => self
                .held
                .retain(|held| held != &Action::ButtonUp { button: *button }),
            Action::KeyDown { key } => self.held.push(Action::KeyUp { key: key.clone() }),
            Action::KeyUp { key } => self
                .held
                .retain(|held| held != &Action::KeyUp { key: key.clone() }),
            _ => {}
        }
        self.injected.push(action.clone());
        Ok(())
    }

    fn release_all(&mut self) -> Result<(), DesktopError> {
        self.release_all_calls += 1;
        self.held.clear();
        Ok(())
    }
}
