//! The writer on its own: observations and events fed by hand, the time
//! given, and what it wrote read back from a real store file.

use std::sync::mpsc::{Sender, channel};
use std::time::Duration;

use reprise_models::{DoubleClickSettings, FORMAT_VERSION, Recording, Rect, ScreenGeometry};

use super::*;

const SCREEN: ScreenGeometry = ScreenGeometry {
    rect: Rect {
        left: 0,
        top: 0,
        width: 640,
        height: 480,
    },
    scale_factor: 1.0,
};

/// A writer whose recording started at `start`, its observer's two queues,
/// and a store file holding the recording's row.
struct Bench {
    start: Instant,
    writer: Writer,
    frames: Sender<Observation>,
    windows: Sender<Observation>,
    observations: Receiver<Observation>,
    window_changes: Receiver<Observation>,
    stop: StopSequence,
    store: Store,
    _dir: tempfile::TempDir,
}

impl Bench {
    fn new() -> Bench {
        let start = Instant::now();
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("store.sqlite")).unwrap();
        store
            .insert_recording(&Recording {
                id: "rec".into(),
                name: "writer".into(),
                task_description: String::new(),
                created: "2026-12-02T07:00:00Z".into(),
                platform: "linux-x11".into(),
                monitor: SCREEN,
                double_click: DoubleClickSettings::default(),
                format_version: FORMAT_VERSION,
                complete: false,
                parameter_names: Default::default(),
                monitors: Vec::new(),
            })
            .unwrap();
        let (frames, observations) = channel();
        let (windows, window_changes) = channel();
        Bench {
            start,
            writer: Writer::new("rec".into(), SCREEN, start, Default::default()),
            frames,
            windows,
            observations,
            window_changes,
            stop: StopSequence::new(Vec::new()),
            store,
            _dir: dir,
        }
    }

    fn at(&self, seconds: f64) -> Instant {
        self.start + Duration::from_secs_f64(seconds)
    }

    /// A frame observed at `seconds`, stored as `image`.
    fn frame(&self, seconds: f64, hash: &str, image: FrameImage) {
        let observation = Observation::Frame {
            at: self.at(seconds),
            width: 640,
            height: 480,
            content_hash: hash.into(),
            image,
        };
        self.frames.send(observation).unwrap();
    }

    fn unchanged(&self, seconds: f64) {
        let at = self.at(seconds);
        self.frames.send(Observation::Unchanged { at }).unwrap();
    }

    fn window(&self, seconds: f64, title: &str) {
        let window = platform::ActiveWindow {
            title: title.into(),
            app_class: "Test".into(),
            pid: None,
            window_id: 7,
            rect: Rect::new(10, 10, 300, 200),
            popup: false,
        };
        let at = self.at(seconds);
        let window = Some(window);
        self.windows
            .send(Observation::Window { at, window })
            .unwrap();
    }

    fn press(&mut self, seconds: f64) {
        let mut event = ActionEvent::new(EventName::Click, seconds);
        (event.mouse_x, event.mouse_y) = (Some(50.0), Some(60.0));
        event.mouse_pressed = Some(true);
        self.writer.events.push(event);
    }

    /// Drains at `now` and says which events are ready, as (timestamp,
    /// frame, window state).
    fn drain(&mut self, now: f64, finish: bool) -> Vec<(f64, Option<u32>, Option<u32>)> {
        let observed = Observed {
            observations: &self.observations,
            window_changes: &self.window_changes,
        };
        self.writer
            .drain(now, &observed, None, &mut self.stop, finish);
        self.writer
            .ready_events
            .iter()
            .map(|event| (event.timestamp, event.screenshot_id, event.window_state_id))
            .collect()
    }
}

fn patch(base: &str) -> FrameImage {
    FrameImage::Patch {
        base_hash: base.into(),
        x: 0,
        y: 0,
        png: vec![1, 2, 3],
    }
}

#[test]
fn an_event_waits_for_its_frame_then_links_to_the_newest_before_it() {
    let mut bench = Bench::new();
    bench.window(0.1, "first");
    bench.frame(0.2, "key", FrameImage::Full(vec![0]));
    bench.press(0.5);
    // Nothing observed after the press yet, and it has not waited its bound.
    assert_eq!(bench.drain(0.6, false), []);
    // Once the observer has looked after it, it is linked to what was on the
    // screen before it.
    bench.frame(0.7, "later", patch("key"));
    assert_eq!(bench.drain(0.8, false), [(0.5, Some(0), Some(0))]);
    // An event nothing is observed after is linked once it has waited.
    bench.window(0.9, "second");
    bench.press(1.0);
    assert_eq!(bench.drain(1.5, false).len(), 1);
    assert_eq!(
        bench.drain(1.0 + MAX_LINK_WAIT_SECONDS + 0.01, false)[1],
        (1.0, Some(1), Some(1))
    );
    // At the end every event goes, whatever it waited.
    bench.unchanged(2.0);
    bench.press(1.9);
    assert_eq!(bench.drain(1.95, true)[2], (1.9, Some(1), Some(1)));
}

#[test]
fn a_patch_seen_before_is_not_stored_again_and_a_key_frame_always_is() {
    let mut bench = Bench::new();
    bench.frame(0.1, "key", FrameImage::Full(vec![0]));
    bench.frame(0.2, "p", patch("key"));
    bench.frame(0.3, "other", patch("key"));
    bench.frame(0.4, "p", patch("key"));
    bench.frame(0.5, "key", FrameImage::Full(vec![0]));
    bench.drain(0.6, false);
    let kinds: Vec<(&str, &str)> = bench
        .writer
        .screenshots
        .iter()
        .map(|blob| {
            let kind = match blob.image {
                FrameImage::Full(_) => "full",
                FrameImage::Patch { .. } => "patch",
                FrameImage::Stored => "stored",
            };
            (blob.screenshot.content_hash.as_str(), kind)
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("key", "full"),
            ("p", "patch"),
            ("other", "patch"),
            ("p", "stored"),
            ("key", "full")
        ]
    );
}

#[test]
fn a_flush_writes_what_is_ready_and_the_store_reads_it_back_linked() {
    let mut bench = Bench::new();
    bench.window(0.0, "Editor");
    let png = crate::store::frames::encode_png(&image::RgbaImage::new(640, 480));
    bench.frame(0.1, "key", FrameImage::Full(png));
    bench.press(0.3);
    bench.press(0.45);
    bench.unchanged(0.5);
    bench.drain(0.5, false);
    bench.writer.flush(&mut bench.store).unwrap();
    assert_eq!(bench.writer.next_event_seq, 2);
    // A flush with nothing ready writes nothing.
    bench.writer.flush(&mut bench.store).unwrap();
    let bundle = bench.store.load("rec").unwrap();
    let links: Vec<(f64, Option<u32>, Option<u32>)> = bundle
        .events
        .iter()
        .map(|event| (event.timestamp, event.screenshot_id, event.window_state_id))
        .collect();
    assert_eq!(links, [(0.3, Some(0), Some(0)), (0.45, Some(0), Some(0))]);
    assert_eq!(bundle.screenshots.len(), 1);
    assert_eq!(bundle.window_states[0].title, "Editor");
    assert!(bench.store.has_image("key").unwrap());
}
