//! The abort watcher: a replay stops within 100 ms when the person moves the
//! pointer into a corner of the screen or presses Ctrl+Alt+Shift+Q, even while
//! the replay holds the mouse. The keyboard is watched by the platform
//! ([`crate::platform::listen::watch_abort_chord`]).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use reprise_models::ScreenGeometry;

use super::{Flag, LastMove};
use crate::platform::WindowProbe;
pub use crate::platform::listen::ABORT_KEYS;
use crate::platform::listen::{AbortChord, watch_abort_chord};

/// How often the pointer is looked at.
const POLL: Duration = Duration::from_millis(10);
/// How close to a corner counts as in it, in logical pixels.
const CORNER: f64 = 2.0;

#[derive(Debug)]
pub struct AbortWatcher {
    flag: Flag,
    stop: Flag,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The keyboard's watch (none where the listener could not start: the
    /// corners still abort).
    _chord: Option<AbortChord>,
}

impl AbortWatcher {
    /// Starts watching the pointer and the keyboard.
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
        let chord = watch_abort_chord(Arc::clone(&flag))
            .inspect_err(|err| {
                tracing::warn!(
                    "the abort keys cannot be watched ({err}); the screen corners still abort"
                );
            })
            .ok();
        Ok(AbortWatcher {
            flag,
            stop,
            thread: Some(thread),
            _chord: chord,
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
