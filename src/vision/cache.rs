//! The segmentation cache's rows kept in the store, so a repeated replay of
//! an unchanged screen costs no segmentation and no model call, across
//! processes. Only rows live here: the rule that decides their reuse is
//! `reprise_strategies::vision::cache::SegmentationCache`.

use image::RgbaImage;
use reprise_models::screenshot::content_hash;
use reprise_strategies::describe::Description;
use reprise_strategies::vision::cache::{
    CachedSegmentation, CandidateRow, NewRow, RowsError, SegmentationRows,
};
use reprise_strategies::vision::ssim::Gray;

use crate::store::frames::encode_png;
use crate::store::{NewSegmentation, Store};

/// The store's rows of segmentations.
pub struct StoreRows {
    store: Store,
}

reprise_models::debug_showing!(StoreRows);

impl StoreRows {
    pub fn new(store: Store) -> StoreRows {
        StoreRows { store }
    }
}

/// Descriptions as stored: a JSON list of descriptions. Rows written before
/// descriptions were typed hold a list of strings, each a description's
/// JSON; one that is neither is not used (the segments are described
/// again), never taken as a description's text.
fn decode_descriptions(text: &str) -> Option<Vec<Description>> {
    if let Ok(descriptions) = serde_json::from_str::<Vec<Description>>(text) {
        return Some(descriptions);
    }
    let texts: Vec<String> = serde_json::from_str(text).ok()?;
    texts
        .iter()
        .map(|text| serde_json::from_str(text).ok())
        .collect()
}

impl SegmentationRows for StoreRows {
    fn candidates(
        &mut self,
        name: &str,
        width: u32,
        height: u32,
    ) -> Result<Vec<CandidateRow>, RowsError> {
        Ok(self
            .store
            .segmentation_candidates(name, width, height)?
            .into_iter()
            .map(|row| CandidateRow {
                id: row.id,
                phash: row.phash,
            })
            .collect())
    }

    fn thumbnail(&mut self, id: i64) -> Result<Option<Gray>, RowsError> {
        let Some((bytes, width)) = self.store.segmentation_thumbnail(id)? else {
            return Ok(None);
        };
        let width = (width as usize).max(1);
        Ok(Some(Gray {
            width,
            height: bytes.len() / width,
            values: bytes.iter().map(|value| f64::from(*value)).collect(),
        }))
    }

    fn image(&mut self, id: i64) -> Result<Option<RgbaImage>, RowsError> {
        let Some(hash) = self.store.segmentation_image_hash(id)? else {
            return Ok(None);
        };
        Ok(Some(self.store.image(&hash)?))
    }

    fn segmentation(&mut self, id: i64) -> Result<Option<CachedSegmentation>, RowsError> {
        let Some((segments, descriptions)) = self.store.segmentation(id)? else {
            return Ok(None);
        };
        Ok(Some(CachedSegmentation {
            id,
            segments: serde_json::from_str(&segments)?,
            descriptions: descriptions.as_deref().and_then(decode_descriptions),
        }))
    }

    fn insert(&mut self, row: &NewRow<'_>) -> Result<i64, RowsError> {
        let image = row.probe.image;
        let (width, height) = image.dimensions();
        let thumbnail: Vec<u8> = row
            .probe
            .thumbnail
            .values
            .iter()
            .map(|value| value.round().clamp(0.0, 255.0) as u8)
            .collect();
        let segments_json = serde_json::to_string(row.segments)?;
        let new = NewSegmentation {
            segmenter: row.name,
            width,
            height,
            phash: row.probe.phash,
            thumbnail: &thumbnail,
            thumbnail_width: row.probe.thumbnail.width as u32,
            image_hash: &content_hash(width, height, image.as_raw()),
            image_png: &encode_png(image),
            segments_json: &segments_json,
        };
        Ok(self.store.insert_segmentation(&new)?)
    }

    fn set_descriptions(&mut self, id: i64, descriptions: &[Description]) -> Result<(), RowsError> {
        let json = serde_json::to_string(descriptions)?;
        Ok(self.store.set_segmentation_descriptions(id, &json)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_of_either_format_are_read_and_anything_else_is_described_again() {
        let description = Description {
            text: "Save".into(),
            role: "button".into(),
            label: "save".into(),
        };
        let typed = serde_json::to_string(&[&description]).unwrap();
        assert_eq!(decode_descriptions(&typed), Some(vec![description.clone()]));
        let older = serde_json::to_string(&[serde_json::to_string(&description).unwrap()]).unwrap();
        assert_eq!(decode_descriptions(&older), Some(vec![description]));
        assert_eq!(
            decode_descriptions(r#"["Save"]"#),
            None,
            "a bare text is no description"
        );
        assert_eq!(decode_descriptions("{"), None);
    }
}
