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
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "REPRISE_LLM_TIMEOUT",
    "REPRISE_LLM_MAX_ATTEMPTS",
    "REPRISE_RUNS_KEEP_DAYS",
];

/// `reprise` with no provider settings from the machine's environment.
pub(crate) fn reprise(store: &std::path::Path) -> Command {
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

/// `reprise config show` says each setting's value and where it came from
/// (variable over file over default), never a key; a refused configuration
/// is exit 2, there as from any command that reads it.
#[test]
fn config_show_names_each_settings_source_and_never_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let config = dir.path().join("reprise").join("config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        "[llm]\nmax_attempts = 5\n[llm.openai]\nmodel = \"from-the-file\"\n[runs]\nkeep_days = 7\n",
    )
    .unwrap();
    let show = |extra: &[(&str, &str)]| {
        reprise(&store)
            .args(["config", "show", "--json"])
            .envs(extra.iter().copied())
            .output()
            .unwrap()
    };
    let key = "sk-never-shown-0123456789";
    let out = show(&[
        ("OPENAI_API_KEY", key),
        ("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"),
        ("REPRISE_OPENAI_MODEL", "from-the-environment"),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        !stdout.contains(key) && !stdout.contains("0123456789"),
        "{stdout}"
    );
    let rows: Vec<Value> = serde_json::from_str(&stdout).unwrap();
    let get = |setting: &str| -> (String, String) {
        let row = rows
            .iter()
            .find(|row| row["setting"] == setting)
            .unwrap_or_else(|| panic!("{setting} in {stdout}"));
        (
            row["value"].as_str().unwrap().to_owned(),
            row["from"].as_str().unwrap().to_owned(),
        )
    };
    let (value, from) = get("store");
    assert_eq!(
        (value.as_str(), from.as_str()),
        (store.to_str().unwrap(), "REPRISE_STORE")
    );
    assert_eq!(
        get("config file"),
        (config.display().to_string(), "default".into())
    );
    assert_eq!(get("llm.max_attempts"), ("5".into(), "config file".into()));
    assert_eq!(get("llm.timeout_seconds"), ("60".into(), "default".into()));
    assert_eq!(get("llm.openai"), ("configured".into(), String::new()));
    assert_eq!(
        get("llm.openai.api_key"),
        (
            format!("set ({} characters, never shown)", key.len()),
            "OPENAI_API_KEY".into()
        )
    );
    assert_eq!(
        get("llm.openai.base_url"),
        ("http://127.0.0.1:8000/v1".into(), "OPENAI_BASE_URL".into())
    );
    assert_eq!(
        get("llm.openai.model"),
        ("from-the-environment".into(), "REPRISE_OPENAI_MODEL".into())
    );
    assert_eq!(get("llm.gemini.api_key").0, "not set");
    assert_eq!(get("runs.keep_days"), ("7".into(), "config file".into()));

    // The table for people says the same.
    let table = run_ok(reprise(&store).args(["config", "show"]));
    assert!(
        table
            .lines()
            .any(|line| line.starts_with("llm.max_attempts") && line.ends_with("config file")),
        "{table}"
    );

    // Refused settings: the table still shows, and the exit code is 2.
    let out = show(&[("REPRISE_LLM_TIMEOUT", "1e300")]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("REPRISE_LLM_TIMEOUT"));
    let out = show(&[("REPRISE_RUNS_KEEP_DAYS", "-1")]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    std::fs::write(&config, "[llm.openai]\napi_key = \"sk-oops-in-the-file\"\n").unwrap();
    for args in [&["config", "show"][..], &["llm", "ping"][..]] {
        let out = reprise(&store).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("sk-oops")
                && !String::from_utf8_lossy(&out.stdout).contains("sk-oops")
        );
    }
}

/// Log lines at the default level are their level and message; `-v` adds
/// their time and source, and `-q` leaves errors only.
#[test]
fn log_lines_are_plain_by_default_detailed_with_v_and_gone_with_q() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let refused = || Reply::json(401, json!({"error": {"message": "no entry"}}));
    let server = ScriptedServer::start(vec![refused(), refused(), refused()]);
    let ping = |flags: &[&str]| {
        let out = reprise(&store)
            .args(flags)
            .args(["llm", "ping"])
            .env("OPENAI_API_KEY", "sk-test")
            .env("REPRISE_OPENAI_BASE_URL", &server.url)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(5), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let plain = ping(&[]);
    let warning = plain
        .lines()
        .find(|line| line.contains("model provider failed"))
        .unwrap_or_else(|| panic!("{plain}"));
    assert_eq!(warning.split_whitespace().next(), Some("WARN"), "{warning}");
    assert!(!warning.contains("reprise::"), "{warning}");
    let detailed = ping(&["-v"]);
    let warning = detailed
        .lines()
        .find(|line| line.contains("model provider failed"))
        .unwrap_or_else(|| panic!("{detailed}"));
    assert!(
        warning.starts_with("20") && warning.contains("reprise::llm"),
        "{warning}"
    );
    let quiet = ping(&["-q"]);
    assert!(!quiet.contains("WARN"), "{quiet}");
    assert!(quiet.contains("error: "), "the error itself stays: {quiet}");
}
