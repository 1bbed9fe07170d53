//! The element under the pointer at every press, read on a thread of its own
//! so input is never delayed: the main loop offers each press's time and
//! position (dropped, and counted, when the reader is still busy with
//! earlier ones), the thread asks the platform's accessibility hit-test and
//! answers with the element it found, or none.

use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};

use reprise_models::ElementIdentity;

use crate::platform::ElementReader;

/// Presses that may wait for the reader before new ones go without an element.
const QUEUE: usize = 4;

/// One press to read: its timestamp (the key the answer comes back with),
/// its position on the screen, and the top-level window under it when it
/// arrived.
pub type ElementRequest = (f64, (f64, f64), Option<u64>);

/// The press's timestamp and the element found there.
pub type ElementAnswer = (f64, Option<ElementIdentity>);

#[derive(Debug)]
pub struct ElementThread {
    requests: SyncSender<ElementRequest>,
    pub answers: Receiver<ElementAnswer>,
    /// Presses offered while the reader was busy.
    pub dropped: u64,
}

impl ElementThread {
    /// Offers a press; false when the reader is busy or gone (the press then
    /// gets no element).
    pub fn offer(&mut self, timestamp: f64, point: (f64, f64), under: Option<u64>) -> bool {
        match self.requests.try_send((timestamp, point, under)) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                self.dropped += 1;
                false
            }
            Err(TrySendError::Disconnected(_)) => false,
        }
    }
}

/// Starts the reader thread; it ends when the [`ElementThread`] is dropped.
pub fn spawn(mut reader: ElementReader) -> Option<ElementThread> {
    let (requests, incoming) = mpsc::sync_channel::<ElementRequest>(QUEUE);
    let (answer_sender, answers) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("reprise-elements".into())
        .spawn(move || {
            for (timestamp, point, under) in incoming {
                let started = std::time::Instant::now();
                let element = reader(point, under);
                tracing::debug!(
                    ms = started.elapsed().as_millis(),
                    found = element.is_some(),
                    "hit-tested a press"
                );
                if answer_sender.send((timestamp, element)).is_err() {
                    break;
                }
            }
        });
    match spawned {
        Ok(_) => Some(ElementThread {
            requests,
            answers,
            dropped: 0,
        }),
        Err(err) => {
            tracing::warn!("no elements under presses: the reader thread did not start: {err}");
            None
        }
    }
}
