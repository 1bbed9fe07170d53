//! Secrets at record time. A key typed into a password field, in a window
//! the person named secret (`--secret-window`), or while secret typing is on
//! (the toggle key) is scrubbed here, between the input and the writer:
//! what is stored keeps the key's timing, the parameter that stands for it
//! (`{password}`) and the focused field's identity, nothing of the key.
//!
//! When the focus moves (a Tab, a press) away from a secret field and the
//! tree cannot say where it went, the keys that follow stay secret, under a
//! parameter of their own: a leak cannot be taken back, and a parameter the
//! replay asks for is never typed where another one was.

use reprise_models::{ActionEvent, ElementIdentity, EventName};

/// Keys that end what is typed into a field rather than belong to it: they
/// are kept as they are, even in a secret field.
const FIELD_ENDS: [&str; 3] = ["enter", "tab", "esc"];
/// Keys that modify others: a scrubbed one still held when a kept key is
/// pressed (Shift+Tab out of a password field) is put back before it.
const MODIFIERS: [&str; 8] = [
    "shift", "shift_r", "ctrl", "ctrl_r", "alt", "alt_gr", "cmd", "cmd_r",
];

/// Which windows a pattern names: those whose class is it, or whose title
/// contains it, ignoring case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowPattern(String);

impl WindowPattern {
    /// A pattern; an empty one would name every window and is refused.
    pub fn new(pattern: &str) -> Option<WindowPattern> {
        let pattern = pattern.trim();
        (!pattern.is_empty()).then(|| WindowPattern(pattern.to_lowercase()))
    }

    pub fn matches(&self, class: &str, title: &str) -> bool {
        class.to_lowercase() == self.0 || title.to_lowercase().contains(&self.0)
    }
}

/// What the person declared secret when recording began.
#[derive(Debug, Clone, Default)]
pub struct SecretRules {
    /// Windows whose every key is secret (a password manager).
    pub windows: Vec<WindowPattern>,
    /// The key that turns secret typing on and off (its name, `pause`).
    pub toggle: Option<String>,
}

impl SecretRules {
    /// Whether `event` is the toggle key (pressed or released).
    pub fn is_toggle(&self, event: &ActionEvent) -> bool {
        super::is_key(event, self.toggle.as_deref())
    }
}

/// What the scrubber knows of the focus.
#[derive(Debug, Clone)]
enum Focus {
    /// Nothing yet, or a window whose tree does not say.
    Unknown,
    Known(ElementIdentity),
    /// The focus left a secret field for a place the tree did not name:
    /// keys stay secret under this parameter.
    LeftSecret(String),
}

/// A key held down, as the scrubber let it through.
#[derive(Debug)]
struct Held {
    key: String,
    /// The parameter it was scrubbed under, if it was.
    secret: Option<String>,
    /// A scrubbed modifier's own press, put back if a kept key needs it.
    press: Option<ActionEvent>,
}

/// Scrubs secret keys from the events, in time order.
#[derive(Debug)]
pub struct Scrubber {
    rules: SecretRules,
    focus: Focus,
    /// The focus may have moved since it was last read (a Tab, a press,
    /// another window).
    focus_moved: bool,
    /// The class and title of the window the last key went to.
    window: Option<(String, String)>,
    manual: bool,
    /// Times the toggle key was pressed, not yet applied.
    toggles: Vec<f64>,
    held: Vec<Held>,
    /// The parameter of each secret field, by the field's identity.
    names: Vec<(String, String)>,
    /// Keys scrubbed so far.
    pub scrubbed: u64,
}

impl Scrubber {
    pub fn new(rules: SecretRules) -> Scrubber {
        Scrubber {
            rules,
            focus: Focus::Unknown,
            focus_moved: false,
            window: None,
            manual: false,
            toggles: Vec::new(),
            held: Vec::new(),
            names: Vec::new(),
            scrubbed: 0,
        }
    }

    /// The toggle key went down at `timestamp`: secret typing flips for the
    /// events from then on. Returns whether it is now on.
    pub fn toggle_at(&mut self, timestamp: f64) -> bool {
        self.toggles.push(timestamp);
        self.manual ^ (self.toggles.len() % 2 == 1)
    }

    /// Whether secret typing is on now, the pending toggles counted.
    pub fn typing_secret(&self) -> bool {
        self.manual ^ (self.toggles.len() % 2 == 1)
    }

    /// The event as it may be stored, with the modifiers put back before it
    /// (at its own time) if it needs them. `window` is the class and title
    /// of the window in effect.
    pub fn scrub(
        &mut self,
        mut event: ActionEvent,
        window: Option<(&str, &str)>,
    ) -> Vec<ActionEvent> {
        let applied = self
            .toggles
            .iter()
            .take_while(|at| **at <= event.timestamp)
            .count();
        self.manual ^= applied % 2 == 1;
        self.toggles.drain(..applied);

        let is_pointer_press = event.name == EventName::Click && event.mouse_pressed == Some(true);
        if is_pointer_press {
            self.focus_moved = true;
        }
        if !event.is_raw_key() {
            if is_pointer_press {
                self.read_focus(event.element.as_deref());
            }
            return vec![event];
        }
        let key = event.key_identity();
        if event.name == EventName::Release {
            let held = self.held.iter().position(|held| held.key == key);
            if let Some(secret) = held.and_then(|idx| self.held.remove(idx).secret) {
                self.blank(&mut event, secret);
            }
            return vec![event];
        }
        // Another window: the focus is wherever that window keeps it.
        let window_now = window.map(|(class, title)| (class.to_owned(), title.to_owned()));
        if window_now != self.window {
            self.window = window_now;
            self.focus_moved = true;
        }
        if event.element.is_some() || self.focus_moved {
            self.read_focus(event.element.as_deref());
        }
        self.key_press(event, key, window)
    }

    /// A key pressed (`key`, its identity) in `window`: a field's end passes
    /// as it is, and puts back the modifiers held; a key already held
    /// (auto-repeat) stays as it was; any other is blanked while typing is
    /// secret there.
    fn key_press(
        &mut self,
        mut event: ActionEvent,
        key: String,
        window: Option<(&str, &str)>,
    ) -> Vec<ActionEvent> {
        let named = event.named_key().map(str::to_owned);
        if named
            .as_deref()
            .is_some_and(|name| FIELD_ENDS.contains(&name))
        {
            // Tab moves the focus; Enter and Esc act in the field (or close
            // its window, which the window's change says).
            if named.as_deref() == Some("tab") {
                self.focus_moved = true;
            }
            let mut out = self.put_back_modifiers(event.timestamp);
            self.held.push(Held {
                key,
                secret: None,
                press: None,
            });
            out.push(event);
            return out;
        }
        if let Some(held) = self.held.iter().find(|held| held.key == key) {
            if let Some(secret) = held.secret.clone() {
                self.blank(&mut event, secret);
            }
            return vec![event];
        }
        match self.secret_now(window) {
            Some(secret) => {
                let press = named
                    .as_deref()
                    .is_some_and(|name| MODIFIERS.contains(&name))
                    .then(|| event.clone());
                self.held.push(Held {
                    key,
                    secret: Some(secret.clone()),
                    press,
                });
                self.blank(&mut event, secret);
            }
            None => self.held.push(Held {
                key,
                secret: None,
                press: None,
            }),
        }
        vec![event]
    }

    /// The focus as a press or a focus read named it (`None`: not named).
    fn read_focus(&mut self, element: Option<&ElementIdentity>) {
        self.focus_moved = false;
        self.focus = match (element, &self.focus) {
            (Some(element), _) => Focus::Known(element.clone()),
            (None, Focus::Known(field)) if reprise_models::element::is_secret_field(field.role) => {
                Focus::LeftSecret(self.fresh_name("secret"))
            }
            (None, Focus::LeftSecret(_)) => Focus::LeftSecret(self.fresh_name("secret")),
            (None, _) => Focus::Unknown,
        };
    }

    /// The parameter a key pressed now stands for, if it is secret.
    fn secret_now(&mut self, window: Option<(&str, &str)>) -> Option<String> {
        let field = match &self.focus {
            Focus::Known(element) if reprise_models::element::is_secret_field(element.role) => {
                Some(element.clone())
            }
            Focus::LeftSecret(name) => return Some(name.clone()),
            _ => None,
        };
        if let Some(field) = field {
            return Some(self.field_name(&field));
        }
        let secret_window = window.is_some_and(|(class, title)| {
            self.rules
                .windows
                .iter()
                .any(|pattern| pattern.matches(class, title))
        });
        (self.manual || secret_window).then(|| {
            let key = match &self.focus {
                Focus::Known(element) => field_key(element),
                _ => String::new(),
            };
            self.name_for(key, "secret")
        })
    }

    /// A secret field's parameter: from its name or label, the same for
    /// the same field, unique among fields.
    fn field_name(&mut self, field: &ElementIdentity) -> String {
        let label = field
            .name
            .as_deref()
            .filter(|name| !name.trim().is_empty())
            .or(field.band.first().map(String::as_str))
            .unwrap_or("password");
        self.name_for(
            field_key(field),
            &reprise_models::parameter::name_from_label(label),
        )
    }

    fn name_for(&mut self, key: String, wanted: &str) -> String {
        if let Some((_, name)) = self.names.iter().find(|(known, _)| *known == key) {
            return name.clone();
        }
        let name = self.fresh_name(wanted);
        self.names.push((key, name.clone()));
        name
    }

    /// `wanted`, or `wanted_2`, … the first no field or span has yet.
    fn fresh_name(&self, wanted: &str) -> String {
        let taken = |name: &str| {
            self.names.iter().any(|(_, known)| known == name)
                || matches!(&self.focus, Focus::LeftSecret(known) if known == name)
        };
        let mut name = wanted.to_owned();
        let mut n = 2;
        while taken(&name) {
            name = format!("{wanted}_{n}");
            n += 1;
        }
        name
    }

    /// Scrubbed modifiers still held, put back as pressed at `timestamp`
    /// (no longer scrubbed, so their releases are kept too).
    fn put_back_modifiers(&mut self, timestamp: f64) -> Vec<ActionEvent> {
        self.held
            .iter_mut()
            .filter(|held| held.secret.is_some())
            .filter_map(|held| {
                let mut press = held.press.take()?;
                held.secret = None;
                press.timestamp = timestamp;
                press.element = None;
                Some(press)
            })
            .collect()
    }

    fn blank(&mut self, event: &mut ActionEvent, secret: String) {
        event.key_name = None;
        event.key_char = None;
        event.key_vk = None;
        event.canonical_key_name = None;
        event.canonical_key_char = None;
        event.canonical_key_vk = None;
        event.secret = Some(secret);
        self.scrubbed += 1;
    }
}

/// What tells two fields apart: window, role, name and label.
fn field_key(element: &ElementIdentity) -> String {
    format!(
        "{:?}\u{1f}{:?}\u{1f}{:?}\u{1f}{}\u{1f}{}",
        element.window.name,
        element.role,
        element.name,
        element.band.join("\u{1e}"),
        element.path.len()
    )
}

#[cfg(test)]
mod tests;
