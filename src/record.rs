//! The recorder: input from the listener, frames and window states from the
//! observer, all stamped on one monotonic clock anchored at the start, written
//! to the store in transactions at least every 250 ms.

mod elements;
mod masks;
mod observer;
pub mod secrets;
mod stop;
mod writer;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use reprise_models::{EventName, FORMAT_VERSION, Recording};

use crate::platform::capture::ScreenCapture;
use crate::platform::listen::{EventConverter, InputMessage, spawn_listener};
use crate::platform::{self, WindowProbe};
use crate::store::Store;
use stop::{StopSequence, Verdict};
use writer::Writer;

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
    /// A status line on stderr, rewritten every second: the time recorded
    /// and the events so far (for a terminal).
    pub show_status: bool,
}

/// Why the recorder stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    Signal,
    Duration,
    StopSequence,
    /// The display's connection was lost (the X server went away): what
    /// was captured up to then is kept.
    DisplayLost,
}

impl StopReason {
    /// The reason in words, for the summary line.
    pub fn words(self) -> &'static str {
        match self {
            StopReason::Signal => "a signal (Ctrl-C, SIGTERM or SIGHUP)",
            StopReason::Duration => "its --duration",
            StopReason::StopSequence => "the stop sequence",
            StopReason::DisplayLost => "the display going away",
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

/// Refuses a frame rate whose interval cannot be a duration (a rate near
/// zero would overflow it) or that no display gives.
pub fn check_frame_rate(frame_rate: f64) -> Result<(), crate::exit::UsageError> {
    if frame_rate.is_finite() && (0.001..=1000.0).contains(&frame_rate) {
        return Ok(());
    }
    Err(crate::exit::UsageError(format!(
        "--frame-rate must be between 0.001 and 1000 frames a second, not {frame_rate}"
    )))
}

/// Records until `stop` is set, the duration passes, or the stop sequence is typed.
pub fn record(
    store: &mut Store,
    options: &RecordOptions,
    stop: &Arc<AtomicBool>,
) -> Result<RecordSummary> {
    check_frame_rate(options.frame_rate)?;
    let mut probe = WindowProbe::connect().context("connect to the display (is DISPLAY set?)")?;
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
    let mut last_status = Instant::now();

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
        match input.messages.recv_timeout(Duration::from_millis(20)) {
            Ok(InputMessage::Input {
                at,
                event_type,
                name,
                under,
            }) => {
                let timestamp = at.saturating_duration_since(start).as_secs_f64();
                if let Some(mut event) = converter.convert(&event_type, name.as_deref(), timestamp)
                {
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
                    if is_press && event.name == EventName::Click {
                        event.popup = under.and_then(|under| under.popup);
                    }
                    if let (true, Some(elements), Some(x), Some(y)) =
                        (is_press, elements.as_mut(), event.mouse_x, event.mouse_y)
                        && event.name == EventName::Click
                        && elements.offer(elements::ElementRequest::Press {
                            at: timestamp,
                            point: (x, y),
                            under: under.map(|under| under.window),
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
            Ok(InputMessage::Failed(_)) if platform::display_gone() => {
                // Every event the listener saw came before this message.
                break StopReason::DisplayLost;
            }
            Ok(InputMessage::Failed(reason)) => {
                observer.stop();
                write_ready(
                    &mut writer,
                    &observer,
                    elements.as_ref(),
                    &mut stop_sequence,
                    true,
                    store,
                )?;
                bail!("{reason}; what was recorded so far is kept, marked incomplete");
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => bail!("the input listener is gone"),
        }
        if stop_now {
            break StopReason::StopSequence;
        }
        if options.show_status && last_status.elapsed() >= Duration::from_secs(1) {
            last_status = Instant::now();
            let seconds = start.elapsed().as_secs();
            let events = writer.next_event_seq as usize + writer.events.len();
            eprint!(
                "\rrecording: {}:{:02}, {}   ",
                seconds / 60,
                seconds % 60,
                crate::present::plural(events, "event")
            );
        }
        let now = start.elapsed().as_secs_f64();
        writer.events.extend(stop_sequence.expire(now));
        if last_flush.elapsed() >= FLUSH_INTERVAL {
            write_ready(
                &mut writer,
                &observer,
                elements.as_ref(),
                &mut stop_sequence,
                false,
                store,
            )?;
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
        }) = input.messages.try_recv()
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
    if options.show_status {
        // The status line ends where the summary begins.
        eprintln!();
    }
    observer.stop();
    write_ready(
        &mut writer,
        &observer,
        elements.as_ref(),
        &mut stop_sequence,
        true,
        store,
    )?;
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

/// Takes in what the observer and the element reader sent, links every
/// event that is ready (all of them when `finish`), and writes them.
fn write_ready(
    writer: &mut Writer,
    observer: &observer::ObserverHandle,
    elements: Option<&elements::ElementThread>,
    stop_sequence: &mut StopSequence,
    finish: bool,
    store: &mut Store,
) -> Result<()> {
    writer.drain(
        writer.seconds(Instant::now()),
        &observer.observed(),
        elements.map(|elements| &elements.answers),
        stop_sequence,
        finish,
    );
    writer.flush(store)
}
