//! X11 backend: the active window's data via EWMH over x11rb.

use reprise_models::{DoubleClickSettings, Rect};
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{Atom, AtomEnum, ConnectionExt as _, Window};
use x11rb::rust_connection::RustConnection;

use super::{ActiveWindow, PlatformError, UnderPointer};

pub fn platform_name() -> &'static str {
    "linux-x11"
}

/// The double-click settings of the desktop's settings daemon (XSETTINGS
/// `Net/DoubleClickTime` in ms and `Net/DoubleClickDistance` in pixels), each
/// falling back to 0.5 s and 5 px when no daemon runs or it does not say.
pub fn double_click_settings() -> DoubleClickSettings {
    let fallback = DoubleClickSettings::default();
    let settings = read_xsettings().unwrap_or_else(|err| {
        tracing::debug!("no XSETTINGS, the double-click fallback applies: {err}");
        Vec::new()
    });
    let int = |name: &str| {
        settings.iter().find_map(|(key, value)| match value {
            super::xsettings::Value::Int(n) if key == name && *n > 0 => Some(f64::from(*n)),
            _ => None,
        })
    };
    DoubleClickSettings {
        interval_seconds: int("Net/DoubleClickTime")
            .map_or(fallback.interval_seconds, |ms| ms / 1000.0),
        distance_pixels: int("Net/DoubleClickDistance").unwrap_or(fallback.distance_pixels),
    }
}

/// The settings published by the owner of `_XSETTINGS_S<screen>`.
fn read_xsettings() -> Result<Vec<(String, super::xsettings::Value)>, PlatformError> {
    let (conn, screen_num) =
        x11rb::connect(None).map_err(|err| PlatformError::Connect(err.to_string()))?;
    let selection = intern(&conn, format!("_XSETTINGS_S{screen_num}").as_bytes())?;
    let owner = conn
        .get_selection_owner(selection)
        .map_err(query_err)?
        .reply()
        .map_err(query_err)?
        .owner;
    if owner == x11rb::NONE {
        return Err(query_err("no settings daemon owns the XSETTINGS selection"));
    }
    let property = intern(&conn, b"_XSETTINGS_SETTINGS")?;
    let reply = conn
        .get_property(false, owner, property, property, 0, 1 << 16)
        .map_err(query_err)?
        .reply()
        .map_err(query_err)?;
    super::xsettings::parse(&reply.value).map_err(query_err)
}

/// The atom of this name, created if the server has none yet.
fn intern(conn: &RustConnection, name: &[u8]) -> Result<Atom, PlatformError> {
    Ok(conn
        .intern_atom(false, name)
        .map_err(query_err)?
        .reply()
        .map_err(query_err)?
        .atom)
}

struct Atoms {
    net_active_window: Atom,
    net_wm_name: Atom,
    utf8_string: Atom,
    net_wm_pid: Atom,
    net_client_list: Atom,
}

/// A connection kept open for repeated queries of the active window
/// (about 1 ms each).
pub struct WindowProbe {
    conn: RustConnection,
    root: Window,
    atoms: Atoms,
}

reprise_models::debug_showing!(WindowProbe, root);

pub(super) fn query_err(err: impl std::fmt::Display) -> PlatformError {
    PlatformError::Query(err.to_string())
}

impl WindowProbe {
    /// Connects to the display named by `DISPLAY`.
    pub fn connect() -> Result<WindowProbe, PlatformError> {
        let (conn, screen_num) =
            x11rb::connect(None).map_err(|err| PlatformError::Connect(err.to_string()))?;
        let root = conn.setup().roots[screen_num].root;
        let atoms = Atoms {
            net_active_window: intern(&conn, b"_NET_ACTIVE_WINDOW")?,
            net_wm_name: intern(&conn, b"_NET_WM_NAME")?,
            utf8_string: intern(&conn, b"UTF8_STRING")?,
            net_wm_pid: intern(&conn, b"_NET_WM_PID")?,
            net_client_list: intern(&conn, b"_NET_CLIENT_LIST")?,
        };
        Ok(WindowProbe { conn, root, atoms })
    }

    fn property(
        &self,
        window: Window,
        property: Atom,
        kind: Atom,
    ) -> Result<Vec<u8>, PlatformError> {
        let reply = self
            .conn
            .get_property(false, window, property, kind, 0, 1 << 16)
            .map_err(query_err)?
            .reply()
            .map_err(query_err)?;
        Ok(reply.value)
    }

    /// The focused top-level window, or `None` when nothing is focused.
    pub fn active_window(&mut self) -> Result<Option<ActiveWindow>, PlatformError> {
        let Some(window) = self.named_active()? else {
            return Ok(None);
        };
        match self.describe(window) {
            Ok(window) => Ok(Some(window)),
            // `_NET_ACTIVE_WINDOW` may still name a window that just closed
            // (a dialog the last step dismissed): that is no active window,
            // not a failure.
            Err(_) if !self.exists(window) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// The focused top-level window's id alone (two requests), or `None`
    /// when nothing is focused or the window named just closed.
    pub fn active_window_id(&mut self) -> Result<Option<u64>, PlatformError> {
        Ok(self
            .named_active()?
            .filter(|&window| self.exists(window))
            .map(u64::from))
    }

    /// The window `_NET_ACTIVE_WINDOW` names, where it names one.
    fn named_active(&self) -> Result<Option<Window>, PlatformError> {
        let value = self.property(
            self.root,
            self.atoms.net_active_window,
            AtomEnum::WINDOW.into(),
        )?;
        let Some(bytes) = value.get(..4) else {
            return Ok(None);
        };
        let window = u32::from_ne_bytes(bytes.try_into().expect("four bytes"));
        Ok((window != 0).then_some(window))
    }

    /// Whether the window still exists on the server.
    fn exists(&self, window: Window) -> bool {
        self.conn
            .get_geometry(window)
            .ok()
            .is_some_and(|cookie| cookie.reply().is_ok())
    }

    fn query_pointer(&self) -> Result<x11rb::protocol::xproto::QueryPointerReply, PlatformError> {
        self.conn
            .query_pointer(self.root)
            .map_err(query_err)?
            .reply()
            .map_err(query_err)
    }

    /// The modifiers and mouse buttons held down on the display now,
    /// whoever pressed them (the core pointer's state mask).
    pub fn held_input(&self) -> Result<Vec<super::HeldInput>, PlatformError> {
        use super::HeldInput;
        use reprise_models::MouseButton;
        let mask = u16::from(self.query_pointer()?.mask);
        Ok([
            (1 << 0, HeldInput::Shift),
            (1 << 2, HeldInput::Ctrl),
            (1 << 3, HeldInput::Alt),
            (1 << 6, HeldInput::Super),
            (1 << 7, HeldInput::AltGr),
            (1 << 8, HeldInput::Button(MouseButton::Left)),
            (1 << 9, HeldInput::Button(MouseButton::Middle)),
            (1 << 10, HeldInput::Button(MouseButton::Right)),
        ]
        .into_iter()
        .filter(|(bit, _)| mask & bit != 0)
        .map(|(_, held)| held)
        .collect())
    }

    /// The pointer's position in root coordinates.
    pub fn pointer_position(&self) -> Result<(f64, f64), PlatformError> {
        let reply = self.query_pointer()?;
        Ok((f64::from(reply.root_x), f64::from(reply.root_y)))
    }

    /// The top-level window under the pointer, found down the X server's
    /// stacking order from the root (so an override-redirect popup menu
    /// counts): the first window on the way down that names its process, or
    /// `None` when none does.
    pub fn window_at_pointer(&self) -> Result<Option<ActiveWindow>, PlatformError> {
        match self.top_level_at_pointer()? {
            Some(top) => self.client_in(top),
            None => Ok(None),
        }
    }

    /// The root's child under the pointer (a window manager's frame, or an
    /// override-redirect window itself): one round trip.
    pub fn top_level_at_pointer(&self) -> Result<Option<u64>, PlatformError> {
        let reply = self.query_pointer()?;
        Ok((reply.child != x11rb::NONE).then_some(u64::from(reply.child)))
    }

    /// The root's child under the pointer, with its box when it is a popup
    /// (override-redirect: the window manager does not manage it).
    pub fn under_pointer(&self) -> Result<Option<UnderPointer>, PlatformError> {
        let Some(window) = self.top_level_at_pointer()? else {
            return Ok(None);
        };
        let popup = u32::try_from(window)
            .ok()
            .and_then(|w| self.showing_box(w, true));
        Ok(Some(UnderPointer { window, popup }))
    }

    /// The box of `window`, a root's child showing on the screen, not parked
    /// off it (GTK's 1×1 at (-100, -100)); with `popups_only`, an
    /// override-redirect one. `None` otherwise, or when it is gone.
    fn showing_box(&self, window: Window, popups_only: bool) -> Option<Rect> {
        let attributes = self.conn.get_window_attributes(window).ok()?.reply().ok()?;
        if attributes.map_state != x11rb::protocol::xproto::MapState::VIEWABLE
            || (popups_only && !attributes.override_redirect)
        {
            return None;
        }
        let geometry = self.conn.get_geometry(window).ok()?.reply().ok()?;
        let shown = Rect::new(
            i32::from(geometry.x) + i32::from(geometry.border_width),
            i32::from(geometry.y) + i32::from(geometry.border_width),
            u32::from(geometry.width),
            u32::from(geometry.height),
        );
        (shown.right() > 0 && shown.bottom() > 0).then_some(shown)
    }

    /// The boxes of the root's showing children (with `popups_only`, of
    /// the popups among them), the topmost first; at most 256 are looked at.
    fn showing_top_levels(&self, popups_only: bool) -> Result<Vec<Rect>, PlatformError> {
        let tree = self
            .conn
            .query_tree(self.root)
            .map_err(query_err)?
            .reply()
            .map_err(query_err)?;
        // The top of the stacking order last: read it first.
        Ok(tree
            .children
            .iter()
            .rev()
            .take(256)
            .filter_map(|&window| self.showing_box(window, popups_only))
            .collect())
    }

    /// The popups showing now (override-redirect windows: menus, combo box
    /// lists, tooltips), the topmost first.
    pub fn popups(&self) -> Result<Vec<Rect>, PlatformError> {
        self.showing_top_levels(true)
    }

    /// The client window in the root's child `top` (itself, or a level or
    /// two down in a window manager's frame): the first that names its
    /// process; `None` when none does or `top` is gone.
    pub fn client_in(&self, top: u64) -> Result<Option<ActiveWindow>, PlatformError> {
        let Ok(top) = u32::try_from(top) else {
            return Ok(None);
        };
        if !self.exists(top) {
            return Ok(None);
        }
        // The window manager's frame holds the client a level or two down.
        let mut frontier = vec![top];
        for _ in 0..3 {
            let mut next = Vec::new();
            for window in frontier {
                let pid =
                    self.property(window, self.atoms.net_wm_pid, AtomEnum::CARDINAL.into())?;
                if pid.len() >= 4 {
                    return self.describe(window).map(Some);
                }
                let tree = self
                    .conn
                    .query_tree(window)
                    .map_err(query_err)?
                    .reply()
                    .map_err(query_err)?;
                next.extend(tree.children);
            }
            next.truncate(64);
            frontier = next;
        }
        Ok(None)
    }

    /// The boxes of the root's mapped children, managed or not (a popup
    /// menu's override-redirect window is one), the topmost first; at most
    /// 256 are looked at.
    pub fn viewable_top_levels(&self) -> Result<Vec<Rect>, PlatformError> {
        self.showing_top_levels(false)
    }

    /// The windows the window manager lists (`_NET_CLIENT_LIST`); one that
    /// closes meanwhile is left out.
    pub fn client_windows(&self) -> Result<Vec<ActiveWindow>, PlatformError> {
        Ok(self
            .client_ids()?
            .into_iter()
            .filter_map(|window| self.describe(window).ok())
            .collect())
    }

    /// The ids of the windows the window manager lists
    /// (`_NET_CLIENT_LIST`), read in one request.
    pub fn client_ids(&self) -> Result<Vec<u32>, PlatformError> {
        let value = self.property(
            self.root,
            self.atoms.net_client_list,
            AtomEnum::WINDOW.into(),
        )?;
        Ok(value
            .chunks_exact(4)
            .map(|bytes| u32::from_ne_bytes(bytes.try_into().expect("four bytes")))
            .collect())
    }

    fn describe(&self, window: Window) -> Result<ActiveWindow, PlatformError> {
        let utf8_title = self.property(window, self.atoms.net_wm_name, self.atoms.utf8_string)?;
        let title = if utf8_title.is_empty() {
            // Legacy applications (xterm, xcalc) set only WM_NAME, as a
            // Latin-1 STRING; any type is accepted and decoded as Latin-1.
            let legacy = self.property(window, AtomEnum::WM_NAME.into(), AtomEnum::ANY.into())?;
            legacy.iter().map(|&byte| char::from(byte)).collect()
        } else {
            String::from_utf8_lossy(&utf8_title).into_owned()
        };
        let class_bytes =
            self.property(window, AtomEnum::WM_CLASS.into(), AtomEnum::STRING.into())?;
        // WM_CLASS is "instance\0Class\0"; the class names the application.
        let mut parts = class_bytes
            .split(|&byte| byte == 0)
            .filter(|part| !part.is_empty());
        let instance = parts
            .next()
            .map(|part| String::from_utf8_lossy(part).into_owned());
        let app_class = parts
            .next()
            .map(|part| String::from_utf8_lossy(part).into_owned())
            .or(instance);
        let pid_bytes = self.property(window, self.atoms.net_wm_pid, AtomEnum::CARDINAL.into())?;
        let pid = pid_bytes
            .get(..4)
            .map(|bytes| u32::from_ne_bytes(bytes.try_into().expect("four bytes")));
        let geometry = self
            .conn
            .get_geometry(window)
            .map_err(query_err)?
            .reply()
            .map_err(query_err)?;
        // The client area's origin in root coordinates: GetGeometry is relative
        // to the parent (the window manager's frame), so translate instead.
        let origin = self
            .conn
            .translate_coordinates(window, self.root, 0, 0)
            .map_err(query_err)?
            .reply()
            .map_err(query_err)?;
        let popup = self
            .conn
            .get_window_attributes(window)
            .ok()
            .and_then(|cookie| cookie.reply().ok())
            .is_some_and(|attributes| attributes.override_redirect);
        Ok(ActiveWindow {
            popup,
            title,
            app_class: app_class.unwrap_or_default(),
            pid,
            window_id: u64::from(window),
            rect: Rect::new(
                i32::from(origin.dst_x),
                i32::from(origin.dst_y),
                u32::from(geometry.width),
                u32::from(geometry.height),
            ),
        })
    }
}

#[path = "x11/capture.rs"]
mod capture;
#[path = "x11/click.rs"]
mod click;
pub use capture::{Drawn, RootCapture};
