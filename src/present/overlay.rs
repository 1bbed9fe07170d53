//! Draws a segmentation over its image for a person to check: each segment's
//! outline (coloured by kind), its id, and its click point.

use image::{Rgba, RgbaImage};
use reprise_strategies::vision::{Segment, SegmentKind};

/// 3x5 bitmaps of the digits 0-9, one row a byte (bits 2..0 left to right).
const DIGITS: [[u8; 5]; 10] = [
    [0b111, 0b101, 0b101, 0b101, 0b111],
    [0b010, 0b110, 0b010, 0b010, 0b111],
    [0b111, 0b001, 0b111, 0b100, 0b111],
    [0b111, 0b001, 0b111, 0b001, 0b111],
    [0b101, 0b101, 0b111, 0b001, 0b001],
    [0b111, 0b100, 0b111, 0b001, 0b111],
    [0b111, 0b100, 0b111, 0b101, 0b111],
    [0b111, 0b001, 0b010, 0b010, 0b010],
    [0b111, 0b101, 0b111, 0b101, 0b111],
    [0b111, 0b101, 0b111, 0b001, 0b111],
];

fn colour(kind: SegmentKind) -> Rgba<u8> {
    match kind {
        SegmentKind::Region => Rgba([229, 57, 53, 255]),
        SegmentKind::Text => Rgba([30, 136, 229, 255]),
        SegmentKind::LabelledControl => Rgba([67, 160, 71, 255]),
        SegmentKind::Outline => Rgba([251, 140, 0, 255]),
        SegmentKind::Row => Rgba([142, 36, 170, 255]),
        SegmentKind::Slider => Rgba([0, 137, 123, 255]),
    }
}

fn put(image: &mut RgbaImage, x: i64, y: i64, colour: Rgba<u8>) {
    if x >= 0 && y >= 0 && (x as u32) < image.width() && (y as u32) < image.height() {
        image.put_pixel(x as u32, y as u32, colour);
    }
}

/// Writes `number` at (x, y), two pixels per font pixel, on a white backing.
fn draw_number(image: &mut RgbaImage, x: i64, y: i64, number: usize, colour: Rgba<u8>) {
    let text = number.to_string();
    let width = text.len() as i64 * 8;
    for dy in -1..11 {
        for dx in -1..width {
            put(image, x + dx, y + dy, Rgba([255, 255, 255, 255]));
        }
    }
    for (idx, digit) in text.bytes().enumerate() {
        let glyph = DIGITS[usize::from(digit - b'0')];
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..3 {
                if bits & (0b100 >> col) != 0 {
                    for (sx, sy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        put(
                            image,
                            x + idx as i64 * 8 + col * 2 + sx,
                            y + row as i64 * 2 + sy,
                            colour,
                        );
                    }
                }
            }
        }
    }
}

/// The image with every segment drawn over it.
pub fn draw(image: &RgbaImage, segments: &[Segment]) -> RgbaImage {
    let mut out = image.clone();
    for segment in segments {
        let colour = colour(segment.kind);
        let rect = segment.rect;
        let (left, top) = (i64::from(rect.x), i64::from(rect.y));
        let (right, bottom) = (i64::from(rect.right()) - 1, i64::from(rect.bottom()) - 1);
        for x in left..=right {
            put(&mut out, x, top, colour);
            put(&mut out, x, bottom, colour);
        }
        for y in top..=bottom {
            put(&mut out, left, y, colour);
            put(&mut out, right, y, colour);
        }
        let (cx, cy) = (
            i64::from(segment.click_point.0),
            i64::from(segment.click_point.1),
        );
        for d in -3..=3 {
            put(&mut out, cx + d, cy, colour);
            put(&mut out, cx, cy + d, colour);
        }
        draw_number(&mut out, left + 1, top + 1, segment.id, colour);
    }
    out
}
