//! A worker's screen, sent to the server after each step it replays (the
//! frame its run keeps, password fields masked, scaled down) for the
//! console's workers page. Never in the replay's way: sent by a thread of
//! its own with a client of its own (the reports' heartbeats never wait on
//! it), one screen waiting at most (later ones are dropped while it does),
//! each send bounded, none once the attempt must stop (its fence closed or
//! the server said stop); the thread is not waited for.

use std::sync::Arc;
use std::sync::mpsc::{TrySendError, sync_channel};
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
    let (screens, waiting) = sync_channel::<Vec<u8>>(1);
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
            for png in waiting {
                let sent = api.send_bytes::<serde_json::Value>(
                    Method::PUT,
                    &path,
                    ("image/png", png),
                    SEND,
                );
                if let Err(err) = sent {
                    tracing::debug!("send the screen: {err}");
                }
            }
        })
        .context("start the screen thread")?;
    Ok(Arc::new(move |png: Vec<u8>| {
        if quiet() {
            return;
        }
        if let Err(TrySendError::Full(_)) = screens.try_send(png) {
            tracing::debug!("a screen dropped: the one before is still being sent");
        }
    }) as OnScreen)
}
