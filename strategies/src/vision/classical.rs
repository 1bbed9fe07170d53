//! Classical segmentation for user interfaces, with no model weights.
//!
//! 1. Quantize the colours and label connected areas of one colour: large,
//!    compact ones are *regions* (buttons, text fields, panels, boxes),
//!    unless they are bands of a gradient (soft edges, lighter on one side
//!    and darker on another) or glyph-sized shapes drawn with strokes.
//! 2. Pixels in small areas are *ink* (glyphs and their anti-aliasing); ink
//!    dilated across letter gaps joins into words, and words on one line with
//!    word-sized gaps join into *text lines* (labels, list rows, menu items,
//!    which often have no border or fill at all). Words of one line further
//!    apart than a space are its *items* too (menu titles, toolbar icons).
//!    Each text segment covers its ink's hit area: a compact icon or glyph
//!    gets the toolkit's usual padding around it, in units of the window's
//!    text height (a flat button is only its icon on screen).
//! 3. A small square region with a text line right beside it is a *labelled
//!    control* (a checkbox or radio button with its label).
//! 4. Boxes drawn as a thin border ([`super::boxes`]): buttons and fields
//!    with a gradient fill and rounded corners, linked buttons and their
//!    group.
//! 5. Sliders ([`super::sliders`]): a thin track with a knob on it.
//! 6. *Rows* of lists drawn without borders: inside a container, contents
//!    that repeat down it at a regular pitch, wider than a paragraph's line
//!    spacing; each row reaches across the container.
//! 7. [`super::refine`] removes the background, noise and duplicates.

use image::{Rgb, RgbImage, RgbaImage};
use imageproc::region_labelling::{Connectivity, connected_components};

use super::boxes::{Edges, bordered_boxes};
use super::refine::{RefineOptions, refine};
use super::sliders::{SliderOptions, sliders};
use super::{Mask, PixelRect, Segment, SegmentKind, Segmenter, VisionError, finish};

/// The segmenter's thresholds, in image pixels.
#[derive(Debug, Clone)]
pub struct ClassicalSegmenter {
    /// A flat area at least this large (pixels) is a region candidate.
    pub min_region_pixels: u32,
    /// A flat area whose boundary is mostly soft (more than this share; the
    /// colour beyond it one quantization step away, lighter on one side and
    /// darker on another) is a band of a gradient, not a region.
    pub max_soft_edge_share: f64,
    /// A glyph-sized area is a region (a small box) only when it fills at
    /// least this share of its rectangle; otherwise it is a stroked shape.
    pub min_glyph_region_fill: f64,
    /// Areas smaller than this, with no side longer than `max_glyph_side`, are ink.
    pub max_glyph_pixels: u32,
    pub max_glyph_side: u32,
    /// Ink is joined across gaps up to this wide (letters into words).
    pub letter_gap: u32,
    /// Words on one line join when the gap is below this share of the line height.
    pub word_gap_ratio: f64,
    /// Within a line, words further apart than this share of the line height
    /// are separate items too.
    pub item_gap_ratio: f64,
    /// List rows: at least this many bands, at a pitch between these many
    /// text heights, each pitch within this share of the run's first.
    pub min_list_rows: usize,
    pub min_row_pitch_ratio: f64,
    pub max_row_pitch_ratio: f64,
    pub row_pitch_tolerance: f64,
    /// A squarish item at most this many text heights wide (and at most two
    /// high) is compact: an icon or a glyph.
    pub compact_item_ratio: f64,
    /// The padding around a compact item, in text heights on each side.
    pub padding_ratio: f64,
    /// Text lines taller than this are not text.
    pub max_line_height: u32,
    pub boxes: super::boxes::BoxOptions,
    pub sliders: SliderOptions,
    pub refine: RefineOptions,
}

impl ClassicalSegmenter {
    /// Its name and version in the segmentation cache: bump it with any
    /// change of what it segments, so stale segmentations are not reused.
    pub const CACHE_NAME: &'static str = "classical-5";
}

impl Default for ClassicalSegmenter {
    fn default() -> Self {
        ClassicalSegmenter {
            min_region_pixels: 60,
            max_soft_edge_share: 0.5,
            min_glyph_region_fill: 0.6,
            max_glyph_pixels: 160,
            max_glyph_side: 40,
            letter_gap: 3,
            word_gap_ratio: 0.9,
            item_gap_ratio: 0.25,
            min_list_rows: 3,
            min_row_pitch_ratio: 1.5,
            max_row_pitch_ratio: 5.0,
            row_pitch_tolerance: 0.25,
            compact_item_ratio: 2.5,
            padding_ratio: 0.7,
            max_line_height: 48,
            boxes: super::boxes::BoxOptions::default(),
            sliders: SliderOptions::default(),
            refine: RefineOptions::default(),
        }
    }
}

/// How far ink is grown up and down (and `letter_gap` sideways) before it
/// is joined into words.
const LINE_DILATION: u32 = 1;

/// A line of text: its box and the words (ink joined across letter gaps) in
/// it, left to right.
#[derive(Debug, Clone)]
struct TextLine {
    rect: PixelRect,
    words: Vec<PixelRect>,
}

/// The window's unit of length for padding: the median height of its lines
/// of text (of those at least three times as wide as high, words rather than
/// digits and bullets; of all lines when there are none), 0 without text.
fn text_height(lines: &[TextLine]) -> u32 {
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

/// Per-label statistics of connected areas.
#[derive(Debug, Clone, Copy)]
struct AreaStats {
    min_x: u32,
    min_y: u32,
    max_x: u32,
    max_y: u32,
    count: u32,
}

impl AreaStats {
    fn rect(&self) -> PixelRect {
        PixelRect {
            x: self.min_x,
            y: self.min_y,
            width: self.max_x - self.min_x + 1,
            height: self.max_y - self.min_y + 1,
        }
    }
}

fn area_stats(labels: &image::ImageBuffer<image::Luma<u32>, Vec<u32>>) -> Vec<Option<AreaStats>> {
    let n_labels = labels.pixels().map(|pixel| pixel.0[0]).max().unwrap_or(0) as usize + 1;
    let mut stats: Vec<Option<AreaStats>> = vec![None; n_labels];
    for (x, y, pixel) in labels.enumerate_pixels() {
        let label = pixel.0[0] as usize;
        if label == 0 {
            continue;
        }
        let entry = stats[label].get_or_insert(AreaStats {
            min_x: x,
            min_y: y,
            max_x: x,
            max_y: y,
            count: 0,
        });
        entry.min_x = entry.min_x.min(x);
        entry.min_y = entry.min_y.min(y);
        entry.max_x = entry.max_x.max(x);
        entry.max_y = entry.max_y.max(y);
        entry.count += 1;
    }
    stats
}

/// Which labels are bands of a gradient rather than elements: most of the
/// label's boundary (pixel pairs across which the label changes) is soft, the
/// colour beyond it only one quantization step away, and that colour is
/// lighter along part of the boundary and darker along another part (a flat
/// field on a panel of nearly its shade is soft all round but one way only).
fn gradient_bands(
    quantized: &RgbImage,
    labels: &image::ImageBuffer<image::Luma<u32>, Vec<u32>>,
    n_labels: usize,
    max_soft_share: f64,
) -> Vec<bool> {
    let (width, height) = quantized.dimensions();
    let (colours, ids) = (quantized.as_raw(), labels.as_raw());
    // Per label: boundary pairs in all; soft ones towards a lighter colour,
    // and towards a darker one.
    let mut counts = vec![[0u32; 3]; n_labels];
    let mut pair = |a: usize, b: usize| {
        let (label_a, label_b) = (ids[a] as usize, ids[b] as usize);
        if label_a == label_b {
            return;
        }
        let (pa, pb) = (&colours[a * 3..a * 3 + 3], &colours[b * 3..b * 3 + 3]);
        let near = pa.iter().zip(pb).all(|(ca, cb)| ca.abs_diff(*cb) <= 4);
        let sum = |pixel: &[u8]| pixel.iter().map(|c| u32::from(*c)).sum::<u32>();
        counts[label_a][0] += 1;
        counts[label_b][0] += 1;
        if near && sum(pa) != sum(pb) {
            let a_darker = sum(pa) < sum(pb);
            counts[label_a][if a_darker { 1 } else { 2 }] += 1;
            counts[label_b][if a_darker { 2 } else { 1 }] += 1;
        }
    };
    let (w, h) = (width as usize, height as usize);
    for y in 0..h {
        for x in 0..w {
            let idx = y * w + x;
            if x + 1 < w {
                pair(idx, idx + 1);
            }
            if y + 1 < h {
                pair(idx, idx + w);
            }
        }
    }
    counts
        .iter()
        .map(|[total, lighter, darker]| {
            let total = f64::from((*total).max(1));
            f64::from(lighter + darker) / total > max_soft_share
                && f64::from(*lighter.min(darker)) >= 0.1 * total
        })
        .collect()
}

/// The most common colour on the image's border: the window's background.
fn border_colour(image: &RgbImage) -> Rgb<u8> {
    let (width, height) = image.dimensions();
    let mut counts: std::collections::HashMap<[u8; 3], u32> = std::collections::HashMap::new();
    let mut count = |x: u32, y: u32| *counts.entry(image.get_pixel(x, y).0).or_default() += 1;
    for x in 0..width {
        count(x, 0);
        count(x, height - 1);
    }
    for y in 0..height {
        count(0, y);
        count(width - 1, y);
    }
    Rgb(counts
        .into_iter()
        .max_by_key(|(colour, n)| (*n, *colour))
        .map(|(colour, _)| colour)
        .unwrap_or([0, 0, 0]))
}

/// The component's pixels in its rectangle, with enclosed holes filled (text
/// inside a button leaves holes in the button's fill).
fn filled_mask(
    labels: &image::ImageBuffer<image::Luma<u32>, Vec<u32>>,
    label: u32,
    rect: PixelRect,
) -> Mask {
    let (w, h) = (rect.width as usize, rect.height as usize);
    let member: Vec<bool> = (0..w * h)
        .map(|idx| {
            labels
                .get_pixel(rect.x + (idx % w) as u32, rect.y + (idx / w) as u32)
                .0[0]
                == label
        })
        .collect();
    // Non-member pixels reachable from the rectangle's edge are outside.
    let mut outside = vec![false; w * h];
    let mut stack: Vec<usize> = Vec::new();
    for idx in 0..w * h {
        let (x, y) = (idx % w, idx / w);
        if (x == 0 || y == 0 || x == w - 1 || y == h - 1) && !member[idx] {
            outside[idx] = true;
            stack.push(idx);
        }
    }
    while let Some(idx) = stack.pop() {
        let (x, y) = (idx % w, idx / w);
        let neighbours = [
            (x > 0).then(|| idx - 1),
            (x + 1 < w).then(|| idx + 1),
            (y > 0).then(|| idx - w),
            (y + 1 < h).then(|| idx + w),
        ];
        for next in neighbours.into_iter().flatten() {
            if !member[next] && !outside[next] {
                outside[next] = true;
                stack.push(next);
            }
        }
    }
    Mask {
        rect,
        bits: outside.into_iter().map(|is_outside| !is_outside).collect(),
    }
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
    fn text_lines(
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
                rect.height >= 5 && rect.height <= self.max_line_height && rect.width >= 4
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
                    && f64::from(overlap_height) >= 0.6 * f64::from(line.height.min(word.height))
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
    fn hit_area(&self, rect: PixelRect, unit: u32, width: u32, height: u32) -> PixelRect {
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

    /// Rows of lists and tables drawn without borders: inside a container
    /// (a region or a box), its direct contents (text lines and small
    /// regions) fall into horizontal bands; a run of at least
    /// `min_list_rows` bands at a regular pitch of at least
    /// `min_row_pitch_ratio` text heights (wider than a paragraph's line
    /// spacing) is a list, and each band's row reaches across the container
    /// and half-way to its neighbours.
    fn list_rows(
        &self,
        containers: &[PixelRect],
        contents: &[PixelRect],
        unit: u32,
    ) -> Vec<PixelRect> {
        let unit = f64::from(unit.max(1));
        let min_pitch = self.min_row_pitch_ratio * unit;
        let max_pitch = self.max_row_pitch_ratio * unit;
        let big_enough = |rect: &PixelRect| {
            f64::from(rect.width) >= 8.0 * unit && f64::from(rect.height) >= 3.0 * min_pitch
        };
        // Each content rectangle belongs to the smallest container around it.
        let mut containers: Vec<PixelRect> = containers
            .iter()
            .filter(|rect| big_enough(rect))
            .copied()
            .collect();
        containers.sort_by_key(|rect| (rect.area(), rect.y, rect.x));
        containers.dedup();
        let mut children: Vec<Vec<PixelRect>> = vec![Vec::new(); containers.len()];
        for item in contents {
            let parent = containers
                .iter()
                .position(|container| container != item && container.contains(item));
            if let Some(parent) = parent {
                children[parent].push(*item);
            }
        }
        let mut rows = Vec::new();
        for (container, mut items) in containers.iter().zip(children) {
            items.retain(|item| item.height * 3 < container.height);
            items.sort_by_key(|item| item.y);
            // Bands: vertical extents of the items, merged where they overlap.
            let mut bands: Vec<(u32, u32)> = Vec::new();
            for item in items {
                match bands.last_mut() {
                    Some(band) if item.y < band.1 => band.1 = band.1.max(item.bottom()),
                    _ => bands.push((item.y, item.bottom())),
                }
            }
            let centre = |band: (u32, u32)| f64::from(band.0 + band.1) / 2.0;
            let mut start = 0;
            while start + 1 < bands.len() {
                // The longest run from `start` whose pitches stay near its first.
                let first_pitch = centre(bands[start + 1]) - centre(bands[start]);
                let regular = |pitch: f64| {
                    (min_pitch..=max_pitch).contains(&pitch)
                        && (pitch - first_pitch).abs() <= self.row_pitch_tolerance * first_pitch
                };
                let mut end = start + 1;
                while end + 1 < bands.len() && regular(centre(bands[end + 1]) - centre(bands[end]))
                {
                    end += 1;
                }
                if !regular(first_pitch) || end + 1 - start < self.min_list_rows {
                    start += 1;
                    continue;
                }
                let run = &bands[start..=end];
                for (idx, band) in run.iter().enumerate() {
                    // Half-way to the neighbours; at the ends of the run, the
                    // same margin as on the other side.
                    let gap_above = idx
                        .checked_sub(1)
                        .map(|before| band.0.saturating_sub(run[before].1));
                    let gap_below = run.get(idx + 1).map(|after| after.0.saturating_sub(band.1));
                    let (above, below) = match (gap_above, gap_below) {
                        (Some(above), Some(below)) => (above, below),
                        (Some(gap), None) | (None, Some(gap)) => (gap, gap),
                        (None, None) => (0, 0),
                    };
                    let top = band.0.saturating_sub(above / 2).max(container.y);
                    let bottom = (band.1 + below.div_ceil(2)).min(container.bottom());
                    if bottom > top {
                        rows.push(PixelRect {
                            x: container.x,
                            y: top,
                            width: container.width,
                            height: bottom - top,
                        });
                    }
                }
                start = end;
            }
        }
        rows
    }

    /// The separate items of a text line: runs of its words split where the
    /// gap is wider than a word space (a menu bar's titles, a tab's label
    /// and its close button, a toolbar's icons). Empty for a line of one item.
    fn items(&self, line: &TextLine) -> Vec<PixelRect> {
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

impl Segmenter for ClassicalSegmenter {
    fn cache_name(&self) -> String {
        ClassicalSegmenter::CACHE_NAME.to_owned()
    }

    fn segment(&self, image: &RgbaImage) -> Result<Vec<Segment>, VisionError> {
        let (width, height) = image.dimensions();
        if width == 0 || height == 0 {
            return Err(VisionError::EmptyImage);
        }
        // Quantize to 6 bits a channel: anti-aliasing noise merges, flat
        // fills stay one colour.
        let quantized = RgbImage::from_fn(width, height, |x, y| {
            let [r, g, b, _] = image.get_pixel(x, y).0;
            Rgb([r & 0xfc, g & 0xfc, b & 0xfc])
        });
        let background = border_colour(&quantized);
        let labels = connected_components(&quantized, Connectivity::Four, background);
        let stats = area_stats(&labels);
        let bands = gradient_bands(&quantized, &labels, stats.len(), self.max_soft_edge_share);

        let mut segments: Vec<Segment> = Vec::new();
        let mut ink = vec![false; (width * height) as usize];
        let mut small_boxes: Vec<PixelRect> = Vec::new();
        for (label, stats) in stats.iter().enumerate() {
            let Some(stats) = stats else { continue };
            let rect = stats.rect();
            let fill = f64::from(stats.count) / rect.area() as f64;
            // A straight rule one or two pixels thick is a separator or a
            // piece of a border, not a glyph: as ink it would join the text
            // on both sides of it.
            let rule = rect.width.min(rect.height) <= 2 && rect.width.max(rect.height) >= 20;
            let glyph_sized = stats.count <= self.max_glyph_pixels
                && rect.width.max(rect.height) <= self.max_glyph_side
                && !rule;
            // A glyph-sized shape drawn with strokes (a letter or an icon at
            // a high DPI) is ink even when it is big enough to be a region.
            let stroked = glyph_sized && fill < self.min_glyph_region_fill;
            if stats.count >= self.min_region_pixels
                && rect.width >= 6
                && rect.height >= 6
                && fill >= 0.4
                && !stroked
                && !bands[label]
            {
                let mask = filled_mask(&labels, label as u32, rect);
                if let Some(segment) = Segment::from_mask(SegmentKind::Region, mask) {
                    if (8..=28).contains(&rect.width) && (8..=28).contains(&rect.height) {
                        small_boxes.push(rect);
                    }
                    segments.push(segment);
                }
            } else if glyph_sized {
                for y in rect.y..rect.bottom() {
                    for x in rect.x..rect.right() {
                        if labels.get_pixel(x, y).0[0] == label as u32 {
                            ink[(y * width + x) as usize] = true;
                        }
                    }
                }
            } else if fill < 0.4 && rect.width >= 8 && rect.height >= 8 && stats.count >= 16 {
                // A thin frame with no fill of its own: an outlined box.
                segments.extend(Segment::full(SegmentKind::Outline, rect));
            }
        }

        // Ink inside a region's box (or a pixel outside it) but
        // outside its mask is the anti-aliasing of its rounded corners and
        // its border, not text.
        for segment in segments
            .iter()
            .filter(|segment| segment.kind == SegmentKind::Region)
        {
            let rect = segment.rect.padded(1, 1, width, height);
            for y in rect.y..rect.bottom() {
                for x in rect.x..rect.right() {
                    if !segment.mask.get(x, y) {
                        ink[(y * width + x) as usize] = false;
                    }
                }
            }
        }
        let regions: Vec<PixelRect> = segments
            .iter()
            .filter(|segment| segment.kind == SegmentKind::Region)
            .map(|segment| segment.rect)
            .collect();
        let lines = self.text_lines(&ink, width, height, &regions);
        let unit = text_height(&lines);
        for line in &lines {
            for rect in std::iter::once(line.rect).chain(self.items(line)) {
                let padded = self.hit_area(rect, unit, width, height);
                segments.extend(Segment::full(SegmentKind::Text, padded));
            }
        }
        let lines: Vec<PixelRect> = lines.into_iter().map(|line| line.rect).collect();
        // A small square box with a text line just right of it, centred on the
        // same row: a checkbox or radio button and its label.
        for small in &small_boxes {
            let centre = f64::from(small.y) + f64::from(small.height) / 2.0;
            let label = lines.iter().find(|line| {
                let line_centre = f64::from(line.y) + f64::from(line.height) / 2.0;
                line.x >= small.right()
                    && line.x - small.right() <= 12
                    && (line_centre - centre).abs() <= f64::from(small.height) / 2.0
            });
            if let Some(label) = label {
                let rect = small.union(&label.padded(3, 2, width, height));
                segments.extend(Segment::full(SegmentKind::LabelledControl, rect));
            }
        }
        // Boxes drawn as a thin border around a gradient or a busy fill.
        let luma = super::boxes::luminance(image);
        let edges = Edges::find(&luma, width, height, &self.boxes);
        let boxes = bordered_boxes(&edges, &luma, width, &self.boxes);
        let sliders = sliders(&edges, &luma, (width, height), unit, &self.sliders);
        segments.extend(
            boxes
                .into_iter()
                .filter_map(|rect| Segment::full(SegmentKind::Outline, rect)),
        );
        segments.extend(
            sliders
                .into_iter()
                .filter_map(|rect| Segment::full(SegmentKind::Slider, rect)),
        );
        // Rows of lists without borders, from what repeats down a container.
        let contents: Vec<PixelRect> = lines.iter().chain(&regions).copied().collect();
        let containers: Vec<PixelRect> = segments
            .iter()
            .filter(|segment| matches!(segment.kind, SegmentKind::Region | SegmentKind::Outline))
            .map(|segment| segment.rect)
            .collect();
        let rows = self.list_rows(&containers, &contents, unit);
        segments.extend(
            rows.into_iter()
                .filter_map(|rect| Segment::full(SegmentKind::Row, rect)),
        );
        Ok(finish(refine(segments, width, height, &self.refine)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgba;

    /// Draws "text" as glyph-like bars (2 px wide, `height` high, 2 px apart)
    /// from `x` over `width` pixels.
    fn word(image: &mut RgbaImage, x: u32, y: u32, width: u32, height: u32) {
        for bar in (x..x + width).step_by(4) {
            for dy in 0..height {
                for dx in 0..2 {
                    image.put_pixel(bar + dx, y + dy, Rgba([40, 40, 40, 255]));
                }
            }
        }
    }

    fn rects_of(segments: &[Segment], kind: SegmentKind) -> Vec<PixelRect> {
        segments
            .iter()
            .filter(|segment| segment.kind == kind)
            .map(|segment| segment.rect)
            .collect()
    }

    #[test]
    fn items_of_a_line_are_targets_and_an_icon_gets_its_padding() {
        let mut image = RgbaImage::from_pixel(320, 140, Rgba([246, 245, 244, 255]));
        // A sentence: the window's text height (dilated ink: 12 px).
        word(&mut image, 20, 10, 160, 10);
        word(&mut image, 20, 110, 140, 10);
        // A menu bar: three titles on one line, further apart than words.
        for x in [20, 52, 84] {
            word(&mut image, x, 40, 22, 10);
        }
        // A flat close button: a 10 x 10 cross alone.
        for k in 0..10 {
            image.put_pixel(250 + k, 80 + k, Rgba([40, 40, 40, 255]));
            image.put_pixel(259 - k, 80 + k, Rgba([40, 40, 40, 255]));
        }
        // A separator: a rule, not a glyph.
        for y in 40..70 {
            image.put_pixel(200, y, Rgba([150, 150, 150, 255]));
        }
        let segments = ClassicalSegmenter::default().segment(&image).unwrap();
        let texts = rects_of(&segments, SegmentKind::Text);
        assert!(
            !texts.iter().any(|r| r.contains_point(200, 55)),
            "a rule taken for text: {texts:?}"
        );
        // The line as a whole, and each title on its own.
        assert!(
            texts
                .iter()
                .any(|r| r.x <= 20 && r.right() >= 106 && (30..40).contains(&r.y)),
            "no menu bar line in {texts:?}"
        );
        for x in [20, 52, 84] {
            assert!(
                texts
                    .iter()
                    .any(|r| r.x < x && r.x + 12 >= x && r.right() > x + 22 && r.right() < x + 36),
                "no item at {x} in {texts:?}"
            );
        }
        // The cross's hit area: a square of the cross and 0.7 text heights on
        // each side (10 + 2 * 8 = 26 px, give or take rounding), centred on it.
        let cross = texts
            .iter()
            .find(|r| r.contains_point(255, 85))
            .unwrap_or_else(|| panic!("no segment on the cross in {texts:?}"));
        assert!(
            (24..=28).contains(&cross.width) && (24..=28).contains(&cross.height),
            "{cross:?}"
        );
        let centre = (cross.x * 2 + cross.width, cross.y * 2 + cross.height);
        assert!(
            centre.0.abs_diff(510) <= 2 && centre.1.abs_diff(170) <= 2,
            "{cross:?}"
        );
    }

    #[test]
    fn a_list_without_borders_has_rows_and_a_paragraph_has_none() {
        let mut image = RgbaImage::from_pixel(640, 260, Rgba([230, 230, 230, 255]));
        // Two white panels: a list of five entries 30 px apart, with a
        // swatch at the end of each; a paragraph of lines 14 px apart.
        for (x0, x1) in [(20, 300), (340, 620)] {
            for y in 20..220 {
                for x in x0..x1 {
                    image.put_pixel(x, y, Rgba([255, 255, 255, 255]));
                }
            }
        }
        for row in 0..5 {
            let y = 40 + row * 30;
            word(&mut image, 30, y, 40 + row * 8, 10);
            for yy in y - 2..y + 12 {
                for x in 260..290 {
                    image.put_pixel(x, yy, Rgba([200, 120, 120, 255]));
                }
            }
        }
        for line in 0..10 {
            word(&mut image, 350, 30 + line * 14, 240, 10);
        }
        let segments = ClassicalSegmenter::default().segment(&image).unwrap();
        let rows = rects_of(&segments, SegmentKind::Row);
        assert_eq!(rows.len(), 5, "{rows:?}");
        for (row, rect) in rows.iter().enumerate() {
            // Across the panel; from half-way to the row above to half-way
            // to the row below (the entries' bands are 38 + 30 k to 52 + 30 k).
            let top = 38 + 30 * row as u32 - 8;
            assert_eq!((rect.x, rect.width), (20, 280), "{rect:?}");
            assert!(
                rect.y.abs_diff(top) <= 1 && rect.height.abs_diff(30) <= 1,
                "{rect:?}"
            );
        }
    }

    #[test]
    fn a_gradient_is_not_a_heap_of_regions_but_a_field_one_shade_off_is_a_region() {
        let mut image = RgbaImage::from_pixel(400, 200, Rgba([246, 245, 244, 255]));
        // A colour plane: a diagonal gradient (a colour chooser's).
        for y in 10..190 {
            for x in 10..190 {
                let red = 120 + ((x + y) / 3) as u8;
                image.put_pixel(x, y, Rgba([red, (x / 4) as u8, 20, 255]));
            }
        }
        // A text field barely lighter than its panel.
        for y in 80..110 {
            for x in 220..380 {
                image.put_pixel(x, y, Rgba([251, 250, 249, 255]));
            }
        }
        let segments = ClassicalSegmenter::default().segment(&image).unwrap();
        let regions = rects_of(&segments, SegmentKind::Region);
        let in_plane = regions
            .iter()
            .filter(|r| r.x >= 10 && r.right() <= 190 && r.area() < 150 * 150)
            .count();
        assert!(
            in_plane <= 2,
            "{in_plane} regions in the gradient: {regions:?}"
        );
        assert!(
            regions.contains(&PixelRect {
                x: 220,
                y: 80,
                width: 160,
                height: 30
            }),
            "{regions:?}"
        );
    }

    #[test]
    fn a_stroked_icon_at_a_high_dpi_is_ink_with_a_hit_area() {
        let mut image = RgbaImage::from_pixel(200, 100, Rgba([246, 245, 244, 255]));
        // A close cross 16 px wide with strokes 4 px across (as at scale 2):
        // large enough for a region, but drawn with strokes.
        for k in 0..16i32 {
            for t in -1..=2i32 {
                for (x, y) in [(k + t, k), (15 - k + t, k)] {
                    if (0..16).contains(&x) {
                        image.put_pixel(100 + x as u32, 40 + y as u32, Rgba([40, 40, 40, 255]));
                    }
                }
            }
        }
        let segments = ClassicalSegmenter::default().segment(&image).unwrap();
        let texts = rects_of(&segments, SegmentKind::Text);
        assert!(
            texts
                .iter()
                .any(|r| r.contains_point(108, 48) && r.width > 20 && r.height > 20),
            "no hit area around the cross: {segments:?}"
        );
    }
}
