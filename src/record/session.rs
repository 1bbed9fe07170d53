//! One recording while it runs: what was started (the observer, the element
//! reader, the writer), what each input event asks of them, and the end.
//! `record` in this module's parent drives it from the listener's messages.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use rdev::EventType;
use reprise_models::{EventName, FORMAT_VERSION, Recording};

use super::stop::{StopSequence, Verdict};
use super::writer::Writer;
use super::{
    FOCUS_WAIT_SECONDS, MAX_LINK_WAIT_SECONDS, RecordOptions, RecordSummary, StopReason, elements,
    masks, observer, outcome,
};
use crate::platform::capture::ScreenCapture;
use crate::platform::listen::{EventConverter, InputListener, InputMessage, spawn_listener};
use crate::platform::{self, UnderPointer, WindowProbe};
use crate::store::Store;

/// How often pending data is written, at the least.
const FLUSH_INTERVAL: Duration = Duration::from_millis(250);

/// How long after the last key or button the windows are still watched
/// when the recording stops sooner: what the last input did (a dialog its
/// Enter closed, a title that changed) is then in the recording, for
/// replay to compare with.
const TAIL: Duration = Duration::from_millis(1500);
/// The most that watch adds to a stop (a stop asked for is kept within a
/// second).
const TAIL_AFTER_STOP: Duration = Duration::from_millis(700);
/// How often the windows are looked at in that tail.
const TAIL_LOOK: Duration = Duration::from_millis(100);

/// A recording under way.
pub(super) struct Session<'a> {
    options: &'a RecordOptions,
    recording: Recording,
    /// The recording's clock starts here.
    pub start: Instant,
    pub observer: observer::ObserverHandle,
    elements: Option<elements::ElementThread>,
    writer: Writer,
    converter: EventConverter,
    stop_sequence: StopSequence,
    last_flush: Instant,
    last_status: Instant,
    /// Whether the focus may have moved since it was last read: `Some(true)`
    /// when only a press moved it (the press's element then says where).
    focus_stale: Option<bool>,
    /// The window the writer last saw active.
    seen_window: Option<u64>,
    /// Whether the secret toggle's key is down.
    toggle_down: bool,
    /// Whether the mark key is down, and the outcomes marked so far.
    mark_down: bool,
    marks: Vec<outcome::PendingMark>,
    /// When the last key or button went down or up.
    last_input: Option<Instant>,
}

impl<'a> Session<'a> {
    /// Creates the recording in the store and starts the input listener,
    /// the observer (frames, window states) and the element reader.
    pub fn start(
        store: &mut Store,
        options: &'a RecordOptions,
    ) -> Result<(Session<'a>, InputListener)> {
        let mut probe =
            WindowProbe::connect().context("connect to the display (is DISPLAY set?)")?;
        let capture = ScreenCapture::desktop().context("find the screen to capture")?;
        let monitor = capture.geometry();
        let pointer = probe.pointer_position().ok();
        let first_window = probe.active_window().unwrap_or_else(|err| {
            tracing::warn!("window query failed, recording goes on: {err}");
            None
        });
        let input =
            spawn_listener(platform::window_under_pointer()).context("start the input listener")?;
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
            monitors: capture.monitors().to_vec(),
        };
        store
            .insert_recording(&recording)
            .context("create the recording in the store")?;
        tracing::info!(id = %recording.id, "recording started");

        let masks = masks::Masks::new(options.excluded_windows.clone());
        let observer = observer::spawn(
            capture,
            probe,
            first_window.clone(),
            Duration::from_secs_f64(1.0 / options.frame_rate),
            options.queue_frames,
            platform::window_tree_reader(),
            masks.clone(),
        );
        let elements = platform::element_reader()
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
        let seen_window = writer
            .current_window
            .as_ref()
            .map(|window| window.window_id);
        let session = Session {
            options,
            recording,
            start,
            observer,
            elements,
            writer,
            converter: EventConverter::with_pointer(pointer),
            stop_sequence: StopSequence::new(options.stop_sequence.clone()),
            last_flush: Instant::now(),
            last_status: Instant::now(),
            focus_stale: Some(false),
            seen_window,
            toggle_down: false,
            mark_down: false,
            marks: Vec::new(),
            last_input: None,
        };
        Ok((session, input))
    }

    /// One input event: recorded (the secret toggle's own keys aside), with
    /// what a press asks of the element reader and the observer. True when
    /// it completed the stop sequence.
    pub fn take_input(
        &mut self,
        at: Instant,
        event_type: &EventType,
        name: Option<&str>,
        under: Option<UnderPointer>,
    ) -> bool {
        let timestamp = at.saturating_duration_since(self.start).as_secs_f64();
        let Some(mut event) = self.converter.convert(event_type, name, timestamp) else {
            return false;
        };
        if self.options.secrets.is_toggle(&event) {
            self.toggle(event.name == EventName::Press, timestamp);
            return false;
        }
        if self.options.is_mark(&event) {
            // A mark is kept as the pointer's place at that moment: the
            // keys before it and after it are then steps of their own, so
            // that its check can run between them.
            let Some(point) = self.mark(event.name == EventName::Press, timestamp) else {
                return false;
            };
            event = reprise_models::ActionEvent::new(EventName::Move, timestamp);
            (event.mouse_x, event.mouse_y) = (Some(point.0), Some(point.1));
        }
        let is_press = event.name == EventName::Press
            || (event.name == EventName::Click && event.mouse_pressed == Some(true));
        if is_press && event.name == EventName::Click {
            event.popup = under.and_then(|under| under.popup);
            if let (Some(x), Some(y)) = (event.mouse_x, event.mouse_y) {
                self.ask_press_element(timestamp, (x, y), under);
            }
            self.focus_stale = Some(true);
        }
        if event.name == EventName::Press {
            self.ask_focus(timestamp, event.named_key() == Some("tab"));
        }
        if is_press {
            let _ = self.observer.trigger.try_send(());
        }
        match self.stop_sequence.feed(event) {
            Verdict::Record(events) => {
                self.note_input(&events);
                self.writer.events.extend(events);
                false
            }
            Verdict::Stop(events) => {
                self.note_input(&events);
                self.writer.events.extend(events);
                true
            }
        }
    }

    /// The time of the last key or button among `events` (recorded, not a
    /// stop sequence's own keys), kept for the tail's watch.
    fn note_input(&mut self, events: &[reprise_models::ActionEvent]) {
        if let Some(last) = events
            .iter()
            .rev()
            .find(|event| event.name != EventName::Move)
        {
            self.last_input = Some(self.start + Duration::from_secs_f64(last.timestamp.max(0.0)));
        }
    }

    /// The secret toggle's key: each press turns secret typing on or off.
    fn toggle(&mut self, pressed: bool, timestamp: f64) {
        if pressed && !self.toggle_down {
            let on = self.writer.scrubber.toggle_at(timestamp);
            eprintln!(
                "secret typing {}",
                if on {
                    "on: keys are stored as {secret}"
                } else {
                    "off"
                }
            );
        }
        self.toggle_down = pressed;
    }

    /// The mark key: each press marks the element under the pointer, in
    /// the active window, as the task's outcome (its tree read at once).
    /// Where it marked, the pointer's place.
    fn mark(&mut self, pressed: bool, timestamp: f64) -> Option<(f64, f64)> {
        let first = pressed && !self.mark_down;
        self.mark_down = pressed;
        if !first {
            return None;
        }
        match (self.converter.pointer(), self.writer.current_window.clone()) {
            (Some(point), Some(window)) => {
                eprintln!(
                    "outcome marked at ({:.0}, {:.0}) in {:?}: a replay checks it shows the same",
                    point.0, point.1, window.title
                );
                self.marks
                    .push(outcome::PendingMark::start(timestamp, point, window));
                Some(point)
            }
            _ => {
                eprintln!("outcome not marked: the pointer or the active window is not known yet");
                None
            }
        }
    }

    /// A button press asks for the element under it; the event waits for
    /// the answer a while.
    fn ask_press_element(
        &mut self,
        timestamp: f64,
        point: (f64, f64),
        under: Option<UnderPointer>,
    ) {
        let asked = self.elements.as_mut().is_some_and(|elements| {
            elements.offer(elements::ElementRequest::Press {
                at: timestamp,
                point,
                under: under.map(|under| under.window),
            })
        });
        if asked {
            self.writer
                .pending_elements
                .insert(timestamp.to_bits(), MAX_LINK_WAIT_SECONDS);
        }
    }

    /// Every key asks for the focused element; the reader reads the tree
    /// only when the focus may have moved (a window change it sees itself,
    /// before the observer does).
    fn ask_focus(&mut self, timestamp: f64, is_tab: bool) {
        let offered = self.elements.as_mut().is_some_and(|elements| {
            elements.offer(elements::ElementRequest::Focus {
                at: timestamp,
                stale: self.focus_stale,
            })
        });
        // A request the busy reader could not take leaves the focus as
        // stale as it was.
        if offered {
            self.writer
                .pending_elements
                .insert(timestamp.to_bits(), FOCUS_WAIT_SECONDS);
            self.focus_stale = None;
        }
        // Tab moves the focus (Enter and Esc act where it is, or close its
        // window: a window change).
        if is_tab {
            self.focus_stale = Some(false);
        }
    }

    /// The status line, rewritten every second where asked.
    pub fn show_status(&mut self) {
        if !self.options.show_status || self.last_status.elapsed() < Duration::from_secs(1) {
            return;
        }
        self.last_status = Instant::now();
        let seconds = self.start.elapsed().as_secs();
        let events = self.writer.next_event_seq as usize + self.writer.events.len();
        eprint!(
            "\rrecording: {}:{:02}, {}   ",
            seconds / 60,
            seconds % 60,
            crate::present::plural(events, "event")
        );
    }

    /// Keys held back as a possible stop sequence are let go once they
    /// expire; what is ready is written at least every [`FLUSH_INTERVAL`],
    /// and a new active window makes the focus worth reading again.
    pub fn keep_up(&mut self, store: &mut Store) -> Result<()> {
        let now = self.start.elapsed().as_secs_f64();
        let expired = self.stop_sequence.expire(now);
        self.writer.events.extend(expired);
        if self.last_flush.elapsed() < FLUSH_INTERVAL {
            return Ok(());
        }
        self.write_ready(store, false)?;
        self.last_flush = Instant::now();
        let window = self
            .writer
            .current_window
            .as_ref()
            .map(|window| window.window_id);
        if window != self.seen_window {
            self.seen_window = window;
            self.focus_stale = Some(false);
        }
        Ok(())
    }

    /// The input that already arrived when the recorder stopped, up to a
    /// stop sequence (whose own keys are left out).
    pub fn take_rest(&mut self, input: &InputListener) {
        while let Ok(InputMessage::Input {
            at,
            event_type,
            name,
            ..
        }) = input.messages.try_recv()
        {
            let timestamp = at.saturating_duration_since(self.start).as_secs_f64();
            let Some(event) = self
                .converter
                .convert(&event_type, name.as_deref(), timestamp)
            else {
                continue;
            };
            if self.options.secrets.is_toggle(&event) || self.options.is_mark(&event) {
                continue;
            }
            match self.stop_sequence.feed(event) {
                Verdict::Record(events) => self.writer.events.extend(events),
                Verdict::Stop(events) => {
                    self.writer.events.extend(events);
                    break;
                }
            }
        }
    }

    /// Takes in what the observer and the element reader sent, links every
    /// event that is ready (all of them when `finish`), and writes them.
    pub fn write_ready(&mut self, store: &mut Store, finish: bool) -> Result<()> {
        self.writer.drain(
            self.writer.seconds(Instant::now()),
            &self.observer.observed(),
            self.elements.as_ref().map(|elements| &elements.answers),
            &mut self.stop_sequence,
            finish,
        );
        self.writer.flush(store)
    }

    /// Where the last key or button came less than [`TAIL`] ago, the
    /// windows (and frames) are looked at every [`TAIL_LOOK`] until then,
    /// for at most [`TAIL_AFTER_STOP`].
    fn watch_tail(&mut self, store: &mut Store) -> Result<()> {
        let Some(until) = self
            .last_input
            .map(|at| (at + TAIL).min(Instant::now() + TAIL_AFTER_STOP))
        else {
            return Ok(());
        };
        while Instant::now() < until {
            let _ = self.observer.trigger.try_send(());
            std::thread::sleep(TAIL_LOOK.min(until.saturating_duration_since(Instant::now())));
            self.write_ready(store, false)?;
        }
        Ok(())
    }

    /// Stops the observer, writes everything, and marks the recording
    /// complete.
    pub fn finish(mut self, store: &mut Store, stop_reason: StopReason) -> Result<RecordSummary> {
        if self.options.show_status {
            // The status line ends where the summary begins.
            eprintln!();
        }
        if stop_reason != StopReason::DisplayLost {
            self.watch_tail(store)?;
        }
        self.observer.stop();
        self.write_ready(store, true)?;
        if let Some(elements) = &self.elements
            && elements.dropped > 0
        {
            tracing::info!(
                requests = elements.dropped,
                "presses and keys recorded without their element: the reader was busy"
            );
        }
        store.finish_recording(&self.recording.id)?;
        let marks = outcome::resolve(std::mem::take(&mut self.marks));
        let counters = &self.observer.counters;
        Ok(RecordSummary {
            id: self.recording.id,
            n_events: self.writer.next_event_seq,
            n_screenshots: self.writer.frame_times.len() as u32,
            n_window_states: self.writer.window_times.len() as u32,
            frames_dropped: counters.frames_dropped.load(Ordering::Relaxed),
            capture_failures: counters.capture_failures.load(Ordering::Relaxed),
            window_failures: counters.window_failures.load(Ordering::Relaxed),
            secret_keys: self.writer.scrubber.scrubbed,
            stop_reason,
            marks,
            outcomes: outcome::Outcomes::default(),
            labels: Default::default(),
        })
    }
}
