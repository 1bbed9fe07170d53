//! The server's HTTP connections, each served by a task of its own, so
//! that no client can starve the others: a bound on how many are open at
//! once, a timeout on a request's headers (an idle or half-sent connection
//! is closed), a timeout on a whole request (event streams and long polls
//! excepted: they answer at their own pace, bounded by themselves), and an
//! end that lets requests in flight finish.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper::Request as HyperRequest;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

use super::Fail;

/// The most connections open at once; past it, a new one waits to be
/// accepted until another closes.
pub(super) const MAX_CONNECTIONS: usize = 2_048;
/// How long a client may take to send a request's headers (and how long
/// a kept-alive connection may sit idle).
pub(super) const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request may take, its body included.
pub(super) const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// Serves `app` on `listener` until `stopping` turns true, then waits for
/// the connections open to finish what they were doing (the caller bounds
/// that wait).
pub(super) async fn serve(
    listener: TcpListener,
    app: Router,
    stopping: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let open = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    accept(listener, app, stopping, &open).await;
    drop(open.acquire_many(MAX_CONNECTIONS as u32).await);
    Ok(())
}

async fn accept(
    listener: TcpListener,
    app: Router,
    mut stopping: watch::Receiver<bool>,
    open: &Arc<Semaphore>,
) {
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(open).acquire_owned() => permit.expect("the semaphore is never closed"),
            _ = stopping.changed() => return,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of descriptors, most likely: wait, do not spin.
                    tracing::warn!("accept a connection: {err}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stopping.changed() => return,
        };
        // Each request carries its peer's address (the audit log's).
        let app = app.clone();
        let service =
            hyper::service::service_fn(move |mut request: HyperRequest<hyper::body::Incoming>| {
                request
                    .extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                let mut app = app.clone();
                async move { tower_service::Service::call(&mut app, request).await }
            });
        let mut stopping = stopping.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stopping.changed() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
}

/// Every request but an event stream and a long poll gets
/// [`REQUEST_TIMEOUT`], its body's reading included.
pub(super) async fn time_limit(request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if path.ends_with("/events") || path.ends_with("/pull") {
        return next.run(request).await;
    }
    match tokio::time::timeout(REQUEST_TIMEOUT, next.run(request)).await {
        Ok(response) => response,
        Err(_) => Fail::new(
            StatusCode::REQUEST_TIMEOUT,
            "timeout",
            format!(
                "the request took longer than {} s",
                REQUEST_TIMEOUT.as_secs()
            ),
        )
        .into_response(),
    }
}
