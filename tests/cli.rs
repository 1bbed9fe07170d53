//! The command line without a display: `events reduce`, and how bad input and
//! bad stores are refused.

use std::io::Write as _;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::harness::{SAMPLE, assert_fails, output_ok, reprise_with_store, run_ok};

/// The trees `events reduce` made of `input`, which it took.
fn reduced_via_cli(args: &[&str], input: &Value) -> Value {
    let out = reduce_via_cli(args, &input.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The name of each tree.
fn names(trees: &Value) -> Vec<&str> {
    let trees = trees.as_array().unwrap();
    trees.iter().map(|t| t["name"].as_str().unwrap()).collect()
}

fn reduce_via_cli(args: &[&str], input: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mut child = reprise_with_store(&dir.path().join("unused.sqlite"))
        .args(["events", "reduce"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn events_reduce_prints_trees_with_text_and_omits_nulls() {
    let input = json!([
        {"name": "move", "timestamp": 0.0, "mouse_x": 1, "mouse_y": 1},
        {"name": "move", "timestamp": 0.1, "mouse_x": 10, "mouse_y": 10},
        {"name": "click", "timestamp": 1.0, "mouse_x": 10, "mouse_y": 10, "mouse_button_name": "left", "mouse_pressed": true},
        {"name": "click", "timestamp": 1.1, "mouse_x": 10, "mouse_y": 10, "mouse_button_name": "left", "mouse_pressed": false},
        {"name": "click", "timestamp": 1.4, "mouse_x": 12, "mouse_y": 10, "mouse_button_name": "left", "mouse_pressed": true},
        {"name": "click", "timestamp": 1.5, "mouse_x": 12, "mouse_y": 10, "mouse_button_name": "left", "mouse_pressed": false},
        {"name": "press", "timestamp": 2.0, "key_name": "ctrl", "key_vk": 37},
        {"name": "press", "timestamp": 2.1, "key_char": "c", "key_vk": 54},
        {"name": "release", "timestamp": 2.2, "key_char": "c", "key_vk": 54},
        {"name": "release", "timestamp": 2.3, "key_name": "ctrl", "key_vk": 37},
        {"name": "press", "timestamp": 3.0, "key_char": "x", "key_vk": 0}
    ]);
    let trees = reduced_via_cli(&[], &input);
    assert_eq!(
        names(&trees),
        ["move", "doubleclick", "type"],
        "the vk-0 press is removed"
    );
    // The move at the press's position is redundant: the press absorbs it.
    assert_eq!(trees[0]["mouse_x"], 1.0);
    assert_eq!(trees[1]["children"][0]["children"][0]["mouse_x"], 10.0);
    assert_eq!(trees[1]["children"].as_array().unwrap().len(), 4);
    assert_eq!(
        trees[1]["timestamp"], 1.0,
        "a parent keeps its first child's timestamp"
    );
    assert_eq!(trees[2]["text"], "<ctrl>-c");
    assert_eq!(trees[2]["children"][1]["text"], "c");
    assert!(
        trees[0].get("key_name").is_none(),
        "null fields are omitted"
    );
}

#[test]
fn events_reduce_uses_the_double_click_flags() {
    let input = json!([
        {"name": "click", "timestamp": 1.0, "mouse_x": 10, "mouse_y": 10, "mouse_button_name": "left", "mouse_pressed": true},
        {"name": "click", "timestamp": 1.1, "mouse_x": 10, "mouse_y": 10, "mouse_button_name": "left", "mouse_pressed": false},
        {"name": "click", "timestamp": 1.4, "mouse_x": 12, "mouse_y": 10, "mouse_button_name": "left", "mouse_pressed": true},
        {"name": "click", "timestamp": 1.5, "mouse_x": 12, "mouse_y": 10, "mouse_button_name": "left", "mouse_pressed": false}
    ]);
    let trees = reduced_via_cli(&["--double-click-interval", "0.3"], &input);
    assert_eq!(names(&trees), ["singleclick", "singleclick"]);
}

#[test]
fn events_reduce_refuses_malformed_input_with_exit_code_4() {
    let out = reduce_via_cli(&[], r#"[{"name": "teleport", "timestamp": 0}]"#);
    assert_eq!(out.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("parse the raw events") && stderr.contains("teleport"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("error:").count(),
        1,
        "the error is printed once: {stderr}"
    );

    let out = reduce_via_cli(&["--double-click-interval", "-1"], "[]");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_damaged_store_is_refused_with_exit_code_4_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let garbage = b"SQLite format 3\0but then nothing sensible".repeat(100);
    std::fs::write(&store, &garbage).unwrap();
    let out = reprise_with_store(&store).arg("list").output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a Reprise store or is damaged"));
    assert_eq!(std::fs::read(&store).unwrap(), garbage);
}

#[test]
fn an_unknown_recording_is_exit_code_3() {
    let dir = tempfile::tempdir().unwrap();
    let out = reprise_with_store(&dir.path().join("store.sqlite"))
        .args(["show", "nothing"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no recording matches \"nothing\""));
}

#[test]
fn every_command_has_help() {
    for command in [
        &["--help"][..],
        &["record", "--help"],
        &["list", "--help"],
        &["show", "--help"],
        &["export", "--help"],
        &["import", "--help"],
        &["delete", "--help"],
        &["events", "reduce", "--help"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_reprise"))
            .args(command)
            .output()
            .unwrap();
        assert!(out.status.success(), "{command:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Usage:"),
            "{command:?}"
        );
    }
}

/// A new store in a temporary folder with the committed sample recording
/// imported.
pub(crate) fn store_with_sample() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    run_ok(reprise_with_store(&store).args(["import", SAMPLE]));
    (dir, store)
}

#[test]
fn the_committed_sample_recording_imports_and_shows_its_task() {
    let (_dir, store) = store_with_sample();
    let shown: Value = serde_json::from_str(&run_ok(
        reprise_with_store(&store).args(["show", "demo", "--json"]),
    ))
    .unwrap();
    let names: Vec<&str> = shown["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "move",
            "singleclick",
            "type",
            "singleclick",
            "doubleclick",
            "singleclick"
        ]
    );
    assert_eq!(shown["events"][2]["text"], "a-l-i-c-e");
    // As text, the steps are numbered and counted as replay takes them.
    let text = run_ok(reprise_with_store(&store).args(["show", "demo"]));
    assert!(
        text.contains(" in 6 steps (as replay takes them) "),
        "{text}"
    );
    assert!(
        text.contains("\n   3.    0.964s   type \"alice\"") && text.contains("\n   6. "),
        "{text}"
    );
    assert_eq!(shown["screenshots"].as_array().unwrap().len(), 10);
    assert_eq!(shown["window_states"][0]["title"], "Reprise Fixture");
    // An export into a pipe (/dev/stdout names no file to replace): the
    // zip whole on stdout, the words about it on stderr.
    let out = output_ok(reprise_with_store(&store).args(["export", "demo", "-o", "/dev/stdout"]));
    assert!(out.stdout.starts_with(b"PK\x03\x04"), "a zip on stdout");
    assert!(String::from_utf8_lossy(&out.stderr).contains("exported recording"));
    let piped = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(piped.path(), &out.stdout).unwrap();
    // With --json, what was imported, exported and deleted, as JSON.
    let imported: Value = serde_json::from_str(&run_ok(
        reprise_with_store(&store)
            .args(["import", "--as", "piped", "--json"])
            .arg(piped.path()),
    ))
    .unwrap();
    assert_eq!(imported["name"], "piped");
    assert_eq!(imported["screenshots"], 10);
    let again = tempfile::NamedTempFile::new().unwrap();
    let exported: Value = serde_json::from_str(&run_ok(
        reprise_with_store(&store)
            .args(["export", "piped", "--json", "-o"])
            .arg(again.path()),
    ))
    .unwrap();
    assert_eq!(exported["id"], imported["id"]);
    assert_eq!(
        exported["bytes"].as_u64(),
        Some(std::fs::metadata(again.path()).unwrap().len())
    );
    let deleted: Value = serde_json::from_str(&run_ok(
        reprise_with_store(&store).args(["delete", "piped", "--json"]),
    ))
    .unwrap();
    assert_eq!(deleted["id"], imported["id"]);
    // A second import of the same recording is refused, and changes nothing.
    assert_fails(
        &reprise_with_store(&store)
            .args(["import", SAMPLE])
            .output()
            .unwrap(),
        4,
        &["already in the store"],
        "a second import",
    );
}

#[test]
fn a_reader_that_stops_reading_is_not_an_error() {
    let (_dir, store) = store_with_sample();
    // The pipe's reading end is closed before reprise writes (as `| head -1`
    // does after its line): the write fails with EPIPE.
    let mut child = reprise_with_store(&store)
        .args(["show", "demo", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// Issue 14, item 14: a huge time setting panicked converting to a
/// duration (exit 101); each is refused with the setting named.
#[test]
fn huge_time_settings_are_refused_not_panicked_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    // (arguments, environment, exit code, what the message says)
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], i32, &'a str);
    let cases: &[Case<'_>] = &[
        (
            &["replay", "x", "--settle-timeout", "1e300"],
            &[],
            2,
            "--settle-timeout must be",
        ),
        (
            &["record", "--duration", "1e300"],
            &[],
            2,
            "--duration must be",
        ),
        (
            &["llm", "prune", "--older-than-days", "1e300"],
            &[],
            2,
            "--older-than-days must be",
        ),
        (
            &["llm", "ping"],
            &[
                ("REPRISE_LLM_TIMEOUT", "1e300"),
                ("REPRISE_OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ],
            2,
            "REPRISE_LLM_TIMEOUT must be",
        ),
    ];
    for &(args, env, code, message) in cases {
        let out = reprise_with_store(&store)
            .args(args)
            .envs(env.iter().copied())
            .env_remove("DISPLAY")
            .output()
            .unwrap();
        assert_fails(&out, code, &[message], &format!("{args:?}"));
    }
}

#[test]
fn a_name_with_control_characters_or_too_long_is_refused_before_recording() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    for (name, expected) in [
        (
            "evil\u{1b}[2Jname".to_owned(),
            "control or direction characters",
        ),
        ("x".repeat(70_000), "at most 200 characters"),
    ] {
        let out = reprise_with_store(&store)
            .args(["record", "--name", &name, "--duration", "1"])
            .output()
            .unwrap();
        let stderr = assert_fails(&out, 2, &[expected], "");
        assert!(
            !stderr.contains('\u{1b}'),
            "the escape never reaches the terminal"
        );
    }
    // Nothing was recorded.
    if store.exists() {
        let listed = run_ok(reprise_with_store(&store).args(["list", "--json"]));
        assert_eq!(listed.trim(), "[]");
    }
}

/// A negative number reaches the check that says why it is refused (not
/// clap's "unexpected argument '-1'"), a mark key must be a free named
/// key, and every argument is checked before the record or replay banner.
#[test]
fn bad_numbers_are_refused_with_reasons_before_any_banner() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    for (args, expected) in [
        (&["record", "--duration", "-1"][..], "--duration must be"),
        (
            &["record", "--frame-rate", "0"][..],
            "--frame-rate must be between",
        ),
        (
            &["record", "--frame-rate", "-5"][..],
            "--frame-rate must be between",
        ),
        (
            &["record", "--mark-key", "bogus"][..],
            "--mark-key takes a named key",
        ),
        (
            &["record", "--mark-key", "pause"][..],
            "--mark-key pause is already",
        ),
        (
            &["replay", "demo", "--speed", "-2"][..],
            "--speed must be a positive number",
        ),
        (
            &["runs", "prune", "--older-than", "-3"][..],
            "--older-than must be a number of days",
        ),
    ] {
        let out = reprise_with_store(&store).args(args).output().unwrap();
        let stderr = assert_fails(&out, 2, &[expected], &format!("{args:?}"));
        assert!(
            !stderr.contains("recording \"") && !stderr.contains("replaying"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_report_before_any_replay_says_there_is_none_yet() {
    let (_dir, store) = store_with_sample();
    for query in ["last", "latest"] {
        let out = reprise_with_store(&store)
            .args(["report", query, "-o", "/dev/null"])
            .output()
            .unwrap();
        assert_fails(
            &out,
            3,
            &["no replay runs yet: run `reprise replay` first"],
            "",
        );
    }
}

#[test]
fn an_export_replaces_its_target_whole_and_leaves_no_temporary_file() {
    use std::os::unix::fs::FileTypeExt as _;
    let (dir, store) = store_with_sample();
    let out = dir.path().join("out.reprise");
    // A person's own file with the old temporary name is left alone.
    let own = dir.path().join("out.partial");
    std::fs::write(&own, "mine").unwrap();
    std::fs::write(&out, "old").unwrap();
    run_ok(reprise_with_store(&store).args(["export", "demo", "-o", out.to_str().unwrap()]));
    assert!(std::fs::read(&out).unwrap().starts_with(b"PK\x03\x04"));
    assert_eq!(std::fs::read_to_string(&own).unwrap(), "mine");
    // Through a link: the file it names is written, the link stays.
    let real = dir.path().join("real.reprise");
    let link = dir.path().join("link.reprise");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    run_ok(reprise_with_store(&store).args(["export", "demo", "-o", link.to_str().unwrap()]));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(std::fs::read(&real).unwrap().starts_with(b"PK\x03\x04"));
    // A device is written to, never replaced by a file.
    let out = reprise_with_store(&store)
        .args(["export", "demo", "-o", "/dev/full"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    // Nothing temporary is left beside the targets.
    let leftovers: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".partial") && name != "out.partial")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn an_export_of_a_damaged_image_fails_with_exit_code_4_and_writes_nothing() {
    let (dir, store) = store_with_sample();
    let damaged: String = {
        let conn = rusqlite::Connection::open(&store).unwrap();
        let hash: String = conn
            .query_row(
                "SELECT hash FROM images WHERE base_hash IS NULL LIMIT 1",
                [],
                |row| row.get(0),
            )
            .unwrap();
        conn.execute(
            "UPDATE images SET png = x'89504e470d0a1a0a00' WHERE hash = ?1",
            [&hash],
        )
        .unwrap();
        hash
    };
    let out_file = dir.path().join("out.reprise");
    let out = reprise_with_store(&store)
        .args(["export", "demo", "-o", out_file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_fails(&out, 4, &[damaged.as_str(), "nothing was written"], "");
    assert!(!out_file.exists());
}

#[test]
fn a_store_that_cannot_be_written_is_read_but_not_called_damaged() {
    use std::os::unix::fs::PermissionsExt as _;
    let (dir, store) = store_with_sample();
    // Another user's store (as root, run as nobody), or a read-only one.
    let as_root = std::fs::metadata("/proc/self")
        .map(|meta| std::os::unix::fs::MetadataExt::uid(&meta) == 0)
        .unwrap_or(false);
    // A copy of the binary that the other user can reach (the checkout may
    // lie under a home folder only root can enter).
    let binary = dir.path().join("reprise");
    std::fs::copy(env!("CARGO_BIN_EXE_reprise"), &binary).unwrap();
    let reprise_here = |args: &[&str]| {
        let mut command = if as_root {
            let mut command = Command::new("setpriv");
            command
                .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
                .arg(&binary)
                .env("REPRISE_STORE", &store)
                .env_remove("DISPLAY");
            command
        } else {
            reprise_with_store(&store)
        };
        command.args(args).output().unwrap()
    };
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // Readable by all, whatever the umask: only writing is kept from them.
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    if !as_root {
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o444)).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    let before = std::fs::read(&store).unwrap();
    let out = reprise_here(&["list", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"demo\""));
    let out = reprise_here(&["show", "demo"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Writing is refused as what it is: a permission problem, exit 1.
    let out = reprise_here(&["delete", "demo"]);
    let stderr = assert_fails(&out, 1, &["cannot be written"], "");
    assert!(!stderr.contains("damaged"), "{stderr}");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        std::fs::read(&store).unwrap(),
        before,
        "the store is unchanged"
    );
}

#[test]
fn a_store_with_a_dropped_table_is_damaged_exit_4() {
    let (_dir, store) = store_with_sample();
    rusqlite::Connection::open(&store)
        .unwrap()
        .execute_batch("DROP TABLE llm_calls")
        .unwrap();
    for args in [&["list"][..], &["show", "demo"]] {
        let out = reprise_with_store(&store).args(args).output().unwrap();
        assert_fails(
            &out,
            4,
            &["is damaged: its llm_calls table(s) are missing"],
            &format!("{args:?}"),
        );
    }
}

#[test]
fn events_reduce_reads_openadapts_string_key_codes() {
    let input = json!([
        {"name": "press", "timestamp": 1.0, "key_char": "h", "key_vk": "43", "canonical_key_vk": "43"},
        {"name": "release", "timestamp": 1.1, "key_char": "h", "key_vk": "43"},
        {"name": "press", "timestamp": 1.2, "key_vk": "65437", "canonical_key_vk": "65437"},
        {"name": "release", "timestamp": 1.3, "key_vk": "65437"}
    ]);
    let trees = reduced_via_cli(&[], &input);
    assert_eq!(trees[0]["text"], "h-<65437>", "{trees}");
}

#[test]
fn a_store_with_a_damaged_page_is_refused_with_exit_code_4() {
    let (_dir, store) = store_with_sample();
    // The events table's first page overwritten: the store opens, and the
    // damage shows only when a command reads the recording's events.
    let root: i64 = rusqlite::Connection::open(&store)
        .unwrap()
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = 'action_events'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    let mut bytes = std::fs::read(&store).unwrap();
    let at = (root as usize - 1) * 4096;
    bytes[at..at + 8].fill(0xa5);
    std::fs::write(&store, &bytes).unwrap();
    for args in [
        &["show", "demo"][..],
        &["export", "demo", "-o", "/dev/null"],
    ] {
        let out = reprise_with_store(&store).args(args).output().unwrap();
        assert_fails(&out, 4, &["malformed"], &format!("{args:?}"));
    }
}

#[test]
fn a_recording_already_in_the_store_is_imported_again_only_as_a_named_copy() {
    let (_dir, store) = store_with_sample();
    let out = reprise_with_store(&store)
        .args(["import", SAMPLE])
        .output()
        .unwrap();
    assert_fails(&out, 4, &["import a copy of it with --as NAME"], "");
    run_ok(reprise_with_store(&store).args(["import", SAMPLE, "--as", "demo copy"]));
    let listed: Value =
        serde_json::from_str(&run_ok(reprise_with_store(&store).args(["list", "--json"]))).unwrap();
    let mut names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["demo", "demo copy"]);
    // The copy is whole: it shows and exports like the original.
    run_ok(reprise_with_store(&store).args(["export", "demo copy", "-o", "/dev/null"]));
    let bad = reprise_with_store(&store)
        .args(["import", SAMPLE, "--as", "bad\nname"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// Unmounts a file system when dropped (also when a test fails).
struct Mounted(std::path::PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Bytes free on the file system holding `path`.
fn bytes_free(path: &std::path::Path) -> u64 {
    let out = run_ok(Command::new("df").args(["--output=avail", "-B1"]).arg(path));
    out.lines().nth(1).unwrap().trim().parse().unwrap()
}

/// Writes to `path` until the file system holding it is full.
fn fill(path: &std::path::Path) {
    let mut file = std::fs::File::create(path).unwrap();
    for size in [64 << 10, 512, 1] {
        let block = vec![7u8; size];
        while file.write_all(&block).and_then(|()| file.flush()).is_ok() {}
    }
    let _ = file.sync_all();
}

/// Issue 14, item 12: on a full disk `delete` failed ("database or disk is
/// full"; SQLite could not even make its shared memory file), so Reprise
/// could not free the space it uses. The store keeps a reserve beside it
/// for this, and a deletion gives what it frees back to the disk.
#[test]
fn delete_works_on_a_full_disk_and_gives_the_space_back() {
    let dir = tempfile::tempdir().unwrap();
    let disk = dir.path().join("small-disk");
    std::fs::create_dir(&disk).unwrap();
    run_ok(
        Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=16m", "tmpfs"])
            .arg(&disk),
    );
    let _mounted = Mounted(disk.clone());
    let store = disk.join("store.sqlite");
    let reserve = disk.join("store.sqlite-reserve");
    run_ok(reprise_with_store(&store).args(["import", SAMPLE]));
    // A copy shares the original's images: deleting the original frees
    // only its rows, and the copy must stay whole.
    run_ok(reprise_with_store(&store).args(["import", SAMPLE, "--as", "demo copy"]));
    assert!(reserve.exists());

    fill(&disk.join("filler"));
    assert_eq!(bytes_free(&disk), 0);
    // Reading works on a full disk; writing says what is wrong.
    let listed = run_ok(reprise_with_store(&store).args(["list", "--json"]));
    assert!(listed.contains("\"demo copy\""), "{listed}");
    let out = reprise_with_store(&store)
        .args(["import", SAMPLE, "--as", "third"])
        .output()
        .unwrap();
    let stderr = assert_fails(&out, 1, &["disk holding the store", "is full"], "");
    assert!(!stderr.contains("damaged"), "{stderr}");
    let deleted = run_ok(reprise_with_store(&store).args(["delete", "demo"]));
    assert!(deleted.contains("given back to the disk"), "{deleted}");
    assert!(reserve.exists(), "the reserve is written again");
    let copy = dir.path().join("copy.reprise");
    run_ok(
        reprise_with_store(&store)
            .args(["export", "demo copy", "-o"])
            .arg(&copy),
    );
    std::fs::remove_file(&copy).unwrap();

    // Full again: the last recording's images go back to the disk.
    fill(&disk.join("filler-2"));
    assert_eq!(bytes_free(&disk), 0);
    let deleted = run_ok(reprise_with_store(&store).args(["delete", "demo copy"]));
    assert!(deleted.contains("given back to the disk"), "{deleted}");
    let free = bytes_free(&disk);
    assert!(free > 600 << 10, "{free} bytes free after: {deleted}");
    let listed = run_ok(reprise_with_store(&store).args(["list", "--json"]));
    assert_eq!(listed.trim(), "[]");
    assert!(reserve.exists(), "the reserve is written again");
}

/// Shell completions and manual pages, as other Rust command-line tools
/// ship them.
#[test]
fn completions_and_manual_pages_are_generated_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let bash = run_ok(reprise_with_store(&store).args(["completions", "bash"]));
    assert!(
        bash.contains("complete -F _reprise") && bash.contains("record"),
        "{bash}"
    );
    assert!(
        !bash.contains("__listen-input"),
        "the recorder's own child command is not offered"
    );
    let zsh = run_ok(reprise_with_store(&store).args(["completions", "zsh"]));
    assert!(zsh.starts_with("#compdef reprise"), "{zsh}");
    let fish = run_ok(reprise_with_store(&store).args(["completions", "fish"]));
    assert!(fish.contains("complete -c reprise"), "{fish}");
    let out = reprise_with_store(&store)
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));

    let page = run_ok(reprise_with_store(&store).args(["man"]));
    assert!(
        page.starts_with(".ie") || page.contains(".TH reprise"),
        "{page}"
    );
    assert!(page.contains("replay"), "{page}");
    let pages = dir.path().join("man1");
    let said = run_ok(
        reprise_with_store(&store)
            .args(["man", "--dir"])
            .arg(&pages),
    );
    assert!(said.starts_with("wrote "), "{said}");
    for name in [
        "reprise.1",
        "reprise-record.1",
        "reprise-replay.1",
        "reprise-runs.1",
    ] {
        let text = std::fs::read_to_string(pages.join(name)).unwrap();
        assert!(text.contains(".SH"), "{name}: {text}");
    }
    assert!(!pages.join("reprise-__listen-input.1").exists());
    // Nested commands have pages too, every page a list of subcommands
    // links to exists, each names its command in full and ends with the
    // exit codes.
    let written: Vec<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for nested in [
        "reprise-runs-show.1",
        "reprise-jobs-submit.1",
        "reprise-events-reduce.1",
    ] {
        assert!(
            written.iter().any(|name| name == nested),
            "{nested}: {written:?}"
        );
    }
    for name in &written {
        let text = std::fs::read_to_string(pages.join(name)).unwrap();
        let stem = name.trim_end_matches(".1");
        assert!(
            text.contains(&format!("{} \\-", stem.replace('-', "\\-")))
                || text.contains(&format!("{stem} \\-")),
            "{name} names itself: {text}"
        );
        assert!(text.contains("Exit codes:"), "{name} lists the exit codes");
        for linked in text
            .split(['\n', ' '])
            .filter_map(|word| word.strip_suffix("(1)"))
        {
            let linked = linked.replace("\\-", "-");
            assert!(
                pages.join(format!("{linked}.1")).exists(),
                "{name} links to {linked}"
            );
        }
    }
    let help = run_ok(reprise_with_store(&store).args(["runs", "show", "--help"]));
    assert!(
        help.contains("Exit codes:") && help.contains("12  a replay"),
        "{help}"
    );
    // man(1) reads them, where it is installed.
    if let Ok(out) = Command::new("man")
        .arg("-l")
        .arg(pages.join("reprise-record.1"))
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
    {
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("--stop-sequence"), "{text}");
    }
}
