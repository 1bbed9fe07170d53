use base64::Engine as _;

use super::*;
use crate::store::tests_support::sample_bundle;

/// The sample recording with one more frame, stored as a patch of the
/// first: a zip holding both kinds of entry.
fn sample_with_a_patch(id: &str) -> (RecordingBundle, BTreeMap<String, FrameImage>) {
    let (mut bundle, mut images) = sample_bundle(id);
    let first = bundle.screenshots[0].clone();
    let FrameImage::Full(key_png) = &images[&first.content_hash] else {
        panic!("the sample's frames are whole");
    };
    let key = crate::store::frames::decode_png(key_png).unwrap();
    let mut frame = key.clone();
    frame.put_pixel(30, 20, image::Rgba([255, 0, 255, 255]));
    let (rect, png) = crate::store::frames::encode_patch(&key, &frame)
        .unwrap()
        .unwrap();
    let hash = screenshot::content_hash(frame.width(), frame.height(), frame.as_raw());
    images.insert(
        hash.clone(),
        FrameImage::Patch {
            base_hash: first.content_hash.clone(),
            x: rect.x,
            y: rect.y,
            png,
        },
    );
    bundle.screenshots.push(reprise_models::Screenshot {
        id: bundle.screenshots.len() as u32,
        timestamp: 2.0,
        content_hash: hash,
        ..first
    });
    (bundle, images)
}

fn sample_bytes() -> Vec<u8> {
    let (bundle, images) = sample_with_a_patch("00000000-0000-4000-8000-0000000000aa");
    encode(&bundle, &images)
}

/// A zip of these entries, written as [`encode`] writes.
fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in entries {
        zip.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// The entries of an export, by name.
fn entries_of(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    (0..zip.len())
        .map(|index| {
            let mut file = zip.by_index(index).unwrap();
            let mut content = Vec::new();
            file.read_to_end(&mut content).unwrap();
            (file.name().unwrap().into_owned(), content)
        })
        .collect()
}

#[test]
fn round_trip_is_exact_and_deterministic_and_keeps_patches() {
    let (bundle, images) = sample_with_a_patch("00000000-0000-4000-8000-0000000000aa");
    let bytes = encode(&bundle, &images);
    assert!(bytes.starts_with(ZIP_MAGIC));
    assert_eq!(bytes, encode(&bundle, &images));
    let archive = decode(&bytes).unwrap();
    assert_eq!(archive.bundle, bundle);
    assert_eq!(archive.images, images);
    let names: Vec<String> = entries_of(&bytes).into_keys().collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names.contains(&MANIFEST.to_owned()));
    assert_eq!(
        names.iter().filter(|n| n.starts_with("patches/")).count(),
        1
    );
    assert_eq!(names.iter().filter(|n| n.starts_with("frames/")).count(), 2);
}

#[test]
fn every_truncation_is_refused() {
    let bytes = sample_bytes();
    for cut in [
        0,
        2,
        15,
        40,
        bytes.len() / 2,
        bytes.len() - 30,
        bytes.len() - 1,
    ] {
        let err = decode(&bytes[..cut]).unwrap_err();
        assert!(
            matches!(
                err,
                ArchiveError::Damaged(_) | ArchiveError::TruncatedHeader
            ),
            "cut at {cut}: {err}"
        );
    }
}

#[test]
fn a_flipped_byte_anywhere_in_an_entry_is_refused() {
    let bytes = sample_bytes();
    let manifest_at = bytes
        .windows(MANIFEST.len())
        .position(|w| w == MANIFEST.as_bytes())
        .unwrap();
    // A byte of the (compressed) manifest, and one in the last image.
    let last_entry = bytes
        .windows(9)
        .rposition(|w| w == b"PK\x03\x04\x14\x00\x00\x00\x00")
        .unwrap_or(bytes.len() / 2);
    for idx in [manifest_at + MANIFEST.len() + 40, last_entry + 120] {
        let mut corrupted = bytes.clone();
        corrupted[idx] ^= 0x01;
        let err = decode(&corrupted).unwrap_err();
        assert!(
            matches!(
                err,
                ArchiveError::Damaged(_)
                    | ArchiveError::BadImage { .. }
                    | ArchiveError::BadPayload(_)
            ),
            "byte {idx}: {err}"
        );
    }
}

#[test]
fn an_edit_with_recomputed_checksums_is_still_checked() {
    let (mut bundle, images) = sample_with_a_patch("00000000-0000-4000-8000-0000000000ab");
    bundle.events[0].screenshot_id = Some(99);
    let err = decode(&encode(&bundle, &images)).unwrap_err();
    assert!(err.to_string().contains("missing screenshot 99"), "{err}");

    // A frame's entry replaced by another image.
    let (bundle, mut images) = sample_with_a_patch("00000000-0000-4000-8000-0000000000ac");
    let hash = bundle.screenshots[0].content_hash.clone();
    let other = images
        .values()
        .find(|image| matches!(image, FrameImage::Full(_)) && **image != images[&hash])
        .unwrap()
        .clone();
    images.insert(hash, other);
    let err = decode(&encode(&bundle, &images)).unwrap_err();
    assert!(
        err.to_string().contains("do not match its content hash"),
        "{err}"
    );

    // A patch moved: the frame it makes is not the recorded one.
    let (bundle, mut images) = sample_with_a_patch("00000000-0000-4000-8000-0000000000ad");
    for image in images.values_mut() {
        if let FrameImage::Patch { x, .. } = image {
            *x += 1;
        }
    }
    let err = decode(&encode(&bundle, &images)).unwrap_err();
    assert!(
        err.to_string().contains("do not match its content hash"),
        "{err}"
    );
}

#[test]
fn a_patch_without_its_key_frame_or_an_unused_image_is_refused() {
    let (mut bundle, images) = sample_with_a_patch("00000000-0000-4000-8000-0000000000ae");
    // No frame shows the key frame itself: it is held for its patch.
    let key = bundle.screenshots[0].content_hash.clone();
    let patched = bundle.screenshots.last().unwrap().content_hash.clone();
    for shot in &mut bundle.screenshots {
        if shot.content_hash == key {
            shot.content_hash = patched.clone();
        }
    }
    decode(&encode(&bundle, &images)).unwrap();
    let mut without_key = images.clone();
    without_key.remove(&key);
    let err = decode(&encode(&bundle, &without_key)).unwrap_err();
    assert!(
        err.to_string().contains(&format!(
            "a patch of {key}, which the export does not hold whole"
        )),
        "{err}"
    );
    // An image no frame uses.
    let (bundle, mut images) = sample_bundle("00000000-0000-4000-8000-0000000000af");
    let (_, extra) = sample_with_a_patch("00000000-0000-4000-8000-0000000000af");
    let (extra_hash, extra_image) = extra
        .into_iter()
        .find(|(hash, _)| !images.contains_key(hash))
        .unwrap();
    let FrameImage::Patch { .. } = extra_image else {
        panic!("the extra image is the patch");
    };
    images.insert(extra_hash.clone(), extra_image);
    let err = decode(&encode(&bundle, &images)).unwrap_err();
    assert!(
        err.to_string().contains(&format!(
            "it holds image {extra_hash}, which none of its frames uses"
        )),
        "{err}"
    );
}

#[test]
fn entries_the_manifest_does_not_list_and_listed_ones_missing_are_refused() {
    let bytes = sample_bytes();
    let entries = entries_of(&bytes);
    let mut with_extra: Vec<(&str, &[u8])> = entries
        .iter()
        .map(|(name, content)| (name.as_str(), content.as_slice()))
        .collect();
    with_extra.push(("notes.txt", b"hello"));
    let err = decode(&zip_of(&with_extra)).unwrap_err();
    assert!(
        err.to_string()
            .contains("the zip holds notes.txt, which its manifest does not list"),
        "{err}"
    );
    let missing: Vec<(&str, &[u8])> = entries
        .iter()
        .filter(|(name, _)| !name.starts_with("patches/"))
        .map(|(name, content)| (name.as_str(), content.as_slice()))
        .collect();
    let err = decode(&zip_of(&missing)).unwrap_err();
    assert!(err.to_string().contains("is not in the zip"), "{err}");
    let no_manifest: Vec<(&str, &[u8])> = entries
        .iter()
        .filter(|(name, _)| name.as_str() != MANIFEST)
        .map(|(name, content)| (name.as_str(), content.as_slice()))
        .collect();
    let err = decode(&zip_of(&no_manifest)).unwrap_err();
    assert!(err.to_string().contains("holds no manifest.json"), "{err}");

    // Two entries of one name (a zip writer refuses to make them, so a
    // second manifest is written under a name as long and renamed in
    // the bytes): refused, whichever of the two a reader would take.
    let twin = "manifest.jsoX";
    let mut with_twin: Vec<(&str, &[u8])> = entries
        .iter()
        .map(|(name, content)| (name.as_str(), content.as_slice()))
        .collect();
    with_twin.push((twin, entries[MANIFEST].as_slice()));
    let mut bytes = zip_of(&with_twin);
    let mut renamed = 0;
    for at in 0..bytes.len() - twin.len() {
        if &bytes[at..at + twin.len()] == twin.as_bytes() {
            bytes[at..at + MANIFEST.len()].copy_from_slice(MANIFEST.as_bytes());
            renamed += 1;
        }
    }
    assert_eq!(renamed, 2, "the local header and the central directory");
    let err = decode(&bytes).unwrap_err();
    assert!(err.to_string().contains("two entries of one name"), "{err}");
}

#[test]
fn an_unknown_version_or_another_zip_is_refused() {
    let bytes = sample_bytes();
    let entries = entries_of(&bytes);
    let manifest = String::from_utf8(entries[MANIFEST].clone()).unwrap();
    let newer = manifest.replacen("\"version\":2", "\"version\":3", 1);
    assert_ne!(newer, manifest);
    let err = decode(&zip_of(&[(MANIFEST, newer.as_bytes())])).unwrap_err();
    assert!(
        matches!(&err, ArchiveError::UnknownVersion(v) if v == "3"),
        "{err}"
    );
    assert!(err.to_string().contains("reads 1 and 2"), "{err}");
    let err = decode(&zip_of(&[("readme.txt", b"a zip of something else")])).unwrap_err();
    assert!(err.to_string().contains("holds no manifest.json"), "{err}");
    let err = decode(&zip_of(&[(MANIFEST, b"{\"name\": \"other\"}")])).unwrap_err();
    assert!(matches!(err, ArchiveError::NotAnExport), "{err}");
}

/// Format 1 as Reprise wrote it before the zip.
fn encode_v1(bundle: &RecordingBundle, images: &BTreeMap<String, FrameImage>) -> Vec<u8> {
    let engine = base64::engine::general_purpose::STANDARD;
    let payload = Payload {
        bundle: bundle.clone(),
        images: images
            .iter()
            .map(|(hash, image)| {
                let FrameImage::Full(png) = image else {
                    panic!("format 1 holds whole frames");
                };
                (hash.clone(), engine.encode(png))
            })
            .collect(),
    };
    let payload_json = serde_json::to_vec(&payload).unwrap();
    let header = Header {
        payload_bytes: payload_json.len() as u64,
        payload_sha256: screenshot::hex(&Sha256::digest(&payload_json)),
    };
    let mut out = format!("{MAGIC} 1\n").into_bytes();
    out.extend(serde_json::to_vec(&header).unwrap());
    out.push(b'\n');
    out.extend(payload_json);
    out
}

#[test]
fn format_1_is_still_read_and_still_checked() {
    let (bundle, images) = sample_bundle("00000000-0000-4000-8000-0000000000b1");
    let bytes = encode_v1(&bundle, &images);
    let archive = decode(&bytes).unwrap();
    assert_eq!(archive.bundle, bundle);
    assert_eq!(archive.images, images);
    for cut in [5, 15, 40, bytes.len() / 2, bytes.len() - 1] {
        let err = decode(&bytes[..cut]).unwrap_err();
        assert!(
            matches!(
                err,
                ArchiveError::Truncated { .. } | ArchiveError::TruncatedHeader
            ),
            "cut at {cut}: {err}"
        );
    }
    let mut corrupted = bytes.clone();
    let idx = bytes.len() - 100;
    corrupted[idx] ^= 0x01;
    assert!(matches!(
        decode(&corrupted).unwrap_err(),
        ArchiveError::ChecksumMismatch
    ));
    let text =
        String::from_utf8(bytes)
            .unwrap()
            .replacen("REPRISE-EXPORT 1", "REPRISE-EXPORT 7", 1);
    assert!(
        matches!(decode(text.as_bytes()).unwrap_err(), ArchiveError::UnknownVersion(v) if v == "7")
    );
    assert!(matches!(
        decode(b"GIF89a, not an export").unwrap_err(),
        ArchiveError::NotAnExport
    ));
}

#[test]
fn versions_travel_with_the_export_numbered_from_two() {
    use reprise_models::version::RecordingVersion;
    let (bundle, images) = sample_with_a_patch("00000000-0000-4000-8000-0000000000ab");
    let version = |version: u32| RecordingVersion {
        version,
        created: "2026-12-05T10:00:00.000Z".into(),
        note: format!("healed {version}"),
        run_id: None,
        changes: Vec::new(),
        program: (version == 3).then(|| reprise_models::program::Program::recorded(2)),
    };
    let both = [version(2), version(3)];
    let archive = decode(&encode_with_versions(&bundle, &images, &both)).unwrap();
    assert_eq!(archive.versions, both);
    // Without versions the bytes are those of before versions existed.
    assert_eq!(
        encode_with_versions(&bundle, &images, &[]),
        encode(&bundle, &images)
    );
    for numbers in [[3, 2], [2, 2]] {
        let wrong = [version(numbers[0]), version(numbers[1])];
        let err = decode(&encode_with_versions(&bundle, &images, &wrong)).unwrap_err();
        assert!(err.to_string().contains("not 2, 3, … in order"), "{err}");
    }
}
