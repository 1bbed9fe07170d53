//! One click read off the screen and kept from every application: the
//! pointer grabbed for the while (`reprise teach --click`).

use std::time::{Duration, Instant};

use x11rb::connection::Connection as _;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{ConnectionExt as _, EventMask, GrabMode, GrabStatus};
use x11rb::rust_connection::RustConnection;

use super::{PlatformError, WindowProbe, query_err};

/// How long a grab is tried for while another client holds the pointer (a
/// button still down elsewhere).
const GRAB_TRIES_FOR: Duration = Duration::from_secs(2);

/// How long after the press its release is waited for (kept from the
/// application too).
const RELEASE_WAIT: Duration = Duration::from_secs(5);

/// The pointer grab, let go when dropped (the server lets it go when the
/// connection closes, so a killed process holds nothing).
struct Grab<'a>(&'a RustConnection);

impl Drop for Grab<'_> {
    fn drop(&mut self) {
        let _ = self.0.ungrab_pointer(x11rb::CURRENT_TIME);
        let _ = self.0.flush();
    }
}

impl WindowProbe {
    /// The point (root coordinates) of the next click of the left button,
    /// its press and release delivered to no application; `None` when
    /// `wait` passes first or the right button is pressed (giving up). The
    /// wheel is ignored. `ready` is called once the pointer is held.
    pub fn read_click(
        &self,
        wait: Duration,
        ready: impl FnOnce(),
    ) -> Result<Option<(f64, f64)>, PlatformError> {
        let _grab = self.grab()?;
        ready();
        let deadline = Instant::now() + wait;
        let mut pressed: Option<((f64, f64), Instant)> = None;
        loop {
            let now = Instant::now();
            match pressed {
                Some((point, at)) if now >= at + RELEASE_WAIT => return Ok(Some(point)),
                None if now >= deadline => return Ok(None),
                _ => {}
            }
            match self.conn.poll_for_event().map_err(query_err)? {
                Some(Event::ButtonPress(press)) if pressed.is_none() => match press.detail {
                    1 => {
                        let point = (f64::from(press.root_x), f64::from(press.root_y));
                        pressed = Some((point, Instant::now()));
                    }
                    3 => return Ok(None),
                    _ => {}
                },
                Some(Event::ButtonRelease(release)) if release.detail == 1 => {
                    if let Some((point, _)) = pressed {
                        return Ok(Some(point));
                    }
                }
                Some(_) => {}
                None => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }

    fn grab(&self) -> Result<Grab<'_>, PlatformError> {
        let mask = EventMask::BUTTON_PRESS | EventMask::BUTTON_RELEASE;
        let until = Instant::now() + GRAB_TRIES_FOR;
        loop {
            let status = self
                .conn
                .grab_pointer(
                    false,
                    self.root,
                    mask,
                    GrabMode::ASYNC,
                    GrabMode::ASYNC,
                    x11rb::NONE,
                    x11rb::NONE,
                    x11rb::CURRENT_TIME,
                )
                .map_err(query_err)?
                .reply()
                .map_err(query_err)?
                .status;
            if status == GrabStatus::SUCCESS {
                return Ok(Grab(&self.conn));
            }
            if Instant::now() >= until {
                return Err(PlatformError::Query(format!(
                    "the pointer is held by another application ({status:?}): close its menu, let go of its button and try again"
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
