//! The segmentation cache's decisions, as pure functions, and its port.
//!
//! A cached segmentation is reused for a new window image only when it is the
//! same size, its perceptual hash is near, the whole images are similar
//! (SSIM at or above a threshold, 0.9 by default), and the region of the
//! target still matches closely: OpenAdapt reused stale segmentations for
//! screens that were similar but not the same, and kept its cache in memory,
//! so it died with the process. Ours lives in the store.

use image::RgbaImage;

use super::ssim::{Gray, ssim};
use super::{PixelRect, Segment};

/// Thumbnails for the whole-image SSIM are at most this many pixels a side.
pub const THUMBNAIL_SIDE: usize = 128;

/// A 64-bit difference hash: 9x8 luminance cells, one bit per horizontal
/// step that gets brighter. Near images have hashes a few bits apart.
pub fn dhash(image: &RgbaImage) -> u64 {
    dhash_gray(&thumbnail(image))
}

/// The difference hash of a grayscale image (a thumbnail will do: the hash
/// only looks at 9x8 cells).
pub fn dhash_gray(gray: &Gray) -> u64 {
    let (width, height) = (gray.width.max(1), gray.height.max(1));
    let cell = |cx: usize, cy: usize| -> f64 {
        let (x0, x1) = (
            cx * width / 9,
            ((cx + 1) * width / 9).max(cx * width / 9 + 1).min(width),
        );
        let (y0, y1) = (
            cy * height / 8,
            ((cy + 1) * height / 8).max(cy * height / 8 + 1).min(height),
        );
        let mut sum = 0.0;
        for y in y0..y1 {
            for x in x0..x1 {
                sum += gray.values.get(y * gray.width + x).copied().unwrap_or(0.0);
            }
        }
        sum / ((x1 - x0) * (y1 - y0)).max(1) as f64
    };
    let mut hash = 0u64;
    for cy in 0..8 {
        for cx in 0..8 {
            hash = (hash << 1) | u64::from(cell(cx + 1, cy) > cell(cx, cy));
        }
    }
    hash
}

pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// The thumbnail the whole-image SSIM is computed on.
pub fn thumbnail(image: &RgbaImage) -> Gray {
    Gray::luminance_downscaled(image, THUMBNAIL_SIDE)
}

/// How strict reuse is.
#[derive(Debug, Clone, Copy)]
pub struct ReusePolicy {
    /// Candidates whose hash differs in more bits are not compared.
    pub max_hash_distance: u32,
    /// The whole images' SSIM must reach this.
    pub min_ssim: f64,
    /// In the target's region, the mean luminance difference must stay below this.
    pub max_target_difference: f64,
    /// When set, at most this many thumbnail pixels outside the target may
    /// have changed noticeably. Replay sets it to 0: a screen where anything
    /// appeared (a second button like the target, say) is segmented afresh.
    pub max_changed_outside_target: Option<usize>,
}

impl Default for ReusePolicy {
    fn default() -> Self {
        ReusePolicy {
            max_hash_distance: 12,
            min_ssim: 0.9,
            max_target_difference: 2.0,
            max_changed_outside_target: None,
        }
    }
}

/// Whether the target's region reads the same in both images: the mean
/// absolute luminance difference inside it is small.
pub fn target_matches(
    cached: &RgbaImage,
    new: &RgbaImage,
    target: PixelRect,
    policy: &ReusePolicy,
) -> bool {
    if cached.dimensions() != new.dimensions()
        || target.right() > new.width()
        || target.bottom() > new.height()
    {
        return false;
    }
    let luminance = |pixel: &image::Rgba<u8>| {
        let [r, g, b, _] = pixel.0;
        0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)
    };
    let mut total = 0.0;
    for y in target.y..target.bottom() {
        for x in target.x..target.right() {
            total += (luminance(cached.get_pixel(x, y)) - luminance(new.get_pixel(x, y))).abs();
        }
    }
    total / target.area().max(1) as f64 <= policy.max_target_difference
}

/// Whether the whole images are similar enough, on their thumbnails.
pub fn similar_enough(cached: &Gray, new: &Gray, policy: &ReusePolicy) -> bool {
    ssim(cached, new).is_some_and(|value| value >= policy.min_ssim) || (cached == new)
}

/// How many thumbnail pixels differ by more than a small tolerance outside
/// `target` (given in full-image pixels of an image `full_size` large).
pub fn changed_outside(
    cached: &Gray,
    new: &Gray,
    target: Option<PixelRect>,
    full_size: (u32, u32),
) -> usize {
    if cached.width != new.width || cached.height != new.height {
        return usize::MAX;
    }
    let scale_x = f64::from(full_size.0) / cached.width.max(1) as f64;
    let scale_y = f64::from(full_size.1) / cached.height.max(1) as f64;
    let mut changed = 0;
    for y in 0..new.height {
        for x in 0..new.width {
            let idx = y * new.width + x;
            if (cached.values[idx] - new.values[idx]).abs() <= 24.0 {
                continue;
            }
            let (fx, fy) = ((x as f64 * scale_x) as u32, (y as f64 * scale_y) as u32);
            let in_target = target.is_some_and(|rect| {
                fx + scale_x.ceil() as u32 >= rect.x
                    && fy + scale_y.ceil() as u32 >= rect.y
                    && fx <= rect.right()
                    && fy <= rect.bottom()
            });
            if !in_target {
                changed += 1;
            }
        }
    }
    changed
}

/// A segmentation found in the cache, with the descriptions computed for it.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedSegmentation {
    pub id: i64,
    pub segments: Vec<Segment>,
    pub descriptions: Option<Vec<String>>,
}

/// Where segmentations are kept across processes.
pub trait SegmentationCache {
    /// A reusable segmentation of `image`, checking `target` (the region the
    /// next action aims at, in image pixels) when given.
    fn lookup(
        &mut self,
        image: &RgbaImage,
        target: Option<PixelRect>,
    ) -> Option<CachedSegmentation>;
    /// Keeps a new segmentation; returns its id.
    fn insert(&mut self, image: &RgbaImage, segments: &[Segment]) -> Option<i64>;
    /// Keeps the descriptions computed for a cached segmentation.
    fn set_descriptions(&mut self, id: i64, descriptions: &[String]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(shade: u8) -> RgbaImage {
        RgbaImage::from_fn(200, 120, |x, y| {
            let inside_button = (20..80).contains(&x) && (30..50).contains(&y);
            let v = if inside_button {
                shade
            } else {
                ((x / 10 + y / 10) % 2 * 40 + 180) as u8
            };
            image::Rgba([v, v, v, 255])
        })
    }

    #[test]
    fn near_images_have_near_hashes_and_reuse_needs_the_target_unchanged() {
        let (a, b) = (window(100), window(104));
        assert!(hamming(dhash(&a), dhash(&b)) <= 2);
        let policy = ReusePolicy::default();
        assert!(similar_enough(&thumbnail(&a), &thumbnail(&b), &policy));
        let button = PixelRect {
            x: 20,
            y: 30,
            width: 60,
            height: 20,
        };
        let elsewhere = PixelRect {
            x: 100,
            y: 60,
            width: 40,
            height: 20,
        };
        assert!(target_matches(&a, &b, elsewhere, &policy));
        assert!(
            !target_matches(&a, &b, button, &policy),
            "the target changed: no reuse"
        );
        let inverted = RgbaImage::from_fn(200, 120, |x, y| {
            let p = a.get_pixel(x, y).0;
            image::Rgba([255 - p[0], 255 - p[1], 255 - p[2], 255])
        });
        assert!(!similar_enough(
            &thumbnail(&a),
            &thumbnail(&inverted),
            &policy
        ));
    }
}
