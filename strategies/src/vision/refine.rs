//! Mask refinement, after OpenAdapt's steps, with its mistakes fixed: the
//! background goes, thin ragged masks are opened away, holes are filled where
//! the masks are made, tiny masks go, and of two identical masks exactly one
//! stays (OpenAdapt's containment test removed both).

use super::{Mask, PixelRect, Segment, SegmentKind};

#[derive(Debug, Clone)]
pub struct RefineOptions {
    /// A mask within this many pixels of all four image edges is background.
    pub border_band: u32,
    /// Masks with fewer pixels than this are dropped.
    pub min_pixels: u64,
    /// Masks thinner than this (after opening) are dropped.
    pub min_side: u32,
    /// Two masks whose boxes overlap at least this much are the same element.
    pub duplicate_iou: f64,
}

impl Default for RefineOptions {
    fn default() -> Self {
        RefineOptions {
            border_band: 2,
            min_pixels: 40,
            min_side: 5,
            duplicate_iou: 0.9,
        }
    }
}

/// How much an element kind is preferred when two masks are the same element.
fn priority(kind: SegmentKind) -> u8 {
    match kind {
        SegmentKind::Region => 0,
        SegmentKind::LabelledControl => 1,
        SegmentKind::Text => 2,
        SegmentKind::Outline => 3,
        SegmentKind::Row => 4,
        SegmentKind::Slider => 5,
    }
}

/// Morphological opening (erosion then dilation, 3x3) of a mask; `None` when
/// nothing is left. Outside the mask counts as unset. The 3x3 square is
/// separable: each step is a pass along the rows, then one down the columns.
pub fn open(mask: &Mask) -> Option<Mask> {
    let (w, h) = (mask.rect.width as usize, mask.rect.height as usize);
    let eroded = square_pass(&mask.bits, w, h, true);
    let opened = square_pass(&eroded, w, h, false);
    opened.iter().any(|bit| *bit).then_some(Mask {
        rect: mask.rect,
        bits: opened,
    })
}

/// One 3x3 erosion (`erode`: a pixel stays set only if its whole square is
/// set, pixels outside counting as unset) or dilation (set if any of its
/// square is).
fn square_pass(bits: &[bool], w: usize, h: usize, erode: bool) -> Vec<bool> {
    let combine = |a: bool, b: bool| if erode { a && b } else { a || b };
    let of_three = |before: bool, here: bool, after: bool| combine(combine(before, here), after);
    // Along the rows: each pixel with its left and right neighbours.
    let mut across = vec![false; bits.len()];
    for (row, out) in bits.chunks(w.max(1)).zip(across.chunks_mut(w.max(1))) {
        for (x, bit) in out.iter_mut().enumerate() {
            let left = x > 0 && row[x - 1];
            let right = x + 1 < row.len() && row[x + 1];
            *bit = of_three(left, row[x], right);
        }
    }
    // Down the columns, row by row in memory order.
    let mut out = vec![false; bits.len()];
    for y in 0..h {
        for x in 0..w {
            let above = y > 0 && across[(y - 1) * w + x];
            let below = y + 1 < h && across[(y + 1) * w + x];
            out[y * w + x] = of_three(above, across[y * w + x], below);
        }
    }
    out
}

/// Refines candidate segments of a `width` x `height` image.
pub fn refine(
    candidates: Vec<Segment>,
    width: u32,
    height: u32,
    options: &RefineOptions,
) -> Vec<Segment> {
    let band = options.border_band;
    let touches_all_sides = |rect: &PixelRect| {
        rect.x <= band
            && rect.y <= band
            && rect.right() + band >= width
            && rect.bottom() + band >= height
    };
    let mut kept: Vec<Segment> = Vec::new();
    let mut candidates = candidates;
    // The key counts a mask's pixels: computed once per candidate.
    candidates.sort_by_cached_key(|segment| {
        (
            priority(segment.kind),
            std::cmp::Reverse(segment.mask.count()),
        )
    });
    for candidate in candidates {
        if touches_all_sides(&candidate.rect) {
            continue;
        }
        let Some(opened) = (if candidate.kind == SegmentKind::Region {
            open(&candidate.mask)
        } else {
            Some(candidate.mask.clone())
        }) else {
            continue;
        };
        if opened.count() < options.min_pixels
            || opened.rect.width < options.min_side
            || opened.rect.height < options.min_side
        {
            continue;
        }
        // Of two masks of the same element, the first (preferred) one stays;
        // the duplicate goes, so exactly one of them is kept.
        if kept
            .iter()
            .any(|other| other.rect.iou(&candidate.rect) >= options.duplicate_iou)
        {
            continue;
        }
        if let Some(segment) = Segment::from_mask(candidate.kind, opened) {
            kept.push(segment);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(x: u32, y: u32, side: u32, kind: SegmentKind) -> Segment {
        Segment::full(
            kind,
            PixelRect {
                x,
                y,
                width: side,
                height: side,
            },
        )
        .unwrap()
    }

    #[test]
    fn of_two_identical_masks_exactly_one_stays() {
        let kept = refine(
            vec![
                square(10, 10, 20, SegmentKind::Text),
                square(10, 10, 20, SegmentKind::Region),
            ],
            100,
            100,
            &RefineOptions::default(),
        );
        assert_eq!(kept.len(), 1);
        assert_eq!(
            kept[0].kind,
            SegmentKind::Region,
            "the preferred kind stays"
        );
    }

    #[test]
    fn background_tiny_and_thin_masks_go() {
        let background = Segment::full(
            SegmentKind::Region,
            PixelRect {
                x: 0,
                y: 0,
                width: 100,
                height: 100,
            },
        )
        .unwrap();
        let tiny = square(50, 50, 3, SegmentKind::Region);
        let thin = Segment::full(
            SegmentKind::Region,
            PixelRect {
                x: 5,
                y: 5,
                width: 60,
                height: 2,
            },
        )
        .unwrap();
        let kept = refine(
            vec![
                background,
                tiny,
                thin,
                square(20, 20, 10, SegmentKind::Region),
            ],
            100,
            100,
            &RefineOptions::default(),
        );
        assert_eq!(kept.len(), 1);
        assert_eq!(
            kept[0].rect,
            PixelRect {
                x: 20,
                y: 20,
                width: 10,
                height: 10
            }
        );
    }

    #[test]
    fn contained_targets_stay() {
        let kept = refine(
            vec![
                square(10, 10, 40, SegmentKind::Region),
                square(15, 15, 10, SegmentKind::Text),
            ],
            100,
            100,
            &RefineOptions::default(),
        );
        assert_eq!(
            kept.len(),
            2,
            "a label inside a button is a target of its own"
        );
    }
}
