//! The fleet's audit log in the server's store, and each worker's owner
//! (the name of the token that registered it).

use rusqlite::{OptionalExtension, params};

use super::{Result, Store};
use reprise_models::fleet::AuditEntry;

impl Store {
    /// Adds a line to the audit log (its `id` is given by the store).
    pub fn add_audit(&mut self, entry: &AuditEntry) -> Result<()> {
        self.conn.execute(
            "INSERT INTO fleet_audit (at, who, role, action, status, from_addr)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                entry.at,
                entry.who,
                entry.role,
                entry.action,
                entry.status,
                entry.from
            ],
        )?;
        Ok(())
    }

    /// The audit log's newest lines, newest first.
    pub fn audit(&self, limit: usize) -> Result<Vec<AuditEntry>> {
        let mut statement = self.conn.prepare(
            "SELECT id, at, who, role, action, status, from_addr FROM fleet_audit
             ORDER BY id DESC LIMIT ?1",
        )?;
        let rows = statement
            .query_map(params![limit as i64], |row| {
                Ok(AuditEntry {
                    id: row.get(0)?,
                    at: row.get(1)?,
                    who: row.get(2)?,
                    role: row.get(3)?,
                    action: row.get(4)?,
                    status: row.get(5)?,
                    from: row.get(6)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Retention: removes the audit log's lines older than `before`.
    pub fn prune_audit(&mut self, before: &str) -> Result<usize> {
        Ok(self
            .conn
            .execute("DELETE FROM fleet_audit WHERE at < ?1", params![before])?)
    }

    pub fn set_worker_owner(&mut self, worker: &str, owner: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE fleet_workers SET owner = ?2 WHERE id = ?1",
            params![worker, owner],
        )?;
        Ok(())
    }

    /// The name of the token that registered `worker` (`None`: unknown
    /// worker, or one registered before owners were kept).
    pub fn worker_owner(&self, worker: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT owner FROM fleet_workers WHERE id = ?1",
                params![worker],
                |row| row.get(0),
            )
            .optional()?
            .flatten())
    }
}
