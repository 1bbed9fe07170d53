//! A press with nothing else to find it by (no element in a tree, no
//! segment of its own in the pixels: a row of a list the recorder could
//! not name, a blank place) is kept with the look of its place, as the
//! frame before it showed it. Replay presses at the recorded place in its
//! window only while the same shapes show there: with two rows added
//! above, that place holds another row, and pressing it would be a wrong
//! action.
//!
//! The place is the band of its area at the press's height, from the
//! area's left edge to a little past the press: what names a row is at
//! its start (an icon, a name), often far left of where it was pressed,
//! and a layout holds to its left edge when a window grows. Shapes, not
//! colours, are compared, a slice of the band at a time: the edges of its
//! luminance, a pixel's worth of give either way. A dark theme keeps a
//! row's text where it was and passes; another text, a larger font or a
//! moved control does not. Two blank places are the same place.

use image::RgbaImage;
use reprise_models::Rect;

use crate::Frame;
use crate::analysis::window_image;
use crate::vision::luma8;

/// What showed at a press's place.
#[derive(Debug, Clone, PartialEq)]
pub struct Look {
    /// The place's pixels, as the recorded frame has them.
    pub patch: RgbaImage,
    /// The place on the screen, relative to its area's top-left corner.
    pub at: Rect,
}

/// How far the place reaches past the press, and above and below it, in
/// screen pixels: a few letters, and a list row's height.
const PAST: i32 = 48;
const HALF_HEIGHT: i32 = 12;

/// A luminance step this large between neighbours is an edge.
const EDGE: i16 = 48;

/// The band is compared in slices this wide (image pixels): one word
/// changed is a slice changed, however much else the band holds.
const SLICE: u32 = 32;

/// Edge pixels of one slice that the other may lack (a caret, a pixel's
/// antialiasing), as a share of the slice's edges, and a few more.
const GIVE_SHARE: f64 = 0.15;
const GIVE_PIXELS: usize = 40;

impl Look {
    /// The look of the place of a press at `(x, y)` (screen) in `frame`,
    /// within `area` (the window or popup the press was made in).
    pub fn around(frame: &Frame, area: &Rect, (x, y): (f64, f64)) -> Option<Look> {
        let (cx, cy) = (x.floor() as i32, y.floor() as i32);
        let right = (cx + PAST).min(area.left.saturating_add_unsigned(area.width));
        let place = Rect::new(
            area.left,
            cy - HALF_HEIGHT,
            u32::try_from(right - area.left).ok()?,
            (2 * HALF_HEIGHT) as u32,
        )
        .intersection(area)?;
        let (patch, _) = window_image(frame, &place)?;
        Some(Look {
            patch,
            at: Rect::new(
                place.left - area.left,
                place.top - area.top,
                place.width,
                place.height,
            ),
        })
    }

    /// Whether the same shapes show at the place in `frame`, with its area
    /// now at `area`; else why not, in words.
    pub fn shows_in(&self, frame: &Frame, area: &Rect) -> Result<(), String> {
        let place = Rect::new(
            area.left + self.at.left,
            area.top + self.at.top,
            self.at.width,
            self.at.height,
        );
        if area.intersection(&place) != Some(place) {
            return Err("its place lies outside the window now".to_owned());
        }
        let live = window_image(frame, &place)
            .map(|(image, _)| image)
            .filter(|image| image.dimensions() != (0, 0))
            .ok_or_else(|| "its place is off the screen now".to_owned())?;
        let live = if live.dimensions() == self.patch.dimensions() {
            live
        } else {
            let (width, height) = self.patch.dimensions();
            image::imageops::resize(&live, width, height, image::imageops::Triangle)
        };
        let (recorded, now) = (edges(&self.patch), edges(&live));
        let slices = self.patch.width().div_ceil(SLICE);
        for slice in 0..slices {
            let columns = slice * SLICE..((slice + 1) * SLICE).min(self.patch.width());
            let (lost, gained) = (
                unmatched(&recorded, &now, columns.clone()),
                unmatched(&now, &recorded, columns.clone()),
            );
            let most = recorded
                .count(columns.clone())
                .max(now.count(columns.clone()));
            let give = (most as f64 * GIVE_SHARE) as usize + GIVE_PIXELS;
            if lost > give || gained > give {
                return Err(format!(
                    "what shows there differs from the recording ({} px from the window's left \
                     edge: {lost} of {} edge pixels gone, {gained} new)",
                    columns.start,
                    recorded.count(columns.clone())
                ));
            }
        }
        Ok(())
    }
}

/// Which pixels of an image sit on an edge of its luminance.
struct Edges {
    width: u32,
    height: u32,
    on: Vec<bool>,
}

impl Edges {
    fn get(&self, x: i64, y: i64) -> bool {
        x >= 0
            && y >= 0
            && x < i64::from(self.width)
            && y < i64::from(self.height)
            && self.on[(y as u32 * self.width + x as u32) as usize]
    }

    fn count(&self, columns: std::ops::Range<u32>) -> usize {
        (0..self.height)
            .flat_map(|y| columns.clone().map(move |x| (x, y)))
            .filter(|&(x, y)| self.get(i64::from(x), i64::from(y)))
            .count()
    }
}

fn edges(image: &RgbaImage) -> Edges {
    let (width, height) = image.dimensions();
    let luma: Vec<i16> = image
        .pixels()
        .map(|p| i16::from(luma8(p[0], p[1], p[2])))
        .collect();
    let at = |x: u32, y: u32| luma[(y * width + x) as usize];
    let on = (0..height)
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .map(|(x, y)| {
            let right = x + 1 < width && (at(x, y) - at(x + 1, y)).abs() >= EDGE;
            let below = y + 1 < height && (at(x, y) - at(x, y + 1)).abs() >= EDGE;
            right || below
        })
        .collect();
    Edges { width, height, on }
}

/// How many edge pixels of `one` in `columns` have no edge pixel of
/// `other` within a pixel of them.
fn unmatched(one: &Edges, other: &Edges, columns: std::ops::Range<u32>) -> usize {
    let mut count = 0;
    for y in 0..i64::from(one.height) {
        for x in columns.clone().map(i64::from) {
            if !one.get(x, y) {
                continue;
            }
            let near = (-1..=1).any(|dy| (-1..=1).any(|dx| other.get(x + dx, y + dy)));
            if !near {
                count += 1;
            }
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgba;
    use reprise_models::ScreenGeometry;

    /// A 400×300 screen of `background`, with a window at (100, 50) whose
    /// rows of "text" (dark bars of the given lengths, 20 px apart) start
    /// at (110, 60 + 20·i).
    fn screen(background: [u8; 3], ink: [u8; 3], rows: &[u32], shift: (i32, i32)) -> Frame {
        let mut image = RgbaImage::from_pixel(
            400,
            300,
            Rgba([background[0], background[1], background[2], 255]),
        );
        for (i, &length) in rows.iter().enumerate() {
            let top = 60 + shift.1 + 20 * i as i32;
            for x in 0..length {
                // Letters: 6 px of ink, 2 px of gap.
                if x % 8 < 6 {
                    for y in 0..10 {
                        let (px, py) = (110 + shift.0 + x as i32, top + y);
                        image.put_pixel(px as u32, py as u32, Rgba([ink[0], ink[1], ink[2], 255]));
                    }
                }
            }
        }
        Frame {
            image,
            screen: ScreenGeometry {
                rect: Rect::new(0, 0, 400, 300),
                scale_factor: 1.0,
            },
        }
    }

    const WHITE: [u8; 3] = [250, 250, 250];
    const BLACK: [u8; 3] = [20, 20, 20];

    #[test]
    fn the_same_rows_show_again_moved_or_in_a_dark_theme_and_another_row_does_not() {
        let window = Rect::new(100, 50, 200, 200);
        let recorded = screen(WHITE, BLACK, &[40, 64, 24], (0, 0));
        // The press on the second row's text.
        let look = Look::around(&recorded, &window, (130.0, 85.0)).expect("a look");
        assert_eq!(look.at, Rect::new(0, 23, 78, 24));
        look.shows_in(&recorded, &window).expect("the same screen");
        let moved = Rect::new(130, 70, 200, 200);
        look.shows_in(&screen(WHITE, BLACK, &[40, 64, 24], (30, 20)), &moved)
            .expect("the window moved with its rows");
        look.shows_in(&screen(BLACK, WHITE, &[40, 64, 24], (0, 0)), &window)
            .expect("a dark theme keeps the shapes");
        // A row added above: the place now holds the first row's text.
        let error = look
            .shows_in(&screen(WHITE, BLACK, &[16, 40, 64, 24], (0, 0)), &window)
            .expect_err("another row");
        assert!(error.contains("differs from the recording"), "{error}");
        // A shorter text in the row.
        assert!(
            look.shows_in(&screen(WHITE, BLACK, &[40, 30, 24], (0, 0)), &window)
                .is_err()
        );
        // A press on the blank end of the row is known by the row's start.
        let far = Look::around(&recorded, &window, (250.0, 85.0)).expect("a look");
        assert_eq!(far.at, Rect::new(0, 23, 198, 24));
        far.shows_in(&recorded, &window).expect("the same screen");
        let error = far
            .shows_in(&screen(WHITE, BLACK, &[16, 40, 64, 24], (0, 0)), &window)
            .expect_err("another row");
        assert!(error.contains("px from the window's left edge"), "{error}");
        // The window narrower than the place: not pressed.
        let narrow = Rect::new(100, 50, 120, 200);
        assert!(far.shows_in(&recorded, &narrow).is_err());
        // The window moved off the screen's edge: the place is gone.
        assert!(
            look.shows_in(&recorded, &Rect::new(600, 50, 200, 200))
                .is_err()
        );
    }

    #[test]
    fn two_blank_places_are_the_same_and_a_caret_is_given() {
        let window = Rect::new(100, 50, 200, 200);
        let blank = screen(WHITE, BLACK, &[], (0, 0));
        let look = Look::around(&blank, &window, (200.0, 200.0)).expect("a look");
        look.shows_in(&screen(BLACK, WHITE, &[], (0, 0)), &window)
            .expect("blank in any colour");
        let mut caret = blank.clone();
        for y in 192..208 {
            caret.image.put_pixel(200, y, Rgba([0, 0, 0, 255]));
        }
        look.shows_in(&caret, &window).expect("a caret is given");
    }

    #[test]
    fn a_press_near_its_area_edge_keeps_the_part_of_the_place_inside() {
        let window = Rect::new(100, 50, 200, 200);
        let frame = screen(WHITE, BLACK, &[40], (0, 0));
        let look = Look::around(&frame, &window, (105.0, 55.0)).expect("a look");
        assert_eq!(look.at, Rect::new(0, 0, 53, 17));
        assert_eq!(look.patch.dimensions(), (53, 17));
    }
}
