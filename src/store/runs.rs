//! Replay runs in the store: one row per run, one per step with the frame the
//! step's decision saw, written as the replay goes so that a crash keeps what
//! happened so far.

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use reprise_strategies::ReplayOutcome;

use super::{Result, Store, StoreError};

/// A replay run's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: String,
    pub recording_id: String,
    pub strategy: String,
    /// What the run was asked to do.
    pub arguments: RunArguments,
    pub started: String,
    pub ended: Option<String>,
    /// How it ended, once it did.
    pub outcome: Option<ReplayOutcome>,
    /// What it took, once it ended.
    pub summary: Option<RunSummary>,
}

/// What a run was asked to do, kept with it (as JSON in its row). A field a
/// run of an older Reprise did not keep reads as its default.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RunArguments {
    pub speed: f64,
    /// Steps decided, nothing injected.
    pub dry_run: bool,
    pub max_retries: u32,
    pub skip_failures: bool,
    pub require_verified: bool,
    pub max_steps: usize,
    /// `--replace OLD=NEW`.
    pub replacements: Vec<(String, String)>,
    /// `--set NAME=VALUE` and a row's values (never a secret's).
    pub parameters: Vec<(String, String)>,
    /// The batch (`--each`) the run is a row of.
    pub batch: Option<BatchRow>,
    /// The visual strategy's rungs.
    pub rungs: RunRungs,
    /// `--instructions`: the change asked in plain language (a resumed run
    /// goes on with it).
    pub instructions: Option<String>,
    /// The recording's version replayed (`None` in runs stored before
    /// versions: the recording as made).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// The process running (or that last ran) it, so that a run whose
    /// process is gone can be resumed and one still running cannot.
    pub pid: Option<u32>,
    /// Each time the run halted and was resumed, oldest first.
    pub resumptions: Vec<Resumption>,
}

/// A halt and the resumption after it (`reprise resume`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resumption {
    /// When it was resumed.
    pub at: String,
    /// How the run had ended, in words (the halted step's record is
    /// replaced by the resumed one's).
    pub halted: String,
    /// The step it went on from (counted from 0); the steps before it were
    /// not done again.
    pub from_step: usize,
}

/// A run's place in a batch: the batch's id, the row's number (from 1) and
/// its values, secrets masked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchRow {
    pub id: String,
    pub row: usize,
    pub values: Vec<(String, String)>,
}

/// The rungs of the visual strategy's ladder a run used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunRungs {
    pub structural: bool,
    pub visual: bool,
}

impl Default for RunRungs {
    fn default() -> Self {
        RunRungs {
            structural: true,
            visual: true,
        }
    }
}

/// What a run took: its steps and seconds, and its model calls, cache
/// hits, tokens and dollars.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSummary {
    pub steps: usize,
    pub seconds: f64,
    pub model_calls: u64,
    pub model_cache_hits: u64,
    pub tokens: u64,
    pub cost_usd: f64,
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

/// A run as `reprise runs` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunListing {
    pub id: String,
    pub recording_id: String,
    pub recording_name: String,
    pub strategy: String,
    pub started: String,
    pub ended: Option<String>,
    /// How it ended; `None` for a run that has not ended (running, or
    /// killed).
    pub outcome: Option<ReplayOutcome>,
    /// Steps stored.
    pub steps: u32,
    pub seconds: Option<f64>,
    /// The batch (`replay --each`) it belongs to.
    pub batch: Option<String>,
    /// A dry run: steps decided, nothing injected.
    pub dry_run: bool,
}

impl RunRecord {
    /// A dry run: its steps were decided, nothing was injected.
    pub fn dry_run(&self) -> bool {
        self.arguments.dry_run
    }
}

impl Store {
    /// Every run, newest first; only `recording_id`'s when given.
    pub fn list_runs(&self, recording_id: Option<&str>) -> Result<Vec<RunListing>> {
        let mut statement = self.conn.prepare(
            "SELECT r.id, r.recording_id, rec.name, r.strategy, r.started, r.ended, r.outcome,
                    (SELECT COUNT(*) FROM replay_steps s WHERE s.run_id = r.id),
                    json_extract(r.summary, '$.seconds'),
                    json_extract(r.arguments, '$.batch.id'),
                    COALESCE(json_extract(r.arguments, '$.dry_run'), 0)
               FROM replay_runs r JOIN recordings rec ON rec.id = r.recording_id
              WHERE ?1 IS NULL OR r.recording_id = ?1
              ORDER BY r.started DESC, r.rowid DESC",
        )?;
        let rows = statement
            .query_map(params![recording_id], |row| {
                Ok((
                    RunListing {
                        id: row.get(0)?,
                        recording_id: row.get(1)?,
                        recording_name: row.get(2)?,
                        strategy: row.get(3)?,
                        started: row.get(4)?,
                        ended: row.get(5)?,
                        outcome: None,
                        steps: row.get(7)?,
                        seconds: row.get(8)?,
                        batch: row.get(9)?,
                        dry_run: row.get(10)?,
                    },
                    row.get::<_, Option<String>>(6)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter()
            .map(|(mut listing, outcome)| {
                listing.outcome = outcome
                    .map(|text| serde_json::from_str(&text))
                    .transpose()
                    .map_err(|err| StoreError::BadRow {
                        id: listing.id.clone(),
                        reason: err.to_string(),
                    })?;
                Ok(listing)
            })
            .collect()
    }

    /// The runs a prune would delete, newest first: those started before
    /// `before` (an RFC 3339 UTC time, as runs are stamped), and those
    /// past the newest `keep`.
    pub fn runs_to_prune(&self, before: Option<&str>, keep: Option<usize>) -> Result<Vec<String>> {
        let mut statement = self
            .conn
            .prepare("SELECT id, started FROM replay_runs ORDER BY started DESC, rowid DESC")?;
        let runs = statement
            .query_map([], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(runs
            .into_iter()
            .enumerate()
            .filter(|(index, (_, started))| {
                keep.is_some_and(|keep| *index >= keep)
                    || before.is_some_and(|before| started.as_str() < before)
            })
            .map(|(_, (id, _))| id)
            .collect())
    }

    /// Deletes runs with their steps, and the frames nothing else uses, in
    /// one transaction. Returns how many were deleted.
    pub fn delete_runs(&mut self, run_ids: &[String]) -> Result<usize> {
        self.conn.pragma_update(None, "secure_delete", "FAST")?;
        let tx = self.conn.transaction()?;
        let mut deleted = 0;
        for id in run_ids {
            deleted += tx.execute("DELETE FROM replay_runs WHERE id = ?1", params![id])?;
        }
        super::delete_unused_images(&tx)?;
        tx.commit()?;
        Ok(deleted)
    }

    pub fn insert_run(&mut self, run: &RunRecord) -> Result<()> {
        self.conn.execute(
            "INSERT INTO replay_runs (id, recording_id, strategy, arguments, started) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                run.id,
                run.recording_id,
                run.strategy,
                to_json(&run.arguments),
                run.started
            ],
        )?;
        Ok(())
    }

    /// Opens a halted run again from step `from` (counted from 0): the
    /// records of that step and those after it are deleted (with the
    /// frames only they used), its end, outcome and summary cleared, its
    /// arguments replaced (they say the resumption), in one transaction.
    pub fn reopen_run(
        &mut self,
        run_id: &str,
        from: usize,
        arguments: &RunArguments,
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "UPDATE replay_runs SET ended = NULL, outcome = NULL, summary = NULL, arguments = ?2 WHERE id = ?1",
            params![run_id, to_json(arguments)],
        )?;
        tx.execute(
            "DELETE FROM replay_steps WHERE run_id = ?1 AND idx >= ?2",
            params![run_id, from as i64],
        )?;
        super::delete_unused_images(&tx)?;
        tx.commit()?;
        Ok(())
    }

    /// Stores one step, with its frame (PNG, stored once per content hash),
    /// in place of what was stored for it before (its mark while it ran).
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
            "INSERT OR REPLACE INTO replay_steps (run_id, idx, step, screenshot_hash) VALUES (?1, ?2, ?3, ?4)",
            params![run_id, idx, step, frame.map(|(hash, _)| hash)],
        )?;
        tx.commit()?;
        Ok(())
    }

    pub fn finish_run(
        &mut self,
        run_id: &str,
        ended: &str,
        outcome: &ReplayOutcome,
        summary: &RunSummary,
    ) -> Result<()> {
        self.conn.execute(
            "UPDATE replay_runs SET ended = ?2, outcome = ?3, summary = ?4 WHERE id = ?1",
            params![run_id, ended, to_json(outcome), to_json(summary)],
        )?;
        Ok(())
    }

    /// Finds a run by its id, a unique prefix of it, or `last` (or
    /// `latest`) for the newest.
    /// Pins run `run_id` to version `version` of its recording: a resume
    /// goes on with that version (one taught from the run's halt).
    pub fn repin_run(&mut self, run_id: &str, version: u32) -> Result<()> {
        self.conn.execute(
            "UPDATE replay_runs SET arguments = json_set(arguments, '$.version', ?2) WHERE id = ?1",
            params![run_id, version],
        )?;
        Ok(())
    }

    pub fn resolve_run(&self, query: &str) -> Result<String> {
        let query = if query == "latest" { "last" } else { query };
        if query != "last" && !super::is_id_prefix(query) {
            return Err(StoreError::RunNotFound(query.to_owned()));
        }
        let sql = if query == "last" {
            "SELECT id FROM replay_runs ORDER BY started DESC, rowid DESC LIMIT 2"
        } else {
            "SELECT id FROM replay_runs WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id LIMIT 2"
        };
        let mut statement = self.conn.prepare(sql)?;
        let ids: Vec<String> = if query == "last" {
            statement
                .query_map([], |row| row.get(0))?
                .collect::<rusqlite::Result<_>>()?
        } else {
            statement
                .query_map(params![query.to_ascii_lowercase()], |row| row.get(0))?
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
        if !super::is_id_prefix(query) {
            return Ok(None);
        }
        let mut statement = self.conn.prepare(
            "SELECT json_extract(arguments, '$.batch.id'), id FROM replay_runs \
             WHERE substr(json_extract(arguments, '$.batch.id'), 1, length(?1)) = ?1 \
             ORDER BY json_extract(arguments, '$.batch.row'), started",
        )?;
        let rows: Vec<(String, String)> = statement
            .query_map(params![query.to_ascii_lowercase()], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?
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
        fn parse<T: serde::de::DeserializeOwned>(text: &str) -> std::result::Result<T, String> {
            serde_json::from_str(text).map_err(|err| err.to_string())
        }
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
            arguments: parse(&arguments).map_err(&bad)?,
            started,
            ended,
            outcome: outcome.as_deref().map(parse).transpose().map_err(&bad)?,
            summary: summary.as_deref().map(parse).transpose().map_err(&bad)?,
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

/// A typed value as the JSON its column holds.
fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("run records serialize")
}
