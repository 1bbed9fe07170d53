//! Stage 1 of the classical segmenter: the image quantized, its areas of
//! one colour labelled and each taken for a region (a filled box), ink (a
//! glyph), an outline (a thin frame) or nothing (a band of a gradient).

use image::{Rgb, RgbImage, RgbaImage};
use imageproc::region_labelling::{Connectivity, connected_components};

use super::ClassicalSegmenter;
use crate::vision::{Mask, PixelRect, Segment, SegmentKind};

/// Stage 1: the flat areas of one colour, each a region, ink, an outline or
/// nothing (see [`ClassicalSegmenter`]'s thresholds).
pub(super) struct FlatAreas {
    /// Regions and outlines.
    pub segments: Vec<Segment>,
    /// Which pixels are ink (glyphs and their anti-aliasing), row by row.
    pub ink: Vec<bool>,
    /// Regions the size of a checkbox or a radio button.
    pub small_boxes: Vec<PixelRect>,
}

/// Colours are quantized to 6 bits a channel (anti-aliasing noise merges,
/// flat fills stay one colour): one step is this much.
const QUANTUM: u8 = 4;

impl ClassicalSegmenter {
    /// Stage 1 (and the end of stage 2's ink: what lies in a region's
    /// rounded corners or border is not text).
    pub(super) fn flat_areas(&self, image: &RgbaImage) -> FlatAreas {
        let (width, height) = image.dimensions();
        let quantized = RgbImage::from_fn(width, height, |x, y| {
            let [r, g, b, _] = image.get_pixel(x, y).0;
            let step = !(QUANTUM - 1);
            Rgb([r & step, g & step, b & step])
        });
        let background = border_colour(&quantized);
        let labels = connected_components(&quantized, Connectivity::Four, background);
        let stats = area_stats(&labels);
        let bands = gradient_bands(
            &quantized,
            &labels,
            stats.len(),
            self.max_soft_edge_share,
            self.min_two_way_soft_share,
        );
        let mut segments: Vec<Segment> = Vec::new();
        let mut ink = vec![false; (width * height) as usize];
        let mut small_boxes: Vec<PixelRect> = Vec::new();
        for (label, stats) in stats.iter().enumerate() {
            let Some(stats) = stats else { continue };
            let rect = stats.rect();
            match self.area_kind(stats, bands[label]) {
                Some(AreaKind::Region) => {
                    let mask = filled_mask(&labels, label as u32, rect);
                    if let Some(segment) = Segment::from_mask(SegmentKind::Region, mask) {
                        if self.check_box_sides.contains(&rect.width)
                            && self.check_box_sides.contains(&rect.height)
                        {
                            small_boxes.push(rect);
                        }
                        segments.push(segment);
                    }
                }
                Some(AreaKind::Glyph) => {
                    for y in rect.y..rect.bottom() {
                        for x in rect.x..rect.right() {
                            if labels.get_pixel(x, y).0[0] == label as u32 {
                                ink[(y * width + x) as usize] = true;
                            }
                        }
                    }
                }
                // A thin frame with no fill of its own: an outlined box.
                Some(AreaKind::Outline) => {
                    segments.extend(Segment::full(SegmentKind::Outline, rect))
                }
                None => {}
            }
        }
        // Ink inside a region's box (or a pixel outside it) but outside its
        // mask is the anti-aliasing of its rounded corners and its border,
        // not text.
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
        FlatAreas {
            segments,
            ink,
            small_boxes,
        }
    }

    /// What a connected area of one colour is: a region (big and full
    /// enough, not a gradient's band), a glyph's ink (small, or drawn with
    /// strokes), an outlined box (a thin frame with no fill), or nothing.
    fn area_kind(&self, stats: &AreaStats, gradient_band: bool) -> Option<AreaKind> {
        let rect = stats.rect();
        let fill = f64::from(stats.count) / rect.area() as f64;
        // A straight rule one or two pixels thick is a separator or a piece
        // of a border, not a glyph: as ink it would join the text on both
        // sides of it.
        let rule = rect.width.min(rect.height) <= self.max_rule_thickness
            && rect.width.max(rect.height) >= self.min_rule_length;
        let glyph_sized = stats.count <= self.max_glyph_pixels
            && rect.width.max(rect.height) <= self.max_glyph_side
            && !rule;
        // A glyph-sized shape drawn with strokes (a letter or an icon at a
        // high DPI) is ink even when it is big enough to be a region.
        let stroked = glyph_sized && fill < self.min_glyph_region_fill;
        if stats.count >= self.min_region_pixels
            && rect.width >= self.min_region_side
            && rect.height >= self.min_region_side
            && fill >= self.min_region_fill
            && !stroked
            && !gradient_band
        {
            Some(AreaKind::Region)
        } else if glyph_sized {
            Some(AreaKind::Glyph)
        } else if fill < self.min_region_fill
            && rect.width >= self.min_outline_side
            && rect.height >= self.min_outline_side
            && stats.count >= self.min_outline_pixels
        {
            Some(AreaKind::Outline)
        } else {
            None
        }
    }
}

/// What a connected area of one colour is (see `area_kind`).
enum AreaKind {
    Region,
    Glyph,
    Outline,
}

/// Per-label statistics of connected areas.
#[derive(Debug, Clone, Copy)]
pub(super) struct AreaStats {
    min_x: u32,
    min_y: u32,
    max_x: u32,
    max_y: u32,
    count: u32,
}

impl AreaStats {
    pub(super) fn rect(&self) -> PixelRect {
        PixelRect {
            x: self.min_x,
            y: self.min_y,
            width: self.max_x - self.min_x + 1,
            height: self.max_y - self.min_y + 1,
        }
    }
}

pub(super) fn area_stats(
    labels: &image::ImageBuffer<image::Luma<u32>, Vec<u32>>,
) -> Vec<Option<AreaStats>> {
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
    min_two_way_share: f64,
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
        let near = pa
            .iter()
            .zip(pb)
            .all(|(ca, cb)| ca.abs_diff(*cb) <= QUANTUM);
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
                && f64::from(*lighter.min(darker)) >= min_two_way_share * total
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
