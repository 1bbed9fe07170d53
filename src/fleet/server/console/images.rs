//! The console's images: a recording's thumbnail and a worker's last
//! screen, each behind the session.

use super::*;

/// A worker's last screen, as it sent it (a PNG it checked the server
/// takes; served as an image, never sniffed).
pub(super) async fn worker_screen(
    State(fleet): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(login) = session(&fleet, &headers) {
        return *login;
    }
    match fleet.screen_of(&id) {
        Some((png, _)) => png_answer(png, "no-store"),
        None => Fail::not_found("that worker has sent no screen").into_response(),
    }
}

/// A PNG image as an answer, cached as `cache` says.
fn png_answer(png: impl axum::response::IntoResponse, cache: &'static str) -> Response {
    (
        [
            (axum::http::header::CONTENT_TYPE, "image/png"),
            (axum::http::header::CACHE_CONTROL, cache),
        ],
        png,
    )
        .into_response()
}

/// The widest a recording's thumbnail is, in pixels.
const THUMBNAIL_WIDTH: u32 = 320;

/// A recording's first frame, scaled down to [`THUMBNAIL_WIDTH`] (a
/// narrower one as it is), as PNG.
pub(super) async fn thumbnail(
    State(fleet): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(login) = session(&fleet, &headers) {
        return *login;
    }
    let reading = Arc::clone(&fleet);
    let made = tokio::task::spawn_blocking(move || -> Result<Option<Vec<u8>>, Fail> {
        let store = reading.store();
        let Some(hash) = store.first_frame(&id)? else {
            return Ok(None);
        };
        let frame = store.image(&hash)?;
        drop(store);
        let small = crate::store::frames::narrowed(&frame, THUMBNAIL_WIDTH);
        Ok(Some(crate::store::frames::encode_png(&small)))
    })
    .await;
    match made {
        Ok(Ok(Some(png))) => png_answer(png, "private, max-age=3600"),
        Ok(Ok(None)) => Fail::not_found("that recording has no frame").into_response(),
        Ok(Err(fail)) => fail.into_response(),
        Err(err) => Fail::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "thumbnail",
            format!("make a thumbnail: {err}"),
        )
        .into_response(),
    }
}
