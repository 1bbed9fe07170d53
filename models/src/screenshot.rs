//! Screenshot metadata. The pixels live in the store, once per content hash.

use serde::{Deserialize, Serialize};

use sha2::{Digest, Sha256};

use crate::ScreenGeometry;

/// One captured frame of the screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Screenshot {
    /// Position of this frame in the recording (0-based); events link to it.
    pub id: u32,
    /// Seconds since the recording started.
    pub timestamp: f64,
    /// Pixel size of the image.
    pub width: u32,
    pub height: u32,
    /// The screen the frame shows, in logical coordinates, with its scale factor.
    pub screen: ScreenGeometry,
    /// Lowercase hex SHA-256 of the image's RGBA pixels (see [`content_hash`]).
    pub content_hash: String,
}

/// The content hash of an RGBA image: lowercase hex SHA-256 over the width and
/// height (little-endian u32) followed by the pixels, so that two images with the
/// same bytes but different shapes hash differently.
pub fn content_hash(width: u32, height: u32, rgba: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(width.to_le_bytes());
    hasher.update(height.to_le_bytes());
    hasher.update(rgba);
    hex(&hasher.finalize())
}

/// Lowercase hexadecimal of a byte string.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_is_part_of_the_hash() {
        let pixels = [0u8; 16];
        assert_ne!(content_hash(2, 2, &pixels), content_hash(4, 1, &pixels));
        assert_eq!(content_hash(2, 2, &pixels), content_hash(2, 2, &pixels));
        assert_eq!(content_hash(2, 2, &pixels).len(), 64);
    }
}
