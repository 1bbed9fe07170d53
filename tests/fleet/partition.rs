//! A worker cut off from the server mid-job (its connection black-holed,
//! the server up): it must stop injecting before its lease runs out, in
//! every trial, with and without `retry = "restart"`; the job's record
//! must match what its desktop received.

use std::io::{ErrorKind, Read as _, Write as _};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use super::{Desktop, Redis, Server, USER_TOKEN, state, steps_of, wait_for_a_step};

/// A TCP forwarder to the server that can be cut: while cut it moves no
/// byte either way and forwards no new connection (a network that drops
/// every packet), and on healing what was held goes through, as TCP's
/// retransmissions would deliver it.
struct Forwarder {
    port: u16,
    cut: Arc<AtomicBool>,
    closed: Arc<AtomicBool>,
}

impl Forwarder {
    fn to(upstream: u16) -> Forwarder {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let forwarder = Forwarder {
            port: listener.local_addr().unwrap().port(),
            cut: Default::default(),
            closed: Default::default(),
        };
        let (cut, closed) = (forwarder.cut.clone(), forwarder.closed.clone());
        std::thread::spawn(move || {
            while !closed.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                            continue;
                        };
                        for (from, to) in [
                            (client.try_clone().unwrap(), server.try_clone().unwrap()),
                            (server, client),
                        ] {
                            let (cut, closed) = (cut.clone(), closed.clone());
                            std::thread::spawn(move || pump(from, to, &cut, &closed));
                        }
                    }
                    Err(err) if err.kind() == ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    Err(_) => return,
                }
            }
        });
        forwarder
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.closed.store(true, Ordering::SeqCst);
    }
}

fn pump(mut from: TcpStream, mut to: TcpStream, cut: &AtomicBool, closed: &AtomicBool) {
    from.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let mut buffer = [0u8; 16 * 1024];
    while !closed.load(Ordering::SeqCst) {
        if cut.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        match from.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
            Err(err) if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// Every entry the fixture of `desktop` logs, with the wall-clock time the
/// test saw it (polled every 10 ms), until `stop`.
fn watch_inputs(desktop: &Desktop, stop: Arc<AtomicBool>) -> Arc<Mutex<Vec<(SystemTime, Value)>>> {
    let seen: Arc<Mutex<Vec<(SystemTime, Value)>>> = Default::default();
    let (log, into) = (desktop.log.clone(), seen.clone());
    std::thread::spawn(move || {
        while !stop.load(Ordering::SeqCst) {
            let entries = crate::harness::fixture_log(&log);
            let mut seen = into.lock().unwrap();
            let now = SystemTime::now();
            let new: Vec<Value> = entries.into_iter().skip(seen.len()).collect();
            seen.extend(new.into_iter().map(|entry| (now, entry)));
            drop(seen);
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    seen
}

fn time_of(stamp: &str) -> SystemTime {
    chrono::DateTime::parse_from_rfc3339(stamp)
        .unwrap_or_else(|err| panic!("{stamp:?}: {err}"))
        .into()
}

/// The last sign of life of the worker on `desktop`, as the server
/// recorded it.
fn last_heartbeat(server: &Server, desktop: &Desktop) -> SystemTime {
    let log = desktop.worker_log();
    let id = log
        .lines()
        .find_map(|line| line.strip_prefix("reprise worker ")?.split(':').next())
        .unwrap_or_else(|| panic!("no worker id in its log:\n{log}"));
    let (status, workers) = server.http("GET", "/api/workers", Some(USER_TOKEN), b"");
    assert_eq!(status, 200, "{workers:#}");
    let worker = workers
        .as_array()
        .unwrap()
        .iter()
        .find(|worker| worker["id"] == id)
        .unwrap_or_else(|| panic!("no worker {id} in {workers:#}"));
    time_of(worker["last_heartbeat"].as_str().unwrap())
}

const LEASE: Duration = Duration::from_secs(2);

/// One trial: the job taken by the worker behind the forwarder, the
/// forwarder cut after its first step for three leases while a second
/// desktop waits; then healed.
fn trial(server: &Server, retry: &[&str]) {
    let forwarder = Forwarder::to(server.port);
    let cut_off = Desktop::start_at(forwarder.url(), &[]);
    let stop = Arc::new(AtomicBool::new(false));
    let inputs = watch_inputs(&cut_off, stop.clone());
    let mut args = vec!["--speed", "0.2"];
    args.extend_from_slice(retry);
    let ids = server.submit(&args);
    wait_for_a_step(server, &ids[0]);
    let other = Desktop::start(server, &[]);
    forwarder.cut.store(true, Ordering::SeqCst);
    std::thread::sleep(LEASE * 3);
    let lease_end = last_heartbeat(server, &cut_off) + LEASE;
    forwarder.cut.store(false, Ordering::SeqCst);
    let jobs = server.wait_final(&ids, Duration::from_secs(90));
    // The cut-off worker's late reports are in (or refused) by now.
    let ended = format!("job {}: ", ids[0]);
    crate::harness::wait_for("the cut-off worker to report its end", || {
        cut_off
            .worker_log()
            .lines()
            .any(|line| {
                line.starts_with(&ended)
                    && !line.contains(": attempt ")
                    && !line.contains(": replaying;")
            })
            .then_some(())
    });
    stop.store(true, Ordering::SeqCst);
    let inputs = inputs.lock().unwrap().clone();
    let late: Vec<&Value> = inputs
        .iter()
        .filter(|(at, _)| *at > lease_end + Duration::from_millis(50))
        .map(|(_, entry)| entry)
        .collect();
    assert!(
        late.is_empty(),
        "input reached the cut-off desktop after its lease ran out: {late:#?}\nworker log:\n{}",
        cut_off.worker_log()
    );
    assert!(
        cut_off
            .worker_log()
            .contains("no answer from the server for"),
        "the worker says it fenced itself:\n{}",
        cut_off.worker_log()
    );
    assert_eq!(cut_off.saves(), 0, "stopped before its last click");
    // The record of the first attempt holds every step its desktop did:
    // the steps it reported before the cut, and any it reported late.
    let first: Vec<Value> = steps_of(server, &ids[0])
        .into_iter()
        .filter(|step| step["attempt"] == 1)
        .collect();
    let done_there = cut_off_steps(&cut_off);
    assert_eq!(first.len(), done_there, "{first:#?}");
    match retry {
        [] => {
            assert_eq!(state(&jobs[0]), "abandoned", "{:#}", jobs[0]);
            assert_eq!(other.saves(), 0, "not run again");
        }
        _ => {
            assert_eq!(other.saves(), 1, "run again whole on the other desktop");
            assert_eq!(jobs[0]["attempt"], 2, "{:#}", jobs[0]);
        }
    }
}

/// How many step lines the cut-off worker's replay wrote in its own store.
fn cut_off_steps(desktop: &Desktop) -> usize {
    let shown = crate::harness::run_ok(
        desktop
            .display
            .reprise()
            .args(["runs", "show", "last", "--json"]),
    );
    let run: Value = serde_json::from_str(&shown).unwrap();
    run["steps"].as_array().map_or(0, Vec::len)
}

#[test]
fn a_worker_cut_off_from_the_server_stops_before_its_lease_runs_out() {
    let dir = tempfile::tempdir().unwrap();
    let redis = Redis::start(dir.path());
    let server = Server::start(dir.path(), &redis, &[]);
    let started = Instant::now();
    trial(&server, &[]);
    trial(&server, &["--retry", "restart"]);
    eprintln!("two partition trials in {:.0?}", started.elapsed());
}
