//! The fleet with real processes: a `redis-server` (append-only file on),
//! `reprise serve`, and workers each on its own Xvfb with the fixture
//! application. Each test checks what the fixtures received (every job's
//! clicks exactly once) and every job's final state; the kill tests kill a
//! worker, Redis and the server with SIGKILL.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Display, SAMPLE, fixture_log, output_ok, wait_for};

mod audit;
mod console;
mod partition;
mod reconcile;
mod resume;
mod retention;
mod schedule;
mod starve;
mod webdriver;

const USER_TOKEN: &str = "user-token-for-the-tests-0123";
const WORKER_TOKEN: &str = "worker-token-for-the-tests-456";
const VIEWER_TOKEN: &str = "viewer-token-for-the-tests-789";

/// A free loopback port (bound and released: the race is with ourselves).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind a port")
        .local_addr()
        .expect("its address")
        .port()
}

/// SIGKILL to a process we started, if it still runs, and its exit reaped.
fn kill(child: &mut Option<Child>) {
    if let Some(mut child) = child.take() {
        let _ = child.kill();
        let _ = child.wait();
    }
}

fn answers(port: u16) -> bool {
    TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_millis(200),
    )
    .is_ok()
}

/// Redis, its data in `dir`, on `port`; restartable on the same data.
struct Redis {
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
}

impl Redis {
    fn start(dir: &Path) -> Redis {
        let mut redis = Redis {
            dir: dir.join("redis"),
            port: free_port(),
            child: None,
        };
        std::fs::create_dir_all(&redis.dir).unwrap();
        redis.up();
        redis
    }

    fn up(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--dir", self.dir.to_str().unwrap()])
            .args([
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server (is the redis-server package installed?)");
        self.child = Some(child);
        let port = self.port;
        wait_for("redis-server to listen", || answers(port).then_some(()));
    }

    /// SIGKILL: what the append-only file kept is all there is.
    fn kill(&mut self) {
        kill(&mut self.child);
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `reprise serve` on its own store; restartable on the same store and port.
struct Server {
    dir: PathBuf,
    port: u16,
    redis: String,
    extra: Vec<String>,
    child: Option<Child>,
}

impl Server {
    fn start(dir: &Path, redis: &Redis, extra: &[&str]) -> Server {
        let mut server = Server {
            dir: dir.to_owned(),
            port: free_port(),
            redis: redis.url(),
            extra: extra.iter().map(|s| s.to_string()).collect(),
            child: None,
        };
        server.up();
        server
    }

    fn up(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("serve.log"))
            .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_reprise"))
            .args(["serve", "--listen", &format!("127.0.0.1:{}", self.port)])
            .args(["--redis", &self.redis])
            .args(
                ["--lease", "2"]
                    .iter()
                    .filter(|_| !self.extra.contains(&"--lease".to_owned())),
            )
            .args(&self.extra)
            .env("REPRISE_STORE", self.dir.join("server.sqlite"))
            .env("REPRISE_FLEET_USER_TOKEN", USER_TOKEN)
            .env("REPRISE_FLEET_WORKER_TOKEN", WORKER_TOKEN)
            .env("REPRISE_FLEET_VIEWER_TOKEN", VIEWER_TOKEN)
            .env_remove("REPRISE_LOG")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start reprise serve");
        self.child = Some(child);
        let port = self.port;
        wait_for("reprise serve to listen", || answers(port).then_some(()));
    }

    fn kill(&mut self) {
        kill(&mut self.child);
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `reprise jobs …` (or any client command) with the user token.
    fn client(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_reprise"));
        command
            .env("REPRISE_FLEET_TOKEN", USER_TOKEN)
            .env("REPRISE_FLEET_SERVER", self.url())
            .env("REPRISE_STORE", self.dir.join("client.sqlite"))
            .env_remove("DISPLAY")
            .env_remove("REPRISE_LOG");
        command
    }

    fn jobs(&self) -> Vec<Value> {
        let out = output_ok(self.client().args(["jobs", "list", "--json"]));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn job(&self, id: &str) -> Value {
        let out = output_ok(self.client().args(["jobs", "show", id, "--json"]));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// Submits the sample (uploaded with the first submission); returns
    /// the jobs' ids.
    fn submit(&self, args: &[&str]) -> Vec<String> {
        let mut command = self.client();
        // Naive: these tests are of the queue, and naive's pace is the
        // recording's alone.
        command.args([
            "jobs",
            "submit",
            SAMPLE,
            "--upload",
            "--json",
            "--strategy",
            "naive",
        ]);
        command.args(args);
        let out = command.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        answer["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|job| job["id"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Waits until every job in `ids` is in a final state; returns them.
    fn wait_final(&self, ids: &[String], limit: Duration) -> Vec<Value> {
        let deadline = Instant::now() + limit;
        loop {
            let jobs = self.jobs();
            let mine: Vec<Value> = jobs
                .into_iter()
                .filter(|job| ids.iter().any(|id| job["id"] == id.as_str()))
                .collect();
            let done = mine.len() == ids.len()
                && mine.iter().all(|job| {
                    !matches!(
                        job["state"].as_str(),
                        Some("queued" | "assigned" | "running" | "retrying")
                    )
                });
            if done {
                return mine;
            }
            assert!(
                Instant::now() < deadline,
                "jobs not final after {limit:?}: {mine:#?}\nserver log:\n{}",
                std::fs::read_to_string(self.dir.join("serve.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// An HTTP request of our own (for what the client would not send).
    /// A worker of `host` in the default pool, registered with `token`:
    /// its id.
    fn register_worker(&self, token: &str, host: &str) -> String {
        let body = json!({"host": host, "pool": "default"});
        let (status, registered) = self.http(
            "POST",
            "/api/workers",
            Some(token),
            body.to_string().as_bytes(),
        );
        assert_eq!(status, 201, "{registered}");
        registered["id"].as_str().expect("a worker's id").to_owned()
    }

    fn http(&self, method: &str, path: &str, token: Option<&str>, body: &[u8]) -> (u16, Value) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        );
        if let Some(token) = token {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        // A refused large body may be cut short by the server's answer.
        let _ = stream.write_all(body);
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        let text = String::from_utf8_lossy(&response).into_owned();
        let status: u16 = text
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("no status in {text:?}"));
        let body = text.split_once("\r\n\r\n").map_or("", |(_, body)| body);
        (status, serde_json::from_str(body).unwrap_or(Value::Null))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A worker on a display of its own, with the fixture where the sample
/// was recorded.
struct Desktop {
    display: Display,
    log: PathBuf,
    worker: Option<Child>,
    server: String,
    args: Vec<String>,
}

impl Desktop {
    fn start(server: &Server, args: &[&str]) -> Desktop {
        Desktop::start_at(server.url(), args)
    }

    /// A desktop whose worker finds the server at `server`.
    fn start_at(server: String, args: &[&str]) -> Desktop {
        let mut display = Display::start(1280, 800);
        let log = display.spawn_fixture("fixture.log", &["--x", "200", "--y", "150"]);
        let mut desktop = Desktop {
            display,
            log,
            worker: None,
            server,
            args: args.iter().map(|s| s.to_string()).collect(),
        };
        desktop.up();
        desktop
    }

    /// A desktop whose worker starts the fixture afresh before each job
    /// (`--reset-with`), as the fleet quickstart (docs/fleet.md) does.
    fn start_fresh(server: &Server) -> Desktop {
        let display = Display::start(1280, 800);
        let dir = display.dir.path();
        let log = dir.join("fixture.log");
        let pid = dir.join("fixture.pid");
        let fresh = format!(
            "kill $(cat {pid} 2>/dev/null) 2>/dev/null
             while xdotool search --onlyvisible --class reprise-fixture >/dev/null 2>&1; do sleep 0.1; done
             {fixture} --log {log} --x 200 --y 150 >/dev/null 2>&1 & echo $! >{pid}
             until xdotool search --onlyvisible --class reprise-fixture >/dev/null 2>&1; do sleep 0.1; done",
            pid = pid.display(),
            log = log.display(),
            fixture = crate::harness::fixture_binary().display(),
        );
        let mut desktop = Desktop {
            display,
            log,
            worker: None,
            server: server.url(),
            args: vec!["--reset-with".into(), fresh],
        };
        desktop.up();
        desktop
    }

    /// The texts the fixture's field held when Save was clicked.
    fn saved_texts(&self) -> Vec<String> {
        let mut text = String::new();
        let mut saved = Vec::new();
        for entry in fixture_log(&self.log) {
            match entry["event"].as_str() {
                Some("started") => text.clear(),
                Some("text") => text = entry["value"].as_str().unwrap_or_default().to_owned(),
                Some("click") if entry["control"] == "Save" => saved.push(text.clone()),
                _ => {}
            }
        }
        saved
    }

    fn up(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.display.dir.path().join("worker.log"))
            .unwrap();
        let child = self
            .display
            .reprise()
            .env("OMP_THREAD_LIMIT", "1")
            .env("REPRISE_FLEET_TOKEN", WORKER_TOKEN)
            .args(["worker", "--server", &self.server])
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start reprise worker");
        self.worker = Some(child);
    }

    fn kill_worker(&mut self) {
        kill(&mut self.worker);
    }

    /// Stops the worker as a person or a service manager does (SIGTERM:
    /// it leaves), within 20 s, and starts it again on the same desktop.
    fn restart_worker(&mut self) {
        let mut child = self.worker.take().expect("a worker runs");
        let pid = child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let until = std::time::Instant::now() + Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            assert!(
                std::time::Instant::now() < until,
                "the worker did not stop on SIGTERM: {}",
                self.worker_log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        self.up();
    }

    /// How many times the fixture's Save button was clicked: once per
    /// replayed task.
    fn saves(&self) -> usize {
        fixture_log(&self.log)
            .iter()
            .filter(|e| e["event"] == "click" && e["control"] == "Save")
            .count()
    }

    fn worker_log(&self) -> String {
        std::fs::read_to_string(self.display.dir.path().join("worker.log")).unwrap_or_default()
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        self.kill_worker();
        let pid = self.display.dir.path().join("fixture.pid");
        if let Ok(pid) = std::fs::read_to_string(pid) {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
    }
}

fn state(job: &Value) -> &str {
    job["state"].as_str().unwrap_or("?")
}

fn steps_of(server: &Server, id: &str) -> Vec<Value> {
    server.job(id)["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["kind"] == "step")
        .cloned()
        .collect()
}

/// Waits until job `id` has reported at least one step.
fn wait_for_a_step(server: &Server, id: &str) {
    wait_for("the job's first step", || {
        (!steps_of(server, id).is_empty()).then_some(())
    });
}

#[test]
fn two_desktops_run_a_batch_each_task_exactly_once_watched_live() {
    let dir = tempfile::tempdir().unwrap();
    let redis = Redis::start(dir.path());
    let server = Server::start(dir.path(), &redis, &[]);
    let one = Desktop::start_fresh(&server);
    let two = Desktop::start_fresh(&server);
    // One job per row, each typing its row's text where the person typed.
    let rows = dir.path().join("rows.csv");
    std::fs::write(&rows, "text\nann\nbob\ncy\ndee\n").unwrap();
    let all = server.submit(&["--speed", "3", "--each", rows.to_str().unwrap()]);
    assert_eq!(all.len(), 4);
    let ids = all[..1].to_vec();
    // Watched live: every step and state as it happens, ending with the
    // job's final state (naive replays check no effect: unverified, 12).
    let watch = server
        .client()
        .args(["jobs", "watch", &ids[0], "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&watch.stderr);
    assert_eq!(watch.status.code(), Some(12), "{stderr}");
    assert!(stderr.contains("ended unverified"), "{stderr}");
    let events: Vec<Value> = String::from_utf8_lossy(&watch.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let steps = events.iter().filter(|e| e["kind"] == "step").count();
    assert_eq!(steps, 6, "{events:#?}");
    let states: Vec<&str> = events
        .iter()
        .filter(|e| e["kind"] == "state")
        .map(|e| e["data"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["queued", "assigned", "running", "unverified"],
        "{events:#?}"
    );
    let jobs = server.wait_final(&all, Duration::from_secs(180));
    for job in &jobs {
        assert_eq!(state(job), "unverified", "{job:#}");
        assert_eq!(job["attempt"], 1, "{job:#}");
    }
    // Each fixture saved once per job its worker ran, and the two shared
    // the batch between them.
    let ran_by = |desktop: &Desktop| {
        let log = desktop.worker_log();
        let id = log
            .split_whitespace()
            .nth(2)
            .unwrap_or_default()
            .trim_end_matches(':')
            .to_owned();
        jobs.iter()
            .filter(|job| job["worker"] == id.as_str())
            .count()
    };
    assert_eq!(one.saves(), ran_by(&one), "{}", one.worker_log());
    assert_eq!(two.saves(), ran_by(&two), "{}", two.worker_log());
    assert_eq!(one.saves() + two.saves(), 4);
    assert!(one.saves() >= 1 && two.saves() >= 1, "both desktops worked");
    // Each row's text was saved once, on a fixture started afresh.
    let mut saved = one.saved_texts();
    saved.extend(two.saved_texts());
    saved.sort();
    assert_eq!(saved, ["ann", "bob", "cy", "dee"]);
    // The stream resumes after the event a client saw last.
    let last_step = events.iter().rfind(|e| e["kind"] == "step").unwrap()["id"]
        .as_i64()
        .unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        stream,
        "GET /api/jobs/{}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {USER_TOKEN}\r\nLast-Event-ID: {last_step}\r\nConnection: close\r\n\r\n",
        ids[0]
    )
    .unwrap();
    let mut resumed = String::new();
    stream.read_to_string(&mut resumed).unwrap();
    assert_eq!(resumed.matches("event: ").count(), 1, "{resumed}");
    assert!(resumed.contains("event: state"), "{resumed}");
    // The report is the replay's own, served to be shown, never run (a
    // worker wrote it), and the metrics count the jobs.
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        stream,
        "GET /api/jobs/{}/report HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {USER_TOKEN}\r\nConnection: close\r\n\r\n",
        ids[0]
    )
    .unwrap();
    let mut page = String::new();
    stream.read_to_string(&mut page).unwrap();
    let head = page.split("\r\n\r\n").next().unwrap().to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(
        head.contains("content-security-policy: default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox"),
        "{head}"
    );
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");
    assert!(page.contains("<html"), "{page:.300}");
    let metrics = server.client().args(["jobs", "list"]).output().unwrap();
    assert!(metrics.status.success());
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {USER_TOKEN}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    assert!(
        text.contains("reprise_jobs{state=\"unverified\"} 4"),
        "{text}"
    );
    assert!(text.contains("reprise_step_seconds_count 24"), "{text}");
    assert!(
        text.contains("reprise_queue_depth{pool=\"default\"} 0"),
        "{text}"
    );
    // The stream holds only what is queued or held: nothing now.
    let xlen = Command::new("redis-cli")
        .args([
            "-p",
            &redis.port.to_string(),
            "XLEN",
            "reprise:pool:default",
        ])
        .output()
        .expect("run redis-cli");
    assert_eq!(String::from_utf8_lossy(&xlen.stdout).trim(), "0");
    // Both workers are listed, idle now, in their pool.
    let (status, workers) = server.http("GET", "/api/workers", Some(USER_TOKEN), b"");
    assert_eq!(status, 200);
    let workers = workers.as_array().unwrap();
    assert_eq!(workers.len(), 2, "{workers:#?}");
    for worker in workers {
        assert_eq!(worker["state"], "idle", "{worker:#}");
        assert_eq!(worker["pool"], "default", "{worker:#}");
    }
    // No token reached a log or a store.
    let mut places = vec![
        dir.path().join("serve.log"),
        dir.path().join("server.sqlite"),
        dir.path().join("server.sqlite-wal"),
    ];
    for desktop in [&one, &two] {
        places.push(desktop.display.dir.path().join("worker.log"));
        places.push(desktop.display.store());
    }
    for place in places {
        let bytes = std::fs::read(&place).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        for token in [USER_TOKEN, WORKER_TOKEN] {
            assert!(!text.contains(token), "a token in {}", place.display());
        }
    }
}

/// Also the dead letters the jobs below leave: requeued or discarded once.
#[test]
fn a_worker_killed_mid_job_is_never_run_twice_unless_restart_was_asked() {
    let dir = tempfile::tempdir().unwrap();
    let redis = Redis::start(dir.path());
    let server = Server::start(dir.path(), &redis, &[]);
    let mut first = Desktop::start(&server, &[]);
    // Slow: the sample's 2 s take 10 s.
    let ids = server.submit(&["--speed", "0.2"]);
    wait_for_a_step(&server, &ids[0]);
    first.kill_worker();
    let second = Desktop::start(&server, &[]);
    let jobs = server.wait_final(&ids, Duration::from_secs(60));
    assert_eq!(state(&jobs[0]), "abandoned", "{:#}", jobs[0]);
    let abandoned = ids[0].clone();
    assert!(
        jobs[0]["reason"]
            .as_str()
            .unwrap()
            .contains("after it had injected input"),
        "{:#}",
        jobs[0]
    );
    assert_eq!(second.saves(), 0, "an abandoned job is not run again");
    // With retry=restart, another desktop redoes the task whole. Only
    // desktops with the label may take it (the second parks it meanwhile).
    let ids = server.submit(&["--speed", "0.2", "--retry", "restart", "--label", "site=a"]);
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(state(&server.job(&ids[0])["job"]), "queued");
    first.args = vec!["--label".into(), "site=a".into()];
    first.up();
    wait_for_a_step(&server, &ids[0]);
    first.kill_worker();
    let mut second = second;
    second.kill_worker();
    second.args = vec!["--label".into(), "site=a".into()];
    second.up();
    let jobs = server.wait_final(&ids, Duration::from_secs(90));
    assert_eq!(state(&jobs[0]), "unverified", "{:#}", jobs[0]);
    assert_eq!(jobs[0]["attempt"], 2, "{:#}", jobs[0]);
    assert_eq!(second.saves(), 1, "{}", second.worker_log());
    assert_eq!(first.saves(), 0, "killed before its last click");
    // A job for a label no desktop has waits; cancelled, it ends at once.
    let waiting = server.submit(&["--label", "gpu=yes", "--deadline", "600"]);
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(state(&server.job(&waiting[0])["job"]), "queued");
    output_ok(server.client().args(["jobs", "cancel", &waiting[0]]));
    assert_eq!(state(&server.job(&waiting[0])["job"]), "cancelled");
    // A deadline passes while queued: expired.
    let late = server.submit(&["--label", "gpu=yes", "--deadline", "1"]);
    let jobs = server.wait_final(&late, Duration::from_secs(20));
    assert_eq!(state(&jobs[0]), "expired", "{:#}", jobs[0]);
    assert_eq!(
        second.saves(),
        1,
        "neither ran on a desktop without the label"
    );
    dead_letters_are_requeued_or_discarded_once(
        &server,
        &second,
        &abandoned,
        &late[0],
        &waiting[0],
    );
}

/// The abandoned and the expired job are the dead letters (not the
/// cancelled one); the abandoned one requeued runs on the desktop, once.
fn dead_letters_are_requeued_or_discarded_once(
    server: &Server,
    desktop: &Desktop,
    abandoned: &str,
    expired: &str,
    cancelled: &str,
) {
    let jobs = |args: &[&str]| {
        let out = server.client().arg("jobs").args(args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let errors = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.success(), text, errors)
    };
    let dead_ids = || {
        let (ok, text, errors) = jobs(&["dead", "--json"]);
        assert!(ok, "{errors}");
        let dead: Vec<Value> = serde_json::from_str(&text).unwrap();
        let mut ids: Vec<String> = dead
            .iter()
            .map(|job| job["id"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        ids
    };
    let mut expected = vec![abandoned.to_owned(), expired.to_owned()];
    expected.sort();
    assert_eq!(dead_ids(), expected);
    let (ok, text, errors) = jobs(&["requeue", abandoned]);
    assert!(ok, "{errors}");
    let again = text.trim().to_owned();
    let ran = server.wait_final(std::slice::from_ref(&again), Duration::from_secs(60));
    assert_eq!(state(&ran[0]), "unverified", "{:#}", ran[0]);
    assert_eq!(ran[0]["spec"]["requeued_from"], abandoned);
    assert_eq!(desktop.saves(), 2, "the requeued job ran once");
    let (ok, _, errors) = jobs(&["requeue", abandoned]);
    assert!(
        !ok && errors.contains(&format!("requeued already, as {again}")),
        "{errors}"
    );
    let (ok, _, errors) = jobs(&["discard", cancelled]);
    assert!(!ok && errors.contains("not a dead letter"), "{errors}");
    let (ok, _, errors) = jobs(&["discard", expired]);
    assert!(ok, "{errors}");
    assert_eq!(dead_ids(), Vec::<String>::new());
    let settled = server.job(expired);
    assert_eq!(settled["job"]["settled"]["as"], "discarded", "{settled:#}");
    assert_eq!(
        server.job(abandoned)["job"]["settled"]["job"],
        again.as_str()
    );
}

#[test]
fn a_running_job_cancelled_stops_within_a_step() {
    let dir = tempfile::tempdir().unwrap();
    let redis = Redis::start(dir.path());
    let server = Server::start(dir.path(), &redis, &[]);
    let desktop = Desktop::start(&server, &[]);
    let ids = server.submit(&["--speed", "0.2"]);
    wait_for_a_step(&server, &ids[0]);
    output_ok(server.client().args(["jobs", "cancel", &ids[0]]));
    let jobs = server.wait_final(&ids, Duration::from_secs(30));
    assert_eq!(state(&jobs[0]), "cancelled", "{:#}", jobs[0]);
    assert_eq!(desktop.saves(), 0, "the task stopped before its last click");
    assert!(steps_of(&server, &ids[0]).len() < 6);
    // SIGTERM mid-job: the worker aborts the step, releases what it held,
    // reports, and exits.
    let mut desktop = desktop;
    let ids = server.submit(&["--speed", "0.2"]);
    wait_for_a_step(&server, &ids[0]);
    let worker = desktop.worker.take().unwrap();
    let _ = Command::new("kill")
        .args(["-TERM", &worker.id().to_string()])
        .status();
    let out = crate::harness::wait_with_limit(worker, Duration::from_secs(30));
    assert!(out.status.success(), "{}", desktop.worker_log());
    // Not as if a person aborted it: the task may be half done, and
    // without retry=restart it is not run again.
    let job = &server.job(&ids[0])["job"];
    assert_eq!(state(job), "abandoned", "{job:#}");
    assert!(
        job["reason"]
            .as_str()
            .unwrap()
            .contains("was told to stop (a signal)"),
        "{job:#}"
    );
    assert_eq!(desktop.saves(), 0);
    // Idle, it exits as soon as its pull returns.
    desktop.up();
    std::thread::sleep(Duration::from_secs(1));
    let worker = desktop.worker.take().unwrap();
    let _ = Command::new("kill")
        .args(["-TERM", &worker.id().to_string()])
        .status();
    let out = crate::harness::wait_with_limit(worker, Duration::from_secs(15));
    assert!(out.status.success(), "{}", desktop.worker_log());
    // A worker that stopped is gone from the list at once; started again on
    // its desktop, it was the same worker (one row, its id kept).
    let (_, workers) = server.http("GET", "/api/workers", Some(USER_TOKEN), b"");
    let states: Vec<&str> = workers
        .as_array()
        .unwrap()
        .iter()
        .map(|worker| worker["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["gone"], "{workers:#}");
}

#[test]
fn server_and_redis_restarts_lose_no_job_and_no_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut redis = Redis::start(dir.path());
    // A lease longer than the outage below: a worker cut off for most of
    // its lease stops itself (the partition test), one that is not goes on.
    let mut server = Server::start(dir.path(), &redis, &["--lease", "10"]);
    let mut desktop = Desktop::start(&server, &[]);
    // The server dies mid-job and comes back within the lease: the
    // worker's reports wait.
    let first = server.submit(&["--speed", "0.3"]);
    wait_for_a_step(&server, &first[0]);
    server.kill();
    std::thread::sleep(Duration::from_secs(2));
    server.up();
    let jobs = server.wait_final(&first, Duration::from_secs(90));
    assert_eq!(state(&jobs[0]), "unverified", "{:#}", jobs[0]);
    assert_eq!(steps_of(&server, &first[0]).len(), 6, "no step record lost");
    assert_eq!(desktop.saves(), 1);
    // Jobs queued in Redis when it is killed are there when it is back.
    desktop.kill_worker();
    let queued = server.submit(&["--speed", "3"]);
    let mut more = server.submit(&["--speed", "3"]);
    redis.kill();
    // Submitted while Redis is down: kept, and queued once it is back.
    more.extend(server.submit(&["--speed", "3"]));
    redis.up();
    desktop.up();
    let all: Vec<String> = queued.iter().chain(&more).cloned().collect();
    let jobs = server.wait_final(&all, Duration::from_secs(120));
    for job in &jobs {
        assert_eq!(state(job), "unverified", "{job:#}");
    }
    assert_eq!(
        desktop.saves(),
        4,
        "each job once: {}",
        desktop.worker_log()
    );
}

#[test]
fn the_api_refuses_bad_input_and_wrong_tokens_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let redis = Redis::start(dir.path());
    let server = Server::start(dir.path(), &redis, &["--max-upload", "4"]);
    let sample = std::fs::read(SAMPLE).unwrap();
    let (status, body) = server.http("POST", "/api/recordings", Some(USER_TOKEN), &sample);
    assert_eq!(status, 201, "{body}");
    // Tokens: none, a wrong one, and each role where the other belongs.
    let submit = br#"{"recording": "demo"}"#;
    for (token, expected) in [
        (None, 401),
        (Some("not-the-token-at-all-000"), 401),
        (Some(WORKER_TOKEN), 403),
    ] {
        let (status, body) = server.http("POST", "/api/jobs", token, submit);
        assert_eq!(status, expected, "{token:?}: {body}");
        assert!(!body.to_string().contains(USER_TOKEN));
    }
    let (status, _) = server.http("POST", "/api/workers/x/pull?wait=0", Some(USER_TOKEN), b"");
    assert_eq!(status, 403);
    // Bad bodies.
    let cases: [(&str, &[u8], u16, &str); 5] = [
        ("/api/jobs", b"{not json", 400, "bad_json"),
        (
            "/api/jobs",
            br#"{"recording": "demo", "atempts": 2}"#,
            400,
            "bad_json",
        ),
        (
            "/api/jobs",
            br#"{"recording": "no-such-recording"}"#,
            404,
            "unknown_recording",
        ),
        (
            "/api/jobs",
            br#"{"recording": "demo", "set": {"nope": "x"}}"#,
            400,
            "bad_request",
        ),
        (
            "/api/recordings",
            &sample[..sample.len() / 2],
            400,
            "bad_export",
        ),
    ];
    for (path, body, expected, code) in cases {
        let (status, answer) = server.http("POST", path, Some(USER_TOKEN), body);
        assert_eq!(status, expected, "{answer}");
        assert_eq!(answer["error"]["code"], code, "{answer}");
        assert!(!answer["error"]["message"].as_str().unwrap().is_empty());
    }
    // Labels: a few, short.
    let many: serde_json::Map<String, Value> = (0..33)
        .map(|i| (format!("k{i}"), Value::from("v")))
        .collect();
    let long = json!({"recording": "x", "labels": {"site": "x".repeat(300)}});
    for (body, words) in [
        (
            json!({"recording": "x", "labels": many}),
            "at most 32 labels",
        ),
        (long, "at most 256"),
    ] {
        let (status, answer) = server.http(
            "POST",
            "/api/jobs",
            Some(USER_TOKEN),
            body.to_string().as_bytes(),
        );
        assert_eq!(status, 400, "{answer}");
        assert!(answer.to_string().contains(words), "{answer}");
    }
    let register = json!({"host": "h", "pool": "default", "labels": {"a": "x".repeat(300)}});
    let (status, answer) = server.http(
        "POST",
        "/api/workers",
        Some(WORKER_TOKEN),
        register.to_string().as_bytes(),
    );
    assert_eq!(status, 400, "{answer}");
    // A long poll's wait that is not a number is refused, not a panic.
    for wait in ["NaN", "inf", "-inf"] {
        let (status, answer) = server.http(
            "POST",
            &format!("/api/workers/w/pull?wait={wait}"),
            Some(WORKER_TOKEN),
            b"",
        );
        assert_eq!(status, 400, "{wait}: {answer}");
    }
    let big = vec![b'x'; 5 * 1024 * 1024];
    let (status, answer) = server.http("POST", "/api/recordings", Some(USER_TOKEN), &big);
    assert_eq!(status, 413, "{answer}");
    assert_eq!(answer["error"]["code"], "too_large");
    // The client says what the server said, with the exit code for it.
    let out = server
        .client()
        .args(["jobs", "submit", "no-such-recording"])
        .output()
        .unwrap();
    crate::harness::assert_fails(&out, 3, &["unknown_recording"], "unknown recording");
    let out = server
        .client()
        .env("REPRISE_FLEET_TOKEN", WORKER_TOKEN)
        .args(["jobs", "list"])
        .output()
        .unwrap();
    crate::harness::assert_fails(&out, 4, &["403"], "a worker token lists");
    // Nothing above made a job.
    assert!(server.jobs().is_empty());
    // A Redis password is never printed, not even when Redis is not there.
    let out = Command::new(env!("CARGO_BIN_EXE_reprise"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("REPRISE_STORE", dir.path().join("other.sqlite"))
        .env("REPRISE_FLEET_USER_TOKEN", USER_TOKEN)
        .env("REPRISE_FLEET_WORKER_TOKEN", WORKER_TOKEN)
        .env("REPRISE_FLEET_REDIS", "redis://:hunter2-secret@127.0.0.1:1")
        .output()
        .unwrap();
    let stderr =
        crate::harness::assert_fails(&out, 1, &["redis://:redacted@127.0.0.1:1"], "no Redis");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[test]
fn the_documented_fleet_quickstart_runs_as_is() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(Path::new(root).join("docs/fleet.md")).unwrap();
    let start = readme
        .find("```bash fleet-quickstart\n")
        .expect("docs/fleet.md has a fleet quickstart");
    let block = &readme[start..];
    let block = &block[block.find('\n').unwrap() + 1..];
    let block = &block[..block.find("\n```").expect("the block ends")];
    // The block's `cargo build` runs with the features of the tests' own
    // build (the test scaffolding added), so it finds the workspace built
    // and compiles nothing; built without them, the root crate was compiled
    // again (minutes of CI) and the binary the later tests run replaced.
    let shim = tempfile::tempdir().unwrap();
    // The real cargo: the one running the tests, else the first on PATH
    // (never the shim itself).
    let cargo = std::env::var("CARGO").ok().unwrap_or_else(|| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|dir| dir.join("cargo"))
            .find(|path| path.is_file())
            .expect("cargo on PATH")
            .display()
            .to_string()
    });
    std::fs::write(
        shim.path().join("cargo"),
        format!(
            "#!/bin/sh\nif [ \"$1\" = build ]; then exec '{cargo}' \"$@\" --features reprise/test-support; fi\nexec '{cargo}' \"$@\"\n"
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(
            shim.path().join("cargo"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    let path = format!(
        "{}:{}",
        shim.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .args(["-c", block])
        .current_dir(root)
        .env("PATH", path)
        .env_remove("DISPLAY")
        .env_remove("REPRISE_STORE")
        .env_remove("REPRISE_LOG")
        .env_remove("REPRISE_FLEET_TOKEN")
        .env("OMP_THREAD_LIMIT", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let jobs: Vec<Value> = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(jobs.len(), 4, "{jobs:#?}");
    for job in &jobs {
        // The visual strategy checks every effect it can; the click into
        // the already-focused field shows none.
        assert!(
            matches!(state(job), "completed" | "unverified"),
            "{job:#}\n{stderr}"
        );
        assert_eq!(job["attempt"], 1, "{job:#}");
    }
    let workers: std::collections::BTreeSet<&str> = jobs
        .iter()
        .filter_map(|job| job["worker"].as_str())
        .collect();
    assert_eq!(workers.len(), 2, "both desktops worked: {jobs:#?}");
    assert!(stderr.contains("step 6/6"), "watched live: {stderr}");
    // It stopped what it started.
    assert!(
        !answers(8790) && !answers(6390),
        "the quickstart left a server running"
    );
}
