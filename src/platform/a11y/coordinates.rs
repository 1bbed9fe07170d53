//! Where AT-SPI's numbers point: a window's boxes into the screen's logical
//! coordinates (GTK reports them divided by its scale), and the socket of a
//! D-Bus address.

use reprise_models::{A11yTree, Rect};

/// The scale factors toolkits use.
const USUAL_SCALES: [f64; 8] = [1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0];

/// The factor from a window's accessibility boxes to the screen's logical
/// coordinates, from its accessible frame and its X window: GTK 3 reports
/// boxes divided by its scale (GDK_SCALE=2 halves them). The frame may
/// include the window manager's decorations, so the ratio is snapped to the
/// nearest usual scale.
pub fn scale_between(frame: Rect, window: Rect) -> f64 {
    if frame.width == 0 {
        return 1.0;
    }
    let ratio = f64::from(window.width) / f64::from(frame.width);
    USUAL_SCALES
        .into_iter()
        .min_by(|a, b| (a - ratio).abs().total_cmp(&(b - ratio).abs()))
        .filter(|scale| (scale - ratio).abs() / scale < 0.15)
        .unwrap_or(1.0)
}

/// Whether `rect` (in a toolkit's coordinates, the screen's divided by
/// `scale`) is the screen box `window`, within 2 pixels on every edge.
pub fn same_box(rect: Rect, scale: f64, window: Rect) -> bool {
    let close = |a: f64, b: i64| (a - b as f64).abs() <= 2.0;
    close(f64::from(rect.left) * scale, i64::from(window.left))
        && close(f64::from(rect.top) * scale, i64::from(window.top))
        && close(rect.right() as f64 * scale, window.right())
        && close(rect.bottom() as f64 * scale, window.bottom())
}

/// Whether `rect` (in a toolkit's coordinates, the screen's divided by
/// `scale`) lies inside the screen box `window`, within 2 pixels on every
/// edge: [`same_box`]'s tolerance.
pub(super) fn within(rect: Rect, scale: f64, window: Rect) -> bool {
    f64::from(rect.left) * scale >= f64::from(window.left) - 2.0
        && f64::from(rect.top) * scale >= f64::from(window.top) - 2.0
        && rect.right() as f64 * scale <= window.right() as f64 + 2.0
        && rect.bottom() as f64 * scale <= window.bottom() as f64 + 2.0
}

/// The usual scale whose boxes of `frame` make it exactly one of `windows`
/// (an override-redirect popup's accessible box is its X window's), if any.
pub fn scale_by_geometry(frame: Rect, windows: &[Rect]) -> Option<f64> {
    USUAL_SCALES
        .into_iter()
        .find(|&scale| windows.iter().any(|&window| same_box(frame, scale, window)))
}

/// Puts every box of `tree` into the screen's logical coordinates.
pub fn to_screen(tree: &mut A11yTree, scale: f64) {
    if scale != 1.0 {
        for node in &mut tree.nodes {
            node.rect = node.rect.map(|rect| rect.scaled(scale));
        }
    }
}

/// The socket of a D-Bus address `unix:path=…[,key=value…]`, with its
/// percent-escapes decoded; `None` for any other kind of address.
pub(super) fn unix_socket_path(address: &str) -> Option<std::path::PathBuf> {
    let escaped = address.strip_prefix("unix:path=")?.split(',').next()?;
    let bytes = escaped.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = std::str::from_utf8(bytes.get(at + 1..at + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            decoded.push(bytes[at]);
            at += 1;
        }
    }
    Some(std::path::PathBuf::from(
        <std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(decoded),
    ))
}

#[cfg(test)]
mod tests {
    use super::{scale_between, unix_socket_path};

    #[test]
    fn a_window_scale_comes_from_its_frame_and_its_x_window() {
        use reprise_models::Rect;
        // Measured on zenity under openbox: the frame holds the decorations.
        let check = |frame: Rect, window: Rect, expect: f64| {
            assert_eq!(scale_between(frame, window), expect, "{frame:?} {window:?}");
        };
        check(
            Rect::new(490, 302, 302, 221),
            Rect::new(491, 322, 300, 196),
            1.0,
        );
        check(
            Rect::new(282, 90, 236, 433),
            Rect::new(565, 200, 470, 840),
            2.0,
        );
        check(Rect::new(0, 0, 400, 300), Rect::new(0, 0, 600, 450), 1.5);
        // Nothing usual: taken as it is.
        check(Rect::new(0, 0, 100, 100), Rect::new(0, 0, 900, 900), 1.0);
    }

    #[test]
    fn a_socket_path_is_decoded_from_its_address() {
        let check = |address: &str, expect: Option<&str>| {
            assert_eq!(
                unix_socket_path(address),
                expect.map(std::path::PathBuf::from),
                "{address}"
            );
        };
        check(
            "unix:path=/tmp/a%2cb/at-spi/bus_0,guid=6298",
            Some("/tmp/a,b/at-spi/bus_0"),
        );
        check(
            "unix:path=/run/user/0/at-spi/bus",
            Some("/run/user/0/at-spi/bus"),
        );
        check("unix:path=/tmp/sp%20ace", Some("/tmp/sp ace"));
        check("unix:abstract=/tmp/dbus-x", None);
        check("unix:path=/tmp/bad%zz", None);
    }
}
