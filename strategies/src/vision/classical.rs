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

mod areas;
mod rows;
mod text;

use image::RgbaImage;

use super::boxes::{Edges, bordered_boxes};
use super::refine::{RefineOptions, refine};
use super::sliders::{SliderOptions, sliders};
use super::{PixelRect, Segment, SegmentKind, Segmenter, VisionError, finish};
use text::text_height;

/// The segmenter's thresholds, in image pixels.
#[derive(Debug, Clone)]
pub struct ClassicalSegmenter {
    /// A flat area at least this large (pixels), this long on each side and
    /// filling this share of its rectangle is a region candidate.
    pub min_region_pixels: u32,
    pub min_region_side: u32,
    pub min_region_fill: f64,
    /// A flat area no thicker than this and at least this long is a rule (a
    /// separator, a piece of a border), never ink.
    pub max_rule_thickness: u32,
    pub min_rule_length: u32,
    /// A flat area that fills less than `min_region_fill` of its rectangle,
    /// at least this long on each side and of this many pixels, is an
    /// outline (a thin frame).
    pub min_outline_side: u32,
    pub min_outline_pixels: u32,
    /// A region with both sides in this range may be a checkbox or a radio
    /// button: a labelled control when a text line starts within
    /// `max_label_gap` right of it on the same row; the control's box then
    /// takes the label with `label_padding` (sideways, up and down) around it.
    pub check_box_sides: std::ops::RangeInclusive<u32>,
    pub max_label_gap: u32,
    pub label_padding: (u32, u32),
    /// A flat area whose boundary is mostly soft (more than this share; the
    /// colour beyond it one quantization step away, lighter on one side and
    /// darker on another, each along at least `min_two_way_soft_share` of
    /// it) is a band of a gradient, not a region.
    pub max_soft_edge_share: f64,
    pub min_two_way_soft_share: f64,
    /// A glyph-sized area is a region (a small box) only when it fills at
    /// least this share of its rectangle; otherwise it is a stroked shape.
    pub min_glyph_region_fill: f64,
    /// Areas smaller than this, with no side longer than `max_glyph_side`, are ink.
    pub max_glyph_pixels: u32,
    pub max_glyph_side: u32,
    /// Ink is joined across gaps up to this wide (letters into words).
    pub letter_gap: u32,
    /// A word is at least this high and this wide (dilated ink).
    pub min_word_height: u32,
    pub min_word_width: u32,
    /// Words join into a line when they overlap vertically by at least this
    /// share of the smaller one's height.
    pub min_line_overlap: f64,
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
    /// A list's container is at least this many text heights wide (and
    /// `min_list_rows` pitches high).
    pub min_list_width_ratio: f64,
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
    pub const CACHE_NAME: &'static str = "classical-6";
}

impl Default for ClassicalSegmenter {
    fn default() -> Self {
        ClassicalSegmenter {
            min_region_pixels: 60,
            min_region_side: 6,
            min_region_fill: 0.4,
            max_rule_thickness: 2,
            min_rule_length: 20,
            min_outline_side: 8,
            min_outline_pixels: 16,
            check_box_sides: 8..=28,
            max_label_gap: 12,
            label_padding: (3, 2),
            max_soft_edge_share: 0.5,
            min_two_way_soft_share: 0.1,
            min_glyph_region_fill: 0.6,
            max_glyph_pixels: 160,
            max_glyph_side: 40,
            letter_gap: 3,
            min_word_height: 5,
            min_word_width: 4,
            min_line_overlap: 0.6,
            word_gap_ratio: 0.9,
            item_gap_ratio: 0.25,
            min_list_rows: 3,
            min_row_pitch_ratio: 1.5,
            max_row_pitch_ratio: 5.0,
            row_pitch_tolerance: 0.25,
            min_list_width_ratio: 8.0,
            compact_item_ratio: 2.5,
            padding_ratio: 0.7,
            max_line_height: 48,
            boxes: super::boxes::BoxOptions::default(),
            sliders: SliderOptions::default(),
            refine: RefineOptions::default(),
        }
    }
}

impl Segmenter for ClassicalSegmenter {
    fn cache_name(&self) -> String {
        ClassicalSegmenter::CACHE_NAME.to_owned()
    }

    /// The stages of the module's description, in order.
    fn segment(&self, image: &RgbaImage) -> Result<Vec<Segment>, VisionError> {
        let (width, height) = image.dimensions();
        if width == 0 || height == 0 {
            return Err(VisionError::EmptyImage);
        }
        // 1. Regions, outlines and ink.
        let areas = self.flat_areas(image);
        let mut segments = areas.segments;
        let regions: Vec<PixelRect> = segments
            .iter()
            .filter(|segment| segment.kind == SegmentKind::Region)
            .map(|segment| segment.rect)
            .collect();
        // 2. Text lines and their items, each as its hit area.
        let lines = self.text_lines(&areas.ink, width, height, &regions);
        let unit = text_height(&lines);
        for line in &lines {
            for rect in std::iter::once(line.rect).chain(self.items(line)) {
                let padded = self.hit_area(rect, unit, width, height);
                segments.extend(Segment::full(SegmentKind::Text, padded));
            }
        }
        let lines: Vec<PixelRect> = lines.into_iter().map(|line| line.rect).collect();
        // 3. Checkboxes and radio buttons with their labels.
        segments.extend(
            self.labelled_controls(&areas.small_boxes, &lines, (width, height))
                .into_iter()
                .filter_map(|rect| Segment::full(SegmentKind::LabelledControl, rect)),
        );
        // 4 and 5. Boxes drawn as a thin border around a gradient or a busy
        // fill, and sliders.
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
        // 6. Rows of lists without borders, from what repeats down a container.
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
        // 7. Background, noise and duplicates removed.
        Ok(finish(refine(segments, width, height, &self.refine)))
    }
}

impl ClassicalSegmenter {
    /// Stage 3: a small square box with a text line just right of it,
    /// centred on the same row, is a checkbox or radio button and its label.
    fn labelled_controls(
        &self,
        small_boxes: &[PixelRect],
        lines: &[PixelRect],
        (width, height): (u32, u32),
    ) -> Vec<PixelRect> {
        let (pad_x, pad_y) = self.label_padding;
        small_boxes
            .iter()
            .filter_map(|small| {
                let centre = f64::from(small.y) + f64::from(small.height) / 2.0;
                let label = lines.iter().find(|line| {
                    let line_centre = f64::from(line.y) + f64::from(line.height) / 2.0;
                    line.x >= small.right()
                        && line.x - small.right() <= self.max_label_gap
                        && (line_centre - centre).abs() <= f64::from(small.height) / 2.0
                })?;
                Some(small.union(&label.padded(pad_x, pad_y, width, height)))
            })
            .collect()
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
