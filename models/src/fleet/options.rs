//! How a job runs: its replay's options, retry policy and priority.

use serde::{Deserialize, Serialize};

/// How a job's replay runs (a subset of `reprise replay`'s flags).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JobOptions {
    pub strategy: Strategy,
    pub speed: f64,
    /// Attempts per step (`--max-retries`).
    pub max_retries: u32,
    /// Decide every step but inject nothing (`--dry-run`).
    pub dry_run: bool,
    /// An unverified step fails the job (`--require-verified`).
    pub require_verified: bool,
}

impl Default for JobOptions {
    fn default() -> Self {
        JobOptions {
            strategy: Strategy::Visual,
            speed: 1.0,
            max_retries: 3,
            dry_run: false,
            require_verified: false,
        }
    }
}

/// `--strategy` of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    Naive,
    Visual,
    Vanilla,
}

/// What may happen to a job whose worker died after injecting input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetryPolicy {
    /// It ends `abandoned`: input is injected at most once.
    #[default]
    Never,
    /// It starts again on another worker (the task is safe to redo).
    Restart,
}

/// Which of a pool's waiting jobs a worker is given first: every `high`
/// job before any `normal` one, every `normal` before any `low`; first in,
/// first out within a priority. Each priority of a pool is a queue lane of
/// its own (`Priority::lane`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    High,
    #[default]
    Normal,
    Low,
}

impl Priority {
    /// Highest first: the order a worker's pull looks in.
    pub const ALL: [Priority; 3] = [Priority::High, Priority::Normal, Priority::Low];

    pub fn as_str(self) -> &'static str {
        match self {
            Priority::High => "high",
            Priority::Normal => "normal",
            Priority::Low => "low",
        }
    }

    pub fn parse(text: &str) -> Option<Priority> {
        Priority::ALL
            .into_iter()
            .find(|priority| priority.as_str() == text)
    }

    /// The queue lane of `pool`'s jobs of this priority: the pool's own
    /// name for `normal` (as before priorities), `POOL:high` and
    /// `POOL:low` for the others (a pool's name never holds a `:`).
    pub fn lane(self, pool: &str) -> String {
        match self {
            Priority::Normal => pool.to_owned(),
            other => format!("{pool}:{}", other.as_str()),
        }
    }
}
