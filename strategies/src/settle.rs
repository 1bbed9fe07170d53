//! Waiting for the screen to settle before a step, so replay never outruns a
//! slow application (OpenAdapt's replays did: its issue #434).

use std::time::{Duration, Instant};

use reprise_models::Rect;

use crate::{Desktop, DesktopError, Frame};

/// How long the screen must stay unchanged, how often to look, and the most to wait.
#[derive(Debug, Clone, Copy)]
pub struct SettleOptions {
    pub quiet: Duration,
    pub poll: Duration,
    pub timeout: Duration,
}

impl Default for SettleOptions {
    fn default() -> Self {
        SettleOptions {
            quiet: Duration::from_millis(150),
            poll: Duration::from_millis(50),
            timeout: Duration::from_secs(3),
        }
    }
}

/// The frame once the region (the active window; the whole screen when
/// `None`) has not changed for `quiet`, or the last frame after `timeout`;
/// with whether it settled. `None` if aborted.
pub fn wait_until_settled(
    desktop: &mut dyn Desktop,
    options: &SettleOptions,
    region: Option<Rect>,
    abort: &dyn Fn() -> bool,
) -> Result<Option<(Frame, bool)>, DesktopError> {
    let started = Instant::now();
    let mut frame = desktop.screenshot()?;
    let mut stable_since = Instant::now();
    loop {
        if abort() {
            return Ok(None);
        }
        if stable_since.elapsed() >= options.quiet {
            return Ok(Some((frame, true)));
        }
        if started.elapsed() >= options.timeout {
            return Ok(Some((frame, false)));
        }
        desktop.sleep(options.poll);
        let next = desktop.screenshot()?;
        if !same_region(&frame, &next, region) {
            stable_since = Instant::now();
        }
        frame = next;
    }
}

/// Whether two frames are equal inside `region` (given in logical
/// coordinates, mapped to pixels through the screen's scale factor).
pub fn same_region(a: &Frame, b: &Frame, region: Option<Rect>) -> bool {
    if a.image.dimensions() != b.image.dimensions() {
        return false;
    }
    let (width, height) = a.image.dimensions();
    let (x0, y0, x1, y1) = match region {
        None => (0, 0, width, height),
        Some(rect) => {
            let scale = a.screen.scale_factor;
            let origin = a.screen.rect;
            let to_px = |value: i64, origin: i32, limit: u32| -> u32 {
                (((value - i64::from(origin)) as f64 * scale)
                    .round()
                    .max(0.0) as u32)
                    .min(limit)
            };
            (
                to_px(i64::from(rect.left), origin.left, width),
                to_px(i64::from(rect.top), origin.top, height),
                to_px(rect.right(), origin.left, width),
                to_px(rect.bottom(), origin.top, height),
            )
        }
    };
    let row_bytes = width as usize * 4;
    let (a_raw, b_raw) = (a.image.as_raw(), b.image.as_raw());
    (y0..y1).all(|y| {
        let start = y as usize * row_bytes + x0 as usize * 4;
        let end = y as usize * row_bytes + x1 as usize * 4;
        a_raw[start..end] == b_raw[start..end]
    })
}
