//! Recordings in the store: writing them as they are recorded, reading,
//! listing, resolving a user's reference, deleting and importing whole.

use std::collections::BTreeMap;

use reprise_models::{ActionEvent, Recording, RecordingBundle, Screenshot, WindowState};
use rusqlite::{OptionalExtension, Transaction, params};

use super::{Result, Store, StoreError};
use crate::store::frames::FrameImage;

/// One line of `reprise list`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RecordingSummary {
    pub id: String,
    pub name: String,
    pub created: String,
    pub duration_seconds: f64,
    pub n_events: i64,
    pub n_screenshots: i64,
    pub complete: bool,
    /// Its newest version (1: as recorded).
    pub latest_version: u32,
}

/// A screenshot's metadata with its image, as the recorder hands it over.
#[derive(Debug, Clone)]
pub struct ScreenshotBlob {
    pub screenshot: Screenshot,
    pub image: FrameImage,
}

/// A `recordings` row before its JSON columns are parsed.
struct RecordingRow {
    name: String,
    task_description: String,
    created: String,
    platform: String,
    monitor: String,
    double_click: String,
    format_version: u32,
    complete: bool,
    parameter_names: String,
    monitors: String,
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("model types always serialize")
}

fn from_json<T: serde::de::DeserializeOwned>(id: &str, what: &str, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|err| StoreError::BadRow {
        id: id.to_owned(),
        reason: format!("{what}: {err}"),
    })
}

impl Store {
    /// Creates a recording's row; its data follows through [`Store::append`].
    pub fn insert_recording(&mut self, recording: &Recording) -> Result<()> {
        let tx = self.conn.transaction()?;
        insert_recording_row(&tx, recording)?;
        tx.commit()?;
        Ok(())
    }

    /// Appends a batch of a recording's data in one transaction. Images are
    /// stored once per content hash.
    pub fn append(&mut self, recording_id: &str, batch: Batch<'_>) -> Result<()> {
        let tx = self.conn.transaction()?;
        append_rows(&tx, recording_id, batch)?;
        tx.commit()?;
        Ok(())
    }

    /// Marks a recording as complete (its recorder stopped cleanly).
    pub fn finish_recording(&mut self, recording_id: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE recordings SET complete = 1 WHERE id = ?1",
            params![recording_id],
        )?;
        Ok(())
    }

    /// All recordings, oldest first.
    pub fn list_recordings(&self) -> Result<Vec<RecordingSummary>> {
        let mut statement = self.conn.prepare(
            "SELECT r.id, r.name, r.created, r.complete,
                    (SELECT COUNT(*) FROM action_events e WHERE e.recording_id = r.id),
                    (SELECT COALESCE(MAX(timestamp) - MIN(timestamp), 0) FROM action_events e WHERE e.recording_id = r.id),
                    (SELECT COUNT(*) FROM screenshots s WHERE s.recording_id = r.id),
                    (SELECT COALESCE(MAX(version), 1) FROM recording_versions v WHERE v.recording_id = r.id)
             FROM recordings r ORDER BY r.created, r.id",
        )?;
        let rows = statement.query_map([], |row| {
            Ok(RecordingSummary {
                id: row.get(0)?,
                name: row.get(1)?,
                created: row.get(2)?,
                complete: row.get(3)?,
                n_events: row.get(4)?,
                duration_seconds: row.get(5)?,
                n_screenshots: row.get(6)?,
                latest_version: row.get(7)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The image of recording `id`'s first frame (the screen it starts
    /// on), if it has one.
    pub fn first_frame(&self, recording_id: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT hash FROM screenshots WHERE recording_id = ?1 ORDER BY idx LIMIT 1",
                params![recording_id],
                |row| row.get(0),
            )
            .optional()?)
    }

    /// Finds the one recording that `query` names: a whole id; else a name
    /// (the newest recording of that name) or an id prefix (at least 4 hex
    /// characters), when only one of the two names anything. A name that is
    /// also another recording's id prefix is ambiguous and refused with the
    /// candidates, so `delete` never removes a recording the person did not
    /// mean.
    pub fn resolve(&self, query: &str) -> Result<String> {
        let exact: Option<String> = self
            .conn
            .query_row(
                "SELECT id FROM recordings WHERE id = ?1",
                params![query],
                |row| row.get(0),
            )
            .optional()?;
        if let Some(id) = exact {
            return Ok(id);
        }
        let by_name: Option<String> = self
            .conn
            .query_row(
                "SELECT id FROM recordings WHERE name = ?1 ORDER BY created DESC, id DESC LIMIT 1",
                params![query],
                |row| row.get(0),
            )
            .optional()?;
        let mut by_prefix: Vec<String> = Vec::new();
        if super::is_id_prefix(query) {
            let mut statement = self.conn.prepare(
                "SELECT id FROM recordings WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id",
            )?;
            by_prefix = statement
                .query_map(params![query.to_ascii_lowercase()], |row| row.get(0))?
                .collect::<rusqlite::Result<_>>()?;
        }
        by_prefix.retain(|id| Some(id) != by_name.as_ref());
        match (by_name, by_prefix.len()) {
            (Some(id), 0) => Ok(id),
            (None, 0) => Err(StoreError::NotFound(query.to_owned())),
            (None, 1) => Ok(by_prefix.remove(0)),
            (name, _) => {
                let mut candidates: Vec<String> = name
                    .map(|id| format!("{id} (named {query:?})"))
                    .into_iter()
                    .collect();
                candidates.extend(by_prefix.into_iter().map(|id| format!("{id} (by its id)")));
                Err(StoreError::Ambiguous {
                    query: query.to_owned(),
                    candidates: candidates.join(", "),
                })
            }
        }
    }

    /// Reads a whole recording.
    pub fn load(&self, recording_id: &str) -> Result<RecordingBundle> {
        let id = recording_id;
        let recording = self.recording_row(id)?;
        let events: Vec<ActionEvent> = self.json_rows(
            "SELECT event FROM action_events WHERE recording_id = ?1 ORDER BY seq",
            id,
            "event",
        )?;
        let screenshots = self.screenshot_rows(id)?;
        let window_states: Vec<WindowState> = self.json_rows(
            "SELECT state FROM window_states WHERE recording_id = ?1 ORDER BY idx",
            id,
            "window state",
        )?;
        Ok(RecordingBundle {
            recording,
            events,
            screenshots,
            window_states,
        })
    }

    /// The one JSON column `sql` selects for recording `id`, each row read
    /// as a `what`.
    fn json_rows<T: serde::de::DeserializeOwned>(
        &self,
        sql: &str,
        id: &str,
        what: &str,
    ) -> Result<Vec<T>> {
        let mut statement = self.conn.prepare(sql)?;
        statement
            .query_map(params![id], |row| row.get::<_, String>(0))?
            .map(|text| from_json(id, what, &text?))
            .collect()
    }

    /// Recording `id`'s own row, its format version checked.
    fn recording_row(&self, id: &str) -> Result<Recording> {
        let row = self
            .conn
            .query_row(
                "SELECT name, task_description, created, platform, monitor, double_click,
                        format_version, complete, parameter_names, monitors
                 FROM recordings WHERE id = ?1",
                params![id],
                |row| {
                    Ok(RecordingRow {
                        name: row.get(0)?,
                        task_description: row.get(1)?,
                        created: row.get(2)?,
                        platform: row.get(3)?,
                        monitor: row.get(4)?,
                        double_click: row.get(5)?,
                        format_version: row.get(6)?,
                        complete: row.get(7)?,
                        parameter_names: row.get(8)?,
                        monitors: row.get(9)?,
                    })
                },
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))?;
        let recording = Recording {
            id: id.to_owned(),
            name: row.name,
            task_description: row.task_description,
            created: row.created,
            platform: row.platform,
            monitor: from_json(id, "monitor", &row.monitor)?,
            double_click: from_json(id, "double-click settings", &row.double_click)?,
            format_version: row.format_version,
            complete: row.complete,
            parameter_names: from_json(id, "parameter names", &row.parameter_names)?,
            monitors: from_json(id, "monitors", &row.monitors)?,
        };
        recording
            .check_version()
            .map_err(|err| StoreError::BadRow {
                id: id.to_owned(),
                reason: err.to_string(),
            })?;
        Ok(recording)
    }

    /// Recording `id`'s screenshots, in order.
    fn screenshot_rows(&self, id: &str) -> Result<Vec<Screenshot>> {
        let mut statement = self.conn.prepare(
            "SELECT idx, timestamp, width, height, screen, hash FROM screenshots
             WHERE recording_id = ?1 ORDER BY idx",
        )?;
        let raw_screenshots = statement
            .query_map(params![id], |row| {
                <(u32, f64, u32, u32, String, String)>::try_from(row)
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        raw_screenshots
            .into_iter()
            .map(|(idx, timestamp, width, height, screen, content_hash)| {
                Ok(Screenshot {
                    id: idx,
                    timestamp,
                    width,
                    height,
                    screen: from_json(id, "screen geometry", &screen)?,
                    content_hash,
                })
            })
            .collect()
    }

    /// Stores the names the person gave a recording's parameters.
    pub fn set_parameter_names(
        &mut self,
        recording_id: &str,
        names: &std::collections::BTreeMap<String, String>,
    ) -> Result<()> {
        let n_updated = self.conn.execute(
            "UPDATE recordings SET parameter_names = ?2 WHERE id = ?1",
            params![recording_id, to_json(names)],
        )?;
        if n_updated == 0 {
            return Err(StoreError::NotFound(recording_id.to_owned()));
        }
        Ok(())
    }

    /// Writes again the events of a recording at their `seq`s, in one
    /// transaction (the recorder's own checks after the recording, which
    /// change what was kept of a press): all, or none where one is missing.
    pub fn set_events(&mut self, recording_id: &str, events: &[(u64, ActionEvent)]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut update = tx.prepare_cached(
                "UPDATE action_events SET event = ?3 WHERE recording_id = ?1 AND seq = ?2",
            )?;
            for (seq, event) in events {
                if update.execute(params![recording_id, *seq as i64, to_json(event)])? == 0 {
                    return Err(StoreError::NotFound(format!("{recording_id} event {seq}")));
                }
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Deletes a recording with its data and replay runs, and any image no
    /// longer used by anything.
    pub fn delete_recording(&mut self, recording_id: &str) -> Result<()> {
        // Deleted content is zeroed where that costs no extra writes (b-tree
        // pages), and freed pages are not rewritten: a deletion's log stays
        // small, which a full disk needs (freed pages leave the file when
        // the space is given back).
        self.conn.pragma_update(None, "secure_delete", "FAST")?;
        let tx = self.conn.transaction()?;
        let n_deleted = tx.execute(
            "DELETE FROM recordings WHERE id = ?1",
            params![recording_id],
        )?;
        if n_deleted == 0 {
            return Err(StoreError::NotFound(recording_id.to_owned()));
        }
        super::delete_unused_images(&tx)?;
        tx.commit()?;
        Ok(())
    }

    /// Imports a whole recording in one transaction: either all of it is
    /// stored or nothing is. `images` maps content hashes to images as the
    /// store keeps them (whole, or patches of key frames `images` also holds
    /// or the store has); an image already stored is kept as it is.
    pub fn import(
        &mut self,
        bundle: &RecordingBundle,
        images: &BTreeMap<String, FrameImage>,
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        let exists: Option<i64> = tx
            .query_row(
                "SELECT 1 FROM recordings WHERE id = ?1",
                params![bundle.recording.id],
                |row| row.get(0),
            )
            .optional()?;
        if exists.is_some() {
            return Err(StoreError::AlreadyExists(bundle.recording.id.clone()));
        }
        insert_recording_row(&tx, &bundle.recording)?;
        // Key frames before the patches that refer to them.
        let (whole, patches): (Vec<_>, Vec<_>) = images
            .iter()
            .partition(|(_, image)| !matches!(image, FrameImage::Patch { .. }));
        for (hash, image) in whole.into_iter().chain(patches) {
            super::images::insert_image(&tx, hash, image)?;
        }
        let blobs: Vec<ScreenshotBlob> = bundle
            .screenshots
            .iter()
            .map(|screenshot| ScreenshotBlob {
                screenshot: screenshot.clone(),
                image: FrameImage::Stored,
            })
            .collect();
        let batch = Batch {
            first_event_seq: 0,
            events: &bundle.events,
            screenshots: &blobs,
            window_states: &bundle.window_states,
        };
        append_rows(&tx, &bundle.recording.id, batch)?;
        tx.commit()?;
        Ok(())
    }
}

fn insert_recording_row(tx: &Transaction<'_>, recording: &Recording) -> Result<()> {
    tx.execute(
        "INSERT INTO recordings (id, name, task_description, created, platform, monitor,
                                 double_click, format_version, complete, parameter_names,
                                 monitors)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            recording.id,
            recording.name,
            recording.task_description,
            recording.created,
            recording.platform,
            to_json(&recording.monitor),
            to_json(&recording.double_click),
            recording.format_version,
            recording.complete,
            to_json(&recording.parameter_names),
            to_json(&recording.monitors),
        ],
    )?;
    Ok(())
}

/// What a recorder appends at once: events numbered from `first_event_seq`,
/// screenshots and window states.
#[derive(Debug, Default, Clone, Copy)]
pub struct Batch<'a> {
    pub first_event_seq: u64,
    pub events: &'a [ActionEvent],
    pub screenshots: &'a [ScreenshotBlob],
    pub window_states: &'a [WindowState],
}

fn append_rows(tx: &Transaction<'_>, recording_id: &str, batch: Batch<'_>) -> Result<()> {
    let Batch {
        first_event_seq,
        events,
        screenshots,
        window_states,
    } = batch;
    let mut insert_screenshot = tx.prepare_cached(
        "INSERT INTO screenshots (recording_id, idx, timestamp, width, height, screen, hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for blob in screenshots {
        let screenshot = &blob.screenshot;
        super::images::insert_image(tx, &screenshot.content_hash, &blob.image)?;
        insert_screenshot.execute(params![
            recording_id,
            screenshot.id,
            screenshot.timestamp,
            screenshot.width,
            screenshot.height,
            to_json(&screenshot.screen),
            screenshot.content_hash,
        ])?;
    }
    let mut insert_state = tx.prepare_cached(
        "INSERT INTO window_states (recording_id, idx, timestamp, state) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for state in window_states {
        insert_state.execute(params![
            recording_id,
            state.id,
            state.timestamp,
            to_json(state)
        ])?;
    }
    let mut insert_event = tx.prepare_cached(
        "INSERT INTO action_events (recording_id, seq, timestamp, name, event) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (offset, event) in events.iter().enumerate() {
        insert_event.execute(params![
            recording_id,
            (first_event_seq + offset as u64) as i64,
            event.timestamp,
            event.name.as_str(),
            to_json(event),
        ])?;
    }
    Ok(())
}
