//! Recording metadata and the format version that every stored form carries.

use serde::{Deserialize, Serialize};

use crate::ScreenGeometry;

/// The recording format's major version. A reader refuses a major version it
/// does not know. Version 2 names frames by BLAKE3 (`blake3:` + hex), where
/// version 1 named them by bare SHA-256 hex; both are read
/// ([`crate::screenshot::content_hash_matches`]).
pub const FORMAT_VERSION: u32 = 2;

/// The OS's double-click settings at record time; the click fusion uses them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DoubleClickSettings {
    pub interval_seconds: f64,
    pub distance_pixels: f64,
}

impl Default for DoubleClickSettings {
    /// The fallback when the OS does not say: 0.5 s and 5 px.
    fn default() -> Self {
        DoubleClickSettings {
            interval_seconds: 0.5,
            distance_pixels: 5.0,
        }
    }
}

/// A recorded task: its metadata. Events, screenshots and window states are
/// stored beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recording {
    /// A UUID, stable across export and import.
    pub id: String,
    pub name: String,
    /// What the person was doing, in their words.
    #[serde(default)]
    pub task_description: String,
    /// Wall-clock start, RFC 3339 in UTC; event timestamps count from here.
    pub created: String,
    /// `linux-x11`, `macos` or `windows`.
    pub platform: String,
    /// The desktop its frames cover: the primary monitor's, or with
    /// several monitors all of them.
    pub monitor: ScreenGeometry,
    /// The desktop's monitors, when there is more than one (empty in
    /// recordings made before monitors were kept, and with one monitor).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub monitors: Vec<crate::Monitor>,
    pub double_click: DoubleClickSettings,
    pub format_version: u32,
    /// False while recording, and for a recording whose recorder was killed.
    pub complete: bool,
    /// Names the person gave parameters (`reprise params --rename`): the
    /// name a parameter was derived with, to the one it goes by.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub parameter_names: std::collections::BTreeMap<String, String>,
}

/// A stored form says it was written in a format this build cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "recording format version {found} is newer than this build of Reprise understands (up to {FORMAT_VERSION}); upgrade Reprise to read it"
)]
pub struct FormatVersionError {
    pub found: u32,
}

/// The longest name a recording may have.
pub const MAX_NAME_CHARS: usize = 200;

/// Whether `c` would change how a terminal shows text rather than show
/// itself: a control character, or a bidirectional override or isolate
/// (which can make one name look like another).
pub fn is_deceptive_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// Why a recording's name is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("a recording's name may not be empty")]
    Empty,
    #[error("a recording's name may have at most {MAX_NAME_CHARS} characters, not {count}")]
    TooLong { count: usize },
    #[error(
        "a recording's name may not hold control or direction characters (it holds U+{code:04X})"
    )]
    Deceptive { code: u32 },
}

/// Refuses a recording's name that is empty, longer than
/// [`MAX_NAME_CHARS`], or holding a character that is not text.
pub fn check_name(name: &str) -> Result<(), NameError> {
    let count = name.chars().count();
    if name.trim().is_empty() {
        return Err(NameError::Empty);
    }
    if count > MAX_NAME_CHARS {
        return Err(NameError::TooLong { count });
    }
    if let Some(c) = name.chars().find(|&c| is_deceptive_char(c)) {
        return Err(NameError::Deceptive { code: u32::from(c) });
    }
    Ok(())
}

/// A recording's id that is not a lower-case UUID (the first 60 characters
/// of what was found).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a recording's id must be a lower-case UUID (like 0b5c2a8e-3f1d-4c6e-9a7b-2d4e6f8a0c1e), not {found:?}"
)]
pub struct IdError {
    pub found: String,
}

/// Refuses a recording's id that is anything but a UUID in its usual form
/// (36 characters, lower-case hex in groups of 8-4-4-4-12).
pub fn check_id(id: &str) -> Result<(), IdError> {
    let groups: Vec<&str> = id.split('-').collect();
    let shaped = groups.len() == 5
        && groups.iter().zip([8, 4, 4, 4, 12]).all(|(group, len)| {
            group.len() == len
                && group
                    .chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        });
    if shaped {
        Ok(())
    } else {
        Err(IdError {
            found: id.chars().take(60).collect(),
        })
    }
}

/// Why a recording bundle is inconsistent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BundleError {
    #[error(transparent)]
    Version(#[from] FormatVersionError),
    #[error("screenshot {idx} has id {id}")]
    ScreenshotId { idx: usize, id: u32 },
    #[error("window state {idx} has id {id}")]
    WindowStateId { idx: usize, id: u32 },
    #[error("window state {idx}: {source}")]
    Tree {
        idx: usize,
        source: crate::window::TreeError,
    },
    #[error("event {idx} is out of time order ({timestamp})")]
    OutOfOrder { idx: usize, timestamp: f64 },
    #[error("event {idx} is not a raw event (it has children)")]
    NotRaw { idx: usize },
    #[error("event {idx} links to missing screenshot {id}")]
    MissingScreenshot { idx: usize, id: u32 },
    #[error("event {idx} links to missing window state {id}")]
    MissingWindowState { idx: usize, id: u32 },
}

impl Recording {
    /// Refuses a format version this build does not know.
    pub fn check_version(&self) -> Result<(), FormatVersionError> {
        if self.format_version > FORMAT_VERSION || self.format_version == 0 {
            return Err(FormatVersionError {
                found: self.format_version,
            });
        }
        Ok(())
    }
}

/// A whole recording as data: its metadata with the raw events, screenshot
/// metadata and window states that belong to it. Image pixels are kept apart,
/// by content hash, because they are large and shared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordingBundle {
    pub recording: Recording,
    /// Raw events in time order (reduce them with [`crate::reduce`]).
    pub events: Vec<crate::ActionEvent>,
    pub screenshots: Vec<crate::Screenshot>,
    pub window_states: Vec<crate::WindowState>,
}

impl RecordingBundle {
    /// Seconds from the first to the last event (0 when there are fewer than two).
    pub fn duration(&self) -> f64 {
        match (self.events.first(), self.events.last()) {
            (Some(first), Some(last)) => last.timestamp - first.timestamp,
            _ => 0.0,
        }
    }

    /// Checks the bundle's internal consistency: the format version, ids that
    /// count up from 0, links that point at existing screenshots and window
    /// states, events in time order, and well-formed accessibility trees.
    pub fn validate(&self) -> Result<(), BundleError> {
        self.recording.check_version()?;
        for (idx, screenshot) in self.screenshots.iter().enumerate() {
            if screenshot.id as usize != idx {
                return Err(BundleError::ScreenshotId {
                    idx,
                    id: screenshot.id,
                });
            }
        }
        for (idx, state) in self.window_states.iter().enumerate() {
            if state.id as usize != idx {
                return Err(BundleError::WindowStateId { idx, id: state.id });
            }
            if let Some(tree) = &state.a11y {
                tree.validate()
                    .map_err(|source| BundleError::Tree { idx, source })?;
            }
        }
        let mut prev_timestamp = f64::NEG_INFINITY;
        for (idx, event) in self.events.iter().enumerate() {
            if !event.timestamp.is_finite() || event.timestamp < prev_timestamp {
                return Err(BundleError::OutOfOrder {
                    idx,
                    timestamp: event.timestamp,
                });
            }
            prev_timestamp = event.timestamp;
            if !event.children.is_empty() {
                return Err(BundleError::NotRaw { idx });
            }
            if let Some(id) = event.screenshot_id
                && id as usize >= self.screenshots.len()
            {
                return Err(BundleError::MissingScreenshot { idx, id });
            }
            if let Some(id) = event.window_state_id
                && id as usize >= self.window_states.len()
            {
                return Err(BundleError::MissingWindowState { idx, id });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod name_tests {
    use super::*;

    #[test]
    fn names_and_ids_are_checked() {
        assert!(check_name("invoice run").is_ok());
        assert!(check_name(&"n".repeat(MAX_NAME_CHARS)).is_ok());
        for bad in ["", "  ", "a\nb", "a\u{1b}[31m", "abc\u{202e}fdp"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name(&"n".repeat(MAX_NAME_CHARS + 1)).is_err());
        assert!(check_id("0b5c2a8e-3f1d-4c6e-9a7b-2d4e6f8a0c1e").is_ok());
        for bad in [
            "",
            "demo",
            "../../../etc/passwd",
            "0B5C2A8E-3F1D-4C6E-9A7B-2D4E6F8A0C1E",
            "0b5c2a8e3f1d4c6e9a7b2d4e6f8a0c1e",
        ] {
            assert!(check_id(bad).is_err(), "{bad:?}");
        }
    }
}
