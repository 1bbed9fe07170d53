//! After a recording is written, off the input's path: each press's element
//! that shows its name as text is read in the press's own frame. Where the
//! pixels in its box read the name of another element of its window, the
//! tree named the wrong element (its boxes are not where the screen shows
//! them), and the identity is not kept: the press is replayed by its
//! pixels, and `show` says why. Where they read its name, the check says so.

use anyhow::{Context, Result};
use reprise_models::element::{Disagreement, IdentityCheck};
use reprise_models::{ActionEvent, EventName, RecordingBundle};
use reprise_strategies::describe::TextReader;
use reprise_strategies::identity::labels::{LabelReading, check_in_frame, shows_its_name};

use crate::store::Store;

/// What the check of the labels found.
#[derive(Debug, Default, serde::Serialize)]
pub struct LabelChecks {
    /// Presses whose pixels read their element's name.
    pub agreed: usize,
    /// Presses whose element was dropped, each in words.
    pub dropped: Vec<String>,
    /// Why nothing was read, where the reader could not start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_read: Option<String>,
}

/// Whether `event` is a press whose kept element shows its name and has
/// not been read yet.
fn to_read(event: &ActionEvent) -> bool {
    event.name == EventName::Click
        && event.mouse_pressed == Some(true)
        && event.element.as_deref().is_some_and(shows_its_name)
        && matches!(
            event.identity,
            Some(IdentityCheck::Checked { read: None, .. })
        )
}

/// Checks the labels of the recording `recording_id`'s presses against their
/// frames, and writes again the presses whose check changed, at once. The reader is
/// started only where a press has a label to read.
pub fn check(store: &mut Store, recording_id: &str) -> Result<LabelChecks> {
    let bundle = store
        .load(recording_id)
        .context("read the recording to check its labels")?;
    let mut checks = LabelChecks::default();
    if !bundle.events.iter().any(to_read) {
        return Ok(checks);
    }
    let started = std::time::Instant::now();
    let mut reader = crate::vision::ocr::TesseractReader::start();
    if let Err(err) = reader.ready() {
        checks.not_read = Some(err.to_string());
        return Ok(checks);
    }
    let mut changed = Vec::new();
    for (seq, event) in bundle.events.iter().enumerate() {
        if !to_read(event) {
            continue;
        }
        let Some(checked) = checked(store, &bundle, event, &mut reader)? else {
            continue;
        };
        if let Some(IdentityCheck::Dropped(_)) = &checked.identity {
            checks.dropped.push(checked.label());
        } else {
            checks.agreed += 1;
        }
        changed.push((seq as u64, checked));
    }
    store.set_events(recording_id, &changed)?;
    tracing::debug!(
        ms = started.elapsed().as_millis(),
        agreed = checks.agreed,
        dropped = checks.dropped.len(),
        "checked the presses' labels against their pixels"
    );
    Ok(checks)
}

/// `event` with what its frame's pixels say of its element's name; `None`
/// where they tell nothing (no frame, no text, a text no element is named).
fn checked(
    store: &Store,
    bundle: &RecordingBundle,
    event: &ActionEvent,
    reader: &mut dyn TextReader,
) -> Result<Option<ActionEvent>> {
    let (Some(element), Some(shot)) = (
        event.element.as_deref(),
        event
            .screenshot_id
            .and_then(|id| bundle.screenshots.get(id as usize)),
    ) else {
        return Ok(None);
    };
    let frame = reprise_strategies::Frame {
        image: store.image(&shot.content_hash)?,
        screen: shot.screen,
    };
    let tree = event
        .window_state_id
        .and_then(|id| bundle.window_states.get(id as usize))
        .and_then(|state| state.a11y.as_ref());
    let mut checked = event.clone();
    match check_in_frame(element, &frame, tree, reader) {
        LabelReading::Agrees => {
            if let Some(IdentityCheck::Checked { read, .. }) = &mut checked.identity {
                *read = element.name.clone();
            }
        }
        LabelReading::Another { read, .. } => {
            checked.identity = Some(IdentityCheck::Dropped(Disagreement::ReadsAnother {
                element: element.label(),
                read,
            }));
            checked.element = None;
        }
        LabelReading::Unclear => return Ok(None),
    }
    Ok(Some(checked))
}
