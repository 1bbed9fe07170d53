//! Disk space: the store gives back what a deletion frees, and keeps a
//! reserve beside itself so that deleting works on a full disk.
//!
//! On a full disk SQLite cannot even open a store in WAL mode (its shared
//! memory file needs a block), let alone log a deletion. So a store opened
//! for writing keeps [`RESERVE_BYTES`] of zeros in a file beside it
//! (`store.sqlite-reserve`); a deletion removes that file first, deletes,
//! hands the freed pages back to the file system in small steps (each
//! step's log is checkpointed away before the next), and writes the reserve
//! again if there is room.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::{Result, Store};

/// The reserve's size: room for the shared memory file, the log of a
/// deletion, and one step of giving space back.
pub const RESERVE_BYTES: u64 = 4 << 20;

/// Pages moved per step of giving space back: each step's log (at most this
/// many pages) must fit in what the reserve left.
const PAGES_PER_STEP: u32 = 128;

/// The reserve file of the store at `store`.
pub fn reserve_path(store: &Path) -> PathBuf {
    let mut name = store.file_name().unwrap_or_default().to_owned();
    name.push("-reserve");
    store.with_file_name(name)
}

/// Writes the reserve when it is missing or short; where it does not fit,
/// no partial file is left. Never fails: the reserve is a precaution.
pub fn keep_reserve(store: &Path) {
    let path = reserve_path(store);
    if std::fs::metadata(&path).is_ok_and(|meta| meta.len() >= RESERVE_BYTES) {
        return;
    }
    let written = (|| -> std::io::Result<()> {
        let mut file = std::fs::File::create(&path)?;
        let block = vec![0u8; 64 << 10];
        for _ in 0..RESERVE_BYTES / block.len() as u64 {
            file.write_all(&block)?;
        }
        // Blocks that exist, not a sparse promise (tmpfs and most disks
        // allocate on write; syncing makes the allocation durable).
        file.sync_all()
    })();
    if let Err(err) = written {
        tracing::debug!("no room for the store's reserve ({err})");
        let _ = std::fs::remove_file(&path);
    }
}

/// Removes the reserve (if any) so that a deletion has room.
pub fn release_reserve(store: &Path) {
    let _ = std::fs::remove_file(reserve_path(store));
}

/// What the store and its log take on disk, in bytes.
pub fn store_bytes(store: &Path) -> u64 {
    let len = |path: &Path| std::fs::metadata(path).map_or(0, |meta| meta.len());
    let mut wal = store.as_os_str().to_owned();
    wal.push("-wal");
    len(store) + len(Path::new(&wal))
}

impl Store {
    /// Hands the store's free pages back to the file system: in steps of
    /// [`PAGES_PER_STEP`], each step's log checkpointed away before the
    /// next, so it works with little room. A store made before stores gave
    /// space back (no incremental auto-vacuum) is rewritten once (VACUUM),
    /// which needs room for a copy of it; where that fails, its free pages
    /// stay inside it for new recordings, and `false` is returned.
    pub fn give_back_space(&mut self) -> Result<bool> {
        let conn = &self.conn;
        let auto_vacuum: i64 = conn.query_row("PRAGMA auto_vacuum", [], |row| row.get(0))?;
        if auto_vacuum != 2 {
            conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
            if let Err(err) = conn.execute_batch("VACUUM") {
                tracing::info!("the store could not be rewritten to give space back ({err})");
                return Ok(false);
            }
            checkpoint(conn)?;
            return Ok(true);
        }
        let free: u32 = conn.query_row("PRAGMA freelist_count", [], |row| row.get(0))?;
        // Bounded: each step frees up to PAGES_PER_STEP pages.
        for _ in 0..=free / PAGES_PER_STEP {
            // Each row the pragma steps through frees one page: step to its end.
            let mut statement =
                conn.prepare(&format!("PRAGMA incremental_vacuum({PAGES_PER_STEP})"))?;
            let mut rows = statement.query([])?;
            while rows.next()?.is_some() {}
            drop(rows);
            checkpoint(conn)?;
            let left: u32 = conn.query_row("PRAGMA freelist_count", [], |row| row.get(0))?;
            if left == 0 {
                break;
            }
        }
        Ok(true)
    }
}

/// Copies the log into the store and empties it (so its blocks are free).
fn checkpoint(conn: &Connection) -> Result<()> {
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    Ok(())
}
