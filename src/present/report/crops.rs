//! The pictures of a step in its report: the recorded target and the one
//! found, cropped around their points and marked, and the window.

use super::*;

/// The region a target's crop shows: its recorded box's size (with room
/// around it) centred on `point`, or [`TARGET_REGION`].
pub(super) fn around((x, y): (f64, f64), recorded: Option<Rect>) -> Rect {
    let (width, height) = recorded.map_or(TARGET_REGION, |rect| {
        (
            rect.width.saturating_add(80).max(TARGET_REGION.0 / 2),
            rect.height.saturating_add(40).max(TARGET_REGION.1 / 2),
        )
    });
    Rect::new(
        (x - f64::from(width) / 2.0).round() as i32,
        (y - f64::from(height) / 2.0).round() as i32,
        width,
        height,
    )
}

/// The recorded target on the recording's frame (its box, or the region
/// around where the action landed), marked; nothing when the recording or
/// its frame is gone.
pub(super) fn recorded_crop(
    store: &Store,
    bundle: Option<&RecordingBundle>,
    sought: &Sought,
) -> Result<Option<Markup>> {
    let Some(shot) = sought
        .recorded_frame
        .and_then(|id| bundle?.screenshots.get(id as usize))
    else {
        return Ok(None);
    };
    let Some(point) = sought
        .recorded_point
        .or_else(|| sought.recorded_rect.map(|rect| rect.center()))
    else {
        return Ok(None);
    };
    target_crop(
        store,
        &shot.content_hash,
        &shot.screen,
        point,
        sought.recorded_rect,
        "recorded",
    )
    .map(Some)
}

/// A target on a frame: the region [`around`] `point`, the point marked
/// with `label`.
pub(super) fn target_crop(
    store: &Store,
    hash: &str,
    screen: &ScreenGeometry,
    point: (f64, f64),
    recorded_rect: Option<Rect>,
    label: &str,
) -> Result<Markup> {
    marked_crop(
        store,
        hash,
        screen,
        Some(around(point, recorded_rect)),
        &[point],
        &[Mark::point(point, label.to_owned())],
    )
}

/// A frame cropped as [`window_crop`] crops it, with `marks` drawn over it.
pub(super) fn marked_crop(
    store: &Store,
    hash: &str,
    screen: &ScreenGeometry,
    window: Option<Rect>,
    points: &[(f64, f64)],
    marks: &[Mark],
) -> Result<Markup> {
    let (png, width, height, shown) = window_crop(store, hash, screen, window, points)?;
    Ok(marked_image(&png, width, height, &shown, marks))
}

/// Room around a window crop, in logical pixels.
const CROP_MARGIN: i32 = 24;

/// A frame cropped to `window` and `points` (with [`CROP_MARGIN`] around
/// them, inside the screen), as PNG with its size and the geometry the crop
/// shows (for the markers); the whole frame where no window is known or it
/// is off the frame.
pub(crate) fn window_crop(
    store: &Store,
    hash: &str,
    screen: &ScreenGeometry,
    window: Option<reprise_models::Rect>,
    points: &[(f64, f64)],
) -> Result<(Vec<u8>, u32, u32, ScreenGeometry)> {
    let whole = || -> Result<(Vec<u8>, u32, u32, ScreenGeometry)> {
        let png = store.image_png(hash)?;
        let (width, height) = image_size(&png)?;
        Ok((png, width, height, *screen))
    };
    let Some(window) = window else {
        return whole();
    };
    let frame = store.image(hash)?;
    let scale = screen.scale_factor;
    // The window and every marked point (a press that missed the window
    // must show where it went), with a margin.
    let (mut left, mut top) = (i64::from(window.left), i64::from(window.top));
    let (mut right, mut bottom) = (window.right(), window.bottom());
    for &(x, y) in points {
        left = left.min(x.floor() as i64);
        top = top.min(y.floor() as i64);
        right = right.max(x.ceil() as i64 + 1);
        bottom = bottom.max(y.ceil() as i64 + 1);
    }
    let margin = i64::from(CROP_MARGIN);
    let logical = reprise_models::Rect::new(
        (left - margin).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
        (top - margin).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
        (right - left + 2 * margin).clamp(1, i64::from(u32::MAX)) as u32,
        (bottom - top + 2 * margin).clamp(1, i64::from(u32::MAX)) as u32,
    );
    let Some(logical) = logical.intersection(&screen.rect) else {
        return whole();
    };
    let to_px =
        |value: i32, origin: i32| (f64::from(value - origin) * scale).round().max(0.0) as u32;
    let x = to_px(logical.left, screen.rect.left).min(frame.width());
    let y = to_px(logical.top, screen.rect.top).min(frame.height());
    let width = ((f64::from(logical.width) * scale).round() as u32).min(frame.width() - x);
    let height = ((f64::from(logical.height) * scale).round() as u32).min(frame.height() - y);
    if width == 0 || height == 0 {
        return whole();
    }
    let crop = image::imageops::crop_imm(&frame, x, y, width, height).to_image();
    let mut png = Vec::new();
    crop.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .context("encode a window's crop")?;
    Ok((
        png,
        width,
        height,
        ScreenGeometry {
            rect: logical,
            scale_factor: scale,
        },
    ))
}

pub(super) fn image_size(png: &[u8]) -> Result<(u32, u32)> {
    let reader =
        image::ImageReader::with_format(std::io::Cursor::new(png), image::ImageFormat::Png);
    reader.into_dimensions().context("read a stored image")
}
