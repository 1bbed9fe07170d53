//! The segmentation cache's rows: one per segmented window image, with a
//! thumbnail for the similarity check, the image itself (in `images`) for the
//! target check, the segments and their descriptions.

use rusqlite::{OptionalExtension, params};

use super::{Result, Store};

/// A cache row's key fields: enough to prefilter by hash without reading
/// thumbnails or segments.
#[derive(Debug, Clone)]
pub struct SegmentationRow {
    pub id: i64,
    pub phash: u64,
    pub thumbnail_width: u32,
    pub image_hash: String,
}

/// What is stored for a new segmentation.
#[derive(Debug)]
pub struct NewSegmentation<'a> {
    pub segmenter: &'a str,
    pub width: u32,
    pub height: u32,
    pub phash: u64,
    pub thumbnail: &'a [u8],
    pub thumbnail_width: u32,
    pub image_hash: &'a str,
    pub image_png: &'a [u8],
    pub segments_json: &'a str,
}

/// The cache lookup's query: answered from the index `segmentations_key`
/// alone (schema version 5).
pub(super) const CANDIDATES: &str =
    "SELECT id, phash, thumbnail_width, image_hash FROM segmentations
     WHERE segmenter = ?1 AND width = ?2 AND height = ?3 ORDER BY id DESC";

impl Store {
    /// Rows of this segmenter for images of this size.
    pub fn segmentation_candidates(
        &self,
        segmenter: &str,
        width: u32,
        height: u32,
    ) -> Result<Vec<SegmentationRow>> {
        let mut statement = self.conn.prepare_cached(CANDIDATES)?;
        let rows = statement.query_map(params![segmenter, width, height], |row| {
            Ok(SegmentationRow {
                id: row.get(0)?,
                phash: row.get::<_, i64>(1)? as u64,
                thumbnail_width: row.get(2)?,
                image_hash: row.get(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A row's thumbnail (8-bit luminance, row-major) and its width.
    pub fn segmentation_thumbnail(&self, id: i64) -> Result<Option<(Vec<u8>, u32)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT thumbnail, thumbnail_width FROM segmentations WHERE id = ?1",
                params![id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?)
    }

    /// The content hash of the image a row was segmented from.
    pub fn segmentation_image_hash(&self, id: i64) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT image_hash FROM segmentations WHERE id = ?1",
                params![id],
                |row| row.get(0),
            )
            .optional()?)
    }

    /// The segments (JSON) and descriptions (JSON) of a row.
    pub fn segmentation(&self, id: i64) -> Result<Option<(String, Option<String>)>> {
        Ok(self
            .conn
            .query_row(
                "SELECT segments, descriptions FROM segmentations WHERE id = ?1",
                params![id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?)
    }

    pub fn insert_segmentation(&mut self, new: &NewSegmentation<'_>) -> Result<i64> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT OR IGNORE INTO images (hash, png) VALUES (?1, ?2)",
            params![new.image_hash, new.image_png],
        )?;
        tx.execute(
            "INSERT INTO segmentations (segmenter, width, height, phash, thumbnail, thumbnail_width, image_hash,
                                        segments, created)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, strftime('%s', 'now'))",
            params![
                new.segmenter,
                new.width,
                new.height,
                new.phash as i64,
                new.thumbnail,
                new.thumbnail_width,
                new.image_hash,
                new.segments_json
            ],
        )?;
        let id = tx.last_insert_rowid();
        tx.commit()?;
        Ok(id)
    }

    pub fn set_segmentation_descriptions(
        &mut self,
        id: i64,
        descriptions_json: &str,
    ) -> Result<()> {
        self.conn.execute(
            "UPDATE segmentations SET descriptions = ?2 WHERE id = ?1",
            params![id, descriptions_json],
        )?;
        Ok(())
    }
}
