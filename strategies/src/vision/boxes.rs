//! Boxes drawn as a thin border: the buttons, text fields and combo boxes of
//! toolkits such as GTK and Qt. Their fill is often a gradient (many colours,
//! so no flat region) and their rounded, anti-aliased corners break the border
//! into four separate lines of slightly different colours, so neither the
//! flat-region step nor a connected outline finds them. Here a border is
//! found as edges: horizontal and vertical runs of pixels that contrast with
//! their neighbour across the run; a top and a bottom run of the same extent,
//! joined by a left and a right run, make a box. Where linked buttons meet,
//! a side may be a step from one fill to the other instead of a line; boxes
//! that share a border are the parts of one control, and their chain is a box
//! too (a spin button, a row of linked toggle buttons).

use super::PixelRect;

/// Thresholds, in image pixels and luminance levels (0 to 255).
#[derive(Debug, Clone)]
pub struct BoxOptions {
    /// A pixel is on an edge when its luminance differs from the pixel across
    /// the edge by at least this much.
    pub min_contrast: u8,
    /// ... and from the pixel on its other side by at least this much, in the
    /// same direction (a line is darker, or lighter, than both sides).
    pub min_weak_contrast: u8,
    /// Edge runs shorter than this are glyph strokes, not borders.
    pub min_run: u32,
    /// How far the ends of the four sides may miss each other (rounded
    /// corners shorten each side by a few pixels).
    pub corner_slack: u32,
    pub min_height: u32,
    pub max_height: u32,
    /// Share of a side's length that its edge run must cover.
    pub min_side_coverage: f64,
}

impl Default for BoxOptions {
    fn default() -> Self {
        BoxOptions {
            min_contrast: 24,
            min_weak_contrast: 8,
            min_run: 12,
            corner_slack: 5,
            min_height: 12,
            max_height: 120,
            min_side_coverage: 0.7,
        }
    }
}

/// An edge run: along a row (`at` is the row) or a column (`at` is the
/// column), from `start` to `end` inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Run {
    pub(super) at: u32,
    pub(super) start: u32,
    pub(super) end: u32,
}

/// Luminance of an RGBA image, one byte a pixel ([`super::luma8`]).
pub fn luminance(image: &image::RgbaImage) -> Vec<u8> {
    image
        .pixels()
        .map(|pixel| {
            let [r, g, b, _] = pixel.0;
            super::luma8(r, g, b)
        })
        .collect()
}

/// Runs of line pixels along one axis. `horizontal`: along rows. A line
/// pixel belongs to a line one or two pixels thick that contrasts with what
/// lies on both sides of it (above and below for a row).
fn edge_runs(
    luma: &[u8],
    width: u32,
    height: u32,
    horizontal: bool,
    options: &BoxOptions,
) -> Vec<Run> {
    let (w, h) = (width as usize, height as usize);
    let strong = i16::from(options.min_contrast);
    let weak = i16::from(options.min_weak_contrast);
    let on_line = |idx: usize, stride: usize, before2: bool, after2: bool| {
        on_line(luma, (idx, stride), (before2, after2), (strong, weak))
    };
    let mut runs = Vec::new();
    // A run of `line` that ended before `pos`, if long enough.
    let close = |line: usize, first: usize, pos: usize, runs: &mut Vec<Run>| {
        if (pos - first) as u32 >= options.min_run {
            runs.push(Run {
                at: line as u32,
                start: first as u32,
                end: pos as u32 - 1,
            });
        }
    };
    // Row by row either way, so the pixels are read in memory order. The
    // first and last line have no pixel on one side: no line there.
    if horizontal {
        for y in 1..h.saturating_sub(1) {
            let mut start: Option<usize> = None;
            for x in 0..=w {
                let here = x < w && on_line(y * w + x, w, y >= 2, y + 2 < h);
                match (here, start) {
                    (true, None) => start = Some(x),
                    (false, Some(first)) => {
                        close(y, first, x, &mut runs);
                        start = None;
                    }
                    _ => {}
                }
            }
        }
    } else {
        let mut starts: Vec<Option<usize>> = vec![None; w];
        for y in 0..=h {
            let inner = 1..w.saturating_sub(1);
            for (x, start) in starts
                .iter_mut()
                .enumerate()
                .take(inner.end)
                .skip(inner.start)
            {
                let here = y < h && on_line(y * w + x, 1, x >= 2, x + 2 < w);
                match (here, *start) {
                    (true, None) => *start = Some(y),
                    (false, Some(first)) => {
                        close(x, first, y, &mut runs);
                        *start = None;
                    }
                    _ => {}
                }
            }
        }
        runs.sort_unstable_by_key(|run| (run.at, run.start));
    }
    runs
}

/// Whether the pixel at `idx` is on a line running across `stride` (the
/// step to the neighbour across the line); `before2`/`after2`: whether the
/// pixels two steps across exist. A line is darker (or lighter) than both
/// sides: strongly on one side, at least weakly on the other (a button's
/// outer edge often meets a shadow or a fill of nearly its shade).
#[inline]
fn on_line(
    luma: &[u8],
    (idx, stride): (usize, usize),
    (before2, after2): (bool, bool),
    (strong, weak): (i16, i16),
) -> bool {
    let here = i16::from(luma[idx]);
    let step = |other: usize| here - i16::from(luma[other]);
    let between = |a: i16, b: i16| {
        a.signum() == b.signum() && a.abs().max(b.abs()) >= strong && a.abs().min(b.abs()) >= weak
    };
    let (before, after) = (step(idx - stride), step(idx + stride));
    between(before, after)
        || (after2 && after.abs() < weak && between(before, step(idx + 2 * stride)))
        || (before2 && before.abs() < weak && between(step(idx - 2 * stride), after))
}

/// How many of the rows `from..=to` a side must cover.
fn side_coverage_needed(from: u32, to: u32, options: &BoxOptions) -> u32 {
    (f64::from(to - from + 1) * options.min_side_coverage).ceil() as u32
}

/// The runs after `runs[idx]`, at most `max_distance` lines further, whose
/// ends are within `slack` of its ends: the other edge of a box or a track.
pub(super) fn same_extent_after(
    runs: &[Run],
    idx: usize,
    max_distance: u32,
    slack: u32,
) -> impl Iterator<Item = &Run> {
    let first = runs[idx];
    runs[idx + 1..]
        .iter()
        .take_while(move |run| run.at <= first.at + max_distance)
        .filter(move |run| {
            run.at > first.at
                && run.start.abs_diff(first.start) <= slack
                && run.end.abs_diff(first.end) <= slack
        })
}

/// Whether column `x` is a step edge (the shade changes from column `x - 1`
/// to `x + 1`) along enough of the rows `from..=to`: where two linked
/// buttons meet, one's fill ends at the other's border with no line between.
fn is_step_side(luma: &[u8], width: u32, x: u32, from: u32, to: u32, options: &BoxOptions) -> bool {
    if x == 0 || x + 1 >= width {
        return false;
    }
    let needed = side_coverage_needed(from, to, options);
    let w = width as usize;
    let steps = (from..=to)
        .filter(|&y| {
            let row = y as usize * w;
            luma[row + x as usize - 1].abs_diff(luma[row + x as usize + 1]) >= options.min_contrast
        })
        .count();
    steps as u32 >= needed
}

/// Whether a run in column (or row) `at` of `runs` (sorted by `at`) covers
/// enough of `from..=to`.
fn has_side(runs: &[Run], at: u32, from: u32, to: u32, options: &BoxOptions) -> bool {
    let first = runs.partition_point(|run| run.at < at);
    let needed = side_coverage_needed(from, to, options);
    runs[first..]
        .iter()
        .take_while(|run| run.at == at)
        .any(|run| {
            run.end >= from
                && run.start <= to
                && run.end.min(to) - run.start.max(from) + 1 >= needed
        })
}

/// The line runs of an image along its rows and its columns, each in order
/// of `at` (one line after another): what boxes and sliders are made of.
#[derive(Debug, Clone)]
pub struct Edges {
    pub(super) rows: Vec<Run>,
    pub(super) columns: Vec<Run>,
}

impl Edges {
    pub fn find(luma: &[u8], width: u32, height: u32, options: &BoxOptions) -> Edges {
        Edges {
            rows: edge_runs(luma, width, height, true, options),
            columns: edge_runs(luma, width, height, false, options),
        }
    }
}

/// The boxes with a visible border in an image given as its luminance, from
/// its [`Edges`].
pub fn bordered_boxes(
    edges: &Edges,
    luma: &[u8],
    width: u32,
    options: &BoxOptions,
) -> Vec<PixelRect> {
    let (rows, columns) = (&edges.rows, &edges.columns);
    let mut boxes = Vec::new();
    for (idx, top) in rows.iter().enumerate() {
        let slack = options.corner_slack;
        // The nearest run below with the same extent is this box's bottom: a
        // farther one would close a box stacked below, and one too near means
        // this run is the bottom of a box (or one row of a thick border).
        let bottom = same_extent_after(rows, idx, options.max_height, slack).next();
        let Some(bottom) = bottom.filter(|run| run.at >= top.at + options.min_height) else {
            continue;
        };
        let (y0, y1) = (top.at + slack, bottom.at.saturating_sub(slack));
        if y1 <= y0 {
            continue;
        }
        // The sides: columns near the ends of the top and bottom (rounded
        // corners put them up to `slack` pixels further out).
        let (lo, hi) = (top.start.min(bottom.start), top.end.max(bottom.end));
        // A drawn line first; a step edge only where there is none (a step
        // is also seen a pixel outside every line).
        let line_side = |x: u32| has_side(columns, x, y0, y1, options);
        let step_side = |x: u32| is_step_side(luma, width, x, y0, y1, options);
        let lefts = lo.saturating_sub(slack)..=lo + 1;
        let rights = hi.saturating_sub(1)..=(hi + slack).min(width - 1);
        let left = lefts
            .clone()
            .find(|&x| line_side(x))
            .or_else(|| lefts.clone().find(|&x| step_side(x)));
        let right = rights
            .clone()
            .rev()
            .find(|&x| line_side(x))
            .or_else(|| rights.clone().rev().find(|&x| step_side(x)));
        let (Some(left), Some(right)) = (left, right) else {
            continue;
        };
        if right <= left {
            continue;
        }
        boxes.push(PixelRect {
            x: left,
            y: top.at,
            width: right - left + 1,
            height: bottom.at - top.at + 1,
        });
    }
    let groups = linked_groups(&boxes);
    boxes.extend(groups);
    boxes
}

/// Boxes that share a border line with a neighbour of the same extent are
/// the parts of one linked control: a spin button's entry and its two
/// buttons, a row of linked toggle buttons. Each maximal chain of two or more
/// parts is an element too (the parts stay).
fn linked_groups(boxes: &[PixelRect]) -> Vec<PixelRect> {
    const SLACK: u32 = 2;
    // Whether `after` is the next part after `rect`: below it (vertical) or
    // right of it, sharing its border line.
    let follows = |rect: &PixelRect, after: &PixelRect, vertical: bool| {
        if vertical {
            after.y.abs_diff(rect.bottom() - 1) <= 1
                && after.x.abs_diff(rect.x) <= SLACK
                && after.right().abs_diff(rect.right()) <= SLACK
        } else {
            after.x.abs_diff(rect.right() - 1) <= 1
                && after.y.abs_diff(rect.y) <= SLACK
                && after.bottom().abs_diff(rect.bottom()) <= SLACK
        }
    };
    let mut groups: Vec<PixelRect> = Vec::new();
    for vertical in [true, false] {
        let next: Vec<Option<usize>> = boxes
            .iter()
            .map(|rect| {
                boxes
                    .iter()
                    .position(|after| follows(rect, after, vertical))
            })
            .collect();
        let mut has_previous = vec![false; boxes.len()];
        for after in next.iter().flatten() {
            has_previous[*after] = true;
        }
        // Each chain from its first part; a bound on the parts guards
        // against a cycle of near-identical boxes.
        for first in (0..boxes.len()).filter(|idx| !has_previous[*idx]) {
            let (mut group, mut last, mut parts) = (boxes[first], first, 1);
            while let Some(after) = next[last].filter(|_| parts < 16) {
                group = group.union(&boxes[after]);
                last = after;
                parts += 1;
            }
            if parts >= 2 && !groups.contains(&group) {
                groups.push(group);
            }
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgba, RgbaImage};

    fn find_boxes(luma: &[u8], width: u32, height: u32) -> Vec<PixelRect> {
        let options = BoxOptions::default();
        let edges = Edges::find(luma, width, height, &options);
        bordered_boxes(&edges, luma, width, &options)
    }

    /// A light window with GTK-like buttons: a 1 px border whose top and
    /// sides are one grey and bottom a darker one, anti-aliased rounded
    /// corners, and a vertical gradient fill.
    fn gtk_like(buttons: &[PixelRect]) -> RgbaImage {
        let mut image = RgbaImage::from_pixel(300, 200, Rgba([246, 245, 244, 255]));
        for rect in buttons {
            let (x0, y0, x1, y1) = (rect.x, rect.y, rect.right() - 1, rect.bottom() - 1);
            for y in y0..=y1 {
                let shade = 250 - ((y - y0) * 20 / rect.height) as u8;
                for x in x0..=x1 {
                    image.put_pixel(x, y, Rgba([shade, shade, shade - 2, 255]));
                }
            }
            for x in x0 + 3..=x1 - 3 {
                image.put_pixel(x, y0, Rgba([205, 199, 194, 255]));
                image.put_pixel(x, y1, Rgba([187, 183, 177, 255]));
            }
            for y in y0 + 3..=y1 - 3 {
                image.put_pixel(x0, y, Rgba([205, 199, 194, 255]));
                image.put_pixel(x1, y, Rgba([205, 199, 194, 255]));
            }
            // Rounded corners: anti-aliased diagonals, and the background
            // where the square corner would be.
            for (cx, cy, dx, dy) in [
                (x0, y0, 1i32, 1i32),
                (x1, y0, -1, 1),
                (x0, y1, 1, -1),
                (x1, y1, -1, -1),
            ] {
                let at =
                    |k: i32, l: i32| ((cx as i32 + k * dx) as u32, (cy as i32 + l * dy) as u32);
                for (k, l) in [(0, 0), (1, 0), (0, 1)] {
                    let (x, y) = at(k, l);
                    image.put_pixel(x, y, Rgba([246, 245, 244, 255]));
                }
                for (k, l, grey) in [(2, 0, 225), (1, 1, 212), (0, 2, 225)] {
                    let (x, y) = at(k, l);
                    image.put_pixel(x, y, Rgba([grey, grey, grey, 255]));
                }
            }
        }
        image
    }

    fn rect(x: u32, y: u32, width: u32, height: u32) -> PixelRect {
        PixelRect {
            x,
            y,
            width,
            height,
        }
    }

    #[test]
    fn finds_gradient_buttons_with_rounded_corners_and_stacked_ones_apart() {
        let buttons = [
            rect(20, 20, 140, 32),
            rect(20, 62, 140, 32),
            rect(180, 30, 60, 28),
        ];
        let image = gtk_like(&buttons);
        let luma = luminance(&image);
        let found = find_boxes(&luma, 300, 200);
        for button in &buttons {
            assert!(
                found.iter().any(|b| b == button),
                "{button:?} not in {found:?}"
            );
        }
        assert_eq!(found.len(), buttons.len(), "nothing else: {found:?}");
    }

    #[test]
    fn a_stack_sharing_its_borders_is_three_parts_and_one_group() {
        // A vertical spin button: entry, plus and minus, one border apart.
        let parts = [
            rect(20, 20, 34, 34),
            rect(20, 53, 34, 34),
            rect(20, 86, 34, 34),
        ];
        let image = gtk_like(&parts);
        let found = find_boxes(&luminance(&image), 300, 200);
        for part in &parts {
            assert!(found.contains(part), "{part:?} not in {found:?}");
        }
        assert!(
            found.contains(&rect(20, 20, 34, 100)),
            "no group in {found:?}"
        );
        assert_eq!(found.len(), 4, "nothing else: {found:?}");
    }

    #[test]
    fn linked_buttons_meeting_without_a_line_are_told_apart_by_the_step() {
        // Two linked toggle buttons in a darker bar: the pressed one's dark
        // fill meets the other's light fill with no line between them, and
        // their outer border is barely darker than the bar outside.
        let mut image = RgbaImage::from_pixel(200, 80, Rgba([218, 218, 218, 255]));
        let grey = |v: u8| Rgba([v, v, v, 255]);
        for y in 21..52 {
            for x in 21..140 {
                image.put_pixel(x, y, grey(if x < 80 { 202 } else { 240 }));
            }
            image.put_pixel(20, y, grey(192));
            image.put_pixel(140, y, grey(200));
            image.put_pixel(141, y, grey(213));
        }
        // Top and bottom borders, broken where the buttons meet.
        for x in (20..=140).filter(|x| *x != 80) {
            image.put_pixel(x, 20, grey(180));
            image.put_pixel(x, 52, grey(185));
        }
        let found = find_boxes(&luminance(&image), 200, 80);
        let near = |want: PixelRect| {
            found.iter().any(|b| {
                b.x.abs_diff(want.x) <= 1
                    && b.y == want.y
                    && b.right().abs_diff(want.right()) <= 1
                    && b.height == want.height
            })
        };
        assert!(near(rect(20, 20, 61, 33)), "no pressed button in {found:?}");
        assert!(near(rect(80, 20, 61, 33)), "no other button in {found:?}");
        assert!(
            found.contains(&rect(20, 20, 121, 33)),
            "no group in {found:?}"
        );
    }

    #[test]
    fn lines_that_do_not_close_a_box_are_not_a_box() {
        let mut image = RgbaImage::from_pixel(200, 120, Rgba([246, 245, 244, 255]));
        // Two horizontal rules of one length (a separator above and below a
        // paragraph), with no sides.
        for x in 10..150 {
            image.put_pixel(x, 20, Rgba([150, 150, 150, 255]));
            image.put_pixel(x, 60, Rgba([150, 150, 150, 255]));
        }
        // A box missing its right side.
        for x in 10..100 {
            image.put_pixel(x, 80, Rgba([150, 150, 150, 255]));
            image.put_pixel(x, 110, Rgba([150, 150, 150, 255]));
        }
        for y in 80..=110 {
            image.put_pixel(10, y, Rgba([150, 150, 150, 255]));
        }
        let luma = luminance(&image);
        assert_eq!(find_boxes(&luma, 200, 120), vec![]);
    }
}
