//! The desktop port: what the replay loop needs from a live desktop.

use reprise_models::{A11yTree, Rect, ScreenGeometry, WindowIdentity, WindowState};

use crate::Action;

/// A captured frame of the whole screen.
#[derive(Debug, Clone)]
pub struct Frame {
    pub image: image::RgbaImage,
    pub screen: ScreenGeometry,
}

/// What a desktop's failure came from: the platform's own error, kept whole
/// (shared, so that a step's error can be kept and reported).
pub type Cause = std::sync::Arc<dyn std::error::Error + Send + Sync>;

/// Why the desktop could not do what was asked.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DesktopError {
    #[error("capture the screen: {0}")]
    Capture(#[source] Cause),
    #[error("query the active window: {0}")]
    Window(#[source] Cause),
    #[error("inject input: {0}")]
    Inject(#[source] Cause),
    /// The display itself is gone (its connection was lost): nothing more
    /// can be done on it, and no attempt is tried again.
    #[error("the display's connection was lost ({0})")]
    Gone(String),
}

fn cause(err: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Cause {
    Cause::from(err.into())
}

impl DesktopError {
    /// The screen could not be captured, because of `err`.
    pub fn capture(err: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> DesktopError {
        DesktopError::Capture(cause(err))
    }

    /// The active window (or a window's tree) could not be read.
    pub fn window(err: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> DesktopError {
        DesktopError::Window(cause(err))
    }

    /// Input could not be injected.
    pub fn inject(err: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> DesktopError {
        DesktopError::Inject(cause(err))
    }
}

/// Which window's accessibility tree a strategy needs for its next step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRequest {
    /// The accessible application's name.
    pub app: String,
    /// The window, as its tree names it.
    pub window: WindowIdentity,
    /// Read the rows of a long list beyond what shows of it too (bounded,
    /// and slower): asked once the target was not among what shows.
    pub whole_lists: bool,
}

/// A live desktop (or a scripted one in tests).
pub trait Desktop {
    fn screenshot(&mut self) -> Result<Frame, DesktopError>;
    fn active_window(&mut self) -> Result<Option<WindowState>, DesktopError>;
    /// The id of the active window alone (asked before each key a step
    /// types, so cheaper where the platform can be).
    fn active_window_id(&mut self) -> Result<Option<u64>, DesktopError> {
        Ok(self.active_window()?.map(|window| window.window_id))
    }
    /// Injects one action. Pauses are handled by the loop, never passed here.
    fn inject(&mut self, action: &Action) -> Result<(), DesktopError>;
    /// Releases every key and button this desktop pressed and has not released.
    fn release_all(&mut self) -> Result<(), DesktopError>;
    /// The live accessibility tree of the window `request` names, read within
    /// a bound; `None` where no such window exposes one (or the platform has
    /// no accessibility reader).
    fn accessibility_tree(
        &mut self,
        request: &TreeRequest,
    ) -> Result<Option<A11yTree>, DesktopError> {
        let _ = request;
        Ok(None)
    }
    /// The element at `point` (logical screen coordinates) now, as the
    /// platform's accessibility hit-testing names it, with its box on the
    /// screen; `None` where it names nothing there (or the platform has no
    /// accessibility reader). The replay loop asks it just before a press.
    fn element_at(
        &mut self,
        point: (f64, f64),
    ) -> Result<Option<reprise_models::ElementIdentity>, DesktopError> {
        let _ = point;
        Ok(None)
    }
    /// The boxes of the popups showing now (windows the window manager does
    /// not manage: menus, combo box lists, tooltips), the topmost first;
    /// none where the platform cannot say.
    fn popups(&mut self) -> Result<Vec<Rect>, DesktopError> {
        Ok(Vec::new())
    }
    /// Whether the window manager still lists the window `window_id` (one
    /// that closed is not); `None` where the platform cannot say.
    fn window_listed(&mut self, window_id: u64) -> Result<Option<bool>, DesktopError> {
        let _ = window_id;
        Ok(None)
    }
    /// The desktop's time: every wait and bound of the replay loop is
    /// measured on it (a scripted desktop's is virtual).
    fn now(&self) -> std::time::Instant {
        std::time::Instant::now()
    }
    /// Waits; a scripted desktop advances its clock instead.
    fn sleep(&mut self, duration: std::time::Duration) {
        std::thread::sleep(duration);
    }
}
