//! The backend for platforms without a dedicated one (macOS, Windows): the
//! active window from xcap's window list.

use reprise_models::{DoubleClickSettings, Rect};

use super::{ActiveWindow, PlatformError};

pub fn platform_name() -> &'static str {
    if cfg!(target_os = "macos") {
        "macos"
    } else {
        "windows"
    }
}

pub fn double_click_settings() -> DoubleClickSettings {
    DoubleClickSettings::default()
}

#[derive(Debug)]
pub struct WindowProbe;

impl WindowProbe {
    pub fn connect() -> Result<WindowProbe, PlatformError> {
        Ok(WindowProbe)
    }

    /// Not available here: the recorder learns the position from the first move.
    pub fn pointer_position(&self) -> Result<(f64, f64), PlatformError> {
        Err(PlatformError::Query(
            "the pointer position is not available on this platform".into(),
        ))
    }

    /// Held modifiers are not read on this platform.
    pub fn held_input(&self) -> Result<Vec<super::HeldInput>, PlatformError> {
        Ok(Vec::new())
    }

    /// Every window the platform lists.
    /// No popups are told apart from other windows here.
    pub fn popups(&self) -> Result<Vec<Rect>, PlatformError> {
        Ok(Vec::new())
    }

    pub fn client_windows(&self) -> Result<Vec<ActiveWindow>, PlatformError> {
        xcap::Window::all()
            .map_err(xcap_error)?
            .iter()
            .map(listed)
            .collect()
    }

    /// The ids of the windows the platform lists.
    pub fn client_ids(&self) -> Result<Vec<u32>, PlatformError> {
        xcap::Window::all()
            .map_err(xcap_error)?
            .iter()
            .map(|window| window.id().map_err(xcap_error))
            .collect()
    }

    pub fn active_window_id(&mut self) -> Result<Option<u64>, PlatformError> {
        Ok(self.active_window()?.map(|window| window.window_id))
    }

    pub fn active_window(&mut self) -> Result<Option<ActiveWindow>, PlatformError> {
        for window in xcap::Window::all().map_err(xcap_error)? {
            if window.is_focused().unwrap_or(false) {
                return listed(&window).map(Some);
            }
        }
        Ok(None)
    }
}

fn xcap_error(err: xcap::XCapError) -> PlatformError {
    PlatformError::Query(err.to_string())
}

/// A window as xcap lists it.
fn listed(window: &xcap::Window) -> Result<ActiveWindow, PlatformError> {
    Ok(ActiveWindow {
        title: window.title().unwrap_or_default(),
        app_class: window.app_name().unwrap_or_default(),
        pid: window.pid().ok(),
        window_id: u64::from(window.id().map_err(xcap_error)?),
        rect: Rect::new(
            window.x().map_err(xcap_error)?,
            window.y().map_err(xcap_error)?,
            window.width().map_err(xcap_error)?,
            window.height().map_err(xcap_error)?,
        ),
        popup: false,
    })
}

/// No raw capture here: xcap is the platform's own path. No value of this
/// type exists.
#[derive(Debug)]
pub enum RootCapture {}

/// What was drawn since the last look: this platform cannot say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drawn {
    Nothing,
    Inside(Rect),
    Unknown,
}

impl RootCapture {
    /// Always `None`: xcap captures.
    pub fn desktop() -> Result<Option<RootCapture>, PlatformError> {
        Ok(None)
    }

    /// Never called: no value exists.
    pub fn monitors(&self) -> &[reprise_models::Monitor] {
        match *self {}
    }

    /// Never called: no value exists.
    pub fn size(&self) -> (u32, u32) {
        match *self {}
    }

    /// Never called: no value exists.
    pub fn capture(&self) -> Result<image::RgbaImage, PlatformError> {
        match *self {}
    }

    /// Never called: no value exists.
    pub fn drawn_since_last_look(&self) -> Result<Drawn, PlatformError> {
        match *self {}
    }

    /// Never called: no value exists.
    pub fn capture_rect(&self, _rect: Rect) -> Result<image::RgbaImage, PlatformError> {
        match *self {}
    }

    /// Never called: no value exists.
    pub fn rect(&self) -> Rect {
        match *self {}
    }
}
