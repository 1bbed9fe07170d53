//! `reprise replay --strategy naive` on a real display, with the fixture
//! application as the oracle of what was actually received.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{
    Display, assert_fails, chromium_render, fixture_log, marker_pixels, run_ok, run_unverified,
    wait_for, wait_with_limit,
};
use crate::record::start_recorder;

/// The fixture's default window: the client area's origin is (201, 170) on
/// openbox when asked for (200, 150) (1 px border, 20 px title bar)... so the
/// test reads it rather than assume it.
fn client_origin(display: &Display) -> (i32, i32) {
    let window = display.find_window("reprise-fixture");
    let (x, y, _, _) = display.window_rect(window);
    (x, y)
}

/// What the application received that matters: clicks, selections, checks,
/// chords, and the text field's final value.
fn received(log: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    let mut text = None;
    for entry in log {
        match entry["event"].as_str().unwrap_or("") {
            "click" | "double_click" => out.push(format!(
                "{} {} {}",
                entry["event"].as_str().unwrap(),
                entry["control"].as_str().unwrap_or("nothing"),
                entry["button"].as_str().unwrap_or("")
            )),
            "select" => out.push(format!("select {}", entry["control"].as_str().unwrap())),
            "check" => out.push(format!("check {}", entry["value"])),
            "key" if entry["ctrl"] == true && entry["pressed"] == true => {
                out.push(format!("ctrl+{}", entry["key"].as_str().unwrap()))
            }
            "text" => text = entry["value"].as_str().map(str::to_owned),
            _ => {}
        }
    }
    out.push(format!("text {:?}", text.unwrap_or_default()));
    out
}

/// Records the task on the fixture: a click on Save, typing into the user
/// name (with a chord and a non-ASCII character), the checkbox, a
/// double-click on a list row. Returns the log of the recorded session.
fn record_task(display: &mut Display) -> Vec<Value> {
    run_ok(
        display
            .command("xmodmap")
            .args(["-e", "keycode 94 = odiaeresis Odiaeresis"]),
    );
    let log = display.spawn_fixture("recorded.log", &["--x", "200", "--y", "150"]);
    let (ox, oy) = client_origin(display);
    let at = |dx: i32, dy: i32| [(ox + dx).to_string(), (oy + dy).to_string()];
    let recorder = start_recorder(display, "task", &[]);
    let [x, y] = at(29, 217);
    display.xdotool(&["mousemove", &x, &y, "click", "1"]);
    let [x, y] = at(199, 43);
    display.xdotool(&["mousemove", &x, &y, "click", "1", "sleep", "0.2"]);
    display.xdotool(&["type", "--delay", "40", "bob wörld"]);
    display.xdotool(&["key", "ctrl+a"]);
    let [x, y] = at(16, 66);
    display.xdotool(&["mousemove", &x, &y, "click", "1", "sleep", "0.2"]);
    let [x, y] = at(19, 162);
    display.xdotool(&[
        "mousemove",
        &x,
        &y,
        "click",
        "--repeat",
        "2",
        "--delay",
        "80",
        "1",
        "sleep",
        "0.3",
    ]);
    display.xdotool(&["key", "ctrl", "ctrl", "ctrl"]);
    let out = wait_with_limit(recorder, Duration::from_secs(10));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let entries = fixture_log(&log);
    display.stop_apps();
    entries
}

#[test]
fn naive_replay_reproduces_the_task_and_misses_when_the_window_moved() {
    let mut display = Display::start(1280, 800);
    let recorded = received(&record_task(&mut display));
    assert!(
        recorded.contains(&"click Save left".to_owned()),
        "{recorded:?}"
    );
    assert!(recorded.contains(&"ctrl+A".to_owned()), "{recorded:?}");
    assert!(
        recorded.contains(&"double_click row:Gamma left".to_owned()),
        "{recorded:?}"
    );
    assert_eq!(recorded.last().unwrap(), "text \"bob wörld\"");

    // The unchanged screen: the same clicks on the same controls, the same text.
    let log = display.spawn_fixture("same.log", &["--x", "200", "--y", "150"]);
    // Naive checks nothing: every step is done, none verified but the moves.
    run_unverified(
        display
            .reprise()
            .args(["replay", "task", "--speed", "3", "--strategy", "naive"]),
        None,
    );
    assert_eq!(received(&fixture_log(&log)), recorded);
    display.stop_apps();

    // The window moved: naive replay clicks where the controls were.
    let log = display.spawn_fixture("moved.log", &["--x", "420", "--y", "300"]);
    // It does not claim success: naive does not know it missed, and says
    // that it could not check.
    run_unverified(
        display
            .reprise()
            .args(["replay", "task", "--speed", "3", "--strategy", "naive"]),
        None,
    );
    let moved = received(&fixture_log(&log));
    assert_ne!(moved, recorded);
    assert!(!moved.contains(&"click Save left".to_owned()), "{moved:?}");
    assert!(
        !moved.contains(&"double_click row:Gamma left".to_owned()),
        "{moved:?}"
    );

    // The report says which steps aimed at a window that had moved.
    let (report, html) = display.last_report("report.html");
    assert!(
        html.contains("moved from 201,170 420x400 to 421,320 420x400"),
        "the report names the move"
    );
    // Not "completed": nothing was checked, and the report says so.
    assert!(
        html.contains("class=\"badge unverified\" id=\"outcome\">ended unverified: ")
            && html.contains(" unverified, 0 failed and passed over</span>"),
        "the outcome says the steps are unverified"
    );
    // A summary at the top: each step linked, with how its target was
    // found (naive: as recorded); the run's data as rows, not raw JSON.
    let summary = html
        .split("id=\"summary\"")
        .nth(1)
        .expect("a summary table");
    let summary = summary.split("</table>").next().unwrap();
    assert!(
        summary.contains("<a href=\"#step-1\">1</a>")
            && summary.contains("<a href=\"#step-5\">5</a>")
            && summary.contains("class=\"found-by\">as recorded<"),
        "{summary}"
    );
    assert!(
        !html.contains("cost_usd") && html.contains("<td>estimated cost</td><td>$0</td>"),
        "the summary's data are rows in words"
    );
    for heading in html.split("<h2>").skip(1) {
        let heading = heading.split("</h2>").next().unwrap();
        if heading.contains("badge verified") {
            assert!(
                heading.contains(": move at "),
                "only moves are verified: {heading}"
            );
        }
    }
    assert!(
        html.matches("data:image/png;base64,").count() >= 5,
        "each step shows its screenshot"
    );
    // Cropped to the fixture's window and where the step aimed (with a
    // margin), not the whole 1280x800 screen, while it is the active
    // window (the clicks that miss it leave none active: those steps show
    // the screen near where they aimed). The first click missed the moved window (421,320
    // 420x400) at (230, 387): its crop reaches from x 206 to 865. Each step
    // but the last shows the frame after.
    let boxes: Vec<&str> = html
        .split("<figure class=\"")
        .skip(1)
        .filter(|figure| figure.starts_with("before\"") || figure.starts_with("after\""))
        .flat_map(|figure| crate::harness::view_boxes(figure).into_iter().take(1))
        .collect();
    assert!(
        boxes.get(2) == Some(&"0 0 659 448") && boxes.get(3) == Some(&"0 0 659 448"),
        "the frames show the window: {boxes:?}"
    );
    // Each step shows the recorded target beside where the replay aimed,
    // each labelled with its coordinates: the recording's frame around the
    // recorded point, the replay's around the point it used (naive: the
    // same coordinates, on a screen where the window has moved).
    let step_2 = html
        .split("id=\"step-2\"")
        .nth(1)
        .unwrap()
        .split("id=\"step-3\"")
        .next()
        .unwrap();
    let recorded_at = step_2
        .split("class=\"recorded\">")
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .expect("the step says where it was recorded");
    assert!(
        step_2.contains(&format!(
            "<figcaption>recorded at {recorded_at}</figcaption>"
        )) && step_2.contains(&format!("<figcaption>found at {recorded_at}</figcaption>")),
        "{step_2}"
    );
    assert_eq!(
        html.matches("<figure class=\"recorded\">").count(),
        html.matches("class=\"recorded\">(").count(),
        "every step that was recorded at a point shows its recorded target"
    );
    assert!(html.matches("<figure class=\"recorded\">").count() >= 4);
    assert_eq!(
        html.matches("<figcaption>after</figcaption>").count(),
        html.matches("<figcaption>before").count() - 1
    );

    // What a person sees: the page renders with each step, and the targets
    // are marked on the screenshots.
    let (dom, shot) = chromium_render(&report, 1200, 2400);
    assert!(
        dom.contains("Step 1:") && dom.contains("Step 5:"),
        "the steps are on the page"
    );
    assert!(
        dom.contains("moved from 201,170"),
        "the reason is on the page"
    );
    if let Ok(dir) = std::env::var("REPRISE_DOCS_SHOTS") {
        shot.save(std::path::Path::new(&dir).join("report.png"))
            .unwrap();
    }
    assert!(
        marker_pixels(&shot) > 50,
        "the target markers are drawn on the screenshots"
    );
}

/// The display going away in the middle of a replay (the recorder's case of
/// issue 14, for replay): the run ends and is stored with its outcome, and
/// Reprise says why in its own words, not Xlib's (which ended the process
/// and left the run unfinished).
#[test]
fn a_display_that_goes_away_mid_replay_ends_the_run_with_its_outcome_stored() {
    let mut display = Display::start(1280, 800);
    run_ok(display.reprise().args(["import", crate::harness::SAMPLE]));
    display.spawn_fixture("gone.log", &["--x", "200", "--y", "150"]);
    let replay = display
        .reprise()
        .args(["replay", "demo", "--speed", "0.25", "--strategy", "naive"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A step or two in: the run is stored and under way.
    std::thread::sleep(std::time::Duration::from_secs(4));
    display.kill_server();
    let out = crate::harness::wait_with_limit(replay, std::time::Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Failed (10), at once: the step is not tried again against nothing.
    assert_eq!(out.status.code(), Some(10), "{stderr}");
    assert!(
        !stderr.contains("XIO") && !stderr.contains("X connection"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the display's connection was lost"),
        "{stderr}"
    );
    let run: Value = serde_json::from_str(&run_ok(
        display.reprise().args(["runs", "show", "last", "--json"]),
    ))
    .unwrap();
    assert_eq!(run["run"]["outcome"]["outcome"], "failed", "{run}");
    assert!(run["run"]["ended"].is_string(), "{run}");
}

/// A recording made before command lines were kept (the committed sample)
/// cannot be launched: a clear refusal, nothing started.
#[test]
fn launch_refuses_a_recording_that_does_not_say_how_its_application_was_started() {
    let display = Display::start(1024, 768);
    run_ok(display.reprise().args(["import", crate::harness::SAMPLE]));
    let out = display
        .reprise()
        .args(["replay", "demo", "--launch", "--strategy", "naive"])
        .output()
        .unwrap();
    crate::harness::assert_fails(
        &out,
        2,
        &[
            "replay --launch: the recording does not say how",
            "was started",
        ],
        "",
    );
    let out = display
        .reprise()
        .args([
            "replay",
            "demo",
            "--launch",
            "--dry-run",
            "--strategy",
            "naive",
        ])
        .output()
        .unwrap();
    crate::harness::assert_fails(&out, 2, &["replay --launch"], "");
}

#[test]
fn dry_run_injects_nothing() {
    let mut display = Display::start(1280, 800);
    record_task(&mut display);
    let log = display.spawn_fixture("dry.log", &["--x", "200", "--y", "150"]);
    let said =
        run_ok(
            display
                .reprise()
                .args(["replay", "task", "--dry-run", "--strategy", "naive"]),
        );
    assert!(
        said.contains("injected nothing") && !said.contains("verified"),
        "a dry run claims no effect: {said}"
    );
    let received: Vec<Value> = fixture_log(&log)
        .into_iter()
        .filter(|entry| !matches!(entry["event"].as_str(), Some("started" | "layout")))
        .collect();
    assert!(
        received.is_empty(),
        "the fixture received nothing: {received:?}"
    );
    let (_, html) = display.last_report("dry.html");
    assert!(
        html.contains("class=\"badge dry_run\""),
        "every step is marked as a dry run"
    );
    assert!(
        html.contains("class=\"target\">("),
        "the report shows where each step would land"
    );
    assert!(
        html.contains("id=\"outcome\">dry run: ") && !html.contains("every step verified"),
        "a dry run's outcome claims nothing verified"
    );
}

/// `reprise runs` lists the replay runs, `runs show` tells one step by step,
/// and runs go by age (the retention, before each replay) and by count
/// (`runs prune --keep`), their reports with them.
#[test]
fn runs_are_listed_shown_and_pruned_by_age_and_by_count() {
    let mut display = Display::start(1280, 800);
    run_ok(display.reprise().args(["import", crate::harness::SAMPLE]));
    display.spawn_fixture("runs.log", &["--x", "200", "--y", "150"]);
    let said = run_ok(display.reprise().args(["runs"]));
    assert!(said.contains("no replay runs yet"), "{said}");
    let dry_run = |display: &Display, keep_days: &str| {
        let out = display
            .reprise()
            // No --strategy: the default, visual.
            .args(["replay", "demo", "--dry-run"])
            .env("REPRISE_RUNS_KEEP_DAYS", keep_days)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    dry_run(&display, "30");
    dry_run(&display, "30");
    let runs: Vec<Value> =
        serde_json::from_str(&run_ok(display.reprise().args(["runs", "--json"]))).unwrap();
    assert_eq!(runs.len(), 2);
    assert!(
        runs.iter().all(|run| run["recording_name"] == "demo"
            && run["strategy"] == "visual"
            && run["steps"].as_u64().is_some_and(|steps| steps > 0)),
        "{runs:#?}"
    );
    let table = run_ok(display.reprise().args(["runs", "--recording", "demo"]));
    assert_eq!(table.lines().count(), 3, "{table}");
    assert!(table.contains("dry run: "), "{table}");
    assert!(
        !table.contains("verified"),
        "a dry run verifies nothing: {table}"
    );
    let shown = run_ok(display.reprise().args(["runs", "show", "latest"]));
    let newest = runs[0]["id"].as_str().unwrap();
    assert!(
        shown.starts_with(&format!("run {newest} of recording \"demo\"")),
        "{shown}"
    );
    assert!(shown.contains("step 1/"), "{shown}");

    // The older run is made 40 days old: the next replay prunes it.
    let oldest = runs[1]["id"].as_str().unwrap();
    let conn = rusqlite::Connection::open(display.store()).unwrap();
    conn.execute(
        "UPDATE replay_runs SET started = '2020-01-01T00:00:00.000Z' WHERE id = ?1",
        [oldest],
    )
    .unwrap();
    drop(conn);
    let said = dry_run(&display, "30");
    assert!(
        said.contains("pruned 1 replay run older than 30 days"),
        "{said}"
    );
    let report = display
        .reprise()
        .args(["report", oldest, "-o", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(report.status.code(), Some(3), "{report:?}");
    // Kept for ever with 0.
    let said = dry_run(&display, "0");
    assert!(!said.contains("pruned"), "{said}");

    // By count: the newest one stays.
    let out = display.reprise().args(["runs", "prune"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = run_ok(
        display
            .reprise()
            .args(["runs", "prune", "--keep", "1", "--dry-run"]),
    );
    assert!(said.starts_with("would delete 2 runs"), "{said}");
    let said = run_ok(display.reprise().args(["runs", "prune", "--keep", "1"]));
    assert!(said.starts_with("deleted 2 runs"), "{said}");
    let runs: Vec<Value> =
        serde_json::from_str(&run_ok(display.reprise().args(["runs", "--json"]))).unwrap();
    assert_eq!(runs.len(), 1);
    let shown = run_ok(display.reprise().args(["runs", "show", "last"]));
    assert!(shown.contains(runs[0]["id"].as_str().unwrap()), "{shown}");
}

/// Records "slow" on the fixture: a press held for seconds (a slow drag)
/// on the list.
fn record_slow_hold(display: &mut Display) {
    display.spawn_fixture("abort.log", &["--x", "100", "--y", "100"]);
    let (ox, oy) = client_origin(display);
    let recorder = start_recorder(display, "slow", &["--stop-sequence", "none"]);
    let (x, y) = ((ox + 19).to_string(), (oy + 162).to_string());
    display.xdotool(&[
        "mousemove",
        &x,
        &y,
        "mousedown",
        "1",
        "sleep",
        "4",
        "mouseup",
        "1",
        "sleep",
        "0.5",
    ]);
    run_ok(std::process::Command::new("kill").args(["-INT", &recorder.id().to_string()]));
    assert!(
        wait_with_limit(recorder, Duration::from_secs(5))
            .status
            .success()
    );
}

/// Starts `reprise replay slow` and waits until it holds the button.
fn replay_holding_the_button(display: &Display) -> std::process::Child {
    let replay = display
        .reprise()
        .args(["replay", "slow", "--strategy", "naive"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the replay to press the button", || {
        let out = display
            .command("xinput")
            .args(["query-state", "Virtual core XTEST pointer"])
            .output()
            .ok()?;
        String::from_utf8_lossy(&out.stdout)
            .contains("button[1]=down")
            .then_some(())
    });
    replay
}

/// What the XTEST pointer holds down now.
fn xtest_pointer_state(display: &Display) -> String {
    run_ok(
        display
            .command("xinput")
            .args(["query-state", "Virtual core XTEST pointer"]),
    )
}

/// Replays a recording that holds the button, then does what `xdotool`
/// is given (as the person would, to abort): the replay is aborted within
/// 2 s, and nothing stays pressed.
fn aborted_with_nothing_held(how: &[&str]) {
    let mut display = Display::start(1024, 768);
    record_slow_hold(&mut display);
    // The replay holds the button, then the person takes over.
    let replay = replay_holding_the_button(&display);
    let acted = Instant::now();
    display.xdotool(how);
    let out = wait_with_limit(replay, Duration::from_secs(5));
    let latency = acted.elapsed();
    assert_fails(&out, 11, &["was aborted"], &how.join(" "));
    assert!(
        latency < Duration::from_secs(2),
        "the abort took {latency:?}"
    );
    let state = xtest_pointer_state(&display);
    assert!(!state.contains("=down"), "nothing stays pressed:\n{state}");
}

#[test]
fn moving_the_pointer_into_a_corner_aborts_with_nothing_held() {
    aborted_with_nothing_held(&["mousemove", "0", "0"]);
}

/// The abort keys, pressed while the replay holds the button (the keyboard
/// is listened to in a child process).
#[test]
fn the_abort_keys_abort_with_nothing_held() {
    aborted_with_nothing_held(&["key", "ctrl+alt+shift+q"]);
}

/// Issue 14, item 4: Ctrl-C, SIGTERM or SIGHUP during a replay left the
/// button it held down on the X server after Reprise exited.
#[test]
fn a_signal_during_a_replay_releases_what_it_holds() {
    let mut display = Display::start(1024, 768);
    record_slow_hold(&mut display);
    for signal in ["-INT", "-TERM", "-HUP"] {
        let replay = replay_holding_the_button(&display);
        run_ok(std::process::Command::new("kill").args([signal, &replay.id().to_string()]));
        let out = wait_with_limit(replay, Duration::from_secs(5));
        assert_fails(&out, 11, &["was aborted"], signal);
        let state = xtest_pointer_state(&display);
        assert!(
            !state.contains("=down"),
            "{signal}: nothing stays pressed:\n{state}"
        );
    }
}

/// The number xcalc shows, read from its window by `reprise segment --describe`.
fn xcalc_display(display: &Display) -> String {
    let window = display.find_window("XCalc");
    display.xdotool(&["windowactivate", "--sync", &window.to_string()]);
    let shot = display.active_window_shot("xcalc.png");
    let segments: Value = serde_json::from_str(&run_ok(
        display.reprise().env("OMP_THREAD_LIMIT", "1").args([
            "segment",
            shot.to_str().unwrap(),
            "--describe",
            "--json",
        ]),
    ))
    .unwrap();
    // The display is the text at the top right of the window.
    segments
        .as_array()
        .unwrap()
        .iter()
        .filter(|segment| segment["kind"] == "text" && segment["rect"]["y"].as_u64().unwrap() < 30)
        .max_by_key(|segment| segment["rect"]["x"].as_u64().unwrap())
        .and_then(|segment| segment["description"].as_str())
        .unwrap_or("")
        .to_owned()
}

/// xcalc (no accessibility tree) at +100+100 computes 1 + 2 = while it is
/// recorded as "calc"; returns where its client area is.
fn record_one_plus_two(display: &mut Display) -> (i32, i32) {
    record_one_plus_two_at(display, "+100+100")
}

/// [`record_one_plus_two`] with xcalc at `geometry` (`+X+Y`).
fn record_one_plus_two_at(display: &mut Display, geometry: &str) -> (i32, i32) {
    display.spawn("xcalc", &["-geometry", geometry]);
    let window = display.wait_for_window("XCalc");
    let (x, y, _, _) = display.window_rect(window);
    let recorder = start_recorder(display, "calc", &[]);
    // xcalc's keys in its client area: 1, +, 2 and = (the layout of Debian's xcalc).
    for (dx, dy) in [(69, 362), (201, 362), (113, 362), (201, 392)] {
        let (kx, ky) = ((x + dx).to_string(), (y + dy).to_string());
        display.xdotool(&["mousemove", &kx, &ky, "click", "1", "sleep", "0.2"]);
    }
    display.xdotool(&["key", "ctrl", "ctrl", "ctrl"]);
    assert!(
        wait_with_limit(recorder, Duration::from_secs(10))
            .status
            .success()
    );
    assert_eq!(
        xcalc_display(display),
        "text \"3\"",
        "the recorded session computed 1 + 2"
    );
    (x, y)
}

#[test]
fn naive_replay_computes_on_xcalc() {
    let mut display = Display::start(1024, 768);
    let (x, y) = record_one_plus_two(&mut display);
    // Cleared (AC), the same xcalc computes 3 again from the naive replay.
    let (ax, ay) = ((x + 201).to_string(), (y + 92).to_string());
    display.xdotool(&["mousemove", &ax, &ay, "click", "1", "sleep", "0.3"]);
    assert_eq!(xcalc_display(&display), "text \"0\"");
    run_unverified(
        display
            .reprise()
            .args(["replay", "calc", "--speed", "2", "--strategy", "naive"]),
        None,
    );
    assert_eq!(xcalc_display(&display), "text \"3\"");
}

/// An application with no accessibility tree, moved: the visual rung finds
/// each key by what it reads on it (a lone digit or operator glyph), and
/// xcalc computes 3 again.
#[test]
fn visual_replay_computes_on_a_moved_xcalc_that_has_no_tree() {
    let mut display = Display::start(1024, 768);
    record_one_plus_two(&mut display);
    computes_three_again_at(&mut display, "+420+260");
}

/// A fresh xcalc at `geometry` shows 0, and after a visual replay of "calc",
/// 3: completed, every step verified (0), or some whose effect the
/// recording's frames do not show (12: a key's redraw can fall between two
/// frames); never a failed or refused step. xcalc is the judge.
fn computes_three_again_at(display: &mut Display, geometry: &str) {
    display.stop_apps();
    display.spawn("xcalc", &["-geometry", geometry]);
    display.wait_for_window("XCalc");
    assert_eq!(xcalc_display(display), "text \"0\"", "{geometry}");
    let out = display
        .reprise()
        .env("OMP_THREAD_LIMIT", "1")
        .args(["replay", "calc", "--strategy", "visual", "--speed", "2"])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 12)),
        "{geometry}: exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(xcalc_display(display), "text \"3\"", "{geometry}");
}

/// Two monitors: xcalc, which has no accessibility tree, is recorded on the
/// second monitor and replayed where its window is now: on the first, then
/// at another place on the second. The recording's frames hold both
/// monitors (the keys' fingerprints come from the second), and so do the
/// replay's; xcalc is the judge.
#[test]
fn a_task_recorded_on_the_second_monitor_is_replayed_where_its_window_is_now() {
    let mut display = Display::start_two_monitors(800, 600);
    record_one_plus_two_at(&mut display, "+900+100");
    let shown = run_ok(display.reprise().args(["show", "calc"]));
    for says in [
        "screen 1600x600 at scale 1",
        "2 monitors: 1 \"DUMMY0\" 800x600 at 0,0 (primary); 2 \"DUMMY1\" 800x600 at 800,0",
        "(XCalc) at 901,",
        "on monitor 2",
    ] {
        assert!(shown.contains(says), "`show` says {says:?}:\n{shown}");
    }
    for geometry in ["+100+100", "+1300+150"] {
        computes_three_again_at(&mut display, geometry);
    }
}

#[test]
fn a_key_held_before_the_replay_is_refused_or_released_when_asked() {
    let mut display = Display::start(1024, 768);
    run_ok(display.reprise().args(["import", crate::harness::SAMPLE]));
    let log = display.spawn_fixture("held.log", &["--x", "200", "--y", "150"]);
    let keyboard = |display: &Display| {
        run_ok(
            display
                .command("xinput")
                .args(["query-state", "Virtual core XTEST keyboard"]),
        )
    };
    // Another program leaves Shift down: the replay would type capitals.
    display.xdotool(&["keydown", "shift"]);
    let out = display
        .reprise()
        .args(["replay", "demo", "--speed", "3", "--strategy", "naive"])
        .output()
        .unwrap();
    assert_fails(
        &out,
        2,
        &[
            "Shift held down on this display before the replay",
            "--release-held-keys",
        ],
        "",
    );
    assert!(keyboard(&display).contains("=down"), "left as it was");
    let before = received(&fixture_log(&log));
    assert!(
        !before
            .iter()
            .any(|line| line.starts_with("click")
                || (line.starts_with("text") && line != "text \"\"")),
        "nothing was injected: {before:?}"
    );
    // Asked to: released, then replayed (naive, so unverified).
    run_unverified(
        display.reprise().args([
            "replay",
            "demo",
            "--speed",
            "3",
            "--release-held-keys",
            "--strategy",
            "naive",
        ]),
        None,
    );
    assert!(
        !keyboard(&display).contains("=down"),
        "{}",
        keyboard(&display)
    );
    let got = received(&fixture_log(&log));
    assert!(
        got.iter().any(|line| line == "text \"alice\""),
        "typed without Shift: {got:?}"
    );
}

/// Issue 38: a batch of five rows on a third-party GTK 3 window (an entry
/// and a Save button that adds the entry's text as a line of a file), the
/// window restarted before each row. SIGTERM in row 3, after its text was
/// typed and before its Save; `--resume` goes on with row 3 where it
/// stopped, its text not typed again, and does rows 4 and 5. Judged by the
/// application's file: each row's text once, in order.
#[test]
fn a_batch_stopped_by_sigterm_in_row_3_resumes_there_and_does_each_row_once() {
    let display = crate::identity::run_scenario("batch-resume.sh", 1280, 800);
    let file = |name: &str| std::fs::read_to_string(display.dir.path().join(name));
    let said = |case: &str| crate::identity::result(&display, case, "err");
    assert_eq!(
        file("first.saved").ok().as_deref(),
        Some("row one\nrow two\n"),
        "{}",
        said("first")
    );
    assert!(said("first").contains("row 3 of 5: "), "{}", said("first"));
    assert_ne!(crate::identity::result(&display, "first", "code"), "0");
    assert_eq!(
        file("batch.saved").ok().as_deref(),
        Some("row one\nrow two\nrow three\nrow four\nrow five\n"),
        "{}",
        said("resumed")
    );
    let resumed = said("resumed");
    for row in [1, 2] {
        assert!(
            resumed.contains(&format!("row {row} of 5: done in run")),
            "{resumed}"
        );
    }
    // Steps made by the resumed batch, by their index in their row: row 3
    // its Save alone, rows 4 and 5 all three.
    let steps: Vec<u64> = crate::identity::result(&display, "resumed", "stdout")
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["type"] == "step")
        .filter_map(|line| line["step"].as_u64())
        .collect();
    assert_eq!(steps, [2, 0, 1, 2, 0, 1, 2], "{resumed}");
    assert_eq!(
        crate::identity::result(&display, "resumed", "code"),
        "0",
        "{resumed}"
    );
}

#[test]
fn a_replay_killed_outright_resumes_without_typing_twice_and_refuses_to_guess_over_a_half_typed_step()
 {
    let display = crate::identity::run_scenario("kill-resume.sh", 1280, 800);
    let file = |name: &str| std::fs::read_to_string(display.dir.path().join(name)).ok();
    let result = |case: &str, what: &str| crate::identity::result(&display, case, what);
    // Killed after the text's keys were all sent, while its effect was
    // checked: the store kept the step as done, unchecked.
    let mark = result("made", "mark");
    assert!(
        mark.starts_with("unverified\n") && mark.contains("before its effect was checked"),
        "{mark}"
    );
    assert_eq!(file("made.at-kill").as_deref(), Some("hello kill"));
    // The resume went on with the Save: the entry and the saved line hold
    // the text once. The typed step's effect was never checked, and the
    // run says so (12, done unverified), not "verified".
    assert_eq!(result("made", "code"), "12", "{}", result("made", "err"));
    assert_eq!(file("made.saved.entry").as_deref(), Some("hello kill"));
    assert_eq!(file("made.saved").as_deref(), Some("hello kill\n"));
    // Killed while the keys were being sent: part of the text typed, the
    // step interrupted; the resume refuses, naming both ways on, and
    // types nothing more and saves nothing.
    let mark = result("begun", "mark");
    assert!(mark.starts_with("interrupted\n"), "{mark}");
    let typed = file("begun.at-kill").unwrap_or_default();
    assert!(
        !typed.is_empty() && "hello kill".starts_with(&typed) && typed != "hello kill",
        "the kill came mid-text: {typed:?}"
    );
    assert_eq!(result("begun", "code"), "2");
    let refused = result("begun", "err");
    assert!(
        refused.contains("--from 2") && refused.contains("--from 3"),
        "{refused}"
    );
    assert_eq!(file("begun.saved.entry"), Some(typed));
    assert_eq!(file("begun.saved"), None);
}
