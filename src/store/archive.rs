//! The export file: one self-contained file holding a whole recording,
//! validated whole (framing, checksums, data, consistency, every image's
//! pixels) before anything is written to the store.
//!
//! Format 2, what `export` writes, is a zip archive (`unzip -l` lists it):
//! ```text
//! manifest.json        the recording, and one line per image: its entry, size
//!                      and SHA-256, and for a patch its key frame and place
//! frames/<hash>.png    a frame stored whole (a key frame)
//! patches/<hash>.png   a frame stored as the rectangle that differs from its
//!                      key frame, as the store keeps it
//! ```
//! The manifest comes first and is compressed; the PNGs are stored as they
//! are (they are compressed already). Entries carry a fixed time, so the
//! same recording always exports to the same bytes. A reader that is given
//! a file reads one entry at a time, never the whole file.
//!
//! Format 1, still read, is one line-framed JSON document:
//! ```text
//! REPRISE-EXPORT 1\n
//! {"payload_bytes":N,"payload_sha256":"<hex>"}\n
//! <N bytes of payload JSON: the recording bundle and its images as base64 PNG>
//! ```

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Seek, SeekFrom, Write};

use image::RgbaImage;
use reprise_models::version::{RecordingVersion, check_numbers};
use reprise_models::{RecordingBundle, screenshot};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::store::frames::FrameImage;

const MAGIC: &str = "REPRISE-EXPORT";
/// The zip local file header's signature: how a format 2 file begins.
const ZIP_MAGIC: &[u8] = b"PK\x03\x04";
const MANIFEST: &str = "manifest.json";
const FORMAT_NAME: &str = "reprise-export";
/// The export format's version written; 1 and 2 are read, others refused.
pub const ARCHIVE_VERSION: u32 = 2;
/// The most a manifest may expand to (a zip's sizes are the writer's word,
/// so reads are cut here whatever it says).
const MAX_MANIFEST_BYTES: u64 = 1 << 30;
/// The most one image entry may hold (a 16K RGBA frame uncompressed is
/// under this).
const MAX_IMAGE_BYTES: u64 = 1 << 30;

/// Why an export file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("not a Reprise export (it is neither a Reprise zip nor starts with {MAGIC:?})")]
    NotAnExport,
    #[error(
        "the export is format version {0}, which this build of Reprise cannot read (it reads 1 and {ARCHIVE_VERSION})"
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
    #[error("the export is truncated or damaged: {0}")]
    Damaged(String),
    /// The file could not be read at all (not a fault of its contents).
    #[error("{0}")]
    Read(std::io::Error),
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

/// Format 2's `manifest.json`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    format: String,
    version: u32,
    bundle: RecordingBundle,
    /// By content hash; a BTreeMap so the same recording always exports to
    /// the same bytes.
    images: BTreeMap<String, ImageEntry>,
    /// The recording's versions past the first (none: written as before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    versions: Vec<RecordingVersion>,
}

/// What a manifest says first, read before the rest so that another
/// version is named as such rather than called malformed.
#[derive(Deserialize)]
struct ManifestVersion {
    format: Option<String>,
    version: Option<serde_json::Value>,
}

/// One image's entry in the zip.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ImageEntry {
    entry: String,
    bytes: u64,
    sha256: String,
    /// For a patch: the key frame it is pasted onto, and where.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    patch_of: Option<PatchPlace>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchPlace {
    key_frame: String,
    x: u32,
    y: u32,
}

/// A validated export: the bundle and its images by content hash, each as
/// the store keeps it (a whole PNG, or a patch of a key frame the export
/// also holds whole). Never [`FrameImage::Stored`].
#[derive(Debug)]
pub struct Archive {
    pub bundle: RecordingBundle,
    pub images: BTreeMap<String, FrameImage>,
    /// Its versions past the first, oldest first.
    pub versions: Vec<RecordingVersion>,
}

/// Writes a recording and its images as one export file's bytes (format 2).
/// `images` holds every image the bundle's frames use and the key frame of
/// every patch among them; a [`FrameImage::Stored`] entry is not written
/// (so the result fails [`decode`], naming the frame).
pub fn encode(bundle: &RecordingBundle, images: &BTreeMap<String, FrameImage>) -> Vec<u8> {
    encode_with_versions(bundle, images, &[])
}

/// [`encode`], with the recording's versions past the first.
pub fn encode_with_versions(
    bundle: &RecordingBundle,
    images: &BTreeMap<String, FrameImage>,
    versions: &[RecordingVersion],
) -> Vec<u8> {
    let mut entries = BTreeMap::new();
    let mut contents: Vec<(String, &[u8])> = Vec::new();
    for (hash, image) in images {
        let (dir, png, patch_of) = match image {
            FrameImage::Stored => continue,
            FrameImage::Full(png) => ("frames", png, None),
            FrameImage::Patch {
                base_hash,
                x,
                y,
                png,
            } => (
                "patches",
                png,
                Some(PatchPlace {
                    key_frame: base_hash.clone(),
                    x: *x,
                    y: *y,
                }),
            ),
        };
        let entry = format!("{dir}/{}.png", entry_stem(hash));
        contents.push((entry.clone(), png.as_slice()));
        entries.insert(
            hash.clone(),
            ImageEntry {
                entry,
                bytes: png.len() as u64,
                sha256: screenshot::hex(&Sha256::digest(png)),
                patch_of,
            },
        );
    }
    let manifest = Manifest {
        format: FORMAT_NAME.to_owned(),
        version: ARCHIVE_VERSION,
        bundle: bundle.clone(),
        images: entries,
        versions: versions.to_vec(),
    };
    let manifest = serde_json::to_vec(&manifest).expect("manifests always serialize");
    let options = zip::write::SimpleFileOptions::default()
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o644)
        .large_file(false);
    // Writing to memory fails only on a size over the zip's limits.
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let mut write = || -> zip::result::ZipResult<()> {
        zip.start_file(
            MANIFEST,
            options
                .compression_method(zip::CompressionMethod::Deflated)
                .large_file(manifest.len() as u64 >= u64::from(u32::MAX)),
        )?;
        zip.write_all(&manifest)?;
        for (entry, png) in &contents {
            zip.start_file(
                entry.as_str(),
                options.compression_method(zip::CompressionMethod::Stored),
            )?;
            zip.write_all(png)?;
        }
        Ok(())
    };
    write().expect("an export's entries fit a zip");
    zip.finish()
        .expect("an export's entries fit a zip")
        .into_inner()
}

/// An image's name inside the zip: its content hash with what some file
/// systems refuse (the `:` of `blake3:`) replaced.
fn entry_stem(hash: &str) -> String {
    hash.replace(
        |c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'),
        "-",
    )
}

/// Reads and validates an export file's bytes completely (either format):
/// framing, checksums, data, internal consistency, and every image (decoded,
/// with its size and content hash checked). Nothing is trusted until all of
/// it has passed.
pub fn decode(bytes: &[u8]) -> Result<Archive, ArchiveError> {
    read(std::io::Cursor::new(bytes))
}

/// [`decode`] from a reader: a zip is read one entry at a time (a file is
/// never held whole), a format 1 file whole.
pub fn read<R: Read + Seek>(mut reader: R) -> Result<Archive, ArchiveError> {
    let mut start = Vec::with_capacity(ZIP_MAGIC.len());
    (&mut reader)
        .take(ZIP_MAGIC.len() as u64)
        .read_to_end(&mut start)
        .map_err(ArchiveError::Read)?;
    reader
        .seek(SeekFrom::Start(0))
        .map_err(ArchiveError::Read)?;
    if start.as_slice() == ZIP_MAGIC {
        return read_zip(reader);
    }
    if !start.is_empty() && ZIP_MAGIC.starts_with(&start) {
        return Err(ArchiveError::Damaged(
            "it ends inside the zip's first header".into(),
        ));
    }
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(ArchiveError::Read)?;
    decode_v1(&bytes)
}

/// The manifest, its format and version checked first, its recording and
/// versions after.
fn manifest_of(bytes: &[u8]) -> Result<Manifest, ArchiveError> {
    let version: ManifestVersion = serde_json::from_slice(bytes)
        .map_err(|err| ArchiveError::BadPayload(format!("{MANIFEST}: {err}")))?;
    if version.format.as_deref() != Some(FORMAT_NAME) {
        return Err(ArchiveError::NotAnExport);
    }
    match &version.version {
        Some(serde_json::Value::Number(n)) if n.as_u64() == Some(u64::from(ARCHIVE_VERSION)) => {}
        Some(other) => return Err(ArchiveError::UnknownVersion(other.to_string())),
        None => {
            return Err(ArchiveError::BadPayload(format!(
                "{MANIFEST} has no version"
            )));
        }
    }
    let manifest: Manifest = serde_json::from_slice(bytes)
        .map_err(|err| ArchiveError::BadPayload(format!("{MANIFEST}: {err}")))?;
    manifest.bundle.validate()?;
    check_numbers(&manifest.versions).map_err(ArchiveError::Inconsistent)?;
    Ok(manifest)
}

fn read_zip<R: Read + Seek>(reader: R) -> Result<Archive, ArchiveError> {
    let zip_error = |err: zip::result::ZipError| ArchiveError::Damaged(err.to_string());
    let mut zip = zip::ZipArchive::new(reader).map_err(zip_error)?;
    let manifest_bytes = read_entry(&mut zip, MANIFEST, MAX_MANIFEST_BYTES)?
        .ok_or_else(|| ArchiveError::Inconsistent(format!("the zip holds no {MANIFEST}")))?;
    let manifest = manifest_of(&manifest_bytes)?;
    drop(manifest_bytes);

    only_listed_entries(&mut zip, &manifest)?;

    // Whole images first: each is decoded and checked, and kept decoded
    // only while patches still need it as their key frame.
    let mut key_frames: HashMap<&str, usize> = HashMap::new();
    for entry in manifest.images.values() {
        if let Some(place) = &entry.patch_of {
            *key_frames.entry(place.key_frame.as_str()).or_default() += 1;
        }
    }
    let mut decoded: HashMap<&str, RgbaImage> = HashMap::new();
    let mut sizes: HashMap<&str, (u32, u32)> = HashMap::with_capacity(manifest.images.len());
    let mut images = BTreeMap::new();
    for (hash, entry) in manifest.images.iter().filter(|(_, e)| e.patch_of.is_none()) {
        let png = read_image_entry(&mut zip, hash, entry)?;
        let image = crate::store::frames::decode_png(&png).map_err(|err| bad_image(hash, err))?;
        check_pixels(hash, &image)?;
        sizes.insert(hash, image.dimensions());
        if key_frames.contains_key(hash.as_str()) {
            decoded.insert(hash, image);
        }
        images.insert(hash.clone(), FrameImage::Full(png));
    }
    for (hash, entry) in &manifest.images {
        let Some(place) = &entry.patch_of else {
            continue;
        };
        let Some(key) = decoded.get(place.key_frame.as_str()) else {
            return Err(bad_image(
                hash,
                format!(
                    "it is a patch of {}, which the export does not hold whole",
                    place.key_frame
                ),
            ));
        };
        let png = read_image_entry(&mut zip, hash, entry)?;
        let image = crate::store::frames::patched_onto(key.clone(), place.x, place.y, &png)
            .map_err(|err| bad_image(hash, err))?;
        check_pixels(hash, &image)?;
        sizes.insert(hash, image.dimensions());
        let uses = key_frames
            .get_mut(place.key_frame.as_str())
            .expect("counted above");
        *uses -= 1;
        if *uses == 0 {
            decoded.remove(place.key_frame.as_str());
        }
        images.insert(
            hash.clone(),
            FrameImage::Patch {
                base_hash: place.key_frame.clone(),
                x: place.x,
                y: place.y,
                png,
            },
        );
    }
    check_recording(&manifest.bundle, &images, &sizes)?;
    Ok(Archive {
        bundle: manifest.bundle,
        images,
        versions: manifest.versions,
    })
}

/// An entry's bytes (`None` when the zip has no such entry), read to its
/// end so that the zip's CRC-32 is checked, and cut at `limit`.
/// The zip holds the manifest and the entries it lists, each once, nothing
/// else. (Two entries of one name: which one is read would be the zip
/// reader's choice, not the exporter's.)
fn only_listed_entries<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    manifest: &Manifest,
) -> Result<(), ArchiveError> {
    let zip_error = |err: zip::result::ZipError| ArchiveError::Damaged(err.to_string());
    if zip.has_duplicate_names() {
        return Err(ArchiveError::Inconsistent(
            "the zip holds two entries of one name".into(),
        ));
    }
    let mut listed: HashMap<&str, &str> = HashMap::with_capacity(manifest.images.len());
    for (hash, entry) in &manifest.images {
        if entry.entry == MANIFEST || listed.insert(entry.entry.as_str(), hash).is_some() {
            return Err(ArchiveError::Inconsistent(format!(
                "its manifest names the entry {} twice",
                entry.entry
            )));
        }
    }
    for index in 0..zip.len() {
        let file = zip.by_index_raw(index).map_err(zip_error)?;
        let name = file.name().map_err(zip_error)?;
        if name != MANIFEST && !listed.contains_key(name.as_ref()) {
            return Err(ArchiveError::Inconsistent(format!(
                "the zip holds {name}, which its manifest does not list"
            )));
        }
    }
    Ok(())
}

fn read_entry<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    name: &str,
    limit: u64,
) -> Result<Option<Vec<u8>>, ArchiveError> {
    let mut file = match zip.by_name(name) {
        Ok(file) => file,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(err) => return Err(ArchiveError::Damaged(err.to_string())),
    };
    if file.size() > limit {
        return Err(ArchiveError::Damaged(format!(
            "its entry {name} says it holds {} bytes, more than an export may ({limit})",
            file.size()
        )));
    }
    // Grown as read: a size the zip merely claims is not allocated ahead.
    let mut bytes = Vec::new();
    (&mut file)
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| ArchiveError::Damaged(format!("its entry {name}: {err}")))?;
    if bytes.len() as u64 > limit {
        return Err(ArchiveError::Damaged(format!(
            "its entry {name} holds more than an export may ({limit} bytes)"
        )));
    }
    Ok(Some(bytes))
}

/// An image's entry, checked against the manifest's size and SHA-256.
fn read_image_entry<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    hash: &str,
    entry: &ImageEntry,
) -> Result<Vec<u8>, ArchiveError> {
    let png = read_entry(zip, &entry.entry, entry.bytes.min(MAX_IMAGE_BYTES))?
        .ok_or_else(|| bad_image(hash, format!("its entry {} is not in the zip", entry.entry)))?;
    if png.len() as u64 != entry.bytes {
        return Err(bad_image(
            hash,
            format!(
                "its entry holds {} bytes where the manifest says {}",
                png.len(),
                entry.bytes
            ),
        ));
    }
    if screenshot::hex(&Sha256::digest(&png)) != entry.sha256 {
        return Err(bad_image(
            hash,
            "its bytes do not match the manifest's SHA-256",
        ));
    }
    Ok(png)
}

/// Image `hash` refused, for `reason`.
fn bad_image(hash: &str, reason: impl std::fmt::Display) -> ArchiveError {
    ArchiveError::BadImage {
        hash: hash.to_owned(),
        reason: reason.to_string(),
    }
}

/// Whether an image's pixels are the ones its content hash names.
fn check_pixels(hash: &str, image: &RgbaImage) -> Result<(), ArchiveError> {
    if screenshot::content_hash_matches(hash, image.width(), image.height(), image.as_raw()) {
        Ok(())
    } else {
        Err(bad_image(hash, "its pixels do not match its content hash"))
    }
}

/// What both formats check once the images are read: the recording's id and
/// name, every frame's image held with the frame's size, and no image held
/// that no frame uses (a key frame counts as used by its patches).
fn check_recording(
    bundle: &RecordingBundle,
    images: &BTreeMap<String, FrameImage>,
    sizes: &HashMap<&str, (u32, u32)>,
) -> Result<(), ArchiveError> {
    let recording = &bundle.recording;
    reprise_models::recording::check_id(&recording.id)?;
    reprise_models::recording::check_name(&recording.name)?;
    let mut used: std::collections::HashSet<&str> = bundle
        .screenshots
        .iter()
        .map(|shot| shot.content_hash.as_str())
        .collect();
    for shot in &bundle.screenshots {
        if let Some(FrameImage::Patch { base_hash, .. }) = images.get(&shot.content_hash) {
            used.insert(base_hash);
        }
    }
    for hash in images.keys() {
        if !used.contains(hash.as_str()) {
            return Err(ArchiveError::Inconsistent(format!(
                "it holds image {hash}, which none of its frames uses"
            )));
        }
    }
    for shot in &bundle.screenshots {
        match sizes.get(shot.content_hash.as_str()) {
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
    Ok(())
}

mod export;
mod v1;
pub use export::{export, export_bytes};
use v1::decode_v1;
#[cfg(test)]
use v1::{Header, Payload};

#[cfg(test)]
mod tests;
