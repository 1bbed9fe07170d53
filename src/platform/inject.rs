//! Input injection through enigo (XTEST on X11). It remembers what it pressed,
//! so that an abort or a failure can release everything.

use enigo::{Axis, Coordinate, Direction, Enigo, Keyboard as _, Mouse as _, Settings};
use reprise_models::MouseButton;
use reprise_strategies::{Action, KeySpec};

use super::PlatformError;

/// The time between the characters of a text the replay read off the
/// screen (`Action::TypeText`), typed at an even pace.
const TEXT_PACE: std::time::Duration = std::time::Duration::from_millis(30);

/// Something held down by the injector.
#[derive(Debug, Clone, PartialEq)]
enum Held {
    Button(MouseButton),
    Key(KeySpec),
}

pub struct Injector {
    enigo: Enigo,
    /// Logical coordinates times this give the pixels enigo moves to.
    scale_factor: f64,
    held: Vec<Held>,
}

reprise_models::debug_showing!(Injector, held);

fn inject_err(err: impl std::fmt::Display) -> PlatformError {
    PlatformError::Inject(err.to_string())
}

impl Injector {
    pub fn new(scale_factor: f64) -> Result<Injector, PlatformError> {
        let settings = Settings {
            release_keys_when_dropped: true,
            ..Settings::default()
        };
        let enigo = Enigo::new(&settings).map_err(|err| PlatformError::Connect(err.to_string()))?;
        Ok(Injector {
            enigo,
            scale_factor,
            held: Vec::new(),
        })
    }

    /// Injects one action (pauses are the caller's).
    pub fn inject(&mut self, action: &Action) -> Result<(), PlatformError> {
        match action {
            Action::MoveTo { x, y } => {
                let (px, py) = (
                    (x * self.scale_factor).round() as i32,
                    (y * self.scale_factor).round() as i32,
                );
                self.enigo
                    .move_mouse(px, py, Coordinate::Abs)
                    .map_err(inject_err)
            }
            Action::ButtonDown { button } => {
                self.enigo
                    .button(enigo_button(*button), Direction::Press)
                    .map_err(inject_err)?;
                self.held.push(Held::Button(*button));
                Ok(())
            }
            Action::ButtonUp { button } => {
                self.enigo
                    .button(enigo_button(*button), Direction::Release)
                    .map_err(inject_err)?;
                self.held.retain(|held| held != &Held::Button(*button));
                Ok(())
            }
            // Recorded wheel ticks are positive upwards (X11 button 4) and to
            // the right; enigo's lengths are positive downwards and rightwards.
            Action::Scroll { dx, dy } => {
                if *dy != 0 {
                    self.enigo.scroll(-dy, Axis::Vertical).map_err(inject_err)?;
                }
                if *dx != 0 {
                    self.enigo
                        .scroll(*dx, Axis::Horizontal)
                        .map_err(inject_err)?;
                }
                Ok(())
            }
            Action::KeyDown { key } => {
                self.key(key, Direction::Press)?;
                self.held.push(Held::Key(key.clone()));
                Ok(())
            }
            Action::KeyUp { key } => {
                self.key(key, Direction::Release)?;
                self.held.retain(|held| held != &Held::Key(key.clone()));
                Ok(())
            }
            Action::Pause { .. } => Ok(()),
            Action::TypeSecret { name } => Err(inject_err(format!(
                "the secret {{{name}}} has no value here: only the replay's desktop holds secrets"
            ))),
            Action::TypeText { text } => self.type_text(text, TEXT_PACE),
            Action::TypeHidden { name, value } => match value.reveal() {
                Some(text) => self.type_text(text, TEXT_PACE),
                None => Err(inject_err(format!(
                    "the secret {{{name}}} read in this run has no value here (a stored step keeps its name only)"
                ))),
            },
        }
    }

    /// Types `text` character by character (whatever the keyboard layout),
    /// `pace` apart; every key it presses it releases.
    pub fn type_text(
        &mut self,
        text: &str,
        pace: std::time::Duration,
    ) -> Result<(), PlatformError> {
        for char in text.chars() {
            let key = KeySpec::Char(char.to_string());
            self.inject(&Action::KeyDown { key: key.clone() })?;
            let released = self.inject(&Action::KeyUp { key });
            std::thread::sleep(pace);
            released?;
        }
        Ok(())
    }

    fn key(&mut self, key: &KeySpec, direction: Direction) -> Result<(), PlatformError> {
        match key {
            KeySpec::Code(code) => {
                let code = u16::try_from(*code)
                    .map_err(|_| inject_err(format!("key code {code} is out of range")))?;
                self.enigo.raw(code, direction).map_err(inject_err)
            }
            KeySpec::Named(_) | KeySpec::Char(_) => {
                let enigo_key = enigo_key(key)?;
                self.enigo.key(enigo_key, direction).map_err(inject_err)
            }
        }
    }

    /// Releases everything still held, newest first.
    /// Releases input held on the display that this injector did not press
    /// (a key stuck by another program), as the person asked.
    pub fn release_stale(&mut self, held: &[super::HeldInput]) -> Result<(), PlatformError> {
        use super::HeldInput;
        for input in held {
            let result = match input {
                HeldInput::Shift => self.enigo.key(enigo::Key::Shift, Direction::Release),
                HeldInput::Ctrl => self.enigo.key(enigo::Key::Control, Direction::Release),
                HeldInput::Alt => self.enigo.key(enigo::Key::Alt, Direction::Release),
                HeldInput::Super => self.enigo.key(enigo::Key::Meta, Direction::Release),
                HeldInput::AltGr => self
                    .enigo
                    .key(enigo::Key::Other(0xfe03), Direction::Release),
                HeldInput::Button(button) => {
                    self.enigo.button(enigo_button(*button), Direction::Release)
                }
            };
            result.map_err(inject_err)?;
        }
        Ok(())
    }

    pub fn release_all(&mut self) -> Result<(), PlatformError> {
        let mut first_error = None;
        while let Some(held) = self.held.pop() {
            let result = match &held {
                Held::Button(button) => self
                    .enigo
                    .button(enigo_button(*button), Direction::Release)
                    .map_err(inject_err),
                Held::Key(key) => self.key(key, Direction::Release),
            };
            if let Err(err) = result {
                first_error.get_or_insert(err);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

fn enigo_button(button: MouseButton) -> enigo::Button {
    match button {
        MouseButton::Left => enigo::Button::Left,
        MouseButton::Right => enigo::Button::Right,
        MouseButton::Middle => enigo::Button::Middle,
    }
}

/// enigo's key for a named key or a character.
fn enigo_key(key: &KeySpec) -> Result<enigo::Key, PlatformError> {
    use enigo::Key;
    let named = match key {
        KeySpec::Char(text) => {
            let mut chars = text.chars();
            return match (chars.next(), chars.next()) {
                (Some(char), None) => Ok(Key::Unicode(char)),
                _ => Err(inject_err(format!(
                    "cannot press {text:?}: a key types one character"
                ))),
            };
        }
        KeySpec::Code(code) => return Err(inject_err(format!("key code {code} has no enigo key"))),
        KeySpec::Named(name) => name.as_str(),
    };
    let key = match named {
        "ctrl" => Key::Control,
        "shift" => Key::Shift,
        "alt" => Key::Alt,
        "cmd" => Key::Meta,
        "enter" => Key::Return,
        "backspace" => Key::Backspace,
        "tab" => Key::Tab,
        "esc" => Key::Escape,
        "up" => Key::UpArrow,
        "down" => Key::DownArrow,
        "left" => Key::LeftArrow,
        "right" => Key::RightArrow,
        "home" => Key::Home,
        "end" => Key::End,
        "page_up" => Key::PageUp,
        "page_down" => Key::PageDown,
        "delete" => Key::Delete,
        "caps_lock" => Key::CapsLock,
        "space" => Key::Space,
        "f1" => Key::F1,
        "f2" => Key::F2,
        "f3" => Key::F3,
        "f4" => Key::F4,
        "f5" => Key::F5,
        "f6" => Key::F6,
        "f7" => Key::F7,
        "f8" => Key::F8,
        "f9" => Key::F9,
        "f10" => Key::F10,
        "f11" => Key::F11,
        "f12" => Key::F12,
        // X11 keysyms for keys enigo does not name on every platform.
        "alt_gr" => Key::Other(0xfe03),
        "insert" => Key::Other(0xff63),
        "print_screen" => Key::Other(0xff61),
        "scroll_lock" => Key::Other(0xff14),
        "pause" => Key::Other(0xff13),
        "num_lock" => Key::Other(0xff7f),
        other => {
            return Err(inject_err(format!(
                "cannot press the key <{other}>: Reprise does not know it"
            )));
        }
    };
    Ok(key)
}
