//! The export file: one self-contained file holding a whole recording, with a
//! checksum so that a truncated or altered file is refused before anything is
//! written to the store.
//!
//! Layout, in UTF-8:
//! ```text
//! REPRISE-EXPORT 1\n
//! {"payload_bytes":N,"payload_sha256":"<hex>"}\n
//! <N bytes of payload JSON: the recording bundle and its images as base64 PNG>
//! ```

use std::collections::{BTreeMap, HashMap};

use base64::Engine as _;
use reprise_models::{RecordingBundle, screenshot};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

const MAGIC: &str = "REPRISE-EXPORT";
/// The export format's major version; a file with another is refused.
pub const ARCHIVE_VERSION: u32 = 1;

/// Why an export file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("not a Reprise export (it does not start with {MAGIC:?})")]
    NotAnExport,
    #[error(
        "the export is format version {0}, which this build of Reprise cannot read (it reads {ARCHIVE_VERSION})"
    )]
    UnknownVersion(String),
    #[error("the export is truncated: its header is incomplete")]
    TruncatedHeader,
    #[error("the export's header is malformed: {0}")]
    BadHeader(String),
    #[error("the export is truncated: it should hold {expected} bytes of data but holds {found}")]
    Truncated { expected: u64, found: u64 },
    #[error("the export has {0} unexpected bytes after its data")]
    TrailingData(u64),
    #[error("the export is corrupted or was modified: its checksum does not match its data")]
    ChecksumMismatch,
    #[error("the export's data is malformed: {0}")]
    BadPayload(String),
    #[error("the export's recording is inconsistent: {0}")]
    Inconsistent(String),
    #[error("the export's recording is inconsistent: {0}")]
    Bundle(#[from] reprise_models::recording::BundleError),
    #[error("the export's recording is inconsistent: {0}")]
    Id(#[from] reprise_models::recording::IdError),
    #[error("the export's recording is inconsistent: {0}")]
    Name(#[from] reprise_models::recording::NameError),
    #[error("the export's image {hash} is damaged: {reason}")]
    BadImage { hash: String, reason: String },
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    payload_bytes: u64,
    payload_sha256: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    bundle: RecordingBundle,
    /// Content hash to base64 PNG; a BTreeMap so the same recording always
    /// exports to the same bytes.
    images: BTreeMap<String, String>,
}

/// A validated export: the bundle and its images' PNG bytes by content hash.
#[derive(Debug)]
pub struct Archive {
    pub bundle: RecordingBundle,
    pub images: HashMap<String, Vec<u8>>,
}

/// Writes a recording and its images as one export file's bytes.
pub fn encode(bundle: &RecordingBundle, images: &HashMap<String, Vec<u8>>) -> Vec<u8> {
    let engine = base64::engine::general_purpose::STANDARD;
    let payload = Payload {
        bundle: bundle.clone(),
        images: images
            .iter()
            .map(|(hash, png)| (hash.clone(), engine.encode(png)))
            .collect(),
    };
    let payload_json = serde_json::to_vec(&payload).expect("bundles always serialize");
    let header = Header {
        payload_bytes: payload_json.len() as u64,
        payload_sha256: screenshot::hex(&Sha256::digest(&payload_json)),
    };
    let mut out = format!("{MAGIC} {ARCHIVE_VERSION}\n").into_bytes();
    out.extend(serde_json::to_vec(&header).expect("headers always serialize"));
    out.push(b'\n');
    out.extend(payload_json);
    out
}

/// Reads and validates an export file's bytes completely: framing, checksum,
/// data, internal consistency, and every image (decoded, with its size and
/// content hash checked). Nothing is trusted until all of it has passed.
pub fn decode(bytes: &[u8]) -> Result<Archive, ArchiveError> {
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
    if version != ARCHIVE_VERSION.to_string() {
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
    let mut images = HashMap::with_capacity(payload.images.len());
    let mut sizes = HashMap::with_capacity(payload.images.len());
    for (hash, base64_png) in &payload.images {
        let bad = |reason: String| ArchiveError::BadImage {
            hash: hash.clone(),
            reason,
        };
        let png = engine
            .decode(base64_png)
            .map_err(|err| bad(err.to_string()))?;
        let image = crate::frames::decode_png(&png).map_err(|err| bad(err.to_string()))?;
        if !screenshot::content_hash_matches(hash, image.width(), image.height(), image.as_raw()) {
            return Err(bad("its pixels do not match its content hash".into()));
        }
        sizes.insert(hash.clone(), image.dimensions());
        images.insert(hash.clone(), png);
    }
    let recording = &payload.bundle.recording;
    reprise_models::recording::check_id(&recording.id)?;
    reprise_models::recording::check_name(&recording.name)?;
    for shot in &payload.bundle.screenshots {
        match sizes.get(&shot.content_hash) {
            None => {
                return Err(ArchiveError::Inconsistent(format!(
                    "screenshot {} refers to image {}, which the export does not hold",
                    shot.id, shot.content_hash
                )));
            }
            Some(&(width, height)) if (width, height) != (shot.width, shot.height) => {
                return Err(ArchiveError::Inconsistent(format!(
                    "screenshot {} says {}x{} but its image is {width}x{height}",
                    shot.id, shot.width, shot.height
                )));
            }
            Some(_) => {}
        }
    }
    Ok(Archive {
        bundle: payload.bundle,
        images,
    })
}

fn split_line(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let newline = bytes.iter().position(|byte| *byte == b'\n')?;
    Some((&bytes[..newline], &bytes[newline + 1..]))
}

/// A stored recording as an export file's bytes (what `export` writes).
pub fn export_bytes(store: &crate::store::Store, id: &str) -> anyhow::Result<Vec<u8>> {
    use anyhow::Context as _;
    let bundle = store
        .load(id)
        .with_context(|| format!("read recording {id}"))?;
    export(store, &bundle)
}

/// A loaded recording as an export file's bytes, its frames read from
/// `store`, checked as an import would check them.
pub fn export(store: &crate::store::Store, bundle: &RecordingBundle) -> anyhow::Result<Vec<u8>> {
    use anyhow::Context as _;
    let id = &bundle.recording.id;
    let mut images = std::collections::HashMap::new();
    for screenshot in &bundle.screenshots {
        if !images.contains_key(&screenshot.content_hash) {
            images.insert(
                screenshot.content_hash.clone(),
                store.image_png(&screenshot.content_hash)?,
            );
        }
    }
    let bytes = encode(bundle, &images);
    // What import would refuse is not written: a damaged stored image (or
    // anything else import checks) fails the export, naming it.
    decode(&bytes).with_context(|| {
        format!(
            "export recording {id}: the store holds something an import would refuse, so nothing was written"
        )
    })?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests_support::sample_bundle;

    fn sample_bytes() -> Vec<u8> {
        let (bundle, images) = sample_bundle("00000000-0000-4000-8000-0000000000aa");
        encode(&bundle, &images)
    }

    #[test]
    fn round_trip_is_exact_and_deterministic() {
        let (bundle, images) = sample_bundle("00000000-0000-4000-8000-0000000000aa");
        let bytes = encode(&bundle, &images);
        assert_eq!(bytes, encode(&bundle, &images));
        let archive = decode(&bytes).unwrap();
        assert_eq!(archive.bundle, bundle);
        assert_eq!(archive.images, images);
    }

    #[test]
    fn every_truncation_is_refused() {
        let bytes = sample_bytes();
        for cut in [0, 5, 15, 40, bytes.len() / 2, bytes.len() - 1] {
            let err = decode(&bytes[..cut]).unwrap_err();
            assert!(
                matches!(
                    err,
                    ArchiveError::Truncated { .. }
                        | ArchiveError::TruncatedHeader
                        | ArchiveError::NotAnExport
                ),
                "cut at {cut}: {err}"
            );
        }
    }

    #[test]
    fn a_flipped_byte_is_refused() {
        let bytes = sample_bytes();
        let mut corrupted = bytes.clone();
        let idx = bytes.len() - 100;
        corrupted[idx] ^= 0x01;
        assert!(matches!(
            decode(&corrupted).unwrap_err(),
            ArchiveError::ChecksumMismatch
        ));
    }

    #[test]
    fn an_edit_with_a_recomputed_checksum_is_still_checked() {
        let (mut bundle, images) = sample_bundle("00000000-0000-4000-8000-0000000000ab");
        bundle.events[0].screenshot_id = Some(99);
        let err = decode(&encode(&bundle, &images)).unwrap_err();
        assert!(err.to_string().contains("missing screenshot 99"), "{err}");

        let (bundle, mut images) = sample_bundle("00000000-0000-4000-8000-0000000000ac");
        let hash = bundle.screenshots[0].content_hash.clone();
        let other = images
            .values()
            .find(|png| **png != images[&hash])
            .unwrap()
            .clone();
        images.insert(hash, other);
        let err = decode(&encode(&bundle, &images)).unwrap_err();
        assert!(
            err.to_string().contains("do not match its content hash"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_version_is_refused() {
        let bytes = sample_bytes();
        let text =
            String::from_utf8(bytes)
                .unwrap()
                .replacen("REPRISE-EXPORT 1", "REPRISE-EXPORT 2", 1);
        assert!(
            matches!(decode(text.as_bytes()).unwrap_err(), ArchiveError::UnknownVersion(v) if v == "2")
        );
    }
}
