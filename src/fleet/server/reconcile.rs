//! The queue mended from the store. The store holds every job and the
//! queue entry it points at; Redis may lose entries (restarted without its
//! data, or from an older append-only file). At start, when a group is
//! found missing, and every few seconds where a pool's stream disagrees
//! with the store (its length, or a job's entry newer than the last id the
//! stream generated), the stream's ids are read and every waiting or held
//! job whose entry is not among them is entered again (the rules'
//! [`rules::Event::EntryLost`]): nothing stranded, nothing run twice.

use std::collections::BTreeMap;

use super::{ApiResult, Fleet};
use crate::fleet::queue::later;
use crate::fleet::{Job, JobState, rules};

/// Ticks between two cheap checks of the streams against the store.
pub(super) const EVERY_TICKS: u32 = 10;

/// Jobs the queue must hold an entry for, by lane, first submitted first
/// (the order they are entered again in).
fn expected(fleet: &Fleet) -> ApiResult<BTreeMap<String, Vec<Job>>> {
    let mut lanes: BTreeMap<String, Vec<Job>> = BTreeMap::new();
    for state in [JobState::Queued, JobState::Assigned, JobState::Running] {
        // The store lists the newest first.
        for job in fleet
            .store()
            .jobs(Some(state), usize::MAX >> 1)?
            .into_iter()
            .rev()
        {
            if job.entry.is_some() {
                lanes.entry(job.lane()).or_default().push(job);
            }
        }
    }
    for jobs in lanes.values_mut() {
        // Stable: jobs made in the same millisecond stay in their order.
        jobs.sort_by(|a, b| a.created.cmp(&b.created));
    }
    Ok(lanes)
}

/// Mends each lane's stream from the store (every lane's ids read where
/// `thorough`, else only where the stream disagrees); returns how many
/// jobs were entered again, in the order they were submitted.
pub(super) async fn reconcile(fleet: &Fleet, thorough: bool) -> ApiResult<usize> {
    let thorough = thorough | fleet.queue.take_lost();
    let mut mended = 0;
    for (lane, jobs) in expected(fleet)? {
        let state = fleet.queue.stream_state(&lane).await?;
        let agrees = state.as_ref().is_some_and(|state| {
            state.length == jobs.len()
                && !jobs
                    .iter()
                    .filter_map(|job| job.entry.as_deref())
                    .any(|entry| later(entry, &state.last_id))
        });
        if agrees && !thorough {
            continue;
        }
        let ids = match state {
            Some(_) => fleet.queue.entry_ids(&lane).await?,
            None => Default::default(),
        };
        let lost: Vec<Job> = jobs
            .into_iter()
            .filter(|job| job.entry.as_ref().is_some_and(|entry| !ids.contains(entry)))
            .collect();
        if lost.is_empty() {
            continue;
        }
        let names: Vec<String> = lost.iter().map(|job| job.id.clone()).collect();
        for mut job in lost {
            fleet.apply(&mut job, rules::Event::EntryLost).await?;
            mended += 1;
        }
        tracing::warn!(
            "reconciled queue lane {lane:?} from the store: Redis had lost the entries of {}, entered again: {}",
            crate::present::plural(names.len(), "job"),
            names.join(", ")
        );
    }
    Ok(mended)
}
