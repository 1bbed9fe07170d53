//! Tests of the store against real SQLite files.

use std::collections::BTreeMap;

use reprise_models::{
    ActionEvent, DoubleClickSettings, EventName, FORMAT_VERSION, Recording, RecordingBundle, Rect,
    ScreenGeometry, Screenshot, WindowState, screenshot::content_hash,
};

use super::*;
use crate::store::archive;
use crate::store::frames::FrameImage;
use rusqlite::params;

/// A small but complete recording with two distinct images, one used twice.
pub(crate) fn sample_bundle(id: &str) -> (RecordingBundle, BTreeMap<String, FrameImage>) {
    let monitor = ScreenGeometry {
        rect: Rect::new(0, 0, 64, 48),
        scale_factor: 1.0,
    };
    let mut images = BTreeMap::new();
    let mut screenshots = Vec::new();
    for (idx, shade) in [10u8, 200, 10].into_iter().enumerate() {
        let image =
            image::RgbaImage::from_fn(64, 48, |x, y| image::Rgba([shade, x as u8, y as u8, 255]));
        let hash = content_hash(64, 48, image.as_raw());
        let mut png = Vec::new();
        image
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        images.insert(hash.clone(), FrameImage::Full(png));
        screenshots.push(Screenshot {
            id: idx as u32,
            timestamp: idx as f64 * 0.5,
            width: 64,
            height: 48,
            screen: monitor,
            content_hash: hash,
        });
    }
    let window = WindowState {
        id: 0,
        timestamp: 0.0,
        title: "Calculator – wörld".into(),
        app_class: "XCalc".into(),
        pid: Some(42),
        window_id: 0x200001,
        rect: Rect::new(10, 20, 40, 20),
        a11y: None,
        command: None,
    };
    let mut events = Vec::new();
    for (idx, (name, pressed)) in [
        (EventName::Click, true),
        (EventName::Click, false),
        (EventName::Press, true),
        (EventName::Release, false),
    ]
    .into_iter()
    .enumerate()
    {
        let mut event = ActionEvent::new(name, 0.1 + idx as f64 * 0.3);
        if name == EventName::Click {
            event.mouse_x = Some(20.0);
            event.mouse_y = Some(30.0);
            event.mouse_button_name = Some(reprise_models::MouseButton::Left);
            event.mouse_pressed = Some(pressed);
        } else {
            event.key_char = Some("ö".into());
            event.key_vk = Some(47);
        }
        event.screenshot_id = Some((idx / 2) as u32);
        event.window_state_id = Some(0);
        events.push(event);
    }
    let recording = Recording {
        id: id.to_owned(),
        name: "sample".into(),
        task_description: "click and type".into(),
        created: "2026-11-30T07:00:00Z".into(),
        platform: "linux-x11".into(),
        monitor,
        double_click: DoubleClickSettings::default(),
        format_version: FORMAT_VERSION,
        complete: true,
        parameter_names: Default::default(),
        // Two monitors side by side, so that a round trip shows they are kept.
        monitors: [("left", 0), ("right", 32)]
            .map(|(name, left)| reprise_models::Monitor {
                name: name.into(),
                rect: Rect::new(left, 0, 32, 48),
                primary: left == 0,
            })
            .to_vec(),
    };
    (
        RecordingBundle {
            recording,
            events,
            screenshots,
            window_states: vec![window],
        },
        images,
    )
}

fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store.sqlite")).unwrap();
    (dir, store)
}

#[test]
fn import_then_load_reproduces_the_bundle_and_dedupes_images() {
    let (_dir, mut store) = temp_store();
    let (bundle, images) = sample_bundle("0f0e0d0c-0000-4000-8000-000000000001");
    store.import(&bundle, &images).unwrap();
    assert_eq!(store.load(&bundle.recording.id).unwrap(), bundle);
    let n_images: i64 = store
        .conn
        .query_row("SELECT COUNT(*) FROM images", [], |row| row.get(0))
        .unwrap();
    assert_eq!(n_images, 2, "the repeated frame is stored once");
    let summary = &store.list_recordings().unwrap()[0];
    assert_eq!((summary.n_events, summary.n_screenshots), (4, 3));
    assert!((summary.duration_seconds - 0.9).abs() < 1e-9);
}

#[test]
fn importing_the_same_recording_twice_is_refused_and_changes_nothing() {
    let (_dir, mut store) = temp_store();
    let (bundle, images) = sample_bundle("0f0e0d0c-0000-4000-8000-000000000002");
    store.import(&bundle, &images).unwrap();
    let err = store.import(&bundle, &images).unwrap_err();
    assert!(matches!(err, StoreError::AlreadyExists(_)), "{err}");
    assert_eq!(store.list_recordings().unwrap().len(), 1);
}

#[test]
fn resolve_by_id_prefix_and_name() {
    let (_dir, mut store) = temp_store();
    let (bundle, images) = sample_bundle("abcdef01-0000-4000-8000-000000000003");
    store.import(&bundle, &images).unwrap();
    assert_eq!(store.resolve("abcdef01").unwrap(), bundle.recording.id);
    assert_eq!(store.resolve("sample").unwrap(), bundle.recording.id);
    assert!(matches!(
        store.resolve("nothing").unwrap_err(),
        StoreError::NotFound(_)
    ));
    let (mut other, images) = sample_bundle("abcdef02-0000-4000-8000-000000000004");
    other.recording.name = "other".into();
    store.import(&other, &images).unwrap();
    assert!(matches!(
        store.resolve("abcdef0").unwrap_err(),
        StoreError::Ambiguous { .. }
    ));
    // A recording named like another's id prefix: neither is chosen.
    let (mut shadow, images) = sample_bundle("12345678-0000-4000-8000-000000000005");
    shadow.recording.name = "abcdef01".into();
    store.import(&shadow, &images).unwrap();
    let err = store.resolve("abcdef01").unwrap_err();
    assert!(
        matches!(&err, StoreError::Ambiguous { candidates, .. }
            if candidates.contains("12345678-0000-4000-8000-000000000005 (named \"abcdef01\")")
                && candidates.contains("abcdef01-0000-4000-8000-000000000003 (by its id)")),
        "{err}"
    );
    // Its whole id still names each one.
    assert_eq!(
        store.resolve(&shadow.recording.id).unwrap(),
        shadow.recording.id
    );
}

#[test]
fn delete_removes_data_and_unused_images_only() {
    let (_dir, mut store) = temp_store();
    let (first, images) = sample_bundle("00000000-0000-4000-8000-000000000005");
    let (second, _) = sample_bundle("00000000-0000-4000-8000-000000000006");
    store.import(&first, &images).unwrap();
    store.import(&second, &images).unwrap();
    store.delete_recording(&first.recording.id).unwrap();
    assert!(
        store.has_image(&first.screenshots[0].content_hash).unwrap(),
        "still used by the second"
    );
    store.delete_recording(&second.recording.id).unwrap();
    assert!(!store.has_image(&first.screenshots[0].content_hash).unwrap());
    let n_events: i64 = store
        .conn
        .query_row("SELECT COUNT(*) FROM action_events", [], |row| row.get(0))
        .unwrap();
    assert_eq!(n_events, 0);
}

/// A job's first event, as the server writes it: queued.
fn queued() -> NewEvent {
    NewEvent {
        kind: reprise_models::fleet::EventKind::State,
        step: None,
        attempt: None,
        data: serde_json::json!({"state": "queued"}),
        at: None,
    }
}

/// The error opening the store at `path` gives, which says `says`; the
/// file is left as it was.
fn refused_as_it_was(path: &std::path::Path, says: &str) -> StoreError {
    let before = std::fs::read(path).unwrap();
    let err = Store::open(path).unwrap_err();
    assert!(err.to_string().contains(says), "{err}");
    assert_eq!(std::fs::read(path).unwrap(), before);
    err
}

#[test]
fn a_file_that_is_not_a_store_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    let garbage = b"this is not sqlite, but somebody's notes\n".repeat(200);
    std::fs::write(&path, &garbage).unwrap();
    let err = refused_as_it_was(&path, "not a Reprise store");
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
}

#[test]
fn a_store_from_a_newer_version_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    drop(Store::open(&path).unwrap());
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", schema::VERSION + 1)
            .unwrap();
    }
    let err = refused_as_it_was(&path, "newer Reprise");
    assert!(matches!(err, StoreError::Newer { .. }), "{err}");
}

#[test]
fn export_then_import_into_another_store_is_exact() {
    let (_dir, mut source) = temp_store();
    let (bundle, images) = sample_bundle("00000000-0000-4000-8000-000000000007");
    source.import(&bundle, &images).unwrap();
    let bytes = archive::encode(&source.load(&bundle.recording.id).unwrap(), &images);
    let decoded = archive::decode(&bytes).unwrap();
    let (_dir2, mut target) = temp_store();
    target.import(&decoded.bundle, &decoded.images).unwrap();
    assert_eq!(target.load(&bundle.recording.id).unwrap(), bundle);
    for (hash, image) in &images {
        assert_eq!(&target.image_as_stored(hash).unwrap(), image);
    }
}

#[test]
fn two_processes_opening_a_new_store_at_once_both_succeed() {
    // The recorder and a `reprise list` used to race on the first migration.
    for _ in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.sqlite");
        let opens: Vec<_> = (0..4)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || Store::open(&path).map(|_| ()))
            })
            .collect();
        for open in opens {
            open.join().unwrap().unwrap();
        }
    }
}

/// Appends the frames of a recording as the recorder would: the first whole,
/// the others as patches against it where the change is small.
fn append_frames(store: &mut Store, id: &str, frames: &[image::RgbaImage]) -> Vec<String> {
    let (bundle, _) = sample_bundle(id);
    store.insert_recording(&bundle.recording).unwrap();
    let key = &frames[0];
    let key_hash = content_hash(key.width(), key.height(), key.as_raw());
    let mut hashes = Vec::new();
    let blobs: Vec<ScreenshotBlob> = frames
        .iter()
        .enumerate()
        .map(|(idx, frame)| {
            let hash = content_hash(frame.width(), frame.height(), frame.as_raw());
            hashes.push(hash.clone());
            let image = match crate::store::frames::encode_patch(key, frame) {
                Some(Some((rect, png))) if idx > 0 => FrameImage::Patch {
                    base_hash: key_hash.clone(),
                    x: rect.x,
                    y: rect.y,
                    png,
                },
                _ => FrameImage::Full(crate::store::frames::encode_png(frame)),
            };
            ScreenshotBlob {
                screenshot: Screenshot {
                    id: idx as u32,
                    timestamp: idx as f64,
                    width: frame.width(),
                    height: frame.height(),
                    screen: bundle.recording.monitor,
                    content_hash: hash,
                },
                image,
            }
        })
        .collect();
    append_screenshots(store, id, &blobs);
    hashes
}

/// A 320x200 frame's row as the recorder hands it over.
fn frame_blob(id: u32, hash: &str, image: FrameImage) -> ScreenshotBlob {
    ScreenshotBlob {
        screenshot: Screenshot {
            id,
            timestamp: f64::from(id),
            width: 320,
            height: 200,
            screen: sample_bundle("any").0.recording.monitor,
            content_hash: hash.to_owned(),
        },
        image,
    }
}

fn read_frame(store: &Store, hash: &str) -> image::RgbaImage {
    let png = store.image_png(hash).unwrap();
    image::load_from_memory(&png).unwrap().into_rgba8()
}

/// A store holding the recording `id` of [`frames_with_a_typed_word`]:
/// the store, the frames and their hashes.
fn typed_word_stored(id: &str) -> (tempfile::TempDir, Store, Vec<image::RgbaImage>, Vec<String>) {
    let (dir, mut store) = temp_store();
    let frames = frames_with_a_typed_word();
    let hashes = append_frames(&mut store, id, &frames);
    (dir, store, frames, hashes)
}

fn frames_with_a_typed_word() -> Vec<image::RgbaImage> {
    let key = image::RgbaImage::from_fn(320, 200, |x, y| {
        image::Rgba([(x / 8) as u8, (y / 8) as u8, 120, 255])
    });
    let mut typed = key.clone();
    for x in 100..140 {
        for y in 60..72 {
            typed.put_pixel(x, y, image::Rgba([0, 0, 0, 255]));
        }
    }
    let mut more = typed.clone();
    more.put_pixel(150, 70, image::Rgba([255, 255, 255, 255]));
    vec![key, typed, more]
}

#[test]
fn frames_stored_as_patches_read_back_exactly_and_take_little_room() {
    let (_dir, store, frames, hashes) = typed_word_stored("5e7c0000-0000-4000-8000-00000000a7c1");
    for (frame, hash) in frames.iter().zip(&hashes) {
        assert_eq!(&read_frame(&store, hash), frame, "frame {hash} reads back");
    }
    let (whole, patch): (i64, i64) = store
        .conn
        .query_row(
            "SELECT (SELECT length(png) FROM images WHERE hash = ?1),
                    (SELECT length(png) FROM images WHERE hash = ?2 AND base_hash = ?1)",
            params![hashes[0], hashes[1]],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert!(
        patch * 5 < whole,
        "a patch of {patch} bytes against {whole}"
    );
    // Exported, the patches stay patches, and the frames they make check
    // out against their content hashes; imported, they are stored as they
    // were.
    let id = "5e7c0000-0000-4000-8000-00000000a7c1";
    let bytes = archive::export(&store, &store.load(id).unwrap()).unwrap();
    let whole_frames: usize = frames
        .iter()
        .map(|frame| crate::store::frames::encode_png(frame).len())
        .sum();
    assert!(
        bytes.len() * 2 < whole_frames,
        "an export of {} bytes for {whole_frames} bytes of whole frames",
        bytes.len()
    );
    let archive = archive::decode(&bytes).unwrap();
    assert!(matches!(
        &archive.images[&hashes[1]],
        FrameImage::Patch { base_hash, .. } if *base_hash == hashes[0]
    ));
    let (_dir2, mut copy) = temp_store();
    copy.import(&archive.bundle, &archive.images).unwrap();
    for (frame, hash) in frames.iter().zip(&hashes) {
        assert_eq!(&read_frame(&copy, hash), frame, "frame {hash} reads back");
        assert_eq!(
            copy.image_as_stored(hash).unwrap(),
            store.image_as_stored(hash).unwrap()
        );
    }
}

/// Appends `blobs` to the recording `id`, with no events.
fn append_screenshots(store: &mut Store, id: &str, blobs: &[ScreenshotBlob]) {
    let batch = Batch {
        screenshots: blobs,
        ..Batch::default()
    };
    store.append(id, batch).unwrap();
}

#[test]
fn a_key_frame_stays_while_patches_use_it_and_goes_with_them() {
    let (_dir, mut store, frames, hashes) = typed_word_stored("rec-a");
    // A second recording whose only frame is a patch of the first's key frame
    // (the same screen): deleting the first keeps the key frame.
    store
        .insert_recording(&sample_bundle("rec-b").0.recording)
        .unwrap();
    let blob = frame_blob(0, &hashes[1], FrameImage::Stored);
    append_screenshots(&mut store, "rec-b", &[blob]);
    store.delete_recording("rec-a").unwrap();
    assert_eq!(read_frame(&store, &hashes[1]), frames[1]);
    assert!(
        !store.has_image(&hashes[2]).unwrap(),
        "an unused patch goes"
    );
    store.delete_recording("rec-b").unwrap();
    let left: i64 = store
        .conn
        .query_row("SELECT count(*) FROM images", [], |row| row.get(0))
        .unwrap();
    assert_eq!(
        left, 0,
        "the key frame goes with the last patch that used it"
    );
}

#[test]
fn a_key_frame_first_stored_as_a_patch_is_stored_whole_when_it_becomes_a_key() {
    let (_dir, mut store, frames, hashes) = typed_word_stored("rec-upgrade");
    let blob = frame_blob(
        3,
        &hashes[1],
        FrameImage::Full(crate::store::frames::encode_png(&frames[1])),
    );
    append_screenshots(&mut store, "rec-upgrade", &[blob]);
    let base: Option<String> = store
        .conn
        .query_row(
            "SELECT base_hash FROM images WHERE hash = ?1",
            params![hashes[1]],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(base, None);
    assert_eq!(read_frame(&store, &hashes[1]), frames[1]);
}

#[test]
fn a_patch_whose_key_frame_is_missing_is_a_clear_error() {
    let (_dir, store, _, hashes) = typed_word_stored("rec-broken");
    // Damage that the foreign key would refuse: made with it switched off.
    store
        .conn
        .pragma_update(None, "foreign_keys", false)
        .unwrap();
    store
        .conn
        .execute(
            "UPDATE images SET base_hash = 'gone' WHERE hash = ?1",
            params![hashes[1]],
        )
        .unwrap();
    let err = store.image_png(&hashes[1]).unwrap_err().to_string();
    assert!(
        err.contains("patch of gone, which is not stored whole"),
        "{err}"
    );
}

#[test]
fn a_version_4_store_keeps_its_cached_segmentations_and_finds_them_by_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    let new = |phash: u64| NewSegmentation {
        segmenter: "classical-test",
        width: 800,
        height: 600,
        phash,
        thumbnail: &[7; 12],
        thumbnail_width: 4,
        image_hash: "00ab",
        image_png: b"not looked at here",
        segments_json: "[]",
    };
    {
        // A store as version 4 left it: the old index, two cached rows.
        let mut store = Store::open(&path).unwrap();
        store
            .conn
            .execute_batch(
                "DROP INDEX segmentations_key;
                 CREATE INDEX segmentations_size ON segmentations(segmenter, width, height);
                 ALTER TABLE recordings DROP COLUMN parameter_names;
                 ALTER TABLE recordings DROP COLUMN monitors;
                 DROP TABLE fleet_events;
                 DROP TABLE fleet_jobs;
                 DROP TABLE fleet_workers;
                 DROP TABLE recording_versions;
                 DROP TABLE fleet_schedules;
                 DROP TABLE fleet_audit;
                 DROP TABLE console_sessions;
                 PRAGMA user_version = 4;",
            )
            .unwrap();
        store.insert_segmentation(&new(1)).unwrap();
        store.insert_segmentation(&new(2)).unwrap();
    }
    let store = Store::open(&path).unwrap();
    let version: i64 = store
        .conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, schema::VERSION);
    let rows = store
        .segmentation_candidates("classical-test", 800, 600)
        .unwrap();
    let phashes: Vec<u64> = rows.iter().map(|row| row.phash).collect();
    assert_eq!(phashes, vec![2, 1], "newest first");
    assert_eq!(rows[0].image_hash, "00ab");
    assert_eq!(rows[0].thumbnail_width, 4);
    let plan: String = store
        .conn
        .query_row(
            &format!("EXPLAIN QUERY PLAN {}", segmentations::CANDIDATES),
            params!["classical-test", 800, 600],
            |row| row.get(3),
        )
        .unwrap();
    assert!(plan.contains("COVERING INDEX segmentations_key"), "{plan}");
}

/// A recording stored before monitors were kept (version 7) reads back
/// after the migration, with no monitors listed.
#[test]
fn a_recording_from_before_monitors_were_kept_reads_back_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    let (mut bundle, images) = sample_bundle("00000000-0000-4000-8000-000000000017");
    {
        let mut store = Store::open(&path).unwrap();
        store.import(&bundle, &images).unwrap();
        store
            .conn
            .execute_batch(
                "ALTER TABLE recordings DROP COLUMN monitors;
                 DROP TABLE recording_versions;
                 DROP TABLE fleet_schedules;
                 ALTER TABLE fleet_jobs DROP COLUMN requeued_as;
                 ALTER TABLE fleet_jobs DROP COLUMN discarded;
                 DROP TABLE fleet_audit;
                 ALTER TABLE fleet_workers DROP COLUMN owner;
                 DROP INDEX fleet_jobs_deadline;
                 DROP INDEX fleet_jobs_unqueued;
                 DROP TABLE console_sessions;
                 PRAGMA user_version = 7;",
            )
            .unwrap();
    }
    let store = Store::open(&path).unwrap();
    bundle.recording.monitors.clear();
    assert_eq!(store.load(&bundle.recording.id).unwrap(), bundle);
}

#[test]
fn a_stores_path_becomes_a_uri_sqlite_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("Tromsø ?#%");
    std::fs::create_dir(&folder).unwrap();
    let path = folder.join("store.sqlite");
    Store::open(&path).unwrap();
    // Through the read-only path's URI, the same file (not a new one).
    let uri = super::url_path(&path);
    assert!(uri.is_ascii(), "{uri}");
    let conn = rusqlite::Connection::open_with_flags(
        &uri,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    )
    .unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, super::schema::VERSION);
}

/// A run of `recording` started at `started`, with one step whose frame is
/// `png` (its hash `hash`).
fn insert_run_with_frame(
    store: &mut Store,
    id: &str,
    recording: &str,
    started: &str,
    frame: (&str, &[u8]),
) {
    store
        .insert_run(&RunRecord {
            id: id.to_owned(),
            recording_id: recording.to_owned(),
            strategy: "naive".to_owned(),
            arguments: Default::default(),
            started: started.to_owned(),
            ended: None,
            outcome: None,
            summary: None,
        })
        .unwrap();
    let step = StoredStep {
        record: reprise_strategies::StepRecord {
            sought: None,
            recheck: None,
            evidence: None,
            step_idx: 0,
            status: reprise_strategies::StepStatus::Verified,
            step: None,
            attempts: 1,
            errors: Vec::new(),
            prepared: Vec::new(),
            check: None,
            settled: true,
            window_title: None,
            window_rect: None,
            started_seconds: 0.0,
            decide_seconds: 0.0,
            duration_seconds: 0.0,
            input_ended: None,
        },
        screen: None,
    };
    store.insert_run_step(id, 0, &step, Some(frame)).unwrap();
}

#[test]
fn runs_are_pruned_by_age_and_count_with_the_frames_only_they_use() {
    let (dir, mut store) = temp_store();
    let (bundle, images) = sample_bundle("00000000-0000-4000-8000-000000000007");
    store.import(&bundle, &images).unwrap();
    let recording = bundle.recording.id.as_str();
    // Frames big enough to matter on disk: noise does not compress.
    let noise = |seed: u64| {
        let mut state = seed;
        let image = image::RgbaImage::from_fn(400, 300, |_, _| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            image::Rgba((state >> 33).to_le_bytes()[..4].try_into().unwrap())
        });
        let mut png = Vec::new();
        image
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        (
            content_hash(image.width(), image.height(), image.as_raw()),
            png,
        )
    };
    let (old_hash, old_png) = noise(1);
    let (new_hash, new_png) = noise(2);
    // A recorded frame, also seen by the old run: it must stay.
    let recorded = bundle.screenshots[0].content_hash.clone();
    let recorded_png = store.image_png(&recorded).unwrap();
    insert_run_with_frame(
        &mut store,
        "run-old",
        recording,
        "2020-01-01T00:00:00.000Z",
        (&old_hash, &old_png),
    );
    insert_run_with_frame(
        &mut store,
        "run-mid",
        recording,
        "2026-11-01T00:00:00.000Z",
        (&recorded, &recorded_png),
    );
    insert_run_with_frame(
        &mut store,
        "run-new",
        recording,
        "2026-12-01T00:00:00.000Z",
        (&new_hash, &new_png),
    );

    let listed: Vec<String> = store
        .list_runs(None)
        .unwrap()
        .into_iter()
        .map(|run| run.id)
        .collect();
    assert_eq!(listed, ["run-new", "run-mid", "run-old"]);
    assert_eq!(store.list_runs(Some("no such recording")).unwrap(), []);
    assert_eq!(store.list_runs(Some(recording)).unwrap()[2].steps, 1);

    assert_eq!(
        store
            .runs_to_prune(Some("2026-01-01T00:00:00.000Z"), None)
            .unwrap(),
        ["run-old"]
    );
    assert_eq!(
        store.runs_to_prune(None, Some(1)).unwrap(),
        ["run-mid", "run-old"]
    );
    assert_eq!(
        store.runs_to_prune(None, Some(5)).unwrap(),
        Vec::<String>::new()
    );

    let path = dir.path().join("store.sqlite");
    store
        .conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    let before = space::store_bytes(&path);
    assert_eq!(store.delete_runs(&["run-old".to_owned()]).unwrap(), 1);
    assert!(
        !store.has_image(&old_hash).unwrap(),
        "only the old run used it"
    );
    assert!(store.has_image(&new_hash).unwrap());
    assert!(store.give_back_space().unwrap());
    let after = space::store_bytes(&path);
    assert!(
        before - after >= old_png.len() as u64 * 9 / 10,
        "the old frame's {} bytes left the file: {before} -> {after}",
        old_png.len()
    );
    assert_eq!(store.delete_runs(&["run-mid".to_owned()]).unwrap(), 1);
    assert!(
        store.has_image(&recorded).unwrap(),
        "the recording still uses it"
    );
    assert_eq!(store.load(recording).unwrap(), bundle);
}

#[test]
fn a_store_made_before_space_was_given_back_is_rewritten_once_to_give_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    // An older store: no auto-vacuum.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("PRAGMA auto_vacuum = NONE; CREATE TABLE t (x);")
        .unwrap();
    drop(conn);
    let mut store = Store::open(&path).unwrap();
    let mode = |store: &Store| -> i64 {
        store
            .conn
            .query_row("PRAGMA auto_vacuum", [], |row| row.get(0))
            .unwrap()
    };
    assert_eq!(mode(&store), 0);
    assert!(store.give_back_space().unwrap());
    assert_eq!(mode(&store), 2, "incremental from then on");
    assert!(space::reserve_path(&path).exists());
    assert_eq!(
        std::fs::metadata(space::reserve_path(&path)).unwrap().len(),
        space::RESERVE_BYTES
    );
}

#[test]
fn a_run_stored_by_an_older_reprise_reads_back_typed() {
    let (_dir, mut store) = temp_store();
    let (bundle, images) = sample_bundle("00000000-0000-4000-8000-000000000009");
    store.import(&bundle, &images).unwrap();
    // As an older Reprise wrote it: no rungs, no batch, a field since
    // dropped, and a completed outcome from before unverified steps were
    // counted.
    store
        .conn
        .execute(
            "INSERT INTO replay_runs (id, recording_id, strategy, arguments, started, ended, outcome, summary)
             VALUES ('run-old', ?1, 'visual', ?2, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:09.000Z', ?3, ?4)",
            params![
                bundle.recording.id,
                r#"{"speed": 2.0, "dry_run": false, "max_retries": 3, "describer": "offline", "parameters": [["user_name", "bob"]]}"#,
                r#"{"outcome": "completed", "steps": 3}"#,
                r#"{"steps": 3, "seconds": 9.5}"#,
            ],
        )
        .unwrap();
    let (run, _) = store.load_run("run-old").unwrap();
    assert_eq!(run.arguments.speed, 2.0);
    assert_eq!(run.arguments.max_retries, 3);
    assert_eq!(
        run.arguments.parameters,
        [("user_name".to_owned(), "bob".to_owned())]
    );
    assert!(run.arguments.rungs.structural && run.arguments.rungs.visual);
    assert_eq!(run.arguments.batch, None);
    assert_eq!(
        run.outcome,
        Some(reprise_strategies::ReplayOutcome::completed(3, 0))
    );
    let summary = run.summary.unwrap();
    assert_eq!(
        (summary.steps, summary.seconds, summary.tokens),
        (3, 9.5, 0)
    );
    let listed = store.list_runs(None).unwrap();
    assert_eq!(listed[0].outcome, run.outcome);
    assert_eq!(listed[0].seconds, Some(9.5));

    // What a run writes now reads back as it was.
    let written = RunRecord {
        id: "run-new".to_owned(),
        recording_id: bundle.recording.id.clone(),
        strategy: "visual".to_owned(),
        arguments: RunArguments {
            speed: 1.0,
            batch: Some(BatchRow {
                id: "batch".to_owned(),
                row: 2,
                values: vec![("password".to_owned(), "(secret)".to_owned())],
            }),
            ..Default::default()
        },
        started: "2026-01-02T00:00:00.000Z".to_owned(),
        ended: None,
        outcome: None,
        summary: None,
    };
    store.insert_run(&written).unwrap();
    let outcome = reprise_strategies::ReplayOutcome::Failed {
        step: 1,
        reason: "gone".to_owned(),
        by: reprise_strategies::FailedBy::Step,
    };
    let summary = RunSummary {
        steps: 2,
        seconds: 1.5,
        ..Default::default()
    };
    store
        .finish_run("run-new", "2026-01-02T00:00:02.000Z", &outcome, &summary)
        .unwrap();
    let (run, _) = store.load_run("run-new").unwrap();
    assert_eq!(run.arguments, written.arguments);
    assert_eq!(run.outcome, Some(outcome));
    assert_eq!(run.summary, Some(summary));
}

#[test]
fn a_reference_names_a_run_by_its_id_never_by_a_pattern() {
    let (_dir, mut store) = temp_store();
    let (bundle, images) = sample_bundle("0f0e0d0c-0000-4000-8000-000000000009");
    store.import(&bundle, &images).unwrap();
    for (id, batch) in [
        ("abcd1234-0000-4000-8000-000000000001", "b0b0b0b0-0000"),
        ("abcd5678-0000-4000-8000-000000000002", "b0b0b0b0-0000"),
    ] {
        store
            .insert_run(&RunRecord {
                id: id.to_owned(),
                recording_id: bundle.recording.id.clone(),
                strategy: "naive".to_owned(),
                arguments: RunArguments {
                    batch: Some(BatchRow {
                        id: batch.to_owned(),
                        row: 1,
                        values: Vec::new(),
                    }),
                    ..Default::default()
                },
                started: "2026-01-01T00:00:00.000Z".to_owned(),
                ended: None,
                outcome: None,
                summary: None,
            })
            .unwrap();
    }
    for pattern in ["%", "_", "", "abcd%", "abc_1234", "ab"] {
        assert!(
            matches!(store.resolve_run(pattern), Err(StoreError::RunNotFound(_))),
            "{pattern:?} names no run"
        );
        assert_eq!(store.resolve_batch(pattern).unwrap(), None, "{pattern:?}");
        assert!(store.resolve(pattern).is_err(), "{pattern:?}");
    }
    assert_eq!(
        store.resolve_run("ABCD1").unwrap(),
        "abcd1234-0000-4000-8000-000000000001"
    );
    assert!(matches!(
        store.resolve_run("abcd"),
        Err(StoreError::Ambiguous { .. })
    ));
    assert_eq!(store.resolve_batch("b0b0").unwrap().unwrap().1.len(), 2);
}

/// A slot is fired once: a second fire of the slot the schedule no longer
/// waits for writes nothing; a removed schedule fires no more.
#[test]
fn a_schedules_slot_makes_its_jobs_once() {
    use reprise_models::fleet::{Schedule, ScheduleState, SubmitRequest};
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("store.sqlite")).unwrap();
    let request: SubmitRequest = serde_json::from_str(r#"{"recording":"r"}"#).unwrap();
    let schedule = Schedule {
        id: "s1".into(),
        request,
        every: Some("* * * * *".into()),
        time_zone: "UTC".into(),
        state: ScheduleState::Active,
        next: Some("2026-12-05T20:00:00.000Z".into()),
        last_slot: None,
        runs: 0,
        skipped: 0,
        last_error: None,
        created: "2026-12-05T19:59:00.000Z".into(),
    };
    store.insert_schedule(&schedule).unwrap();
    assert_eq!(
        store.due_schedules("2026-12-05T19:59:59.999Z").unwrap(),
        vec![]
    );
    assert_eq!(
        store
            .due_schedules("2026-12-05T20:00:00.000Z")
            .unwrap()
            .len(),
        1
    );
    let job: reprise_models::fleet::Job = serde_json::from_value(serde_json::json!({
        "id": "j1", "recording_id": "r", "pool": "default",
        "spec": {"options": {}, "labels": {}, "parameters": {}, "attempts": 1,
                 "retry": "never", "deadline": null, "batch": null, "row": null},
        "state": "queued", "attempt": 0, "worker": null, "injected": false,
        "cancel_requested": false, "reason": null, "outcome": null, "run_id": null,
        "created": "2026-12-05T20:00:00.100Z", "started": null, "ended": null
    }))
    .unwrap();
    let event = queued();
    let fired = crate::store::Fired {
        id: "s1",
        was_next: "2026-12-05T20:00:00.000Z",
        slot: "2026-12-05T20:00:00.000Z",
        next: Some("2026-12-05T20:01:00.000Z"),
        skipped: 0,
        error: None,
    };
    assert!(
        store
            .fire_schedule(&fired, &[(job.clone(), event.clone())])
            .unwrap()
    );
    let mut again = job.clone();
    again.id = "j2".into();
    assert!(
        !store.fire_schedule(&fired, &[(again, event)]).unwrap(),
        "fired once"
    );
    assert_eq!(store.jobs(None, 10).unwrap().len(), 1);
    let now = store.schedule("s1").unwrap().unwrap();
    assert_eq!(now.runs, 1);
    assert_eq!(now.next.as_deref(), Some("2026-12-05T20:01:00.000Z"));
    assert_eq!(now.last_slot.as_deref(), Some("2026-12-05T20:00:00.000Z"));
    assert_eq!(
        store.remove_schedule("s1").unwrap(),
        Some(ScheduleState::Active)
    );
    assert_eq!(
        store.remove_schedule("s1").unwrap(),
        Some(ScheduleState::Removed)
    );
    assert_eq!(
        store.due_schedules("2027-01-01T00:00:00.000Z").unwrap(),
        vec![]
    );
    assert_eq!(store.remove_schedule("nope").unwrap(), None);
}

/// The tick's query finds retrying jobs and the queued ones that need it
/// (a deadline passed, no queue entry), and no other, by index.
#[test]
fn the_tick_finds_only_the_jobs_that_wait_on_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("store.sqlite")).unwrap();
    let job = |id: &str, state: &str, entry: Option<&str>, deadline: Option<&str>| {
        let mut job: reprise_models::fleet::Job = serde_json::from_value(serde_json::json!({
            "id": id, "recording_id": "r", "pool": "default",
            "spec": {"options": {}, "labels": {}, "parameters": {}, "attempts": 1,
                     "retry": "never", "deadline": deadline, "batch": null, "row": null},
            "state": state, "attempt": 0, "worker": null, "injected": false,
            "cancel_requested": false, "reason": null, "outcome": null, "run_id": null,
            "created": "2026-12-05T20:00:00.000Z", "started": null, "ended": null
        }))
        .unwrap();
        job.entry = entry.map(str::to_owned);
        job
    };
    let event = queued();
    for job in [
        job("in-queue", "queued", Some("1-0"), None),
        job("no-entry", "queued", None, None),
        job(
            "late",
            "queued",
            Some("2-0"),
            Some("2026-12-05T20:00:00.000Z"),
        ),
        job(
            "not-yet",
            "queued",
            Some("3-0"),
            Some("2026-12-05T22:00:00.000Z"),
        ),
        job("retrying", "retrying", None, None),
        job("done", "completed", None, Some("2026-12-05T20:00:00.000Z")),
    ] {
        store.insert_job(&job, &event).unwrap();
    }
    let mut found: Vec<String> = store
        .jobs_waiting_on_time("2026-12-05T21:00:00.000Z")
        .unwrap()
        .into_iter()
        .map(|job| job.id)
        .collect();
    found.sort();
    assert_eq!(found, ["late", "no-entry", "retrying"]);
    let plan: Vec<String> = store
        .conn
        .prepare(&format!(
            "EXPLAIN QUERY PLAN {}",
            super::fleet::waiting_on_time()
        ))
        .unwrap()
        .query_map(["x"], |row| row.get::<_, String>(3))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(
        plan.iter().any(|step| step.contains("fleet_jobs_deadline")),
        "{plan:?}"
    );
}
