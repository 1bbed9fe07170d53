//! The screen's pixels straight from the X server: the root window read
//! with `GetImage` (where its pixels are BGRX), the monitors RandR lists,
//! and DAMAGE to tell whether anything was drawn since the last look.

use reprise_models::{Monitor, Rect};
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{ConnectionExt as _, Window};
use x11rb::rust_connection::RustConnection;

use super::query_err;
use crate::platform::PlatformError;

fn capture_err(err: impl std::fmt::Display) -> PlatformError {
    PlatformError::Capture(err.to_string())
}

/// `rect` of `root` through `GetImage`, as RGBA. Only for a screen whose
/// pixels are BGRX, four bytes each (see [`RootCapture::desktop`]).
fn get_image_rgba(
    conn: &RustConnection,
    root: Window,
    rect: Rect,
) -> Result<image::RgbaImage, PlatformError> {
    use x11rb::protocol::xproto::ImageFormat;
    let narrow = |value: i64| {
        i16::try_from(value)
            .map_err(|_| capture_err(format!("{rect:?} is outside X11's coordinates")))
    };
    let (x, y) = (narrow(i64::from(rect.left))?, narrow(i64::from(rect.top))?);
    let (width, height) = (
        u16::try_from(rect.width).map_err(capture_err)?,
        u16::try_from(rect.height).map_err(capture_err)?,
    );
    let reply = conn
        .get_image(ImageFormat::Z_PIXMAP, root, x, y, width, height, !0)
        .map_err(capture_err)?
        .reply()
        .map_err(capture_err)?;
    let mut rgba = reply.data;
    bgrx_to_rgba(&mut rgba);
    image::RgbaImage::from_raw(rect.width, rect.height, rgba)
        .ok_or_else(|| capture_err("GetImage returned an unexpected size"))
}

/// A DAMAGE object on the root window, and an XFixes region its damage is
/// moved into when it is looked at (to learn where it was).
#[derive(Debug, Clone, Copy)]
struct DamageWatch {
    damage: x11rb::protocol::damage::Damage,
    parts: x11rb::protocol::xfixes::Region,
}

/// A DAMAGE object on `root` that reports when its damage goes from empty to
/// not empty (it starts empty: the first frame is taken whole regardless).
fn watch_damage(conn: &RustConnection, root: Window) -> Result<DamageWatch, PlatformError> {
    use x11rb::protocol::damage::{ConnectionExt as _, ReportLevel};
    use x11rb::protocol::xfixes::ConnectionExt as _;
    conn.xfixes_query_version(5, 0)
        .map_err(capture_err)?
        .reply()
        .map_err(capture_err)?;
    conn.damage_query_version(1, 1)
        .map_err(capture_err)?
        .reply()
        .map_err(capture_err)?;
    let parts = conn.generate_id().map_err(capture_err)?;
    conn.xfixes_create_region(parts, &[])
        .map_err(capture_err)?
        .check()
        .map_err(capture_err)?;
    let damage = conn.generate_id().map_err(capture_err)?;
    conn.damage_create(damage, root, ReportLevel::NON_EMPTY)
        .map_err(capture_err)?
        .check()
        .map_err(capture_err)?;
    Ok(DamageWatch { damage, parts })
}

/// What was drawn on the screen since the last look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drawn {
    Nothing,
    /// Something, all of it inside this rectangle (device pixels of the
    /// root window).
    Inside(Rect),
    /// The display cannot say (no DAMAGE): anything may have changed.
    Unknown,
}

/// BGRX pixels (X11's 32-bit little-endian layout) into RGBA, in place: one
/// word operation a pixel, which the compiler turns into vector code.
fn bgrx_to_rgba(pixels: &mut [u8]) {
    for pixel in pixels.chunks_exact_mut(4) {
        let bgrx = u32::from_le_bytes([pixel[0], pixel[1], pixel[2], pixel[3]]);
        let rgba = (bgrx & 0x0000_ff00)
            | ((bgrx >> 16) & 0x0000_00ff)
            | ((bgrx & 0x0000_00ff) << 16)
            | 0xff00_0000;
        pixel.copy_from_slice(&rgba.to_le_bytes());
    }
}

/// The desktop's monitors, in the display's order: RandR's (1.5) active
/// monitors, each named by its output. (Xinerama over several X screens is
/// not read: there, the input the recorder hears carries other
/// coordinates.)
pub fn monitors_of(conn: &RustConnection, root: Window) -> Result<Vec<Monitor>, PlatformError> {
    use x11rb::protocol::randr::ConnectionExt as _;
    let mut monitors = Vec::new();
    for info in conn
        .randr_get_monitors(root, true)
        .map_err(query_err)?
        .reply()
        .map_err(query_err)?
        .monitors
    {
        let name = conn
            .get_atom_name(info.name)
            .map_err(query_err)?
            .reply()
            .map_err(query_err)?
            .name;
        monitors.push(Monitor {
            name: String::from_utf8_lossy(&name).into_owned(),
            rect: Rect::new(
                i32::from(info.x),
                i32::from(info.y),
                u32::from(info.width),
                u32::from(info.height),
            ),
            primary: info.primary,
        });
    }
    Ok(monitors)
}

/// Screenshots of the desktop through a connection kept open: a raw
/// `GetImage` of its rectangle of the root window. xcap, the portable path,
/// opens three connections per frame and converts pixel by pixel (about
/// three times the cost, for the same pixels).
pub struct RootCapture {
    conn: RustConnection,
    root: Window,
    rect: Rect,
    /// The desktop's monitors ([`monitors_of`]).
    monitors: Vec<Monitor>,
    /// A DAMAGE object on the root window, where the server has the
    /// extension: it says what was drawn since the last look.
    damage: Option<DamageWatch>,
}

reprise_models::debug_showing!(RootCapture, rect);

impl RootCapture {
    /// The desktop, in device pixels: the primary monitor's rectangle (the
    /// first when none says it is primary, the order xcap lists them in),
    /// or where the display has several monitors, the rectangle that holds
    /// them all (a window on any of them is in every frame). `None` when
    /// the screen's pixels are not 32-bit little-endian BGRX, the layout
    /// converted here (xcap converts the others).
    pub fn desktop() -> Result<Option<RootCapture>, PlatformError> {
        use x11rb::protocol::xproto::ImageOrder;
        let (conn, screen_num) =
            x11rb::connect(None).map_err(|err| PlatformError::Connect(err.to_string()))?;
        let setup = conn.setup();
        let screen = &setup.roots[screen_num];
        let root = screen.root;
        let bgrx = setup.image_byte_order == ImageOrder::LSB_FIRST
            && screen.root_depth >= 24
            && setup
                .pixmap_formats
                .iter()
                .any(|format| format.depth == screen.root_depth && format.bits_per_pixel == 32)
            && screen
                .allowed_depths
                .iter()
                .flat_map(|depth| &depth.visuals)
                .find(|visual| visual.visual_id == screen.root_visual)
                .is_some_and(|visual| {
                    (visual.red_mask, visual.green_mask, visual.blue_mask)
                        == (0xff_0000, 0xff00, 0xff)
                });
        if !bgrx {
            return Ok(None);
        }
        let monitors = monitors_of(&conn, root)?;
        let rect = match monitors.as_slice() {
            [] => return Ok(None),
            [only] => only.rect,
            several => several
                .iter()
                .map(|monitor| monitor.rect)
                .reduce(|all, rect| all.union(&rect))
                .expect("several monitors"),
        };
        let damage = watch_damage(&conn, root)
            .inspect_err(|err| tracing::debug!("no DAMAGE, every look captures: {err}"))
            .ok();
        Ok(Some(RootCapture {
            conn,
            root,
            rect,
            monitors,
            damage,
        }))
    }

    /// What was drawn on the screen since the last call ([`Drawn::Unknown`]
    /// without the DAMAGE extension). A round
    /// trip first, so that every drawing the server did before this call
    /// has reported itself; then the damage is moved out (and so reset), so
    /// a drawing after this call reports itself at the next.
    pub fn drawn_since_last_look(&self) -> Result<Drawn, PlatformError> {
        use x11rb::protocol::Event;
        use x11rb::protocol::damage::ConnectionExt as _;
        use x11rb::protocol::xfixes::ConnectionExt as _;
        let Some(watch) = self.damage else {
            return Ok(Drawn::Unknown);
        };
        self.conn
            .get_input_focus()
            .map_err(capture_err)?
            .reply()
            .map_err(capture_err)?;
        let mut drawn = false;
        while let Some(event) = self.conn.poll_for_event().map_err(capture_err)? {
            drawn |= matches!(event, Event::DamageNotify(_));
        }
        if !drawn {
            return Ok(Drawn::Nothing);
        }
        self.conn
            .damage_subtract(watch.damage, x11rb::NONE, watch.parts)
            .map_err(capture_err)?;
        let extents = self
            .conn
            .xfixes_fetch_region(watch.parts)
            .map_err(capture_err)?
            .reply()
            .map_err(capture_err)?
            .extents;
        let drawn = Rect::new(
            i32::from(extents.x),
            i32::from(extents.y),
            u32::from(extents.width),
            u32::from(extents.height),
        );
        Ok(match drawn.intersection(&self.rect) {
            Some(inside) => Drawn::Inside(inside),
            None => Drawn::Nothing,
        })
    }

    /// The pixels of `rect` (device pixels of the root window, inside the
    /// monitor), as RGBA.
    pub fn capture_rect(&self, rect: Rect) -> Result<image::RgbaImage, PlatformError> {
        get_image_rgba(&self.conn, self.root, rect)
    }

    /// The monitor's rectangle in device pixels of the root window.
    /// The desktop's monitors ([`monitors_of`]).
    pub fn monitors(&self) -> &[Monitor] {
        &self.monitors
    }

    /// What is captured, on the root window.
    pub fn rect(&self) -> Rect {
        self.rect
    }

    /// The captured size in device pixels (a frame's size).
    pub fn size(&self) -> (u32, u32) {
        (self.rect.width, self.rect.height)
    }

    /// One frame, as RGBA pixels.
    pub fn capture(&self) -> Result<image::RgbaImage, PlatformError> {
        get_image_rgba(&self.conn, self.root, self.rect)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn bgrx_pixels_become_opaque_rgba() {
        let mut pixels = vec![0x10, 0x20, 0x30, 0x00, 0xff, 0x00, 0x80, 0x7f];
        super::bgrx_to_rgba(&mut pixels);
        assert_eq!(pixels, [0x30, 0x20, 0x10, 0xff, 0x80, 0x00, 0xff, 0xff]);
    }
}
