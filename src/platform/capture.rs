//! Screenshots of a monitor: through a kept X11 connection
//! ([`super::os::RootCapture`]) where the screen's pixels allow and it is the
//! cheaper path (it is about three times cheaper in a release build; its
//! pixel loop is not optimised in a debug build, where xcap's, compiled
//! optimised, is cheaper), else through xcap. `REPRISE_CAPTURE=xcap` or
//! `=x11` forces one (the benchmark compares them; a way out should a
//! server's raw pixels ever disagree).

use image::RgbaImage;
use reprise_models::{Rect, ScreenGeometry};

use super::PlatformError;
use super::os::RootCapture;

/// The primary monitor, ready to be captured repeatedly.
#[derive(Debug)]
pub struct ScreenCapture {
    monitor: xcap::Monitor,
    geometry: ScreenGeometry,
    fast: Option<RootCapture>,
}

fn capture_err(err: xcap::XCapError) -> PlatformError {
    PlatformError::Capture(err.to_string())
}

/// The raw capture of the monitor xcap captures, if there is one (at the
/// size of xcap's frames) and, unless `forced`, if its frame took less time
/// than xcap's (the faster of two of each).
fn fastest_raw(
    monitor: &xcap::Monitor,
    forced: bool,
) -> Result<Option<RootCapture>, PlatformError> {
    let timed = |capture: &dyn Fn() -> Result<RgbaImage, PlatformError>| {
        let mut best = (std::time::Duration::MAX, (0, 0));
        for _ in 0..2 {
            let started = std::time::Instant::now();
            let size = capture()?.dimensions();
            best = best.min((started.elapsed(), size));
        }
        Ok::<_, PlatformError>(best)
    };
    let (xcap_took, xcap_size) = timed(&|| monitor.capture_image().map_err(capture_err))?;
    let raw = match RootCapture::primary() {
        Ok(Some(raw)) if raw.size() == xcap_size => raw,
        Ok(_) => return Ok(None),
        Err(err) => {
            tracing::debug!("no raw capture, xcap captures: {err}");
            return Ok(None);
        }
    };
    if forced {
        return Ok(Some(raw));
    }
    let (raw_took, _) = timed(&|| raw.capture())?;
    tracing::debug!(?raw_took, ?xcap_took, "the raw capture and xcap's");
    Ok((raw_took < xcap_took).then_some(raw))
}

impl ScreenCapture {
    /// The primary monitor (the first one when none says it is primary).
    pub fn primary() -> Result<ScreenCapture, PlatformError> {
        let monitors = xcap::Monitor::all().map_err(capture_err)?;
        let monitor = monitors
            .iter()
            .find(|monitor| monitor.is_primary().unwrap_or(false))
            .or(monitors.first())
            .cloned()
            .ok_or_else(|| PlatformError::Capture("the display reports no monitor".into()))?;
        let geometry = ScreenGeometry {
            rect: Rect::new(
                monitor.x().map_err(capture_err)?,
                monitor.y().map_err(capture_err)?,
                monitor.width().map_err(capture_err)?,
                monitor.height().map_err(capture_err)?,
            ),
            scale_factor: f64::from(monitor.scale_factor().map_err(capture_err)?),
        };
        let choice = std::env::var("REPRISE_CAPTURE").unwrap_or_default();
        let fast = if choice == "xcap" {
            None
        } else {
            fastest_raw(&monitor, choice == "x11")?
        };
        Ok(ScreenCapture {
            monitor,
            geometry,
            fast,
        })
    }

    /// How frames are taken: "x11 GetImage" or "xcap".
    pub fn backend(&self) -> &'static str {
        if self.fast.is_some() {
            "x11 GetImage"
        } else {
            "xcap"
        }
    }

    /// The monitor's logical rectangle and scale factor.
    pub fn geometry(&self) -> ScreenGeometry {
        self.geometry
    }

    /// One frame, as RGBA pixels.
    pub fn capture(&self) -> Result<RgbaImage, PlatformError> {
        match &self.fast {
            Some(fast) => fast.capture(),
            None => self.monitor.capture_image().map_err(capture_err),
        }
    }

    /// One frame through xcap, whichever path [`Self::capture`] takes.
    pub fn capture_xcap(&self) -> Result<RgbaImage, PlatformError> {
        self.monitor.capture_image().map_err(capture_err)
    }
}
