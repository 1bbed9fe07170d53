//! A worker's screen, sent to the server after each step it replays (the
//! frame its run keeps, password fields masked, scaled down) for the
//! console's workers page. Off the replay's thread: one screen waits at
//! most, later ones are dropped while it does, and each send is bounded.

use std::sync::Arc;
use std::sync::mpsc::{TrySendError, sync_channel};
use std::time::Duration;

use anyhow::Context as _;
use reqwest::Method;

use super::Api;
use crate::replay::OnScreen;

/// How long one send may take.
const SEND: Duration = Duration::from_secs(5);

/// The hook that hands each step's screen to a sender thread, and that
/// thread (it ends once the hook is dropped and its last send is done).
pub(super) fn sender(
    api: &Arc<Api>,
    worker: &str,
) -> anyhow::Result<(OnScreen, std::thread::JoinHandle<()>)> {
    let (screens, waiting) = sync_channel::<Vec<u8>>(1);
    let api = Arc::clone(api);
    let path = format!(
        "/api/workers/{}/screen",
        crate::fleet::client::path_part(worker)
    );
    let thread = std::thread::Builder::new()
        .name("screen".into())
        .spawn(move || {
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
    let hook = Arc::new(move |png: Vec<u8>| {
        if let Err(TrySendError::Full(_)) = screens.try_send(png) {
            tracing::debug!("a screen dropped: the one before is still being sent");
        }
    }) as OnScreen;
    Ok((hook, thread))
}
