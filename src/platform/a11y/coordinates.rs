//! Where AT-SPI's numbers point: a window's boxes into the screen's logical
//! coordinates (GTK 3 reports them divided by its scale, GTK 4 under X11
//! relative to its window's surface), and the socket of a D-Bus address.

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
/// `scale`) is the screen box `window` with a window manager's frame
/// around it: GTK 3 gives its window's frame so (a title bar above, a
/// border on the other sides), at most [`FRAME_TOP`] pixels above and
/// [`FRAME_SIDE`] on each other side, within 2.
pub fn decorated_box(rect: Rect, scale: f64, window: Rect) -> bool {
    let margin_fits = |margin: f64, most: u32| (-2.0..=f64::from(most) + 2.0).contains(&margin);
    let (left, top) = (f64::from(rect.left) * scale, f64::from(rect.top) * scale);
    let (right, bottom) = (rect.right() as f64 * scale, rect.bottom() as f64 * scale);
    margin_fits(f64::from(window.left) - left, FRAME_SIDE)
        && margin_fits(f64::from(window.top) - top, FRAME_TOP)
        && margin_fits(right - window.right() as f64, FRAME_SIDE)
        && margin_fits(bottom - window.bottom() as f64, FRAME_SIDE)
}

/// The most a window manager's title bar adds above a window, in pixels.
const FRAME_TOP: u32 = 64;
/// The most its border adds on each other side.
const FRAME_SIDE: u32 = 12;

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

/// How a window's accessibility boxes become the screen's logical
/// coordinates: multiplied by `scale`, then moved by `offset`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mapping {
    pub scale: f64,
    pub offset: (i32, i32),
}

impl Mapping {
    /// Boxes already in the screen's coordinates.
    pub const SCREEN: Mapping = Mapping {
        scale: 1.0,
        offset: (0, 0),
    };

    /// Boxes divided by `scale`, from the screen's origin.
    pub fn scaled(scale: f64) -> Mapping {
        Mapping {
            scale,
            offset: (0, 0),
        }
    }

    /// `rect` (the toolkit's) on the screen.
    pub fn rect(&self, rect: Rect) -> Rect {
        let scaled = if self.scale == 1.0 {
            rect
        } else {
            rect.scaled(self.scale)
        };
        Rect::new(
            scaled.left + self.offset.0,
            scaled.top + self.offset.1,
            scaled.width,
            scaled.height,
        )
    }

    /// A point of the screen in the toolkit's coordinates.
    pub fn point_back(&self, (x, y): (f64, f64)) -> (f64, f64) {
        (
            (x - f64::from(self.offset.0)) / self.scale,
            (y - f64::from(self.offset.1)) / self.scale,
        )
    }

    /// The offset, where the boxes needed one.
    pub fn moved_by(&self) -> Option<(i32, i32)> {
        (self.offset != (0, 0)).then_some(self.offset)
    }
}

/// The widest margin a toolkit draws around its window's content inside
/// the X window (client-side decorations' shadows), in logical pixels.
const MAX_SURFACE_MARGIN: i64 = 64;

/// How the boxes of a window whose accessible frame is `frame` become the
/// screen's, its X window being `window`. `surface`: its toolkit reports
/// boxes relative to its window's surface (GTK 4 under X11, which has no
/// global coordinates there); they are also taken so when the frame lies at
/// the origin, away from its X window, and fits inside it (a frame in the
/// screen's coordinates is where its window is, and holds the window
/// manager's decorations). Such a frame is the X window's content, centred
/// in it within the toolkit's margins; `None` when it does not fit in the
/// window at all: no mapping makes its boxes the screen's.
pub fn mapping_between(frame: Rect, window: Rect, surface: bool) -> Option<Mapping> {
    mapped_between(frame, window, surface).map(skewed)
}

/// `mapping` moved further by `REPRISE_TEST_TREE_SKEW` ("dx,dy"), where it
/// is set (built for tests only): a toolkit whose boxes a wrong mapping
/// leaves off the screen's, for the checks that must catch it.
#[cfg(feature = "test-support")]
fn skewed(mapping: Mapping) -> Mapping {
    static SKEW: std::sync::OnceLock<Option<(i32, i32)>> = std::sync::OnceLock::new();
    let skew = SKEW.get_or_init(|| {
        let value = std::env::var("REPRISE_TEST_TREE_SKEW").ok()?;
        let (dx, dy) = value.split_once(',')?;
        Some((dx.trim().parse().ok()?, dy.trim().parse().ok()?))
    });
    match skew {
        Some((dx, dy)) => Mapping {
            offset: (mapping.offset.0 + dx, mapping.offset.1 + dy),
            ..mapping
        },
        None => mapping,
    }
}

#[cfg(not(feature = "test-support"))]
fn skewed(mapping: Mapping) -> Mapping {
    mapping
}

/// [`mapping_between`], as the toolkit's frame and its X window say.
fn mapped_between(frame: Rect, window: Rect, surface: bool) -> Option<Mapping> {
    let scale = scale_between(frame, window);
    let placed = frame.scaled(scale);
    let at_origin = frame.left == 0 && frame.top == 0;
    let away = (window.left.abs() > 2 || window.top.abs() > 2) && !within(frame, scale, window);
    let margins = (
        i64::from(window.width) - i64::from(placed.width),
        i64::from(window.height) - i64::from(placed.height),
    );
    let fits = (0..=2 * MAX_SURFACE_MARGIN).contains(&margins.0)
        && (0..=2 * MAX_SURFACE_MARGIN).contains(&margins.1);
    if !(surface || (at_origin && away && fits)) {
        return Some(Mapping::scaled(scale));
    }
    if !fits {
        return None;
    }
    Some(Mapping {
        scale,
        offset: (
            window.left + (margins.0 / 2) as i32 - placed.left,
            window.top + (margins.1 / 2) as i32 - placed.top,
        ),
    })
}

/// Whether a toolkit (its name and version, as the accessible application
/// gives them) reports boxes relative to its window's surface under X11.
pub fn surface_relative(toolkit: &str, version: &str) -> bool {
    toolkit.eq_ignore_ascii_case("gtk") && version.trim_start().starts_with("4.")
}

/// Puts every box of `tree` into the screen's logical coordinates.
pub fn to_screen(tree: &mut A11yTree, mapping: Mapping) {
    if mapping != Mapping::SCREEN {
        for node in &mut tree.nodes {
            node.rect = node.rect.map(|rect| mapping.rect(rect));
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
    use super::{
        Mapping, decorated_box, mapping_between, scale_between, surface_relative, unix_socket_path,
    };
    use reprise_models::Rect;

    #[test]
    fn a_gtk4_window_boxes_are_put_where_its_x_window_is() {
        // Measured on gtk4-demo under openbox and Xvfb: its frame is at the
        // origin, 10 pixels smaller than its X window, whose content it is.
        let frame = Rect::new(0, 0, 790, 590);
        let window = Rect::new(150, 120, 800, 600);
        let mapping = mapping_between(frame, window, true).unwrap();
        assert_eq!(mapping.offset, (155, 125));
        // The row "GTK Demo" of its sidebar, where the screen shows it.
        assert_eq!(
            mapping.rect(Rect::new(33, 51, 177, 36)),
            Rect::new(188, 176, 177, 36)
        );
        assert_eq!(mapping.point_back((482.0, 189.0)), (327.0, 64.0));
        // Found by the geometry alone when the toolkit does not say.
        assert_eq!(mapping_between(frame, window, false), Some(mapping));
        assert!(surface_relative("GTK", "4.8.3"));
        assert!(!surface_relative("GTK", "3.24.38"));
        assert!(!surface_relative("Qt", "5.15.8"));
    }

    #[test]
    fn a_frame_is_its_window_with_the_decorations_around_it_and_not_a_box_inside_it() {
        // zenity's list under openbox: a title bar of 20 pixels, a border
        // of 1.
        let window = Rect::new(683, 410, 235, 420);
        assert!(decorated_box(Rect::new(682, 390, 237, 445), 1.0, window));
        assert!(decorated_box(window, 1.0, window));
        // GDK_SCALE=2: the frame's box is the screen's halved.
        assert!(decorated_box(Rect::new(341, 195, 119, 223), 2.0, window));
        // A popup's box inside the window, a box beside it, a frame far
        // wider: not the window's.
        assert!(!decorated_box(Rect::new(700, 450, 100, 200), 1.0, window));
        assert!(!decorated_box(Rect::new(1000, 390, 237, 445), 1.0, window));
        assert!(!decorated_box(Rect::new(600, 390, 400, 445), 1.0, window));
    }

    #[test]
    fn a_frame_in_screen_coordinates_is_not_moved_and_one_that_fits_nowhere_is_refused() {
        // zenity (GTK 3): the frame holds the decorations over the window.
        let zenity = mapping_between(
            Rect::new(490, 302, 302, 221),
            Rect::new(491, 322, 300, 196),
            false,
        );
        assert_eq!(zenity, Some(Mapping::SCREEN));
        // A GTK 3 window at scale 2: divided, not moved.
        assert_eq!(
            mapping_between(
                Rect::new(282, 90, 236, 433),
                Rect::new(565, 200, 470, 840),
                false
            ),
            Some(Mapping::scaled(2.0))
        );
        // A window at the origin whose frame is there too: nothing to move.
        assert_eq!(
            mapping_between(Rect::new(0, 0, 300, 200), Rect::new(0, 0, 300, 200), false),
            Some(Mapping::SCREEN)
        );
        // A surface larger than its window: no mapping is trusted.
        assert_eq!(
            mapping_between(
                Rect::new(0, 0, 900, 700),
                Rect::new(150, 120, 800, 600),
                true
            ),
            None
        );
    }

    #[test]
    fn a_window_scale_comes_from_its_frame_and_its_x_window() {
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
