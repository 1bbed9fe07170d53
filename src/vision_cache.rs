//! The segmentation cache kept in the store, so a repeated replay of an
//! unchanged screen costs no segmentation and no model call, across
//! processes.

use image::RgbaImage;
use reprise_models::screenshot::content_hash;
use reprise_strategies::vision::cache::{
    CachedSegmentation, ReusePolicy, SegmentationCache, changed_outside, dhash_gray, hamming,
    similar_enough, target_matches, thumbnail,
};
use reprise_strategies::vision::ssim::Gray;
use reprise_strategies::vision::{PixelRect, Segment};

use crate::frames::encode_png;
use crate::store::{NewSegmentation, Store};

/// How many of the nearest hashes are compared by SSIM.
const MAX_COMPARED: usize = 3;

pub struct StoreSegmentationCache {
    store: Store,
    /// The segmenter and its version: a different one never reuses these.
    segmenter: String,
    pub policy: ReusePolicy,
}

impl std::fmt::Debug for StoreSegmentationCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreSegmentationCache")
            .field("segmenter", &self.segmenter)
            .finish_non_exhaustive()
    }
}

impl StoreSegmentationCache {
    pub fn new(store: Store, segmenter: &str) -> Self {
        StoreSegmentationCache {
            store,
            segmenter: segmenter.to_owned(),
            policy: ReusePolicy::default(),
        }
    }

    /// The cache for replay decisions: a segmentation is reused only when
    /// nothing changed outside the target either.
    pub fn strict(store: Store, segmenter: &str) -> Self {
        let mut cache = StoreSegmentationCache::new(store, segmenter);
        cache.policy.max_changed_outside_target = Some(0);
        cache
    }

    fn try_lookup(
        &mut self,
        image: &RgbaImage,
        target: Option<PixelRect>,
    ) -> anyhow::Result<Option<CachedSegmentation>> {
        let (width, height) = image.dimensions();
        let new_thumbnail = thumbnail(image);
        let hash = dhash_gray(&new_thumbnail);
        let mut candidates = self
            .store
            .segmentation_candidates(&self.segmenter, width, height)?;
        candidates.retain(|row| hamming(row.phash, hash) <= self.policy.max_hash_distance);
        candidates.sort_by_key(|row| hamming(row.phash, hash));
        for row in candidates.into_iter().take(MAX_COMPARED) {
            let Some(thumbnail_bytes) = self.store.segmentation_thumbnail(row.id)? else {
                continue;
            };
            let cached_thumbnail = Gray {
                width: row.thumbnail_width as usize,
                height: thumbnail_bytes.len() / (row.thumbnail_width as usize).max(1),
                values: thumbnail_bytes
                    .iter()
                    .map(|value| f64::from(*value))
                    .collect(),
            };
            if !similar_enough(&cached_thumbnail, &new_thumbnail, &self.policy) {
                continue;
            }
            if let Some(max_changed) = self.policy.max_changed_outside_target
                && changed_outside(&cached_thumbnail, &new_thumbnail, target, (width, height))
                    > max_changed
            {
                tracing::debug!(
                    id = row.id,
                    "a similar cached segmentation, but something else changed"
                );
                continue;
            }
            if let Some(target) = target {
                let png = self.store.image_png(&row.image_hash)?;
                let cached_image =
                    image::load_from_memory_with_format(&png, image::ImageFormat::Png)?
                        .into_rgba8();
                if !target_matches(&cached_image, image, target, &self.policy) {
                    tracing::debug!(
                        id = row.id,
                        "a similar cached segmentation, but the target's region changed"
                    );
                    continue;
                }
            }
            let Some((segments, descriptions)) = self.store.segmentation(row.id)? else {
                continue;
            };
            return Ok(Some(CachedSegmentation {
                id: row.id,
                segments: serde_json::from_str(&segments)?,
                descriptions: descriptions
                    .map(|text| serde_json::from_str(&text))
                    .transpose()?,
            }));
        }
        Ok(None)
    }
}

impl SegmentationCache for StoreSegmentationCache {
    fn lookup(
        &mut self,
        image: &RgbaImage,
        target: Option<PixelRect>,
    ) -> Option<CachedSegmentation> {
        self.try_lookup(image, target).unwrap_or_else(|err| {
            tracing::warn!("the segmentation cache could not be read, segmenting afresh: {err:#}");
            None
        })
    }

    fn insert(&mut self, image: &RgbaImage, segments: &[Segment]) -> Option<i64> {
        let (width, height) = image.dimensions();
        let small = thumbnail(image);
        let phash = dhash_gray(&small);
        let thumbnail_bytes: Vec<u8> = small
            .values
            .iter()
            .map(|value| value.round().clamp(0.0, 255.0) as u8)
            .collect();
        let png = encode_png(image);
        let segments_json = serde_json::to_string(segments).expect("segments serialize");
        let new = NewSegmentation {
            segmenter: &self.segmenter,
            width,
            height,
            phash,
            thumbnail: &thumbnail_bytes,
            thumbnail_width: small.width as u32,
            image_hash: &content_hash(width, height, image.as_raw()),
            image_png: &png,
            segments_json: &segments_json,
        };
        match self.store.insert_segmentation(&new) {
            Ok(id) => Some(id),
            Err(err) => {
                tracing::warn!("the segmentation could not be cached: {err}");
                None
            }
        }
    }

    fn set_descriptions(&mut self, id: i64, descriptions: &[String]) {
        let json = serde_json::to_string(descriptions).expect("strings serialize");
        if let Err(err) = self.store.set_segmentation_descriptions(id, &json) {
            tracing::warn!("the descriptions could not be cached: {err}");
        }
    }
}
