//! The store: one SQLite file holding recordings, their events, screenshots and
//! window states, and replay runs. Only this module knows SQL.

mod llm;
mod recordings;
mod runs;
mod schema;
mod segmentations;

use std::path::{Path, PathBuf};

use rusqlite::Connection;

pub use llm::{CachedReply, CallRow, UsageTotal};
pub use recordings::{RecordingSummary, ScreenshotBlob};
pub use runs::{RunRecord, RunStep};
pub use segmentations::{NewSegmentation, SegmentationRow};

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
    #[error("no replay run matches {0:?}")]
    RunNotFound(String),
    #[error("no replay runs yet: run `reprise replay` first")]
    NoRuns,
    #[error("{query:?} matches several recordings: {candidates}; name one by more of its id")]
    Ambiguous { query: String, candidates: String },
    #[error("recording {0} is already in the store")]
    AlreadyExists(String),
    #[error("the stored data of recording {id} is unreadable: {reason}")]
    BadRow { id: String, reason: String },
    #[error("the stored image {hash} is unreadable: {reason}")]
    BadImage { hash: String, reason: String },
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
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

    fn prepare(&mut self) -> Result<()> {
        let path = self.path.clone();
        let corrupt = |source| StoreError::Corrupt {
            path: path.clone(),
            source,
        };
        // Two processes may open a new store at once (a recorder and a
        // `list`): they wait for each other instead of failing.
        self.conn.busy_timeout(std::time::Duration::from_secs(5))?;
        // Reading the schema version is the first thing that reads the file,
        // so a file that is not SQLite fails here, before anything is written.
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(corrupt)?;
        if version > schema::VERSION {
            return Err(StoreError::Newer {
                path,
                found: version,
                known: schema::VERSION,
            });
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
        self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        self.conn.pragma_update(None, "foreign_keys", "ON")?;
        schema::migrate(&mut self.conn, version).map_err(corrupt)?;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests;

/// Test data shared with other modules' unit tests.
#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) use super::tests::sample_bundle;
}
