//! The web console in a real browser (headless Chromium through
//! chromedriver): a user logs in, watches a job go from queued to done on
//! the page as it happens, cancels one, submits one; a viewer may look and
//! is refused every change. Each page's screenshot is kept in
//! `target/test-artifacts/console/`.

use std::path::PathBuf;
use std::time::Duration;

use super::webdriver::Browser;
use super::{Desktop, Redis, Server, USER_TOKEN, VIEWER_TOKEN, WORKER_TOKEN, state};

fn artifacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts/console");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn row(id: &str, cell: &str) -> String {
    format!("tr[data-job='{id}'] td.{cell}")
}

pub(super) fn log_in(browser: &Browser, server: &Server, token: &str) {
    browser.goto(&format!("{}/", server.url()));
    assert!(
        browser.url().ends_with("/console/login"),
        "not logged in: the login page, not {}",
        browser.url()
    );
    browser.type_in("input[name=token]", token);
    browser.click("#login");
    browser.wait_text("h1", "Jobs", Duration::from_secs(10));
}

#[test]
fn the_console_shows_jobs_live_and_lets_only_users_change_them() {
    let shots = artifacts();
    let dir = tempfile::tempdir().unwrap();
    let redis = Redis::start(dir.path());
    let mut server = Server::start(dir.path(), &redis, &[]);
    // A job queued before any desktop is there.
    let first = server.submit(&["--speed", "4"]);
    let browser = Browser::start();
    browser.goto(&format!("{}/console/login", server.url()));
    browser.type_in("input[name=token]", "not-a-token-of-this-server");
    browser.click("#login");
    browser.wait_text(
        "p.error",
        "That token opens no console: give a user's or a viewer's token.",
        Duration::from_secs(10),
    );
    log_in(&browser, &server, USER_TOKEN);
    browser.wait_text(&row(&first[0], "state"), "queued", Duration::from_secs(10));
    browser.script("window.repriseMarker = 42; return 1;");
    browser.screenshot(&shots.join("jobs-queued.png"));
    // A desktop comes: the row goes to its end live, the page never reloaded.
    let desktop = Desktop::start_fresh(&server);
    browser.wait_text(
        &row(&first[0], "state"),
        "unverified",
        Duration::from_secs(120),
    );
    assert_eq!(browser.script("return window.repriseMarker;"), 42);
    assert_eq!(browser.text(&row(&first[0], "steps")).as_deref(), Some("6"));
    assert_eq!(desktop.saves(), 1);
    browser.screenshot(&shots.join("jobs-done.png"));
    // A job no desktop may take shows up live, and is cancelled on its page.
    let waiting = server.submit(&["--label", "gpu=yes"]);
    browser.wait_text(
        &row(&waiting[0], "state"),
        "queued",
        Duration::from_secs(10),
    );
    browser.goto(&format!("{}/console/jobs/{}", server.url(), waiting[0]));
    browser.screenshot(&shots.join("job.png"));
    browser.click("#cancel");
    browser.wait_text("#state", "cancelled", Duration::from_secs(10));
    assert_eq!(state(&server.job(&waiting[0])["job"]), "cancelled");
    // Submitted through the form: its page shows it queued.
    browser.goto(&format!("{}/console/submit", server.url()));
    browser.type_in("#parameters", "text=from-the-console");
    browser.type_in("#labels", "gpu=yes");
    browser.screenshot(&shots.join("submit.png"));
    browser.click("#submit");
    browser.wait_text("#state", "queued", Duration::from_secs(10));
    let submitted = browser.url().rsplit('/').next().unwrap().to_owned();
    let job = server.job(&submitted);
    assert_eq!(job["job"]["spec"]["parameters"]["text"], "from-the-console");
    assert_eq!(job["job"]["spec"]["labels"]["gpu"], "yes");
    // The other pages, each with what it lists.
    let mut recording = String::new();
    for (page, probe) in [
        ("workers", "#workers td.state"),
        ("recordings", "#recordings td"),
        ("schedules", "#schedules"),
        ("dead", "#dead"),
    ] {
        browser.goto(&format!("{}/console/{page}", server.url()));
        assert!(browser.find(probe).is_some(), "{page}: no {probe}");
        if page == "workers" {
            assert_eq!(browser.text(probe).as_deref(), Some("idle"));
            // The screen of the last step it replayed, scaled down.
            let width = browser.script(
                "const img = document.querySelector('#workers td.screen img');
                 if (!img) { return -1; }
                 return img.decode().then(() => img.naturalWidth, () => 0);",
            );
            assert_eq!(width, 480, "the worker's screen's width");
            let worker = browser
                .script("return document.querySelector('#workers tbody tr').dataset.worker;")
                .as_str()
                .unwrap()
                .to_owned();
            let path = format!("/api/workers/{worker}/screen");
            let (status, said) = server.http("PUT", &path, Some(WORKER_TOKEN), b"<script>");
            assert_eq!(status, 400, "not a PNG: {said}");
            let (status, _) = server.http("PUT", &path, Some(VIEWER_TOKEN), b"\x89PNG\r\n\x1a\n");
            assert_eq!(status, 403, "a viewer sends no screen");
        }
        if page == "recordings" {
            // The screen it starts on, as a thumbnail the browser decoded,
            // and its version.
            let width = browser.script(
                "const img = document.querySelector('#recordings td.thumbnail img');
                 if (!img) { return -1; }
                 return img.decode().then(() => img.naturalWidth, () => 0);",
            );
            assert_eq!(width, 320, "the thumbnail's width");
            assert_eq!(browser.text("#recordings td.version").as_deref(), Some("1"));
            recording = browser
                .script("return document.querySelector('#recordings tbody tr').dataset.recording;")
                .as_str()
                .unwrap()
                .to_owned();
        }
        browser.screenshot(&shots.join(format!("{page}.png")));
    }
    // Without a session, no thumbnail: the login page instead.
    let (status, _) = server.http(
        "GET",
        &format!("/console/recordings/{recording}/thumbnail"),
        None,
        b"",
    );
    assert_eq!(status, 303, "a thumbnail without a session");
    // The server restarted: still logged in, and still allowed to change.
    server.kill();
    server.up();
    browser.goto(&format!("{}/console/jobs/{submitted}", server.url()));
    browser.wait_text("#state", "queued", Duration::from_secs(10));
    assert!(
        browser.find("#cancel").is_some(),
        "logged out by a restart: {}",
        browser.url()
    );
    // A viewer looks, and changes nothing: no action shows, a forged form
    // and the API are refused.
    browser.click("nav form button");
    log_in(&browser, &server, VIEWER_TOKEN);
    assert!(browser.find("nav a[href='/console/submit']").is_none());
    browser.goto(&format!("{}/console/jobs/{submitted}", server.url()));
    browser.wait_text("#state", "queued", Duration::from_secs(10));
    assert!(browser.find("#cancel").is_none());
    browser.screenshot(&shots.join("viewer-job.png"));
    let forged = browser.script(&format!(
        "const csrf = document.querySelector('input[name=csrf]').value;
         return fetch('/console/jobs/{submitted}/cancel', {{method: 'POST',
             headers: {{'Content-Type': 'application/x-www-form-urlencoded'}},
             body: new URLSearchParams({{csrf}})}}).then((answer) => answer.status);"
    ));
    assert_eq!(forged, 403);
    assert_eq!(state(&server.job(&submitted)["job"]), "queued");
    let (status, _) = server.http(
        "POST",
        "/api/jobs",
        Some(VIEWER_TOKEN),
        br#"{"recording":"demo"}"#,
    );
    assert_eq!(status, 403);
    let (status, _) = server.http("GET", "/api/jobs", Some(VIEWER_TOKEN), b"");
    assert_eq!(status, 200, "a viewer reads");
    assert_eq!(server.jobs().len(), 3, "no job made by the viewer");
    // The audit log names who did each change on the console, and who was
    // refused.
    let (_, log) = server.http("GET", "/api/audit", Some(USER_TOKEN), b"");
    let has = |who: &str, action: &str, status: u64| {
        log.as_array()
            .unwrap()
            .iter()
            .any(|line| line["who"] == who && line["action"] == action && line["status"] == status)
    };
    assert!(has("unknown", "POST /console/login", 401), "{log:#}");
    assert!(
        has(
            "user",
            &format!("POST /console/jobs/{}/cancel", waiting[0]),
            303
        ),
        "{log:#}"
    );
    assert!(has("user", "POST /console/submit", 303), "{log:#}");
    assert!(
        has(
            "viewer",
            &format!("POST /console/jobs/{submitted}/cancel"),
            403
        ),
        "{log:#}"
    );
}
