//! A worker's identity on its desktop: the id the server gave it, kept
//! beside the desktop's store so a worker started again there is the same
//! worker (a halted job resumed on that desktop is still its), and a lock
//! there that lets one worker at a time run on the store.

use std::ffi::OsString;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// The id kept and the lock held (released when the worker ends, or dies).
pub(super) struct Identity {
    file: PathBuf,
    _lock: File,
    /// The id this desktop's worker was given before, where one was kept.
    pub(super) known: Option<String>,
}

/// `store`'s path with `suffix` after it.
fn beside(store: &Path, suffix: &str) -> PathBuf {
    let mut path = OsString::from(store.as_os_str());
    path.push(suffix);
    PathBuf::from(path)
}

impl Identity {
    /// Takes the store's worker lock (refused while another worker holds
    /// it) and reads the id kept beside it.
    pub(super) fn claim(store: &Path) -> anyhow::Result<Identity> {
        let lock_path = beside(store, ".worker-lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("open the worker lock {}", lock_path.display()))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => bail!(
                "another worker runs on the store {} (it holds {}): one worker a desktop",
                store.display(),
                lock_path.display()
            ),
            Err(TryLockError::Error(err)) => {
                return Err(err).with_context(|| format!("lock {}", lock_path.display()));
            }
        }
        let file = beside(store, ".worker-id");
        let known = match std::fs::read_to_string(&file) {
            Ok(text) if reprise_models::fleet::is_worker_id(text.trim()) => {
                Some(text.trim().to_owned())
            }
            Ok(text) => {
                tracing::warn!(
                    "{} holds no worker id ({:?}): registering as a new worker",
                    file.display(),
                    text.chars().take(80).collect::<String>()
                );
                None
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => return Err(err).with_context(|| format!("read {}", file.display())),
        };
        Ok(Identity {
            file,
            _lock: lock,
            known,
        })
    }

    /// Keeps `id`, the one the server gave, for the next start (written
    /// whole or not at all).
    pub(super) fn keep(&mut self, id: &str) -> anyhow::Result<()> {
        if self.known.as_deref() == Some(id) {
            return Ok(());
        }
        let partial = beside(&self.file, ".partial");
        std::fs::write(&partial, format!("{id}\n"))
            .and_then(|()| std::fs::rename(&partial, &self.file))
            .with_context(|| format!("keep the worker id in {}", self.file.display()))?;
        self.known = Some(id.to_owned());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Identity;

    #[test]
    fn an_id_is_kept_beside_the_store_and_one_worker_at_a_time_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store.sqlite");
        let mut first = Identity::claim(&store).unwrap();
        assert_eq!(first.known, None);
        let second = Identity::claim(&store).err().expect("the lock is held");
        assert!(
            second
                .to_string()
                .contains("another worker runs on the store"),
            "{second}"
        );
        first.keep("desk-1a2b3c4d").unwrap();
        drop(first);
        let again = Identity::claim(&store).unwrap();
        assert_eq!(again.known.as_deref(), Some("desk-1a2b3c4d"));
        drop(again);
        // What is not an id the server gives is not sent to it.
        std::fs::write(dir.path().join("store.sqlite.worker-id"), "a b\n").unwrap();
        assert_eq!(Identity::claim(&store).unwrap().known, None);
    }
}
