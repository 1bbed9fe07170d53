//! Sliders (scales): a thin track, drawn as two parallel edge lines a few
//! pixels apart, with a knob riding on it. The knob hides the track where it
//! sits, so the track is found in pieces on one line with a knob-sized gap
//! between them (toolkits also colour the part before the knob differently).
//! The element is what the knob can reach: the track, lengthened by half the
//! knob at each end, and as thick as the knob. No region, outline or text
//! step sees a slider whole: its track is too thin to be a box and its knob
//! is a small circle.

use super::PixelRect;
use super::boxes::{Edges, Run, same_extent_after};

/// Thresholds, in image pixels and luminance levels.
#[derive(Debug, Clone)]
pub struct SliderOptions {
    /// A track's edges are this far apart at least, and at most this share
    /// of the window's text height (so it scales with the DPI; without text,
    /// `max_track_thickness` pixels).
    pub min_track_thickness: u32,
    pub max_track_thickness_ratio: f64,
    pub max_track_thickness: u32,
    /// A whole track (its pieces and the knob between) is at least this long.
    pub min_track_length: u32,
    /// The gap a knob leaves in its track: at least, and at most.
    pub min_knob_gap: u32,
    pub max_knob_gap: u32,
    /// A knob pixel differs from the background by at least this much.
    pub min_knob_contrast: u8,
    /// How far the ends of a track's two edges may miss each other.
    pub slack: u32,
}

impl Default for SliderOptions {
    fn default() -> Self {
        SliderOptions {
            min_track_thickness: 2,
            max_track_thickness_ratio: 0.35,
            max_track_thickness: 5,
            min_track_length: 48,
            min_knob_gap: 8,
            max_knob_gap: 48,
            min_knob_contrast: 16,
            slack: 2,
        }
    }
}

/// A piece of a track: between edge lines `top` and `bottom` (rows of a
/// horizontal track, columns of a vertical one), from `start` to `end` along.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Piece {
    top: u32,
    bottom: u32,
    start: u32,
    end: u32,
}

/// The sliders of an image given as its luminance, from its [`Edges`]:
/// horizontal ones from the runs along rows, vertical ones from the columns.
/// `text_height`: the window's typical text height in pixels, 0 if unknown.
pub fn sliders(
    edges: &Edges,
    luma: &[u8],
    (width, height): (u32, u32),
    text_height: u32,
    options: &SliderOptions,
) -> Vec<PixelRect> {
    let max_thickness = if text_height == 0 {
        options.max_track_thickness
    } else {
        (f64::from(text_height) * options.max_track_thickness_ratio).round() as u32
    };
    let mut found = Vec::new();
    for horizontal in [true, false] {
        let runs = if horizontal {
            &edges.rows
        } else {
            &edges.columns
        };
        found.extend(along(
            runs,
            luma,
            (width, height),
            horizontal,
            max_thickness,
            options,
        ));
    }
    found
}

fn along(
    runs: &[Run],
    luma: &[u8],
    (width, height): (u32, u32),
    horizontal: bool,
    max_thickness: u32,
    options: &SliderOptions,
) -> Vec<PixelRect> {
    let pieces = pieces(runs, max_thickness, options);
    let same_line =
        |a: &Piece, b: &Piece| a.top.abs_diff(b.top) <= 1 && a.bottom.abs_diff(b.bottom) <= 1;
    // Whether `after` continues the track of `before` past a knob's gap.
    let continues = |before: &Piece, after: &Piece| {
        same_line(before, after)
            && after.start > before.end
            && (options.min_knob_gap..=options.max_knob_gap)
                .contains(&(after.start - before.end - 1))
    };
    let plane = Plane {
        luma,
        width,
        horizontal,
        across_len: if horizontal { height } else { width },
    };
    let length = if horizontal { width } else { height };
    let mut found = Vec::new();
    for (idx, first) in pieces.iter().enumerate() {
        // Only tracks that start here: no piece of this line ends just before.
        if pieces[..idx].iter().any(|before| continues(before, first)) {
            continue;
        }
        let Some(track) = track_from(&pieces, idx, continues) else {
            continue;
        };
        if track.last.end - first.start + 1 < options.min_track_length {
            continue;
        }
        let Some((knob_top, knob_bottom)) = plane.knob(&track, options) else {
            continue;
        };
        let reach = track.gap.1 - track.gap.0 + 1;
        let half_knob = reach / 2;
        let start = first.start.saturating_sub(half_knob);
        let end = (track.last.end + half_knob).min(length - 1);
        let (along_from, track_length) = (start, end - start + 1);
        let (across_from, thickness) = (knob_top, knob_bottom - knob_top + 1);
        found.push(if horizontal {
            PixelRect {
                x: along_from,
                y: across_from,
                width: track_length,
                height: thickness,
            }
        } else {
            PixelRect {
                x: across_from,
                y: along_from,
                width: thickness,
                height: track_length,
            }
        });
    }
    found
}

/// The pieces of tracks among edge `runs`: an edge run and the nearest run
/// a track's thickness further across with the same extent; sorted by line,
/// then along.
fn pieces(runs: &[Run], max_thickness: u32, options: &SliderOptions) -> Vec<Piece> {
    let mut pieces: Vec<Piece> = Vec::new();
    for (idx, first) in runs.iter().enumerate() {
        let second = same_extent_after(runs, idx, max_thickness, options.slack)
            .find(|run| run.at >= first.at + options.min_track_thickness);
        if let Some(second) = second {
            pieces.push(Piece {
                top: first.at,
                bottom: second.at,
                start: first.start.min(second.start),
                end: first.end.max(second.end),
            });
        }
    }
    pieces.sort_by_key(|piece| (piece.top, piece.start));
    pieces
}

/// A track: its first and last pieces, the widest gap between two of its
/// pieces (along) and its longest piece.
struct Track {
    first: Piece,
    last: Piece,
    gap: (u32, u32),
    longest: Piece,
}

/// The track that starts with piece `idx`: its pieces left to right, each
/// continuing the one before; `None` without a gap (no knob).
fn track_from(
    pieces: &[Piece],
    idx: usize,
    continues: impl Fn(&Piece, &Piece) -> bool,
) -> Option<Track> {
    let first = pieces[idx];
    let (mut last, mut gap, mut longest): (Piece, Option<(u32, u32)>, Piece) = (first, None, first);
    while let Some(next) = pieces[idx + 1..]
        .iter()
        .filter(|after| continues(&last, after))
        .min_by_key(|after| after.start)
    {
        let this_gap = (last.end + 1, next.start - 1);
        if gap.is_none_or(|(lo, hi)| this_gap.1 - this_gap.0 > hi - lo) {
            gap = Some(this_gap);
        }
        if next.end - next.start > longest.end - longest.start {
            longest = *next;
        }
        last = *next;
    }
    Some(Track {
        first,
        last,
        gap: gap?,
        longest,
    })
}

/// An image's luminance seen along a track's axis and across it.
struct Plane<'a> {
    luma: &'a [u8],
    width: u32,
    horizontal: bool,
    across_len: u32,
}

impl Plane<'_> {
    /// Luminance at a position along the track's axis and across it.
    fn at(&self, along: u32, across: u32) -> u8 {
        let (x, y) = if self.horizontal {
            (along, across)
        } else {
            (across, along)
        };
        self.luma[(y * self.width + x) as usize]
    }

    /// The knob of `track`, from its top to its bottom (across): across the
    /// track at its gap's middle, the outermost pixels that differ from the
    /// same place across the track's longest piece. A knob is a bump on the
    /// track (two boxes whose borders run side by side look the same all
    /// along): it stands out of its track on both sides, and is about as
    /// thick as it is long.
    fn knob(&self, track: &Track, options: &SliderOptions) -> Option<(u32, u32)> {
        let (gap_start, gap_end) = track.gap;
        let first = track.first;
        let centre_along = (gap_start + gap_end) / 2;
        let centre_across = (first.top + first.bottom) / 2;
        let reach = gap_end - gap_start + 1;
        let beside = (track.longest.start + track.longest.end) / 2;
        let from = centre_across.saturating_sub(reach);
        let to = (centre_across + reach).min(self.across_len - 1);
        let differs = |across: &u32| {
            self.at(centre_along, *across)
                .abs_diff(self.at(beside, *across))
                >= options.min_knob_contrast
        };
        let (knob_top, knob_bottom) =
            ((from..=to).find(differs)?, (from..=to).rev().find(differs)?);
        let knob = f64::from(knob_bottom - knob_top + 1);
        (knob_top + 2 <= first.top
            && knob_bottom >= first.bottom + 2
            && (0.6..=1.5).contains(&(knob / f64::from(reach))))
        .then_some((knob_top, knob_bottom))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vision::boxes::{BoxOptions, luminance};
    use image::{Rgba, RgbaImage};

    const BACKGROUND: Rgba<u8> = Rgba([245, 245, 245, 255]);

    fn grey(value: u8) -> Rgba<u8> {
        Rgba([value, value, value, 255])
    }

    /// A GTK-like track along x from `start` to `end` at rows `top..top+4`
    /// (edges darker than the fill, the part before the knob darker still),
    /// with a round knob of radius 10 at `knob` if there is one.
    fn track(image: &mut RgbaImage, start: u32, end: u32, top: u32, knob: Option<u32>) {
        for x in start..=end {
            let before_knob = knob.is_some_and(|knob| x < knob);
            image.put_pixel(x, top, grey(if before_knob { 83 } else { 200 }));
            image.put_pixel(x, top + 3, grey(if before_knob { 83 } else { 200 }));
            for y in top + 1..top + 3 {
                image.put_pixel(x, y, grey(if before_knob { 119 } else { 222 }));
            }
        }
        if let Some(knob) = knob {
            let (cx, cy) = (f64::from(knob), f64::from(top) + 1.5);
            for y in top.saturating_sub(12)..top + 16 {
                for x in knob - 12..knob + 12 {
                    let distance =
                        ((f64::from(x) - cx).powi(2) + (f64::from(y) - cy).powi(2)).sqrt();
                    if distance <= 9.0 {
                        image.put_pixel(x, y, grey(252));
                    } else if distance <= 10.0 {
                        image.put_pixel(x, y, grey(180));
                    }
                }
            }
        }
    }

    fn found(image: &RgbaImage) -> Vec<PixelRect> {
        let (width, height) = image.dimensions();
        let luma = luminance(image);
        let edges = Edges::find(&luma, width, height, &BoxOptions::default());
        sliders(
            &edges,
            &luma,
            (width, height),
            14,
            &SliderOptions::default(),
        )
    }

    fn near(a: &PixelRect, b: &PixelRect) -> bool {
        a.x.abs_diff(b.x) <= 2
            && a.y.abs_diff(b.y) <= 2
            && a.right().abs_diff(b.right()) <= 2
            && a.bottom().abs_diff(b.bottom()) <= 2
    }

    #[test]
    fn a_track_with_its_knob_is_a_slider_reaching_half_a_knob_past_the_ends() {
        let mut image = RgbaImage::from_pixel(300, 120, BACKGROUND);
        track(&mut image, 40, 240, 50, Some(140));
        // The knob spans rows 42 to 61 and 20 columns; the track 40 to 240.
        let want = PixelRect {
            x: 30,
            y: 42,
            width: 221,
            height: 20,
        };
        let sliders = found(&image);
        assert!(
            sliders.len() == 1 && near(&sliders[0], &want),
            "{sliders:?}"
        );
        // The same turned upright: a vertical slider.
        let upright = image::imageops::rotate90(&image);
        let want = PixelRect {
            x: 120 - want.bottom(),
            y: want.x,
            width: want.height,
            height: want.width,
        };
        let sliders = found(&upright);
        assert!(
            sliders.len() == 1 && near(&sliders[0], &want),
            "{sliders:?}"
        );
    }

    #[test]
    fn a_bar_without_a_knob_and_thick_parallel_borders_are_not_sliders() {
        let mut image = RgbaImage::from_pixel(300, 200, BACKGROUND);
        // A progress bar: a track and no knob.
        track(&mut image, 40, 240, 30, None);
        // Two boxes side by side, 7 px apart (more than a track's thickness
        // at this text height), each with a different middle part.
        for (left, right) in [(40, 80), (87, 127)] {
            for y in 80..=180 {
                image.put_pixel(left, y, grey(200));
                image.put_pixel(right, y, grey(200));
            }
            for x in left..=right {
                image.put_pixel(x, 80, grey(200));
                image.put_pixel(x, 180, grey(200));
            }
            for y in 115..145 {
                for x in left + 1..right {
                    image.put_pixel(x, y, grey(120));
                }
            }
        }
        assert_eq!(found(&image), vec![]);
    }
}
