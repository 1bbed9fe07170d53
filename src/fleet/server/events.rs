//! `GET /api/jobs/{id}/events`: a job's history as Server-Sent Events;
//! `GET /api/events`: every job's, as they happen (the console's live
//! pages).

use super::jobs::job_or_404;
use super::*;

#[derive(Debug, Deserialize)]
pub(super) struct EventsQuery {
    after: Option<i64>,
}

/// `GET /api/jobs/{id}/events`: the job's events as Server-Sent Events,
/// from the start or after `Last-Event-ID` (or `?after=`), ending with the
/// job's final state.
pub(super) async fn events(
    State(fleet): State<Shared>,
    Path(id): Path<String>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    job_or_404(&fleet, &id)?;
    Ok(follow(fleet, Some(id), after_of(&headers, &query)))
}

/// `GET /api/events`: every job's events after `Last-Event-ID` (or
/// `?after=`; by default from now on), never ending by itself.
pub(super) async fn all_events(
    State(fleet): State<Shared>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let after = match (headers.contains_key("last-event-id"), query.after) {
        (false, None) => fleet.store().last_event_id()?,
        _ => after_of(&headers, &query),
    };
    Ok(follow(fleet, None, after))
}

fn after_of(headers: &HeaderMap, query: &EventsQuery) -> i64 {
    headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.trim().parse::<i64>().ok())
        .or(query.after)
        .unwrap_or(0)
}

/// The events of one job (ending with its final state) or of all (`job`
/// none), after the event `after`, as a stream of Server-Sent Events.
fn follow(fleet: Shared, job: Option<String>, after: i64) -> Response {
    struct Follow {
        fleet: Shared,
        job: Option<String>,
        last: i64,
        pending: std::collections::VecDeque<crate::fleet::JobEvent>,
        news: broadcast::Receiver<String>,
        done: bool,
    }
    let follow = Follow {
        news: fleet.events.subscribe(),
        fleet,
        job,
        last: after,
        pending: Default::default(),
        done: false,
    };
    let stream = futures_util::stream::unfold(follow, |mut follow| async move {
        loop {
            if let Some(event) = follow.pending.pop_front() {
                follow.last = event.id;
                let name = match event.kind {
                    EventKind::State => "state",
                    EventKind::Step => "step",
                };
                let sse = Event::default()
                    .id(event.id.to_string())
                    .event(name)
                    .json_data(&event)
                    .unwrap_or_default();
                return Some((Ok::<_, std::convert::Infallible>(sse), follow));
            }
            if follow.done || *follow.fleet.stopping.borrow() {
                return None;
            }
            let (final_now, events) = {
                let store = follow.fleet.store();
                match &follow.job {
                    Some(id) => {
                        let job = store.job(id).ok().flatten();
                        // The state is read before the events: a final state
                        // seen here has its event among those read after it.
                        let final_now = job.is_none_or(|job| job.state.is_final());
                        let events = store.job_events(id, follow.last, 100).unwrap_or_default();
                        (final_now, events)
                    }
                    None => (
                        false,
                        store.events_after(follow.last, 100).unwrap_or_default(),
                    ),
                }
            };
            if !events.is_empty() {
                follow.pending.extend(events);
                continue;
            }
            if final_now {
                follow.done = true;
                continue;
            }
            let mut stopping = follow.fleet.stopping.clone();
            tokio::select! {
                _ = follow.news.recv() => {}
                _ = tokio::time::sleep(Duration::from_secs(5)) => {}
                _ = stopping.changed() => {}
            }
        }
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(10)))
        .into_response()
}
