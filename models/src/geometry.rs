//! Screen geometry: points, rectangles and the scale between pixels and logical coordinates.

use serde::{Deserialize, Serialize};

/// A point in logical screen coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// An axis-aligned rectangle in logical screen coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rect {
    pub left: i32,
    pub top: i32,
    pub width: u32,
    pub height: u32,
}

impl Rect {
    pub fn new(left: i32, top: i32, width: u32, height: u32) -> Self {
        Rect {
            left,
            top,
            width,
            height,
        }
    }

    /// Whether the point lies inside (left/top inclusive, right/bottom exclusive).
    pub fn contains(&self, x: f64, y: f64) -> bool {
        x >= f64::from(self.left)
            && y >= f64::from(self.top)
            && x < f64::from(self.left) + f64::from(self.width)
            && y < f64::from(self.top) + f64::from(self.height)
    }

    /// Its middle point.
    pub fn center(&self) -> (f64, f64) {
        (
            f64::from(self.left) + f64::from(self.width) / 2.0,
            f64::from(self.top) + f64::from(self.height) / 2.0,
        )
    }

    /// Whether it holds the middle of `other`, or `other` holds its
    /// middle: the two boxes are one element's, not neighbours touching.
    pub fn holds_middle_of(&self, other: &Rect) -> bool {
        let (x, y) = other.center();
        let (own_x, own_y) = self.center();
        self.contains(x, y) || other.contains(own_x, own_y)
    }

    /// The smallest rectangle that holds both.
    pub fn union(&self, other: &Rect) -> Rect {
        let left = self.left.min(other.left);
        let top = self.top.min(other.top);
        let right = self.right().max(other.right());
        let bottom = self.bottom().max(other.bottom());
        Rect::new(
            left,
            top,
            (right - i64::from(left)) as u32,
            (bottom - i64::from(top)) as u32,
        )
    }

    /// This rectangle with `by` more on each side.
    pub fn grown(&self, by: u32) -> Rect {
        let by_signed = i32::try_from(by).unwrap_or(i32::MAX);
        Rect::new(
            self.left.saturating_sub(by_signed),
            self.top.saturating_sub(by_signed),
            self.width.saturating_add(by.saturating_mul(2)),
            self.height.saturating_add(by.saturating_mul(2)),
        )
    }

    /// This rectangle with every coordinate multiplied by `factor`.
    pub fn scaled(&self, factor: f64) -> Rect {
        let left = (f64::from(self.left) * factor).round();
        let top = (f64::from(self.top) * factor).round();
        let right = ((f64::from(self.left) + f64::from(self.width)) * factor).round();
        let bottom = ((f64::from(self.top) + f64::from(self.height)) * factor).round();
        Rect::new(
            left as i32,
            top as i32,
            (right - left).max(0.0) as u32,
            (bottom - top).max(0.0) as u32,
        )
    }

    pub fn right(&self) -> i64 {
        i64::from(self.left) + i64::from(self.width)
    }

    pub fn bottom(&self) -> i64 {
        i64::from(self.top) + i64::from(self.height)
    }

    /// The part both rectangles cover, if any.
    pub fn intersection(&self, other: &Rect) -> Option<Rect> {
        let left = self.left.max(other.left);
        let top = self.top.max(other.top);
        let right = self.right().min(other.right());
        let bottom = self.bottom().min(other.bottom());
        (right > i64::from(left) && bottom > i64::from(top)).then(|| {
            Rect::new(
                left,
                top,
                (right - i64::from(left)) as u32,
                (bottom - i64::from(top)) as u32,
            )
        })
    }
}

/// The monitor an image or a recording was taken on: its logical rectangle and
/// the scale factor from logical coordinates to pixels (2.0 on a HiDPI screen
/// where a 1440-point monitor gives 2880-pixel images; usually 1.0 on X11).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ScreenGeometry {
    pub rect: Rect,
    pub scale_factor: f64,
}

impl ScreenGeometry {
    /// The pixel size of a full-screen image of this monitor.
    pub fn pixel_size(&self) -> (u32, u32) {
        (
            (f64::from(self.rect.width) * self.scale_factor).round() as u32,
            (f64::from(self.rect.height) * self.scale_factor).round() as u32,
        )
    }
}

/// One monitor of the desktop: its name (the output's, or `head N` where
/// the display names none), its logical rectangle on the desktop, and
/// whether it is the primary one. A recording keeps its desktop's monitors;
/// its frames cover all of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Monitor {
    pub name: String,
    pub rect: Rect,
    #[serde(default)]
    pub primary: bool,
}

/// The number (from 1, in the list's order) of the monitor holding a
/// point, if one does.
pub fn monitor_at(monitors: &[Monitor], x: f64, y: f64) -> Option<usize> {
    monitors
        .iter()
        .position(|monitor| monitor.rect.contains(x, y))
        .map(|index| index + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_are_one_elements_where_one_holds_the_others_middle_not_where_they_touch() {
        // gtk4-demo's row found by its text, and the row below it, whose
        // box a skewed tree gave: they overlap by one pixel.
        let row = Rect::new(335, 159, 223, 34);
        let below = Rect::new(368, 192, 177, 36);
        assert!(row.intersection(&below).is_some());
        assert!(!row.holds_middle_of(&below) && !below.holds_middle_of(&row));
        // A text inside its label, and a label inside a larger row.
        let text = Rect::new(380, 200, 90, 16);
        assert!(below.holds_middle_of(&text) && text.holds_middle_of(&below));
        assert!(Rect::new(300, 150, 400, 90).holds_middle_of(&below));
        assert_eq!(below.center(), (456.5, 210.0));
    }

    #[test]
    fn two_rectangles_intersect_where_both_cover() {
        let screen = Rect::new(0, 0, 1920, 1080);
        let check = |rect: Rect| screen.intersection(&rect);
        assert_eq!(
            check(Rect::new(10, 20, 30, 40)),
            Some(Rect::new(10, 20, 30, 40))
        );
        assert_eq!(
            check(Rect::new(1900, -10, 50, 30)),
            Some(Rect::new(1900, 0, 20, 20))
        );
        assert_eq!(
            check(Rect::new(1920, 0, 10, 10)),
            None,
            "touching is not covering"
        );
        assert_eq!(check(Rect::new(5, 5, 0, 10)), None, "an empty rectangle");
    }

    #[test]
    fn a_union_holds_both_rectangles() {
        let check = |a: Rect, b: Rect| (a.union(&b), b.union(&a));
        let side_by_side = Rect::new(0, 0, 1600, 600);
        assert_eq!(
            check(Rect::new(0, 0, 800, 600), Rect::new(800, 0, 800, 600)),
            (side_by_side, side_by_side)
        );
        let offset = Rect::new(-100, 0, 900, 700);
        assert_eq!(
            check(Rect::new(0, 0, 800, 600), Rect::new(-100, 100, 200, 600)),
            (offset, offset)
        );
        let inside = Rect::new(0, 0, 800, 600);
        assert_eq!(check(inside, Rect::new(10, 10, 5, 5)), (inside, inside));
    }

    #[test]
    fn a_point_is_on_the_monitor_that_holds_it() {
        let monitor = |name: &str, left| Monitor {
            name: name.into(),
            rect: Rect::new(left, 0, 800, 600),
            primary: left == 0,
        };
        let monitors = [monitor("left", 0), monitor("right", 800)];
        let check = |x, y| monitor_at(&monitors, x, y);
        assert_eq!(check(0.0, 0.0), Some(1));
        assert_eq!(check(799.5, 599.0), Some(1));
        assert_eq!(
            check(800.0, 10.0),
            Some(2),
            "the right edge is the next one's"
        );
        assert_eq!(check(1599.0, 300.0), Some(2));
        assert_eq!(check(1600.0, 300.0), None, "past the last");
        assert_eq!(check(100.0, 600.0), None, "below both");
        assert_eq!(monitor_at(&[], 1.0, 1.0), None);
    }
}
