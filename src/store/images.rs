//! Images in the store, once per content hash: a frame stored whole (a key
//! frame) or as a patch against one, composed back into pixels (or PNG bytes,
//! where bytes are wanted) when read.

use rusqlite::{OptionalExtension, Transaction, params};

use super::{Result, Store, StoreError};
use crate::store::frames::{FrameImage, apply_patch, decode_png, patched};

/// An image as stored: whole, or a patch at `x`, `y` of a key frame.
enum StoredImage {
    Whole(Vec<u8>),
    Patch {
        key: Vec<u8>,
        x: u32,
        y: u32,
        png: Vec<u8>,
    },
}

impl Store {
    /// Whether an image with this content hash is stored.
    pub fn has_image(&self, hash: &str) -> Result<bool> {
        Ok(self
            .conn
            .query_row(
                "SELECT 1 FROM images WHERE hash = ?1",
                params![hash],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// The PNG bytes of an image; a frame stored as a patch is pasted onto
    /// its key frame first.
    pub fn image_png(&self, hash: &str) -> Result<Vec<u8>> {
        match self.stored_image(hash)? {
            StoredImage::Whole(png) => Ok(png),
            StoredImage::Patch { key, x, y, png } => {
                apply_patch(&key, x, y, &png).map_err(|err| StoreError::BadImage {
                    hash: hash.to_owned(),
                    reason: err.to_string(),
                })
            }
        }
    }

    /// An image's pixels (a patch pasted onto its key frame), decoded once:
    /// for callers that want pixels, not bytes.
    pub fn image(&self, hash: &str) -> Result<image::RgbaImage> {
        let bad = |reason: String| StoreError::BadImage {
            hash: hash.to_owned(),
            reason,
        };
        match self.stored_image(hash)? {
            StoredImage::Whole(png) => decode_png(&png).map_err(|err| bad(err.to_string())),
            StoredImage::Patch { key, x, y, png } => {
                patched(&key, x, y, &png).map_err(|err| bad(err.to_string()))
            }
        }
    }

    /// An image's row, and its key frame's bytes when it is a patch.
    fn stored_image(&self, hash: &str) -> Result<StoredImage> {
        let (base_hash, x, y, png) = match self.image_as_stored(hash)? {
            FrameImage::Patch {
                base_hash,
                x,
                y,
                png,
            } => (base_hash, x, y, png),
            FrameImage::Full(png) => return Ok(StoredImage::Whole(png)),
            // `image_as_stored` answers with the image's bytes.
            FrameImage::Stored => return Err(StoreError::NotFound(format!("image {hash}"))),
        };
        // A base is always a whole image: the recorder stores every key frame
        // whole (see `append_rows`).
        let key = self.whole_png(&base_hash).map_err(|err| match err {
            StoreError::NotFound(_) => StoreError::BadImage {
                hash: hash.to_owned(),
                reason: format!("it is a patch of {base_hash}, which is not stored whole"),
            },
            err => err,
        })?;
        Ok(StoredImage::Patch { key, x, y, png })
    }

    /// An image as the store keeps it: a whole PNG, or a patch with the key
    /// frame it is pasted onto (what an export writes, keeping the saving).
    pub fn image_as_stored(&self, hash: &str) -> Result<FrameImage> {
        self.conn
            .query_row(
                "SELECT png, base_hash, patch_x, patch_y FROM images WHERE hash = ?1",
                params![hash],
                |row| {
                    let png = row.get(0)?;
                    let base: Option<String> = row.get(1)?;
                    Ok(match base {
                        None => FrameImage::Full(png),
                        Some(base_hash) => FrameImage::Patch {
                            base_hash,
                            x: row.get(2).unwrap_or(0),
                            y: row.get(3).unwrap_or(0),
                            png,
                        },
                    })
                },
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound(format!("image {hash}")))
    }

    /// The PNG of an image stored whole.
    fn whole_png(&self, hash: &str) -> Result<Vec<u8>> {
        self.conn
            .query_row(
                "SELECT png FROM images WHERE hash = ?1 AND base_hash IS NULL",
                params![hash],
                |row| row.get(0),
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound(format!("image {hash}")))
    }
}

/// Stores a recorded frame's image under `hash` (nothing for a frame whose
/// image is stored already). A whole image replaces a patch stored under
/// the same hash, so that a key frame (which patches are taken against) is
/// always stored whole.
pub(super) fn insert_image(tx: &Transaction<'_>, hash: &str, image: &FrameImage) -> Result<()> {
    match image {
        FrameImage::Stored => {}
        FrameImage::Full(png) => {
            tx.prepare_cached(
                "INSERT INTO images (hash, png) VALUES (?1, ?2)
                 ON CONFLICT(hash) DO UPDATE SET png = excluded.png, base_hash = NULL, patch_x = NULL, patch_y = NULL
                 WHERE images.base_hash IS NOT NULL",
            )?
            .execute(params![hash, png])?;
        }
        FrameImage::Patch {
            base_hash,
            x,
            y,
            png,
        } => {
            tx.prepare_cached(
                "INSERT OR IGNORE INTO images (hash, png, base_hash, patch_x, patch_y)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![hash, png, base_hash, x, y])?;
        }
    }
    Ok(())
}
