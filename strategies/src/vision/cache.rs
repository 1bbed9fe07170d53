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
use super::{Description, PixelRect, Segment};

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
        super::luma(r, g, b)
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
    pub descriptions: Option<Vec<Description>>,
}

/// A cached row's key fields: enough to prefilter by hash without reading
/// thumbnails or segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CandidateRow {
    pub id: i64,
    pub phash: u64,
}

/// A window image with its thumbnail and difference hash, computed once for
/// the lookup and, on a miss, the insert.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe<'a> {
    pub image: &'a RgbaImage,
    pub thumbnail: Gray,
    pub phash: u64,
}

impl Probe<'_> {
    pub fn of(image: &RgbaImage) -> Probe<'_> {
        let thumbnail = thumbnail(image);
        let phash = dhash_gray(&thumbnail);
        Probe {
            image,
            thumbnail,
            phash,
        }
    }
}

/// A new segmentation to keep, under the cache name of the segmenter and
/// describer that made it.
#[derive(Debug)]
pub struct NewRow<'a> {
    pub name: &'a str,
    pub probe: &'a Probe<'a>,
    pub segments: &'a [Segment],
}

/// Why the rows could not be read or written (the store's own error).
pub type RowsError = Box<dyn std::error::Error + Send + Sync>;

/// Where cached segmentations are kept across processes: typed rows, and
/// nothing of the rule that decides their reuse ([`SegmentationCache`]).
/// `name` is the cache name of a segmenter and describer: rows of another
/// are never candidates.
pub trait SegmentationRows {
    /// The rows of `name` for images of this size, newest first.
    fn candidates(
        &mut self,
        name: &str,
        width: u32,
        height: u32,
    ) -> Result<Vec<CandidateRow>, RowsError>;
    /// A row's thumbnail, as stored (8-bit luminance).
    fn thumbnail(&mut self, id: i64) -> Result<Option<Gray>, RowsError>;
    /// The window image a row was segmented from.
    fn image(&mut self, id: i64) -> Result<Option<RgbaImage>, RowsError>;
    /// A row's segments, and its descriptions once they are stored (`None`
    /// when they are not, or cannot be read: they are computed again).
    fn segmentation(&mut self, id: i64) -> Result<Option<CachedSegmentation>, RowsError>;
    /// Keeps a new segmentation; returns its id.
    fn insert(&mut self, row: &NewRow<'_>) -> Result<i64, RowsError>;
    /// Keeps the descriptions computed for a row.
    fn set_descriptions(&mut self, id: i64, descriptions: &[Description]) -> Result<(), RowsError>;
}

/// How many of the nearest hashes are compared by SSIM.
const MAX_COMPARED: usize = 3;

/// The segmentation cache: the reuse rule over a store's rows. A row that
/// cannot be read is a miss (the image is segmented afresh), never an error
/// of the replay.
pub struct SegmentationCache {
    rows: Box<dyn SegmentationRows>,
    pub policy: ReusePolicy,
}

reprise_models::debug_showing!(SegmentationCache, policy);

impl SegmentationCache {
    pub fn new(rows: Box<dyn SegmentationRows>) -> SegmentationCache {
        SegmentationCache {
            rows,
            policy: ReusePolicy::default(),
        }
    }

    /// The cache for replay decisions: a segmentation is reused only when
    /// nothing changed outside the target either.
    pub fn strict(rows: Box<dyn SegmentationRows>) -> SegmentationCache {
        let mut cache = SegmentationCache::new(rows);
        cache.policy.max_changed_outside_target = Some(0);
        cache
    }

    /// A reusable segmentation of the probed image made by `name`, checking
    /// `target` (the region the next action aims at, in image pixels) when
    /// given.
    pub fn lookup(
        &mut self,
        name: &str,
        probe: &Probe<'_>,
        target: Option<PixelRect>,
    ) -> Option<CachedSegmentation> {
        self.try_lookup(name, probe, target).unwrap_or_else(|err| {
            tracing::warn!("the segmentation cache could not be read, segmenting afresh: {err}");
            None
        })
    }

    fn try_lookup(
        &mut self,
        name: &str,
        probe: &Probe<'_>,
        target: Option<PixelRect>,
    ) -> Result<Option<CachedSegmentation>, RowsError> {
        let (width, height) = probe.image.dimensions();
        let mut candidates = self.rows.candidates(name, width, height)?;
        candidates.retain(|row| hamming(row.phash, probe.phash) <= self.policy.max_hash_distance);
        candidates.sort_by_key(|row| hamming(row.phash, probe.phash));
        for row in candidates.into_iter().take(MAX_COMPARED) {
            let Some(cached) = self.rows.thumbnail(row.id)? else {
                continue;
            };
            if !reusable(&cached, probe, target, &self.policy, &mut || {
                self.rows.image(row.id)
            })? {
                tracing::debug!(
                    id = row.id,
                    "a similar cached segmentation, but not the same screen"
                );
                continue;
            }
            if let Some(found) = self.rows.segmentation(row.id)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// Keeps a new segmentation of the probed image; returns its id (`None`
    /// when it could not be kept: the replay goes on without).
    pub fn insert(&mut self, name: &str, probe: &Probe<'_>, segments: &[Segment]) -> Option<i64> {
        let row = NewRow {
            name,
            probe,
            segments,
        };
        self.rows
            .insert(&row)
            .map_err(|err| tracing::warn!("the segmentation could not be cached: {err}"))
            .ok()
    }

    /// Keeps the descriptions computed for a cached segmentation.
    pub fn set_descriptions(&mut self, id: i64, descriptions: &[Description]) {
        if let Err(err) = self.rows.set_descriptions(id, descriptions) {
            tracing::warn!("the descriptions could not be cached: {err}");
        }
    }
}

/// Whether a cached segmentation (its thumbnail `cached`) may stand for the
/// probed image: the whole images similar, nothing changed outside the target
/// where the policy says so, and the target's region the same in the cached
/// image (read with `cached_image` only when that is all that is left).
fn reusable(
    cached: &Gray,
    probe: &Probe<'_>,
    target: Option<PixelRect>,
    policy: &ReusePolicy,
    cached_image: &mut dyn FnMut() -> Result<Option<RgbaImage>, RowsError>,
) -> Result<bool, RowsError> {
    if !similar_enough(cached, &probe.thumbnail, policy) {
        return Ok(false);
    }
    if let Some(max_changed) = policy.max_changed_outside_target
        && changed_outside(cached, &probe.thumbnail, target, probe.image.dimensions()) > max_changed
    {
        return Ok(false);
    }
    match target {
        None => Ok(true),
        Some(target) => Ok(cached_image()?.is_some_and(|cached_image| {
            target_matches(&cached_image, probe.image, target, policy)
        })),
    }
}

/// Rows kept in memory, as a store keeps them, for the unit tests of the
/// cache and of what analyses through it.
#[cfg(test)]
pub(crate) mod memory {
    use super::*;

    /// A row in memory, as a store keeps it (its thumbnail rounded to 8 bits).
    pub(crate) struct Row {
        pub name: String,
        pub image: RgbaImage,
        pub thumbnail: Gray,
        pub phash: u64,
        pub segments: Vec<Segment>,
        pub descriptions: Option<Vec<Description>>,
    }

    /// Rows in memory; `broken` makes every read fail.
    #[derive(Default)]
    pub(crate) struct Rows {
        pub rows: Vec<Row>,
        pub broken: bool,
    }

    impl SegmentationRows for std::rc::Rc<std::cell::RefCell<Rows>> {
        fn candidates(
            &mut self,
            name: &str,
            width: u32,
            height: u32,
        ) -> Result<Vec<CandidateRow>, RowsError> {
            let rows = self.borrow();
            if rows.broken {
                return Err("the disk is gone".into());
            }
            Ok(rows
                .rows
                .iter()
                .enumerate()
                .rev()
                .filter(|(_, row)| row.name == name && row.image.dimensions() == (width, height))
                .map(|(id, row)| CandidateRow {
                    id: id as i64,
                    phash: row.phash,
                })
                .collect())
        }
        fn thumbnail(&mut self, id: i64) -> Result<Option<Gray>, RowsError> {
            Ok(self
                .borrow()
                .rows
                .get(id as usize)
                .map(|row| row.thumbnail.clone()))
        }
        fn image(&mut self, id: i64) -> Result<Option<RgbaImage>, RowsError> {
            Ok(self
                .borrow()
                .rows
                .get(id as usize)
                .map(|row| row.image.clone()))
        }
        fn segmentation(&mut self, id: i64) -> Result<Option<CachedSegmentation>, RowsError> {
            Ok(self
                .borrow()
                .rows
                .get(id as usize)
                .map(|row| CachedSegmentation {
                    id,
                    segments: row.segments.clone(),
                    descriptions: row.descriptions.clone(),
                }))
        }
        fn insert(&mut self, row: &NewRow<'_>) -> Result<i64, RowsError> {
            let mut rows = self.borrow_mut();
            rows.rows.push(Row {
                name: row.name.to_owned(),
                image: row.probe.image.clone(),
                thumbnail: Gray {
                    values: row
                        .probe
                        .thumbnail
                        .values
                        .iter()
                        .map(|value| value.round())
                        .collect(),
                    ..row.probe.thumbnail.clone()
                },
                phash: row.probe.phash,
                segments: row.segments.to_vec(),
                descriptions: None,
            });
            Ok(rows.rows.len() as i64 - 1)
        }
        fn set_descriptions(
            &mut self,
            id: i64,
            descriptions: &[Description],
        ) -> Result<(), RowsError> {
            if let Some(row) = self.borrow_mut().rows.get_mut(id as usize) {
                row.descriptions = Some(descriptions.to_vec());
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::memory::Rows;
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

    #[test]
    fn the_reuse_rule_needs_the_same_name_a_similar_screen_and_the_target_unchanged() {
        let rows = std::rc::Rc::new(std::cell::RefCell::new(Rows::default()));
        let mut cache = SegmentationCache::strict(Box::new(std::rc::Rc::clone(&rows)));
        let button = PixelRect {
            x: 20,
            y: 30,
            width: 60,
            height: 20,
        };
        let segments =
            vec![Segment::full(super::super::SegmentKind::Region, button).expect("a segment")];
        let first = window(100);
        let probe = Probe::of(&first);
        assert_eq!(cache.lookup("classical-v1", &probe, None), None, "empty");
        let id = cache
            .insert("classical-v1", &probe, &segments)
            .expect("kept");
        let description = Description {
            text: "OK".into(),
            role: "button".into(),
            label: "ok".into(),
        };
        cache.set_descriptions(id, std::slice::from_ref(&description));

        let hit = cache
            .lookup("classical-v1", &probe, Some(button))
            .expect("the same screen is a hit");
        assert_eq!(hit.segments, segments);
        assert_eq!(hit.descriptions, Some(vec![description]), "typed, as kept");
        assert_eq!(
            cache.lookup("classical-v2", &probe, None),
            None,
            "another segmenter's rows are never used"
        );
        // The target's own look changed: segmented afresh.
        let pressed = window(104);
        assert_eq!(
            cache.lookup("classical-v1", &Probe::of(&pressed), Some(button)),
            None
        );
        // Something appeared outside the target: segmented afresh.
        let mut more = first.clone();
        for y in 90..110 {
            for x in 120..180 {
                more.put_pixel(x, y, image::Rgba([0, 0, 0, 255]));
            }
        }
        assert_eq!(
            cache.lookup("classical-v1", &Probe::of(&more), Some(button)),
            None
        );

        rows.borrow_mut().broken = true;
        assert_eq!(
            cache.lookup("classical-v1", &probe, None),
            None,
            "rows that cannot be read are a miss, not an error"
        );
    }
}
