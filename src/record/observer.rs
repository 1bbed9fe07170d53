//! The observer thread: screenshots at a steady rate and right after every
//! press, and the active window whenever it changes. Frames go to the writer
//! through a bounded queue; when it is full a frame is dropped and counted, so
//! memory never grows with the length of a recording. A frame goes whole (a
//! key frame) or as the patch that differs from the last key frame
//! ([`crate::store::frames`]). Where the display reports drawing (X11's DAMAGE),
//! nothing is captured while nothing is drawn. Input never passes here.
//! Every frame is masked ([`super::masks`]) before it is compared, hashed or
//! encoded.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use reprise_models::screenshot::content_hash;

use super::masks::Masks;
use crate::platform::capture::ScreenCapture;
use crate::platform::{ActiveWindow, WindowProbe, WindowTreeReader};
use crate::store::frames::{FrameEncoder, FrameImage};

/// What the observer sends, in time order.
#[derive(Debug)]
pub enum Observation {
    /// A frame unlike the previous stored one: a whole key frame, or a patch
    /// against the last key frame.
    Frame {
        at: Instant,
        width: u32,
        height: u32,
        content_hash: String,
        image: FrameImage,
    },
    /// A frame identical to the previous stored one: nothing new to store,
    /// but everything up to `at` has been observed.
    Unchanged { at: Instant },
    /// The active window changed (or `None`: nothing is focused).
    Window {
        at: Instant,
        window: Option<ActiveWindow>,
    },
    /// The accessibility tree of the active window, read at `at` (after the
    /// window changed, on a thread of its own: a big tree takes a while).
    Accessibility {
        at: Instant,
        window: ActiveWindow,
        tree: reprise_models::A11yTree,
    },
}

/// Counters the observer keeps for the summary.
#[derive(Debug, Default)]
pub struct ObserverCounters {
    pub frames_dropped: AtomicU64,
    pub capture_failures: AtomicU64,
    pub window_failures: AtomicU64,
}

#[derive(Debug)]
pub struct ObserverHandle {
    pub observations: Receiver<Observation>,
    pub window_changes: Receiver<Observation>,
    pub trigger: SyncSender<()>,
    pub counters: Arc<ObserverCounters>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the observer sent, as the writer reads it: frames (and that nothing
/// changed) in one queue, window changes and trees in the other.
#[derive(Debug)]
pub struct Observed<'a> {
    pub observations: &'a Receiver<Observation>,
    pub window_changes: &'a Receiver<Observation>,
}

impl ObserverHandle {
    /// Its two queues, for the writer.
    pub fn observed(&self) -> Observed<'_> {
        Observed {
            observations: &self.observations,
            window_changes: &self.window_changes,
        }
    }

    /// Stops the thread after the frame it is taking, and waits for it.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.trigger.try_send(());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Starts the observer with `frame_interval` between steady frames and at most
/// `queue_frames` frames waiting for the writer.
pub fn spawn(
    mut capture: ScreenCapture,
    mut probe: WindowProbe,
    mut last_window: Option<ActiveWindow>,
    frame_interval: Duration,
    queue_frames: usize,
    tree_reader: Option<WindowTreeReader>,
    masks: Masks,
) -> ObserverHandle {
    let (observation_sender, observations) = mpsc::sync_channel(queue_frames.max(1));
    let (window_sender, window_changes) = mpsc::channel();
    let tree_requests =
        tree_reader.map(|reader| spawn_tree_reader(reader, window_sender.clone(), masks.clone()));
    let screen = capture.geometry();
    // Asks for a window's tree when the reader is free (else the change is
    // skipped: the queue holds one).
    let request_tree = move |window: &Option<ActiveWindow>| {
        if let (Some(requests), Some(window)) = (&tree_requests, window) {
            let _ = requests.try_send(window.clone());
        }
    };
    request_tree(&last_window);
    let (trigger, triggers) = mpsc::sync_channel::<()>(1);
    let counters = Arc::new(ObserverCounters::default());
    let stop = Arc::new(AtomicBool::new(false));
    let thread_counters = Arc::clone(&counters);
    let thread_stop = Arc::clone(&stop);
    let thread = std::thread::Builder::new()
        .name("reprise-observer".into())
        .spawn(move || {
            // The last frame handed over, kept by move (a 1080p frame is
            // 8 MB: copying it at every change cost as much as comparing).
            let mut last_frame: Option<image::RgbaImage> = None;
            let mut encoder = FrameEncoder::default();
            let mut next_tick = Instant::now();
            while !thread_stop.load(Ordering::SeqCst) {
                let wait = next_tick.saturating_duration_since(Instant::now());
                match triggers.recv_timeout(wait) {
                    Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
                if thread_stop.load(Ordering::SeqCst) {
                    break;
                }
                next_tick = Instant::now() + frame_interval;
                let at = Instant::now();
                // The window first: the writer reads window changes after the
                // frame queue, so every change up to a frame's time is there.
                match probe.active_window() {
                    Ok(window) => {
                        if window != last_window {
                            last_window.clone_from(&window);
                            request_tree(&window);
                            let _ = window_sender.send(Observation::Window { at, window });
                        }
                    }
                    Err(err) => {
                        thread_counters
                            .window_failures
                            .fetch_add(1, Ordering::Relaxed);
                        tracing::warn!("window query failed, recording goes on: {err}");
                    }
                }
                let mut image = match capture.capture_if_drawn() {
                    Ok(Some(image)) => image,
                    Ok(None) => {
                        // Nothing was drawn since the last frame.
                        let _ = observation_sender.try_send(Observation::Unchanged { at });
                        continue;
                    }
                    Err(err) => {
                        thread_counters
                            .capture_failures
                            .fetch_add(1, Ordering::Relaxed);
                        tracing::warn!("screenshot failed, recording goes on: {err}");
                        continue;
                    }
                };
                masks.apply(&mut image, screen, last_window.as_ref());
                if last_frame.as_ref() == Some(&image) {
                    let _ = observation_sender.try_send(Observation::Unchanged { at });
                    continue;
                }
                let (width, height) = image.dimensions();
                let content_hash = content_hash(width, height, image.as_raw());
                // A patch against the last key frame when the change is small
                // (see `FrameEncoder`); otherwise a whole frame.
                let encoded = encoder.encode(&image);
                let sent = encoded.sent();
                let observation = Observation::Frame {
                    at,
                    width,
                    height,
                    content_hash: content_hash.clone(),
                    image: encoded,
                };
                match observation_sender.try_send(observation) {
                    Ok(()) => {
                        encoder.sent(content_hash, &image, sent);
                        last_frame = Some(image);
                    }
                    Err(TrySendError::Full(_)) => {
                        // The writer is behind: drop this frame (the next one
                        // is taken whatever the display says, and compared
                        // with the last stored frame, so the change is taken
                        // again) rather than hold more memory.
                        capture.retake_next();
                        thread_counters
                            .frames_dropped
                            .fetch_add(1, Ordering::Relaxed);
                    }
                    Err(TrySendError::Disconnected(_)) => break,
                }
            }
        })
        .expect("spawn the observer thread");
    ObserverHandle {
        observations,
        window_changes,
        trigger,
        counters,
        stop,
        thread: Some(thread),
    }
}

/// The thread that reads the accessibility tree of each new active window
/// and sends it on as an observation. It ends when the observer does.
fn spawn_tree_reader(
    mut reader: WindowTreeReader,
    sender: mpsc::Sender<Observation>,
    masks: Masks,
) -> SyncSender<ActiveWindow> {
    let (requests, windows) = mpsc::sync_channel::<ActiveWindow>(1);
    let spawned = std::thread::Builder::new()
        .name("reprise-a11y".into())
        .spawn(move || {
            for window in windows {
                if let Some(tree) = reader(&window) {
                    masks.tree_read(&window, &tree);
                    let at = Instant::now();
                    if sender
                        .send(Observation::Accessibility { at, window, tree })
                        .is_err()
                    {
                        break;
                    }
                }
            }
        });
    if let Err(err) = spawned {
        tracing::warn!("no accessibility trees: the reader thread did not start: {err}");
    }
    requests
}
