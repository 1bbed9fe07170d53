//! `reprise llm` against a real HTTP server on the loopback interface that
//! speaks the OpenAI wire format: a local model server set up with two
//! settings, the cache across processes, and keys that never leak.

use std::process::Command;

use reprise::testing::{Reply, ScriptedServer};
use serde_json::{Value, json};

use crate::harness::{reprise_with_store, run_ok};

const PROVIDER_VARS: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "REPRISE_OPENAI_BASE_URL",
    "REPRISE_OPENAI_MODEL",
    "REPRISE_ANTHROPIC_BASE_URL",
    "REPRISE_GEMINI_BASE_URL",
    "REPRISE_LLM_PROVIDERS",
    "REPRISE_CONFIG",
];

/// `reprise` with no provider settings from the machine's environment.
fn reprise(store: &std::path::Path) -> Command {
    let mut command = reprise_with_store(store);
    for var in PROVIDER_VARS {
        command.env_remove(var);
    }
    command.env("XDG_CONFIG_HOME", store.parent().unwrap());
    command
}

fn ok_answer() -> Reply {
    Reply::json(
        200,
        json!({"choices": [{"message": {"content": "{\"ok\": true}"}}], "usage": {"prompt_tokens": 21, "completion_tokens": 5}}),
    )
}

#[test]
fn a_local_openai_compatible_server_with_two_settings() {
    let server = ScriptedServer::start(vec![ok_answer()]);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let ping = || {
        run_ok(
            reprise(&store)
                .args(["llm", "ping"])
                .env("REPRISE_OPENAI_BASE_URL", format!("{}/v1", server.url))
                .env("REPRISE_OPENAI_MODEL", "llava"),
        )
    };
    let first = ping();
    assert!(
        first.starts_with("openai llava: answered in") && first.contains("(21 tokens in, 5 out)"),
        "{first}"
    );
    let second = ping();
    assert!(second.contains("from the cache"), "{second}");
    let received = server.received();
    assert_eq!(
        received.len(),
        1,
        "the repeated request was answered from the cache"
    );
    assert_eq!(received[0].path, "/v1/chat/completions");
    assert!(
        received[0].header("authorization").is_none(),
        "a local server needs no key"
    );
    let body: Value = serde_json::from_str(&received[0].body).unwrap();
    assert_eq!(body["model"], "llava");

    let usage: Value =
        serde_json::from_str(&run_ok(reprise(&store).args(["llm", "usage", "--json"]))).unwrap();
    assert_eq!(usage[0]["calls"], 2);
    assert_eq!(usage[0]["cache_hits"], 1);
    assert_eq!(usage[0]["input_tokens"], 42);

    let pruned = run_ok(reprise(&store).args(["llm", "prune", "--older-than-days", "0"]));
    assert_eq!(pruned.trim(), "deleted 1 cached answers");
}

#[test]
fn no_provider_configured_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = reprise(&dir.path().join("store.sqlite"))
        .args(["llm", "ping"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no model provider is configured") && stderr.contains("OPENAI_API_KEY"),
        "{stderr}"
    );
}

#[test]
fn the_api_key_never_reaches_a_log_an_error_or_the_store() {
    let secret = "sk-reprise-test-SECRET-4242";
    let server = ScriptedServer::start(vec![Reply::json(
        401,
        json!({"error": {"message": "Incorrect API key provided"}}),
    )]);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let out = reprise(&store)
        .args(["llm", "ping"])
        .env("OPENAI_API_KEY", secret)
        .env("REPRISE_OPENAI_BASE_URL", &server.url)
        .env("REPRISE_LOG", "trace")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Incorrect API key provided"),
        "the provider's message is shown: {stderr}"
    );
    assert!(
        !stderr.contains(secret) && !String::from_utf8_lossy(&out.stdout).contains(secret),
        "the key leaked"
    );
    assert_eq!(
        server.received()[0].header("authorization"),
        Some(format!("Bearer {secret}").as_str())
    );
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(
            !bytes
                .windows(secret.len())
                .any(|window| window == secret.as_bytes()),
            "the key is in the store"
        );
    }
    let usage = run_ok(reprise(&store).args(["llm", "usage", "--json"]));
    assert!(
        usage.contains("\"failures\": 1") && !usage.contains(secret),
        "{usage}"
    );
}

#[test]
fn a_config_file_with_a_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[llm.openai]\napi_key = \"sk-oops\"\n").unwrap();
    let out = reprise(&dir.path().join("store.sqlite"))
        .args(["--config", config.to_str().unwrap(), "llm", "ping"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("looks like a credential") && !stderr.contains("sk-oops"),
        "{stderr}"
    );
}
