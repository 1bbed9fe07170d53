//! The recorder: input from the listener, frames and window states from the
//! observer, all stamped on one monotonic clock anchored at the start, written
//! to the store in transactions at least every 250 ms.

mod elements;
mod masks;
mod observer;
pub mod secrets;
mod stop;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use reprise_models::{ActionEvent, EventName, FORMAT_VERSION, Recording, Screenshot, WindowState};

use crate::frames::FrameImage;
use crate::platform::capture::ScreenCapture;
use crate::platform::listen::{EventConverter, InputMessage, spawn_listener};
use crate::platform::{self, WindowProbe};
use crate::store::{ScreenshotBlob, Store};
use observer::Observation;
use stop::{StopSequence, Verdict};

/// How often pending data is written, at the least.
const FLUSH_INTERVAL: Duration = Duration::from_millis(250);
/// An event waits at most this long for the frame taken before it.
const MAX_LINK_WAIT_SECONDS: f64 = 0.75;
/// A key waits at most this long for the focused element to be read (a
/// whole window's tree, bounded): until then it cannot be told secret.
const FOCUS_WAIT_SECONDS: f64 = 3.0;

/// What `reprise record` was asked to do.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    pub name: String,
    pub task_description: String,
    pub duration: Option<Duration>,
    /// Steady frames per second (frames are also taken at every press).
    pub frame_rate: f64,
    /// Key names that stop the recorder when typed in a row; empty: none.
    pub stop_sequence: Vec<String>,
    /// Frames that may wait for the writer before new ones are dropped.
    pub queue_frames: usize,
    /// What is secret besides password fields.
    pub secrets: secrets::SecretRules,
    /// Windows no frame may show.
    pub excluded_windows: Vec<secrets::WindowPattern>,
}

/// Why the recorder stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    Signal,
    Duration,
    StopSequence,
}

impl StopReason {
    /// The reason in words, for the summary line.
    pub fn words(self) -> &'static str {
        match self {
            StopReason::Signal => "a signal (Ctrl-C, SIGTERM or SIGHUP)",
            StopReason::Duration => "its --duration",
            StopReason::StopSequence => "the stop sequence",
        }
    }
}

/// What a finished recording holds.
#[derive(Debug)]
pub struct RecordSummary {
    pub id: String,
    pub n_events: u64,
    pub n_screenshots: u32,
    pub n_window_states: u32,
    pub frames_dropped: u64,
    pub capture_failures: u64,
    pub window_failures: u64,
    /// Keys typed as secrets (stored as placeholders).
    pub secret_keys: u64,
    pub stop_reason: StopReason,
}

/// Records until `stop` is set, the duration passes, or the stop sequence is typed.
pub fn record(
    store: &mut Store,
    options: &RecordOptions,
    stop: &Arc<AtomicBool>,
) -> Result<RecordSummary> {
    // Its interval becomes a duration: a rate near zero would overflow it.
    if !(options.frame_rate.is_finite() && (0.001..=1000.0).contains(&options.frame_rate)) {
        bail!(crate::exit::UsageError(
            "the frame rate must be between 0.001 and 1000 frames a second".into()
        ));
    }
    let mut probe = WindowProbe::connect().context("connect to the display (is DISPLAY set?)")?;
    let capture = ScreenCapture::primary().context("find the screen to capture")?;
    let monitor = capture.geometry();
    let pointer = probe.pointer_position().ok();
    let first_window = probe.active_window().unwrap_or_else(|err| {
        tracing::warn!("window query failed, recording goes on: {err}");
        None
    });

    let input = spawn_listener(platform::window_under_pointer());
    let start = Instant::now();
    let recording = Recording {
        id: uuid::Uuid::new_v4().to_string(),
        name: options.name.clone(),
        task_description: options.task_description.clone(),
        created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        platform: platform::platform_name().to_owned(),
        monitor,
        double_click: platform::double_click_settings(),
        format_version: FORMAT_VERSION,
        complete: false,
        parameter_names: Default::default(),
    };
    store
        .insert_recording(&recording)
        .context("create the recording in the store")?;
    tracing::info!(id = %recording.id, "recording started");

    let masks = masks::Masks::new(options.excluded_windows.clone());
    let mut observer = observer::spawn(
        capture,
        probe,
        first_window.clone(),
        Duration::from_secs_f64(1.0 / options.frame_rate),
        options.queue_frames,
        platform::window_tree_reader(),
        masks.clone(),
    );
    let mut elements = platform::element_reader()
        .and_then(|reader| elements::spawn(reader, platform::focus_reader(), masks));
    let mut writer = Writer::new(
        recording.id.clone(),
        monitor,
        start,
        options.secrets.clone(),
    );
    if let Some(window) = first_window {
        writer.add_window(0.0, window, None);
    }
    let mut converter = EventConverter::with_pointer(pointer);
    let mut stop_sequence = StopSequence::new(options.stop_sequence.clone());
    let mut last_flush = Instant::now();
    // Whether the focus may have moved since it was last read: `Some(true)`
    // when only a press moved it (the press's element then says where).
    let mut focus_stale: Option<bool> = Some(false);
    let mut seen_window = writer
        .current_window
        .as_ref()
        .map(|window| window.window_id);
    let mut toggle_down = false;

    let stop_reason = loop {
        if stop.load(Ordering::SeqCst) {
            break StopReason::Signal;
        }
        if options
            .duration
            .is_some_and(|duration| start.elapsed() >= duration)
        {
            break StopReason::Duration;
        }
        let mut stop_now = false;
        match input.recv_timeout(Duration::from_millis(20)) {
            Ok(InputMessage::Input {
                at,
                event_type,
                name,
                under,
            }) => {
                let timestamp = at.saturating_duration_since(start).as_secs_f64();
                if let Some(event) = converter.convert(&event_type, name.as_deref(), timestamp) {
                    // The secret toggle's own keys are left out.
                    if options.secrets.is_toggle(&event) {
                        let pressed = event.name == EventName::Press;
                        if pressed && !toggle_down {
                            let on = writer.scrubber.toggle_at(timestamp);
                            eprintln!(
                                "secret typing {}",
                                if on {
                                    "on: keys are stored as {secret}"
                                } else {
                                    "off"
                                }
                            );
                        }
                        toggle_down = pressed;
                        continue;
                    }
                    let is_press = event.name == EventName::Press
                        || (event.name == EventName::Click && event.mouse_pressed == Some(true));
                    if let (true, Some(elements), Some(x), Some(y)) =
                        (is_press, elements.as_mut(), event.mouse_x, event.mouse_y)
                        && event.name == EventName::Click
                        && elements.offer(elements::ElementRequest::Press {
                            at: timestamp,
                            point: (x, y),
                            under,
                        })
                    {
                        writer
                            .pending_elements
                            .insert(timestamp.to_bits(), MAX_LINK_WAIT_SECONDS);
                    }
                    if event.name == EventName::Click && is_press {
                        focus_stale = Some(true);
                    }
                    // Every key asks; the reader reads the tree only when
                    // the focus may have moved (a window change it sees
                    // itself, before the observer does).
                    if event.name == EventName::Press {
                        let offered = elements.as_mut().is_some_and(|elements| {
                            elements.offer(elements::ElementRequest::Focus {
                                at: timestamp,
                                stale: focus_stale,
                            })
                        });
                        // A request the busy reader could not take leaves
                        // the focus as stale as it was.
                        if offered {
                            writer
                                .pending_elements
                                .insert(timestamp.to_bits(), FOCUS_WAIT_SECONDS);
                            focus_stale = None;
                        }
                        // Tab moves the focus (Enter and Esc act where it
                        // is, or close its window: a window change).
                        if event.named_key() == Some("tab") {
                            focus_stale = Some(false);
                        }
                    }
                    if is_press {
                        let _ = observer.trigger.try_send(());
                    }
                    match stop_sequence.feed(event) {
                        Verdict::Record(events) => writer.events.extend(events),
                        Verdict::Stop(events) => {
                            writer.events.extend(events);
                            stop_now = true;
                        }
                    }
                }
            }
            Ok(InputMessage::Failed(reason)) => {
                observer.stop();
                writer.drain(&mut observer, elements.as_ref(), &mut stop_sequence, true);
                writer.flush(store)?;
                bail!("{reason}; what was recorded so far is kept, marked incomplete");
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => bail!("the input listener is gone"),
        }
        if stop_now {
            break StopReason::StopSequence;
        }
        let now = start.elapsed().as_secs_f64();
        writer.events.extend(stop_sequence.expire(now));
        if last_flush.elapsed() >= FLUSH_INTERVAL {
            writer.drain(&mut observer, elements.as_ref(), &mut stop_sequence, false);
            writer.flush(store)?;
            last_flush = Instant::now();
            let window = writer
                .current_window
                .as_ref()
                .map(|window| window.window_id);
            if window != seen_window {
                seen_window = window;
                focus_stale = Some(false);
            }
        }
    };

    // Whatever input already arrived belongs to the recording, up to a stop
    // sequence (whose own keys are left out).
    if stop_reason != StopReason::StopSequence {
        while let Ok(InputMessage::Input {
            at,
            event_type,
            name,
            ..
        }) = input.try_recv()
        {
            let timestamp = at.saturating_duration_since(start).as_secs_f64();
            let Some(event) = converter.convert(&event_type, name.as_deref(), timestamp) else {
                continue;
            };
            if options.secrets.is_toggle(&event) {
                continue;
            }
            match stop_sequence.feed(event) {
                Verdict::Record(events) => writer.events.extend(events),
                Verdict::Stop(events) => {
                    writer.events.extend(events);
                    break;
                }
            }
        }
    }
    observer.stop();
    writer.drain(&mut observer, elements.as_ref(), &mut stop_sequence, true);
    writer.flush(store)?;
    if let Some(elements) = &elements
        && elements.dropped > 0
    {
        tracing::info!(
            requests = elements.dropped,
            "presses and keys recorded without their element: the reader was busy"
        );
    }
    store.finish_recording(&recording.id)?;
    let counters = &observer.counters;
    Ok(RecordSummary {
        id: recording.id,
        n_events: writer.next_event_seq,
        n_screenshots: writer.frame_times.len() as u32,
        n_window_states: writer.window_times.len() as u32,
        frames_dropped: counters.frames_dropped.load(Ordering::Relaxed),
        capture_failures: counters.capture_failures.load(Ordering::Relaxed),
        window_failures: counters.window_failures.load(Ordering::Relaxed),
        secret_keys: writer.scrubber.scrubbed,
        stop_reason,
    })
}

/// Collects events, frames and window states, links each event to the newest
/// frame and window state at or before it, and writes them in batches.
struct Writer {
    recording_id: String,
    monitor: reprise_models::ScreenGeometry,
    start: Instant,
    /// Events not yet linked and written, in time order.
    events: Vec<ActionEvent>,
    ready_events: Vec<ActionEvent>,
    screenshots: Vec<ScreenshotBlob>,
    window_states: Vec<WindowState>,
    frame_times: Vec<f64>,
    window_times: Vec<f64>,
    /// Everything the observer saw up to this time has arrived.
    observed_until: f64,
    next_event_seq: u64,
    stored_hashes: std::collections::HashSet<String>,
    /// The active window as last stored.
    current_window: Option<platform::ActiveWindow>,
    /// Events (by their timestamp's bits) whose element is being read, with
    /// how long each may wait for it.
    pending_elements: std::collections::HashMap<u64, f64>,
    /// Keys whose focus read found no focus yet, waiting for a later one.
    unresolved_keys: Vec<f64>,
    /// Elements read, waiting for their press to be linked.
    elements: std::collections::HashMap<u64, reprise_models::ElementIdentity>,
    /// The newest window state's accessibility tree, with that state's id.
    current_tree: Option<(u32, reprise_models::A11yTree)>,
    /// Each window state's class and title, by its id.
    window_names: Vec<(String, String)>,
    /// Secret keys out, before anything is written.
    scrubber: secrets::Scrubber,
}

impl Writer {
    fn new(
        recording_id: String,
        monitor: reprise_models::ScreenGeometry,
        start: Instant,
        secrets: secrets::SecretRules,
    ) -> Self {
        Writer {
            recording_id,
            monitor,
            start,
            events: Vec::new(),
            ready_events: Vec::new(),
            screenshots: Vec::new(),
            window_states: Vec::new(),
            frame_times: Vec::new(),
            window_times: Vec::new(),
            observed_until: 0.0,
            next_event_seq: 0,
            stored_hashes: std::collections::HashSet::new(),
            current_window: None,
            pending_elements: std::collections::HashMap::new(),
            unresolved_keys: Vec::new(),
            elements: std::collections::HashMap::new(),
            current_tree: None,
            window_names: Vec::new(),
            scrubber: secrets::Scrubber::new(secrets),
        }
    }

    /// Takes in the elements read so far; when `finish`, waits for the
    /// outstanding ones (bounded by the link wait).
    fn take_elements(&mut self, elements: Option<&elements::ElementThread>, finish: bool) {
        let Some(elements) = elements else {
            self.pending_elements.clear();
            return;
        };
        let deadline = Instant::now() + Duration::from_secs_f64(FOCUS_WAIT_SECONDS);
        loop {
            let answer = if finish && !self.pending_elements.is_empty() {
                let left = deadline.saturating_duration_since(Instant::now());
                elements.answers.recv_timeout(left).ok()
            } else {
                elements.answers.try_recv().ok()
            };
            let Some((timestamp, element, earlier)) = answer else {
                break;
            };
            // A key whose window named no focus yet waits (its bound) for a
            // later key's answer to say where the focus was.
            if earlier == elements::Earlier::Unresolved
                && self.pending_elements.contains_key(&timestamp.to_bits())
            {
                self.unresolved_keys.push(timestamp);
                continue;
            }
            // The keys typed while the focus was not yet set went where it
            // turned out to be, if nothing moved it since: the first of them
            // carries it. Any other answer leaves them without an element.
            let waiting: Vec<f64> = std::mem::take(&mut self.unresolved_keys)
                .into_iter()
                .filter(|key| self.pending_elements.remove(&key.to_bits()).is_some())
                .collect();
            if let (elements::Earlier::Settles, Some(first), Some(element)) =
                (earlier, waiting.first(), &element)
            {
                self.elements.insert(first.to_bits(), element.clone());
            }
            // A press already linked (it waited its bound) keeps no late
            // answer: nothing would ever read it.
            let still_pending = self.pending_elements.remove(&timestamp.to_bits()).is_some();
            if let (true, Some(element)) = (still_pending, element) {
                self.elements.insert(timestamp.to_bits(), element);
            }
        }
        let pending = &self.pending_elements;
        self.unresolved_keys
            .retain(|key| pending.contains_key(&key.to_bits()));
        if finish {
            self.pending_elements.clear();
            self.unresolved_keys.clear();
        }
    }

    fn seconds(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.start).as_secs_f64()
    }

    fn add_window(
        &mut self,
        timestamp: f64,
        window: platform::ActiveWindow,
        tree: Option<reprise_models::A11yTree>,
    ) {
        let id = self.window_times.len() as u32;
        self.window_times.push(timestamp);
        self.window_names
            .push((window.app_class.clone(), window.title.clone()));
        self.current_window = Some(window.clone());
        self.current_tree = tree.clone().map(|tree| (id, tree));
        let mut state = window.into_state(id, timestamp);
        state.a11y = tree;
        self.window_states.push(state);
    }

    /// Takes in what the observer sent, then links every event whose frame is
    /// known (or that has waited long enough; all of them when `finish`).
    fn drain(
        &mut self,
        observer: &mut observer::ObserverHandle,
        elements: Option<&elements::ElementThread>,
        stop_sequence: &mut StopSequence,
        finish: bool,
    ) {
        self.take_elements(elements, finish);
        while let Ok(observation) = observer.observations.try_recv() {
            match observation {
                Observation::Frame {
                    at,
                    width,
                    height,
                    content_hash,
                    image,
                } => {
                    let timestamp = self.seconds(at);
                    self.observed_until = timestamp;
                    let id = self.frame_times.len() as u32;
                    self.frame_times.push(timestamp);
                    // A patch already stored (the screen went back to an
                    // earlier state) is not written again. A key frame always
                    // is: the store keeps the whole image when it held only a
                    // patch, so every patch's base is a whole frame.
                    let first_time = self.stored_hashes.insert(content_hash.clone());
                    let image = match image {
                        FrameImage::Patch { .. } if !first_time => FrameImage::Stored,
                        image => image,
                    };
                    self.screenshots.push(ScreenshotBlob {
                        screenshot: Screenshot {
                            id,
                            timestamp,
                            width,
                            height,
                            screen: self.monitor,
                            content_hash,
                        },
                        image,
                    });
                }
                Observation::Unchanged { at } => self.observed_until = self.seconds(at),
                Observation::Window { .. } | Observation::Accessibility { .. } => {}
            }
        }
        while let Ok(observation) = observer.window_changes.try_recv() {
            match observation {
                Observation::Window { at, window } => {
                    let timestamp = self.seconds(at);
                    match window {
                        Some(window) => self.add_window(timestamp, window, None),
                        None => {
                            self.current_window = None;
                            tracing::debug!(timestamp, "no window is focused");
                        }
                    }
                }
                // The same window again, now with its tree; dropped when
                // another window became active meanwhile.
                Observation::Accessibility { at, window, tree } => {
                    if self.current_window.as_ref() == Some(&window) {
                        let timestamp = self.seconds(at);
                        self.add_window(timestamp, window, Some(tree));
                    }
                }
                Observation::Frame { .. } | Observation::Unchanged { .. } => {}
            }
        }
        if finish {
            self.events.extend(stop_sequence.release_held());
            self.events
                .sort_by(|a, b| a.timestamp.total_cmp(&b.timestamp));
        }
        let now = self.start.elapsed().as_secs_f64();
        let held_from = stop_sequence.oldest_held().unwrap_or(f64::INFINITY);
        let n_ready = self
            .events
            .iter()
            .take_while(|event| {
                let waited = now - event.timestamp;
                let waited_enough = waited > MAX_LINK_WAIT_SECONDS;
                let element_waited = self
                    .pending_elements
                    .get(&event.timestamp.to_bits())
                    .is_none_or(|wait| waited > *wait);
                finish
                    || (event.timestamp < held_from
                        && (event.timestamp <= self.observed_until || waited_enough)
                        && element_waited)
            })
            .count();
        let ready: Vec<ActionEvent> = self.events.drain(..n_ready).collect();
        for mut event in ready {
            let frames_before = self.frame_times.partition_point(|&t| t <= event.timestamp);
            event.screenshot_id = frames_before.checked_sub(1).map(|idx| idx as u32);
            let windows_before = self.window_times.partition_point(|&t| t <= event.timestamp);
            event.window_state_id = windows_before.checked_sub(1).map(|idx| idx as u32);
            self.pending_elements.remove(&event.timestamp.to_bits());
            event.element = self
                .elements
                .remove(&event.timestamp.to_bits())
                .or_else(|| self.element_in_snapshot(&event));
            let window = event
                .window_state_id
                .and_then(|id| self.window_names.get(id as usize))
                .map(|(class, title)| (class.as_str(), title.as_str()));
            // Secret keys leave here, before anything is written.
            let kept = self.scrubber.scrub(event, window);
            self.ready_events.extend(kept);
        }
    }

    /// The element under a press in the window's snapshot tree, for a press
    /// the hit-test could not name (the click closed the window before it
    /// answered). Controls only: a list may have scrolled since the
    /// snapshot, and a stale row is another row.
    fn element_in_snapshot(&self, event: &ActionEvent) -> Option<reprise_models::ElementIdentity> {
        if event.name != EventName::Click || event.mouse_pressed != Some(true) {
            return None;
        }
        // The tree of the very window state the press belongs to, never a
        // later window's.
        let (state_id, tree) = self.current_tree.as_ref()?;
        if event.window_state_id != Some(*state_id) {
            return None;
        }
        let point = (event.mouse_x?, event.mouse_y?);
        let deepest = reprise_models::element::deepest_at(tree, point)?;
        let identity = reprise_models::identity_of(tree, &tree.app, deepest)?;
        (!reprise_models::element::is_row_member(identity.role) && !tree.app.is_empty())
            .then_some(identity)
    }

    /// Writes everything ready in one transaction.
    fn flush(&mut self, store: &mut Store) -> Result<()> {
        if self.ready_events.is_empty()
            && self.screenshots.is_empty()
            && self.window_states.is_empty()
        {
            return Ok(());
        }
        store
            .append(
                &self.recording_id,
                self.next_event_seq,
                &self.ready_events,
                &self.screenshots,
                &self.window_states,
            )
            .context("write the recording to the store")?;
        self.next_event_seq += self.ready_events.len() as u64;
        self.ready_events.clear();
        self.screenshots.clear();
        self.window_states.clear();
        Ok(())
    }
}
