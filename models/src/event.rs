//! Action events: one mouse or keyboard event, or a parent over the events it groups.

use serde::{Deserialize, Serialize};

/// What an event is. Raw events come from the recorder; the merged kinds are
/// made by [`crate::reduce`] and always have children.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventName {
    /// The pointer moved (raw), or a run of moves merged into one (parent).
    Move,
    /// A mouse button went down (`mouse_pressed: true`) or up (`false`).
    Click,
    /// The wheel turned; `mouse_dx`/`mouse_dy` hold the ticks.
    Scroll,
    /// A key went down.
    Press,
    /// A key went up.
    Release,
    /// A left press and its release.
    Singleclick,
    /// Two left presses with their releases, close in time and space.
    Doubleclick,
    /// A run of key presses and releases.
    Type,
}

impl EventName {
    /// Whether events of this kind are keyboard events (and so carry `text`).
    pub fn is_key(self) -> bool {
        matches!(
            self,
            EventName::Press | EventName::Release | EventName::Type
        )
    }

    /// The name as it appears in JSON and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            EventName::Move => "move",
            EventName::Click => "click",
            EventName::Scroll => "scroll",
            EventName::Press => "press",
            EventName::Release => "release",
            EventName::Singleclick => "singleclick",
            EventName::Doubleclick => "doubleclick",
            EventName::Type => "type",
        }
    }
}

/// A mouse button, by its platform-neutral name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MouseButton {
    Left,
    Right,
    Middle,
}

impl MouseButton {
    pub fn as_str(self) -> &'static str {
        match self {
            MouseButton::Left => "left",
            MouseButton::Right => "right",
            MouseButton::Middle => "middle",
        }
    }
}

/// One action event, with OpenAdapt's field names so recordings compare with its own.
///
/// Unknown fields in input are ignored (OpenAdapt dumps carry ids and foreign keys),
/// and `text` is always derived, never read.
///
/// Coordinates are logical screen coordinates (see [`crate::ScreenGeometry`]).
/// `timestamp` is seconds since the recording started, on a monotonic clock; a
/// parent's timestamp is its first child's, and no timestamp is ever rewritten.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionEvent {
    pub name: EventName,
    pub timestamp: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mouse_x: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mouse_y: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mouse_dx: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mouse_dy: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mouse_button_name: Option<MouseButton>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mouse_pressed: Option<bool>,
    /// A named key (`ctrl`, `shift`, `enter`, `f5`, …); `None` for character keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_name: Option<String>,
    /// The character the key produced, for character keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_char: Option<String>,
    /// The platform key code (an X11 keycode on Linux). 0 marks an invalid
    /// event. Read as a number or as OpenAdapt writes it, a string ("78").
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "key_code"
    )]
    pub key_vk: Option<u32>,
    /// The layout-independent key: what replay presses when it is present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_key_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_key_char: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "key_code"
    )]
    pub canonical_key_vk: Option<u32>,
    /// Index of the newest screenshot taken at or before this event, in the recording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot_id: Option<u32>,
    /// Index of the window state in effect when this event happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_state_id: Option<u32>,
    /// For a press, the element under the pointer as the accessibility tree
    /// named it; for the first key typed after a press, a Tab or a window
    /// change, the element that had the focus (`None` where the window
    /// exposes no tree, or it did not answer in time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<Box<crate::ElementIdentity>>,
    /// For a press: whether the element the tree named was checked against
    /// the screen and kept, or dropped and why (`None` in recordings made
    /// before the check, and for presses the tree named nothing for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<crate::element::IdentityCheck>,
    /// For a press in a popup (a window the window manager does not manage:
    /// a menu, a combo box's list), the popup's box on the screen when the
    /// press arrived; `None` for a press in a managed window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub popup: Option<crate::Rect>,
    /// For a key typed as a secret (into a password field, in a secret
    /// window, or while secret typing was on): the name of the parameter
    /// that stands for it (`password`). Such an event keeps its timing and
    /// nothing of the key: no name, character or code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// Derived for key events by [`ActionEvent::fill_text`]; never read from input.
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ActionEvent>,
}

impl ActionEvent {
    /// The event on one line, for people: `singleclick left at (412, 300)`,
    /// `click left down at (520, 440)`, `type "h-i"`; a press that named its
    /// element says which: `singleclick left on table cell "Maria Olsen"
    /// (row: Tromsø) in "Customers" at (520, 440)`.
    pub fn label(&self) -> String {
        use std::fmt::Write as _;
        let mut label = self.name.as_str().to_owned();
        if let Some(button) = self.mouse_button_name {
            label.push(' ');
            label.push_str(button.as_str());
            if self.name == EventName::Click {
                label.push_str(if self.mouse_pressed == Some(true) {
                    " down"
                } else {
                    " up"
                });
            }
        }
        let element = std::iter::once(self)
            .chain(&self.children)
            .find_map(|event| event.element.as_ref());
        let in_popup = std::iter::once(self)
            .chain(&self.children)
            .any(|event| event.popup.is_some());
        if let Some(element) = element {
            let _ = write!(label, " on {}", element.label());
            match &element.window.name {
                Some(window) => {
                    let _ = write!(label, " in {window:?}");
                }
                None if in_popup => label.push_str(" in a popup"),
                None => {}
            }
        } else if in_popup {
            label.push_str(" in a popup");
        }
        if let Some((x, y)) = self.position() {
            let _ = write!(label, " at ({x}, {y})");
        }
        if self.name == EventName::Scroll {
            let _ = write!(
                label,
                " by ({}, {})",
                self.mouse_dx.unwrap_or(0.0),
                self.mouse_dy.unwrap_or(0.0)
            );
        }
        match self.typed_words() {
            // A modifier alone (Shift, which typed characters show) is
            // named, never shown as an empty text.
            Some(text) if text.is_empty() => {
                let key = self
                    .key_name
                    .as_deref()
                    .or(self.canonical_key_name.as_deref())
                    .unwrap_or("a key");
                let _ = write!(label, " <{key}>");
            }
            Some(text) => {
                let _ = write!(label, " {text:?}");
            }
            None => {}
        }
        // A press whose element was dropped says why; one kept says only
        // where its toolkit's boxes had to be moved to agree.
        let check = std::iter::once(self)
            .chain(&self.children)
            .find_map(|event| event.identity.as_ref());
        if let Some(brief) = check.and_then(crate::element::IdentityCheck::brief) {
            let _ = write!(label, " ({brief})");
        }
        label
    }

    /// What a key event typed, for people: its characters run together
    /// (`alice`), a named key as `<enter>`, a secret as its one placeholder
    /// (`{password}`); Shift, which the characters already show, is left
    /// out. `text` keeps OpenAdapt's `a-l-i-c-e` form.
    pub fn typed_words(&self) -> Option<String> {
        if !self.name.is_key() {
            return None;
        }
        if self.children.is_empty() {
            let shift = self
                .key_name
                .as_deref()
                .or(self.canonical_key_name.as_deref())
                .is_some_and(|name| name.starts_with("shift"));
            if shift && self.secret.is_none() {
                return Some(String::new());
            }
            return self.derived_text();
        }
        Some(
            self.typed_children()
                .filter_map(ActionEvent::typed_words)
                .collect(),
        )
    }

    /// The children a key event's text is made of: its presses and nested
    /// typings, a secret's run of keys as its first key only (a secret shows
    /// as its one placeholder, however many keys it had).
    fn typed_children(&self) -> impl Iterator<Item = &ActionEvent> {
        let mut previous_secret: Option<&str> = None;
        self.children
            .iter()
            .filter(|child| child.name == EventName::Press || child.name == EventName::Type)
            .filter(move |child| {
                let secret = child.secret.as_deref();
                let repeated = secret.is_some() && secret == previous_secret;
                previous_secret = secret;
                !repeated
            })
    }

    /// A key event named as a person writes a key: one character is the
    /// character typed (`a`, `A`), anything longer a named key (`ctrl`).
    pub fn key(name: EventName, timestamp: f64, key: &str) -> Self {
        let mut event = ActionEvent::new(name, timestamp);
        if key.chars().count() > 1 {
            event.key_name = Some(key.to_owned());
        } else {
            event.key_char = Some(key.to_owned());
        }
        event
    }

    /// An event with only a name and a timestamp; the other fields are empty.
    pub fn new(name: EventName, timestamp: f64) -> Self {
        ActionEvent {
            name,
            timestamp,
            mouse_x: None,
            mouse_y: None,
            mouse_dx: None,
            mouse_dy: None,
            mouse_button_name: None,
            mouse_pressed: None,
            key_name: None,
            key_char: None,
            key_vk: None,
            canonical_key_name: None,
            canonical_key_char: None,
            canonical_key_vk: None,
            screenshot_id: None,
            window_state_id: None,
            element: None,
            identity: None,
            popup: None,
            secret: None,
            text: None,
            children: Vec::new(),
        }
    }

    /// A parent over `children`, taking the first child's timestamp and links.
    pub fn parent(name: EventName, children: Vec<ActionEvent>) -> Self {
        let first = children
            .first()
            .expect("a parent event needs at least one child");
        let mut parent = ActionEvent::new(name, first.timestamp);
        parent.screenshot_id = first.screenshot_id;
        parent.window_state_id = first.window_state_id;
        parent.children = children;
        parent
    }

    /// The identity of the key used to track held named keys: its name, else
    /// its canonical name.
    pub fn named_key(&self) -> Option<&str> {
        self.key_name
            .as_deref()
            .or(self.canonical_key_name.as_deref())
    }

    /// A key's identity between its press and its release: its code where
    /// it has one (a character's case may differ between the two), else its
    /// name or character.
    pub fn key_identity(&self) -> String {
        match self.key_vk.or(self.canonical_key_vk) {
            Some(code) => format!("#{code}"),
            None => self
                .named_key()
                .or(self.key_char.as_deref())
                .or(self.canonical_key_char.as_deref())
                .unwrap_or_default()
                .to_owned(),
        }
    }

    /// Whether this is a raw key event (press or release).
    pub fn is_raw_key(&self) -> bool {
        matches!(self.name, EventName::Press | EventName::Release)
    }

    /// The derived text: for a parent, its `press` children's texts joined with
    /// `-`; for a leaf, `<name>` for a named key, else the character.
    pub fn derived_text(&self) -> Option<String> {
        if !self.name.is_key() {
            return None;
        }
        if self.children.is_empty() {
            if let Some(secret) = &self.secret {
                return Some(format!("{{{secret}}}"));
            }
            if let Some(name) = &self.key_name {
                return Some(format!("<{name}>"));
            }
            return self
                .key_char
                .clone()
                .or_else(|| self.canonical_key_char.clone())
                .or_else(|| {
                    self.canonical_key_name
                        .as_ref()
                        .map(|name| format!("<{name}>"))
                })
                // OpenAdapt's rule for a key with neither a name nor a
                // character (keypad and media keys): its code.
                .or_else(|| {
                    self.key_vk
                        .or(self.canonical_key_vk)
                        .map(|vk| format!("<{vk}>"))
                });
        }
        let parts: Vec<String> = self
            .typed_children()
            .filter_map(ActionEvent::derived_text)
            .collect();
        Some(parts.join("-"))
    }

    /// Sets `text` on this event and every key event below it.
    pub fn fill_text(&mut self) {
        for child in &mut self.children {
            child.fill_text();
        }
        self.text = self.derived_text();
    }

    /// The pointer position, when the event has one.
    pub fn position(&self) -> Option<(f64, f64)> {
        Some((self.mouse_x?, self.mouse_y?))
    }
}

/// A key code written as a number, or as a string of digits (OpenAdapt).
fn key_code<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<u32>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Code {
        Number(u32),
        Text(String),
    }
    match Option::<Code>::deserialize(deserializer)? {
        None => Ok(None),
        Some(Code::Number(code)) => Ok(Some(code)),
        Some(Code::Text(text)) => text.trim().parse().map(Some).map_err(|_| {
            serde::de::Error::custom(format!("the key code {text:?} is not a whole number"))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: EventName, key_name: Option<&str>, key_char: Option<&str>) -> ActionEvent {
        let mut event = ActionEvent::new(name, 0.0);
        event.key_name = key_name.map(str::to_owned);
        event.key_char = key_char.map(str::to_owned);
        event
    }

    #[test]
    fn a_typing_reads_as_its_words_for_people_and_keeps_openadapts_text() {
        let mut typing = ActionEvent::new(EventName::Type, 0.0);
        typing.children = vec![
            key(EventName::Press, Some("shift"), None),
            key(EventName::Press, None, Some("A")),
            key(EventName::Release, None, Some("A")),
            key(EventName::Release, Some("shift"), None),
            key(EventName::Press, None, Some("l")),
            key(EventName::Press, None, Some(" ")),
            key(EventName::Press, None, Some("-")),
            key(EventName::Press, Some("enter"), None),
        ];
        let mut secret = key(EventName::Press, None, None);
        secret.secret = Some("password".into());
        typing.children.push(secret.clone());
        typing.children.push(secret);
        typing.fill_text();
        assert_eq!(
            typing.typed_words().as_deref(),
            Some("Al -<enter>{password}")
        );
        assert_eq!(typing.label(), "type \"Al -<enter>{password}\"");
        // Shift alone is named, not shown as an empty text.
        let shift = key(EventName::Press, Some("shift"), None);
        assert_eq!(shift.label(), "press <shift>");
        assert_eq!(
            typing.text.as_deref(),
            Some("<shift>-A-l- ---<enter>-{password}")
        );
    }

    #[test]
    fn a_press_in_a_popup_says_so_unless_its_element_names_its_window() {
        let mut press = ActionEvent::new(EventName::Click, 0.0);
        (press.mouse_x, press.mouse_y) = (Some(10.0), Some(20.0));
        press.mouse_button_name = Some(crate::MouseButton::Left);
        press.mouse_pressed = Some(true);
        assert_eq!(press.label(), "click left down at (10, 20)");
        press.popup = Some(crate::Rect::new(0, 0, 80, 90));
        assert_eq!(press.label(), "click left down in a popup at (10, 20)");
        let mut click = ActionEvent::parent(EventName::Singleclick, vec![press]);
        (click.mouse_x, click.mouse_y) = (Some(10.0), Some(20.0));
        click.mouse_button_name = Some(crate::MouseButton::Left);
        assert_eq!(click.label(), "singleclick left in a popup at (10, 20)");
    }

    #[test]
    fn openadapts_key_codes_as_strings_are_read_and_a_bare_code_is_its_text() {
        let event: ActionEvent = serde_json::from_str(
            r#"{"name": "press", "timestamp": 1.0, "key_vk": "65437", "canonical_key_vk": "65437"}"#,
        )
        .unwrap();
        assert_eq!(
            (event.key_vk, event.canonical_key_vk),
            (Some(65437), Some(65437))
        );
        assert_eq!(event.derived_text().as_deref(), Some("<65437>"));
        let number: ActionEvent =
            serde_json::from_str(r#"{"name": "press", "timestamp": 1.0, "key_vk": 78}"#).unwrap();
        assert_eq!(number.key_vk, Some(78));
        let err = serde_json::from_str::<ActionEvent>(
            r#"{"name": "press", "timestamp": 1.0, "key_vk": "seventy"}"#,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("\"seventy\" is not a whole number"),
            "{err}"
        );
        // A type parent keeps the bare key in its text.
        let mut parent = ActionEvent::new(EventName::Type, 0.0);
        parent.children = vec![key(EventName::Press, None, Some("h")), event];
        assert_eq!(parent.derived_text().as_deref(), Some("h-<65437>"));
    }

    #[test]
    fn leaf_text_is_char_or_bracketed_name() {
        assert_eq!(
            key(EventName::Press, None, Some("a"))
                .derived_text()
                .as_deref(),
            Some("a")
        );
        assert_eq!(
            key(EventName::Release, Some("ctrl"), None)
                .derived_text()
                .as_deref(),
            Some("<ctrl>")
        );
        assert_eq!(ActionEvent::new(EventName::Move, 0.0).derived_text(), None);
    }

    #[test]
    fn parent_text_joins_press_children() {
        let children = vec![
            key(EventName::Press, Some("ctrl"), None),
            key(EventName::Press, None, Some("c")),
            key(EventName::Release, None, Some("c")),
            key(EventName::Release, Some("ctrl"), None),
        ];
        let mut parent = ActionEvent::parent(EventName::Type, children);
        parent.fill_text();
        assert_eq!(parent.text.as_deref(), Some("<ctrl>-c"));
        assert_eq!(parent.children[2].text.as_deref(), Some("c"));
    }

    #[test]
    fn a_secrets_keys_read_as_its_one_placeholder() {
        let mut children = Vec::new();
        for (idx, name) in [
            EventName::Press,
            EventName::Release,
            EventName::Press,
            EventName::Release,
        ]
        .into_iter()
        .enumerate()
        {
            let mut event = ActionEvent::new(name, idx as f64);
            event.secret = Some("password".into());
            children.push(event);
        }
        children.push(key(EventName::Press, Some("enter"), None));
        children.push(key(EventName::Press, None, Some("{")));
        children.push(key(EventName::Press, None, Some("{")));
        let mut tree = ActionEvent::parent(EventName::Type, children);
        tree.fill_text();
        assert_eq!(tree.text.as_deref(), Some("{password}-<enter>-{-{"));
        assert_eq!(tree.children[0].text.as_deref(), Some("{password}"));
    }

    #[test]
    fn missing_fields_read_as_null_and_are_omitted_on_output() {
        let event: ActionEvent =
            serde_json::from_str(r#"{"name":"move","timestamp":1.5,"mouse_x":3,"mouse_y":4}"#)
                .unwrap();
        assert_eq!(event.position(), Some((3.0, 4.0)));
        let json = serde_json::to_string(&event).unwrap();
        assert_eq!(
            json,
            r#"{"name":"move","timestamp":1.5,"mouse_x":3.0,"mouse_y":4.0}"#
        );
    }
}
