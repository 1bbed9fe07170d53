//! Screenshots of a monitor through xcap.

use image::RgbaImage;
use reprise_models::{Rect, ScreenGeometry};

use super::PlatformError;

/// The primary monitor, ready to be captured repeatedly.
#[derive(Debug)]
pub struct ScreenCapture {
    monitor: xcap::Monitor,
    geometry: ScreenGeometry,
}

fn capture_err(err: xcap::XCapError) -> PlatformError {
    PlatformError::Capture(err.to_string())
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
        Ok(ScreenCapture { monitor, geometry })
    }

    /// The monitor's logical rectangle and scale factor.
    pub fn geometry(&self) -> ScreenGeometry {
        self.geometry
    }

    /// One frame, as RGBA pixels.
    pub fn capture(&self) -> Result<RgbaImage, PlatformError> {
        self.monitor.capture_image().map_err(capture_err)
    }
}
