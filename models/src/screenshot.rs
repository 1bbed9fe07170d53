//! Screenshot metadata. The pixels live in the store, once per content hash.

use serde::{Deserialize, Serialize};

use sha2::{Digest, Sha256};

/// The prefix of a content hash made by [`content_hash`] (BLAKE3). A hash
/// without it is the SHA-256 that recordings of format version 1 name their
/// frames by; both are read, only BLAKE3 is written.
pub const BLAKE3_PREFIX: &str = "blake3:";

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
    /// The image's content address (see [`content_hash`]; a recording of
    /// format version 1 names it by its lowercase hex SHA-256).
    pub content_hash: String,
}

/// The content hash of an RGBA image: `blake3:` and the lowercase hex BLAKE3
/// over the width and height (little-endian u32) followed by the pixels, so
/// that two images with the same bytes but different shapes hash differently.
/// BLAKE3 is a cryptographic hash (an imported image cannot be made to stand
/// for another) at about a quarter of SHA-256's cost on a 1080p frame, which
/// the recorder hashes at every change.
pub fn content_hash(width: u32, height: u32, rgba: &[u8]) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&width.to_le_bytes());
    hasher.update(&height.to_le_bytes());
    hasher.update(rgba);
    format!("{BLAKE3_PREFIX}{}", hasher.finalize().to_hex())
}

/// Whether `hash` is the content hash of the image, in whichever of the two
/// forms it is written (BLAKE3 with its prefix, or format 1's bare SHA-256).
pub fn content_hash_matches(hash: &str, width: u32, height: u32, rgba: &[u8]) -> bool {
    if hash.starts_with(BLAKE3_PREFIX) {
        return content_hash(width, height, rgba) == hash;
    }
    let mut hasher = Sha256::new();
    hasher.update(width.to_le_bytes());
    hasher.update(height.to_le_bytes());
    hasher.update(rgba);
    hex(&hasher.finalize()) == hash
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
        assert_eq!(content_hash(2, 2, &pixels).len(), BLAKE3_PREFIX.len() + 64);
    }

    #[test]
    fn both_forms_of_a_content_hash_are_checked() {
        let pixels = [7u8; 16];
        let blake3 = content_hash(2, 2, &pixels);
        assert!(content_hash_matches(&blake3, 2, 2, &pixels));
        assert!(!content_hash_matches(&blake3, 2, 2, &[8u8; 16]));
        assert!(!content_hash_matches(&blake3, 4, 1, &pixels));
        // Format 1's SHA-256 of the same image, computed elsewhere (Python's
        // hashlib over the two sizes as little-endian u32 and the pixels).
        let sha256 = "92e4c4adb2c552643f169f939bd29e7766ed1f10b1225df244cce9d3a807d34b";
        assert!(content_hash_matches(sha256, 2, 2, &pixels));
        assert!(!content_hash_matches(sha256, 2, 2, &[8u8; 16]));
    }
}
