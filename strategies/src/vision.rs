//! The vision engine: pure image code, testable without a display.
//!
//! - [`classical`]: segmentation of a window image into element masks with
//!   classical computer vision built for user interfaces (flat-colour regions,
//!   text lines from glyph blobs, labelled small controls), no model weights;
//! - [`refine`]: OpenAdapt's mask refinement, with its mistakes fixed;
//! - [`scale`]: screen ↔ image coordinates through HiDPI scale ratios;
//! - [`ssim`]: structural similarity (Wang et al.), for the segmentation cache.

pub mod boxes;
pub mod cache;
pub mod classical;
pub mod masks;
pub mod refine;
pub mod scale;
pub mod sliders;
pub mod ssim;

/// Luminance with the ITU-R BT.601 weights, 0 to 255: the one formula the
/// vision engine, the cache and the describers use (the SSIM and the cache's
/// target check on it as it is, the segmenter and the ink test rounded to a
/// byte by [`luma8`]).
pub fn luma(r: u8, g: u8, b: u8) -> f64 {
    0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)
}

/// [`luma`] rounded to the nearest byte, in integers.
pub fn luma8(r: u8, g: u8, b: u8) -> u8 {
    ((u32::from(r) * 299 + u32::from(g) * 587 + u32::from(b) * 114 + 500) / 1000) as u8
}

use serde::{Deserialize, Serialize};

/// A rectangle in image pixels. Width and height count pixels (inclusive of
/// both edges, so a one-pixel mask has width 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PixelRect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl PixelRect {
    /// Its place in reading order: by rows 4 pixels high, then from the
    /// left. A fingerprint's place among look-alikes counts in this order,
    /// when it is recorded and when it is looked for again.
    pub fn reading_order(&self) -> (u32, u32) {
        (self.y / 4, self.x)
    }

    pub fn area(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    pub fn right(&self) -> u32 {
        self.x + self.width
    }

    pub fn bottom(&self) -> u32 {
        self.y + self.height
    }

    pub fn intersection(&self, other: &PixelRect) -> Option<PixelRect> {
        let x = self.x.max(other.x);
        let y = self.y.max(other.y);
        let right = self.right().min(other.right());
        let bottom = self.bottom().min(other.bottom());
        (right > x && bottom > y).then(|| PixelRect {
            x,
            y,
            width: right - x,
            height: bottom - y,
        })
    }

    pub fn union(&self, other: &PixelRect) -> PixelRect {
        let x = self.x.min(other.x);
        let y = self.y.min(other.y);
        PixelRect {
            x,
            y,
            width: self.right().max(other.right()) - x,
            height: self.bottom().max(other.bottom()) - y,
        }
    }

    /// Intersection over union.
    pub fn iou(&self, other: &PixelRect) -> f64 {
        let Some(overlap) = self.intersection(other) else {
            return 0.0;
        };
        let overlap = overlap.area() as f64;
        overlap / (self.area() as f64 + other.area() as f64 - overlap)
    }

    pub fn contains(&self, other: &PixelRect) -> bool {
        other.x >= self.x
            && other.y >= self.y
            && other.right() <= self.right()
            && other.bottom() <= self.bottom()
    }

    pub fn contains_point(&self, x: u32, y: u32) -> bool {
        x >= self.x && y >= self.y && x < self.right() && y < self.bottom()
    }

    /// Grown by `dx`, `dy` on each side, kept inside `width` x `height`.
    pub fn padded(&self, dx: u32, dy: u32, width: u32, height: u32) -> PixelRect {
        let x = self.x.saturating_sub(dx);
        let y = self.y.saturating_sub(dy);
        PixelRect {
            x,
            y,
            width: (self.right() + dx).min(width) - x,
            height: (self.bottom() + dy).min(height) - y,
        }
    }
}

/// Which pixels of its rectangle a segment covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mask {
    pub rect: PixelRect,
    /// Row-major, `rect.width * rect.height` entries; stored packed, eight
    /// to a byte, in base64.
    #[serde(with = "packed_bits")]
    pub bits: Vec<bool>,
}

mod packed_bits {
    //! A mask's bits as base64 of the bits packed eight to a byte, preceded
    //! by their count, so that a stored segmentation stays small.
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bits: &[bool], serializer: S) -> Result<S::Ok, S::Error> {
        let mut bytes = (bits.len() as u32).to_le_bytes().to_vec();
        for chunk in bits.chunks(8) {
            bytes.push(
                chunk
                    .iter()
                    .enumerate()
                    .fold(0u8, |byte, (idx, bit)| byte | (u8::from(*bit) << idx)),
            );
        }
        serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<bool>, D::Error> {
        let text = String::deserialize(deserializer)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(serde::de::Error::custom)?;
        let (count, packed) = bytes
            .split_at_checked(4)
            .ok_or_else(|| serde::de::Error::custom("mask bits too short"))?;
        let count = u32::from_le_bytes(count.try_into().expect("four bytes")) as usize;
        if packed.len() != count.div_ceil(8) {
            return Err(serde::de::Error::custom(
                "mask bits do not match their count",
            ));
        }
        Ok((0..count)
            .map(|idx| packed[idx / 8] & (1 << (idx % 8)) != 0)
            .collect())
    }
}

impl Mask {
    /// A mask covering its whole rectangle.
    pub fn full(rect: PixelRect) -> Mask {
        Mask {
            rect,
            bits: vec![true; rect.area() as usize],
        }
    }

    pub fn get(&self, x: u32, y: u32) -> bool {
        self.rect.contains_point(x, y)
            && self.bits[((y - self.rect.y) * self.rect.width + (x - self.rect.x)) as usize]
    }

    pub fn count(&self) -> u64 {
        self.bits.iter().filter(|bit| **bit).count() as u64
    }

    /// The mean position of the covered pixels (pixel centres).
    pub fn centroid(&self) -> Option<(f64, f64)> {
        let (mut sum_x, mut sum_y, mut n) = (0.0, 0.0, 0u64);
        for (idx, bit) in self.bits.iter().enumerate() {
            if *bit {
                let idx = idx as u32;
                sum_x += f64::from(self.rect.x + idx % self.rect.width) + 0.5;
                sum_y += f64::from(self.rect.y + idx / self.rect.width) + 0.5;
                n += 1;
            }
        }
        (n > 0).then(|| (sum_x / n as f64, sum_y / n as f64))
    }

    /// A point guaranteed inside the mask: the centroid when it is inside (a
    /// non-convex mask's centroid may not be), else the covered pixel nearest
    /// to it.
    pub fn click_point(&self) -> Option<(u32, u32)> {
        self.click_point_near(self.centroid()?)
    }

    /// The covered pixel nearest `centroid` (the mask's own centroid).
    fn click_point_near(&self, (cx, cy): (f64, f64)) -> Option<(u32, u32)> {
        let (px, py) = (cx.floor() as u32, cy.floor() as u32);
        if self.get(px, py) {
            return Some((px, py));
        }
        let mut best: Option<((u32, u32), f64)> = None;
        for (idx, bit) in self.bits.iter().enumerate() {
            if *bit {
                let idx = idx as u32;
                let (x, y) = (
                    self.rect.x + idx % self.rect.width,
                    self.rect.y + idx / self.rect.width,
                );
                let distance =
                    (f64::from(x) + 0.5 - cx).powi(2) + (f64::from(y) + 0.5 - cy).powi(2);
                if best.is_none_or(|(_, best_distance)| distance < best_distance) {
                    best = Some(((x, y), distance));
                }
            }
        }
        best.map(|(point, _)| point)
    }
}

/// What a segment looks like it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SegmentKind {
    /// A flat-coloured box: a button, a text field, a panel.
    Region,
    /// A line of text (a label, a list row, a menu item).
    Text,
    /// A small box with the text beside it: a checkbox or radio button.
    LabelledControl,
    /// Something drawn with edges and no flat fill: an icon, an outline.
    Outline,
    /// A row of a list or a table with no border of its own: the band across
    /// its container that a row's contents repeat down at a regular pitch.
    Row,
    /// A slider: the track its knob can travel, as thick as the knob.
    Slider,
}

/// One element of a window image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Its index in the segmentation; 0 is a segment like any other.
    pub id: usize,
    pub kind: SegmentKind,
    pub rect: PixelRect,
    pub mask: Mask,
    pub centroid: (f64, f64),
    /// Where to click: always inside the mask.
    pub click_point: (u32, u32),
    /// The smallest other segment that contains this one.
    pub parent: Option<usize>,
}

impl Segment {
    /// A segment covering the whole of `rect`; `None` when it is empty.
    pub fn full(kind: SegmentKind, rect: PixelRect) -> Option<Segment> {
        Segment::from_mask(kind, Mask::full(rect))
    }

    /// A segment from a mask, with its centroid and click point.
    pub fn from_mask(kind: SegmentKind, mask: Mask) -> Option<Segment> {
        let centroid = mask.centroid()?;
        let click_point = mask.click_point_near(centroid)?;
        Some(Segment {
            id: 0,
            kind,
            rect: mask.rect,
            mask,
            centroid,
            click_point,
            parent: None,
        })
    }

    /// The segment's pixels cut out of `image`: outside the mask transparent.
    pub fn masked_crop(&self, image: &image::RgbaImage) -> image::RgbaImage {
        let rect = self.rect;
        image::RgbaImage::from_fn(rect.width, rect.height, |dx, dy| {
            let (x, y) = (rect.x + dx, rect.y + dy);
            if self.mask.get(x, y) && x < image.width() && y < image.height() {
                *image.get_pixel(x, y)
            } else {
                image::Rgba([0, 0, 0, 0])
            }
        })
    }
}

/// Why a segmentation failed.
#[derive(Debug, thiserror::Error)]
pub enum VisionError {
    #[error("the image is empty")]
    EmptyImage,
    #[error("the segmentation server failed: {0}")]
    Server(String),
    #[error("the segmentation server's mask image is unusable: {0}")]
    BadMasks(String),
}

/// A segment's description and the parts it is made of.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Description {
    /// The whole description, e.g. `button "Save"`.
    pub text: String,
    /// What kind of element it looks like (`button`, `text field`, …).
    pub role: String,
    /// The text read inside it, normalised (may be empty).
    pub label: String,
}

/// Turns a window image into element masks.
pub trait Segmenter {
    fn segment(&self, image: &image::RgbaImage) -> Result<Vec<Segment>, VisionError>;
    /// Its name and version in the segmentation cache: a segmentation made
    /// under another name is never reused.
    fn cache_name(&self) -> String;
}

/// Numbers the segments in order and links each to the smallest other
/// segment that contains it.
pub fn finish(mut segments: Vec<Segment>) -> Vec<Segment> {
    segments.sort_by_key(|segment| {
        (
            segment.rect.y,
            segment.rect.x,
            std::cmp::Reverse(segment.rect.area()),
        )
    });
    for (id, segment) in segments.iter_mut().enumerate() {
        segment.id = id;
    }
    let parents: Vec<Option<usize>> = segments
        .iter()
        .map(|segment| {
            segments
                .iter()
                .filter(|other| {
                    other.id != segment.id
                        && other.rect.contains(&segment.rect)
                        && other.rect != segment.rect
                })
                .min_by_key(|other| other.rect.area())
                .map(|other| other.id)
        })
        .collect();
    for (segment, parent) in segments.iter_mut().zip(parents) {
        segment.parent = parent;
    }
    segments
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_luminance_in_two_precisions() {
        assert_eq!((luma8(0, 0, 0), luma8(255, 255, 255)), (0, 255));
        assert_eq!(
            (luma8(255, 0, 0), luma8(0, 255, 0), luma8(0, 0, 255)),
            (76, 150, 29)
        );
        // The byte is the nearest to the exact value, for every colour tried.
        for value in (0..=255u32).step_by(5) {
            let (r, g, b) = (value as u8, (255 - value) as u8, (value * 7 % 256) as u8);
            assert!((f64::from(luma8(r, g, b)) - luma(r, g, b)).abs() <= 0.5);
        }
    }

    #[test]
    fn a_non_convex_mask_clicks_inside_itself() {
        // An L shape whose centroid falls in the empty corner.
        let rect = PixelRect {
            x: 10,
            y: 10,
            width: 10,
            height: 10,
        };
        let mut mask = Mask {
            rect,
            bits: vec![false; 100],
        };
        for i in 0..10 {
            mask.bits[i] = true; // top row
            mask.bits[i * 10] = true; // left column
        }
        let (cx, cy) = mask.centroid().unwrap();
        assert!(!mask.get(cx as u32, cy as u32), "the centroid is outside");
        let (px, py) = mask.click_point().unwrap();
        assert!(mask.get(px, py));
    }

    #[test]
    fn rect_geometry() {
        let a = PixelRect {
            x: 0,
            y: 0,
            width: 10,
            height: 10,
        };
        let b = PixelRect {
            x: 5,
            y: 5,
            width: 10,
            height: 10,
        };
        assert!((a.iou(&b) - 25.0 / 175.0).abs() < 1e-12);
        assert_eq!(a.iou(&a), 1.0);
        assert!(a.union(&b).contains(&b));
        assert_eq!(
            a.padded(2, 2, 11, 11),
            PixelRect {
                x: 0,
                y: 0,
                width: 11,
                height: 11
            }
        );
    }
}
