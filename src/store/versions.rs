//! A recording's versions: the recording as made (version 1) and the
//! changes of its steps' targets saved since (`reprise_models::version`).

use rusqlite::{OptionalExtension, params};

use super::{Result, Store, StoreError};
use reprise_models::RecordingBundle;
use reprise_models::program::Program;
use reprise_models::version::{RecordingVersion, TargetChange, apply, merge};

/// `NAME@3` as the recording `NAME` names and version 3; a query with no
/// `@N` names the recording alone.
pub fn split_version(query: &str) -> (&str, Option<u32>) {
    match query.rsplit_once('@') {
        Some((recording, version))
            if !recording.is_empty()
                && !version.is_empty()
                && version.chars().all(|c| c.is_ascii_digit()) =>
        {
            (recording, version.parse().ok())
        }
        _ => (query, None),
    }
}

impl Store {
    /// The recording `query` names (`NAME`, an id, `NAME@3`), and the
    /// version it pins, if any.
    pub fn resolve_versioned(&self, query: &str) -> Result<(String, Option<u32>)> {
        let (recording, version) = split_version(query);
        Ok((self.resolve(recording)?, version))
    }

    /// Every version past the first, oldest first.
    pub fn versions(&self, recording_id: &str) -> Result<Vec<RecordingVersion>> {
        let mut statement = self.conn.prepare(
            "SELECT version, created, note, run_id, changes, program FROM recording_versions
             WHERE recording_id = ?1 ORDER BY version",
        )?;
        let rows = statement
            .query_map(params![recording_id], |row| {
                Ok((
                    row.get::<_, u32>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, Option<String>>(3)?,
                    row.get::<_, String>(4)?,
                    row.get::<_, Option<String>>(5)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter()
            .map(|(version, created, note, run_id, changes, program)| {
                let bad = |what: &str, err: serde_json::Error| StoreError::BadRow {
                    id: format!("{recording_id}@{version}"),
                    reason: format!("its {what}: {err}"),
                };
                Ok(RecordingVersion {
                    version,
                    created,
                    note,
                    run_id,
                    changes: serde_json::from_str(&changes).map_err(|err| bad("changes", err))?,
                    program: program
                        .map(|program| serde_json::from_str(&program))
                        .transpose()
                        .map_err(|err| bad("program", err))?,
                })
            })
            .collect()
    }

    /// The newest version's number (1: the recording as made).
    pub fn latest_version(&self, recording_id: &str) -> Result<u32> {
        let latest: Option<u32> = self
            .conn
            .query_row(
                "SELECT MAX(version) FROM recording_versions WHERE recording_id = ?1",
                params![recording_id],
                |row| row.get(0),
            )
            .optional()?
            .flatten();
        Ok(latest.unwrap_or(1))
    }

    /// Version `version` (`None`: the newest) of a recording: its changes.
    pub fn version_changes(
        &self,
        recording_id: &str,
        version: Option<u32>,
    ) -> Result<(u32, Vec<TargetChange>)> {
        let (version, changes, _) = self.version_state(recording_id, version)?;
        Ok((version, changes))
    }

    /// Version `version` (`None`: the newest) of a recording: its number,
    /// its changes and its program.
    pub fn version_state(
        &self,
        recording_id: &str,
        version: Option<u32>,
    ) -> Result<(u32, Vec<TargetChange>, Option<Program>)> {
        let version = match version {
            Some(version) => version,
            None => self.latest_version(recording_id)?,
        };
        if version == 1 {
            return Ok((1, Vec::new(), None));
        }
        let versions = self.versions(recording_id)?;
        let latest = versions.last().map_or(1, |known| known.version);
        versions
            .into_iter()
            .find(|known| known.version == version)
            .map(|known| (version, known.changes, known.program))
            .ok_or_else(|| StoreError::NoVersion {
                recording: recording_id.to_owned(),
                version,
                latest,
            })
    }

    /// A recording as version `version` has it (`None`: the newest), and
    /// that version's number.
    pub fn load_version(
        &self,
        recording_id: &str,
        version: Option<u32>,
    ) -> Result<(RecordingBundle, u32)> {
        let (bundle, version, _) = self.load_edited(recording_id, version)?;
        Ok((bundle, version))
    }

    /// [`Self::load_version`], with the version's program where it has one
    /// (its steps as edited), from one read of the versions.
    pub fn load_edited(
        &self,
        recording_id: &str,
        version: Option<u32>,
    ) -> Result<(RecordingBundle, u32, Option<Program>)> {
        let (version, changes, program) = self.version_state(recording_id, version)?;
        let mut bundle = self.load(recording_id)?;
        apply(&mut bundle.events, &changes);
        Ok((bundle, version, program))
    }

    /// Keeps versions an export brought, under their numbers (a version the
    /// recording already has is left as it is).
    pub fn import_versions(
        &mut self,
        recording_id: &str,
        versions: &[RecordingVersion],
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        for version in versions {
            tx.execute(
                "INSERT OR IGNORE INTO recording_versions
                 (recording_id, version, created, note, run_id, changes, program)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    recording_id,
                    version.version,
                    version.created,
                    version.note,
                    version.run_id,
                    serde_json::to_string(&version.changes).expect("changes serialize"),
                    program_json(version.program.as_ref()),
                ],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Saves `changes` over version `over` as a new version (its program
    /// kept); returns its number.
    pub fn add_version(
        &mut self,
        recording_id: &str,
        over: u32,
        note: &str,
        run_id: Option<&str>,
        changes: Vec<TargetChange>,
    ) -> Result<u32> {
        let (_, earlier, program) = self.version_state(recording_id, Some(over))?;
        let merged = merge(&earlier, changes);
        self.insert_version(recording_id, note, run_id, &merged, program.as_ref())
    }

    /// Saves `program` over version `over` as a new version (its target
    /// changes kept; `None`: the recording's steps as they are); returns
    /// its number.
    pub fn add_program(
        &mut self,
        recording_id: &str,
        over: u32,
        note: &str,
        program: Option<&Program>,
    ) -> Result<u32> {
        let (_, changes, _) = self.version_state(recording_id, Some(over))?;
        self.insert_version(recording_id, note, None, &changes, program)
    }

    fn insert_version(
        &mut self,
        recording_id: &str,
        note: &str,
        run_id: Option<&str>,
        changes: &[TargetChange],
        program: Option<&Program>,
    ) -> Result<u32> {
        let tx = self.conn.transaction()?;
        let latest: Option<u32> = tx.query_row(
            "SELECT MAX(version) FROM recording_versions WHERE recording_id = ?1",
            params![recording_id],
            |row| row.get(0),
        )?;
        let version = latest.unwrap_or(1) + 1;
        tx.execute(
            "INSERT INTO recording_versions (recording_id, version, created, note, run_id, changes, program)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                recording_id,
                version,
                chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                note,
                run_id,
                serde_json::to_string(changes).expect("changes serialize"),
                program_json(program),
            ],
        )?;
        tx.commit()?;
        Ok(version)
    }
}

fn program_json(program: Option<&Program>) -> Option<String> {
    program.map(|program| serde_json::to_string(program).expect("a program serializes"))
}

#[cfg(test)]
mod tests {
    use super::split_version;

    #[test]
    fn a_version_is_an_at_and_digits_at_the_end() {
        assert_eq!(split_version("demo@3"), ("demo", Some(3)));
        assert_eq!(split_version("demo"), ("demo", None));
        assert_eq!(split_version("a@b@12"), ("a@b", Some(12)));
        assert_eq!(split_version("user@example"), ("user@example", None));
        assert_eq!(split_version("@3"), ("@3", None));
        assert_eq!(split_version("demo@"), ("demo@", None));
    }
}
