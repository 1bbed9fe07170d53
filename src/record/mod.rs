//! The recorder: input from the listener, frames and window states from the
//! observer, all stamped on one monotonic clock anchored at the start, written
//! to the store in transactions at least every 250 ms.

mod elements;
pub mod labels;
mod masks;
mod observer;
pub mod outcome;
pub mod secrets;
mod session;
mod stop;
mod writer;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::platform::{self, listen::InputMessage};
use crate::store::Store;
use session::Session;

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
    /// The key that marks the element under the pointer as the task's
    /// outcome (not recorded); `None`: no key does.
    pub mark_key: Option<String>,
}

impl RecordOptions {
    /// Whether `event` is the mark key (pressed or released).
    pub fn is_mark(&self, event: &reprise_models::ActionEvent) -> bool {
        is_key(event, self.mark_key.as_deref())
    }
}

/// Whether `event` is the key named `key` (pressed or released); never
/// where no key is named.
fn is_key(event: &reprise_models::ActionEvent, key: Option<&str>) -> bool {
    key.is_some() && event.is_raw_key() && event.named_key() == key
}

/// Why the recorder stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
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
#[derive(Debug, serde::Serialize)]
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
    /// The outcomes marked, with their trees (kept by
    /// [`outcome::keep`] once the recording is written).
    #[serde(skip)]
    pub marks: Vec<outcome::Marked>,
    /// What became of them.
    pub outcomes: outcome::Outcomes,
    /// What the presses' pixels said of their elements' names (checked by
    /// [`labels::check`] once the recording is written).
    pub labels: labels::LabelChecks,
}

/// Refuses a frame rate whose interval cannot be a duration (a rate near
/// zero would overflow it) or that no display gives.
pub fn check_frame_rate(frame_rate: f64) -> Result<(), crate::settings::errors::UsageError> {
    if frame_rate.is_finite() && (0.001..=1000.0).contains(&frame_rate) {
        return Ok(());
    }
    Err(crate::settings::errors::UsageError(format!(
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
    let (mut session, input) = Session::start(store, options)?;
    let stop_reason = loop {
        if stop.load(Ordering::SeqCst) {
            break StopReason::Signal;
        }
        if options
            .duration
            .is_some_and(|duration| session.start.elapsed() >= duration)
        {
            break StopReason::Duration;
        }
        match input.messages.recv_timeout(Duration::from_millis(20)) {
            Ok(InputMessage::Input {
                at,
                event_type,
                name,
                under,
            }) => {
                if session.take_input(at, &event_type, name.as_deref(), under) {
                    break StopReason::StopSequence;
                }
            }
            Ok(InputMessage::Failed(_)) if platform::display_gone() => {
                // Every event the listener saw came before this message.
                break StopReason::DisplayLost;
            }
            Ok(InputMessage::Failed(reason)) => {
                session.observer.stop();
                session.write_ready(store, true)?;
                bail!("{reason}; what was recorded so far is kept, marked incomplete");
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => bail!("the input listener is gone"),
        }
        session.show_status();
        session.keep_up(store)?;
    };
    // Whatever input already arrived belongs to the recording, up to a stop
    // sequence (whose own keys are left out).
    if stop_reason != StopReason::StopSequence {
        session.take_rest(&input);
    }
    session.finish(store, stop_reason)
}
