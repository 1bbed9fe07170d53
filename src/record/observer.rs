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
    capture: ScreenCapture,
    probe: WindowProbe,
    last_window: Option<ActiveWindow>,
    frame_interval: Duration,
    queue_frames: usize,
    tree_reader: Option<WindowTreeReader>,
    masks: Masks,
) -> ObserverHandle {
    let (observation_sender, observations) = mpsc::sync_channel(queue_frames.max(1));
    let (window_sender, window_changes) = mpsc::channel();
    let tree_requests =
        tree_reader.map(|reader| spawn_tree_reader(reader, window_sender.clone(), masks.clone()));
    let (trigger, triggers) = mpsc::sync_channel::<()>(1);
    let counters = Arc::new(ObserverCounters::default());
    let stop = Arc::new(AtomicBool::new(false));
    let observer = Observer {
        screen: capture.geometry(),
        capture,
        probe,
        last_window,
        masks,
        tree_requests,
        window_sender,
        observation_sender,
        counters: Arc::clone(&counters),
        last_frame: None,
        encoder: FrameEncoder::default(),
    };
    observer.request_tree();
    let thread_stop = Arc::clone(&stop);
    let thread = std::thread::Builder::new()
        .name("reprise-observer".into())
        .spawn(move || observer.run(&triggers, &thread_stop, frame_interval))
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

/// The observer thread's state.
struct Observer {
    capture: ScreenCapture,
    probe: WindowProbe,
    screen: reprise_models::ScreenGeometry,
    last_window: Option<ActiveWindow>,
    masks: Masks,
    /// Where a new window's tree is asked for (a queue of one).
    tree_requests: Option<SyncSender<ActiveWindow>>,
    window_sender: mpsc::Sender<Observation>,
    observation_sender: SyncSender<Observation>,
    counters: Arc<ObserverCounters>,
    /// The last frame handed over, kept by move (a 1080p frame is 8 MB:
    /// copying it at every change cost as much as comparing).
    last_frame: Option<image::RgbaImage>,
    encoder: FrameEncoder,
}

/// Whether the observer goes on after a look.
enum Flow {
    Go,
    End,
}

impl Observer {
    /// A look every `frame_interval`, or at once when triggered (a press),
    /// until `stop` is set or the writer is gone.
    fn run(mut self, triggers: &Receiver<()>, stop: &AtomicBool, frame_interval: Duration) {
        let mut next_tick = Instant::now();
        while !stop.load(Ordering::SeqCst) {
            let wait = next_tick.saturating_duration_since(Instant::now());
            match triggers.recv_timeout(wait) {
                Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if stop.load(Ordering::SeqCst) {
                break;
            }
            next_tick = Instant::now() + frame_interval;
            let at = Instant::now();
            // The window first: the writer reads window changes after the
            // frame queue, so every change up to a frame's time is there.
            self.look_at_window(at);
            if let Flow::End = self.take_frame(at) {
                break;
            }
        }
    }

    /// Asks for the last window's tree when the reader is free (else the
    /// change is skipped: the queue holds one).
    fn request_tree(&self) {
        if let (Some(requests), Some(window)) = (&self.tree_requests, &self.last_window) {
            let _ = requests.try_send(window.clone());
        }
    }

    /// The active window, sent on when it changed.
    fn look_at_window(&mut self, at: Instant) {
        match self.probe.active_window() {
            Ok(window) => {
                if window != self.last_window {
                    self.last_window.clone_from(&window);
                    self.request_tree();
                    let _ = self.window_sender.send(Observation::Window { at, window });
                }
            }
            Err(err) => {
                self.counters
                    .window_failures
                    .fetch_add(1, Ordering::Relaxed);
                tracing::warn!("window query failed, recording goes on: {err}");
            }
        }
    }

    /// A frame, masked, sent on unless it is the last one again; dropped
    /// (and counted) when the writer is behind.
    fn take_frame(&mut self, at: Instant) -> Flow {
        let mut image = match self.capture.capture_if_drawn() {
            Ok(Some(image)) => image,
            Ok(None) => {
                // Nothing was drawn since the last frame.
                let _ = self
                    .observation_sender
                    .try_send(Observation::Unchanged { at });
                return Flow::Go;
            }
            Err(err) => {
                self.counters
                    .capture_failures
                    .fetch_add(1, Ordering::Relaxed);
                tracing::warn!("screenshot failed, recording goes on: {err}");
                return Flow::Go;
            }
        };
        self.masks
            .apply(&mut image, self.screen, self.last_window.as_ref());
        if self.last_frame.as_ref() == Some(&image) {
            let _ = self
                .observation_sender
                .try_send(Observation::Unchanged { at });
            return Flow::Go;
        }
        let (width, height) = image.dimensions();
        let content_hash = content_hash(width, height, image.as_raw());
        // A patch against the last key frame when the change is small (see
        // `FrameEncoder`); otherwise a whole frame.
        let encoded = self.encoder.encode(&image);
        let sent = encoded.sent();
        let observation = Observation::Frame {
            at,
            width,
            height,
            content_hash: content_hash.clone(),
            image: encoded,
        };
        match self.observation_sender.try_send(observation) {
            Ok(()) => {
                self.encoder.sent(content_hash, &image, sent);
                self.last_frame = Some(image);
            }
            Err(TrySendError::Full(_)) => {
                // The writer is behind: drop this frame (the next one is
                // taken whatever the display says, and compared with the
                // last stored frame, so the change is taken again) rather
                // than hold more memory.
                self.capture.retake_next();
                self.counters.frames_dropped.fetch_add(1, Ordering::Relaxed);
            }
            Err(TrySendError::Disconnected(_)) => return Flow::End,
        }
        Flow::Go
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
