//! The web console's sessions in the server's store, each by the SHA-256
//! of its cookie: a restart logs no one out, and the store holds nothing a
//! browser could present.

use rusqlite::{OptionalExtension, params};

use super::{Result, Store};

/// A console session as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSession {
    /// The name of the token it was opened with.
    pub name: String,
    /// `user` or `viewer`.
    pub role: String,
    pub csrf: String,
    /// When it ends (RFC 3339, UTC).
    pub expires: String,
}

impl Store {
    /// Keeps a session; the expired ones go, and the soonest to expire
    /// beyond `most` (the store never holds more).
    pub fn add_session(
        &mut self,
        id_sha256: &str,
        session: &StoredSession,
        now: &str,
        most: usize,
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "DELETE FROM console_sessions WHERE expires <= ?1",
            params![now],
        )?;
        tx.execute(
            "DELETE FROM console_sessions WHERE id_sha256 IN (
                 SELECT id_sha256 FROM console_sessions ORDER BY expires
                 LIMIT max(0, (SELECT COUNT(*) FROM console_sessions) - ?1 + 1))",
            params![most as i64],
        )?;
        tx.execute(
            "INSERT OR REPLACE INTO console_sessions (id_sha256, name, role, csrf, expires)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                id_sha256,
                session.name,
                session.role,
                session.csrf,
                session.expires
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The session of that cookie's SHA-256, unless it has expired by `now`.
    pub fn session(&self, id_sha256: &str, now: &str) -> Result<Option<StoredSession>> {
        Ok(self
            .conn
            .query_row(
                "SELECT name, role, csrf, expires FROM console_sessions
                 WHERE id_sha256 = ?1 AND expires > ?2",
                params![id_sha256, now],
                |row| {
                    Ok(StoredSession {
                        name: row.get(0)?,
                        role: row.get(1)?,
                        csrf: row.get(2)?,
                        expires: row.get(3)?,
                    })
                },
            )
            .optional()?)
    }

    pub fn remove_session(&mut self, id_sha256: &str) -> Result<()> {
        self.conn.execute(
            "DELETE FROM console_sessions WHERE id_sha256 = ?1",
            params![id_sha256],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(name: &str, expires: &str) -> StoredSession {
        StoredSession {
            name: name.into(),
            role: "user".into(),
            csrf: "c".into(),
            expires: expires.into(),
        }
    }

    #[test]
    fn a_session_is_kept_until_it_expires_is_ended_and_the_store_holds_at_most_so_many() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.sqlite");
        let mut store = Store::open(&path).unwrap();
        let now = "2026-12-06T10:00:00.000Z";
        store
            .add_session("a", &session("ana", "2026-12-06T22:00:00.000Z"), now, 2)
            .unwrap();
        store
            .add_session("b", &session("bo", "2026-12-06T21:00:00.000Z"), now, 2)
            .unwrap();
        // Read back by another connection (a restarted server).
        drop(store);
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.session("a", now).unwrap().unwrap().name, "ana");
        assert_eq!(
            store.session("a", "2026-12-06T22:00:00.000Z").unwrap(),
            None
        );
        // A third: the soonest to expire goes.
        store
            .add_session("c", &session("cy", "2026-12-06T23:00:00.000Z"), now, 2)
            .unwrap();
        assert_eq!(store.session("b", now).unwrap(), None);
        assert!(store.session("a", now).unwrap().is_some());
        store.remove_session("a").unwrap();
        assert_eq!(store.session("a", now).unwrap(), None);
        assert!(store.session("c", now).unwrap().is_some());
    }
}
