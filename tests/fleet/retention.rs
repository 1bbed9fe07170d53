//! Retention: jobs that ended longer ago than `--keep-days` leave the
//! server's store with their events, and so do workers long silent; a job
//! still waiting stays however old.

use std::time::Duration;

use super::{Redis, Server, state};

#[test]
fn jobs_that_ended_long_ago_are_pruned_and_waiting_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let redis = Redis::start(dir.path());
    let mut server = Server::start(dir.path(), &redis, &["--keep-days", "30"]);
    // No desktop has the label: one job expires, one waits.
    let expired = server.submit(&["--label", "gpu=yes", "--deadline", "1"]);
    let waiting = server.submit(&["--label", "gpu=yes"]);
    let jobs = server.wait_final(&expired, Duration::from_secs(20));
    assert_eq!(state(&jobs[0]), "expired", "{:#}", jobs[0]);
    server.kill();
    // Forty days pass for both, and for a worker that left.
    let store = rusqlite::Connection::open(dir.path().join("server.sqlite")).unwrap();
    let long_ago = (chrono::Utc::now() - chrono::Duration::days(40))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    store
        .execute(
            "UPDATE fleet_jobs SET created = ?1, ended = CASE WHEN ended IS NULL THEN NULL ELSE ?1 END",
            [&long_ago],
        )
        .unwrap();
    store
        .execute(
            "INSERT INTO fleet_workers (id, host, pool, labels, job, registered, heartbeat, gone)
             VALUES ('old-1', 'old', 'default', '{}', NULL, ?1, ?1, 1)",
            [&long_ago],
        )
        .unwrap();
    drop(store);
    server.up();
    let log = dir.path().join("serve.log");
    crate::harness::wait_for("the retention's log line", || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("retention: removed 1 job(s) that ended, 1 worker(s)")
            .then_some(())
    });
    let ids: Vec<String> = server
        .jobs()
        .iter()
        .map(|job| job["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        ids, waiting,
        "the waiting job stays, the expired one is gone"
    );
    let (status, _) = server.http(
        "GET",
        &format!("/api/jobs/{}/events", expired[0]),
        Some(super::USER_TOKEN),
        b"",
    );
    assert_eq!(status, 404);
    let store = rusqlite::Connection::open(dir.path().join("server.sqlite")).unwrap();
    let events: i64 = store
        .query_row(
            "SELECT COUNT(*) FROM fleet_events WHERE job_id = ?1",
            [&expired[0]],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(events, 0, "its events went with it");
}
