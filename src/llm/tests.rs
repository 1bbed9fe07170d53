//! The providers over real HTTP against a scripted server on the loopback
//! interface: wire formats, retries and their spacing (on a recorded clock),
//! fallback, the cache and the accounting.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reprise_strategies::llm::{Llm, LlmError, LlmRequest, Message, Part, Role};
use serde_json::json;

use super::http::Sleeper;
use super::settings::{FileConfig, LlmFlags, Price, resolve};
use super::*;
use crate::store::Store;
use crate::testing::{Reply, ScriptedServer};

/// Records the waits instead of sleeping.
#[derive(Clone, Default)]
struct RecordedClock(Arc<Mutex<Vec<Duration>>>);

impl Sleeper for RecordedClock {
    fn sleep(&mut self, duration: Duration) {
        self.0.lock().unwrap().push(duration);
    }
}

impl RecordedClock {
    fn waits(&self) -> Vec<Duration> {
        self.0.lock().unwrap().clone()
    }
}

fn openai_answer(text: &str) -> Reply {
    Reply::json(
        200,
        json!({"choices": [{"message": {"role": "assistant", "content": text}}], "usage": {"prompt_tokens": 120, "completion_tokens": 7}}),
    )
}

fn request() -> LlmRequest {
    LlmRequest {
        purpose: "test".into(),
        system: "You describe screens.".into(),
        messages: vec![Message {
            role: Role::User,
            parts: vec![
                Part::Text("What is this?".into()),
                Part::Png(vec![0x89, b'P', b'N', b'G']),
            ],
        }],
        max_output_tokens: 50,
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    store_path: std::path::PathBuf,
    chain: ChainLlm,
    clock: RecordedClock,
}

/// A chain over the given `(provider, server url)` pairs with keys `key-<provider>`.
fn chain_for(providers: &[(&str, &str)], no_cache: bool, prices: HashMap<String, Price>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let store_path = dir.path().join("store.sqlite");
    let mut env: HashMap<String, String> = HashMap::new();
    let names: Vec<&str> = providers.iter().map(|(name, _)| *name).collect();
    env.insert("REPRISE_LLM_PROVIDERS".into(), names.join(","));
    env.insert("REPRISE_LLM_TIMEOUT".into(), "0.5".into());
    for (name, url) in providers {
        let prefix = name.to_uppercase();
        env.insert(format!("REPRISE_{prefix}_BASE_URL"), (*url).to_owned());
        env.insert(format!("REPRISE_{prefix}_MODEL"), format!("{name}-model"));
        env.insert(format!("{prefix}_API_KEY"), format!("key-{name}"));
    }
    let file = FileConfig {
        prices,
        ..FileConfig::default()
    };
    let settings = resolve(
        &LlmFlags {
            provider: None,
            no_cache,
        },
        &|var| env.get(var).cloned(),
        &file,
    )
    .unwrap();
    let clock = RecordedClock::default();
    let chain = ChainLlm::new(settings, Store::open(&store_path).unwrap())
        .unwrap()
        .with_sleeper(Box::new(clock.clone()));
    Setup {
        _dir: dir,
        store_path,
        chain,
        clock,
    }
}

#[test]
fn openai_wire_format_with_an_image_and_usage() {
    let server = ScriptedServer::start(vec![openai_answer("a login form")]);
    let mut setup = chain_for(&[("openai", &server.url)], false, HashMap::new());
    let reply = setup.chain.complete(&request()).unwrap();
    assert_eq!(
        (
            reply.text.as_str(),
            reply.usage.input_tokens,
            reply.usage.output_tokens
        ),
        ("a login form", 120, 7)
    );
    let received = &server.received()[0];
    assert_eq!(received.path, "/chat/completions");
    assert_eq!(received.header("authorization"), Some("Bearer key-openai"));
    let body: serde_json::Value = serde_json::from_str(&received.body).unwrap();
    assert_eq!(body["model"], "openai-model");
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(
        body["messages"][1]["content"][1]["image_url"]["url"],
        "data:image/png;base64,iVBORw=="
    );
}

#[test]
fn anthropic_wire_format() {
    let server = ScriptedServer::start(vec![Reply::json(
        200,
        json!({"content": [{"type": "text", "text": "a button"}], "usage": {"input_tokens": 30, "output_tokens": 3}}),
    )]);
    let mut setup = chain_for(&[("anthropic", &server.url)], false, HashMap::new());
    let reply = setup.chain.complete(&request()).unwrap();
    assert_eq!(
        (reply.text.as_str(), reply.usage.input_tokens),
        ("a button", 30)
    );
    let received = &server.received()[0];
    assert_eq!(received.path, "/v1/messages");
    assert_eq!(received.header("x-api-key"), Some("key-anthropic"));
    assert_eq!(received.header("anthropic-version"), Some("2023-06-01"));
    let body: serde_json::Value = serde_json::from_str(&received.body).unwrap();
    assert_eq!(body["system"], "You describe screens.");
    assert_eq!(
        body["messages"][0]["content"][1]["source"]["media_type"],
        "image/png"
    );
}

#[test]
fn gemini_wire_format() {
    let server = ScriptedServer::start(vec![Reply::json(
        200,
        json!({"candidates": [{"content": {"parts": [{"text": "a list"}]}}], "usageMetadata": {"promptTokenCount": 40, "candidatesTokenCount": 2}}),
    )]);
    let mut setup = chain_for(&[("gemini", &server.url)], false, HashMap::new());
    let reply = setup.chain.complete(&request()).unwrap();
    assert_eq!(
        (reply.text.as_str(), reply.usage.output_tokens),
        ("a list", 2)
    );
    let received = &server.received()[0];
    assert_eq!(received.path, "/v1beta/models/gemini-model:generateContent");
    assert_eq!(received.header("x-goog-api-key"), Some("key-gemini"));
    let body: serde_json::Value = serde_json::from_str(&received.body).unwrap();
    assert_eq!(
        body["contents"][0]["parts"][1]["inline_data"]["mime_type"],
        "image/png"
    );
}

#[test]
fn a_429_is_retried_after_the_time_it_names() {
    let server = ScriptedServer::start(vec![
        Reply::Http(
            429,
            vec![("Retry-After".into(), "7".into())],
            json!({"error": {"message": "slow down"}}).to_string(),
        ),
        openai_answer("ok"),
    ]);
    let mut setup = chain_for(&[("openai", &server.url)], false, HashMap::new());
    assert_eq!(setup.chain.complete(&request()).unwrap().text, "ok");
    assert_eq!(setup.clock.waits(), [Duration::from_secs(7)]);
    assert_eq!(server.received().len(), 2);
}

#[test]
fn server_errors_back_off_exponentially_with_jitter_and_a_bound() {
    let server = ScriptedServer::start(vec![
        Reply::json(500, json!({"error": {"message": "boom"}})),
        Reply::json(503, json!({"error": {"message": "busy"}})),
        openai_answer("ok"),
    ]);
    let mut setup = chain_for(&[("openai", &server.url)], false, HashMap::new());
    assert_eq!(setup.chain.complete(&request()).unwrap().text, "ok");
    let waits = setup.clock.waits();
    assert_eq!(waits.len(), 2);
    assert!(
        waits[0] >= Duration::from_secs(1) && waits[0] <= Duration::from_millis(1250),
        "{waits:?}"
    );
    assert!(
        waits[1] >= Duration::from_secs(2) && waits[1] <= Duration::from_millis(2500),
        "{waits:?}"
    );

    // Always failing: three attempts, two waits, then a clear error.
    let server = ScriptedServer::start(vec![Reply::json(
        500,
        json!({"error": {"message": "down"}}),
    )]);
    let mut setup = chain_for(&[("openai", &server.url)], false, HashMap::new());
    let err = setup.chain.complete(&request()).unwrap_err();
    assert!(
        matches!(&err, LlmError::GaveUp { attempts: 3, last, .. } if last.contains("HTTP 500: down")),
        "{err}"
    );
    assert_eq!(server.received().len(), 3);
    assert_eq!(setup.clock.waits().len(), 2);
}

#[test]
fn two_policies_do_not_retry_in_lockstep() {
    // Each process (each policy) draws its own jitter: of the waits of ten
    // policies after one failure, not all are the same.
    let waits: std::collections::HashSet<Duration> = (0..10)
        .map(|_| {
            let policy = super::http::RetryPolicy::default();
            let mut state = policy.jitter_seed | 1;
            policy.backoff(1, &mut state)
        })
        .collect();
    assert!(waits.len() > 1, "{waits:?}");
}

#[test]
fn a_stall_past_the_timeout_is_retried_then_given_up() {
    let server = ScriptedServer::start(vec![Reply::Stall(
        Duration::from_secs(3),
        Box::new(openai_answer("late")),
    )]);
    let mut setup = chain_for(&[("openai", &server.url)], false, HashMap::new());
    let started = std::time::Instant::now();
    let err = setup.chain.complete(&request()).unwrap_err();
    assert!(err.to_string().contains("timed out"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the timeout cut each attempt short"
    );
    assert_eq!(setup.clock.waits().len(), 2);
}

#[test]
fn a_hangup_then_success_is_retried() {
    let server = ScriptedServer::start(vec![Reply::Hangup, openai_answer("ok")]);
    let mut setup = chain_for(&[("openai", &server.url)], false, HashMap::new());
    assert_eq!(setup.chain.complete(&request()).unwrap().text, "ok");
    assert_eq!(setup.clock.waits().len(), 1);
}

#[test]
fn malformed_and_empty_answers_and_auth_errors_fail_at_once() {
    for (reply, expected) in [
        (
            Reply::Http(200, vec![], "{not json".into()),
            "the body is not JSON",
        ),
        (openai_answer("   "), "the answer is empty"),
        (
            Reply::json(200, json!({"choices": []})),
            "no choices[0].message.content",
        ),
        (
            Reply::json(
                401,
                json!({"error": {"message": "Incorrect API key provided"}}),
            ),
            "Incorrect API key provided",
        ),
    ] {
        let server = ScriptedServer::start(vec![reply]);
        let mut setup = chain_for(&[("openai", &server.url)], false, HashMap::new());
        let err = setup.chain.complete(&request()).unwrap_err();
        assert!(err.to_string().contains(expected), "{err}");
        assert_eq!(server.received().len(), 1, "not retried: {expected}");
        assert!(setup.clock.waits().is_empty());
    }
}

#[test]
fn a_failing_provider_hands_over_to_the_next_and_the_failure_is_recorded() {
    let failing = ScriptedServer::start(vec![Reply::json(
        401,
        json!({"error": {"message": "bad key"}}),
    )]);
    let working = ScriptedServer::start(vec![Reply::json(
        200,
        json!({"content": [{"type": "text", "text": "from anthropic"}], "usage": {"input_tokens": 10, "output_tokens": 2}}),
    )]);
    let mut setup = chain_for(
        &[("openai", &failing.url), ("anthropic", &working.url)],
        false,
        HashMap::new(),
    );
    let reply = setup.chain.complete(&request()).unwrap();
    assert_eq!(
        (reply.text.as_str(), reply.provider.as_str()),
        ("from anthropic", "anthropic")
    );
    let calls = setup.chain.store().llm_calls().unwrap();
    assert_eq!(calls.len(), 2);
    assert!(calls[0].error.as_deref().unwrap().contains("bad key"));
    assert_eq!(
        (calls[1].provider.as_str(), calls[1].error.as_deref()),
        ("anthropic", None)
    );
}

#[test]
fn a_repeated_request_is_answered_from_the_cache_and_accounted() {
    let server = ScriptedServer::start(vec![openai_answer("cached answer")]);
    let prices = HashMap::from([(
        "openai/openai-model".to_owned(),
        Price {
            input_per_million: 2.5,
            output_per_million: 10.0,
        },
    )]);
    let mut setup = chain_for(&[("openai", &server.url)], false, prices.clone());
    let first = setup.chain.complete(&request()).unwrap();
    let second = setup.chain.complete(&request()).unwrap();
    assert_eq!(first.text, second.text);
    assert!(!first.cached && second.cached);
    assert_eq!(
        server.received().len(),
        1,
        "the second answer came from the cache"
    );
    let calls = setup.chain.store().llm_calls().unwrap();
    assert_eq!(calls.len(), 2);
    let expected_cost = 120.0 * 2.5 / 1e6 + 7.0 * 10.0 / 1e6;
    assert!((calls[0].cost_usd.unwrap() - expected_cost).abs() < 1e-12);
    assert_eq!((calls[1].cached, calls[1].cost_usd), (true, Some(0.0)));
    let usage = setup.chain.store().llm_usage(None).unwrap();
    assert_eq!(
        (usage[0].calls, usage[0].cache_hits, usage[0].input_tokens),
        (2, 1, 240)
    );

    // The cache survives the process: a new chain on the same store.
    drop(setup.chain);
    let store = Store::open(&setup.store_path).unwrap();
    assert_eq!(store.llm_calls().unwrap().len(), 2);

    // --no-cache: every request goes out.
    let server = ScriptedServer::start(vec![openai_answer("fresh")]);
    let mut setup = chain_for(&[("openai", &server.url)], true, prices);
    setup.chain.complete(&request()).unwrap();
    setup.chain.complete(&request()).unwrap();
    assert_eq!(server.received().len(), 2);
}

#[test]
fn nothing_configured_says_so() {
    let settings = resolve(&LlmFlags::default(), &|_| None, &FileConfig::default()).unwrap();
    assert!(settings.providers.is_empty());
    let dir = tempfile::tempdir().unwrap();
    let mut chain =
        ChainLlm::new(settings, Store::open(&dir.path().join("s.sqlite")).unwrap()).unwrap();
    let err = chain.complete(&request()).unwrap_err();
    assert_eq!(err, LlmError::NotConfigured);
    assert!(err.to_string().contains("OPENAI_API_KEY"));
}

#[test]
fn a_local_server_needs_two_settings_and_no_key() {
    let env = HashMap::from([
        ("REPRISE_OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"),
        ("REPRISE_OPENAI_MODEL", "llava"),
    ]);
    let settings = resolve(
        &LlmFlags::default(),
        &|var| env.get(var).map(|value| (*value).to_owned()),
        &FileConfig::default(),
    )
    .unwrap();
    assert_eq!(settings.providers.len(), 1);
    let provider = &settings.providers[0];
    assert_eq!(
        (provider.url().as_str(), provider.model.as_str()),
        ("http://127.0.0.1:11434/v1/chat/completions", "llava")
    );
    assert!(provider.api_key.is_none() && provider.headers().is_empty());
    assert!(!format!("{provider:?}").contains("key-"));
}

#[test]
fn a_config_file_with_an_unknown_table_is_refused_not_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "[openai]\nmax_images = 6\n").unwrap();
    let err = crate::settings::config::read_config_file(&path)
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown field `openai`"), "{err}");
    std::fs::write(&path, "[llm.openai]\nmax_images = 6\n").unwrap();
    let file = crate::settings::config::read_config_file(&path).unwrap();
    assert_eq!(file.llm.openai.unwrap().max_images, Some(6));
}

const CREDENTIAL_HEADERS: [&str; 3] = ["authorization", "x-api-key", "x-goog-api-key"];

#[test]
fn no_credential_follows_a_redirect_to_another_host() {
    for (name, path) in [
        ("openai", "/v1/chat/completions"),
        ("anthropic", "/v1/messages"),
        ("gemini", "/v1beta/models/gemini-model:generateContent"),
    ] {
        // The other host answers anything, so a followed redirect would succeed.
        let elsewhere = ScriptedServer::start_on("127.0.0.2", vec![openai_answer("stolen")]);
        let redirecting = ScriptedServer::start(vec![Reply::Http(
            307,
            vec![("Location".into(), format!("{}{path}", elsewhere.url))],
            String::new(),
        )]);
        let mut setup = chain_for(&[(name, &redirecting.url)], false, HashMap::new());
        let err = setup.chain.complete(&request()).unwrap_err().to_string();
        assert!(
            err.contains("redirected the request to another host (http://127.0.0.2:"),
            "{name}: {err}"
        );
        assert_eq!(redirecting.received().len(), 1, "{name}: not retried");
        for received in elsewhere.received() {
            for header in CREDENTIAL_HEADERS {
                assert_eq!(received.header(header), None, "{name} sent {header}");
            }
        }
        assert!(
            elsewhere.received().is_empty(),
            "{name} followed the redirect"
        );
    }
}

#[test]
fn a_redirect_within_the_configured_host_is_followed() {
    let server = ScriptedServer::start(vec![
        Reply::Http(
            308,
            vec![("Location".into(), "/v2/chat/completions".into())],
            String::new(),
        ),
        openai_answer("moved"),
    ]);
    let mut setup = chain_for(&[("openai", &server.url)], false, HashMap::new());
    assert_eq!(setup.chain.complete(&request()).unwrap().text, "moved");
    let paths: Vec<String> = server.received().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/chat/completions", "/v2/chat/completions"]);
}

#[test]
fn a_key_echoed_by_the_provider_is_scrubbed_from_errors_and_the_store() {
    // A proxy that echoes the request headers back, failing then refusing.
    let echo = |status: u16| {
        move |request: &crate::testing::Received| {
            let headers: Vec<String> = request
                .headers
                .iter()
                .map(|(key, value)| format!("{key}: {value}"))
                .collect();
            Reply::json(
                status,
                json!({"error": {"message": format!("upstream said no to {}", headers.join(", "))}}),
            )
        }
    };
    for (status, attempts) in [(500, 3), (401, 1)] {
        let server = ScriptedServer::answering(echo(status));
        let mut setup = chain_for(&[("anthropic", &server.url)], false, HashMap::new());
        let err = setup.chain.complete(&request()).unwrap_err().to_string();
        assert!(server.received()[0].header("x-api-key") == Some("key-anthropic"));
        assert!(
            err.contains("upstream said no") && err.contains("[redacted]"),
            "{err}"
        );
        assert!(!err.contains("key-anthropic"), "{err}");
        let calls = setup.chain.store().llm_calls().unwrap();
        let stored = calls[0].error.clone().unwrap();
        assert!(!stored.contains("key-anthropic"), "{stored}");
        // What happened, not the policy's maximum.
        assert_eq!(calls[0].attempts, attempts, "HTTP {status}");
        assert_eq!(server.received().len(), attempts as usize);
        let bytes = std::fs::read(&setup.store_path).unwrap();
        let wal = std::fs::read(setup.store_path.with_extension("sqlite-wal")).unwrap_or_default();
        for file in [bytes, wal] {
            assert!(
                !file.windows(13).any(|window| window == b"key-anthropic"),
                "the key is in the store's files"
            );
        }
    }
}

#[test]
fn a_key_in_the_config_file_is_refused_in_every_spelling_and_never_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let key = "sk-proj-SECRET0123456789";
    let check = |text: &str, expected: &str| {
        std::fs::write(&path, text).unwrap();
        let err = crate::settings::config::read_config_file(&path)
            .unwrap_err()
            .to_string();
        assert!(err.contains(expected), "{text}: {err}");
        assert!(!err.contains("SECRET0123"), "{text}: {err}");
    };
    let credential = "looks like a credential";
    check(&format!("[llm.openai]\napi_key = \"{key}\"\n"), credential);
    check(
        &format!("[llm]\nopenai = {{ base_url = \"http://x\", api_key = \"{key}\" }}\n"),
        "`llm.openai.api_key`",
    );
    check(
        &format!("[llm.anthropic]\n\"api_key\" = \"{key}\"\n"),
        credential,
    );
    check(&format!("[llm.gemini]\nApiKey = \"{key}\"\n"), credential);
    check(&format!("[llm]\ntoken = \"{key}\"\n"), "`llm.token`");
    // Misspelt or mistyped fields: refused, the value masked.
    check(
        &format!("[llm.openai]\nmodle = \"{key}\"\n"),
        "unknown field `modle`",
    );
    check(
        &format!("[llm]\nmax_attempts = \"{key}\"\n"),
        "<a value from the file>",
    );
    // A syntax error names the place, not the line's text.
    check(
        &format!("[llm.openai]\nmodel = \"{key}\" junk\n"),
        "not valid TOML at line 2",
    );
}

#[test]
fn the_ecosystems_base_url_variables_are_honoured() {
    let env = HashMap::from([
        ("OPENAI_API_KEY", "sk-local"),
        ("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"),
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:8001"),
        ("REPRISE_LLM_PROVIDERS", "openai,anthropic"),
    ]);
    let settings = resolve(
        &LlmFlags::default(),
        &|var| env.get(var).map(|value| (*value).to_owned()),
        &FileConfig::default(),
    )
    .unwrap();
    let urls: Vec<String> = settings.providers.iter().map(|p| p.url()).collect();
    assert_eq!(
        urls,
        [
            "http://127.0.0.1:8000/v1/chat/completions",
            "http://127.0.0.1:8001/v1/messages"
        ]
    );
}

#[test]
fn the_clients_speak_tls_and_refuse_a_certificate_nobody_vouches_for() {
    // A real TLS server (openssl s_server) whose certificate a test
    // authority signed: a client told to trust the authority gets the
    // server's page over TLS; one that was not refuses it at the handshake
    // (a client with no cryptography installed would fail before either, or
    // panic).
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let openssl = |args: &[&str]| {
        let made = std::process::Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            ])
            .args(args)
            .stderr(std::process::Stdio::null())
            .status()
            .expect("openssl runs (scripts/setup-debian.sh installs it)");
        assert!(made.success(), "openssl req {args:?}");
    };
    let (ca, ca_key, cert, key) = (
        file("ca.pem"),
        file("ca.key"),
        file("cert.pem"),
        file("key.pem"),
    );
    openssl(&[
        "-subj",
        "/CN=Reprise test authority",
        "-keyout",
        &ca_key,
        "-out",
        &ca,
    ]);
    openssl(&[
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost",
        "-addext",
        "basicConstraints=critical,CA:FALSE",
        "-CA",
        &ca,
        "-CAkey",
        &ca_key,
        "-keyout",
        &key,
        "-out",
        &cert,
    ]);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = std::process::Command::new("openssl")
        .args(["s_server", "-quiet", "-www", "-accept", &port.to_string()])
        .arg("-cert")
        .arg(&cert)
        .arg("-key")
        .arg(&key)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let listening = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // reqwest's client is built inside a runtime (its timers are tokio's).
    let _inside = runtime.enter();
    let client = super::http::client_builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let url = format!("https://localhost:{port}/");
    let answer = runtime.block_on(client.get(&url).send());
    let pem = std::fs::read(&ca).unwrap();
    let trusting = super::http::client_builder()
        .timeout(Duration::from_secs(10))
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .build()
        .unwrap();
    let page = runtime.block_on(async {
        let response = trusting.get(&url).send().await?;
        let status = response.status();
        response.text().await.map(|text| (status, text))
    });
    let _ = server.kill();
    let _ = server.wait();
    assert!(listening, "openssl s_server listened on {port}");
    let (status, text) = page.expect("a client that trusts the certificate is served");
    assert_eq!(status, reqwest::StatusCode::OK);
    // s_server -www answers with its session, naming the cipher agreed.
    assert!(text.contains("Cipher"), "{text}");
    let err = format!(
        "{:?}",
        answer.expect_err("a self-signed certificate is refused")
    );
    assert!(
        err.contains("UnknownIssuer") || err.contains("certificate"),
        "{err}"
    );
}
