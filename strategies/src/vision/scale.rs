//! Screen ↔ image coordinates. Screenshots are in pixels; the desktop is in
//! logical coordinates; a HiDPI screen has more pixels than points (2x gives
//! 2880-pixel images of a 1440-point monitor). A window image is cropped from
//! a screen image at the window's origin.

use reprise_models::{Point, Rect, ScreenGeometry};
use serde::{Deserialize, Serialize};

/// A point in a window's image, in its pixels. A point on the screen is a
/// [`Point`] (logical coordinates); only [`WindowMapping`] turns one into
/// the other, so the two cannot be swapped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImagePoint {
    pub x: f64,
    pub y: f64,
}

impl ImagePoint {
    pub fn new(x: f64, y: f64) -> ImagePoint {
        ImagePoint { x, y }
    }

    /// The centre of the pixel at `x`, `y`.
    pub fn centre_of(x: u32, y: u32) -> ImagePoint {
        ImagePoint::new(f64::from(x) + 0.5, f64::from(y) + 0.5)
    }
}

/// Pixels per logical unit, per axis; never zero.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ScaleRatio {
    x: f64,
    y: f64,
}

impl ScaleRatio {
    /// `None` for a ratio that is not finite and positive.
    pub fn new(x: f64, y: f64) -> Option<ScaleRatio> {
        (x.is_finite() && y.is_finite() && x > 0.0 && y > 0.0).then_some(ScaleRatio { x, y })
    }

    /// The ratio of an image of `image_size` pixels showing `screen`.
    pub fn of(screen: &ScreenGeometry, image_size: (u32, u32)) -> Option<ScaleRatio> {
        ScaleRatio::new(
            f64::from(image_size.0) / f64::from(screen.rect.width),
            f64::from(image_size.1) / f64::from(screen.rect.height),
        )
    }

    pub fn x(&self) -> f64 {
        self.x
    }

    pub fn y(&self) -> f64 {
        self.y
    }
}

/// Where a window's image sits: its logical origin and the scale ratio.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WindowMapping {
    /// The window's top-left corner in logical screen coordinates.
    pub origin: Point,
    pub ratio: ScaleRatio,
}

impl WindowMapping {
    /// The mapping of a window on a screen whose image has `ratio`.
    pub fn new(window: &Rect, ratio: ScaleRatio) -> Self {
        WindowMapping {
            origin: Point {
                x: f64::from(window.left),
                y: f64::from(window.top),
            },
            ratio,
        }
    }

    /// A point in the window image to screen coordinates: `point / ratio + origin`.
    pub fn to_screen(&self, point: ImagePoint) -> Point {
        Point {
            x: point.x / self.ratio.x + self.origin.x,
            y: point.y / self.ratio.y + self.origin.y,
        }
    }

    /// A screen point to window-image coordinates: the exact inverse.
    pub fn to_image(&self, point: Point) -> ImagePoint {
        ImagePoint {
            x: (point.x - self.origin.x) * self.ratio.x,
            y: (point.y - self.origin.y) * self.ratio.y,
        }
    }
}

/// The pixel rectangle of `window` within a screen image (clipped to the
/// image: a window partly off screen has a smaller crop), and the logical
/// origin of that crop.
pub fn window_crop(
    screen: &ScreenGeometry,
    image_size: (u32, u32),
    window: &Rect,
) -> Option<(super::PixelRect, WindowMapping)> {
    let ratio = ScaleRatio::of(screen, image_size)?;
    let left = (f64::from(window.left - screen.rect.left) * ratio.x)
        .round()
        .max(0.0);
    let top = (f64::from(window.top - screen.rect.top) * ratio.y)
        .round()
        .max(0.0);
    let right = ((f64::from(window.left - screen.rect.left) + f64::from(window.width)) * ratio.x)
        .round()
        .min(f64::from(image_size.0));
    let bottom = ((f64::from(window.top - screen.rect.top) + f64::from(window.height)) * ratio.y)
        .round()
        .min(f64::from(image_size.1));
    if right <= left || bottom <= top {
        return None;
    }
    let crop = super::PixelRect {
        x: left as u32,
        y: top as u32,
        width: (right - left) as u32,
        height: (bottom - top) as u32,
    };
    // The crop's top-left pixel, back in logical screen coordinates.
    let origin = Point {
        x: left / ratio.x + f64::from(screen.rect.left),
        y: top / ratio.y + f64::from(screen.rect.top),
    };
    Some((crop, WindowMapping { origin, ratio }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(width: u32, height: u32) -> ScreenGeometry {
        ScreenGeometry {
            rect: Rect::new(0, 0, width, height),
            scale_factor: 1.0,
        }
    }

    #[test]
    fn to_screen_and_to_image_are_inverse_for_common_ratios() {
        for ratio in [1.0, 1.25, 1.5, 2.0] {
            let monitor = screen(1440, 900);
            let image_size = ((1440.0 * ratio) as u32, (900.0 * ratio) as u32);
            let window = Rect::new(-100, 50, 800, 600);
            let (crop, mapping) = window_crop(&monitor, image_size, &window).unwrap();
            assert_eq!(
                crop.x, 0,
                "a window partly off screen is clipped at the edge"
            );
            // A point inside the visible crop, in crop coordinates, maps to the
            // screen and back exactly (within float rounding).
            for point in [
                ImagePoint::new(0.0, 0.0),
                ImagePoint::new(17.5, 3.25),
                ImagePoint::new(f64::from(crop.width) - 1.0, f64::from(crop.height) - 1.0),
            ] {
                let on_screen = mapping.to_screen(point);
                let back = mapping.to_image(on_screen);
                assert!(
                    (back.x - point.x).abs() < 1e-9 && (back.y - point.y).abs() < 1e-9,
                    "ratio {ratio}: {point:?} -> {back:?}"
                );
            }
            // The crop's origin is the screen's left edge (the window starts off screen).
            let origin = mapping.to_screen(ImagePoint::new(0.0, 0.0));
            assert_eq!(origin.x, 0.0);
            // The crop starts on a whole pixel: within one pixel of the window's top.
            let y = origin.y;
            assert!((y - 50.0).abs() <= 1.0 / ratio, "ratio {ratio}: {y}");
        }
    }

    #[test]
    fn a_2x_screen_maps_pixels_to_half_the_points() {
        let monitor = screen(1440, 900);
        let (crop, mapping) =
            window_crop(&monitor, (2880, 1800), &Rect::new(100, 100, 200, 100)).unwrap();
        assert_eq!(
            (crop.x, crop.y, crop.width, crop.height),
            (200, 200, 400, 200)
        );
        assert_eq!(
            mapping.to_screen(ImagePoint::new(40.0, 20.0)),
            Point { x: 120.0, y: 110.0 }
        );
        assert!(ScaleRatio::new(0.0, 1.0).is_none());
        assert!(
            window_crop(&monitor, (1440, 900), &Rect::new(2000, 0, 100, 100)).is_none(),
            "entirely off screen"
        );
    }

    /// A small deterministic generator (xorshift64*), so the property test
    /// below sees the same thousands of cases on every run.
    struct Cases(u64);

    impl Cases {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn int(&mut self, low: i32, high: i32) -> i32 {
            low + (self.next() % (high - low + 1) as u64) as i32
        }

        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    #[test]
    fn properties_of_the_mapping_over_random_windows_and_monitors() {
        let mut cases = Cases(0x5eed_1234_abcd_ef01);
        for ratio in [1.0, 1.25, 1.5, 2.0] {
            for _ in 0..5000 {
                // A monitor anywhere in a multi-monitor desktop, and a window
                // on it, partly off it, or off it altogether.
                let monitor = ScreenGeometry {
                    rect: Rect::new(
                        cases.int(-1920, 3840),
                        cases.int(-1080, 2160),
                        cases.int(640, 2560) as u32,
                        cases.int(480, 1600) as u32,
                    ),
                    scale_factor: ratio,
                };
                let (mw, mh) = (monitor.rect.width as i32, monitor.rect.height as i32);
                let window = Rect::new(
                    monitor.rect.left + cases.int(-mw, mw),
                    monitor.rect.top + cases.int(-mh, mh),
                    cases.int(1, 2000) as u32,
                    cases.int(1, 1500) as u32,
                );
                let image_size = (
                    (f64::from(monitor.rect.width) * ratio).round() as u32,
                    (f64::from(monitor.rect.height) * ratio).round() as u32,
                );
                let visible_x = (window.left.max(monitor.rect.left)
                    ..(window.left + window.width as i32).min(monitor.rect.left + mw))
                    .len();
                let visible_y = (window.top.max(monitor.rect.top)
                    ..(window.top + window.height as i32).min(monitor.rect.top + mh))
                    .len();
                let Some((crop, mapping)) = window_crop(&monitor, image_size, &window) else {
                    assert!(
                        visible_x == 0 || visible_y == 0,
                        "{window:?} shows {visible_x}x{visible_y} on {monitor:?} but has no crop"
                    );
                    continue;
                };
                let case = format!("ratio {ratio}, {window:?} on {monitor:?}: {crop:?}");
                // The crop lies in the image and covers the visible part.
                assert!(crop.x + crop.width <= image_size.0, "{case}");
                assert!(crop.y + crop.height <= image_size.1, "{case}");
                assert!(
                    (f64::from(crop.width) - visible_x as f64 * ratio).abs() <= 1.0,
                    "{case}"
                );
                assert!(
                    (f64::from(crop.height) - visible_y as f64 * ratio).abs() <= 1.0,
                    "{case}"
                );
                // The crop starts where the visible part of the window starts.
                let Point { x: ox, y: oy } = mapping.to_screen(ImagePoint::new(0.0, 0.0));
                assert!(
                    (ox - f64::from(window.left.max(monitor.rect.left))).abs() <= 1.0 / ratio,
                    "{case}"
                );
                assert!(
                    (oy - f64::from(window.top.max(monitor.rect.top))).abs() <= 1.0 / ratio,
                    "{case}"
                );
                // Image -> screen -> image is the identity, and a point of the
                // crop lands on the monitor.
                let point = ImagePoint::new(
                    cases.unit() * f64::from(crop.width),
                    cases.unit() * f64::from(crop.height),
                );
                let on_screen = mapping.to_screen(point);
                let back = mapping.to_image(on_screen);
                assert!(
                    (back.x - point.x).abs() < 1e-9 && (back.y - point.y).abs() < 1e-9,
                    "{case}: {point:?} -> {on_screen:?} -> {back:?}"
                );
                assert!(
                    on_screen.x >= f64::from(monitor.rect.left) - 1.0
                        && on_screen.x <= f64::from(monitor.rect.left + mw) + 1.0
                        && on_screen.y >= f64::from(monitor.rect.top) - 1.0
                        && on_screen.y <= f64::from(monitor.rect.top + mh) + 1.0,
                    "{case}: {on_screen:?}"
                );
            }
        }
    }
}
