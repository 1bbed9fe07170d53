//! The fleet's schedules in the server's store. A slot's jobs are written
//! in the transaction that moves the schedule past the slot, and only if
//! the schedule still waits for that slot: a slot makes its jobs once,
//! whatever restarts in between.

use rusqlite::{OptionalExtension, Row, params};

use super::fleet::{NewEvent, insert_job_row};
use super::{Result, Store, StoreError};
use reprise_models::fleet::{Job, Schedule, ScheduleState};

const COLUMNS: &str =
    "id, request, every, time_zone, state, next, last_slot, runs, skipped, last_error, created";

/// A slot fired: what the schedule becomes.
#[derive(Debug, Clone)]
pub struct Fired<'a> {
    pub id: &'a str,
    /// The slot the schedule waited for: the change is made only if it
    /// still does.
    pub was_next: &'a str,
    pub slot: &'a str,
    pub next: Option<&'a str>,
    pub skipped: u32,
    /// Why the slot made no job.
    pub error: Option<&'a str>,
}

type Raw = (
    String,
    String,
    Option<String>,
    String,
    String,
    Option<String>,
    Option<String>,
    u32,
    u32,
    Option<String>,
    String,
);

fn raw(row: &Row<'_>) -> rusqlite::Result<Raw> {
    Raw::try_from(row)
}

fn finish(raw: Raw) -> Result<Schedule> {
    let (id, request, every, time_zone, state, next, last_slot, runs, skipped, last_error, created) =
        raw;
    let bad = |reason: String| StoreError::BadRow {
        id: id.clone(),
        reason,
    };
    let request = serde_json::from_str(&request).map_err(|err| bad(err.to_string()))?;
    let state =
        ScheduleState::parse(&state).ok_or_else(|| bad(format!("unknown state {state:?}")))?;
    Ok(Schedule {
        id,
        request,
        every,
        time_zone,
        state,
        next,
        last_slot,
        runs,
        skipped,
        last_error,
        created,
    })
}

impl Store {
    pub fn insert_schedule(&mut self, schedule: &Schedule) -> Result<()> {
        self.conn.execute(
            &format!(
                "INSERT INTO fleet_schedules ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
            ),
            params![
                schedule.id,
                serde_json::to_string(&schedule.request).expect("requests serialize"),
                schedule.every,
                schedule.time_zone,
                schedule.state.as_str(),
                schedule.next,
                schedule.last_slot,
                schedule.runs,
                schedule.skipped,
                schedule.last_error,
                schedule.created,
            ],
        )?;
        Ok(())
    }

    /// Every schedule, newest first.
    pub fn schedules(&self) -> Result<Vec<Schedule>> {
        self.select_schedules("1 = 1 ORDER BY created DESC, rowid DESC", params![])
    }

    pub fn schedule(&self, id: &str) -> Result<Option<Schedule>> {
        Ok(self
            .select_schedules("id = ?1", params![id])?
            .into_iter()
            .next())
    }

    /// The active schedules whose next slot is not after `now` (a stamp as
    /// the fleet writes it: such stamps sort as their times do).
    pub fn due_schedules(&self, now: &str) -> Result<Vec<Schedule>> {
        self.select_schedules(
            "state = 'active' AND next <= ?1 ORDER BY next",
            params![now],
        )
    }

    fn select_schedules(
        &self,
        filter: &str,
        values: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<Schedule>> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {COLUMNS} FROM fleet_schedules WHERE {filter}"
        ))?;
        let rows = statement
            .query_map(values, raw)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter().map(finish).collect()
    }

    /// Moves a schedule past a slot and writes the slot's jobs, in one
    /// transaction; nothing when the schedule no longer waits for
    /// `was_next` (fired already, or removed). Returns whether it fired.
    pub fn fire_schedule(&mut self, fired: &Fired<'_>, jobs: &[(Job, NewEvent)]) -> Result<bool> {
        let tx = self.conn.transaction()?;
        let state = match fired.next {
            Some(_) => ScheduleState::Active,
            None => ScheduleState::Done,
        };
        let changed = tx.execute(
            "UPDATE fleet_schedules SET next = ?3, last_slot = ?4, state = ?5,
                 runs = runs + ?6, skipped = skipped + ?7, last_error = ?8
             WHERE id = ?1 AND next = ?2 AND state = 'active'",
            params![
                fired.id,
                fired.was_next,
                fired.next,
                fired.slot,
                state.as_str(),
                u32::from(fired.error.is_none()),
                fired.skipped,
                fired.error,
            ],
        )?;
        if changed == 0 {
            return Ok(false);
        }
        for (job, event) in jobs {
            insert_job_row(&tx, job, event)?;
        }
        tx.commit()?;
        Ok(true)
    }

    /// Retention: removes the schedules done or removed that were created
    /// before `before` and have no slot after it. Returns how many.
    pub fn prune_schedules(&mut self, before: &str) -> Result<usize> {
        Ok(self.conn.execute(
            "DELETE FROM fleet_schedules
             WHERE state != 'active' AND created < ?1
                 AND (last_slot IS NULL OR last_slot < ?1)",
            params![before],
        )?)
    }

    /// Takes a schedule off; returns its state before, `None` for no such
    /// schedule.
    pub fn remove_schedule(&mut self, id: &str) -> Result<Option<ScheduleState>> {
        let tx = self.conn.transaction()?;
        let before: Option<String> = tx
            .query_row(
                "SELECT state FROM fleet_schedules WHERE id = ?1",
                params![id],
                |row| row.get(0),
            )
            .optional()?;
        let Some(before) = before else {
            return Ok(None);
        };
        tx.execute(
            "UPDATE fleet_schedules SET state = 'removed', next = NULL
             WHERE id = ?1 AND state = 'active'",
            params![id],
        )?;
        tx.commit()?;
        Ok(Some(
            ScheduleState::parse(&before).unwrap_or(ScheduleState::Removed),
        ))
    }
}
