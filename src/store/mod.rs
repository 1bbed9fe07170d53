//! The store: one SQLite file holding recordings, their events, screenshots and
//! window states, and replay runs. Only this module knows SQL.

pub mod archive;
mod audit;
mod sessions;
pub use sessions::StoredSession;
mod fleet;
pub mod frames;
mod images;
mod llm;
mod recordings;
mod runs;
mod schedules;
mod schema;
mod segmentations;
pub mod space;
mod versions;

use std::path::{Path, PathBuf};

use rusqlite::Connection;

pub use fleet::{NewEvent, WorkerRow};
pub use llm::{CachedReply, CallRow, UsageTotal};
pub use recordings::{Batch, RecordingSummary, ScreenshotBlob};
pub use runs::{
    BatchRow, Resumption, RunArguments, RunListing, RunRecord, RunRungs, RunStep, RunSummary,
    StoredStep,
};
pub use schedules::Fired;
pub use segmentations::{NewSegmentation, SegmentationRow};
pub use versions::split_version;

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("create the folder {path} for the store: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("open the store at {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "the store at {path} is not a Reprise store or is damaged ({source}); it was left as it is"
    )]
    Corrupt {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "the store at {path} was written by a newer Reprise (schema {found}, this build knows up to {known}); it was left as it is: upgrade Reprise to use it"
    )]
    Newer {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("no recording matches {0:?} (see `reprise list`)")]
    NotFound(String),
    #[error(
        "recording {recording} has no version {version} (its versions: 1 to {latest}; see `reprise versions`)"
    )]
    NoVersion {
        recording: String,
        version: u32,
        latest: u32,
    },
    #[error("no replay run matches {0:?}")]
    RunNotFound(String),
    #[error("no replay runs yet: run `reprise replay` first")]
    NoRuns,
    #[error("{query:?} matches several recordings: {candidates}; name one by more of its id")]
    Ambiguous { query: String, candidates: String },
    #[error("recording {0} is already in the store (import a copy of it with --as NAME)")]
    AlreadyExists(String),
    #[error("the stored data of recording {id} is unreadable: {reason}")]
    BadRow { id: String, reason: String },
    #[error("the stored image {hash} is unreadable: {reason}")]
    BadImage { hash: String, reason: String },
    #[error(
        "the store {path} cannot be written: it, or its folder, is read-only or belongs to another user (commands that only read it still work)"
    )]
    ReadOnly { path: PathBuf },
    #[error(
        "the disk holding the store {path} is full: free some space (`reprise delete` and `reprise runs prune` work on a full disk, and give back what they free)"
    )]
    DiskFull { path: PathBuf },
    #[error("the store {path} is damaged: its {} table(s) are missing", .tables.join(", "))]
    MissingTables {
        path: PathBuf,
        tables: Vec<&'static str>,
    },
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
}

/// `path` as an SQLite `file:` URI, its special and non-ASCII bytes
/// percent-escaped.
/// Whether `query` may be the start of an id (a uuid's, matched in lower
/// case): four or more hex digits and dashes. Anything else (`%`, `_`, an empty text)
/// names no id, whatever ids the store holds.
fn is_id_prefix(query: &str) -> bool {
    query.len() >= 4 && query.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

fn url_path(path: &Path) -> String {
    let mut uri = String::from("file:");
    for byte in path.as_os_str().as_encoded_bytes() {
        match byte {
            b'?' | b'#' | b'%' | 0x80.. => uri.push_str(&format!("%{byte:02X}")),
            _ => uri.push(char::from(*byte)),
        }
    }
    uri
}

impl StoreError {
    /// Whether SQLite met a damaged page (or a file that is not a
    /// database) while reading: the store is damaged, whichever command
    /// found it.
    pub fn is_damage(&self) -> bool {
        matches!(
            self,
            StoreError::Sql(rusqlite::Error::SqliteFailure(failure, _))
                if matches!(
                    failure.code,
                    rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase
                )
        )
    }
}

/// The store's schema version; a store from a newer Reprise is refused.
fn schema_version(conn: &Connection, path: &Path) -> Result<i64> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(|source| unreadable(path, source))?;
    if version > schema::VERSION {
        return Err(StoreError::Newer {
            path: path.to_owned(),
            found: version,
            known: schema::VERSION,
        });
    }
    Ok(version)
}

/// A failure to read or set up the store at `path`: for want of write
/// access, or because it is damaged (or not a store at all).
fn unreadable(path: &Path, source: rusqlite::Error) -> StoreError {
    if is_disk_full(&source) {
        StoreError::DiskFull {
            path: path.to_owned(),
        }
    } else if is_read_only(&source) {
        StoreError::ReadOnly {
            path: path.to_owned(),
        }
    } else {
        StoreError::Corrupt {
            path: path.to_owned(),
            source,
        }
    }
}

/// Whether SQLite failed for want of write access (not for damage).
/// SQLite's words for a full disk: the database or its log could not grow,
/// or its shared memory file could not be made.
fn is_disk_full(err: &rusqlite::Error) -> bool {
    /// SQLITE_IOERR_SHMSIZE: no room to size the shared memory file.
    const IOERR_SHMSIZE: std::ffi::c_int = 4874;
    matches!(
        err,
        rusqlite::Error::SqliteFailure(failure, _)
            if failure.code == rusqlite::ErrorCode::DiskFull
                || failure.extended_code == IOERR_SHMSIZE
    )
}

fn is_read_only(err: &rusqlite::Error) -> bool {
    matches!(
        err,
        rusqlite::Error::SqliteFailure(failure, _)
            if matches!(
                failure.code,
                rusqlite::ErrorCode::ReadOnly
                    | rusqlite::ErrorCode::CannotOpen
                    | rusqlite::ErrorCode::PermissionDenied
            )
    )
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// An open store. Writes are batched in transactions by the callers' units of
/// work (one recording flush, one import, one replay step).
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// The store's default location: the per-user data directory.
    pub fn default_path() -> PathBuf {
        dirs::data_dir()
            .unwrap_or_else(|| PathBuf::from("."))
            .join("reprise")
            .join("store.sqlite")
    }

    /// Opens (creating if needed) the store at `path` and brings its schema up
    /// to date. A store from a newer major version, or a file that is not a
    /// store, is refused and left untouched.
    pub fn open(path: &Path) -> Result<Store> {
        let store = Store::open_unreserved(path)?;
        space::keep_reserve(path);
        Ok(store)
    }

    /// Opens the store at `path` to delete from it: its reserve is removed
    /// first, so that this works on a full disk (see [`space`]). Write the
    /// reserve again with [`space::keep_reserve`] once the deletion is done.
    pub fn open_to_delete(path: &Path) -> Result<Store> {
        space::release_reserve(path);
        Store::open_unreserved(path)
    }

    fn open_unreserved(path: &Path) -> Result<Store> {
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::CreateDir {
                path: parent.to_owned(),
                source,
            })?;
        }
        let conn = Connection::open(path).map_err(|source| StoreError::Open {
            path: path.to_owned(),
            source,
        })?;
        let mut store = Store {
            conn,
            path: path.to_owned(),
        };
        store.prepare()?;
        Ok(store)
    }

    /// Opens the store at `path` for commands that only read it: as
    /// [`Store::open`] does, or, where the store cannot be written (a
    /// read-only file or folder, a full disk), read-only, as long as its
    /// schema needs no upgrade.
    pub fn open_to_read(path: &Path) -> Result<Store> {
        match Store::open(path) {
            // A full disk has no room for SQLite's shared memory file:
            // reading works without one.
            Err(StoreError::ReadOnly { .. } | StoreError::DiskFull { .. }) if path.exists() => {}
            other => return other,
        }
        let read_only = || StoreError::ReadOnly {
            path: path.to_owned(),
        };
        // Read-only, and where no write-ahead log is left beside it (a
        // store closed cleanly), immutable: SQLite then needs no shared
        // memory file, which a folder it cannot write would not let it make.
        let wal = path.with_extension("sqlite-wal");
        let unlogged = std::fs::metadata(&wal).map_or(true, |meta| meta.len() == 0);
        let mut uri = url_path(path);
        uri.push_str(if unlogged {
            "?mode=ro&immutable=1"
        } else {
            "?mode=ro"
        });
        let conn = Connection::open_with_flags(
            &uri,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
                | rusqlite::OpenFlags::SQLITE_OPEN_URI
                | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|_| read_only())?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let version = schema_version(&conn, path)?;
        if version < schema::VERSION {
            // An older schema needs writing to upgrade.
            return Err(read_only());
        }
        let store = Store {
            conn,
            path: path.to_owned(),
        };
        store.check_tables()?;
        Ok(store)
    }

    fn prepare(&mut self) -> Result<()> {
        let path = self.path.clone();
        let corrupt = |source: rusqlite::Error| unreadable(&path, source);
        // Two processes may open a new store at once (a recorder and a
        // `list`): they wait for each other instead of failing.
        self.conn.busy_timeout(std::time::Duration::from_secs(5))?;
        // Reading the schema version is the first thing that reads the file,
        // so a file that is not SQLite fails here, before anything is written.
        let version = schema_version(&self.conn, &path)?;
        if version == 0 {
            // A new store gives back what deletions free (see `space`):
            // set before its first table, or it cannot be set without
            // rewriting the whole file.
            self.conn
                .pragma_update(None, "auto_vacuum", "INCREMENTAL")
                .map_err(corrupt)?;
        }
        // Switching to WAL can answer "busy" at once, without the busy
        // handler, while another process switches it: retry, bounded.
        let mut attempts = 0;
        loop {
            match self.conn.pragma_update(None, "journal_mode", "WAL") {
                Ok(()) => break,
                Err(rusqlite::Error::SqliteFailure(err, _))
                    if err.code == rusqlite::ErrorCode::DatabaseBusy && attempts < 250 =>
                {
                    attempts += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(err) => return Err(corrupt(err)),
            }
        }
        self.conn
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(corrupt)?;
        self.conn
            .pragma_update(None, "foreign_keys", "ON")
            .map_err(corrupt)?;
        schema::migrate(&mut self.conn, version).map_err(corrupt)?;
        self.check_tables()
    }

    /// Refuses a store whose tables are not all there (one was dropped).
    fn check_tables(&self) -> Result<()> {
        let tables = schema::missing_tables(&self.conn)?;
        if tables.is_empty() {
            return Ok(());
        }
        Err(StoreError::MissingTables {
            path: self.path.clone(),
            tables,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Deletes the images nothing refers to any more (no recording's frame, no
/// replay step's, no segmentation's, no patch's base).
fn delete_unused_images(tx: &rusqlite::Transaction<'_>) -> Result<()> {
    // Twice: a key frame kept only by patches deleted in the first pass
    // goes in the second (a patch's base is always a whole image).
    for _ in 0..2 {
        tx.execute(
            "DELETE FROM images WHERE hash NOT IN (SELECT hash FROM screenshots)
               AND hash NOT IN (SELECT screenshot_hash FROM replay_steps WHERE screenshot_hash IS NOT NULL)
               AND hash NOT IN (SELECT image_hash FROM segmentations)
               AND hash NOT IN (SELECT base_hash FROM images WHERE base_hash IS NOT NULL)",
            [],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;

/// Test data shared with other modules' unit tests.
#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) use super::tests::sample_bundle;
}
