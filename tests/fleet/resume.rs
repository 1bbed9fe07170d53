//! A fleet job halted midway (a person took the pointer to a screen corner
//! after the third step) is resumed from the console's job page (the API
//! `jobs resume` calls), after its worker was stopped and started again on
//! its desktop: a new job that only its worker takes, going on with the
//! same run on the same desktop, and no step is done twice, judged by what
//! the fixture application received.

use std::time::Duration;

use serde_json::Value;

use super::{Desktop, Redis, Server, USER_TOKEN, state, steps_of};
use crate::harness::{fixture_log, wait_for};

/// The step indexes job `id` reported, in order.
fn step_indexes(server: &Server, id: &str) -> Vec<u64> {
    steps_of(server, id)
        .iter()
        .map(|event| event["data"]["step"].as_u64().unwrap())
        .collect()
}

/// `jobs resume ID`'s exit status and its message.
fn resume(server: &Server, id: &str) -> (bool, String) {
    let out = server
        .client()
        .args(["jobs", "resume", id])
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_job_halted_midway_is_resumed_on_its_desktop_without_doing_a_step_twice() {
    let dir = tempfile::tempdir().unwrap();
    let redis = Redis::start(dir.path());
    let server = Server::start(dir.path(), &redis, &[]);
    let desktop = Desktop::start(&server, &[]);
    let ids = server.submit(&["--speed", "0.3"]);
    // The field clicked, "alice" typed, "Remember me" ticked: then a person
    // takes the pointer to a corner, and the job stops before its next step.
    wait_for("the job's third step", || {
        (steps_of(&server, &ids[0]).len() >= 3).then_some(())
    });
    desktop.display.xdotool(&["mousemove", "0", "0"]);
    let old = server.wait_final(&ids, Duration::from_secs(60)).remove(0);
    assert_eq!(state(&old), "aborted", "{old:#}");
    // Its steps: those done, then the one it halted at (aborted before
    // its input began).
    let halted = steps_of(&server, &ids[0]);
    let statuses: Vec<&str> = halted
        .iter()
        .map(|event| event["data"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses.last(), Some(&"aborted"), "{statuses:?}");
    let done = statuses.len() - 1;
    assert!((3..5).contains(&done), "{statuses:?}");
    assert_eq!(desktop.saves(), 0, "stopped before Save");
    desktop.display.xdotool(&["mousemove", "640", "400"]);
    // The worker is stopped and started again on its desktop (an upgrade,
    // a reboot): it comes back as the same worker, so the job is still its.
    let desktop = {
        let mut desktop = desktop;
        desktop.restart_worker();
        desktop
    };
    let worker = old["worker"].as_str().unwrap().to_owned();
    wait_for("the worker back under its id", || {
        let (_, workers) = server.http("GET", "/api/workers", Some(USER_TOKEN), b"");
        let rows = workers.as_array().cloned().unwrap_or_default();
        rows.iter()
            .any(|row| row["id"] == worker.as_str() && row["state"] == "idle")
            .then_some(())
    });

    // Resumed from the console's job page, in a real browser: the button
    // shows only on a halted job, and leads to the new job's page.
    let browser = super::webdriver::Browser::start();
    super::console::log_in(&browser, &server, USER_TOKEN);
    browser.goto(&format!("{}/console/jobs/{}", server.url(), ids[0]));
    browser.wait_text("#state", "aborted", Duration::from_secs(10));
    browser.click("#resume");
    wait_for("the new job's page", || {
        browser.find("#resumes").map(|_| ())
    });
    let new_id = browser.url().rsplit('/').next().unwrap().to_owned();
    assert_ne!(new_id, ids[0]);
    let shown = server.job(&new_id)["job"].clone();
    assert_eq!(shown["spec"]["resume"]["run"], old["run_id"], "{shown:#}");
    assert_eq!(
        shown["spec"]["resume"]["worker"], old["worker"],
        "{shown:#}"
    );
    let new = server
        .wait_final(std::slice::from_ref(&new_id), Duration::from_secs(60))
        .remove(0);
    assert_eq!(
        state(&new),
        "unverified",
        "{new:#}\n{}",
        desktop.worker_log()
    );
    // One run, gone on with from the step it halted at.
    assert_eq!(new["run_id"], old["run_id"]);
    assert_eq!(new["worker"], old["worker"]);
    let went_on = step_indexes(&server, &new_id);
    assert_eq!(went_on.first().copied(), Some(done as u64), "{went_on:?}");

    // What the application received: each thing once.
    let log = fixture_log(&desktop.log);
    let of = |event: &str| -> Vec<&Value> { log.iter().filter(|e| e["event"] == event).collect() };
    let ticks = of("check");
    assert_eq!(
        ticks.len(),
        1,
        "ticked once, not ticked off again: {ticks:?}"
    );
    assert_eq!(ticks[0]["value"], true);
    let gamma: Vec<&Value> = of("click")
        .into_iter()
        .filter(|click| click["control"] == "row:Gamma")
        .collect();
    assert_eq!(gamma.len(), 2, "Gamma double-clicked once: {gamma:?}");
    // At this slow speed too: the pause between its clicks as recorded.
    assert_eq!(of("double_click").len(), 1, "{gamma:?}");
    assert_eq!(desktop.saved_texts(), ["alice"], "typed once, saved once");

    // Resumed once only; a job that did not halt is not resumed.
    let (ok, said) = resume(&server, &ids[0]);
    assert!(!ok && said.contains("requeued already"), "{said}");
    let (ok, said) = resume(&server, &new_id);
    assert!(!ok && said.contains("not halted at a step"), "{said}");
    let (status, _) = server.http(
        "POST",
        &format!("/api/jobs/{new_id}/resume"),
        Some(USER_TOKEN),
        br#"{"from": 0}"#,
    );
    assert_eq!(status, 400);
}
