//! Format 1 of an export, read whole: a magic line with the version, a
//! header line (the payload's length and checksum), then the payload as one
//! JSON document with its images in base64. Still read; no longer written.

use std::collections::{BTreeMap, HashMap};

use base64::Engine as _;
use reprise_models::{RecordingBundle, screenshot};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Archive, ArchiveError, MAGIC, bad_image, check_pixels, check_recording};
use crate::store::frames::FrameImage;

/// Format 1's second line.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Header {
    pub(super) payload_bytes: u64,
    pub(super) payload_sha256: String,
}

/// Format 1's payload.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Payload {
    pub(super) bundle: RecordingBundle,
    /// Content hash to base64 PNG.
    pub(super) images: BTreeMap<String, String>,
}

/// Format 1, read whole.
pub(super) fn decode_v1(bytes: &[u8]) -> Result<Archive, ArchiveError> {
    let (magic_line, rest) = split_line(bytes).ok_or_else(|| {
        if bytes.starts_with(MAGIC.as_bytes()) || MAGIC.as_bytes().starts_with(bytes) {
            ArchiveError::TruncatedHeader
        } else {
            ArchiveError::NotAnExport
        }
    })?;
    let magic_line = std::str::from_utf8(magic_line).map_err(|_| ArchiveError::NotAnExport)?;
    let version = magic_line
        .strip_prefix(MAGIC)
        .and_then(|v| v.strip_prefix(' '))
        .ok_or(ArchiveError::NotAnExport)?;
    if version != "1" {
        return Err(ArchiveError::UnknownVersion(version.to_owned()));
    }
    let (header_line, payload) = split_line(rest).ok_or(ArchiveError::TruncatedHeader)?;
    let header: Header = serde_json::from_slice(header_line)
        .map_err(|err| ArchiveError::BadHeader(err.to_string()))?;
    let found = payload.len() as u64;
    if found < header.payload_bytes {
        return Err(ArchiveError::Truncated {
            expected: header.payload_bytes,
            found,
        });
    }
    if found > header.payload_bytes {
        return Err(ArchiveError::TrailingData(found - header.payload_bytes));
    }
    if screenshot::hex(&Sha256::digest(payload)) != header.payload_sha256 {
        return Err(ArchiveError::ChecksumMismatch);
    }
    let payload: Payload =
        serde_json::from_slice(payload).map_err(|err| ArchiveError::BadPayload(err.to_string()))?;
    payload.bundle.validate()?;

    let engine = base64::engine::general_purpose::STANDARD;
    let mut images = BTreeMap::new();
    let mut sizes = HashMap::with_capacity(payload.images.len());
    for (hash, base64_png) in &payload.images {
        let png = engine
            .decode(base64_png)
            .map_err(|err| bad_image(hash, err))?;
        let image = crate::store::frames::decode_png(&png).map_err(|err| bad_image(hash, err))?;
        check_pixels(hash, &image)?;
        sizes.insert(hash.as_str(), image.dimensions());
        images.insert(hash.clone(), FrameImage::Full(png));
    }
    check_recording(&payload.bundle, &images, &sizes)?;
    Ok(Archive {
        bundle: payload.bundle,
        images,
        versions: Vec::new(),
    })
}

fn split_line(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let newline = bytes.iter().position(|byte| *byte == b'\n')?;
    Some((&bytes[..newline], &bytes[newline + 1..]))
}
