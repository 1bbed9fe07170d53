//! The store's schema and its migrations. `PRAGMA user_version` holds the
//! number of migrations applied; a store with more than this build knows is
//! refused before anything is read or written.

use rusqlite::Connection;

/// Each entry brings the schema from version `index` to `index + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: recordings, their data, images stored once per content hash, replay runs.
    "
    CREATE TABLE recordings (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        task_description TEXT NOT NULL,
        created TEXT NOT NULL,
        platform TEXT NOT NULL,
        monitor TEXT NOT NULL,
        double_click TEXT NOT NULL,
        format_version INTEGER NOT NULL,
        complete INTEGER NOT NULL
    );
    CREATE INDEX recordings_name ON recordings(name);
    CREATE TABLE images (
        hash TEXT PRIMARY KEY,
        png BLOB NOT NULL
    );
    CREATE TABLE screenshots (
        recording_id TEXT NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        timestamp REAL NOT NULL,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        screen TEXT NOT NULL,
        hash TEXT NOT NULL REFERENCES images(hash),
        PRIMARY KEY (recording_id, idx)
    );
    CREATE INDEX screenshots_hash ON screenshots(hash);
    CREATE TABLE window_states (
        recording_id TEXT NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        timestamp REAL NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (recording_id, idx)
    );
    CREATE TABLE action_events (
        recording_id TEXT NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        timestamp REAL NOT NULL,
        name TEXT NOT NULL,
        event TEXT NOT NULL,
        PRIMARY KEY (recording_id, seq)
    );
    CREATE TABLE replay_runs (
        id TEXT PRIMARY KEY,
        recording_id TEXT NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
        strategy TEXT NOT NULL,
        arguments TEXT NOT NULL,
        started TEXT NOT NULL,
        ended TEXT,
        outcome TEXT,
        summary TEXT
    );
    CREATE TABLE replay_steps (
        run_id TEXT NOT NULL REFERENCES replay_runs(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        step TEXT NOT NULL,
        screenshot_hash TEXT REFERENCES images(hash),
        PRIMARY KEY (run_id, idx)
    );
    CREATE INDEX replay_steps_hash ON replay_steps(screenshot_hash);
    ",
    // 2: model calls: the response cache and the accounting of every call.
    "
    CREATE TABLE llm_cache (
        key TEXT PRIMARY KEY,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        text TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        created REAL NOT NULL
    );
    CREATE TABLE llm_calls (
        id INTEGER PRIMARY KEY,
        created REAL NOT NULL,
        run_id TEXT,
        purpose TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        latency_ms INTEGER NOT NULL,
        attempts INTEGER NOT NULL,
        cached INTEGER NOT NULL,
        cost_usd REAL,
        error TEXT
    );
    CREATE INDEX llm_calls_run ON llm_calls(run_id);
    ",
    // 3: the segmentation cache, reused across processes.
    "
    CREATE TABLE segmentations (
        id INTEGER PRIMARY KEY,
        segmenter TEXT NOT NULL,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        phash INTEGER NOT NULL,
        thumbnail BLOB NOT NULL,
        thumbnail_width INTEGER NOT NULL,
        image_hash TEXT NOT NULL REFERENCES images(hash),
        segments TEXT NOT NULL,
        descriptions TEXT,
        created REAL NOT NULL
    );
    CREATE INDEX segmentations_size ON segmentations(segmenter, width, height);
    ",
    // 4: recorded frames as patches against a key frame (src/frames.rs): an
    // image with a base is the rectangle at (patch_x, patch_y) that differs
    // from the whole image stored under base_hash.
    "
    ALTER TABLE images ADD COLUMN base_hash TEXT REFERENCES images(hash);
    ALTER TABLE images ADD COLUMN patch_x INTEGER;
    ALTER TABLE images ADD COLUMN patch_y INTEGER;
    CREATE INDEX images_base ON images(base_hash) WHERE base_hash IS NOT NULL;
    ",
    // 5: the cache lookup's candidates come from the index alone, newest
    // first: read from the table, each row's key fields sit behind its
    // thumbnail (overflow pages), which made a lookup among 1,000 rows cost
    // 4 ms.
    "
    DROP INDEX segmentations_size;
    CREATE INDEX segmentations_key
        ON segmentations(segmenter, width, height, id, phash, thumbnail_width, image_hash);
    ",
    // 6: the names the person gave a recording's parameters, as JSON
    // (derived name -> chosen name).
    "
    ALTER TABLE recordings ADD COLUMN parameter_names TEXT NOT NULL DEFAULT '{}';
    ",
    // 7: the fleet (`reprise serve`): the durable record of every job, its
    // events (state changes and steps, in order: an event's id is the SSE
    // stream's id) and the workers. Redis carries the queue; this is what
    // happened.
    "
    CREATE TABLE fleet_jobs (
        id TEXT PRIMARY KEY,
        recording_id TEXT NOT NULL,
        pool TEXT NOT NULL,
        spec TEXT NOT NULL,
        state TEXT NOT NULL,
        attempt INTEGER NOT NULL DEFAULT 0,
        worker TEXT,
        entry TEXT,
        injected INTEGER NOT NULL DEFAULT 0,
        cancel INTEGER NOT NULL DEFAULT 0,
        retry_at TEXT,
        outcome TEXT,
        reason TEXT,
        run_id TEXT,
        report TEXT,
        created TEXT NOT NULL,
        started TEXT,
        ended TEXT
    );
    CREATE INDEX fleet_jobs_state ON fleet_jobs(state, pool);
    CREATE TABLE fleet_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id TEXT NOT NULL REFERENCES fleet_jobs(id),
        kind TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        step INTEGER,
        data TEXT NOT NULL,
        at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX fleet_events_step ON fleet_events(job_id, attempt, step)
        WHERE step IS NOT NULL;
    CREATE INDEX fleet_events_job ON fleet_events(job_id, id);
    CREATE TABLE fleet_workers (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pool TEXT NOT NULL,
        labels TEXT NOT NULL,
        job TEXT,
        registered TEXT NOT NULL,
        heartbeat TEXT NOT NULL,
        gone INTEGER NOT NULL DEFAULT 0
    );
    ",
    // 8: the desktop's monitors, as JSON (empty with one monitor).
    "
    ALTER TABLE recordings ADD COLUMN monitors TEXT NOT NULL DEFAULT '[]';
    ",
    // 9: versions of a recording past the first: changes of its steps'
    // targets (healed, taught), as JSON.
    "
    CREATE TABLE recording_versions (
        recording_id TEXT NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        created TEXT NOT NULL,
        note TEXT NOT NULL,
        run_id TEXT,
        changes TEXT NOT NULL,
        PRIMARY KEY (recording_id, version)
    );
    ",
    // 10: a version's program (its steps as edited: order, instructions,
    // values), as JSON; NULL where it replays the recording's steps.
    "
    ALTER TABLE recording_versions ADD COLUMN program TEXT;
    ",
    // 11: the fleet's schedules: jobs submitted later, once or at every
    // slot of a cron expression. A slot is fired in the transaction that
    // moves `next` on, so that no slot makes its jobs twice. And what a
    // user made of a dead letter: the job it was requeued as, or set aside.
    "
    CREATE TABLE fleet_schedules (
        id TEXT PRIMARY KEY,
        request TEXT NOT NULL,
        every TEXT,
        time_zone TEXT NOT NULL,
        state TEXT NOT NULL,
        next TEXT,
        last_slot TEXT,
        runs INTEGER NOT NULL DEFAULT 0,
        skipped INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        created TEXT NOT NULL
    );
    CREATE INDEX fleet_schedules_next ON fleet_schedules(state, next);
    ALTER TABLE fleet_jobs ADD COLUMN requeued_as TEXT;
    ALTER TABLE fleet_jobs ADD COLUMN discarded INTEGER NOT NULL DEFAULT 0;
    ",
    // 12: the fleet's audit log (who did what, when, from where), and the
    // token each worker registered with (a worker acts only as its own).
    "
    CREATE TABLE fleet_audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        who TEXT NOT NULL,
        role TEXT NOT NULL,
        action TEXT NOT NULL,
        status INTEGER NOT NULL,
        from_addr TEXT NOT NULL
    );
    CREATE INDEX fleet_audit_at ON fleet_audit(at);
    ALTER TABLE fleet_workers ADD COLUMN owner TEXT;
    ",
    // 13: what the server's tick looks at, found by index: queued jobs
    // whose deadline may pass, and those without a queue entry. Every
    // queued job was loaded twice a second before (with 10,000 queued,
    // that was most of an idle server's work).
    "
    CREATE INDEX fleet_jobs_deadline ON fleet_jobs(json_extract(spec, '$.deadline'))
        WHERE state = 'queued';
    CREATE INDEX fleet_jobs_unqueued ON fleet_jobs(state) WHERE entry IS NULL;
    ",
    // 14: the web console's sessions, so that a server restart logs no one
    // out: each by its cookie's SHA-256 (the store holds no cookie).
    "
    CREATE TABLE console_sessions (
        id_sha256 TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        role TEXT NOT NULL,
        csrf TEXT NOT NULL,
        expires TEXT NOT NULL
    );
    CREATE INDEX console_sessions_expires ON console_sessions(expires);
    ",
];

/// Every table the migrations make; a store missing one is damaged.
pub const TABLES: [&str; 17] = [
    "recordings",
    "images",
    "screenshots",
    "window_states",
    "action_events",
    "replay_runs",
    "replay_steps",
    "llm_cache",
    "llm_calls",
    "segmentations",
    "fleet_jobs",
    "fleet_events",
    "fleet_workers",
    "recording_versions",
    "fleet_schedules",
    "fleet_audit",
    "console_sessions",
];

/// The tables of [`TABLES`] the store does not have.
pub fn missing_tables(conn: &Connection) -> rusqlite::Result<Vec<&'static str>> {
    let mut statement =
        conn.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")?;
    let mut missing = Vec::new();
    for table in TABLES {
        if !statement.exists([table])? {
            missing.push(table);
        }
    }
    Ok(missing)
}

/// The schema version this build writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// Applies the migrations after the store's version, each in its own
/// immediate transaction that reads the version again under the write lock,
/// so two processes opening a new store at once never apply one twice.
pub fn migrate(conn: &mut Connection, _from: i64) -> rusqlite::Result<()> {
    loop {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let current: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        let Some(sql) = MIGRATIONS.get(current.max(0) as usize) else {
            return Ok(());
        };
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", current + 1)?;
        tx.commit()?;
    }
}
