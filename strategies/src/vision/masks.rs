//! Masks from what a segmentation model answers: a colour-coded image (one
//! colour per mask, black for none; refused when it looks compressed or
//! scaled, which invents colours) or polygons. The wire format (JSON, base64
//! PNG) is the application's; these are the pixels.

use image::RgbaImage;

use super::{Mask, PixelRect, VisionError};

/// Masks from a colour-coded image: every colour but black is one mask.
pub fn masks_from_colours(image: &RgbaImage) -> Result<Vec<Mask>, VisionError> {
    let mut boxes: std::collections::HashMap<[u8; 3], (u32, u32, u32, u32, u64)> =
        std::collections::HashMap::new();
    for (x, y, pixel) in image.enumerate_pixels() {
        let [r, g, b, _] = pixel.0;
        if [r, g, b] == [0, 0, 0] {
            continue;
        }
        let entry = boxes.entry([r, g, b]).or_insert((x, y, x, y, 0));
        entry.0 = entry.0.min(x);
        entry.1 = entry.1.min(y);
        entry.2 = entry.2.max(x);
        entry.3 = entry.3.max(y);
        entry.4 += 1;
    }
    // In a lossless mask image every colour is a solid area, most of whose
    // pixels have the same colour all around; compression or scaling leaves
    // thin bands of in-between colours with no such interior.
    let mut interior: std::collections::HashMap<[u8; 3], u64> = std::collections::HashMap::new();
    for (x, y, pixel) in image.enumerate_pixels() {
        let colour = [pixel.0[0], pixel.0[1], pixel.0[2]];
        if colour == [0, 0, 0]
            || x == 0
            || y == 0
            || x + 1 >= image.width()
            || y + 1 >= image.height()
        {
            continue;
        }
        let same = |nx: u32, ny: u32| image.get_pixel(nx, ny).0[..3] == colour;
        if same(x - 1, y) && same(x + 1, y) && same(x, y - 1) && same(x, y + 1) {
            *interior.entry(colour).or_default() += 1;
        }
    }
    let bands = boxes
        .keys()
        .filter(|colour| !interior.contains_key(*colour))
        .count();
    if boxes.len() > 8 && bands * 4 > boxes.len() {
        return Err(VisionError::BadMasks(format!(
            "{bands} of its {} colours are thin bands with no solid area: it looks compressed or scaled, which invents colours; send a lossless PNG",
            boxes.len()
        )));
    }
    let mut masks = Vec::with_capacity(boxes.len());
    for (colour, (x0, y0, x1, y1, _)) in boxes {
        let rect = PixelRect {
            x: x0,
            y: y0,
            width: x1 - x0 + 1,
            height: y1 - y0 + 1,
        };
        let bits = (0..rect.area())
            .map(|idx| {
                let (x, y) = (
                    x0 + (idx % u64::from(rect.width)) as u32,
                    y0 + (idx / u64::from(rect.width)) as u32,
                );
                image.get_pixel(x, y).0[..3] == colour
            })
            .collect();
        masks.push(Mask { rect, bits });
    }
    Ok(masks)
}

/// A mask from a polygon (even-odd rule, pixel centres), clipped to the image.
pub fn mask_from_polygon(points: &[(f64, f64)], width: u32, height: u32) -> Option<Mask> {
    if points.len() < 3 {
        return None;
    }
    let min_x = points
        .iter()
        .map(|p| p.0)
        .fold(f64::INFINITY, f64::min)
        .floor()
        .max(0.0) as u32;
    let min_y = points
        .iter()
        .map(|p| p.1)
        .fold(f64::INFINITY, f64::min)
        .floor()
        .max(0.0) as u32;
    let max_x = (points
        .iter()
        .map(|p| p.0)
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil() as u32)
        .min(width);
    let max_y = (points
        .iter()
        .map(|p| p.1)
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil() as u32)
        .min(height);
    if max_x <= min_x || max_y <= min_y {
        return None;
    }
    let rect = PixelRect {
        x: min_x,
        y: min_y,
        width: max_x - min_x,
        height: max_y - min_y,
    };
    let inside = |px: f64, py: f64| {
        let mut inside = false;
        let mut j = points.len() - 1;
        for i in 0..points.len() {
            let ((xi, yi), (xj, yj)) = (points[i], points[j]);
            if (yi > py) != (yj > py) && px < (xj - xi) * (py - yi) / (yj - yi) + xi {
                inside = !inside;
            }
            j = i;
        }
        inside
    };
    let bits = (0..rect.area())
        .map(|idx| {
            let x = f64::from(min_x + (idx % u64::from(rect.width)) as u32) + 0.5;
            let y = f64::from(min_y + (idx / u64::from(rect.width)) as u32) + 0.5;
            inside(x, y)
        })
        .collect();
    Some(Mask { rect, bits })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn colour_coded() -> RgbaImage {
        RgbaImage::from_fn(100, 60, |x, y| {
            if (10..40).contains(&x) && (10..30).contains(&y) {
                image::Rgba([255, 0, 0, 255])
            } else if (50..90).contains(&x) && (20..50).contains(&y) {
                image::Rgba([0, 0, 255, 255])
            } else {
                image::Rgba([0, 0, 0, 255])
            }
        })
    }

    #[test]
    fn every_colour_is_a_mask_unless_the_image_was_blurred() {
        let masks = masks_from_colours(&colour_coded()).unwrap();
        let mut rects: Vec<PixelRect> = masks.iter().map(|mask| mask.rect).collect();
        rects.sort_by_key(|rect| rect.x);
        let rect = |x, y, width, height| PixelRect {
            x,
            y,
            width,
            height,
        };
        assert_eq!(rects, [rect(10, 10, 30, 20), rect(50, 20, 40, 30)]);
        // A blurred mask image: many rare in-between colours.
        let blurred = image::imageops::blur(&colour_coded(), 1.5);
        let refused = masks_from_colours(&blurred).map(|masks| masks.len());
        assert!(
            matches!(&refused, Err(err) if err.to_string().contains("compressed or scaled")),
            "{refused:?}"
        );
    }

    #[test]
    fn a_polygon_covers_the_pixel_centres_inside_it() {
        let triangle =
            mask_from_polygon(&[(10.0, 10.0), (50.0, 10.0), (10.0, 50.0)], 100, 100).unwrap();
        assert!(triangle.get(12, 12) && !triangle.get(45, 45));
        assert_eq!(
            (triangle.rect.x, triangle.rect.y, triangle.rect.width),
            (10, 10, 40)
        );
        // Clipped to the image, and none without area inside it.
        let clipped = mask_from_polygon(&[(90.0, 0.0), (150.0, 0.0), (90.0, 40.0)], 100, 100);
        assert_eq!(clipped.map(|mask| mask.rect.right()), Some(100));
        assert!(mask_from_polygon(&[(0.0, 0.0), (5.0, 5.0)], 100, 100).is_none());
        assert!(
            mask_from_polygon(&[(200.0, 0.0), (250.0, 0.0), (200.0, 40.0)], 100, 100).is_none()
        );
    }
}
