//! Retention: what the server's store keeps of jobs, workers and schedules
//! that are over (`reprise serve --keep-days`), pruned at start and hourly.

use super::*;

/// Ticks between two prunings (an hour).
pub(super) const EVERY_TICKS: u32 = 7_200;

/// Removes the jobs that ended (with their events and reports), the
/// workers not heard from, and the schedules over, longer ago than the
/// server keeps them; says what it removed.
pub(super) fn prune(fleet: &Fleet) -> ApiResult<()> {
    let Some(keep) = fleet.keep else {
        return Ok(());
    };
    let Ok(keep) = chrono::Duration::from_std(keep) else {
        return Ok(());
    };
    let before = rules::stamp(chrono::Utc::now() - keep);
    let mut store = fleet.store();
    let (jobs, workers) = store.prune_fleet(&before)?;
    let schedules = store.prune_schedules(&before)?;
    let lines = store.prune_audit(&before)?;
    // The screens of the workers removed go with them.
    let kept: std::collections::HashSet<String> =
        store.workers()?.into_iter().map(|row| row.id).collect();
    fleet
        .screens
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .retain(|id, _| kept.contains(id));
    if jobs + workers + schedules + lines > 0 {
        tracing::info!(
            "retention: removed {jobs} job(s) that ended, {workers} worker(s) not heard from, {schedules} schedule(s) over and {lines} line(s) of the audit log, before {before}"
        );
    }
    Ok(())
}
