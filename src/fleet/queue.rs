//! The queue: Redis Streams with one consumer group. A pool's lane (the
//! pool at one priority: `NAME`, `NAME:high`, `NAME:low`) is a stream
//! (`reprise:pool:LANE`) whose entries carry a job's id; a worker reads with
//! `XREADGROUP` under its own consumer name, so an entry it was given stays
//! in its pending list until `XACK`, and the entry's idle time is the
//! worker's lease: each heartbeat claims it again (`XCLAIM` to itself, which
//! resets the idle time), and `XAUTOCLAIM` hands entries idle longer than
//! the lease to another worker. Exhausted jobs are copied to a dead-letter
//! stream. The queue decides nothing about jobs: the server does, from the
//! store.

use std::collections::HashSet;
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::streams::{StreamAutoClaimReply, StreamReadReply};

/// The consumer group every worker reads in.
pub const GROUP: &str = "reprise-workers";
/// Where jobs that exhausted their attempts (or were abandoned) are copied.
pub const DEAD_LETTERS: &str = "reprise:dead";
/// The consumer that holds entries no worker of the moment may take (their
/// labels): idle from the start, so the next `XAUTOCLAIM` offers them again.
const PARKED: &str = "reprise-parked";

/// A queue operation that failed.
#[derive(Debug, thiserror::Error)]
#[error("Redis at {url}: {source}")]
pub struct QueueError {
    url: String,
    source: redis::RedisError,
}

/// An entry: which job it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub id: String,
    pub job: Option<String>,
}

/// A lane's stream as Redis has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamState {
    pub length: usize,
    /// The last entry id it generated (`ms-seq`).
    pub last_id: String,
}

/// Whether stream entry id `a` comes after `b` (`ms-seq`, compared as
/// numbers; an id that does not parse comes first).
pub fn later(a: &str, b: &str) -> bool {
    let parse = |id: &str| -> (u64, u64) {
        let (ms, seq) = id.split_once('-').unwrap_or((id, "0"));
        (ms.parse().unwrap_or(0), seq.parse().unwrap_or(0))
    };
    parse(a) > parse(b)
}

#[derive(Clone)]
pub struct Queue {
    /// As it may be shown (no password).
    con: ConnectionManager,
    url: String,
    groups: std::sync::Arc<std::sync::Mutex<HashSet<String>>>,
    /// Raised when a stream's group was found missing: Redis lost its
    /// data, and the queue must be mended from the store.
    lost: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue").field("url", &self.url).finish()
    }
}

/// `url` as it may be shown: its password (`redis://:secret@host`) left out.
pub fn shown(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("redacted"));
            parsed.to_string()
        }
        Ok(_) => url.to_owned(),
        Err(_) => "(a Redis URL that does not parse)".to_owned(),
    }
}

/// The stream of a queue lane: a pool at a priority
/// ([`crate::fleet::Priority::lane`]).
pub fn stream(lane: &str) -> String {
    format!("reprise:pool:{lane}")
}

impl Queue {
    /// Connects (and reconnects by itself after a Redis restart). Each
    /// command waits at most 5 s.
    pub async fn connect(url: &str) -> Result<Queue, QueueError> {
        let error = |source| QueueError {
            url: shown(url),
            source,
        };
        let client = redis::Client::open(url).map_err(error)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(5)))
            .set_response_timeout(Some(Duration::from_secs(5)))
            .set_number_of_retries(2);
        let con = ConnectionManager::new_with_config(client, config)
            .await
            .map_err(error)?;
        Ok(Queue {
            con,
            url: shown(url),
            groups: Default::default(),
            lost: Default::default(),
        })
    }

    fn error(&self, source: redis::RedisError) -> QueueError {
        QueueError {
            url: self.url.clone(),
            source,
        }
    }

    async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T, QueueError> {
        let mut con = self.con.clone();
        match cmd.query_async::<T>(&mut con).await {
            Ok(value) => Ok(value),
            // A Redis that lost its data (no append-only file) lost the
            // group too: make it again, once.
            Err(err) if err.code() == Some("NOGROUP") => {
                self.groups.lock().map(|mut groups| groups.clear()).ok();
                self.lost.store(true, std::sync::atomic::Ordering::SeqCst);
                Err(self.error(err))
            }
            Err(err) => Err(self.error(err)),
        }
    }

    /// The lane's stream and group, made once per process (and again after
    /// a `NOGROUP`).
    async fn ensure_group(&self, lane: &str) -> Result<(), QueueError> {
        if self
            .groups
            .lock()
            .map(|groups| groups.contains(lane))
            .unwrap_or(false)
        {
            return Ok(());
        }
        let mut cmd = redis::cmd("XGROUP");
        cmd.arg("CREATE")
            .arg(stream(lane))
            .arg(GROUP)
            .arg("0")
            .arg("MKSTREAM");
        let mut con = self.con.clone();
        match cmd.query_async::<()>(&mut con).await {
            Ok(()) => {}
            Err(err) if err.code() == Some("BUSYGROUP") => {}
            Err(err) => return Err(self.error(err)),
        }
        if let Ok(mut groups) = self.groups.lock() {
            groups.insert(lane.to_owned());
        }
        Ok(())
    }

    /// Adds a job to its lane; returns the entry's id.
    pub async fn add(&self, lane: &str, job: &str) -> Result<String, QueueError> {
        self.ensure_group(lane).await?;
        let mut cmd = redis::cmd("XADD");
        cmd.arg(stream(lane)).arg("*").arg("job").arg(job);
        self.query(&cmd).await
    }

    /// Entries never delivered, for `consumer` (at most `count`).
    pub async fn read_new(
        &self,
        lane: &str,
        consumer: &str,
        count: usize,
    ) -> Result<Vec<Entry>, QueueError> {
        self.ensure_group(lane).await?;
        let mut cmd = redis::cmd("XREADGROUP");
        cmd.arg("GROUP")
            .arg(GROUP)
            .arg(consumer)
            .arg("COUNT")
            .arg(count)
            .arg("STREAMS")
            .arg(stream(lane))
            .arg(">");
        let reply: Option<StreamReadReply> = self.query(&cmd).await?;
        Ok(reply
            .into_iter()
            .flat_map(|reply| reply.keys)
            .flat_map(|key| key.ids)
            .map(|id| Entry {
                job: id.get("job"),
                id: id.id,
            })
            .collect())
    }

    /// Entries idle longer than `min_idle` (their worker stopped
    /// heart-beating, or they were parked), now `consumer`'s.
    pub async fn claim_stale(
        &self,
        lane: &str,
        consumer: &str,
        min_idle: Duration,
        count: usize,
    ) -> Result<Vec<Entry>, QueueError> {
        self.ensure_group(lane).await?;
        let mut cmd = redis::cmd("XAUTOCLAIM");
        cmd.arg(stream(lane))
            .arg(GROUP)
            .arg(consumer)
            .arg(min_idle.as_millis() as u64)
            .arg("0-0")
            .arg("COUNT")
            .arg(count);
        let reply: StreamAutoClaimReply = self.query(&cmd).await?;
        let mut entries: Vec<Entry> = reply
            .claimed
            .into_iter()
            .map(|id| Entry {
                job: id.get("job"),
                id: id.id,
            })
            .collect();
        // An entry deleted from the stream while pending carries no job.
        entries.extend(
            reply
                .deleted_ids
                .into_iter()
                .map(|id| Entry { id, job: None }),
        );
        Ok(entries)
    }

    /// Claims `entry` for `consumer` now, resetting its idle time (a
    /// heartbeat, or an entry given back to its owner). `idle` sets the
    /// idle time instead (parking).
    async fn claim(
        &self,
        lane: &str,
        consumer: &str,
        entry: &str,
        idle: Option<Duration>,
    ) -> Result<bool, QueueError> {
        let mut cmd = redis::cmd("XCLAIM");
        cmd.arg(stream(lane))
            .arg(GROUP)
            .arg(consumer)
            .arg(0)
            .arg(entry);
        if let Some(idle) = idle {
            cmd.arg("IDLE").arg(idle.as_millis() as u64);
        }
        cmd.arg("JUSTID");
        let ids: Vec<String> = self.query(&cmd).await?;
        Ok(!ids.is_empty())
    }

    /// A heartbeat: the entry's idle time starts again.
    pub async fn refresh(
        &self,
        lane: &str,
        consumer: &str,
        entry: &str,
    ) -> Result<bool, QueueError> {
        self.claim(lane, consumer, entry, None).await
    }

    /// Gives an entry back to `consumer`, idle for `idle` already.
    pub async fn give_back(
        &self,
        lane: &str,
        consumer: &str,
        entry: &str,
        idle: Duration,
    ) -> Result<(), QueueError> {
        self.claim(lane, consumer, entry, Some(idle))
            .await
            .map(|_| ())
    }

    /// Gives an entry back to the group for another worker at once.
    pub async fn park(&self, lane: &str, entry: &str, lease: Duration) -> Result<(), QueueError> {
        self.claim(lane, PARKED, entry, Some(lease + Duration::from_secs(1)))
            .await
            .map(|_| ())
    }

    /// Done with an entry (only after what it led to is stored): out of
    /// the pending list, then out of the stream, which so holds only what
    /// is queued or held (the store keeps the record).
    pub async fn ack(&self, lane: &str, entry: &str) -> Result<(), QueueError> {
        let mut cmd = redis::cmd("XACK");
        cmd.arg(stream(lane)).arg(GROUP).arg(entry);
        self.query::<i64>(&cmd).await?;
        self.delete(lane, entry).await
    }

    /// Removes an entry never delivered (a job cancelled while queued).
    pub async fn delete(&self, lane: &str, entry: &str) -> Result<(), QueueError> {
        let mut cmd = redis::cmd("XDEL");
        cmd.arg(stream(lane)).arg(entry);
        self.query::<i64>(&cmd).await.map(|_| ())
    }

    pub async fn dead_letter(&self, pool: &str, job: &str, reason: &str) -> Result<(), QueueError> {
        let mut cmd = redis::cmd("XADD");
        cmd.arg(DEAD_LETTERS)
            .arg("*")
            .arg("job")
            .arg(job)
            .arg("pool")
            .arg(pool)
            .arg("reason")
            .arg(reason);
        self.query::<String>(&cmd).await.map(|_| ())
    }

    /// Whether a group was found missing since the last call (Redis lost
    /// its data).
    pub fn take_lost(&self) -> bool {
        self.lost.swap(false, std::sync::atomic::Ordering::SeqCst)
    }

    /// The lane's stream as Redis has it: how many entries it holds and
    /// the last id it generated; `None` where it is missing.
    pub async fn stream_state(&self, lane: &str) -> Result<Option<StreamState>, QueueError> {
        let mut cmd = redis::cmd("XINFO");
        cmd.arg("STREAM").arg(stream(lane));
        let mut con = self.con.clone();
        let info: std::collections::HashMap<String, redis::Value> =
            match cmd.query_async(&mut con).await {
                Ok(info) => info,
                Err(err) if err.to_string().contains("no such key") => return Ok(None),
                Err(err) => return Err(self.error(err)),
            };
        let field = |name: &str| info.get(name).cloned().unwrap_or(redis::Value::Nil);
        let bad = |err: redis::ParsingError| self.error(err.into());
        Ok(Some(StreamState {
            length: redis::from_redis_value(field("length")).map_err(bad)?,
            last_id: redis::from_redis_value(field("last-generated-id")).map_err(bad)?,
        }))
    }

    /// The ids of every entry the lane's stream holds, read a page at a
    /// time.
    pub async fn entry_ids(&self, lane: &str) -> Result<HashSet<String>, QueueError> {
        const PAGE: usize = 1_000;
        let mut ids = HashSet::new();
        let mut from = "-".to_owned();
        loop {
            let mut cmd = redis::cmd("XRANGE");
            cmd.arg(stream(lane))
                .arg(&from)
                .arg("+")
                .arg("COUNT")
                .arg(PAGE);
            let page: redis::streams::StreamRangeReply = self.query(&cmd).await?;
            let n = page.ids.len();
            let Some(last) = page.ids.last().map(|id| id.id.clone()) else {
                return Ok(ids);
            };
            ids.extend(page.ids.into_iter().map(|id| id.id));
            if n < PAGE {
                return Ok(ids);
            }
            // Exclusive from the last id on (Redis 6.2+).
            from = format!("({last}");
        }
    }

    /// Whether Redis answers.
    pub async fn ping(&self) -> Result<(), QueueError> {
        self.query::<String>(&redis::cmd("PING")).await.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_redis_password_is_never_shown() {
        assert_eq!(
            super::shown("redis://:hunter2@127.0.0.1:6379/0"),
            "redis://:redacted@127.0.0.1:6379/0"
        );
        assert_eq!(
            super::shown("redis://127.0.0.1:6379"),
            "redis://127.0.0.1:6379"
        );
        assert!(!super::shown("redis://u:hunter2@h").contains("hunter2"));
        assert!(!super::shown("::hunter2").contains("hunter2"));
    }

    #[test]
    fn entry_ids_compare_as_numbers() {
        assert!(super::later("1700000000010-0", "1700000000009-5"));
        assert!(super::later("17-10", "17-9"));
        assert!(!super::later("17-9", "17-9"));
        assert!(!super::later("9-0", "10-0"));
    }
}
