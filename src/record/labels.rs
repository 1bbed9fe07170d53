//! After a recording is written, off the input's path: each press's element
//! that shows its name as text is read in the press's own frame. Where the
//! pixels in its box read the name of another element of its window, the
//! tree named the wrong element (its boxes are not where the screen shows
//! them): the offset that puts the tree's names where the pixels show them
//! is fitted (`identity::fit`), and the element under the press in the
//! moved tree is kept instead; where no offset is borne out, the identity
//! is not kept: the press is replayed by its pixels, and `show` says why.
//! Where they read its name, the check says so.

use anyhow::{Context, Result};
use reprise_models::element::{Disagreement, IdentityCheck};
use reprise_models::{A11yTree, ActionEvent, EventName, RecordingBundle};
use reprise_strategies::Frame;
use reprise_strategies::describe::TextReader;
use reprise_strategies::identity::fit;
use reprise_strategies::identity::labels::{LabelReading, check_in_frame, shows_its_name};

use crate::store::Store;

/// What the check of the labels found.
#[derive(Debug, Default, serde::Serialize)]
pub struct LabelChecks {
    /// Presses whose pixels read their element's name.
    pub agreed: usize,
    /// Presses whose element was dropped, each in words.
    pub dropped: Vec<String>,
    /// Presses whose element was found again once the tree was moved by
    /// the offset the pixels bore out, each in words.
    pub refitted: Vec<String>,
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

/// Whether `event` is a press whose element was dropped because its box
/// missed the press or left its window: in a tree whose boxes are off, the
/// press's element moved by the offset the pixels bore out may hold it.
fn missed(event: &ActionEvent) -> bool {
    event.name == EventName::Click
        && event.mouse_pressed == Some(true)
        && matches!(
            event.identity,
            Some(IdentityCheck::Dropped(
                Disagreement::MissesPress { .. } | Disagreement::OutsideWindow { .. }
            ))
        )
}

/// Checks the labels of the recording `recording_id`'s presses against their
/// frames, and writes again the presses whose check changed, at once. The
/// reader is started only where a press has a label to read. Where a tree's
/// boxes were fitted to the pixels, the presses of the same application
/// whose element was dropped for missing the press are tried at that offset.
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
    let mut fits: Vec<(String, (i32, i32))> = Vec::new();
    for (seq, event) in bundle.events.iter().enumerate() {
        if !to_read(event) {
            continue;
        }
        let Some(checked) = checked(store, &bundle, event, &mut reader)? else {
            continue;
        };
        match (&checked.identity, checked.element.as_deref()) {
            (Some(IdentityCheck::Dropped(_)), _) => checks.dropped.push(checked.label()),
            (
                Some(IdentityCheck::Checked {
                    fitted: Some(offset),
                    ..
                }),
                Some(element),
            ) => {
                fits.push((element.app.clone(), *offset));
                checks.refitted.push(checked.label());
            }
            _ => checks.agreed += 1,
        }
        changed.push((seq as u64, checked));
    }
    for (seq, event) in bundle.events.iter().enumerate() {
        if !missed(event) {
            continue;
        }
        if let Some(refitted) = refitted(store, &bundle, event, &fits, &mut reader)? {
            checks.refitted.push(refitted.label());
            changed.push((seq as u64, refitted));
        }
    }
    store.set_events(recording_id, &changed)?;
    tracing::debug!(
        ms = started.elapsed().as_millis(),
        agreed = checks.agreed,
        dropped = checks.dropped.len(),
        refitted = checks.refitted.len(),
        "checked the presses' labels against their pixels"
    );
    Ok(checks)
}

/// The frame of `event`'s press and the tree of its window state, where
/// both were kept.
fn seen<'a>(
    store: &Store,
    bundle: &'a RecordingBundle,
    event: &ActionEvent,
) -> Result<Option<(Frame, Option<&'a A11yTree>)>> {
    let Some(shot) = event
        .screenshot_id
        .and_then(|id| bundle.screenshots.get(id as usize))
    else {
        return Ok(None);
    };
    let frame = Frame {
        image: store.image(&shot.content_hash)?,
        screen: shot.screen,
    };
    let tree = event
        .window_state_id
        .and_then(|id| bundle.window_states.get(id as usize))
        .and_then(|state| state.a11y.as_ref());
    Ok(Some((frame, tree)))
}

/// `event` (a press whose element missed it) with the element under it
/// once its tree is moved by the offset fitted for its application, where
/// the pixels read that element's name there; `None` otherwise.
fn refitted(
    store: &Store,
    bundle: &RecordingBundle,
    event: &ActionEvent,
    fits: &[(String, (i32, i32))],
    reader: &mut dyn TextReader,
) -> Result<Option<ActionEvent>> {
    let Some((frame, Some(tree))) = seen(store, bundle, event)? else {
        return Ok(None);
    };
    let (Some(&(_, offset)), Some(press)) = (
        fits.iter().find(|(app, _)| *app == tree.app),
        event.mouse_x.zip(event.mouse_y),
    ) else {
        return Ok(None);
    };
    let seen = fit::Seen {
        point: press,
        frame: &frame,
        tree,
    };
    let Some(element) = fit::under_press(offset, &seen, reader) else {
        return Ok(None);
    };
    let mut refitted = event.clone();
    refitted.identity = Some(IdentityCheck::Checked {
        mapped_by: None,
        read: element.name.clone(),
        fitted: Some(offset),
    });
    refitted.element = Some(Box::new(element));
    Ok(Some(refitted))
}

/// `event` with what its frame's pixels say of its element's name; `None`
/// where they tell nothing (no frame, no text, a text no element is named).
fn checked(
    store: &Store,
    bundle: &RecordingBundle,
    event: &ActionEvent,
    reader: &mut dyn TextReader,
) -> Result<Option<ActionEvent>> {
    let (Some(element), Some((frame, tree))) =
        (event.element.as_deref(), seen(store, bundle, event)?)
    else {
        return Ok(None);
    };
    let mut checked = event.clone();
    match check_in_frame(element, &frame, tree, reader) {
        LabelReading::Agrees => {
            if let Some(IdentityCheck::Checked { read, .. }) = &mut checked.identity {
                *read = element.name.clone();
            }
        }
        LabelReading::Another { read, other } => {
            let press = event.mouse_x.zip(event.mouse_y);
            let fitted = tree.zip(press).and_then(|(tree, point)| {
                let seen = fit::Seen {
                    point,
                    frame: &frame,
                    tree,
                };
                fit::refit(element, &other, &seen, reader)
            });
            match (fitted, &mut checked.identity) {
                (
                    Some(fitted),
                    Some(IdentityCheck::Checked {
                        read, fitted: fit, ..
                    }),
                ) => {
                    tracing::debug!(offset = ?fitted.offset, witness = %fitted.witness, "the tree's boxes fitted to the pixels");
                    *read = fitted.element.name.clone();
                    *fit = Some(fitted.offset);
                    checked.element = Some(Box::new(fitted.element));
                }
                _ => {
                    checked.identity = Some(IdentityCheck::Dropped(Disagreement::ReadsAnother {
                        element: element.label(),
                        read,
                    }));
                    checked.element = None;
                }
            }
        }
        LabelReading::Unclear => return Ok(None),
    }
    Ok(Some(checked))
}
