//! The desktop port: what the replay loop needs from a live desktop.

use reprise_models::{ScreenGeometry, WindowState};

use crate::Action;

/// A captured frame of the whole screen.
#[derive(Debug, Clone)]
pub struct Frame {
    pub image: image::RgbaImage,
    pub screen: ScreenGeometry,
}

/// Why the desktop could not do what was asked.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DesktopError {
    #[error("capture the screen: {0}")]
    Capture(String),
    #[error("query the active window: {0}")]
    Window(String),
    #[error("inject input: {0}")]
    Inject(String),
}

/// A live desktop (or a scripted one in tests).
pub trait Desktop {
    fn screenshot(&mut self) -> Result<Frame, DesktopError>;
    fn active_window(&mut self) -> Result<Option<WindowState>, DesktopError>;
    /// Injects one action. Pauses are handled by the loop, never passed here.
    fn inject(&mut self, action: &Action) -> Result<(), DesktopError>;
    /// Releases every key and button this desktop pressed and has not released.
    fn release_all(&mut self) -> Result<(), DesktopError>;
    /// Waits; a scripted desktop may advance a clock instead.
    fn sleep(&mut self, duration: std::time::Duration) {
        std::thread::sleep(duration);
    }
}
