//! The abort watcher: a replay stops within 100 ms when the person moves the
//! pointer into a corner of the screen or presses Ctrl+Alt+Shift+Q, even while
//! the replay holds the mouse.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rdev::{EventType, Key};
use reprise_models::ScreenGeometry;

use super::{Flag, LastMove};
use crate::platform::{HeldInput, WindowProbe};

/// The documented abort key combination.
pub const ABORT_KEYS: &str = "Ctrl+Alt+Shift+Q";

/// How often the pointer is looked at.
const POLL: Duration = Duration::from_millis(10);
/// How close to a corner counts as in it, in logical pixels.
const CORNER: f64 = 2.0;

#[derive(Debug)]
pub struct AbortWatcher {
    flag: Flag,
    stop: Flag,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl AbortWatcher {
    /// Starts watching the pointer (and, once per process, the keyboard).
    pub fn start(screen: ScreenGeometry, last_move: LastMove) -> anyhow::Result<AbortWatcher> {
        let flag = Flag::default();
        let stop = Flag::default();
        let probe = WindowProbe::connect()?;
        let (thread_flag, thread_stop) = (Arc::clone(&flag), Arc::clone(&stop));
        let thread = std::thread::Builder::new()
            .name("reprise-abort".into())
            .spawn(move || {
                let mut was_in_corner = true;
                while !thread_stop.load(Ordering::SeqCst) {
                    if let Ok((x, y)) = probe.pointer_position() {
                        let corner = corner_of(&screen, x, y);
                        // Only entering a corner counts, and only when the replay
                        // did not move the pointer there itself.
                        let moved_there_by_replay = last_move
                            .lock()
                            .ok()
                            .and_then(|last| *last)
                            .is_some_and(|(lx, ly)| {
                                corner.is_some() && corner_of(&screen, lx, ly) == corner
                            });
                        if corner.is_some() && !was_in_corner && !moved_there_by_replay {
                            tracing::warn!(
                                x,
                                y,
                                "pointer moved into a screen corner: aborting the replay"
                            );
                            thread_flag.store(true, Ordering::SeqCst);
                        }
                        was_in_corner = corner.is_some();
                    }
                    std::thread::sleep(POLL);
                }
            })?;
        watch_keys(Arc::clone(&flag));
        Ok(AbortWatcher {
            flag,
            stop,
            thread: Some(thread),
        })
    }

    /// The flag the replay loop polls.
    pub fn flag(&self) -> Flag {
        Arc::clone(&self.flag)
    }
}

impl Drop for AbortWatcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn corner_of(screen: &ScreenGeometry, x: f64, y: f64) -> Option<(bool, bool)> {
    let rect = screen.rect;
    let (left, top) = (f64::from(rect.left), f64::from(rect.top));
    let (right, bottom) = (
        left + f64::from(rect.width) - 1.0,
        top + f64::from(rect.height) - 1.0,
    );
    let at_left = (x - left).abs() <= CORNER;
    let at_right = (right - x).abs() <= CORNER;
    let at_top = (y - top).abs() <= CORNER;
    let at_bottom = (bottom - y).abs() <= CORNER;
    ((at_left || at_right) && (at_top || at_bottom)).then_some((at_right, at_bottom))
}

/// rdev's listener lives for the rest of the process (it has no stop call),
/// so it is started once and sets whichever flag is current.
fn watch_keys(flag: Flag) {
    static CURRENT: std::sync::Mutex<Option<Flag>> = std::sync::Mutex::new(None);
    static STARTED: AtomicBool = AtomicBool::new(false);
    if let Ok(mut current) = CURRENT.lock() {
        *current = Some(flag);
    }
    if STARTED.swap(true, Ordering::SeqCst) {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("reprise-abort-keys".into())
        .spawn(|| {
            let mut held: Vec<Key> = Vec::new();
            // The display's own record of held modifiers: a modifier that was
            // down before the listener started (a stuck Shift) sent it no
            // press, yet it is held, and the chord must still work.
            let probe = WindowProbe::connect().ok();
            let result = rdev::listen(move |event| match event.event_type {
                EventType::KeyPress(key) => {
                    if !held.contains(&key) {
                        held.push(key);
                    }
                    if key != Key::KeyQ {
                        return;
                    }
                    let on_display = probe
                        .as_ref()
                        .and_then(|probe| probe.held_input().ok())
                        .unwrap_or_default();
                    let has = |keys: &[Key], modifier: HeldInput| {
                        keys.iter().any(|key| held.contains(key)) || on_display.contains(&modifier)
                    };
                    if has(&[Key::ControlLeft, Key::ControlRight], HeldInput::Ctrl)
                        && has(&[Key::Alt, Key::AltGr], HeldInput::Alt)
                        && has(&[Key::ShiftLeft, Key::ShiftRight], HeldInput::Shift)
                    {
                        tracing::warn!("{ABORT_KEYS} pressed: aborting the replay");
                        if let Ok(current) = CURRENT.lock()
                            && let Some(flag) = current.as_ref()
                        {
                            flag.store(true, Ordering::SeqCst);
                        }
                    }
                }
                EventType::KeyRelease(key) => held.retain(|held_key| *held_key != key),
                _ => {}
            });
            if let Err(err) = result {
                tracing::warn!(
                    "the abort keys cannot be watched ({err:?}); the screen corners still abort"
                );
            }
        });
}

#[cfg(test)]
mod tests {
    use reprise_models::Rect;

    use super::*;

    #[test]
    fn corners_are_found_with_a_small_margin() {
        let screen = ScreenGeometry {
            rect: Rect::new(0, 0, 1280, 800),
            scale_factor: 1.0,
        };
        assert_eq!(corner_of(&screen, 0.0, 0.0), Some((false, false)));
        assert_eq!(corner_of(&screen, 1279.0, 799.0), Some((true, true)));
        assert_eq!(corner_of(&screen, 1.0, 798.0), Some((false, true)));
        assert_eq!(corner_of(&screen, 640.0, 0.0), None);
        assert_eq!(corner_of(&screen, 5.0, 5.0), None);
    }
}
