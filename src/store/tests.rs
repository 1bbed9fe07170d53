//! Tests of the store against real SQLite files.

use std::collections::HashMap;

use reprise_models::{
    ActionEvent, DoubleClickSettings, EventName, FORMAT_VERSION, Recording, RecordingBundle, Rect,
    ScreenGeometry, Screenshot, WindowState, screenshot::content_hash,
};

use super::*;
use crate::archive;

/// A small but complete recording with two distinct images, one used twice.
pub(crate) fn sample_bundle(id: &str) -> (RecordingBundle, HashMap<String, Vec<u8>>) {
    let monitor = ScreenGeometry {
        rect: Rect::new(0, 0, 64, 48),
        scale_factor: 1.0,
    };
    let mut images = HashMap::new();
    let mut screenshots = Vec::new();
    for (idx, shade) in [10u8, 200, 10].into_iter().enumerate() {
        let image =
            image::RgbaImage::from_fn(64, 48, |x, y| image::Rgba([shade, x as u8, y as u8, 255]));
        let hash = content_hash(64, 48, image.as_raw());
        let mut png = Vec::new();
        image
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        images.insert(hash.clone(), png);
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

#[test]
fn a_file_that_is_not_a_store_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.sqlite");
    let garbage = b"this is not sqlite, but somebody's notes\n".repeat(200);
    std::fs::write(&path, &garbage).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("not a Reprise store"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
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
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Newer { .. }), "{err}");
    assert!(err.to_string().contains("newer Reprise"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
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
    for (hash, png) in &images {
        assert_eq!(&target.image_png(hash).unwrap(), png);
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
