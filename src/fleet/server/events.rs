//! `GET /api/jobs/{id}/events`: a job's history as Server-Sent Events.

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
    let after = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.trim().parse::<i64>().ok())
        .or(query.after)
        .unwrap_or(0);
    struct Follow {
        fleet: Shared,
        job: String,
        last: i64,
        pending: std::collections::VecDeque<crate::fleet::JobEvent>,
        news: broadcast::Receiver<String>,
        done: bool,
    }
    let follow = Follow {
        news: fleet.events.subscribe(),
        fleet,
        job: id,
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
                let job = store.job(&follow.job).ok().flatten();
                // The state is read before the events: a final state seen
                // here has its event among those read after it.
                let final_now = job.is_none_or(|job| job.state.is_final());
                let events = store
                    .job_events(&follow.job, follow.last, 100)
                    .unwrap_or_default();
                (final_now, events)
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
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(10)))
        .into_response())
}
