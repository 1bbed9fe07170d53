//! `reprise replay --strategy visual`, offline, on screens that drifted since
//! the recording: the committed sample recording (made on a 1280x800 display
//! with the fixture's window at 200,150) replayed on a fixture that moved,
//! changed theme, scale, size and order; the fixture's log says what it got.

use reprise::testing::{Reply, ScriptedServer, stand_in_model};
use serde_json::Value;

use crate::harness::{Display, SAMPLE, assert_unverified, fixture_log, marker_pixels, run_ok};

/// What the recorded task must make the fixture receive.
const EXPECTED: [&str; 6] = [
    "click User name",
    "click Remember me",
    "click row:Gamma",
    "double_click row:Gamma",
    "click Save",
    "text alice",
];

/// The controls clicked and the text field's final value.
fn received(log: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut text = String::new();
    for entry in log {
        match entry["event"].as_str() {
            Some(event @ ("click" | "double_click")) => {
                let line = format!("{event} {}", entry["control"].as_str().unwrap_or("nothing"));
                // egui reports the second click of a double-click as a click too.
                if out.last() != Some(&line) || event == "double_click" {
                    out.push(line);
                }
            }
            Some("text") => text = entry["value"].as_str().unwrap_or("").to_owned(),
            _ => {}
        }
    }
    out.push(format!("text {text}"));
    out
}

fn display_with_sample() -> Display {
    let display = Display::start(1280, 800);
    run_ok(display.reprise().args(["import", SAMPLE]));
    display
}

/// Replays the sample on the fixture started with `args`; returns the exit
/// code, stderr and what the fixture received.
fn replay(
    display: &mut Display,
    fixture_args: &[&str],
    replay_args: &[&str],
) -> (Option<i32>, String, Vec<String>) {
    let log = display.spawn_fixture("visual.log", fixture_args);
    let out = display
        .reprise()
        .env("OMP_THREAD_LIMIT", "1")
        .args(["replay", "demo", "--strategy", "visual", "--speed", "3"])
        .args(replay_args)
        .output()
        .unwrap();
    display.stop_apps();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        received(&fixture_log(&log)),
    )
}

/// The sample replayed by the visual strategy, the model describing.
const LLM_REPLAY: [&str; 6] = [
    "replay",
    "demo",
    "--strategy",
    "visual",
    "--describer",
    "llm",
];

#[test]
fn visual_offline_succeeds_where_the_screen_drifted() {
    let mut display = display_with_sample();
    for fixture_args in [
        &["--x", "420", "--y", "300"][..],
        &["--theme", "dark", "--x", "300", "--y", "200"],
        &["--extra-row", "--swap-buttons", "--x", "150", "--y", "120"],
        &[
            "--scale", "1.25", "--width", "520", "--height", "500", "--x", "500", "--y", "100",
        ],
    ] {
        let (code, stderr, got) = replay(&mut display, fixture_args, &[]);
        // The click into the user name field shows nothing to check in the
        // recording; every other step is verified.
        assert_unverified(code, &stderr, Some(1));
        assert!(stderr.contains("5 verified"), "{fixture_args:?}: {stderr}");
        let expected: Vec<String> = EXPECTED.iter().map(|line| (*line).to_owned()).collect();
        assert_eq!(got, expected, "{fixture_args:?}");
    }
    // No model was called: the run's summary says so.
    let usage = run_ok(display.reprise().args(["llm", "usage", "--json"]));
    assert_eq!(usage.trim(), "[]");
}

#[test]
fn visual_refuses_an_ambiguous_target_rather_than_click_the_wrong_one() {
    let mut display = display_with_sample();
    let (code, stderr, got) = replay(&mut display, &["--duplicate-save"], &[]);
    assert_eq!(code, Some(10), "{stderr}");
    assert!(
        stderr.contains("refusing to guess") && stderr.contains("button \"save\""),
        "{stderr}"
    );
    assert!(
        !got.iter().any(|line| line.contains("Save")),
        "no Save was clicked: {got:?}"
    );
    assert!(
        got.contains(&"double_click row:Gamma".to_owned()),
        "the steps before it ran: {got:?}"
    );
    // The report says what the refused step looked for (the recorded
    // description and crop) and the look-alikes it could not tell apart,
    // with their scores, marked on the frame.
    let (report, html) = display.last_report("ambiguous.html");
    let failed = html
        .split("<div class=\"step\"")
        .skip(1)
        .find(|step| step.contains("<span class=\"badge failed\">"))
        .expect("a failed step");
    assert!(
        failed.contains("class=\"sought\">button &quot;save&quot;</td>"),
        "{failed}"
    );
    let candidates: Vec<&str> = failed.split("<tr class=\"candidate\">").skip(1).collect();
    assert!(candidates.len() >= 2, "{failed}");
    for candidate in &candidates[..2] {
        assert!(
            candidate.starts_with("<td>")
                && candidate.contains("button &quot;save&quot;</td><td>text</td><td>1.00</td>"),
            "{candidate}"
        );
    }
    assert!(failed.contains("<figure class=\"recorded\">"), "{failed}");
    assert!(
        failed.matches("<g class=\"candidate\">").count() >= 2,
        "the candidates are marked on the frame"
    );
    // Tall enough for the whole page: the refused step is the fifth.
    let (dom, shot) = crate::harness::chromium_render(&report, 1200, 10000);
    if let Ok(dir) = std::env::var("REPRISE_DOCS_SHOTS") {
        shot.save(std::path::Path::new(&dir).join("report-refused.png"))
            .unwrap();
    }
    assert!(
        dom.contains("closest candidates, not taken") && dom.contains("looking for"),
        "{dom}"
    );
    let blue = shot
        .pixels()
        .filter(|pixel| {
            let [r, g, b, _] = pixel.0;
            r < 60 && (80..=120).contains(&g) && b > 170
        })
        .count();
    assert!(blue > 50, "the candidates' boxes are drawn ({blue} pixels)");
}

#[test]
fn require_verified_stops_at_the_first_step_it_cannot_check() {
    let mut display = display_with_sample();
    let (code, stderr, got) = replay(
        &mut display,
        &["--x", "300", "--y", "250"],
        &["--require-verified"],
    );
    assert_eq!(code, Some(10), "{stderr}");
    assert!(
        stderr.contains("failed at step 2") && stderr.contains("--require-verified is set"),
        "{stderr}"
    );
    // The field was clicked; nothing after it was done.
    assert!(got.contains(&"click User name".to_owned()), "{got:?}");
    assert!(
        !got.iter().any(|line| line.contains("alice")
            || line.contains("Remember")
            || line.contains("Save")),
        "{got:?}"
    );
}

#[test]
fn replace_changes_the_typed_text_without_a_model() {
    let mut display = display_with_sample();
    let (code, stderr, got) = replay(
        &mut display,
        &["--x", "300", "--y", "250"],
        &["--replace", "alice=bob"],
    );
    assert_unverified(code, &stderr, Some(1));
    assert_eq!(got.last().unwrap(), "text bob");
    // Instructions in plain language need a model: without one, a clear refusal.
    let out = display
        .reprise()
        .args([
            "replay",
            "demo",
            "--strategy",
            "visual",
            "--instructions",
            "type bob as the user name",
        ])
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("GEMINI_API_KEY")
        .env_remove("REPRISE_OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no model provider is configured"));
}

#[test]
fn a_step_with_no_visible_effect_is_retried_then_fails_clearly() {
    let mut display = display_with_sample();
    // The checkbox ignores clicks: the recording shows it ticked, the replay cannot.
    let (code, stderr, got) = replay(&mut display, &["--inert-checkbox"], &["--max-retries", "1"]);
    assert_eq!(code, Some(10), "{stderr}");
    assert!(
        stderr.contains("no visible effect")
            && stderr.contains("though the recording shows a change"),
        "{stderr}"
    );
    assert!(
        !got.iter()
            .any(|line| line.contains("Gamma") || line.contains("Save")),
        "it stopped there: {got:?}"
    );
    // The report tells the step's last error as why it stopped, once, and
    // its first attempt folded inside it as a retry.
    let (_, html) = display.last_report("inert.html");
    let errors: Vec<&str> = html
        .split("<td class=\"error failure\">")
        .skip(1)
        .filter_map(|rest| rest.split("</td>").next())
        .collect();
    assert!(
        errors.len() == 1 && errors[0].contains("no visible effect"),
        "{errors:?}"
    );
    assert!(
        html.contains("<summary>2 attempts: 1 retry, then the last failed</summary>"),
        "{html}"
    );
}

#[test]
fn visual_with_the_llm_describer_asks_the_model_in_batches_then_reuses_its_answers() {
    use reprise_strategies::describe::TextReader as _;
    let mut display = display_with_sample();
    let mut reader = reprise::vision::ocr::TesseractReader::new().unwrap();
    let server = ScriptedServer::answering(stand_in_model(move |crop| reader.read(crop)));
    // Six images per request: the window and five elements.
    let config = display.dir.path().join("config.toml");
    std::fs::write(&config, "[llm.openai]\nmax_images = 6\n").unwrap();
    let mut run = || {
        let log = display.spawn_fixture("llm.log", &["--x", "420", "--y", "300"]);
        let out = display
            .reprise_with_model(&server.url)
            .arg("--config")
            .arg(&config)
            .args(LLM_REPLAY)
            .args(["--speed", "3"])
            .output()
            .unwrap();
        display.stop_apps();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), stderr, received(&fixture_log(&log)))
    };
    let expected: Vec<String> = EXPECTED.iter().map(|line| (*line).to_owned()).collect();
    let (code, stderr, got) = run();
    assert_unverified(code, &stderr, Some(1));
    assert_eq!(got, expected);
    // The model was asked, in batches of at most six images: the window and
    // the elements, several batches per window.
    let requests = server.received();
    let images: Vec<usize> = requests
        .iter()
        .map(|request| request.body.matches("data:image/png;base64,").count())
        .collect();
    assert!(images.len() > 2, "{images:?}");
    assert!(images.iter().all(|&n| (2..=6).contains(&n)), "{images:?}");
    assert!(
        images.iter().filter(|&&n| n == 6).count() >= 2,
        "full batches: {images:?}"
    );
    // Again on the same screen: the same clicks, and the descriptions come
    // from the segmentation cache and the response cache. (A few requests
    // remain when a live frame differs from the first run's: it is segmented
    // and described again, and batches unlike any before go out.)
    let (code, stderr, got) = run();
    assert_unverified(code, &stderr, Some(1));
    assert_eq!(got, expected);
    let again = server.received().len() - requests.len();
    assert!(
        again * 3 < requests.len(),
        "{again} new requests after {}",
        requests.len()
    );

    // A model whose answers cannot be used (issue 14, item 17: exit 1):
    // the providers failed, exit 5, and nothing was done. A store of its
    // own, so that no cached description answers instead.
    let nonsense = ScriptedServer::start(vec![Reply::json(
        200,
        serde_json::json!({"choices": [{"message": {"content": "I see a window."}}], "usage": {"prompt_tokens": 10, "completion_tokens": 4}}),
    )]);
    let fresh = display.dir.path().join("fresh.sqlite");
    run_ok(
        display
            .reprise()
            .env("REPRISE_STORE", &fresh)
            .args(["import", SAMPLE]),
    );
    let log = display.spawn_fixture("nonsense.log", &["--x", "420", "--y", "300"]);
    let out = display
        .reprise_with_model(&nonsense.url)
        .env("REPRISE_STORE", &fresh)
        .args(LLM_REPLAY)
        .output()
        .unwrap();
    display.stop_apps();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("the model could not describe"), "{stderr}");
    let got = received(&fixture_log(&log));
    assert_eq!(got, ["text "], "nothing was done ({stderr})");
}

#[test]
fn json_lines_give_each_step_as_it_ends_then_the_outcome() {
    let mut display = display_with_sample();
    let log = display.spawn_fixture("json.log", &["--x", "300", "--y", "250"]);
    let out = display
        .reprise()
        .env("OMP_THREAD_LIMIT", "1")
        .args([
            "replay",
            "demo",
            "--strategy",
            "visual",
            "--speed",
            "3",
            "--json",
        ])
        .output()
        .unwrap();
    display.stop_apps();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_unverified(out.status.code(), &stderr, Some(1));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{line}: {err}")))
        .collect();
    let (outcome, steps) = lines.split_last().expect("some lines");
    assert_eq!(steps.len(), 6, "{lines:?}");
    for (idx, step) in steps.iter().enumerate() {
        assert_eq!(
            (step["type"].as_str(), step["step"].as_u64()),
            (Some("step"), Some(idx as u64))
        );
        assert_eq!(step["of"], 6);
        assert!(
            matches!(step["status"].as_str(), Some("verified" | "unverified")),
            "{step}"
        );
    }
    assert_eq!(steps[2]["action"], "type \"alice\"");
    assert_eq!(
        (
            outcome["type"].as_str(),
            outcome["outcome"].as_str(),
            outcome["unverified"].as_u64()
        ),
        (Some("outcome"), Some("completed"), Some(1))
    );
    assert_eq!(received(&fixture_log(&log)), EXPECTED);
}

/// Lines of a child's pipe, as they come, for a bounded wait on each.
fn lines_of(pipe: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead as _;
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

/// Reads `lines` into `seen` until one that `wanted` accepts, within a
/// minute.
fn read_until(
    lines: &std::sync::mpsc::Receiver<String>,
    seen: &mut Vec<String>,
    what: &str,
    wanted: impl Fn(&str) -> bool,
) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let left = until.saturating_duration_since(std::time::Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                let found = wanted(&line);
                seen.push(line);
                if found {
                    return;
                }
            }
            Err(err) => panic!("no line with {what} within a minute ({err}): {seen:#?}"),
        }
    }
}

/// The HTML of step `number`'s section of a report.
fn step_of(html: &str, number: usize) -> &str {
    html.split(&format!("<div class=\"step\" id=\"step-{number}\">"))
        .nth(1)
        .unwrap_or_else(|| panic!("no step {number}"))
        .split("<div class=\"step\"")
        .next()
        .unwrap()
}

/// One story per step (#42): a replay whose window comes late (a step
/// retried, then done), goes away (a step failed with no window) and comes
/// back with two Save buttons (a step refused). The report, the lines and
/// `--json` tell each step once: what it was meant to do, how it was found
/// and checked or why it stopped, its retries folded inside it; a step with
/// no window shows the screen near where it aimed, not the whole desktop.
#[test]
fn each_step_is_told_as_one_story_in_the_report_the_lines_and_json() {
    let mut display = display_with_sample();
    let mut replay = display
        .reprise()
        .env("OMP_THREAD_LIMIT", "1")
        .env("REPRISE_LOG", "warn")
        .args(["replay", "demo", "--strategy", "visual"])
        .args(["--skip-failures", "--max-retries", "1", "--json"])
        // The recorded pauses between steps doubled: the window goes away
        // between step 4's line and step 5's press with room to spare (0.4 s
        // recorded, most of it spent checking step 4's effect).
        .args(["--speed", "0.5"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (steps, stderr) = (
        lines_of(replay.stdout.take().unwrap()),
        lines_of(replay.stderr.take().unwrap()),
    );
    let (mut lines, mut said) = (Vec::new(), Vec::new());
    let twins = ["--duplicate-save", "--x", "300", "--y", "200"];
    // Step 2's first attempt ends with no window; its second finds one.
    read_until(
        &stderr,
        &mut said,
        "a first attempt with no window",
        |line| line.contains("no window is the active window"),
    );
    let first = display.spawn_fixture("story-1.log", &twins);
    // After step 4, the window goes away (before step 5's press, which
    // waits the recorded pause): step 5 fails with none.
    read_until(&steps, &mut lines, "step 4", |line| {
        line.contains("\"step\":3")
    });
    display.stop_apps();
    // After step 5, it comes back with two Save buttons: step 6 is refused.
    read_until(&steps, &mut lines, "step 5", |line| {
        line.contains("\"step\":4")
    });
    let second = display.spawn_fixture("story-2.log", &twins);
    let out = crate::harness::wait_with_limit(replay, std::time::Duration::from_secs(60));
    // The rest, up to the pipes' ends (bounded: nothing else holds them).
    for (receiver, seen) in [(&steps, &mut lines), (&stderr, &mut said)] {
        while let Ok(line) = receiver.recv_timeout(std::time::Duration::from_secs(5)) {
            seen.push(line);
        }
    }
    assert_eq!(
        out.status.code(),
        Some(10),
        "the refused step ends the run: {said:#?}"
    );
    display.stop_apps();
    let got = received(&fixture_log(&first));
    assert_eq!(
        got,
        ["click User name", "click Remember me", "text alice"],
        "the first window got steps 2 to 4"
    );
    let got = received(&fixture_log(&second));
    assert!(
        !got.iter().any(|line| line.contains("Save")),
        "no Save was pressed: {got:?}"
    );

    // --json: step 2 was done after one retry; its reason is its check,
    // not the first attempt's error.
    let json: Vec<Value> = lines
        .iter()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let step = |idx: u64| {
        json.iter()
            .find(|line| line["type"] == "step" && line["step"] == idx)
            .unwrap_or_else(|| panic!("no line of step {}", idx + 1))
    };
    let retried = step(1);
    assert_eq!(retried["status"], "unverified", "{retried}");
    assert_eq!(retried["retries"], 1, "{retried}");
    assert_eq!(retried["why"], retried["check"], "{retried}");
    assert!(
        !retried["why"].as_str().unwrap().contains("no window"),
        "{retried}"
    );
    let no_window = step(4);
    assert_eq!(no_window["status"], "skipped", "{no_window}");
    assert!(
        no_window["why"].as_str().unwrap().contains("no window"),
        "{no_window}"
    );
    let refused = step(5);
    assert_eq!(
        refused["meant"], "singleclick left at (230, 387)",
        "{refused}"
    );
    assert!(
        refused["why"]
            .as_str()
            .unwrap()
            .starts_with("refusing to guess"),
        "{refused}"
    );

    // The lines a person reads, as `runs show` prints them.
    let shown = run_ok(display.reprise().args(["runs", "show", "last"]));
    let line = |number: usize| {
        shown
            .lines()
            .find(|line| line.starts_with(&format!("step {number} ")))
            .unwrap_or_else(|| panic!("no step {number} in {shown}"))
    };
    assert!(
        line(2).contains("… unverified (") && line(2).contains("; after 1 retry; "),
        "{shown}"
    );
    assert!(!line(2).contains("no window"), "{shown}");
    assert!(
        line(6).starts_with("step 6 singleclick left at (230, 387) … failed (refusing to guess"),
        "{shown}"
    );

    // The report: one story per step.
    let (report, html) = display.last_report("story.html");
    assert!(!html.contains("(no step decided)"), "every step is named");
    let two = step_of(&html, 2);
    assert!(
        two.contains("<span class=\"badge unverified\">unverified</span> <small class=\"retried\">after 1 retry</small>"),
        "{two}"
    );
    assert!(
        !two.contains("class=\"error"),
        "a retry is not an error of a done step: {two}"
    );
    assert!(
        two.contains(
            "<details class=\"attempts\"><summary>2 attempts: 1 retry, then done</summary>"
        ) && two.contains("<li class=\"retry\">the press was made in"),
        "{two}"
    );
    let five = step_of(&html, 5);
    assert!(
        five.contains("<span class=\"badge skipped\">skipped</span>")
            && five.contains("<td>why it stopped</td><td class=\"error failure\">"),
        "{five}"
    );
    assert!(
        five.contains(
            "<figcaption>before (no window: the screen near where it aimed)</figcaption>"
        ),
        "{five}"
    );
    // The 480x320 region around the point (with the crop's margin, inside
    // the screen), not the 1280x800 desktop.
    let before = five.split("<figure class=\"before\">").nth(1).unwrap();
    let shown: Vec<u32> = crate::harness::view_boxes(before)[0]
        .split(' ')
        .map(|number| number.parse().unwrap())
        .collect();
    assert!(
        (400..=528).contains(&shown[2]) && (300..=368).contains(&shown[3]),
        "{shown:?}"
    );
    let six = step_of(&html, 6);
    assert!(
        six.starts_with("<h2>Step 6: singleclick left at (230, 387) <span class=\"badge failed\">"),
        "{six}"
    );
    assert!(
        six.contains("class=\"error failure\">refusing to guess"),
        "{six}"
    );

    // As a person sees it, in a browser; the picture kept for review.
    let (dom, shot) = crate::harness::chromium_render(&report, 1200, 9000);
    assert!(
        dom.contains("after 1 retry") && dom.contains("why it stopped"),
        "the story is on the page"
    );
    let dir =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts/report");
    std::fs::create_dir_all(&dir).unwrap();
    shot.save(dir.join("story.png")).unwrap();
    assert!(marker_pixels(&shot) > 50, "where steps aimed is marked");
}
