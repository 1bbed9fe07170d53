//! Boxes drawn as a thin border: the buttons, text fields and combo boxes of
//! toolkits such as GTK and Qt. Their fill is often a gradient (many colours,
//! so no flat region) and their rounded, anti-aliased corners break the border
//! into four separate lines of slightly different colours, so neither the
//! flat-region step nor a connected outline finds them. Here a border is
//! found as edges: horizontal and vertical runs of pixels that contrast with
//! their neighbour across the run; a top and a bottom run of the same extent,
//! joined by a left and a right run, make a box.

use super::PixelRect;

/// Thresholds, in image pixels and luminance levels (0 to 255).
#[derive(Debug, Clone)]
pub struct BoxOptions {
    /// A pixel is on an edge when its luminance differs from the pixel across
    /// the edge by at least this much.
    pub min_contrast: u8,
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
struct Run {
    at: u32,
    start: u32,
    end: u32,
}

/// Luminance of an RGBA image, one byte a pixel.
pub fn luminance(image: &image::RgbaImage) -> Vec<u8> {
    image
        .pixels()
        .map(|pixel| {
            let [r, g, b, _] = pixel.0;
            ((u32::from(r) * 77 + u32::from(g) * 150 + u32::from(b) * 29) >> 8) as u8
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
    let (lines, length) = if horizontal { (h, w) } else { (w, h) };
    let across_len = if horizontal { h } else { w };
    let mut runs = Vec::new();
    for line in 0..lines {
        let mut start: Option<usize> = None;
        for pos in 0..=length {
            let on_line = pos < length && {
                // `across(k)`: the pixel k steps across the line from here.
                let across = |k: isize| -> Option<u8> {
                    let c = line as isize + k;
                    if c < 0 || c as usize >= across_len {
                        return None;
                    }
                    let (x, y) = if horizontal {
                        (pos, c as usize)
                    } else {
                        (c as usize, pos)
                    };
                    Some(luma[y * w + x])
                };
                let here = across(0).unwrap_or(0);
                let differs = |k: isize| {
                    across(k).is_some_and(|other| here.abs_diff(other) >= options.min_contrast)
                };
                let alike = |k: isize| {
                    across(k).is_some_and(|other| here.abs_diff(other) < options.min_contrast)
                };
                (differs(-1) && differs(1))
                    || (differs(-1) && alike(1) && differs(2))
                    || (differs(1) && alike(-1) && differs(-2))
            };
            match (on_line, start) {
                (true, None) => start = Some(pos),
                (false, Some(first)) => {
                    if (pos - first) as u32 >= options.min_run {
                        runs.push(Run {
                            at: line as u32,
                            start: first as u32,
                            end: pos as u32 - 1,
                        });
                    }
                    start = None;
                }
                _ => {}
            }
        }
    }
    runs
}

/// Whether a run in column (or row) `at` of `runs` (sorted by `at`) covers
/// enough of `from..=to`.
fn has_side(runs: &[Run], at: u32, from: u32, to: u32, options: &BoxOptions) -> bool {
    let first = runs.partition_point(|run| run.at < at);
    let needed = (f64::from(to - from + 1) * options.min_side_coverage).ceil() as u32;
    runs[first..]
        .iter()
        .take_while(|run| run.at == at)
        .any(|run| {
            run.end >= from
                && run.start <= to
                && run.end.min(to) - run.start.max(from) + 1 >= needed
        })
}

/// The boxes with a visible border in an image given as its luminance.
pub fn bordered_boxes(
    luma: &[u8],
    width: u32,
    height: u32,
    options: &BoxOptions,
) -> Vec<PixelRect> {
    let rows = edge_runs(luma, width, height, true, options);
    let columns = edge_runs(luma, width, height, false, options);
    // Rows are in order of `at` already (one line after another); columns too.
    let mut boxes = Vec::new();
    for (idx, top) in rows.iter().enumerate() {
        let slack = options.corner_slack;
        // The nearest run below with the same extent is this box's bottom: a
        // farther one would close a box stacked below, and one too near means
        // this run is the bottom of a box (or one row of a thick border).
        let bottom = rows[idx + 1..]
            .iter()
            .take_while(|run| run.at <= top.at + options.max_height)
            .find(|run| {
                run.at > top.at
                    && run.start.abs_diff(top.start) <= slack
                    && run.end.abs_diff(top.end) <= slack
            });
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
        let left =
            (lo.saturating_sub(slack)..=lo + 1).find(|&x| has_side(&columns, x, y0, y1, options));
        let right = (hi.saturating_sub(1)..=(hi + slack).min(width - 1))
            .rev()
            .find(|&x| has_side(&columns, x, y0, y1, options));
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
    boxes
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgba, RgbaImage};

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
        let found = bordered_boxes(&luma, 300, 200, &BoxOptions::default());
        for button in &buttons {
            assert!(
                found.iter().any(|b| b == button),
                "{button:?} not in {found:?}"
            );
        }
        assert_eq!(found.len(), buttons.len(), "nothing else: {found:?}");
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
        assert_eq!(
            bordered_boxes(&luma, 200, 120, &BoxOptions::default()),
            vec![]
        );
    }
}
