//! The model-driven paths against a local server that speaks the OpenAI wire
//! format with scripted answers: instructions that change a visual replay
//! (with an invalid answer fed back first), and the vanilla strategy.

use reprise::testing::{Reply, ScriptedServer};
use serde_json::{Value, json};

use crate::harness::{Display, SAMPLE, assert_unverified, fixture_log, run_ok};

fn answer(content: Value) -> Reply {
    let text = if content.is_string() {
        content.as_str().unwrap().to_owned()
    } else {
        content.to_string()
    };
    Reply::json(
        200,
        json!({"choices": [{"message": {"content": text}}], "usage": {"prompt_tokens": 900, "completion_tokens": 40}}),
    )
}

/// Replays the sample with `server` as the model, on a fixture application
/// that logs what it received to `log`.
fn replay_with_model(
    display: &mut Display,
    server: &ScriptedServer,
    log: &str,
    args: &[&str],
) -> (std::process::Output, Vec<Value>) {
    let log = display.spawn_fixture(log, &["--x", "300", "--y", "200"]);
    let out = display
        .reprise_with_model(&server.url)
        .args(["replay", "demo", "--speed", "3"])
        .args(args)
        .output()
        .unwrap();
    let entries = fixture_log(&log);
    display.stop_apps();
    (out, entries)
}

#[test]
fn instructions_change_a_visual_replay_after_feedback_on_a_bad_answer() {
    let mut display = Display::start(1280, 800);
    run_ok(display.reprise().args(["import", SAMPLE]));
    let kept = |id: u64, name: &str| json!({"id": id, "name": name});
    let server = ScriptedServer::start(vec![
        answer(json!([{"id": 0, "name": "teleport"}])),
        answer(Value::String(format!(
            "Here is the list:\n```json\n{}\n```",
            json!([
                kept(0, "move"),
                kept(1, "singleclick"),
                {"id": 2, "name": "type", "text": "bob"},
                kept(3, "singleclick"),
                kept(4, "doubleclick"),
                kept(5, "singleclick")
            ])
        ))),
    ]);
    let (out, log) = replay_with_model(
        &mut display,
        &server,
        "model.log",
        &[
            "--strategy",
            "visual",
            "--instructions",
            "type bob as the user name",
        ],
    );
    assert_unverified(
        out.status.code(),
        &String::from_utf8_lossy(&out.stderr),
        None,
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "screen images of this replay are sent to the model provider openai at 127.0.0.1"
        ),
        "said once where images go"
    );
    let text = log.iter().rfind(|e| e["event"] == "text").unwrap()["value"].clone();
    assert_eq!(text, "bob");
    assert!(
        log.iter()
            .any(|e| e["event"] == "click" && e["control"] == "Save")
    );
    let received = server.received();
    assert_eq!(received.len(), 2, "one bad answer, fed back once");
    let first: Value = serde_json::from_str(&received[0].body).unwrap();
    let prompt = first["messages"][1]["content"][0]["text"].as_str().unwrap();
    assert!(
        prompt.contains("\"target_description\": \"text field labelled \\\"user name\\\"\""),
        "{prompt}"
    );
    assert!(
        !prompt.contains("\"mouse_x\": 400"),
        "coordinates are removed where a description exists"
    );
    assert!(
        received[1].body.contains("unknown name \\\"teleport\\\""),
        "the error was fed back"
    );
    // The run's totals count the model calls and tokens.
    let usage: Value = serde_json::from_str(&run_ok(
        display
            .reprise()
            .args(["llm", "usage", "--run", "last", "--json"]),
    ))
    .unwrap();
    assert_eq!(usage[0]["calls"], 2);
    assert_eq!(usage[0]["input_tokens"], 1800);
}

#[test]
fn vanilla_follows_the_model_until_it_says_done() {
    let mut display = Display::start(1280, 800);
    run_ok(display.reprise().args(["import", SAMPLE]));
    // Where the fixture's Save button will be: its client area's origin plus
    // the button's place in the window.
    display.spawn_fixture("probe.log", &["--x", "300", "--y", "200"]);
    let (x, y, _, _) = display.window_rect(display.find_window("reprise-fixture"));
    display.stop_apps();
    let server = ScriptedServer::start(vec![
        answer(json!({"name": "singleclick", "mouse_x": x + 29, "mouse_y": y + 217})),
        answer(json!({})),
    ]);
    let (out, log) = replay_with_model(
        &mut display,
        &server,
        "model.log",
        &["--strategy", "vanilla"],
    );
    // Vanilla checks no effect: its one click is done and unverified.
    assert_unverified(
        out.status.code(),
        &String::from_utf8_lossy(&out.stderr),
        Some(1),
    );
    let clicks: Vec<&Value> = log.iter().filter(|e| e["event"] == "click").collect();
    assert_eq!(clicks.len(), 1, "{log:?}");
    assert_eq!(clicks[0]["control"], "Save");
    let received = server.received();
    assert_eq!(received.len(), 2);
    let first: Value = serde_json::from_str(&received[0].body).unwrap();
    assert!(
        first["messages"][1]["content"][1]["image_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    let second: Value = serde_json::from_str(&received[1].body).unwrap();
    assert!(
        second["messages"][1]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("singleclick at"),
        "what was replayed is in the next prompt"
    );
    // A model whose answers stay unusable, fed back each time: the
    // providers failed (exit 5, as the describer's would), not a step
    // (10), and nothing was pressed.
    let server = ScriptedServer::start(vec![answer(json!("I would rather not say."))]);
    let (out, log) = replay_with_model(
        &mut display,
        &server,
        "unusable.log",
        &["--strategy", "vanilla"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("the model failed"), "{stderr}");
    assert!(stderr.contains("unusable after 3 attempts"), "{stderr}");
    assert_eq!(server.received().len(), 3, "each bad answer was fed back");
    assert!(
        !log.iter().any(|e| e["event"] == "click"),
        "nothing was pressed: {log:?}"
    );
}
