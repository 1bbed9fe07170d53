//! Named tokens and the audit log: who (by the name of their token) did
//! what, from where, refusals included; a worker acts only as the workers
//! its own token registered.

use serde_json::Value;

use crate::harness::output_ok;

use super::{Redis, SAMPLE, Server, USER_TOKEN, VIEWER_TOKEN, WORKER_TOKEN};

const ANA: &str = "ana-s-token-0123456789";
const DESK: &str = "desk-s-token-0123456789";

fn sha256(token: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(token.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// A tokens file of `(name, role, token)` entries, each by its SHA-256.
fn tokens_file(dir: &std::path::Path, entries: &[(&str, &str, &str)]) -> std::path::PathBuf {
    let file = dir.join("tokens.toml");
    let text: Vec<String> = entries
        .iter()
        .map(|(name, role, token)| {
            format!(
                "[[token]]\nname = \"{name}\"\nrole = \"{role}\"\nsha256 = \"{}\"\n",
                sha256(token)
            )
        })
        .collect();
    std::fs::write(&file, text.join("\n")).unwrap();
    file
}

#[test]
fn every_change_is_logged_with_who_from_where_and_workers_act_only_as_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = tokens_file(
        dir.path(),
        &[("ana", "user", ANA), ("desk-3", "worker", DESK)],
    );
    let redis = Redis::start(dir.path());
    let server = Server::start(dir.path(), &redis, &["--tokens", tokens.to_str().unwrap()]);
    // Ana uploads and submits with her own token.
    let out = output_ok(server.client().env("REPRISE_FLEET_TOKEN", ANA).args([
        "jobs", "submit", SAMPLE, "--upload", "--json", "--label", "gpu=yes",
    ]));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let job = answer["jobs"][0]["id"].as_str().unwrap().to_owned();
    let cancel = format!("/api/jobs/{job}/cancel");
    // A viewer may not cancel it; a token nobody has may do nothing.
    assert_eq!(server.http("POST", &cancel, Some(VIEWER_TOKEN), b"").0, 403);
    assert_eq!(
        server
            .http("POST", &cancel, Some("no-such-token-0000000"), b"")
            .0,
        401
    );
    // A worker registered by the shared worker token is not desk-3's.
    let worker = server.register_worker(WORKER_TOKEN, "shared");
    let leave = format!("/api/workers/{worker}/leave");
    let (status, refused) = server.http("POST", &leave, Some(DESK), b"");
    assert_eq!(status, 403, "{refused}");
    assert!(
        refused
            .to_string()
            .contains("registered with another token"),
        "{refused}"
    );
    let (status, pulled) = server.http(
        "POST",
        &format!("/api/workers/{worker}/pull?wait=0"),
        Some(DESK),
        b"",
    );
    assert_eq!(status, 403, "{pulled}");
    assert_eq!(server.http("POST", &leave, Some(WORKER_TOKEN), b"").0, 200);
    // Started again on its desktop, the worker registers with its id: kept
    // for its own token and host, refused for another token, another host
    // or what is not an id.
    let again = |token: &str, host: &str, id: &str| {
        let body = serde_json::json!({"host": host, "pool": "default", "id": id});
        server.http(
            "POST",
            "/api/workers",
            Some(token),
            body.to_string().as_bytes(),
        )
    };
    let (status, refused) = again(DESK, "shared", &worker);
    assert_eq!(status, 403, "{refused}");
    let (status, refused) = again(WORKER_TOKEN, "elsewhere", &worker);
    assert_eq!(status, 409, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(r#"runs on "shared""#), "{refused}");
    let (status, refused) = again(WORKER_TOKEN, "shared", "a b");
    assert_eq!(status, 400, "{refused}");
    let (status, back) = again(WORKER_TOKEN, "shared", &worker);
    assert_eq!(
        (status, back["id"].as_str()),
        (201, Some(worker.as_str())),
        "{back}"
    );
    // The log, newest first: each change and refusal, by name, from here.
    assert_eq!(
        server.http("GET", "/api/audit", Some(VIEWER_TOKEN), b"").0,
        403
    );
    let (status, log) = server.http("GET", "/api/audit", Some(USER_TOKEN), b"");
    assert_eq!(status, 200);
    let lines: Vec<(String, String, u64)> = log
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|line| {
            assert_eq!(line["from"], "127.0.0.1", "{line}");
            (
                line["who"].as_str().unwrap().to_owned(),
                line["action"].as_str().unwrap().to_owned(),
                line["status"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, String, u64)> = [
        ("ana", "POST /api/recordings".to_owned(), 201),
        ("ana", "POST /api/jobs".to_owned(), 201),
        ("viewer", format!("POST {cancel}"), 403),
        ("unknown", format!("POST {cancel}"), 401),
        ("worker", "POST /api/workers".to_owned(), 201),
        ("desk-3", format!("POST {leave}"), 403),
        ("worker", format!("POST {leave}"), 200),
        ("desk-3", "POST /api/workers".to_owned(), 403),
        ("worker", "POST /api/workers".to_owned(), 409),
        ("worker", "POST /api/workers".to_owned(), 400),
        ("worker", "POST /api/workers".to_owned(), 201),
    ]
    .into_iter()
    .map(|(who, action, status)| (who.to_owned(), action, status))
    .collect();
    assert_eq!(lines, expected);
    let out = server.client().args(["jobs", "audit"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("ana"), "{text}");
}

const ROOT: &str = "root-s-token-0123456789";

/// Where the server has an admin token, only an admin administers (the
/// audit log, forgetting a worker, discarding, removing schedules); users
/// still submit and cancel.
#[test]
fn where_the_server_has_an_admin_only_the_admin_administers() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = tokens_file(dir.path(), &[("ana", "user", ANA), ("root", "admin", ROOT)]);
    let redis = Redis::start(dir.path());
    let server = Server::start(dir.path(), &redis, &["--tokens", tokens.to_str().unwrap()]);
    assert_eq!(server.http("GET", "/api/audit", Some(ANA), b"").0, 403);
    assert_eq!(server.http("GET", "/api/audit", Some(ROOT), b"").0, 200);
    assert_eq!(
        server
            .http("DELETE", "/api/schedules/nothing", Some(ANA), b"")
            .0,
        403
    );
    // A worker is forgotten once it has left, by the admin only.
    let worker = server.register_worker(WORKER_TOKEN, "desk");
    let forget = format!("/api/workers/{worker}");
    let (status, alive) = server.http("DELETE", &forget, Some(ROOT), b"");
    assert_eq!(status, 409, "a live worker is not forgotten: {alive}");
    let leave = format!("/api/workers/{worker}/leave");
    assert_eq!(server.http("POST", &leave, Some(WORKER_TOKEN), b"").0, 200);
    assert_eq!(server.http("DELETE", &forget, Some(ANA), b"").0, 403);
    let (status, forgotten) = server.http("DELETE", &forget, Some(ROOT), b"");
    assert_eq!(
        (status, &forgotten["state"]),
        (200, &Value::from("forgotten"))
    );
    let (_, workers) = server.http("GET", "/api/workers", Some(ROOT), b"");
    assert_eq!(workers, Value::Array(Vec::new()), "{workers}");
    assert_eq!(server.http("DELETE", &forget, Some(ROOT), b"").0, 404);
    // Users still submit (the user of the environment's token too).
    let out = server
        .client()
        .env("REPRISE_FLEET_TOKEN", ANA)
        .args([
            "jobs", "submit", SAMPLE, "--upload", "--json", "--label", "gpu=yes",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        server.http("GET", "/api/audit", Some(USER_TOKEN), b"").0,
        403
    );
}
