//! Which window a step may act in: the one it was recorded in, else the
//! step is refused with both windows named.

use reprise_models::WindowState;

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
