//! Actions as data: what a strategy asks the replay driver to inject.

use std::time::Duration;

use reprise_models::{ActionEvent, MouseButton};
use serde::{Deserialize, Serialize};

pub type Button = MouseButton;

/// A key to press: a named key (`ctrl`, `enter`, …) or a character. Replay
/// presses the canonical (layout-independent) key when the recording has one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeySpec {
    Named(String),
    Char(String),
    /// A platform key code, for keys that have neither a name nor a character.
    Code(u32),
}

impl KeySpec {
    /// The key of a recorded key event: its canonical name or character when
    /// present, else what it typed, else its code.
    pub fn of_event(event: &ActionEvent) -> Option<KeySpec> {
        if let Some(name) = event
            .canonical_key_name
            .as_ref()
            .or(event.key_name.as_ref())
        {
            return Some(KeySpec::Named(name.clone()));
        }
        if let Some(char) = event
            .canonical_key_char
            .as_ref()
            .or(event.key_char.as_ref())
        {
            return Some(KeySpec::Char(char.clone()));
        }
        event.canonical_key_vk.or(event.key_vk).map(KeySpec::Code)
    }

    pub fn label(&self) -> String {
        match self {
            KeySpec::Named(name) => format!("<{name}>"),
            KeySpec::Char(char) => char.clone(),
            KeySpec::Code(code) => format!("<code {code}>"),
        }
    }
}

/// One primitive input action, in logical screen coordinates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    MoveTo {
        x: f64,
        y: f64,
    },
    ButtonDown {
        button: Button,
    },
    ButtonUp {
        button: Button,
    },
    Scroll {
        dx: i32,
        dy: i32,
    },
    KeyDown {
        key: KeySpec,
    },
    KeyUp {
        key: KeySpec,
    },
    /// A pause inside a step, to keep the recorded pace between its parts.
    Pause {
        seconds: f64,
    },
    /// Types the value of the secret parameter `name`, as text. Only the
    /// live desktop knows the value: it never enters a step, a record, a
    /// report or a prompt.
    TypeSecret {
        name: String,
    },
    /// Types a text known only during the replay (a value the replay read
    /// off the screen), at an even pace.
    TypeText {
        text: String,
    },
    /// Types a value the replay read into a secret variable, as text: only
    /// its name is ever shown or stored (read back, the value is gone).
    TypeHidden {
        name: String,
        #[serde(skip)]
        value: Hidden,
    },
}

/// A text typed but never shown: its `Debug` prints a mask and it is never
/// serialized.
#[derive(Clone, Default, PartialEq)]
pub struct Hidden(Option<String>);

impl Hidden {
    pub fn new(text: String) -> Hidden {
        Hidden(Some(text))
    }

    /// The text, where this process read it (not where a stored step was
    /// read back).
    pub fn reveal(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl std::fmt::Debug for Hidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hidden(…)")
    }
}

impl Action {
    pub fn pause(duration: Duration) -> Action {
        Action::Pause {
            seconds: duration.as_secs_f64(),
        }
    }
}

/// How a step's target was found: the rung that found it, for people (a
/// report's summary) and for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FoundBy {
    /// Its identity in the accessibility tree.
    Structural,
    /// Its exact description.
    Exact,
    /// Its description and its place among look-alikes.
    Place,
    /// A text similar to the recorded one.
    Text,
    /// Its look (the recorded crop).
    Look,
    /// The same place in its window as recorded.
    WindowPlace,
    /// The recorded coordinates.
    AsRecorded,
    /// A model's choice.
    Model,
}

impl FoundBy {
    /// One or two words: `structural`, `exact`, `place`, `text`, `look`, …
    pub fn words(self) -> &'static str {
        match self {
            FoundBy::Structural => "structural",
            FoundBy::Exact => "exact",
            FoundBy::Place => "place",
            FoundBy::Text => "text",
            FoundBy::Look => "look",
            FoundBy::WindowPlace => "window place",
            FoundBy::AsRecorded => "as recorded",
            FoundBy::Model => "model",
        }
    }
}

/// What a step was after, as the recording has it, for a report to show
/// beside what the replay found; when the step's target was not found, the
/// closest the last attempt saw instead.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Sought {
    /// The recorded action, as people read it (`singleclick left on push
    /// button "OK" in "Sign up"`): what the step was meant to do, named even
    /// when no step could be decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// How the recording describes the target (`button "Save"`), when it
    /// names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The recording's frame the action was taken on (its screenshot id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_frame: Option<u32>,
    /// Where the recorded action landed (logical screen coordinates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_point: Option<(f64, f64)>,
    /// The recorded element's box (logical), when the recording names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_rect: Option<reprise_models::Rect>,
    /// The closest elements the last attempt saw, best first, when the
    /// target was not found or could not be told apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Candidate>,
}

/// An element that was considered for a step's target and not taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// Its description (`button "Sav"`).
    pub description: String,
    /// How alike it is to the target, 0 to 1, by `measure`.
    pub score: f64,
    /// What `score` measures: `text` (its reading against the recorded one)
    /// or `look` (its pixels against the recorded crop).
    pub measure: String,
    /// Where it is on the screen (logical).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<reprise_models::Rect>,
}

/// What one step does: the actions, where they aim, and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The index of the recorded event tree this step replays, if any.
    pub source_event: Option<usize>,
    /// A short description, e.g. `singleclick left at (412, 300)`.
    pub label: String,
    /// Where the step's pointer action lands, in logical screen coordinates.
    pub target: Option<(f64, f64)>,
    /// Why the strategy chose this.
    pub reason: String,
    pub actions: Vec<Action>,
    /// The pause before the step, from the recording's timing.
    pub delay_before_seconds: f64,
    /// How its target was found (steps stored before this was kept have
    /// none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_by: Option<FoundBy>,
    /// The element the strategy found at `target` (by its identity in the
    /// accessibility tree): the loop reads what is at that point again just
    /// before the press, and presses only if it is still this element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<reprise_models::ElementIdentity>,
    /// The element found, as the live tree names it (where the identity
    /// rules found it): what differs from the recorded one is a heal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<reprise_models::ElementIdentity>,
    /// The offset by which the live tree's boxes were moved to agree with
    /// the pixels (the offset fitted when the press was recorded, found
    /// again): the re-check reads the element at the point moved back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_offset: Option<(i32, i32)>,
}
