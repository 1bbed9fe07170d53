//! `reprise record` on a real display, with a scripted user driving xdotool
//! and real applications (xcalc and xterm from Debian).

use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::harness::{
    Display, assert_success, chromium_render, marker_pixels, reprise_with_store, run_ok, wait_for,
    wait_with_limit,
};

/// Starts the recorder and waits until it is receiving input: the scripted
/// user wiggles the pointer until the store holds an event.
pub fn start_recorder(display: &Display, name: &str, extra: &[&str]) -> Child {
    start_recorder_with(display, name, extra, &[])
}

/// [`start_recorder`] with more environment for the recorder.
fn start_recorder_with(
    display: &Display,
    name: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Child {
    let mut child = display
        .reprise()
        .args(["record", "--name", name])
        .args(extra)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start reprise record");
    let mut wiggle = 0;
    wait_for("the recorder to receive input", || {
        if let Ok(Some(_)) = child.try_wait() {
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
            }
            panic!("the recorder exited before it received input:\n{stderr}");
        }
        wiggle += 1;
        display.xdotool(&["mousemove", &(5 + wiggle % 2).to_string(), "5"]);
        let out = display.reprise().args(["list", "--json"]).output().ok()?;
        let list: Value = serde_json::from_slice(&out.stdout).ok()?;
        let entry = list
            .as_array()?
            .iter()
            .find(|entry| entry["name"] == name)?;
        (entry["n_events"].as_i64()? > 0).then_some(())
    });
    child
}

fn show_json(display: &Display, name: &str) -> Value {
    serde_json::from_str(&run_ok(display.reprise().args(["show", name, "--json"]))).unwrap()
}

/// Every node of the trees, depth first.
fn all_nodes(trees: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    fn walk<'a>(node: &'a Value, out: &mut Vec<&'a Value>) {
        out.push(node);
        if let Some(children) = node["children"].as_array() {
            for child in children {
                walk(child, out);
            }
        }
    }
    for tree in trees.as_array().unwrap() {
        walk(tree, &mut out);
    }
    out
}

/// The images of an export file, by content hash, decoded, read as a tool
/// other than Reprise would read it: `unzip` tests the zip and extracts it,
/// the manifest names each image's entry, and a patch is pasted onto its key
/// frame at the place the manifest gives. Also how many frames the export
/// keeps as patches.
fn export_images(
    path: &std::path::Path,
) -> (std::collections::HashMap<String, image::RgbaImage>, usize) {
    let tested = std::process::Command::new("unzip")
        .arg("-tq")
        .arg(path)
        .output()
        .unwrap();
    assert!(
        tested.status.success(),
        "unzip -t: {}",
        String::from_utf8_lossy(&tested.stdout)
    );
    let dir = tempfile::tempdir().unwrap();
    let extracted = std::process::Command::new("unzip")
        .arg("-q")
        .arg(path)
        .arg("-d")
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(extracted.success());
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["format"], "reprise-export");
    assert_eq!(manifest["version"], 2);
    let read = |entry: &Value| {
        let png = std::fs::read(dir.path().join(entry["entry"].as_str().unwrap())).unwrap();
        image::load_from_memory(&png).unwrap().into_rgba8()
    };
    let entries = manifest["images"].as_object().unwrap();
    let mut images: std::collections::HashMap<String, image::RgbaImage> = entries
        .iter()
        .filter(|(_, entry)| entry["patch_of"].is_null())
        .map(|(hash, entry)| (hash.clone(), read(entry)))
        .collect();
    let mut patches = 0;
    for (hash, entry) in entries {
        let place = &entry["patch_of"];
        if place.is_null() {
            continue;
        }
        let mut frame = images[place["key_frame"].as_str().unwrap()].clone();
        image::imageops::replace(
            &mut frame,
            &read(entry),
            place["x"].as_i64().unwrap(),
            place["y"].as_i64().unwrap(),
        );
        images.insert(hash.clone(), frame);
        patches += 1;
    }
    for (hash, frame) in &images {
        assert!(
            reprise_models::screenshot::content_hash_matches(
                hash,
                frame.width(),
                frame.height(),
                frame.as_raw()
            ),
            "image {hash} read from the zip is the frame it names"
        );
    }
    (images, patches)
}

fn near(value: &Value, expected: i32) -> bool {
    value
        .as_f64()
        .is_some_and(|v| (v - f64::from(expected)).abs() <= 1.0)
}

/// The recorder's own capture (forced through its kept X11 connection)
/// reads only what the display says was drawn and pastes it onto its last
/// frame: the frames it stores must be the pictures a whole capture gives.
#[test]
fn frames_pasted_from_what_was_drawn_are_what_a_whole_capture_shows() {
    let mut display = Display::start(1024, 700);
    display.spawn(
        "xterm",
        &["-geometry", "60x20+100+100", "-title", "reprise-xterm"],
    );
    let xterm = display.wait_for_window("XTerm");
    let (x, y, _, _) = display.window_rect(xterm);
    let recorder = start_recorder_with(&display, "drawn", &[], &[("REPRISE_CAPTURE", "x11")]);
    let (x, y) = ((x + 80).to_string(), (y + 80).to_string());
    display.xdotool(&["mousemove", &x, &y, "click", "1"]);
    display.xdotool(&["type", "--delay", "60", "echo drawn frames"]);
    display.xdotool(&["key", "Return"]);
    // Time for the last drawing's frame, then the stop sequence, which draws
    // nothing.
    display.xdotool(&["sleep", "2", "key", "ctrl", "ctrl", "ctrl"]);
    let out = wait_with_limit(recorder, Duration::from_secs(10));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shot = display.store().with_file_name("now.png");
    run_ok(
        display
            .reprise()
            .args(["screenshot", "-o", shot.to_str().unwrap()]),
    );
    let now = image::open(&shot).unwrap().into_rgba8();
    let store = reprise::store::Store::open_to_read(&display.store()).unwrap();
    let bundle = store.load(&store.resolve("drawn").unwrap()).unwrap();
    assert!(
        bundle.screenshots.len() >= 3,
        "{}",
        bundle.screenshots.len()
    );
    let last = bundle.screenshots.last().unwrap();
    let stored = store.image(&last.content_hash).unwrap();
    assert_eq!(stored.dimensions(), now.dimensions());
    let differing = stored
        .pixels()
        .zip(now.pixels())
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(
        differing, 0,
        "pixels differ between the last stored frame and the screen"
    );
    // And the frames are named by their content.
    assert!(
        last.content_hash.starts_with("blake3:"),
        "{}",
        last.content_hash
    );
}

#[test]
fn record_captures_a_scripted_session_on_xcalc_and_xterm() {
    let mut display = Display::start(1280, 800);
    // A key that types ö, as on a keyboard whose layout has it: the recorder
    // then sees a real key with a real character.
    run_ok(
        display
            .command("xmodmap")
            .args(["-e", "keycode 94 = odiaeresis Odiaeresis"]),
    );
    display.spawn("xcalc", &["-geometry", "+100+100"]);
    let calc = display.wait_for_window("XCalc");
    display.spawn(
        "xterm",
        &["-geometry", "60x20+500+150", "-title", "reprise-xterm"],
    );
    let xterm = display.wait_for_window("XTerm");
    let calc_rect = display.window_rect(calc);
    let xterm_rect = display.window_rect(xterm);
    // The recorder's capture, through its kept X11 connection or through
    // xcap (whichever it found cheaper), gives xcap's pixels exactly: the
    // benchmark refuses to go on otherwise. Each path can be forced.
    for (choice, path) in [("x11", "x11 GetImage"), ("xcap", "xcap")] {
        let bench = run_ok(
            display
                .reprise()
                .env("REPRISE_CAPTURE", choice)
                .args(["bench", "capture", "--frames", "3"]),
        );
        assert!(bench.contains(&format!("(through {path})")), "{bench}");
    }

    let recorder = start_recorder(&display, "e2e", &[]);
    let (term_x, term_y) = (xterm_rect.0 + 100, xterm_rect.1 + 100);
    let (calc_x, calc_y) = (calc_rect.0 + 30, calc_rect.1 + 150);
    // Switch to xterm, type, select all, double-click, scroll, back to xcalc.
    display.xdotool(&[
        "mousemove",
        &term_x.to_string(),
        &term_y.to_string(),
        "click",
        "1",
    ]);
    display.xdotool(&["type", "--delay", "40", "Hello, wörld"]);
    display.xdotool(&["key", "ctrl+a"]);
    display.xdotool(&["click", "--repeat", "2", "--delay", "80", "1"]);
    display.xdotool(&["click", "--repeat", "3", "--delay", "30", "5"]);
    display.xdotool(&[
        "mousemove",
        &calc_x.to_string(),
        &calc_y.to_string(),
        "click",
        "1",
    ]);
    display.xdotool(&["sleep", "0.3", "key", "ctrl", "ctrl", "ctrl"]);
    let out = wait_with_limit(recorder, Duration::from_secs(10));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("stopped by the stop sequence"));

    let shown = show_json(&display, "e2e");
    assert_eq!(shown["recording"]["complete"], true);
    let trees = &shown["events"];
    let nodes = all_nodes(trees);

    // The double-click: four children at the pointer.
    let double = nodes
        .iter()
        .find(|node| node["name"] == "doubleclick")
        .expect("a doubleclick");
    assert_eq!(double["children"].as_array().unwrap().len(), 4);
    assert!(
        near(&double["mouse_x"], term_x) && near(&double["mouse_y"], term_y),
        "{double}"
    );

    // The text: shift+H as a chord of its own, then the rest with the ö.
    let type_texts: Vec<&str> = trees
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"] == "type")
        .filter_map(|t| t["text"].as_str())
        .collect();
    assert!(type_texts.contains(&"<shift>-H"), "{type_texts:?}");
    assert!(
        type_texts.contains(&"e-l-l-o-,- -w-ö-r-l-d"),
        "{type_texts:?}"
    );
    assert!(type_texts.contains(&"<ctrl>-a"), "{type_texts:?}");

    // The stop sequence is not part of the recording: one ctrl press (the chord).
    let ctrl_presses = nodes
        .iter()
        .filter(|n| n["name"] == "press" && n["key_name"] == "ctrl")
        .count();
    assert_eq!(ctrl_presses, 1);

    // Three wheel ticks down, merged into one scroll.
    let scroll = nodes
        .iter()
        .find(|node| node["name"] == "scroll" && node["children"].is_array())
        .expect("a scroll");
    assert_eq!(scroll["mouse_dy"].as_f64().unwrap().abs(), 3.0, "{scroll}");

    // The clicks on each window, at the right place, linked to that window.
    let singles: Vec<&&Value> = nodes
        .iter()
        .filter(|node| node["name"] == "singleclick")
        .collect();
    let calc_click = singles
        .iter()
        .find(|n| near(&n["mouse_x"], calc_x) && near(&n["mouse_y"], calc_y))
        .expect("the xcalc click");
    let term_click = singles
        .iter()
        .find(|n| near(&n["mouse_x"], term_x) && near(&n["mouse_y"], term_y))
        .expect("the xterm click");
    let states = shown["window_states"].as_array().unwrap();
    let state_of = |node: &Value| {
        &states[node["window_state_id"]
            .as_u64()
            .expect("linked to a window state") as usize]
    };
    let xterm_state = state_of(double);
    assert_eq!(xterm_state["title"], "reprise-xterm");
    assert_eq!(xterm_state["app_class"], "XTerm");
    let rect = &xterm_state["rect"];
    assert_eq!(
        (
            rect["left"].as_i64().unwrap(),
            rect["top"].as_i64().unwrap(),
            rect["width"].as_u64().unwrap(),
            rect["height"].as_u64().unwrap()
        ),
        (
            i64::from(xterm_rect.0),
            i64::from(xterm_rect.1),
            u64::from(xterm_rect.2),
            u64::from(xterm_rect.3)
        )
    );
    // The xcalc click happened while xterm was focused (the click focuses it);
    // the calculator's own state appears right after.
    assert!(
        states
            .iter()
            .any(|s| s["title"] == "Calculator" && s["app_class"] == "XCalc"),
        "{states:?}"
    );
    let _ = term_click;

    // Every action links to a frame, and the frame before the xcalc click shows
    // the calculator where it is: its area is not the empty black root.
    for node in trees.as_array().unwrap() {
        assert!(node["screenshot_id"].is_u64(), "{node}");
    }
    let export = display.dir.path().join("e2e.reprise");
    run_ok(
        display
            .reprise()
            .args(["export", "e2e", "-o", export.to_str().unwrap()]),
    );
    let (images, patches) = export_images(&export);
    // The export keeps the store's saving: the frames of typing are patches.
    assert!(patches > 0, "no frame of {} is a patch", images.len());
    let shot = &shown["screenshots"][calc_click["screenshot_id"].as_u64().unwrap() as usize];
    let frame = &images[shot["content_hash"].as_str().unwrap()];
    let (cx, cy, cw, ch) = calc_rect;
    let lit = (0..ch)
        .step_by(4)
        .flat_map(|dy| (0..cw).step_by(4).map(move |dx| (dx, dy)))
        .filter(|&(dx, dy)| {
            frame.get_pixel(cx as u32 + dx, cy as u32 + dy).0[..3]
                .iter()
                .any(|&c| c > 60)
        })
        .count();
    let total = (ch as usize).div_ceil(4) * (cw as usize).div_ceil(4);
    assert!(
        lit * 2 > total,
        "the calculator is visible in its frame ({lit} of {total} samples lit)"
    );

    // The recording as a page: the events over their screenshots, rendered
    // by a real browser with the pointer positions marked.
    let page = display.dir.path().join("recording.html");
    run_ok(
        display
            .reprise()
            .args(["visualize", "e2e", "-o", page.to_str().unwrap()]),
    );
    let (dom, rendered) = chromium_render(&page, 1300, 3000);
    assert!(
        dom.contains("Recording e2e") && dom.contains("doubleclick left at"),
        "the event tree is on the page"
    );
    assert!(
        dom.contains("reprise-xterm (XTerm)") && dom.contains("Calculator (XCalc)"),
        "window titles are shown"
    );
    if let Ok(dir) = std::env::var("REPRISE_DOCS_SHOTS") {
        rendered
            .save(std::path::Path::new(&dir).join("recording.png"))
            .unwrap();
    }
    assert!(
        marker_pixels(&rendered) > 50,
        "pointer positions are marked on the screenshots"
    );
    // An index of the actions at the top, each linking to its frame; the
    // frames cropped to their window (and the pointer), not the screen.
    let html = std::fs::read_to_string(&page).unwrap();
    let index = html.split("id=\"index\"").nth(1).expect("an index");
    let index = index.split("</table>").next().unwrap();
    for target in index.split("href=\"#").skip(1) {
        let anchor = target.split('"').next().unwrap();
        assert!(html.contains(&format!("id=\"{anchor}\"")), "{anchor}");
    }
    assert!(index.contains("doubleclick left at"), "{index}");
    let boxes = crate::harness::view_boxes(&html);
    assert!(
        boxes.iter().any(|b| *b != "0 0 1280 800"),
        "some frames show their window: {boxes:?}"
    );

    // Export, import into another store, and show: the same recording.
    let other_store = display.dir.path().join("other.sqlite");
    run_ok(reprise_with_store(&other_store).args(["import", export.to_str().unwrap()]));
    let reimported: Value = serde_json::from_str(&run_ok(
        reprise_with_store(&other_store).args(["show", "e2e", "--json"]),
    ))
    .unwrap();
    assert_eq!(reimported, shown);

    // A truncated copy is refused, and the store is left exactly as it was.
    let truncated = display.dir.path().join("truncated.reprise");
    let bytes = std::fs::read(&export).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let fresh_store = display.dir.path().join("fresh.sqlite");
    run_ok(reprise_with_store(&fresh_store).arg("list"));
    let before = run_ok(reprise_with_store(&fresh_store).args(["list", "--json"]));
    // An import refused with exit 4 and the reason, the store as it was.
    let refused = |why: &str| {
        let out = reprise_with_store(&fresh_store)
            .args(["import", truncated.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(4));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(why) && stderr.contains("the store was not changed"),
            "{stderr}"
        );
        assert_eq!(
            run_ok(reprise_with_store(&fresh_store).args(["list", "--json"])),
            before
        );
    };
    refused("truncated");

    // A corrupted copy (one byte of a frame changed) is refused too.
    let mut corrupted = bytes.clone();
    let idx = corrupted.len() / 2;
    corrupted[idx] ^= 0x20;
    std::fs::write(&truncated, &corrupted).unwrap();
    refused("damaged");
}

#[test]
fn a_recorder_killed_with_sigkill_keeps_what_it_recorded() {
    let mut display = Display::start(1024, 768);
    display.spawn("xcalc", &["-geometry", "+50+50"]);
    display.wait_for_window("XCalc");
    let recorder = start_recorder(&display, "killed", &[]);
    for x in [80, 120, 160] {
        display.xdotool(&["mousemove", &x.to_string(), "250", "click", "1"]);
    }
    // The recorder promises to lose at most the last second.
    display.xdotool(&["sleep", "1.5"]);
    let pid = recorder.id().to_string();
    run_ok(std::process::Command::new("kill").args(["-KILL", &pid]));
    let out = wait_with_limit(recorder, Duration::from_secs(5));
    assert!(!out.status.success());

    let list: Value =
        serde_json::from_str(&run_ok(display.reprise().args(["list", "--json"]))).unwrap();
    assert_eq!(list[0]["complete"], false, "{list}");
    let text = run_ok(display.reprise().args(["show", "killed"]));
    assert!(text.contains("incomplete"), "{text}");
    let shown = show_json(&display, "killed");
    let clicks: Vec<&Value> = shown["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|node| node["name"] == "singleclick")
        .collect();
    assert_eq!(clicks.len(), 3, "{}", shown["events"]);
    assert!(near(&clicks[2]["mouse_x"], 160));
}

/// Ctrl-C, SIGTERM and SIGHUP (issue 14, item 7: it left the recording
/// incomplete, exit 129) all finish the recording.
#[test]
fn record_stops_on_sigint_sigterm_and_sighup_within_a_second_with_every_event_stored() {
    let display = Display::start(800, 600);
    for (signal, name) in [
        ("-INT", "interrupted"),
        ("-TERM", "terminated"),
        ("-HUP", "hung-up"),
    ] {
        let recorder = start_recorder(&display, name, &["--stop-sequence", "none"]);
        display.xdotool(&["mousemove", "300", "300", "click", "3"]);
        let started = std::time::Instant::now();
        run_ok(std::process::Command::new("kill").args([signal, &recorder.id().to_string()]));
        let out = wait_with_limit(recorder, Duration::from_secs(5));
        let elapsed = started.elapsed();
        let command = display.reprise();
        assert_success(&out, &command);
        assert!(
            elapsed < Duration::from_secs(2),
            "{signal}: exit took {elapsed:?}"
        );
        let shown = show_json(&display, name);
        assert_eq!(shown["recording"]["complete"], true, "{signal}");
        let right_clicks = all_nodes(&shown["events"])
            .into_iter()
            .filter(|node| node["name"] == "click" && node["mouse_button_name"] == "right")
            .count();
        assert_eq!(
            right_clicks, 2,
            "{signal}: the right press and release were both stored"
        );
    }
}

/// Issue 14, item 6: the display going away during a recording ended the
/// process through Xlib (exit 1 with Xlib's own words, the last batch of
/// events lost, the recording left incomplete). Now it is a stop: every
/// event the listener saw is kept, the recording is complete up to then,
/// and the command says why it ended.
#[test]
fn a_display_that_goes_away_ends_the_recording_with_every_event_kept() {
    let mut display = Display::start(640, 480);
    let recorder = start_recorder(&display, "display-lost", &["--stop-sequence", "none"]);
    // Three clicks, told apart by their places, within one flush interval
    // of the server's end.
    for x in ["100", "200", "300"] {
        display.xdotool(&["mousemove", x, "150", "click", "1"]);
    }
    display.kill_server();
    let out = wait_with_limit(recorder, Duration::from_secs(10));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("stopped by the display going away"),
        "{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("the display's connection was lost")
            && !stderr.contains("XIO")
            && !stderr.contains("X connection"),
        "{stderr}"
    );
    let shown = show_json(&display, "display-lost");
    assert_eq!(shown["recording"]["complete"], true);
    let presses: Vec<&Value> = all_nodes(&shown["events"])
        .into_iter()
        .filter(|node| {
            node["name"] == "click"
                && node["mouse_button_name"] == "left"
                && node["mouse_pressed"] == true
        })
        .collect();
    let places: Vec<&Value> = presses.iter().map(|press| &press["mouse_x"]).collect();
    assert_eq!(presses.len(), 3, "{places:?}");
    for (press, x) in presses.iter().zip([100, 200, 300]) {
        assert!(near(&press["mouse_x"], x), "{places:?}");
    }
}

/// On a terminal the recorder shows how long it has recorded and how many
/// events it has so far, every second, and ends the line before its summary.
#[test]
fn a_recording_on_a_terminal_shows_its_time_and_events_as_it_goes() {
    let display = Display::start(640, 480);
    // `script` gives the recorder a terminal and copies what it wrote.
    let command = format!(
        "'{}' record --name status --duration 2.5 --stop-sequence none",
        env!("CARGO_BIN_EXE_reprise")
    );
    let out = display
        .command("script")
        .args(["-qec", &command, "/dev/null"])
        .env("REPRISE_STORE", display.store())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("\rrecording: 0:01, 0 events"), "{text:?}");
    assert!(text.contains("\rrecording: 0:02, "), "{text:?}");
    let summary = text
        .lines()
        .find(|line| line.starts_with("recorded "))
        .unwrap_or_default();
    assert!(summary.contains("stopped by its --duration"), "{text:?}");
}

#[test]
fn the_double_click_settings_come_from_the_settings_daemon() {
    let mut display = Display::start(640, 480);
    let record = |display: &Display, name: &str| -> Value {
        // With --json, the summary is a JSON object (the recording's id, its
        // counts, why it stopped).
        let said: Value = serde_json::from_str(&run_ok(display.reprise().args([
            "record",
            "--name",
            name,
            "--duration",
            "0.3",
            "--stop-sequence",
            "none",
            "--json",
        ])))
        .unwrap();
        assert_eq!(said["stop_reason"], "duration", "{said}");
        let shown = show_json(display, name);
        assert_eq!(said["id"], shown["recording"]["id"], "{said}");
        assert!(said["n_screenshots"].as_u64().is_some(), "{said}");
        shown["recording"]["double_click"].clone()
    };
    // No settings daemon: the documented fallback.
    assert_eq!(
        record(&display, "plain"),
        serde_json::json!({"interval_seconds": 0.5, "distance_pixels": 5.0})
    );
    // xsettingsd publishes other values; the next recordings carry them.
    let config = display.dir.path().join("xsettingsd.conf");
    std::fs::write(
        &config,
        "Net/DoubleClickTime 400\nNet/DoubleClickDistance 8\nNet/ThemeName \"Adwaita\"\n",
    )
    .unwrap();
    display.spawn("xsettingsd", &["-c", config.to_str().unwrap()]);
    let mut attempt = 0;
    let settings = wait_for("a recording with the daemon's settings", || {
        attempt += 1;
        let settings = record(&display, &format!("daemon-{attempt}"));
        (settings["interval_seconds"] != 0.5).then_some(settings)
    });
    assert_eq!(
        settings,
        serde_json::json!({"interval_seconds": 0.4, "distance_pixels": 8.0})
    );
}

#[test]
fn a_recording_of_a_gtk_application_carries_its_accessibility_tree() {
    let display = Display::start(1600, 1000);
    // The application and the recorder share one D-Bus session, whose
    // accessibility bus is started before the application.
    let script = r#"
        set -e
        source "$SCRIPTS/gtk-app.sh"
        start_widget_factory
        sleep 1
        "$REPRISE" record --name gtk --duration 4 --stop-sequence none
        kill $app
    "#;
    run_ok(
        display
            .command("dbus-run-session")
            .args(["--", "bash", "-c", script])
            .env("REPRISE", env!("CARGO_BIN_EXE_reprise"))
            .env("REPRISE_STORE", display.store())
            .env("SCRIPTS", concat!(env!("CARGO_MANIFEST_DIR"), "/scripts")),
    );
    let shown = show_json(&display, "gtk");
    let states = shown["window_states"].as_array().unwrap();
    let with_tree = states
        .iter()
        .find(|state| state["a11y"].is_object())
        .unwrap_or_else(|| panic!("no window state has a tree: {states:?}"));
    assert_eq!(with_tree["app_class"], "Gtk3-widget-factory");
    let window = &with_tree["rect"];
    let nodes = with_tree["a11y"]["nodes"].as_array().unwrap();
    assert!(nodes.len() > 50, "{} nodes", nodes.len());
    // The buttons of the first page, by role and name, inside the window.
    let named = |role: &str, name: &str| {
        nodes
            .iter()
            .filter(|node| node["role"] == role && node["name"] == name)
            .collect::<Vec<_>>()
    };
    let toggles = named("button", "togglebutton");
    assert!(toggles.len() >= 2, "{nodes:?}");
    let checks = named("checkBox", "checkbutton");
    assert!(checks.len() >= 4, "{nodes:?}");
    for node in toggles.iter().chain(&checks) {
        let rect = &node["rect"];
        let inside = |key: &str, size: &str| {
            let (at, origin) = (rect[key].as_i64().unwrap(), window[key].as_i64().unwrap());
            at >= origin
                && at + rect[size].as_i64().unwrap() <= origin + window[size].as_i64().unwrap()
        };
        assert!(
            inside("left", "width") && inside("top", "height"),
            "{node} outside {window}"
        );
    }
}
