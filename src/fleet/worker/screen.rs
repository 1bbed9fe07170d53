//! A worker's screen, sent to the server after each step it replays (the
//! frame its run keeps, password fields masked, scaled down) for the
//! console's workers page. Never in the replay's way: scaled, encoded and
//! sent by a thread of its own with a client of its own (the reports'
//! heartbeats never wait on it), one screen in hand at most (a later one is
//! dropped, not even copied, while it is), each send bounded, none once the
//! attempt must stop (its fence closed or the server said stop); the
//! thread is not waited for.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::sync_channel;
use std::time::Duration;

use anyhow::Context as _;
use reqwest::Method;

use super::Api;
use crate::replay::OnScreen;

/// How long one send may take.
const SEND: Duration = Duration::from_secs(2);

/// The hook that hands each step's screen to a sender thread for the
/// server at `base`, as worker `worker`; `quiet` says when to send no more.
pub(super) fn sender(
    base: &str,
    worker: &str,
    quiet: Arc<dyn Fn() -> bool + Send + Sync>,
) -> anyhow::Result<OnScreen> {
    let (screens, waiting) = sync_channel::<image::RgbaImage>(1);
    // A screen is in the thread's hands, from its handing over until it
    // was sent (or failed).
    let busy = Arc::new(AtomicBool::new(false));
    let thread_busy = Arc::clone(&busy);
    let base = base.to_owned();
    let path = format!(
        "/api/workers/{}/screen",
        crate::fleet::client::path_part(worker)
    );
    std::thread::Builder::new()
        .name("screen".into())
        .spawn(move || {
            let api = match Api::new(&base) {
                Ok(api) => api,
                Err(err) => {
                    tracing::debug!("no screens sent: {err}");
                    return;
                }
            };
            for frame in waiting {
                let small = crate::store::frames::narrowed(&frame, crate::replay::SCREEN_WIDTH);
                let png = crate::store::frames::encode_png(&small);
                let sent = api.send_bytes::<serde_json::Value>(
                    Method::PUT,
                    &path,
                    ("image/png", png),
                    SEND,
                );
                if let Err(err) = sent {
                    tracing::debug!("send the screen: {err}");
                }
                thread_busy.store(false, Ordering::SeqCst);
            }
        })
        .context("start the screen thread")?;
    Ok(Arc::new(move |frame: &image::RgbaImage| {
        if quiet() {
            return;
        }
        if busy.swap(true, Ordering::SeqCst) {
            tracing::debug!("a screen dropped: the one before is still being sent");
            return;
        }
        // Where the thread is gone (it could not make its client), it
        // stays busy: no screen is copied again.
        let _ = screens.try_send(frame.clone());
    }) as OnScreen)
}
