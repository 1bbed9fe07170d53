//! The element under the pointer at every press, and the element with the
//! keyboard focus when a key is typed after the focus may have moved, read
//! on a thread of its own so input is never delayed: the main loop offers
//! each request (dropped, and counted, when the reader is still busy with
//! earlier ones), the thread asks the platform's accessibility tree and
//! answers with the element it found, or none. One thread asks one request
//! at a time, so the watched application never has two of ours at once.

use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};

use reprise_models::ElementIdentity;

use super::masks::Masks;
use crate::platform::{ElementReader, Focus, FocusReader, FoundElement, ReadFocus};

/// Requests that may wait for the reader before new ones go without an
/// element (every key asks, and most answers take a millisecond).
const QUEUE: usize = 32;

/// What to read, with the timestamp its answer comes back with.
#[derive(Debug, Clone, Copy)]
pub enum ElementRequest {
    /// A press: its position on the screen, and the top-level window under
    /// it when it arrived.
    Press {
        at: f64,
        point: (f64, f64),
        under: Option<u64>,
    },
    /// A key: the focused element, read when the focus may have moved
    /// since the last read. `stale`: `None` when nothing the recorder saw
    /// moved it (it is read only if another window became active);
    /// `Some(after_press)` when something did: a Tab, a window change, or
    /// (`after_press`) only a press, which says where the focus went when
    /// it named a field or a cell (a press on anything else, a button or a
    /// menu item, may have opened a dialog, or named a box around a field).
    Focus { at: f64, stale: Option<bool> },
}

/// What an answer says of the keys before it whose focus was not found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Earlier {
    /// This key's focus was not found either: it waits with them.
    Unresolved,
    /// Its element is where they went (nothing moved the focus between).
    Settles,
    /// Nothing: they stay without an element.
    Released,
}

/// The request's timestamp, the element found, and what it says of the
/// keys before it whose focus was not found.
pub type ElementAnswer = (f64, Option<FoundElement>, Earlier);

#[derive(Debug)]
pub struct ElementThread {
    requests: SyncSender<ElementRequest>,
    masks: Masks,
    pub answers: Receiver<ElementAnswer>,
    /// Requests offered while the reader was busy.
    pub dropped: u64,
}

impl ElementThread {
    /// Offers a request; false when the reader is busy or gone (the event
    /// then gets no element).
    pub fn offer(&mut self, request: ElementRequest) -> bool {
        // Counted out first: a frame taken from now on waits for the answer.
        self.masks.request_out();
        match self.requests.try_send(request) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                self.masks.answered(None);
                self.dropped += 1;
                false
            }
            Err(TrySendError::Disconnected(_)) => {
                self.masks.answered(None);
                false
            }
        }
    }
}

/// Starts the reader thread; it ends when the [`ElementThread`] is dropped.
pub fn spawn(
    mut reader: ElementReader,
    mut focus: Option<FocusReader>,
    masks: Masks,
) -> Option<ElementThread> {
    let (requests, incoming) = mpsc::sync_channel::<ElementRequest>(QUEUE);
    let (answer_sender, answers) = mpsc::channel();
    let thread_masks = masks.clone();
    let spawned = std::thread::Builder::new()
        .name("reprise-elements".into())
        .spawn(move || {
            let mut press_says_focus = false;
            for request in incoming {
                let started = std::time::Instant::now();
                let (at, element, earlier) = match request {
                    ElementRequest::Press { at, point, under } => {
                        let element = reader(point, under);
                        press_says_focus = element.as_ref().is_some_and(|found| {
                            reprise_models::element::takes_typing(found.element.role)
                        });
                        (at, element, Earlier::Released)
                    }
                    ElementRequest::Focus { at, stale } => {
                        let when = match stale {
                            None => ReadFocus::IfMoved,
                            Some(true) if press_says_focus => ReadFocus::Never,
                            Some(_) => ReadFocus::Always,
                        };
                        let found = |element: ElementIdentity| {
                            Some(FoundElement {
                                element,
                                mapped_by: None,
                            })
                        };
                        match focus.as_mut().map(|focus| focus(when)) {
                            Some(Focus::Found(element)) => (at, found(element), Earlier::Released),
                            Some(Focus::Settled(element)) => (at, found(element), Earlier::Settles),
                            Some(Focus::Unknown) => (at, None, Earlier::Unresolved),
                            Some(Focus::NotRead) | None => (at, None, Earlier::Released),
                        }
                    }
                };
                tracing::debug!(
                    ms = started.elapsed().as_millis(),
                    found = element.is_some(),
                    ?request,
                    "read an element"
                );
                thread_masks.answered(element.as_ref().map(|found| &found.element));
                if answer_sender.send((at, element, earlier)).is_err() {
                    break;
                }
            }
        });
    match spawned {
        Ok(_) => Some(ElementThread {
            requests,
            masks,
            answers,
            dropped: 0,
        }),
        Err(err) => {
            tracing::warn!("no elements under presses: the reader thread did not start: {err}");
            None
        }
    }
}
