//! Replay runs in the store: one row per run, one per step with the frame the
//! step's decision saw, written as the replay goes so that a crash keeps what
//! happened so far.

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{Result, Store, StoreError};

/// A replay run's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: String,
    pub recording_id: String,
    pub strategy: String,
    /// The strategy's arguments, as given.
    pub arguments: serde_json::Value,
    pub started: String,
    pub ended: Option<String>,
    /// The outcome as JSON (`{"outcome": "completed", ...}`), once ended.
    pub outcome: Option<serde_json::Value>,
    pub summary: Option<serde_json::Value>,
}

/// A stored step: what the replay loop recorded of it, the screen its
/// frame showed, and the content hash of that frame.
#[derive(Debug, Clone)]
pub struct RunStep {
    pub idx: u32,
    pub step: StoredStep,
    pub screenshot_hash: Option<String>,
}

/// A step as it is kept in the store (as JSON in its row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredStep {
    pub record: reprise_strategies::StepRecord,
    /// The screen the step's frame showed, where it had one.
    pub screen: Option<reprise_models::ScreenGeometry>,
}

impl Store {
    pub fn insert_run(&mut self, run: &RunRecord) -> Result<()> {
        self.conn.execute(
            "INSERT INTO replay_runs (id, recording_id, strategy, arguments, started) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![run.id, run.recording_id, run.strategy, run.arguments.to_string(), run.started],
        )?;
        Ok(())
    }

    /// Stores one step, with its frame (PNG, stored once per content hash).
    pub fn insert_run_step(
        &mut self,
        run_id: &str,
        idx: u32,
        step: &StoredStep,
        frame: Option<(&str, &[u8])>,
    ) -> Result<()> {
        let step = serde_json::to_string(step).expect("a step record serializes");
        let tx = self.conn.transaction()?;
        if let Some((hash, png)) = frame {
            tx.execute(
                "INSERT OR IGNORE INTO images (hash, png) VALUES (?1, ?2)",
                params![hash, png],
            )?;
        }
        tx.execute(
            "INSERT INTO replay_steps (run_id, idx, step, screenshot_hash) VALUES (?1, ?2, ?3, ?4)",
            params![run_id, idx, step, frame.map(|(hash, _)| hash)],
        )?;
        tx.commit()?;
        Ok(())
    }

    pub fn finish_run(
        &mut self,
        run_id: &str,
        ended: &str,
        outcome: &serde_json::Value,
        summary: &serde_json::Value,
    ) -> Result<()> {
        self.conn.execute(
            "UPDATE replay_runs SET ended = ?2, outcome = ?3, summary = ?4 WHERE id = ?1",
            params![run_id, ended, outcome.to_string(), summary.to_string()],
        )?;
        Ok(())
    }

    /// Finds a run by its id, a unique prefix of it, or `last` (or
    /// `latest`) for the newest.
    pub fn resolve_run(&self, query: &str) -> Result<String> {
        let query = if query == "latest" { "last" } else { query };
        let sql = if query == "last" {
            "SELECT id FROM replay_runs ORDER BY started DESC, rowid DESC LIMIT 2"
        } else {
            "SELECT id FROM replay_runs WHERE id LIKE ?1 || '%' ORDER BY id LIMIT 2"
        };
        let mut statement = self.conn.prepare(sql)?;
        let ids: Vec<String> = if query == "last" {
            statement
                .query_map([], |row| row.get(0))?
                .collect::<rusqlite::Result<_>>()?
        } else {
            statement
                .query_map(params![query], |row| row.get(0))?
                .collect::<rusqlite::Result<_>>()?
        };
        match (query, ids.as_slice()) {
            ("last", []) => Err(StoreError::NoRuns),
            (_, []) => Err(StoreError::RunNotFound(query.to_owned())),
            ("last", [id, ..]) | (_, [id]) => Ok(id.clone()),
            _ => Err(StoreError::Ambiguous {
                query: query.to_owned(),
                candidates: ids.join(", "),
            }),
        }
    }

    /// The batch (`replay --each`) whose id is `query` or starts with it:
    /// its id and its runs' ids in row order; `None` when no batch matches.
    pub fn resolve_batch(&self, query: &str) -> Result<Option<(String, Vec<String>)>> {
        let mut statement = self.conn.prepare(
            "SELECT json_extract(arguments, '$.batch.id'), id FROM replay_runs \
             WHERE json_extract(arguments, '$.batch.id') LIKE ?1 || '%' \
             ORDER BY json_extract(arguments, '$.batch.row'), started",
        )?;
        let rows: Vec<(String, String)> = statement
            .query_map(params![query], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let mut batches: Vec<&String> = rows.iter().map(|(batch, _)| batch).collect();
        batches.dedup();
        batches.sort();
        batches.dedup();
        match batches.as_slice() {
            [] => Ok(None),
            [batch] => Ok(Some((
                (*batch).clone(),
                rows.iter().map(|(_, run)| run.clone()).collect(),
            ))),
            _ => Err(StoreError::Ambiguous {
                query: query.to_owned(),
                candidates: batches
                    .iter()
                    .map(|batch| batch.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    pub fn load_run(&self, run_id: &str) -> Result<(RunRecord, Vec<RunStep>)> {
        let bad = |reason: String| StoreError::BadRow {
            id: run_id.to_owned(),
            reason,
        };
        let parse = |text: String| {
            serde_json::from_str::<serde_json::Value>(&text).map_err(|err| bad(err.to_string()))
        };
        let row = self
            .conn
            .query_row(
                "SELECT recording_id, strategy, arguments, started, ended, outcome, summary FROM replay_runs WHERE id = ?1",
                params![run_id],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, String>(3)?,
                        row.get::<_, Option<String>>(4)?,
                        row.get::<_, Option<String>>(5)?,
                        row.get::<_, Option<String>>(6)?,
                    ))
                },
            )
            .optional()?
            .ok_or_else(|| StoreError::RunNotFound(run_id.to_owned()))?;
        let (recording_id, strategy, arguments, started, ended, outcome, summary) = row;
        let run = RunRecord {
            id: run_id.to_owned(),
            recording_id,
            strategy,
            arguments: parse(arguments)?,
            started,
            ended,
            outcome: outcome.map(parse).transpose()?,
            summary: summary.map(parse).transpose()?,
        };
        let mut statement = self.conn.prepare(
            "SELECT idx, step, screenshot_hash FROM replay_steps WHERE run_id = ?1 ORDER BY idx",
        )?;
        let rows = statement
            .query_map(params![run_id], |row| {
                Ok((
                    row.get::<_, u32>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, Option<String>>(2)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let steps = rows
            .into_iter()
            .map(|(idx, step, screenshot_hash)| {
                Ok(RunStep {
                    idx,
                    step: serde_json::from_str(&step)
                        .map_err(|err| bad(format!("step {idx}: {err}")))?,
                    screenshot_hash,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((run, steps))
    }
}
