//! The recorder's writer: events, frames and window states collected, each
//! event linked to the newest frame and window state at or before it (and to
//! the element read for it), secret keys scrubbed, and everything written to
//! the store in batches.

use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use reprise_models::{ActionEvent, EventName, Screenshot, WindowState};

use super::elements::{Earlier, ElementAnswer};
use super::observer::{Observation, Observed};
use super::stop::StopSequence;
use super::{FOCUS_WAIT_SECONDS, MAX_LINK_WAIT_SECONDS, secrets};
use crate::platform;
use crate::store::frames::FrameImage;
use crate::store::{Batch, ScreenshotBlob, Store};

/// Collects events, frames and window states, links each event to the newest
/// frame and window state at or before it, and writes them in batches.
pub(super) struct Writer {
    recording_id: String,
    monitor: reprise_models::ScreenGeometry,
    start: Instant,
    /// Events not yet linked and written, in time order.
    pub(super) events: Vec<ActionEvent>,
    ready_events: Vec<ActionEvent>,
    screenshots: Vec<ScreenshotBlob>,
    window_states: Vec<WindowState>,
    pub(super) frame_times: Vec<f64>,
    pub(super) window_times: Vec<f64>,
    /// Everything the observer saw up to this time has arrived.
    observed_until: f64,
    pub(super) next_event_seq: u64,
    stored_hashes: std::collections::HashSet<String>,
    /// The active window as last stored.
    pub(super) current_window: Option<platform::ActiveWindow>,
    /// Events (by their timestamp's bits) whose element is being read, with
    /// how long each may wait for it.
    pub(super) pending_elements: std::collections::HashMap<u64, f64>,
    /// Keys whose focus read found no focus yet, waiting for a later one.
    unresolved_keys: Vec<f64>,
    /// Elements read, waiting for their press to be linked.
    elements: std::collections::HashMap<u64, platform::FoundElement>,
    /// The newest window state's accessibility tree, with that state's id.
    current_tree: Option<(u32, reprise_models::A11yTree)>,
    /// Each window state's class, title and place on the screen, by its id.
    window_names: Vec<(String, String, reprise_models::Rect)>,
    /// How each process with a window was started, read once per process.
    commands: std::collections::HashMap<u32, Option<reprise_models::ProcessCommand>>,
    /// Secret keys out, before anything is written.
    pub(super) scrubber: secrets::Scrubber,
}

impl Writer {
    pub(super) fn new(
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
            commands: std::collections::HashMap::new(),
            scrubber: secrets::Scrubber::new(secrets),
        }
    }

    /// Takes in the elements read so far; when `finish`, waits for the
    /// outstanding ones (bounded by the link wait).
    fn take_elements(&mut self, answers: Option<&Receiver<ElementAnswer>>, finish: bool) {
        let Some(answers) = answers else {
            self.pending_elements.clear();
            return;
        };
        let deadline = Instant::now() + Duration::from_secs_f64(FOCUS_WAIT_SECONDS);
        loop {
            let answer = if finish && !self.pending_elements.is_empty() {
                let left = deadline.saturating_duration_since(Instant::now());
                answers.recv_timeout(left).ok()
            } else {
                answers.try_recv().ok()
            };
            let Some((timestamp, element, earlier)) = answer else {
                break;
            };
            // A key whose window named no focus yet waits (its bound) for a
            // later key's answer to say where the focus was.
            if earlier == Earlier::Unresolved
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
            if let (Earlier::Settles, Some(first), Some(element)) =
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

    /// Seconds since the recording started, at `at`.
    pub(super) fn seconds(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.start).as_secs_f64()
    }

    pub(super) fn add_window(
        &mut self,
        timestamp: f64,
        window: platform::ActiveWindow,
        tree: Option<reprise_models::A11yTree>,
    ) {
        let id = self.window_times.len() as u32;
        self.window_times.push(timestamp);
        self.window_names
            .push((window.app_class.clone(), window.title.clone(), window.rect));
        self.current_window = Some(window.clone());
        self.current_tree = tree.clone().map(|tree| (id, tree));
        let pid = window.pid;
        let mut state = window.into_state(id, timestamp);
        state.a11y = tree;
        state.command = pid.and_then(|pid| {
            self.commands
                .entry(pid)
                .or_insert_with(|| platform::process_command(pid))
                .clone()
        });
        self.window_states.push(state);
    }

    /// Takes in what the observer sent, then links every event whose frame is
    /// known (or that has waited long enough at `now`, in seconds since the
    /// start; all of them when `finish`).
    pub(super) fn drain(
        &mut self,
        now: f64,
        observed: &Observed<'_>,
        answers: Option<&Receiver<ElementAnswer>>,
        stop_sequence: &mut StopSequence,
        finish: bool,
    ) {
        self.take_elements(answers, finish);
        self.take_observations(observed);
        if finish {
            self.events.extend(stop_sequence.release_held());
            self.events
                .sort_by(|a, b| a.timestamp.total_cmp(&b.timestamp));
        }
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
        for event in ready {
            self.link(event);
        }
    }

    /// Takes in the frames and windows the observer sent so far.
    fn take_observations(&mut self, observed: &Observed<'_>) {
        while let Ok(observation) = observed.observations.try_recv() {
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
        while let Ok(observation) = observed.window_changes.try_recv() {
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
    }

    /// Links a ready event to its frame, window and element, scrubs it and
    /// queues what is kept for writing.
    fn link(&mut self, mut event: ActionEvent) {
        let frames_before = self.frame_times.partition_point(|&t| t <= event.timestamp);
        event.screenshot_id = frames_before.checked_sub(1).map(|idx| idx as u32);
        let windows_before = self.window_times.partition_point(|&t| t <= event.timestamp);
        event.window_state_id = windows_before.checked_sub(1).map(|idx| idx as u32);
        self.pending_elements.remove(&event.timestamp.to_bits());
        let found = self.element_of(&event);
        // The window state's box, where the element was named in that very
        // window (a window state is taken a moment after its window opens:
        // keys typed first into a new dialog are linked to the one before).
        let window_rect = event.window_state_id.and_then(|id| {
            let (_, title, rect) = self.window_names.get(id as usize)?;
            let named_in = found.as_ref()?.element.window.name.as_deref();
            (named_in == Some(title.as_str())).then_some(*rect)
        });
        let read = found.as_ref().map(|found| Box::new(found.element.clone()));
        let (element, identity) = checked(&event, found, window_rect);
        // The scrubber sees the element as read, checked or not: a password
        // field is a password field whatever its box says.
        (event.element, event.identity) = (read, identity);
        let at = (event.timestamp.to_bits(), event.name);
        let window = event
            .window_state_id
            .and_then(|id| self.window_names.get(id as usize))
            .map(|(class, title, _)| (class.as_str(), title.as_str()));
        // Secret keys leave here, before anything is written.
        let mut kept = self.scrubber.scrub(event, window);
        for event in &mut kept {
            if (event.timestamp.to_bits(), event.name) == at {
                event.element = element.clone().map(Box::new);
            }
        }
        self.ready_events.extend(kept);
    }

    /// The element read for `event`, else (a press) the one under it in the
    /// window's snapshot tree.
    fn element_of(&mut self, event: &ActionEvent) -> Option<platform::FoundElement> {
        let read = self.elements.remove(&event.timestamp.to_bits());
        read.or_else(|| {
            let element = self.element_in_snapshot(event)?;
            Some(platform::FoundElement {
                element,
                mapped_by: None,
            })
        })
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
    pub(super) fn flush(&mut self, store: &mut Store) -> Result<()> {
        if self.ready_events.is_empty()
            && self.screenshots.is_empty()
            && self.window_states.is_empty()
        {
            return Ok(());
        }
        store
            .append(
                &self.recording_id,
                Batch {
                    first_event_seq: self.next_event_seq,
                    events: &self.ready_events,
                    screenshots: &self.screenshots,
                    window_states: &self.window_states,
                },
            )
            .context("write the recording to the store")?;
        self.next_event_seq += self.ready_events.len() as u64;
        self.ready_events.clear();
        self.screenshots.clear();
        self.window_states.clear();
        Ok(())
    }
}

/// The element kept for `event`, with its check: a press's element only if
/// its box holds the press on the screen (else none, and why); a key's
/// focused element as read.
fn checked(
    event: &ActionEvent,
    found: Option<platform::FoundElement>,
    window: Option<reprise_models::Rect>,
) -> (
    Option<reprise_models::ElementIdentity>,
    Option<reprise_models::element::IdentityCheck>,
) {
    let found = match found {
        Some(found) => found,
        None => return (None, None),
    };
    let press = (event.name == EventName::Click && event.mouse_pressed == Some(true))
        .then_some(())
        .and(event.mouse_x.zip(event.mouse_y));
    // A press made in a popup lies in the popup, not its window.
    let area = event.popup.or(window);
    let check = match (press, area) {
        (Some(point), _) => {
            reprise_models::element::check_press(&found.element, point, found.mapped_by, area)
        }
        (None, Some(window)) => {
            reprise_models::element::check_focus(&found.element, window, found.mapped_by)
        }
        (None, None) => return (Some(found.element), None),
    };
    if !check.is_kept() {
        tracing::info!(event = %event.label(), "{}", check.describe());
    }
    (check.is_kept().then_some(found.element), Some(check))
}

#[cfg(test)]
mod tests;
