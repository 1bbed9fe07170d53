//! Stage 2 of the classical segmenter: ink joined across letter gaps into
//! words, words into text lines and a line's items, and where a click on
//! each lands (its hit area).

use imageproc::region_labelling::{Connectivity, connected_components};

use super::ClassicalSegmenter;
use super::areas::area_stats;
use crate::vision::PixelRect;

/// How far ink is grown up and down (and `letter_gap` sideways) before it
/// is joined into words.
const LINE_DILATION: u32 = 1;

/// A line of text: its box and the words (ink joined across letter gaps) in
/// it, left to right.
#[derive(Debug, Clone)]
pub(super) struct TextLine {
    pub rect: PixelRect,
    pub words: Vec<PixelRect>,
}

/// The window's unit of length for padding: the median height of its lines
/// of text (of those at least three times as wide as high, words rather than
/// digits and bullets; of all lines when there are none), 0 without text.
pub(super) fn text_height(lines: &[TextLine]) -> u32 {
    let median = |mut heights: Vec<u32>| {
        heights.sort_unstable();
        heights.get(heights.len() / 2).copied()
    };
    let wide = lines
        .iter()
        .filter(|line| line.rect.width >= 3 * line.rect.height)
        .map(|line| line.rect.height)
        .collect();
    median(wide)
        .or_else(|| median(lines.iter().map(|line| line.rect.height).collect()))
        .unwrap_or(0)
}

/// A binary mask grown by `rx` horizontally and `ry` vertically.
fn dilate(bits: &[bool], width: usize, height: usize, rx: usize, ry: usize) -> Vec<bool> {
    let mut horizontal = vec![false; bits.len()];
    for y in 0..height {
        let row = &bits[y * width..(y + 1) * width];
        let mut last_set: Option<usize> = None;
        let mut next_set = vec![usize::MAX; width];
        let mut upcoming = usize::MAX;
        for x in (0..width).rev() {
            if row[x] {
                upcoming = x;
            }
            next_set[x] = upcoming;
        }
        for x in 0..width {
            if row[x] {
                last_set = Some(x);
            }
            let near_before = last_set.is_some_and(|set| x - set <= rx);
            let near_after = next_set[x] != usize::MAX && next_set[x] - x <= rx;
            horizontal[y * width + x] = near_before || near_after;
        }
    }
    // Vertically, row by row (in memory order): a row is the union of the
    // rows within `ry` of it.
    let mut out = vec![false; bits.len()];
    for y in 0..height {
        let row = &mut out[y * width..(y + 1) * width];
        for near in y.saturating_sub(ry)..=(y + ry).min(height - 1) {
            let source = &horizontal[near * width..(near + 1) * width];
            for (bit, set) in row.iter_mut().zip(source) {
                *bit |= *set;
            }
        }
    }
    out
}

impl ClassicalSegmenter {
    pub(super) fn text_lines(
        &self,
        ink: &[bool],
        width: u32,
        height: u32,
        regions: &[PixelRect],
    ) -> Vec<TextLine> {
        let dilated = dilate(
            ink,
            width as usize,
            height as usize,
            self.letter_gap as usize,
            LINE_DILATION as usize,
        );
        let blob_image = image::GrayImage::from_fn(width, height, |x, y| {
            image::Luma([u8::from(dilated[(y * width + x) as usize]) * 255])
        });
        let labels = connected_components(&blob_image, Connectivity::Eight, image::Luma([0u8]));
        let mut words: Vec<PixelRect> = area_stats(&labels)
            .into_iter()
            .flatten()
            .map(|stats| stats.rect())
            .filter(|rect| {
                rect.height >= self.min_word_height
                    && rect.height <= self.max_line_height
                    && rect.width >= self.min_word_width
            })
            .collect();
        words.sort_by_key(|rect| (rect.y, rect.x));
        // Join words into lines: overlapping vertically, separated by a gap
        // smaller than a share of the line's height, and inside the same
        // region (the labels of two adjacent buttons stay apart).
        let container = |rect: &PixelRect| {
            regions
                .iter()
                .filter(|region| region.contains(rect))
                .min_by_key(|region| region.area())
                .copied()
        };
        let mut lines: Vec<TextLine> = Vec::new();
        words.sort_by_key(|rect| (rect.x, rect.y));
        for word in words {
            let joined = lines.iter_mut().find(|TextLine { rect: line, .. }| {
                let overlap = line.y.max(word.y) < line.bottom().min(word.bottom());
                let overlap_height = line
                    .bottom()
                    .min(word.bottom())
                    .saturating_sub(line.y.max(word.y));
                let gap = word.x.saturating_sub(line.right());
                overlap
                    && f64::from(overlap_height)
                        >= self.min_line_overlap * f64::from(line.height.min(word.height))
                    && f64::from(gap)
                        <= self.word_gap_ratio * f64::from(line.height.max(word.height))
                    && word.x >= line.x
                    && container(line) == container(&word)
                    && container(&line.union(&word)) == container(&word)
            });
            match joined {
                Some(line) => {
                    line.rect = line.rect.union(&word);
                    line.words.push(word);
                }
                None => lines.push(TextLine {
                    rect: word,
                    words: vec![word],
                }),
            }
        }
        lines
    }

    /// Where a click on this ink lands on its element: text and icons are
    /// drawn inside padding that belongs to them (a flat button, a menu
    /// title). A compact item (a squarish icon, or a single glyph no larger
    /// than a text height: a digit, a close cross, a minimize bar) gets a square of
    /// the toolkit's usual padding around it, measured in `unit`, the window's
    /// typical text height (so it scales with the DPI); a word or a line a
    /// margin in proportion to its own height. `rect` is dilated ink.
    pub(super) fn hit_area(
        &self,
        rect: PixelRect,
        unit: u32,
        width: u32,
        height: u32,
    ) -> PixelRect {
        let ink_width = rect.width.saturating_sub(2 * self.letter_gap);
        let ink_height = rect.height.saturating_sub(2 * LINE_DILATION);
        let squarish = 2 * ink_width <= 3 * ink_height && 2 * ink_height <= 3 * ink_width;
        let compact = (squarish
            && f64::from(rect.width) <= self.compact_item_ratio * f64::from(unit)
            && rect.height <= 2 * unit)
            || (ink_width <= unit && ink_height <= unit);
        if !compact {
            return rect.padded(
                (rect.height / 2).max(3),
                (rect.height / 4).max(2),
                width,
                height,
            );
        }
        let side = ink_width.max(ink_height) + (f64::from(unit) * 2.0 * self.padding_ratio) as u32;
        rect.padded(
            side.saturating_sub(rect.width).div_ceil(2),
            side.saturating_sub(rect.height).div_ceil(2),
            width,
            height,
        )
    }

    /// The separate items of a text line: runs of its words split where the
    /// gap is wider than a word space (a menu bar's titles, a tab's label
    /// and its close button, a toolbar's icons). Empty for a line of one item.
    pub(super) fn items(&self, line: &TextLine) -> Vec<PixelRect> {
        let mut items: Vec<PixelRect> = Vec::new();
        for word in &line.words {
            match items.last_mut() {
                Some(item)
                    if f64::from(word.x.saturating_sub(item.right()))
                        <= self.item_gap_ratio * f64::from(line.rect.height) =>
                {
                    *item = item.union(word);
                }
                _ => items.push(*word),
            }
        }
        if items.len() < 2 { Vec::new() } else { items }
    }
}
