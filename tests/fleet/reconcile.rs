//! Redis loses queued jobs' entries (restarted without its data, or from an
//! older append-only file): the server mends the queue from its store, and
//! every job runs exactly once, judged by the texts the fixture saved.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::{Desktop, Redis, Server, state};

/// Jobs typing `prefix0` … into the fixture, one a row, submitted with
/// `args`; their ids.
fn submit_rows(
    server: &Server,
    dir: &Path,
    prefix: &str,
    n: usize,
    args: &[&str],
) -> (Vec<String>, Vec<String>) {
    let texts: Vec<String> = (0..n).map(|i| format!("{prefix}{i}")).collect();
    let rows = dir.join(format!("{prefix}.csv"));
    std::fs::write(&rows, format!("text\n{}\n", texts.join("\n"))).unwrap();
    let mut all = vec!["--speed", "4", "--each", rows.to_str().unwrap()];
    all.extend_from_slice(args);
    let ids = server.submit(&all);
    assert_eq!(ids.len(), n);
    (ids, texts)
}

fn serve_log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("serve.log")).unwrap_or_default()
}

/// Empties Redis's data and starts it again.
fn empty_redis(redis: &mut Redis) {
    redis.kill();
    std::fs::remove_dir_all(&redis.dir).unwrap();
    std::fs::create_dir_all(&redis.dir).unwrap();
    redis.up();
}

/// Every job final and not failed, and each text saved exactly once.
fn each_once(server: &Server, desktop: &Desktop, ids: &[String], texts: &[String]) {
    let jobs = server.wait_final(ids, Duration::from_secs(180));
    for job in &jobs {
        assert_eq!(state(job), "unverified", "{job:#}");
    }
    let mut saved = desktop.saved_texts();
    saved.sort();
    let mut expected = texts.to_vec();
    expected.sort();
    assert_eq!(saved, expected, "each job once:\n{}", desktop.worker_log());
}

#[test]
fn redis_restarted_without_its_data_or_from_an_older_file_strands_no_job() {
    let dir = tempfile::tempdir().unwrap();
    let mut redis = Redis::start(dir.path());
    let server = Server::start(dir.path(), &redis, &[]);
    // Ten jobs queued, no desktop yet; Redis comes back empty.
    let (ids, texts) = submit_rows(&server, dir.path(), "empty", 10, &[]);
    empty_redis(&mut redis);
    crate::harness::wait_for("the server to reconcile the queue", || {
        serve_log(dir.path())
            .contains("Redis had lost the entries of 10 jobs")
            .then_some(())
    });
    let mut desktop = Desktop::start_fresh(&server);
    each_once(&server, &desktop, &ids, &texts);
    // From an older append-only file: four queued jobs in it, six more
    // submitted after it was copied; ten queued when Redis comes back.
    desktop.kill_worker();
    let (mut ids, mut texts) = submit_rows(&server, dir.path(), "old", 4, &[]);
    let older = dir.path().join("redis-older");
    let copied = Command::new("cp")
        .args(["-a", redis.dir.to_str().unwrap(), older.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(copied.success());
    let (new_ids, new_texts) = submit_rows(&server, dir.path(), "new", 6, &[]);
    ids.extend(new_ids);
    texts.extend(new_texts);
    redis.kill();
    std::fs::remove_dir_all(&redis.dir).unwrap();
    std::fs::rename(&older, &redis.dir).unwrap();
    redis.up();
    crate::harness::wait_for("the server to reconcile the older queue", || {
        serve_log(dir.path())
            .contains("Redis had lost the entries of 6 jobs")
            .then_some(())
    });
    let before = desktop.saved_texts();
    desktop.up();
    let jobs = server.wait_final(&ids, Duration::from_secs(180));
    for job in &jobs {
        assert_eq!(state(job), "unverified", "{job:#}");
    }
    let mut saved: Vec<String> = desktop.saved_texts()[before.len()..].to_vec();
    saved.sort();
    texts.sort();
    assert_eq!(saved, texts, "each job once:\n{}", desktop.worker_log());
}

#[test]
fn a_pools_jobs_run_highest_priority_first_in_submission_order_even_after_redis_lost_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut redis = Redis::start(dir.path());
    let server = Server::start(dir.path(), &redis, &[]);
    // Queued with no desktop: low ones first, then normal, then high.
    let (mut ids, low) = submit_rows(&server, dir.path(), "low", 3, &["--priority", "low"]);
    let (more, normal) = submit_rows(&server, dir.path(), "normal", 2, &[]);
    ids.extend(more);
    let (more, high) = submit_rows(&server, dir.path(), "high", 2, &["--priority", "high"]);
    ids.extend(more);
    let listed = server.jobs();
    for job in &listed {
        let text = job["spec"]["parameters"]["text"].as_str().unwrap();
        let priority = text.trim_end_matches(char::is_numeric);
        assert_eq!(job["spec"]["priority"], priority, "{job:#}");
    }
    // Redis loses every lane: the store enters them again, each in its
    // lane, oldest first.
    empty_redis(&mut redis);
    crate::harness::wait_for("the server to reconcile the three lanes", || {
        let log = serve_log(dir.path());
        (log.matches("reconciled queue lane").count() >= 3).then_some(())
    });
    let desktop = Desktop::start_fresh(&server);
    let jobs = server.wait_final(&ids, Duration::from_secs(240));
    for job in &jobs {
        assert_eq!(state(job), "unverified", "{job:#}");
    }
    let expected: Vec<String> = [high, normal, low].concat();
    assert_eq!(
        desktop.saved_texts(),
        expected,
        "high before normal before low, each in order:\n{}",
        desktop.worker_log()
    );
}
