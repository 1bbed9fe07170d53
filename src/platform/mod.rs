//! Platform backends: the only code that calls OS APIs. Everything above works
//! with the platform-neutral data of `reprise-models`.
//!
//! - [`capture`]: screenshots of a monitor (xcap, on every platform);
//! - [`listen`]: the global input listener (rdev, on every platform) and the
//!   mapping of its keys to Reprise's platform-neutral key names;
//! - [`inject`]: input injection (enigo, on every platform);
//! - [`child`]: what a started process inherits (no credentials);
//! - [`signals`]: the stop signals (SIGINT, SIGTERM, SIGHUP) as a flag;
//! - [`terminal`]: a line read from the terminal with its echo off;
//! - `os`: the active window's data and the double-click settings, chosen
//!   per platform below ([`xsettings`] parses X11's settings daemon's data).

pub mod capture;
pub mod child;
pub mod inject;
pub mod keys;
pub mod listen;
pub mod signals;
pub mod terminal;
mod trees;
pub mod xsettings;

#[cfg(target_os = "linux")]
pub mod a11y;

#[cfg(target_os = "linux")]
#[path = "x11.rs"]
mod os;

#[cfg(not(target_os = "linux"))]
#[path = "generic.rs"]
mod os;

pub use os::{WindowProbe, double_click_settings, platform_name};
pub use trees::{WindowTreeReader, window_tree_reader, window_tree_with_values};

/// A modifier key or mouse button held down on the display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldInput {
    Shift,
    Ctrl,
    Alt,
    Super,
    AltGr,
    Button(reprise_models::MouseButton),
}

impl HeldInput {
    /// `held` in words, for a message: "Shift, the left button".
    pub fn names(held: &[HeldInput]) -> String {
        held.iter()
            .map(|input| input.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn name(self) -> &'static str {
        match self {
            HeldInput::Shift => "Shift",
            HeldInput::Ctrl => "Ctrl",
            HeldInput::Alt => "Alt",
            HeldInput::Super => "Super",
            HeldInput::AltGr => "AltGr",
            HeldInput::Button(reprise_models::MouseButton::Left) => "the left button",
            HeldInput::Button(reprise_models::MouseButton::Middle) => "the middle button",
            HeldInput::Button(reprise_models::MouseButton::Right) => "the right button",
        }
    }
}

/// The active window as a backend reads it: everything in a
/// [`reprise_models::WindowState`] but the recorder's id and timestamp.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveWindow {
    pub title: String,
    pub app_class: String,
    pub pid: Option<u32>,
    pub window_id: u64,
    pub rect: reprise_models::Rect,
    /// A window the window manager does not manage (an X11
    /// override-redirect window: a menu, a combo box's list, a tooltip).
    pub popup: bool,
}

impl ActiveWindow {
    /// The window as a recording's state number `id` at `timestamp` seconds.
    pub fn into_state(self, id: u32, timestamp: f64) -> reprise_models::WindowState {
        reprise_models::WindowState {
            id,
            timestamp,
            title: self.title,
            app_class: self.app_class,
            pid: self.pid,
            window_id: self.window_id,
            rect: self.rect,
            a11y: None,
            command: None,
        }
    }
}

/// How process `pid` was started: its command line and folder, where the
/// platform tells (Linux: `/proc`); `None` for a process that is gone or
/// shows no command line (a kernel thread, a zombie).
pub fn process_command(pid: u32) -> Option<reprise_models::ProcessCommand> {
    #[cfg(target_os = "linux")]
    {
        let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let raw = raw.strip_suffix(&[0]).unwrap_or(&raw);
        if raw.is_empty() {
            return None;
        }
        let argv = raw
            .split(|byte| *byte == 0)
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect();
        let dir = std::fs::read_link(format!("/proc/{pid}/cwd"))
            .ok()
            .map(|dir| dir.to_string_lossy().into_owned());
        Some(reprise_models::ProcessCommand { argv, dir })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// Samples how long the accessible application named `app` takes to answer
/// on the accessibility bus: `n_samples` requests, `interval` apart; `None`
/// for a sample it did not answer within the reader's deadline.
pub fn answer_times(
    app: &str,
    n_samples: usize,
    interval: std::time::Duration,
) -> Result<Vec<Option<std::time::Duration>>, PlatformError> {
    #[cfg(target_os = "linux")]
    {
        let reader = a11y::A11yReader::connect()?;
        let Some(application) = reader.application_named(app)? else {
            return Err(PlatformError::NoApplication(app.to_owned()));
        };
        let mut samples = Vec::with_capacity(n_samples);
        for _ in 0..n_samples {
            samples.push(reader.answer_time(&application));
            std::thread::sleep(interval);
        }
        Ok(samples)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (app, n_samples, interval);
        Err(PlatformError::Unsupported(
            "an application's accessibility tree",
        ))
    }
}

/// What a [`FocusReader`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum Focus {
    /// Nothing was read: the focus is where it was.
    NotRead,
    Found(reprise_models::ElementIdentity),
    /// Found in a window that named no focus at the keys before this one,
    /// with nothing seen to move it since: it is where those keys went.
    Settled(reprise_models::ElementIdentity),
    /// The window was read and named no focused element (yet: a window
    /// that just opened sets its focus a moment later).
    Unknown,
}

/// How long after a window change whose tree named no focus the reader
/// keeps reading at every key until it finds it (a dialog sets its focus a
/// moment after it shows).
pub const FOCUS_SETTLE: std::time::Duration = std::time::Duration::from_secs(2);
/// A window whose tree takes longer than this to read is not read again
/// for its focus at every key: the application's time is worth more.
const FOCUS_RETRY_READ: std::time::Duration = std::time::Duration::from_millis(250);

/// When a [`FocusReader`] reads the window's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFocus {
    /// Something moved the focus (a Tab, a window change the recorder saw).
    Always,
    /// Only if another window became active since the last answer, or (for
    /// [`FOCUS_SETTLE`], in a window quick to read) that new window named
    /// no focus yet; otherwise it asks the display one question and the
    /// application none.
    IfMoved,
    /// Never: a press said where the focus is (the window is noted).
    Never,
}

/// Names the element with the keyboard focus in the active window.
pub type FocusReader = Box<dyn FnMut(ReadFocus) -> Focus + Send>;

/// A [`FocusReader`] where the platform exposes accessibility trees (AT-SPI
/// on Linux: the active window's tree, read under the same bounds as the
/// recorder's other reads, and its focused node); `None` elsewhere. It
/// connects on first use.
pub fn focus_reader() -> Option<FocusReader> {
    #[cfg(target_os = "linux")]
    {
        let mut reader: Option<Result<(a11y::A11yReader, WindowProbe), ()>> = None;
        let mut last_window: Option<u64> = None;
        let mut unresolved_until: Option<std::time::Instant> = None;
        Some(Box::new(move |when: ReadFocus| {
            let must_read = when == ReadFocus::Always;
            let connected = reader.get_or_insert_with(|| {
                let bus = a11y::A11yReader::connect()
                    .map_err(|err| tracing::info!("no focused elements: {err}"))?;
                let probe = WindowProbe::connect()
                    .map_err(|err| tracing::info!("no focused elements: {err}"))?;
                Ok((bus, probe))
            });
            let Ok((reader, probe)) = connected.as_mut() else {
                return Focus::NotRead;
            };
            let Some(window) = probe.active_window().ok().flatten() else {
                return Focus::NotRead;
            };
            let now = std::time::Instant::now();
            let changed = last_window != Some(window.window_id);
            last_window = Some(window.window_id);
            let unresolved = unresolved_until.is_some_and(|until| now < until);
            if when == ReadFocus::Never {
                unresolved_until = None;
                return Focus::NotRead;
            }
            if !(must_read || changed || unresolved) {
                return Focus::NotRead;
            }
            let found =
                trees::screen_tree(reader, &window, a11y::TreeLimits::default()).and_then(|tree| {
                    let focused = reprise_models::element::focused(&tree)?;
                    reprise_models::element::identity_of_node(&tree, &tree.app, focused)
                });
            match found {
                Some(element) => {
                    unresolved_until = None;
                    if unresolved && !must_read && !changed {
                        Focus::Settled(element)
                    } else {
                        Focus::Found(element)
                    }
                }
                None => {
                    if changed && now.elapsed() < FOCUS_RETRY_READ {
                        unresolved_until = Some(now + FOCUS_SETTLE);
                    } else if !unresolved {
                        unresolved_until = None;
                    }
                    Focus::Unknown
                }
            }
        }))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Names the element under a point of the screen (the pointer's position at
/// a press), through the platform's accessibility hit-testing.
/// The second argument is the top-level window that was under the pointer
/// when the press arrived ([`window_under_pointer`]), when known.
pub type ElementReader = Box<dyn FnMut((f64, f64), Option<u64>) -> Option<FoundElement> + Send>;

/// The element an [`ElementReader`] named under a press, in screen
/// coordinates, with the offset that moved its toolkit's boxes there where
/// they needed one (what the recorder's check of it says).
#[derive(Debug, Clone, PartialEq)]
pub struct FoundElement {
    pub element: reprise_models::ElementIdentity,
    pub mapped_by: Option<(i32, i32)>,
}

/// The point (logical screen coordinates) of the next click of the left
/// button, delivered to no application (X11: the pointer grabbed for the
/// while); `None` when `wait` passes or the right button gives up.
/// `ready` is called once a click can be read.
pub fn read_click(
    wait: std::time::Duration,
    ready: impl FnOnce(),
) -> Result<Option<(f64, f64)>, PlatformError> {
    #[cfg(target_os = "linux")]
    {
        WindowProbe::connect()?.read_click(wait, ready)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (wait, ready);
        Err(PlatformError::Unsupported(
            "a click kept from the applications",
        ))
    }
}

/// Whether the display is gone: a new connection to it fails, or it does
/// not answer one question. (The recorder asks when its input listener
/// stops: a display that went away ends a recording like a stop.)
pub fn display_gone() -> bool {
    WindowProbe::connect()
        .and_then(|probe| probe.pointer_position())
        .is_err()
}

/// The top-level window under the pointer: the platform's id for it, and
/// its box on the screen when it is a popup (a window the window manager
/// does not manage: a menu, a combo box's list, a tooltip).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnderPointer {
    pub window: u64,
    pub popup: Option<reprise_models::Rect>,
}

/// Asks the display for the top-level window under the pointer (one round
/// trip, three for a popup), for the listener to note at every press: by
/// the time the press is hit-tested, the application may have opened a
/// popup over the point (a combo box opens its list on the press). `None`
/// where the platform has no such query or the display does not answer.
pub fn window_under_pointer() -> impl FnMut() -> Option<UnderPointer> + Send + 'static {
    #[cfg(target_os = "linux")]
    {
        let mut probe: Option<Option<WindowProbe>> = None;
        move || {
            probe
                .get_or_insert_with(|| WindowProbe::connect().ok())
                .as_ref()?
                .under_pointer()
                .ok()
                .flatten()
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        || None
    }
}

/// A reader of the elements under presses where the platform exposes an
/// accessibility tree (AT-SPI on Linux); `None` elsewhere. Like
/// [`window_tree_reader`], it connects on first use, on its own thread. It
/// asks the application of the window under the pointer (a popup menu's
/// too, which the window manager does not list).
pub fn element_reader() -> Option<ElementReader> {
    #[cfg(target_os = "linux")]
    {
        let mut reader: Option<Result<(a11y::A11yReader, WindowProbe), ()>> = None;
        Some(Box::new(move |point: (f64, f64), under: Option<u64>| {
            let connected = reader.get_or_insert_with(|| {
                let bus = a11y::A11yReader::connect()
                    .map_err(|err| tracing::info!("no elements under presses: {err}"))?;
                let probe = WindowProbe::connect()
                    .map_err(|err| tracing::info!("no elements under presses: {err}"))?;
                Ok((bus, probe))
            });
            let (reader, probe) = connected.as_ref().ok()?;
            // The window the press arrived in, if it is still there; else
            // whatever is under the pointer now.
            let now = probe.top_level_at_pointer().ok().flatten();
            let window = under
                .and_then(|top| probe.client_in(top).ok().flatten())
                .or_else(|| probe.window_at_pointer().ok().flatten());
            let opened_since = under.is_some() && now.is_some() && now != under;
            tracing::debug!(?under, ?now, opened_since, "the window under a press");
            // A popup's application's own windows give its scale (a
            // round trip a window, only for a press in a popup).
            let own_windows = match &window {
                Some(popup) if popup.popup => windows_of(probe, popup.pid).unwrap_or_default(),
                _ => Vec::new(),
            };
            match reader.element_at(window.as_ref(), &own_windows, point, opened_since) {
                Ok(found) => found,
                Err(err) => {
                    tracing::debug!("no element under the press: {err}");
                    None
                }
            }
        }))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Reads the live tree of an application's window, named as a recorded
/// element names it (the accessible application's name and the window's
/// identity).
pub type TreeFinder = Box<
    dyn FnMut(
            &str,
            &reprise_models::WindowIdentity,
            WholeLists,
        ) -> Result<Option<reprise_models::A11yTree>, PlatformError>
        + Send,
>;

/// Whether a long list's rows beyond what shows of it are read too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WholeLists {
    /// What shows of it (a person's view; fast).
    Showing,
    /// All its rows, within the read's bounds.
    Whole,
}

/// A [`TreeFinder`] where the platform exposes accessibility trees (AT-SPI on
/// Linux); `None` elsewhere. It connects on first use.
pub fn tree_finder() -> Option<TreeFinder> {
    #[cfg(target_os = "linux")]
    {
        let mut connected: Option<Result<(a11y::A11yReader, WindowProbe), PlatformError>> = None;
        Some(Box::new(
            move |app: &str, identity: &reprise_models::WindowIdentity, lists: WholeLists| {
                let (reader, probe) = connected
                    .get_or_insert_with(|| {
                        let reader = a11y::A11yReader::connect()?;
                        let probe = WindowProbe::connect()?;
                        Ok((reader, probe))
                    })
                    .as_ref()
                    .map_err(Clone::clone)?;
                let started = std::time::Instant::now();
                let Some((mut tree, pid, surface)) = reader.tree_of(
                    app,
                    identity,
                    a11y::TreeLimits {
                        values: true,
                        whole_lists: lists == WholeLists::Whole,
                        ..Default::default()
                    },
                )?
                else {
                    return Ok(None);
                };
                let frame = tree.nodes.first().and_then(|root| root.rect);
                let Some(mapping) = live_mapping(probe, pid, identity, frame, surface)? else {
                    return Ok(None);
                };
                a11y::to_screen(&mut tree, mapping);
                tracing::debug!(
                    ms = started.elapsed().as_millis(),
                    "found a window's live tree and its scale"
                );
                Ok(Some(tree))
            },
        ))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// The windows the window manager lists of the process `pid` (none for
/// no process).
#[cfg(target_os = "linux")]
fn windows_of(probe: &WindowProbe, pid: Option<u32>) -> Result<Vec<ActiveWindow>, PlatformError> {
    if pid.is_none() {
        return Ok(Vec::new());
    }
    Ok(probe
        .client_windows()?
        .into_iter()
        .filter(|window| window.pid == pid)
        .collect())
}

/// How the boxes of the live tree of window `identity` (its frame's box
/// `frame`) of the application with process id `pid` become the screen's;
/// `None` where no mapping is trusted (no tree is then better than boxes
/// that name other elements than the screen shows).
#[cfg(target_os = "linux")]
fn live_mapping(
    probe: &WindowProbe,
    pid: Option<u32>,
    identity: &reprise_models::WindowIdentity,
    frame: Option<reprise_models::Rect>,
    surface: bool,
) -> Result<Option<a11y::Mapping>, PlatformError> {
    // The X window of that frame gives the toolkit's scale (and, for a
    // toolkit whose boxes are relative to its surface, its place): the
    // application's window with the frame's name, else its only one.
    let windows = windows_of(probe, pid)?;
    let window = windows
        .iter()
        .find(|window| Some(&window.title) == identity.name.as_ref())
        .or_else(|| (windows.len() == 1).then(|| &windows[0]));
    Ok(match (window, frame) {
        (Some(window), Some(frame)) if identity.name.is_some() => {
            a11y::mapping_between(frame, window.rect, surface)
        }
        // An unnamed window: one of the application's own (AccessKit's
        // windows have no accessible name), else a popup, which the window
        // manager does not list: the scale that makes its box that X
        // window's exactly. None fits: no tree, rather than boxes at a
        // guessed scale.
        (_, Some(frame)) if identity.name.is_none() => {
            let own: Vec<reprise_models::Rect> = windows.iter().map(|window| window.rect).collect();
            let scale = match a11y::scale_by_geometry(frame, &own) {
                Some(scale) => Some(scale),
                None => a11y::scale_by_geometry(frame, &probe.viewable_top_levels()?),
            };
            scale.map(a11y::Mapping::scaled)
        }
        // A window whose toolkit's boxes are not the screen's and whose X
        // window is not known: no tree.
        _ if surface => None,
        _ => Some(a11y::Mapping::SCREEN),
    })
}

/// Why a platform query failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PlatformError {
    #[error("read the accessibility bus: {0}")]
    Accessibility(#[source] std::sync::Arc<dyn std::error::Error + Send + Sync>),
    #[error("no accessible application is named {0:?}")]
    NoApplication(String),
    #[error("{0} is not read on this platform yet")]
    Unsupported(&'static str),
    #[error("connect to the display: {0}")]
    Connect(String),
    #[error("query the display: {0}")]
    Query(String),
    #[error("capture the screen: {0}")]
    Capture(String),
    #[error("inject input: {0}")]
    Inject(String),
    #[error("listen to input: {0}")]
    Listen(String),
}

#[cfg(target_os = "linux")]
impl From<a11y::A11yError> for PlatformError {
    fn from(err: a11y::A11yError) -> PlatformError {
        PlatformError::Accessibility(std::sync::Arc::new(err))
    }
}
