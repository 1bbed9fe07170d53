//! Model calls in the store: the response cache (so a repeated replay is
//! deterministic and free) and the accounting of every call.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::{Result, Store};

/// A cached answer.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedReply {
    pub text: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// One model call as accounted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRow {
    pub run_id: Option<String>,
    pub purpose: String,
    pub provider: String,
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub latency_ms: u64,
    pub attempts: u32,
    pub cached: bool,
    /// Estimated from the configured price table; `None` when unpriced.
    pub cost_usd: Option<f64>,
    pub error: Option<String>,
}

/// Totals per provider and model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageTotal {
    pub provider: String,
    pub model: String,
    pub calls: u64,
    pub cache_hits: u64,
    pub failures: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |elapsed| elapsed.as_secs_f64())
}

impl Store {
    pub fn cached_reply(&self, key: &str) -> Result<Option<CachedReply>> {
        Ok(self
            .conn
            .query_row(
                "SELECT text, input_tokens, output_tokens FROM llm_cache WHERE key = ?1",
                params![key],
                |row| {
                    Ok(CachedReply {
                        text: row.get(0)?,
                        input_tokens: row.get::<_, i64>(1)? as u64,
                        output_tokens: row.get::<_, i64>(2)? as u64,
                    })
                },
            )
            .optional()?)
    }

    pub fn cache_reply(
        &mut self,
        key: &str,
        provider: &str,
        model: &str,
        reply: &CachedReply,
    ) -> Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO llm_cache (key, provider, model, text, input_tokens, output_tokens, created)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                key,
                provider,
                model,
                reply.text,
                reply.input_tokens as i64,
                reply.output_tokens as i64,
                unix_now()
            ],
        )?;
        Ok(())
    }

    /// Deletes cached answers older than `max_age`; returns how many.
    pub fn prune_llm_cache(&mut self, max_age: std::time::Duration) -> Result<usize> {
        let cutoff = unix_now() - max_age.as_secs_f64();
        Ok(self
            .conn
            .execute("DELETE FROM llm_cache WHERE created < ?1", params![cutoff])?)
    }

    pub fn record_llm_call(&mut self, call: &CallRow) -> Result<()> {
        self.conn.execute(
            "INSERT INTO llm_calls (created, run_id, purpose, provider, model, input_tokens, output_tokens,
                                    latency_ms, attempts, cached, cost_usd, error)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                unix_now(),
                call.run_id,
                call.purpose,
                call.provider,
                call.model,
                call.input_tokens as i64,
                call.output_tokens as i64,
                call.latency_ms as i64,
                call.attempts,
                call.cached,
                call.cost_usd,
                call.error
            ],
        )?;
        Ok(())
    }

    /// Every call, oldest first (for tests and `llm usage --json`).
    pub fn llm_calls(&self) -> Result<Vec<CallRow>> {
        let mut statement = self.conn.prepare(
            "SELECT run_id, purpose, provider, model, input_tokens, output_tokens, latency_ms, attempts, cached,
                    cost_usd, error FROM llm_calls ORDER BY id",
        )?;
        let rows = statement.query_map([], |row| {
            Ok(CallRow {
                run_id: row.get(0)?,
                purpose: row.get(1)?,
                provider: row.get(2)?,
                model: row.get(3)?,
                input_tokens: row.get::<_, i64>(4)? as u64,
                output_tokens: row.get::<_, i64>(5)? as u64,
                latency_ms: row.get::<_, i64>(6)? as u64,
                attempts: row.get(7)?,
                cached: row.get(8)?,
                cost_usd: row.get(9)?,
                error: row.get(10)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Totals per provider and model, optionally for one replay run.
    pub fn llm_usage(&self, run_id: Option<&str>) -> Result<Vec<UsageTotal>> {
        let mut statement = self.conn.prepare(
            "SELECT provider, model, COUNT(*), SUM(cached), SUM(error IS NOT NULL), SUM(input_tokens),
                    SUM(output_tokens), COALESCE(SUM(cost_usd), 0)
             FROM llm_calls WHERE ?1 IS NULL OR run_id = ?1 GROUP BY provider, model ORDER BY provider, model",
        )?;
        let rows = statement.query_map(params![run_id], |row| {
            Ok(UsageTotal {
                provider: row.get(0)?,
                model: row.get(1)?,
                calls: row.get::<_, i64>(2)? as u64,
                cache_hits: row.get::<_, i64>(3)? as u64,
                failures: row.get::<_, i64>(4)? as u64,
                input_tokens: row.get::<_, i64>(5)? as u64,
                output_tokens: row.get::<_, i64>(6)? as u64,
                cost_usd: row.get(7)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
