//! Screenshots of the desktop (the primary monitor, or every monitor where
//! there are several): through a kept X11 connection
//! ([`super::os::RootCapture`]) where the screen's pixels allow and it is the
//! cheaper path (it is about three times cheaper in a release build; its
//! pixel loop is not optimised in a debug build, where xcap's, compiled
//! optimised, is cheaper), else through xcap. `REPRISE_CAPTURE=xcap` or
//! `=x11` forces one (the benchmark compares them; a way out should a
//! server's raw pixels ever disagree). The choice is made once, when the
//! capture is opened. With several monitors the raw path is the only one
//! (xcap captures one monitor a frame), where the display has it.

use image::RgbaImage;
use reprise_models::{Monitor, Rect, ScreenGeometry};

use super::PlatformError;
use super::os::{Drawn, RootCapture};

/// The desktop, ready to be captured repeatedly.
#[derive(Debug)]
pub struct ScreenCapture {
    monitor: xcap::Monitor,
    geometry: ScreenGeometry,
    /// The desktop's monitors, when there are several (the frames hold
    /// them all); empty with one.
    monitors: Vec<Monitor>,
    /// The raw path, where the display has one.
    raw: Option<RootCapture>,
    /// Whether [`Self::capture`] takes the raw path.
    use_raw: bool,
    /// No frame has been taken yet, or a drawing was reported but its frame
    /// could not be taken (or was not kept): the next
    /// [`Self::capture_if_drawn`] takes a whole one.
    owed: bool,
    /// On the raw path, the last frame [`Self::capture_if_drawn`] gave,
    /// which the next one's drawn rectangle is pasted onto.
    last: Option<RgbaImage>,
}

fn capture_err(err: xcap::XCapError) -> PlatformError {
    PlatformError::Capture(err.to_string())
}

/// How long `capture` took to give a frame, and the frame's size.
fn timed(
    capture: &dyn Fn() -> Result<RgbaImage, PlatformError>,
) -> Result<(std::time::Duration, (u32, u32)), PlatformError> {
    let started = std::time::Instant::now();
    let size = capture()?.dimensions();
    Ok((started.elapsed(), size))
}

impl ScreenCapture {
    /// The desktop: every monitor where the display has several and the
    /// raw path can take them in one frame; else the primary monitor (the
    /// first one when none says it is primary).
    pub fn desktop() -> Result<ScreenCapture, PlatformError> {
        let monitors = xcap::Monitor::all().map_err(capture_err)?;
        let monitor = monitors
            .iter()
            .find(|monitor| monitor.is_primary().unwrap_or(false))
            .or(monitors.first())
            .cloned()
            .ok_or_else(|| PlatformError::Capture("the display reports no monitor".into()))?;
        let scale_factor = f64::from(monitor.scale_factor().map_err(capture_err)?);
        let raw = RootCapture::desktop()
            .inspect_err(|err| tracing::debug!("no raw capture, xcap captures: {err}"))
            .ok()
            .flatten();
        let raw = match raw {
            Some(raw) if raw.monitors().len() > 1 => {
                return Ok(Self::all_monitors(monitor, raw, scale_factor));
            }
            one => one,
        };
        let geometry = ScreenGeometry {
            rect: Rect::new(
                monitor.x().map_err(capture_err)?,
                monitor.y().map_err(capture_err)?,
                monitor.width().map_err(capture_err)?,
                monitor.height().map_err(capture_err)?,
            ),
            scale_factor,
        };
        let (xcap_took, xcap_size) = timed(&|| monitor.capture_image().map_err(capture_err))?;
        // The raw capture of the monitor xcap captures (at the size of
        // xcap's frames), if the display has one.
        let raw = raw.filter(|raw| raw.size() == xcap_size);
        // The raw path when forced, or when its frame took less time than
        // xcap's (one of each: the difference is several times, either way).
        let use_raw = match (&raw, std::env::var("REPRISE_CAPTURE").as_deref()) {
            (None, _) | (_, Ok("xcap")) => false,
            (Some(_), Ok("x11")) => true,
            (Some(raw), _) => {
                let (raw_took, _) = timed(&|| raw.capture())?;
                tracing::debug!(?raw_took, ?xcap_took, "the raw capture and xcap's");
                raw_took < xcap_took
            }
        };
        Ok(ScreenCapture {
            monitor,
            geometry,
            monitors: Vec::new(),
            raw,
            use_raw,
            owed: true,
            last: None,
        })
    }

    /// Every monitor of the desktop in each frame, on the raw path.
    fn all_monitors(monitor: xcap::Monitor, raw: RootCapture, scale_factor: f64) -> ScreenCapture {
        let monitors = raw.monitors().to_vec();
        tracing::info!(
            "{} monitors: every frame holds the desktop's {}x{} pixels",
            monitors.len(),
            raw.rect().width,
            raw.rect().height
        );
        ScreenCapture {
            monitor,
            geometry: ScreenGeometry {
                rect: raw.rect(),
                scale_factor,
            },
            monitors,
            raw: Some(raw),
            use_raw: true,
            owed: true,
            last: None,
        }
    }

    /// The desktop's monitors, when there are several; empty with one.
    pub fn monitors(&self) -> &[Monitor] {
        &self.monitors
    }

    /// How frames are taken: "x11 GetImage" or "xcap".
    pub fn backend(&self) -> &'static str {
        if self.use_raw { "x11 GetImage" } else { "xcap" }
    }

    /// The captured rectangle (the desktop's) and its scale factor.
    pub fn geometry(&self) -> ScreenGeometry {
        self.geometry
    }

    /// One frame, as RGBA pixels.
    pub fn capture(&self) -> Result<RgbaImage, PlatformError> {
        match &self.raw {
            Some(raw) if self.use_raw => raw.capture(),
            _ => self.capture_xcap(),
        }
    }

    /// One frame, or `None` when the display says nothing was drawn since
    /// the last call (the recorder's frames: an idle screen costs a round
    /// trip, not a frame). On the raw path only the rectangle that was drawn
    /// is read and pasted onto the last frame, which is the same picture as
    /// a whole frame read afresh (the display's DAMAGE covers every drawing).
    /// Where the display cannot say, always a whole frame.
    pub fn capture_if_drawn(&mut self) -> Result<Option<RgbaImage>, PlatformError> {
        let Some(raw) = &self.raw else {
            return self.capture().map(Some);
        };
        let drawn = if self.owed {
            Drawn::Unknown
        } else {
            raw.drawn_since_last_look()?
        };
        let frame = match (drawn, self.use_raw, self.last.take()) {
            (Drawn::Nothing, _, last) => {
                self.last = last;
                return Ok(None);
            }
            (Drawn::Inside(rect), true, Some(mut last)) => {
                let origin = raw.rect();
                raw.capture_rect(rect).map(|part| {
                    image::imageops::replace(
                        &mut last,
                        &part,
                        i64::from(rect.left - origin.left),
                        i64::from(rect.top - origin.top),
                    );
                    last
                })
            }
            _ => self.capture(),
        };
        self.owed = frame.is_err();
        if self.use_raw {
            self.last = frame.as_ref().ok().cloned();
        }
        frame.map(Some)
    }

    /// The frame [`Self::capture_if_drawn`] gave was not kept (the recorder
    /// dropped it): the next call takes a whole one.
    pub fn retake_next(&mut self) {
        self.owed = true;
    }

    /// One frame through xcap, whichever path [`Self::capture`] takes.
    pub fn capture_xcap(&self) -> Result<RgbaImage, PlatformError> {
        self.monitor.capture_image().map_err(capture_err)
    }

    /// One frame through the raw path, whichever path [`Self::capture`]
    /// takes; `None` where the display has no raw path.
    pub fn capture_raw(&self) -> Option<Result<RgbaImage, PlatformError>> {
        self.raw.as_ref().map(RootCapture::capture)
    }
}
